//! The Inventory API for async programs: each call, and [`Inventory::publish`], idempotent by
//! SKU, over marketplace-client's async `ApiClient`.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use marketplace_client::aio::api::ApiClient;
use marketplace_client::api::{ApiError, ApiRequest, ApiResponse};
use marketplace_client::model::ServiceError;
use marketplaces::Marketplace;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::check::{Catalog, CompiledIn, Problems, check};
use crate::error::{ErrorKind, InventoryError, ListingError, LiveInOtherFormat};
use crate::{InventoryItem, Listing, Offer};

/// The Inventory API's path below the API host.
pub(crate) const BASE: [&str; 3] = ["sell", "inventory", "v1"];

/// How many requests one bulk call takes (bulkCreateOrReplaceInventoryItem, bulkCreateOffer,
/// bulkPublishOffer: "up to 25").
pub const BULK_LIMIT: usize = 25;

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What sends a request and waits: the async client and `tokio::time::sleep`, or the blocking
/// client and `thread::sleep` (the blocking layer, whose futures are ready when first polled).
pub(crate) trait Transport: Send + Sync {
    fn send(&self, request: ApiRequest) -> BoxFuture<'_, Result<ApiResponse, ApiError>>;
    fn sleep(&self, delay: Duration) -> BoxFuture<'_, ()>;
}

impl Transport for ApiClient {
    fn send(&self, request: ApiRequest) -> BoxFuture<'_, Result<ApiResponse, ApiError>> {
        Box::pin(ApiClient::send(self, request))
    }

    fn sleep(&self, delay: Duration) -> BoxFuture<'_, ()> {
        Box::pin(tokio::time::sleep(delay))
    }
}

#[path = "group_publish.rs"]
mod group_publish;
pub use group_publish::GroupPublished;

pub(crate) fn path(rest: &[&str]) -> Vec<String> {
    BASE.iter().chain(rest).map(|s| (*s).to_owned()).collect()
}

/// A listing out: its offer and its listing id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// The offer's id.
    pub offer_id: String,
    /// The eBay listing's id.
    pub listing_id: String,
    /// Whether eBay already held this listing live, as it is (getOffers: the offer published,
    /// its listing not ended, no field to update; getInventoryItem: the same item), so that
    /// nothing was written (`publish_many` only; `publish` always writes).
    pub unchanged: bool,
}

/// An offer as getOffers answers it: its id, status and listing, and the offer's fields.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OfferRecord {
    /// The offer's id.
    pub offer_id: String,
    /// `PUBLISHED` or `UNPUBLISHED`.
    #[serde(default)]
    pub status: Option<String>,
    /// The listing, once published.
    #[serde(default)]
    pub listing: Option<ListingDetails>,
    /// The offer's fields.
    #[serde(flatten)]
    pub offer: Offer,
}

/// eBay's `ListingDetails` of a published offer.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListingDetails {
    /// The listing's id.
    #[serde(default)]
    pub listing_id: Option<String>,
    /// `ACTIVE`, `ENDED`, …
    #[serde(default)]
    pub listing_status: Option<String>,
}

/// One item's result of a bulk call: its status and eBay's errors for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BulkResult {
    /// The SKU (bulkCreateOrReplaceInventoryItem, bulkCreateOffer).
    pub sku: Option<String>,
    /// The offer's marketplace (bulkCreateOffer).
    pub marketplace_id: Option<String>,
    /// The offer's format, `FIXED_PRICE` or `AUCTION` (bulkCreateOffer).
    pub format: Option<String>,
    /// The offer's id (bulkCreateOffer, bulkPublishOffer).
    pub offer_id: Option<String>,
    /// The listing's id (bulkPublishOffer).
    pub listing_id: Option<String>,
    /// The item's HTTP status.
    pub status_code: u16,
    /// eBay's errors for the item, typed.
    pub errors: Vec<InventoryError>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireResult {
    #[serde(default)]
    sku: Option<String>,
    #[serde(default)]
    marketplace_id: Option<String>,
    #[serde(default)]
    format: Option<String>,
    #[serde(default)]
    offer_id: Option<String>,
    #[serde(default)]
    listing_id: Option<String>,
    #[serde(default)]
    status_code: u16,
    #[serde(default)]
    errors: Vec<ServiceError>,
}

#[derive(Deserialize)]
struct WireResults {
    #[serde(default)]
    responses: Vec<WireResult>,
}

impl From<WireResult> for BulkResult {
    fn from(w: WireResult) -> Self {
        Self {
            sku: w.sku,
            marketplace_id: w.marketplace_id,
            format: w.format,
            offer_id: w.offer_id,
            listing_id: w.listing_id,
            status_code: w.status_code,
            errors: w.errors.into_iter().map(InventoryError::from).collect(),
        }
    }
}

/// What publishing does when the SKU already has a live listing on the marketplace in the
/// other format (an auction beside a fixed-price listing, or the reverse). eBay takes both
/// ("the same SKU can be offered through an auction and a fixed-price listing concurrently",
/// getOffers), so a listing whose file switched from `FIXED_PRICE` to `AUCTION` would leave the
/// old listing live beside the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OtherFormat {
    /// Refuse with [`ListingError::OtherFormatLive`] naming the live offer, before anything is
    /// changed (the default). Within one `publish_many`, a listing of the SKU in the other
    /// format is wanted too, and not refused.
    #[default]
    Refuse,
    /// End the other listing first (withdrawOffer), then publish.
    Withdraw,
    /// Keep both live (`publish_many` then asks no getOffers).
    Keep,
}

/// The Inventory API of one seller (the client's user token), for async programs.
///
/// ```no_run
/// # async fn run(api: marketplace_client::aio::api::ApiClient, listing: marketplace_listing::Listing)
/// # -> Result<(), marketplace_listing::ListingError> {
/// use marketplace_listing::aio::Inventory;
/// let inventory = Inventory::new(api);
/// let published = inventory.publish(&listing).await?; // again after a crash: the same listing
/// println!("listing {}", published.listing_id);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Inventory {
    transport: Arc<dyn Transport>,
    retries: u32,
    backoff: Duration,
    other_format: OtherFormat,
}

impl std::fmt::Debug for Inventory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inventory")
            .field("retries", &self.retries)
            .field("other_format", &self.other_format)
            .finish_non_exhaustive()
    }
}

impl Inventory {
    /// The Inventory API through `api` (a client with a user token of the seller).
    pub fn new(api: ApiClient) -> Self {
        Self::with_transport(Arc::new(api))
    }

    pub(crate) fn with_transport(transport: Arc<dyn Transport>) -> Self {
        Self {
            transport,
            retries: 3,
            backoff: Duration::from_millis(200),
            other_format: OtherFormat::Refuse,
        }
    }

    /// What `publish`, `publish_with` and `publish_many` do when the SKU has a live listing on
    /// the marketplace in the other format (default: [`OtherFormat::Refuse`]).
    pub fn with_other_format(mut self, other_format: OtherFormat) -> Self {
        self.other_format = other_format;
        self
    }

    /// How many times a call eBay answers 25001, 25025 or a 5xx is tried again (default 3;
    /// the client's own retries of 5xx come first), waiting `backoff`, doubled each time.
    pub fn with_retries(mut self, retries: u32, backoff: Duration) -> Self {
        self.retries = retries;
        self.backoff = backoff;
        self
    }

