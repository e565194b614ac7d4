//! The snapshot pipeline, against baselines measured in the same run:
//!
//! - `us_tree`: decode + validate (+ generate) the US get-category-tree response (4.3 MB)
//!   against `serde_json::from_slice` into a `serde_json::Value` of the same bytes;
//! - `refresh`: the four sites fetched concurrently from the fake marketplace, each answering
//!   after a random 2–5 s as the real service does, against one fetch that takes the slowest
//!   5 s. Target: at most 1.3× that.
//! - `refresh_versions_first`: what `snapshot refresh` does (getDefaultCategoryTreeId for
//!   every site, then download only the trees whose version changed), once with every tree
//!   changed (all four downloaded, 2–5 s each) and once with none changed (four small
//!   version answers, nothing downloaded). Target: none changed at most 0.1× all changed.
//!
//! Run with `cargo bench --bench pipeline`.

use std::hint::black_box;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fake_marketplace::{FakeConfig, FakeMarketplace};
use marketplace_client::oauth::{ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig};
use marketplace_client::taxonomy::{ClientConfig, TaxonomyClient};
use marketplace_client::trees;
use marketplaces::Marketplace;
use taxonomy_codegen::codegen::{self, SiteData};
use taxonomy_tree::decode::{Provenance, decode_tree};
use taxonomy_tree::tree::TreeMeta;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn us_response() -> Vec<u8> {
    let file = std::fs::File::open(root().join("tests/fixtures/trees/0.json.gz")).unwrap();
    let mut body = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut body)
        .unwrap();
    body
}

fn provenance() -> Provenance {
    Provenance {
        language: "en-US".into(),
        taken_at: "2026-01-02".into(),
        source: "bench".into(),
        note: None,
    }
}

fn us_tree(c: &mut Criterion) {
    let body = us_response();
    let mut g = c.benchmark_group("us_tree");
    g.throughput(Throughput::Bytes(body.len() as u64));
    g.sample_size(20);
    g.bench_function("serde_json_value", |b| {
        b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(&body)).unwrap())
    });
    g.bench_function("decode_validate", |b| {
        b.iter(|| decode_tree(black_box(&body), &provenance()).unwrap())
    });
    g.bench_function("decode_validate_generate", |b| {
        b.iter(|| {
            let tree = decode_tree(black_box(&body), &provenance()).unwrap();
            codegen::generate(&[SiteData {
                site: Marketplace::Us,
                tree: Some(&tree),
                expired: &[],
            }])
            .unwrap()
        })
    });
    g.finish();
}

fn client_for(fake: &FakeMarketplace) -> TaxonomyClient {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let config = OAuthConfig::new(endpoints.clone())
        .with_credentials(fake.client_id(), fake.client_secret());
    let oauth = OAuthClient::from_config(&config).unwrap();
    let tokens = Arc::new(ApplicationTokenProvider::new(oauth));
    TaxonomyClient::new(ClientConfig::from_endpoints(&endpoints), tokens).unwrap()
}

fn refresh_four_sites(c: &mut Criterion) {
    let fake = FakeMarketplace::start(FakeConfig::default()).unwrap();
    let client = client_for(&fake);
    let snapshots = root().join("snapshots");
    let mut g = c.benchmark_group("refresh");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(60));
    g.warm_up_time(Duration::from_secs(1));
    g.bench_function("slowest_single_fetch_5s", |b| {
        fake.set_tree_delay(Some((Duration::from_secs(5), Duration::from_secs(5))));
        b.iter(|| {
            let body = client.fetch_tree_body(Marketplace::Us, None).unwrap();
            decode_tree(&body.bytes, &provenance()).unwrap()
        })
    });
    let sites = taxonomy_tree::snapshot::sites_in(&snapshots);
    g.bench_function("four_sites_concurrently_2_to_5s", |b| {
        fake.set_tree_delay(Some((Duration::from_secs(2), Duration::from_secs(5))));
        b.iter(|| {
            let results = trees::fetch_and_prepare(&client, &sites, None, &snapshots, &|_, _| {});
            assert!(results.iter().all(Result::is_ok));
            results
        })
    });
    g.finish();
}

/// `snapshot refresh`'s two steps: ask every site's version, then download and prepare the
/// trees that changed. Returns how many trees were downloaded.
fn refresh_versions_first(
    client: &TaxonomyClient,
    held: &[(Marketplace, Option<TreeMeta>)],
    dir: &std::path::Path,
) -> usize {
    let changed: Vec<Marketplace> = trees::check_versions(client, held, None)
        .into_iter()
        .map(Result::unwrap)
        .filter(|check| check.stale.is_some())
        .map(|check| check.site)
        .collect();
    let prepared = trees::fetch_and_prepare(client, &changed, None, dir, &|_, _| {});
    assert!(prepared.iter().all(Result::is_ok));
    prepared.len()
}

fn refresh_only_changed_trees(c: &mut Criterion) {
    let fake = FakeMarketplace::start(FakeConfig {
        tree_delay: Some((Duration::from_secs(2), Duration::from_secs(5))),
        ..FakeConfig::default()
    })
    .unwrap();
    let client = client_for(&fake);
    let snapshots = root().join("snapshots");
    // The trees held: the committed snapshots' headers, each counted as a complete copy of
    // its version (the AU file is cut to four levels, which would always count as stale).
    let current: Vec<(Marketplace, Option<TreeMeta>)> =
        taxonomy_tree::snapshot::sites_in(&snapshots)
            .into_iter()
            .map(|site| {
                let mut meta = taxonomy_tree::snapshot::read_site(site, &snapshots)
                    .unwrap()
                    .meta;
                meta.complete = true;
                (site, Some(meta))
            })
            .collect();
    // The same, a version behind the service.
    let behind: Vec<(Marketplace, Option<TreeMeta>)> = current
        .iter()
        .map(|(site, meta)| {
            let mut meta = meta.clone();
            if let Some(meta) = &mut meta {
                meta.version = format!("{}-old", meta.version);
            }
            (*site, meta)
        })
        .collect();
    let mut g = c.benchmark_group("refresh_versions_first");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(60));
    g.warm_up_time(Duration::from_secs(1));
    g.bench_function("every_tree_changed_2_to_5s", |b| {
        b.iter(|| {
            assert_eq!(
                refresh_versions_first(&client, &behind, &snapshots),
                behind.len()
            )
        })
    });
    g.measurement_time(Duration::from_secs(5));
    g.bench_function("no_tree_changed", |b| {
        b.iter(|| assert_eq!(refresh_versions_first(&client, &current, &snapshots), 0))
    });
    g.finish();
}

criterion_group!(
    benches,
    us_tree,
    refresh_four_sites,
    refresh_only_changed_trees
);
criterion_main!(benches);
