//! Expired categories at run time: a program built against a snapshots directory that carries
//! an expired-category mapping (getExpiredCategories) gets `LeafError::Expired` with the
//! replacement from `LeafCategory::new`, and the replacement from `Site::replacement`.
//!
//! The committed snapshots carry no mapping (we have no real expired-category data, and invent
//! none), so this test writes its own snapshots directory and builds a small probe crate
//! against it with `TAXONOMY_SNAPSHOTS_DIR`, the build script's documented override (the way
//! the repository's `tests/it/build_live.rs` builds its probe). The directory holds the committed
//! US tree without leaf 853 ("Canada Dry"), and the mapping 853 → 852, 700001 → 9355.
//! Both live in `CARGO_TARGET_TMPDIR`, at stable paths, so later runs rebuild nothing.

use std::path::{Path, PathBuf};
use std::process::Command;

use marketplaces::Marketplace;
use taxonomy_tree::expired::{self, ExpiredMapping};
use taxonomy_tree::snapshot;

const MAIN_RS: &str = r#"
use taxonomy_data::{LeafCategory, LeafError, Site};

// The lookups are `const fn`s: a replacement can be taken in a constant.
const REPLACEMENT: Option<LeafCategory> = Site::Us.replacement(700_001);

fn main() {
    match LeafCategory::new(Site::Us, 853) {
        Err(e @ LeafError::Expired { site, id, replacement }) => {
            println!("error: {e}");
            println!("fields: {site} {id} {}", replacement.id());
        }
        other => println!("unexpected: {other:?}"),
    }
    println!("853 -> {:?}", Site::Us.replacement(853).map(|l| l.id()));
    println!("const 700001 -> {:?}", REPLACEMENT.map(|l| l.path().to_string()));
    // A live leaf, an unknown id, the root, an id expired on another site: no replacement.
    for id in [852, 9355, 4_000_000, 0] {
        println!("{id} -> {:?}", Site::Us.replacement(id).map(|l| l.id()));
    }
    println!("GB 853 -> {:?}", Site::Gb.replacement(853).map(|l| l.id()));
    println!("unknown: {}", LeafCategory::new(Site::Us, 4_000_000).unwrap_err());
    println!("leaf: {:?}", LeafCategory::new(Site::Us, 852).map(|l| l.id()));
}
"#;

/// Writes `bytes` to `path` unless it already holds them (so cargo sees no change).
fn write_if_changed(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).ok().as_deref() != Some(bytes) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The snapshots directory of the probe: US and GB, the US tree without 853, and the mapping.
fn write_snapshots(dir: &Path) {
    let committed = root().join("snapshots");
    let gb = Marketplace::Gb.snapshot_file_name();
    write_if_changed(&dir.join(gb), &std::fs::read(committed.join(gb)).unwrap());
    let us = Marketplace::Us.snapshot_file_name();
    let mut tree = snapshot::read(&committed.join(us)).unwrap();
    tree.categories.retain(|c| c.id != 853);
    for c in &mut tree.categories {
        c.children.retain(|&k| k != 853);
    }
    write_if_changed(&dir.join(us), snapshot::to_string(&tree).as_bytes());
    let file = expired::from_answer(
        [
            ExpiredMapping { from: 853, to: 852 },
            ExpiredMapping {
                from: 700_001,
                to: 9355,
            },
        ],
        &tree,
        "written by taxonomy-data/tests/it/expired.rs",
        &expired::path_beside(&dir.join(us)),
    )
    .unwrap();
    write_if_changed(
        &expired::path_beside(&dir.join(us)),
        expired::to_string(&file).as_bytes(),
    );
}

fn write_probe(dir: &Path) {
    let manifest = format!(
        r#"[package]
name = "expired-probe"
version = "0.0.0"
edition = "2024"
publish = false

[dependencies]
taxonomy-data = {{ path = {data:?} }}

[workspace]
"#,
        data = env!("CARGO_MANIFEST_DIR"),
    );
    write_if_changed(&dir.join("Cargo.toml"), manifest.as_bytes());
    write_if_changed(&dir.join("src/main.rs"), MAIN_RS.as_bytes());
    // The workspace's lock file pins every version, so the probe builds without the network.
    write_if_changed(
        &dir.join("Cargo.lock"),
        &std::fs::read(root().join("Cargo.lock")).unwrap(),
    );
}

#[test]
fn an_expired_id_names_its_replacement_at_run_time() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("expired");
    let (snapshots, probe, target) = (
        base.join("snapshots"),
        base.join("probe"),
        base.join("target"),
    );
    write_snapshots(&snapshots);
    write_probe(&probe);
    let out = Command::new(env!("CARGO"))
        .current_dir(&probe)
        .args(["run", "--offline", "--quiet"])
        .env("CARGO_TARGET_DIR", &target)
        .env("TAXONOMY_SNAPSHOTS_DIR", &snapshots)
        .env("TAXONOMY_SITES", "EBAY_US,EBAY_GB")
        .env("TAXONOMY_OFFLINE", "1")
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            "error: EBAY_US category 853 expired; use 852 (Collectibles > Advertising > Soda > Fountain)",
            "fields: EBAY_US 853 852",
            "853 -> Some(852)",
            "const 700001 -> Some(\"Cell Phones & Accessories > Cell Phones & Smartphones\")",
            "852 -> None",
            "9355 -> None",
            "4000000 -> None",
            "0 -> None",
            "GB 853 -> None",
            "unknown: EBAY_US has no category 4000000 (tree version 134)",
            "leaf: Ok(852)",
        ]
    );
}

#[test]
fn the_committed_build_has_no_expired_categories() {
    // No mapping is committed: every id is either a category or unknown, never expired.
    for site in taxonomy_data::Site::compiled_in() {
        for id in [0, 1, 853, 9355, 700_001, u32::MAX] {
            assert!(site.replacement(id).is_none(), "{site} {id}");
            assert!(
                !matches!(
                    taxonomy_data::LeafCategory::new(site, id),
                    Err(taxonomy_data::LeafError::Expired { .. })
                ),
                "{site} {id}"
            );
        }
    }
}

#[test]
fn the_build_compiles_the_mapping_in_and_refuses_one_that_breaks_the_rule() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("expired-codegen");
    let good = base.join("good");
    write_snapshots(&good);
    let code = taxonomy_codegen::build_script::generate_for(&[Marketplace::Us], &good, Vec::new())
        .unwrap();
    assert!(
        code.contains("    expired: &[\n        (853, 852),(700001, 9355),\n    ],"),
        "the US table lacks its mapping"
    );

    // The same directory with a hand-edited mapping: 15032 has subcategories.
    let bad = base.join("bad");
    write_snapshots(&bad);
    let us = bad.join(Marketplace::Us.snapshot_file_name());
    let path = expired::path_beside(&us);
    let text = std::fs::read_to_string(&path).unwrap().replace(
        "{\"from\":700001,\"to\":9355}",
        "{\"from\":700001,\"to\":15032}",
    );
    std::fs::write(&path, text).unwrap();
    let e = taxonomy_codegen::build_script::generate_for(&[Marketplace::Us], &bad, Vec::new())
        .unwrap_err();
    let message = e.to_string();
    assert!(
        message.starts_with(&format!(
            "{}:10: expired category 700001 is mapped to 15032, which is not a leaf (rule: the replacement is a leaf of the tree)",
            path.display()
        )),
        "{message}"
    );
    assert!(message.contains("getExpiredCategories"), "{message}");
}
