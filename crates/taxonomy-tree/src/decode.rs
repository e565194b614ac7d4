//! Decoding the get-category-tree response (seed 4.5) into a [`CategoryTree`].
//!
//! Two node shapes are accepted, and may be mixed:
//! - the service's documented shape: `{category: {categoryId, categoryName},
//!   categoryTreeNodeLevel, childCategoryTreeNodes, leafCategoryTreeNode (only when true),
//!   parentCategoryTreeNodeHref}`;
//! - the seed's field names on the node itself: `categoryId`, `categoryName`,
//!   `childCategoryIds`, `leafCategory`, with the children nested in `childCategoryTreeNodes`.
//!
//! Unknown fields are ignored. Ids are decimal strings on the wire; anything else is an error
//! that says where in the tree it was found. The result is validated before it is returned.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use crate::tree::{Category, CategoryTree, ROOT_ID, TreeError, TreeMeta};

/// What the caller knows about a response that the response itself does not say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provenance {
    /// The language the names were requested in (`Accept-Language`).
    pub language: String,
    /// When the data was taken.
    pub taken_at: String,
    /// Where it came from.
    pub source: String,
    /// Anything a user should know about the data.
    pub note: Option<String>,
}

/// Why a response could not be turned into a tree.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// The bytes are not JSON of the expected shape.
    #[error("the response is not a category tree: {0}")]
    Json(#[from] serde_json::Error),
    /// A field is present but wrong, at the given place in the tree.
    #[error("{field} at {at}: {problem}")]
    Field {
        /// The path from the root, e.g. `rootCategoryNode > 1 (Collectibles) > 34`.
        at: String,
        /// The field's wire name.
        field: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// The decoded tree breaks a structural rule.
    #[error("the tree is inconsistent: {0}")]
    Tree(#[from] TreeError),
}

/// An id field as found on the wire, checked later so the error can say where.
#[derive(Debug)]
enum WireId {
    Ok(u32),
    Bad(String),
}

impl<'de> Deserialize<'de> for WireId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = WireId;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a category id")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<WireId, E> {
                Ok(parse_id(s))
            }
            fn visit_u64<E: de::Error>(self, n: u64) -> Result<WireId, E> {
                Ok(WireId::Bad(format!(
                    "{n} is a number, expected a decimal string like \"{n}\""
                )))
            }
            fn visit_i64<E: de::Error>(self, n: i64) -> Result<WireId, E> {
                Ok(WireId::Bad(format!(
                    "{n} is a number, expected a decimal string"
                )))
            }
            fn visit_f64<E: de::Error>(self, n: f64) -> Result<WireId, E> {
                Ok(WireId::Bad(format!(
                    "{n} is a number, expected a decimal string"
                )))
            }
            fn visit_bool<E: de::Error>(self, b: bool) -> Result<WireId, E> {
                Ok(WireId::Bad(format!(
                    "{b} is a boolean, expected a decimal string"
                )))
            }
            fn visit_unit<E: de::Error>(self) -> Result<WireId, E> {
                Ok(WireId::Bad("null, expected a decimal string".into()))
            }
        }
        d.deserialize_any(V)
    }
}

