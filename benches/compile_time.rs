//! What `aspects!` costs the compiler, against `category!`: crates of 100 invocations each on
//! the same category, built by cargo as a user's crate is, timed per build.
//!
//! ```text
//! cargo bench --bench compile_time
//! ```
//!
//! Four crates of one workspace outside this one (`target/compile-time-bench/`), sharing a
//! target directory and a snapshots directory: the committed US tree, and US 27386
//! "Graphics/Video Cards" pinned from the real getItemAspectsForCategory answer in
//! `tests/fixtures/aspects/` (20 aspects, 864 brands), with its Brand made selection-only so
//! that a brand outside the 864 is an error. Each has 100 functions:
//!
//! - `plain`: each returns the number 27386 (the fixed cost of a build: cargo, rustc, loading
//!   taxonomy-data's metadata);
//! - `category`: each returns `category!("27386")`;
//! - `aspects_literals`: each returns `aspects!("27386", { … })`, a listing with the three
//!   required aspects (a different brand in each) and three optional ones, all literals;
//! - `aspects`: the same listings with an expression (`"MPN": mpn`), checked at run time;
//! - `aspects_error`: the same listings, one of which (as in a crate with one mistake) has a
//!   brand outside the 864 (the compile error lists the closest allowed brands).
//!
//! Each iteration rewrites the crate's source and runs `cargo build --offline -p NAME`: only
//! that crate is compiled, without incremental compilation (which would reuse the previous,
//! identical build's work, except for the crate that fails). Goal (issue "item specifics checked at compile time"): `aspects`
//! under 2× `category`, and `aspects_error` as fast as `aspects`. The ratios are read from the
//! same run; `plain` says how much of each build is the fixed cost.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use marketplaces::Marketplace;
use serde_json::Value;
use taxonomy_codegen::pinned::{self, PinnedAspects};

