//! The Fulfillment API's order calls for async programs, over marketplace-client's async
//! `ApiClient`: getOrders, getOrder, and [`OrderPages`], getOrders' offset paging to the end.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use marketplace_client::aio::api::ApiClient;
use marketplace_client::api::{ApiError, ApiRequest, ApiResponse};

use crate::error::OrdersError;
use crate::filter::{DateRange, GetOrders, OrderFilter, OrderIds, check_order_id};
use crate::model::{Order, OrderSearchPagedCollection};

/// The Fulfillment API's path below the API host.
const BASE: [&str; 3] = ["sell", "fulfillment", "v1"];

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

pub(crate) fn path(rest: &[&str]) -> Vec<String> {
    BASE.iter().chain(rest).map(|s| (*s).to_owned()).collect()
}

/// The orders of one seller (the client's user token, with the `sell.fulfillment` or
/// `sell.fulfillment.readonly` scope), for async programs.
///
/// ```no_run
/// # async fn run(api: marketplace_client::aio::api::ApiClient) -> Result<(), marketplace_orders::OrdersError> {
/// use std::time::{Duration, SystemTime};
/// use marketplace_orders::aio::Orders;
///
/// let orders = Orders::new(api);
/// let until = SystemTime::now();
/// let mut pages = orders.modified_between(until - Duration::from_secs(3600), until)?;
/// while let Some(page) = pages.next_page().await {
///     for order in page? {
///         println!("{} {:?}", order.order_id, order.last_modified_date);
///     }
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct Orders {
    pub(crate) transport: Arc<dyn Transport>,
    pub(crate) retries: u32,
    pub(crate) backoff: Duration,
}

impl std::fmt::Debug for Orders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Orders")
            .field("retries", &self.retries)
            .field("backoff", &self.backoff)
            .finish_non_exhaustive()
    }
}

impl Orders {
    /// The orders through `api` (a client with a user token of the seller).
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

    /// How many times a call eBay answers 30500 or a 5xx is tried again (default 3; the
    /// client's own retries of 5xx come first), waiting `backoff`, doubled each time.
    pub fn with_retries(mut self, retries: u32, backoff: Duration) -> Self {
        self.retries = retries;
        self.backoff = backoff;
        self
    }

