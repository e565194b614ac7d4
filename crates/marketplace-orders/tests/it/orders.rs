//! The order calls and the order feed against the fake marketplace over loopback HTTP, with a
//! seller's user token granting `sell.fulfillment`: getOrders' paging, filters and order ids,
//! getOrder, a time-range walk while orders change; the feed's polls, wakes and recovery.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use fake_marketplace::FakeMarketplace;
use marketplace_orders::aio::Orders as AsyncOrders;
use marketplace_orders::blocking::{OrderFeed, Orders};
use marketplace_orders::feed::{
    BoxError, ChangeKey, FeedError, FeedState, FeedStore, FileStore, OrderChange, OrderHandler,
};
use marketplace_orders::{
    DateRange, ErrorKind, FulfillmentStatuses, GetOrders, OrderFilter, OrderIds, OrdersError,
};

use crate::fake_inventory;

/// The Fulfillment API of `fake` with a seller's token granting `sell.fulfillment`, without
/// retries.
fn orders(fake: &FakeMarketplace) -> Orders {
    Orders::new(fake_inventory::api_with(
        fake,
        fake_inventory::seller_tokens(fake, &["/sell.fulfillment"]),
    ))
    .with_retries(0, Duration::ZERO)
}

/// `n` orders bought from one listing of the fake's seller, 2 ms apart on the fake's clock.
fn bought(fake: &FakeMarketplace, n: usize) -> Vec<String> {
    let listing = fake.add_listing("fake_seller", "BOLT-1", 10_000, "0.10");
    let mut ids = Vec::new();
    for _ in 0..n {
        ids.push(fake.buy(&listing, 1).unwrap());
        fake.advance_clock(Duration::from_millis(2));
    }
    fake.advance_clock(Duration::from_millis(5));
    ids
}

#[test]
fn get_orders_pages_to_the_end_filters_and_answers_order_ids_and_get_order() {
    let fake = FakeMarketplace::new();
    let start = fake.now() - Duration::from_secs(1);
    let bought = bought(&fake, 450);
    let api = orders(&fake);

    assert_eq!(
        api.pages(GetOrders::new(OrderFilter::new()))
            .all()
            .unwrap()
            .len(),
        450
    );
    let mut pages = api.pages(GetOrders::new(OrderFilter::new()).limit(100).unwrap());
    let n: usize = pages.by_ref().map(|p| p.unwrap().len()).sum();
    assert_eq!((n, pages.calls()), (450, 5));

    let to_ship =
        OrderFilter::new().fulfillment_status(FulfillmentStatuses::NotStartedOrInProgress);
    assert_eq!(api.pages(GetOrders::new(to_ship)).all().unwrap().len(), 450);
    let shipped = OrderFilter::new().fulfillment_status(FulfillmentStatuses::FulfilledOrInProgress);
    assert_eq!(api.pages(GetOrders::new(shipped)).all().unwrap().len(), 0);
    let walk = api
        .modified_between(start, fake.now())
        .unwrap()
        .all()
        .unwrap();
    assert_eq!(walk.len(), 450);
    let created = OrderFilter::new().created(DateRange::since(start));
    assert_eq!(
        api.get_orders(&GetOrders::new(created)).unwrap().total,
        Some(450)
    );

    let ids = OrderIds::new(&bought[..50]).unwrap();
    assert_eq!(api.get_orders_by_id(&ids).unwrap().orders.len(), 50);

    let one = api.get_order(&bought[3]).unwrap();
    assert_eq!(one.order_id, bought[3]);
    assert!(one.last_modified().is_some());
    assert_eq!(one.cancel_state(), Some("NONE_REQUESTED"));
    let unknown = api.get_order("99-99999-99999").unwrap_err();
    assert!(
        matches!(unknown, OrdersError::NotFound { .. })
            || unknown.errors().first().map(|e| e.kind) == Some(ErrorKind::InvalidOrderId),
        "{unknown}"
    );
}

#[test]
fn a_time_range_walk_hands_every_unchanged_order_once_while_others_change_under_it() {
    let fake = FakeMarketplace::new();
    let start = fake.now() - Duration::from_secs(1);
    let bought = bought(&fake, 450);
    let api = orders(&fake);
    let until = fake.now();
    fake.advance_clock(Duration::from_millis(5));
    // 20 orders of the first page change while the second page is read.
    let touched: Vec<String> = bought.iter().rev().take(20).cloned().collect();
    let fired = Arc::new(AtomicBool::new(false));
    let (hook_fired, hook_touched) = (fired.clone(), touched.clone());
    fake.on_orders_page(move |state, offset| {
        if offset == 200 && !hook_fired.swap(true, Ordering::SeqCst) {
            for id in &hook_touched {
                state.touch_order(id).unwrap();
            }
        }
    });
    let mut seen = HashSet::new();
    for page in api.modified_between(start, until).unwrap() {
        for order in page.unwrap() {
            assert!(
                seen.insert(order.order_id.clone()),
                "{} twice",
                order.order_id
            );
        }
    }
    assert!(fired.load(Ordering::SeqCst));
    for id in &bought {
        assert!(seen.contains(id) || touched.contains(id), "{id} missed");
    }
}

