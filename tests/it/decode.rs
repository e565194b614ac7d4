//! Decoding get-category-tree responses: the real saved responses of the four sites, both
//! node shapes, and every kind of bad input, each with an error that says where.

use crate::common;

use marketplaces::Marketplace;
use taxonomy_tree::decode::{DecodeError, Provenance, decode_tree};
use taxonomy_tree::encode::encode_response;

fn provenance() -> Provenance {
    Provenance {
        language: "en-US".into(),
        taken_at: "2026-01-02".into(),
        source: "test".into(),
        note: None,
    }
}

fn decode(body: &str) -> Result<taxonomy_tree::tree::CategoryTree, DecodeError> {
    decode_tree(body.as_bytes(), &provenance())
}

fn message(body: &str) -> String {
    decode(body).unwrap_err().to_string()
}

const HEAD: &str =
    r#""categoryTreeId":"0","categoryTreeVersion":"9","applicableMarketplaceIds":["EBAY_US"]"#;

#[test]
fn saved_responses_decode_to_the_committed_snapshots() {
    for site in common::snapshot_sites() {
        let committed = common::committed(site);
        let mut tree = decode_tree(
            &common::saved_response(site),
            &common::provenance_of(&committed),
        )
        .unwrap();
        // Whether a copy is complete is known from where it came, not from the answer
        // (`snapshot import --partial`): the AU file says it is not.
        tree.meta.complete = committed.meta.complete;
        assert!(
            tree == committed,
            "{site}: decoding the saved response differs from the snapshot"
        );
    }
}

#[test]
fn encoding_then_decoding_gives_the_same_tree() {
    for site in common::snapshot_sites() {
        let tree = common::committed(site);
        let body = encode_response(&tree, "http://127.0.0.1:1");
        let mut back = decode_tree(&body, &common::provenance_of(&tree)).unwrap();
        back.meta.complete = tree.meta.complete;
        assert!(back == tree, "{site}");
    }
}

#[test]
fn the_contract_field_names_are_accepted() {
    let body = format!(
        r#"{{{HEAD},"rootCategoryNode":{{"categoryId":"0","categoryName":"Root","childCategoryIds":["1"],
        "childCategoryTreeNodes":[{{"categoryId":"1","categoryName":"Phones","childCategoryIds":["2","3"],"leafCategory":false,
          "childCategoryTreeNodes":[
            {{"categoryId":"2","categoryName":"Smart","leafCategory":true}},
            {{"category":{{"categoryId":"3","categoryName":"Other"}},"leafCategoryTreeNode":true,"unknownField":[1,2]}}]}}]}}}}"#
    );
    let tree = decode(&body).unwrap();
    assert_eq!(tree.len(), 3);
    assert_eq!(tree.get(1).unwrap().children, vec![2, 3]);
    assert!(tree.get(2).unwrap().leaf && tree.get(3).unwrap().leaf);
    assert!(!tree.get(1).unwrap().leaf);
    assert_eq!(tree.meta.marketplace_id, "EBAY_US");
    assert_eq!(tree.meta.version, "9");
}

#[test]
fn child_category_ids_must_agree_with_the_nested_children() {
    let body = format!(
        r#"{{{HEAD},"rootCategoryNode":{{"categoryId":"0","categoryName":"Root",
        "childCategoryTreeNodes":[{{"categoryId":"1","categoryName":"Phones","childCategoryIds":["2","4"],
          "childCategoryTreeNodes":[{{"categoryId":"2","categoryName":"Smart","leafCategory":true}},{{"categoryId":"3","categoryName":"Other","leafCategory":true}}]}}]}}}}"#
    );
    let m = message(&body);
    assert!(
        m.contains("childCategoryIds at rootCategoryNode > 0 (Root) > 1 (Phones)"),
        "{m}"
    );
    assert!(m.contains("disagree"), "{m}");
}

