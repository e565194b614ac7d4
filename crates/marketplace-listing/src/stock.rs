//! Stock and prices: eBay's bulkUpdatePriceQuantity, and [`StockUpdate`], many quantity and
//! price changes sent as few of those calls as eBay takes, within eBay's 250 revisions of a
//! listing a calendar day.
//!
//! **How many requests a call.** eBay's pages disagree. bulkUpdatePriceQuantity's own
//! description (Inventory API reference, and `sell_inventory_v1_oas3.json`) says "Up to 25
//! offers associated with an inventory item may be updated with one bulkUpdatePriceQuantity
//! call. Only one SKU (one product) can be updated per call."; its request type,
//! `BulkPriceQuantity` (the reference's type page and the same description), says the call
//! updates "the total 'ship-to-home' quantity of one or more inventory items (up to 25)", its
//! `requests` array holding one `PriceQuantity` (one SKU) each. This module sends up to
//! [`PRICE_QUANTITY_LIMIT`] (25) requests a call, one a SKU, as the request type describes,
//! each naming at most 25 offers.
//!
//! **Revisions.** The call's description: "Each listing can be revised up to 250 times in one
//! calendar day. If this revision threshold is reached, the seller will be blocked from
//! revising the item until the next calendar day." It names no timezone; eBay's call limits
//! reset at midnight Pacific time ("The day starts at midnight, 00:00:00 PST",
//! GetApiAccessRules' DailyHardLimit), so the day counted here is the calendar day in
//! America/Los_Angeles (daylight time from the second Sunday of March to the first Sunday of
//! November). A request revises each live listing it names in `offers`, and, when it sets the
//! item's quantity, every live listing of the SKU; [`Revisions`] counts them, and a change
//! that would revise a listing a 251st time that day is refused before any request
//! ([`StockError::RevisionLimit`]).
//!
//! **Consistency.** eBay lists the lesser of the inventory item's
//! `shipToLocationAvailability.quantity` and an offer's `availableQuantity`; a quantity change
//! sets both, the item's and every published offer's of the SKU, in one request. Nothing here
//! writes an inventory item (createOrReplaceInventoryItem replaces the whole item: a partial
//! one would wipe fields such as the EAN): only bulkUpdatePriceQuantity. It is "not designed
//! to work with unpublished offers": those are left as they are.
//!
//! ```no_run
//! # async fn run(inventory: marketplace_listing::aio::Inventory) -> Result<(), marketplace_listing::stock::StockError> {
//! use marketplace_listing::stock::{MemoryRevisions, StockState, StockUpdate};
//! let mut state = StockState::default(); // what eBay holds: read for the SKUs it lacks
//! let revisions = MemoryRevisions::default();
//! let mut update = StockUpdate::new();
//! update.set_quantity("BOLT-1", 40).set_quantity("BOLT-1", 38); // the last one wins
//! update.set_price("BOLT-2", "2.49", "USD");
//! let report = inventory.update_stock(&update, &mut state, &revisions).await;
//! for (sku, error) in &report.failed {
//!     eprintln!("{sku}: {error}");
//! }
//!
//! // An order arrived (marketplace-orders' OrderFeed handed it over): the application says
//! // 7 of BOLT-1 are left; every offer of BOLT-1 gets 7, in one bulkUpdatePriceQuantity call.
//! inventory.push_stock_left("BOLT-1", 7, &revisions).await?;
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use marketplace_client::api::ApiRequest;
use marketplace_client::model::ServiceError;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::aio::{Inventory, OfferRecord, path};
use crate::error::{ErrorKind, InventoryError, ListingError};
use crate::{Amount, InventoryItem};

/// How many requests (one SKU each) one bulkUpdatePriceQuantity call takes: 25, as its
/// `BulkPriceQuantity` type says (see the module's documentation for the page that says 1).
pub const PRICE_QUANTITY_LIMIT: usize = 25;

/// How many times eBay lets a listing be revised in one calendar day (bulkUpdatePriceQuantity's
/// description).
pub const REVISIONS_A_DAY: u32 = 250;

/// One request of bulkUpdatePriceQuantity (eBay's `PriceQuantity`): a SKU's item quantity
/// and/or its offers' quantities and prices.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PriceQuantity {
    /// The SKU (required with `ship_to_location_availability`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sku: Option<String>,
    /// The item's total ship-to-home quantity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ship_to_location_availability: Option<ShipToQuantity>,
    /// The published offers to change (eBay's `OfferPriceQuantity`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub offers: Vec<OfferPriceQuantity>,
}

