//! The order calls for blocking code: a thin layer over [`crate::aio::Orders`], sending with
//! marketplace-client's blocking `ApiClient` (which waits on its own runtime, and works inside
//! one), so each call and the paging behave as the async ones.

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, SystemTime};

use marketplace_client::api::{ApiClient, ApiError, ApiRequest, ApiResponse};

use crate::aio::{self, BoxFuture, Transport};
use crate::feed::{self, FeedError, FeedStore, OrderHandler, Polled};
use crate::{GetOrders, Order, OrderIds, OrderSearchPagedCollection, OrdersError};

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
pub(crate) fn wait<T>(future: impl Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    let mut context = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(value) = future.as_mut().poll(&mut context) {
            return value;
        }
        std::thread::yield_now();
    }
}

/// The orders of one seller, for blocking code: [`aio::Orders`]'s calls.
#[derive(Debug, Clone)]
pub struct Orders {
    pub(crate) inner: aio::Orders,
}

impl Orders {
    /// The orders through `api` (a client with a user token of the seller).
    pub fn new(api: ApiClient) -> Self {
        Self {
            inner: aio::Orders::with_transport(Arc::new(Blocking(api))),
        }
    }

    /// [`aio::Orders::with_retries`].
    pub fn with_retries(self, retries: u32, backoff: Duration) -> Self {
        Self {
            inner: self.inner.with_retries(retries, backoff),
        }
    }

    /// [`aio::Orders::get_orders`].
    pub fn get_orders(&self, query: &GetOrders) -> Result<OrderSearchPagedCollection, OrdersError> {
        wait(self.inner.get_orders(query))
    }

    /// [`aio::Orders::get_orders_by_id`].
    pub fn get_orders_by_id(
        &self,
        ids: &OrderIds,
    ) -> Result<OrderSearchPagedCollection, OrdersError> {
        wait(self.inner.get_orders_by_id(ids))
    }

    /// [`aio::Orders::get_order`].
    pub fn get_order(&self, order_id: &str) -> Result<Order, OrdersError> {
        wait(self.inner.get_order(order_id))
    }

    /// [`aio::Orders::get_shipping_fulfillments`].
    pub fn get_shipping_fulfillments(
        &self,
        order_id: &str,
    ) -> Result<crate::ShippingFulfillmentPagedCollection, OrdersError> {
        wait(self.inner.get_shipping_fulfillments(order_id))
    }

    /// [`aio::Orders::get_shipping_fulfillment`].
    pub fn get_shipping_fulfillment(
        &self,
        order_id: &str,
        fulfillment_id: &str,
    ) -> Result<crate::ShippingFulfillment, OrdersError> {
        wait(
            self.inner
                .get_shipping_fulfillment(order_id, fulfillment_id),
        )
    }

    /// [`aio::Orders::create_shipping_fulfillment`] (not idempotent: retry [`ship`](Self::ship)).
    pub fn create_shipping_fulfillment(
        &self,
        order_id: &str,
        details: &crate::ShippingFulfillmentDetails,
    ) -> Result<String, OrdersError> {
        wait(self.inner.create_shipping_fulfillment(order_id, details))
    }

    /// [`aio::Orders::ship`]: the shipment made once, whatever the retries and reruns.
    pub fn ship(&self, shipment: &crate::Shipment) -> Result<crate::Shipped, OrdersError> {
        wait(self.inner.ship(shipment))
    }

    /// [`aio::Orders::pages`], as an iterator of pages.
    pub fn pages(&self, query: GetOrders) -> OrderPages<'_> {
        OrderPages(self.inner.pages(query))
    }

    /// [`aio::Orders::modified_between`], as an iterator of pages.
    pub fn modified_between(
        &self,
        from: SystemTime,
        until: SystemTime,
    ) -> Result<OrderPages<'_>, OrdersError> {
        Ok(OrderPages(self.inner.modified_between(from, until)?))
    }
}

/// [`aio::OrderPages`] for blocking code: each item is a page's orders not handed over before.
#[derive(Debug)]
pub struct OrderPages<'a>(aio::OrderPages<'a>);

impl OrderPages<'_> {
    /// [`aio::OrderPages::all`].
    pub fn all(self) -> Result<Vec<Order>, OrdersError> {
        wait(self.0.all())
    }

    /// [`aio::OrderPages::calls`].
    pub fn calls(&self) -> u32 {
        self.0.calls()
    }
}

impl Iterator for OrderPages<'_> {
    type Item = Result<Vec<Order>, OrdersError>;

    fn next(&mut self) -> Option<Self::Item> {
        wait(self.0.next_page())
    }
}

/// [`crate::feed::OrderFeed`] for blocking code, over [`Orders`]: its store's futures must be
/// ready when first polled (as [`FileStore`](crate::feed::FileStore)'s are), and its handler is
/// a closure `FnMut(&OrderChange, &mut Context) -> Result<(), BoxError>` (or any
/// [`OrderHandler`] whose futures are ready at once).
///
/// ```no_run
/// # fn run(api: marketplace_client::api::ApiClient) -> Result<(), marketplace_orders::feed::FeedError> {
/// use marketplace_orders::blocking::{OrderFeed, Orders};
/// use marketplace_orders::feed::{FileStore, OrderChange};
///
/// let mut feed = OrderFeed::new(Orders::new(api), FileStore::new("feed-state"), "seller-1");
/// let mut handler = |change: &OrderChange, _: &mut ()| {
///     // At least once with the file store: de-duplicate by `change.key`.
///     println!("{} {}", change.key.order_id, change.key.last_modified_date);
///     Ok(())
/// };
/// feed.poll_once(&mut handler)?;
/// # Ok(()) }
/// ```
pub struct OrderFeed<S> {
    inner: feed::OrderFeed<S>,
}

impl<S> std::fmt::Debug for OrderFeed<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

impl<S: FeedStore> OrderFeed<S> {
    /// [`feed::OrderFeed::new`], through the blocking `orders`.
    pub fn new(orders: Orders, store: S, account: impl Into<String>) -> Self {
        Self {
            inner: feed::OrderFeed::new(orders.inner, store, account),
        }
    }

    /// [`feed::OrderFeed::with_overlap`].
    pub fn with_overlap(self, overlap: Duration) -> Self {
        Self {
            inner: self.inner.with_overlap(overlap),
        }
    }

    /// [`feed::OrderFeed::starting_at`].
    pub fn starting_at(self, from: SystemTime) -> Self {
        Self {
            inner: self.inner.starting_at(from),
        }
    }

    /// [`feed::OrderFeed::with_clock`].
    pub fn with_clock(self, clock: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        Self {
            inner: self.inner.with_clock(clock),
        }
    }

    /// [`feed::OrderFeed::store`].
    pub fn store(&self) -> &S {
        self.inner.store()
    }

    /// [`feed::OrderFeed::poll_once`].
    pub fn poll_once<H: OrderHandler<S::Context>>(
        &mut self,
        handler: &mut H,
    ) -> Result<Polled, FeedError> {
        wait(self.inner.poll_once(handler))
    }

    /// [`feed::OrderFeed::wake`].
    pub fn wake<H: OrderHandler<S::Context>>(
        &mut self,
        order_id: &str,
        handler: &mut H,
    ) -> Result<bool, FeedError> {
        wait(self.inner.wake(order_id, handler))
    }
}
