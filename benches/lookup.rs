//! Lookup by id: taxonomy-data's perfect hash against the baselines, measured in the same run.
//!
//! - `std_hashmap`: a `HashMap<u32, u32>` built from the same snapshot at run time;
//! - `binary_search`: a sorted `Vec<u32>` of the ids;
//! - `dense_array`: a `Vec<u32>` indexed by id (the practical floor; 1.8 MB for the US site);
//! - `first_lookup`: a fresh process doing one lookup, from the compiled-in tables against
//!   parsing the snapshot JSON at start-up (`spawn_only` is the cost of the process itself).
//!
//! Run with `cargo bench --bench lookup`; each group reports the time for 1,024 lookups.

use std::collections::HashMap;
use std::hint::black_box;
use std::path::PathBuf;
use std::process::Command;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group};
use taxonomy_data::Site;
use taxonomy_tree::snapshot;

const CHILD_ENV: &str = "TAXONOMY_BENCH_CHILD";

fn snapshot_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("snapshots/EBAY_US.json")
}

/// A fixed pseudo-random order (xorshift), so every run looks up the same ids.
fn shuffled<T: Copy>(items: &[T], n: usize) -> Vec<T> {
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            items[(x % items.len() as u64) as usize]
        })
        .collect()
}

fn lookups(c: &mut Criterion) {
    let tree = snapshot::read(&snapshot_path()).expect("the committed US snapshot");
    let ids: Vec<u32> = tree.listable().map(|c| c.id).collect();
    let max = *ids.last().unwrap();
    let map: HashMap<u32, u32> = ids
        .iter()
        .enumerate()
        .map(|(i, &id)| (id, i as u32))
        .collect();
    let mut dense = vec![u32::MAX; max as usize + 1];
    for (i, &id) in ids.iter().enumerate() {
        dense[id as usize] = i as u32;
    }
    let absent: Vec<u32> = (1..max).filter(|id| !map.contains_key(id)).collect();
    let hits = shuffled(&ids, 1024);
    let misses = shuffled(&absent, 1024);

    for (group, keys) in [("lookup_hit", &hits), ("lookup_miss", &misses)] {
        let mut g = c.benchmark_group(group);
        g.throughput(Throughput::Elements(keys.len() as u64));
        g.bench_function("taxonomy_data", |b| {
            b.iter(|| {
                let mut found = 0_u32;
                for &id in keys {
                    found += u32::from(Site::Us.category(black_box(id)).is_some());
                }
                found
            })
        });
        g.bench_function("std_hashmap", |b| {
            b.iter(|| {
                let mut found = 0_u32;
                for &id in keys {
                    found += u32::from(map.contains_key(&black_box(id)));
                }
                found
            })
        });
        g.bench_function("binary_search", |b| {
            b.iter(|| {
                let mut found = 0_u32;
                for &id in keys {
                    found += u32::from(ids.binary_search(&black_box(id)).is_ok());
                }
                found
            })
        });
        g.bench_function("dense_array", |b| {
            b.iter(|| {
                let mut found = 0_u32;
                for &id in keys {
                    let id = black_box(id) as usize;
                    found += u32::from(dense.get(id).is_some_and(|&i| i != u32::MAX));
                }
                found
            })
        });
        g.finish();
    }
}

fn first_lookup(c: &mut Criterion) {
    let exe = std::env::current_exe().expect("the bench executable");
    let mut g = c.benchmark_group("first_lookup");
    g.sample_size(20);
    for mode in ["spawn_only", "taxonomy_data", "parse_snapshot_json"] {
        g.bench_with_input(BenchmarkId::from_parameter(mode), &mode, |b, mode| {
            b.iter(|| {
                let status = Command::new(&exe)
                    .env(CHILD_ENV, mode)
                    .status()
                    .expect("spawn the child");
                assert!(status.success());
            })
        });
    }
    g.finish();
}

/// The child process of `first_lookup`: one lookup of 9355, then exit.
fn child(mode: &str) {
    let name = match mode {
        "spawn_only" => "Cell Phones & Smartphones".to_string(),
        "taxonomy_data" => Site::Us
            .category(9355)
            .map(|c| c.name().to_string())
            .unwrap_or_default(),
        "parse_snapshot_json" => {
            let tree = snapshot::read(&snapshot_path()).expect("the committed US snapshot");
            let map: HashMap<u32, usize> = tree
                .categories
                .iter()
                .enumerate()
                .map(|(i, c)| (c.id, i))
                .collect();
            map.get(&9355)
                .map(|&i| tree.categories[i].name.clone())
                .unwrap_or_default()
        }
        other => panic!("unknown child mode {other}"),
    };
    assert_eq!(name, "Cell Phones & Smartphones");
}

criterion_group!(benches, lookups, first_lookup);

fn main() {
    if let Ok(mode) = std::env::var(CHILD_ENV) {
        child(&mode);
        return;
    }
    benches();
    criterion::Criterion::default()
        .configure_from_args()
        .final_summary();
}