/// `shipToLocationAvailability` of a [`PriceQuantity`]: the item's quantity.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShipToQuantity {
    /// The total ship-to-home quantity.
    pub quantity: u32,
}

/// eBay's `OfferPriceQuantity`: an offer's new quantity and/or price.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferPriceQuantity {
    /// The offer's id.
    pub offer_id: String,
    /// The quantity available in the offer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_quantity: Option<u32>,
    /// The offer's price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Amount>,
}

/// eBay's `PriceQuantityResponse`: one offer's or item's result.
#[derive(Debug, Clone, PartialEq)]
pub struct PriceQuantityResult {
    /// The SKU.
    pub sku: Option<String>,
    /// The offer (absent for an item's quantity alone).
    pub offer_id: Option<String>,
    /// Its HTTP status (200: updated).
    pub status_code: u16,
    /// eBay's errors, typed.
    pub errors: Vec<InventoryError>,
    /// eBay's warnings, typed.
    pub warnings: Vec<InventoryError>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResult {
    #[serde(default)]
    sku: Option<String>,
    #[serde(default)]
    offer_id: Option<String>,
    #[serde(default)]
    status_code: u16,
    #[serde(default)]
    errors: Vec<ServiceError>,
    #[serde(default)]
    warnings: Vec<ServiceError>,
}

/// What eBay holds of one SKU: the item's quantity and its offers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SkuStock {
    /// The item's `shipToLocationAvailability.quantity`.
    pub quantity: Option<u32>,
    /// The SKU's offers.
    pub offers: Vec<OfferStock>,
}

/// What eBay holds of one offer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OfferStock {
    /// The offer's id.
    pub offer_id: String,
    /// The live listing's id (a published offer whose listing has not ended), else `None`:
    /// bulkUpdatePriceQuantity changes only published offers.
    pub listing_id: Option<String>,
    /// The offer's `availableQuantity`.
    pub available_quantity: Option<u32>,
    /// The offer's price.
    pub price: Option<Amount>,
}

/// What eBay holds of each SKU, as last read or written by [`Inventory::update_stock`]: what
/// is equal to it is not sent. A SKU it lacks is read first (bulkGetInventoryItem, 25 a call,
/// and getOffers); an application that knows its offers (from publishing) puts them in with
/// [`StockState::insert`] and saves those reads.
#[derive(Debug, Clone, Default)]
pub struct StockState {
    skus: HashMap<String, SkuStock>,
}

impl StockState {
    /// Sets what eBay holds of `sku`.
    pub fn insert(&mut self, sku: impl Into<String>, stock: SkuStock) {
        self.skus.insert(sku.into(), stock);
    }

    /// What eBay holds of `sku`, as known.
    pub fn get(&self, sku: &str) -> Option<&SkuStock> {
        self.skus.get(sku)
    }

    /// Forgets `sku` (read again before its next change). A sale lowers the offer's
    /// `availableQuantity` on eBay without this state knowing: forget the SKU after an order
    /// (or use [`Inventory::push_stock_left`], which reads it afresh), else a change back to
    /// the value held before the sale is taken for equal and not sent.
    pub fn forget(&mut self, sku: &str) {
        self.skus.remove(sku);
    }
}

/// A batch of quantity and price changes: per SKU the last change of each wins.
#[derive(Debug, Clone, Default)]
pub struct StockUpdate {
    quantities: BTreeMap<String, u32>,
    prices: BTreeMap<String, BTreeMap<Option<String>, Amount>>,
    changes: usize,
}

impl StockUpdate {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// `sku`'s quantity: the item's and each of its published offers' `availableQuantity`.
    pub fn set_quantity(&mut self, sku: &str, quantity: u32) -> &mut Self {
        self.quantities.insert(sku.to_owned(), quantity);
        self.changes += 1;
        self
    }

    /// The price of each published offer of `sku` (`value` such as `"19.99"`, ISO 4217
    /// `currency`).
    pub fn set_price(&mut self, sku: &str, value: &str, currency: &str) -> &mut Self {
        let prices = self.prices.entry(sku.to_owned()).or_default();
        prices.clear();
        prices.insert(None, amount(value, currency));
        self.changes += 1;
        self
    }