fn parse_id(s: &str) -> WireId {
    if s.is_empty() {
        return WireId::Bad("empty string, expected a decimal string".into());
    }
    if !s.bytes().all(|b| b.is_ascii_digit()) {
        return WireId::Bad(format!("{s:?} is not a decimal string"));
    }
    match s.parse::<u32>() {
        Ok(n) if n < u32::MAX => WireId::Ok(n),
        _ => WireId::Bad(format!("{s:?} is out of range (at most {})", u32::MAX - 1)),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResponse {
    category_tree_id: Option<WireId>,
    category_tree_version: Option<String>,
    #[serde(default)]
    applicable_marketplace_ids: Vec<String>,
    root_category_node: Option<WireNode>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireCategory {
    category_id: Option<WireId>,
    category_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireNode {
    category: Option<WireCategory>,
    category_id: Option<WireId>,
    category_name: Option<String>,
    category_tree_node_level: Option<u32>,
    child_category_tree_nodes: Option<Vec<WireNode>>,
    child_category_ids: Option<Vec<WireId>>,
    leaf_category_tree_node: Option<bool>,
    leaf_category: Option<bool>,
}

/// Decodes and validates a get-category-tree response.
///
/// `provenance` supplies what the response does not carry (language, date, source). The
/// marketplace id comes from `applicableMarketplaceIds` (the first entry).
///
/// ```
/// use taxonomy_tree::decode::{decode_tree, Provenance};
/// let body = br#"{"categoryTreeId":"0","categoryTreeVersion":"134",
///   "applicableMarketplaceIds":["EBAY_US"],
///   "rootCategoryNode":{"category":{"categoryId":"0","categoryName":"Root"},
///     "categoryTreeNodeLevel":0,
///     "childCategoryTreeNodes":[{"category":{"categoryId":"9355","categoryName":"Phones"},
///       "categoryTreeNodeLevel":1,"leafCategoryTreeNode":true}]}}"#;
/// let provenance = Provenance {
///     language: "en-US".into(), taken_at: "2026-01-02".into(),
///     source: "example".into(), note: None,
/// };
/// let tree = decode_tree(body, &provenance).unwrap();
/// assert_eq!(tree.len(), 1);
/// assert!(tree.get(9355).unwrap().leaf);
/// ```
pub fn decode_tree(body: &[u8], provenance: &Provenance) -> Result<CategoryTree, DecodeError> {
    let wire: WireResponse = serde_json::from_slice(body)?;
    let tree_id = match wire.category_tree_id {
        Some(WireId::Ok(id)) => id,
        Some(WireId::Bad(problem)) => return Err(field("the response", "categoryTreeId", problem)),
        None => return Err(field("the response", "categoryTreeId", "missing".into())),
    };
    let version = wire
        .category_tree_version
        .ok_or_else(|| field("the response", "categoryTreeVersion", "missing".into()))?;
    // A tree may serve several marketplaces: prefer the one of the tree's own site.
    let own = marketplaces::SiteId::from_tree_id(tree_id).map(|s| s.marketplace_id());
    let marketplace_id = match own {
        Some(own) if wire.applicable_marketplace_ids.iter().any(|m| m == own) => own.to_string(),
        _ => wire
            .applicable_marketplace_ids
            .into_iter()
            .next()
            .ok_or_else(|| {
                field(
                    "the response",
                    "applicableMarketplaceIds",
                    "missing or empty".into(),
                )
            })?,
    };
    let root = wire
        .root_category_node
        .ok_or_else(|| field("the response", "rootCategoryNode", "missing".into()))?;

    let mut categories = Vec::new();
    flatten(root, None, 0, &mut Vec::new(), &mut categories)?;
    if categories[0].id != ROOT_ID {
        return Err(field(
            "rootCategoryNode",
            "categoryId",
            format!(
                "the root must be category \"0\", found \"{}\"",
                categories[0].id
            ),
        ));
    }
    categories.sort_by_key(|c| c.id);
    let tree = CategoryTree {
        meta: TreeMeta {
            tree_id,
            marketplace_id,
            language: provenance.language.clone(),
            version,
            taken_at: provenance.taken_at.clone(),
            source: provenance.source.clone(),
            note: provenance.note.clone(),
        },
        categories,
    };
    tree.validate()?;
    Ok(tree)
}

fn field(at: &str, field: &'static str, problem: String) -> DecodeError {
    DecodeError::Field {
        at: at.to_string(),
        field,
        problem,
    }
}

/// Where a node sits, for an error: `rootCategoryNode > 0 (Root) > 1 (Collectibles) > …`.
/// Built only when there is an error; `ancestors` are positions in `out`, root first.
fn place(out: &[Category], ancestors: &[usize], here: Option<(u32, &str)>) -> String {
    use std::fmt::Write as _;
    let mut at = String::from("rootCategoryNode");
    for &i in ancestors {
        let _ = write!(at, " > {} ({})", out[i].id, out[i].name);
    }
    if let Some((id, name)) = here {
        let _ = write!(at, " > {id} ({name})");
    }
    at
}

fn flatten(
    node: WireNode,
    parent: Option<u32>,
    depth: u32,
    ancestors: &mut Vec<usize>,
    out: &mut Vec<Category>,
) -> Result<(), DecodeError> {
    let at = |out: &[Category]| place(out, ancestors, None);
    let (wire_id, wire_name) = match node.category {
        Some(c) => (
            c.category_id.or(node.category_id),
            c.category_name.or(node.category_name),
        ),
        None => (node.category_id, node.category_name),
    };
    let id = match wire_id {
        Some(WireId::Ok(id)) => id,
        Some(WireId::Bad(problem)) => return Err(field(&at(out), "categoryId", problem)),
        None => return Err(field(&at(out), "categoryId", "missing or null".into())),
    };
    let name = wire_name.ok_or_else(|| field(&at(out), "categoryName", "missing".into()))?;
    let here = |out: &[Category]| place(out, ancestors, Some((id, &name)));
    if let Some(level) = node.category_tree_node_level
        && level != depth
    {
        return Err(field(
            &here(out),
            "categoryTreeNodeLevel",
            format!("is {level} but the node is at depth {depth}"),
        ));
    }
    let leaf = match (node.leaf_category_tree_node, node.leaf_category) {
        (Some(a), Some(b)) if a != b => {
            return Err(field(
                &here(out),
                "leafCategory",
                format!("is {b} but leafCategoryTreeNode is {a}"),
            ));
        }
        (a, b) => a.or(b).unwrap_or(false),
    };
    let nested = node.child_category_tree_nodes.unwrap_or_default();
    let mut children = Vec::with_capacity(nested.len());
    for child in &nested {
        let child_id = match child.category.as_ref().and_then(|c| c.category_id.as_ref()) {
            Some(id) => Some(id),
            None => child.category_id.as_ref(),
        };
        if let Some(WireId::Ok(cid)) = child_id {
            children.push(*cid);
        }
        // A bad or missing child id is reported when the child itself is flattened.
    }
    if let Some(listed) = node.child_category_ids {
        let mut ids = Vec::with_capacity(listed.len());
        for wire in listed {
            match wire {
                WireId::Ok(id) => ids.push(id),
                WireId::Bad(problem) => {
                    return Err(field(&here(out), "childCategoryIds", problem));
                }
            }
        }
        if !nested.is_empty() || !ids.is_empty() {
            let mut a = ids.clone();
            let mut b = children.clone();
            a.sort_unstable();
            b.sort_unstable();
            if a != b || nested.len() != children.len() {
                return Err(field(
                    &here(out),
                    "childCategoryIds",
                    format!(
                        "lists {} ids that disagree with the {} nested childCategoryTreeNodes",
                        ids.len(),
                        nested.len()
                    ),
                ));
            }
        }
    }
    out.push(Category {
        id,
        name,
        parent,
        leaf: leaf && parent.is_some(),
        children,
    });
    ancestors.push(out.len() - 1);
    for child in nested {
        flatten(child, Some(id), depth + 1, ancestors, out)?;
    }
    ancestors.pop();
    Ok(())
}
