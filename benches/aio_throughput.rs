//! Throughput of the async front against the blocking client, latency-bound: the fake on
//! loopback answers getCategorySuggestions after 10 ms (a small fixed body, so the fake's
//! own ranking does not eat the CPU), and each iteration makes 64 calls.
//!
//! - `blocking_sequential_64`: the blocking `TaxonomyClient`, 64 calls one after another
//!   (about 64 × 10 ms).
//! - `aio_concurrent_64`: the `aio` `TaxonomyClient` shared by 64 tasks in flight at once on
//!   a multi-thread runtime built once (about 10 ms plus the overhead).
//!
//! Tokens are fetched before measuring. The goal is a ratio (blocking time / aio time) of at
//! least 20; 64 is the latency-bound ideal. Run with `cargo bench --bench aio_throughput`.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use fake_marketplace::{FakeMarketplace, Response};
use marketplace_client::Marketplace;

const CALLS: usize = 64;
const DELAY: Duration = Duration::from_millis(10);

/// A fake whose getCategorySuggestions answers one suggestion after [`DELAY`].
fn slow_fake() -> FakeMarketplace {
    let fake = FakeMarketplace::new();
    fake.route(
        "GET",
        "/commerce/taxonomy/v1/category_tree/{id}/get_category_suggestions",
        |request, state| {
            if let Err(denied) = state.check_bearer(request) {
                return denied;
            }
            std::thread::sleep(DELAY);
            Response::json(
                200,
                &serde_json::json!({
                    "categoryTreeId": "0",
                    "categoryTreeVersion": "130",
                    "categorySuggestions": [{
                        "category": {"categoryId": "9355", "categoryName": "Cell Phones & Smartphones"},
                        "categoryTreeNodeAncestors": [{
                            "categoryId": "15032",
                            "categoryName": "Cell Phones & Accessories",
                            "categoryTreeNodeLevel": 1
                        }],
                        "categoryTreeNodeLevel": 2,
                        "relevancy": "100"
                    }]
                }),
            )
        },
    );
    fake
}

fn blocking_client(fake: &FakeMarketplace) -> marketplace_client::taxonomy::TaxonomyClient {
    use marketplace_client::oauth::{
        ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
    };
    use marketplace_client::taxonomy::{ClientConfig, TaxonomyClient};
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let config =
        OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret());
    let tokens = Arc::new(ApplicationTokenProvider::new(
        OAuthClient::from_config(&config).unwrap(),
    ));
    TaxonomyClient::new(
        ClientConfig::for_base_url(&fake.base_url()).unwrap(),
        tokens,
    )
    .unwrap()
}

fn aio_client(fake: &FakeMarketplace) -> Arc<marketplace_client::aio::taxonomy::TaxonomyClient> {
    use marketplace_client::aio::oauth::{
        ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
    };
    use marketplace_client::aio::taxonomy::{ClientConfig, TaxonomyClient};
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let config =
        OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret());
    let tokens = Arc::new(ApplicationTokenProvider::new(
        OAuthClient::from_config(&config).unwrap(),
    ));
    Arc::new(
        TaxonomyClient::new(
            ClientConfig::for_base_url(&fake.base_url()).unwrap(),
            tokens,
        )
        .unwrap(),
    )
}

fn throughput(c: &mut Criterion) {
    let fake = slow_fake();
    let blocking = blocking_client(&fake);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let aio = runtime.block_on(async { aio_client(&fake) });
    // Tokens warmed (and the answer checked) before measuring.
    let warm = blocking
        .category_suggestions(Marketplace::Us, "iphone")
        .unwrap();
    assert_eq!(warm.suggestions.len(), 1);
    let warm = runtime
        .block_on(aio.category_suggestions(Marketplace::Us, "iphone"))
        .unwrap();
    assert_eq!(warm.suggestions.len(), 1);

    let mut g = c.benchmark_group("suggestions_10ms");
    g.sample_size(10)
        .sampling_mode(SamplingMode::Flat)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    g.bench_function("blocking_sequential_64", |b| {
        b.iter(|| {
            for _ in 0..CALLS {
                black_box(
                    blocking
                        .category_suggestions(Marketplace::Us, "iphone")
                        .unwrap(),
                );
            }
            fake.clear_requests();
        })
    });
    g.bench_function("aio_concurrent_64", |b| {
        b.iter(|| {
            runtime.block_on(async {
                let mut tasks = tokio::task::JoinSet::new();
                for _ in 0..CALLS {
                    let aio = aio.clone();
                    tasks.spawn(async move {
                        aio.category_suggestions(Marketplace::Us, "iphone").await
                    });
                }
                while let Some(answer) = tasks.join_next().await {
                    black_box(answer.unwrap().unwrap());
                }
            });
            fake.clear_requests();
        })
    });
    g.finish();
    assert_eq!(
        fake.token_requests().len(),
        0,
        "no token request while measuring"
    );
}

criterion_group!(benches, throughput);
criterion_main!(benches);
