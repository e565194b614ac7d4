//! The generic request (`marketplace_client::api`) against the fake marketplace over loopback:
//! the exact request (method, encoded path, query, JSON body, bearer, marketplace and language
//! headers), the renewal on 401, retries, the service's typed errors, typed JSON answers, and
//! no token in any error.

use crate::taxonomy_support as support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use fake_marketplace::{FakeMarketplace, Fault, Response};
use marketplace_client::Marketplace;
use marketplace_client::api::{ApiClient, ApiError, ApiRequest, ClientConfig};
use marketplace_client::test_util::RecordingSleeper;
use serde_json::json;
use support::{fake, tokens};

const ITEM: &str = "/sell/inventory/v1/inventory_item/{sku}";

fn client(fake: &FakeMarketplace) -> (ApiClient, Arc<RecordingSleeper>) {
    let config = ClientConfig::for_base_url(&fake.base_url())
        .expect("loopback base URL")
        .with_backoff(Duration::from_millis(1), Duration::from_millis(8));
    let sleeper = Arc::new(RecordingSleeper::default());
    let client = ApiClient::new(config, tokens(fake))
        .expect("client")
        .with_sleeper(sleeper.clone());
    (client, sleeper)
}

/// A PUT route for inventory items that checks the bearer token and answers 204.
fn item_route(fake: &FakeMarketplace) {
    fake.route("PUT", ITEM, |req, state| match state.check_bearer(req) {
        Ok(_) => Response::new(204, Vec::new()),
        Err(refused) => refused,
    });
}

/// The bearer token of a recorded request.
fn bearer(r: &fake_marketplace::Request) -> String {
    r.header("Authorization")
        .and_then(|v| v.strip_prefix("Bearer "))
        .expect("a bearer token")
        .to_owned()
}

#[test]
fn a_put_with_a_json_body_arrives_exactly() {
    let fake = fake();
    let seen = Arc::new(std::sync::Mutex::new(None));
    let seen_in_route = seen.clone();
    fake.route("PUT", ITEM, move |req, state| {
        *seen_in_route.lock().unwrap() = req.param("sku").map(str::to_owned);
        match state.check_bearer(req) {
            Ok(_) => Response::new(204, Vec::new()),
            Err(refused) => refused,
        }
    });
    let (client, sleeper) = client(&fake);
    let item = json!({"condition": "NEW", "product": {"title": "Schuh"}});
    let sku = "SHOE 42/blue?x%";
    let response = client
        .send(
            ApiRequest::put_segments(["sell", "inventory", "v1", "inventory_item", sku])
                .query("mode", "a b")
                .query("mode", "c&d")
                .marketplace(Marketplace::De)
                .content_language("de-DE")
                .header("X-EBAY-C-ENDUSERCTX", "affiliateCampaignId=1")
                .operation("createOrReplaceInventoryItem")
                .json(&item),
        )
        .expect("sent");
    assert_eq!(response.status(), 204);
    assert!(response.is_empty());

    let path = "/sell/inventory/v1/inventory_item/SHOE%2042%2Fblue%3Fx%25";
    let requests = fake.requests_to(path);
    assert_eq!(requests.len(), 1, "{:?}", fake.requests());
    let r = &requests[0];
    assert_eq!(r.method, "PUT");
    assert_eq!(seen.lock().unwrap().as_deref(), Some(sku));
    assert_eq!(
        r.query_pairs().unwrap(),
        vec![
            ("mode".to_owned(), "a b".to_owned()),
            ("mode".to_owned(), "c&d".to_owned())
        ]
    );
    assert_eq!(r.headers_named("Content-Type"), vec!["application/json"]);
    assert_eq!(r.headers_named("X-EBAY-C-MARKETPLACE-ID"), vec!["EBAY_DE"]);
    assert_eq!(r.headers_named("Accept-Language"), vec!["de-DE"]);
    assert_eq!(r.headers_named("Content-Language"), vec!["de-DE"]);
    assert_eq!(
        r.headers_named("X-EBAY-C-ENDUSERCTX"),
        vec!["affiliateCampaignId=1"]
    );
    assert!(
        fake.issued_token(&bearer(r)).is_some(),
        "a token the fake issued"
    );
    let body: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
    assert_eq!(body, item);
    assert!(sleeper.delays().is_empty());
}

