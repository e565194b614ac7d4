//! With the PostgreSQL token store, against the fake and a real PostgreSQL (checked in the
//! database): two sellers consent (their eBay users recorded with getUser), a signed account
//! deletion for one removes that seller's refresh token and every cached access token of the
//! account (all scope sets), and nothing of the other's; a retry, even to another process,
//! gets 204 and calls the callback once for the fleet; a tampered body or signature gets 412
//! and deletes nothing; the public key is fetched once for the fleet.

use crate::pg;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use fake_marketplace::notify::PUBLIC_KEY_PATH;
use fake_marketplace::{AccountDeletionNotice, FakeMarketplace, FakeUser, Tamper};
use marketplace_client::aio::api::{ApiClient, ClientConfig};
use marketplace_client::aio::oauth::{
    AccessTokenSource as _, ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
    ScopeSet, UserTokenProvider,
};
use marketplace_client_postgres::{Keyring, PgRefreshTokenStore, PgTokenCache, TokenKey, migrate};
use marketplace_notifications::postgres::record_ebay_user;
use marketplace_notifications::{
    IDENTITY_SCOPE, NotificationEndpoint, PublicKeyCache, VerificationToken, get_user,
};
use pg::TestDb;

const TOKEN: &str = "Loopback_verification-token_0123456789abcdef";

struct Fleet {
    fake: Arc<FakeMarketplace>,
    db: TestDb,
    store: PgRefreshTokenStore,
    cache: Arc<PgTokenCache>,
    client: Arc<OAuthClient>,
}

fn endpoints(fake: &FakeMarketplace) -> Endpoints {
    Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap()
}

impl Fleet {
    async fn new() -> Self {
        let fake = Arc::new(FakeMarketplace::new());
        let db = TestDb::new().await;
        migrate(&db.pool).await.unwrap();
        let keyring = Keyring::new(TokenKey::from_bytes([7u8; 32]));
        let store = PgRefreshTokenStore::from_config(
            db.pool.clone(),
            keyring.clone(),
            &marketplace_client::oauth::OAuthConfig::new(endpoints(&fake))
                .with_credentials(fake.client_id(), fake.client_secret()),
        )
        .unwrap();
        let cache = Arc::new(PgTokenCache::new(db.pool.clone(), keyring));
        let client = Arc::new(
            OAuthClient::from_config(
                &OAuthConfig::new(endpoints(&fake))
                    .with_credentials(fake.client_id(), fake.client_secret())
                    .with_redirect_uri("Test_App-TestApp-SBX-abcdef"),
            )
            .unwrap(),
        );
        Self {
            fake,
            db,
            store,
            cache,
            client,
        }
    }

    /// The consent of `account` as `user`, its eBay user recorded, and access tokens of two
    /// scope sets cached in the database (as a fleet's processes would).
    async fn consent(&self, account: &str, user: FakeUser) {
        let fake = &self.fake;
        fake.set_user(user);
        let scopes = ScopeSet::new([
            fake.scope("/sell.inventory"),
            fake.scope("/sell.account"),
            IDENTITY_SCOPE.to_owned(),
        ]);
        let request = self.client.consent_request(&scopes).unwrap();
        let browser = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap();
        let page = browser.get(request.url().as_str()).send().await.unwrap();
        let landed = page.headers()["location"].to_str().unwrap().to_owned();
        let code = request.complete(&landed).unwrap();
        let provider = Arc::new(
            UserTokenProvider::new(self.client.clone(), Arc::new(self.store.clone()), account)
                .with_shared_cache(self.cache.clone()),
        );
        provider
            .exchange_code(&code, request.scopes())
            .await
            .unwrap();
        provider.access_token().await.unwrap();
        // Another process asks for a narrower scope set: a row of its own.
        UserTokenProvider::new(self.client.clone(), Arc::new(self.store.clone()), account)
            .with_shared_cache(self.cache.clone())
            .with_scopes(ScopeSet::new([fake.scope("/sell.inventory")]))
            .access_token()
            .await
            .unwrap();
        let api = ApiClient::new(
            ClientConfig::for_base_url(&fake.base_url()).unwrap(),
            provider,
        )
        .unwrap();
        let user = get_user(&api).await.unwrap();
        assert!(record_ebay_user(&self.store, account, &user).await.unwrap());
    }

