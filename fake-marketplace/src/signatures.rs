//! eBay's digital signatures for APIs, faked: the Key Management API that issues signing keys,
//! and the check of a request's signature on the calls that need one.
//!
//! # Keys
//!
//! createSigningKey (`POST /developer/key_management/v1/signing_key`, body
//! `{"signingKeyCipher": "ED25519" | "RSA"}`), getSigningKey
//! (`GET /developer/key_management/v1/signing_key/{signing_key_id}`) and getSigningKeys
//! (`GET /developer/key_management/v1/signing_key`), with any token the fake issued. As on eBay,
//! only createSigningKey's answer holds the `privateKey` (base64 PKCS#8 DER: Ed25519 keys in the
//! 48-byte v1 form eBay publishes, which OpenSSL and Python's `cryptography` load; RSA keys are
//! 2048 bits); every key expires three years after its creation. A cipher other than `ED25519` or
//! `RSA` is refused (400, errorId 210001), an unknown id is not found (404, 210002), as eBay's
//! description of the API documents them.
//!
//! **The `jwe` is a format of the fake's own**, not a JSON Web Encryption: eBay's JWE holds the
//! public key encrypted for eBay's verifier alone, so the fake writes
//! `FAKE.<signingKeyId>.<base64url of the public key's SubjectPublicKeyInfo DER>` and reads
//! the public key back from it (checking that it issued that key under that id). A JWE issued
//! by eBay is refused (215120) unless its public key was registered with
//! [`FakeMarketplace::register_signing_key`](crate::FakeMarketplace::register_signing_key),
//! which maps any JWE (eBay's published test vectors' included) to a public key.
//!
//! # The check
//!
//! The Finances API's `GET /sell/finances/v1/transaction` and `GET /sell/finances/v1/payout`
//! are served (empty lists) behind a user token with the API's scope
//! (`https://api.ebay.com/oauth/api_scope/sell.finances`; without it, eBay's 403, errorId
//! 1100, see [`FakeState::check_scope`](crate::FakeState::check_scope)) and
//! Fulfillment's issueRefund on the fake's orders (see [`refunds`](crate::refunds)) behind
//! the same scope, both with
//! [`FakeState::check_signature`](crate::FakeState::check_signature), which a test's own route
//! can call too. It verifies as eBay's verifier does, written here independently of the
//! client: `Signature-Input` must be
//! `sig1=("content-digest" "x-ebay-signature-key" "@method" "@path" "@authority");created=N`
//! (without `"content-digest"` when the request has no body), `Content-Digest` must be the
//! SHA-256 of the body as received, and `Signature` (`sig1=:…:`) must verify over the base
//! built from the request as received (`@path` without the query, `@authority` from `Host`)
//! with the JWE's public key: Ed25519, or RSA with PKCS#1 v1.5 and SHA-256. `created` is not
//! compared with the fake's clock.
//!
//! Answers, in eBay's error body: no `x-ebay-signature-key` → 400, errorId 215001 ("Missing
//! x-ebay-signature-key header"); a JWE the fake cannot read or did not issue, or a signature
//! that does not verify → 403, 215120; a missing or malformed `Signature` or
//! `Signature-Input`, other components, or a `Content-Digest` missing or not the body's → 403,
//! 215122 (both "Signature validation failed").

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, UNIX_EPOCH};

use ring::signature::{
    ED25519, Ed25519KeyPair, KeyPair as _, RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey,
};
use sha2::{Digest as _, Sha256};

use crate::notify::base64_encode;
use crate::{FakeState, Request, Response, Route, base64_decode, lock};

/// createSigningKey's and getSigningKeys' path.
pub const SIGNING_KEY_PATH: &str = "/developer/key_management/v1/signing_key";
/// getTransactions' path (Finances API).
pub const TRANSACTIONS_PATH: &str = "/sell/finances/v1/transaction";
/// getPayouts' path (Finances API).
pub const PAYOUTS_PATH: &str = "/sell/finances/v1/payout";

