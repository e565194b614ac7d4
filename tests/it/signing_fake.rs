//! Signed calls against the fake marketplace over loopback: a key created with
//! createSigningKey signs Finances and issueRefund calls that the fake verifies (Ed25519 and
//! RSA, eBay's PSS-labelled RSA sample key too); an unsigned call and a wrong key come back as
//! typed signature errors; a retry is signed again with a new `created`; eBay's published
//! vector, sent through `ApiClient` with the clock fixed, arrives with exactly the expected
//! headers. Blocking and async fronts.

use crate::taxonomy_support as support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fake_marketplace::signatures::{PAYOUTS_PATH, SIGNING_KEY_PATH, TRANSACTIONS_PATH};
use fake_marketplace::{FakeConfig, FakeMarketplace, Fault, Response};
use marketplace_client::api::{ApiClient, ApiError, ApiRequest, ClientConfig};
use marketplace_client::signing::SigningKey;
use marketplace_client::test_util::{Clock, ManualClock, RecordingSleeper};
use serde_json::{Value, json};
use support::{fake, seller_tokens, tokens};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/signatures");

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{DIR}/{name}")).expect("fixture")
}

fn client(fake: &FakeMarketplace) -> ApiClient {
    let config = ClientConfig::for_base_url(&fake.base_url())
        .expect("loopback base URL")
        .with_backoff(Duration::from_millis(1), Duration::from_millis(8));
    // A seller's user token: the Finances API and issueRefund need their scopes.
    ApiClient::new(config, seller_tokens(fake))
        .expect("client")
        .with_sleeper(Arc::new(RecordingSleeper::default()))
}

/// createSigningKey, as an application calls it once (its private key would be saved here).
fn create_key(api: &ApiClient, cipher: &str) -> SigningKey {
    let created = api.create_signing_key(cipher).expect("createSigningKey");
    assert_eq!(created.info.cipher, cipher);
    assert!(!format!("{created:?}").contains(created.private_key()));
    created
        .signing_key()
        .expect("the key eBay's API returned loads")
}

/// An order of the fake's seller on eBay UK (17.95 GBP), whose issueRefund needs a signature.
fn gb_order(fake: &FakeMarketplace) -> String {
    let listing = fake
        .add_listing_on("EBAY_GB", "fake_seller", "SIGNED-1", 10, "17.95")
        .expect("a listing on EBAY_GB");
    fake.buy(&listing, 1).expect("bought")
}

fn refund_request(order_id: &str) -> ApiRequest {
    ApiRequest::post_segments([
        "sell",
        "fulfillment",
        "v1",
        "order",
        order_id,
        "issue_refund",
    ])
    .json(
        &json!({"reasonForRefund": "BUYER_CANCEL", "orderLevelRefundAmount":
        {"value": "17.95", "currency": "GBP"}}),
    )
    .operation("issueRefund")
}

fn refund_path(order_id: &str) -> String {
    format!("/sell/fulfillment/v1/order/{order_id}/issue_refund")
}