    /// The price of the offer `offer_id` of `sku` alone.
    pub fn set_offer_price(
        &mut self,
        sku: &str,
        offer_id: &str,
        value: &str,
        currency: &str,
    ) -> &mut Self {
        self.prices
            .entry(sku.to_owned())
            .or_default()
            .insert(Some(offer_id.to_owned()), amount(value, currency));
        self.changes += 1;
        self
    }

    /// How many changes were given (before coalescing).
    pub fn changes(&self) -> usize {
        self.changes
    }

    /// The SKUs changed, in order.
    fn skus(&self) -> Vec<&str> {
        let mut skus: Vec<&str> = self
            .quantities
            .keys()
            .chain(self.prices.keys())
            .map(String::as_str)
            .collect();
        skus.sort_unstable();
        skus.dedup();
        skus
    }
}

fn amount(value: &str, currency: &str) -> Amount {
    Amount {
        value: value.to_owned(),
        currency: currency.to_owned(),
    }
}

/// Why a SKU's change was not applied.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum StockError {
    /// eBay refused the SKU's request: its status and errors, typed, with eBay's messages.
    #[error("{sku}: eBay refused the change ({status}): {message}")]
    Refused {
        /// The SKU.
        sku: String,
        /// The request's status.
        status: u16,
        /// eBay's errors, typed.
        errors: Vec<InventoryError>,
        /// eBay's messages.
        message: String,
    },
    /// The change would revise `listing_id` more than [`REVISIONS_A_DAY`] times this calendar
    /// day (Pacific time); nothing was sent for the SKU.
    #[error(
        "{sku}: listing {listing_id} was revised {revisions} times today (Pacific time), \
         eBay's most a calendar day; not sent, it can be revised again from {resets_at_unix} \
         (Unix time, the next midnight in Pacific time)"
    )]
    RevisionLimit {
        /// The SKU.
        sku: String,
        /// The listing.
        listing_id: String,
        /// Its revisions today.
        revisions: u32,
        /// When the count starts again (the next midnight, Pacific time).
        resets_at: SystemTime,
        /// `resets_at` in seconds since the Unix epoch (for the message).
        resets_at_unix: u64,
    },
    /// A price was given for an offer the SKU does not have, or for a SKU without a published
    /// offer; nothing was sent for the SKU.
    #[error("{sku}: {what}")]
    NoSuchOffer {
        /// The SKU.
        sku: String,
        /// What is missing.
        what: String,
    },
    /// The SKU's state could not be read, or the call carrying it failed as a whole.
    #[error("{sku}: {message}")]
    Call {
        /// The SKU.
        sku: String,
        /// The failure.
        message: String,
        /// eBay's errors, typed, when it answered.
        errors: Vec<InventoryError>,
    },
}

/// What [`Inventory::update_stock`] did.
#[derive(Debug, Default)]
pub struct StockReport {
    /// The SKUs changed on eBay.
    pub applied: Vec<String>,
    /// The SKUs left alone: eBay already holds what was asked.
    pub unchanged: Vec<String>,
    /// The SKUs not changed, each with why; the others were applied.
    pub failed: Vec<(String, StockError)>,
    /// How many bulkUpdatePriceQuantity calls were made.
    pub calls: usize,
}

/// A count of each listing's revisions per calendar day, shared by whoever revises the
/// seller's listings (in memory: [`MemoryRevisions`]; a fleet backs it with its database).
///
/// A revision is recorded before its request is sent, and stays recorded when eBay refuses it
/// or the call fails: whether eBay counted it is not known, so the count errs on the side of
/// refusing early rather than having eBay block the listing for the rest of the day.
pub trait Revisions: Send + Sync {
    /// Records one revision of each of `listings` on `day` (days since 1970-01-01, Pacific
    /// time) when every one of them has fewer than `limit` that day; else records none and
    /// gives the first listing at `limit` with its count.
    fn try_record(&self, listings: &[&str], day: i64, limit: u32) -> Result<(), (String, u32)>;
}

/// [`Revisions`] in memory, for one process.
#[derive(Debug, Default)]
pub struct MemoryRevisions {
    counts: Mutex<HashMap<String, (i64, u32)>>,
}

