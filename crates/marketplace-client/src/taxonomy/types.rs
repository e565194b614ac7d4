//! The typed answers of the taxonomy calls, and their wire shapes.

use serde::Deserialize;
use url::Url;

use marketplaces::SiteId;
use taxonomy_tree::tree::Category;

/// The raw body of a get-category-tree answer and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeBody {
    /// The site asked for.
    pub site: SiteId,
    /// The URL it was fetched from.
    pub url: Url,
    /// The `Accept-Language` sent.
    pub language: String,
    /// The body (decompressed), unparsed.
    pub bytes: Vec<u8>,
}

/// A category named by id and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CategoryRef {
    /// The category id.
    pub id: u32,
    /// Its name, in the language requested.
    pub name: String,
}

/// An ancestor of a suggested category (`categoryTreeNodeAncestors`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ancestor {
    /// The ancestor's id.
    pub id: u32,
    /// Its name (the root's name carries no information).
    pub name: String,
    /// Its level in the tree (the root is 0).
    pub level: u32,
    /// `categorySubtreeNodeHref`: the get-category-subtree URL of the ancestor, if sent.
    pub subtree_href: Option<String>,
}

/// One suggested category (seed 4.6).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategorySuggestion {
    /// The suggested (leaf) category.
    pub category: CategoryRef,
    /// Its ancestors, from the immediate parent up to the root, as the service orders them.
    pub ancestors: Vec<Ancestor>,
    /// `categoryTreeNodeLevel`: the category's level (the root is 0).
    pub level: u32,
    /// `relevancy`, as sent (the service reserves the field; it may be absent).
    pub relevancy: Option<String>,
}

impl CategorySuggestion {
    /// The names from the top-level category down to the suggested one (the root left out),
    /// joined with ` > `: `Cell Phones & Accessories > Cell Phones & Smartphones`.
    pub fn path(&self) -> String {
        let mut names: Vec<&str> = self
            .ancestors
            .iter()
            .filter(|a| a.level > 0)
            .map(|a| a.name.as_str())
            .collect();
        names.reverse();
        names.push(&self.category.name);
        names.join(" > ")
    }
}

/// The answer of get-category-suggestions: the suggestions, most relevant first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategorySuggestions {
    /// `categoryTreeId`.
    pub tree_id: u32,
    /// `categoryTreeVersion`.
    pub tree_version: String,
    /// The suggestions, in the service's order (most relevant first); empty when nothing
    /// matched.
    pub suggestions: Vec<CategorySuggestion>,
}

/// The answer of get-category-subtree: a category and everything below it, flat.
///
/// `categories[0]` is the category asked for; the others follow depth first in the
/// service's order. `parent` of the first is taken from its `parentCategoryTreeNodeHref`
/// (`None` when absent); `parent` of the others is within the subtree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategorySubtree {
    /// `categoryTreeId`.
    pub tree_id: u32,
    /// `categoryTreeVersion`.
    pub tree_version: String,
    /// The level of the subtree's root in the full tree.
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

/// The answer of get-default-category-tree-id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultTreeId {
    /// `categoryTreeId`.
    pub tree_id: u32,
    /// `categoryTreeVersion`.
    pub tree_version: String,
}

macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $wire:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
            /// A value this crate does not know, as sent.
            Other(String),
        }

        impl $name {
            /// Maps the wire value; unknown values become `Other`.
            pub fn from_wire(s: &str) -> Self {
                match s {
                    $($wire => Self::$variant,)*
                    other => Self::Other(other.to_owned()),
                }
            }

            /// The wire value.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $wire,)*
                    Self::Other(s) => s,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                Ok(Self::from_wire(&s))
            }
        }
    };
}

wire_enum! {
    /// `aspectDataType`: the type of an aspect's values.
    AspectDataType {
        /// `STRING`.
        String = "STRING",
        /// `STRING_ARRAY`.
        StringArray = "STRING_ARRAY",
        /// `NUMBER` (see [`Aspect::format`]: `int32` or `double`).
        Number = "NUMBER",
        /// `DATE` (see [`Aspect::format`]: `YYYY`, `YYYYMM`, `YYYYMMDD`).
        Date = "DATE",
    }
}

wire_enum! {
    /// `aspectMode`: how the seller gives a value.
    AspectMode {
        /// `FREE_TEXT`: any value (the listed values are suggestions).
        FreeText = "FREE_TEXT",
        /// `SELECTION_ONLY`: one of the listed values.
        SelectionOnly = "SELECTION_ONLY",
    }
}

wire_enum! {
    /// `itemToAspectCardinality`: how many values an item may have.
    AspectCardinality {
        /// `SINGLE`.
        Single = "SINGLE",
        /// `MULTI`.
        Multi = "MULTI",
    }
}

wire_enum! {
    /// `aspectUsage`.
    AspectUsage {
        /// `RECOMMENDED` (required aspects are also `RECOMMENDED`).
        Recommended = "RECOMMENDED",
        /// `OPTIONAL`.
        Optional = "OPTIONAL",
    }
}

