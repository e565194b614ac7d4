//! A call to the fake marketplace on a kept-alive connection against one on a new
//! connection, in the same run: getDefaultCategoryTreeId with an application token, through
//! reqwest's blocking client (what a test suite's clients do).
//!
//! - `kept_alive`: one client, whose pool keeps the connection between calls.
//! - `new_connection`: a client that keeps no idle connection, so each call connects anew.
//!
//! A kept-alive call must be no slower than a new connection's (issue 41: the fake wrote an
//! answer's head and body apart, and a reused connection waited for the client's delayed ACK,
//! ~40 ms a call against well under a millisecond). Before measuring, the bench compares the
//! medians of a few calls and fails if kept-alive is the slower. Run with
//! `cargo bench --bench fake_keep_alive`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use fake_marketplace::FakeMarketplace;

fn token(fake: &FakeMarketplace) -> String {
    let answer: serde_json::Value = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .post(format!("{}/identity/v1/oauth2/token", fake.base_url()))
        .basic_auth(fake.client_id(), Some(fake.client_secret()))
        .form(&[
            ("grant_type", "client_credentials"),
            ("scope", "https://api.ebay.com/oauth/api_scope"),
        ])
        .send()
        .expect("token endpoint")
        .json()
        .expect("a token answer");
    answer["access_token"].as_str().expect("a token").to_owned()
}

/// One getDefaultCategoryTreeId call with `client`.
fn call(client: &reqwest::blocking::Client, url: &str, token: &str) {
    let answer = client
        .get(url)
        .bearer_auth(token)
        .send()
        .expect("getDefaultCategoryTreeId");
    assert_eq!(answer.status().as_u16(), 200);
    black_box(answer.bytes().expect("a body"));
}

fn median_of(calls: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..calls)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[calls / 2]
}

fn keep_alive(c: &mut Criterion) {
    let fake = FakeMarketplace::new();
    let token = token(&fake);
    let url = format!(
        "{}/commerce/taxonomy/v1/get_default_category_tree_id?marketplace_id=EBAY_US",
        fake.base_url()
    );
    let pooled = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    let unpooled = reqwest::blocking::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .build()
        .unwrap();
    call(&pooled, &url, &token);

    let kept = median_of(30, || call(&pooled, &url, &token));
    let new = median_of(30, || call(&unpooled, &url, &token));
    eprintln!("median of 30 calls: kept-alive {kept:?}, new connection {new:?}");
    assert!(
        kept <= new + Duration::from_millis(1),
        "a call on a kept-alive connection ({kept:?}) is slower than one on a new connection ({new:?})"
    );

    let mut group = c.benchmark_group("fake_call");
    group.bench_function("kept_alive", |b| b.iter(|| call(&pooled, &url, &token)));
    group.bench_function("new_connection", |b| {
        b.iter(|| call(&unpooled, &url, &token))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(50).measurement_time(Duration::from_secs(3));
    targets = keep_alive
}
criterion_main!(benches);