    /// Sends the request `make` builds, again while eBay says to retry.
    pub(crate) async fn call(
        &self,
        make: impl Fn() -> ApiRequest,
    ) -> Result<ApiResponse, ListingError> {
        let mut delay = self.backoff;
        let mut attempt = 0;
        loop {
            match self.transport.send(make()).await {
                Ok(answer) => return Ok(answer),
                Err(e) => {
                    let e = ListingError::from(e);
                    if attempt >= self.retries || !e.is_retryable() {
                        return Err(e);
                    }
                }
            }
            attempt += 1;
            self.transport.sleep(delay).await;
            delay = delay.saturating_mul(2);
        }
    }

    /// createOrReplaceInventoryItem: `item` under `sku`, in the language of `marketplace`
    /// (`Content-Language`, which eBay requires: 25709 otherwise).
    pub async fn create_or_replace_inventory_item(
        &self,
        sku: &str,
        marketplace: Marketplace,
        item: &InventoryItem,
    ) -> Result<(), ListingError> {
        self.call(|| {
            ApiRequest::put_segments(path(&["inventory_item", sku]))
                .marketplace(marketplace)
                .content_language(marketplace.default_language())
                .json(item)
                .operation("createOrReplaceInventoryItem")
        })
        .await?;
        Ok(())
    }

    /// getInventoryItem: the item of `sku` (eBay's other fields, `sku`, `locale`, in `other`).
    pub async fn get_inventory_item(&self, sku: &str) -> Result<InventoryItem, ListingError> {
        let answer = self
            .call(|| {
                ApiRequest::get_segments(path(&["inventory_item", sku]))
                    .operation("getInventoryItem")
            })
            .await?;
        Ok(answer.json()?)
    }

    /// deleteInventoryItem: the item of `sku`, its offers and listings.
    pub async fn delete_inventory_item(&self, sku: &str) -> Result<(), ListingError> {
        self.call(|| {
            ApiRequest::delete_segments(path(&["inventory_item", sku]))
                .operation("deleteInventoryItem")
        })
        .await?;
        Ok(())
    }