#[test]
fn keys_from_create_signing_key_sign_finances_and_refund_calls_that_verify() {
    let fake = fake();
    let api = client(&fake);
    let mut order = String::new();
    for cipher in ["ED25519", "RSA"] {
        order = gb_order(&fake);
        let signed = client(&fake).with_signing_key(create_key(&api, cipher));
        for path in [TRANSACTIONS_PATH, PAYOUTS_PATH] {
            let answer = signed
                .send(ApiRequest::get(path).query("limit", "20"))
                .expect(path);
            assert_eq!(answer.status(), 200, "{cipher} {path}");
        }
        let refund: Value = signed
            .send(refund_request(&order))
            .expect("issueRefund")
            .json()
            .unwrap();
        assert_eq!(refund["refundStatus"], "PENDING");
    }
    // What arrived: the four headers on the refund (it has a body), three on the GETs.
    let refund = fake.requests_to(&refund_path(&order)).pop().unwrap();
    assert!(
        refund
            .header("Content-Digest")
            .unwrap()
            .starts_with("sha-256=:")
    );
    assert!(refund.header("Signature-Input").unwrap().starts_with(
        r#"sig1=("content-digest" "x-ebay-signature-key" "@method" "@path" "@authority");created="#
    ));
    let payout = fake.requests_to(PAYOUTS_PATH).pop().unwrap();
    assert_eq!(payout.header("Content-Digest"), None);
    assert!(
        payout
            .header("x-ebay-signature-key")
            .unwrap()
            .starts_with("FAKE.")
    );
    // getSigningKeys lists both keys (without their private keys), getSigningKey each.
    let keys = api.signing_keys().unwrap();
    assert_eq!(
        keys.iter().map(|k| k.cipher.as_str()).collect::<Vec<_>>(),
        ["ED25519", "RSA"]
    );
    for key in &keys {
        assert_eq!(&api.signing_key(&key.signing_key_id).unwrap(), key);
    }
    let raw: Value = api
        .send(ApiRequest::get(SIGNING_KEY_PATH))
        .unwrap()
        .json()
        .unwrap();
    assert!(
        raw["signingKeys"]
            .as_array()
            .unwrap()
            .iter()
            .all(|k| k.get("privateKey").is_none())
    );
}

#[test]
fn an_unsigned_finances_call_is_a_typed_215001_that_says_what_to_do() {
    let fake = fake();
    let error = client(&fake)
        .send(ApiRequest::get(TRANSACTIONS_PATH))
        .unwrap_err();
    assert!(
        matches!(error, ApiError::Signature { status: 400, .. }),
        "{error:?}"
    );
    assert_eq!(error.error_id(), Some(215001));
    assert!(!error.is_retryable());
    let message = error.to_string();
    assert!(message.contains("createSigningKey"), "{message}");
    assert!(message.contains("with_signing_key"), "{message}");
    assert_eq!(fake.requests_to(TRANSACTIONS_PATH).len(), 1, "not retried");
}

#[test]
fn a_private_key_that_is_not_the_one_of_its_jwe_is_a_typed_215120_naming_the_causes() {
    let fake = fake();
    let api = client(&fake);
    let registered = create_key(&api, "ED25519");
    // eBay's Node.js SDK's sample Ed25519 key with the first key's JWE.
    let vector: Value = serde_json::from_str(&fixture("ed25519-vector.json")).unwrap();
    let mismatched =
        SigningKey::from_pem(vector["privateKey"].as_str().unwrap(), registered.jwe()).unwrap();
    let error = client(&fake)
        .with_signing_key(mismatched)
        .send(refund_request(&gb_order(&fake)))
        .unwrap_err();
    assert!(matches!(error, ApiError::Signature { .. }), "{error:?}");
    assert_eq!(error.error_id(), Some(215120));
    let message = error.to_string();
    for cause in ["clock", "JWE", "proxy"] {
        assert!(message.contains(cause), "{cause} in {message}");
    }
    // The error names no key material.
    assert!(
        !message.contains(
            vector["privateKey"]
                .as_str()
                .unwrap()
                .lines()
                .nth(1)
                .unwrap()
        )
    );
}

/// A wall clock one second later at each reading.
#[derive(Debug)]
struct TickingClock(AtomicU64);

impl Clock for TickingClock {
    fn now(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(self.0.fetch_add(1, Ordering::SeqCst))
    }
}

