//! The `serde` feature: sites as marketplace ids, leaf categories through the leaf check.
#![cfg(feature = "serde")]

use taxonomy_data::{LeafCategory, Site};

#[test]
fn a_site_is_its_marketplace_id() {
    assert_eq!(serde_json::to_string(&Site::De).unwrap(), "\"EBAY_DE\"");
    assert_eq!(
        serde_json::from_str::<Site>("\"EBAY_FR\"").unwrap(),
        Site::Fr
    );
    assert_eq!(
        serde_json::from_str::<Site>("\"ebay_gb\"").unwrap(),
        Site::Gb
    );
    let err = serde_json::from_str::<Site>("\"EBAY_XX\"")
        .unwrap_err()
        .to_string();
    assert!(err.contains("EBAY_XX") && err.contains("EBAY_US"), "{err}");
}

#[test]
fn a_leaf_category_round_trips_and_deserializes_only_through_the_leaf_check() {
    let leaf = LeafCategory::new(Site::Us, 9355).unwrap();
    let text = serde_json::to_string(&leaf).unwrap();
    assert_eq!(text, r#"{"site":"EBAY_US","id":9355}"#);
    assert_eq!(serde_json::from_str::<LeafCategory>(&text).unwrap(), leaf);
    // Not a leaf, unknown, a site without a tree: each is an error that says why.
    let not_leaf = serde_json::from_str::<LeafCategory>(r#"{"site":"EBAY_US","id":15032}"#)
        .unwrap_err()
        .to_string();
    assert!(not_leaf.contains("not a leaf"), "{not_leaf}");
    let unknown = serde_json::from_str::<LeafCategory>(r#"{"id":4242424,"site":"EBAY_US"}"#)
        .unwrap_err()
        .to_string();
    assert!(unknown.contains("has no category 4242424"), "{unknown}");
    let absent = serde_json::from_str::<LeafCategory>(r#"{"site":"EBAY_FR","id":9355}"#)
        .unwrap_err()
        .to_string();
    assert!(absent.contains("not compiled into this build"), "{absent}");
    let missing = serde_json::from_str::<LeafCategory>(r#"{"site":"EBAY_US"}"#)
        .unwrap_err()
        .to_string();
    assert!(missing.contains("missing field `id`"), "{missing}");
}
