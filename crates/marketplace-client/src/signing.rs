//! eBay's request signatures, which some calls need for sellers domiciled in the EU or the UK
//! (every Finances API method, Fulfillment's issueRefund, Trading's GetAccount, the
//! Post-Order refund, return and cancellation decisions): feature `signing`.
//!
//! A [`SigningKey`] is the private key that createSigningKey (the Key Management API) returned
//! once, and its `jwe`. Given to an [`ApiClient`](crate::api::ApiClient) with
//! `with_signing_key`, it signs every request the client sends (eBay ignores a signature where
//! it needs none), each attempt with the time of that attempt. For callers on another HTTP
//! stack, [`SigningKey::headers`] is the whole scheme as a pure function: no clock, no I/O.
//!
//! The four headers, as eBay's SDKs send them:
//!
//! * `x-ebay-signature-key`: the JWE;
//! * `Content-Digest: sha-256=:…:` (only when the request has a body);
//! * `Signature-Input: sig1=("content-digest" "x-ebay-signature-key" "@method" "@path"
//!   "@authority");created=…` (without `"content-digest"` when there is no body);
//! * `Signature: sig1=:…:`, over the signature base of those components (`@path` without the
//!   query string, `@authority` as the `Host` header says it, lines joined by `\n`, no
//!   trailing newline).
//!
//! Ed25519 (what eBay recommends) and RSA keys (signing with RSASSA-PKCS1-v1_5 and SHA-256,
//! as eBay verifies them, also for a key labelled RSASSA-PSS such as eBay's own sample key),
//! signed with ring (constant-time; rustls already builds it into the client as its crypto
//! provider).
//!
//! eBay's published test vector (its Node.js SDK's `test.json`, the RFC 9421 sample key):
//!
//! ```
//! use marketplace_client::signing::SigningKey;
//! # fn main() -> Result<(), marketplace_client::signing::SigningError> {
//! let pem = "-----BEGIN PRIVATE KEY-----\n\
//!     MC4CAQAwBQYDK2VwBCIEIJ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF\n\
//!     -----END PRIVATE KEY-----";
//! # let jwe = "eyJhbGciOiJBMjU2R0NNS1ciLCJlbmMiOiJBMjU2R0NNIiwiemlwIjoiREVGIiwiaXYiOiJvSzFwdXJNVHQtci14VUwzIiwidGFnIjoiTjB4WjI4ZklZckFmYkd5UWFrTnpjZyJ9.AYdKU7ObIc7Z764OrlKpwUViK8Rphxl0xMP9v2_o9mI.1DbZiSQNRK6pLeIw.Yzp3IDV8RM_h_lMAnwGpMA4DXbaDdmqAh-65kO9xyDgzHD6s0kY3p-yO6oPR9kEcAbjGXIULeQKWVYzbfHKwXTY09Npj_mNuO5yxgZtWnL55uIgP2HL1So2dKkZRK0eyPa6DEXJT71lPtwZtpIGyq9R5h6s3kGMbqA.m4t_MX4VnlXJGx1X_zZ-KQ";
//! let key = SigningKey::from_pem(pem, jwe)?; // jwe: the `jwe` of createSigningKey's answer
//! let headers = key.headers(
//!     "POST",
//!     "https://localhost:8080/test",
//!     Some(br#"{"hello": "world"}"#),
//!     1663459378,
//! )?;
//! assert_eq!(headers[1], ("Content-Digest".to_owned(),
//!     "sha-256=:X48E9qOokqqrvdts8nOJRJN3OWDUoyWxBf7kbu9DBPE=:".to_owned()));
//! assert_eq!(headers[3].1, "sig1=:gkk7dqudw21DFHDVBoRUWe/F6/2hTEmWRFDBxiN6COD4PjozXziiDFML1nFHu+0UcMXC/niltxzABjnugu4DCA==:");
//! # Ok(()) }
//! ```

use std::fmt;

use crate::core::signing::{PrivateKey, check_jwe};

/// A private signing key and its JWE (the public key as the Key Management API encrypted it
/// for eBay's verifier).
///
/// A secret: no `Display`; `Debug` shows the cipher only; the encoded copies made while reading
/// it are zeroed. The key itself is held by ring, which does not wipe its memory when the key is
/// dropped. It never appears in an error or a trace.
pub struct SigningKey {
    key: PrivateKey,
    jwe: String,
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("cipher", &self.key.cipher())
            .field("private_key", &crate::oauth::secret::REDACTED)
            .finish_non_exhaustive()
    }
}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<SigningKey>();
};

