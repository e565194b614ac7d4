//! issueRefund held to eBay's OpenAPI description of the Fulfillment API
//! (`tests/contract/sell_fulfillment_v1_oas3.json`) over real HTTP: marketplace-orders'
//! requests (path, the required `Content-Type`, a body of the `IssueRefundRequest` schema)
//! and the fake's answers (a `Refund`, the order's refunds in getOrder's `Order` schema, the
//! scope the description gives), and every error id the fake answers, each documented for
//! its status with its domain and category.

use crate::inventory_support as fake_inventory;
use crate::openapi;

use std::path::Path;

use fake_marketplace::FakeMarketplace;
use marketplace_client::api::{ApiClient, ApiError, ApiRequest};
use marketplace_orders::blocking::Orders;
use marketplace_orders::refund::{
    IssueRefundRequest, MemoryRefundStore, RefundItem, RefundReason, SimpleAmount,
};
use openapi::{Document, Operation};
use serde_json::{Value, json};

fn document() -> Document {
    Document::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/contract/sell_fulfillment_v1_oas3.json"),
    )
}

fn operation(doc: &Document, id: &str) -> Operation {
    doc.operations()
        .into_iter()
        .find(|o| o.id == id)
        .unwrap_or_else(|| panic!("{id} is documented"))
}

/// A client of `fake` for the fake's seller with `sell.fulfillment` (getOrder) and
/// `sell.finances` (issueRefund), without retries.
fn seller_api(fake: &FakeMarketplace) -> ApiClient {
    fake_inventory::api_with(
        fake,
        fake_inventory::seller_tokens(fake, &["/sell.fulfillment", "/sell.finances"]),
    )
}

/// The error's single id, checked against what `op` documents for its status (its domain and
/// category as listed).
fn documented_error(op: &Operation, e: &ApiError) -> u32 {
    let status = e.status().expect("an HTTP answer");
    let documented = op
        .responses
        .get(&status)
        .unwrap_or_else(|| panic!("{}: status {status} is not documented: {e}", op.id));
    let errors = e.service_errors();
    assert_eq!(errors.len(), 1, "{e}");
    let got = &errors[0];
    let listed = documented
        .errors
        .iter()
        .find(|d| d.id == got.error_id)
        .unwrap_or_else(|| {
            panic!(
                "{}: errorId {} not documented for {status}",
                op.id, got.error_id
            )
        });
    assert_eq!(got.domain.as_deref(), Some(listed.domain.as_str()), "{e}");
    assert_eq!(
        got.category.as_deref(),
        Some(listed.category.as_str()),
        "{e}"
    );
    got.error_id
}

