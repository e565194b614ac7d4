//! The cost of eBay's request signature, against preparing the same request unsigned.
//!
//! - `unsigned`: an issueRefund request prepared as the client prepares it: the
//!   `ApiRequest` (path segments, JSON body serialized, marketplace) and the HTTP request with
//!   its headers (reqwest's request, built, not sent).
//! - `signed_ed25519`, `signed_rsa2048`: the same, plus the four signature headers
//!   (`SigningKey::headers`: the body's SHA-256, the base, the signature) added to it.
//! - `headers_ed25519`, `headers_rsa2048`: `SigningKey::headers` alone.
//!
//! Keys: eBay's Node.js SDK's sample keys (tests/fixtures/signatures). Goal: Ed25519 signing
//! under 50 µs. Run with `cargo bench --bench signing`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use marketplace_client::Marketplace;
use marketplace_client::api::ApiRequest;
use marketplace_client::signing::SigningKey;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/signatures");
const BASE: &str = "https://api.ebay.com";
const TOKEN: &str = "Bearer v^1.1#i^1#p^3#r^1#I^3#f^0#t^H4sIAAAAAAAAAOVYe2wURRjv9a5toFRjQQGDyWaRQGqu3d273busvTNbWmjpk7tyYAs";

fn keys() -> (SigningKey, SigningKey) {
    let read = |name: &str| std::fs::read_to_string(format!("{DIR}/{name}")).expect("fixture");
    let vector: serde_json::Value = serde_json::from_str(&read("ed25519-vector.json")).unwrap();
    let jwe = vector["jwe"].as_str().unwrap();
    let ed25519 = SigningKey::from_pem(vector["privateKey"].as_str().unwrap(), jwe).unwrap();
    let rsa = SigningKey::from_pem(&read("rsa-pss-labelled-private.pem"), jwe).unwrap();
    (ed25519, rsa)
}

/// The request as the client prepares it, unsigned.
fn prepare(http: &reqwest::blocking::Client) -> (reqwest::blocking::Request, String) {
    let refund = serde_json::json!({
        "reasonForRefund": "BUYER_CANCEL",
        "comment": "Sold out",
        "orderLevelRefundAmount": {"value": "17.95", "currency": "GBP"}
    });
    let request = ApiRequest::post_segments([
        "sell",
        "fulfillment",
        "v1",
        "order",
        "12-34567-89012",
        "issue_refund",
    ])
    .json(&refund)
    .marketplace(Marketplace::Gb)
    .operation("issueRefund");
    let url = format!("{BASE}{}", request.path());
    let body = serde_json::to_vec(&refund).unwrap();
    let built = http
        .post(&url)
        .header("Authorization", TOKEN)
        .header("X-EBAY-C-MARKETPLACE-ID", Marketplace::Gb.marketplace_id())
        .header("Accept-Language", "en-GB")
        .header("Accept", "application/json")
        .header("Accept-Encoding", "gzip")
        .header("Content-Type", "application/json")
        .body(body)
        .build()
        .unwrap();
    (built, url)
}

fn signed(http: &reqwest::blocking::Client, key: &SigningKey) -> reqwest::blocking::Request {
    let (mut request, url) = prepare(http);
    let body = request
        .body()
        .and_then(|b| b.as_bytes())
        .map(<[u8]>::to_vec);
    for (name, value) in key
        .headers("POST", &url, body.as_deref(), 1_700_000_000)
        .unwrap()
    {
        request.headers_mut().insert(
            reqwest::header::HeaderName::from_bytes(name.as_bytes()).unwrap(),
            reqwest::header::HeaderValue::from_str(&value).unwrap(),
        );
    }
    request
}

fn bench(c: &mut Criterion) {
    let (ed25519, rsa) = keys();
    fake_marketplace::install_crypto_provider();
    let http = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    let body = br#"{"reasonForRefund":"BUYER_CANCEL","comment":"Sold out","orderLevelRefundAmount":{"value":"17.95","currency":"GBP"}}"#;
    let url = "https://api.ebay.com/sell/fulfillment/v1/order/12-34567-89012/issue_refund";
    let mut group = c.benchmark_group("signing");
    group.bench_function("unsigned", |b| b.iter(|| black_box(prepare(&http))));
    group.bench_function("signed_ed25519", |b| {
        b.iter(|| black_box(signed(&http, &ed25519)))
    });
    group.bench_function("signed_rsa2048", |b| {
        b.iter(|| black_box(signed(&http, &rsa)))
    });
    group.bench_function("headers_ed25519", |b| {
        b.iter(|| black_box(ed25519.headers("POST", url, Some(body), 1_700_000_000)))
    });
    group.bench_function("headers_rsa2048", |b| {
        b.iter(|| black_box(rsa.headers("POST", url, Some(body), 1_700_000_000)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
