//! The call budget (marketplace-budget's `CallBudget` in front of `ApiClient`) against the
//! fake marketplace over loopback: getRateLimits and getUserRateLimits held to the Analytics
//! API's description, a quota of N calls never answered 429 (refused locally, or waited for),
//! eBay's 429 feeding back, and the budget read again from getRateLimits.

use crate::openapi;

use std::sync::Arc;
use std::time::{Duration, Instant};

use fake_marketplace::FakeMarketplace;
use marketplace_budget::{CallBudget, InMemoryStore, Mode, Scope};
use marketplace_client::api::{ApiClient, ApiError, ApiRequest, ClientConfig};
use marketplace_client::oauth::{
    AccessTokenSource, ApplicationTokenProvider, Endpoints, MemoryStore, OAuthClient, OAuthConfig,
    ScopeSet, UserTokenProvider,
};

const DAY: Duration = Duration::from_secs(86_400);
const TAXONOMY: &str = "commerce.taxonomy";
/// getDefaultCategoryTreeId: a call of the Taxonomy API (resource `commerce.taxonomy`).
const DEFAULT_TREE: &str = "/commerce/taxonomy/v1/get_default_category_tree_id";

fn config(fake: &FakeMarketplace) -> ClientConfig {
    ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_max_retries(0)
}

/// A client of `fake` with an application token, without retries.
fn app_api(fake: &FakeMarketplace) -> ApiClient {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth =
        OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret());
    let tokens = Arc::new(ApplicationTokenProvider::new(
        OAuthClient::from_config(&oauth).unwrap(),
    ));
    ApiClient::new(config(fake), tokens).unwrap()
}

/// A client of `fake` with the seller's user token granting `sell.inventory`, no retries.
fn seller_api(fake: &FakeMarketplace) -> ApiClient {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth = OAuthConfig::new(endpoints)
        .with_credentials(fake.client_id(), fake.client_secret())
        .with_redirect_uri("Fake_Company-FakeApp-PRD-abcdefghi");
    let client = Arc::new(OAuthClient::from_config(&oauth).unwrap());
    let scopes = ScopeSet::new([fake.scope("/sell.inventory")]);
    let request = client.consent_request(&scopes).unwrap();
    let code = request
        .complete(&fake_marketplace::consent_redirect(request.url().as_str()).unwrap())
        .expect("consent granted");
    let provider = UserTokenProvider::new(client, Arc::new(MemoryStore::new()), "seller-1");
    provider.exchange_code(&code, request.scopes()).unwrap();
    let tokens: Arc<dyn AccessTokenSource> = Arc::new(provider);
    ApiClient::new(config(fake), tokens).unwrap()
}

fn budget(mode: Mode) -> Arc<CallBudget> {
    Arc::new(CallBudget::new(Arc::new(InMemoryStore::new()), mode))
}

/// One call of the Taxonomy API.
fn taxonomy_call(api: &ApiClient) -> Result<(), ApiError> {
    api.send(ApiRequest::get(DEFAULT_TREE).query("marketplace_id", "EBAY_US"))
        .map(drop)
}

/// The statuses the fake answered to `path`.
fn statuses(fake: &FakeMarketplace, path: &str) -> Vec<u16> {
    fake.answers_to(path).iter().map(|a| a.status).collect()
}

fn refused_resource(error: &ApiError) -> Option<(&str, u32, bool, &Scope)> {
    match error {
        ApiError::Budget { refused, .. } => Some((
            refused.resource.as_str(),
            refused.remaining,
            refused.after_429,
            &refused.scope,
        )),
        _ => None,
    }
}

