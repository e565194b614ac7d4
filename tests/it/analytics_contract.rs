//! marketplace-client's Analytics calls (getRateLimits, getUserRateLimits: the call budget's
//! `rate_limits` and `user_rate_limits`, which `refresh_budget` sends) and the fake's answers to them,
//! held to eBay's OpenAPI description of the Analytics API
//! (`tests/contract/developer_analytics_v1_beta_oas3.json`): each request goes to a documented
//! path with documented query parameters only and no body; each answer is a documented status
//! (200 of RateLimitsResponse, 204 without a body), and what the client decodes keeps every
//! field the description gives a rate.

use crate::inventory_support as fake_inventory;
use crate::openapi;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use fake_marketplace::FakeMarketplace;
use marketplace_client::api::{ApiClient, ApiRequest};
use openapi::{Document, Operation};
use serde_json::Value;

const CALLED: [&str; 2] = ["getRateLimits", "getUserRateLimits"];

fn document() -> Document {
    Document::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/contract/developer_analytics_v1_beta_oas3.json"),
    )
}

fn operations(doc: &Document) -> Vec<Operation> {
    CALLED
        .iter()
        .map(|id| {
            doc.operations()
                .into_iter()
                .find(|o| o.id == *id)
                .unwrap_or_else(|| panic!("{id} is documented"))
        })
        .collect()
}

fn seller_api(fake: &FakeMarketplace) -> ApiClient {
    fake_inventory::api_with(
        fake,
        fake_inventory::seller_tokens(fake, &["/sell.inventory"]),
    )
}

/// The requests of `rate_limits` and `user_rate_limits` (filtered and not) are the
/// documented calls: a documented path and method, only the
/// documented query parameters (`api_context`, `api_name`), the required headers, no body.
#[test]
fn the_clients_analytics_requests_are_as_the_analytics_api_describes_them() {
    let doc = document();
    let operations = operations(&doc);
    let fake = FakeMarketplace::new();
    fake.set_rate_limit("sell.inventory", 5000, Duration::from_secs(86_400));
    fake.set_user_rate_limit("sell.fulfillment", 100, Duration::from_secs(86_400));
    let api = seller_api(&fake);
    fake.clear_requests();
    api.rate_limits(Some("sell"), Some("inventory")).unwrap();
    api.rate_limits(None, None).unwrap();
    api.user_rate_limits(None, None).unwrap();
    api.user_rate_limits(Some("sell"), None).unwrap();

    let sent: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/developer/analytics/"))
        .collect();
    assert_eq!(sent.len(), 4, "{} requests", sent.len());
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
        let documented: BTreeSet<&str> =
            op.parameters_in("query").map(|p| p.name.as_str()).collect();
        for pair in request
            .query
            .as_deref()
            .unwrap_or_default()
            .split('&')
            .filter(|p| !p.is_empty())
        {
            let name = pair.split('=').next().unwrap_or_default();
            assert!(
                documented.contains(name),
                "{}: query parameter {name} is not documented ({documented:?})",
                op.id
            );
        }
        for header in op.parameters_in("header").filter(|p| p.required) {
            assert!(
                request.header(&header.name).is_some(),
                "{}: header {} missing",
                op.id,
                header.name
            );
        }
        assert!(request.body.is_empty(), "{}: a body", op.id);
    }
    assert_eq!(seen.len(), 2, "both calls sent: {seen:?}");
    assert!(
        sent.iter()
            .any(|r| r.query_param("api_context").as_deref() == Some("sell")
                && r.query_param("api_name").as_deref() == Some("inventory")),
        "the filters are sent as the documented query parameters"
    );
}

/// The fake's answers are documented statuses: a 200 whose body is a RateLimitsResponse with
/// no field the schema lacks and every field of a Rate present, a 204 without a body when no
/// resource matches; the client's decoded answer keeps each of a rate's fields.
#[test]
fn the_fakes_rate_limit_answers_are_as_the_analytics_api_describes_them() {
    let doc = document();
    let operations = operations(&doc);
    let fake = FakeMarketplace::new();
    fake.set_rate_limit("sell.inventory", 5000, Duration::from_secs(86_400));
    fake.set_user_rate_limit("sell.fulfillment", 100, Duration::from_secs(300));
    let api = seller_api(&fake);
    for (op, path) in operations.iter().zip([
        "/developer/analytics/v1_beta/rate_limit/",
        "/developer/analytics/v1_beta/user_rate_limit/",
    ]) {
        let answer = api
            .send(ApiRequest::get(path).operation(op.id.as_str()))
            .unwrap();
        let status = answer.status();
        let documented = op
            .responses
            .get(&status)
            .unwrap_or_else(|| panic!("{}: status {status} is not documented", op.id));
        let schema = documented.schema.as_deref().expect("a 200 has a body");
        let body: Value = answer.json().unwrap();
        let problems = doc.conformance(&body, schema);
        assert!(problems.is_empty(), "{}: {problems:?}: {body}", op.id);
        let rate = &body["rateLimits"][0]["resources"][0]["rates"][0];
        for field in ["limit", "remaining", "reset", "timeWindow"] {
            assert!(
                rate.get(field).is_some(),
                "{}: {field} missing: {body}",
                op.id
            );
        }
        // A filter no resource matches: 204, documented, without a body.
        let none = api
            .send(
                ApiRequest::get(path)
                    .query("api_context", "buy")
                    .operation(op.id.as_str()),
            )
            .unwrap();
        assert_eq!(none.status(), 204, "{}", op.id);
        assert!(op.responses.contains_key(&204), "{}: 204 documented", op.id);
        assert!(none.bytes().is_empty(), "{}: a 204 with a body", op.id);
    }
    let decoded = api.user_rate_limits(None, None).unwrap();
    let rate = &decoded.rate_limits[0].resources[0].rates[0];
    assert_eq!(
        (
            rate.limit,
            rate.remaining.is_some(),
            rate.reset.is_some(),
            rate.time_window
        ),
        (Some(100), true, true, Some(300))
    );
    assert_eq!(decoded.rate_limits[0].api_context.as_deref(), Some("sell"));
    assert_eq!(
        decoded.rate_limits[0].api_name.as_deref(),
        Some("fulfillment")
    );
}
