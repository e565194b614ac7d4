//! The perfect-hash generator succeeds for every set of distinct ids below `u32::MAX`, and
//! its tables find every id and no other: a property test over adversarial id sets
//! (arithmetic progressions with power-of-two steps, dense runs, random sets, up to ~100k
//! ids), and the code generator on a valid tree whose ids used to defeat every seed. Pinned
//! aspects' texts likewise: any distinct values (those whose old 32-bit keys collided, sets of
//! 30k) compile, and the tables find each.

use std::collections::HashSet;

use marketplaces::Marketplace;
use taxonomy_codegen::codegen::{SiteData, generate};
use taxonomy_codegen::phash::PerfectHash;
use taxonomy_data::aspects::{
    Format, ListingAspects, PinnedAspect, PinnedRules, RuleSet as _, TextTable, key,
};
use taxonomy_tree::tree::{Category, CategoryTree, TreeMeta};

/// A fixed pseudo-random sequence (xorshift64), so every run checks the same sets.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// An id in `0..u32::MAX`.
    fn id(&mut self) -> u32 {
        (self.next() % u64::from(u32::MAX)) as u32
    }
}

/// Builds the tables for `ids` (distinct, below `u32::MAX`; position = index) and checks that
/// each id is found at its position and each of `absent` is not found.
fn check(label: &str, ids: &[u32], absent: impl IntoIterator<Item = u32>) {
    let entries: Vec<(u32, u32)> = ids
        .iter()
        .enumerate()
        .map(|(i, &id)| (id, i as u32))
        .collect();
    let ph =
        PerfectHash::build(&entries).unwrap_or_else(|e| panic!("{label}: {} ids: {e}", ids.len()));
    for &(id, position) in &entries {
        assert_eq!(ph.get(id), Some(position), "{label}: id {id}");
    }
    let present: HashSet<u32> = ids.iter().copied().collect();
    for id in absent {
        if !present.contains(&id) {
            assert_eq!(ph.get(id), None, "{label}: absent id {id} was found");
        }
    }
}

/// `len` ids `start, start + step, …`, as many as fit below `u32::MAX`.
fn progression(start: u32, step: u64, len: usize) -> Vec<u32> {
    (0..len as u64)
        .map(|i| u64::from(start) + i * step)
        .take_while(|&id| id < u64::from(u32::MAX))
        .map(|id| id as u32)
        .collect()
}

#[test]
fn ids_agreeing_in_their_low_bits_are_placed() {
    // Each of these sets made the old generator fail for every seed.
    check(
        "1, 1+2^22, 1+2^23",
        &[1, 1 + (1 << 22), 1 + (1 << 23)],
        [2, 1 + (1 << 21)],
    );
    check(
        "64 ids spaced 2^26 apart",
        &progression(1, 1 << 26, 64),
        progression(2, 1 << 26, 64),
    );
}

#[test]
fn progressions_with_every_power_of_two_step() {
    let mut rng = Rng(0x0005_EED0_F1D5);
    for k in 0..32 {
        let step = 1_u64 << k;
        for len in [2, 3, 17, 64, 1_000, 100_000] {
            let random_start = rng.id() % 1024;
            let starts: &[u32] = if len < 100_000 {
                &[0, 1, random_start]
            } else {
                &[random_start]
            };
            for &start in starts {
                let ids = progression(start, step, len);
                // Absent: between the members, and just past the end.
                let absent = ids
                    .iter()
                    .take(2_000)
                    .flat_map(|&id| [id.wrapping_add(1), id.wrapping_sub(1), id ^ (1 << 31)])
                    .filter(|&id| id != u32::MAX);
                check(
                    &format!("start {start}, step 2^{k}, len {len}"),
                    &ids,
                    absent,
                );
            }
        }
    }
}

