//! The async front (`marketplace_client::aio`) against the fake over loopback: many tasks
//! sharing one provider and one taxonomy client make one token request; a task dropped while
//! it fetches leaves the cache usable; renewal on 401, retries, the user-token flow with the
//! file store, and the download.

use std::sync::Arc;
use std::time::Duration;

use fake_marketplace::{FakeMarketplace, Fault, TOKEN_PATH};
use marketplace_client::Marketplace;
use marketplace_client::aio::oauth::{
    AccessTokenSource, ApplicationTokenProvider, Endpoints, FileStore, OAuthClient, OAuthConfig,
    RefreshTokenStore, ScopeSet, UserTokenProvider,
};
use marketplace_client::aio::taxonomy::{ClientConfig, TaxonomyClient};

use crate::oauth_support as oauth_common;

const SUGGESTIONS_US: &str = "/commerce/taxonomy/v1/category_tree/0/get_category_suggestions";

fn oauth_client(fake: &FakeMarketplace) -> OAuthClient {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    OAuthClient::from_config(
        &OAuthConfig::new(endpoints)
            .with_credentials(fake.client_id(), fake.client_secret())
            .with_redirect_uri("Test_App-TestApp-SBX-abcdef"),
    )
    .unwrap()
}

fn shared(fake: &FakeMarketplace) -> (Arc<ApplicationTokenProvider>, Arc<TaxonomyClient>) {
    let provider = Arc::new(ApplicationTokenProvider::new(oauth_client(fake)));
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_backoff(Duration::from_millis(1), Duration::from_millis(8));
    let client = Arc::new(TaxonomyClient::new(config, provider.clone()).unwrap());
    (provider, client)
}