/// The scope of the Finances API's getTransactions and getPayouts (the suffix of
/// `https://api.ebay.com/oauth/api_scope/sell.finances`).
pub const FINANCES_SCOPE: &str = "/sell.finances";

/// A key's lifetime (eBay: three years after its creation).
const KEY_LIFETIME: Duration = Duration::from_secs(3 * 365 * 24 * 3600);

/// One signing key the fake knows: its public half.
#[derive(Debug, Clone)]
struct KnownKey {
    id: String,
    cipher: &'static str,
    /// The SubjectPublicKeyInfo DER.
    spki: Vec<u8>,
    jwe: String,
    created: u64,
}

impl KnownKey {
    /// The key as getSigningKey answers it (no private key).
    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "signingKeyId": self.id,
            "signingKeyCipher": self.cipher,
            "creationTime": self.created,
            "expirationTime": self.created + KEY_LIFETIME.as_secs(),
            "jwe": self.jwe,
            "publicKey": base64_encode(&self.spki),
        })
    }
}

/// The keys issued or registered, by JWE.
#[derive(Debug, Default)]
pub(crate) struct SigningState {
    keys: Mutex<HashMap<String, KnownKey>>,
}

pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::new("POST", SIGNING_KEY_PATH, create_signing_key),
        Route::new("GET", SIGNING_KEY_PATH, get_signing_keys),
        Route::new(
            "GET",
            "/developer/key_management/v1/signing_key/{signing_key_id}",
            get_signing_key,
        ),
        Route::new("GET", TRANSACTIONS_PATH, |req, state| {
            signed(req, state, FINANCES_SCOPE, || {
                serde_json::json!({"href": req.path, "limit": 20, "offset": 0, "total": 0,
                    "transactions": []})
            })
        }),
        Route::new("GET", PAYOUTS_PATH, |req, state| {
            signed(req, state, FINANCES_SCOPE, || {
                serde_json::json!({"href": req.path, "limit": 20, "offset": 0, "total": 0,
                    "payouts": []})
            })
        }),
    ]
}

/// A route that needs a user token with the scope `…/oauth/api_scope{scope}` and a valid
/// signature, then answers 200 with `body`.
fn signed(
    req: &Request,
    state: &FakeState,
    scope: &str,
    body: impl FnOnce() -> serde_json::Value,
) -> Response {
    if let Err(refused) = state.check_scope(req, scope) {
        return refused;
    }
    match state.check_signature(req) {
        Ok(()) => Response::json(200, &body()),
        Err(refused) => refused,
    }
}

fn error(status: u16, error_id: u32, message: &str, long_message: &str) -> Response {
    Response::json(
        status,
        &serde_json::json!({"errors": [{
            "errorId": error_id,
            "domain": "ACCESS",
            "category": "REQUEST",
            "message": message,
            "longMessage": long_message,
        }]}),
    )
}

/// 215120 or 215122: "Signature validation failed".
fn failed(error_id: u32) -> Response {
    error(
        403,
        error_id,
        "Signature validation failed",
        "Signature validation failed to fulfill the request.",
    )
}

fn create_signing_key(req: &Request, state: &FakeState) -> Response {
    if let Err(refused) = state.check_bearer(req) {
        return refused;
    }
    let body: serde_json::Value = serde_json::from_slice(&req.body).unwrap_or_default();
    let cipher = match body["signingKeyCipher"].as_str() {
        Some("ED25519") => "ED25519",
        Some("RSA") => "RSA",
        _ => {
            return Response::json(
                400,
                &serde_json::json!({"errors": [{
                    "errorId": 210001,
                    "domain": "API_KEYS",
                    "category": "REQUEST",
                    "message": "You must supply a valid signing key cipher. Allowed values are ED25519 and RSA.",
                }]}),
            );
        }
    };
    let Some((pkcs8, spki)) = generate(cipher) else {
        return Response::json(
            500,
            &serde_json::json!({"errors": [{
                "errorId": 210000,
                "domain": "API_KEYS",
                "category": "APPLICATION",
                "message": "There was a problem with an eBay internal system or process. Contact eBay developer support for assistance.",
            }]}),
        );
    };
    let key = state.add_signing_key(cipher, spki, None);
    let mut answer = key.json();
    answer["privateKey"] = serde_json::Value::String(base64_encode(&pkcs8));
    Response::json(200, &answer)
}

