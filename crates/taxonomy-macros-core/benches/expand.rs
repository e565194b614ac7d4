//! `category!`'s expansion, called directly, against the old full-scan suggestions (the
//! `baseline` module below, a copy of what the macro did before) measured in the same run.
//!
//! Proc macros and their dependencies are built without optimisation in the default dev
//! profile, so measure in that profile (cargo 1.95 accepts `--profile` for `cargo bench`):
//!
//! ```text
//! cargo bench -p taxonomy-macros-core --profile dev --bench expand
//! ```
//!
//! Groups:
//! - `error`: each kind of mistake, new against `baseline` where the old code differed
//!   (unknown path, a typo deep in the tree, a shortened name, unknown id); `not_a_leaf` is
//!   the same code as before. Warm: the per-site name index is already built.
//! - `valid`: one id, one path (the same lookups as before).
//! - `thousand_valid`: 1,000 distinct leaves of the US site, by id and by path.
//! - `first_error`: a fresh process expanding one error, against `spawn_only`, the cost of
//!   the process itself: `missing_level` and `leaf_name_typo` include building the per-site
//!   name index, once per process as in a compiler process.
//!
//! Targets: every error at most 50 ms, a valid use at most 1 ms.

use std::hint::black_box;
use std::process::Command;

use criterion::{BenchmarkId, Criterion, criterion_group};
use proc_macro2::TokenStream;
use quote::quote;
use syn::LitStr;
use taxonomy_data::Site;
use taxonomy_macros_core::expand;

const CHILD_ENV: &str = "TAXONOMY_MACROS_BENCH_CHILD";

/// The mistakes measured: (name, site, literal, whether the old code differed).
const ERRORS: [(&str, Site, &str, bool); 8] = [
    (
        "unknown_path",
        Site::Us,
        "Cell Phones & Accessories > Cell Phone & Smartphones",
        true,
    ),
    (
        "deep_typo",
        Site::Us,
        "Collectibles > Advertising > Soda > Fountian",
        true,
    ),
    (
        "shortened_name",
        Site::Us,
        "Toys & Hobbies > Action Figures > Fantasy Figure",
        true,
    ),
    // These two need the per-site index of every name (the fallback of the walk).
    (
        "missing_level",
        Site::Us,
        "Cell Phones & Accessories > Cases, Covers & Skins",
        true,
    ),
    ("leaf_name_typo", Site::Us, "Cell Phones & Smartphons", true),
    ("unknown_id", Site::Us, "93555", true),
    ("not_a_leaf", Site::Us, "15032", false),
    // The largest subtree: counting its leaves is the slowest not-a-leaf error.
    ("not_a_leaf_top_level", Site::Us, "1", false),
];

