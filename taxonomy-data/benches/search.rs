//! `Site::search` over the US site (15,111 leaves), against baselines measured in the same run:
//!
//! - `leaf_lookup`: one `LeafCategory::new` (the perfect-hash lookup by id), the floor of any
//!   offline access to the tables;
//! - `linear_scan`: every leaf's lower-cased name searched for each query word (substring
//!   match, names lower-cased once before the run): what a program without the index would do,
//!   with no ranking at all.
//!
//! The German site's group (`search_de`) measures sellers' own words: compounds the index
//! lacks ("grafikkarte", cut into its parts), compounds found by their ending ("handyhülle"),
//! a word that matches nothing ("smartfone": every cut tried), a 42-letter compound (the
//! most cuts), and sixteen made-up 40-letter words (the cuts' look-ups capped); `nearest_words` is what a program calls after a search that found nothing.
//!
//! Run with `cargo bench -p taxonomy-data --bench search`; the README's goal is under 50 µs a query.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use taxonomy_data::{LeafCategory, Site};

/// Typical queries, a full path, and the most common word of the site ("other", 1,297
/// categories: the worst case of the merge).
const QUERIES: [&str; 5] = [
    "iphone case",
    "smartphones",
    "womens running shoes",
    "Cell Phones & Accessories > Cell Phone Accessories > Cases, Covers & Skins",
    "other",
];

fn search(c: &mut Criterion) {
    let site = Site::Us;
    let leaves: Vec<(LeafCategory, String)> = site
        .leaves()
        .map(|leaf| (leaf, leaf.name().to_lowercase()))
        .collect();
    let mut group = c.benchmark_group("search_us");
    group.bench_function("leaf_lookup", |b| {
        b.iter(|| LeafCategory::new(black_box(site), black_box(9355)))
    });
    for query in QUERIES {
        let label = &query[..query.len().min(24)];
        group.bench_with_input(BenchmarkId::new("search", label), query, |b, q| {
            b.iter(|| {
                // The ten a listing tool shows.
                let mut found = [0_u32; 10];
                for (slot, leaf) in found.iter_mut().zip(black_box(site).search(black_box(q))) {
                    *slot = leaf.id();
                }
                found
            })
        });
        let words: Vec<String> = query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        group.bench_with_input(
            BenchmarkId::new("linear_scan", label),
            &words,
            |b, words| {
                b.iter(|| {
                    leaves
                        .iter()
                        .filter(|(_, name)| words.iter().any(|w| name.contains(w.as_str())))
                        .count()
                })
            },
        );
    }
    group.finish();
    let site = Site::De;
    let mut group = c.benchmark_group("search_de");
    group.bench_function("leaf_lookup", |b| {
        b.iter(|| LeafCategory::new(black_box(site), black_box(27386)))
    });
    for query in QUERIES_DE {
        let cut = (0..=query.len().min(24))
            .rev()
            .find(|&i| query.is_char_boundary(i));
        let label = &query[..cut.unwrap_or(0)];
        group.bench_with_input(BenchmarkId::new("search", label), query, |b, q| {
            b.iter(|| {
                let mut found = [0_u32; 10];
                for (slot, leaf) in found.iter_mut().zip(black_box(site).search(black_box(q))) {
                    *slot = leaf.id();
                }
                found
            })
        });
    }
    group.bench_function("nearest_words/smartfone", |b| {
        b.iter(|| {
            black_box(site)
                .nearest_words(black_box("smartfone"))
                .count()
        })
    });
    group.finish();
}

/// Sellers' words on the German site (`taxonomy-data/tests/it/search.rs` has what each finds).
const QUERIES_DE: [&str; 8] = [
    "grafikkarte",
    "handyhülle",
    "fahrrad",
    "herren winterjacke",
    "damen handtasche",
    "smartfone",
    "donaudampfschifffahrtsgesellschaftskapitän",
    // Sixteen made-up words of 40 letters: the cuts' look-ups are capped.
    "qwertzuiopasdfghjklyxcvbnmqwertzuiopasdf wertzuiopasdfghjklyxcvbnmqwertzuiopasdfg \
     ertzuiopasdfghjklyxcvbnmqwertzuiopasdfgh rtzuiopasdfghjklyxcvbnmqwertzuiopasdfghj \
     tzuiopasdfghjklyxcvbnmqwertzuiopasdfghjk zuiopasdfghjklyxcvbnmqwertzuiopasdfghjkl \
     uiopasdfghjklyxcvbnmqwertzuiopasdfghjkly iopasdfghjklyxcvbnmqwertzuiopasdfghjklyx \
     opasdfghjklyxcvbnmqwertzuiopasdfghjklyxc pasdfghjklyxcvbnmqwertzuiopasdfghjklyxcv \
     asdfghjklyxcvbnmqwertzuiopasdfghjklyxcvb sdfghjklyxcvbnmqwertzuiopasdfghjklyxcvbn \
     dfghjklyxcvbnmqwertzuiopasdfghjklyxcvbnm fghjklyxcvbnmqwertzuiopasdfghjklyxcvbnmq \
     ghjklyxcvbnmqwertzuiopasdfghjklyxcvbnmqw hjklyxcvbnmqwertzuiopasdfghjklyxcvbnmqwe",
];

criterion_group!(benches, search);
criterion_main!(benches);
