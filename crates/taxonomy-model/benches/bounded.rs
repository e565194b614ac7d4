//! The aspects diff and the closest-value suggestion on inputs as large as their limits
//! allow, each against a baseline measured in the same run.
//!
//! - `diff_aspects`: `AspectsDiff::between_files` of two files of one category with 10k and
//!   with 80k aspects (half renamed, so half added and half removed). It was quadratic (40 s
//!   for 80k); linear, 80k takes about 8 times 10k. Goal: 80k under 1 s.
//! - `closest_value`: the check of a value not among 20k allowed ones (the closest-value
//!   suggestion): a normal value (16 characters, one edit from an allowed one) as the
//!   baseline, a 32 KB value, and a 32 KB value that starts like an allowed one (16 s before
//!   the distance was banded). Goal: under 10 ms.
//!
//! Run with `cargo bench -p taxonomy-model --bench bounded` (see docs/benchmarks.md).

use std::hint::black_box;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use taxonomy_model::aspects::{AspectRules, AspectsDiff, ListingAspects};
use taxonomy_model::decode;

/// A gzipped fetchItemAspects file of one category with `n` aspects of one value each;
/// `renamed`: every other aspect under another name.
fn aspects_file(dir: &Path, name: &str, n: usize, renamed: bool) -> PathBuf {
    let aspects: Vec<Value> = (0..n)
        .map(|i| {
            let name = if renamed && i % 2 == 1 {
                format!("Renamed {i}")
            } else {
                format!("Aspect {i}")
            };
            json!({"localizedAspectName": name, "aspectValues": [{"localizedValue": format!("v{i}")}]})
        })
        .collect();
    let file = json!({"categoryTreeId": "0", "categoryAspects": [
        {"category": {"categoryId": "179", "categoryName": "PC"}, "aspects": aspects}]});
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&serde_json::to_vec(&file).expect("JSON"))
        .expect("gzip");
    let path = dir.join(name);
    std::fs::write(&path, gz.finish().expect("gzip")).expect("written");
    path
}

fn diff(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut g = c.benchmark_group("diff_aspects");
    g.sample_size(10);
    for n in [10_000, 80_000] {
        let old = aspects_file(dir.path(), &format!("old-{n}.json.gz"), n, false);
        let new = aspects_file(dir.path(), &format!("new-{n}.json.gz"), n, true);
        g.throughput(Throughput::Elements(n as u64));
        g.bench_function(format!("{n}_aspects"), |b| {
            b.iter(|| {
                let diff = AspectsDiff::between_files(&old, &new).expect("read");
                assert_eq!(diff.modified_categories[0].new_aspects.len(), n / 2);
            })
        });
    }
    g.finish();
}

fn closest(c: &mut Criterion) {
    let values: Vec<Value> = (0..20_000)
        .map(|i| json!({"localizedValue": format!("Brand number {i}")}))
        .collect();
    let body = serde_json::to_vec(&json!({"aspects": [{"localizedAspectName": "Brand",
        "aspectConstraint": {"aspectMode": "SELECTION_ONLY"}, "aspectValues": values}]}))
    .expect("JSON");
    let rules = AspectRules::from(&decode::item_aspects(179, &body).expect("decodes"));
    let normal = ListingAspects::new().with("Brand", ["Brand numbr 1234"]);
    let long = ListingAspects::new().with("Brand", ["x".repeat(32 * 1024)]);
    let near = ListingAspects::new().with(
        "Brand",
        [format!("Brand number 1{}", "y".repeat(32 * 1024))],
    );
    for listing in [&normal, &long, &near] {
        assert_eq!(rules.check(listing).len(), 1);
    }
    let mut g = c.benchmark_group("closest_value");
    g.bench_function("normal_value_20k_values", |b| {
        b.iter(|| rules.check(black_box(&normal)))
    });
    g.bench_function("32kb_value_20k_values", |b| {
        b.iter(|| rules.check(black_box(&long)))
    });
    g.bench_function("32kb_near_value_20k_values", |b| {
        b.iter(|| rules.check(black_box(&near)))
    });
    g.finish();
}

criterion_group!(benches, diff, closest);
criterion_main!(benches);