impl Revisions for MemoryRevisions {
    fn try_record(&self, listings: &[&str], day: i64, limit: u32) -> Result<(), (String, u32)> {
        let mut counts = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        let today = |counts: &HashMap<String, (i64, u32)>, l: &str| match counts.get(l) {
            Some((d, n)) if *d == day => *n,
            _ => 0,
        };
        if let Some(full) = listings.iter().find(|l| today(&counts, l) >= limit) {
            return Err(((*full).to_owned(), today(&counts, full)));
        }
        for l in listings {
            let n = today(&counts, l);
            counts.insert((*l).to_owned(), (day, n + 1));
        }
        Ok(())
    }
}

impl<T: Revisions + ?Sized> Revisions for Arc<T> {
    fn try_record(&self, listings: &[&str], day: i64, limit: u32) -> Result<(), (String, u32)> {
        (**self).try_record(listings, day, limit)
    }
}

impl Inventory {
    /// bulkUpdatePriceQuantity: at most [`PRICE_QUANTITY_LIMIT`] requests; each offer's or
    /// item's result, as eBay answered (200 or 207). Counts no revision: see
    /// [`update_stock`](Self::update_stock).
    pub async fn bulk_update_price_quantity(
        &self,
        requests: &[PriceQuantity],
    ) -> Result<Vec<PriceQuantityResult>, ListingError> {
        #[derive(Deserialize)]
        struct Answers {
            #[serde(default)]
            responses: Vec<WireResult>,
        }
        let body = json!({ "requests": requests });
        let answer = self
            .call(|| {
                ApiRequest::post_segments(path(&["bulk_update_price_quantity"]))
                    .json(&body)
                    .operation("bulkUpdatePriceQuantity")
            })
            .await?;
        let typed = |e: Vec<ServiceError>| e.into_iter().map(InventoryError::from).collect();
        Ok(answer
            .json::<Answers>()?
            .responses
            .into_iter()
            .map(|w| PriceQuantityResult {
                sku: w.sku,
                offer_id: w.offer_id,
                status_code: w.status_code,
                errors: typed(w.errors),
                warnings: typed(w.warnings),
            })
            .collect())
    }

    /// What eBay holds of `skus` (bulkGetInventoryItem, 25 a call; getOffers of each SKU),
    /// added to `state`; a SKU that cannot be read, with why.
    pub async fn read_stock(
        &self,
        skus: &[&str],
        state: &mut StockState,
    ) -> Vec<(String, StockError)> {
        let mut failed = Vec::new();
        for chunk in skus.chunks(crate::aio::BULK_LIMIT) {
            let items = match self.bulk_get_inventory_item(chunk).await {
                Ok(items) => items,
                Err(e) => {
                    failed.extend(chunk.iter().map(|s| ((*s).to_owned(), call_error(s, &e))));
                    continue;
                }
            };
            for sku in chunk {
                let quantity = items
                    .iter()
                    .find(|(s, _)| s == sku)
                    .and_then(|(_, item)| item.as_ref())
                    .and_then(item_quantity);
                match self.offers_of(sku).await {
                    Ok(offers) => state.insert(
                        *sku,
                        SkuStock {
                            quantity,
                            offers: offers.iter().map(offer_stock).collect(),
                        },
                    ),
                    Err(e) => failed.push(((*sku).to_owned(), call_error(sku, &e))),
                }
            }
        }
        failed
    }

    /// getOffers of `sku` on every marketplace (none: an empty list).
    async fn offers_of(&self, sku: &str) -> Result<Vec<OfferRecord>, ListingError> {
        #[derive(Deserialize)]
        struct Offers {
            #[serde(default)]
            offers: Vec<OfferRecord>,
        }
        let answer = self
            .call(|| {
                ApiRequest::get_segments(path(&["offer"]))
                    .query("sku", sku)
                    .operation("getOffers")
            })
            .await;
        match answer {
            Ok(answer) => Ok(answer.json::<Offers>()?.offers),
            Err(e)
                if e.errors().iter().any(|e| {
                    e.kind == ErrorKind::SkuNotFound || e.kind == ErrorKind::OfferNotAvailable
                }) =>
            {
                Ok(Vec::new())
            }
            Err(e) => Err(e),
        }
    }

