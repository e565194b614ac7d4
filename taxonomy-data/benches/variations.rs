//! A leaf's listing-structure policy (`LeafCategory::variations_supported`,
//! getListingStructurePolicies' `variationsSupported` compiled in, one bit a category)
//! against `Category::is_leaf`, over the same ids of the US site in the same run: the issue's
//! bar is within 2× of `is_leaf`.
//!
//! - `by_id`: from a category id, `Site::category` (the perfect-hash lookup) then `is_leaf`,
//!   against the same lookup then `as_leaf` and `variations_supported`;
//! - `resolved`: on categories already looked up, `is_leaf` against `variations_supported`.
//!
//! The committed snapshots carry no listing-structure policies, so a plain run measures the
//! "not known" path. To measure a site whose every leaf has one, build against a snapshots
//! directory with a listing-structure file for every leaf (`EBAY_US.structure.json`, as
//! `snapshot refresh` writes it):
//! `TAXONOMY_SNAPSHOTS_DIR=/abs/dir cargo bench -p taxonomy-data --bench variations`. The
//! bench says which it measured.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use taxonomy_data::{Category, LeafCategory, Site};

fn variations(c: &mut Criterion) {
    let site = Site::Us;
    let ids: Vec<u32> = site.categories().map(Category::id).collect();
    let categories: Vec<Category> = site.categories().collect();
    let known = site
        .leaves()
        .filter(|l| l.variations_supported().is_some())
        .count();
    eprintln!(
        "{site}: {} categories, {} leaves, {known} with a compiled-in variationsSupported ({}, {} bytes)",
        ids.len(),
        site.leaf_count(),
        if site.has_structure_policies() {
            "listing-structure file"
        } else {
            "no listing-structure file"
        },
        site.structure_table_bytes()
    );
    let mut group = c.benchmark_group("variations_us");
    group.bench_function("by_id/is_leaf", |b| {
        b.iter(|| {
            let mut n = 0_usize;
            for &id in black_box(&ids) {
                n += usize::from(site.category(id).is_some_and(Category::is_leaf));
            }
            n
        })
    });
    group.bench_function("by_id/variations_supported", |b| {
        b.iter(|| {
            let mut n = 0_usize;
            for &id in black_box(&ids) {
                let supported = site
                    .category(id)
                    .and_then(Category::as_leaf)
                    .and_then(LeafCategory::variations_supported);
                n += usize::from(supported == Some(true));
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
    group.bench_function("resolved/variations_supported", |b| {
        b.iter(|| {
            let mut n = 0_usize;
            for c in black_box(&categories) {
                let supported = c.as_leaf().and_then(LeafCategory::variations_supported);
                n += usize::from(supported == Some(true));
            }
            n
        })
    });
    group.finish();
}

criterion_group!(benches, variations);
criterion_main!(benches);