    /// getOffers: the offers of `sku` on `marketplace` (none: an empty list).
    pub async fn get_offers(
        &self,
        sku: &str,
        marketplace: Marketplace,
    ) -> Result<Vec<OfferRecord>, ListingError> {
        #[derive(Deserialize)]
        struct Offers {
            #[serde(default)]
            offers: Vec<OfferRecord>,
        }
        let answer = self
            .call(|| {
                ApiRequest::get_segments(path(&["offer"]))
                    .query("sku", sku)
                    .query("marketplace_id", marketplace.inventory_marketplace_id())
                    .marketplace(marketplace)
                    .operation("getOffers")
            })
            .await;
        match answer {
            Ok(answer) => Ok(answer.json::<Offers>()?.offers),
            // eBay answers a SKU without offers 404 (25713, "This Offer is not available"), and
            // one not in the inventory 25702: no offers either.
            Err(ListingError::Inventory {
                source: ApiError::Service { status: 404, .. },
                ..
            }) => Ok(Vec::new()),
            Err(e) if e.errors().iter().any(|e| e.kind == ErrorKind::SkuNotFound) => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// createOffer: the offer's id.
    pub async fn create_offer(&self, offer: &Offer) -> Result<String, ListingError> {
        let marketplace = marketplace_of(offer)?;
        let answer = self
            .call(|| {
                ApiRequest::post_segments(path(&["offer"]))
                    .marketplace(marketplace)
                    .content_language(marketplace.default_language())
                    .json(offer)
                    .operation("createOffer")
            })
            .await?;
        offer_id(&answer, "createOffer")
    }

    /// updateOffer: the offer `offer_id` becomes `offer` (its SKU, marketplace and format are
    /// the offer's own and not sent).
    pub async fn update_offer(&self, offer_id: &str, offer: &Offer) -> Result<(), ListingError> {
        let marketplace = marketplace_of(offer)?;
        let mut body = serde_json::to_value(offer).map_err(|e| {
            ListingError::Api(ApiError::Serialize {
                reason: e.to_string(),
            })
        })?;
        if let Some(fields) = body.as_object_mut() {
            for key in ["sku", "marketplaceId", "format"] {
                fields.remove(key);
            }
        }
        self.call(|| {
            ApiRequest::put_segments(path(&["offer", offer_id]))
                .marketplace(marketplace)
                .content_language(marketplace.default_language())
                .json(&body)
                .operation("updateOffer")
        })
        .await?;
        Ok(())
    }

    /// publishOffer: the listing's id.
    pub async fn publish_offer(&self, offer_id: &str) -> Result<String, ListingError> {
        let answer = self
            .call(|| {
                ApiRequest::post_segments(path(&["offer", offer_id, "publish"]))
                    // publishOffer has no body: `Content-Length: 0` says so (some proxies refuse a
                    // POST without it; hendt's ebay-api sends it too).
                    .header("Content-Length", "0")
                    .operation("publishOffer")
            })
            .await?;
        listing_id(&answer, "publishOffer")
    }

    /// withdrawOffer: ends the listing of `offer_id`; the listing's id.
    pub async fn withdraw_offer(&self, offer_id: &str) -> Result<String, ListingError> {
        let answer = self
            .call(|| {
                ApiRequest::post_segments(path(&["offer", offer_id, "withdraw"]))
                    // withdrawOffer has no body: `Content-Length: 0` says so (some proxies refuse a
                    // POST without it; hendt's ebay-api sends it too).
                    .header("Content-Length", "0")
                    .operation("withdrawOffer")
            })
            .await?;
        listing_id(&answer, "withdrawOffer")
    }

    /// createInventoryLocation: `location` (eBay's `InventoryLocationFull`) under `key`.
    pub async fn create_inventory_location(
        &self,
        key: &str,
        location: &Value,
    ) -> Result<(), ListingError> {
        self.call(|| {
            ApiRequest::post_segments(path(&["location", key]))
                .json(location)
                .operation("createInventoryLocation")
        })
        .await?;
        Ok(())
    }

    /// getInventoryLocation: the location `key` (eBay's `InventoryLocationResponse`).
    pub async fn get_inventory_location(&self, key: &str) -> Result<Value, ListingError> {
        let answer = self
            .call(|| {
                ApiRequest::get_segments(path(&["location", key])).operation("getInventoryLocation")
            })
            .await?;
        Ok(answer.json()?)
    }

    /// bulkCreateOrReplaceInventoryItem: at most [`BULK_LIMIT`] items of `marketplace`, each
    /// `(sku, item)`; each item's result, in order.
    pub async fn bulk_create_or_replace_inventory_item(
        &self,
        marketplace: Marketplace,
        items: &[(&str, &InventoryItem)],
    ) -> Result<Vec<BulkResult>, ListingError> {
        let requests: Vec<Value> = items
            .iter()
            .map(|(sku, item)| {
                let mut value = serde_json::to_value(item).unwrap_or_else(|_| json!({}));
                if let Some(fields) = value.as_object_mut() {
                    fields.insert("sku".into(), json!(sku));
                    fields.insert(
                        "locale".into(),
                        json!(marketplace.default_language().replace('-', "_")),
                    );
                }
                value
            })
            .collect();
        let body = json!({ "requests": requests });
        self.bulk(|| {
            ApiRequest::post_segments(path(&["bulk_create_or_replace_inventory_item"]))
                .marketplace(marketplace)
                .content_language(marketplace.default_language())
                .json(&body)
                .operation("bulkCreateOrReplaceInventoryItem")
        })
        .await
    }

    /// bulkGetInventoryItem (a read, though a POST): the items of at most [`BULK_LIMIT`]
    /// SKUs, each `(sku, its item or None when it is not in the inventory)`, as eBay answered
    /// them (a SKU eBay answered nothing for is left out, and so is one whose answer cannot be
    /// its own: answered twice, or with an inventoryItem of another SKU; another error of one
    /// SKU, such as an invalid SKU, is an error).
    pub async fn bulk_get_inventory_item(
        &self,
        skus: &[&str],
    ) -> Result<Vec<(String, Option<InventoryItem>)>, ListingError> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase")]
        struct Answer {
            #[serde(default)]
            sku: Option<String>,
            #[serde(default)]
            status_code: u16,
            #[serde(default)]
            inventory_item: Option<InventoryItem>,
            #[serde(default)]
            errors: Vec<ServiceError>,
        }
        #[derive(Deserialize)]
        struct Answers {
            #[serde(default)]
            responses: Vec<Answer>,
        }
        let requests: Vec<Value> = skus.iter().map(|sku| json!({ "sku": sku })).collect();
        let body = json!({ "requests": requests });
        let answer = self
            .call(|| {
                ApiRequest::post_segments(path(&["bulk_get_inventory_item"]))
                    .json(&body)
                    .operation("bulkGetInventoryItem")
            })
            .await?;
        let mut items: Vec<(String, Option<InventoryItem>)> = Vec::new();
        // An answer that cannot be the SKU's is left out, as if eBay had answered nothing for
        // it (the caller asks getInventoryItem): a SKU not asked, an inventoryItem naming
        // another SKU, a SKU answered twice.
        let mut doubtful: Vec<String> = Vec::new();
        for a in answer.json::<Answers>()?.responses {
            let Some(sku) = a.sku else { continue };
            let other_sku = a
                .inventory_item
                .as_ref()
                .and_then(|item| item.other.get("sku"))
                .is_some_and(|held| held.as_str() != Some(sku.as_str()));
            if !skus.contains(&sku.as_str())
                || other_sku
                || items.iter().any(|(s, _)| *s == sku)
                || doubtful.contains(&sku)
            {
                items.retain(|(s, _)| *s != sku);
                doubtful.push(sku);
                continue;
            }
            let errors: Vec<InventoryError> =
                a.errors.into_iter().map(InventoryError::from).collect();
            if errors.iter().any(|e| e.kind == ErrorKind::SkuNotFound) || a.status_code == 404 {
                items.push((sku, None));
            } else if a.status_code < 300 && errors.is_empty() {
                match a.inventory_item {
                    Some(item) => items.push((sku, Some(item))),
                    None => {
                        return Err(ListingError::Answer {
                            operation: "bulkGetInventoryItem",
                            what: "the inventoryItem of a SKU answered 200",
                        });
                    }
                }
            } else {
                return Err(ListingError::Item {
                    status: a.status_code,
                    message: errors
                        .iter()
                        .map(|e| e.error.to_string())
                        .collect::<Vec<_>>()
                        .join("; "),
                    errors,
                });
            }
        }
        Ok(items)
    }

    /// bulkCreateOffer: at most [`BULK_LIMIT`] offers of one marketplace; each offer's result
    /// (an existing offer of the SKU: 25002 with its `offerId`).
    pub async fn bulk_create_offer(
        &self,
        offers: &[&Offer],
    ) -> Result<Vec<BulkResult>, ListingError> {
        let Some(first) = offers.first() else {
            return Ok(Vec::new());
        };
        let marketplace = marketplace_of(first)?;
        let body = json!({ "requests": offers });
        self.bulk(|| {
            ApiRequest::post_segments(path(&["bulk_create_offer"]))
                .marketplace(marketplace)
                .content_language(marketplace.default_language())
                .json(&body)
                .operation("bulkCreateOffer")
        })
        .await
    }

    /// bulkPublishOffer: at most [`BULK_LIMIT`] offers; each offer's result with its listing
    /// id.
    pub async fn bulk_publish_offer(
        &self,
        offer_ids: &[&str],
    ) -> Result<Vec<BulkResult>, ListingError> {
        let offers: Vec<Value> = offer_ids
            .iter()
            .map(|id| json!({ "offerId": id }))
            .collect();
        let body = json!({ "requests": offers });
        self.bulk(|| {
            ApiRequest::post_segments(path(&["bulk_publish_offer"]))
                .json(&body)
                .operation("bulkPublishOffer")
        })
        .await
    }

    async fn bulk(&self, make: impl Fn() -> ApiRequest) -> Result<Vec<BulkResult>, ListingError> {
        let answer = self.call(make).await?;
        let results: WireResults = answer.json()?;
        Ok(results
            .responses
            .into_iter()
            .map(BulkResult::from)
            .collect())
    }

    /// Publishes `listing`, checked first against the compiled-in trees and rules
    /// ([`CompiledIn`]); see [`publish_with`](Self::publish_with).
    pub async fn publish(&self, listing: &Listing) -> Result<Published, ListingError> {
        self.publish_with(listing, &CompiledIn).await
    }

    /// Publishes `listing`, idempotent by SKU: the check against `catalog` first (a problem:
    /// [`ListingError::Refused`], nothing sent); getOffers of (SKU, marketplace); a live
    /// listing of the SKU there in the other format is refused, withdrawn or kept as
    /// [`with_other_format`](Self::with_other_format) says (default: refused,
    /// [`ListingError::OtherFormatLive`], nothing changed); then createOrReplaceInventoryItem;
    /// the offer of (SKU, marketplace, format) that getOffers gave, or created (createOffer;
    /// its 25002 "already exists" names the offer, which is then used), updated (updateOffer)
    /// when it differs (a field set otherwise, or one eBay holds that the listing dropped);
    /// publishOffer. Run again after a crash or a time-out at any step, it gives the same
    /// listing and never a second offer of (SKU, marketplace, format). Retried only where eBay
    /// says so (25001, 25025, 5xx).
    pub async fn publish_with(
        &self,
        listing: &Listing,
        catalog: &(dyn Catalog + Sync),
    ) -> Result<Published, ListingError> {
        let problems = check(listing, catalog);
        if !problems.is_empty() {
            return Err(ListingError::Refused(Problems(problems)));
        }
        let offer = &listing.offer;
        let marketplace = marketplace_of(offer)?;
        let held = self.get_offers(&offer.sku, marketplace).await?;
        self.settle_other_formats(offer, &held, &[]).await?;
        self.create_or_replace_inventory_item(&offer.sku, marketplace, &listing.inventory_item)
            .await?;
        let offer_id = match self.held_offer(listing, &held).await? {
            Some(id) => id,
            None => self.create_or_use_offer(offer).await?,
        };
        let listing_id = self.publish_offer(&offer_id).await?;
        Ok(Published {
            offer_id,
            listing_id,
            unchanged: false,
        })
    }

    /// The live offers of `offer`'s SKU and marketplace in another format than `offer`'s (and
    /// than those of `in_call`, published in the same call) refused, withdrawn or kept, as
    /// [`OtherFormat`] says.
    async fn settle_other_formats(
        &self,
        offer: &Offer,
        held: &[OfferRecord],
        in_call: &[&str],
    ) -> Result<(), ListingError> {
        if self.other_format == OtherFormat::Keep {
            return Ok(());
        }
        for other in others_live(offer, held, in_call) {
            if self.other_format == OtherFormat::Refuse {
                return Err(other_format_live(offer, other));
            }
            self.withdraw_offer(&other.offer_id).await?;
        }
        Ok(())
    }

    /// The offer of (SKU, marketplace, format) among `held` (getOffers' answer), updated
    /// (updateOffer) when it differs from `listing`'s; `None` when there is none.
    async fn held_offer(
        &self,
        listing: &Listing,
        held: &[OfferRecord],
    ) -> Result<Option<String>, ListingError> {
        let offer = &listing.offer;
        let Some(record) = held.iter().find(|r| {
            r.offer.marketplace_id == offer.marketplace_id
                && format_of(&r.offer) == format_of(offer)
        }) else {
            return Ok(None);
        };
        if differs(offer, &record.offer, product_description(listing)) {
            self.update_offer(&record.offer_id, offer).await?;
        }
        Ok(Some(record.offer_id.clone()))
    }

    /// createOffer; when eBay answers 25002 "already exists" (an attempt whose answer was lost,
    /// or a concurrent publisher), the offer it names, made `offer` (updateOffer).
    async fn create_or_use_offer(&self, offer: &Offer) -> Result<String, ListingError> {
        match self.create_offer(offer).await {
            Ok(id) => Ok(id),
            Err(e) => match existing_offer(&e) {
                Some(id) => {
                    self.update_offer(&id, offer).await?;
                    Ok(id)
                }
                None => Err(e),
            },
        }
    }

    /// Publishes `listings` with the bulk calls ([`BULK_LIMIT`] a call): each listing's result,
    /// in order. Idempotent as [`publish`](Self::publish): an offer that exists is updated
    /// (updateOffer) and published, never created twice. Unless [`OtherFormat::Keep`],
    /// bulkGetInventoryItem is asked once per [`BULK_LIMIT`] SKUs and getOffers once per SKU
    /// in the inventory (for the live listings in the other format, and the offers already
    /// there: updated only when they differ); a SKU not in the inventory has no offer, so it
    /// needs no getOffers (an offer needs its item; deleteInventoryItem deletes them). Listings
    /// that would overwrite each other (two of one SKU, marketplace and format; one SKU with
    /// two different inventory items) are all refused, each naming the others
    /// ([`ListingError::Conflicting`]); an auction and a fixed-price listing of one SKU are two
    /// offers, both published. Bulk answers are matched to listings by what they carry:
    /// bulkCreateOrReplaceInventoryItem's by `sku`, bulkCreateOffer's by (`sku`,
    /// `marketplaceId`, `format`), bulkPublishOffer's by `offerId`.
    ///
    /// A listing eBay already holds live as it is (its offer published and not ended, no field
    /// to update, the same inventory item: bulkGetInventoryItem and getOffers, reads only) is left
    /// alone: [`Published::unchanged`], nothing written. A failure that concerns every listing
    /// (the service unreachable, HTTP 401, 403, 429 or 5xx, no token) stops the chunk of
    /// [`BULK_LIMIT`] it happened in: its listing gets the error, the others of the chunk
    /// [`ListingError::Item`] with status 0.
    pub async fn publish_many(&self, listings: &[Listing]) -> Vec<Result<Published, ListingError>> {
        self.publish_many_with(listings, &CompiledIn).await
    }

    /// [`publish_many`](Self::publish_many), each listing checked against `catalog` (a
    /// snapshots directory's trees and rules, say) instead of the compiled-in ones.
    pub async fn publish_many_with(
        &self,
        listings: &[Listing],
        catalog: &(dyn Catalog + Sync),
    ) -> Vec<Result<Published, ListingError>> {
        let mut results: Vec<Option<Result<Published, ListingError>>> =
            listings.iter().map(|_| None).collect();
        let by_marketplace = sort_out(listings, catalog, &mut results);
        for (marketplace, indexes) in &by_marketplace {
            for chunk in indexes.chunks(BULK_LIMIT) {
                self.publish_chunk(*marketplace, listings, indexes, chunk, &mut results)
                    .await;
            }
        }
        results
            .into_iter()
            .map(|r| {
                r.unwrap_or(Err(ListingError::Answer {
                    operation: "bulkPublishOffer",
                    what: "a result for the listing",
                }))
            })
            .collect()
    }

    /// Publishes the listings at `chunk` (at most [`BULK_LIMIT`], of `marketplace`), of the
    /// listings at `in_call` (every listing of `marketplace` this publish_many publishes).
    async fn publish_chunk(
        &self,
        marketplace: Marketplace,
        listings: &[Listing],
        in_call: &[usize],
        chunk: &[usize],
        results: &mut [Option<Result<Published, ListingError>>],
    ) {
        // The first listing gets the error itself (what it is: an outage, a refusal), the
        // others a copy of what it says.
        let fail_all = |results: &mut [Option<Result<Published, ListingError>>],
                        indexes: &[usize],
                        e: ListingError| {
            for &i in indexes.iter().skip(1) {
                results[i] = Some(Err(ListingError::Item {
                    status: 0,
                    errors: e.errors().to_vec(),
                    message: e.to_string(),
                }));
            }
            if let Some(&first) = indexes.first() {
                results[first] = Some(Err(e));
            }
        };
        // The chunk's items, one bulkGetInventoryItem: a SKU not in the inventory has no
        // offer (an offer needs its item; deleteInventoryItem deletes them), so it needs no
        // getOffers; one that is, its item to compare. Unless OtherFormat::Keep (no getOffers).
        // Unanswered (the call refused, say by a service without it): getOffers for each.
        let mut known: HashMap<String, Option<InventoryItem>> = HashMap::new();
        if self.other_format != OtherFormat::Keep {
            let mut skus: Vec<&str> = Vec::new();
            for &i in chunk {
                let sku = listings[i].offer.sku.as_str();
                if !skus.contains(&sku) {
                    skus.push(sku);
                }
            }
            match self.bulk_get_inventory_item(&skus).await {
                Ok(items) => known.extend(items),
                Err(e) if concerns_every_listing(&e) => return fail_all(results, chunk, e),
                Err(_) => {}
            }
        }
        // getOffers once per SKU in the inventory: what is live in the other format, and the
        // offers there.
        let mut held: HashMap<&str, Vec<OfferRecord>> = HashMap::new();
        let mut going = Vec::new();
        for (n, &i) in chunk.iter().enumerate() {
            let offer = &listings[i].offer;
            if matches!(known.get(offer.sku.as_str()), Some(None)) {
                held.insert(&offer.sku, Vec::new());
            }
            if self.other_format != OtherFormat::Keep && !held.contains_key(offer.sku.as_str()) {
                match self.get_offers(&offer.sku, marketplace).await {
                    Ok(records) => {
                        held.insert(&offer.sku, records);
                    }
                    // Every other listing of the chunk would fail the same way, each after
                    // the retries: none of them is tried.
                    Err(e) if concerns_every_listing(&e) => {
                        return fail_all(results, &chunk[n..], e);
                    }
                    Err(e) => {
                        results[i] = Some(Err(e));
                        continue;
                    }
                }
            }
            let formats: Vec<&str> = in_call
                .iter()
                .map(|&j| &listings[j].offer)
                .filter(|o| o.sku == offer.sku)
                .map(format_of)
                .collect();
            let records = held.get(offer.sku.as_str()).map_or(&[][..], Vec::as_slice);
            match self.settle_other_formats(offer, records, &formats).await {
                Ok(()) => going.push(i),
                Err(e) => results[i] = Some(Err(e)),
            }
        }
        // What eBay holds live as it is costs no write: its offer published, not ended, with no
        // field to update, and its inventory item the same (bulkGetInventoryItem's answer).
        let mut unchanged_items: HashMap<&str, bool> = HashMap::new();
        let mut changed = Vec::new();
        for &i in &going {
            let listing = &listings[i];
            let records = held
                .get(listing.offer.sku.as_str())
                .map_or(&[][..], Vec::as_slice);
            let Some((offer_id, listing_id)) = live_as_it_is(listing, records) else {
                changed.push(i);
                continue;
            };
            let sku = listing.offer.sku.as_str();
            let same_item = match (unchanged_items.get(sku), known.get(sku)) {
                (Some(&same), _) => same,
                (None, Some(held)) => {
                    let same = held
                        .as_ref()
                        .is_some_and(|held| same_item(&listing.inventory_item, held));
                    unchanged_items.insert(sku, same);
                    same
                }
                // bulkGetInventoryItem gave no answer for it: getInventoryItem.
                (None, None) => {
                    let same = self
                        .get_inventory_item(sku)
                        .await
                        .is_ok_and(|held| same_item(&listing.inventory_item, &held));
                    unchanged_items.insert(sku, same);
                    same
                }
            };
            if same_item {
                results[i] = Some(Ok(Published {
                    offer_id,
                    listing_id,
                    unchanged: true,
                }));
            } else {
                changed.push(i);
            }
        }
        // An inventory item eBay holds as the listing has it (bulkGetInventoryItem's answer) is
        // not written again: only its offer differs (a new price, say), which updateOffer
        // revises, as plan_many says ("inventoryItem": same). The others, one item per SKU
        // (refuse_conflicts made those of one SKU the same), go to
        // bulkCreateOrReplaceInventoryItem.
        let mut live = Vec::new();
        let mut going_items = Vec::new();
        for &i in &changed {
            let sku = listings[i].offer.sku.as_str();
            let held_same = match known.get(sku) {
                Some(Some(held)) => same_item(&listings[i].inventory_item, held),
                _ => false,
            };
            if held_same {
                live.push(i);
            } else {
                going_items.push(i);
            }
        }
        let going = going_items;
        let mut items: Vec<(&str, &InventoryItem)> = Vec::new();
        for &i in &going {
            let sku = listings[i].offer.sku.as_str();
            if !items.iter().any(|(s, _)| *s == sku) {
                items.push((sku, &listings[i].inventory_item));
            }
        }
        if !items.is_empty() {
            match self
                .bulk_create_or_replace_inventory_item(marketplace, &items)
                .await
            {
                Err(e) => return fail_all(results, &changed, e),
                Ok(answers) => {
                    for &i in &going {
                        let answer = answers
                            .iter()
                            .find(|a| a.sku.as_deref() == Some(&listings[i].offer.sku));
                        match answer {
                            Some(a) if a.errors.is_empty() && a.status_code < 300 => live.push(i),
                            Some(a) => results[i] = Some(Err(item_error(a))),
                            None => {}
                        }
                    }
                }
            }
        }
        // The offers getOffers gave, updated where they differ; the others created.
        let mut with_offer: Vec<(usize, String)> = Vec::new();
        let mut to_create = Vec::new();
        for &i in &live {
            let records = held.get(listings[i].offer.sku.as_str());
            match self
                .held_offer(&listings[i], records.map_or(&[][..], Vec::as_slice))
                .await
            {
                Ok(Some(id)) => with_offer.push((i, id)),
                Ok(None) => to_create.push(i),
                Err(e) => results[i] = Some(Err(e)),
            }
        }
        let offers: Vec<&Offer> = to_create.iter().map(|&i| &listings[i].offer).collect();
        if !offers.is_empty() {
            match self.bulk_create_offer(&offers).await {
                Err(e) => fail_all(results, &to_create, e),
                Ok(answers) => {
                    for (position, &i) in to_create.iter().enumerate() {
                        let Some(a) = offer_answer(&answers, position, &listings[i].offer) else {
                            continue;
                        };
                        let existing = a.errors.iter().find_map(|e| match &e.kind {
                            ErrorKind::User {
                                offer_id: Some(id), ..
                            } => Some(id.clone()),
                            _ => None,
                        });
                        match (&a.offer_id, existing) {
                            (Some(id), None) if a.errors.is_empty() => {
                                with_offer.push((i, id.clone()))
                            }
                            (_, Some(id)) => {
                                match self.update_offer(&id, &listings[i].offer).await {
                                    Ok(()) => with_offer.push((i, id)),
                                    Err(e) => results[i] = Some(Err(e)),
                                }
                            }
                            _ => results[i] = Some(Err(item_error(a))),
                        }
                    }
                }
            }
        }
        if with_offer.is_empty() {
            return;
        }
        let ids: Vec<&str> = with_offer.iter().map(|(_, id)| id.as_str()).collect();
        match self.bulk_publish_offer(&ids).await {
            Err(e) => {
                let indexes: Vec<usize> = with_offer.iter().map(|(i, _)| *i).collect();
                fail_all(results, &indexes, e)
            }
            Ok(answers) => {
                for (i, id) in &with_offer {
                    let Some(a) = answers.iter().find(|a| a.offer_id.as_deref() == Some(id)) else {
                        continue;
                    };
                    results[*i] = Some(match &a.listing_id {
                        Some(listing_id) if a.errors.is_empty() => Ok(Published {
                            offer_id: id.clone(),
                            listing_id: listing_id.clone(),
                            unchanged: false,
                        }),
                        _ => Err(item_error(a)),
                    });
                }
            }
        }
    }
}

/// What publishing would do to one part of a listing on eBay (its inventory item, its offer).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// eBay holds it as the listing has it: nothing to change.
    Same,
    /// eBay holds none: created (createOrReplaceInventoryItem, createOffer).
    Create,
    /// eBay holds it with these fields different, by name (`pricingSummary`,
    /// `product.title`, …; a field eBay holds that the file dropped is one of them: it is
    /// removed, since createOrReplaceInventoryItem and updateOffer replace the whole body).
    Revise(Vec<String>),
}