    /// Applies `update`: per SKU, what differs from `state` (SKUs it lacks are read first),
    /// as bulkUpdatePriceQuantity requests, [`PRICE_QUANTITY_LIMIT`] a call; a quantity
    /// sets the item's and each published offer's; each listing revised is counted in
    /// `revisions`, and a change that would revise one past [`REVISIONS_A_DAY`] today
    /// (Pacific time) is refused before sending. Each SKU refused is reported with why
    /// (eBay's errors, typed); the others are applied, and `state` follows what eBay
    /// answered.
    pub async fn update_stock(
        &self,
        update: &StockUpdate,
        state: &mut StockState,
        revisions: &dyn Revisions,
    ) -> StockReport {
        let mut report = StockReport::default();
        let unknown: Vec<&str> = update
            .skus()
            .into_iter()
            .filter(|s| state.get(s).is_none())
            .collect();
        report.failed = self.read_stock(&unknown, state).await;
        let now = SystemTime::now();
        let day = pacific_day(now);
        let mut pending: Vec<(String, PriceQuantity)> = Vec::new();
        for sku in update.skus() {
            if report.failed.iter().any(|(s, _)| s == sku) {
                continue;
            }
            let held = state.get(sku).cloned().unwrap_or_default();
            let request = match request_for(sku, update, &held) {
                Ok(Some(r)) => r,
                Ok(None) => {
                    report.unchanged.push(sku.to_owned());
                    continue;
                }
                Err(e) => {
                    report.failed.push((sku.to_owned(), e));
                    continue;
                }
            };
            let listings = revised_listings(&request, &held);
            if let Err((listing_id, count)) = revisions.try_record(&listings, day, REVISIONS_A_DAY)
            {
                let resets_at = next_pacific_midnight(now);
                report.failed.push((
                    sku.to_owned(),
                    StockError::RevisionLimit {
                        sku: sku.to_owned(),
                        listing_id,
                        revisions: count,
                        resets_at,
                        resets_at_unix: resets_at
                            .duration_since(UNIX_EPOCH)
                            .map_or(0, |d| d.as_secs()),
                    },
                ));
                continue;
            }
            pending.push((sku.to_owned(), request));
        }
        for chunk in pending.chunks(PRICE_QUANTITY_LIMIT) {
            let requests: Vec<PriceQuantity> = chunk.iter().map(|(_, r)| r.clone()).collect();
            report.calls += 1;
            match self.bulk_update_price_quantity(&requests).await {
                Ok(results) => {
                    for (sku, request) in chunk {
                        let mine: Vec<&PriceQuantityResult> = results
                            .iter()
                            .filter(|r| belongs_to(r, sku, request))
                            .collect();
                        let refused: Vec<&PriceQuantityResult> = mine
                            .iter()
                            .copied()
                            .filter(|r| r.status_code >= 300 || !r.errors.is_empty())
                            .collect();
                        if mine.is_empty() {
                            state.forget(sku);
                            report.failed.push((
                                sku.clone(),
                                StockError::Call {
                                    sku: sku.clone(),
                                    message: "bulkUpdatePriceQuantity answered nothing for it"
                                        .into(),
                                    errors: Vec::new(),
                                },
                            ));
                        } else if let Some(first) = refused.first() {
                            let errors: Vec<InventoryError> = refused
                                .iter()
                                .flat_map(|r| r.errors.iter().cloned())
                                .collect();
                            report.failed.push((
                                sku.clone(),
                                StockError::Refused {
                                    sku: sku.clone(),
                                    status: first.status_code,
                                    message: messages(&errors),
                                    errors,
                                },
                            ));
                        } else {
                            apply_to_state(state, sku, request);
                            report.applied.push(sku.clone());
                        }
                    }
                }
                Err(e) => {
                    for (sku, _) in chunk {
                        state.forget(sku);
                        report.failed.push((sku.clone(), call_error(sku, &e)));
                    }
                }
            }
        }
        report
    }

    /// After a sale (an order handed over by marketplace-orders' OrderFeed): `quantity`, the
    /// stock of `sku` the application says is left, set on the item and on every published
    /// offer of the SKU in one bulkUpdatePriceQuantity call (after getOffers and
    /// bulkGetInventoryItem read what eBay holds now; equal: nothing sent). Counted in
    /// `revisions` as [`update_stock`](Self::update_stock) counts.
    pub async fn push_stock_left(
        &self,
        sku: &str,
        quantity: u32,
        revisions: &dyn Revisions,
    ) -> Result<StockReport, StockError> {
        let mut state = StockState::default();
        let mut update = StockUpdate::new();
        update.set_quantity(sku, quantity);
        let mut report = self.update_stock(&update, &mut state, revisions).await;
        match report.failed.pop() {
            Some((_, e)) => Err(e),
            None => Ok(report),
        }
    }
}

