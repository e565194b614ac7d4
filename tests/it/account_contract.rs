//! The fake's Account API (getFulfillmentPolicies, getPaymentPolicies, getReturnPolicies,
//! which `listing publish` asks once a run per marketplace) held to eBay's OpenAPI description
//! (`tests/contract/sell_account_v1_oas3.json`, see `tests/contract/README.md`): each route is
//! a documented operation, each answer has a documented status, a 200's body is of the
//! documented schema, and an error's id is documented with its domain and category.

use crate::openapi;

use crate::inventory_support as fake_inventory;

use std::path::Path;

use fake_marketplace::FakeMarketplace;
use fake_marketplace::account::PolicyKind;
use marketplace_client::api::ApiRequest;
use marketplaces::Marketplace;
use openapi::Document;
use serde_json::Value;

/// The operations the fake serves, with the schema of their 200 answer.
const SERVED: [(&str, &str, &str); 3] = [
    (
        "getFulfillmentPolicies",
        "fulfillment_policy",
        "FulfillmentPolicyResponse",
    ),
    (
        "getPaymentPolicies",
        "payment_policy",
        "PaymentPolicyResponse",
    ),
    ("getReturnPolicies", "return_policy", "ReturnPolicyResponse"),
];

fn document() -> Document {
    Document::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/contract/sell_account_v1_oas3.json"),
    )
}

#[test]
fn the_fakes_policy_calls_are_documented_and_answer_as_documented() {
    let doc = document();
    assert_eq!(doc.base_path(), "/sell/account/v1");
    let ops = doc.operations();
    let fake = FakeMarketplace::new();
    for (method, pattern) in fake
        .route_patterns()
        .iter()
        .filter(|(_, p)| p.starts_with("/sell/account/"))
    {
        let op = ops
            .iter()
            .find(|o| o.method == *method && o.path == *pattern)
            .unwrap_or_else(|| panic!("{method} {pattern} is not documented"));
        assert!(SERVED.iter().any(|(id, _, _)| *id == op.id), "{}", op.id);
    }
    fake.add_policy(PolicyKind::Return, Marketplace::De, "777", "14 Tage");
    let api = fake_inventory::api_with(
        &fake,
        fake_inventory::seller_tokens(&fake, &["/sell.account.readonly"]),
    );
    for (id, path, schema) in SERVED {
        let op = ops.iter().find(|o| o.id == id).unwrap();
        let url = format!("/sell/account/v1/{path}");
        let good = api
            .send(ApiRequest::get(&url).query("marketplace_id", "EBAY_DE"))
            .unwrap();
        assert!(op.responses.contains_key(&good.status()), "{id}");
        let body: Value = good.json().unwrap();
        assert_eq!(doc.conformance(&body, schema), Vec::<String>::new(), "{id}");
        let listed = body
            .as_object()
            .unwrap()
            .values()
            .find_map(Value::as_array)
            .unwrap();
        assert!(!listed.is_empty(), "{id}: {body}");
        for bad in [
            ApiRequest::get(&url),
            ApiRequest::get(&url).query("marketplace_id", "EBAY_UK"),
        ] {
            let e = api.send(bad).unwrap_err();
            let status = e.status().unwrap();
            let documented = &op.responses[&status];
            let text = e.to_string();
            assert!(
                documented
                    .errors
                    .iter()
                    .any(|d| text.contains(&format!("errorId {}", d.id))
                        && d.domain == "API_ACCOUNT"
                        && d.category == "REQUEST"),
                "{id} {status}: {text}"
            );
        }
    }
    // The return policy added is listed on its marketplace only.
    let de: Value = api
        .send(ApiRequest::get("/sell/account/v1/return_policy").query("marketplace_id", "EBAY_DE"))
        .unwrap()
        .json()
        .unwrap();
    assert!(de.to_string().contains("\"777\""), "{de}");
    let gb: Value = api
        .send(ApiRequest::get("/sell/account/v1/return_policy").query("marketplace_id", "EBAY_GB"))
        .unwrap()
        .json()
        .unwrap();
    assert!(!gb.to_string().contains("\"777\""), "{gb}");
}

/// An Inventory-only token is refused by the Account API, as eBay refuses it (403, 1100).
#[test]
fn the_policy_calls_need_an_account_scope() {
    let fake = FakeMarketplace::new();
    let api = fake_inventory::api(&fake);
    let e = api
        .send(ApiRequest::get("/sell/account/v1/payment_policy").query("marketplace_id", "EBAY_US"))
        .unwrap_err();
    assert_eq!(e.status(), Some(403), "{e}");
    assert!(e.to_string().contains("errorId 1100"), "{e}");
}