/// One aspect (item specific) of a category: what a listing fills in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aspect {
    /// `localizedAspectName`, e.g. `Brand`.
    pub name: String,
    /// `aspectDataType`.
    pub data_type: AspectDataType,
    /// `aspectRequired`: a listing must give it.
    pub required: bool,
    /// `aspectMode`.
    pub mode: AspectMode,
    /// `itemToAspectCardinality`.
    pub cardinality: AspectCardinality,
    /// `aspectUsage`, if sent.
    pub usage: Option<AspectUsage>,
    /// `aspectEnabledForVariations`.
    pub enabled_for_variations: bool,
    /// `aspectMaxLength`, if sent.
    pub max_length: Option<u32>,
    /// `aspectFormat`, if sent (e.g. `int32`, `YYYYMMDD`).
    pub format: Option<String>,
    /// The values (`aspectValues[].localizedValue`): allowed values for
    /// [`AspectMode::SelectionOnly`], suggestions otherwise.
    pub values: Vec<String>,
}

/// The answer of get-item-aspects-for-category.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ItemAspects {
    /// The category asked for.
    pub category_id: u32,
    /// Its aspects, in the service's order (required ones first on the real service).
    pub aspects: Vec<Aspect>,
}

impl ItemAspects {
    /// The aspect with this name (ASCII case ignored).
    pub fn get(&self, name: &str) -> Option<&Aspect> {
        self.aspects
            .iter()
            .find(|a| a.name.eq_ignore_ascii_case(name))
    }

    /// The aspects a listing must give.
    pub fn required(&self) -> impl Iterator<Item = &Aspect> {
        self.aspects.iter().filter(|a| a.required)
    }
}

// ---- wire shapes ----

