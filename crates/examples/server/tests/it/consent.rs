//! A seller's consent on a fleet: two instances of the server over one PostgreSQL and the
//! fake marketplace. A seller logs in (either instance: they share the session key), starts a
//! consent on instance A and completes it on instance B (where eBay sends the browser back);
//! the same redirect again is refused by either instance; a consent that expired before its
//! redirect came back is refused. Nobody without a session reaches eBay's consent page, and a
//! consent started by one account is not completed for another. eBay's deletion notification
//! for the seller who consented removes the account's refresh token. The test plays the
//! browsers over HTTP, following no redirect by itself.

use crate::pg;

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use fake_marketplace::{AccountDeletionNotice, FakeConfig, FakeMarketplace, FakeUser};
use marketplace_client::aio::oauth::{
    AccessTokenSource as _, OAuthClient, OAuthConfig, RefreshTokenStore, UserTokenProvider,
};
use marketplace_client_postgres::{Keyring, PgRefreshTokenStore, TokenKey, migrate};
use pg::TestDb;
use taxonomy_example_server::consent::{CALLBACK_PATH, CONSENT_PATH, Connected};
use taxonomy_example_server::session::{LOGIN_PATH, LOGOUT_PATH, hash_password};
use taxonomy_example_server::{
    NOTIFICATIONS_PATH, Sessions, TokenStore, client_for_fake, consent_endpoints_for_fake,
    notification_endpoint_for_fake, router, with_consent, with_notifications,
};

/// The session key every instance shares.
const SESSION_KEY: [u8; 64] = [7; 64];

/// The application's users: seller-1 and seller-2, each with a password of its own.
fn users() -> Vec<(String, String)> {
    static HASHES: OnceLock<Vec<(String, String)>> = OnceLock::new();
    HASHES
        .get_or_init(|| {
            ["seller-1", "seller-2"]
                .map(|account| {
                    let hash = hash_password(&format!("{account} password")).unwrap();
                    (account.to_owned(), hash)
                })
                .into()
        })
        .clone()
}

fn sessions() -> Arc<Sessions> {
    Arc::new(
        Sessions::new(&SESSION_KEY, users())
            .expect("sessions")
            .with_insecure_cookie(),
    )
}

/// The application's RuName: the fake sends the browser back to instance B's `/callback`,
/// as eBay sends it to the RuName's accept URL.
const RU_NAME: &str = "Example_Co-ExampleApp-PRD-fleet";

fn keyring() -> Keyring {
    Keyring::new(TokenKey::from_bytes([42; 32]))
}

/// An instance's store: its own pool on the shared database.
async fn store(db: &TestDb, fake: &FakeMarketplace) -> PgRefreshTokenStore {
    let pool = sqlx::PgPool::connect(&db.url()).await.expect("a pool");
    let endpoints =
        marketplace_client::aio::oauth::Endpoints::custom(&fake.base_url(), &fake.auth_url())
            .unwrap();
    let oauth =
        OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret());
    PgRefreshTokenStore::from_config(pool, keyring(), &oauth).expect("a client id")
}

