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
