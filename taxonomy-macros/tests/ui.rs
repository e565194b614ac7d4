//! Compile-time behaviour of `category!` and `aspects!`: every accepted form compiles and gives
//! the right value, every mistake fails with the message in `tests/ui/*.stderr`.
//! Refresh the expected output with `TRYBUILD=overwrite cargo test -p taxonomy-macros --test ui`,
//! then review it.
//!
//! A test of this crate, not of the workspace's root package: trybuild compiles the cases
//! with every dev-dependency of the package it runs in, and this one's are the data crate and
//! what the test itself needs (the root package's pull in PostgreSQL, axum and the fake).
//!
//! The cases build against a snapshots directory this test writes (the build script reads
//! `TAXONOMY_SNAPSHOTS_DIR` instead of `snapshots/`): the committed snapshots, byte for byte,
//! plus `EBAY_US.expired.json` mapping the expired id 700001 (in no committed tree) to leaf
//! 9355, for `fail_expired.rs`. The committed snapshots carry no expired-category mapping (we
//! have no real data and invent none), and every tree is the committed one, so the other
//! cases see exactly what a plain build sees. The pinned aspects (`pinned/`, `aspects!`'s
//! cases) are copied byte for byte, and EBAY_US 27386's real answer is pinned beside them
//! (`variations!`'s cases: [`write_graphics_cards_pin`]). `EBAY_US.conditions.json` holds a few condition policies
//! written here (`condition!`'s cases; the committed sites carry none: we have no real answer
//! and invent none as eBay's): see [`write_condition_policies`]. The other sites have none.

use std::path::{Path, PathBuf};

use marketplaces::{Condition, Marketplace};
use taxonomy_tree::conditions::{self, ConditionEntry, ConditionRule, DescriptorEntry};
use taxonomy_tree::expired::{self, ExpiredMapping};
use taxonomy_tree::snapshot;

/// The repository's committed snapshots directory.
fn snapshots_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../snapshots")
}

/// Writes `bytes` to `path` unless it already holds them (so cargo sees no change).
fn write_if_changed(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).ok().as_deref() != Some(bytes) {
        std::fs::write(path, bytes).unwrap();
    }
}

/// The snapshots directory of the cases, at a stable path so later runs rebuild nothing.
fn snapshots_with_an_expired_category() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui-snapshots");
    std::fs::create_dir_all(&dir).unwrap();
    for site in snapshot::sites_in(&snapshots_dir()) {
        let name = site.snapshot_file_name();
        let bytes = std::fs::read(snapshots_dir().join(name)).unwrap();
        write_if_changed(&dir.join(name), &bytes);
    }
    // The pinned aspects (`aspects!`'s cases), byte for byte.
    let pinned = dir.join("pinned");
    std::fs::create_dir_all(&pinned).unwrap();
    for entry in std::fs::read_dir(snapshots_dir().join("pinned")).unwrap() {
        let path = entry.unwrap().path();
        write_if_changed(
            &pinned.join(path.file_name().unwrap()),
            &std::fs::read(&path).unwrap(),
        );
    }
    write_graphics_cards_pin(&pinned);
    let us = dir.join(Marketplace::Us.snapshot_file_name());
    let file = expired::from_answer(
        [ExpiredMapping {
            from: 700_001,
            to: 9355,
        }],
        &snapshot::read(&snapshots_dir().join(Marketplace::Us.snapshot_file_name())).unwrap(),
        "written by tests/ui.rs",
        &expired::path_beside(&us),
    )
    .unwrap();
    write_if_changed(
        &expired::path_beside(&us),
        expired::to_string(&file).as_bytes(),
    );
    write_condition_policies(&us);
    dir
}