#[test]
fn a_language_wins_over_the_marketplace_language_and_answers_are_typed() {
    let fake = fake();
    fake.route("GET", ITEM, |req, state| match state.check_bearer(req) {
        Ok(_) => Response::json(200, &json!({"sku": req.param("sku"), "quantity": 3}))
            .with_header("X-Request-Id", "r-1"),
        Err(refused) => refused,
    });
    let (client, _) = client(&fake);
    let response = client
        .send(
            ApiRequest::get("/sell/inventory/v1/inventory_item/A-1")
                .marketplace(Marketplace::De)
                .language("en-GB"),
        )
        .expect("sent");
    #[derive(serde::Deserialize)]
    struct Item {
        sku: String,
        quantity: u32,
    }
    let item: Item = response.json().expect("typed");
    assert_eq!((item.sku.as_str(), item.quantity), ("A-1", 3));
    assert_eq!(response.header("x-request-id"), Some("r-1"));
    assert!(response.text().unwrap().contains("\"A-1\""));
    let r = &fake.requests_to("/sell/inventory/v1/inventory_item/A-1")[0];
    assert_eq!(r.headers_named("Accept-Language"), vec!["en-GB"]);
    assert_eq!(r.headers_named("X-EBAY-C-MARKETPLACE-ID"), vec!["EBAY_DE"]);
    assert!(
        r.headers_named("Content-Type").is_empty(),
        "no body, no type"
    );
}

#[test]
fn a_401_renews_the_token_once_then_succeeds() {
    let fake = fake();
    item_route(&fake);
    let path = "/sell/inventory/v1/inventory_item/A-1";
    fake.fail_next(
        path,
        Fault::Status {
            status: 401,
            body: json!({"errors": [{"errorId": 1001, "message": "Invalid access token"}]})
                .to_string(),
            headers: vec![],
        },
    );
    let (client, sleeper) = client(&fake);
    let response = client
        .send(
            ApiRequest::put_segments(["sell", "inventory", "v1", "inventory_item", "A-1"])
                .json(&json!({})),
        )
        .expect("renewed");
    assert_eq!(response.status(), 204);
    let requests = fake.requests_to(path);
    assert_eq!(requests.len(), 2);
    assert_eq!(fake.token_requests().len(), 2, "one renewal");
    assert_ne!(bearer(&requests[0]), bearer(&requests[1]), "a new token");
    assert!(sleeper.delays().is_empty(), "a renewal does not wait");
}

#[test]
fn a_503_is_retried_after_a_back_off() {
    let fake = fake();
    item_route(&fake);
    let path = "/sell/inventory/v1/inventory_item/A-1";
    fake.fail_next(
        path,
        Fault::Status {
            status: 503,
            body: "busy".into(),
            headers: vec![],
        },
    );
    let (client, sleeper) = client(&fake);
    let response = client
        .send(ApiRequest::put(path).json(&json!({"condition": "NEW"})))
        .expect("retried");
    assert_eq!(response.status(), 204);
    assert_eq!(fake.requests_to(path).len(), 2);
    assert_eq!(sleeper.delays().len(), 1);
    assert!(sleeper.delays()[0] <= Duration::from_millis(1));
    assert_eq!(fake.token_requests().len(), 1, "no renewal for a 503");
}