/// The request that brings `held` to what `update` asks of `sku`, `None` when equal.
fn request_for(
    sku: &str,
    update: &StockUpdate,
    held: &SkuStock,
) -> Result<Option<PriceQuantity>, StockError> {
    let live: Vec<&OfferStock> = held
        .offers
        .iter()
        .filter(|o| o.listing_id.is_some())
        .collect();
    let mut request = PriceQuantity {
        sku: Some(sku.to_owned()),
        ..PriceQuantity::default()
    };
    let mut offers: BTreeMap<String, OfferPriceQuantity> = BTreeMap::new();
    let entry = |offers: &mut BTreeMap<String, OfferPriceQuantity>, id: &str| {
        offers
            .entry(id.to_owned())
            .or_insert_with(|| OfferPriceQuantity {
                offer_id: id.to_owned(),
                ..OfferPriceQuantity::default()
            })
            .clone()
    };
    if let Some(&q) = update.quantities.get(sku) {
        if held.quantity != Some(q) {
            request.ship_to_location_availability = Some(ShipToQuantity { quantity: q });
        }
        for o in &live {
            if o.available_quantity != Some(q) {
                let mut e = entry(&mut offers, &o.offer_id);
                e.available_quantity = Some(q);
                offers.insert(o.offer_id.clone(), e);
            }
        }
    }
    if let Some(prices) = update.prices.get(sku) {
        for (offer, price) in prices {
            let targets: Vec<&&OfferStock> = match offer {
                None => live.iter().collect(),
                Some(id) => live.iter().filter(|o| o.offer_id == *id).collect(),
            };
            if targets.is_empty() {
                return Err(StockError::NoSuchOffer {
                    sku: sku.to_owned(),
                    what: match offer {
                        None => "a price was given, and the SKU has no published offer".into(),
                        Some(id) => format!(
                            "a price was given for offer {id}, which is not a published offer of the SKU"
                        ),
                    },
                });
            }
            for o in targets {
                if o.price.as_ref() != Some(price) {
                    let mut e = entry(&mut offers, &o.offer_id);
                    e.price = Some(price.clone());
                    offers.insert(o.offer_id.clone(), e);
                }
            }
        }
    }
    request.offers = offers.into_values().collect();
    if request.ship_to_location_availability.is_none() && request.offers.is_empty() {
        return Ok(None);
    }
    Ok(Some(request))
}

/// The live listings `request` revises: those of its offers, and every one of the SKU when it
/// sets the item's quantity.
fn revised_listings<'a>(request: &PriceQuantity, held: &'a SkuStock) -> Vec<&'a str> {
    held.offers
        .iter()
        .filter(|o| {
            request.ship_to_location_availability.is_some()
                || request.offers.iter().any(|r| r.offer_id == o.offer_id)
        })
        .filter_map(|o| o.listing_id.as_deref())
        .collect()
}

/// Whether `result` answers the request of `sku`.
fn belongs_to(result: &PriceQuantityResult, sku: &str, request: &PriceQuantity) -> bool {
    result.sku.as_deref() == Some(sku)
        || result
            .offer_id
            .as_deref()
            .is_some_and(|id| request.offers.iter().any(|o| o.offer_id == id))
}

/// `state` after eBay applied `request` to `sku`.
fn apply_to_state(state: &mut StockState, sku: &str, request: &PriceQuantity) {
    let Some(held) = state.skus.get_mut(sku) else {
        return;
    };
    if let Some(q) = request.ship_to_location_availability {
        held.quantity = Some(q.quantity);
        for o in &mut held.offers {
            if o.available_quantity.is_some_and(|a| a > q.quantity) {
                o.available_quantity = Some(q.quantity);
            }
        }
    }
    for change in &request.offers {
        if let Some(o) = held
            .offers
            .iter_mut()
            .find(|o| o.offer_id == change.offer_id)
        {
            if let Some(a) = change.available_quantity {
                o.available_quantity = Some(a);
            }
            if let Some(p) = &change.price {
                o.price = Some(p.clone());
            }
        }
    }
}

