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
//! signed with AWS-LC (`aws-lc-rs`, which rustls already builds into the client).
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
/// A secret: no `Display`; `Debug` shows the cipher only; the key lives in AWS-LC, which wipes
/// it when the key is dropped, and the encoded copies made while reading it are zeroed. It never
/// appears in an error or a trace.
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
    /// The keys in the file `path` (created on the first save, with its directory); new keys
    /// are Ed25519.
    pub fn new(path: impl Into<std::path::PathBuf>) -> Self {
        Self {
            file: crate::oauth::FileStore::new(path),
            cipher: "ED25519".into(),
        }
    }

    /// The keys in `signing-keys.json` beside the refresh tokens' file `token_file`.
    pub fn beside(token_file: impl AsRef<std::path::Path>) -> Self {
        Self::new(token_file.as_ref().with_file_name("signing-keys.json"))
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

    /// [`obtain_async`](Self::obtain_async), waited for on the blocking front's runtime.
    fn obtain(
        &self,
        api: &crate::api::ApiClient,
        always: bool,
    ) -> Result<SigningKey, SigningKeyStoreError> {
        let url = api.config().base_url.to_string();
        api.driver
            .wait(self.obtain_async(&api.inner, always), |message| {
                crate::api::ApiError::Transport { url, message }.into()
            })
    }

    /// The key to sign with (blocking front): the newest stored key unless it is within 30
    /// days of its expiry; otherwise a new one created with createSigningKey through `api`
    /// (an application token suffices), saved, then returned.
    pub fn signing_key(
        &self,
        api: &crate::api::ApiClient,
    ) -> Result<SigningKey, SigningKeyStoreError> {
        self.obtain(api, false)
    }

    /// Creates a new key now (blocking front), saves it and returns it; older keys are kept
    /// until they expire.
    pub fn rotate(&self, api: &crate::api::ApiClient) -> Result<SigningKey, SigningKeyStoreError> {
        self.obtain(api, true)
    }

    /// [`signing_key`](Self::signing_key) for the async front: the file is read and written
    /// on tokio's blocking threads, never on the runtime's.
    pub async fn signing_key_async(
        &self,
        api: &crate::aio::api::ApiClient,
    ) -> Result<SigningKey, SigningKeyStoreError> {
        self.obtain_async(api, false).await
    }

    /// [`rotate`](Self::rotate) for the async front.
    pub async fn rotate_async(
        &self,
        api: &crate::aio::api::ApiClient,
    ) -> Result<SigningKey, SigningKeyStoreError> {
        self.obtain_async(api, true).await
    }

    async fn obtain_async(
        &self,
        api: &crate::aio::api::ApiClient,
        always: bool,
    ) -> Result<SigningKey, SigningKeyStoreError> {
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
        match found {
            Ok(key) => Ok(key),
            Err((lock, body)) => {
                let created = api.create_signing_key(&this.cipher).await?;
                tokio::task::spawn_blocking(move || this.finish(lock, body, &created))
                    .await
                    .map_err(joined)?
            }
        }
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
        == crate::core::signing::KeyDecision::Replace
}

/// The Key Management API's requests and answers, for the async `ApiClient`.
pub(crate) mod key_management {
    use serde::Deserialize;

    use super::{NewSigningKey, SigningKeyInfo};
    use crate::api::{ApiError, ApiRequest, ApiResponse};

    const BASE: [&str; 4] = ["developer", "key_management", "v1", "signing_key"];

    /// createSigningKey with `cipher` (`ED25519` or `RSA`).
    pub(crate) fn create(cipher: &str) -> ApiRequest {
        ApiRequest::post_segments(BASE)
            .json(&serde_json::json!({ "signingKeyCipher": cipher }))
            .operation("createSigningKey")
    }

    /// getSigningKey of `id`.
    pub(crate) fn get(id: &str) -> ApiRequest {
        ApiRequest::get_segments(BASE.into_iter().chain([id])).operation("getSigningKey")
    }

    /// getSigningKeys.
    pub(crate) fn list() -> ApiRequest {
        ApiRequest::get_segments(BASE).operation("getSigningKeys")
    }

    /// eBay's `SigningKey` on the wire.
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Wire {
        signing_key_id: String,
        #[serde(default)]
        signing_key_cipher: String,
        creation_time: Option<u64>,
        expiration_time: Option<u64>,
        jwe: String,
        public_key: Option<String>,
        // Moved into `Zeroizing` at once (the same buffer: no copy is left behind).
        private_key: Option<String>,
    }

    impl Wire {
        fn info(self) -> (SigningKeyInfo, Option<zeroize::Zeroizing<String>>) {
            let info = SigningKeyInfo {
                signing_key_id: self.signing_key_id,
                cipher: self.signing_key_cipher,
                creation_time: self.creation_time,
                expiration_time: self.expiration_time,
                jwe: self.jwe,
                public_key: self.public_key,
            };
            (info, self.private_key.map(zeroize::Zeroizing::new))
        }
    }

    /// createSigningKey's answer (it must hold the private key).
    pub(crate) fn created(answer: &ApiResponse) -> Result<NewSigningKey, ApiError> {
        let (info, private_key) = answer.json::<Wire>()?.info();
        let private_key = private_key.ok_or_else(|| ApiError::UnexpectedBody {
            url: answer.url().to_string(),
            status: answer.status(),
            reason: "createSigningKey's answer holds no privateKey".into(),
            body: String::new(),
        })?;
        Ok(NewSigningKey { info, private_key })
    }

    /// getSigningKey's answer.
    pub(crate) fn one(answer: &ApiResponse) -> Result<SigningKeyInfo, ApiError> {
        Ok(answer.json::<Wire>()?.info().0)
    }

    /// getSigningKeys' answer.
    pub(crate) fn many(answer: &ApiResponse) -> Result<Vec<SigningKeyInfo>, ApiError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct List {
            #[serde(default)]
            signing_keys: Vec<Wire>,
        }
        let list: List = answer.json()?;
        Ok(list.signing_keys.into_iter().map(|w| w.info().0).collect())
    }
}
