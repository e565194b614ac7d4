//! eBay's signing keys in a real PostgreSQL (see `support/pg.rs`), created at the fake
//! marketplace's Key Management API (createSigningKey).

use crate::support;

use std::sync::Arc;
use std::time::Duration;

use fake_marketplace::FakeMarketplace;
use fake_marketplace::signatures::{PAYOUTS_PATH, SIGNING_KEY_PATH};
use marketplace_client::aio::api::{ApiClient, ApiRequest, ClientConfig};
use marketplace_client::aio::oauth::{
    Endpoints, MemoryStore, OAuthClient, OAuthConfig, ScopeSet, UserTokenProvider,
};
use marketplace_client_postgres::{Keyring, PgSigningKeys, TokenKey, key_census, migrate, rekey};
use sqlx::postgres::PgPoolOptions;
use support::pg::TestDb;

const APP: &str = "Seller-App-PRD-1234";

/// A process's store of the application's signing keys in production.
fn keys_of(pool: sqlx::PgPool, keyring: Keyring) -> PgSigningKeys {
    let oauth = OAuthConfig::new(Endpoints::production()).with_credentials(APP, "PRD-secret");
    PgSigningKeys::from_config(pool, keyring, &oauth).expect("a client id")
}

fn ring() -> Keyring {
    Keyring::new(TokenKey::from_bytes([9; 32]))
}

/// An API client with a seller's user token: consent to `api_scope` (Key Management),
/// `sell.finances` (getPayouts) and `sell.fulfillment` on the fake's consent page (the test
/// plays the seller's browser), the code exchanged.
async fn api(fake: &FakeMarketplace) -> ApiClient {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth = Arc::new(
        OAuthClient::from_config(
            &OAuthConfig::new(endpoints)
                .with_credentials(fake.client_id(), fake.client_secret())
                .with_redirect_uri("Fake_Company-FakeApp-PRD-abcdefghi"),
        )
        .unwrap(),
    );
    let scopes = ScopeSet::new(
        ["", "/sell.finances", "/sell.fulfillment"]
            .iter()
            .map(|s| fake.scope(s)),
    );
    let request = oauth.consent_request(&scopes).unwrap();
    let browser = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .no_proxy()
        .build()
        .unwrap();
    let answer = browser.get(request.url().as_str()).send().await.unwrap();
    let landed = answer.headers()["location"].to_str().unwrap().to_owned();
    let code = request.complete(&landed).unwrap();
    let tokens = UserTokenProvider::new(oauth, Arc::new(MemoryStore::new()), "seller-1");
    tokens.exchange_code(&code, request.scopes()).await.unwrap();
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_backoff(Duration::from_millis(1), Duration::from_millis(8));
    ApiClient::new(config, Arc::new(tokens)).unwrap()
}