fn get_signing_keys(req: &Request, state: &FakeState) -> Response {
    if let Err(refused) = state.check_bearer(req) {
        return refused;
    }
    let mut keys: Vec<KnownKey> = lock(&state.signing.keys).values().cloned().collect();
    keys.sort_by(|a, b| a.id.cmp(&b.id));
    let keys: Vec<_> = keys.iter().map(KnownKey::json).collect();
    Response::json(200, &serde_json::json!({"signingKeys": keys}))
}

fn get_signing_key(req: &Request, state: &FakeState) -> Response {
    if let Err(refused) = state.check_bearer(req) {
        return refused;
    }
    let id = req.param("signing_key_id").unwrap_or_default();
    let found = lock(&state.signing.keys)
        .values()
        .find(|k| k.id == id)
        .map(KnownKey::json);
    match found {
        Some(key) => Response::json(200, &key),
        None => Response::json(
            404,
            &serde_json::json!({"errors": [{
                "errorId": 210002,
                "domain": "API_KEYS",
                "category": "REQUEST",
                "message": format!("The signing key with id {id} was not found."),
            }]}),
        ),
    }
}

/// Committed RSA-2048 test keys (PKCS#8 PEM), handed out in turn: ring, the fake's crypto,
/// verifies RSA signatures but does not generate RSA keys, and a key generated in a debug
/// build would take seconds.
const RSA_TEST_KEYS: &str = include_str!("rsa_test_keys.pem");

/// A new key pair: its PKCS#8 DER and its SubjectPublicKeyInfo DER. Ed25519 keys are new;
/// RSA keys are the next of [`RSA_TEST_KEYS`].
fn generate(cipher: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    if cipher == "RSA" {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let blocks: Vec<&str> = RSA_TEST_KEYS
            .split("-----BEGIN PRIVATE KEY-----")
            .skip(1)
            .filter_map(|b| b.split("-----END PRIVATE KEY-----").next())
            .collect();
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let body: String = blocks
            .get(n % blocks.len().max(1))?
            .split_whitespace()
            .collect();
        let pkcs8 = base64_decode(&body)?;
        let key = ring::rsa::KeyPair::from_pkcs8(&pkcs8).ok()?;
        // SubjectPublicKeyInfo: rsaEncryption with NULL parameters, and the RSAPublicKey.
        let algorithm = [
            0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05,
            0x00,
        ];
        let spki = spki(&algorithm, key.public().as_ref());
        Some((pkcs8, spki))
    } else {
        // RFC 8410's PKCS#8 v1 (48 bytes, `MC4CAQAw…`), the form of every Ed25519 key eBay
        // publishes; the v2 form (RFC 5958, the public key appended) is refused by OpenSSL 3.0
        // and Python's `cryptography`. ring writes v2: v1 is its version 0, algorithm and seed.
        let v2 = Ed25519KeyPair::generate_pkcs8(&ring::rand::SystemRandom::new()).ok()?;
        let key = Ed25519KeyPair::from_pkcs8(v2.as_ref()).ok()?;
        let mut pkcs8 = vec![0x30, 0x2E, 0x02, 0x01, 0x00];
        pkcs8.extend_from_slice(v2.as_ref().get(5..48)?);
        let algorithm = [0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70];
        let spki = spki(&algorithm, key.public_key().as_ref());
        Some((pkcs8, spki))
    }
}

/// A SubjectPublicKeyInfo DER of an AlgorithmIdentifier DER and the public key's bytes.
fn spki(algorithm: &[u8], public: &[u8]) -> Vec<u8> {
    let mut bits = vec![0x00];
    bits.extend_from_slice(public);
    let mut inner = algorithm.to_vec();
    inner.extend(der(0x03, &bits));
    der(0x30, &inner)
}

