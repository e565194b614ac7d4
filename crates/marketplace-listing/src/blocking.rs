//! The Inventory API for blocking code: a thin layer over [`crate::aio::Inventory`], sending
//! with marketplace-client's blocking `ApiClient` (which waits on its own runtime, and works
//! inside one), so each call and [`Inventory::publish`] behave as the async ones.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use marketplace_client::api::{ApiClient, ApiError, ApiRequest, ApiResponse};
use marketplaces::Marketplace;
use serde_json::Value;

use crate::aio::{
    self, BoxFuture, BulkResult, GroupPublished, OfferRecord, OtherFormat, Published, Transport,
};
use crate::check::Catalog;
use crate::{GroupListing, InventoryItem, InventoryItemGroup, Listing, ListingError, Offer};

struct Blocking(ApiClient);

impl Transport for Blocking {
    fn send(&self, request: ApiRequest) -> BoxFuture<'_, Result<ApiResponse, ApiError>> {
        let answer = self.0.send(request);
        Box::pin(std::future::ready(answer))
    }

    fn sleep(&self, delay: Duration) -> BoxFuture<'_, ()> {
        std::thread::sleep(delay);
        Box::pin(std::future::ready(()))
    }
}

/// Runs a future of the async layer whose transport is [`Blocking`]: every await is ready when
/// first polled (the blocking client has already answered), so one poll finishes it.
fn wait<T>(future: impl Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return value;
        }
        std::thread::yield_now();
    }
}

/// The Inventory API of one seller, for blocking code: [`aio::Inventory`]'s calls.
#[derive(Debug, Clone)]
pub struct Inventory {
    inner: aio::Inventory,
}

impl Inventory {
    /// The Inventory API through `api` (a client with a user token of the seller).
    pub fn new(api: ApiClient) -> Self {
        Self {
            inner: aio::Inventory::with_transport(Arc::new(Blocking(api))),
        }
    }

    /// [`aio::Inventory::with_retries`].
    pub fn with_retries(self, retries: u32, backoff: Duration) -> Self {
        Self {
            inner: self.inner.with_retries(retries, backoff),
        }
    }

    /// [`aio::Inventory::with_other_format`].
    pub fn with_other_format(self, other_format: OtherFormat) -> Self {
        Self {
            inner: self.inner.with_other_format(other_format),
        }
    }

    /// [`aio::Inventory::create_or_replace_inventory_item`].
    pub fn create_or_replace_inventory_item(
        &self,
        sku: &str,
        marketplace: Marketplace,
        item: &InventoryItem,
    ) -> Result<(), ListingError> {
        wait(
            self.inner
                .create_or_replace_inventory_item(sku, marketplace, item),
        )
    }

    /// [`aio::Inventory::get_inventory_item`].
    pub fn get_inventory_item(&self, sku: &str) -> Result<InventoryItem, ListingError> {
        wait(self.inner.get_inventory_item(sku))
    }

    /// [`aio::Inventory::delete_inventory_item`].
    pub fn delete_inventory_item(&self, sku: &str) -> Result<(), ListingError> {
        wait(self.inner.delete_inventory_item(sku))
    }

    /// [`aio::Inventory::get_offers`].
    pub fn get_offers(
        &self,
        sku: &str,
        marketplace: Marketplace,
    ) -> Result<Vec<OfferRecord>, ListingError> {
        wait(self.inner.get_offers(sku, marketplace))
    }

    /// [`aio::Inventory::create_offer`].
    pub fn create_offer(&self, offer: &Offer) -> Result<String, ListingError> {
        wait(self.inner.create_offer(offer))
    }

    /// [`aio::Inventory::update_offer`].
    pub fn update_offer(&self, offer_id: &str, offer: &Offer) -> Result<(), ListingError> {
        wait(self.inner.update_offer(offer_id, offer))
    }

    /// [`aio::Inventory::publish_offer`].
    pub fn publish_offer(&self, offer_id: &str) -> Result<String, ListingError> {
        wait(self.inner.publish_offer(offer_id))
    }

    /// [`aio::Inventory::withdraw_offer`].
    pub fn withdraw_offer(&self, offer_id: &str) -> Result<String, ListingError> {
        wait(self.inner.withdraw_offer(offer_id))
    }

    /// [`aio::Inventory::create_inventory_location`].
    pub fn create_inventory_location(
        &self,
        key: &str,
        location: &Value,
    ) -> Result<(), ListingError> {
        wait(self.inner.create_inventory_location(key, location))
    }

    /// [`aio::Inventory::get_inventory_location`].
    pub fn get_inventory_location(&self, key: &str) -> Result<Value, ListingError> {
        wait(self.inner.get_inventory_location(key))
    }

    /// [`aio::Inventory::bulk_create_or_replace_inventory_item`].
    pub fn bulk_create_or_replace_inventory_item(
        &self,
        marketplace: Marketplace,
        items: &[(&str, &InventoryItem)],
    ) -> Result<Vec<BulkResult>, ListingError> {
        wait(
            self.inner
                .bulk_create_or_replace_inventory_item(marketplace, items),
        )
    }

    /// [`aio::Inventory::bulk_create_offer`].
    pub fn bulk_create_offer(&self, offers: &[&Offer]) -> Result<Vec<BulkResult>, ListingError> {
        wait(self.inner.bulk_create_offer(offers))
    }

