//! eBay's request signatures (RFC 9421 as eBay profiles it), without I/O and without a clock:
//! the private key read from PKCS#8 (PEM or DER), the signature base, and the four headers.
//!
//! The base is built exactly as eBay's signature SDKs build it: one `"name": value` line per
//! covered component, then `"@signature-params": …`, joined by `\n` with no trailing newline;
//! no `keyid` or `alg` parameter; `@path` is the path without the query string; `@authority`
//! is the host, and the port when it is not the scheme's default (what the `Host` header
//! says). `content-digest` is covered only when the request has a body.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use ring::digest::{SHA256, digest};
use ring::rand::SystemRandom;
use ring::rsa::KeyPair as RsaKeyPair;
use ring::signature::{Ed25519KeyPair, RSA_PKCS1_SHA256};
use zeroize::Zeroizing;

/// The header that carries the public key, as the JWE the Key Management API returned.
pub(crate) const KEY_HEADER: &str = "x-ebay-signature-key";
/// The body's SHA-256 digest (RFC 9530).
pub(crate) const DIGEST_HEADER: &str = "Content-Digest";
/// The covered components and `created`.
pub(crate) const INPUT_HEADER: &str = "Signature-Input";
/// The signature.
pub(crate) const SIGNATURE_HEADER: &str = "Signature";

/// `1.3.101.112`, Ed25519 (RFC 8410).
const OID_ED25519: &[u8] = &[0x2B, 0x65, 0x70];
/// `1.2.840.113549.1.1.1`, rsaEncryption.
const OID_RSA: &[u8] = &[0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01];
/// `1.2.840.113549.1.1.10`, RSASSA-PSS: eBay's own RSA sample key is labelled with it, yet
/// eBay verifies RSA signatures as PKCS#1 v1.5 with SHA-256.
const OID_RSA_PSS: &[u8] = &[0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0A];

/// A private key that signs requests, held by ring (constant-time signing); every copy of the
/// encoded key made while reading it is zeroed on drop.
pub(crate) enum PrivateKey {
    /// Ed25519 (what eBay recommends).
    Ed25519(Ed25519KeyPair),
    /// RSA, signing with RSASSA-PKCS1-v1_5 and SHA-256.
    Rsa(RsaKeyPair),
}