/// `tasks` tasks ask for suggestions at once, while the token endpoint takes 300 ms: every
/// one gets its answer, and the fake saw one token request.
async fn many_tasks(tasks: usize) {
    let fake = FakeMarketplace::new();
    fake.fail_next(TOKEN_PATH, Fault::Delay(Duration::from_millis(300)));
    let (_provider, client) = shared(&fake);
    let mut handles = Vec::new();
    for _ in 0..tasks {
        let client = client.clone();
        handles.push(tokio::spawn(async move {
            client.category_suggestions(Marketplace::Us, "iphone").await
        }));
    }
    for handle in handles {
        let answer = handle.await.expect("task").expect("suggestions");
        assert!(!answer.suggestions.is_empty());
    }
    assert_eq!(fake.token_requests().len(), 1, "one token request");
    assert_eq!(fake.requests_to(SUGGESTIONS_US).len(), tasks);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_hundred_tasks_on_a_multi_thread_runtime_make_one_token_request() {
    many_tasks(200).await;
}

#[tokio::test(flavor = "current_thread")]
async fn fifty_tasks_on_a_current_thread_runtime_make_one_token_request() {
    many_tasks(50).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_dropped_while_it_fetches_leaves_the_cache_usable() {
    let fake = FakeMarketplace::new();
    fake.fail_next(TOKEN_PATH, Fault::Delay(Duration::from_millis(800)));
    let provider = Arc::new(ApplicationTokenProvider::new(oauth_client(&fake)));
    // The first caller starts the request and is dropped half way (its time-out).
    let first = tokio::time::timeout(Duration::from_millis(100), provider.access_token()).await;
    assert!(first.is_err(), "the first caller was cancelled");
    // A waiter that joined meanwhile is not left hanging, and the next caller fetches.
    let token = tokio::time::timeout(Duration::from_secs(5), provider.access_token())
        .await
        .expect("no hang after a cancelled flight")
        .expect("a token");
    assert!(fake.issued_token(token.secret()).is_some());
    assert_eq!(
        provider.access_token().await.unwrap().secret(),
        token.secret()
    );
}

#[tokio::test]
async fn a_401_renews_the_token_once_and_a_503_is_retried() {
    let fake = FakeMarketplace::new();
    let (_provider, client) = shared(&fake);
    fake.fail_next(
        SUGGESTIONS_US,
        Fault::Status {
            status: 401,
            body: String::new(),
            headers: vec![],
        },
    );
    let answer = client
        .category_suggestions(Marketplace::Us, "iphone")
        .await
        .unwrap();
    assert!(!answer.suggestions.is_empty());
    assert_eq!(fake.token_requests().len(), 2, "renewed once after the 401");

    fake.fail_next(
        SUGGESTIONS_US,
        Fault::Status {
            status: 503,
            body: String::new(),
            headers: vec![],
        },
    );
    client
        .category_suggestions(Marketplace::Us, "iphone")
        .await
        .unwrap();
    assert_eq!(fake.requests_to(SUGGESTIONS_US).len(), 4);
    assert_eq!(
        fake.token_requests().len(),
        2,
        "a 503 is no reason to renew"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_token_flow_with_the_file_store() {
    let fake = FakeMarketplace::new();
    let client = Arc::new(oauth_client(&fake));
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(FileStore::new(dir.path().join("tokens.json")));
    let scopes = ScopeSet::new([fake.scope("/sell.inventory")]);
    let request = client.consent_request(&scopes).unwrap();
    // The browser's part (blocking, as a browser is), off the runtime.
    let url = request.url().to_string();
    let landed = tokio::task::spawn_blocking(move || oauth_common::visit_consent(&url))
        .await
        .unwrap();
    let code = request.complete(&landed).unwrap();

    let provider = UserTokenProvider::new(client.clone(), store.clone(), "seller-1");
    let record = provider
        .exchange_code(&code, request.scopes())
        .await
        .unwrap();
    let stored = RefreshTokenStore::load(&*store, "seller-1")
        .await
        .unwrap()
        .expect("stored");
    assert!(stored.refresh_token.ct_eq(&record.refresh_token));

    // A later process: a new provider refreshes from the stored token.
    let later = UserTokenProvider::new(client, store, "seller-1");
    let token = later.access_token().await.unwrap();
    let issued = fake
        .issued_token(token.secret())
        .expect("issued by the fake");
    assert_eq!(issued.scopes, vec![fake.scope("/sell.inventory")]);
    assert_eq!(fake.token_requests().len(), 2, "exchange, then one refresh");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_item_aspects_streams_to_disk() {
    let fake = FakeMarketplace::new();
    let (_provider, client) = shared(&fake);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("EBAY_US.aspects.json.gz");
    let received = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let seen = received.clone();
    let file = client
        .fetch_item_aspects(Marketplace::Us, &dest, move |received, _total| {
            seen.store(received, std::sync::atomic::Ordering::Relaxed)
        })
        .await
        .unwrap();
    let served = fake.item_aspects_file(Marketplace::Us);
    assert_eq!(std::fs::read(&dest).unwrap(), served);
    assert_eq!(file.compressed_bytes, served.len() as u64);
    assert_eq!(
        received.load(std::sync::atomic::Ordering::Relaxed),
        served.len() as u64
    );

    // A connection cut half way is retried from the start; the file is whole.
    fake.fail_next(
        "/commerce/taxonomy/v1/category_tree/0/fetch_item_aspects",
        Fault::CutOffBody,
    );
    std::fs::remove_file(&dest).unwrap();
    client
        .fetch_item_aspects(Marketplace::Us, &dest, |_, _| {})
        .await
        .unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), served);
}

#[tokio::test]
async fn the_generic_request_renews_on_401_and_encodes_its_path() {
    use marketplace_client::aio::api::{ApiClient, ApiRequest, ClientConfig};
    let fake = FakeMarketplace::new();
    fake.route(
        "PUT",
        "/sell/inventory/v1/inventory_item/{sku}",
        |req, state| match state.check_bearer(req) {
            Ok(_) => fake_marketplace::Response::json(
                200,
                &serde_json::json!({ "sku": req.param("sku").unwrap_or_default(), "body": req.body_str() }),
            ),
            Err(refused) => refused,
        },
    );
    let provider = Arc::new(ApplicationTokenProvider::new(oauth_client(&fake)));
    let api = ApiClient::new(
        ClientConfig::for_base_url(&fake.base_url()).unwrap(),
        provider,
    )
    .unwrap();
    fake.fail_next(
        "/sell/inventory/v1/inventory_item/SKU%201%2FA",
        Fault::Status {
            status: 401,
            body: String::new(),
            headers: vec![],
        },
    );
    let answer = api
        .send(
            ApiRequest::put_segments(["sell", "inventory", "v1", "inventory_item", "SKU 1/A"])
                .json(&serde_json::json!({ "availability": { "quantity": 3 } }))
                .marketplace(Marketplace::De),
        )
        .await
        .unwrap();
    let echoed: serde_json::Value = answer.json().unwrap();
    assert_eq!(echoed["body"], r#"{"availability":{"quantity":3}}"#);
    let puts = fake.requests_to("/sell/inventory/v1/inventory_item/SKU%201%2FA");
    assert_eq!(puts.len(), 2, "the 401, then the retry with a new token");
    assert_eq!(puts[1].header("X-EBAY-C-MARKETPLACE-ID"), Some("EBAY_DE"));
    assert_eq!(puts[1].header("Accept-Language"), Some("de-DE"));
    assert_eq!(fake.token_requests().len(), 2);
}

/// The async provider against a closed port, as the blocking one: the second call answers the
/// cached failure and says so (keeping the refused connection as its `error`); the fake then
/// started on that port sees no request until `retry_now()`.
#[tokio::test]
async fn a_refused_connection_is_cached_says_so_and_retry_now_asks_again() {
    use marketplace_client::aio::oauth::OAuthError;
    let port = oauth_common::closed_port();
    let base = format!("http://127.0.0.1:{port}");
    let config = fake_marketplace::FakeConfig::default();
    let client = OAuthClient::from_config(
        &OAuthConfig::new(Endpoints::custom(&base, &base).unwrap())
            .with_credentials(config.client_id.clone(), config.client_secret.clone()),
    )
    .unwrap();
    let provider: Arc<dyn AccessTokenSource> = Arc::new(ApplicationTokenProvider::new(client));
    let refused = provider.access_token().await.unwrap_err();
    assert!(
        matches!(refused, OAuthError::Transport { .. }),
        "{refused:?}"
    );

    let cached = provider.access_token().await.unwrap_err();
    let text = cached.to_string();
    assert!(text.starts_with(&refused.to_string()), "{text}");
    assert!(
        text.contains("a cached failure: the last attempt failed"),
        "{text}"
    );
    assert!(text.contains("retry_now()"), "{text}");
    let OAuthError::BackingOff { error, .. } = &cached else {
        panic!("{cached:?}")
    };
    assert!(matches!(**error, OAuthError::Transport { .. }), "{error:?}");

    let fake = FakeMarketplace::start_on(port, config).unwrap();
    let still = provider.access_token().await.unwrap_err();
    assert!(matches!(still, OAuthError::BackingOff { .. }), "{still:?}");
    assert_eq!(
        fake.token_requests().len(),
        0,
        "no request during the back-off"
    );

    provider.retry_now();
    provider.access_token().await.unwrap();
    assert_eq!(fake.token_requests().len(), 1);
}