/// What a handler was handed, in order.
type Handed = Arc<Mutex<Vec<OrderChange>>>;

/// A handler that records each change it is handed.
fn recorder() -> (
    Handed,
    impl FnMut(&OrderChange, &mut ()) -> Result<(), BoxError> + Send,
) {
    let handed: Handed = Arc::default();
    let into = handed.clone();
    (handed, move |change: &OrderChange, _: &mut ()| {
        into.lock().unwrap().push(change.clone());
        Ok(())
    })
}

fn keys(handed: &Handed) -> Vec<ChangeKey> {
    let mut keys: Vec<_> = handed
        .lock()
        .unwrap()
        .iter()
        .map(|c| c.key.clone())
        .collect();
    keys.sort();
    keys
}

fn ids(handed: &Handed) -> Vec<String> {
    let mut ids: Vec<_> = handed
        .lock()
        .unwrap()
        .iter()
        .map(|c| c.order.order_id.clone())
        .collect();
    ids.sort();
    ids
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

/// The feed of the fake's seller, on the fake's clock, reading from `start`, its state in
/// `store`.
fn feed<S: FeedStore>(fake: &FakeMarketplace, store: S) -> OrderFeed<S> {
    let clock = fake.state().clone();
    OrderFeed::new(orders(fake), store, "fake_seller")
        .starting_at(fake.now() - Duration::from_secs(60))
        .with_clock(move || clock.now())
}

#[test]
fn a_first_poll_hands_over_every_order_once() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let mut feed = feed(&fake, FileStore::new(dir.path()));
    let bought = bought(&fake, 450);
    let (handed, mut handler) = recorder();
    let polled = feed.poll_once(&mut handler).unwrap();
    assert_eq!(ids(&handed), sorted(bought));
    assert_eq!(polled.handed_over, 450);
    // Pages of 200: 3 calls.
    assert_eq!(polled.calls, 3);
    let state = std::fs::read_to_string(dir.path().join("fake_seller.json")).unwrap();
    let state: FeedState = serde_json::from_str(&state).unwrap();
    assert!(state.watermark.is_some());
    assert_eq!(state.recent.len(), 450);
}

#[test]
fn a_second_poll_with_nothing_new_hands_over_nothing_within_the_overlap_or_after_it() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let mut feed = feed(&fake, FileStore::new(dir.path()));
    bought(&fake, 30);
    let (handed, mut handler) = recorder();
    feed.poll_once(&mut handler).unwrap();
    assert_eq!(handed.lock().unwrap().len(), 30);
    // Within the overlap window: the 30 are read again and dropped.
    fake.advance_clock(Duration::from_secs(1));
    let again = feed.poll_once(&mut handler).unwrap();
    assert_eq!((again.handed_over, handed.lock().unwrap().len()), (0, 30));
    // Past it: they are not read at all, and forgotten.
    fake.advance_clock(Duration::from_secs(600));
    let later = feed.poll_once(&mut handler).unwrap();
    assert_eq!((later.handed_over, handed.lock().unwrap().len()), (0, 30));
    let state = std::fs::read_to_string(dir.path().join("fake_seller.json")).unwrap();
    let state: FeedState = serde_json::from_str(&state).unwrap();
    assert!(state.recent.is_empty(), "{state:?}");
}

#[test]
fn an_order_modified_in_the_millisecond_at_the_overlap_windows_edge_is_handed_over_once() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let bought = bought(&fake, 1);
    let order = fake.order(&bought[0]).unwrap();
    let modified =
        marketplace_orders::parse_timestamp(order["lastModifiedDate"].as_str().unwrap()).unwrap();
    fake.advance_clock(Duration::from_secs(2));
    // Each poll ends half a millisecond into the millisecond one overlap window after the
    // order's: the next poll reads from that order's millisecond on.
    let overlap = Duration::from_secs(1);
    let until = modified + overlap + Duration::from_micros(500);
    let mut feed = OrderFeed::new(orders(&fake), FileStore::new(dir.path()), "fake_seller")
        .starting_at(modified - Duration::from_secs(60))
        .with_overlap(overlap)
        .with_clock(move || until);
    let (handed, mut handler) = recorder();
    assert_eq!(feed.poll_once(&mut handler).unwrap().handed_over, 1);
    let again = feed.poll_once(&mut handler).unwrap();
    assert_eq!((again.handed_over, handed.lock().unwrap().len()), (0, 1));
}

