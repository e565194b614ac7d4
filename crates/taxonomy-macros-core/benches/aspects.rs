//! `aspects!`'s expansion against `category!`'s on the same category, measured in the same
//! run: 100 expansions of each, as a crate with 100 listings would make. In the dev profile,
//! as proc macros are built:
//!
//! ```text
//! cargo bench -p taxonomy-macros-core --profile dev --bench aspects
//! ```
//!
//! Groups (`hundred`): `category` (100 × `category!("179")`), `aspects` (100 × a valid
//! listing of 179: literals and one expression), `aspects_error` (100 × a listing with a value
//! outside a selection-only list, whose message lists the closest allowed values). Goal:
//! `aspects` under 2× `category`; the error case as fast as a correct one.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use quote::quote;
use taxonomy_macros_core::{expand, expand_aspects};

fn hundred(c: &mut Criterion) {
    let mut group = c.benchmark_group("hundred");
    group.measurement_time(Duration::from_secs(5));
    group.bench_function("category", |b| {
        b.iter(|| {
            for _ in 0..100 {
                black_box(expand(black_box(quote!(EBAY_US, "179"))));
            }
        })
    });
    group.bench_function("aspects", |b| {
        b.iter(|| {
            for _ in 0..100 {
                black_box(expand_aspects(black_box(quote!(EBAY_US, "179", {
                    "Brand": "Dell",
                    "Type": "Desktop",
                    "Features": ["Bluetooth", "Wi-Fi"],
                    "Model": model,
                }))));
            }
        })
    });
    group.bench_function("aspects_error", |b| {
        b.iter(|| {
            for _ in 0..100 {
                black_box(expand_aspects(black_box(quote!(EBAY_US, "179", {
                    "Brand": "Dell",
                    "Type": "Desktops",
                    "Features": ["Bluetooth", "Wi-Fi"],
                    "Model": model,
                }))));
            }
        })
    });
    group.finish();
}

criterion_group!(benches, hundred);
criterion_main!(benches);
