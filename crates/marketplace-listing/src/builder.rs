//! A listing built from what the compile-time checks give: a `LeafCategory` (`category!`) and
//! the `Aspects` of `aspects!`, so typed code never checks them again.

use std::collections::BTreeMap;

use marketplaces::Marketplace;
use taxonomy_aspects::Aspects;
use taxonomy_data::LeafCategory;

use crate::check::{CompiledIn, Problem, ProblemKind, Problems, check};
use crate::model::Vouched;
use crate::{
    Amount, Availability, Condition, InventoryItem, Listing, ListingPolicies, Offer,
    PricingSummary, Product, ShipToLocationAvailability,
};

/// Builds a [`Listing`] from a leaf category and its aspects as `category!` and `aspects!`
/// give them; the price is in the marketplace's currency, quantities are whole numbers.
///
/// ```
/// use marketplace_listing::{Condition, ListingBuilder};
/// use taxonomy_macros::{aspects, category};
///
/// let listing = ListingBuilder::new(
///     "DESKTOP-1",
///     category!(EBAY_US, "179"),
///     aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "MPN": "7010" }),
/// )
/// .title("Dell OptiPlex 7010 desktop")
/// .condition(Condition::UsedExcellent)
/// .quantity(3)
/// .price("149.00")
/// .policies("fulfillment-1", "payment-1", "return-1")
/// .merchant_location_key("warehouse-1")
/// .build()
/// .unwrap();
/// assert_eq!(listing.offer.pricing_summary.unwrap().price.unwrap().currency, "USD");
/// ```
#[derive(Debug, Clone)]
pub struct ListingBuilder {
    listing: Listing,
    mismatch: Option<Problem>,
}

impl ListingBuilder {
    /// A listing of `sku` in `leaf` with `aspects` (checked for `leaf` by `aspects!`; aspects
    /// checked for another category make [`build`](Self::build) fail).
    pub fn new(sku: impl Into<String>, leaf: LeafCategory, aspects: Aspects) -> Self {
        let marketplace: Marketplace = leaf.site().into();
        let map: BTreeMap<String, Vec<String>> = aspects
            .listing()
            .names()
            .map(|name| {
                let values = aspects.listing().values(name).unwrap_or_default().to_vec();
                (name.to_owned(), values)
            })
            .collect();
        let mismatch = (aspects.category_id() != leaf.id()
            || aspects.marketplace_id() != marketplace.marketplace_id())
        .then(|| Problem {
            field: "inventoryItem.product.aspects".into(),
            kind: ProblemKind::AspectsOfAnotherCategory {
                marketplace_id: aspects.marketplace_id(),
                category_id: aspects.category_id(),
            },
        });
        let listing = Listing {
            inventory_item: InventoryItem {
                product: Some(Product {
                    aspects: map.clone(),
                    ..Product::default()
                }),
                ..InventoryItem::default()
            },
            offer: Offer {
                sku: sku.into(),
                // The Inventory API's id (EBAY_MOTORS for eBay Motors).
                marketplace_id: marketplace.inventory_marketplace_id().into(),
                format: Some("FIXED_PRICE".into()),
                category_id: Some(leaf.id().to_string()),
                ..Offer::default()
            },
            vouched: mismatch.is_none().then_some(Vouched {
                marketplace,
                category_id: leaf.id(),
                aspects: map,
            }),
        };
        Self { listing, mismatch }
    }

    fn product(&mut self) -> &mut Product {
        self.listing
            .inventory_item
            .product
            .get_or_insert_with(Product::default)
    }

    /// `product.title` (at most 80 characters).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.product().title = Some(title.into());
        self
    }

    /// `product.subtitle` (at most 55 characters).
    pub fn subtitle(mut self, subtitle: impl Into<String>) -> Self {
        self.product().subtitle = Some(subtitle.into());
        self
    }

    /// `product.description` (at most 500,000 characters).
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.product().description = Some(description.into());
        self
    }

    /// Adds a picture (`https`, at most 24).
    pub fn image(mut self, url: impl Into<String>) -> Self {
        self.product().image_urls.push(url.into());
        self
    }

    /// `product.brand` and `product.mpn`.
    pub fn brand_mpn(mut self, brand: impl Into<String>, mpn: impl Into<String>) -> Self {
        let product = self.product();
        product.brand = Some(brand.into());
        product.mpn = Some(mpn.into());
        self
    }

    /// `condition`.
    pub fn condition(mut self, condition: Condition) -> Self {
        self.listing.inventory_item.condition = Some(condition);
        self
    }

    /// The quantity: the inventory item's `shipToLocationAvailability.quantity` and the
    /// offer's `availableQuantity`.
    pub fn quantity(mut self, quantity: u32) -> Self {
        self.listing.inventory_item.availability = Some(Availability {
            ship_to_location_availability: Some(ShipToLocationAvailability {
                quantity: Some(quantity.into()),
                ..ShipToLocationAvailability::default()
            }),
            ..Availability::default()
        });
        self.listing.offer.available_quantity = Some(quantity.into());
        self
    }

    /// The price, a decimal (`"19.99"`), in the marketplace's currency.
    pub fn price(mut self, value: impl Into<String>) -> Self {
        let currency =
            Marketplace::from_inventory_marketplace_id(&self.listing.offer.marketplace_id)
                .map(|m| m.currency())
                .unwrap_or_default();
        self.listing.offer.pricing_summary = Some(PricingSummary {
            price: Some(Amount {
                value: value.into(),
                currency: currency.into(),
            }),
            ..PricingSummary::default()
        });
        self
    }

    /// The three business policies: fulfillment, payment, return.
    pub fn policies(
        mut self,
        fulfillment: impl Into<String>,
        payment: impl Into<String>,
        returns: impl Into<String>,
    ) -> Self {
        self.listing.offer.listing_policies = Some(ListingPolicies {
            fulfillment_policy_id: Some(fulfillment.into()),
            payment_policy_id: Some(payment.into()),
            return_policy_id: Some(returns.into()),
            ..ListingPolicies::default()
        });
        self
    }

    /// `merchantLocationKey`: the inventory location it ships from.
    pub fn merchant_location_key(mut self, key: impl Into<String>) -> Self {
        self.listing.offer.merchant_location_key = Some(key.into());
        self
    }

    /// The listing, or every problem the check finds (the category and the aspects, checked
    /// at compile time, are not checked again).
    pub fn build(self) -> Result<Listing, Problems> {
        let mut problems: Vec<Problem> = self.mismatch.into_iter().collect();
        problems.extend(check(&self.listing, &CompiledIn));
        if problems.is_empty() {
            Ok(self.listing)
        } else {
            Err(Problems(problems))
        }
    }
}