/// What [`Inventory::publish_many`] would do to one listing, from what eBay holds (reads
/// only: [`Inventory::plan_many_with`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The offer eBay holds of the listing's (SKU, marketplace, format), if any.
    pub offer_id: Option<String>,
    /// Its listing, when published.
    pub listing_id: Option<String>,
    /// The inventory item: created, revised or the same.
    pub item: Change,
    /// The offer: created, revised (updateOffer) or the same.
    pub offer: Change,
    /// The live offers of the SKU in the other format withdrawn first (withdrawOffer; under
    /// [`OtherFormat::Withdraw`]), each `(offerId, format)`.
    pub withdraw: Vec<(String, String)>,
    /// Whether the offer is published (publishOffer); `false`: the listing is left alone, live
    /// as it is, and nothing is written.
    pub publish: bool,
}

impl std::fmt::Display for Plan {
    /// `left alone (live as it is)`, or the steps: `withdraw offer 7 (AUCTION); create:
    /// inventory item, offer; revise: pricingSummary; publish`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.publish {
            return f.write_str("left alone (live as it is, nothing written)");
        }
        let mut steps: Vec<String> = self
            .withdraw
            .iter()
            .map(|(id, format)| format!("withdraw offer {id} ({format}, live)"))
            .collect();
        let created: Vec<&str> = [(&self.item, "inventory item"), (&self.offer, "offer")]
            .into_iter()
            .filter(|(c, _)| **c == Change::Create)
            .map(|(_, what)| what)
            .collect();
        if !created.is_empty() {
            steps.push(format!("create: {}", created.join(", ")));
        }
        let revised: Vec<&str> = [&self.item, &self.offer]
            .into_iter()
            .filter_map(|c| match c {
                Change::Revise(fields) => Some(fields.iter().map(String::as_str)),
                _ => None,
            })
            .flatten()
            .collect();
        if !revised.is_empty() {
            steps.push(format!("revise: {}", revised.join(", ")));
        }
        steps.push("publish".to_owned());
        f.write_str(&steps.join("; "))
    }
}