impl SigningKey {
    /// The key of a PEM text (`-----BEGIN PRIVATE KEY-----`, PKCS#8, Ed25519 or RSA; also
    /// `RSA PRIVATE KEY`, PKCS#1) and its `jwe`.
    pub fn from_pem(private_key_pem: &str, jwe: impl Into<String>) -> Result<Self, SigningError> {
        Self::new(PrivateKey::from_pem(private_key_pem), jwe.into())
    }

    /// The key of the base64 PKCS#8 DER text that createSigningKey's `privateKey` holds (a
    /// PEM text is accepted too) and its `jwe`.
    pub fn from_der_base64(
        private_key: &str,
        jwe: impl Into<String>,
    ) -> Result<Self, SigningError> {
        Self::new(PrivateKey::from_der_base64(private_key), jwe.into())
    }

    fn new(key: Result<PrivateKey, String>, jwe: String) -> Result<Self, SigningError> {
        let key = key.map_err(SigningError::Key)?;
        check_jwe(&jwe).map_err(SigningError::Key)?;
        Ok(Self { key, jwe })
    }

    /// `"ED25519"` or `"RSA"`, as createSigningKey's `signingKeyCipher` names it.
    pub fn cipher(&self) -> &'static str {
        self.key.cipher()
    }

    /// The JWE sent as `x-ebay-signature-key` (not a secret).
    pub fn jwe(&self) -> &str {
        &self.jwe
    }

    /// The headers that sign a request, as `(name, value)` pairs in this order:
    /// `x-ebay-signature-key`, `Content-Digest` (only when `body` is a non-empty body),
    /// `Signature-Input`, `Signature`.
    ///
    /// `method` is upper case (`POST`); `url` the absolute URL as sent (its query is not
    /// signed; its host and non-default port are `@authority`); `body` the bytes sent, exactly
    /// (a proxy that re-encodes them breaks the signature); `created_unix_seconds` the time of
    /// signing (eBay refuses a signature whose `created` is far from its clock).
    pub fn headers(
        &self,
        method: &str,
        url: &str,
        body: Option<&[u8]>,
        created_unix_seconds: u64,
    ) -> Result<Vec<(String, String)>, SigningError> {
        crate::core::signing::headers(
            &self.key,
            &self.jwe,
            method,
            url,
            body,
            created_unix_seconds,
        )
        .map(|headers| {
            headers
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value))
                .collect()
        })
        .map_err(SigningError::Request)
    }

    /// The core's key, for the clients.
    pub(crate) fn parts(&self) -> (&PrivateKey, &str) {
        (&self.key, &self.jwe)
    }
}

/// Why a key cannot be read or a request cannot be signed. The message never holds the key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SigningError {
    /// The private key or the JWE cannot be used (not PKCS#8, encrypted, neither Ed25519 nor
    /// RSA, RSA under 2048 bits, a JWE with a line break…).
    #[error("cannot use the signing key: {0}")]
    Key(String),
    /// The request cannot be signed (a method that is not upper case, a URL that is not an
    /// absolute http or https URL).
    #[error("cannot sign the request: {0}")]
    Request(String),
}

/// A signing key as the Key Management API describes it (createSigningKey, getSigningKey,
/// getSigningKeys), without its private key. Every field of eBay's `SigningKey` but
/// `privateKey`, which only [`NewSigningKey`] holds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SigningKeyInfo {
    /// `signingKeyId`: the key's id (getSigningKey takes it).
    pub signing_key_id: String,
    /// `signingKeyCipher`: `ED25519` or `RSA`.
    pub cipher: String,
    /// `creationTime`, Unix seconds.
    pub creation_time: Option<u64>,
    /// `expirationTime`, Unix seconds (three years after the creation): a key is replaced
    /// before then.
    pub expiration_time: Option<u64>,
    /// `jwe`: what the requests carry as `x-ebay-signature-key`.
    pub jwe: String,
    /// `publicKey`, base64 (not a secret).
    pub public_key: Option<String>,
}

