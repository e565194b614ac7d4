//! issueRefund's key against the fake marketplace over loopback HTTP: a refund made by other
//! means that only later gets a `refundReferenceId` is never taken for the key's refund; two
//! workers given one key at once refund once; the `comment`'s limit (100 characters) is the
//! same in the client and the fake.

use std::time::Duration;

use fake_marketplace::{FakeMarketplace, Fault};
use marketplace_client::api::{ApiClient, ApiRequest, ClientConfig};
use marketplace_orders::OrdersError;
use marketplace_orders::blocking::Orders;
use marketplace_orders::refund::{
    IssueRefundRequest, MemoryRefundStore, RefundReason, SimpleAmount,
};
use serde_json::{Value, json};

use crate::fake_inventory;

/// getOrder's scope and issueRefund's (`sell.finances`, as eBay's description gives it).
const SCOPES: [&str; 2] = ["/sell.fulfillment", "/sell.finances"];

fn api(fake: &FakeMarketplace) -> ApiClient {
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_max_retries(3)
        .with_backoff(Duration::from_millis(1), Duration::from_millis(4));
    ApiClient::new(config, fake_inventory::seller_tokens(fake, &SCOPES)).unwrap()
}

fn orders(fake: &FakeMarketplace) -> Orders {
    Orders::new(api(fake)).with_retries(3, Duration::from_millis(1))
}

fn refund_path(order_id: &str) -> String {
    format!("/sell/fulfillment/v1/order/{order_id}/issue_refund")
}

fn order_path(order_id: &str) -> String {
    format!("/sell/fulfillment/v1/order/{order_id}")
}

/// An order of one item at 20.00 USD.
fn sold(fake: &FakeMarketplace) -> String {
    let listing = fake
        .add_listing_on("EBAY_US", "fake_seller", "BOLT-1", 100, "20.00")
        .unwrap();
    fake.buy(&listing, 1).unwrap()
}

fn order_level_refunds(fake: &FakeMarketplace, order_id: &str) -> Vec<Value> {
    fake.order(order_id).unwrap()["paymentSummary"]["refunds"]
        .as_array()
        .unwrap()
        .clone()
}

#[test]
fn a_refund_by_other_means_given_a_reference_later_is_not_taken_for_the_keys_refund() {
    let fake = FakeMarketplace::new();
    let order_id = sold(&fake);
    let orders = orders(&fake);
    let store = MemoryRefundStore::new();
    let request = IssueRefundRequest::whole_order(
        RefundReason::OtherAdjustment,
        SimpleAmount::new("3.00", "USD"),
    );

    // A return's refund, pending, with neither refundId nor refundReferenceId yet.
    fake.refund_by_other_means(&order_id, "5.00").unwrap();
    // eBay refuses issueRefund while that refund is processing (400, errorId 34922).
    let refused = orders
        .issue_refund(&store, "k-1", &order_id, &request)
        .unwrap_err();
    assert_eq!(
        (
            refused.status(),
            refused.errors().first().map(|e| e.error.error_id)
        ),
        (Some(400), Some(34922)),
        "{refused}"
    );
    assert_eq!(fake.requests_to(&refund_path(&order_id)).len(), 1);
    assert_eq!(order_level_refunds(&fake, &order_id).len(), 1);

    // The return's refund is issued: it now has a refundReferenceId (and still no refundId).
    fake.complete_refunds(&order_id).unwrap();
    let other = &order_level_refunds(&fake, &order_id)[0];
    assert!(other["refundReferenceId"].is_string(), "{other}");

    // The same key again: nothing of this key was refunded, so issueRefund is sent.
    let issued = orders
        .issue_refund(&store, "k-1", &order_id, &request)
        .unwrap();
    assert!(!issued.replayed, "{issued:?}");
    assert_ne!(
        Some(issued.refund_id.as_str()),
        other["refundReferenceId"].as_str()
    );
    assert_eq!(fake.requests_to(&refund_path(&order_id)).len(), 2);
    let refunds = order_level_refunds(&fake, &order_id);
    assert_eq!(refunds.len(), 2, "{refunds:?}");
    assert_eq!(refunds[1]["refundId"], issued.refund_id.as_str());
    assert_eq!(refunds[1]["amount"]["value"], "3.00");
}