#[test]
fn get_rate_limits_and_get_user_rate_limits_are_as_the_analytics_api_describes_them() {
    let doc = openapi::Document::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/contract/developer_analytics_v1_beta_oas3.json"),
    );
    let operations = doc.operations();
    let fake = FakeMarketplace::new();
    fake.set_rate_limit(TAXONOMY, 100, DAY);
    fake.set_rate_limit("sell.inventory", 50, DAY);
    fake.set_user_rate_limit("sell.inventory", 20, DAY);
    let (app, seller) = (app_api(&fake), seller_api(&fake));
    taxonomy_call(&app).unwrap();
    taxonomy_call(&app).unwrap();

    // Every field of RateLimitsResponse is kept: all of them present, read and written back.
    let full = doc.all_present("RateLimitsResponse");
    let typed: marketplace_budget::RateLimitsResponse =
        serde_json::from_value(full.clone()).unwrap();
    assert_eq!(serde_json::to_value(&typed).unwrap(), full);

    let app_limits = app.rate_limits(None, None).unwrap();
    let taxonomy = app.rate_limits(Some("commerce"), Some("taxonomy")).unwrap();
    let none = app.rate_limits(Some("buy"), None).unwrap();
    let user = seller.user_rate_limits(Some("sell"), None).unwrap();
    assert_eq!(app_limits.rate_limits.len(), 2, "{app_limits:?}");
    let api = &taxonomy.rate_limits[..];
    assert_eq!(api.len(), 1, "{taxonomy:?}");
    assert_eq!(
        (
            api[0].api_context.as_deref(),
            api[0].api_name.as_deref(),
            api[0].api_version.as_deref()
        ),
        (Some("commerce"), Some("taxonomy"), Some("v1"))
    );
    let rate = &api[0].resources[0].rates[0];
    assert_eq!(api[0].resources[0].name.as_deref(), Some(TAXONOMY));
    assert_eq!(
        (rate.limit, rate.remaining, rate.time_window),
        (Some(100), Some(98), Some(86_400))
    );
    assert!(none.rate_limits.is_empty(), "no buy API has a quota: 204");
    let user_rate = &user.rate_limits[0].resources[0];
    assert_eq!(user_rate.name.as_deref(), Some("sell.inventory"));
    assert_eq!(user_rate.rates[0].remaining, Some(20));

    // The requests: a documented operation's path, only its documented query parameters.
    let analytics: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/developer/analytics/"))
        .collect();
    assert_eq!(analytics.len(), 4);
    for request in &analytics {
        let operation = operations
            .iter()
            .find(|o| o.method == request.method && o.matches(&request.path))
            .unwrap_or_else(|| panic!("{} {} is not documented", request.method, request.path));
        for (name, _) in request.query_pairs().unwrap() {
            assert!(
                operation.parameters_in("query").any(|p| p.name == name),
                "{}: query parameter {name} is not documented",
                operation.id
            );
        }
        let answered = fake
            .answers()
            .into_iter()
            .filter(|a| a.path == request.path)
            .map(|a| a.status)
            .collect::<Vec<_>>();
        for status in answered {
            assert!(
                operation.responses.contains_key(&status),
                "{}: {status}",
                operation.id
            );
        }
    }
    assert_eq!(
        analytics
            .iter()
            .map(|r| r.query.clone().unwrap_or_default())
            .collect::<Vec<_>>(),
        [
            "",
            "api_context=commerce&api_name=taxonomy",
            "api_context=buy",
            "api_context=sell"
        ]
    );

    // The fake serves the two documented operations and no other Analytics path.
    let served: Vec<(String, String)> = fake
        .route_patterns()
        .into_iter()
        .filter(|(_, p)| p.starts_with("/developer/analytics/"))
        .collect();
    let mut documented: Vec<(String, String)> = operations
        .iter()
        .map(|o| (o.method.clone(), o.path.trim_end_matches('/').to_owned()))
        .collect();
    documented.sort();
    let mut served_sorted = served.clone();
    served_sorted.sort();
    assert_eq!(served_sorted, documented);

    // The answers have RateLimitsResponse's shape.
    for (api, path) in [(&app, "rate_limit"), (&seller, "user_rate_limit")] {
        let answer = api
            .send(ApiRequest::get(format!(
                "/developer/analytics/v1_beta/{path}/"
            )))
            .unwrap();
        let body: serde_json::Value = answer.json().unwrap();
        assert_eq!(
            doc.conformance(&body, "RateLimitsResponse"),
            Vec::<String>::new()
        );
    }
}

#[test]
fn past_n_calls_of_a_resource_one_process_is_refused_locally_and_never_gets_a_429() {
    let fake = FakeMarketplace::new();
    fake.set_rate_limit(TAXONOMY, 5, DAY);
    let api = app_api(&fake).with_budget(budget(Mode::FailFast), None);
    assert!(api.refresh_budget().unwrap() >= 1);
    let outcomes: Vec<Result<(), ApiError>> = (0..8).map(|_| taxonomy_call(&api)).collect();
    assert!(outcomes[..5].iter().all(Result::is_ok), "{outcomes:?}");
    for refused in &outcomes[5..] {
        let error = refused.as_ref().unwrap_err();
        assert_eq!(
            refused_resource(error),
            Some((TAXONOMY, 0, false, &Scope::Application)),
            "{error}"
        );
        assert!(error.to_string().contains(TAXONOMY), "{error}");
    }
    assert_eq!(statuses(&fake, DEFAULT_TREE), [200; 5], "never a 429");
    assert_eq!(fake.calls_served(TAXONOMY), 5);
}