impl PrivateKey {
    /// `"ED25519"` or `"RSA"`: the key's `signingKeyCipher`, as the Key Management API names it.
    pub(crate) fn cipher(&self) -> &'static str {
        match self {
            PrivateKey::Ed25519(_) => "ED25519",
            PrivateKey::Rsa(_) => "RSA",
        }
    }

    /// The key of a PEM text: `PRIVATE KEY` (PKCS#8) or `RSA PRIVATE KEY` (PKCS#1).
    pub(crate) fn from_pem(pem: &str) -> Result<Self, String> {
        let (label, der) = pem_block(pem)?;
        match label {
            "PRIVATE KEY" => Self::from_pkcs8(&der),
            "RSA PRIVATE KEY" => RsaKeyPair::from_der(&der)
                .map(PrivateKey::Rsa)
                .map_err(|e| format!("the RSA PRIVATE KEY block is not a usable RSA key ({e})")),
            "ENCRYPTED PRIVATE KEY" => Err(
                "the private key is encrypted; give it unencrypted (for example \
                 `openssl pkcs8 -in key.pem -out plain.pem`)"
                    .into(),
            ),
            other => Err(format!(
                "a PEM block labelled {other:?} is not a private key (expected PRIVATE KEY)"
            )),
        }
    }

    /// The key of a base64 PKCS#8 DER text (what createSigningKey's `privateKey` holds); a
    /// PEM text is read as one.
    pub(crate) fn from_der_base64(text: &str) -> Result<Self, String> {
        if text.contains("-----BEGIN") {
            return Self::from_pem(text);
        }
        let der = decode_base64(text)?;
        Self::from_pkcs8(&der)
    }

    /// The key of a PKCS#8 `PrivateKeyInfo` (RFC 5208 / 5958), Ed25519 or RSA. The RSA key
    /// is taken from inside the wrapper, so a key labelled RSASSA-PSS (as eBay's sample key
    /// is) loads like one labelled rsaEncryption and signs with PKCS#1 v1.5.
    pub(crate) fn from_pkcs8(der: &[u8]) -> Result<Self, String> {
        let info = Pkcs8::parse(der).ok_or_else(|| {
            "the private key is not a PKCS#8 PrivateKeyInfo (DER); eBay's keys are".to_owned()
        })?;
        if info.algorithm == OID_ED25519 {
            // `maybe_unchecked`: PKCS#8 v1 (no public key inside, as eBay issues keys) as
            // well as v2 (whose public key is then not checked against the private one).
            Ed25519KeyPair::from_pkcs8_maybe_unchecked(der)
                .map(PrivateKey::Ed25519)
                .map_err(|e| format!("the Ed25519 private key cannot be used ({e})"))
        } else if info.algorithm == OID_RSA || info.algorithm == OID_RSA_PSS {
            RsaKeyPair::from_der(info.private_key)
                .map(PrivateKey::Rsa)
                .map_err(|e| format!("the RSA private key cannot be used ({e})"))
        } else {
            Err(format!(
                "the private key's algorithm (OID {}) is neither Ed25519 nor RSA",
                oid_text(info.algorithm)
            ))
        }
    }

    /// The signature of `message`.
    fn sign(&self, message: &[u8]) -> Result<Vec<u8>, String> {
        match self {
            PrivateKey::Ed25519(key) => Ok(key.sign(message).as_ref().to_vec()),
            PrivateKey::Rsa(key) => {
                let mut signature = vec![0; key.public().modulus_len()];
                key.sign(
                    &RSA_PKCS1_SHA256,
                    &SystemRandom::new(),
                    message,
                    &mut signature,
                )
                .map_err(|_| "the RSA key failed to sign".to_owned())?;
                Ok(signature)
            }
        }
    }
}

/// How long before its `expirationTime` a signing key is replaced: 30 days, so a key is never
/// used close to its end and a failed creation has a month of retries.
pub(crate) const REPLACE_BEFORE_SECS: u64 = 30 * 24 * 3600;

/// What to do with the stored signing key, given its `expirationTime` (Unix seconds, `None`
/// when eBay gave none) and the time `now` (Unix seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyDecision {
    /// Keep signing with it.
    Keep,
    /// Create a new key, save it, then sign with it; keep the old one until it expires. When
    /// the creation fails, keep signing with the old key (still valid) and try again later.
    Renew,
    /// The key has expired: create a new key; without one, nothing can be signed.
    Replace,
}

/// [`KeyDecision::Keep`] until [`REPLACE_BEFORE_SECS`] before the expiry (and for a key
/// without an expiry), then [`KeyDecision::Renew`], and [`KeyDecision::Replace`] from the
/// expiry on. Pure.
pub(crate) fn key_decision(expiration_time: Option<u64>, now: u64) -> KeyDecision {
    match expiration_time {
        Some(expires) if now >= expires => KeyDecision::Replace,
        Some(expires) if now.saturating_add(REPLACE_BEFORE_SECS) >= expires => KeyDecision::Renew,
        _ => KeyDecision::Keep,
    }
}

/// The parts of a request that its signature covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Components<'a> {
    /// `@method`, upper case.
    pub(crate) method: &'a str,
    /// `@path`: the path as sent (percent-encoded), without the query.
    pub(crate) path: &'a str,
    /// `@authority`: the host, and `:port` unless it is the scheme's default.
    pub(crate) authority: String,
}

