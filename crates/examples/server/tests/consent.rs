//! A seller's consent on a fleet: two instances of the server over one PostgreSQL and the
//! fake marketplace. A consent started on instance A completes on instance B (where eBay sends
//! the browser back); the same redirect again is refused by either instance; a consent that
//! expired before its redirect came back is refused. The test plays the seller's browser over
//! HTTP, following no redirect by itself.

#[path = "../../../marketplace-client-postgres/tests/support/pg.rs"]
mod pg;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use fake_marketplace::{FakeConfig, FakeMarketplace};
use marketplace_client::aio::oauth::{
    AccessTokenSource as _, OAuthClient, OAuthConfig, RefreshTokenStore, UserTokenProvider,
};
use marketplace_client_postgres::{Keyring, PgRefreshTokenStore, TokenKey, migrate};
use pg::TestDb;
use taxonomy_example_server::consent::{CALLBACK_PATH, CONSENT_PATH, Connected};
use taxonomy_example_server::{client_for_fake, consent_endpoints_for_fake, router, with_consent};

/// The application's RuName: the fake sends the browser back to instance B's `/callback`,
/// as eBay sends it to the RuName's accept URL.
const RU_NAME: &str = "Example_Co-ExampleApp-PRD-fleet";

fn keyring() -> Keyring {
    Keyring::new(TokenKey::from_bytes([42; 32]))
}

/// An instance's store: its own pool on the shared database.
async fn store(db: &TestDb, fake: &FakeMarketplace) -> Arc<PgRefreshTokenStore> {
    let pool = sqlx::PgPool::connect(&db.url()).await.expect("a pool");
    let endpoints =
        marketplace_client::aio::oauth::Endpoints::custom(&fake.base_url(), &fake.auth_url())
            .unwrap();
    let oauth =
        OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret());
    Arc::new(PgRefreshTokenStore::from_config(pool, keyring(), &oauth).expect("a client id"))
}

/// Serves an instance on `listener`: the server's router with the consent endpoints.
async fn serve(
    listener: tokio::net::TcpListener,
    fake: &FakeMarketplace,
    store: Arc<dyn RefreshTokenStore>,
    ttl: Option<Duration>,
) {
    let mut endpoints = consent_endpoints_for_fake(fake, RU_NAME, store).expect("endpoints");
    if let Some(ttl) = ttl {
        endpoints = endpoints.with_ttl(ttl);
    }
    let app = with_consent(
        router(client_for_fake(fake).expect("client")),
        Arc::new(endpoints),
    );
    tokio::spawn(async move {
        axum::serve(listener, app).await.expect("serve");
    });
}

async fn bind() -> (tokio::net::TcpListener, SocketAddr) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    (listener, addr)
}

/// The seller's browser, which shows each redirect instead of following it.
fn browser() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap()
}

/// `GET url`, expecting a redirect; its `Location`.
async fn redirected(browser: &reqwest::Client, url: &str) -> String {
    let answer = browser.get(url).send().await.expect("request");
    assert!(
        answer.status().is_redirection(),
        "{url}: {}",
        answer.status()
    );
    answer
        .headers()
        .get("location")
        .expect("Location")
        .to_str()
        .unwrap()
        .to_owned()
}

/// Starts a consent for `account` on the instance at `start`, lets the fake's consent page
/// grant it, and returns where the fake sends the browser back.
async fn consent_redirect(
    browser: &reqwest::Client,
    fake: &FakeMarketplace,
    start: SocketAddr,
    account: &str,
) -> String {
    let consent_page = redirected(
        browser,
        &format!("http://{start}{CONSENT_PATH}?account={account}"),
    )
    .await;
    assert!(
        consent_page.starts_with(&format!("{}/oauth2/authorize?", fake.auth_url())),
        "{consent_page}"
    );
    redirected(browser, &consent_page).await
}

async fn refused(browser: &reqwest::Client, url: &str) -> String {
    let answer = browser.get(url).send().await.expect("request");
    assert_eq!(answer.status().as_u16(), 400, "{url}");
    let body: serde_json::Value = answer.json().await.expect("a JSON error");
    body["error"].as_str().expect("error").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_consent_started_on_one_instance_completes_on_another_once() {
    let db = TestDb::new().await;
    migrate(&db.pool).await.expect("migrate");
    let ((listener_a, a), (listener_b, b), (listener_hasty, hasty)) =
        (bind().await, bind().await, bind().await);
    let fake = FakeMarketplace::start(FakeConfig {
        ru_names: vec![(RU_NAME.into(), format!("http://{b}{CALLBACK_PATH}"))],
        ..FakeConfig::default()
    })
    .expect("fake");
    let store_b = store(&db, &fake).await;
    serve(listener_a, &fake, store(&db, &fake).await, None).await;
    serve(listener_b, &fake, store_b.clone(), None).await;
    // An instance whose consents expire at once.
    serve(
        listener_hasty,
        &fake,
        store(&db, &fake).await,
        Some(Duration::ZERO),
    )
    .await;
    let browser = browser();

    // Started on A, completed on B.
    let callback = consent_redirect(&browser, &fake, a, "seller-1").await;
    assert!(
        callback.starts_with(&format!("http://{b}{CALLBACK_PATH}?")),
        "{callback}"
    );
    let answer = browser.get(&callback).send().await.expect("callback");
    assert_eq!(answer.status().as_u16(), 200);
    let connected: Connected = answer.json().await.expect("JSON");
    assert_eq!(connected.account, "seller-1");
    assert_eq!(connected.scopes, [fake.scope("/sell.inventory")]);
    let pending: i64 = sqlx::query_scalar("SELECT count(*) FROM marketplace_pending_consents")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert_eq!(pending, 0, "the pending consent is used up");
    // The seller's refresh token is in the shared store: a user token for the account.
    assert!(store_b.load("seller-1").await.unwrap().is_some());
    let config = OAuthConfig::new(
        marketplace_client::aio::oauth::Endpoints::custom(&fake.base_url(), &fake.auth_url())
            .unwrap(),
    )
    .with_credentials(fake.client_id(), fake.client_secret());
    let seller = UserTokenProvider::new(
        OAuthClient::from_config(&config).unwrap(),
        store_b.clone(),
        "seller-1",
    );
    seller.access_token().await.expect("a user token");

    // The same redirect again, to B or to A: refused.
    let query = callback.split_once('?').unwrap().1;
    for instance in [b, a] {
        let error = refused(
            &browser,
            &format!("http://{instance}{CALLBACK_PATH}?{query}"),
        )
        .await;
        assert!(error.contains("used already"), "{instance}: {error}");
    }

    // Expired before the redirect came back: refused, and used up.
    let late = consent_redirect(&browser, &fake, hasty, "seller-2").await;
    let error = refused(&browser, &late).await;
    assert!(error.contains("expired"), "{error}");
    let error = refused(&browser, &late).await;
    assert!(error.contains("used already"), "{error}");
    assert!(store_b.load("seller-2").await.unwrap().is_none());

    // No account, no consent; a forged redirect completes nothing.
    let error = refused(&browser, &format!("http://{a}{CONSENT_PATH}")).await;
    assert!(error.contains("account"), "{error}");
    let error = refused(
        &browser,
        &format!("http://{b}{CALLBACK_PATH}?state=forged&code=x"),
    )
    .await;
    assert!(error.contains("no pending consent"), "{error}");
}