#[test]
fn a_400_with_the_service_error_body_is_typed() {
    let fake = fake();
    fake.route("POST", "/sell/inventory/v1/offer", |req, state| {
        if let Err(refused) = state.check_bearer(req) {
            return refused;
        }
        Response::json(
            400,
            &json!({"errors": [{
                "errorId": 25002,
                "domain": "API_INVENTORY",
                "category": "REQUEST",
                "message": "A user error has occurred. Invalid price",
                "parameters": [{"name": "text1", "value": "price"}]
            }]}),
        )
    });
    let (client, sleeper) = client(&fake);
    let error = client
        .send(ApiRequest::post("/sell/inventory/v1/offer").json(&json!({"sku": "A"})))
        .unwrap_err();
    match &error {
        ApiError::Service { status, errors, .. } => {
            assert_eq!(*status, 400);
            assert_eq!(errors[0].domain.as_deref(), Some("API_INVENTORY"));
        }
        other => panic!("not a service error: {other:?}"),
    }
    assert_eq!(error.error_id(), Some(25002));
    let message = error.to_string();
    assert!(message.contains("Invalid price"), "{message}");
    assert!(!message.contains("taxonomy"), "neutral advice: {message}");
    assert!(sleeper.delays().is_empty(), "a 400 is not retried");
    assert_eq!(fake.requests_to("/sell/inventory/v1/offer").len(), 1);
}

#[test]
fn a_wrong_shape_names_the_field() {
    let fake = fake();
    fake.route("GET", ITEM, |_, _| {
        Response::json(
            200,
            &json!({"sku": "A", "availability": {"quantity": "five"}}),
        )
    });
    let (client, _) = client(&fake);
    let response = client
        .send(ApiRequest::get_segments([
            "sell",
            "inventory",
            "v1",
            "inventory_item",
            "A",
        ]))
        .expect("sent");
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Availability {
        quantity: u32,
    }
    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Item {
        sku: String,
        availability: Availability,
    }
    let error = response.json::<Item>().unwrap_err();
    match &error {
        ApiError::UnexpectedBody { status, reason, .. } => {
            assert_eq!(*status, 200);
            assert!(reason.contains("\"quantity\""), "{reason}");
            assert!(reason.contains("expected u32"), "{reason}");
        }
        other => panic!("not an unexpected body: {other:?}"),
    }
}

#[test]
fn an_authorization_header_of_the_callers_is_refused_before_anything_is_sent() {
    let fake = fake();
    item_route(&fake);
    let (client, _) = client(&fake);
    for name in [
        "Authorization",
        "authorization",
        " AUTHORIZATION ",
        "Proxy-Authorization",
    ] {
        let error = client
            .send(
                ApiRequest::put("/sell/inventory/v1/inventory_item/A").header(name, "Bearer mine"),
            )
            .unwrap_err();
        assert!(matches!(error, ApiError::Invalid(_)), "{name}: {error:?}");
        assert!(!error.to_string().contains("mine"), "{error}");
    }
    assert!(
        fake.requests_to("/sell/inventory/v1/inventory_item/A")
            .is_empty()
    );
    assert!(fake.token_requests().is_empty(), "no token asked for");
}

#[test]
fn paths_that_would_change_are_refused() {
    let fake = fake();
    let (client, _) = client(&fake);
    let bad = [
        ApiRequest::get_segments(["sell", "inventory", "v1", "inventory_item", ".."]),
        ApiRequest::get_segments(["sell", "inventory", "v1", "inventory_item", ""]),
        ApiRequest::get("/sell/inventory/v1/../../oauth"),
        ApiRequest::get("/sell/inventory/v1/inventory_item?limit=1"),
        ApiRequest::get("sell/inventory/v1/inventory_item"),
    ];
    for request in bad {
        let error = client.send(request.clone()).unwrap_err();
        assert!(
            matches!(error, ApiError::Invalid(_)),
            "{request:?}: {error:?}"
        );
    }
    assert!(
        fake.requests().is_empty(),
        "nothing sent, no token asked for"
    );
}

