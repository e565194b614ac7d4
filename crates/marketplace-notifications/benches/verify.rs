//! Verification of one Marketplace Account Deletion notification with its key at hand (the
//! key cache's hit), against, in the same run, the parse of its `X-EBAY-SIGNATURE` header
//! alone (base64, JSON, DER): the baseline. Goal: a verification under 200 µs.
//!
//! Run with `cargo bench -p marketplace-notifications --bench verify`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use marketplace_notifications::{PublicKey, SignatureHeader, encode_header, verify};
use p256::ecdsa::signature::hazmat::PrehashSigner as _;
use p256::ecdsa::{Signature, SigningKey};
use p256::pkcs8::{EncodePublicKey as _, LineEnding};
use sha1::{Digest as _, Sha1};

const BODY: &str = r#"{"metadata":{"topic":"MARKETPLACE_ACCOUNT_DELETION","schemaVersion":"1.0","deprecated":false},"notification":{"notificationId":"49feeaeb-4982-42d9-a377-9645b8479411_33f7e043-fed8-442b-9d44-791923bd9a6d","eventDate":"2021-03-19T20:43:59.462Z","publishDate":"2021-03-19T20:43:59.679Z","publishAttemptCount":1,"data":{"username":"test_user","userId":"ma8vp1jySJC","eiasToken":"nY+sHZ2PrBmdj6wVnY+sEZ2PrA2dj6wJnY+gAZGEpwmdj6x9nY+seQ=="}}}"#;

fn bench(c: &mut Criterion) {
    let signing = SigningKey::random(&mut rand_core::OsRng);
    let pem: String = signing
        .verifying_key()
        .to_public_key_pem(LineEnding::LF)
        .unwrap()
        .lines()
        .collect();
    let key = PublicKey::from_pem(&pem).unwrap();
    let signature: Signature = signing.sign_prehash(&Sha1::digest(BODY)).unwrap();
    let header = encode_header("a3c7b1e2f4d5", signature.to_der().as_bytes());
    assert!(verify(&header, BODY.as_bytes(), &key).is_ok());

    let mut group = c.benchmark_group("notification");
    group.bench_function("baseline: header parse (base64, JSON, DER)", |b| {
        b.iter(|| SignatureHeader::parse(black_box(&header)).unwrap())
    });
    group.bench_function("verify with a cached key", |b| {
        b.iter(|| verify(black_box(&header), black_box(BODY.as_bytes()), &key).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
