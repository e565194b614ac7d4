//! Pending consents in PostgreSQL (`marketplace_pending_consents`): saved by one store,
//! taken once by another (one `DELETE … RETURNING`, however many take at once), encrypted
//! under the tokens' keyring, long-expired ones swept; and completed through the blocking
//! store by the blocking client.

use crate::support;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use marketplace_client::aio::oauth::RefreshTokenStore as _;
use marketplace_client::oauth::{
    ConsentRequest, Endpoints, OAuthClient, OAuthConfig, OAuthError, ScopeSet,
};
use marketplace_client_postgres::{Keyring, PgRefreshTokenStore, TokenKey, migrate};
use support::pg::TestDb;

const APP: &str = "Seller-App-PRD-1234";

/// The application `app`'s configuration in production.
fn config(app: &str) -> OAuthConfig {
    OAuthConfig::new(Endpoints::production()).with_credentials(app, "PRD-secret")
}

/// A process's store of `app`'s refresh tokens on `pool`.
fn store(pool: sqlx::PgPool, keyring: Keyring, app: &str) -> PgRefreshTokenStore {
    PgRefreshTokenStore::from_config(pool, keyring, &config(app)).expect("a client id")
}

fn ring(n: u8) -> Keyring {
    Keyring::new(TokenKey::from_bytes([n; 32]))
}

async fn migrated() -> TestDb {
    let db = TestDb::new().await;
    migrate(&db.pool).await.expect("migrate");
    db
}

/// A second process's pool on the same database.
async fn other_pool(db: &TestDb) -> sqlx::PgPool {
    sqlx::PgPool::connect(&db.url())
        .await
        .expect("a second pool")
}

fn oauth_client() -> OAuthClient {
    let config = OAuthConfig::new(Endpoints::production())
        .with_credentials(APP, "PRD-secret")
        .with_redirect_uri("Seller-App-PRD-runame");
    OAuthClient::from_config(&config).expect("client")
}

fn request(client: &OAuthClient) -> ConsentRequest {
    client
        .consent_request(&ScopeSet::new([
            "https://api.ebay.com/oauth/api_scope/sell.inventory",
        ]))
        .expect("consent request")
        .with_account("seller-1")
}

