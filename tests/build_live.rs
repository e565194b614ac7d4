//! The build script's "fetch once at build time", end to end: a crate that uses `category!` is
//! built with credentials pointing at the fake marketplace, which serves a US tree with a leaf
//! the committed snapshot lacks.
//!
//! - live: the new leaf compiles and the program sees it;
//! - `TAXONOMY_OFFLINE=1`: the committed snapshot is used, so the new leaf is a compile error;
//! - the fake down: the build succeeds from the snapshot and prints a warning;
//! - `live` on taxonomy-data only: the macro's build of taxonomy-data follows (build
//!   dependencies share features), so the new leaf still compiles from the cached download.
//!
//! What happens when the two builds do see different trees is pinned by the trybuild case
//! `tests/ui/fail_fingerprint_mismatch.rs`.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use fake_marketplace::{FakeConfig, FakeMarketplace};
use marketplaces::Marketplace;
use taxonomy_tree::tree::Category;

const NEW_LEAF: u32 = 999_001;

const MAIN_RS: &str = r#"
use taxonomy_macros::category;

fn main() {
    #[cfg(feature = "de_leaf")]
    let _ = category!(EBAY_DE, "9355");
    #[cfg(feature = "new_leaf")]
    let leaf = category!("999001");
    #[cfg(not(feature = "new_leaf"))]
    let leaf = category!("9355");
    println!("{} {} | {}", leaf.id(), leaf.path(), taxonomy_data::Site::Us.tree_version());
}
"#;

fn write_probe(dir: &Path) {
    let root = common::root();
    let manifest = format!(
        r#"[package]
name = "live-build-probe"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
taxonomy-data = {{ path = {data:?}, features = ["live"] }}
taxonomy-macros = {{ path = {macros:?} }}

[features]
new_leaf = []
de_leaf = []
macros_live = ["taxonomy-macros/live"]

[workspace]
"#,
        data = root.join("taxonomy-data").display().to_string(),
        macros = root.join("taxonomy-macros").display().to_string(),
    );
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(dir.join("src/main.rs"), MAIN_RS).unwrap();
    // The workspace's lock file pins every version, so the probe builds without the network.
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
}

fn cargo_build(
    dir: &Path,
    base_url: &str,
    fake: &FakeMarketplace,
    extra: &[(&str, &str)],
    features: &[&str],
) -> Output {
    let mut command = Command::new(env!("CARGO"));
    command
        .current_dir(dir)
        .args(["build", "--offline"])
        .args(features.iter().flat_map(|f| ["--features", f]))
        // One target directory for every run of this test: the HTTP stack is compiled once.
        .env(
            "CARGO_TARGET_DIR",
            common::root().join("target/live-build-probe"),
        )
        .env_remove("TAXONOMY_OFFLINE")
        .env_remove("TAXONOMY_SITES")
        .env_remove("TAXONOMY_SNAPSHOTS_DIR")
        .env_remove("MARKETPLACE_ACCESS_TOKEN")
        .env_remove("MARKETPLACE_CONFIG")
        .env_remove("MARKETPLACE_ENV")
        .env_remove("RUSTFLAGS")
        .env("MARKETPLACE_BASE_URL", base_url)
        .env("MARKETPLACE_AUTH_URL", base_url)
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret());
    for (name, value) in extra {
        command.env(name, value);
    }
    command.output().unwrap()
}

