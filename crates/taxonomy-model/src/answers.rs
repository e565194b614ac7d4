//! The typed answers of the Taxonomy API's calls, and their wire shapes.
//!
//! With the `serde` feature the answers implement `serde::Serialize`, each field under the
//! name of the eBay field it holds (`categoryTreeId`, `localizedAspectName`, …, as each
//! field's documentation names it), so a backend can pass them on through its own JSON API.
//! The shape is this crate's, not the wire's: ids are JSON numbers, an aspect's
//! `aspectConstraint` fields sit on the aspect itself, compatibility values are strings, and a
//! field the answer left out is `null` (or `[]`, or `false` for the flags).

use serde::Deserialize;
use taxonomy_tree::bounded;

/// A category named by id and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CategoryRef {
    /// The category id.
    #[cfg_attr(feature = "serde", serde(rename = "categoryId"))]
    pub id: u32,
    /// Its name, in the language requested.
    #[cfg_attr(feature = "serde", serde(rename = "categoryName"))]
    pub name: String,
}

/// An ancestor of a suggested category (`categoryTreeNodeAncestors`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Ancestor {
    /// The ancestor's id.
    #[cfg_attr(feature = "serde", serde(rename = "categoryId"))]
    pub id: u32,
    /// Its name (the root's name carries no information).
    #[cfg_attr(feature = "serde", serde(rename = "categoryName"))]
    pub name: String,
    /// Its level in the tree (the root is 0).
    #[cfg_attr(feature = "serde", serde(rename = "categoryTreeNodeLevel"))]
    pub level: u32,
    /// `categorySubtreeNodeHref`: the get-category-subtree URL of the ancestor, if sent.
    #[cfg_attr(feature = "serde", serde(rename = "categorySubtreeNodeHref"))]
    pub subtree_href: Option<String>,
}

/// One suggested category (getCategorySuggestions).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CategorySuggestion {
    /// The suggested (leaf) category.
    #[cfg_attr(feature = "serde", serde(rename = "category"))]
    pub category: CategoryRef,
    /// Its ancestors, from the immediate parent up to the root, as the service orders them.
    #[cfg_attr(feature = "serde", serde(rename = "categoryTreeNodeAncestors"))]
    pub ancestors: Vec<Ancestor>,
    /// `categoryTreeNodeLevel`: the category's level (the root is 0).
    #[cfg_attr(feature = "serde", serde(rename = "categoryTreeNodeLevel"))]
    pub level: u32,
    /// `relevancy`, as sent (the service reserves the field; it may be absent).
    #[cfg_attr(feature = "serde", serde(rename = "relevancy"))]
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

/// The answer of getCategorySuggestions: the suggestions, most relevant first.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CategorySuggestions {
    /// `categoryTreeId`.
    #[cfg_attr(feature = "serde", serde(rename = "categoryTreeId"))]
    pub tree_id: u32,
    /// `categoryTreeVersion`.
    #[cfg_attr(feature = "serde", serde(rename = "categoryTreeVersion"))]
    pub tree_version: String,
    /// The suggestions, in the service's order (most relevant first); empty when nothing
    /// matched.
    #[cfg_attr(feature = "serde", serde(rename = "categorySuggestions"))]
    pub suggestions: Vec<CategorySuggestion>,
}

/// The answer of getDefaultCategoryTreeId.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct DefaultTreeId {
    /// `categoryTreeId`.
    #[cfg_attr(feature = "serde", serde(rename = "categoryTreeId"))]
    pub tree_id: u32,
    /// `categoryTreeVersion`.
    #[cfg_attr(feature = "serde", serde(rename = "categoryTreeVersion"))]
    pub tree_version: String,
}