#[test]
fn dense_runs_and_the_extremes() {
    check(
        "0..100_000",
        &(0..100_000).collect::<Vec<_>>(),
        100_000..101_000,
    );
    check(
        "the top of the range",
        &(u32::MAX - 50_000..u32::MAX).collect::<Vec<_>>(),
        u32::MAX - 51_000..u32::MAX - 50_000,
    );
    check("a single id", &[0], [1, 2, u32::MAX - 1]);
    check("u32::MAX - 1", &[u32::MAX - 1], [0, 1]);
    check("no ids", &[], [0, 1, 9355]);
    // Several dense runs far apart.
    let runs: Vec<u32> = (0..8_u32)
        .flat_map(|r| (0..5_000).map(move |i| r * (1 << 29) + i))
        .collect();
    check(
        "8 runs of 5000",
        &runs,
        (0..8_u32).map(|r| r * (1 << 29) + 5_000),
    );
}

#[test]
fn random_sets() {
    let mut rng = Rng(0xC0FF_EE12_3456_789B);
    for len in [1, 10, 100, 1_000, 10_000, 17_104, 65_536, 100_000] {
        let mut set = HashSet::with_capacity(len);
        while set.len() < len {
            set.insert(rng.id());
        }
        let mut ids: Vec<u32> = set.into_iter().collect();
        ids.sort_unstable();
        let absent: Vec<u32> = (0..10_000).map(|_| rng.id()).collect();
        check(&format!("{len} random ids"), &ids, absent);
        // Small random ids too (as real trees have).
        let mut small: Vec<u32> = (0..len)
            .map(|_| (rng.next() % (len as u64 * 20)) as u32)
            .collect();
        small.sort_unstable();
        small.dedup();
        check(
            &format!("{len} small random ids"),
            &small,
            0..(len as u32 * 20).min(50_000),
        );
    }
}

#[test]
fn duplicate_and_out_of_range_keys_are_typed_errors() {
    use taxonomy_codegen::phash::PerfectHashError;
    assert_eq!(
        PerfectHash::build(&[(5, 0), (5, 1)]),
        Err(PerfectHashError::DuplicateKey(5))
    );
    assert_eq!(
        PerfectHash::build(&[(u32::MAX, 0)]),
        Err(PerfectHashError::KeyTooLarge)
    );
}

#[test]
fn a_valid_tree_with_ids_agreeing_in_their_low_bits_generates() {
    let leaves = [1, 1 + (1 << 22), 1 + (1 << 23)];
    let mut categories = vec![Category {
        id: 0,
        name: "Root".into(),
        parent: None,
        leaf: false,
        children: leaves.to_vec(),
    }];
    categories.extend(leaves.iter().map(|&id| Category {
        id,
        name: format!("Leaf {id}"),
        parent: Some(0),
        leaf: true,
        children: vec![],
    }));
    let tree = CategoryTree {
        meta: TreeMeta {
            tree_id: 0,
            marketplace_id: "EBAY_US".into(),
            language: "en-US".into(),
            version: "1".into(),
            taken_at: "2026-01-01".into(),
            source: "test".into(),
            note: None,
            complete: true,
        },
        categories,
    };
    tree.validate().unwrap();
    let code = generate(&[SiteData {
        site: Marketplace::Us,
        tree: Some(&tree),
        expired: &[],
    }])
    .unwrap();
    assert!(code.contains("8388609,"), "the ids are in the tables");
}

/// A pinned answer for EBAY_US 179 with one selection-only aspect, "Brand", of `values`.
fn pinned_brands(values: &[String]) -> taxonomy_codegen::pinned::PinnedAspects {
    let values: Vec<serde_json::Value> = values
        .iter()
        .map(|v| serde_json::json!({ "localizedValue": v }))
        .collect();
    taxonomy_codegen::pinned::PinnedAspects {
        site: Marketplace::Us,
        tree_id: 0,
        tree_version: "134".into(),
        category_id: 179,
        taken_at: "2026-11-26".into(),
        source: "getItemAspectsForCategory".into(),
        fetched_from: None,
        made_up: false,
        answer: serde_json::json!({"aspects": [{
            "localizedAspectName": "Brand",
            "aspectConstraint": {"aspectMode": "SELECTION_ONLY", "aspectRequired": true},
            "aspectValues": values,
        }]}),
    }
}

