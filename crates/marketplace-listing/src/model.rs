//! eBay's own shapes, under eBay's field names: the inventory item (createOrReplaceInventoryItem's
//! body, eBay's `InventoryItem`) and the offer (createOffer's body, `EbayOfferDetailsWithKeys`).
//! A field this crate does not name is kept as it came (`other`), so a file eBay accepts
//! round-trips unchanged.

use std::collections::BTreeMap;

use marketplaces::Marketplace;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::Condition;

/// An inventory item: createOrReplaceInventoryItem's body (eBay's `InventoryItem`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InventoryItem {
    /// The product: title, description, aspects, images, identifiers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<Product>,
    /// The item's condition (`ConditionEnum`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<Condition>,
    /// More about a used item's condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition_description: Option<String>,
    /// The condition descriptors of some categories (trading cards).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub condition_descriptors: Vec<ConditionDescriptor>,
    /// How many can be bought.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<Availability>,
    /// The package's weight and size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_weight_and_size: Option<PackageWeightAndSize>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `Product`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Product {
    /// The title (at most 80 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The subtitle (at most 55 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtitle: Option<String>,
    /// The description (at most 500,000 characters, HTML allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The item specifics: `{"Brand": ["Dell"], …}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub aspects: BTreeMap<String, Vec<String>>,
    /// The pictures (at most 24, each `https`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_urls: Vec<String>,
    /// The brand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brand: Option<String>,
    /// The manufacturer part number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpn: Option<String>,
    /// European Article Numbers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ean: Vec<String>,
    /// Universal Product Codes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upc: Vec<String>,
    /// International Standard Book Numbers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub isbn: Vec<String>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `ConditionDescriptor`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionDescriptor {
    /// The descriptor's id.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its value ids.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// Free text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_info: Option<String>,
}

/// eBay's `Availability`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Availability {
    /// The quantity that ships.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ship_to_location_availability: Option<ShipToLocationAvailability>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `ShipToLocationAvailability`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShipToLocationAvailability {
    /// The quantity (a whole number, at least 0), kept as written so the check can say
    /// what is wrong with `1.5` or `-1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<Number>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `PackageWeightAndSize`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageWeightAndSize {
    /// The dimensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<Value>,
    /// `LETTER`, `PACKAGE_THICK_ENVELOPE`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_type: Option<String>,
    /// The weight: `{"value": 1.2, "unit": "KILOGRAM"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<Value>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// An offer: createOffer's body (eBay's `EbayOfferDetailsWithKeys`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Offer {
    /// The inventory item's SKU (at most 50 characters).
    #[serde(default)]
    pub sku: String,
    /// `EBAY_US`, `EBAY_DE`, …
    #[serde(default)]
    pub marketplace_id: String,
    /// `FIXED_PRICE` (the default) or `AUCTION`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The leaf category, as text (`"9355"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_id: Option<String>,
    /// The price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pricing_summary: Option<PricingSummary>,
    /// The quantity offered (a whole number, at least 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_quantity: Option<Number>,
    /// The business policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing_policies: Option<ListingPolicies>,
    /// The inventory location the item ships from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merchant_location_key: Option<String>,
    /// The listing's description, when not the product's (at most 500,000 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing_description: Option<String>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `PricingSummary`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PricingSummary {
    /// The price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Amount>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `Amount`: a decimal in text and its currency.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Amount {
    /// The amount, `"19.99"`.
    #[serde(default)]
    pub value: String,
    /// ISO 4217, the marketplace's ([`marketplaces::Marketplace::currency`]).
    #[serde(default)]
    pub currency: String,
}

/// eBay's `ListingPolicies`: the three business policies a published offer needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListingPolicies {
    /// The fulfillment (shipping) policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fulfillment_policy_id: Option<String>,
    /// The payment policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_policy_id: Option<String>,
    /// The return policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_policy_id: Option<String>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A listing: what a `listing` file holds, `{"inventoryItem": …, "offer": …}`, each in
/// eBay's own JSON (createOrReplaceInventoryItem's body and createOffer's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// The inventory item.
    pub inventory_item: InventoryItem,
    /// The offer (its `sku` is the inventory item's).
    pub offer: Offer,
    /// What `category!` and `aspects!` vouched for, when built by
    /// [`ListingBuilder`](crate::ListingBuilder).
    #[serde(skip)]
    pub(crate) vouched: Option<Vouched>,
}

/// What `category!` and `aspects!` vouched for ([`ListingBuilder`](crate::ListingBuilder)
/// writes it, the check reads it): the check skips the category and the aspects
/// while the listing still names that category and holds those aspects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vouched {
    pub(crate) marketplace: Marketplace,
    pub(crate) category_id: u32,
    pub(crate) aspects: BTreeMap<String, Vec<String>>,
}

impl Vouched {
    pub(crate) fn covers(
        &self,
        marketplace: Marketplace,
        category_id: u32,
        product: Option<&Product>,
    ) -> bool {
        self.marketplace == marketplace
            && self.category_id == category_id
            && product.is_some_and(|p| p.aspects == self.aspects)
    }
}

impl Listing {
    /// The SKU (the offer's).
    pub fn sku(&self) -> &str {
        &self.offer.sku
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_condition_is_its_condition_enum_name_in_json() {
        for &c in Condition::ALL {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.name()));
            assert_eq!(serde_json::from_str::<Condition>(&json).unwrap(), c);
        }
        let e = serde_json::from_str::<Condition>("\"USED\"").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("\"USED\" is not a ConditionEnum value (one of NEW, LIKE_NEW"),
            "{e}"
        );
    }
}