fn item_quantity(item: &InventoryItem) -> Option<u32> {
    item.availability
        .as_ref()?
        .ship_to_location_availability
        .as_ref()?
        .quantity
        .as_ref()?
        .as_u64()
        .and_then(|q| u32::try_from(q).ok())
}

fn offer_stock(record: &OfferRecord) -> OfferStock {
    let live = record.status.as_deref() == Some("PUBLISHED")
        && record
            .listing
            .as_ref()
            .is_some_and(|l| l.listing_status.as_deref() != Some("ENDED"));
    OfferStock {
        offer_id: record.offer_id.clone(),
        listing_id: if live {
            record.listing.as_ref().and_then(|l| l.listing_id.clone())
        } else {
            None
        },
        available_quantity: record
            .offer
            .available_quantity
            .as_ref()
            .and_then(serde_json::Number::as_u64)
            .and_then(|q| u32::try_from(q).ok()),
        price: record
            .offer
            .pricing_summary
            .as_ref()
            .and_then(|p| p.price.clone()),
    }
}

fn messages(errors: &[InventoryError]) -> String {
    errors
        .iter()
        .map(|e| e.error.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

fn call_error(sku: &str, e: &ListingError) -> StockError {
    StockError::Call {
        sku: sku.to_owned(),
        message: e.to_string(),
        errors: e.errors().to_vec(),
    }
}

/// The calendar day in Pacific time (America/Los_Angeles: UTC-8; UTC-7 from the second Sunday
/// of March to the first Sunday of November, at 2:00 local) of `at`, in days since 1970-01-01.
pub fn pacific_day(at: SystemTime) -> i64 {
    let secs = unix_secs(at);
    (secs + pacific_offset(secs)).div_euclid(86_400)
}

/// The next midnight in Pacific time after `at`: when [`pacific_day`] turns.
pub fn next_pacific_midnight(at: SystemTime) -> SystemTime {
    let next = (pacific_day(at) + 1) * 86_400;
    // Midnight is never in a daylight-time switch (2:00), so one of the two offsets fits.
    let summer = next + 7 * 3_600;
    let utc = if pacific_offset(summer) == -7 * 3_600 {
        summer
    } else {
        next + 8 * 3_600
    };
    UNIX_EPOCH + Duration::from_secs(u64::try_from(utc).unwrap_or(0))
}

fn unix_secs(at: SystemTime) -> i64 {
    match at.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_secs()).unwrap_or(i64::MAX / 2),
        Err(e) => -i64::try_from(e.duration().as_secs()).unwrap_or(i64::MAX / 2),
    }
}

/// Pacific time's offset from UTC at `secs` (seconds since the epoch, UTC).
fn pacific_offset(secs: i64) -> i64 {
    let days = secs.div_euclid(86_400);
    let year = civil_year(days);
    let sunday_on_or_after = |d: i64| d + (7 - (d + 4).rem_euclid(7)) % 7;
    // 2:00 PST is 10:00 UTC; 2:00 PDT is 9:00 UTC.
    let start = (sunday_on_or_after(days_from_civil(year, 3, 1)) + 7) * 86_400 + 10 * 3_600;
    let end = sunday_on_or_after(days_from_civil(year, 11, 1)) * 86_400 + 9 * 3_600;
    if (start..end).contains(&secs) {
        -7 * 3_600
    } else {
        -8 * 3_600
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The year of a day since 1970-01-01.
fn civil_year(z: i64) -> i64 {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    yoe + era * 400 + i64::from(mp >= 10)
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::{next_pacific_midnight, pacific_day};

    #[test]
    fn the_revision_day_turns_at_midnight_pacific_time_in_winter_and_summer() {
        let at = |s| UNIX_EPOCH + Duration::from_secs(s);
        // 2026-01-15T08:00:00Z is midnight PST; 2026-07-15T07:00:00Z midnight PDT.
        assert_eq!(
            pacific_day(at(1_768_463_999)) + 1,
            pacific_day(at(1_768_464_000))
        );
        assert_eq!(
            pacific_day(at(1_784_098_799)) + 1,
            pacific_day(at(1_784_098_800))
        );
        assert_eq!(next_pacific_midnight(at(1_768_400_000)), at(1_768_464_000));
        assert_eq!(next_pacific_midnight(at(1_784_050_000)), at(1_784_098_800));
    }
}
