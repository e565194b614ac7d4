//! The `X-EBAY-SIGNATURE` header: base64 of `{"alg":"ecdsa","kid":…,"signature":…,"digest":"SHA1"}`,
//! an ECDSA signature over P-256 with SHA-1 of the notification's body.

use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::{DecodePaddingMode, general_purpose};
use p256::ecdsa::signature::hazmat::PrehashVerifier as _;
use p256::ecdsa::{Signature, VerifyingKey};
use p256::pkcs8::DecodePublicKey as _;
use sha1::{Digest as _, Sha1};

use crate::compact;

/// The longest `X-EBAY-SIGNATURE` header read (eBay's are about 250 bytes).
pub const MAX_HEADER_BYTES: usize = 4096;

/// Standard alphabet, padding optional (eBay pads; a proxy that strips it is tolerated).
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);
const BASE64_URL: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// A public key of eBay's Notification API (the `key` of getPublicKey's answer): ECDSA over
/// P-256, verified by RustCrypto's `p256` (eBay signs over SHA-1, which ring, the TLS stack's
/// crypto, does not verify; no C code).
#[derive(Clone)]
pub struct PublicKey {
    key: VerifyingKey,
}

impl PartialEq for PublicKey {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl Eq for PublicKey {}

impl fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("PublicKey(P-256)")
    }
}

/// Why a public key could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// No `-----BEGIN PUBLIC KEY-----` line.
    #[error("the public key is not a PEM: no \"-----BEGIN PUBLIC KEY-----\"")]
    NoBegin,
    /// No `-----END PUBLIC KEY-----` after the begin line.
    #[error("the public key PEM has no \"-----END PUBLIC KEY-----\" after its begin line")]
    NoEnd,
    /// The text between the lines is not base64.
    #[error("the public key PEM's body is not base64")]
    NotBase64,
    /// The decoded bytes are not a P-256 SubjectPublicKeyInfo.
    #[error("the public key is not an ECDSA P-256 key (SubjectPublicKeyInfo, DER)")]
    NotP256,
}

const BEGIN: &str = "-----BEGIN PUBLIC KEY-----";
const END: &str = "-----END PUBLIC KEY-----";

impl PublicKey {
    /// Reads a PEM `-----BEGIN PUBLIC KEY-----…-----END PUBLIC KEY-----`, with or without
    /// line breaks (getPublicKey's `key` has none; a PEM file has them).
    pub fn from_pem(pem: &str) -> Result<Self, KeyError> {
        let start = pem.find(BEGIN).ok_or(KeyError::NoBegin)? + BEGIN.len();
        let len = pem[start..].find(END).ok_or(KeyError::NoEnd)?;
        let body: String = pem[start..start + len]
            .chars()
            .filter(|c| !c.is_ascii_whitespace())
            .collect();
        let der = BASE64.decode(body).map_err(|_| KeyError::NotBase64)?;
        Self::from_der(&der)
    }

    /// Reads a DER SubjectPublicKeyInfo (the PEM's decoded body).
    pub fn from_der(der: &[u8]) -> Result<Self, KeyError> {
        VerifyingKey::from_public_key_der(der)
            .map(Self::from)
            .map_err(|_| KeyError::NotP256)
    }

    /// The key as RustCrypto's verifying key.
    pub fn verifying_key(&self) -> &VerifyingKey {
        &self.key
    }

    /// True when `signature` verifies over `message` (SHA-1 of it).
    fn verifies(&self, message: &[u8], signature: &Signature) -> bool {
        // Either s or n - s verifies: a signer that does not normalise is accepted.
        let signature = signature.normalize_s().unwrap_or(*signature);
        self.key
            .verify_prehash(&Sha1::digest(message), &signature)
            .is_ok()
    }
}

impl From<VerifyingKey> for PublicKey {
    fn from(key: VerifyingKey) -> Self {
        Self { key }
    }
}

/// The decoded `X-EBAY-SIGNATURE` header.
#[derive(Clone, PartialEq, Eq)]
pub struct SignatureHeader {
    kid: String,
    signature: Signature,
}

impl fmt::Debug for SignatureHeader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SignatureHeader")
            .field("kid", &self.kid)
            .finish_non_exhaustive()
    }
}

/// Why a notification's signature was not accepted. Texts from the request are quoted
/// shortened (at most 64 characters); nothing secret is in a header.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VerifyError {
    /// No `X-EBAY-SIGNATURE` header, or an empty one.
    #[error("no X-EBAY-SIGNATURE header")]
    MissingHeader,
    /// The header is longer than [`MAX_HEADER_BYTES`].
    #[error("the X-EBAY-SIGNATURE header is {bytes} bytes, more than the {MAX_HEADER_BYTES} read")]
    HeaderTooLong {
        /// Its length.
        bytes: usize,
    },
    /// The header is not base64.
    #[error("the X-EBAY-SIGNATURE header is not base64")]
    HeaderNotBase64,
    /// The decoded header is not a JSON object.
    #[error("the X-EBAY-SIGNATURE header is not base64 of a JSON object: {reason}")]
    HeaderNotJson {
        /// What the JSON parser said.
        reason: String,
    },
    /// A field of the decoded header is missing or not a string.
    #[error("the X-EBAY-SIGNATURE header's field {field:?} is missing or not a string")]
    HeaderField {
        /// `alg`, `kid`, `signature` or `digest`.
        field: &'static str,
    },
    /// `alg` is not `ecdsa`.
    #[error("the X-EBAY-SIGNATURE header's alg {alg:?} is not \"ecdsa\", the only one known")]
    UnknownAlgorithm {
        /// The `alg` sent (shortened).
        alg: String,
    },
    /// `digest` is not `SHA1`.
    #[error("the X-EBAY-SIGNATURE header's digest {digest:?} is not \"SHA1\", the only one known")]
    UnknownDigest {
        /// The `digest` sent (shortened).
        digest: String,
    },
    /// `signature` is not base64 of a DER (or 64-byte) ECDSA P-256 signature.
    #[error(
        "the X-EBAY-SIGNATURE header's signature is not base64 of an ECDSA P-256 signature (DER)"
    )]
    MalformedSignature,
    /// The signature does not verify with the key over the body (raw, or re-serialised).
    #[error("the notification's signature does not verify with the public key of kid {kid:?}")]
    BadSignature {
        /// The `kid` of the header (shortened).
        kid: String,
    },
}

