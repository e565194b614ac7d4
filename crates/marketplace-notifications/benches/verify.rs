//! Verification of one Marketplace Account Deletion notification with its key at hand (the
//! key cache's hit), against, in the same run, the parse of its `X-EBAY-SIGNATURE` header
//! alone (base64, JSON, DER): the baseline. Goal: a verification under 200 µs.
//!
//! The parts, to see what dominates: SHA-1 of the body, the ECDSA P-256 verification by
//! RustCrypto's `p256` (the crate's only path: header parse, SHA-1, verify, by hand), and the
//! key's parse from getPublicKey's PEM (paid once per `kid` and hour by the cache, not per
//! notification).
//!
//! Run with `cargo bench -p marketplace-notifications --bench verify -- --warm-up-time 1 --measurement-time 3`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use marketplace_notifications::{PublicKey, SignatureHeader, encode_header, verify};
use p256::ecdsa::signature::hazmat::{PrehashSigner as _, PrehashVerifier as _};
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
    let der = signature.to_der();
    let header = encode_header("a3c7b1e2f4d5", der.as_bytes());
    assert!(verify(&header, BODY.as_bytes(), &key).is_ok());

    let mut group = c.benchmark_group("notification");
    group.bench_function("baseline: header parse (base64, JSON, DER)", |b| {
        b.iter(|| SignatureHeader::parse(black_box(&header)).unwrap())
    });
    group.bench_function("verify with a cached key", |b| {
        b.iter(|| verify(black_box(&header), black_box(BODY.as_bytes()), &key).unwrap())
    });
    group.bench_function("part: SHA-1 of the body", |b| {
        b.iter(|| Sha1::digest(black_box(BODY.as_bytes())))
    });
    group.bench_function(
        "part: header parse, SHA-1, RustCrypto p256 verify, by hand",
        |b| {
            b.iter(|| {
                let parsed = SignatureHeader::parse(black_box(&header)).unwrap();
                let _ = parsed.kid();
                let digest = Sha1::digest(black_box(BODY.as_bytes()));
                key.verifying_key()
                    .verify_prehash(&digest, &signature)
                    .unwrap()
            })
        },
    );
    group.bench_function("once per kid: PublicKey::from_pem", |b| {
        b.iter(|| PublicKey::from_pem(black_box(&pem)).unwrap())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