#[test]
fn an_order_changed_or_cancelled_between_polls_is_handed_over_once_more_with_its_cancel_request() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let mut feed = feed(&fake, FileStore::new(dir.path()));
    let bought = bought(&fake, 10);
    let (handed, mut handler) = recorder();
    feed.poll_once(&mut handler).unwrap();
    fake.advance_clock(Duration::from_millis(10));
    fake.touch_order(&bought[2]).unwrap();
    fake.cancel_order(&bought[7]).unwrap();
    fake.advance_clock(Duration::from_millis(10));
    let polled = feed.poll_once(&mut handler).unwrap();
    assert_eq!(polled.handed_over, 2);
    let handed = handed.lock().unwrap();
    assert_eq!(handed.len(), 12);
    let keys: HashSet<_> = handed.iter().map(|c| c.key.clone()).collect();
    assert_eq!(keys.len(), 12, "a change handed twice");
    let cancelled = &handed[11];
    let (touched, cancelled) = if cancelled.order.order_id == bought[7] {
        (&handed[10], cancelled)
    } else {
        (cancelled, &handed[10])
    };
    assert_eq!(touched.order.order_id, bought[2]);
    assert_eq!(cancelled.order.order_id, bought[7]);
    assert_eq!(cancelled.order.cancel_state(), Some("IN_PROGRESS"));
    let requests = &cancelled
        .order
        .cancel_status
        .as_ref()
        .unwrap()
        .cancel_requests;
    assert_eq!(requests.len(), 1, "{:?}", cancelled.order.cancel_status);
    drop(handed);
    fake.advance_clock(Duration::from_millis(10));
    assert_eq!(feed.poll_once(&mut handler).unwrap().handed_over, 0);
}

#[test]
fn an_order_changed_while_a_page_is_read_is_not_lost_and_not_handed_twice() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let mut feed = feed(&fake, FileStore::new(dir.path()));
    let bought = bought(&fake, 450);
    // While the second page is read, 20 orders of the first page change (they leave the
    // walk's range) and 20 of the last page change too (before the walk reaches them).
    let touched: Vec<String> = bought
        .iter()
        .rev()
        .take(20)
        .chain(bought.iter().take(20))
        .cloned()
        .collect();
    let (fired, hook_touched) = (Arc::new(AtomicBool::new(false)), touched.clone());
    let hook_fired = fired.clone();
    fake.on_orders_page(move |state, offset| {
        if offset == 200 && !hook_fired.swap(true, Ordering::SeqCst) {
            for id in &hook_touched {
                state.touch_order(id).unwrap();
            }
        }
    });
    let (handed, mut handler) = recorder();
    feed.poll_once(&mut handler).unwrap();
    assert!(fired.load(Ordering::SeqCst));
    fake.clear_orders_page_hook();
    fake.advance_clock(Duration::from_millis(10));
    feed.poll_once(&mut handler).unwrap();
    let keys = keys(&handed);
    let unique: HashSet<_> = keys.iter().collect();
    assert_eq!(unique.len(), keys.len(), "a change handed twice");
    // Every order's current change was handed over.
    let mut last: BTreeMap<String, String> = BTreeMap::new();
    for key in &keys {
        let entry = last.entry(key.order_id.clone()).or_default();
        if key.last_modified_date > *entry {
            entry.clone_from(&key.last_modified_date);
        }
    }
    for id in &bought {
        let now = fake.order(id).unwrap()["lastModifiedDate"]
            .as_str()
            .unwrap()
            .to_owned();
        assert_eq!(last.get(id), Some(&now), "{id}'s change lost");
    }
}

/// A file store whose next write fails once (a crash between the handler and the record).
struct FailingOnce {
    files: FileStore,
    fail: AtomicBool,
}

impl FeedStore for FailingOnce {
    type Context = ();

    async fn load(&self, account: &str) -> Result<FeedState, BoxError> {
        self.files.load(account).await
    }

    async fn begin(&self, account: &str) -> Result<(), BoxError> {
        self.files.begin(account).await
    }

    async fn commit(&self, account: &str, context: (), state: &FeedState) -> Result<(), BoxError> {
        if self.fail.swap(false, Ordering::SeqCst) {
            return Err("the disk is full".into());
        }
        self.files.commit(account, context, state).await
    }
}