    /// Sends the request `make` builds, again while eBay says to retry.
    async fn call(&self, make: impl Fn() -> ApiRequest) -> Result<ApiResponse, OrdersError> {
        let mut delay = self.backoff;
        let mut attempt = 0;
        loop {
            match self.transport.send(make()).await {
                Ok(answer) => return Ok(answer),
                Err(e) => {
                    let e = OrdersError::from(e);
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

    /// getOrders: one page of the orders `query` selects.
    pub async fn get_orders(
        &self,
        query: &GetOrders,
    ) -> Result<OrderSearchPagedCollection, OrdersError> {
        let params = query.query()?;
        let answer = self
            .call(|| {
                params
                    .iter()
                    .fold(ApiRequest::get_segments(path(&["order"])), |r, (k, v)| {
                        r.query(*k, v.as_str())
                    })
                    .operation("getOrders")
            })
            .await?;
        Ok(answer.json()?)
    }

    /// getOrders by `orderIds`: the orders of `ids` eBay has (an id it does not know is left
    /// out of the answer).
    pub async fn get_orders_by_id(
        &self,
        ids: &OrderIds,
    ) -> Result<OrderSearchPagedCollection, OrdersError> {
        let text = ids.text();
        let answer = self
            .call(|| {
                ApiRequest::get_segments(path(&["order"]))
                    .query("orderIds", text.as_str())
                    .operation("getOrders")
            })
            .await?;
        Ok(answer.json()?)
    }

    /// getOrder: the order `order_id`, with its cancel requests (`cancelStatus.cancelRequests`,
    /// which getOrders leaves empty). eBay's 404: [`OrdersError::NotFound`]; an id eBay does
    /// not take as one of the seller's orders, 400 with errorId 32100 ("Invalid order ID"):
    /// [`OrdersError::Fulfillment`] with [`ErrorKind::InvalidOrderId`](crate::ErrorKind).
    pub async fn get_order(&self, order_id: &str) -> Result<Order, OrdersError> {
        check_order_id(order_id).map_err(|reason| OrdersError::Invalid {
            what: "orderId",
            reason: format!("the order id {order_id:?} {reason}"),
        })?;
        let answer = self
            .call(|| ApiRequest::get_segments(path(&["order", order_id])).operation("getOrder"))
            .await;
        match answer {
            Ok(answer) => Ok(answer.json()?),
            Err(e) if e.status() == Some(404) => Err(OrdersError::NotFound {
                order_id: order_id.to_owned(),
            }),
            Err(e) => Err(e),
        }
    }

    /// Every order `query` selects, page after page from its offset to the end: see
    /// [`OrderPages`].
    pub fn pages(&self, query: GetOrders) -> OrderPages<'_> {
        OrderPages::new(self, query)
    }

    /// Every order last modified from `from` to `until` (inclusive), [`OrderPages`] over
    /// `lastmodifieddate:[from..until]`: the walk that survives orders changing while it pages.
    /// `until` fixed in the past (now, at the latest) is what makes it hold: an order changed
    /// during the walk gets a `lastModifiedDate` after `until` and leaves the selection
    /// instead of moving inside it, and the next walk, from `until` on, has it.
    pub fn modified_between(
        &self,
        from: SystemTime,
        until: SystemTime,
    ) -> Result<OrderPages<'_>, OrdersError> {
        let filter = OrderFilter::new().last_modified(DateRange::between(from, until)?);
        // The filter's text is checked now, before anything is sent.
        filter.text()?;
        Ok(self.pages(GetOrders::new(filter)))
    }
}

/// getOrders' offset paging to the end: page after page of the orders a query selects, from
/// its offset on, until the offset reaches eBay's `total`.
///
/// An offset walk skips orders when the selection shrinks while it pages (an order on an
/// earlier page leaves it: the orders after it move up, across the page boundary). This one
/// holds against that: when a page's `total` is smaller than the previous page's, up to that
/// many orders may have moved before the offset, and the next page is read from the offset
/// minus that difference; the orders read twice are dropped. Each order is handed once per
/// (`orderId`, `lastModifiedDate`), so a change of an order seen during the walk comes as one
/// more order, never as a repeat.
///
/// What it guarantees: every order that is in the selection from the walk's first page to its
/// last is handed over. An order that enters or leaves the selection during the walk may or
/// may not be. Over `lastmodifieddate:[from..until]` with `until` not in the future
/// ([`Orders::modified_between`]) an order can only leave (its change moves its
/// `lastModifiedDate` past `until`), and the next walk, from `until` on, has it. The walk
/// ends: each step back is paid for by orders that left, and there are `total` of them at
/// most. Its cost is one call a page, plus one a shrink.
///
/// Against a service that answers what eBay would not, it still ends: a page of nothing but
/// orders handed over before, after no step back and no as large growth of `total`, ends
/// the walk with [`OrdersError::Repeating`] (the same orders on every page under a `total`
/// of `u64::MAX` were asked for forever), and so does an offset past `u32::MAX`. The `next`
/// and `href` links of an answer are never followed (the offsets are the walk's own).
#[derive(Debug)]
pub struct OrderPages<'a> {
    orders: &'a Orders,
    query: GetOrders,
    next: Option<u32>,
    previous_total: Option<u64>,
    seen: HashSet<(String, Option<String>)>,
    calls: u32,
    /// The next page is read after a step back (it may hold only repeats).
    stepped_back: bool,
}

impl<'a> OrderPages<'a> {
    fn new(orders: &'a Orders, query: GetOrders) -> Self {
        let next = Some(query.start());
        Self {
            orders,
            query,
            next,
            previous_total: None,
            seen: HashSet::new(),
            calls: 0,
            stepped_back: false,
        }
    }

    /// The next page's orders not handed over before (possibly none when a page held only
    /// repeats); `None` at the end. After an error the walk can be resumed by calling again
    /// (the same page is asked again).
    pub async fn next_page(&mut self) -> Option<Result<Vec<Order>, OrdersError>> {
        let offset = self.next?;
        let query = self.query.clone().offset(offset);
        let page = match self.orders.get_orders(&query).await {
            Ok(page) => page,
            Err(e) => return Some(Err(e)),
        };
        self.calls += 1;
        let returned = page.orders.len();
        let grown = match (self.previous_total, page.total) {
            (Some(before), Some(now)) => now.saturating_sub(before),
            _ => 0,
        };
        self.next = next_offset(
            offset,
            returned,
            self.query.page_size(),
            self.previous_total,
            page.total,
        );
        if page.total.is_some() {
            self.previous_total = page.total;
        }
        let fresh: Vec<Order> = page
            .orders
            .into_iter()
            .filter(|o| {
                self.seen
                    .insert((o.order_id.clone(), o.last_modified_date.clone()))
            })
            .collect();
        // Repeats are explained by a step back (this page re-reads what moved before the
        // offset) or by as many new orders entering ahead of it; a page of nothing but
        // repeats without either is a service answering the same orders again: asking on
        // would never end (a total of u64::MAX over the same two orders asked forever).
        let after_step_back = std::mem::replace(
            &mut self.stepped_back,
            self.next.is_some_and(|next| next <= offset),
        );
        if returned > 0 && fresh.is_empty() && !after_step_back && grown < returned as u64 {
            self.next = None;
            return Some(Err(OrdersError::Repeating {
                offset,
                total: page
                    .total
                    .map_or_else(|| "none".to_owned(), |t| t.to_string()),
            }));
        }
        Some(Ok(fresh))
    }