impl SigningKeyInfo {
    /// Whether this key is due for replacement at `now_unix_seconds`
    /// ([`replacement_due`]): within 30 days of its `expirationTime`.
    pub fn is_due_for_replacement(&self, now_unix_seconds: u64) -> bool {
        replacement_due(self.expiration_time, now_unix_seconds)
    }
}

/// createSigningKey's answer: the new key's description and its private key, which eBay shows
/// this once only (it keeps no copy): save it ([`private_key`](Self::private_key)) before
/// anything else. No `Display`; `Debug` redacts the private key, zeroed on drop.
pub struct NewSigningKey {
    /// The key's description.
    pub info: SigningKeyInfo,
    private_key: zeroize::Zeroizing<String>,
    unexpected_fields: Vec<&'static str>,
}

impl fmt::Debug for NewSigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewSigningKey")
            .field("info", &self.info)
            .field("private_key", &crate::oauth::secret::REDACTED)
            .finish()
    }
}

impl NewSigningKey {
    /// The private key as createSigningKey returned it (base64 PKCS#8 DER): the secret to
    /// store (a 0600 file, a secret store), and to load with
    /// [`SigningKey::from_der_base64`] with [`info.jwe`](SigningKeyInfo::jwe).
    pub fn private_key(&self) -> &str {
        &self.private_key
    }

    /// The key, ready to sign.
    pub fn signing_key(&self) -> Result<SigningKey, SigningError> {
        SigningKey::from_der_base64(&self.private_key, self.info.jwe.clone())
    }

    /// The descriptive fields of createSigningKey's answer that had an unexpected type
    /// (`signingKeyCipher`, `creationTime`, `expirationTime`, `publicKey`) and were set aside
    /// (each also logged as a warning): the key itself was usable, and is kept. Empty for a
    /// documented answer.
    pub fn unexpected_fields(&self) -> &[&'static str] {
        &self.unexpected_fields
    }
}

/// An application's signing keys in a JSON file that only its owner may read, kept as the
/// refresh tokens are (see [`FileStore`](crate::oauth::FileStore)): mode `0600` in a
/// directory made with mode `0700`, every write an atomic replacement, every read refused when
/// group or others may read the file, every change made under the store's lock
/// (`<file>.lock`).
///
/// [`signing_key`](Self::signing_key) is the one call a backend makes: the newest key unless
/// it is within 30 days of its `expirationTime`; otherwise a new key is created
/// (createSigningKey), saved, then used, and older keys are kept until they expire. Processes
/// sharing the file create one key between them: the creator holds the lock from its second
/// look at the file until the new key is saved.
///
/// ```no_run
/// use marketplace_client::aio::api::ApiClient;
/// use marketplace_client::signing::SigningKeyFile;
/// # async fn run(api: ApiClient) -> Result<(), Box<dyn std::error::Error>> {
/// let keys = SigningKeyFile::beside("/var/lib/backend/refresh-tokens.json");
/// let key = keys.signing_key_async(&api).await?; // created once, replaced before it expires
/// let api = api.with_signing_key(key);
/// # let _ = api; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct SigningKeyFile {
    file: crate::oauth::FileStore,
    cipher: String,
    /// Until when a failed renewal is not tried again (the still valid key is used).
    renewal_paused: std::sync::Arc<std::sync::Mutex<Option<std::time::Instant>>>,
}

const KEYS_FORMAT: &str = "marketplace-toolkit signing keys";

#[derive(serde::Serialize, serde::Deserialize, Default)]
struct KeysBody {
    format: String,
    version: u32,
    /// Oldest first: the last one signs.
    keys: Vec<KeyRecord>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct KeyRecord {
    signing_key_id: String,
    cipher: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    creation_time: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    expiration_time: Option<u64>,
    jwe: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    public_key: Option<String>,
    private_key: String,
}

impl Drop for KeyRecord {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.private_key);
    }
}

impl KeyRecord {
    fn info(&self) -> SigningKeyInfo {
        SigningKeyInfo {
            signing_key_id: self.signing_key_id.clone(),
            cipher: self.cipher.clone(),
            creation_time: self.creation_time,
            expiration_time: self.expiration_time,
            jwe: self.jwe.clone(),
            public_key: self.public_key.clone(),
        }
    }

    fn key(&self) -> Result<SigningKey, SigningError> {
        SigningKey::from_der_base64(&self.private_key, self.jwe.clone())
    }
}