#[test]
fn two_workers_given_one_key_at_once_refund_once() {
    let fake = FakeMarketplace::new();
    let order_id = sold(&fake);
    let store = MemoryRefundStore::new();
    let request = IssueRefundRequest::whole_order(
        RefundReason::BuyerCancel,
        SimpleAmount::new("5.00", "USD"),
    );

    // The second delivery's worker looks the key up first (nothing yet), then its getOrder
    // is slow: the first delivery's worker refunds, and the refund is issued, meanwhile.
    fake.fail_next(
        &order_path(&order_id),
        Fault::Delay(Duration::from_millis(1500)),
    );
    let (slow, fast) = std::thread::scope(|s| {
        let slow =
            s.spawn(|| orders(&fake).issue_refund(&store, "delivery-1", &order_id, &request));
        // The slow worker's getOrder is under way (the fake holds it) before the fast starts.
        while fake.requests_to(&order_path(&order_id)).is_empty() {
            std::thread::sleep(Duration::from_millis(5));
        }
        let fast = orders(&fake).issue_refund(&store, "delivery-1", &order_id, &request);
        fake.complete_refunds(&order_id).unwrap();
        (slow.join().unwrap(), fast)
    });
    let fast = fast.unwrap();
    let slow = slow.unwrap();
    assert_eq!(slow.refund_id, fast.refund_id);
    assert!(slow.replayed && !fast.replayed, "{slow:?} {fast:?}");
    assert_eq!(fake.requests_to(&refund_path(&order_id)).len(), 1);
    assert_eq!(order_level_refunds(&fake, &order_id).len(), 1);
}

#[test]
fn a_comment_of_100_characters_is_refunded_and_one_of_101_refused_by_client_and_fake() {
    let fake = FakeMarketplace::new();
    let order_id = sold(&fake);
    let orders = orders(&fake);
    let store = MemoryRefundStore::new();
    let with_comment = |n: usize| {
        IssueRefundRequest::whole_order(
            RefundReason::OtherAdjustment,
            SimpleAmount::new("1.00", "USD"),
        )
        .comment("é".repeat(n))
    };

    let long = orders.issue_refund(&store, "long", &order_id, &with_comment(101));
    assert!(
        matches!(
            long,
            Err(OrdersError::Invalid {
                what: "comment",
                ..
            })
        ),
        "{long:?}"
    );
    assert!(fake.requests_to(&refund_path(&order_id)).is_empty());
    orders
        .issue_refund(&store, "at-limit", &order_id, &with_comment(100))
        .unwrap();
    assert_eq!(order_level_refunds(&fake, &order_id).len(), 1);

    // The fake, sent one past the limit directly: eBay's 34921, nothing recorded.
    let error = api(&fake)
        .send(ApiRequest::post(refund_path(&order_id)).json(&json!({
                "reasonForRefund": "OTHER_ADJUSTMENT", "comment": "é".repeat(101),
                "orderLevelRefundAmount": {"value": "1.00", "currency": "USD"}})))
        .unwrap_err();
    assert_eq!((error.status(), error.error_id()), (Some(400), Some(34921)));
    assert_eq!(order_level_refunds(&fake, &order_id).len(), 1);
}

#[test]
fn the_fake_refuses_issue_refund_with_34922_while_a_refund_by_other_means_is_processing() {
    let fake = FakeMarketplace::new();
    let order_id = sold(&fake);
    let orders = orders(&fake);
    let store = MemoryRefundStore::new();
    let request = IssueRefundRequest::whole_order(
        RefundReason::OtherAdjustment,
        SimpleAmount::new("1.00", "USD"),
    );
    fake.refund_by_other_means(&order_id, "2.00").unwrap();
    let refused = orders
        .issue_refund(&store, "while-processing", &order_id, &request)
        .unwrap_err();
    // As the Fulfillment description lists it: 400, API_FULFILLMENT, REQUEST.
    let error = &refused.errors().first().expect("eBay's error").error;
    assert_eq!(
        (
            refused.status(),
            error.error_id,
            error.domain.as_deref(),
            error.category.as_deref()
        ),
        (Some(400), 34922, Some("API_FULFILLMENT"), Some("REQUEST")),
        "{refused}"
    );
    assert_eq!(order_level_refunds(&fake, &order_id).len(), 1);
    // Once that refund is issued, the order is refunded.
    fake.complete_refunds(&order_id).unwrap();
    let issued = orders
        .issue_refund(&store, "after-processing", &order_id, &request)
        .unwrap();
    assert_eq!(
        order_level_refunds(&fake, &order_id)[1]["refundId"],
        issued.refund_id.as_str()
    );
}