const CATEGORY: u32 = 27386;
const CRATES: [&str; 5] = [
    "plain",
    "category",
    "aspects_literals",
    "aspects",
    "aspects_error",
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bench_dir() -> PathBuf {
    root().join("target/compile-time-bench")
}

/// The snapshots directory of the bench: the committed US tree and 27386 pinned.
fn write_snapshots(dir: &Path) -> Vec<String> {
    let us = Marketplace::Us.snapshot_file_name();
    std::fs::create_dir_all(dir.join(pinned::PINNED_DIR)).unwrap();
    std::fs::copy(root().join("snapshots").join(us), dir.join(us)).unwrap();
    let fixture = root().join("tests/fixtures/aspects/ebay-us-27386-graphics-cards.json");
    let mut answer: Value = serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    let brand = answer["aspects"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|a| a["localizedAspectName"] == "Brand")
        .unwrap();
    brand["aspectConstraint"]["aspectMode"] = "SELECTION_ONLY".into();
    let brands: Vec<String> = brand["aspectValues"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["localizedValue"].as_str().unwrap().to_owned())
        .collect();
    assert!(brands.len() >= 800, "the real answer's brands");
    let file = PinnedAspects {
        site: Marketplace::Us,
        tree_id: 0,
        tree_version: "134".into(),
        category_id: CATEGORY,
        taken_at: "2023-11-22".into(),
        source: "getItemAspectsForCategory".into(),
        fetched_from: None,
        made_up: false,
        answer,
    };
    std::fs::write(
        pinned::path_of(dir, Marketplace::Us, CATEGORY),
        file.to_text(),
    )
    .unwrap();
    brands
}

/// The source of one crate: 100 functions.
fn source(name: &str, brands: &[String]) -> String {
    let mut out = String::from("#![allow(clippy::all)]\n");
    for i in 0..100 {
        let brand = &brands[i * brands.len() / 100];
        let body = match name {
            "plain" => format!("pub fn f{i}() -> u32 {{ {CATEGORY} }}\n"),
            "category" => format!(
                "pub fn f{i}() -> taxonomy_data::LeafCategory {{ taxonomy_macros::category!(\"{CATEGORY}\").leaf() }}\n"
            ),
            "aspects_literals" => format!(
                "pub fn f{i}() -> taxonomy_data::aspects::Aspects {{\n    taxonomy_macros::aspects!(\"{CATEGORY}\", {{\n        \"Brand\": {brand:?},\n        \"Chipset Manufacturer\": \"NVIDIA\",\n        \"Chipset/GPU Model\": \"NVIDIA GeForce RTX 3080\",\n        \"Memory Size\": \"10 GB\",\n        \"Connectors\": [\"HDMI\", \"DisplayPort\"],\n        \"MPN\": \"RTX3080-10G\",\n    }}).into_inner()\n}}\n"
            ),
            _ => {
                let brand = if name == "aspects_error" && i == 50 {
                    format!("{brand} Nonesuch {i}")
                } else {
                    brand.clone()
                };
                format!(
                    "pub fn f{i}(mpn: &str) -> Result<taxonomy_data::aspects::Aspects, taxonomy_data::aspects::AspectsError> {{\n    taxonomy_macros::aspects!(\"{CATEGORY}\", {{\n        \"Brand\": {brand:?},\n        \"Chipset Manufacturer\": \"NVIDIA\",\n        \"Chipset/GPU Model\": \"NVIDIA GeForce RTX 3080\",\n        \"Memory Size\": \"10 GB\",\n        \"Connectors\": [\"HDMI\", \"DisplayPort\"],\n        \"MPN\": mpn,\n    }}).map(taxonomy_data::typed::Checked::into_inner)\n}}\n"
                )
            }
        };
        out.push_str(&body);
    }
    out
}

/// Writes the workspace of the four crates (the lock file is the repository's, so the build
/// is offline).
fn write_workspace(dir: &Path, brands: &[String]) {
    let data = root().join("taxonomy-data");
    let macros = root().join("taxonomy-macros");
    let members: Vec<String> = CRATES.iter().map(|c| format!("{c:?}")).collect();
    std::fs::write(
        dir.join("Cargo.toml"),
        format!(
            "[workspace]\nresolver = \"3\"\nmembers = [{}]\n",
            members.join(", ")
        ),
    )
    .unwrap();
    std::fs::copy(root().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    for name in CRATES {
        let krate = dir.join(name);
        std::fs::create_dir_all(krate.join("src")).unwrap();
        std::fs::write(
            krate.join("Cargo.toml"),
            format!(
                "[package]\nname = {name:?}\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\ntaxonomy-data = {{ path = {:?} }}\ntaxonomy-macros = {{ path = {:?} }}\n",
                data.display().to_string(),
                macros.display().to_string()
            ),
        )
        .unwrap();
        std::fs::write(krate.join("src/lib.rs"), source(name, brands)).unwrap();
    }
}

/// `cargo build --offline -p NAME` in the bench's workspace, with its snapshots.
fn build(dir: &Path, name: &str) -> std::process::Output {
    let mut command = Command::new(env!("CARGO"));
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy();
        if key.starts_with("MARKETPLACE_") || key.starts_with("TAXONOMY_") {
            command.env_remove(&*key);
        }
    }
    command
        .current_dir(dir)
        .args(["build", "--offline", "-q", "-p", name])
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env("TAXONOMY_SNAPSHOTS_DIR", dir.join("snapshots"))
        .env("TAXONOMY_SITES", "EBAY_US")
        // Every build from scratch: incremental compilation would reuse the previous
        // (identical) build's work for the crates that compile, never for the one that fails.
        .env("CARGO_INCREMENTAL", "0")
        .output()
        .unwrap()
}

fn hundred_invocations(c: &mut Criterion) {
    let dir = bench_dir();
    let brands = write_snapshots(&dir.join("snapshots"));
    write_workspace(&dir, &brands);
    // Once, unmeasured: the dependencies, and that each crate does what it is here for.
    for name in CRATES {
        let out = build(&dir, name);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if name == "aspects_error" {
            assert!(!out.status.success(), "the error case compiled");
            assert!(
                stderr.contains("The closest allowed values"),
                "not the expected error:\n{stderr}"
            );
        } else {
            assert!(out.status.success(), "{name} failed:\n{stderr}");
        }
    }
    let mut group = c.benchmark_group("hundred_invocations");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_millis(1))
        .measurement_time(Duration::from_secs(30));
    for name in CRATES {
        let lib = dir.join(name).join("src/lib.rs");
        let text = source(name, &brands);
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    // A new modification time: cargo compiles the crate again.
                    std::fs::write(&lib, &text).unwrap();
                    let started = Instant::now();
                    let out = build(&dir, name);
                    total += started.elapsed();
                    assert_eq!(out.status.success(), name != "aspects_error");
                }
                total
            })
        });
    }
    group.finish();
}

criterion_group!(benches, hundred_invocations);
criterion_main!(benches);
