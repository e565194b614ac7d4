//! Decoding the getCategoryTree response into a [`CategoryTree`], and the getCategorySubtree
//! response into a [`CategorySubtree`], with one node decoder for both.
//!
//! Two node shapes are accepted, and may be mixed:
//! - eBay's documented `CategoryTreeNode`: `{category: {categoryId, categoryName},
//!   categoryTreeNodeLevel, childCategoryTreeNodes, leafCategoryTreeNode (only when true),
//!   parentCategoryTreeNodeHref}`;
//! - the field names of the API contract this project started from, on the node itself:
//!   `categoryId`, `categoryName`, `childCategoryIds`, `leafCategory`, with the children
//!   nested in `childCategoryTreeNodes`.
//!
//! Unknown fields are ignored. Ids are decimal strings on the wire; anything else (a JSON
//! number included) is an error that says where it was found. The result is validated before
//! it is returned: the whole tree by [`CategoryTree::validate`], a subtree by the same rules
//! applied below the category asked for.

use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, Visitor};

use crate::bounded;
use crate::tree::{
    Category, CategoryTree, MAX_LEVEL, ROOT_ID, TreeError, TreeMeta, check_version, escaped,
    name_problem,
};

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

/// The most array elements a getCategoryTree or getCategorySubtree answer may hold in all
/// (nodes, `childCategoryIds`, marketplace ids): 300,000. The largest tree, EBAY_US, has
/// about 17,000 categories, each counted twice at most (its node, its id in its parent's
/// `childCategoryIds`); the limit is almost 9 times that. A decoded node takes a few hundred
/// bytes, so the limit keeps a hostile answer (60 MB of `{}` nodes, which took 3.2 GB)
/// under about 100 MB (see [`bounded`]).
pub const MAX_TREE_ELEMENTS: usize = 300_000;

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
    #[serde(default, deserialize_with = "bounded::vec")]
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
    #[serde(default, deserialize_with = "bounded::opt_vec")]
    child_category_tree_nodes: Option<Vec<WireNode>>,
    #[serde(default, deserialize_with = "bounded::opt_vec")]
    child_category_ids: Option<Vec<WireId>>,
    leaf_category_tree_node: Option<bool>,
    leaf_category: Option<bool>,
    /// Read on a subtree's first node only.
    parent_category_tree_node_href: Option<String>,
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
    let wire: WireResponse =
        bounded::with_element_limit(MAX_TREE_ELEMENTS, "a getCategoryTree answer", || {
            serde_json::from_slice(body)
        })?;
    let tree_id = match wire.category_tree_id {
        Some(WireId::Ok(id)) => id,
        Some(WireId::Bad(problem)) => return Err(field("the response", "categoryTreeId", problem)),
        None => return Err(field("the response", "categoryTreeId", "missing".into())),
    };
    let version = wire
        .category_tree_version
        .ok_or_else(|| field("the response", "categoryTreeVersion", "missing".into()))?;
    // A tree may serve several marketplaces: prefer the one of the tree's own site.
    let own = marketplaces::Marketplace::from_tree_id(tree_id).map(|s| s.marketplace_id());
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
    let mut walk = Walk {
        start: "rootCategoryNode",
        base_level: 0,
        ancestors: Vec::new(),
        out: &mut categories,
    };
    walk.flatten(root, None, 0)?;
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
            complete: true,
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
fn place(start: &str, out: &[Category], ancestors: &[usize], here: Option<(u32, &str)>) -> String {
    use std::fmt::Write as _;
    let mut at = String::from(start);
    // The names are the server's, not yet validated: escaped (see `tree::escaped`).
    for &i in ancestors {
        let _ = write!(at, " > {} ({})", out[i].id, escaped(&out[i].name));
    }
    if let Some((id, name)) = here {
        let _ = write!(at, " > {id} ({})", escaped(name));
    }
    at
}

/// The walk over nested nodes that flattens them into `out`, depth first.
struct Walk<'a> {
    /// How the place of the first node is named in errors.
    start: &'static str,
    /// `categoryTreeNodeLevel` of the first node.
    base_level: u32,
    /// Positions in `out` of the nodes above the current one.
    ancestors: Vec<usize>,
    out: &'a mut Vec<Category>,
}

