//! issueRefund against the fake marketplace over loopback HTTP: a refund retried after its
//! answer was lost is issued once; a refund eBay would refuse, or more than is left to
//! refund, is refused before issueRefund is sent; a UK seller's refund is signed and
//! accepted, and refused unsigned.

use std::time::Duration;

use fake_marketplace::{FakeMarketplace, Fault};
use marketplace_client::api::{ApiClient, ClientConfig};
use marketplace_orders::OrdersError;
use marketplace_orders::blocking::Orders;
use marketplace_orders::refund::{
    IssueRefundRequest, MemoryRefundStore, RefundItem, RefundReason, RefundStore, SimpleAmount,
};

use crate::fake_inventory;

/// The scopes of the refund's calls: getOrder (`sell.fulfillment`) and issueRefund
/// (`sell.finances`, as eBay's description gives it).
const SCOPES: [&str; 2] = ["/sell.fulfillment", "/sell.finances"];

/// A client of `fake` with the client's own retries on (three), as an application has it.
fn api(fake: &FakeMarketplace) -> ApiClient {
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_max_retries(3)
        .with_backoff(Duration::from_millis(1), Duration::from_millis(4));
    ApiClient::new(config, fake_inventory::seller_tokens(fake, &SCOPES)).unwrap()
}

fn orders(api: ApiClient) -> Orders {
    Orders::new(api).with_retries(3, Duration::from_millis(1))
}

fn refund_path(order_id: &str) -> String {
    format!("/sell/fulfillment/v1/order/{order_id}/issue_refund")
}

/// An order of `quantity` at `price` on `marketplace`, and its line item's id.
fn sold(fake: &FakeMarketplace, marketplace: &str, price: &str, quantity: u32) -> (String, String) {
    let listing = fake
        .add_listing_on(marketplace, "fake_seller", "BOLT-1", 100, price)
        .unwrap();
    let order_id = fake.buy(&listing, quantity).unwrap();
    let line = fake.order(&order_id).unwrap()["lineItems"][0]["lineItemId"]
        .as_str()
        .unwrap()
        .to_owned();
    (order_id, line)
}

