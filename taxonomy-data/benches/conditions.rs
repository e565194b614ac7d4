//! A leaf's condition policy (`LeafCategory::condition_policy`, getItemConditionPolicies
//! compiled in) against `Category::is_leaf`, over the same ids of the US site in the same
//! run: the bar is within 2× of `is_leaf`.
//!
//! - `by_id`: from a category id, `Site::category` (the perfect-hash lookup) then `is_leaf`,
//!   against the same lookup then `as_leaf` and `condition_policy`;
//! - `resolved`: on categories already looked up, `is_leaf` against `condition_policy`.
//!
//! The committed snapshots carry no condition policies, so a plain run measures the "no
//! known policy" path. To measure a site whose every leaf has one, build against a snapshots
//! directory with a condition-policy file for every leaf (tests/common/conditions.rs's
//! `write_every_leaf_policies` writes one):
//! `TAXONOMY_SNAPSHOTS_DIR=/abs/dir cargo bench -p taxonomy-data --bench conditions`. The
//! bench says which it measured.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use taxonomy_data::{Category, LeafCategory, Site};

fn conditions(c: &mut Criterion) {
    let site = Site::Us;
    let ids: Vec<u32> = site.categories().map(Category::id).collect();
    let categories: Vec<Category> = site.categories().collect();
    let with_policy = site
        .leaves()
        .filter(|l| l.condition_policy().is_some())
        .count();
    eprintln!(
        "{site}: {} categories, {} leaves, {with_policy} with a compiled-in condition policy ({})",
        ids.len(),
        site.leaf_count(),
        site.condition_policies_source()
            .unwrap_or("no condition-policy file")
    );
    let mut group = c.benchmark_group("conditions_us");
    group.bench_function("by_id/is_leaf", |b| {
        b.iter(|| {
            let mut n = 0_usize;
            for &id in black_box(&ids) {
                n += usize::from(site.category(id).is_some_and(Category::is_leaf));
            }
            n
        })
    });
    group.bench_function("by_id/condition_policy", |b| {
        b.iter(|| {
            let mut n = 0_usize;
            for &id in black_box(&ids) {
                let policy = site
                    .category(id)
                    .and_then(Category::as_leaf)
                    .and_then(LeafCategory::condition_policy);
                n += usize::from(policy.is_some_and(|p| p.required));
            }
            n
        })
    });
    group.bench_function("resolved/is_leaf", |b| {
        b.iter(|| {
            let mut n = 0_usize;
            for c in black_box(&categories) {
                n += usize::from(c.is_leaf());
            }
            n
        })
    });
    group.bench_function("resolved/condition_policy", |b| {
        b.iter(|| {
            let mut n = 0_usize;
            for c in black_box(&categories) {
                let policy = c.as_leaf().and_then(LeafCategory::condition_policy);
                n += usize::from(policy.is_some_and(|p| p.required));
            }
            n
        })
    });
    group.finish();
}

criterion_group!(benches, conditions);
criterion_main!(benches);