#[test]
fn a_numeric_id_is_an_error_that_says_where() {
    let body = format!(
        r#"{{{HEAD},"rootCategoryNode":{{"category":{{"categoryId":"0","categoryName":"Root"}},
        "childCategoryTreeNodes":[{{"category":{{"categoryId":"1","categoryName":"Phones"}},
          "childCategoryTreeNodes":[{{"category":{{"categoryId":2,"categoryName":"Smart"}},"leafCategoryTreeNode":true}}]}}]}}}}"#
    );
    let m = message(&body);
    assert!(
        m.starts_with("categoryId at rootCategoryNode > 0 (Root) > 1 (Phones)"),
        "{m}"
    );
    assert!(
        m.contains("2 is a number, expected a decimal string"),
        "{m}"
    );
}

#[test]
fn ids_that_are_not_decimal_strings_are_refused() {
    for (id, expected) in [
        (r#""12a""#, "is not a decimal string"),
        (r#""-5""#, "is not a decimal string"),
        (r#""""#, "empty string"),
        (r#""99999999999""#, "out of range"),
        (r#""4294967295""#, "out of range"),
        ("null", "missing or null"),
        ("true", "boolean"),
    ] {
        let body = format!(
            r#"{{{HEAD},"rootCategoryNode":{{"categoryId":"0","categoryName":"Root",
            "childCategoryTreeNodes":[{{"categoryId":{id},"categoryName":"X","leafCategory":true}}]}}}}"#
        );
        let m = message(&body);
        assert!(m.contains(expected), "{id}: {m}");
        assert!(
            m.starts_with("categoryId at rootCategoryNode > 0 (Root)"),
            "{id}: {m}"
        );
    }
}

#[test]
fn structural_problems_are_reported() {
    let cases = [
        // The root must be "0".
        (
            r#""rootCategoryNode":{"categoryId":"5","categoryName":"Root"}"#,
            "the root must be category \"0\"",
        ),
        // A level that does not match the depth.
        (
            r#""rootCategoryNode":{"categoryId":"0","categoryName":"Root","childCategoryTreeNodes":[{"categoryId":"1","categoryName":"A","categoryTreeNodeLevel":3,"leafCategory":true}]}"#,
            "categoryTreeNodeLevel at rootCategoryNode > 0 (Root) > 1 (A): is 3 but the node is at depth 1",
        ),
        // Two leaf flags that disagree.
        (
            r#""rootCategoryNode":{"categoryId":"0","categoryName":"Root","childCategoryTreeNodes":[{"categoryId":"1","categoryName":"A","leafCategory":false,"leafCategoryTreeNode":true}]}"#,
            "leafCategory at rootCategoryNode > 0 (Root) > 1 (A): is false but leafCategoryTreeNode is true",
        ),
        // A leaf flag on a node with children.
        (
            r#""rootCategoryNode":{"categoryId":"0","categoryName":"Root","childCategoryTreeNodes":[{"categoryId":"1","categoryName":"A","leafCategory":true,"childCategoryTreeNodes":[{"categoryId":"2","categoryName":"B","leafCategory":true}]}]}"#,
            "category 1: flagged leaf but has 1 children",
        ),
        // The same id twice.
        (
            r#""rootCategoryNode":{"categoryId":"0","categoryName":"Root","childCategoryTreeNodes":[{"categoryId":"1","categoryName":"A","leafCategory":true},{"categoryId":"1","categoryName":"B","leafCategory":true}]}"#,
            "category 1: duplicate id",
        ),
        // A missing name.
        (
            r#""rootCategoryNode":{"categoryId":"0","categoryName":"Root","childCategoryTreeNodes":[{"categoryId":"1","leafCategory":true}]}"#,
            "categoryName at rootCategoryNode > 0 (Root): missing",
        ),
    ];
    for (root, expected) in cases {
        let m = message(&format!("{{{HEAD},{root}}}"));
        assert!(m.contains(expected), "expected {expected:?} in {m:?}");
    }
}

#[test]
fn missing_top_level_fields_are_named() {
    let m = message(
        r#"{"categoryTreeVersion":"1","applicableMarketplaceIds":["EBAY_US"],"rootCategoryNode":{}}"#,
    );
    assert!(m.contains("categoryTreeId at the response: missing"), "{m}");
    let m = message(&format!("{{{HEAD}}}"));
    assert!(
        m.contains("rootCategoryNode at the response: missing"),
        "{m}"
    );
    let m = message(r#"{"categoryTreeId":"0","categoryTreeVersion":"1","rootCategoryNode":{}}"#);
    assert!(m.contains("applicableMarketplaceIds"), "{m}");
}

#[test]
fn malformed_and_truncated_json_is_an_error_with_a_position() {
    let body = common::saved_response(Marketplace::Au);
    let err = decode_tree(&body[..body.len() / 3], &provenance()).unwrap_err();
    assert!(matches!(err, DecodeError::Json(_)));
    assert!(err.to_string().contains("line 1 column"), "{err}");
    let m = message("<html>503 Service Unavailable</html>");
    assert!(m.starts_with("the response is not a category tree"), "{m}");
}

#[test]
fn a_tree_serving_several_marketplaces_is_named_after_its_own_site() {
    let body = r#"{"categoryTreeId":"0","categoryTreeVersion":"9","applicableMarketplaceIds":["EBAY_MOTORS_US","EBAY_US"],
        "rootCategoryNode":{"categoryId":"0","categoryName":"Root","childCategoryTreeNodes":[{"categoryId":"1","categoryName":"A","leafCategory":true}]}}"#;
    assert_eq!(decode(body).unwrap().meta.marketplace_id, "EBAY_US");
}

/// getCategorySubtree answers go through the same node decoder: the same id rule, levels
/// counted from the subtree's first node, and the tree's structural rules.
#[test]
fn subtree_answers_use_the_same_node_decoder() {
    use taxonomy_tree::decode::decode_subtree;
    let body = |children: &str| {
        format!(
            r#"{{"categoryTreeId":"0","categoryTreeVersion":"7","categorySubtreeNode":{{"category":{{"categoryId":"10","categoryName":"Phones"}},"categoryTreeNodeLevel":1,"parentCategoryTreeNodeHref":"https://api.ebay.com/commerce/taxonomy/v1/category_tree/0/get_category_subtree?category_id=0","childCategoryTreeNodes":[{children}]}}}}"#
        )
    };
    let ok = body(
        r#"{"category":{"categoryId":"11","categoryName":"Smart"},"categoryTreeNodeLevel":2,"leafCategoryTreeNode":true},{"categoryId":"12","categoryName":"Cases","leafCategory":true}"#,
    );
    let sub = decode_subtree(ok.as_bytes(), 10).unwrap();
    assert_eq!((sub.tree_id, sub.level, sub.len()), (0, 1, 3));
    assert_eq!(sub.root().parent, Some(0));
    assert_eq!(sub.root().children, [11, 12]);
    assert_eq!(sub.get(12).unwrap().parent, Some(10));
    assert_eq!(sub.leaves().count(), 2);

    let message = |children: &str| {
        decode_subtree(body(children).as_bytes(), 10)
            .unwrap_err()
            .to_string()
    };
    // A number is an error here as in the tree.
    let m = message(
        r#"{"category":{"categoryId":11,"categoryName":"Smart"},"leafCategoryTreeNode":true}"#,
    );
    assert!(
        m.contains("11 is a number, expected a decimal string"),
        "{m}"
    );
    assert!(m.contains("categorySubtreeNode > 10 (Phones)"), "{m}");
    // Duplicate ids, a leaf with children, an empty name.
    let m = message(
        r#"{"category":{"categoryId":"11","categoryName":"A"},"leafCategoryTreeNode":true},{"category":{"categoryId":"11","categoryName":"B"},"leafCategoryTreeNode":true}"#,
    );
    assert!(m.contains("duplicate id"), "{m}");
    let m = message(
        r#"{"category":{"categoryId":"11","categoryName":"A"},"leafCategoryTreeNode":true,"childCategoryTreeNodes":[{"category":{"categoryId":"13","categoryName":"C"},"leafCategoryTreeNode":true}]}"#,
    );
    assert!(m.contains("category 11"), "{m}");
    let m = message(
        r#"{"category":{"categoryId":"11","categoryName":" "},"leafCategoryTreeNode":true}"#,
    );
    assert!(m.contains("is empty"), "{m}");
    // The root cannot head or sit in a subtree.
    let m = message(
        r#"{"category":{"categoryId":"0","categoryName":"Root"},"leafCategoryTreeNode":true}"#,
    );
    assert!(m.contains("root"), "{m}");
}