/// The components of `method` and `url` (an absolute `http` or `https` URL).
pub(crate) fn components<'a>(method: &'a str, url: &'a str) -> Result<Components<'a>, String> {
    if method.is_empty() || !method.bytes().all(|b| b.is_ascii_uppercase()) {
        return Err(format!(
            "the method {method:?} is not an upper-case HTTP method such as POST"
        ));
    }
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| format!("{url:?} is not an absolute URL"))?;
    let default_port = match scheme.to_ascii_lowercase().as_str() {
        "https" => "443",
        "http" => "80",
        _ => return Err(format!("{url:?} is not an http or https URL")),
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, rest) = rest.split_at(end);
    if authority.is_empty() || authority.contains('@') {
        return Err(format!(
            "{url:?} has no host, or user information before it (not sent, not signed)"
        ));
    }
    let authority = authority.to_ascii_lowercase();
    let authority = match authority.rsplit_once(':') {
        Some((host, port)) if port == default_port && !host.ends_with(':') => host.to_owned(),
        _ => authority,
    };
    let path_end = rest.find(['?', '#']).unwrap_or(rest.len());
    let path = match &rest[..path_end] {
        "" => "/",
        path => path,
    };
    if authority
        .chars()
        .chain(path.chars())
        .any(|c| c.is_control() || c.is_whitespace())
    {
        return Err(format!(
            "{url:?} holds a control character or a space (it would change the signature base)"
        ));
    }
    Ok(Components {
        method,
        path,
        authority,
    })
}

/// `sha-256=:<base64 of the body's SHA-256>:`.
pub(crate) fn content_digest(body: &[u8]) -> String {
    format!("sha-256=:{}:", STANDARD.encode(digest(&SHA256, body)))
}

/// The signature's parameters (`Signature-Input` after `sig1=`): the covered components and
/// `created`.
pub(crate) fn signature_params(with_digest: bool, created: u64) -> String {
    let digest = if with_digest {
        "\"content-digest\" "
    } else {
        ""
    };
    format!("({digest}\"{KEY_HEADER}\" \"@method\" \"@path\" \"@authority\");created={created}")
}

/// The signature base, byte for byte as eBay's SDKs build it.
pub(crate) fn signature_base(
    digest: Option<&str>,
    jwe: &str,
    components: &Components<'_>,
    params: &str,
) -> String {
    let mut base = String::with_capacity(256 + jwe.len());
    if let Some(digest) = digest {
        base.push_str("\"content-digest\": ");
        base.push_str(digest);
        base.push('\n');
    }
    for (name, value) in [
        (KEY_HEADER, jwe),
        ("@method", components.method),
        ("@path", components.path),
        ("@authority", components.authority.as_str()),
    ] {
        base.push('"');
        base.push_str(name);
        base.push_str("\": ");
        base.push_str(value);
        base.push('\n');
    }
    base.push_str("\"@signature-params\": ");
    base.push_str(params);
    base
}

/// The headers that sign `method url` with `body` at `created` (Unix seconds): the key's
/// JWE, `Content-Digest` (only with a non-empty body), `Signature-Input`, `Signature`.
pub(crate) fn headers(
    key: &PrivateKey,
    jwe: &str,
    method: &str,
    url: &str,
    body: Option<&[u8]>,
    created: u64,
) -> Result<Vec<(&'static str, String)>, String> {
    let components = components(method, url)?;
    let digest = body.filter(|b| !b.is_empty()).map(content_digest);
    let params = signature_params(digest.is_some(), created);
    let base = signature_base(digest.as_deref(), jwe, &components, &params);
    let signature = STANDARD.encode(key.sign(base.as_bytes())?);
    let mut headers = Vec::with_capacity(4);
    headers.push((KEY_HEADER, jwe.to_owned()));
    if let Some(digest) = digest {
        headers.push((DIGEST_HEADER, digest));
    }
    headers.push((INPUT_HEADER, format!("sig1={params}")));
    headers.push((SIGNATURE_HEADER, format!("sig1=:{signature}:")));
    Ok(headers)
}

/// Whether `jwe` can stand in the header and in one line of the base: visible ASCII only.
pub(crate) fn check_jwe(jwe: &str) -> Result<(), String> {
    if jwe.is_empty() || !jwe.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(
            "the JWE must be the `jwe` value createSigningKey returned: non-empty, visible \
             ASCII, no spaces or line breaks"
                .into(),
        );
    }
    Ok(())
}