#[test]
fn in_wait_mode_calls_past_the_budget_wait_for_the_windows_reset_and_never_get_a_429() {
    let fake = FakeMarketplace::new();
    fake.set_rate_limit(TAXONOMY, 3, Duration::from_secs(2));
    let api = app_api(&fake).with_budget(
        budget(Mode::Wait {
            at_most: Duration::from_secs(10),
        }),
        None,
    );
    api.refresh_budget().unwrap();
    let started = Instant::now();
    for call in 0..5 {
        taxonomy_call(&api).unwrap_or_else(|e| panic!("call {call}: {e}"));
    }
    assert_eq!(statuses(&fake, DEFAULT_TREE), [200; 5], "never a 429");
    assert!(
        started.elapsed() > Duration::from_millis(100),
        "calls 4 and 5 waited for the window's reset: {:?}",
        started.elapsed()
    );
}

#[test]
fn a_429_from_ebay_marks_the_resource_exhausted_and_the_next_call_is_refused_locally() {
    let fake = FakeMarketplace::new();
    fake.set_rate_limit(TAXONOMY, 2, DAY);
    // No refresh: the budget knows no quota until eBay's 429 tells it.
    let api = app_api(&fake).with_budget(budget(Mode::FailFast), None);
    taxonomy_call(&api).unwrap();
    taxonomy_call(&api).unwrap();
    let error = taxonomy_call(&api).unwrap_err();
    assert!(matches!(error, ApiError::RateLimited { .. }), "{error}");
    let next = taxonomy_call(&api).unwrap_err();
    assert_eq!(
        refused_resource(&next),
        Some((TAXONOMY, 0, true, &Scope::Application)),
        "{next}"
    );
    assert_eq!(
        statuses(&fake, DEFAULT_TREE),
        [200, 200, 429],
        "the 4th never sent"
    );
}

#[test]
fn the_budget_is_refreshed_from_get_rate_limits() {
    let fake = FakeMarketplace::new();
    fake.set_rate_limit(TAXONOMY, 10, DAY);
    let api = app_api(&fake).with_budget(budget(Mode::FailFast), None);
    api.refresh_budget().unwrap();
    // Another process of the application spends 7 of the 10 calls.
    let other = app_api(&fake);
    for _ in 0..7 {
        taxonomy_call(&other).unwrap();
    }
    api.refresh_budget().unwrap();
    let allowed = (0..6).take_while(|_| taxonomy_call(&api).is_ok()).count();
    assert_eq!(allowed, 3, "getRateLimits said 3 were left");
    assert_eq!(statuses(&fake, DEFAULT_TREE), [200; 10], "never a 429");
}

#[test]
fn a_users_budget_from_get_user_rate_limits_refuses_that_users_calls_past_it() {
    let fake = FakeMarketplace::new();
    fake.set_user_rate_limit("sell.inventory", 2, DAY);
    let api = seller_api(&fake).with_budget(budget(Mode::FailFast), Some("seller-1"));
    assert_eq!(api.refresh_budget().unwrap(), 1);
    let items = || api.send(ApiRequest::get("/sell/inventory/v1/inventory_item"));
    items().unwrap();
    items().unwrap();
    let error = items().unwrap_err();
    let user = Scope::User(Arc::from("seller-1"));
    assert_eq!(
        refused_resource(&error),
        Some(("sell.inventory", 0, false, &user)),
        "{error}"
    );
    assert_eq!(
        statuses(&fake, "/sell/inventory/v1/inventory_item"),
        [200, 200]
    );
}

#[test]
fn the_taxonomy_clients_calls_draw_from_its_budget() {
    use marketplace_client::taxonomy::TaxonomyClient;
    let fake = FakeMarketplace::new();
    fake.set_rate_limit(TAXONOMY, 2, DAY);
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth =
        OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret());
    let tokens = Arc::new(ApplicationTokenProvider::new(
        OAuthClient::from_config(&oauth).unwrap(),
    ));
    let budget = budget(Mode::FailFast);
    let app = app_api(&fake).with_budget(budget.clone(), None);
    app.refresh_budget().unwrap();
    let taxonomy = TaxonomyClient::new(config(&fake), tokens)
        .unwrap()
        .with_budget(budget, None);
    let outcomes: Vec<_> = (0..3)
        .map(|_| taxonomy.category_suggestions(marketplace_client::Marketplace::Us, "iphone"))
        .collect();
    assert!(outcomes[0].is_ok() && outcomes[1].is_ok(), "{outcomes:?}");
    let error = outcomes[2].as_ref().unwrap_err();
    assert_eq!(
        refused_resource(error),
        Some((TAXONOMY, 0, false, &Scope::Application)),
        "{error}"
    );
    assert_eq!(fake.calls_served(TAXONOMY), 2);
}
