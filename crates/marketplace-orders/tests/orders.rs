//! The order calls and the order feed against the fake marketplace over loopback HTTP, with a
//! seller's user token granting `sell.fulfillment`: getOrders' paging, filters and order ids,
//! getOrder, a time-range walk while orders change.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use fake_marketplace::FakeMarketplace;
use marketplace_orders::blocking::Orders;
use marketplace_orders::{
    DateRange, ErrorKind, FulfillmentStatuses, GetOrders, OrderFilter, OrderIds, OrdersError,
};

#[path = "../../../tests/common/inventory.rs"]
mod fake_inventory;

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
