//! What a blocking call costs inside a tokio runtime: the same TaxonomyClient call
//! (getDefaultCategoryTreeId against the fake on loopback, no delay, token cached) on a plain
//! thread, and inside `block_on` of a current-thread and of a multi-thread runtime, where the
//! client does the call on a thread of its own (the "thread hop"). The difference between the
//! runtime cases and `plain_thread` is what the hop adds; the goal is under 100 µs.
//!
//! The loopback call's own noise can hide the hop, so `hop_alone` measures it by itself: a
//! call refused before any I/O (a marketplace id that cannot be sent in a header), which
//! inside a runtime is refused on the thread of its own all the same.
//!
//! Run with `cargo bench --bench blocking_in_runtime`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use fake_marketplace::FakeMarketplace;
use marketplace_client::oauth::{ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig};
use marketplace_client::taxonomy::{ClientConfig, TaxonomyClient};

fn client_for(fake: &FakeMarketplace) -> TaxonomyClient {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let config = OAuthConfig::new(endpoints.clone())
        .with_credentials(fake.client_id(), fake.client_secret());
    let oauth = OAuthClient::from_config(&config).unwrap();
    let tokens = Arc::new(ApplicationTokenProvider::new(oauth));
    TaxonomyClient::new(ClientConfig::from_endpoints(&endpoints), tokens).unwrap()
}

fn one_call(c: &mut Criterion) {
    let fake = FakeMarketplace::new();
    let client = client_for(&fake);
    // The token is fetched once, outside the measurement.
    client.default_tree_id("EBAY_GB").unwrap();
    let call = || black_box(client.default_tree_id("EBAY_GB").unwrap());

    let mut g = c.benchmark_group("default_tree_id");
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("plain_thread", |b| b.iter(call));
    let current = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    g.bench_function("block_on_current_thread", |b| {
        current.block_on(async { b.iter(call) })
    });
    let multi = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap();
    g.bench_function("block_on_multi_thread", |b| {
        multi.block_on(async { b.iter(call) })
    });
    g.finish();

    let refused = || black_box(client.default_tree_id("EBAY\nGB").unwrap_err());
    let mut g = c.benchmark_group("hop_alone");
    g.bench_function("plain_thread", |b| b.iter(refused));
    g.bench_function("block_on_current_thread", |b| {
        current.block_on(async { b.iter(refused) })
    });
    g.bench_function("block_on_multi_thread", |b| {
        multi.block_on(async { b.iter(refused) })
    });
    g.finish();
}

criterion_group!(benches, one_call);
criterion_main!(benches);