    /// [`aio::Inventory::bulk_publish_offer`].
    pub fn bulk_publish_offer(&self, offer_ids: &[&str]) -> Result<Vec<BulkResult>, ListingError> {
        wait(self.inner.bulk_publish_offer(offer_ids))
    }

    /// [`aio::Inventory::bulk_get_inventory_item`].
    pub fn bulk_get_inventory_item(
        &self,
        skus: &[&str],
    ) -> Result<Vec<(String, Option<InventoryItem>)>, ListingError> {
        wait(self.inner.bulk_get_inventory_item(skus))
    }

    /// [`aio::Inventory::publish`].
    pub fn publish(&self, listing: &Listing) -> Result<Published, ListingError> {
        wait(self.inner.publish(listing))
    }

    /// [`aio::Inventory::publish_with`].
    pub fn publish_with(
        &self,
        listing: &Listing,
        catalog: &(dyn Catalog + Sync),
    ) -> Result<Published, ListingError> {
        wait(self.inner.publish_with(listing, catalog))
    }

    /// [`aio::Inventory::publish_many`].
    pub fn publish_many(&self, listings: &[Listing]) -> Vec<Result<Published, ListingError>> {
        wait(self.inner.publish_many(listings))
    }

    /// [`aio::Inventory::publish_many_with`].
    pub fn publish_many_with(
        &self,
        listings: &[Listing],
        catalog: &(dyn Catalog + Sync),
    ) -> Vec<Result<Published, ListingError>> {
        wait(self.inner.publish_many_with(listings, catalog))
    }

    /// [`aio::Inventory::plan_many_with`]: what publishing would do, reads only.
    pub fn plan_many_with(
        &self,
        listings: &[Listing],
        catalog: &(dyn Catalog + Sync),
    ) -> Vec<Result<aio::Plan, ListingError>> {
        wait(self.inner.plan_many_with(listings, catalog))
    }

    /// [`aio::Inventory::bulk_update_price_quantity`].
    pub fn bulk_update_price_quantity(
        &self,
        requests: &[crate::stock::PriceQuantity],
    ) -> Result<Vec<crate::stock::PriceQuantityResult>, ListingError> {
        wait(self.inner.bulk_update_price_quantity(requests))
    }

    /// [`aio::Inventory::read_stock`].
    pub fn read_stock(
        &self,
        skus: &[&str],
        state: &mut crate::stock::StockState,
    ) -> Vec<(String, crate::stock::StockError)> {
        wait(self.inner.read_stock(skus, state))
    }

    /// [`aio::Inventory::update_stock`].
    pub fn update_stock(
        &self,
        update: &crate::stock::StockUpdate,
        state: &mut crate::stock::StockState,
        revisions: &dyn crate::stock::Revisions,
    ) -> crate::stock::StockReport {
        wait(self.inner.update_stock(update, state, revisions))
    }

    /// [`aio::Inventory::push_stock_left`].
    pub fn push_stock_left(
        &self,
        sku: &str,
        quantity: u32,
        revisions: &dyn crate::stock::Revisions,
    ) -> Result<crate::stock::StockReport, crate::stock::StockError> {
        wait(self.inner.push_stock_left(sku, quantity, revisions))
    }

    /// [`aio::Inventory::create_or_replace_inventory_item_group`].
    pub fn create_or_replace_inventory_item_group(
        &self,
        key: &str,
        marketplace: Marketplace,
        group: &InventoryItemGroup,
    ) -> Result<(), ListingError> {
        wait(
            self.inner
                .create_or_replace_inventory_item_group(key, marketplace, group),
        )
    }

    /// [`aio::Inventory::get_inventory_item_group`].
    pub fn get_inventory_item_group(
        &self,
        key: &str,
    ) -> Result<Option<InventoryItemGroup>, ListingError> {
        wait(self.inner.get_inventory_item_group(key))
    }

    /// [`aio::Inventory::delete_inventory_item_group`].
    pub fn delete_inventory_item_group(&self, key: &str) -> Result<(), ListingError> {
        wait(self.inner.delete_inventory_item_group(key))
    }

    /// [`aio::Inventory::publish_offer_by_inventory_item_group`].
    pub fn publish_offer_by_inventory_item_group(
        &self,
        key: &str,
        marketplace: Marketplace,
    ) -> Result<String, ListingError> {
        wait(
            self.inner
                .publish_offer_by_inventory_item_group(key, marketplace),
        )
    }

    /// [`aio::Inventory::withdraw_offer_by_inventory_item_group`].
    pub fn withdraw_offer_by_inventory_item_group(
        &self,
        key: &str,
        marketplace: Marketplace,
    ) -> Result<(), ListingError> {
        wait(
            self.inner
                .withdraw_offer_by_inventory_item_group(key, marketplace),
        )
    }

    /// [`aio::Inventory::delete_offer`].
    pub fn delete_offer(&self, offer_id: &str) -> Result<(), ListingError> {
        wait(self.inner.delete_offer(offer_id))
    }

    /// [`aio::Inventory::publish_group`].
    pub fn publish_group(&self, group: &GroupListing) -> Result<GroupPublished, ListingError> {
        wait(self.inner.publish_group(group))
    }

    /// [`aio::Inventory::publish_group_with`].
    pub fn publish_group_with(
        &self,
        group: &GroupListing,
        catalog: &(dyn Catalog + Sync),
    ) -> Result<GroupPublished, ListingError> {
        wait(self.inner.publish_group_with(group, catalog))
    }
}
