//! The shared token cache against its baseline, in the same run: a token handed out by the
//! in-process cache (the providers' own) and one read from PostgreSQL on loopback
//! ([`PgTokenCache`], a fresh row), then the time for 8 processes x 32 tasks to all hold a
//! token after expiry.
//!
//! `cargo bench -p marketplace-client-postgres --bench shared_cache` (criterion's estimates,
//! then p50/p99 of individually timed calls). Needs PostgreSQL as the tests do: the server
//! at `DATABASE_URL`, or a throwaway one from the binaries on the machine.

#[path = "../tests/support/mod.rs"]
mod support;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use criterion::Criterion;
use fake_marketplace::FakeMarketplace;
use marketplace_client::aio::oauth::{
    AccessTokenSource, ApplicationTokenProvider, BoxFuture, OAuthError, TokenResponse,
};
use marketplace_client::oauth::{ScopeSet, SharedTokenRequest};
use marketplace_client_postgres::{PgTokenCache, migrate};
use support::fleet::{Worker, application_key, client, is_worker, keyring, seed_expired, worker};
use support::pg::TestDb;

/// Calls timed one by one for the percentiles.
const SAMPLES: usize = 2_000;
/// Rounds of the fleet.
const ROUNDS: usize = 10;

fn main() {
    if is_worker() {
        let _ = worker::main();
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let db = runtime.block_on(async {
        let db = TestDb::new().await;
        migrate(&db.pool).await.expect("migrate");
        db
    });
    let fake = FakeMarketplace::new();

    // The baseline: a provider's own cache, warm.
    let local = ApplicationTokenProvider::new(client(&fake));
    runtime.block_on(local.access_token()).expect("a token");

    // The shared cache with a fresh token: every call is one read of PostgreSQL.
    let shared = PgTokenCache::new(db.pool.clone(), keyring());
    let endpoints = client(&fake).endpoints().clone();
    let request = SharedTokenRequest {
        environment: SharedTokenRequest::environment_of(&endpoints),
        client_id: fake.client_id().to_owned(),
        account: None,
        scopes: ScopeSet::new([endpoints.default_scope()]),
        rejected: None,
        refresh_margin: Duration::from_secs(300),
        retry_backoff: Duration::from_secs(30),
    };
    let fetcher = client(&fake);
    let fetches = AtomicUsize::new(0);
    let fetch = || -> BoxFuture<'_, Result<TokenResponse, OAuthError>> {
        fetches.fetch_add(1, Ordering::Relaxed);
        Box::pin(fetcher.client_credentials(&request.scopes))
    };
    runtime
        .block_on(shared.token(&request, &fetch))
        .expect("the first token is fetched and shared");

    let mut criterion = Criterion::default()
        .configure_from_args()
        .measurement_time(Duration::from_secs(5));
    let mut group = criterion.benchmark_group("token_hit");
    group.bench_function("in_process_cache", |b| {
        b.iter(|| runtime.block_on(local.access_token()).unwrap())
    });
    group.bench_function("shared_cache_postgres_loopback", |b| {
        b.iter(|| runtime.block_on(shared.token(&request, &fetch)).unwrap())
    });
    group.finish();

    let local_times = timed(SAMPLES, || {
        runtime.block_on(local.access_token()).unwrap();
    });
    let shared_times = timed(SAMPLES, || {
        runtime.block_on(shared.token(&request, &fetch)).unwrap();
    });
    assert_eq!(
        fetches.load(Ordering::Relaxed),
        1,
        "every hit was answered from the database"
    );
    report("in-process cache hit", &local_times, None);
    report(
        "shared cache hit (PostgreSQL, loopback)",
        &shared_times,
        Some(&local_times),
    );

    // The fleet: 8 processes x 32 tasks at expiry, from the start signal to the last token.
    let key = application_key(&fake);
    let mut rounds = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        runtime.block_on(seed_expired(&db, &key));
        fake.clear_requests();
        let mut workers: Vec<Worker> = (0..8)
            .map(|_| Worker::start(&db, &fake, 32, Duration::from_secs(10)))
            .collect();
        workers.iter_mut().for_each(Worker::wait_ready);
        let started = Instant::now();
        workers.iter_mut().for_each(Worker::go);
        let answers: Vec<String> = workers.into_iter().flat_map(Worker::finish).collect();
        rounds.push(started.elapsed());
        assert_eq!(answers.len(), 256);
        assert!(
            answers.iter().all(|a| a.starts_with("token ")),
            "{answers:?}"
        );
        assert_eq!(fake.token_requests().len(), 1, "one request per round");
    }
    report(
        "8 processes x 32 tasks, all holding a token after expiry",
        &rounds,
        None,
    );
}

/// `n` timings of `call`, sorted.
fn timed(n: usize, mut call: impl FnMut()) -> Vec<Duration> {
    let mut times: Vec<Duration> = (0..n)
        .map(|_| {
            let started = Instant::now();
            call();
            started.elapsed()
        })
        .collect();
    times.sort_unstable();
    times
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn report(what: &str, sorted: &[Duration], baseline: Option<&[Duration]>) {
    let mut sorted = sorted.to_vec();
    sorted.sort_unstable();
    let (p50, p99) = (percentile(&sorted, 0.50), percentile(&sorted, 0.99));
    let ratio = baseline
        .map(|b| {
            let b50 = percentile(b, 0.50).as_secs_f64();
            format!(" ({:.1}x the in-process p50)", p50.as_secs_f64() / b50)
        })
        .unwrap_or_default();
    println!(
        "{what}: p50 {:.1} µs, p99 {:.1} µs over {} samples{ratio}",
        p50.as_secs_f64() * 1e6,
        p99.as_secs_f64() * 1e6,
        sorted.len()
    );
}