    /// A process's endpoint: keys shared in the database, the store's deletion and log.
    fn endpoint(&self, calls: Arc<AtomicUsize>) -> NotificationEndpoint {
        let app = Arc::new(ApplicationTokenProvider::new(
            OAuthClient::from_config(
                &OAuthConfig::new(endpoints(&self.fake))
                    .with_credentials(self.fake.client_id(), self.fake.client_secret()),
            )
            .unwrap(),
        ));
        let keys = PublicKeyCache::new(
            ApiClient::new(
                ClientConfig::for_base_url(&self.fake.base_url()).unwrap(),
                app,
            )
            .unwrap(),
        )
        .shared_in_postgres(self.db.pool.clone());
        NotificationEndpoint::new(
            "https://seller.example/ebay/notifications",
            VerificationToken::new(TOKEN).unwrap(),
            Arc::new(keys),
        )
        .unwrap()
        .with_postgres_store(self.store.clone())
        .on_notification(move |_| {
            calls.fetch_add(1, Ordering::SeqCst);
            async { Ok::<(), std::io::Error>(()) }
        })
    }

    /// (refresh tokens, cached access-token rows, cached rows holding a token) of `account`.
    async fn rows_of(&self, account: &str) -> (i64, i64, i64) {
        let refresh: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM marketplace_refresh_tokens WHERE account = $1",
        )
        .bind(account)
        .fetch_one(&self.db.pool)
        .await
        .unwrap();
        let (cached, tokens): (i64, i64) = sqlx::query_as(
            "SELECT count(*), count(ciphertext) FROM marketplace_token_cache \
             WHERE kind = 'user' AND subject = $1",
        )
        .bind(account)
        .fetch_one(&self.db.pool)
        .await
        .unwrap();
        (refresh, cached, tokens)
    }
}

