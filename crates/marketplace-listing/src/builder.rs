//! A listing built from what the compile-time checks give: `category!`'s leaf, `aspects!`'s
//! aspects and `condition!`'s condition, each carrying its category in its type
//! (`taxonomy_data::typed::Checked<In<EBAY_US, 179>, …>`), so typed code never checks them
//! again and cannot mix categories: aspects or a condition checked for another category or
//! marketplace than the listing's is a compile error naming both.

use std::collections::BTreeMap;
use std::marker::PhantomData;

use marketplaces::Marketplace;
use taxonomy_aspects::Aspects;
use taxonomy_data::LeafCategory;
use taxonomy_data::typed::{Checked, In, Unresolved};

use crate::check::{CompiledIn, Problem, ProblemKind, Problems, check};
use crate::model::Vouched;
use crate::{
    Amount, Availability, CardCondition, Condition, ConditionDescriptor, Grade, Grader,
    InventoryItem, Listing, ListingPolicies, Offer, PackageWeightAndSize, PricingSummary, Product,
    ShipToLocationAvailability,
};
use serde_json::Value;

/// Builds a [`Listing`] from a leaf category, its aspects and its condition as `category!`,
/// `aspects!` and `condition!` give them; the price is in the marketplace's currency,
/// quantities are whole numbers. `C` is the listing's category as a type
/// (`taxonomy_data::typed::In<EBAY_US, 179>`).
///
/// ```ignore
/// use marketplace_listing::{Condition, ListingBuilder};
/// use taxonomy_macros::{aspects, category, condition};
///
/// let listing = ListingBuilder::new(
///     "DESKTOP-1",
///     category!(EBAY_US, "179"),
///     aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "MPN": "7010" }),
/// )
/// .title("Dell OptiPlex 7010 desktop")
/// .description("A Dell OptiPlex 7010 desktop, tested and working.")
/// .image("https://example.com/1.jpg")
/// .condition(condition!(EBAY_US, "179", NEW))
/// .quantity(3)
/// .price("149.00")
/// .policies("fulfillment-1", "payment-1", "return-1")
/// .merchant_location_key("warehouse-1")
/// .build()
/// .unwrap();
/// assert_eq!(listing.inventory_item.condition, Some(Condition::New));
/// assert_eq!(listing.offer.pricing_summary.unwrap().price.unwrap().currency, "USD");
/// ```
///
/// (`condition!` needs the site's condition policies in the snapshots directory, which this
/// repository does not commit: taxonomy-macros' `tests/ui.rs` compiles and runs this example
/// against snapshots allowing `NEW` in 179. Without them, `.condition` takes a
/// [`Condition`], which [`build`](Self::build) checks.)
///
/// Aspects of another category do not compile, naming both:
///
/// ```compile_fail
/// use marketplace_listing::ListingBuilder;
/// use taxonomy_macros::{aspects, category};
///
/// // error[E0277]: aspects checked for taxonomy_data::typed::In<EBAY_US, 177> given to a
/// // listing of taxonomy_data::typed::In<EBAY_US, 179>
/// let _ = ListingBuilder::new(
///     "DESKTOP-1",
///     category!(EBAY_US, "179"),
///     aspects!(EBAY_US, "177", { "Brand": "Dell" }),
/// );
/// ```
pub struct ListingBuilder<C> {
    listing: Listing,
    mismatch: Option<Problem>,
    category: PhantomData<fn() -> C>,
}

impl<C> std::fmt::Debug for ListingBuilder<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListingBuilder")
            .field("listing", &self.listing)
            .field("mismatch", &self.mismatch)
            .finish()
    }
}

impl<C> Clone for ListingBuilder<C> {
    fn clone(&self) -> Self {
        Self {
            listing: self.listing.clone(),
            mismatch: self.mismatch.clone(),
            category: PhantomData,
        }
    }
}

/// Aspects checked (by `aspects!`) for category `Self`, given to a listing of category `L`:
/// implemented when they are the same category (or when a macro already failed).
#[diagnostic::on_unimplemented(
    message = "aspects checked for {Self} given to a listing of {L}",
    label = "aspects checked for {Self}, not for the listing's {L}",
    note = "write the listing's marketplace and category in aspects!, as in its category!"
)]
pub trait AspectsOf<L> {}

impl<M, const ID: u32> AspectsOf<In<M, ID>> for In<M, ID> {}
impl<M, const ID: u32> AspectsOf<In<M, ID>> for Unresolved {}
impl<C> AspectsOf<Unresolved> for C {}