async fn rows(db: &TestDb) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM marketplace_pending_consents")
        .fetch_one(&db.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_consent_saved_by_one_process_is_taken_once_by_another() {
    let db = migrated().await;
    let a = store(db.pool.clone(), ring(1), APP);
    let b = store(other_pool(&db).await, ring(1), APP);
    let client = oauth_client();
    let request = request(&client);
    a.save_consent(&request).await.unwrap();

    // Encrypted: neither the state nor the URL is in the table.
    let (ciphertext, account): (Vec<u8>, Option<String>) =
        sqlx::query_as("SELECT ciphertext, account FROM marketplace_pending_consents")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(account.as_deref(), Some("seller-1"));
    let state = request.state().secret().as_bytes();
    assert!(!ciphertext.windows(state.len()).any(|w| w == state));
    assert!(!ciphertext.windows(8).any(|w| w == b"https://"));

    // Another application's store does not see it.
    let other_app = store(db.pool.clone(), ring(1), "Other-App");
    assert!(
        other_app
            .take_consent(request.state())
            .await
            .unwrap()
            .is_none()
    );

    let taken = b
        .take_consent(request.state())
        .await
        .unwrap()
        .expect("pending");
    assert_eq!(taken.url(), request.url());
    assert_eq!(taken.state(), request.state());
    assert_eq!(taken.scopes(), request.scopes());
    assert_eq!(taken.account(), Some("seller-1"));
    let drift = taken
        .expires_at()
        .duration_since(request.expires_at())
        .or_else(|e| Ok::<_, ()>(e.duration()))
        .unwrap();
    assert!(drift < Duration::from_millis(1), "{drift:?}");
    assert_eq!(rows(&db).await, 0, "single use: the row is gone");
    for store in [&a, &b] {
        assert!(store.take_consent(request.state()).await.unwrap().is_none());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_many_processes_taking_one_state_at_once_one_gets_it() {
    let db = migrated().await;
    let client = oauth_client();
    let request = request(&client);
    store(db.pool.clone(), ring(1), APP)
        .save_consent(&request)
        .await
        .unwrap();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let store = store(other_pool(&db).await, ring(1), APP);
        let state = request.state().clone();
        tasks.spawn(async move { store.take_consent(&state).await.unwrap().is_some() });
    }
    let mut winners = 0;
    while let Some(won) = tasks.join_next().await {
        winners += usize::from(won.unwrap());
    }
    assert_eq!(winners, 1);
}

#[tokio::test]
async fn saves_sweep_consents_expired_a_day_ago() {
    let db = migrated().await;
    let store = store(db.pool.clone(), ring(1), APP);
    let client = oauth_client();
    let now = SystemTime::now();
    let long_gone = request(&client);
    let long_gone = ConsentRequest::restore(
        long_gone.url().as_str(),
        None,
        now - Duration::from_secs(2 * 86_400),
    )
    .unwrap();
    let just_expired = request(&client).with_ttl(Duration::ZERO);
    store.save_consent(&long_gone).await.unwrap();
    store.save_consent(&just_expired).await.unwrap();
    assert_eq!(
        rows(&db).await,
        1,
        "the consent expired two days ago is swept"
    );
    assert!(
        store
            .take_consent(long_gone.state())
            .await
            .unwrap()
            .is_none()
    );
    // One expired a moment ago is handed out (the completion refuses it as expired).
    let taken = store
        .take_consent(just_expired.state())
        .await
        .unwrap()
        .unwrap();
    assert!(taken.is_expired(SystemTime::now()));
}

#[tokio::test]
async fn a_consent_under_an_unknown_key_is_a_corrupt_store_error() {
    let db = migrated().await;
    let client = oauth_client();
    let request = request(&client);
    store(db.pool.clone(), ring(1), APP)
        .save_consent(&request)
        .await
        .unwrap();
    let err = store(db.pool.clone(), ring(2), APP)
        .take_consent(request.state())
        .await
        .unwrap_err();
    match &err {
        OAuthError::Store(e) => {
            assert!(e.is_corrupt(), "{e}");
            assert!(
                e.to_string().contains("marketplace_pending_consents"),
                "{e}"
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(!format!("{err:?}").contains(request.state().secret()));
}

#[test]
fn the_blocking_front_completes_a_consent_of_the_blocking_store() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let db = runtime.block_on(migrated());
    let store = marketplace_client_postgres::blocking::TokenStore::connect(&db.url(), ring(1))
        .unwrap()
        .refresh_tokens(&config(APP))
        .expect("a client id");
    let store: Arc<dyn marketplace_client::oauth::RefreshTokenStore> = Arc::new(store);
    let client = oauth_client();
    let request = request(&client);
    store.save_consent(&request).unwrap();
    let redirect = format!(
        "https://backend.example/callback?state={}&code=v%5E1.1%23i%5E1",
        request.state().secret()
    );
    let (pending, code) = client.complete_consent(&*store, &redirect).unwrap();
    assert_eq!(pending.account(), Some("seller-1"));
    assert_eq!(code.secret(), "v^1.1#i^1");
    let replay = client.complete_consent(&*store, &redirect);
    assert!(
        matches!(replay, Err(OAuthError::ConsentNotPending)),
        "{replay:?}"
    );
    let forged = client.complete_consent(&*store, "?state=forged&code=x");
    assert!(matches!(forged, Err(OAuthError::ConsentNotPending)));
    drop(store);
    runtime.block_on(async { drop(db) });
}

/// A flood of consent requests keeps the table bounded: an account keeps its newest
/// `MAX_PENDING_PER_ACCOUNT`, an application its newest `MAX_PENDING` (saved from several
/// processes at once), and another application's consents are not touched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_consents_keeps_the_table_bounded() {
    let db = migrated().await;
    let client = Arc::new(oauth_client());
    let other_app = store(db.pool.clone(), ring(1), "Other-App-PRD-1");
    let theirs = request(&client);
    other_app.save_consent(&theirs).await.unwrap();

    let store = store(db.pool.clone(), ring(1), APP);
    let mine: Vec<ConsentRequest> = (0..3 * ConsentRequest::MAX_PENDING_PER_ACCOUNT)
        .map(|_| request(&client))
        .collect();
    for r in &mine {
        store.save_consent(r).await.unwrap();
    }
    let of_seller: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM marketplace_pending_consents \
         WHERE client_id = $1 AND account = 'seller-1'",
    )
    .bind(APP)
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(
        of_seller as usize,
        ConsentRequest::MAX_PENDING_PER_ACCOUNT,
        "per account"
    );
    let newest = mine.last().unwrap();
    assert!(store.take_consent(mine[0].state()).await.unwrap().is_none());
    assert!(store.take_consent(newest.state()).await.unwrap().is_some());

    // Distinct accounts from four processes at once: the application's newest are kept.
    let saved = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut tasks = Vec::new();
    for p in 0..4 {
        let store = self::store(other_pool(&db).await, ring(1), APP);
        let (client, saved) = (client.clone(), saved.clone());
        tasks.push(tokio::spawn(async move {
            for i in 0..ConsentRequest::MAX_PENDING / 4 + 10 {
                let r = client
                    .consent_request(&ScopeSet::default())
                    .unwrap()
                    .with_account(format!("flooder-{p}-{i}"));
                store.save_consent(&r).await.unwrap();
                saved.lock().unwrap().push(r);
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    let of_app: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM marketplace_pending_consents WHERE client_id = $1",
    )
    .bind(APP)
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(of_app as usize, ConsentRequest::MAX_PENDING, "in all");
    // The last one saved is there; seller-1's (the oldest) are gone.
    let last = saved.lock().unwrap().last().unwrap().clone();
    assert!(store.take_consent(last.state()).await.unwrap().is_some());
    assert!(
        store
            .take_consent(mine[3 * ConsentRequest::MAX_PENDING_PER_ACCOUNT - 2].state())
            .await
            .unwrap()
            .is_none()
    );
    // Another application's consent is its own.
    assert!(
        other_app
            .take_consent(theirs.state())
            .await
            .unwrap()
            .is_some()
    );
}
