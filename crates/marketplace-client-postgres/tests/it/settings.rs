//! No `Duration` setting of this crate panics: each one set to `Duration::MAX` (and to zero
//! where zero means something) and then used, against a real PostgreSQL (see
//! `support/pg.rs`) and the fake marketplace's token endpoint.

use crate::support;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use fake_marketplace::FakeMarketplace;
use marketplace_client::aio::oauth::{AccessTokenSource, ApplicationTokenProvider};
use marketplace_client::oauth::{RefreshToken, ScopeSet, StoredRefreshToken};
use marketplace_client_postgres::{PgRefreshTokenStore, PgTokenCache, migrate};
use support::fleet::{client, endpoints, keyring};
use support::pg::TestDb;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_shared_cache_takes_any_db_timeout_and_lease() {
    let db = TestDb::new().await;
    migrate(&db.pool).await.unwrap();
    for (what, timeout, lease, shared) in [
        ("MAX, MAX", Duration::MAX, Duration::MAX, true),
        ("MAX, zero", Duration::MAX, Duration::ZERO, true),
        // Zero: a statement is given no time, so a call goes on without the cache, unless the
        // statement finished within its first poll (tokio's timeout polls before it looks at
        // the clock: PostgreSQL can answer that fast on a loaded machine). Either way no
        // panic, and a token.
        ("zero, MAX", Duration::ZERO, Duration::MAX, false),
    ] {
        // A fake of its own: another environment, so another row of the cache.
        let fake = FakeMarketplace::new();
        let provider = || {
            ApplicationTokenProvider::new(client(&fake)).with_shared_cache(Arc::new(
                PgTokenCache::new(db.pool.clone(), keyring())
                    .with_db_timeout(timeout)
                    .with_lease(lease),
            ))
        };
        let first = provider().access_token().await;
        assert!(first.is_ok(), "{what}: {first:?}");
        let second = provider().access_token().await;
        assert!(second.is_ok(), "{what}: {second:?}");
        let requests = fake.token_requests().len();
        if shared {
            assert_eq!(
                requests, 1,
                "{what}: the second process took the shared token"
            );
        } else {
            assert!(
                (1..=2).contains(&requests),
                "{what}: {requests} token requests for two processes"
            );
        }
    }
}

#[tokio::test]
async fn the_refresh_token_store_takes_any_timeout() {
    let db = TestDb::new().await;
    migrate(&db.pool).await.unwrap();
    let fake = FakeMarketplace::new();
    let store = PgRefreshTokenStore::from_config(
        db.pool.clone(),
        keyring(),
        &marketplace_client::oauth::OAuthConfig::new(endpoints(&fake))
            .with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap()
    .with_timeout(Duration::MAX);
    use marketplace_client::aio::oauth::RefreshTokenStore as _;
    let record = StoredRefreshToken {
        refresh_token: RefreshToken::new("rt-1"),
        scopes: ScopeSet::new([fake.scope("")]),
        expires_at: Some(SystemTime::now() + Duration::from_secs(86_400)),
    };
    store.save("seller-1", &record).await.unwrap();
    let loaded = store.load("seller-1").await.unwrap().expect("stored");
    assert_eq!(loaded.refresh_token.secret(), "rt-1");
    assert_eq!(store.accounts().await.unwrap().len(), 1);
}

#[test]
fn the_blocking_store_takes_any_db_timeout_and_lease() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let db = runtime.block_on(TestDb::new());
    let fake = FakeMarketplace::new();
    let store = marketplace_client_postgres::blocking::TokenStore::connect(&db.url(), keyring())
        .unwrap()
        .with_db_timeout(Duration::MAX)
        .with_lease(Duration::MAX);
    store.migrate().expect("migrated");
    let provider = || {
        marketplace_client::oauth::ApplicationTokenProvider::new(
            marketplace_client::oauth::OAuthClient::from_config(
                &marketplace_client::oauth::OAuthConfig::new(endpoints(&fake))
                    .with_credentials(fake.client_id(), fake.client_secret()),
            )
            .unwrap(),
        )
        .with_shared_cache(store.token_cache())
    };
    use marketplace_client::oauth::AccessTokenSource as _;
    provider().access_token().expect("a token");
    provider().access_token().expect("the shared token");
    assert_eq!(fake.token_requests().len(), 1);
    drop(store);
    drop(db);
}
