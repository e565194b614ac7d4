//! `CategoryTree::validate` on 100,000 categories under one parent against 100,000 categories
//! in a balanced tree (eight children per category), measured in the same run. Target: the
//! wide tree within 3× the balanced one (validation used to be quadratic in the number of
//! children of one category).
//!
//! Run with `cargo bench --bench validate`.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use taxonomy_tree::tree::{Category, CategoryTree, TreeMeta};

const N: u32 = 100_000;

/// A tree of `N` categories besides the root, where category `id`'s parent is `parent(id)`
/// (below `id`); leaves are the categories without children.
fn tree(parent: impl Fn(u32) -> u32) -> CategoryTree {
    let mut categories: Vec<Category> = (0..=N)
        .map(|id| Category {
            id,
            name: if id == 0 {
                "Root".into()
            } else {
                format!("Category {id}")
            },
            parent: (id > 0).then(|| parent(id)),
            leaf: false,
            children: Vec::new(),
        })
        .collect();
    for id in 1..=N {
        let p = parent(id) as usize;
        categories[p].children.push(id);
    }
    for c in categories.iter_mut().skip(1) {
        c.leaf = c.children.is_empty();
    }
    let tree = CategoryTree {
        meta: TreeMeta {
            tree_id: 0,
            marketplace_id: "EBAY_US".into(),
            language: "en-US".into(),
            version: "bench".into(),
            taken_at: "2026-01-01".into(),
            source: "bench".into(),
            note: None,
            complete: true,
        },
        categories,
    };
    tree.validate().expect("the bench trees are valid");
    tree
}

fn validate(c: &mut Criterion) {
    // One top-level category with every other category as its child.
    let wide = tree(|id| if id == 1 { 0 } else { 1 });
    // Eight children per category, breadth first: 100,000 categories in 6 levels.
    let balanced = tree(|id| (id - 1) / 8);
    let mut g = c.benchmark_group("validate_100k");
    g.throughput(Throughput::Elements(u64::from(N)));
    g.bench_function("balanced_8_ary", |b| {
        b.iter(|| black_box(&balanced).validate())
    });
    g.bench_function("one_parent", |b| b.iter(|| black_box(&wide).validate()));
    g.finish();
}

criterion_group!(benches, validate);
criterion_main!(benches);