macro_rules! wire_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident = $wire:literal,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vmeta])* $variant,)*
            /// A value this crate does not know, kept as sent.
            Unknown(String),
        }

        impl $name {
            /// Maps the wire value; a value this crate does not know becomes `Unknown`, as sent.
            pub fn from_wire(s: &str) -> Self {
                match s {
                    $($wire => Self::$variant,)*
                    other => Self::Unknown(other.to_owned()),
                }
            }

            /// The wire value.
            pub fn as_str(&self) -> &str {
                match self {
                    $(Self::$variant => $wire,)*
                    Self::Unknown(s) => s,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        /// Serializes as the wire value (what [`as_str`](Self::as_str) gives).
        #[cfg(feature = "serde")]
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
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

wire_enum! {
    /// `aspectApplicableTo`: whether an aspect describes the catalog product or the item.
    AspectApplicableTo {
        /// `ITEM`: an item (instance) aspect; its value varies per item.
        Item = "ITEM",
        /// `PRODUCT`: a catalog product aspect.
        Product = "PRODUCT",
    }
}

wire_enum! {
    /// `aspectAdvancedDataType`: a further requirement on the values' format.
    AspectAdvancedDataType {
        /// `NUMERIC_RANGE`: the value is a numeric range.
        NumericRange = "NUMERIC_RANGE",
    }
}

/// One aspect (item specific) of a category: what a listing fills in (eBay's `Aspect`).
///
/// Every documented field is kept. A field the answer leaves out is `None` (or empty, or
/// `false` for the flags), never a made-up default, and an enum value this crate does not
/// know is kept as `Unknown(value)`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Aspect {
    /// `localizedAspectName`, e.g. `Brand`.
    #[cfg_attr(feature = "serde", serde(rename = "localizedAspectName"))]
    pub name: String,
    /// `aspectConstraint.aspectDataType`.
    #[cfg_attr(feature = "serde", serde(rename = "aspectDataType"))]
    pub data_type: Option<AspectDataType>,
    /// `aspectConstraint.aspectAdvancedDataType`, if sent (e.g. `NUMERIC_RANGE`).
    #[cfg_attr(feature = "serde", serde(rename = "aspectAdvancedDataType"))]
    pub advanced_data_type: Option<AspectAdvancedDataType>,
    /// `aspectConstraint.aspectRequired`: a listing must give it.
    #[cfg_attr(feature = "serde", serde(rename = "aspectRequired"))]
    pub required: bool,
    /// `aspectConstraint.aspectMode`.
    #[cfg_attr(feature = "serde", serde(rename = "aspectMode"))]
    pub mode: Option<AspectMode>,
    /// `aspectConstraint.itemToAspectCardinality`.
    #[cfg_attr(feature = "serde", serde(rename = "itemToAspectCardinality"))]
    pub cardinality: Option<AspectCardinality>,
    /// `aspectConstraint.aspectUsage`.
    #[cfg_attr(feature = "serde", serde(rename = "aspectUsage"))]
    pub usage: Option<AspectUsage>,
    /// `aspectConstraint.aspectApplicableTo` (product aspect, item aspect, or both).
    #[cfg_attr(feature = "serde", serde(rename = "aspectApplicableTo"))]
    pub applicable_to: Vec<AspectApplicableTo>,
    /// `aspectConstraint.aspectEnabledForVariations`.
    #[cfg_attr(feature = "serde", serde(rename = "aspectEnabledForVariations"))]
    pub enabled_for_variations: bool,
    /// `aspectConstraint.aspectMaxLength`, if sent (item aspects).
    #[cfg_attr(feature = "serde", serde(rename = "aspectMaxLength"))]
    pub max_length: Option<u32>,
    /// `aspectConstraint.aspectFormat`, if sent (e.g. `int32`, `YYYYMMDD`).
    #[cfg_attr(feature = "serde", serde(rename = "aspectFormat"))]
    pub format: Option<String>,
    /// `aspectConstraint.expectedRequiredByDate`, as sent: the approximate date from which
    /// the aspect will be required.
    #[cfg_attr(feature = "serde", serde(rename = "expectedRequiredByDate"))]
    pub expected_required_by_date: Option<String>,
    /// `aspectValues`: allowed values for [`AspectMode::SelectionOnly`], suggestions
    /// otherwise, each with its `valueConstraints`.
    #[cfg_attr(feature = "serde", serde(rename = "aspectValues"))]
    pub values: Vec<AspectValue>,
    /// `relevanceIndicator`, if sent (it needs the metadata.insights scope).
    #[cfg_attr(feature = "serde", serde(rename = "relevanceIndicator"))]
    pub relevance: Option<RelevanceIndicator>,
}

impl Aspect {
    /// The values' text (`aspectValues[].localizedValue`), in the service's order.
    pub fn value_names(&self) -> impl Iterator<Item = &str> {
        self.values.iter().map(|v| v.value.as_str())
    }
}

/// One value of an aspect (eBay's `AspectValue`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct AspectValue {
    /// `localizedValue`.
    #[cfg_attr(feature = "serde", serde(rename = "localizedValue"))]
    pub value: String,
    /// `valueConstraints`: when the value may be chosen (empty: always).
    #[cfg_attr(feature = "serde", serde(rename = "valueConstraints"))]
    pub constraints: Vec<ValueConstraint>,
}

/// When an aspect value may be chosen: only when another aspect (the control aspect) has
/// one of the listed values (eBay's `ValueConstraint`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ValueConstraint {
    /// `applicableForLocalizedAspectName`: the control aspect.
    #[cfg_attr(feature = "serde", serde(rename = "applicableForLocalizedAspectName"))]
    pub aspect_name: Option<String>,
    /// `applicableForLocalizedAspectValues`: its values that allow this one.
    #[cfg_attr(
        feature = "serde",
        serde(rename = "applicableForLocalizedAspectValues")
    )]
    pub aspect_values: Vec<String>,
}