fn order_refunds(fake: &FakeMarketplace, order_id: &str) -> usize {
    let order = fake.order(order_id).unwrap();
    order["paymentSummary"]["refunds"].as_array().unwrap().len()
        + order["lineItems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["refunds"].as_array().unwrap().len())
            .sum::<usize>()
}

#[test]
fn a_refund_retried_after_its_answer_was_lost_is_issued_once() {
    let fake = FakeMarketplace::new();
    let (order_id, _) = sold(&fake, "EBAY_US", "20.00", 2);
    let orders = orders(api(&fake));
    let store = MemoryRefundStore::new();
    let request = IssueRefundRequest::whole_order(
        RefundReason::ItemNotAsDescribed,
        SimpleAmount::new("12.34", "USD"),
    )
    .comment("a scratch on the lid");

    // eBay records the refund; its answer is cut off on the way back.
    fake.fail_next(&refund_path(&order_id), Fault::CutOffBody);
    let issued = orders
        .issue_refund(&store, "refund-1", &order_id, &request)
        .unwrap();
    assert_eq!(order_refunds(&fake, &order_id), 1);
    // Neither the client's retries nor the refund's resent issueRefund: the order showed it.
    assert_eq!(fake.requests_to(&refund_path(&order_id)).len(), 1);
    let order = fake.order(&order_id).unwrap();
    let recorded = &order["paymentSummary"]["refunds"][0];
    assert_eq!(recorded["refundId"], issued.refund_id.as_str());
    assert_eq!(recorded["amount"]["value"], "12.34");
    assert_eq!(order["orderPaymentStatus"], "PARTIALLY_REFUNDED");

    // The same key again (a retry of the caller's job): the same refund, nothing sent.
    let again = orders
        .issue_refund(&store, "refund-1", &order_id, &request)
        .unwrap();
    assert_eq!(
        (again.refund_id.as_str(), again.replayed),
        (issued.refund_id.as_str(), true)
    );
    assert_eq!(fake.requests_to(&refund_path(&order_id)).len(), 1);

    // A process that crashed after sending (its record has no refundId yet) finds it too.
    let (other_order, _) = sold(&fake, "EBAY_US", "20.00", 1);
    let crashed = MemoryRefundStore::new();
    let small = IssueRefundRequest::whole_order(
        RefundReason::ShippingDiscount,
        SimpleAmount::new("2.00", "USD"),
    );
    fake.fail_next(&refund_path(&other_order), Fault::CutOffBody);
    let no_retries = Orders::new(api(&fake)).with_retries(0, Duration::ZERO);
    let lost = no_retries.issue_refund(&crashed, "refund-2", &other_order, &small);
    assert!(lost.is_err(), "{lost:?}");
    let record = block_on_ready(crashed.get("refund-2")).unwrap().unwrap();
    assert_eq!(
        (
            record.order_id.as_str(),
            record.refund_id.as_deref(),
            record.before.len()
        ),
        (other_order.as_str(), None, 0)
    );
    let found = orders
        .issue_refund(&crashed, "refund-2", &other_order, &small)
        .unwrap();
    assert!(found.replayed);
    assert_eq!(order_refunds(&fake, &other_order), 1);
    assert_eq!(fake.requests_to(&refund_path(&other_order)).len(), 1);
    assert_eq!(
        block_on_ready(crashed.get("refund-2"))
            .unwrap()
            .unwrap()
            .refund_id,
        Some(found.refund_id)
    );
}

/// A store's future that is ready at once (the memory store's).
fn block_on_ready<T>(future: impl std::future::Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    let mut context = std::task::Context::from_waker(std::task::Waker::noop());
    match future.as_mut().poll(&mut context) {
        std::task::Poll::Ready(value) => value,
        std::task::Poll::Pending => panic!("the memory store's future was not ready"),
    }
}

#[test]
fn each_local_refusal_of_a_refund_sends_no_issue_refund() {
    let fake = FakeMarketplace::new();
    let (order_id, line) = sold(&fake, "EBAY_US", "10.00", 3);
    let orders = orders(api(&fake));
    let store = MemoryRefundStore::new();
    let whole = |value: &str, currency: &str| {
        IssueRefundRequest::whole_order(
            RefundReason::OtherAdjustment,
            SimpleAmount::new(value, currency),
        )
    };
    let items = |line: &str, value: &str| {
        IssueRefundRequest::line_items(
            RefundReason::ItemNotAsDescribed,
            vec![RefundItem::new(line, SimpleAmount::new(value, "USD"))],
        )
    };
    let refused = |key: &str, request: &IssueRefundRequest| match orders
        .issue_refund(&store, key, &order_id, request)
    {
        Err(OrdersError::Refund { what, reason }) => format!("{what}: {reason}"),
        Err(OrdersError::Invalid { what, reason }) => format!("{what}: {reason}"),
        other => panic!("{key}: not refused before sending: {other:?}"),
    };

    let message = refused("euro", &whole("5.00", "EUR"));
    assert!(
        message.starts_with("orderLevelRefundAmount.currency: EUR"),
        "{message}"
    );
    assert!(message.contains("paid in USD"), "{message}");
    let message = refused("too-much", &whole("30.01", "USD"));
    assert!(
        message.starts_with("orderLevelRefundAmount.value: 30.01 USD"),
        "{message}"
    );
    assert!(
        message.contains("30.00 paid, 0.00 refunded, 30.00 left"),
        "{message}"
    );
    let message = refused("not-a-line", &items("99999", "1.00"));
    assert!(
        message.starts_with("refundItems[0].lineItemId: 99999"),
        "{message}"
    );
    assert!(message.contains(&line), "{message}");
    let message = refused("three-decimals", &whole("1.005", "USD"));
    assert!(message.starts_with("orderLevelRefundAmount: "), "{message}");
    let message = refused("both", &{
        let mut both = items(&line, "1.00");
        both.order_level_refund_amount = Some(SimpleAmount::new("1.00", "USD"));
        both
    });
    assert!(
        message.contains("whole order or of line items"),
        "{message}"
    );
    assert!(fake.requests_to(&refund_path(&order_id)).is_empty());

    // After a refund of 25.00, 5.00 are left: 5.01 is refused, of the line item too.
    orders
        .issue_refund(&store, "first", &order_id, &whole("25.00", "USD"))
        .unwrap();
    let message = refused("more", &whole("5.01", "USD"));
    assert!(
        message.contains("30.00 paid, 25.00 refunded, 5.00 left"),
        "{message}"
    );
    let message = refused("more-of-the-line", &items(&line, "5.01"));
    assert!(message.starts_with("refundItems: 5.01 USD"), "{message}");
    // A key names one refund: given to another request, it is refused.
    let message = refused("first", &whole("1.00", "USD"));
    assert!(
        message.starts_with("key: the key \"first\" was given to another refund"),
        "{message}"
    );
    assert_eq!(fake.requests_to(&refund_path(&order_id)).len(), 1);
    assert_eq!(order_refunds(&fake, &order_id), 1);
}

#[test]
fn a_uk_sellers_refund_is_signed_and_accepted_and_refused_unsigned() {
    let fake = FakeMarketplace::new();
    let (order_id, line) = sold(&fake, "EBAY_GB", "17.95", 1);
    let keys = api(&fake);
    let request = IssueRefundRequest::line_items(
        RefundReason::BuyerCancel,
        vec![RefundItem::new(&line, SimpleAmount::new("17.95", "GBP"))],
    );
    let store = MemoryRefundStore::new();

    let error = orders(api(&fake))
        .issue_refund(&store, "gb-1", &order_id, &request)
        .unwrap_err();
    let OrdersError::Api(api_error) = &error else {
        panic!("not the signature's refusal: {error:?}");
    };
    assert_eq!(api_error.error_id(), Some(215001), "{error}");
    assert_eq!(order_refunds(&fake, &order_id), 0);

    let key = keys
        .create_signing_key("ED25519")
        .unwrap()
        .signing_key()
        .unwrap();
    let signed = orders(api(&fake).with_signing_key(key));
    let issued = signed
        .issue_refund(&store, "gb-1", &order_id, &request)
        .unwrap();
    assert_eq!(
        (issued.refund_status.as_deref(), issued.replayed),
        (Some("PENDING"), false)
    );
    let sent = fake.requests_to(&refund_path(&order_id)).pop().unwrap();
    assert!(sent.header("Signature").unwrap().starts_with("sig1=:"));
    let order = fake.order(&order_id).unwrap();
    assert_eq!(
        order["lineItems"][0]["refunds"][0]["refundId"],
        issued.refund_id.as_str()
    );
    assert_eq!(
        order["lineItems"][0]["refunds"][0]["amount"]["currency"],
        "GBP"
    );
    assert_eq!(order["orderPaymentStatus"], "FULLY_REFUNDED");
    // Nothing is left to refund: a second key is refused before sending.
    let message = signed
        .issue_refund(&store, "gb-2", &order_id, &request)
        .unwrap_err()
        .to_string();
    assert!(
        message.contains("17.95 paid, 17.95 refunded, 0.00 left"),
        "{message}"
    );
    assert_eq!(fake.requests_to(&refund_path(&order_id)).len(), 2);
}

#[test]
fn a_line_items_refund_listed_at_the_order_level_too_is_counted_once() {
    let fake = FakeMarketplace::new();
    // getOrder lists a line item's refund in paymentSummary.refunds and in the line item's
    // refunds, under one refundId.
    fake.list_line_item_refunds_at_order_level(true);
    let (order_id, line) = sold(&fake, "EBAY_US", "20.00", 2);
    let orders = orders(api(&fake));
    let store = MemoryRefundStore::new();
    let first = orders
        .issue_refund(
            &store,
            "line",
            &order_id,
            &IssueRefundRequest::line_items(
                RefundReason::ItemNotAsDescribed,
                vec![RefundItem::new(&line, SimpleAmount::new("15.00", "USD"))],
            ),
        )
        .unwrap();
    let order = fake.order(&order_id).unwrap();
    assert_eq!(
        order["paymentSummary"]["refunds"][0]["refundId"],
        first.refund_id.as_str()
    );
    assert_eq!(
        order["lineItems"][0]["refunds"][0]["refundId"],
        first.refund_id.as_str()
    );
    // 40.00 paid, 15.00 refunded (once): 25.00 is left, and refunded.
    let rest = IssueRefundRequest::whole_order(
        RefundReason::OtherAdjustment,
        SimpleAmount::new("25.00", "USD"),
    );
    let issued = orders
        .issue_refund(&store, "rest", &order_id, &rest)
        .unwrap();
    assert!(!issued.replayed);
    assert_eq!(fake.requests_to(&refund_path(&order_id)).len(), 2);
    assert_eq!(
        fake.order(&order_id).unwrap()["orderPaymentStatus"],
        "FULLY_REFUNDED"
    );
    // Nothing is left: a cent more is refused before sending, naming what was refunded.
    let more = IssueRefundRequest::whole_order(
        RefundReason::OtherAdjustment,
        SimpleAmount::new("0.01", "USD"),
    );
    let refused = orders
        .issue_refund(&store, "more", &order_id, &more)
        .unwrap_err();
    assert!(
        matches!(&refused, OrdersError::Refund { what, reason }
            if what == "orderLevelRefundAmount.value" && reason.contains("40.00 refunded")),
        "{refused}"
    );
    assert_eq!(fake.requests_to(&refund_path(&order_id)).len(), 2);
}
