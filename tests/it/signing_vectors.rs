//! eBay's request signatures as a pure function (`marketplace_client::signing`), checked
//! against the vectors eBay publishes in its Node.js signature SDK and its signature verifier
//! (tests/fixtures/signatures, with their provenance): five signed requests, the headers byte
//! for byte, Ed25519 and RSA (eBay's PSS-labelled RSA sample key, signing with PKCS#1 v1.5),
//! and keys that must be refused.

use marketplace_client::signing::{SigningError, SigningKey};
use serde_json::Value;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/signatures");

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{DIR}/{name}")).expect("fixture")
}

fn json(name: &str) -> Value {
    serde_json::from_str(&fixture(name)).expect("fixture JSON")
}

fn ed25519_pem() -> String {
    json("ed25519-vector.json")["privateKey"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// Signs the vector's request with `key` and checks the four headers against `expected`.
fn check_vector(key: &SigningKey, vector: &Value) {
    let request = &vector["request"];
    let headers = key
        .headers(
            request["method"].as_str().unwrap(),
            request["url"].as_str().unwrap(),
            Some(request["body"].as_str().unwrap().as_bytes()),
            vector["created"].as_u64().unwrap(),
        )
        .expect("signed");
    let expected = vector["expected"].as_object().unwrap();
    assert_eq!(headers.len(), 4);
    assert_eq!(
        headers.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(),
        [
            "x-ebay-signature-key",
            "Content-Digest",
            "Signature-Input",
            "Signature"
        ]
    );
    for (name, value) in &headers {
        assert_eq!(
            Some(value.as_str()),
            expected[name].as_str(),
            "header {name} of the {} vector",
            vector["cipher"]
        );
    }
}

#[test]
fn the_published_ed25519_vector_reproduces_every_header_byte_for_byte() {
    let vector = json("ed25519-vector.json");
    let key = SigningKey::from_pem(&ed25519_pem(), vector["jwe"].as_str().unwrap()).unwrap();
    assert_eq!(key.cipher(), "ED25519");
    check_vector(&key, &vector);
}

#[test]
fn the_sdks_and_verifiers_vectors_reproduce_too_ed25519_and_rsa_pkcs1() {
    let file = json("validation-vectors.json");
    let vectors = file["vectors"].as_array().unwrap();
    assert_eq!(vectors.len(), 4);
    for vector in vectors {
        let pem = match vector["privateKeyFrom"].as_str().unwrap() {
            "ed25519-vector.json" => ed25519_pem(),
            file => fixture(file),
        };
        let key = SigningKey::from_pem(&pem, vector["jwe"].as_str().unwrap()).unwrap();
        assert_eq!(key.cipher(), vector["cipher"].as_str().unwrap());
        check_vector(&key, vector);
    }
}

#[test]
fn ebays_pss_labelled_rsa_key_loads_and_signs_with_pkcs1_v1_5() {
    let pem = fixture("rsa-pss-labelled-private.pem");
    // The PKCS#8 wrapper names RSASSA-PSS (1.2.840.113549.1.1.10): `MAsGCSqGSIb3DQEBCg`.
    assert!(pem.contains("MIIEvgIBADALBgkqhkiG9w0BAQoEggSq"));
    let key = SigningKey::from_pem(&pem, "jwe").unwrap();
    assert_eq!(key.cipher(), "RSA");
    let sign = || {
        key.headers(
            "GET",
            "https://apiz.ebay.com/sell/finances/v1/payout",
            None,
            1,
        )
        .unwrap()
    };
    // PKCS#1 v1.5 is deterministic (PSS is not): the same request signs the same twice.
    assert_eq!(sign(), sign());
    let signature = &sign()[2].1;
    assert_eq!(signature.len(), "sig1=::".len() + 344, "{signature}"); // 256 bytes, base64
}

#[test]
fn the_same_key_as_base64_der_and_with_crlf_line_ends_signs_the_same() {
    let vector = json("ed25519-vector.json");
    let jwe = vector["jwe"].as_str().unwrap();
    let pem = ed25519_pem();
    let der: String = pem
        .lines()
        .filter(|l| !l.starts_with("-----"))
        .collect::<Vec<_>>()
        .concat();
    let from_der = SigningKey::from_der_base64(&der, jwe).unwrap();
    let from_crlf = SigningKey::from_pem(&pem.replace('\n', "\r\n"), jwe).unwrap();
    for key in [from_der, from_crlf] {
        check_vector(&key, &vector);
    }
}

#[test]
fn without_a_body_there_is_no_content_digest_and_the_query_is_not_signed() {
    let vector = json("ed25519-vector.json");
    let key = SigningKey::from_pem(&ed25519_pem(), vector["jwe"].as_str().unwrap()).unwrap();
    let plain = key
        .headers("GET", "https://localhost:8080/test", None, 1663459378)
        .unwrap();
    let with_query = key
        .headers(
            "GET",
            "https://localhost:8080/test?limit=20&offset=0",
            Some(b""),
            1663459378,
        )
        .unwrap();
    assert_eq!(plain, with_query);
    let names: Vec<&str> = plain.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["x-ebay-signature-key", "Signature-Input", "Signature"]
    );
    assert_eq!(
        plain[1].1,
        r#"sig1=("x-ebay-signature-key" "@method" "@path" "@authority");created=1663459378"#
    );
    // The default port is not part of @authority (the Host header leaves it out too).
    let default_port = key
        .headers("GET", "https://localhost:443/test", None, 1663459378)
        .unwrap();
    let no_port = key
        .headers("GET", "https://localhost/test", None, 1663459378)
        .unwrap();
    assert_eq!(default_port, no_port);
    assert_ne!(plain, no_port);
}

#[test]
fn the_key_never_prints() {
    let key = SigningKey::from_pem(&ed25519_pem(), "jwe").unwrap();
    let debug = format!("{key:?}");
    assert_eq!(
        debug,
        r#"SigningKey { cipher: "ED25519", private_key: "[redacted]", .. }"#
    );
    let secret = "nZ+DYvh6SEqVTm50DFtMDoQikTmiCqirVv9mWG9qfSnF";
    let bad = SigningKey::from_pem(
        &format!("-----BEGIN PRIVATE KEY-----\n{secret}\n-----END PRIVATE KEY-----"),
        "jwe",
    )
    .unwrap_err();
    assert!(!bad.to_string().contains(secret), "{bad}");
}

#[test]
fn unusable_keys_and_requests_are_typed_errors() {
    let pem = ed25519_pem();
    let key_error = |r: Result<SigningKey, SigningError>| match r {
        Err(SigningError::Key(message)) => message,
        other => panic!("expected a key error, got {other:?}"),
    };
    assert!(key_error(SigningKey::from_pem("not a key", "jwe")).contains("no PEM block"));
    assert!(
        key_error(SigningKey::from_pem(
            &pem.replace("PRIVATE KEY", "ENCRYPTED PRIVATE KEY"),
            "jwe"
        ))
        .contains("encrypted")
    );
    assert!(
        key_error(SigningKey::from_pem(&fixture("rsa-public.pem"), "jwe")).contains("PUBLIC KEY")
    );
    assert!(key_error(SigningKey::from_pem(&pem, "a\nb")).contains("JWE"));
    assert!(key_error(SigningKey::from_pem(&pem, "")).contains("JWE"));
    assert!(key_error(SigningKey::from_der_base64("%%%", "jwe")).contains("base64"));
    // A P-256 key (PKCS#8, id-ecPublicKey): neither Ed25519 nor RSA.
    let p256 = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg+2mfUEpti0o25S/K\
                vyeyGWsqnwvpeWMWVh51aP0KqQyhRANCAAT9iibjqM+WgIgC6RcgA5phR5e9qc44\
                wc8f2xR5mT8y3VWN1AHZ0/VGbaN94l3n/WqDXTcxPvYCSe0I6N9ecHb6";
    assert!(key_error(SigningKey::from_der_base64(p256, "jwe")).contains("1.2.840.10045.2.1"));

    let key = SigningKey::from_pem(&pem, "jwe").unwrap();
    for (method, url) in [("post", "https://h/x"), ("GET", "/x"), ("GET", "ftp://h/x")] {
        assert!(matches!(
            key.headers(method, url, None, 1),
            Err(SigningError::Request(_))
        ));
    }
}