fn creations(fake: &FakeMarketplace) -> usize {
    fake.requests_to(SIGNING_KEY_PATH)
        .iter()
        .filter(|r| r.method == "POST")
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn eight_processes_with_no_key_create_exactly_one_and_sign_with_it() {
    let fake = FakeMarketplace::new();
    let db = TestDb::new().await;
    migrate(&db.pool).await.expect("migrate");
    let start = Arc::new(tokio::sync::Barrier::new(8));
    let mut finders = Vec::new();
    for _ in 0..8 {
        // A pool and an API client of its own for each, as eight processes have.
        let pool = PgPoolOptions::new()
            .max_connections(2)
            .connect(&db.url())
            .await
            .expect("connect");
        let keys = keys_of(pool, ring());
        let api = api(&fake).await;
        let start = start.clone();
        finders.push(tokio::spawn(async move {
            start.wait().await;
            let key = keys.signing_key(&api).await.expect("signing key");
            let jwe = key.jwe().to_owned();
            // The key found signs a Finances call that the fake verifies.
            let answer = api
                .with_signing_key(key)
                .send(ApiRequest::get(PAYOUTS_PATH))
                .await
                .expect("signed getPayouts");
            assert_eq!(answer.status(), 200);
            jwe
        }));
    }
    let mut jwes = Vec::new();
    for finder in finders {
        jwes.push(finder.await.expect("finder"));
    }
    assert_eq!(creations(&fake), 1, "createSigningKey calls");
    assert!(jwes.iter().all(|j| *j == jwes[0]), "one key for all");
    let keys = keys_of(db.pool.clone(), ring());
    let listed = keys.list().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].cipher, "ED25519");
    assert!(listed[0].expires > listed[0].created);
    // Found again: no new key.
    keys.signing_key(&api(&fake).await).await.unwrap();
    assert_eq!(creations(&fake), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_private_key_is_in_no_plaintext_column() {
    let fake = FakeMarketplace::new();
    let db = TestDb::new().await;
    migrate(&db.pool).await.expect("migrate");
    let api = api(&fake).await;
    let created = api.create_signing_key("ED25519").await.unwrap();
    let keys = keys_of(db.pool.clone(), ring());
    keys.save(&created).await.unwrap();
    let base64_der = created.private_key().to_owned();
    use base64::Engine as _;
    let der = base64::engine::general_purpose::STANDARD
        .decode(&base64_der)
        .unwrap();
    let hex: String = der.iter().map(|b| format!("{b:02x}")).collect();
    // The whole row as text (bytea as hex), and the ciphertext's bytes.
    let (rows, leaks): (i64, i64) = sqlx::query_as(
        "SELECT count(*),
                count(*) FILTER (WHERE position($1 IN t::text) > 0
                                    OR position($2 IN t::text) > 0
                                    OR position($3 IN t::text) > 0
                                    OR position($4::bytea IN t.private_key) > 0)
         FROM marketplace_signing_keys t",
    )
    .bind(&base64_der)
    .bind(&base64_der[..40]) // the first line of the PEM's body
    .bind(&hex)
    .bind(&der)
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!((rows, leaks), (1, 0));
    // The stored key is the one created: it signs a call the fake verifies.
    let key = keys.current().await.unwrap().expect("stored");
    assert_eq!(key.jwe(), created.info.jwe);
    api.with_signing_key(key)
        .send(ApiRequest::get(PAYOUTS_PATH))
        .await
        .expect("signed getPayouts");
    // Another keyring cannot read it.
    let other = keys_of(db.pool.clone(), Keyring::new(TokenKey::from_bytes([8; 32])));
    assert!(other.current().await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_within_thirty_days_of_its_expiry_is_replaced_and_kept_until_it_expires() {
    let fake = FakeMarketplace::new();
    let db = TestDb::new().await;
    migrate(&db.pool).await.expect("migrate");
    let api = api(&fake).await;
    let keys = keys_of(db.pool.clone(), ring());
    let first = keys.signing_key(&api).await.unwrap().jwe().to_owned();
    let expire_in = |days: i32| {
        sqlx::query(
            "UPDATE marketplace_signing_keys SET expires_at = now() + make_interval(days => $1)",
        )
        .bind(days)
    };
    expire_in(31).execute(&db.pool).await.unwrap();
    assert_eq!(keys.signing_key(&api).await.unwrap().jwe(), first, "kept");
    assert_eq!(creations(&fake), 1);
    expire_in(29).execute(&db.pool).await.unwrap();
    let second = keys.signing_key(&api).await.unwrap().jwe().to_owned();
    assert_ne!(second, first, "replaced");
    assert_eq!(creations(&fake), 2);
    let listed = keys.list().await.unwrap();
    assert_eq!(listed.len(), 2, "the old key is kept until it expires");
    assert_eq!(keys.signing_key(&api).await.unwrap().jwe(), second);
    // Once the old key has expired, the next creation forgets it.
    sqlx::query(
        "UPDATE marketplace_signing_keys SET expires_at = now() - interval '1 day'
         WHERE jwe = $1",
    )
    .bind(&first)
    .execute(&db.pool)
    .await
    .unwrap();
    let third = keys.rotate(&api).await.unwrap().jwe().to_owned();
    assert_eq!(creations(&fake), 3);
    let listed = keys.list().await.unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(keys.current().await.unwrap().unwrap().jwe(), third);
}

/// A key due for renewal still signs when createSigningKey fails: a backend starting then
/// can sign until the key expires, and the creation is tried again later, not at each call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_due_for_renewal_signs_while_its_replacement_cannot_be_created() {
    let fake = FakeMarketplace::new();
    let db = TestDb::new().await;
    migrate(&db.pool).await.expect("migrate");
    let api = api(&fake).await;
    let keys = keys_of(db.pool.clone(), ring());
    let first = keys.signing_key(&api).await.unwrap().jwe().to_owned();
    sqlx::query("UPDATE marketplace_signing_keys SET expires_at = now() + interval '10 days'")
        .execute(&db.pool)
        .await
        .unwrap();
    let outage = fake_marketplace::Fault::Status {
        status: 500,
        body: String::new(),
        headers: Vec::new(),
    };
    fake.fail_times(SIGNING_KEY_PATH, outage, 1000);
    let key = keys
        .signing_key(&api)
        .await
        .expect("the stored key, still valid");
    assert_eq!(key.jwe(), first);
    let tried = creations(&fake);
    assert!(tried > 1, "createSigningKey was tried: {tried}");
    // Later calls sign with it without asking eBay again.
    let again = keys.signing_key(&api).await.unwrap();
    assert_eq!((again.jwe(), creations(&fake)), (first.as_str(), tried));
    // Another process (no failure of its own yet) also signs with it.
    let other = keys_of(db.pool.clone(), ring());
    assert_eq!(other.signing_key(&api).await.unwrap().jwe(), first);
    // An expired key is no fallback: the failure is the answer.
    sqlx::query("UPDATE marketplace_signing_keys SET expires_at = now() - interval '1 second'")
        .execute(&db.pool)
        .await
        .unwrap();
    let fresh = keys_of(db.pool.clone(), ring());
    let error = fresh.signing_key(&api).await.unwrap_err();
    assert!(error.to_string().contains("500"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_key_rotation_re_encrypts_the_signing_keys() {
    let fake = FakeMarketplace::new();
    let db = TestDb::new().await;
    migrate(&db.pool).await.expect("migrate");
    let api = api(&fake).await;
    let old = keys_of(db.pool.clone(), ring());
    let jwe = old.signing_key(&api).await.unwrap().jwe().to_owned();
    let rotating = Keyring::with_previous(
        TokenKey::from_bytes([10; 32]),
        TokenKey::from_bytes([9; 32]),
    );
    let census = key_census(&db.pool, &rotating).await.unwrap();
    assert_eq!(
        (census.signing_keys.previous, census.under_previous()),
        (1, 1)
    );
    let done = rekey(&db.pool, &rotating).await.unwrap();
    assert_eq!(done.signing_keys, 1);
    assert_eq!(done.after.under_previous(), 0);
    // Readable under the new key alone, and no longer under the old one.
    let new = keys_of(
        db.pool.clone(),
        Keyring::new(TokenKey::from_bytes([10; 32])),
    );
    assert_eq!(new.signing_key(&api).await.unwrap().jwe(), jwe);
    assert!(old.current().await.is_err());
    assert_eq!(creations(&fake), 1);
}
