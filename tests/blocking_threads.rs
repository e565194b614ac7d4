//! The blocking clients run on a runtime the library owns (shared by the clients alive at
//! once): once the last client is dropped, on whatever thread, that runtime is shut down and
//! its threads are gone. Counted from /proc/self/task (Linux), in each of the five contexts of
//! tests/it/blocking_in_runtime.rs. One test in this file, so no other test's threads come and go
//! meanwhile.

#[path = "common/oauth.rs"]
mod oauth_support;
#[path = "common/taxonomy.rs"]
mod taxonomy_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use fake_marketplace::FakeMarketplace;
use marketplace_client::oauth::{AccessTokenSource, ApplicationTokenProvider, OAuthClient};
use marketplace_client::taxonomy::TaxonomyClient;
use marketplaces::Marketplace;

/// The names of this process's threads (truncated to 15 bytes by the kernel).
fn threads() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .map(|name| name.trim_end().to_owned())
        .collect()
}

/// The library's runtime threads: its worker (`marketplace-client`) and tokio's blocking
/// pool threads it started (named after the runtime too).
fn library_threads() -> usize {
    threads()
        .iter()
        .filter(|name| name.starts_with("marketplace-cli"))
        .count()
}

/// Waits (up to 10 s: a runtime shut down from a runtime's thread ends its threads
/// asynchronously, and the fake's connection threads end once their connection is closed)
/// until the process has at most `baseline` threads and none of the library's.
fn settled(baseline: usize) -> (usize, usize) {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (all, library) = (threads().len(), library_threads());
        if (all <= baseline && library == 0) || Instant::now() > deadline {
            return (all, library);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn multi_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

/// Creates, calls and drops every blocking client; the tree id and whether the library's
/// runtime ran meanwhile.
fn create_call_drop(fake: &FakeMarketplace) -> (u32, bool) {
    let oauth = OAuthClient::from_config(&oauth_support::oauth_config(fake)).unwrap();
    let provider = Arc::new(ApplicationTokenProvider::new(oauth));
    provider.access_token().unwrap();
    let client = TaxonomyClient::new(taxonomy_support::config(fake), provider.clone()).unwrap();
    let tree = client
        .default_tree_id(Marketplace::Gb.marketplace_id())
        .unwrap();
    let running = library_threads() > 0;
    drop((client, provider));
    (tree.tree_id, running)
}

#[test]
fn dropping_the_last_client_stops_the_runtime_in_every_context() {
    let fake = Arc::new(FakeMarketplace::new());
    let baseline = threads().len();
    type Context = fn(Arc<FakeMarketplace>) -> (u32, bool);
    let contexts: [(&str, Context); 5] = [
        ("plain thread", |fake| {
            std::thread::spawn(move || create_call_drop(&fake))
                .join()
                .unwrap()
        }),
        ("task of a multi-thread runtime", |fake| {
            let runtime = multi_thread();
            runtime
                .block_on(runtime.spawn(async move { create_call_drop(&fake) }))
                .unwrap()
        }),
        ("block_on of a multi-thread runtime", |fake| {
            multi_thread().block_on(async move { create_call_drop(&fake) })
        }),
        ("block_on of a current-thread runtime", |fake| {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .build()
                .unwrap();
            runtime.block_on(async move { create_call_drop(&fake) })
        }),
        ("spawn_blocking", |fake| {
            let runtime = multi_thread();
            runtime
                .block_on(runtime.spawn_blocking(move || create_call_drop(&fake)))
                .unwrap()
        }),
    ];
    for (name, context) in contexts {
        let (tree, running) = context(fake.clone());
        assert_eq!(tree, Marketplace::Gb.tree_id(), "{name}");
        assert!(running, "{name}: the library's runtime ran the calls");
        let (all, library) = settled(baseline);
        assert_eq!(library, 0, "{name}: the library's threads are gone");
        assert!(
            all <= baseline,
            "{name}: {all} threads after the clients were dropped, {baseline} before: {:?}",
            threads()
        );
    }
}