/// How often buyers searched with an aspect (eBay's `RelevanceIndicator`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct RelevanceIndicator {
    /// `searchCount`: searches over the last 30 days, if sent.
    #[cfg_attr(feature = "serde", serde(rename = "searchCount"))]
    pub search_count: Option<u64>,
}

/// The answer of getItemAspectsForCategory.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ItemAspects {
    /// The category asked for.
    #[cfg_attr(feature = "serde", serde(rename = "categoryId"))]
    pub category_id: u32,
    /// Its aspects, in the service's order (required ones first on the real service).
    #[cfg_attr(feature = "serde", serde(rename = "aspects"))]
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

/// One entry of getExpiredCategories: an expired leaf category and the active leaf category
/// that replaced it (eBay's `ExpiredCategory`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ExpiredCategory {
    /// `fromCategoryId`: the expired leaf category.
    #[cfg_attr(feature = "serde", serde(rename = "fromCategoryId"))]
    pub from: u32,
    /// `toCategoryId`: the active leaf category that replaced it.
    #[cfg_attr(feature = "serde", serde(rename = "toCategoryId"))]
    pub to: u32,
}

/// The answer of getExpiredCategories: the expired leaf categories of a tree that were
/// mapped to active ones (several may map to one).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct ExpiredCategories {
    /// The tree asked for.
    #[cfg_attr(feature = "serde", serde(rename = "categoryTreeId"))]
    pub tree_id: u32,
    /// The mappings in the service's order (empty when the tree has none, or on `204`).
    #[cfg_attr(feature = "serde", serde(rename = "expiredCategories"))]
    pub mappings: Vec<ExpiredCategory>,
}

impl ExpiredCategories {
    /// The active category that replaced `id`, if `id` expired and was mapped.
    pub fn replacement(&self, id: u32) -> Option<u32> {
        self.mappings.iter().find(|m| m.from == id).map(|m| m.to)
    }
}

/// A parts-compatibility property of a category, e.g. `Make` (eBay's `CompatibilityProperty`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CompatibilityProperty {
    /// `name`: what getCompatibilityPropertyValues takes as `compatibility_property` and in
    /// its filter.
    #[cfg_attr(feature = "serde", serde(rename = "name"))]
    pub name: String,
    /// `localizedName`: the name to show, in the marketplace's language.
    #[cfg_attr(feature = "serde", serde(rename = "localizedName"))]
    pub localized_name: Option<String>,
}

/// The answer of getCompatibilityProperties (empty on `204`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CompatibilityProperties {
    /// The category asked for.
    #[cfg_attr(feature = "serde", serde(rename = "categoryId"))]
    pub category_id: u32,
    /// The properties, in the service's order.
    #[cfg_attr(feature = "serde", serde(rename = "compatibilityProperties"))]
    pub properties: Vec<CompatibilityProperty>,
}

/// The answer of getCompatibilityPropertyValues (empty on `204`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CompatibilityPropertyValues {
    /// The category asked for.
    #[cfg_attr(feature = "serde", serde(rename = "categoryId"))]
    pub category_id: u32,
    /// The property asked for.
    #[cfg_attr(feature = "serde", serde(rename = "compatibilityProperty"))]
    pub property: String,
    /// `compatibilityPropertyValues[].value`, in the service's order.
    #[cfg_attr(feature = "serde", serde(rename = "compatibilityPropertyValues"))]
    pub values: Vec<String>,
}