/// `pinned/EBAY_US-27386.json` (Graphics/Video Cards), for `variations!`'s cases: no committed
/// pinned category enables an aspect for variations. The answer is eBay's real
/// getItemAspectsForCategory answer of 2023-11-22 (`tests/fixtures/aspects/`, see its
/// PROVENANCE.md), which names no tree version: it is pinned here, for these cases only, with
/// its date and "not recorded" as its tree version, not committed to `snapshots/pinned/`.
fn write_graphics_cards_pin(pinned: &Path) {
    let answer = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/fixtures/aspects/ebay-us-27386-graphics-cards.json"),
    )
    .unwrap();
    let file = format!(
        "{{\n  \"format\": 1,\n  \"marketplaceId\": \"EBAY_US\",\n  \"categoryTreeId\": 0,\n  \"categoryTreeVersion\": \"not recorded (answer of 2023-11-22)\",\n  \"categoryId\": 27386,\n  \"takenAt\": \"2023-11-22\",\n  \"source\": \"getItemAspectsForCategory (tests/fixtures/aspects/ebay-us-27386-graphics-cards.json)\",\n  \"fetchedFrom\": \"api.ebay.com\",\n  \"answer\": {}\n}}\n",
        answer.trim()
    );
    write_if_changed(&pinned.join("EBAY_US-27386.json"), file.as_bytes());
}

/// A condition without descriptors.
fn plain(condition: Condition) -> ConditionEntry {
    ConditionEntry {
        condition,
        descriptors: Vec::new(),
    }
}

/// A descriptor taking one of `values`.
fn descriptor(id: u32, name: &str, required: bool, values: &[(u32, &str)]) -> DescriptorEntry {
    DescriptorEntry {
        id,
        name: name.into(),
        required,
        multiple: false,
        free_text: false,
        max_length: None,
        values: values.iter().map(|&(id, v)| (id, v.into())).collect(),
        requires: Vec::new(),
    }
}

/// `EBAY_US.conditions.json` beside the US tree at `us`, with policies written by this test
/// (not eBay's; shaped like getItemConditionPolicies' answers): 9355 requires a condition
/// and allows new, refurbished, used good and for parts; 179 allows new and used good, not
/// required; 172009 (Gift Cards) takes none; 261328 (Trading Card Singles) allows graded
/// (LIKE_NEW, with grader, grade and certification number) and ungraded (USED_VERY_GOOD,
/// with the card's condition). No other leaf is named: 111418 has no known policy.
///
/// `madeUp` is false although the policies are made up: a made-up file makes taxonomy-data's
/// build print a `cargo:warning`, which would be one more thing every case's build shows.
/// The file's `source` says who wrote it.
fn write_condition_policies(us: &Path) {
    use Condition::*;
    let phones = ConditionRule {
        required: true,
        conditions: [
            New,
            NewOther,
            ExcellentRefurbished,
            UsedGood,
            ForPartsOrNotWorking,
        ]
        .map(plain)
        .to_vec(),
    };
    let desktops = ConditionRule {
        required: false,
        conditions: vec![plain(New), plain(UsedGood)],
    };
    let gift_cards = ConditionRule {
        required: false,
        conditions: Vec::new(),
    };
    let graded = ConditionEntry {
        condition: LikeNew,
        descriptors: vec![
            descriptor(
                27501,
                "Professional Grader",
                true,
                &[(275010, "PSA"), (275011, "BCCG")],
            ),
            descriptor(27502, "Grade", true, &[(275020, "10"), (275021, "9.5")]),
            DescriptorEntry {
                free_text: true,
                max_length: Some(30),
                ..descriptor(27503, "Certification Number", false, &[])
            },
        ],
    };
    let ungraded = ConditionEntry {
        condition: UsedVeryGood,
        descriptors: vec![descriptor(
            40001,
            "Card Condition",
            true,
            &[(400010, "Near mint or better"), (400011, "Excellent")],
        )],
    };
    let cards = ConditionRule {
        required: true,
        conditions: vec![graded, ungraded],
    };
    let tree = snapshot::read(us).unwrap();
    let (file, left_out) = conditions::from_answer(
        [
            (9355, phones),
            (179, desktops),
            (172009, gift_cards),
            (261328, cards),
        ],
        &tree,
        "written by taxonomy-macros/tests/ui.rs (not eBay's policies)",
        false,
        &conditions::path_beside(us),
    )
    .unwrap();
    assert_eq!(left_out, conditions::LeftOut::default());
    write_if_changed(
        &conditions::path_beside(us),
        conditions::to_string(&file).as_bytes(),
    );
}

