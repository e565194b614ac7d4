//! The perfect-hash generator succeeds for every set of distinct ids below `u32::MAX`, and
//! its tables find every id and no other: a property test over adversarial id sets
//! (arithmetic progressions with power-of-two steps, dense runs, random sets, up to ~100k
//! ids), and the code generator on a valid tree whose ids used to defeat every seed.

use std::collections::HashSet;

use marketplaces::Marketplace;
use taxonomy_codegen::codegen::{SiteData, generate};
use taxonomy_codegen::phash::PerfectHash;
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