/// One DER tag-length-value of `tag` around `value`.
fn der(tag: u8, value: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = value.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .into_iter()
            .skip_while(|b| *b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out.extend_from_slice(value);
    out
}

fn base64url(bytes: &[u8]) -> String {
    base64_encode(bytes)
        .trim_end_matches('=')
        .replace('+', "-")
        .replace('/', "_")
}

fn base64url_decode(text: &str) -> Option<Vec<u8>> {
    let mut s = text.replace('-', "+").replace('_', "/");
    while !s.len().is_multiple_of(4) {
        s.push('=');
    }
    base64_decode(&s)
}

/// The algorithm OID and the subjectPublicKey bits of a SubjectPublicKeyInfo DER.
fn spki_parts(spki: &[u8]) -> Option<(&[u8], &[u8])> {
    let (tag, info, rest) = tlv(spki)?;
    if tag != 0x30 || !rest.is_empty() {
        return None;
    }
    let (tag, algorithm, info) = tlv(info)?;
    if tag != 0x30 {
        return None;
    }
    let (tag, oid, _) = tlv(algorithm)?;
    let (bit_tag, bits, _) = tlv(info)?;
    if tag != 0x06 || bit_tag != 0x03 {
        return None;
    }
    let (&unused, key) = bits.split_first()?;
    (unused == 0).then_some((oid, key))
}

/// One DER tag-length-value.
fn tlv(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7F);
        if n == 0 || n > 4 || rest.len() < n {
            return None;
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, b| (acc << 8) | usize::from(*b));
        (len, &rest[n..])
    };
    (rest.len() >= len).then(|| {
        let (value, rest) = rest.split_at(len);
        (tag, value, rest)
    })
}

/// The cipher of a SubjectPublicKeyInfo (Ed25519 or rsaEncryption).
fn cipher_of(spki: &[u8]) -> Option<&'static str> {
    match spki_parts(spki)?.0 {
        [0x2B, 0x65, 0x70] => Some("ED25519"),
        [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01] => Some("RSA"),
        _ => None,
    }
}

/// The covered components eBay's verifier expects, with and without a body.
const WITH_BODY: [&str; 5] = [
    "content-digest",
    "x-ebay-signature-key",
    "@method",
    "@path",
    "@authority",
];

impl FakeState {
    /// Adds a key's public half under a new id; its JWE is `jwe`, or the fake's own.
    fn add_signing_key(&self, cipher: &'static str, spki: Vec<u8>, jwe: Option<&str>) -> KnownKey {
        let id = format!("fake-signing-key-{:04}", self.next_id());
        let created = self
            .now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let jwe = jwe.map_or_else(|| format!("FAKE.{id}.{}", base64url(&spki)), str::to_owned);
        let key = KnownKey {
            id,
            cipher,
            spki,
            jwe: jwe.clone(),
            created,
        };
        lock(&self.signing.keys).insert(jwe, key.clone());
        key
    }

    /// The public key (SubjectPublicKeyInfo DER) and cipher of `jwe`, if the fake issued it or
    /// it was registered.
    fn public_key_of(&self, jwe: &str) -> Option<KnownKey> {
        let known = lock(&self.signing.keys).get(jwe).cloned()?;
        if let Some(rest) = jwe.strip_prefix("FAKE.") {
            // The fake's own format: the public key is read back from the JWE itself.
            let (id, key) = rest.split_once('.')?;
            let spki = base64url_decode(key)?;
            return (id == known.id && spki == known.spki).then_some(known);
        }
        Some(known)
    }