    /// Every remaining order, in the order eBay pages them.
    pub async fn all(mut self) -> Result<Vec<Order>, OrdersError> {
        let mut all = Vec::new();
        while let Some(page) = self.next_page().await {
            all.extend(page?);
        }
        Ok(all)
    }

    /// The getOrders calls answered so far.
    pub fn calls(&self) -> u32 {
        self.calls
    }
}

/// Where the page after one read at `offset` (`returned` orders of at most `limit`, the
/// selection `total` large, `previous_total` at the page before) starts; `None` at the end.
fn next_offset(
    offset: u32,
    returned: usize,
    limit: u32,
    previous_total: Option<u64>,
    total: Option<u64>,
) -> Option<u32> {
    let returned = u32::try_from(returned).unwrap_or(u32::MAX);
    let shrunk = match (previous_total, total) {
        (Some(before), Some(now)) => before.saturating_sub(now),
        _ => 0,
    };
    let next = if shrunk > 0 {
        // Up to `shrunk` orders moved from at or after `offset` to before it: read from there.
        offset.saturating_sub(u32::try_from(shrunk).unwrap_or(u32::MAX))
    } else {
        // Past u32::MAX there is no offset to ask for (it was asked again there forever).
        offset.checked_add(returned)?
    };
    let more = match total {
        Some(total) => u64::from(next) < total,
        // Without a total, a short page is the last.
        None => returned >= limit,
    };
    // A page that moved nowhere and saw nothing leave would be asked again forever.
    let stuck = returned == 0 && shrunk == 0;
    (more && !stuck).then_some(next)
}

#[cfg(test)]
mod tests {
    use super::next_offset;

    #[test]
    fn a_walk_over_an_unchanging_selection_reads_each_page_once_to_the_total() {
        // 450 orders, 200 a page: offsets 0, 200, 400, then the end.
        assert_eq!(next_offset(0, 200, 200, None, Some(450)), Some(200));
        assert_eq!(next_offset(200, 200, 200, Some(450), Some(450)), Some(400));
        assert_eq!(next_offset(400, 50, 200, Some(450), Some(450)), None);
        // An exact multiple ends on the full page, without asking an empty one.
        assert_eq!(next_offset(200, 200, 200, Some(400), Some(400)), None);
        // Nothing at all.
        assert_eq!(next_offset(0, 0, 200, None, Some(0)), None);
    }

    #[test]
    fn orders_leaving_the_selection_send_the_next_page_back_by_as_many() {
        // Page 2 (offset 200) saw the total go from 450 to 447: three orders before it may
        // have moved up past offset 200 unseen, so the next page starts at 197.
        assert_eq!(next_offset(200, 200, 200, Some(450), Some(447)), Some(197));
        // Then the walk goes on from there (repeats dropped by the caller).
        assert_eq!(next_offset(197, 200, 200, Some(447), Some(447)), Some(397));
        assert_eq!(next_offset(397, 50, 200, Some(447), Some(447)), None);
        // Everything left: back to 0, and the end when nothing is at or after it.
        assert_eq!(next_offset(200, 0, 200, Some(450), Some(0)), None);
        assert_eq!(next_offset(200, 0, 200, Some(450), Some(100)), Some(0));
    }

    #[test]
    fn without_a_total_a_short_or_empty_page_is_the_last() {
        assert_eq!(next_offset(0, 200, 200, None, None), Some(200));
        assert_eq!(next_offset(200, 199, 200, None, None), None);
        assert_eq!(next_offset(200, 0, 200, None, None), None);
    }

    #[test]
    fn a_total_that_grows_never_sends_the_walk_back() {
        // New orders entered: repeats may follow, never a skip from this.
        assert_eq!(next_offset(200, 200, 200, Some(450), Some(460)), Some(400));
        // An empty page below a total that says more is not asked again forever.
        assert_eq!(next_offset(400, 0, 200, Some(450), Some(460)), None);
    }
}
