//! `verify` and `PublicKey::from_pem` with a key pair generated here: what verifies, what
//! does not and why, and that no header or body makes them panic.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use marketplace_notifications::{
    PublicKey, SignatureHeader, SignedForm, VerifyError, encode_header, verify,
};
use p256::ecdsa::SigningKey;
use p256::ecdsa::signature::hazmat::PrehashSigner as _;
use p256::pkcs8::{EncodePublicKey as _, LineEnding};
use sha1::{Digest as _, Sha1};

const BODY: &str = r#"{"metadata":{"topic":"MARKETPLACE_ACCOUNT_DELETION","schemaVersion":"1.0","deprecated":false},"notification":{"notificationId":"n-1","eventDate":"2021-03-19T20:43:59.462Z","publishDate":"2021-03-19T20:43:59.679Z","publishAttemptCount":1,"data":{"username":"test_user","userId":"ma8vp1jySJC","eiasToken":"nY+sHZ2PrBmdj6wVnY+sEZ2PrA2dj6wJnY+gAZGEpwmdj6x9nY+seQ=="}}}"#;

struct Pair {
    signing: SigningKey,
    pem: String,
}

fn pair() -> Pair {
    let signing = SigningKey::random(&mut rand_core::OsRng);
    let pem = signing
        .verifying_key()
        .to_public_key_pem(LineEnding::LF)
        .unwrap();
    Pair { signing, pem }
}

/// The DER signature (as Java's SHA1withECDSA gives it) of `message`.
fn sign(key: &SigningKey, message: &[u8]) -> Vec<u8> {
    let signature: p256::ecdsa::Signature = key.sign_prehash(&Sha1::digest(message)).unwrap();
    signature.to_der().as_bytes().to_vec()
}

fn header(pair: &Pair, message: &[u8]) -> String {
    encode_header("kid-1", &sign(&pair.signing, message))
}

/// The PEM as getPublicKey's `key` has it: no line breaks.
fn one_line(pem: &str) -> String {
    pem.lines().collect::<String>()
}

#[test]
fn a_signed_body_verifies_with_the_pem_with_or_without_line_breaks() {
    let pair = pair();
    assert!(pair.pem.contains('\n'));
    let header = header(&pair, BODY.as_bytes());
    for pem in [
        pair.pem.clone(),
        one_line(&pair.pem),
        pair.pem.replace('\n', "\r\n"),
    ] {
        let key = PublicKey::from_pem(&pem).unwrap();
        assert_eq!(
            verify(&header, BODY.as_bytes(), &key),
            Ok(SignedForm::RawBody),
            "{pem}"
        );
    }
    assert_eq!(SignatureHeader::parse(&header).unwrap().kid(), "kid-1");
}

#[test]
fn the_compact_reserialisation_is_accepted_as_ebays_sdks_verify_it() {
    let pair = pair();
    let key = PublicKey::from_pem(&pair.pem).unwrap();
    // Signed over the compact form, received pretty-printed.
    let header = header(&pair, BODY.as_bytes());
    let pretty =
        serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(BODY).unwrap())
            .unwrap();
    // (serde_json's Value sorts keys; re-indent the original instead to keep its order.)
    let pretty_in_order = BODY.replace(",\"", ",\n  \"").replace(":{", ": {");
    assert_ne!(pretty_in_order, BODY);
    assert_eq!(
        verify(&header, pretty_in_order.as_bytes(), &key),
        Ok(SignedForm::Compact)
    );
    // Keys in another order are another message.
    assert!(matches!(
        verify(&header, pretty.as_bytes(), &key),
        Err(VerifyError::BadSignature { .. })
    ));
}

#[test]
fn a_tampered_body_or_signature_or_another_key_does_not_verify() {
    let pair = pair();
    let key = PublicKey::from_pem(&pair.pem).unwrap();
    let header = header(&pair, BODY.as_bytes());
    let tampered = BODY.replace("ma8vp1jySJC", "ma8vp1jySJD");
    let err = verify(&header, tampered.as_bytes(), &key).unwrap_err();
    assert_eq!(
        err,
        VerifyError::BadSignature {
            kid: "kid-1".into()
        }
    );
    assert!(!err.is_malformed());
    assert_eq!(
        err.to_string(),
        "the notification's signature does not verify with the public key of kid \"kid-1\""
    );
    // Another message's signature.
    let other = self::header(&pair, b"{}");
    assert!(matches!(
        verify(&other, BODY.as_bytes(), &key),
        Err(VerifyError::BadSignature { .. })
    ));
    // Another key.
    let stranger = PublicKey::from_pem(&self::pair().pem).unwrap();
    assert!(matches!(
        verify(&header, BODY.as_bytes(), &stranger),
        Err(VerifyError::BadSignature { .. })
    ));
}

