//! The reverse of [`crate::decode`]: renders a tree in the service's documented
//! get-category-tree response shape.
//!
//! The fake marketplace serves committed snapshots through it, and tests use it to check that
//! decoding is the exact inverse of encoding.

use serde_json::{Map, Value, json};

use crate::tree::{CategoryTree, ROOT_ID};

/// Renders `tree` as a get-category-tree response body, with `parentCategoryTreeNodeHref`s
/// pointing at `base_url`.
///
/// ```
/// use taxonomy_tree::{decode, encode, tree::*};
/// let tree = CategoryTree {
///     meta: TreeMeta { tree_id: 0, marketplace_id: "EBAY_US".into(), language: "en-US".into(),
///         version: "1".into(), taken_at: "2026-01-01".into(), source: "doc".into(), note: None,
///         complete: true },
///     categories: vec![
///         Category { id: 0, name: "Root".into(), parent: None, leaf: false, children: vec![7] },
///         Category { id: 7, name: "Seven".into(), parent: Some(0), leaf: true, children: vec![] },
///     ],
/// };
/// let body = encode::encode_response(&tree, "https://api.example");
/// let provenance = decode::Provenance { language: "en-US".into(), taken_at: "2026-01-01".into(),
///     source: "doc".into(), note: None };
/// assert_eq!(decode::decode_tree(&body, &provenance).unwrap(), tree);
/// ```
pub fn encode_response(tree: &CategoryTree, base_url: &str) -> Vec<u8> {
    let root = encode_node(tree, ROOT_ID, 0, base_url).unwrap_or(Value::Null);
    let body = json!({
        "categoryTreeId": tree.meta.tree_id.to_string(),
        "categoryTreeVersion": tree.meta.version,
        "applicableMarketplaceIds": [tree.meta.marketplace_id],
        "rootCategoryNode": root,
    });
    serde_json::to_vec(&body).expect("a JSON value always serializes")
}

/// Renders category `id` and everything below it as a node of the response shape, at depth
/// `level` (the root is at 0); `None` when the tree has no such category. The fake's
/// get-category-subtree answer uses it too.
pub fn encode_node(tree: &CategoryTree, id: u32, level: u32, base_url: &str) -> Option<Value> {
    let c = tree.get(id)?;
    let mut map = Map::new();
    map.insert(
        "category".into(),
        json!({"categoryId": c.id.to_string(), "categoryName": c.name}),
    );
    map.insert("categoryTreeNodeLevel".into(), json!(level));
    if !c.children.is_empty() {
        let children: Vec<Value> = c
            .children
            .iter()
            .filter_map(|&k| encode_node(tree, k, level + 1, base_url))
            .collect();
        map.insert("childCategoryTreeNodes".into(), Value::Array(children));
    }
    if c.leaf {
        map.insert("leafCategoryTreeNode".into(), Value::Bool(true));
    }
    if let Some(parent) = c.parent {
        map.insert(
            "parentCategoryTreeNodeHref".into(),
            Value::String(format!(
                "{}/commerce/taxonomy/v1/category_tree/{}/get_category_subtree?category_id={parent}",
                base_url.trim_end_matches('/'),
                tree.meta.tree_id
            )),
        );
    }
    Some(Value::Object(map))
}