impl Inventory {
    /// What [`publish_many_with`](Self::publish_many_with) would do to each of `listings`, in
    /// order, sending only reads (bulkGetInventoryItem, getOffers, getInventoryItem): the
    /// check and the conflicts refused as publishing refuses them; a live listing of the SKU
    /// in the other format refused ([`ListingError::OtherFormatLive`]) or withdrawn as
    /// [`with_other_format`](Self::with_other_format) says; then each listing's [`Plan`],
    /// compared with what eBay holds as publishing compares it (the same fields, the same
    /// values eBay fills in). A failure that concerns every listing stops the chunk of
    /// [`BULK_LIMIT`] as publishing does.
    pub async fn plan_many_with(
        &self,
        listings: &[Listing],
        catalog: &(dyn Catalog + Sync),
    ) -> Vec<Result<Plan, ListingError>> {
        let mut plans: Vec<Option<Result<Plan, ListingError>>> =
            listings.iter().map(|_| None).collect();
        let by_marketplace = sort_out(listings, catalog, &mut plans);
        for (marketplace, indexes) in &by_marketplace {
            for chunk in indexes.chunks(BULK_LIMIT) {
                self.plan_chunk(*marketplace, listings, indexes, chunk, &mut plans)
                    .await;
            }
        }
        plans
            .into_iter()
            .map(|r| {
                r.unwrap_or(Err(ListingError::Answer {
                    operation: "getOffers",
                    what: "an answer for the listing",
                }))
            })
            .collect()
    }