    /// Checks the request's digital signature as eBay's verifier does (see the
    /// [module](crate::signatures)): `Err` is eBay's error answer (215001, 215120 or 215122).
    pub fn check_signature(&self, req: &Request) -> Result<(), Response> {
        let Some(jwe) = req.header("x-ebay-signature-key") else {
            return Err(error(
                400,
                215001,
                "Missing x-ebay-signature-key header",
                "The x-ebay-signature-key header is missing: this call needs a digital signature.",
            ));
        };
        let input = req
            .header("Signature-Input")
            .ok_or_else(|| failed(215122))?;
        let params = input.strip_prefix("sig1=").ok_or_else(|| failed(215122))?;
        let (list, created) = params
            .strip_prefix('(')
            .and_then(|p| p.split_once(");created="))
            .ok_or_else(|| failed(215122))?;
        if created.is_empty() || !created.bytes().all(|b| b.is_ascii_digit()) {
            return Err(failed(215122));
        }
        let components: Vec<&str> = list
            .split(' ')
            .map(|c| c.strip_prefix('"').and_then(|c| c.strip_suffix('"')))
            .collect::<Option<_>>()
            .ok_or_else(|| failed(215122))?;
        let expected: &[&str] = if req.body.is_empty() {
            &WITH_BODY[1..]
        } else {
            &WITH_BODY
        };
        if components != expected {
            return Err(failed(215122));
        }
        if !req.body.is_empty() {
            let digest = req
                .header("Content-Digest")
                .and_then(|d| d.strip_prefix("sha-256=:"))
                .and_then(|d| d.strip_suffix(':'))
                .and_then(base64_decode)
                .ok_or_else(|| failed(215122))?;
            if digest.as_slice() != Sha256::digest(&req.body).as_slice() {
                return Err(failed(215122));
            }
        }
        let signature = req
            .header("Signature")
            .and_then(|s| s.strip_prefix("sig1=:"))
            .and_then(|s| s.strip_suffix(':'))
            .and_then(base64_decode)
            .ok_or_else(|| failed(215122))?;
        let key = self.public_key_of(jwe).ok_or_else(|| failed(215120))?;
        let mut base = String::new();
        for component in &components {
            let value = match *component {
                "@method" => req.method.as_str(),
                "@path" => req.path.as_str(),
                "@authority" => req.header("Host").unwrap_or_default(),
                header => req.header(header).unwrap_or_default(),
            };
            base.push_str(&format!("\"{component}\": {value}\n"));
        }
        base.push_str(&format!("\"@signature-params\": {params}"));
        let (_, public) = spki_parts(&key.spki).ok_or_else(|| failed(215120))?;
        let verified = if key.cipher == "ED25519" {
            UnparsedPublicKey::new(&ED25519, public).verify(base.as_bytes(), &signature)
        } else {
            UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, public)
                .verify(base.as_bytes(), &signature)
        };
        verified.map_err(|_| failed(215120))
    }

    /// Registers a public key (PEM `PUBLIC KEY`, Ed25519 or RSA) under `jwe`, or under a JWE
    /// of the fake's own when `jwe` is `None`; returns the JWE.
    pub(crate) fn register_signing_key(
        &self,
        public_key_pem: &str,
        jwe: Option<&str>,
    ) -> Result<String, String> {
        let body: String = public_key_pem
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with("-----"))
            .collect();
        if !public_key_pem.contains("-----BEGIN PUBLIC KEY-----") {
            return Err("not a PEM PUBLIC KEY".into());
        }
        let spki = base64_decode(&body).ok_or("the PEM body is not base64")?;
        let cipher = cipher_of(&spki).ok_or("neither an Ed25519 nor an RSA public key")?;
        Ok(self.add_signing_key(cipher, spki, jwe).jwe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64url_round_trips() {
        for bytes in [&b""[..], b"\xfb\xff", b"abc", b"\x00\x01\x02\x03"] {
            assert_eq!(base64url_decode(&base64url(bytes)).unwrap(), bytes);
        }
        assert_eq!(base64url(b"\xfb\xff"), "-_8");
    }

    #[test]
    fn generated_keys_have_their_cipher() {
        for cipher in ["ED25519", "RSA"] {
            let (_, spki) = generate(cipher).unwrap();
            assert_eq!(cipher_of(&spki), Some(cipher));
        }
        let (pkcs8, _) = generate("ED25519").unwrap();
        assert_eq!(
            (pkcs8.len(), &pkcs8[..5]),
            (48, &[0x30, 0x2E, 0x02, 0x01, 0x00][..])
        );
    }
}