#[test]
fn issue_refund_requests_answers_and_error_ids_are_as_the_fulfillment_api_describes_them() {
    let doc = document();
    let op = operation(&doc, "issueRefund");
    assert!(
        op.scopes
            .iter()
            .any(|s| s.ends_with(fake_marketplace::refunds::REFUND_SCOPE)),
        "{:?}",
        op.scopes
    );
    let fake = FakeMarketplace::new();
    let listing = fake.add_listing("fake_seller", "BOWL-1", 20, "4.50");
    let whole = fake.buy(&listing, 2).unwrap();
    let by_line = fake.buy(&listing, 1).unwrap();
    let line = fake.order(&by_line).unwrap()["lineItems"][0]["lineItemId"]
        .as_str()
        .unwrap()
        .to_owned();
    let api = seller_api(&fake);
    let orders = Orders::new(seller_api(&fake));
    let store = MemoryRefundStore::new();
    fake.clear_requests();

    // marketplace-orders' requests: a whole order, and a line item.
    orders
        .issue_refund(
            &store,
            "whole",
            &whole,
            &IssueRefundRequest::whole_order(
                RefundReason::BuyerCancel,
                SimpleAmount::new("8.00", "USD"),
            )
            .comment("cancelled"),
        )
        .unwrap();
    orders
        .issue_refund(
            &store,
            "line",
            &by_line,
            &IssueRefundRequest::line_items(
                RefundReason::ShippingDiscount,
                vec![RefundItem::new(&line, SimpleAmount::new("1.5", "USD"))],
            ),
        )
        .unwrap();
    let sent: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with("/issue_refund"))
        .collect();
    assert_eq!(sent.len(), 2);
    for request in &sent {
        assert!(op.matches(&request.path), "{}", request.path);
        assert!(request.method.eq_ignore_ascii_case(&op.method));
        for header in op.parameters_in("header").filter(|p| p.required) {
            assert!(
                request.header(&header.name).is_some(),
                "issueRefund: header {} missing",
                header.name
            );
        }
        let body: Value = serde_json::from_slice(&request.body).unwrap();
        assert_eq!(
            doc.conformance(&body, "IssueRefundRequest"),
            Vec::<String>::new()
        );
    }

    // The fake's answers: a Refund, and the refunds on getOrder's Order.
    let refund_schema = op.responses[&200].schema.clone().expect("a 200 body");
    assert_eq!(refund_schema, "Refund");
    let answer: Value = api
        .send(
            ApiRequest::post(format!("/sell/fulfillment/v1/order/{whole}/issue_refund"))
                .json(&json!({"reasonForRefund": "OTHER_ADJUSTMENT",
                    "orderLevelRefundAmount": {"value": "0.5", "currency": "USD"}})),
        )
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(doc.conformance(&answer, "Refund"), Vec::<String>::new());
    assert_eq!(answer["refundStatus"], "PENDING");
    fake.complete_refunds(&whole).unwrap();
    for id in [&whole, &by_line] {
        let order: Value = api
            .send(ApiRequest::get(format!("/sell/fulfillment/v1/order/{id}")))
            .unwrap()
            .json()
            .unwrap();
        assert_eq!(doc.conformance(&order, "Order"), Vec::<String>::new());
        let refunds = order["paymentSummary"]["refunds"].as_array().unwrap().len()
            + order["lineItems"][0]["refunds"].as_array().unwrap().len();
        assert!(refunds >= 1, "{order}");
    }
    let order = fake.order(&whole).unwrap();
    assert_eq!(
        order["paymentSummary"]["refunds"][0]["refundStatus"],
        "REFUNDED"
    );
    assert!(order["paymentSummary"]["refunds"][0]["refundReferenceId"].is_string());

    // Every error id the fake answers, documented for its status.
    let post = |order: &str, body: Option<Value>| {
        let request = ApiRequest::post(format!("/sell/fulfillment/v1/order/{order}/issue_refund"));
        let request = match body {
            Some(body) => request.json(&body),
            None => request,
        };
        api.send(request).unwrap_err()
    };
    let usd = |value: &str| json!({"value": value, "currency": "USD"});
    let reason = "BUYER_CANCEL";
    let cases: Vec<(u32, &str, Option<Value>)> = vec![
        (
            34913,
            "99-99999-99999",
            Some(json!({"reasonForRefund": reason, "orderLevelRefundAmount": usd("1")})),
        ),
        (34902, &by_line, None),
        (
            34903,
            &by_line,
            Some(json!({"orderLevelRefundAmount": usd("1")})),
        ),
        (
            34903,
            &by_line,
            Some(json!({"reasonForRefund": "BECAUSE", "orderLevelRefundAmount": usd("1")})),
        ),
        (34905, &by_line, Some(json!({"reasonForRefund": reason}))),
        (
            34906,
            &by_line,
            Some(json!({"reasonForRefund": reason, "orderLevelRefundAmount": {"currency": "USD"}})),
        ),
        (
            34907,
            &by_line,
            Some(json!({"reasonForRefund": reason, "orderLevelRefundAmount": usd("1.001")})),
        ),
        (
            34907,
            &by_line,
            Some(json!({"reasonForRefund": reason, "orderLevelRefundAmount": usd("0")})),
        ),
        (
            34908,
            &by_line,
            Some(json!({"reasonForRefund": reason, "orderLevelRefundAmount": {"value": "1"}})),
        ),
        (
            34909,
            &by_line,
            Some(
                json!({"reasonForRefund": reason, "orderLevelRefundAmount": {"value": "1", "currency": "EUR"}}),
            ),
        ),
        (
            34910,
            &by_line,
            Some(json!({"reasonForRefund": reason, "refundItems": [{"refundAmount": usd("1")}]})),
        ),
        (
            34911,
            &by_line,
            Some(
                json!({"reasonForRefund": reason, "refundItems": [{"refundAmount": usd("1"), "legacyReference": {"legacyTransactionId": "1"}}]}),
            ),
        ),
        (
            34912,
            &by_line,
            Some(
                json!({"reasonForRefund": reason, "refundItems": [{"refundAmount": usd("1"), "legacyReference": {"legacyItemId": listing}}]}),
            ),
        ),
        (
            34914,
            &by_line,
            Some(
                json!({"reasonForRefund": reason, "refundItems": [{"refundAmount": usd("1"), "lineItemId": "1"}]}),
            ),
        ),
        (
            34921,
            &by_line,
            Some(
                json!({"reasonForRefund": reason, "comment": "x".repeat(1001), "orderLevelRefundAmount": usd("1")}),
            ),
        ),
        (
            34915,
            &by_line,
            Some(json!({"reasonForRefund": reason, "orderLevelRefundAmount": usd("4.01")})),
        ),
        (
            34924,
            &by_line,
            Some(
                json!({"reasonForRefund": reason, "refundItems": [{"refundAmount": usd("3.01"), "lineItemId": line}]}),
            ),
        ),
    ];
    for (expected, order, body) in cases {
        let error = post(order, body.clone());
        assert_eq!(documented_error(&op, &error), expected, "{body:?}: {error}");
    }
    // Nothing of those was recorded: the line item's order has its one refund of 1.50.
    let order = fake.order(&by_line).unwrap();
    assert_eq!(
        order["lineItems"][0]["refunds"].as_array().unwrap().len(),
        1
    );
    assert_eq!(
        order["paymentSummary"]["refunds"].as_array().unwrap().len(),
        0
    );
    // A token without sell.finances: eBay's insufficient-scope 403 (documented, no error id).
    let fulfillment_only = fake_inventory::api_with(
        &fake,
        fake_inventory::seller_tokens(&fake, &["/sell.fulfillment"]),
    );
    let error = fulfillment_only
        .send(
            ApiRequest::post(format!("/sell/fulfillment/v1/order/{by_line}/issue_refund"))
                .json(&json!({"reasonForRefund": reason, "orderLevelRefundAmount": usd("1")})),
        )
        .unwrap_err();
    assert_eq!((error.status(), error.error_id()), (Some(403), Some(1100)));
    assert!(op.responses.contains_key(&403));
}
