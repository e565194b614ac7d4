//! A listing with variations: eBay's inventory item group (createOrReplaceInventoryItemGroup's
//! body, eBay's `InventoryItemGroup`) and its variants, each an inventory item with its offer,
//! as a `listing` file holds them:
//! `{"inventoryItemGroup": …, "variants": [{"inventoryItem": …, "offer": …}, …]}`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::Listing;

/// An inventory item group: createOrReplaceInventoryItemGroup's body (eBay's
/// `InventoryItemGroup`), what the variants share and what they vary by.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InventoryItemGroup {
    /// The group's key (`inventoryItemGroupKey`, the path parameter of
    /// createOrReplaceInventoryItemGroup), chosen by the seller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inventory_item_group_key: Option<String>,
    /// The listing's title (at most 80 characters), required before publishing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The listing's subtitle (at most 55 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtitle: Option<String>,
    /// The listing's description, required before publishing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The aspects every variant shares: `{"Brand": ["Acme"], …}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub aspects: BTreeMap<String, Vec<String>>,
    /// The group's pictures (each `https`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_urls: Vec<String>,
    /// What the variants vary by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub varies_by: Option<VariesBy>,
    /// The SKUs of the group's inventory items (`variantSKUs`).
    #[serde(default, rename = "variantSKUs", skip_serializing_if = "Vec::is_empty")]
    pub variant_skus: Vec<String>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `VariesBy`: the variation axes and their values, and the axis whose values the
/// pictures show.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VariesBy {
    /// The aspect whose values the variants' pictures show (`["Color"]`): each of its values
    /// needs a picture.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aspects_image_varies_by: Vec<String>,
    /// The axes, each an aspect with every value the variants take.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub specifications: Vec<Specification>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `Specification`: one variation axis (`{"name": "Size", "values": ["S", "M"]}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Specification {
    /// The aspect's name.
    #[serde(default)]
    pub name: String,
    /// Every value the variants take.
    #[serde(default)]
    pub values: Vec<String>,
}

/// The axes `taxonomy_macros::variations!` checked against the category's pinned rules
/// (each enabled for variations, not Brand, selection-only values allowed, within eBay's
/// limits) as the group's `variesBy.specifications`, in the order written; no
/// `aspectsImageVariesBy`.
impl From<taxonomy_aspects::Variations> for VariesBy {
    fn from(variations: taxonomy_aspects::Variations) -> Self {
        VariesBy {
            aspects_image_varies_by: Vec::new(),
            specifications: variations
                .axes()
                .iter()
                .map(|(name, values)| Specification {
                    name: (*name).to_owned(),
                    values: values.iter().map(|v| (*v).to_owned()).collect(),
                })
                .collect(),
            other: Map::new(),
        }
    }
}

/// A listing with variations, as a `listing` file holds it: the group and its variants, each
/// an inventory item (its own aspects, condition, quantity, pictures) with its offer (price,
/// category, marketplace, format, policies).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupListing {
    /// The group.
    pub inventory_item_group: InventoryItemGroup,
    /// The variants, in order.
    #[serde(default)]
    pub variants: Vec<Listing>,
}

/// What a `listing` file holds: one listing, or a group of variants.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ListingFile {
    /// `{"inventoryItemGroup": …, "variants": […]}`.
    Group(Box<GroupListing>),
    /// `{"inventoryItem": …, "offer": …}`.
    Single(Box<Listing>),
}

impl ListingFile {
    /// Reads a listing file's JSON: a group when it has `inventoryItemGroup`, else a single
    /// listing (so a single listing's error names its own fields).
    ///
    /// # Errors
    /// The JSON error of the kind of file it is.
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        let value: Value = serde_json::from_str(text)?;
        if value.get("inventoryItemGroup").is_some() {
            serde_json::from_value(value).map(|g| Self::Group(Box::new(g)))
        } else {
            serde_json::from_value(value).map(|l| Self::Single(Box::new(l)))
        }
    }
}
