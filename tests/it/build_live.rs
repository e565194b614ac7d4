//! The build script's "fetch once at build time", end to end: a crate that uses `category!` is
//! built with credentials pointing at the fake marketplace, which serves a US tree with a leaf
//! the committed snapshot lacks.
//!
//! - live: the new leaf compiles and the program sees it;
//! - `TAXONOMY_OFFLINE=1`: the committed snapshot is used, so the new leaf is a compile error;
//! - the fake down: the build succeeds from the snapshot and prints a warning;
//! - `live` on taxonomy-data only: the macro's build of taxonomy-data follows (build
//!   dependencies share features), so the new leaf still compiles from the cached download.
//! - the pinned category (US 179, whose committed pin is of the snapshot's version): the live
//!   tree's version's answer, fetched once for both builds, is what `aspects!` checks and the
//!   program's `LeafCategory::aspects` gives; without the service, the committed pin.
//!
//! - the cache: no secret in any file the builds write into the target directory, every file
//!   0600 and directory 0700,
//!   server text on one warning line, a hand-edited cached tree refused, the "differs from
//!   the snapshot" warning on every build, versions re-checked (getDefaultCategoryTreeId) and
//!   only changed trees downloaded.
//!
//! What happens when the two builds do see different trees is pinned by the trybuild case
//! `taxonomy-macros/tests/ui/fail_fingerprint_mismatch.rs`.

use crate::common;
use crate::oauth_support as oauth_common;

use std::path::Path;
use std::process::{Command, Output};

use fake_marketplace::taxonomy::{DEFAULT_TREE_ID_PATH, tree_path};
use fake_marketplace::{FakeConfig, FakeMarketplace};
use marketplace_client::oauth::ScopeSet;
use marketplaces::Marketplace;

const MAIN_RS: &str = r#"
use taxonomy_macros::category;

fn main() {
    #[cfg(feature = "de_leaf")]
    let _ = category!(EBAY_DE, "9355");
    #[cfg(feature = "new_leaf")]
    let leaf = category!("999001");
    #[cfg(not(feature = "new_leaf"))]
    let leaf = category!("9355");
    // The pinned category's rules compiled in: their tree version, and whether "Thin Client" (a
    // Type only the live answer allows) is among them.
    let rules = taxonomy_data::LeafCategory::new(taxonomy_data::Site::Us, 179)
        .ok()
        .and_then(|l| l.aspects());
    let mini = rules
        .and_then(|r| r.values_of("Type"))
        .is_some_and(|v| v.contains(&"Thin Client"));
    #[cfg(feature = "live_aspects")]
    let _ = taxonomy_macros::aspects!("179", { "Brand": "Dell", "Type": "Thin Client" });
    println!(
        "{} {} | {} | 179: {} {mini}",
        leaf.id(),
        leaf.path(),
        taxonomy_data::Site::Us.tree_version(),
        rules.map_or("none", |r| r.tree_version()),
    );
    // The US condition policies compiled in (getItemConditionPolicies): known, made up, and
    // how many of the leaves have one.
    let us = taxonomy_data::Site::Us;
    let with = us.leaves().filter(|l| l.conditions().is_some()).count();
    println!(
        "conditions: {} {} {with}/{}",
        us.has_condition_policies(),
        us.condition_policies_made_up(),
        us.leaves().count(),
    );
}
"#;

fn write_probe(dir: &Path) {
    common::write_outside_crate(
        dir,
        "live-build-probe",
        r#"[dependencies]
taxonomy-data = { path = {data}, features = ["live"] }
taxonomy-macros = { path = {macros} }

[features]
new_leaf = []
de_leaf = []
live_aspects = []
macros_live = ["taxonomy-macros/live"]
"#,
        MAIN_RS,
    );
}