#[test]
fn a_failed_store_write_hands_the_same_changes_again_with_the_same_keys() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let store = FailingOnce {
        files: FileStore::new(dir.path()),
        fail: AtomicBool::new(true),
    };
    let mut feed = feed(&fake, store);
    bought(&fake, 5);
    let (handed, mut handler) = recorder();
    let crash = feed.poll_once(&mut handler).unwrap_err();
    assert!(
        matches!(
            crash,
            FeedError::Store {
                action: "commit",
                ..
            }
        ),
        "{crash}"
    );
    assert!(crash.to_string().contains("the disk is full"), "{crash}");
    let first = keys(&handed);
    assert_eq!(first.len(), 5);
    handed.lock().unwrap().clear();
    feed.poll_once(&mut handler).unwrap();
    // At least once: the same changes, with the same keys.
    assert_eq!(keys(&handed), first);
    handed.lock().unwrap().clear();
    feed.poll_once(&mut handler).unwrap();
    assert!(handed.lock().unwrap().is_empty());
}

#[test]
fn a_handler_error_hands_the_change_again_at_the_next_poll() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let mut feed = feed(&fake, FileStore::new(dir.path()));
    let bought = bought(&fake, 3);
    let mut failing = |change: &OrderChange, _: &mut ()| -> Result<(), BoxError> {
        Err(format!("no room for {}", change.key.order_id).into())
    };
    let error = feed.poll_once(&mut failing).unwrap_err();
    let FeedError::Handler { key, .. } = &error else {
        panic!("{error}")
    };
    assert!(bought.contains(&key.order_id), "{error}");
    assert!(
        error.to_string().contains("the handler failed on order"),
        "{error}"
    );
    let (handed, mut handler) = recorder();
    feed.poll_once(&mut handler).unwrap();
    assert_eq!(ids(&handed), sorted(bought));
}

#[test]
fn waking_an_order_already_handed_over_hands_nothing_and_a_new_change_once() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let mut feed = feed(&fake, FileStore::new(dir.path()));
    let bought = bought(&fake, 3);
    let (handed, mut handler) = recorder();
    feed.poll_once(&mut handler).unwrap();
    assert!(!feed.wake(&bought[1], &mut handler).unwrap());
    assert_eq!(handed.lock().unwrap().len(), 3);
    // A new order, woken before any poll: handed over by the wake, not again by the poll.
    let listing = fake.add_listing("fake_seller", "BOLT-2", 5, "1.00");
    let new = fake.buy(&listing, 1).unwrap();
    fake.advance_clock(Duration::from_millis(5));
    assert!(feed.wake(&new, &mut handler).unwrap());
    assert!(!feed.wake(&new, &mut handler).unwrap());
    assert_eq!(feed.poll_once(&mut handler).unwrap().handed_over, 0);
    let handed = ids(&handed);
    assert_eq!(handed.iter().filter(|id| **id == new).count(), 1);
    assert_eq!(handed.len(), 4);
}

/// An async handler that awaits (yields to the runtime) before it records each change, as a
/// handler writing to a database does.
struct Yielding(Handed);

impl OrderHandler<()> for Yielding {
    async fn handle(&mut self, change: &OrderChange, _: &mut ()) -> Result<(), BoxError> {
        tokio::task::yield_now().await;
        self.0.lock().unwrap().push(change.clone());
        Ok(())
    }
}

#[test]
fn the_async_feed_hands_every_order_once_to_a_handler_that_awaits_and_resumes_after_a_restart() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let bought = bought(&fake, 250);
    // The seller's access token, consented as the other tests' is, handed out as it is.
    let token = fake_inventory::seller_tokens(&fake, &["/sell.fulfillment"])
        .access_token()
        .unwrap();
    let tokens: Arc<dyn marketplace_client::aio::oauth::AccessTokenSource> = Arc::new(token);
    let config = marketplace_client::api::ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_max_retries(0);
    let start = fake.now() - Duration::from_secs(60);
    let new_feed = || {
        let api = marketplace_client::aio::api::ApiClient::new(config.clone(), tokens.clone());
        let clock = fake.state().clone();
        marketplace_orders::feed::OrderFeed::new(
            AsyncOrders::new(api.unwrap()),
            FileStore::new(dir.path()),
            "fake_seller",
        )
        .starting_at(start)
        .with_clock(move || clock.now())
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let handed: Handed = Arc::default();
    let mut handler = Yielding(handed.clone());
    let polled = runtime
        .block_on(async { new_feed().poll_once(&mut handler).await })
        .unwrap();
    assert_eq!((polled.handed_over, polled.calls), (250, 2));
    assert_eq!(ids(&handed), sorted(bought.clone()));
    // A new process over the same store: only what changed since.
    fake.advance_clock(Duration::from_millis(10));
    fake.touch_order(&bought[100]).unwrap();
    fake.advance_clock(Duration::from_millis(10));
    let polled = runtime
        .block_on(async { new_feed().poll_once(&mut handler).await })
        .unwrap();
    assert_eq!(polled.handed_over, 1);
    assert_eq!(
        handed.lock().unwrap().last().unwrap().order.order_id,
        bought[100]
    );
}