/// The first ```` ```rust,ignore ```` (or ```` ```ignore ````) block of `text` after `marker`,
/// without its fences and its `prefix` (`"/// "` in a doc comment).
fn ignored_block(text: &str, marker: &str, prefix: &str) -> String {
    let after = text
        .split_once(marker)
        .unwrap_or_else(|| panic!("no {marker:?}"))
        .1;
    let mut lines = after.lines().map(|line| {
        let line = line.strip_prefix(prefix).unwrap_or(line);
        line.strip_prefix(prefix.trim_end()).unwrap_or(line)
    });
    lines
        .by_ref()
        .find(|line| line.starts_with("```") && line.contains("ignore"))
        .unwrap_or_else(|| panic!("no ignored block after {marker:?}"));
    lines
        .take_while(|line| !line.starts_with("```"))
        .map(|line| format!("{line}\n"))
        .collect()
}

/// The typed listing examples that cannot be doc tests (`condition!` needs condition
/// policies, `variations!` a category with aspects enabled for variations, which the
/// committed snapshots lack): the README's `typed listing` recipe and `ListingBuilder`'s doc
/// example, the README's and `variations!`'s examples of variations, each written as a pass
/// case under the target directory.
fn documented_listing_cases() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let builder =
        std::fs::read_to_string(root.join("crates/marketplace-listing/src/builder.rs")).unwrap();
    let macros = std::fs::read_to_string(root.join("taxonomy-macros/src/lib.rs")).unwrap();
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui-documented");
    std::fs::create_dir_all(&dir).unwrap();
    [
        (
            "readme_typed_listing.rs",
            ignored_block(&readme, "<!-- recipe: typed listing -->", ""),
        ),
        (
            "listing_builder_doc.rs",
            ignored_block(&builder, "/// Builds a [`Listing`]", "/// "),
        ),
        // `variations!` needs a category enabling aspects for variations, pinned only here.
        (
            "readme_variations.rs",
            ignored_block(&readme, "In typed code the axes are checked at compile time", ""),
        ),
        (
            "variations_doc.rs",
            ignored_block(&macros, "/// With a category whose pinned rules enable", "/// "),
        ),
    ]
    .into_iter()
    .map(|(name, block)| {
        let path = dir.join(name);
        let check = if name.contains("variations") {
            "assert_eq!(varies_by.specifications[1].values, [\"Fan with Heatsink\", \"Water Cooler\"]);"
        } else {
            "assert_eq!(listing.inventory_item.condition, Some(marketplace_listing::Condition::New));"
        };
        let case = format!(
            "fn main() -> Result<(), Box<dyn std::error::Error>> {{\n{block}{check}\nOk(())\n}}\n"
        );
        write_if_changed(&path, case.as_bytes());
        path
    })
    .collect()
}

#[test]
#[allow(unsafe_code)]
fn category_macro_ui() {
    let dir = snapshots_with_an_expired_category();
    // SAFETY: this binary has this one test, so no other thread reads the environment while
    // it is set; trybuild's cargo inherits it.
    unsafe { std::env::set_var("TAXONOMY_SNAPSHOTS_DIR", &dir) };
    let cases = trybuild::TestCases::new();
    cases.pass("tests/ui/pass_*.rs");
    for case in documented_listing_cases() {
        cases.pass(case);
    }
    cases.compile_fail("tests/ui/fail_*.rs");
}