#[test]
fn a_retried_call_is_signed_again_with_a_new_created() {
    let fake = fake();
    let key = create_key(&client(&fake), "ED25519");
    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let clock = Arc::new(TickingClock(AtomicU64::new(start)));
    let signed = client(&fake).with_signing_key(key).with_clock(clock);
    let order = gb_order(&fake);
    fake.fail_next(
        &refund_path(&order),
        Fault::Status {
            status: 500,
            body: String::new(),
            headers: vec![],
        },
    );
    let answer = signed
        .send(refund_request(&order))
        .expect("the retry verifies");
    assert_eq!(answer.status(), 200);
    let sent = fake.requests_to(&refund_path(&order));
    assert_eq!(sent.len(), 2);
    let input = |i: usize| sent[i].header("Signature-Input").unwrap().to_owned();
    assert!(
        input(0).ends_with(&format!(";created={start}")),
        "{}",
        input(0)
    );
    assert!(
        input(1).ends_with(&format!(";created={}", start + 1)),
        "{}",
        input(1)
    );
    assert_ne!(sent[0].header("Signature"), sent[1].header("Signature"));
    assert_eq!(
        fake.answers_to(&refund_path(&order))
            .iter()
            .map(|a| a.status)
            .collect::<Vec<_>>(),
        [500, 200]
    );
}

#[test]
fn ebays_pss_labelled_rsa_sample_key_signs_calls_the_fake_verifies() {
    let fake = fake();
    let jwe = fake.register_signing_key(&fixture("rsa-public.pem"), None);
    let key = SigningKey::from_pem(&fixture("rsa-pss-labelled-private.pem"), jwe).unwrap();
    assert_eq!(key.cipher(), "RSA");
    let signed = client(&fake).with_signing_key(key);
    let refund: Value = signed
        .send(refund_request(&gb_order(&fake)))
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(refund["refundStatus"], "PENDING");
    assert_eq!(
        signed.send(ApiRequest::get(PAYOUTS_PATH)).unwrap().status(),
        200
    );
}

#[test]
fn a_body_changed_after_signing_is_refused_215122() {
    // A route that checks the signature of what it received, behind a "proxy" (this route)
    // that re-encodes the JSON before checking: the Content-Digest no longer matches.
    let fake = fake();
    let key = create_key(&client(&fake), "ED25519");
    fake.route("POST", "/test/rewritten", |req, state| {
        let mut rewritten = req.clone();
        let value: Value = serde_json::from_slice(&req.body).unwrap();
        rewritten.body = serde_json::to_vec_pretty(&value).unwrap();
        match state.check_signature(&rewritten) {
            Ok(()) => Response::json(200, &json!({})),
            Err(refused) => refused,
        }
    });
    let error = client(&fake)
        .with_signing_key(key)
        .send(ApiRequest::post("/test/rewritten").json(&json!({"a": 1})))
        .unwrap_err();
    assert_eq!(error.error_id(), Some(215122), "{error}");
    assert!(error.to_string().contains("rewrote the body"), "{error}");
}

#[test]
fn the_published_vector_sent_through_api_client_arrives_with_exactly_the_expected_headers() {
    let vector: Value = serde_json::from_str(&fixture("ed25519-vector.json")).unwrap();
    // The vector's @authority is localhost:8080: the fake listens there, the client asks
    // `http://localhost:8080` (the scheme is not signed).
    let fake = start_on_8080();
    let jwe = vector["jwe"].as_str().unwrap();
    fake.register_signing_key(vector["publicKey"].as_str().unwrap(), Some(jwe));
    fake.route("POST", "/test", |req, state| {
        match state.check_signature(req) {
            Ok(()) => Response::json(200, &json!({"verified": true})),
            Err(refused) => refused,
        }
    });
    let created = vector["created"].as_u64().unwrap();
    let clock = Arc::new(ManualClock::new(UNIX_EPOCH + Duration::from_secs(created)));
    let key = SigningKey::from_pem(vector["privateKey"].as_str().unwrap(), jwe).unwrap();
    let api = ApiClient::new(
        ClientConfig::for_base_url("http://localhost:8080").unwrap(),
        tokens(&fake),
    )
    .unwrap()
    .with_signing_key(key)
    .with_clock(clock);
    let body = vector["request"]["body"].as_str().unwrap();
    let answer = api
        .send(ApiRequest::post("/test").json_bytes(body.as_bytes().to_vec()))
        .expect("verified by the fake");
    assert_eq!(answer.json::<Value>().unwrap()["verified"], true);
    let sent = fake.requests_to("/test").pop().unwrap();
    assert_eq!(sent.header("Host"), Some("localhost:8080"));
    assert_eq!(sent.body, body.as_bytes());
    for (name, value) in vector["expected"].as_object().unwrap() {
        assert_eq!(sent.header(name), value.as_str(), "{name}");
    }
}