/// A condition checked (by `condition!`) for category `Self`, given to a listing of
/// category `L`: implemented when they are the same category (or when a macro already
/// failed).
#[diagnostic::on_unimplemented(
    message = "condition checked for {Self} given to a listing of {L}",
    label = "condition checked for {Self}, not for the listing's {L}",
    note = "write the listing's marketplace and category in condition!, as in its category!"
)]
pub trait ConditionOf<L> {}

impl<M, const ID: u32> ConditionOf<In<M, ID>> for In<M, ID> {}
impl<M, const ID: u32> ConditionOf<In<M, ID>> for Unresolved {}
impl<C> ConditionOf<Unresolved> for C {}

/// What [`ListingBuilder::condition`] takes for a listing of category `L`: `condition!`'s
/// value checked for `L`, or a [`Condition`] (checked by [`ListingBuilder::build`] against
/// the compiled-in condition policy).
pub trait ConditionFor<L> {
    /// The condition.
    fn into_condition(self) -> Condition;
}

impl<L> ConditionFor<L> for Condition {
    fn into_condition(self) -> Condition {
        self
    }
}

impl<L, D: ConditionOf<L>> ConditionFor<L> for Checked<D, Condition> {
    fn into_condition(self) -> Condition {
        self.condition()
    }
}