impl VerifyError {
    /// Whether the request was malformed (a 400) rather than signed wrongly (a 412).
    pub fn is_malformed(&self) -> bool {
        !matches!(self, VerifyError::BadSignature { .. })
    }
}

pub(crate) fn shorten(text: &str) -> String {
    const MAX: usize = 64;
    match text.char_indices().nth(MAX) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

impl SignatureHeader {
    /// Decodes an `X-EBAY-SIGNATURE` header: base64 of
    /// `{"alg":"ecdsa","kid":…,"signature":…,"digest":"SHA1"}` (`alg` and `digest` compared
    /// without case; other fields ignored).
    pub fn parse(header: &str) -> Result<Self, VerifyError> {
        let header = header.trim();
        if header.is_empty() {
            return Err(VerifyError::MissingHeader);
        }
        if header.len() > MAX_HEADER_BYTES {
            return Err(VerifyError::HeaderTooLong {
                bytes: header.len(),
            });
        }
        let json = BASE64
            .decode(header)
            .or_else(|_| BASE64_URL.decode(header))
            .map_err(|_| VerifyError::HeaderNotBase64)?;
        let value: serde_json::Value =
            serde_json::from_slice(&json).map_err(|e| VerifyError::HeaderNotJson {
                reason: e.to_string(),
            })?;
        let object = value
            .as_object()
            .ok_or_else(|| VerifyError::HeaderNotJson {
                reason: "not an object".into(),
            })?;
        let field = |field: &'static str| {
            object
                .get(field)
                .and_then(|v| v.as_str())
                .ok_or(VerifyError::HeaderField { field })
        };
        let alg = field("alg")?;
        if !alg.eq_ignore_ascii_case("ecdsa") {
            return Err(VerifyError::UnknownAlgorithm { alg: shorten(alg) });
        }
        let digest = field("digest")?;
        if !digest.eq_ignore_ascii_case("sha1") {
            return Err(VerifyError::UnknownDigest {
                digest: shorten(digest),
            });
        }
        let kid = field("kid")?;
        let signature = field("signature")?;
        let bytes = BASE64
            .decode(signature.trim())
            .map_err(|_| VerifyError::MalformedSignature)?;
        let signature = if bytes.len() == 64 {
            Signature::from_slice(&bytes)
        } else {
            Signature::from_der(&bytes)
        }
        .map_err(|_| VerifyError::MalformedSignature)?;
        Ok(Self {
            kid: kid.to_owned(),
            signature,
        })
    }

    /// The key id: what getPublicKey is asked for.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// Verifies the signature over `body` with `key` (see [`verify`]).
    pub fn verify(&self, body: &[u8], key: &PublicKey) -> Result<SignedForm, VerifyError> {
        let check = |message: &[u8]| key.verifies(message, &self.signature);
        if check(body) {
            return Ok(SignedForm::RawBody);
        }
        if let Some(compact) = compact::reserialise(body)
            && compact != body
            && check(&compact)
        {
            return Ok(SignedForm::Compact);
        }
        Err(VerifyError::BadSignature {
            kid: shorten(&self.kid),
        })
    }
}

/// Which form of the body the signature was made over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedForm {
    /// The body exactly as received.
    RawBody,
    /// The compact re-serialisation of the body's JSON (keys in their order, no whitespace):
    /// the form eBay's own SDKs verify.
    Compact,
}

/// Verifies a notification: `x_ebay_signature_header` is the request's `X-EBAY-SIGNATURE`
/// header, `body` the request's body as received, `key` the public key of the header's
/// `kid` (getPublicKey). The signature is ECDSA over P-256 with SHA-1, over the raw body, or
/// else over the compact re-serialisation of its JSON (the form eBay's SDKs verify).
///
/// No I/O: a caller finds the key with [`SignatureHeader::parse`]'s [`kid`](SignatureHeader::kid)
/// first. Never panics, whatever the header and body.
pub fn verify(
    x_ebay_signature_header: &str,
    body: &[u8],
    key: &PublicKey,
) -> Result<SignedForm, VerifyError> {
    SignatureHeader::parse(x_ebay_signature_header)?.verify(body, key)
}

/// base64 (standard, padded), as eBay encodes the header and its signature: for callers and
/// tests that build a header.
pub fn encode_header(kid: &str, signature_der: &[u8]) -> String {
    let json = serde_json::json!({
        "alg": "ecdsa",
        "kid": kid,
        "signature": general_purpose::STANDARD.encode(signature_der),
        "digest": "SHA1",
    });
    general_purpose::STANDARD.encode(json.to_string())
}