/// One entry of a fetchItemAspects file: a leaf category and its aspects (eBay's
/// `CategoryAspect`).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct CategoryAspects {
    /// The leaf category.
    #[cfg_attr(feature = "serde", serde(rename = "category"))]
    pub category: CategoryRef,
    /// Its aspects, as in [`ItemAspects::aspects`].
    #[cfg_attr(feature = "serde", serde(rename = "aspects"))]
    pub aspects: Vec<Aspect>,
}

// ---- wire shapes ----

/// The most aspects one category may have in an answer or a fetchItemAspects entry:
/// 100,000. A real category has a few dozen (Graphics/Video Cards, one of the larger, has 20);
/// the limit leaves room for any growth and for tools that compare large generated files,
/// while keeping a hostile answer of 60 MB of `{}` aspects (5.4 GB once decoded) to a few
/// MB.
pub(crate) const MAX_ASPECTS: usize = 100_000;

/// The most array elements one answer (or one fetchItemAspects entry) may hold in all:
/// aspects, their values, the values' constraints, every list of names. 1,000,000: the
/// largest real answers list a few tens of thousands of values (brands, models); a decoded
/// element takes 24 to 100 bytes, so the limit keeps the decoded answer near 100 MB whatever
/// it is made of (see taxonomy-tree's `bounded`).
pub(crate) const MAX_ANSWER_ELEMENTS: usize = 1_000_000;

fn aspects_at_most<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<WireAspect>, D::Error> {
    bounded::vec_at_most(d, MAX_ASPECTS, "aspects in one category")
}

/// An optional field of which only a scalar is kept (see `bounded::skipped`).
fn skipped_opt<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<serde_json::Value>, D::Error> {
    bounded::skipped(d).map(|v| (!v.is_null()).then_some(v))
}

/// A server's string as a message shows it: quoted whole when short, else only its length. A
/// string can be megabytes; and one cut in the middle could keep the start of a secret that
/// the sanitizer, which sees only the message, would no longer recognise.
fn quote_short(text: &str) -> String {
    if text.len() <= 64 {
        format!("{text:?}")
    } else {
        format!("(a string of {} bytes)", text.len())
    }
}

