//! Shipping an order against the fake marketplace over loopback HTTP (createShippingFulfillment,
//! getShippingFulfillments, getShippingFulfillment), with a seller's user token granting
//! `sell.fulfillment`: a shipment made once whatever is retried, the order's fulfillment
//! statuses moving, and eBay's errors typed.

use std::time::Duration;

use fake_marketplace::fulfillments::fulfillments_path;
use fake_marketplace::{FakeMarketplace, Fault, FaultRule};
use marketplace_client::api::{ApiClient, ClientConfig};
use marketplace_orders::blocking::Orders;
use marketplace_orders::{ErrorKind, OrdersError, Shipment};

use crate::fake_inventory;

/// The Fulfillment API of `fake` with a seller's token granting `sell.fulfillment`, the
/// client retrying as it does by default (3 times, here without waiting), `ship` trying an
/// unclear answer again twice.
fn orders(fake: &FakeMarketplace) -> Orders {
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_max_retries(3)
        .with_backoff(Duration::ZERO, Duration::ZERO);
    let tokens = fake_inventory::seller_tokens(fake, &["/sell.fulfillment"]);
    Orders::new(ApiClient::new(config, tokens).unwrap()).with_retries(2, Duration::ZERO)
}

/// An order of `quantity` items of one listing of the fake's seller: its id and its line
/// item's id.
fn order_of(fake: &FakeMarketplace, quantity: u32) -> (String, String) {
    let listing = fake.add_listing("fake_seller", "BOLT-1", 100, "2.50");
    let order_id = fake.buy(&listing, quantity).unwrap();
    let line = fake.order(&order_id).unwrap()["lineItems"][0]["lineItemId"]
        .as_str()
        .unwrap()
        .to_owned();
    (order_id, line)
}

fn posts(fake: &FakeMarketplace, order_id: &str) -> usize {
    fake.requests_to(&fulfillments_path(order_id))
        .iter()
        .filter(|r| r.method == "POST")
        .count()
}

fn kind(error: &OrdersError) -> ErrorKind {
    error.errors().first().map(|e| e.kind).unwrap_or_else(|| {
        panic!("not one of eBay's errors: {error}");
    })
}

#[test]
fn a_shipment_whose_answer_was_dropped_is_read_back_not_posted_again_and_made_once() {
    let fake = FakeMarketplace::new();
    // Three bought, one shipped: a blind second POST would be taken and ship a second one.
    let (order_id, line) = order_of(&fake, 3);
    fake.inject(FaultRule {
        method: Some("POST".into()),
        path: Some(fulfillments_path(&order_id)),
        times: Some(1),
        fault: Fault::AnswerDropped,
    });
    let shipment = Shipment::new(&order_id, "USPS", "9400111899223").line_item(&line, 1);
    let shipped = orders(&fake).ship(&shipment).unwrap();
    assert_eq!(shipped.fulfillment_id, "9400111899223");
    let all = fake.shipping_fulfillments(&order_id);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(posts(&fake, &order_id), 1);
    let order = fake.order(&order_id).unwrap();
    assert_eq!(order["orderFulfillmentStatus"], "IN_PROGRESS");
    assert_eq!(
        order["lineItems"][0]["lineItemFulfillmentStatus"],
        "IN_PROGRESS"
    );
}

#[test]
fn a_shipment_answered_500_without_being_made_is_read_back_and_posted_again_once() {
    let fake = FakeMarketplace::new();
    let (order_id, _) = order_of(&fake, 2);
    // eBay's 500 (30500) instead of the route: nothing was made.
    fake.inject(FaultRule {
        method: Some("POST".into()),
        path: Some(fulfillments_path(&order_id)),
        times: Some(1),
        fault: fake_marketplace::orders::system_error(),
    });
    let shipped = orders(&fake)
        .ship(&Shipment::new(&order_id, "UPS", "1Z999AA10123456785"))
        .unwrap();
    assert!(shipped.created);
    assert_eq!(fake.shipping_fulfillments(&order_id).len(), 1);
    assert_eq!(posts(&fake, &order_id), 2);
    let reads = fake
        .requests_to(&fulfillments_path(&order_id))
        .iter()
        .filter(|r| r.method == "GET")
        .count();
    assert_eq!(reads, 2, "a read before each POST");
}