    /// The plans of the listings at `chunk` (as [`publish_chunk`](Self::publish_chunk) reads
    /// them: one bulkGetInventoryItem, getOffers of the SKUs in the inventory).
    async fn plan_chunk(
        &self,
        marketplace: Marketplace,
        listings: &[Listing],
        in_call: &[usize],
        chunk: &[usize],
        plans: &mut [Option<Result<Plan, ListingError>>],
    ) {
        let fail_all = |plans: &mut [Option<Result<Plan, ListingError>>],
                        indexes: &[usize],
                        e: ListingError| {
            for &i in indexes.iter().skip(1) {
                plans[i] = Some(Err(ListingError::Item {
                    status: 0,
                    errors: e.errors().to_vec(),
                    message: e.to_string(),
                }));
            }
            if let Some(&first) = indexes.first() {
                plans[first] = Some(Err(e));
            }
        };
        let mut skus: Vec<&str> = Vec::new();
        for &i in chunk {
            let sku = listings[i].offer.sku.as_str();
            if !skus.contains(&sku) {
                skus.push(sku);
            }
        }
        let mut known: HashMap<String, Option<InventoryItem>> = HashMap::new();
        match self.bulk_get_inventory_item(&skus).await {
            Ok(items) => known.extend(items),
            Err(e) if concerns_every_listing(&e) => return fail_all(plans, chunk, e),
            Err(_) => {}
        }
        let mut held: HashMap<&str, Vec<OfferRecord>> = HashMap::new();
        for (n, &i) in chunk.iter().enumerate() {
            let listing = &listings[i];
            let offer = &listing.offer;
            let sku = offer.sku.as_str();
            if matches!(known.get(sku), Some(None)) {
                held.insert(sku, Vec::new());
            }
            if !held.contains_key(sku) {
                match self.get_offers(sku, marketplace).await {
                    Ok(records) => {
                        held.insert(sku, records);
                    }
                    Err(e) if concerns_every_listing(&e) => {
                        return fail_all(plans, &chunk[n..], e);
                    }
                    Err(e) => {
                        plans[i] = Some(Err(e));
                        continue;
                    }
                }
            }
            if !known.contains_key(sku) {
                // bulkGetInventoryItem gave no answer for it: getInventoryItem (25702: none).
                let item = match self.get_inventory_item(sku).await {
                    Ok(item) => Some(item),
                    Err(e) if e.errors().iter().any(|e| e.kind == ErrorKind::SkuNotFound) => None,
                    Err(e) => {
                        plans[i] = Some(Err(e));
                        continue;
                    }
                };
                known.insert(sku.to_owned(), item);
            }
            let records = held.get(sku).map_or(&[][..], Vec::as_slice);
            let formats: Vec<&str> = in_call
                .iter()
                .map(|&j| &listings[j].offer)
                .filter(|o| o.sku == offer.sku)
                .map(format_of)
                .collect();
            plans[i] = Some(self.plan_of(
                listing,
                known.get(sku).and_then(Option::as_ref),
                records,
                &formats,
            ));
        }
    }

    /// The plan of `listing`, given the inventory item eBay holds of its SKU and the offers
    /// (getOffers) of its SKU and marketplace.
    fn plan_of(
        &self,
        listing: &Listing,
        item: Option<&InventoryItem>,
        records: &[OfferRecord],
        in_call: &[&str],
    ) -> Result<Plan, ListingError> {
        let offer = &listing.offer;
        let mut withdraw = Vec::new();
        if self.other_format != OtherFormat::Keep {
            for other in others_live(offer, records, in_call) {
                if self.other_format == OtherFormat::Refuse {
                    return Err(other_format_live(offer, other));
                }
                withdraw.push((other.offer_id.clone(), format_of(&other.offer).to_owned()));
            }
        }
        let item_change = match item {
            None => Change::Create,
            Some(held) => match item_fields_differing(&listing.inventory_item, held) {
                fields if fields.is_empty() => Change::Same,
                fields => Change::Revise(fields),
            },
        };
        let record = records.iter().find(|r| {
            r.offer.marketplace_id == offer.marketplace_id
                && format_of(&r.offer) == format_of(offer)
        });
        let offer_change = match record {
            None => Change::Create,
            Some(r) => {
                match offer_fields_differing(offer, &r.offer, product_description(listing)) {
                    fields if fields.is_empty() => Change::Same,
                    fields => Change::Revise(fields),
                }
            }
        };
        // publish_many leaves alone what live_as_it_is and same_item say (never under
        // OtherFormat::Keep, which reads nothing).
        let left_alone = self.other_format != OtherFormat::Keep
            && live_as_it_is(listing, records).is_some()
            && item_change == Change::Same;
        Ok(Plan {
            offer_id: record.map(|r| r.offer_id.clone()),
            listing_id: record.and_then(|r| r.listing.as_ref()?.listing_id.clone()),
            item: item_change,
            offer: offer_change,
            withdraw,
            publish: !left_alone,
        })
    }
}