/// Turns a wire id into a u32: a decimal string, as eBay documents every id (the same rule as
/// the tree decoder's; a JSON number is refused there and here).
pub(crate) fn parse_id(field: &str, value: &serde_json::Value) -> Result<u32, String> {
    match value {
        serde_json::Value::String(s) if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) => s
            .parse::<u32>()
            .ok()
            .filter(|&n| n < u32::MAX)
            .ok_or_else(|| format!("{field} {} is out of range", quote_short(s))),
        serde_json::Value::String(s) => Err(format!(
            "{field} {} is not a decimal string",
            quote_short(s)
        )),
        serde_json::Value::Number(n) => Err(format!(
            "{field} {n} is a number, expected a decimal string like \"{n}\""
        )),
        serde_json::Value::Null => Err(format!("{field} is missing")),
        serde_json::Value::Bool(b) => Err(format!("{field} is {b}, expected a decimal string")),
        serde_json::Value::Array(_) => {
            Err(format!("{field} is an array, expected a decimal string"))
        }
        serde_json::Value::Object(_) => {
            Err(format!("{field} is an object, expected a decimal string"))
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireCategory {
    #[serde(default, deserialize_with = "bounded::skipped")]
    pub category_id: serde_json::Value,
    #[serde(default)]
    pub category_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireAncestor {
    #[serde(default, deserialize_with = "bounded::skipped")]
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
    #[serde(default)]
    pub category: Option<WireCategory>,
    #[serde(default, deserialize_with = "bounded::vec")]
    pub category_tree_node_ancestors: Vec<WireAncestor>,
    #[serde(default)]
    pub category_tree_node_level: Option<u32>,
    #[serde(default, deserialize_with = "skipped_opt")]
    pub relevancy: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireSuggestions {
    #[serde(default, deserialize_with = "bounded::vec")]
    pub category_suggestions: Vec<WireSuggestion>,
    #[serde(default, deserialize_with = "bounded::skipped")]
    pub category_tree_id: serde_json::Value,
    #[serde(default)]
    pub category_tree_version: Option<String>,
}

/// Decodes a getCategorySuggestions answer for the tree `asked` (its `categoryTreeId` when
/// the answer leaves it out). A suggestion without its category (or the category's id) is
/// refused: it names nothing a listing could use.
pub(crate) fn suggestions_from_wire(
    asked: u32,
    w: WireSuggestions,
) -> Result<CategorySuggestions, String> {
    let tree_id = if w.category_tree_id.is_null() {
        asked
    } else {
        parse_id("categoryTreeId", &w.category_tree_id)?
    };
    let mut suggestions = Vec::with_capacity(w.category_suggestions.len());
    for (i, s) in w.category_suggestions.into_iter().enumerate() {
        let category = s
            .category
            .ok_or_else(|| format!("categorySuggestions[{i}].category is missing"))?;
        let id = parse_id(
            &format!("categorySuggestions[{i}].category.categoryId"),
            &category.category_id,
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
                name: category.category_name.unwrap_or_default(),
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

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct WireConstraint {
    pub aspect_data_type: Option<AspectDataType>,
    pub aspect_advanced_data_type: Option<AspectAdvancedDataType>,
    pub aspect_required: Option<bool>,
    pub aspect_mode: Option<AspectMode>,
    pub item_to_aspect_cardinality: Option<AspectCardinality>,
    pub aspect_usage: Option<AspectUsage>,
    #[serde(deserialize_with = "bounded::vec")]
    pub aspect_applicable_to: Vec<AspectApplicableTo>,
    pub aspect_enabled_for_variations: Option<bool>,
    pub aspect_max_length: Option<u32>,
    pub aspect_format: Option<String>,
    pub expected_required_by_date: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct WireValueConstraint {
    pub applicable_for_localized_aspect_name: Option<String>,
    #[serde(deserialize_with = "bounded::vec")]
    pub applicable_for_localized_aspect_values: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireAspectValue {
    #[serde(default)]
    pub localized_value: Option<String>,
    #[serde(default, deserialize_with = "bounded::vec")]
    pub value_constraints: Vec<WireValueConstraint>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireRelevance {
    #[serde(default)]
    pub search_count: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireAspect {
    #[serde(default)]
    pub localized_aspect_name: Option<String>,
    #[serde(default)]
    pub aspect_constraint: Option<Box<WireConstraint>>,
    #[serde(default, deserialize_with = "bounded::vec")]
    pub aspect_values: Vec<WireAspectValue>,
    #[serde(default)]
    pub relevance_indicator: Option<WireRelevance>,
}

impl WireAspect {
    /// The aspect; `at` names it in errors (`aspects[3]`). An aspect is of no use without its
    /// name, nor a value without its text: both are refused, naming the field. Every other
    /// field is optional, as the service documents it.
    pub(crate) fn into_aspect(self, at: impl Fn() -> String) -> Result<Aspect, String> {
        let c = self.aspect_constraint.map(|c| *c).unwrap_or_default();
        let name = self
            .localized_aspect_name
            .ok_or_else(|| format!("{}.localizedAspectName is missing", at()))?;
        let mut values = Vec::with_capacity(self.aspect_values.len());
        for (k, v) in self.aspect_values.into_iter().enumerate() {
            values.push(AspectValue {
                value: v.localized_value.ok_or_else(|| {
                    format!("{}.aspectValues[{k}].localizedValue is missing", at())
                })?,
                constraints: v
                    .value_constraints
                    .into_iter()
                    .map(|k| ValueConstraint {
                        aspect_name: k.applicable_for_localized_aspect_name,
                        aspect_values: k.applicable_for_localized_aspect_values,
                    })
                    .collect(),
            });
        }
        Ok(Aspect {
            name,
            data_type: c.aspect_data_type,
            advanced_data_type: c.aspect_advanced_data_type,
            required: c.aspect_required.unwrap_or(false),
            mode: c.aspect_mode,
            cardinality: c.item_to_aspect_cardinality,
            usage: c.aspect_usage,
            applicable_to: c.aspect_applicable_to,
            enabled_for_variations: c.aspect_enabled_for_variations.unwrap_or(false),
            max_length: c.aspect_max_length,
            format: c.aspect_format,
            expected_required_by_date: c.expected_required_by_date,
            values,
            relevance: self.relevance_indicator.map(|r| RelevanceIndicator {
                search_count: r.search_count,
            }),
        })
    }
}

/// Each aspect of `wire`, named `{prefix}[i]` in errors (`prefix` is built only for one).
fn aspects_of(prefix: impl Fn() -> String, wire: Vec<WireAspect>) -> Result<Vec<Aspect>, String> {
    wire.into_iter()
        .enumerate()
        .map(|(i, a)| a.into_aspect(|| format!("{}[{i}]", prefix())))
        .collect()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireAspects {
    #[serde(default, deserialize_with = "aspects_at_most")]
    pub aspects: Vec<WireAspect>,
}

pub(crate) fn aspects_from_wire(category_id: u32, w: WireAspects) -> Result<ItemAspects, String> {
    Ok(ItemAspects {
        category_id,
        aspects: aspects_of(|| "aspects".to_owned(), w.aspects)?,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireCategoryAspect {
    #[serde(default)]
    pub category: Option<WireCategory>,
    #[serde(default, deserialize_with = "aspects_at_most")]
    pub aspects: Vec<WireAspect>,
}

/// One fetchItemAspects entry; `index` names it in errors.
pub(crate) fn category_aspects_from_wire(
    index: usize,
    w: WireCategoryAspect,
) -> Result<CategoryAspects, String> {
    let category = w
        .category
        .ok_or_else(|| format!("categoryAspects[{index}].category is missing"))?;
    let id = parse_id(
        &format!("categoryAspects[{index}].category.categoryId"),
        &category.category_id,
    )?;
    Ok(CategoryAspects {
        category: CategoryRef {
            id,
            name: category.category_name.unwrap_or_default(),
        },
        aspects: aspects_of(|| format!("categoryAspects[{index}].aspects"), w.aspects)?,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireExpiredCategory {
    #[serde(default, deserialize_with = "bounded::skipped")]
    pub from_category_id: serde_json::Value,
    #[serde(default, deserialize_with = "bounded::skipped")]
    pub to_category_id: serde_json::Value,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireExpiredCategories {
    #[serde(default, deserialize_with = "bounded::vec")]
    pub expired_categories: Vec<WireExpiredCategory>,
}

pub(crate) fn expired_from_wire(
    tree_id: u32,
    w: WireExpiredCategories,
) -> Result<ExpiredCategories, String> {
    let mut mappings = Vec::with_capacity(w.expired_categories.len());
    for (i, e) in w.expired_categories.into_iter().enumerate() {
        mappings.push(ExpiredCategory {
            from: parse_id(
                &format!("expiredCategories[{i}].fromCategoryId"),
                &e.from_category_id,
            )?,
            to: parse_id(
                &format!("expiredCategories[{i}].toCategoryId"),
                &e.to_category_id,
            )?,
        });
    }
    Ok(ExpiredCategories { tree_id, mappings })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireCompatibilityProperty {
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub localized_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireCompatibilityProperties {
    #[serde(default, deserialize_with = "bounded::vec")]
    pub compatibility_properties: Vec<WireCompatibilityProperty>,
}

pub(crate) fn compatibility_properties_from_wire(
    category_id: u32,
    w: WireCompatibilityProperties,
) -> Result<CompatibilityProperties, String> {
    let mut properties = Vec::with_capacity(w.compatibility_properties.len());
    for (i, p) in w.compatibility_properties.into_iter().enumerate() {
        properties.push(CompatibilityProperty {
            name: p
                .name
                .ok_or_else(|| format!("compatibilityProperties[{i}].name is missing"))?,
            localized_name: p.localized_name,
        });
    }
    Ok(CompatibilityProperties {
        category_id,
        properties,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireCompatibilityValue {
    #[serde(default)]
    pub value: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireCompatibilityValues {
    #[serde(default, deserialize_with = "bounded::vec")]
    pub compatibility_property_values: Vec<WireCompatibilityValue>,
}

pub(crate) fn compatibility_values_from_wire(
    category_id: u32,
    property: &str,
    w: WireCompatibilityValues,
) -> Result<CompatibilityPropertyValues, String> {
    let mut values = Vec::with_capacity(w.compatibility_property_values.len());
    for (i, v) in w.compatibility_property_values.into_iter().enumerate() {
        values.push(
            v.value
                .ok_or_else(|| format!("compatibilityPropertyValues[{i}].value is missing"))?,
        );
    }
    Ok(CompatibilityPropertyValues {
        category_id,
        property: property.to_owned(),
        values,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireDefaultTreeId {
    #[serde(default, deserialize_with = "bounded::skipped")]
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
