//! marketplace-orders' shipping fulfillment calls and the fake's answers to them, held to eBay's
//! OpenAPI description of the Fulfillment API (`tests/contract/sell_fulfillment_v1_oas3.json`):
//! each createShippingFulfillment, getShippingFulfillments and getShippingFulfillment request
//! the crate sends goes to a documented path with the documented required headers and a body of
//! ShippingFulfillmentDetails; each answer of the fake is of the documented schema
//! (ShippingFulfillmentPagedCollection, ShippingFulfillment), a 201 names the fulfillment in
//! `Location` as documented, and every refusal is a documented status with a documented error
//! id, domain and category.

use crate::inventory_support as fake_inventory;
use crate::openapi;

use std::collections::BTreeSet;
use std::path::Path;

use fake_marketplace::FakeMarketplace;
use fake_marketplace::fulfillments::fulfillments_path;
use marketplace_client::api::{ApiClient, ApiError, ApiRequest};
use marketplace_orders::blocking::Orders;
use marketplace_orders::{ErrorKind, Shipment};
use openapi::{Document, Operation};
use serde_json::{Value, json};

const CALLED: [&str; 3] = [
    "createShippingFulfillment",
    "getShippingFulfillments",
    "getShippingFulfillment",
];

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

fn seller_api(fake: &FakeMarketplace) -> ApiClient {
    fake_inventory::api_with(
        fake,
        fake_inventory::seller_tokens(fake, &["/sell.fulfillment"]),
    )
}

/// `op`'s documented error id of `e`, checked: a documented status, one of its listed ids,
/// with the listed domain and category.
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

fn order_of(fake: &FakeMarketplace, quantity: u32) -> (String, String) {
    let listing = fake.add_listing("fake_seller", "PLATE-1", 50, "3.00");
    let order_id = fake.buy(&listing, quantity).unwrap();
    let line = fake.order(&order_id).unwrap()["lineItems"][0]["lineItemId"]
        .as_str()
        .unwrap()
        .to_owned();
    (order_id, line)
}

/// The requests marketplace-orders sends for a shipment (whole, partial, read back, refused)
/// are the documented calls: a documented path and method, the required headers, a body of
/// ShippingFulfillmentDetails with no field the schema lacks.
#[test]
fn marketplace_orders_shipping_requests_are_as_the_fulfillment_api_describes_them() {
    let doc = document();
    let operations: Vec<Operation> = CALLED.iter().map(|id| operation(&doc, id)).collect();
    let fake = FakeMarketplace::new();
    let (whole, _) = order_of(&fake, 2);
    let (partial, line) = order_of(&fake, 3);
    let orders = Orders::new(seller_api(&fake));
    fake.clear_requests();

    let shipped = orders
        .ship(&Shipment::new(&whole, "USPS", "9400111899223").shipped_at(fake.now()))
        .unwrap();
    orders
        .get_shipping_fulfillment(&whole, &shipped.fulfillment_id)
        .unwrap();
    orders
        .ship(&Shipment::new(&partial, "UPS", "1Z999AA10123456784").line_item(&line, 2))
        .unwrap();
    let refused = orders
        .ship(&Shipment::new(&partial, "UPS", "1Z999AA10123456785").line_item(&line, 2))
        .unwrap_err();
    assert_eq!(
        refused.errors()[0].kind,
        ErrorKind::InvalidInputData,
        "{refused}"
    );

    let sent: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.contains("/shipping_fulfillment"))
        .collect();
    let mut seen = BTreeSet::new();
    for request in &sent {
        let op = operations
            .iter()
            .find(|op| request.method.eq_ignore_ascii_case(&op.method) && op.matches(&request.path))
            .unwrap_or_else(|| {
                panic!(
                    "{} {}: no documented operation",
                    request.method, request.path
                )
            });
        seen.insert(op.id.clone());
        assert_eq!(
            request.query.as_deref().unwrap_or_default(),
            "",
            "{}",
            op.id
        );
        for header in op.parameters_in("header").filter(|p| p.required) {
            assert!(
                request.header(&header.name).is_some(),
                "{}: header {} missing",
                op.id,
                header.name
            );
        }
        if op.id == "createShippingFulfillment" {
            assert!(
                request
                    .header("Content-Type")
                    .is_some_and(|v| v.starts_with("application/json")),
                "{:?}",
                request.header("Content-Type")
            );
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            let problems = doc.conformance(&body, "ShippingFulfillmentDetails");
            assert!(problems.is_empty(), "{problems:?}: {body}");
            for field in ["lineItems", "shippingCarrierCode", "trackingNumber"] {
                assert!(body.get(field).is_some(), "{field} not sent: {body}");
            }
        } else {
            assert!(request.body.is_empty(), "{}: a body", op.id);
        }
    }
    assert_eq!(seen.len(), 3, "every call sent: {seen:?}");
}