/// The fake on 127.0.0.1:8080 (the vector's authority), waiting a little if another test
/// process holds the port.
fn start_on_8080() -> FakeMarketplace {
    let mut last = None;
    for _ in 0..50 {
        match FakeMarketplace::start_on(8080, FakeConfig::default()) {
            Ok(fake) => return fake,
            Err(e) => last = Some(e),
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    panic!("port 8080 (the vector's authority) stays busy: {last:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_async_client_signs_each_attempt_and_types_the_refusal() {
    use marketplace_client::aio::api::{ApiClient, ApiError, ApiRequest, ClientConfig};
    let fake = FakeMarketplace::new();
    // A seller's user token: getPayouts needs the scope sell.finances.
    let tokens = support::aio_seller_tokens(&fake).await;
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_backoff(Duration::from_millis(1), Duration::from_millis(8));
    let unsigned = ApiClient::new(config.clone(), tokens.clone()).unwrap();
    let created = unsigned.create_signing_key("ED25519").await.unwrap();
    let listed = unsigned.signing_keys().await.unwrap();
    assert_eq!(listed, std::slice::from_ref(&created.info));
    let got = unsigned
        .signing_key(&created.info.signing_key_id)
        .await
        .unwrap();
    assert_eq!(got, created.info);
    let key = created.signing_key().unwrap();

    let error = unsigned
        .send(ApiRequest::get(PAYOUTS_PATH))
        .await
        .unwrap_err();
    assert!(matches!(error, ApiError::Signature { .. }), "{error:?}");
    assert_eq!(error.error_id(), Some(215001));

    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let signed = ApiClient::new(config, tokens)
        .unwrap()
        .with_signing_key(key)
        .with_clock(Arc::new(TickingClock(AtomicU64::new(start))));
    fake.fail_next(
        PAYOUTS_PATH,
        Fault::Status {
            status: 503,
            body: String::new(),
            headers: vec![],
        },
    );
    let answer = signed.send(ApiRequest::get(PAYOUTS_PATH)).await.unwrap();
    assert_eq!(answer.status(), 200);
    let sent = fake.requests_to(PAYOUTS_PATH);
    let created: Vec<&str> = sent[1..]
        .iter()
        .map(|r| {
            r.header("Signature-Input")
                .unwrap()
                .rsplit('=')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(created, [start.to_string(), (start + 1).to_string()]);
}

/// `bytes` as a PEM of `label`: base64 in lines of 64.
fn pem(label: &str, bytes: &[u8]) -> String {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD.encode(bytes);
    let lines: Vec<&str> = b64
        .as_bytes()
        .chunks(64)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    format!(
        "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
        lines.join("\n")
    )
}

/// `openssl pkey` over `args`, its standard output (the command must succeed).
fn openssl(args: &[&str]) -> Vec<u8> {
    let out = std::process::Command::new("openssl")
        .args(args)
        .output()
        .expect("the openssl command (.ci/run installs it)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// createSigningKey's keys load in a second implementation, OpenSSL 3 (what Node's crypto and
/// Python's `cryptography` are built on), as DER and as PEM, and the public key OpenSSL derives
/// from the private one is the `publicKey` answered. Its Ed25519 key is the 48-byte PKCS#8 v1
/// form eBay publishes (`MC4CAQAw…`), not the 83-byte v2 (`MFECAQEw…`), which OpenSSL 3.0
/// refuses.
#[test]
fn create_signing_key_keys_load_in_openssl_as_der_and_pem() {
    use base64::Engine as _;
    let b64 = base64::engine::general_purpose::STANDARD;
    let fake = fake();
    let token = tokens(&fake).access_token().unwrap();
    let dir = tempfile::tempdir().unwrap();
    for cipher in ["ED25519", "RSA"] {
        let answer: Value = reqwest::blocking::Client::builder()
            .no_proxy()
            .build()
            .unwrap()
            .post(format!("{}{SIGNING_KEY_PATH}", fake.base_url()))
            .bearer_auth(token.secret())
            .json(&json!({"signingKeyCipher": cipher}))
            .send()
            .unwrap()
            .json()
            .unwrap();
        let private = b64
            .decode(answer["privateKey"].as_str().expect("privateKey"))
            .unwrap();
        let public = b64
            .decode(answer["publicKey"].as_str().expect("publicKey"))
            .unwrap();
        if cipher == "ED25519" {
            assert_eq!(private.len(), 48, "PKCS#8 v1: {private:02x?}");
            assert!(
                answer["privateKey"]
                    .as_str()
                    .unwrap()
                    .starts_with("MC4CAQAw")
            );
        }
        let der = dir.path().join(format!("{cipher}.der"));
        let pem_file = dir.path().join(format!("{cipher}.pem"));
        std::fs::write(&der, &private).unwrap();
        std::fs::write(&pem_file, pem("PRIVATE KEY", &private)).unwrap();
        let from_der = openssl(&[
            "pkey",
            "-inform",
            "DER",
            "-in",
            der.to_str().unwrap(),
            "-pubout",
            "-outform",
            "DER",
        ]);
        let from_pem = openssl(&[
            "pkey",
            "-in",
            pem_file.to_str().unwrap(),
            "-pubout",
            "-outform",
            "DER",
        ]);
        assert_eq!(
            from_der, public,
            "{cipher}: OpenSSL's public key of the DER"
        );
        assert_eq!(
            from_pem, public,
            "{cipher}: OpenSSL's public key of the PEM"
        );
    }
}

/// The Finances API needs `https://api.ebay.com/oauth/api_scope/sell.finances`, which a seller
/// grants at the consent page: a token without it (here an application token, which cannot
/// have it) gets eBay's insufficient-scope answer, before the signature is looked at.
#[test]
fn a_finances_call_without_the_sell_finances_scope_is_ebays_insufficient_scope_403() {
    let fake = fake();
    let config = ClientConfig::for_base_url(&fake.base_url()).unwrap();
    let application = ApiClient::new(config, tokens(&fake)).unwrap();
    let key = create_key(&application, "ED25519");
    let error = application
        .with_signing_key(key)
        .send(ApiRequest::get(PAYOUTS_PATH))
        .unwrap_err();
    assert_eq!(error.status(), Some(403), "{error:?}");
    assert_eq!(error.error_id(), Some(1100), "{error:?}");
    let answered = fake.answers_to(PAYOUTS_PATH);
    assert_eq!(answered.last().map(|a| a.status), Some(403));
    let body: Value = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(format!("{}{TRANSACTIONS_PATH}", fake.base_url()))
        .bearer_auth(tokens(&fake).access_token().unwrap().secret())
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(
        body,
        json!({"errors": [{"errorId": 1100, "domain": "ACCESS", "category": "REQUEST",
            "message": "Access denied",
            "longMessage": "Insufficient permissions to fulfill the request."}]})
    );
    // A seller who consented to sell.finances: the same signed call is answered.
    let key = create_key(&client(&fake), "ED25519");
    let seller = client(&fake).with_signing_key(key);
    assert_eq!(
        seller.send(ApiRequest::get(PAYOUTS_PATH)).unwrap().status(),
        200
    );
}