/// Turns a wire id (a decimal string, or a number) into a u32.
pub(crate) fn parse_id(field: &str, value: &serde_json::Value) -> Result<u32, String> {
    match value {
        serde_json::Value::String(s) => s
            .parse::<u32>()
            .map_err(|_| format!("{field} {s:?} is not a decimal category id")),
        serde_json::Value::Number(n) => n
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .ok_or_else(|| format!("{field} {n} is not a category id")),
        serde_json::Value::Null => Err(format!("{field} is missing")),
        other => Err(format!("{field} is {other}, expected a decimal string")),
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireCategory {
    #[serde(default)]
    pub category_id: serde_json::Value,
    #[serde(default)]
    pub category_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireAncestor {
    #[serde(default)]
    pub category_id: serde_json::Value,
    #[serde(default)]
    pub category_name: Option<String>,
    #[serde(default)]
    pub category_tree_node_level: Option<u32>,
    #[serde(default)]
    pub category_subtree_node_href: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireSuggestion {
    pub category: WireCategory,
    #[serde(default)]
    pub category_tree_node_ancestors: Vec<WireAncestor>,
    #[serde(default)]
    pub category_tree_node_level: Option<u32>,
    #[serde(default)]
    pub relevancy: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireSuggestions {
    #[serde(default)]
    pub category_suggestions: Vec<WireSuggestion>,
    #[serde(default)]
    pub category_tree_id: serde_json::Value,
    #[serde(default)]
    pub category_tree_version: Option<String>,
}

pub(crate) fn suggestions_from_wire(w: WireSuggestions) -> Result<CategorySuggestions, String> {
    let tree_id = parse_id("categoryTreeId", &w.category_tree_id)?;
    let mut suggestions = Vec::with_capacity(w.category_suggestions.len());
    for (i, s) in w.category_suggestions.into_iter().enumerate() {
        let id = parse_id(
            &format!("categorySuggestions[{i}].category.categoryId"),
            &s.category.category_id,
        )?;
        let mut ancestors = Vec::with_capacity(s.category_tree_node_ancestors.len());
        let n = s.category_tree_node_ancestors.len();
        for (k, a) in s.category_tree_node_ancestors.into_iter().enumerate() {
            ancestors.push(Ancestor {
                id: parse_id(
                    &format!("categorySuggestions[{i}].categoryTreeNodeAncestors[{k}].categoryId"),
                    &a.category_id,
                )?,
                name: a.category_name.unwrap_or_default(),
                // Ordered from the parent to the root: the level follows from the position
                // when the service leaves it out.
                level: a.category_tree_node_level.unwrap_or((n - 1 - k) as u32),
                subtree_href: a.category_subtree_node_href,
            });
        }
        suggestions.push(CategorySuggestion {
            category: CategoryRef {
                id,
                name: s.category.category_name.unwrap_or_default(),
            },
            level: s.category_tree_node_level.unwrap_or(n as u32),
            ancestors,
            relevancy: s.relevancy.map(|r| match r {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            }),
        });
    }
    Ok(CategorySuggestions {
        tree_id,
        tree_version: w.category_tree_version.unwrap_or_default(),
        suggestions,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireNode {
    #[serde(default)]
    pub category: Option<WireCategory>,
    #[serde(default)]
    pub category_tree_node_level: Option<u32>,
    #[serde(default)]
    pub child_category_tree_nodes: Vec<WireNode>,
    #[serde(default)]
    pub leaf_category_tree_node: Option<bool>,
    #[serde(default)]
    pub parent_category_tree_node_href: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireSubtree {
    pub category_subtree_node: WireNode,
    #[serde(default)]
    pub category_tree_id: serde_json::Value,
    #[serde(default)]
    pub category_tree_version: Option<String>,
}

fn parent_from_href(href: &str) -> Option<u32> {
    let url = Url::parse(href).ok()?;
    let value = url
        .query_pairs()
        .find(|(k, _)| k == "category_id")
        .map(|(_, v)| v.into_owned())?;
    value.parse().ok()
}

fn flatten(node: WireNode, parent: Option<u32>, out: &mut Vec<Category>) -> Result<(), String> {
    let category = node
        .category
        .ok_or_else(|| "a node has no category".to_owned())?;
    let id = parse_id("categoryId", &category.category_id)?;
    let children: Vec<u32> = node
        .child_category_tree_nodes
        .iter()
        .map(|c| {
            c.category
                .as_ref()
                .map_or(Err("a node has no category".to_owned()), |c| {
                    parse_id("categoryId", &c.category_id)
                })
        })
        .collect::<Result<_, _>>()?;
    out.push(Category {
        id,
        name: category.category_name.unwrap_or_default(),
        parent,
        leaf: node.leaf_category_tree_node.unwrap_or(false),
        children,
    });
    for child in node.child_category_tree_nodes {
        flatten(child, Some(id), out)?;
    }
    Ok(())
}

pub(crate) fn subtree_from_wire(w: WireSubtree) -> Result<CategorySubtree, String> {
    let tree_id = parse_id("categoryTreeId", &w.category_tree_id)?;
    let level = w
        .category_subtree_node
        .category_tree_node_level
        .unwrap_or(0);
    let parent = w
        .category_subtree_node
        .parent_category_tree_node_href
        .as_deref()
        .and_then(parent_from_href);
    let mut categories = Vec::new();
    flatten(w.category_subtree_node, parent, &mut categories)?;
    Ok(CategorySubtree {
        tree_id,
        tree_version: w.category_tree_version.unwrap_or_default(),
        level,
        categories,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireConstraint {
    #[serde(default)]
    pub aspect_data_type: Option<AspectDataType>,
    #[serde(default)]
    pub aspect_required: Option<bool>,
    #[serde(default)]
    pub aspect_mode: Option<AspectMode>,
    #[serde(default)]
    pub item_to_aspect_cardinality: Option<AspectCardinality>,
    #[serde(default)]
    pub aspect_usage: Option<AspectUsage>,
    #[serde(default)]
    pub aspect_enabled_for_variations: Option<bool>,
    #[serde(default)]
    pub aspect_max_length: Option<u32>,
    #[serde(default)]
    pub aspect_format: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireAspectValue {
    #[serde(default)]
    pub localized_value: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireAspect {
    pub localized_aspect_name: String,
    #[serde(default)]
    pub aspect_constraint: Option<WireConstraint>,
    #[serde(default)]
    pub aspect_values: Vec<WireAspectValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireAspects {
    #[serde(default)]
    pub aspects: Vec<WireAspect>,
}

pub(crate) fn aspects_from_wire(category_id: u32, w: WireAspects) -> ItemAspects {
    let aspects = w
        .aspects
        .into_iter()
        .map(|a| {
            let c = a.aspect_constraint.unwrap_or(WireConstraint {
                aspect_data_type: None,
                aspect_required: None,
                aspect_mode: None,
                item_to_aspect_cardinality: None,
                aspect_usage: None,
                aspect_enabled_for_variations: None,
                aspect_max_length: None,
                aspect_format: None,
            });
            Aspect {
                name: a.localized_aspect_name,
                data_type: c.aspect_data_type.unwrap_or(AspectDataType::String),
                required: c.aspect_required.unwrap_or(false),
                mode: c.aspect_mode.unwrap_or(AspectMode::FreeText),
                cardinality: c
                    .item_to_aspect_cardinality
                    .unwrap_or(AspectCardinality::Single),
                usage: c.aspect_usage,
                enabled_for_variations: c.aspect_enabled_for_variations.unwrap_or(false),
                max_length: c.aspect_max_length,
                format: c.aspect_format,
                values: a
                    .aspect_values
                    .into_iter()
                    .map(|v| v.localized_value)
                    .collect(),
            }
        })
        .collect();
    ItemAspects {
        category_id,
        aspects,
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireDefaultTreeId {
    #[serde(default)]
    pub category_tree_id: serde_json::Value,
    #[serde(default)]
    pub category_tree_version: Option<String>,
}

pub(crate) fn default_tree_id_from_wire(w: WireDefaultTreeId) -> Result<DefaultTreeId, String> {
    Ok(DefaultTreeId {
        tree_id: parse_id("categoryTreeId", &w.category_tree_id)?,
        tree_version: w.category_tree_version.unwrap_or_default(),
    })
}
