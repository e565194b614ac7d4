//! The Inventory API for async programs: each call, and [`Inventory::publish`], idempotent by
//! SKU, over marketplace-client's async `ApiClient`.

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
use crate::error::{ErrorKind, InventoryError, ListingError};
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

fn path(rest: &[&str]) -> Vec<String> {
    BASE.iter().chain(rest).map(|s| (*s).to_owned()).collect()
}

/// A listing out: its offer and its listing id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// The offer's id.
    pub offer_id: String,
    /// The eBay listing's id.
    pub listing_id: String,
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
            offer_id: w.offer_id,
            listing_id: w.listing_id,
            status_code: w.status_code,
            errors: w.errors.into_iter().map(InventoryError::from).collect(),
        }
    }
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
}

impl std::fmt::Debug for Inventory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inventory")
            .field("retries", &self.retries)
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
        }
    }

    /// How many times a call eBay answers 25001, 25025 or a 5xx is tried again (default 3;
    /// the client's own retries of 5xx come first), waiting `backoff`, doubled each time.
    pub fn with_retries(mut self, retries: u32, backoff: Duration) -> Self {
        self.retries = retries;
        self.backoff = backoff;
        self
    }

    /// Sends the request `make` builds, again while eBay says to retry.
    async fn call(&self, make: impl Fn() -> ApiRequest) -> Result<ApiResponse, ListingError> {
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
                    .query("marketplace_id", marketplace.marketplace_id())
                    .marketplace(marketplace)
                    .operation("getOffers")
            })
            .await;
        match answer {
            Ok(answer) => Ok(answer.json::<Offers>()?.offers),
            // eBay answers a SKU without offers 404 (25713, "This Offer is not available").
            Err(ListingError::Inventory {
                source: ApiError::Service { status: 404, .. },
                ..
            }) => Ok(Vec::new()),
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
    /// [`ListingError::Refused`], nothing sent); then createOrReplaceInventoryItem; the offer
    /// of (SKU, marketplace) found with getOffers, or created (createOffer; its 25002 "already
    /// exists" names the offer, which is then used), updated (updateOffer) when it differs;
    /// publishOffer. Run again after a crash or a time-out at any step, it gives the same
    /// listing and never a second offer. Retried only where eBay says so (25001, 25025, 5xx).
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
        self.create_or_replace_inventory_item(&offer.sku, marketplace, &listing.inventory_item)
            .await?;
        let offer_id = self.find_or_create_offer(offer, marketplace).await?;
        let listing_id = self.publish_offer(&offer_id).await?;
        Ok(Published {
            offer_id,
            listing_id,
        })
    }

    /// The offer of (SKU, marketplace, format), made what `offer` says.
    async fn find_or_create_offer(
        &self,
        offer: &Offer,
        marketplace: Marketplace,
    ) -> Result<String, ListingError> {
        let format = offer.format.as_deref().unwrap_or("FIXED_PRICE");
        let existing = self
            .get_offers(&offer.sku, marketplace)
            .await?
            .into_iter()
            .find(|r| {
                r.offer.marketplace_id == marketplace.marketplace_id()
                    && r.offer.format.as_deref().unwrap_or("FIXED_PRICE") == format
            });
        if let Some(record) = existing {
            if differs(offer, &record.offer) {
                self.update_offer(&record.offer_id, offer).await?;
            }
            return Ok(record.offer_id);
        }
        match self.create_offer(offer).await {
            Ok(id) => Ok(id),
            Err(e) => match existing_offer(&e) {
                // Created by an attempt whose answer was lost: that offer, made current.
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
    /// (updateOffer) and published, never created twice.
    pub async fn publish_many(&self, listings: &[Listing]) -> Vec<Result<Published, ListingError>> {
        let mut results: Vec<Option<Result<Published, ListingError>>> =
            listings.iter().map(|_| None).collect();
        let mut by_marketplace: Vec<(Marketplace, Vec<usize>)> = Vec::new();
        for (i, listing) in listings.iter().enumerate() {
            let problems = check(listing, &CompiledIn);
            if !problems.is_empty() {
                results[i] = Some(Err(ListingError::Refused(Problems(problems))));
                continue;
            }
            let Ok(m) = marketplace_of(&listing.offer) else {
                continue;
            };
            match by_marketplace.iter_mut().find(|(x, _)| *x == m) {
                Some((_, v)) => v.push(i),
                None => by_marketplace.push((m, vec![i])),
            }
        }
        for (marketplace, indexes) in by_marketplace {
            for chunk in indexes.chunks(BULK_LIMIT) {
                self.publish_chunk(marketplace, listings, chunk, &mut results)
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

    async fn publish_chunk(
        &self,
        marketplace: Marketplace,
        listings: &[Listing],
        chunk: &[usize],
        results: &mut [Option<Result<Published, ListingError>>],
    ) {
        let fail_all = |results: &mut [Option<Result<Published, ListingError>>],
                        indexes: &[usize],
                        e: &ListingError| {
            for &i in indexes {
                results[i] = Some(Err(ListingError::Item {
                    status: 0,
                    errors: e.errors().to_vec(),
                    message: e.to_string(),
                }));
            }
        };
        let items: Vec<(&str, &InventoryItem)> = chunk
            .iter()
            .map(|&i| (listings[i].offer.sku.as_str(), &listings[i].inventory_item))
            .collect();
        let mut live = Vec::new();
        match self
            .bulk_create_or_replace_inventory_item(marketplace, &items)
            .await
        {
            Err(e) => return fail_all(results, chunk, &e),
            Ok(answers) => {
                for &i in chunk {
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
        let offers: Vec<&Offer> = live.iter().map(|&i| &listings[i].offer).collect();
        let mut with_offer: Vec<(usize, String)> = Vec::new();
        match self.bulk_create_offer(&offers).await {
            Err(e) => return fail_all(results, &live, &e),
            Ok(answers) => {
                for &i in &live {
                    let Some(a) = answers
                        .iter()
                        .find(|a| a.sku.as_deref() == Some(&listings[i].offer.sku))
                    else {
                        continue;
                    };
                    let existing = a.errors.iter().find_map(|e| match &e.kind {
                        ErrorKind::User {
                            offer_id: Some(id), ..
                        } => Some(id.clone()),
                        _ => None,
                    });
                    match (&a.offer_id, existing) {
                        (Some(id), None) if a.errors.is_empty() => with_offer.push((i, id.clone())),
                        (_, Some(id)) => match self.update_offer(&id, &listings[i].offer).await {
                            Ok(()) => with_offer.push((i, id)),
                            Err(e) => results[i] = Some(Err(e)),
                        },
                        _ => results[i] = Some(Err(item_error(a))),
                    }
                }
            }
        }
        let ids: Vec<&str> = with_offer.iter().map(|(_, id)| id.as_str()).collect();
        match self.bulk_publish_offer(&ids).await {
            Err(e) => {
                let indexes: Vec<usize> = with_offer.iter().map(|(i, _)| *i).collect();
                fail_all(results, &indexes, &e)
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
                        }),
                        _ => Err(item_error(a)),
                    });
                }
            }
        }
    }
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

/// Whether the fields `wanted` sets differ from the offer eBay holds.
fn differs(wanted: &Offer, held: &Offer) -> bool {
    let wanted = serde_json::to_value(wanted).unwrap_or(Value::Null);
    let held = serde_json::to_value(held).unwrap_or(Value::Null);
    let empty = Map::new();
    let held = held.as_object().unwrap_or(&empty);
    wanted
        .as_object()
        .unwrap_or(&empty)
        .iter()
        .any(|(k, v)| held.get(k) != Some(v))
}

fn marketplace_of(offer: &Offer) -> Result<Marketplace, ListingError> {
    Marketplace::from_marketplace_id(&offer.marketplace_id).ok_or_else(|| {
        ListingError::Refused(Problems(vec![crate::Problem {
            field: "offer.marketplaceId".into(),
            kind: crate::ProblemKind::UnknownMarketplace,
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