impl KeysBody {
    /// The newest key, unless it is due for replacement at `now`.
    fn usable(&self, now: u64) -> Option<&KeyRecord> {
        self.keys
            .last()
            .filter(|k| !replacement_due(k.expiration_time, now))
    }

    /// The newest key when it is due for renewal but has not expired at `now`: what signs
    /// while a new key cannot be created.
    fn renewable(&self, now: u64) -> Option<&KeyRecord> {
        self.keys.last().filter(|k| {
            crate::core::signing::key_decision(k.expiration_time, now)
                == crate::core::signing::KeyDecision::Renew
        })
    }

    /// Adds `created` as the newest key and forgets the keys expired at `now`.
    fn push(&mut self, created: &NewSigningKey, now: u64) {
        self.format = KEYS_FORMAT.into();
        self.version = 1;
        self.keys
            .retain(|k| k.expiration_time.is_none_or(|expires| expires > now));
        let info = &created.info;
        self.keys.push(KeyRecord {
            signing_key_id: info.signing_key_id.clone(),
            cipher: info.cipher.clone(),
            creation_time: info.creation_time,
            expiration_time: info.expiration_time,
            jwe: info.jwe.clone(),
            public_key: info.public_key.clone(),
            private_key: created.private_key().to_owned(),
        });
    }
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Why a signing key could not be found, created or saved. The message never holds a key.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SigningKeyStoreError {
    /// The file cannot be read or written (its path, mode or content).
    #[error(transparent)]
    Store(#[from] crate::oauth::OAuthError),
    /// createSigningKey failed, with the service's own message.
    #[error("createSigningKey failed: {0}")]
    Api(#[source] Box<crate::api::ApiError>),
    /// A stored or created key cannot be used.
    #[error(transparent)]
    Key(#[from] SigningError),
}

impl From<crate::api::ApiError> for SigningKeyStoreError {
    fn from(e: crate::api::ApiError) -> Self {
        Self::Api(Box::new(e))
    }
}

impl SigningKeyFile {
    /// How long a key due for renewal keeps signing, without a new attempt, after
    /// createSigningKey failed: the stored key is valid until its expiry (30 days after
    /// renewal starts), so a failure is logged and tried again later, not at every call.
    pub const RENEWAL_RETRY: std::time::Duration = std::time::Duration::from_secs(15 * 60);

    /// The keys in the file `path` (created on the first save, with its directory); new keys
    /// are Ed25519.
    pub fn new(path: impl Into<std::path::PathBuf>) -> Self {
        Self {
            file: crate::oauth::FileStore::private_file(path, "the signing-key file"),
            cipher: "ED25519".into(),
            renewal_paused: Default::default(),
        }
    }

    /// The keys of the refresh-token file `token_file`, beside it and named after it:
    /// `<name>.signing-keys.json` (`refresh-tokens.json` → `refresh-tokens.signing-keys.json`),
    /// so that two stores in one directory (two applications, or production and the sandbox)
    /// never share a key: a key belongs to the application that created it, and another
    /// application's requests signed with it are refused (errorId 215120).
    pub fn beside(token_file: impl AsRef<std::path::Path>) -> Self {
        let token_file = token_file.as_ref();
        let stem = token_file
            .file_stem()
            .map_or_else(|| "refresh-tokens".into(), |s| s.to_string_lossy());
        Self::new(token_file.with_file_name(format!("{stem}.signing-keys.json")))
    }

    /// New keys with `cipher` (`ED25519` or `RSA`, as createSigningKey names them).
    pub fn with_cipher(mut self, cipher: impl Into<String>) -> Self {
        self.cipher = cipher.into();
        self
    }

    /// The file.
    pub fn path(&self) -> &std::path::Path {
        self.file.path()
    }

    fn read(&self) -> Result<KeysBody, SigningKeyStoreError> {
        Ok(self
            .file
            .read_json(KEYS_FORMAT, |b: &KeysBody| (&b.format, b.version))?)
    }

    /// The keys, newest first (the first one signs), without their private keys.
    pub fn list(&self) -> Result<Vec<SigningKeyInfo>, SigningKeyStoreError> {
        Ok(self
            .read()?
            .keys
            .iter()
            .rev()
            .map(KeyRecord::info)
            .collect())
    }

    /// The newest key, ready to sign, without creating one (`None`: no key yet).
    pub fn current(&self) -> Result<Option<SigningKey>, SigningKeyStoreError> {
        Ok(self.read()?.keys.last().map(KeyRecord::key).transpose()?)
    }

    /// Saves a key created elsewhere (createSigningKey's answer) as the newest key.
    pub fn save(&self, created: &NewSigningKey) -> Result<(), SigningKeyStoreError> {
        let lock = self.file.lock_exclusive()?;
        let body = self.read()?;
        self.finish(lock, body, created).map(drop)
    }

    /// The fast path (no lock): the newest key when it is not due.
    fn usable(&self) -> Result<Option<SigningKey>, SigningKeyStoreError> {
        Ok(self
            .read()?
            .usable(unix_now())
            .map(KeyRecord::key)
            .transpose()?)
    }

    /// Takes the lock and reads: the key when `always` is false and a usable key is there,
    /// else the lock and the body to add a new key to.
    #[allow(clippy::type_complexity)]
    fn locked(
        &self,
        always: bool,
    ) -> Result<Result<SigningKey, (std::fs::File, KeysBody)>, SigningKeyStoreError> {
        let lock = self.file.lock_exclusive()?;
        let body = self.read()?;
        if !always && let Some(record) = body.usable(unix_now()) {
            return Ok(Ok(record.key()?));
        }
        Ok(Err((lock, body)))
    }

    /// Saves `created` into `body` and releases `lock`.
    fn finish(
        &self,
        lock: std::fs::File,
        mut body: KeysBody,
        created: &NewSigningKey,
    ) -> Result<SigningKey, SigningKeyStoreError> {
        let key = created.signing_key()?;
        body.push(created, unix_now());
        self.file.write_json(&body)?;
        drop(lock);
        Ok(key)
    }

    /// The key to sign with, or (`always`) a new one: the one logic of both fronts'
    /// `signing_key` and `rotate` (`crate::aio::api`, `crate::blocking::api`), which give
    /// `create`, createSigningKey with the given cipher through their client. The file is
    /// read and written on tokio's blocking threads, never on the runtime's.
    pub(crate) async fn obtain<F, Fut>(
        &self,
        always: bool,
        create: F,
    ) -> Result<SigningKey, SigningKeyStoreError>
    where
        F: FnOnce(String) -> Fut,
        Fut: std::future::Future<Output = Result<NewSigningKey, crate::api::ApiError>>,
    {
        let this = self.clone();
        let found = {
            let this = this.clone();
            tokio::task::spawn_blocking(move || {
                if !always && let Some(key) = this.usable()? {
                    return Ok(Ok(key));
                }
                this.locked(always)
            })
            .await
            .map_err(joined)??
        };
        let (lock, body) = match found {
            Ok(key) => return Ok(key),
            Err(locked) => locked,
        };
        // Due for renewal but still valid: what signs when no new key can be had now.
        let fallback = match body.renewable(unix_now()) {
            Some(record) if !always => Some(record.key()?),
            _ => None,
        };
        let fallback = match fallback {
            Some(key) if self.renewal_paused() => return Ok(key),
            fallback => fallback,
        };
        let created = match (create(this.cipher.clone()).await, fallback) {
            (Ok(created), _) => created,
            (Err(e), None) => return Err(e.into()),
            (Err(e), Some(key)) => {
                drop(lock);
                tracing::warn!(
                    file = %self.path().display(),
                    error = %e,
                    retry_in_secs = Self::RENEWAL_RETRY.as_secs(),
                    "the signing key is due for renewal and createSigningKey failed; \
                     signing with the stored key, valid until its expiry"
                );
                *self.renewal_pause() = Some(std::time::Instant::now() + Self::RENEWAL_RETRY);
                return Ok(key);
            }
        };
        tokio::task::spawn_blocking(move || this.finish(lock, body, &created))
            .await
            .map_err(joined)?
    }

    fn renewal_pause(&self) -> std::sync::MutexGuard<'_, Option<std::time::Instant>> {
        self.renewal_paused
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether a renewal failed less than [`RENEWAL_RETRY`](Self::RENEWAL_RETRY) ago.
    fn renewal_paused(&self) -> bool {
        self.renewal_pause()
            .is_some_and(|until| std::time::Instant::now() < until)
    }
}

/// A blocking task that panicked or was cancelled (the runtime is shutting down).
fn joined(e: tokio::task::JoinError) -> SigningKeyStoreError {
    SigningKeyStoreError::Store(crate::oauth::OAuthError::Store(
        crate::oauth::StoreError::file_io(
            "use",
            std::path::Path::new("the signing keys' file"),
            std::io::Error::other(e.to_string()),
        ),
    ))
}

/// Whether a key whose `expirationTime` is `expiration_time` (Unix seconds) is due for
/// replacement at `now_unix_seconds`: within 30 days of its expiry, or past it. A key without
/// an expiry is kept. Pure; what the key stores decide with.
pub fn replacement_due(expiration_time: Option<u64>, now_unix_seconds: u64) -> bool {
    crate::core::signing::key_decision(expiration_time, now_unix_seconds)
        != crate::core::signing::KeyDecision::Keep
}

/// The Key Management API's requests and answers, for the async `ApiClient`.
///
/// Its answers are read field by field from a JSON value, never through a typed decode whose
/// error could quote the answer (createSigningKey's holds the private key): an error names
/// the field and the JSON type found ([`ApiError::KeyManagementAnswer`]). A field the key
/// needs (`privateKey`, `jwe`, `signingKeyId`) must be a string; a descriptive one of another
/// type (`signingKeyCipher`, the times, `publicKey`) is set aside with a warning, so a key
/// eBay showed once is still kept when only its description drifted.
pub(crate) mod key_management {
    use serde_json::{Map, Value};

    use super::{NewSigningKey, SigningKeyInfo};
    use crate::api::{ApiError, ApiRequest, ApiResponse};

    const BASE: [&str; 4] = ["developer", "key_management", "v1", "signing_key"];

    /// A Key Management request: its answer is never quoted in an error.
    fn secret(mut request: ApiRequest, operation: &'static str) -> ApiRequest {
        request.secret_answer = true;
        request.operation(operation)
    }

    /// createSigningKey with `cipher` (`ED25519` or `RSA`).
    pub(crate) fn create(cipher: &str) -> ApiRequest {
        secret(
            ApiRequest::post_segments(BASE)
                .json(&serde_json::json!({ "signingKeyCipher": cipher })),
            "createSigningKey",
        )
    }

    /// getSigningKey of `id`.
    pub(crate) fn get(id: &str) -> ApiRequest {
        secret(
            ApiRequest::get_segments(BASE.into_iter().chain([id])),
            "getSigningKey",
        )
    }

    /// getSigningKeys.
    pub(crate) fn list() -> ApiRequest {
        secret(ApiRequest::get_segments(BASE), "getSigningKeys")
    }

    /// The JSON type of `value`, as an error names it (never the value).
    fn kind(value: &Value) -> &'static str {
        match value {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }

    /// One answer being read: its object, and the descriptive fields set aside.
    struct Reader<'a> {
        operation: &'static str,
        answer: &'a ApiResponse,
        odd: Vec<&'static str>,
    }

    impl Reader<'_> {
        fn error(&self, field: Option<&'static str>, reason: String) -> ApiError {
            ApiError::KeyManagementAnswer {
                operation: self.operation,
                url: self.answer.url().to_string(),
                status: self.answer.status(),
                field,
                reason,
            }
        }

        /// The answer's body as a JSON value (a syntax error names a line and column only).
        fn body(&self) -> Result<Value, ApiError> {
            serde_json::from_slice(self.answer.bytes())
                .map_err(|e| self.error(None, format!("the body is not JSON ({e})")))
        }

        /// The string `field` of `object`: one the answer cannot do without.
        fn required(
            &self,
            object: &mut Map<String, Value>,
            field: &'static str,
        ) -> Result<String, ApiError> {
            match object.remove(field) {
                Some(Value::String(s)) => Ok(s),
                None => Err(self.error(Some(field), format!("\"{field}\" is missing"))),
                Some(other) => Err(self.error(
                    Some(field),
                    format!("\"{field}\" is {}, expected a string", kind(&other)),
                )),
            }
        }

        /// The optional `field` of `object` as `read` takes it; absent or null is `None`,
        /// another type is set aside (warned about, `None`).
        fn optional<T>(
            &mut self,
            object: &mut Map<String, Value>,
            field: &'static str,
            read: impl FnOnce(&Value) -> Option<T>,
        ) -> Option<T> {
            let value = object.remove(field)?;
            if value.is_null() {
                return None;
            }
            let read = read(&value);
            if read.is_none() {
                tracing::warn!(
                    operation = self.operation,
                    field,
                    found = kind(&value),
                    "a Key Management answer has a field of an unexpected type; it is ignored"
                );
                self.odd.push(field);
            }
            read
        }

        /// eBay's `SigningKey` of `object`, and its private key when it has one.
        fn key(
            &mut self,
            mut object: Map<String, Value>,
        ) -> Result<(SigningKeyInfo, Option<zeroize::Zeroizing<String>>), ApiError> {
            // Moved into `Zeroizing` at once (the same buffer, wiped on drop). The answer's raw
            // bytes still hold the text until the response is dropped, right after this read.
            let private_key = match object.remove("privateKey") {
                Some(Value::String(s)) => Some(zeroize::Zeroizing::new(s)),
                None | Some(Value::Null) => None,
                Some(other) => {
                    return Err(self.error(
                        Some("privateKey"),
                        format!("\"privateKey\" is {}, expected a string", kind(&other)),
                    ));
                }
            };
            let signing_key_id = self.required(&mut object, "signingKeyId")?;
            let jwe = self.required(&mut object, "jwe")?;
            let text = |v: &Value| v.as_str().map(str::to_owned);
            let cipher = self.optional(&mut object, "signingKeyCipher", text);
            let info = SigningKeyInfo {
                signing_key_id,
                // A cipher of another type is the key's own (Ed25519 or RSA) when it has one.
                cipher: cipher
                    .or_else(|| {
                        let key = private_key.as_ref()?;
                        let key = crate::core::signing::PrivateKey::from_der_base64(key).ok()?;
                        Some(key.cipher().to_owned())
                    })
                    .unwrap_or_default(),
                creation_time: self.optional(&mut object, "creationTime", Value::as_u64),
                expiration_time: self.optional(&mut object, "expirationTime", Value::as_u64),
                jwe,
                public_key: self.optional(&mut object, "publicKey", text),
            };
            Ok((info, private_key))
        }

        /// The answer's object.
        fn object(&self, value: Value) -> Result<Map<String, Value>, ApiError> {
            match value {
                Value::Object(object) => Ok(object),
                other => Err(self.error(
                    None,
                    format!("the body is {}, expected an object", kind(&other)),
                )),
            }
        }
    }

    fn reader<'a>(operation: &'static str, answer: &'a ApiResponse) -> Reader<'a> {
        Reader {
            operation,
            answer,
            odd: Vec::new(),
        }
    }

    /// createSigningKey's answer (it must hold the private key).
    pub(crate) fn created(answer: &ApiResponse) -> Result<NewSigningKey, ApiError> {
        let mut reader = reader("createSigningKey", answer);
        let object = reader.object(reader.body()?)?;
        let (info, private_key) = reader.key(object)?;
        let private_key = private_key
            .ok_or_else(|| reader.error(Some("privateKey"), "\"privateKey\" is missing".into()))?;
        Ok(NewSigningKey {
            info,
            private_key,
            unexpected_fields: reader.odd,
        })
    }

    /// getSigningKey's answer.
    pub(crate) fn one(answer: &ApiResponse) -> Result<SigningKeyInfo, ApiError> {
        let mut reader = reader("getSigningKey", answer);
        let object = reader.object(reader.body()?)?;
        Ok(reader.key(object)?.0)
    }

    /// getSigningKeys' answer.
    pub(crate) fn many(answer: &ApiResponse) -> Result<Vec<SigningKeyInfo>, ApiError> {
        let mut reader = reader("getSigningKeys", answer);
        let mut object = reader.object(reader.body()?)?;
        let keys = match object.remove("signingKeys") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(keys)) => keys,
            Some(other) => {
                return Err(reader.error(
                    Some("signingKeys"),
                    format!("\"signingKeys\" is {}, expected an array", kind(&other)),
                ));
            }
        };
        keys.into_iter()
            .map(|key| {
                let key = reader.object(key)?;
                Ok(reader.key(key)?.0)
            })
            .collect()
    }
}