/// The label and the decoded body of the first PEM block of `pem`.
fn pem_block(pem: &str) -> Result<(&str, Zeroizing<Vec<u8>>), String> {
    let no_block = || "no PEM block (-----BEGIN PRIVATE KEY----- … -----END …-----)".to_owned();
    let start = pem.find("-----BEGIN ").ok_or_else(no_block)?;
    let after = &pem[start + "-----BEGIN ".len()..];
    let label_end = after.find("-----").ok_or_else(no_block)?;
    let label = &after[..label_end];
    let body = &after[label_end + 5..];
    let end_marker = format!("-----END {label}-----");
    let end = body
        .find(&end_marker)
        .ok_or_else(|| format!("the PEM block {label:?} has no END line"))?;
    let der = decode_base64(&body[..end])?;
    Ok((label, der))
}

/// Standard base64 (padding optional), white space (`\r` and `\n` included) ignored.
fn decode_base64(text: &str) -> Result<Zeroizing<Vec<u8>>, String> {
    let compact: Zeroizing<Vec<u8>> =
        Zeroizing::new(text.bytes().filter(|b| !b.is_ascii_whitespace()).collect());
    let trimmed: &[u8] = {
        let mut end = compact.len();
        while end > 0 && compact[end - 1] == b'=' {
            end -= 1;
        }
        &compact[..end]
    };
    base64::engine::general_purpose::STANDARD_NO_PAD
        .decode(trimmed)
        .map(Zeroizing::new)
        .map_err(|_| "the private key is not valid base64".to_owned())
}

/// The fields of a PKCS#8 `PrivateKeyInfo` that choose the algorithm.
struct Pkcs8<'a> {
    /// The algorithm's OID (its content octets).
    algorithm: &'a [u8],
    /// The `privateKey` OCTET STRING's content (for RSA, an `RSAPrivateKey`).
    private_key: &'a [u8],
}

impl<'a> Pkcs8<'a> {
    /// `SEQUENCE { INTEGER version, SEQUENCE { OID, params? }, OCTET STRING, … }`.
    fn parse(der: &'a [u8]) -> Option<Self> {
        let (tag, info, rest) = tlv(der)?;
        if tag != 0x30 || !rest.is_empty() {
            return None;
        }
        let (tag, version, info) = tlv(info)?;
        if tag != 0x02 || !matches!(version, [0] | [1]) {
            return None;
        }
        let (tag, algorithm, info) = tlv(info)?;
        if tag != 0x30 {
            return None;
        }
        let (tag, oid, _params) = tlv(algorithm)?;
        if tag != 0x06 {
            return None;
        }
        let (tag, private_key, _attributes) = tlv(info)?;
        if tag != 0x04 {
            return None;
        }
        Some(Self {
            algorithm: oid,
            private_key,
        })
    }
}

/// One DER tag-length-value: the tag, the value, and what follows it.
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
    if rest.len() < len {
        return None;
    }
    let (value, rest) = rest.split_at(len);
    Some((tag, value, rest))
}