fn run_probe() -> String {
    let exe = common::root().join("target/live-build-probe/debug/live-build-probe");
    let out = Command::new(exe).output().unwrap();
    assert!(out.status.success());
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn the_build_uses_the_live_tree_and_falls_back_to_the_snapshot() {
    let fake = FakeMarketplace::start(FakeConfig::default()).unwrap();
    let mut tree = common::committed(Marketplace::Us);
    tree.categories.push(Category {
        id: NEW_LEAF,
        name: "Foldable Phones".into(),
        parent: Some(15032),
        leaf: true,
        children: vec![],
    });
    tree.categories.sort_by_key(|c| c.id);
    for c in &mut tree.categories {
        if c.id == 15032 {
            c.children.push(NEW_LEAF);
        }
    }
    tree.meta.version = "135-live".into();
    fake.set_tree(Marketplace::Us, tree);

    let probe = tempfile::tempdir().unwrap();
    write_probe(probe.path());

    // Live: the new leaf compiles, and the program's tables have it.
    let out = cargo_build(
        probe.path(),
        &fake.base_url(),
        &fake,
        &[],
        &["new_leaf", "macros_live"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "live build failed:\n{stderr}");
    assert_eq!(
        run_probe().trim(),
        "999001 Cell Phones & Accessories > Foldable Phones | 135-live"
    );
    assert!(stderr.contains("using the live tree"), "{stderr}");
    // Two builds of taxonomy-data (the macro's and the program's), one download.
    assert_eq!(fake.token_requests().len(), 1, "one application token");
    let tree_requests = fake
        .requests()
        .iter()
        .filter(|r| {
            r.path.contains("category_tree") && !r.path.ends_with("/get_expired_categories")
        })
        .count();
    assert_eq!(tree_requests, 4, "one tree request per site");
    // And one getExpiredCategories request per site, the mapping compiled in with the tree.
    let expired_requests = fake
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/get_expired_categories"))
        .count();
    assert_eq!(
        expired_requests, 4,
        "one expired-categories request per site"
    );

    // `live` on the data only: both builds still use the (cached) live tree.
    let out = cargo_build(probe.path(), &fake.base_url(), &fake, &[], &["new_leaf"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(run_probe().starts_with("999001 "));
    assert_eq!(
        fake.token_requests().len(),
        1,
        "the cached download is reused"
    );

    // TAXONOMY_OFFLINE=1: the committed snapshot, which lacks the leaf.
    let out = cargo_build(
        probe.path(),
        &fake.base_url(),
        &fake,
        &[("TAXONOMY_OFFLINE", "1")],
        &["new_leaf", "macros_live"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "the offline build should reject the new leaf"
    );
    assert!(
        stderr.contains("EBAY_US has no category 999001"),
        "{stderr}"
    );
    assert_eq!(fake.token_requests().len(), 1, "no request when offline");

    // The service down: the build succeeds from the snapshot, with a warning.
    let down = {
        let gone = FakeMarketplace::start(FakeConfig::default()).unwrap();
        gone.base_url()
    };
    let out = cargo_build(probe.path(), &down, &fake, &[], &["macros_live"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "the build must not fail because the network did:\n{stderr}"
    );
    assert!(stderr.contains("warning"), "{stderr}");
    assert!(stderr.contains("using the committed snapshot"), "{stderr}");
    assert_eq!(
        run_probe().trim(),
        "9355 Cell Phones & Accessories > Cell Phones & Smartphones | 134"
    );

    // One site broken on the service: that site falls back for both builds of taxonomy-data
    // (the failure is recorded for the other build), the others are live, the build succeeds.
    let half = FakeMarketplace::start(FakeConfig::default()).unwrap();
    half.set_tree_body(
        Marketplace::Us,
        b"{\"categoryTreeId\": \"0\", \"rootCat".to_vec(),
    );
    let out = cargo_build(probe.path(), &half.base_url(), &half, &[], &["macros_live"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("EBAY_US: the live tree could not be used"),
        "{stderr}"
    );
    assert!(
        run_probe().trim().ends_with("| 134"),
        "US from the snapshot"
    );
    assert_eq!(
        half.token_requests().len(),
        1,
        "one download for both builds"
    );
}

#[test]
fn the_site_filter_leaves_sites_out_and_refuses_unknown_ones() {
    let fake = FakeMarketplace::start(FakeConfig::default()).unwrap();
    let probe = tempfile::tempdir().unwrap();
    write_probe(probe.path());
    let offline_us = [("TAXONOMY_OFFLINE", "1"), ("TAXONOMY_SITES", "EBAY_US")];
    // Only the US compiled in: a German category is a compile error that says why.
    let out = cargo_build(
        probe.path(),
        &fake.base_url(),
        &fake,
        &offline_us,
        &["de_leaf"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(
            "EBAY_DE is not compiled into this build of taxonomy-data: add it to TAXONOMY_SITES"
        ),
        "{stderr}"
    );
    // The US alone builds and runs.
    let out = cargo_build(probe.path(), &fake.base_url(), &fake, &offline_us, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A filter naming no known site fails the build with what is accepted.
    let bad = [
        ("TAXONOMY_OFFLINE", "1"),
        ("TAXONOMY_SITES", "EBAY_US,EBAY_FR"),
    ];
    let out = cargo_build(probe.path(), &fake.base_url(), &fake, &bad, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("\"EBAY_FR\" is not a known site. Accepted:"),
        "{stderr}"
    );
    assert!(
        fake.token_requests().is_empty(),
        "offline builds ask nothing"
    );
}