fn header_json(json: &str) -> String {
    STANDARD.encode(json)
}

#[test]
fn malformed_headers_are_typed_errors_naming_what_is_wrong() {
    let pair = pair();
    let key = PublicKey::from_pem(&pair.pem).unwrap();
    let sig = STANDARD.encode(sign(&pair.signing, BODY.as_bytes()));
    let body = BODY.as_bytes();
    let cases: Vec<(String, VerifyError)> = vec![
        (String::new(), VerifyError::MissingHeader),
        ("   ".into(), VerifyError::MissingHeader),
        ("not base64!".into(), VerifyError::HeaderNotBase64),
        ("A".repeat(5000), VerifyError::HeaderTooLong { bytes: 5000 }),
        (
            header_json(&format!(
                r#"{{"alg":"rsa","kid":"k","signature":"{sig}","digest":"SHA1"}}"#
            )),
            VerifyError::UnknownAlgorithm { alg: "rsa".into() },
        ),
        (
            header_json(&format!(
                r#"{{"alg":"ecdsa","kid":"k","signature":"{sig}","digest":"SHA256"}}"#
            )),
            VerifyError::UnknownDigest {
                digest: "SHA256".into(),
            },
        ),
        (
            header_json(&format!(
                r#"{{"alg":"ecdsa","signature":"{sig}","digest":"SHA1"}}"#
            )),
            VerifyError::HeaderField { field: "kid" },
        ),
        (
            header_json(r#"{"alg":"ecdsa","kid":"k","digest":"SHA1"}"#),
            VerifyError::HeaderField { field: "signature" },
        ),
        (
            header_json(r#"{"alg":"ecdsa","kid":"k","signature":"AAAA","digest":"SHA1"}"#),
            VerifyError::MalformedSignature,
        ),
        (
            header_json(r#"{"alg":"ecdsa","kid":"k","signature":"%%","digest":"SHA1"}"#),
            VerifyError::MalformedSignature,
        ),
        (
            header_json(&format!(
                r#"{{"alg":"ecdsa","kid":"k","signature":"{}","digest":"SHA1"}}"#,
                STANDARD.encode([0u8; 64])
            )),
            VerifyError::MalformedSignature,
        ),
    ];
    for (header, expected) in cases {
        let err = verify(&header, body, &key).unwrap_err();
        assert_eq!(err, expected, "{header}");
        assert!(err.is_malformed(), "{err}");
    }
    for not_an_object in ["[1]", "\"x\"", "{\"alg\":"] {
        assert!(matches!(
            verify(&header_json(not_an_object), body, &key),
            Err(VerifyError::HeaderNotJson { .. })
        ));
    }
    // alg and digest without case; padding optional.
    let lower = header_json(&format!(
        r#"{{"alg":"ECDSA","kid":"k","signature":"{sig}","digest":"sha1"}}"#
    ));
    assert_eq!(
        verify(lower.trim_end_matches('='), body, &key),
        Ok(SignedForm::RawBody)
    );
    // A long alg is quoted shortened.
    let long = header_json(&format!(
        r#"{{"alg":"{}","kid":"k","signature":"{sig}","digest":"SHA1"}}"#,
        "x".repeat(500)
    ));
    let text = verify(&long, body, &key).unwrap_err().to_string();
    assert!(text.len() < 200, "{text}");
}

#[test]
fn keys_that_are_not_p256_pems_are_refused() {
    use marketplace_notifications::KeyError;
    let pem = pair().pem;
    assert_eq!(PublicKey::from_pem("").unwrap_err(), KeyError::NoBegin);
    assert_eq!(
        PublicKey::from_pem("-----BEGIN PUBLIC KEY-----AAAA").unwrap_err(),
        KeyError::NoEnd
    );
    assert_eq!(
        PublicKey::from_pem("-----BEGIN PUBLIC KEY-----%%-----END PUBLIC KEY-----").unwrap_err(),
        KeyError::NotBase64
    );
    assert_eq!(
        PublicKey::from_pem("-----BEGIN PUBLIC KEY-----AAAA-----END PUBLIC KEY-----").unwrap_err(),
        KeyError::NotP256
    );
    // One bit of the point changed: not on the curve.
    let mut der = STANDARD
        .decode(
            one_line(&pem)
                .replace("-----BEGIN PUBLIC KEY-----", "")
                .replace("-----END PUBLIC KEY-----", ""),
        )
        .unwrap();
    let last = der.len() - 1;
    der[last] ^= 1;
    assert_eq!(PublicKey::from_der(&der).unwrap_err(), KeyError::NotP256);
}

/// A small deterministic generator (xorshift64*), so a failure can be replayed by its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

/// Fuzz-like: random strings, random bytes decoded as headers, and single-byte mutations of
/// a valid header and body never panic, and a mutated body never verifies.
#[test]
fn arbitrary_headers_and_bodies_never_panic() {
    let pair = pair();
    let key = PublicKey::from_pem(&pair.pem).unwrap();
    let valid = header(&pair, BODY.as_bytes());
    let alphabet: Vec<char> =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=-_ {}\":,é\u{0}\n"
            .chars()
            .collect();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    // Debug builds verify slowly (~10 ms): 1000 headers, 250 mutated bodies.
    for round in 0..1000 {
        let header: String = match round % 4 {
            0 => (0..rng.below(400))
                .map(|_| alphabet[rng.below(alphabet.len())])
                .collect(),
            1 => {
                let bytes: Vec<u8> = (0..rng.below(300)).map(|_| rng.next() as u8).collect();
                STANDARD.encode(bytes)
            }
            2 => {
                let mut bytes = valid.clone().into_bytes();
                let i = rng.below(bytes.len());
                bytes[i] = alphabet[rng.below(64)] as u8;
                String::from_utf8(bytes).unwrap()
            }
            _ => {
                // A header whose JSON is mutated, then encoded again.
                let json = STANDARD.decode(&valid).unwrap();
                let mut json = json;
                let i = rng.below(json.len());
                json[i] = rng.next() as u8;
                STANDARD.encode(json)
            }
        };
        let _ = verify(&header, BODY.as_bytes(), &key);
        let _ = SignatureHeader::parse(&header);
        if round % 4 != 0 {
            continue;
        }
        let mut body = BODY.as_bytes().to_vec();
        let i = rng.below(body.len());
        let old = body[i];
        body[i] = rng.next() as u8;
        if body[i] != old {
            let result = verify(&valid, &body, &key);
            // A whitespace byte added where JSON ignores it re-serialises to the signed form.
            if !matches!(result, Ok(SignedForm::Compact)) {
                assert!(result.is_err(), "round {round}: a mutated body verified");
            }
        }
    }
}

/// A signer that does not normalise s (s or n - s), and one that sends the 64-byte r‖s form
/// rather than DER, are accepted alike; a changed body is not (RustCrypto's p256 verifies,
/// with or without the default features).
#[test]
fn high_s_and_fixed_size_signatures_verify_and_a_changed_body_does_not() {
    let pair = pair();
    let key = PublicKey::from_pem(&pair.pem).unwrap();
    let signature: p256::ecdsa::Signature = pair.signing.sign_prehash(&Sha1::digest(BODY)).unwrap();
    let low = signature.normalize_s().unwrap_or(signature);
    let s: p256::Scalar = *low.s().as_ref();
    let high = p256::ecdsa::Signature::from_scalars(low.r().to_bytes(), (-s).to_bytes()).unwrap();
    assert!(high.normalize_s().is_some(), "n - s is the high one");
    for (what, sig) in [
        ("low s, DER", low.to_der().as_bytes().to_vec()),
        ("high s, DER", high.to_der().as_bytes().to_vec()),
        ("low s, r‖s", low.to_bytes().to_vec()),
        ("high s, r‖s", high.to_bytes().to_vec()),
    ] {
        let header = encode_header("kid-1", &sig);
        assert_eq!(
            verify(&header, BODY.as_bytes(), &key),
            Ok(SignedForm::RawBody),
            "{what}"
        );
        let changed = BODY.replace("test_user", "test_usex");
        assert!(
            matches!(
                verify(&header, changed.as_bytes(), &key),
                Err(VerifyError::BadSignature { .. })
            ),
            "{what}"
        );
    }
}