#[test]
fn a_body_that_cannot_be_serialized_is_a_typed_error() {
    let fake = fake();
    let (client, _) = client(&fake);
    let mut map = std::collections::HashMap::new();
    map.insert((1, 2), "a tuple key");
    let error = client
        .send(ApiRequest::post("/sell/inventory/v1/offer").json(&map))
        .unwrap_err();
    assert!(matches!(error, ApiError::Serialize { .. }), "{error:?}");
    assert!(fake.requests_to("/sell/inventory/v1/offer").is_empty());
}

#[test]
fn the_token_never_appears_in_an_error() {
    let fake = fake();
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = calls.clone();
    // Every answer quotes the token it got: a service error body, a plain body, a 200 of the
    // wrong shape.
    fake.route("GET", "/sell/account/v1/{what}", move |req, _| {
        counter.fetch_add(1, Ordering::Relaxed);
        let token = bearer(req);
        match req.param("what") {
            Some("service") => Response::json(
                400,
                &json!({"errors": [{"errorId": 1, "message": format!("bad {token}"),
                    "longMessage": format!("token {token} refused")}]}),
            ),
            Some("plain") => Response::text(418, format!("teapot {token}")),
            _ => Response::json(200, &json!({"id": token})),
        }
    });
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_max_retries(0);
    let client = ApiClient::new(config, tokens(&fake)).unwrap();
    let mut errors = Vec::new();
    for what in ["service", "plain"] {
        errors.push(
            client
                .send(ApiRequest::get_segments(["sell", "account", "v1", what]))
                .unwrap_err(),
        );
    }
    let response = client
        .send(ApiRequest::get("/sell/account/v1/shape"))
        .expect("a 200");
    errors.push(
        response
            .json::<std::collections::HashMap<String, u32>>()
            .unwrap_err(),
    );
    assert_eq!(calls.load(Ordering::Relaxed), 3);
    let token = bearer(&fake.requests_to("/sell/account/v1/plain")[0]);
    assert!(token.len() > 8);
    for error in &errors {
        let shown = format!("{error} {error:?}");
        assert!(!shown.contains(&token), "{shown}");
    }
    assert!(
        !format!("{response:?}").contains(&token),
        "nor in a response's Debug"
    );
}

#[test]
fn the_taxonomy_error_is_the_api_error() {
    let error: marketplace_client::taxonomy::ApiError = ApiError::Invalid("x".into());
    assert!(matches!(
        error,
        marketplace_client::taxonomy::ApiError::Invalid(_)
    ));
}

/// An error body parsed outside a call (stored, or received through another client) is
/// sanitized as a call's would be: a token-like value and control characters the service
/// echoed do not reach the error's text, while the model's decoding keeps the text as sent.
#[test]
fn an_error_body_parsed_outside_a_call_is_sanitized() {
    let body = br#"{"errors":[{"errorId":1001,"domain":"OAuth","category":"REQUEST",
        "message":"Invalid access token: access_token=v^1.1#i^1#ECHOED-TOKEN \u001b[31mred",
        "parameters":[{"name":"code","value":"code=v^1.1#i^1#ECHOED-CODE"}]}]}"#;
    let raw = marketplace_client::model::decode::service_errors(body).expect("an error body");
    assert!(
        raw[0].message.contains("ECHOED-TOKEN"),
        "{:?}",
        raw[0].message
    );

    let err =
        ApiError::from_error_body(401, "https://api.ebay.com/x", body).expect("an error body");
    assert_eq!(err.error_id(), Some(1001));
    let shown = format!("{err} {err:?}");
    for leak in ["ECHOED-TOKEN", "ECHOED-CODE", "\u{1b}"] {
        assert!(!shown.contains(leak), "{leak:?} in {shown}");
    }

    let rate_limited = ApiError::from_error_body(429, "https://api.ebay.com/x", body).unwrap();
    assert!(rate_limited.is_retryable());
    assert!(ApiError::from_error_body(400, "u", b"<html>").is_none());
}