impl Walk<'_> {
    fn place(&self, here: Option<(u32, &str)>) -> String {
        place(self.start, self.out, &self.ancestors, here)
    }

    fn flatten(
        &mut self,
        node: WireNode,
        parent: Option<u32>,
        depth: u32,
    ) -> Result<(), DecodeError> {
        let (wire_id, wire_name) = match node.category {
            Some(c) => (
                c.category_id.or(node.category_id),
                c.category_name.or(node.category_name),
            ),
            None => (node.category_id, node.category_name),
        };
        let id = match wire_id {
            Some(WireId::Ok(id)) => id,
            Some(WireId::Bad(problem)) => {
                return Err(field(&self.place(None), "categoryId", problem));
            }
            None => {
                return Err(field(
                    &self.place(None),
                    "categoryId",
                    "missing or null".into(),
                ));
            }
        };
        let name =
            wire_name.ok_or_else(|| field(&self.place(None), "categoryName", "missing".into()))?;
        let level = self.base_level + depth;
        if let Some(sent) = node.category_tree_node_level
            && sent != level
        {
            return Err(field(
                &self.place(Some((id, &name))),
                "categoryTreeNodeLevel",
                format!("is {sent} but the node is at depth {level}"),
            ));
        }
        if level as usize > MAX_LEVEL {
            return Err(DecodeError::Tree(TreeError::TooDeep {
                id,
                level: level as usize,
            }));
        }
        let leaf = match (node.leaf_category_tree_node, node.leaf_category) {
            (Some(a), Some(b)) if a != b => {
                return Err(field(
                    &self.place(Some((id, &name))),
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
                        return Err(field(
                            &self.place(Some((id, &name))),
                            "childCategoryIds",
                            problem,
                        ));
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
                        &self.place(Some((id, &name))),
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
        self.out.push(Category {
            id,
            name,
            parent,
            leaf: leaf && parent.is_some(),
            children,
        });
        self.ancestors.push(self.out.len() - 1);
        for child in nested {
            self.flatten(child, Some(id), depth + 1)?;
        }
        self.ancestors.pop();
        Ok(())
    }
}

/// The answer of getCategorySubtree: a category and everything below it, flat.
///
/// `categories[0]` is the category asked for; the others follow depth first in the
/// service's order. `parent` of the first is read from its `parentCategoryTreeNodeHref`
/// (`None` when absent); `parent` of the others is within the subtree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategorySubtree {
    /// `categoryTreeId`.
    pub tree_id: u32,
    /// `categoryTreeVersion`.
    pub tree_version: String,
    /// The level of the subtree's root in the full tree (`categoryTreeNodeLevel`).
    pub level: u32,
    /// The categories, the subtree's root first.
    pub categories: Vec<Category>,
}

impl CategorySubtree {
    /// The category asked for.
    pub fn root(&self) -> &Category {
        &self.categories[0]
    }

    /// The category with this id, if it is in the subtree.
    pub fn get(&self, id: u32) -> Option<&Category> {
        self.categories.iter().find(|c| c.id == id)
    }

    /// The leaf categories (those that accept listings).
    pub fn leaves(&self) -> impl Iterator<Item = &Category> {
        self.categories.iter().filter(|c| c.leaf)
    }

    /// How many categories, the root included.
    pub fn len(&self) -> usize {
        self.categories.len()
    }

    /// Always false: a subtree holds at least its root.
    pub fn is_empty(&self) -> bool {
        self.categories.is_empty()
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireSubtreeResponse {
    category_tree_id: Option<WireId>,
    category_tree_version: Option<String>,
    category_subtree_node: Option<WireSubtreeNode>,
}

/// The subtree's first node: a [`WireNode`], whose link to its parent is read (not
/// `#[serde(flatten)]`, which would buffer the whole node, children included, before the
/// element limit could count them).
type WireSubtreeNode = WireNode;

/// Decodes and validates a getCategorySubtree response for `category_id`.
///
/// The nodes go through the same decoder as [`decode_tree`] (decimal-string ids, levels that
/// follow the nesting, leaf flags, the field names of getCategorySubtree's answer), and the
/// result is held to the tree's structural rules below the category asked for: the first
/// node is `category_id` (never the root, 0), ids are unique, names (and the version) are as
/// [`CategoryTree::validate`] wants them (non-empty, free of `>`, of control and of
/// bidirectional formatting characters), a leaf has no
/// children and a non-leaf has some, and no node is deeper than
/// [`MAX_LEVEL`].
///
/// ```
/// use taxonomy_tree::decode::decode_subtree;
/// let body = br#"{"categoryTreeId":"0","categoryTreeVersion":"134",
///   "categorySubtreeNode":{"category":{"categoryId":"15032","categoryName":"Phones"},
///     "categoryTreeNodeLevel":1,
///     "parentCategoryTreeNodeHref":"https://api.ebay.com/commerce/taxonomy/v1/category_tree/0/get_category_subtree?category_id=0",
///     "childCategoryTreeNodes":[{"category":{"categoryId":"9355","categoryName":"Smartphones"},
///       "categoryTreeNodeLevel":2,"leafCategoryTreeNode":true}]}}"#;
/// let subtree = decode_subtree(body, 15032).unwrap();
/// assert_eq!(subtree.root().parent, Some(0));
/// assert_eq!(subtree.leaves().map(|c| c.id).collect::<Vec<_>>(), [9355]);
/// assert!(decode_subtree(body, 9355).is_err()); // not the category asked for
/// ```
pub fn decode_subtree(body: &[u8], category_id: u32) -> Result<CategorySubtree, DecodeError> {
    let wire: WireSubtreeResponse =
        bounded::with_element_limit(MAX_TREE_ELEMENTS, "a getCategorySubtree answer", || {
            serde_json::from_slice(body)
        })?;
    let tree_id = match wire.category_tree_id {
        Some(WireId::Ok(id)) => id,
        Some(WireId::Bad(problem)) => return Err(field("the response", "categoryTreeId", problem)),
        None => return Err(field("the response", "categoryTreeId", "missing".into())),
    };
    let tree_version = wire
        .category_tree_version
        .ok_or_else(|| field("the response", "categoryTreeVersion", "missing".into()))?;
    let first = wire
        .category_subtree_node
        .ok_or_else(|| field("the response", "categorySubtreeNode", "missing".into()))?;
    let level = first.category_tree_node_level.unwrap_or(0);
    let parent = match first.parent_category_tree_node_href.as_deref() {
        None => None,
        Some(href) => Some(parent_from_href(href).ok_or_else(|| {
            field(
                "categorySubtreeNode",
                "parentCategoryTreeNodeHref",
                format!("{href:?} has no decimal category_id"),
            )
        })?),
    };
    let mut categories = Vec::new();
    let mut walk = Walk {
        start: "categorySubtreeNode",
        base_level: level,
        ancestors: Vec::new(),
        out: &mut categories,
    };
    // A parent placeholder keeps the first node's `leaf` (the walk clears it on a root).
    walk.flatten(first, Some(parent.unwrap_or(u32::MAX)), 0)?;
    categories[0].parent = parent;
    let first_id = categories[0].id;
    if first_id != category_id {
        return Err(field(
            "categorySubtreeNode",
            "categoryId",
            format!("is \"{first_id}\" but category \"{category_id}\" was asked for"),
        ));
    }
    if first_id == ROOT_ID {
        return Err(DecodeError::Tree(TreeError::BadRoot {
            id: first_id,
            problem: "is the root id but heads a subtree",
        }));
    }
    validate_subtree(&categories)?;
    check_version(&tree_version)?;
    Ok(CategorySubtree {
        tree_id,
        tree_version,
        level,
        categories,
    })
}

/// The tree's rules that a nested subtree can break (parents and children agree by
/// construction, and nesting cannot form a cycle).
fn validate_subtree(categories: &[Category]) -> Result<(), TreeError> {
    let mut seen = std::collections::HashSet::with_capacity(categories.len());
    for c in categories {
        if c.id == u32::MAX {
            return Err(TreeError::IdOutOfRange { id: c.id });
        }
        if c.id == ROOT_ID {
            return Err(TreeError::BadRoot {
                id: c.id,
                problem: "is the root id but sits inside a subtree",
            });
        }
        if !seen.insert(c.id) {
            return Err(TreeError::DuplicateId { id: c.id });
        }
        if let Some(problem) = name_problem(&c.name) {
            return Err(TreeError::BadName {
                id: c.id,
                name: c.name.clone(),
                problem,
            });
        }
        if c.leaf && !c.children.is_empty() {
            return Err(TreeError::LeafWithChildren {
                id: c.id,
                children: c.children.len(),
            });
        }
        if !c.leaf && c.children.is_empty() {
            return Err(TreeError::NonLeafWithoutChildren { id: c.id });
        }
    }
    Ok(())
}

/// The `category_id` of a getCategorySubtree href (`…/get_category_subtree?category_id=N`).
fn parent_from_href(href: &str) -> Option<u32> {
    let query = href.split_once('?')?.1;
    let query = query.split('#').next().unwrap_or(query);
    query.split('&').find_map(|pair| {
        let value = pair.strip_prefix("category_id=")?;
        match parse_id(value) {
            WireId::Ok(id) => Some(id),
            WireId::Bad(_) => None,
        }
    })
}