fn invocation(site: Site, literal: &str) -> TokenStream {
    let site = syn::Ident::new(site.marketplace_id(), proc_macro2::Span::call_site());
    let literal = LitStr::new(literal, proc_macro2::Span::call_site());
    quote!(#site, #literal)
}

fn is_error(tokens: &TokenStream) -> bool {
    tokens.to_string().contains("compile_error")
}

fn errors(c: &mut Criterion) {
    let mut g = c.benchmark_group("error");
    g.sample_size(10);
    for (name, site, literal, differs) in ERRORS {
        let input = invocation(site, literal);
        assert!(is_error(&expand(input.clone())), "{name} should fail");
        g.bench_with_input(BenchmarkId::new("new", name), &input, |b, input| {
            b.iter(|| expand(black_box(input.clone())))
        });
        if differs {
            g.bench_with_input(
                BenchmarkId::new("baseline", name),
                &literal,
                |b, literal| b.iter(|| baseline::message(site, black_box(literal))),
            );
        }
    }
    g.finish();
}

fn valid(c: &mut Criterion) {
    let mut g = c.benchmark_group("valid");
    for (name, literal) in [
        ("id", "9355"),
        (
            "path",
            "Cell Phones & Accessories > Cell Phones & Smartphones",
        ),
    ] {
        let input = invocation(Site::Us, literal);
        assert!(!is_error(&expand(input.clone())));
        g.bench_with_input(BenchmarkId::from_parameter(name), &input, |b, input| {
            b.iter(|| expand(black_box(input.clone())))
        });
    }
    g.finish();
}

fn thousand_valid(c: &mut Criterion) {
    let leaves: Vec<_> = Site::Us.leaves().take(1000).collect();
    assert_eq!(leaves.len(), 1000);
    let ids: Vec<TokenStream> = leaves
        .iter()
        .map(|l| invocation(Site::Us, &l.id().to_string()))
        .collect();
    let paths: Vec<TokenStream> = leaves
        .iter()
        .map(|l| invocation(Site::Us, &l.path().to_string()))
        .collect();
    let mut g = c.benchmark_group("thousand_valid");
    g.sample_size(10);
    for (name, inputs) in [("ids", &ids), ("paths", &paths)] {
        assert!(inputs.iter().all(|i| !is_error(&expand(i.clone()))));
        g.bench_with_input(BenchmarkId::from_parameter(name), inputs, |b, inputs| {
            b.iter(|| {
                for input in inputs {
                    black_box(expand(input.clone()));
                }
            })
        });
    }
    g.finish();
}

fn first_error(c: &mut Criterion) {
    let exe = std::env::current_exe().expect("the bench executable");
    let mut g = c.benchmark_group("first_error");
    g.sample_size(10);
    for mode in [
        "spawn_only",
        "unknown_path",
        "missing_level",
        "leaf_name_typo",
        "unknown_id",
    ] {
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

/// The child process of `first_error`: one expansion, then exit.
fn child(mode: &str) {
    if mode == "spawn_only" {
        return;
    }
    let (_, site, literal, _) = ERRORS
        .into_iter()
        .find(|(name, ..)| *name == mode)
        .expect("a known child mode");
    assert!(is_error(&expand(invocation(site, literal))));
}

criterion_group!(benches, errors, valid, thousand_valid, first_error);

fn main() {
    if let Ok(mode) = std::env::var(CHILD_ENV) {
        child(&mode);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}

/// The suggestions as `category!` computed them before: every path of the site compared
/// with the text by edit distance, and every id with the id.
mod baseline {
    use std::collections::HashSet;
    use std::sync::OnceLock;

    use taxonomy_data::{Category, Site};

    const SHOWN: usize = 5;

    /// The old error message for an unknown id or path.
    pub fn message(site: Site, text: &str) -> String {
        match text.trim().parse::<u32>() {
            Ok(id) => unknown_id_message(site, id),
            Err(_) => unknown_path_message(site, text),
        }
    }

    fn unknown_id_message(site: Site, id: u32) -> String {
        let wanted = id.to_string();
        let mut close: Vec<Category> = site
            .categories()
            .filter(|c| strsim::damerau_levenshtein(&wanted, &c.id().to_string()) == 1)
            .collect();
        close.sort_by_key(|c| (!c.is_leaf(), c.id()));
        let mut message = format!("{site} has no category {id}");
        for c in close.iter().take(SHOWN) {
            message.push_str(&format!("\n  {} ({})", c.id(), c.path()));
        }
        let elsewhere: Vec<String> = Site::compiled_in()
            .filter(|&other| other != site)
            .filter_map(|other| {
                other
                    .category(id)
                    .map(|c| format!("{other} ({})", c.name()))
            })
            .collect();
        message.push_str(&elsewhere.join(", "));
        message
    }

    fn paths(site: Site) -> &'static [(String, Category)] {
        static PATHS: [OnceLock<Vec<(String, Category)>>; 4] = [const { OnceLock::new() }; 4];
        let slot = &PATHS[Site::ALL.iter().position(|&s| s == site).unwrap_or(0)];
        slot.get_or_init(|| {
            site.categories()
                .map(|c| (c.path().to_string().to_lowercase(), c))
                .collect()
        })
    }

    fn normalize(path: &str) -> String {
        path.split('>')
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join(" > ")
            .to_lowercase()
    }

    fn unknown_path_message(site: Site, text: &str) -> String {
        let wanted = normalize(text);
        let last = wanted.rsplit(" > ").next().unwrap_or(&wanted).to_string();
        let mut seen = HashSet::new();
        let mut suggestions: Vec<(f64, Category)> = Vec::new();
        for (path, category) in paths(site) {
            let same_name = path.rsplit(" > ").next() == Some(last.as_str());
            let score = if same_name {
                2.0
            } else {
                strsim::normalized_damerau_levenshtein(&wanted, path)
            };
            if score >= 0.85 && seen.insert(category.id()) {
                suggestions.push((score, *category));
            }
        }
        suggestions.sort_by(|a, b| {
            b.0.partial_cmp(&a.0)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(b.1.is_leaf().cmp(&a.1.is_leaf()))
                .then(a.1.id().cmp(&b.1.id()))
        });
        let mut message = format!("{site} has no category at the path {text:?}");
        for (_, c) in suggestions.iter().take(SHOWN) {
            message.push_str(&format!("\n  \"{}\" ({})", c.path(), c.id()));
        }
        message
    }
}