/// Every form a URL parser would turn into another path (it drops tab, CR and LF, reads `\`
/// as `/`, resolves `..`, and a decoding proxy reads `%2e%2e` and `%2f`), or another host,
/// is refused before anything is sent: over loopback, behind a base URL with a path of its
/// own, no request reaches any path but the base path with the bearer token.
#[test]
fn no_path_form_leaves_the_base_path() {
    let fake = fake();
    let config = ClientConfig::for_base_url(&format!("{}/gateway/ebay/", fake.base_url()))
        .expect("loopback base URL with a path")
        .with_backoff(Duration::from_millis(1), Duration::from_millis(8));
    let client = ApiClient::new(config, tokens(&fake))
        .expect("client")
        .with_sleeper(Arc::new(RecordingSleeper::default()));
    let mut bad: Vec<ApiRequest> = [
        "/sell/.\t./.\t./.\t./other-service/secrets",
        "/sell/.\r./.\r./.\r./other-service/secrets",
        "/sell/.\n./.\n./.\n./other-service/secrets",
        "/sell/\t/x",
        "/sell/..\\..\\..\\other-service/secrets",
        "/sell\\other",
        "/sell/a\u{7f}b",
        "/sell/a\u{85}b",
        "/sell/%2e%2e/%2e%2e/other-service/secrets",
        "/sell/.%2E/other",
        "/sell/..%2f..%2f..%2fother-service/secrets",
        "/sell/x%2F..%2F..%2Fother",
        "/sell/%5c..%5cother",
        "/sell/a%09b",
        "/sell/%0d%0aHost: evil",
        "//evil.example/other-service/secrets",
        "/\\evil.example/other",
        "http://evil.example/other-service/secrets",
        "https:/other-service/secrets",
        "/sell/http://evil.example/x/../../..",
    ]
    .into_iter()
    .map(ApiRequest::get)
    .collect();
    bad.push(ApiRequest::get_segments(["sell", ".\t.", "other"]));
    bad.push(ApiRequest::get_segments(["sell", "../../other"]));
    bad.push(ApiRequest::get_segments(["sell", "..\\..\\other"]));
    bad.push(ApiRequest::get_segments(["sell", "a\nb"]));
    bad.push(ApiRequest::get("/sell/a").query("na\tme", "v"));
    bad.push(ApiRequest::get("/sell/a").query("na\\me", "v"));
    bad.push(ApiRequest::get("/sell/a").query("name\r\n", "v"));
    for request in bad {
        let error = client.send(request.clone()).unwrap_err();
        assert!(
            matches!(error, ApiError::Invalid(_)),
            "{request:?} was not refused: {error:?}"
        );
    }
    let sent: Vec<String> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path != fake_marketplace::TOKEN_PATH)
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(sent.is_empty(), "requests reached the host: {sent:?}");

    // What stays inside a segment still goes out, below the base path, exactly.
    fake.route(
        "GET",
        "/gateway/ebay/sell/{rest}",
        |req, state| match state.check_bearer(req) {
            Ok(_) => Response::new(204, Vec::new()),
            Err(refused) => refused,
        },
    );
    for (request, path) in [
        (
            ApiRequest::get_segments(["sell", "a/b c..d"]),
            "/gateway/ebay/sell/a%2Fb%20c..d",
        ),
        (ApiRequest::get("/sell/a%2Fb"), "/gateway/ebay/sell/a%2Fb"),
        (
            ApiRequest::get("/sell/...").query("q", "a\tb"),
            "/gateway/ebay/sell/...",
        ),
    ] {
        client.send(request.clone()).expect("sent");
        assert_eq!(fake.requests_to(path).len(), 1, "{request:?}");
    }
    let elsewhere: Vec<String> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path != fake_marketplace::TOKEN_PATH && !r.path.starts_with("/gateway/ebay/"))
        .map(|r| r.path)
        .collect();
    assert!(elsewhere.is_empty(), "{elsewhere:?}");
}