/// What `publish_many_with` and `plan_many_with` do first, alike: each listing checked against
/// `catalog` (a refused one gets its problems in `results`), its marketplace read, listings of
/// one call that would overwrite each other refused, and the rest grouped by marketplace, in
/// the order given (the indexes of `listings` to send, a marketplace at a time).
fn sort_out<T>(
    listings: &[Listing],
    catalog: &(dyn Catalog + Sync),
    results: &mut [Option<Result<T, ListingError>>],
) -> Vec<(Marketplace, Vec<usize>)> {
    let mut passing = Vec::new();
    for (i, listing) in listings.iter().enumerate() {
        let problems = check(listing, catalog);
        if !problems.is_empty() {
            results[i] = Some(Err(ListingError::Refused(Problems(problems))));
            continue;
        }
        match marketplace_of(&listing.offer) {
            Ok(m) => passing.push((i, m)),
            Err(e) => results[i] = Some(Err(e)),
        }
    }
    refuse_conflicts(listings, &mut passing, results);
    let mut by_marketplace: Vec<(Marketplace, Vec<usize>)> = Vec::new();
    for &(i, m) in &passing {
        match by_marketplace.iter_mut().find(|(x, _)| *x == m) {
            Some((_, v)) => v.push(i),
            None => by_marketplace.push((m, vec![i])),
        }
    }
    by_marketplace
}

/// The listings of `passing` that would overwrite each other on eBay refused
/// ([`conflicts_among`]), and taken out of `passing`.
fn refuse_conflicts<T>(
    listings: &[Listing],
    passing: &mut Vec<(usize, Marketplace)>,
    results: &mut [Option<Result<T, ListingError>>],
) {
    let refused = conflicts_among(listings, passing.iter().map(|&(i, _)| i));
    passing.retain(|(i, _)| !refused.iter().any(|(j, _)| j == i));
    for (i, e) in refused {
        results[i] = Some(Err(e));
    }
}

/// How many of the other listings a [`ListingError::Conflicting`] names (its `more` counts
/// the rest): a run of 10,000 files of one SKU named each other in 100 million positions.
pub const CONFLICTS_NAMED: usize = 10;

/// For each of `listings` that would overwrite another of them on eBay, its position and
/// [`ListingError::Conflicting`] naming the others' positions: two of one (SKU, marketplace,
/// format) (one offer on eBay: the second's fields would replace the first's, createOffer or
/// updateOffer), or one SKU with different inventory items (one item a SKU on eBay:
/// createOrReplaceInventoryItem replaces it). An auction and a fixed-price listing of one
/// SKU with the same item, or one item offered on two marketplaces, do not conflict.
/// `publish_many` refuses them within a call; the `listing` command across a whole run.
pub fn conflicts(listings: &[Listing]) -> Vec<(usize, ListingError)> {
    conflicts_among(listings, 0..listings.len())
}

/// [`conflicts`] among the listings at `indexes`.
fn conflicts_among(
    listings: &[Listing],
    indexes: impl Iterator<Item = usize>,
) -> Vec<(usize, ListingError)> {
    let mut refused: Vec<(usize, ListingError)> = Vec::new();
    let mut by_sku: HashMap<&str, Vec<usize>> = HashMap::new();
    for i in indexes {
        by_sku.entry(&listings[i].offer.sku).or_default().push(i);
    }
    for (sku, group) in by_sku.iter().filter(|(_, g)| g.len() > 1) {
        let offer_of = |i: usize| {
            let o = &listings[i].offer;
            (o.marketplace_id.as_str(), format_of(o))
        };
        let item = &listings[group[0]].inventory_item;
        let items_differ = group.iter().any(|&i| listings[i].inventory_item != *item);
        // Those of one offer (SKU, marketplace, format), grouped once: each listing is
        // compared with its own offer's group, not with every other listing of the SKU.
        let mut by_offer: HashMap<_, Vec<usize>> = HashMap::new();
        if !items_differ {
            for &i in group {
                by_offer.entry(offer_of(i)).or_default().push(i);
            }
        }
        for &i in group {
            let (clashing, what) = if items_differ {
                (
                    &group[..],
                    "give this SKU another inventory item (eBay holds one a SKU)",
                )
            } else {
                (
                    &by_offer[&offer_of(i)][..],
                    "are the same offer (SKU, marketplace, format)",
                )
            };
            let count = clashing.len() - 1;
            if count > 0 {
                let others: Vec<usize> = clashing
                    .iter()
                    .copied()
                    .filter(|&j| j != i)
                    .take(CONFLICTS_NAMED)
                    .collect();
                refused.push((
                    i,
                    ListingError::Conflicting {
                        sku: (*sku).to_owned(),
                        more: count - others.len(),
                        others,
                        what,
                    },
                ));
            }
        }
    }
    refused.sort_by_key(|(i, _)| *i);
    refused
}

/// bulkCreateOffer's answer for the offer sent at `position`: eBay's answer carries the
/// offer's `sku`, `marketplaceId` and `format` (`OfferSkuResponse`), which must be the offer's
/// (where present); the one at the same position when it fits, else the one that names all
/// three.
fn offer_answer<'a>(
    answers: &'a [BulkResult],
    position: usize,
    offer: &Offer,
) -> Option<&'a BulkResult> {
    let fits = |a: &BulkResult| {
        a.sku.as_deref() == Some(offer.sku.as_str())
            && a.marketplace_id
                .as_deref()
                .is_none_or(|m| m == offer.marketplace_id)
            && a.format.as_deref().is_none_or(|f| f == format_of(offer))
    };
    answers.get(position).filter(|a| fits(a)).or_else(|| {
        answers
            .iter()
            .find(|a| fits(a) && a.marketplace_id.is_some() && a.format.is_some())
    })
}

/// The offer and listing ids of `listing`'s offer among `held` (getOffers' answer) when it is
/// live (published, its listing not ended) and has no field to update ([`differs`]).
fn live_as_it_is(listing: &Listing, held: &[OfferRecord]) -> Option<(String, String)> {
    let offer = &listing.offer;
    let record = held.iter().find(|r| {
        r.offer.marketplace_id == offer.marketplace_id && format_of(&r.offer) == format_of(offer)
    })?;
    let listing_id = record.listing.as_ref()?.listing_id.clone()?;
    (is_live(record) && !differs(offer, &record.offer, product_description(listing)))
        .then(|| (record.offer_id.clone(), listing_id))
}

/// The live offers among `held` of `offer`'s marketplace in another format than `offer`'s
/// (and than those of `in_call`, published in the same call).
fn others_live<'a>(
    offer: &'a Offer,
    held: &'a [OfferRecord],
    in_call: &'a [&str],
) -> impl Iterator<Item = &'a OfferRecord> + 'a {
    let wanted = format_of(offer);
    held.iter().filter(move |r| {
        let format = format_of(&r.offer);
        r.offer.marketplace_id == offer.marketplace_id
            && format != wanted
            && !in_call.contains(&format)
            && is_live(r)
    })
}

/// [`ListingError::OtherFormatLive`]: `other` is live beside the wanted `offer`.
fn other_format_live(offer: &Offer, other: &OfferRecord) -> ListingError {
    ListingError::OtherFormatLive(Box::new(LiveInOtherFormat {
        sku: offer.sku.clone(),
        marketplace_id: offer.marketplace_id.clone(),
        format: format_of(&other.offer).to_owned(),
        offer_id: other.offer_id.clone(),
        listing_id: other.listing.as_ref().and_then(|l| l.listing_id.clone()),
        wanted: format_of(offer).to_owned(),
    }))
}

/// The fields of getInventoryItem's answer that eBay adds to what createOrReplaceInventoryItem
/// was sent (the SKU, the locale, the groups the item is in).
const ADDED_BY_EBAY: [&str; 4] = ["sku", "locale", "groupIds", "inventoryItemGroupKeys"];