fn cargo_build(
    dir: &Path,
    base_url: &str,
    fake: &FakeMarketplace,
    extra: &[(&str, &str)],
    features: &[&str],
) -> Output {
    let mut command = common::cargo_command();
    command
        .current_dir(dir)
        .args(["build", "--offline"])
        .args(common::outside_probes_profile())
        .args(features.iter().flat_map(|f| ["--features", f]))
        // One target directory for every run of this test, and the other projects outside the
        // workspace: the HTTP stack is compiled once.
        .env("CARGO_TARGET_DIR", common::outside_probes_target())
        .env("MARKETPLACE_BASE_URL", base_url)
        .env("MARKETPLACE_AUTH_URL", base_url)
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret());
    for (name, value) in extra {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// The probe's first line: the leaf, the US tree's version, the pinned category's rules.
fn run_probe() -> String {
    probe_lines().0
}

/// The probe's two lines: [`run_probe`]'s, and the US condition policies compiled in
/// (`conditions: {has} {made up} {leaves with a policy}/{leaves}`).
fn probe_lines() -> (String, String) {
    let exe = common::outside_probes_target().join("debug/live-build-probe");
    let out = Command::new(exe).output().unwrap();
    assert!(out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut lines = stdout.lines().map(str::to_owned);
    let first = lines.next().unwrap_or_default();
    (first, lines.next().unwrap_or_default())
}

/// The getItemConditionPolicies requests `fake` received, of every site.
fn policy_requests(fake: &FakeMarketplace) -> usize {
    Marketplace::ALL
        .iter()
        .map(|s| {
            fake.requests_to(&fake_marketplace::metadata::condition_policies_path(
                s.marketplace_id(),
            ))
            .len()
        })
        .sum()
}

#[test]
fn the_build_uses_the_live_tree_and_falls_back_to_the_snapshot() {
    let _turn = common::outside_probes_turn();
    let fake = FakeMarketplace::new();
    fake.set_tree(Marketplace::Us, common::us_with_new_leaf("135-live"));
    // The live version's rules of the pinned 179 allow one more Type.
    let mut aspects = fake_marketplace::taxonomy::aspects_of(179);
    let types = aspects["aspects"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|a| a["localizedAspectName"] == "Type")
        .unwrap();
    types["aspectValues"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"localizedValue": "Thin Client"}));
    fake.set_item_aspects(179, aspects);

    let probe = tempfile::tempdir().unwrap();
    write_probe(probe.path());

    // Live: the new leaf compiles, and the program's tables have it; so do the live rules of
    // the pinned category.
    let out = cargo_build(
        probe.path(),
        &fake.base_url(),
        &fake,
        &[],
        &["new_leaf", "macros_live", "live_aspects"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "live build failed:\n{stderr}");
    assert_eq!(
        run_probe().trim(),
        "999001 Cell Phones & Accessories > Foldable Phones | 135-live | 179: 135-live true"
    );
    assert!(stderr.contains("using the live tree"), "{stderr}");
    assert!(
        stderr.contains("EBAY_US category 179: using the aspects of the live tree (version 135-live), which differ from the committed pin (version 134)"),
        "{stderr}"
    );
    assert_eq!(
        aspects_requests(&fake),
        committed_pins(),
        "one getItemAspectsForCategory request a pinned category for both builds"
    );
    // Two builds of taxonomy-data (the macro's and the program's), one download.
    assert_eq!(fake.token_requests().len(), 1, "one application token");
    let tree_requests = fake
        .requests()
        .iter()
        .filter(|r| {
            r.path.contains("category_tree")
                && !r.path.ends_with("/get_expired_categories")
                && !r.path.ends_with("/get_item_aspects_for_category")
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
    // And the live trees' condition policies (getItemConditionPolicies), one request per site
    // for both builds: the fake's, for every US leaf, compiled in with their made-up mark.
    assert_eq!(
        policy_requests(&fake),
        4,
        "one getItemConditionPolicies request per site for both builds"
    );
    let leaves = common::us_with_new_leaf("135-live")
        .listable()
        .filter(|c| c.leaf)
        .count();
    assert_eq!(
        probe_lines().1,
        format!("conditions: true true {leaves}/{leaves}"),
        "the fake's policies for every live leaf"
    );
    assert!(
        stderr.contains("EBAY_US: condition policies of the live tree (version 135-live) made up by the fake marketplace"),
        "{stderr}"
    );

    // `live` on the data only: both builds still use the (cached) live tree.
    let out = cargo_build(
        probe.path(),
        &fake.base_url(),
        &fake,
        &[],
        &["new_leaf", "live_aspects"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(run_probe().starts_with("999001 "));
    assert!(run_probe().trim().ends_with("179: 135-live true"));
    assert_eq!(
        fake.token_requests().len(),
        1,
        "the cached download is reused"
    );
    assert_eq!(
        aspects_requests(&fake),
        committed_pins(),
        "the cached aspects are reused"
    );
    assert_eq!(
        policy_requests(&fake),
        4,
        "the cached condition policies are reused within the TTL"
    );
    assert_eq!(
        probe_lines().1,
        format!("conditions: true true {leaves}/{leaves}")
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
        let gone = FakeMarketplace::new();
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
        "9355 Cell Phones & Accessories > Cell Phones & Smartphones | 134 | 179: 134 false"
    );
    assert!(
        probe_lines().1.starts_with("conditions: false false 0/"),
        "no live tree, no committed condition-policy file: no policies"
    );

    // One site broken on the service: that site falls back for both builds of taxonomy-data
    // (the failure is recorded for the other build), the others are live, the build succeeds.
    let half = FakeMarketplace::new();
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
        run_probe().trim().ends_with("| 134 | 179: 134 false"),
        "US and its pinned category from the snapshots"
    );
    assert_eq!(
        half.token_requests().len(),
        1,
        "one download for both builds"
    );

    // The tree live but the pinned category's answer unreadable: both builds keep the
    // committed pin (the failure is recorded for the other build), with a warning.
    // And the US condition policies unreadable too (getItemConditionPolicies): asked once for
    // both builds (the failure is recorded), a warning, and the site has none (no committed
    // condition-policy file).
    let broken = FakeMarketplace::new();
    broken.set_tree(Marketplace::Us, common::us_with_new_leaf("136-live"));
    broken.set_item_aspects(179, serde_json::json!({"aspects": "none"}));
    broken.set_item_condition_policy(
        Marketplace::Us,
        9355,
        Some(serde_json::json!({"itemConditionRequired": true, "itemConditions": "none"})),
    );
    let out = cargo_build(
        probe.path(),
        &broken.base_url(),
        &broken,
        &[],
        &["new_leaf", "macros_live"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "EBAY_US category 179: the aspects of the live tree (version 136-live) could not be had"
        ),
        "{stderr}"
    );
    assert!(
        run_probe().trim().ends_with("| 136-live | 179: 134 false"),
        "the live tree, the committed pin"
    );
    assert_eq!(
        aspects_requests(&broken),
        committed_pins(),
        "one attempt a pinned category for both builds"
    );
    assert!(
        stderr.contains(
            "EBAY_US: the condition policies of the live tree (version 136-live) could not be had (getItemConditionPolicies: "
        ),
        "{stderr}"
    );
    assert!(
        probe_lines().1.starts_with("conditions: false false 0/"),
        "the live tree without policies"
    );
    let us_policies = fake_marketplace::metadata::condition_policies_path("EBAY_US");
    assert_eq!(
        broken.requests_to(&us_policies).len(),
        1,
        "one getItemConditionPolicies attempt for both builds"
    );
    assert_eq!(
        policy_requests(&broken),
        4,
        "the other sites' policies, once"
    );
}

#[test]
fn the_site_filter_leaves_sites_out_and_refuses_unknown_ones() {
    let _turn = common::outside_probes_turn();
    let fake = FakeMarketplace::new();
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
            "EBAY_DE is not compiled into this build of taxonomy-data: it has no snapshot"
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
    // A filter naming no known site fails the build with the site it meant and what is
    // accepted.
    let bad = [
        ("TAXONOMY_OFFLINE", "1"),
        ("TAXONOMY_SITES", "EBAY_US,EBAY_UK"),
    ];
    let out = cargo_build(probe.path(), &fake.base_url(), &fake, &bad, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains(
            "\"EBAY_UK\" is not a marketplace; did you mean EBAY_GB (United Kingdom)? A site is"
        ),
        "{stderr}"
    );
    assert!(
        fake.token_requests().is_empty(),
        "offline builds ask nothing"
    );
}

/// The getItemAspectsForCategory requests (US, tree 0) `fake` received.
fn aspects_requests(fake: &FakeMarketplace) -> usize {
    fake.requests_to(&fake_marketplace::taxonomy::aspects_path(0))
        .len()
}

fn tree_downloads(fake: &FakeMarketplace) -> usize {
    Marketplace::ALL
        .iter()
        .map(|s| fake.requests_to(&tree_path(s.tree_id())).len())
        .sum()
}

/// For each of `needles`, every file under `dir` modified at or after `since` whose bytes
/// contain it (one walk for all). A secret made up after `since` can only be in a file written
/// after it: the workspace's target directory (gigabytes of the workspace's own build) need
/// not be read.
fn files_containing(
    dir: &Path,
    needles: &[&str],
    since: std::time::SystemTime,
) -> Vec<Vec<String>> {
    let finders: Vec<_> = needles.iter().map(memchr::memmem::Finder::new).collect();
    let mut found = vec![Vec::new(); needles.len()];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_dir() {
                stack.push(path);
            } else if kind.is_file()
                && entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .is_ok_and(|t| t >= since)
                && let Ok(bytes) = std::fs::read(&path)
            {
                for (finder, files) in finders.iter().zip(&mut found) {
                    if finder.find(&bytes).is_some() {
                        files.push(path.display().to_string());
                    }
                }
            }
        }
    }
    found
}

#[test]
fn the_build_cache_keeps_no_secret_checks_versions_and_refuses_edited_trees() {
    let _turn = common::outside_probes_turn();
    // The moment the secret is made up by the target directory's own clock (a file's time can
    // lag the system's, or be coarser), less 2 s: no file that holds the secret is older.
    let since = {
        let marker = common::outside_probes_target().join("tmp/build-live-since");
        std::fs::create_dir_all(marker.parent().unwrap()).unwrap();
        std::fs::write(&marker, b"").unwrap();
        std::fs::metadata(&marker).unwrap().modified().unwrap() - std::time::Duration::from_secs(2)
    };
    let started = std::time::SystemTime::now();
    let nanos = started
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    // A secret no earlier run can have left in the shared target directory.
    let secret = format!("PRD-{nanos:x}-s3cr3t+{}", std::process::id());
    let fake = FakeMarketplace::start(FakeConfig {
        client_secret: secret.clone(),
        ..FakeConfig::default()
    })
    .unwrap();
    fake.set_tree(Marketplace::Us, common::us_with_new_leaf("135-live"));
    let probe = tempfile::tempdir().unwrap();
    write_probe(probe.path());
    let target = common::outside_probes_target();

    // 1. First build: every tree downloaded, no version asked.
    let out = cargo_build(probe.path(), &fake.base_url(), &fake, &[], &["macros_live"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(tree_downloads(&fake), 4);
    assert!(fake.requests_to(DEFAULT_TREE_ID_PATH).is_empty());
    assert_eq!(
        policy_requests(&fake),
        4,
        "each site's condition policies, once"
    );
    // The cache of this run: every directory 0700, every file 0600.
    let root = target.join("taxonomy-live");
    let cache = std::fs::read_dir(&root)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|d| {
            std::fs::metadata(d.join("stamp"))
                .and_then(|m| m.modified())
                .is_ok_and(|t| t >= started)
        })
        .expect("this run's cache entry");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&root), 0o700, "{}", root.display());
        assert_eq!(mode(&cache), 0o700, "{}", cache.display());
        let files: Vec<_> = std::fs::read_dir(&cache).unwrap().flatten().collect();
        assert!(
            files.len() >= 13,
            "4 trees, 4 checks, 4 condition-policy files, stamp, lock"
        );
        assert!(cache.join("EBAY_US.conditions.json").is_file());
        // And the pinned category's cached answer, in pinned/ (0700).
        let pinned: Vec<_> = std::fs::read_dir(cache.join("pinned"))
            .unwrap()
            .flatten()
            .collect();
        assert_eq!(
            pinned.len(),
            committed_pins(),
            "each pinned category's answer"
        );
        for f in files.into_iter().chain(pinned) {
            let want = if f.path().is_dir() { 0o700 } else { 0o600 };
            assert_eq!(mode(&f.path()), want, "{}", f.path().display());
        }
    }
    for site in common::snapshot_sites() {
        let check = std::fs::read_to_string(cache.join(format!("{}.check", site.marketplace_id())))
            .unwrap();
        assert!(
            check.contains("version=") && check.contains("checked=") && check.contains("sha256="),
            "{check}"
        );
    }

    // 2. A rebuild that uses the cached trees still says the US tree differs from the
    //    snapshot, here a newer one (another snapshots directory reruns the build script); a
    //    bad TTL is named and the default used (no version check within it).
    let snapshots = common::copy_of_snapshots();
    let us = snapshots.path().join("EBAY_US.json");
    let text = std::fs::read_to_string(&us).unwrap();
    std::fs::write(
        &us,
        text.replace(
            "\"categoryTreeVersion\": \"134\"",
            "\"categoryTreeVersion\": \"136\"",
        ),
    )
    .unwrap();
    let snapshots_dir = snapshots.path().display().to_string();
    let out = cargo_build(
        probe.path(),
        &fake.base_url(),
        &fake,
        &[
            ("TAXONOMY_SNAPSHOTS_DIR", snapshots_dir.as_str()),
            ("TAXONOMY_LIVE_TTL", "soon"),
        ],
        &["macros_live"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("TAXONOMY_LIVE_TTL=\"soon\" is not a duration"),
        "{stderr}"
    );
    assert!(
        stderr.contains("EBAY_US: using the live tree, which differs from the committed snapshot (version 136 → 135-live"),
        "{stderr}"
    );
    assert_eq!(tree_downloads(&fake), 4, "the cache is used");
    assert!(fake.requests_to(DEFAULT_TREE_ID_PATH).is_empty());
    assert_eq!(
        policy_requests(&fake),
        4,
        "the cached condition policies are used within the TTL"
    );
    assert!(
        probe_lines().1.starts_with("conditions: true true "),
        "the cached policies compiled in"
    );

    // 3. The TTL ran out (1 s), with a ready access token: one version check a site for both
    //    builds, and only the tree whose version changed (GB) is downloaded. Its new version
    //    holds a newline and a directive after it: server text that must stay on its warning
    //    line; the tree is refused (a version holds no control character) and the cached one
    //    kept.
    let token = oauth_common::client(&fake)
        .client_credentials(&ScopeSet::default())
        .unwrap()
        .access_token
        .secret()
        .to_string();
    let mut gb = common::committed(Marketplace::Gb);
    gb.meta.version = "92\ncargo:rustc-env=INJECTED=1".into();
    fake.set_tree(Marketplace::Gb, gb);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let out = cargo_build(
        probe.path(),
        &fake.base_url(),
        &fake,
        &[
            ("TAXONOMY_LIVE_TTL", "1"),
            ("MARKETPLACE_ACCESS_TOKEN", token.as_str()),
        ],
        &["macros_live"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(fake.requests_to(DEFAULT_TREE_ID_PATH).len(), 4, "{stderr}");
    assert_eq!(fake.requests_to(&tree_path(3)).len(), 2, "GB again");
    assert_eq!(tree_downloads(&fake), 5, "no unchanged tree downloaded");
    // The condition policies asked again at the version check, for the sites whose check
    // went through (GB's new tree was refused: its cached tree and policies stay).
    assert_eq!(policy_requests(&fake), 7, "{stderr}");
    assert!(
        stderr
            .contains("EBAY_GB: the cached live tree is out of date (version 91 → 92\\u{a}cargo:"),
        "{stderr}"
    );
    assert!(
        stderr.contains("EBAY_GB: the new version could not be downloaded (")
            && stderr.contains("contains a control character"),
        "{stderr}"
    );
    let injected: Vec<&str> = stderr.lines().filter(|l| l.contains("INJECTED")).collect();
    assert!(!injected.is_empty(), "{stderr}");
    for line in &injected {
        assert!(
            line.starts_with("warning: taxonomy-data") && line.contains("EBAY_GB: "),
            "server text split the warning: {line}"
        );
    }

    // 4. A cached tree edited by hand is refused: a warning, and the snapshot.
    let cached_us = cache.join("EBAY_US.json");
    let text = std::fs::read_to_string(&cached_us).unwrap();
    std::fs::write(
        &cached_us,
        text.replace("Foldable Phones", "Foldable Phonez"),
    )
    .unwrap();
    let out = cargo_build(probe.path(), &fake.base_url(), &fake, &[], &["macros_live"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("does not match its checksum"), "{stderr}");
    assert!(stderr.contains("using the committed snapshot"), "{stderr}");
    assert!(
        run_probe().trim().ends_with("| 134 | 179: 134 false"),
        "US and its pinned category from the snapshots"
    );
    assert_eq!(tree_downloads(&fake), 5);
    assert_eq!(policy_requests(&fake), 7, "no check due: nothing asked");

    // Neither secret is in any file of the target directory written since the secret was
    // made up, cargo's fingerprints included: the search does find a secret where one is, and
    // it does read the fingerprint where cargo keeps the fake's address (a variable the build
    // script watches, as it would keep a secret the script named).
    let planted = tempfile::tempdir().unwrap();
    std::fs::write(planted.path().join("f"), format!("…{token}…")).unwrap();
    assert_eq!(
        files_containing(planted.path(), &[&secret, &token], since).concat(),
        [planted.path().join("f").display().to_string()]
    );
    let address = fake.base_url();
    let [secret_in, token_in, address_in] = <[Vec<String>; 3]>::try_from(files_containing(
        &target,
        &[&secret, &token, &address],
        since,
    ))
    .unwrap();
    assert!(
        secret_in.is_empty() && token_in.is_empty(),
        "secrets written to {secret_in:?} {token_in:?}"
    );
    assert!(
        address_in
            .iter()
            .any(|p| p.contains("/.fingerprint/taxonomy-data-")),
        "the search did not read taxonomy-data's fingerprints: {address_in:?}"
    );
}

#[test]
fn a_failed_policy_refetch_at_a_version_check_keeps_the_cached_policies() {
    let _turn = common::outside_probes_turn();
    let fake = FakeMarketplace::new();
    fake.set_tree(Marketplace::Us, common::us_with_new_leaf("135-live"));
    let probe = tempfile::tempdir().unwrap();
    write_probe(probe.path());

    // 1. The live tree and its condition policies, cached.
    let out = cargo_build(probe.path(), &fake.base_url(), &fake, &[], &["macros_live"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let policies = probe_lines().1;
    assert!(policies.starts_with("conditions: true true "), "{policies}");
    assert!(!policies.contains(" 0/"), "{policies}");

    // 2. The TTL ran out; the version check goes through (the tree is unchanged) but the
    //    connection drops on getItemConditionPolicies. The cached policies are of the same
    //    live tree: they are kept, as a held tree is kept when its download fails, instead
    //    of leaving the site without policies (which breaks every condition! of it).
    fake.fail_times(
        &fake_marketplace::metadata::condition_policies_path("EBAY_US"),
        fake_marketplace::Fault::Status {
            status: 503,
            body: r#"{"errors":[{"errorId":46000,"domain":"API_METADATA","category":"APPLICATION","message":"internal"}]}"#.into(),
            headers: vec![],
        },
        100,
    );
    std::thread::sleep(std::time::Duration::from_secs(2));
    let out = cargo_build(
        probe.path(),
        &fake.base_url(),
        &fake,
        &[("TAXONOMY_LIVE_TTL", "1")],
        &["macros_live"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        fake.requests_to(DEFAULT_TREE_ID_PATH).len() >= 4,
        "the versions were checked: {stderr}"
    );
    assert!(
        stderr.contains(
            "EBAY_US: the condition policies of the live tree (version 135-live) could not be had"
        ),
        "{stderr}"
    );
    assert_eq!(
        probe_lines().1,
        policies,
        "the cached policies of the same live tree are kept: {stderr}"
    );
}

/// How many categories the committed snapshots pin (`snapshots/pinned/*.json`): the build asks
/// getItemAspectsForCategory once for each.
fn committed_pins() -> usize {
    std::fs::read_dir(common::snapshots_dir().join("pinned"))
        .unwrap()
        .flatten()
        .filter(|entry| entry.path().extension().is_some_and(|e| e == "json"))
        .count()
}