/// Serves an instance on `listener`: the server's router with the consent endpoints (and
/// the login) and the notification endpoint, over `store`.
async fn serve(
    listener: tokio::net::TcpListener,
    fake: &FakeMarketplace,
    store: PgRefreshTokenStore,
    ttl: Option<Duration>,
) {
    let store = TokenStore::Postgres(store);
    let mut endpoints =
        consent_endpoints_for_fake(fake, RU_NAME, store.clone(), sessions()).expect("endpoints");
    if let Some(ttl) = ttl {
        endpoints = endpoints.with_ttl(ttl);
    }
    let url = format!(
        "http://{}{NOTIFICATIONS_PATH}",
        listener.local_addr().unwrap()
    );
    let notifications = notification_endpoint_for_fake(fake, &url, Some(&store)).expect("endpoint");
    let app = with_notifications(
        with_consent(
            router(client_for_fake(fake).expect("client")),
            Arc::new(endpoints),
        ),
        notifications,
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

/// A browser, which shows each redirect instead of following it, and sends the session
/// cookie it was given (if any) to every instance.
struct Browser {
    http: reqwest::Client,
    cookie: Option<String>,
}

impl Browser {
    fn anonymous() -> Self {
        Self {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .no_proxy()
                .build()
                .unwrap(),
            cookie: None,
        }
    }

    /// A browser with a session cookie of `value` (forged: not from a login).
    fn with_cookie(value: &str) -> Self {
        Self {
            cookie: Some(format!("session={value}")),
            ..Self::anonymous()
        }
    }

    /// `account` logged in on the instance at `at`, with its password.
    async fn logged_in(at: SocketAddr, account: &str) -> Self {
        let mut browser = Self::anonymous();
        let answer = browser
            .http
            .post(format!("http://{at}{LOGIN_PATH}"))
            .json(
                &serde_json::json!({"account": account, "password": format!("{account} password")}),
            )
            .send()
            .await
            .expect("login");
        assert_eq!(answer.status().as_u16(), 204, "login of {account}");
        let set = answer.headers()["set-cookie"].to_str().unwrap();
        assert!(
            set.contains("HttpOnly") && set.contains("SameSite=Lax"),
            "{set}"
        );
        browser.cookie = Some(set.split(';').next().unwrap().to_owned());
        browser
    }

    async fn get(&self, url: &str) -> reqwest::Response {
        let mut request = self.http.get(url);
        if let Some(cookie) = &self.cookie {
            request = request.header("cookie", cookie);
        }
        request.send().await.expect("request")
    }

    /// `GET url`, expecting a redirect; its `Location`.
    async fn redirected(&self, url: &str) -> String {
        let answer = self.get(url).await;
        let status = answer.status();
        let location = answer.headers().get("location").cloned();
        assert!(
            status.is_redirection(),
            "{url}: {status} {}",
            answer.text().await.unwrap_or_default()
        );
        location.expect("Location").to_str().unwrap().to_owned()
    }

    /// Starts a consent on the instance at `start`, lets the fake's consent page grant it, and
    /// returns where the fake sends the browser back.
    async fn consent_redirect(&self, fake: &FakeMarketplace, start: SocketAddr) -> String {
        let consent_page = self
            .redirected(&format!("http://{start}{CONSENT_PATH}"))
            .await;
        assert!(
            consent_page.starts_with(&format!("{}/oauth2/authorize?", fake.auth_url())),
            "{consent_page}"
        );
        self.redirected(&consent_page).await
    }

    /// `GET url`, expecting `status` and a JSON error; the error.
    async fn refused(&self, url: &str, status: u16) -> String {
        let answer = self.get(url).await;
        assert_eq!(answer.status().as_u16(), status, "{url}");
        assert!(answer.headers().get("location").is_none(), "{url}");
        let body: serde_json::Value = answer.json().await.expect("a JSON error");
        body["error"].as_str().expect("error").to_owned()
    }
}

/// `value` signed as a session cookie with `key` (axum-extra's signed cookies, as the server
/// signs them): the cookie's value.
fn signed_with(key: &[u8], value: &str) -> String {
    use axum::response::IntoResponse as _;
    use axum_extra::extract::cookie::{Cookie, Key, SignedCookieJar};
    let jar = SignedCookieJar::new(Key::from(key)).add(Cookie::new("session", value.to_owned()));
    let response = (jar, ()).into_response();
    let set = response.headers()["set-cookie"].to_str().unwrap();
    set.split(';')
        .next()
        .unwrap()
        .strip_prefix("session=")
        .unwrap()
        .to_owned()
}

async fn pending(db: &TestDb) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM marketplace_pending_consents")
        .fetch_one(&db.pool)
        .await
        .unwrap()
}

/// Two instances (A, B: where the fake sends the browser back) and one whose consents expire
/// at once, over one database; the store B uses.
struct Fleet {
    db: TestDb,
    fake: Arc<FakeMarketplace>,
    a: SocketAddr,
    b: SocketAddr,
    hasty: SocketAddr,
    store_b: PgRefreshTokenStore,
}

impl Fleet {
    async fn start() -> Self {
        let db = TestDb::new().await;
        migrate(&db.pool).await.expect("migrate");
        let ((listener_a, a), (listener_b, b), (listener_hasty, hasty)) =
            (bind().await, bind().await, bind().await);
        let fake = Arc::new(
            FakeMarketplace::start(FakeConfig {
                ru_names: vec![(RU_NAME.into(), format!("http://{b}{CALLBACK_PATH}"))],
                ..FakeConfig::default()
            })
            .expect("fake"),
        );
        let store_b = store(&db, &fake).await;
        serve(listener_a, &fake, store(&db, &fake).await, None).await;
        serve(listener_b, &fake, store_b.clone(), None).await;
        serve(
            listener_hasty,
            &fake,
            store(&db, &fake).await,
            Some(Duration::ZERO),
        )
        .await;
        Self {
            db,
            fake,
            a,
            b,
            hasty,
            store_b,
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_logged_in_sellers_consent_started_on_one_instance_completes_on_another_once() {
    let Fleet {
        db,
        fake,
        a,
        b,
        hasty,
        store_b,
    } = Fleet::start().await;
    // Logged in on B; the session holds on A too (the instances share the key).
    let seller = Browser::logged_in(b, "seller-1").await;

    // Started on A, completed on B. A parameter naming another account changes nothing: the
    // account is the session's.
    let callback = seller.consent_redirect(&fake, a).await;
    assert!(
        callback.starts_with(&format!("http://{b}{CALLBACK_PATH}?")),
        "{callback}"
    );
    let answer = seller.get(&callback).await;
    assert_eq!(answer.status().as_u16(), 200);
    let connected: Connected = answer.json().await.expect("JSON");
    assert_eq!(connected.account, "seller-1");
    assert_eq!(
        connected.scopes,
        [
            fake.scope("/sell.inventory"),
            marketplace_notifications::IDENTITY_SCOPE.to_owned()
        ]
    );
    assert_eq!(connected.ebay_username, FakeUser::default().username);
    assert_eq!(pending(&db).await, 0, "the pending consent is used up");
    // The seller's refresh token is in the shared store: a user token for the account.
    assert!(store_b.load("seller-1").await.unwrap().is_some());
    let config = OAuthConfig::new(
        marketplace_client::aio::oauth::Endpoints::custom(&fake.base_url(), &fake.auth_url())
            .unwrap(),
    )
    .with_credentials(fake.client_id(), fake.client_secret());
    let provider = UserTokenProvider::new(
        OAuthClient::from_config(&config).unwrap(),
        Arc::new(store_b.clone()),
        "seller-1",
    );
    provider.access_token().await.expect("a user token");
    // The eBay user who granted it is recorded with the account.
    let recorded: Option<String> = sqlx::query_scalar(
        "SELECT ebay_user_id FROM marketplace_refresh_tokens WHERE account = 'seller-1'",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(recorded, Some(FakeUser::default().user_id));

    // The same redirect again, to B or to A: refused.
    let query = callback.split_once('?').unwrap().1;
    for instance in [b, a] {
        let error = seller
            .refused(&format!("http://{instance}{CALLBACK_PATH}?{query}"), 400)
            .await;
        assert!(error.contains("used already"), "{instance}: {error}");
    }

    // Expired before the redirect came back: refused, and used up.
    let other = Browser::logged_in(a, "seller-2").await;
    let late = other.consent_redirect(&fake, hasty).await;
    let error = other.refused(&late, 400).await;
    assert!(error.contains("expired"), "{error}");
    let error = other.refused(&late, 400).await;
    assert!(error.contains("used already"), "{error}");
    assert!(store_b.load("seller-2").await.unwrap().is_none());

    // A forged redirect completes nothing.
    let error = seller
        .refused(
            &format!("http://{b}{CALLBACK_PATH}?state=forged&code=x"),
            400,
        )
        .await;
    assert!(error.contains("no pending consent"), "{error}");

    // Logging out removes the browser's cookie.
    let answer = seller
        .http
        .post(format!("http://{a}{LOGOUT_PATH}"))
        .header("cookie", seller.cookie.as_deref().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 204);
    let set = answer.headers()["set-cookie"].to_str().unwrap();
    assert!(
        set.starts_with("session=;") && set.contains("Max-Age=0"),
        "{set}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anonymous_consent_never_reaches_the_consent_page() {
    let Fleet {
        db,
        fake,
        a,
        b,
        store_b,
        ..
    } = Fleet::start().await;
    // No session, a cookie not signed with the key, one signed with another key: 401, and no
    // pending consent saved.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let unsigned = format!("c2VsbGVyLTE.{now}"); // seller-1, logged in now
    for browser in [
        Browser::anonymous(),
        Browser::with_cookie(&unsigned),
        Browser::with_cookie(&signed_with(&[9; 64], &unsigned)),
    ] {
        for instance in [a, b] {
            let error = browser
                .refused(
                    &format!("http://{instance}{CONSENT_PATH}?account=seller-1"),
                    401,
                )
                .await;
            assert!(error.contains("log in"), "{error}");
        }
    }
    // A wrong password, an unknown account: no session.
    for (account, password) in [("seller-1", "seller-2 password"), ("nobody", "x")] {
        let answer = Browser::anonymous()
            .http
            .post(format!("http://{a}{LOGIN_PATH}"))
            .json(&serde_json::json!({"account": account, "password": password}))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status().as_u16(), 401, "{account}");
        assert!(answer.headers().get("set-cookie").is_none());
    }
    // An oversized login (a megabyte of password) is refused before it is read or checked.
    let answer = Browser::anonymous()
        .http
        .post(format!("http://{a}{LOGIN_PATH}"))
        .json(&serde_json::json!({"account": "seller-1", "password": "x".repeat(1 << 20)}))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status().as_u16(), 413);
    assert!(answer.headers().get("set-cookie").is_none());
    assert_eq!(pending(&db).await, 0);

    // seller-2 asks for seller-1's consent: the consent is seller-2's own.
    let intruder = Browser::logged_in(a, "seller-2").await;
    let callback = intruder.consent_redirect(&fake, a).await;
    let answer = intruder.get(&callback).await;
    assert_eq!(answer.status().as_u16(), 200);
    let connected: Connected = answer.json().await.unwrap();
    assert_eq!(connected.account, "seller-2");
    assert!(store_b.load("seller-1").await.unwrap().is_none());

    // seller-2's consent page sent to seller-1 (who grants it with their own eBay account):
    // the callback under seller-1's session is refused, and stores nothing for either.
    store_b.remove("seller-2").await.unwrap();
    let seller = Browser::logged_in(b, "seller-1").await;
    let page = intruder
        .redirected(&format!("http://{a}{CONSENT_PATH}"))
        .await;
    let callback = seller.redirected(&page).await;
    let error = seller.refused(&callback, 403).await;
    assert!(error.contains("another account"), "{error}");
    assert!(store_b.load("seller-1").await.unwrap().is_none());
    assert!(store_b.load("seller-2").await.unwrap().is_none());
    assert_eq!(pending(&db).await, 0, "used up");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_notification_removes_the_consenting_sellers_tokens() {
    let Fleet {
        db: _db,
        fake,
        a,
        store_b,
        ..
    } = Fleet::start().await;
    // seller-1 consents as one eBay user, seller-2 as another.
    let first = FakeUser {
        user_id: "ebayUser0001".into(),
        username: "first_seller".into(),
    };
    let second = FakeUser {
        user_id: "ebayUser0002".into(),
        username: "second_seller".into(),
    };
    for (account, user) in [("seller-1", &first), ("seller-2", &second)] {
        fake.set_user(user.clone());
        let browser = Browser::logged_in(a, account).await;
        let callback = browser.consent_redirect(&fake, a).await;
        let answer = browser.get(&callback).await;
        assert_eq!(answer.status().as_u16(), 200, "{account}");
        assert!(store_b.load(account).await.unwrap().is_some());
    }

    // eBay tells instance A that the first user's data must go.
    let url = format!("http://{a}{NOTIFICATIONS_PATH}");
    let driver = fake.clone();
    let delivered = tokio::task::spawn_blocking(move || {
        let notice = AccountDeletionNotice::new(&driver, &first);
        driver.send_notification(&url, &notice).expect("send")
    })
    .await
    .unwrap();
    assert_eq!(delivered.status, 204, "{}", delivered.body_str());
    assert!(
        store_b.load("seller-1").await.unwrap().is_none(),
        "the deleted seller's refresh token is removed"
    );
    assert!(
        store_b.load("seller-2").await.unwrap().is_some(),
        "not another's"
    );
}
