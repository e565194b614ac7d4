//! taxonomy-data built from a snapshots directory with condition policies (issue 39): every
//! leaf answers the policy of its file, and what the policies cost in static bytes.

use crate::common;
use crate::conditions_support as conditions;

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

/// `snapshot refresh` against the fake writes each site's condition policies, and
/// taxonomy-data built from that directory answers `conditions()` for every leaf of every
/// site, with the build's warning that they are made up; `listing check --dir` on the same
/// directory refuses a condition the category's policy does not allow, sending nothing.
#[test]
fn policies_written_by_refresh_are_compiled_in_for_every_leaf_and_checked_before_publishing() {
    let fake = fake_marketplace::FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    for site in [Marketplace::Us, Marketplace::Gb] {
        let name = site.snapshot_file_name();
        std::fs::copy(common::snapshots_dir().join(name), dir.join(name)).unwrap();
    }
    let out = common::snapshot_on_fake(&fake, "refresh", &[], &dir);
    let (stdout, stderr) = common::output_text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");

    let (sites, stderr) = conditions::check_compiled_conditions(&dir);
    for site in &sites {
        assert!(site.has_policies && site.made_up, "{:?}", site.site);
        assert_eq!(site.leaves_with_policy, site.leaves, "{:?}", site.site);
        assert!(site.leaves > 1000, "{:?}", site.site);
        assert!(
            stderr.contains(&format!(
                "{}.conditions.json: condition policies made up by the fake marketplace",
                site.site.marketplace_id()
            )),
            "{stderr}"
        );
    }
    assert_eq!(sites.len(), 2);

    // The fake's policy of US 9355 (Cell Phones & Smartphones) allows neither LIKE_NEW nor
    // every condition: find one it does not allow, and check a listing with it offline.
    let tree = taxonomy_tree::snapshot::read(&dir.join("EBAY_US.json")).unwrap();
    let file = taxonomy_tree::conditions::read_in_step(&dir.join("EBAY_US.json"), &tree)
        .unwrap()
        .unwrap();
    let (leaf, refused) = file
        .policies
        .iter()
        .find_map(|p| {
            let refused = marketplaces::Condition::ALL
                .iter()
                .find(|c| !p.rule.conditions.iter().any(|e| e.condition == **c))?;
            Some((p.category_ids[0], *refused))
        })
        .unwrap();
    let listing = serde_json::json!({
        "inventoryItem": {
            "product": {"title": "Something", "aspects": {}},
            "condition": refused.name(),
        },
        "offer": {
            "sku": "COND-1", "marketplaceId": "EBAY_US", "format": "FIXED_PRICE",
            "categoryId": leaf.to_string(), "availableQuantity": 1,
            "pricingSummary": {"price": {"value": "5.00", "currency": "USD"}},
            "listingPolicies": {"fulfillmentPolicyId": "f", "paymentPolicyId": "p", "returnPolicyId": "r"},
            "merchantLocationKey": "w"
        }
    });
    let home = tempfile::tempdir().unwrap();
    let path = home.path().join("listing.json");
    std::fs::write(&path, listing.to_string()).unwrap();
    let requests_before = fake.requests().len();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_listing"))
        .arg("--dir")
        .arg(&dir)
        .arg("check")
        .arg(&path)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .output()
        .unwrap();
    let (stdout, stderr) = common::output_text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!(
            "inventoryItem.condition: {refused} is not allowed in this category (eBay: errorId 25021)"
        )),
        "{stdout}"
    );
    assert_eq!(fake.requests().len(), requests_before, "nothing sent");
}