/// Whether the inventory item eBay holds (bulkGetInventoryItem, getInventoryItem) is `wanted`, but for the fields
/// eBay adds. Anything else eBay holds that `wanted` lacks counts as a difference (written
/// again: never skipped wrongly).
fn same_item(wanted: &InventoryItem, held: &InventoryItem) -> bool {
    item_fields_differing(wanted, held).is_empty()
}

/// The fields of the inventory item eBay holds that differ from `wanted`'s, by name
/// (`product.title`, `condition`, …; a field of `product` by its own name), but for the fields
/// eBay adds: those createOrReplaceInventoryItem would change.
fn item_fields_differing(wanted: &InventoryItem, held: &InventoryItem) -> Vec<String> {
    let (Ok(Value::Object(wanted)), Ok(Value::Object(mut held))) =
        (serde_json::to_value(wanted), serde_json::to_value(held))
    else {
        return vec!["inventoryItem".to_owned()];
    };
    for key in ADDED_BY_EBAY {
        if !wanted.contains_key(key) {
            held.remove(key);
        }
    }
    let mut fields = Vec::new();
    for key in keys_differing(&wanted, &held) {
        match (wanted.get(&key), held.get(&key)) {
            (Some(Value::Object(w)), Some(Value::Object(h))) if key == "product" => fields.extend(
                keys_differing(w, h)
                    .into_iter()
                    .map(|k| format!("product.{k}")),
            ),
            _ => fields.push(key),
        }
    }
    fields
}

/// The keys whose values differ between `a` and `b` (set in one only, or to another value),
/// in `a`'s order, then `b`'s.
fn keys_differing(a: &Map<String, Value>, b: &Map<String, Value>) -> Vec<String> {
    a.iter()
        .filter(|(k, v)| b.get(*k) != Some(*v))
        .map(|(k, _)| k.clone())
        .chain(b.keys().filter(|k| !a.contains_key(*k)).cloned())
        .collect()
}

/// Whether `e` concerns every listing, not the one it was met for: the service unreachable,
/// no token, HTTP 401, 403, 429 or a 5xx (after the retries).
fn concerns_every_listing(e: &ListingError) -> bool {
    let (ListingError::Inventory { source, .. } | ListingError::Api(source)) = e else {
        return false;
    };
    match source {
        ApiError::Transport { .. }
        | ApiError::Timeout { .. }
        | ApiError::Truncated { .. }
        | ApiError::RateLimited { .. }
        | ApiError::OAuth(_) => true,
        _ => source
            .status()
            .is_some_and(|s| matches!(s, 401 | 403 | 429) || s >= 500),
    }
}

/// An offer's format (FormatTypeEnum); absent, eBay's default `FIXED_PRICE`.
fn format_of(offer: &Offer) -> &str {
    offer.format.as_deref().unwrap_or("FIXED_PRICE")
}

/// Whether a held offer has a live listing: `PUBLISHED`, and its listing not ended.
fn is_live(record: &OfferRecord) -> bool {
    record.status.as_deref() == Some("PUBLISHED")
        && !record
            .listing
            .as_ref()
            .is_some_and(|l| matches!(l.listing_status.as_deref(), Some("ENDED" | "EBAY_ENDED")))
}

/// The product's description of `listing`'s inventory item (what eBay gives an offer as its
/// `listingDescription` when the offer sets none).
fn product_description(listing: &Listing) -> Option<&str> {
    listing
        .inventory_item
        .product
        .as_ref()
        .and_then(|p| p.description.as_deref())
}

fn item_error(a: &BulkResult) -> ListingError {
    ListingError::Item {
        status: a.status_code,
        errors: a.errors.clone(),
        message: a
            .errors
            .iter()
            .map(|e| e.error.to_string())
            .collect::<Vec<_>>()
            .join("; "),
    }
}

/// The offer id of createOffer's 25002 "Offer entity already exists".
fn existing_offer(e: &ListingError) -> Option<String> {
    e.errors().iter().find_map(|e| match &e.kind {
        ErrorKind::User {
            offer_id: Some(id), ..
        } => Some(id.clone()),
        _ => None,
    })
}

/// The fields of getOffer's answer (`EbayOfferDetailsWithAll`) that updateOffer's body
/// (`EbayOfferDetailsWithId`) does not take: eBay's own, or fixed when the offer was created
/// (and matched by `publish`).
const NOT_UPDATED: [&str; 6] = [
    "offerId",
    "sku",
    "marketplaceId",
    "format",
    "status",
    "listing",
];

/// Whether the offer eBay holds differs from `wanted`, so that updateOffer (which replaces
/// every field) must be sent: a field `wanted` sets to another value, or one eBay holds that
/// `wanted` lacks (removed from the listing), except the fields updateOffer does not take and
/// what eBay fills in for a field left out (`listingDuration` GTC of a fixed-price offer,
/// `includeCatalogProductDetails` true, `hideBuyerDetails` false, `listingDescription` the
/// product's `description`).
fn differs(wanted: &Offer, held: &Offer, product_description: Option<&str>) -> bool {
    !offer_fields_differing(wanted, held, product_description).is_empty()
}

/// The fields of the offer eBay holds that updateOffer would change to make it `wanted`, by
/// name (`pricingSummary`, `availableQuantity`, …): [`differs`]' comparison, field by field.
fn offer_fields_differing(
    wanted: &Offer,
    held: &Offer,
    product_description: Option<&str>,
) -> Vec<String> {
    let fixed_price = format_of(wanted) == "FIXED_PRICE";
    let wanted = serde_json::to_value(wanted).unwrap_or(Value::Null);
    let held = serde_json::to_value(held).unwrap_or(Value::Null);
    let empty = Map::new();
    let held = held.as_object().unwrap_or(&empty);
    let wanted = wanted.as_object().unwrap_or(&empty);
    let updated = |k: &String| !NOT_UPDATED.contains(&k.as_str());
    let filled_in = |k: &str, v: &Value| match k {
        "listingDuration" => fixed_price && v == "GTC",
        "includeCatalogProductDetails" => *v == Value::Bool(true),
        "hideBuyerDetails" => *v == Value::Bool(false),
        "listingDescription" => product_description.is_some_and(|d| v == d),
        _ => v.is_null(),
    };
    wanted
        .iter()
        .filter(|(k, v)| updated(k) && held.get(*k) != Some(*v))
        .chain(
            held.iter()
                .filter(|(k, v)| updated(k) && !wanted.contains_key(*k) && !filled_in(k, v)),
        )
        .map(|(k, _)| k.clone())
        .collect()
}

fn marketplace_of(offer: &Offer) -> Result<Marketplace, ListingError> {
    Marketplace::from_inventory_marketplace_id(&offer.marketplace_id).ok_or_else(|| {
        ListingError::Refused(Problems(vec![crate::Problem {
            field: "offer.marketplaceId".into(),
            kind: crate::ProblemKind::UnknownMarketplace {
                closest: crate::check::closest_marketplace(&offer.marketplace_id),
            },
        }]))
    })
}

fn offer_id(answer: &ApiResponse, operation: &'static str) -> Result<String, ListingError> {
    #[derive(Deserialize, Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Answer {
        offer_id: Option<String>,
    }
    answer
        .json::<Answer>()?
        .offer_id
        .ok_or(ListingError::Answer {
            operation,
            what: "offerId",
        })
}

fn listing_id(answer: &ApiResponse, operation: &'static str) -> Result<String, ListingError> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Answer {
        listing_id: Option<String>,
    }
    answer
        .json::<Answer>()?
        .listing_id
        .ok_or(ListingError::Answer {
            operation,
            what: "listingId",
        })
}