/// The fake's answers to the three calls are of the documented schemas and statuses, a 201
/// names the new fulfillment in `Location` as documented, and every refusal (unknown order,
/// a line item not in the order, one named twice, a quantity above what is left, a bad
/// carrier or tracking number, a bad shipped date, an unknown fulfillment) is a documented
/// error id with its domain and category.
#[test]
fn the_fakes_shipping_fulfillment_answers_are_as_the_fulfillment_api_describes_them() {
    let doc = document();
    let create = operation(&doc, "createShippingFulfillment");
    let list = operation(&doc, "getShippingFulfillments");
    let one = operation(&doc, "getShippingFulfillment");
    let fake = FakeMarketplace::new();
    let api = seller_api(&fake);
    let (order_id, line) = order_of(&fake, 2);
    let path = fulfillments_path(&order_id);
    let post = |path: &str, body: Value| {
        api.send(
            ApiRequest::post(path)
                .json(&body)
                .operation("createShippingFulfillment"),
        )
    };
    let details = |quantity: u32, tracking: &str| {
        json!({"lineItems": [{"lineItemId": line, "quantity": quantity}],
            "shippedDate": "2026-01-02T03:04:05.678Z", "shippingCarrierCode": "USPS",
            "trackingNumber": tracking})
    };

    let created = post(&path, details(1, "9400111899223")).unwrap();
    assert_eq!(created.status(), 201);
    assert!(create.responses.contains_key(&201));
    let location = created.header("Location").unwrap();
    assert_eq!(
        location,
        format!("{}{path}/9400111899223", fake.base_url()),
        "ENV/sell/fulfillment/v1/order/ORDERID/shipping_fulfillment/FULFILLMENTID"
    );

    let listed: Value = api.send(ApiRequest::get(&path)).unwrap().json().unwrap();
    let problems = doc.conformance(&listed, "ShippingFulfillmentPagedCollection");
    assert!(problems.is_empty(), "{problems:?}: {listed}");
    assert_eq!(listed["total"], 1);
    let fetched: Value = api
        .send(ApiRequest::get(format!("{path}/9400111899223")))
        .unwrap()
        .json()
        .unwrap();
    let problems = doc.conformance(&fetched, "ShippingFulfillment");
    assert!(problems.is_empty(), "{problems:?}: {fetched}");
    assert_eq!(fetched["shipmentTrackingNumber"], "9400111899223");

    let refused = |op: &Operation, e: Result<_, ApiError>| documented_error(op, &e.unwrap_err());
    let unknown = fulfillments_path("99-99999-99999");
    assert_eq!(refused(&create, post(&unknown, details(1, "94001"))), 32100);
    assert_eq!(refused(&list, api.send(ApiRequest::get(&unknown))), 32100);
    assert_eq!(
        refused(&one, api.send(ApiRequest::get(format!("{unknown}/1")))),
        32100
    );
    assert_eq!(
        refused(&one, api.send(ApiRequest::get(format!("{path}/12345")))),
        32110
    );
    let not_in_order = json!({"lineItems": [{"lineItemId": "1", "quantity": 1}],
        "shippingCarrierCode": "USPS", "trackingNumber": "94001"});
    assert_eq!(refused(&create, post(&path, not_in_order)), 32200);
    let twice = json!({"lineItems": [{"lineItemId": line, "quantity": 1},
        {"lineItemId": line, "quantity": 1}], "shippingCarrierCode": "USPS",
        "trackingNumber": "94001"});
    assert_eq!(refused(&create, post(&path, twice)), 32210);
    assert_eq!(refused(&create, post(&path, details(2, "94001"))), 32600);
    assert_eq!(refused(&create, post(&path, details(1, "9400-1"))), 32300);
    let mut bad_carrier = details(1, "94001");
    bad_carrier["shippingCarrierCode"] = json!("NoSuchCarrier");
    assert_eq!(refused(&create, post(&path, bad_carrier)), 32300);
    let mut bad_date = details(1, "94001");
    bad_date["shippedDate"] = json!("yesterday");
    assert_eq!(refused(&create, post(&path, bad_date)), 32500);
    assert_eq!(fake.shipping_fulfillments(&order_id).len(), 1);

    // The scope: a token without sell.fulfillment is refused as eBay does (403, 1100).
    let readonly = fake_inventory::api_with(
        &fake,
        fake_inventory::seller_tokens(&fake, &["/sell.fulfillment.readonly"]),
    );
    let e = readonly
        .send(ApiRequest::post(&path).json(&details(1, "94002")))
        .unwrap_err();
    assert_eq!(e.status(), Some(403), "{e}");
    assert_eq!(e.service_errors()[0].error_id, 1100, "{e}");
    assert!(
        readonly.send(ApiRequest::get(&path)).is_ok(),
        "the reads take the read-only scope"
    );
}