#[test]
fn a_shipment_run_twice_is_made_once_and_fulfills_the_order() {
    let fake = FakeMarketplace::new();
    let (order_id, line) = order_of(&fake, 2);
    let api = orders(&fake);
    let shipment = Shipment::new(&order_id, "FedEx", "771234567890");
    let first = api.ship(&shipment).unwrap();
    assert!(first.created);
    let again = api.ship(&shipment).unwrap();
    assert!(!again.created);
    assert_eq!(again.fulfillment_id, first.fulfillment_id);
    assert_eq!(posts(&fake, &order_id), 1);

    let made = api
        .get_shipping_fulfillment(&order_id, &first.fulfillment_id)
        .unwrap();
    assert_eq!(
        made.shipment_tracking_number.as_deref(),
        Some("771234567890")
    );
    assert_eq!(made.shipping_carrier_code.as_deref(), Some("FedEx"));
    assert_eq!(made.line_items[0].line_item_id, line);
    assert_eq!(made.line_items[0].quantity, Some(2));
    let listed = api.get_shipping_fulfillments(&order_id).unwrap();
    assert_eq!((listed.total, listed.fulfillments.len()), (Some(1), 1));
    let order = api.get_order(&order_id).unwrap();
    assert_eq!(order.order_fulfillment_status.as_deref(), Some("FULFILLED"));
    assert_eq!(
        order.line_items[0].line_item_fulfillment_status.as_deref(),
        Some("FULFILLED")
    );
}

#[test]
fn a_rerun_with_the_tracking_number_in_other_case_or_padded_finds_the_fulfillment_and_posts_nothing()
 {
    let fake = FakeMarketplace::new();
    // Three bought, one shipped: a second POST would be taken and ship another one.
    let (order_id, line) = order_of(&fake, 3);
    let api = orders(&fake);
    let first = api
        .ship(&Shipment::new(&order_id, "UPS", "1Z999AA10123456784").line_item(&line, 1))
        .unwrap();
    assert!(first.created);
    for typed in ["1z999aa10123456784", " 1Z999aa10123456784\t"] {
        let again = api
            .ship(&Shipment::new(&order_id, "UPS", typed).line_item(&line, 1))
            .unwrap();
        assert_eq!(
            (again.created, again.fulfillment_id.as_str()),
            (false, first.fulfillment_id.as_str()),
            "{typed:?}"
        );
    }
    assert_eq!(posts(&fake, &order_id), 1);
    assert_eq!(fake.shipping_fulfillments(&order_id).len(), 1);
    // Another number is another package.
    let other = api
        .ship(&Shipment::new(&order_id, "UPS", "1Z999AA10123456785").line_item(&line, 1))
        .unwrap();
    assert!(other.created);
    assert_eq!(posts(&fake, &order_id), 2);
}

#[test]
fn ebays_refusals_of_the_shipping_fulfillment_calls_are_typed() {
    let fake = FakeMarketplace::new();
    let (order_id, line) = order_of(&fake, 1);
    let api = orders(&fake);
    let create = |shipment: &Shipment| api.ship(shipment).unwrap_err();

    let e = create(&Shipment::new(&order_id, "USPS", "94001").line_item("123", 1));
    assert_eq!(kind(&e), ErrorKind::InvalidLineItemId, "{e}");
    let e = create(&Shipment::new(&order_id, "USPS", "94001").line_item(&line, 2));
    assert_eq!(kind(&e), ErrorKind::InvalidInputData, "{e}");
    let e = create(&Shipment::new(&order_id, "NoSuchCarrier", "94001"));
    assert_eq!(kind(&e), ErrorKind::InvalidTracking, "{e}");
    let e = create(&Shipment::new("99-99999-99999", "USPS", "94001"));
    assert_eq!(kind(&e), ErrorKind::InvalidOrderId, "{e}");
    let e = api
        .get_shipping_fulfillment(&order_id, "12345")
        .unwrap_err();
    assert_eq!(kind(&e), ErrorKind::InvalidFulfillmentId, "{e}");
    assert!(e.to_string().contains("12345"), "{e}");
    assert!(fake.shipping_fulfillments(&order_id).is_empty());
}