/// `notice` as the fake sends it (signed, or spoiled as it says), answered by `endpoint`.
async fn deliver(
    fake: &FakeMarketplace,
    endpoint: &NotificationEndpoint,
    notice: &AccountDeletionNotice,
) -> u16 {
    let body = notice.body();
    let header = match notice.tamper {
        Tamper::Signature => fake.signature_header(b"{\"another\":\"message\"}"),
        _ => fake.signature_header(body.as_bytes()),
    };
    let body = match notice.tamper {
        Tamper::Body => body.replace(&notice.username, "someone_else"),
        _ => body,
    };
    let answer = endpoint
        .handle(
            "POST",
            None,
            &[("X-EBAY-SIGNATURE", &header)],
            body.as_bytes(),
        )
        .await;
    answer.status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deletion_removes_the_sellers_tokens_from_postgres_once_for_the_fleet() {
    let fleet = Fleet::new().await;
    let alice = FakeUser {
        user_id: "aliceUserId01".into(),
        username: "alice_sells".into(),
    };
    let bob = FakeUser {
        user_id: "bobUserId0002".into(),
        username: "bob_sells".into(),
    };
    fleet.consent("seller-a", alice.clone()).await;
    fleet.consent("seller-b", bob.clone()).await;
    // A refresh token, and access tokens of two scope sets, each.
    assert_eq!(fleet.rows_of("seller-a").await, (1, 2, 2));
    assert_eq!(fleet.rows_of("seller-b").await, (1, 2, 2));

    let calls = Arc::new(AtomicUsize::new(0));
    let first = fleet.endpoint(calls.clone());
    let second = fleet.endpoint(calls.clone()); // another process of the fleet

    // Tampered deletions of alice: 412, nothing deleted, nothing remembered.
    let notice = AccountDeletionNotice::new(&fleet.fake, &alice);
    for tamper in [Tamper::Body, Tamper::Signature] {
        let status = deliver(&fleet.fake, &first, &notice.tampered(tamper)).await;
        assert_eq!(status, 412, "{tamper:?}");
    }
    assert_eq!(fleet.rows_of("seller-a").await, (1, 2, 2));
    let remembered: i64 = sqlx::query_scalar("SELECT count(*) FROM marketplace_notifications_seen")
        .fetch_one(&fleet.db.pool)
        .await
        .unwrap();
    assert_eq!(remembered, 0);
    assert_eq!(calls.load(Ordering::SeqCst), 0);

    // alice's deletion, then eBay's retries of it, to both processes.
    assert_eq!(deliver(&fleet.fake, &first, &notice).await, 204);
    assert_eq!(
        fleet.rows_of("seller-a").await,
        (0, 0, 0),
        "alice's tokens are gone"
    );
    assert_eq!(deliver(&fleet.fake, &first, &notice.retry()).await, 204);
    assert_eq!(
        deliver(&fleet.fake, &second, &notice.retry().retry()).await,
        204
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "the callback runs once for the fleet"
    );
    let handled: Vec<(String, bool)> = sqlx::query_as(
        "SELECT notification_id, handled_at IS NOT NULL FROM marketplace_notifications_seen",
    )
    .fetch_all(&fleet.db.pool)
    .await
    .unwrap();
    assert_eq!(handled, [(notice.notification_id.clone(), true)]);

    // bob's tokens are all there.
    assert_eq!(fleet.rows_of("seller-b").await, (1, 2, 2));
    let accounts = fleet.store.accounts().await.unwrap();
    assert_eq!(accounts.len(), 1);
    assert_eq!(accounts[0].ebay_user_id.as_deref(), Some("bobUserId0002"));

    // One getPublicKey call for the two processes: the second read the key from the table.
    let kid = fleet.fake.notification_kid();
    let fetched = fleet
        .fake
        .requests_to(&format!("{PUBLIC_KEY_PATH}{kid}"))
        .len();
    assert_eq!(fetched, 1, "the key is fetched once for the fleet");
    let stored: String =
        sqlx::query_scalar("SELECT pem FROM marketplace_notification_keys WHERE kid = $1")
            .bind(&kid)
            .fetch_one(&fleet.db.pool)
            .await
            .unwrap();
    assert_eq!(stored, fleet.fake.notification_public_key_pem());

    // A deletion of a user no account belongs to: handled, nothing deleted.
    let stranger = FakeUser {
        user_id: "strangerId003".into(),
        username: "stranger".into(),
    };
    let other = AccountDeletionNotice::new(&fleet.fake, &stranger);
    assert_eq!(deliver(&fleet.fake, &second, &other).await, 204);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert_eq!(fleet.rows_of("seller-b").await, (1, 2, 2));
}

/// A database that cannot be reached: 503 with Retry-After (eBay sends it again), the
/// callback not called.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_out_of_reach_answers_503_and_calls_nothing() {
    let fleet = Fleet::new().await;
    let calls = Arc::new(AtomicUsize::new(0));
    let endpoint = fleet.endpoint(calls.clone());
    fleet.db.pool.close().await;
    let user = FakeUser::default();
    let notice = AccountDeletionNotice::new(&fleet.fake, &user);
    let body = notice.body();
    let header = fleet.fake.signature_header(body.as_bytes());
    let answer = endpoint
        .handle(
            "POST",
            None,
            &[("X-EBAY-SIGNATURE", &header)],
            body.as_bytes(),
        )
        .await;
    assert_eq!(answer.status, 503, "{}", answer.body_str());
    assert!(answer.headers.iter().any(|(k, _)| *k == "Retry-After"));
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}