/// `values` as the compiled-in rules of one selection-only aspect "Brand": the tables the
/// generated source holds (each value's key at its first position, through
/// `PerfectHash::build_texts`), as `'static` data.
fn brand_rules(values: &[String]) -> &'static PinnedRules {
    fn table(keys: &[String]) -> TextTable {
        let mut seen = HashSet::new();
        let entries: Vec<(&str, u32)> = (0..keys.len() as u32)
            .zip(keys)
            .filter(|(_, k)| seen.insert(k.as_str()))
            .map(|(i, k)| (k.as_str(), i))
            .collect();
        let ph = PerfectHash::build_texts(&entries).unwrap_or_else(|e| panic!("{e}"));
        TextTable {
            seed: ph.seed,
            bucket_shift: ph.bucket_shift,
            pilots: ph.pilots.leak(),
            slots: ph.slots.leak(),
        }
    }
    let statics: Vec<&'static str> = values.iter().map(|v| &*v.clone().leak()).collect();
    let keys: Vec<String> = values.iter().map(|v| key(v)).collect();
    let aspect = PinnedAspect {
        name: "Brand",
        single: true,
        selection_only: true,
        enabled_for_variations: false,
        max_length: None,
        format: Format::Any,
        expected_required_by: None,
        values: statics.leak(),
        value_table: table(&keys),
        constraints: &[],
    };
    Box::leak(Box::new(PinnedRules {
        category_id: 179,
        tree_version: "134",
        taken_at: "2026-11-26",
        aspects: vec![aspect].leak(),
        name_keys: &["brand"],
        names: table(&["brand".to_owned()]),
        required: &[0],
    }))
}

/// `values` as `rules_source` compiles them: the source must generate.
fn compiles(label: &str, values: &[String]) -> String {
    taxonomy_codegen::pinned::rules_source(&pinned_brands(values), "PINNED_US_179")
        .unwrap_or_else(|e| panic!("{label}: {} values: {e}", values.len()))
        .0
}

#[test]
fn aspect_values_whose_text_keys_collided_compile_and_are_found() {
    // FNV-1a (32 bits) gave "brand 539599" and "brand 722382" the same key, and the build
    // refused the category for good (pinning it again gave the same answer).
    let mut values = vec!["Brand 539599".to_owned(), "Brand 722382".to_owned()];
    values.extend((0..30_000).map(|i| format!("Brand {i}")));
    let source = compiles("the colliding pair and 30k brands", &values);
    assert!(
        source.contains("\"Brand 539599\"") && source.contains("\"Brand 722382\""),
        "both values are compiled in"
    );
    // And the tables find both (their own position), and no other.
    let rules = brand_rules(&values);
    assert_eq!(rules.find_value(0, "Brand 539599"), Some(0));
    assert_eq!(rules.find_value(0, "brand 722382 "), Some(1));
    assert_eq!(rules.find_value(0, "BRAND 29999"), Some(30_001));
    assert_eq!(rules.find_value(0, "Brand 30000"), None);
    for value in ["Brand 539599", "Brand 722382"] {
        let listing = ListingAspects::new().with("Brand", [value]);
        assert_eq!(rules.check(&listing), vec![], "{value}");
    }
    let listing = ListingAspects::new().with("brand", ["Brand 722383"]);
    assert_eq!(rules.check(&listing).len(), 1, "not an allowed value");
}

#[test]
fn random_sets_of_30k_aspect_values_always_compile() {
    // About one aspect in ten of 30k values had two values with the same 32-bit key (here
    // set 3 did).
    let mut rng = Rng(0x000A_5EC7_5EED);
    for set in 0..12 {
        let values: Vec<String> = (0..30_000)
            .map(|_| format!("Model {:x}", rng.next()))
            .collect();
        compiles(&format!("set {set}"), &values);
        let rules = brand_rules(&values);
        let mut first = std::collections::HashMap::new();
        for (i, value) in values.iter().enumerate() {
            first.entry(value.as_str()).or_insert(i);
        }
        for (value, &i) in &first {
            assert_eq!(rules.find_value(0, value), Some(i), "set {set}: {value}");
        }
        for _ in 0..1_000 {
            let absent = format!("Model {:x}", rng.next());
            if !first.contains_key(absent.as_str()) {
                assert_eq!(rules.find_value(0, &absent), None, "set {set}: {absent}");
            }
        }
    }
}