impl<C> ListingBuilder<C> {
    /// A listing of `sku` in `leaf` (`category!`) with `aspects` (`aspects!`, checked for the
    /// same marketplace and category: else a compile error naming both).
    pub fn new<A: AspectsOf<C>>(
        sku: impl Into<String>,
        leaf: Checked<C, LeafCategory>,
        aspects: Checked<A, Aspects>,
    ) -> Self {
        let leaf = leaf.leaf();
        let aspects = aspects.into_inner();
        let marketplace: Marketplace = leaf.site().into();
        let map: BTreeMap<String, Vec<String>> = aspects
            .listing()
            .names()
            .map(|name| {
                let values = aspects.listing().values(name).unwrap_or_default().to_vec();
                (name.to_owned(), values)
            })
            .collect();
        // The types tie them; kept for a build whose macros failed (no program runs then).
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
        Self {
            listing,
            mismatch,
            category: PhantomData,
        }
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

    /// `condition`: `condition!`'s, checked at compile time for this listing's category
    /// (another category's or marketplace's is a compile error naming both), or a
    /// [`Condition`], checked by [`build`](Self::build).
    pub fn condition(mut self, condition: impl ConditionFor<C>) -> Self {
        self.listing.inventory_item.condition = Some(condition.into_condition());
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

    /// Adds pictures (`https`, at most 24 in all), in order.
    pub fn images<S: Into<String>>(mut self, urls: impl IntoIterator<Item = S>) -> Self {
        self.product()
            .image_urls
            .extend(urls.into_iter().map(Into::into));
        self
    }

    /// Adds a European Article Number (`product.ean`).
    pub fn ean(mut self, ean: impl Into<String>) -> Self {
        self.product().ean.push(ean.into());
        self
    }

    /// Adds a Universal Product Code (`product.upc`).
    pub fn upc(mut self, upc: impl Into<String>) -> Self {
        self.product().upc.push(upc.into());
        self
    }

    /// Adds an International Standard Book Number (`product.isbn`).
    pub fn isbn(mut self, isbn: impl Into<String>) -> Self {
        self.product().isbn.push(isbn.into());
        self
    }

    /// `conditionDescription`: more about a used item's condition, in the seller's words.
    pub fn condition_description(mut self, text: impl Into<String>) -> Self {
        self.listing.inventory_item.condition_description = Some(text.into());
        self
    }

    /// Adds a condition descriptor (`conditionDescriptors`, repeatable), as
    /// getItemConditionPolicies lists them for the category:
    /// [`ConditionDescriptor::new`], [`ConditionDescriptor::ungraded`], ….
    pub fn condition_descriptor(mut self, descriptor: ConditionDescriptor) -> Self {
        self.listing
            .inventory_item
            .condition_descriptors
            .push(descriptor);
        self
    }

    /// Adds condition descriptors, in order (the three of [`ConditionDescriptor::graded`]).
    pub fn condition_descriptors(
        mut self,
        descriptors: impl IntoIterator<Item = ConditionDescriptor>,
    ) -> Self {
        self.listing
            .inventory_item
            .condition_descriptors
            .extend(descriptors);
        self
    }

    /// A graded trading card: the condition `LIKE_NEW` (2750, "Graded" in eBay's
    /// trading-card categories, 183454, 261328, 183050 on EBAY_US) and the descriptors of
    /// [`ConditionDescriptor::graded`] (its grader, its grade and, unless blank, its
    /// certification number), replacing any given before.
    ///
    /// ```
    /// use marketplace_listing::{Grade, Grader, ListingBuilder};
    /// use taxonomy_macros::{aspects, category};
    ///
    /// let card = ListingBuilder::new(
    ///     "CHARIZARD-PSA10",
    ///     category!(EBAY_US, "183454"),
    ///     aspects!(EBAY_US, "183454", { "Game": "Pokémon TCG", "Card Name": "Charizard" }),
    /// )
    /// .title("Charizard Base Set 4/102 PSA 10")
    /// .description("Holo, graded PSA 10.")
    /// .image("https://example.com/charizard.jpg")
    /// .graded_card(Grader::Psa, Grade::Ten, "12345678")
    /// .quantity(1)
    /// .price("4999.00") // in the marketplace's currency, USD
    /// .policies("fulfillment-1", "payment-1", "return-1")
    /// .merchant_location_key("warehouse-1")
    /// .build()?;
    /// assert_eq!(card.inventory_item.condition_descriptors.len(), 3);
    /// # Ok::<(), marketplace_listing::Problems>(())
    /// ```
    pub fn graded_card(
        mut self,
        grader: Grader,
        grade: Grade,
        certification_number: impl Into<String>,
    ) -> Self {
        let item = &mut self.listing.inventory_item;
        item.condition = Some(Condition::LikeNew);
        item.condition_descriptors =
            ConditionDescriptor::graded(grader, grade, certification_number);
        self
    }

    /// An ungraded trading card: the condition `USED_VERY_GOOD` (4000, "Ungraded" in eBay's
    /// trading-card categories) and its Card Condition ([`ConditionDescriptor::ungraded`]),
    /// replacing any descriptors given before.
    pub fn ungraded_card(mut self, card_condition: CardCondition) -> Self {
        let item = &mut self.listing.inventory_item;
        item.condition = Some(Condition::UsedVeryGood);
        item.condition_descriptors = vec![ConditionDescriptor::ungraded(card_condition)];
        self
    }

    /// `packageWeightAndSize`: the package's weight, size and type.
    pub fn package_weight_and_size(mut self, package: PackageWeightAndSize) -> Self {
        self.listing.inventory_item.package_weight_and_size = Some(package);
        self
    }

    /// The offer's `listingDescription`, when the listing's description is not the
    /// product's (at most 500,000 characters).
    pub fn listing_description(mut self, description: impl Into<String>) -> Self {
        self.listing.offer.listing_description = Some(description.into());
        self
    }

    /// The offer's `listingDuration` (createOffer's `ListingDurationEnum`: `GTC`, the only
    /// one of a fixed-price listing and what [`build`](Self::build) sets when none is given;
    /// `DAYS_7`, … for an auction).
    pub fn listing_duration(mut self, duration: impl Into<String>) -> Self {
        self.listing
            .offer
            .other
            .insert("listingDuration".into(), Value::String(duration.into()));
        self
    }

    /// The offer's `lotSize`: how many items one purchase buys (a whole number).
    pub fn lot_size(mut self, size: u32) -> Self {
        self.listing
            .offer
            .other
            .insert("lotSize".into(), Value::from(size));
        self
    }

    /// The offer's `quantityLimitPerBuyer`: the most one buyer may buy (a whole number).
    pub fn quantity_limit_per_buyer(mut self, limit: u32) -> Self {
        self.listing
            .offer
            .other
            .insert("quantityLimitPerBuyer".into(), Value::from(limit));
        self
    }

    /// The listing, or every problem the check finds (the category and the aspects, checked
    /// at compile time, are not checked again). A fixed-price listing without a
    /// `listingDuration` gets `GTC`, the only one createOffer takes for it.
    pub fn build(mut self) -> Result<Listing, Problems> {
        let offer = &mut self.listing.offer;
        if offer.format.as_deref() == Some("FIXED_PRICE") {
            offer
                .other
                .entry("listingDuration")
                .or_insert_with(|| Value::String("GTC".into()));
        }
        let mut problems: Vec<Problem> = self.mismatch.into_iter().collect();
        problems.extend(check(&self.listing, &CompiledIn));
        if problems.is_empty() {
            Ok(self.listing)
        } else {
            Err(Problems(problems))
        }
    }
}
