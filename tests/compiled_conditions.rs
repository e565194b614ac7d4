//! taxonomy-data built from a snapshots directory with condition policies (issue 39): every
//! leaf answers the policy of its file, and what the policies cost in static bytes.

mod common;
#[path = "common/conditions.rs"]
mod conditions;

use marketplaces::Marketplace;

/// The committed US and GB trees; a condition-policy file naming every US leaf (made up by
/// the test, deterministically); GB without one. Every US leaf answers `conditions()` with
/// the file's policy, every GB leaf `None`; the build warns that the US policies are made up;
/// the policies add at most 2 bytes of static data a leaf.
#[test]
fn a_policy_for_every_leaf_is_compiled_in_for_every_leaf_at_most_two_bytes_each() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    for site in [Marketplace::Us, Marketplace::Gb] {
        let name = site.snapshot_file_name();
        std::fs::copy(common::snapshots_dir().join(name), dir.join(name)).unwrap();
    }
    let file = conditions::write_every_leaf_policies(&dir, Marketplace::Us);
    assert_eq!(file.policies.len(), conditions::made_up_rules().len());

    let (sites, stderr) = conditions::check_compiled_conditions(&dir);
    assert!(
        stderr.contains("EBAY_US.conditions.json: condition policies made up by the fake marketplace (source made up by tests/common/conditions.rs); never commit them as the marketplace's rules"),
        "{stderr}"
    );
    let us = sites.iter().find(|s| s.site == Marketplace::Us).unwrap();
    let gb = sites.iter().find(|s| s.site == Marketplace::Gb).unwrap();
    assert!(us.has_policies && us.made_up);
    assert_eq!(us.leaves_with_policy, us.leaves);
    assert_eq!(us.leaves, file.category_count());
    assert!(!gb.has_policies && gb.leaves > 0);
    assert_eq!((gb.leaves_with_policy, gb.table_bytes), (0, 0));

    let per_leaf = us.table_bytes as f64 / us.leaves as f64;
    println!(
        "EBAY_US: {} distinct policies, {} bytes of condition tables for {} leaves: {per_leaf:.2} bytes a leaf",
        file.policies.len(),
        us.table_bytes,
        us.leaves
    );
    assert!(per_leaf <= 2.0, "{per_leaf:.2} bytes a leaf");
}