/// An OID's dotted text, for an error message.
fn oid_text(oid: &[u8]) -> String {
    let mut arcs: Vec<u64> = Vec::new();
    let mut value: u64 = 0;
    for b in oid {
        value = (value << 7) | u64::from(b & 0x7F);
        if b & 0x80 == 0 {
            if arcs.is_empty() {
                let first = (value / 40).min(2);
                arcs.push(first);
                arcs.push(value - first * 40);
            } else {
                arcs.push(value);
            }
            value = 0;
        }
    }
    arcs.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_replaced_within_thirty_days_of_its_expiry() {
        use KeyDecision::{Keep, Renew, Replace};
        const DAY: u64 = 24 * 3600;
        let expires = 1_900_000_000;
        for (expiry, now, decision) in [
            (Some(expires), expires - 31 * DAY, Keep),
            (Some(expires), expires - 30 * DAY - 1, Keep),
            (Some(expires), expires - 30 * DAY, Renew),
            (Some(expires), expires - DAY, Renew),
            (Some(expires), expires - 1, Renew),
            (Some(expires), expires, Replace),
            (Some(expires), expires + DAY, Replace),
            // Three years ahead (a new key): kept.
            (Some(expires), expires - 3 * 365 * DAY, Keep),
            // No expiry given: kept; no overflow at the ends of time.
            (None, u64::MAX, Keep),
            (Some(u64::MAX), u64::MAX - 1, Renew),
            (Some(0), 0, Replace),
        ] {
            assert_eq!(key_decision(expiry, now), decision, "{expiry:?} at {now}");
        }
    }

    #[test]
    fn components_are_the_path_without_query_and_the_authority_as_sent() {
        let c = components("POST", "https://localhost:8080/test?x=1#f").unwrap();
        assert_eq!((c.path, c.authority.as_str()), ("/test", "localhost:8080"));
        let c = components(
            "GET",
            "https://apiz.ebay.com:443/sell/finances/v1/payout?limit=20",
        )
        .unwrap();
        assert_eq!(
            (c.path, c.authority.as_str()),
            ("/sell/finances/v1/payout", "apiz.ebay.com")
        );
        let c = components("GET", "http://[::1]:80").unwrap();
        assert_eq!((c.path, c.authority.as_str()), ("/", "[::1]"));
        let c = components("GET", "http://127.0.0.1:4321/a%20b").unwrap();
        assert_eq!((c.path, c.authority.as_str()), ("/a%20b", "127.0.0.1:4321"));
        for (method, url) in [
            ("post", "https://h/x"),
            ("GET", "h/x"),
            ("GET", "ftp://h/x"),
            ("GET", "https://u@h/x"),
            ("GET", "https:///x"),
            ("GET", "https://h/a\nb"),
        ] {
            assert!(components(method, url).is_err(), "{method} {url}");
        }
    }

    #[test]
    fn the_base_has_no_trailing_newline_and_no_digest_without_a_body() {
        let c = components("GET", "https://apiz.ebay.com/sell/finances/v1/payout").unwrap();
        let params = signature_params(false, 1683883448);
        assert_eq!(
            signature_base(None, "JWE", &c, &params),
            "\"x-ebay-signature-key\": JWE\n\"@method\": GET\n\"@path\": \
             /sell/finances/v1/payout\n\"@authority\": apiz.ebay.com\n\"@signature-params\": \
             (\"x-ebay-signature-key\" \"@method\" \"@path\" \"@authority\");created=1683883448"
        );
    }

    #[test]
    fn oids_print_dotted() {
        assert_eq!(oid_text(OID_RSA_PSS), "1.2.840.113549.1.1.10");
        assert_eq!(oid_text(OID_ED25519), "1.3.101.112");
    }

    /// Both PKCS#8 forms of an Ed25519 key load: v1 (RFC 8410, 48 bytes: eBay's published
    /// keys, the fake's createSigningKey, `openssl genpkey`) and v2 (RFC 5958, the public key
    /// appended, 83 bytes), and sign alike.
    #[test]
    fn ed25519_keys_load_in_pkcs8_v1_and_v2() {
        let v2 = Ed25519KeyPair::generate_pkcs8(&SystemRandom::new()).unwrap();
        // v1 from v2: version 0, the algorithm and the 32-byte private key, without the public key.
        let mut v1 = vec![0x30, 0x2E, 0x02, 0x01, 0x00];
        v1.extend_from_slice(&v2.as_ref()[5..48]);
        assert_eq!((v1.len(), v2.as_ref().len()), (48, 83));
        let a = PrivateKey::from_pkcs8(&v1).unwrap();
        let b = PrivateKey::from_pkcs8(v2.as_ref()).unwrap();
        assert_eq!(a.sign(b"base").unwrap(), b.sign(b"base").unwrap());
    }

    #[test]
    fn bad_der_is_refused_without_panicking() {
        for der in [
            &[][..],
            &[0x30],
            &[0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF],
            &[0x30, 0x03, 0x02, 0x01, 0x00],
            &[0x30, 0x05, 0x02, 0x01, 0x07, 0x30, 0x00],
        ] {
            assert!(PrivateKey::from_pkcs8(der).is_err());
        }
    }
}
