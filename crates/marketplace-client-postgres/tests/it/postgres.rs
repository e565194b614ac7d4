//! The token store against a real PostgreSQL (see `support/pg.rs`): the server at
//! `DATABASE_URL`, or a throwaway one started by the tests.

use crate::support;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use marketplace_client_postgres::{
    CacheKey, DecryptFailure, Error, Keyring, NewCachedToken, NewRefreshToken, RefreshKey,
    RefreshTokens, TokenCache, TokenKey, db_now, migrate,
};
use support::pg::TestDb;

const ENV: &str = "production";
const APP: &str = "Seller-App-PRD-1234";

fn ring(n: u8) -> Keyring {
    Keyring::new(TokenKey::from_bytes([n; 32]))
}

fn key(account: &str) -> RefreshKey {
    RefreshKey::new(ENV, APP, account)
}

fn refresh<'a>(token: &'a str, expires_at: Option<SystemTime>) -> NewRefreshToken<'a> {
    NewRefreshToken {
        token,
        scopes: "https://api.ebay.com/oauth/api_scope/sell.inventory",
        expires_at,
    }
}

async fn migrated() -> TestDb {
    let db = TestDb::new().await;
    migrate(&db.pool).await.expect("migrate");
    db
}

fn at(secs: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(secs)
}

#[tokio::test]
async fn migrations_run_twice() {
    let db = TestDb::new().await;
    migrate(&db.pool).await.expect("first migration");
    migrate(&db.pool).await.expect("second migration");
    let tables: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_tables WHERE tablename IN \
         ('marketplace_refresh_tokens', 'marketplace_token_cache')",
    )
    .fetch_one(&db.pool)
    .await
    .unwrap();
    assert_eq!(tables, 2);
    let applied: i64 = sqlx::query_scalar("SELECT count(*) FROM marketplace_client_migrations")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    let files = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "sql")
        })
        .count();
    assert_eq!(applied as usize, files, "one record per migration file");
    let sqlx_table: bool = sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
        .fetch_one(&db.pool)
        .await
        .unwrap();
    assert!(
        !sqlx_table,
        "sqlx's default table is the application's to create"
    );
}

/// A backend's own migrations (`tests/app_migrations`), run by its own sqlx migrator into
/// sqlx's default table, as an application using this crate does (read from the directory:
/// what `sqlx::migrate!("./tests/app_migrations")` embeds, without compiling sqlx's
/// procedural macros into the workspace's test build).
async fn app_migrator() -> sqlx::migrate::Migrator {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/app_migrations");
    sqlx::migrate::Migrator::new(dir.as_path()).await.unwrap()
}

/// The application's table and the store's work: an item written and read back, a refresh
/// token saved and loaded.
async fn both_schemas_work(db: &TestDb, round: &str) {
    sqlx::query("INSERT INTO app_items (name, price_cents) VALUES ($1, 100)")
        .bind(round)
        .execute(&db.pool)
        .await
        .unwrap_or_else(|e| panic!("{round}: the application's table: {e}"));
    let store = RefreshTokens::new(db.pool.clone(), ring(1));
    store
        .save(&key(round), refresh("token-of-the-round", None))
        .await
        .unwrap_or_else(|e| panic!("{round}: the store's table: {e}"));
    assert!(store.load(&key(round)).await.unwrap().is_some(), "{round}");
}

#[tokio::test]
async fn the_application_s_sqlx_migrations_and_the_store_s_live_side_by_side() {
    // The application first, then the store, then both again.
    let db = TestDb::new().await;
    app_migrator()
        .await
        .run(&db.pool)
        .await
        .expect("the application migrates");
    migrate(&db.pool)
        .await
        .expect("the store migrates after the application");
    both_schemas_work(&db, "app-first").await;
    app_migrator()
        .await
        .run(&db.pool)
        .await
        .expect("the application migrates again");
    migrate(&db.pool).await.expect("the store migrates again");
    both_schemas_work(&db, "app-first-again").await;

    // The store first, then the application, then both again.
    let db = TestDb::new().await;
    migrate(&db.pool).await.expect("the store migrates first");
    app_migrator()
        .await
        .run(&db.pool)
        .await
        .expect("the application migrates after the store");
    both_schemas_work(&db, "store-first").await;
    migrate(&db.pool).await.expect("the store migrates again");
    app_migrator()
        .await
        .run(&db.pool)
        .await
        .expect("the application migrates again");
    both_schemas_work(&db, "store-first-again").await;
    let applied: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(
        applied,
        [20240101000000, 20240201000000],
        "sqlx's table holds the application's migrations only"
    );
}

/// A deployment whose store an earlier version migrated into sqlx's default table (and whose
/// application's next `sqlx::migrate!` then failed): the store takes its migration over, the
/// application migrates again, and nothing stored is lost.
#[tokio::test]
async fn a_store_migrated_into_sqlx_s_table_by_an_earlier_version_upgrades() {
    let db = TestDb::new().await;
    // The earlier version: the store's first migration, run by sqlx's own migrator.
    let earlier = std::env::temp_dir().join(format!(
        "marketplace-earlier-migrations-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&earlier).unwrap();
    let first = "20250101000000_token_store.sql";
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("migrations")
            .join(first),
        earlier.join(first),
    )
    .unwrap();
    let earlier_migrator = sqlx::migrate::Migrator::new(earlier.as_path())
        .await
        .unwrap();
    std::fs::remove_dir_all(&earlier).unwrap();
    earlier_migrator
        .run(&db.pool)
        .await
        .expect("the earlier version migrates");
    // A token the earlier version saved: its row as that version wrote it (this version's
    // save writes columns the earlier schema lacks), encrypted as any version does (the row's
    // identity is the associated data, not the database).
    let elsewhere = migrated().await;
    RefreshTokens::new(elsewhere.pool.clone(), ring(1))
        .save(
            &key("kept"),
            refresh("token-saved-before-the-upgrade", None),
        )
        .await
        .unwrap();
    let (ciphertext, key_id): (Vec<u8>, String) =
        sqlx::query_as("SELECT ciphertext, key_id FROM marketplace_refresh_tokens")
            .fetch_one(&elsewhere.pool)
            .await
            .unwrap();
    sqlx::query(
        "INSERT INTO marketplace_refresh_tokens \
           (environment, client_id, account, ciphertext, key_id, scopes) \
         VALUES ($1, $2, 'kept', $3, $4, '')",
    )
    .bind(ENV)
    .bind(APP)
    .bind(ciphertext)
    .bind(key_id)
    .execute(&db.pool)
    .await
    .unwrap();
    let store = RefreshTokens::new(db.pool.clone(), ring(1));

    migrate(&db.pool)
        .await
        .expect("this version migrates over the earlier one");
    app_migrator()
        .await
        .run(&db.pool)
        .await
        .expect("the application's migrations run after the upgrade");
    migrate(&db.pool).await.expect("and the store's again");
    both_schemas_work(&db, "upgraded").await;
    let kept = store.load(&key("kept")).await.unwrap().expect("kept");
    assert_eq!(kept.token.expose(), "token-saved-before-the-upgrade");
}

#[tokio::test]
async fn save_load_delete_roundtrip() {
    let db = migrated().await;
    let store = RefreshTokens::new(db.pool.clone(), ring(1));
    let expiry = UNIX_EPOCH + Duration::new(1_900_000_000, 123_456_000);
    assert!(store.load(&key("alice")).await.unwrap().is_none());

    let version = store
        .save(&key("alice"), refresh("v^1.1#alice-refresh", Some(expiry)))
        .await
        .unwrap();
    assert_eq!(version, 1);
    let loaded = store.load(&key("alice")).await.unwrap().expect("saved");
    assert_eq!(loaded.token.expose(), "v^1.1#alice-refresh");
    assert_eq!(
        loaded.scopes,
        "https://api.ebay.com/oauth/api_scope/sell.inventory"
    );
    assert_eq!(loaded.expires_at, Some(expiry));
    assert!(!loaded.needs_consent);
    assert_eq!(loaded.version, 1);
    assert!(!format!("{loaded:?}").contains("alice-refresh"));

    // Another environment, application or account is another row.
    for other in [
        RefreshKey::new("sandbox", APP, "alice"),
        RefreshKey::new(ENV, "Other-App", "alice"),
        key("bob"),
    ] {
        assert!(store.load(&other).await.unwrap().is_none(), "{other:?}");
    }

    assert!(store.delete(&key("alice")).await.unwrap());
    assert!(store.load(&key("alice")).await.unwrap().is_none());
    assert!(!store.delete(&key("alice")).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_saves_are_versioned_and_the_last_wins() {
    let db = migrated().await;
    let store = RefreshTokens::new(db.pool.clone(), ring(1));
    let save = |token: &'static str| {
        let store = store.clone();
        tokio::spawn(async move { store.save(&key("alice"), refresh(token, None)).await })
    };
    let (a, b) = (save("token-from-process-a"), save("token-from-process-b"));
    let (a, b) = (a.await.unwrap().unwrap(), b.await.unwrap().unwrap());
    let mut versions = [a, b];
    versions.sort();
    assert_eq!(versions, [1, 2]);
    let last = if a == 2 {
        "token-from-process-a"
    } else {
        "token-from-process-b"
    };
    let loaded = store.load(&key("alice")).await.unwrap().unwrap();
    assert_eq!(loaded.version, 2);
    assert_eq!(loaded.token.expose(), last);
}

#[tokio::test]
async fn replace_is_a_compare_and_swap() {
    let db = migrated().await;
    let store = RefreshTokens::new(db.pool.clone(), ring(1));
    store
        .save(
            &key("alice"),
            refresh("current-token", Some(at(2_000_000_000))),
        )
        .await
        .unwrap();

    // A stale expectation changes nothing.
    let replaced = store
        .replace(&key("alice"), "stale-token", refresh("rotated-token", None))
        .await
        .unwrap();
    assert!(!replaced);
    let loaded = store.load(&key("alice")).await.unwrap().unwrap();
    assert_eq!(loaded.token.expose(), "current-token");
    assert_eq!(loaded.version, 1);
    assert_eq!(loaded.expires_at, Some(at(2_000_000_000)));

    // No stored token: nothing is created.
    assert!(
        !store
            .replace(&key("bob"), "current-token", refresh("rotated-token", None))
            .await
            .unwrap()
    );
    assert!(store.load(&key("bob")).await.unwrap().is_none());

    // The right expectation swaps.
    assert!(
        store
            .replace(
                &key("alice"),
                "current-token",
                refresh("rotated-token", None)
            )
            .await
            .unwrap()
    );
    let loaded = store.load(&key("alice")).await.unwrap().unwrap();
    assert_eq!(loaded.token.expose(), "rotated-token");
    assert_eq!(loaded.version, 2);
    assert_eq!(loaded.expires_at, None);
}

#[tokio::test]
async fn needs_consent_marks_only_the_refused_token() {
    let db = migrated().await;
    let store = RefreshTokens::new(db.pool.clone(), ring(1));
    assert!(!store.needs_consent(&key("alice")).await.unwrap());
    assert!(
        !store
            .mark_needs_consent(&key("alice"), "refused")
            .await
            .unwrap()
    );
    store
        .save(&key("alice"), refresh("newer-consent", None))
        .await
        .unwrap();
    // The refused token is no longer the stored one: a newer consent is not marked.
    assert!(
        !store
            .mark_needs_consent(&key("alice"), "refused")
            .await
            .unwrap()
    );
    assert!(!store.needs_consent(&key("alice")).await.unwrap());

    assert!(
        store
            .mark_needs_consent(&key("alice"), "newer-consent")
            .await
            .unwrap()
    );
    assert!(store.needs_consent(&key("alice")).await.unwrap());
    let loaded = store.load(&key("alice")).await.unwrap().unwrap();
    assert!(loaded.needs_consent);
    assert_eq!(loaded.version, 2);

    // A new consent clears the mark.
    store
        .save(&key("alice"), refresh("after-consent", None))
        .await
        .unwrap();
    assert!(!store.needs_consent(&key("alice")).await.unwrap());
}

#[tokio::test]
async fn list_shows_the_soonest_expiry_first() {
    let db = migrated().await;
    let store = RefreshTokens::new(db.pool.clone(), ring(1));
    store
        .save(&key("no-expiry"), refresh("t1", None))
        .await
        .unwrap();
    store
        .save(&key("in-90-days"), refresh("t2", Some(at(2_000_000_000))))
        .await
        .unwrap();
    store
        .save(&key("in-5-days"), refresh("t3", Some(at(1_900_000_000))))
        .await
        .unwrap();
    store
        .save(
            &RefreshKey::new(ENV, "Other-App", "elsewhere"),
            refresh("t4", Some(at(1_000))),
        )
        .await
        .unwrap();
    store
        .mark_needs_consent(&key("in-90-days"), "t2")
        .await
        .unwrap();

    let listed = store.list(ENV, APP).await.unwrap();
    let accounts: Vec<&str> = listed.iter().map(|a| a.account.as_str()).collect();
    assert_eq!(accounts, ["in-5-days", "in-90-days", "no-expiry"]);
    assert_eq!(listed[0].expires_at, Some(at(1_900_000_000)));
    assert_eq!(listed[2].expires_at, None);
    assert!(listed[1].needs_consent);
    assert!(!listed[0].needs_consent);
}

#[tokio::test]
async fn a_ciphertext_moved_to_another_row_does_not_decrypt() {
    let db = migrated().await;
    let store = RefreshTokens::new(db.pool.clone(), ring(1));
    store
        .save(&key("alice"), refresh("alice-secret-token", None))
        .await
        .unwrap();
    store
        .save(&key("mallory"), refresh("mallory-own-token", None))
        .await
        .unwrap();
    let moved = sqlx::query(
        "UPDATE marketplace_refresh_tokens AS m SET ciphertext = a.ciphertext, key_id = a.key_id \
         FROM marketplace_refresh_tokens AS a \
         WHERE a.account = 'alice' AND m.account = 'mallory'",
    )
    .execute(&db.pool)
    .await
    .unwrap();
    assert_eq!(moved.rows_affected(), 1);

    let err = store.load(&key("mallory")).await.unwrap_err();
    assert!(
        matches!(
            &err,
            Error::Decrypt {
                reason: DecryptFailure::Authentication,
                ..
            }
        ),
        "{err:?}"
    );
    let message = err.to_string();
    assert!(message.contains("marketplace_refresh_tokens"), "{message}");
    assert!(message.contains("\"mallory\""), "{message}");
    assert!(message.contains(APP), "{message}");
    assert!(!message.contains("secret-token"), "{message}");
    assert!(!format!("{err:?}").contains("secret-token"));
    // The original row still reads.
    let alice = store.load(&key("alice")).await.unwrap().unwrap();
    assert_eq!(alice.token.expose(), "alice-secret-token");

    // The same for the cache: a token moved to another subject.
    let cache = TokenCache::new(db.pool.clone(), ring(1));
    let scopes_a = CacheKey::application(ENV, APP, "scope-a");
    let scopes_b = CacheKey::application(ENV, APP, "scope-b");
    for (k, token) in [(&scopes_a, "app-token-a"), (&scopes_b, "app-token-b")] {
        let lease = cache
            .try_lease(k, "holder", Duration::from_secs(30))
            .await
            .unwrap()
            .unwrap();
        assert!(
            cache
                .publish(k, &lease, cached(token, at(2_000_000_000)))
                .await
                .unwrap()
        );
    }
    sqlx::query(
        "UPDATE marketplace_token_cache AS m SET ciphertext = a.ciphertext \
         FROM marketplace_token_cache AS a WHERE a.subject = 'scope-a' AND m.subject = 'scope-b'",
    )
    .execute(&db.pool)
    .await
    .unwrap();
    let err = cache.read(&scopes_b).await.unwrap_err();
    let message = err.to_string();
    assert!(message.contains("marketplace_token_cache"), "{message}");
    assert!(message.contains("\"scope-b\""), "{message}");
    assert!(!message.contains("app-token"), "{message}");
}

fn cached(token: &str, expires_at: SystemTime) -> NewCachedToken<'_> {
    NewCachedToken {
        token,
        token_type: "Bearer",
        expires_at,
        renew_at: expires_at - Duration::from_secs(300),
        renewed_after_refusal: false,
    }
}

#[tokio::test]
async fn no_plaintext_token_in_pg_dump() {
    let db = migrated().await;
    let store = RefreshTokens::new(db.pool.clone(), ring(1));
    let cache = TokenCache::new(db.pool.clone(), ring(1));
    let refresh_token = "v^1.1#i^1#r^1#REFRESH-PLAINTEXT-MARKER";
    let access_token = "v^1.1#i^1#p^3#ACCESS-PLAINTEXT-MARKER";
    store
        .save(&key("dump-account"), refresh(refresh_token, None))
        .await
        .unwrap();
    let app = CacheKey::application(ENV, APP, "dump-scope");
    let lease = cache
        .try_lease(&app, "dumper", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    assert!(
        cache
            .publish(&app, &lease, cached(access_token, at(2_000_000_000)))
            .await
            .unwrap()
    );

    let dump = db.pg_dump();
    assert!(!dump.is_empty());
    assert!(dump.contains("marketplace_refresh_tokens"));
    assert!(dump.contains("marketplace_token_cache"));
    // The rows are in the dump (so the absence below is not that of the data)...
    assert!(dump.contains("dump-account"));
    assert!(dump.contains("dump-scope"));
    // ...but not the tokens, nor any recognizable part of them.
    for marker in [
        refresh_token,
        access_token,
        "PLAINTEXT-MARKER",
        "REFRESH-PLAINTEXT",
    ] {
        assert!(!dump.contains(marker), "the dump holds {marker:?}");
    }
}

#[tokio::test]
async fn key_rotation_reads_with_the_previous_key_and_rewrites_under_the_new() {
    let db = migrated().await;
    let key_a = TokenKey::from_bytes([0xA; 32]);
    let key_b = TokenKey::from_bytes([0xB; 32]);
    let stored_key_id = || async {
        sqlx::query_scalar::<_, String>(
            "SELECT key_id FROM marketplace_refresh_tokens WHERE account = 'alice'",
        )
        .fetch_one(&db.pool)
        .await
        .unwrap()
    };

    let under_a = RefreshTokens::new(db.pool.clone(), Keyring::new(key_a.clone()));
    under_a
        .save(&key("alice"), refresh("token-under-a", None))
        .await
        .unwrap();
    assert_eq!(stored_key_id().await, key_a.id());

    // B alone does not know A's rows, and says which key they need.
    let only_b = RefreshTokens::new(db.pool.clone(), Keyring::new(key_b.clone()));
    let err = only_b.load(&key("alice")).await.unwrap_err();
    assert!(
        matches!(&err, Error::Decrypt { reason: DecryptFailure::UnknownKey(id), .. } if *id == key_a.id()),
        "{err:?}"
    );

    let rotating = RefreshTokens::new(
        db.pool.clone(),
        Keyring::with_previous(key_b.clone(), key_a.clone()),
    );
    let loaded = rotating.load(&key("alice")).await.unwrap().unwrap();
    assert_eq!(loaded.token.expose(), "token-under-a");
    rotating
        .save(&key("alice"), refresh("token-under-b", None))
        .await
        .unwrap();
    assert_eq!(stored_key_id().await, key_b.id());
    assert_ne!(key_a.id(), key_b.id());

    let loaded = only_b.load(&key("alice")).await.unwrap().unwrap();
    assert_eq!(loaded.token.expose(), "token-under-b");
    assert!(under_a.load(&key("alice")).await.is_err());
}

/// A refresh token is written only at consent and rotation: one that is only ever read would
/// stay under the previous key for good. Read under the previous key, it is re-encrypted under
/// the current one, so the previous key can be dropped once every row has been read.
#[tokio::test]
async fn a_row_read_under_the_previous_key_is_re_encrypted_under_the_current_one() {
    let db = migrated().await;
    let key_a = TokenKey::from_bytes([0xA; 32]);
    let key_b = TokenKey::from_bytes([0xB; 32]);
    let under_a = RefreshTokens::new(db.pool.clone(), Keyring::new(key_a.clone()));
    let expiry = at(1_900_000_000);
    let version = under_a
        .save(&key("alice"), refresh("token-read-only", Some(expiry)))
        .await
        .unwrap();

    let rotating = RefreshTokens::new(
        db.pool.clone(),
        Keyring::with_previous(key_b.clone(), key_a.clone()),
    );
    let loaded = rotating.load(&key("alice")).await.unwrap().unwrap();
    assert_eq!(loaded.token.expose(), "token-read-only");

    let stored_key_id: String =
        sqlx::query_scalar("SELECT key_id FROM marketplace_refresh_tokens WHERE account = 'alice'")
            .fetch_one(&db.pool)
            .await
            .unwrap();
    assert_eq!(
        stored_key_id,
        key_b.id(),
        "the row read under the previous key is now under the current one"
    );
    // The previous key dropped: the row still reads, unchanged.
    let only_b = RefreshTokens::new(db.pool.clone(), Keyring::new(key_b));
    let after = only_b
        .load(&key("alice"))
        .await
        .expect("readable under the current key alone")
        .unwrap();
    assert_eq!(after.token.expose(), "token-read-only");
    assert_eq!(after.expires_at, Some(expiry));
    assert_eq!(after.version, version, "re-encryption is not a new token");
}

/// `key_census` counts the tokens of both tables by key; `rekey` re-encrypts those under the
/// previous key, leaves those it cannot read, and then none is left under the previous key.
#[tokio::test]
async fn rekey_re_encrypts_every_token_under_the_previous_key_and_counts_what_is_left() {
    use marketplace_client_postgres::{KeyUse, key_census, rekey};
    let db = migrated().await;
    let (a, b, c) = (
        TokenKey::from_bytes([0xA; 32]),
        TokenKey::from_bytes([0xB; 32]),
        TokenKey::from_bytes([0xC; 32]),
    );
    let under = |k: &TokenKey| RefreshTokens::new(db.pool.clone(), Keyring::new(k.clone()));
    under(&a)
        .save(&key("alice"), refresh("alice-token", None))
        .await
        .unwrap();
    under(&b)
        .save(&key("bob"), refresh("bob-token", None))
        .await
        .unwrap();
    under(&c)
        .save(&key("carol"), refresh("carol-token", None))
        .await
        .unwrap();
    let scoped = CacheKey::user_for_scopes(ENV, APP, "alice", "scope-b scope-a");
    let cache_a = TokenCache::new(db.pool.clone(), Keyring::new(a.clone()));
    let lease = cache_a
        .try_lease(&scoped, "holder", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    assert!(
        cache_a
            .publish(&scoped, &lease, cached("alice-access", at(2_000_000_000)))
            .await
            .unwrap()
    );

    let rotating = Keyring::with_previous(b.clone(), a.clone());
    let census = key_census(&db.pool, &rotating).await.unwrap();
    assert!(census.rotating);
    assert_eq!(
        census.refresh_tokens,
        KeyUse {
            current: 1,
            previous: 1,
            unknown: 1
        }
    );
    assert_eq!(census.cached_tokens.previous, 1);
    assert_eq!(census.under_previous(), 2);

    let done = rekey(&db.pool, &rotating).await.unwrap();
    assert_eq!((done.refresh_tokens, done.cached_tokens), (1, 1));
    assert_eq!(done.after.under_previous(), 0);
    assert_eq!(
        done.after.refresh_tokens.unknown, 1,
        "carol's key is not held"
    );
    assert_eq!(done.after.refresh_tokens.current, 2);

    // The previous key dropped, everything it held reads under the current one.
    let alice = under(&b).load(&key("alice")).await.unwrap().unwrap();
    assert_eq!(alice.token.expose(), "alice-token");
    let row = TokenCache::new(db.pool.clone(), Keyring::new(b.clone()))
        .read(&scoped)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.token.unwrap().expose(), "alice-access");
    // A scoped token's scope set is part of its row's identity: moved to the account's own
    // row, it does not decrypt.
    sqlx::query(
        "INSERT INTO marketplace_token_cache \
           (environment, client_id, kind, subject, scopes, ciphertext, key_id) \
         SELECT environment, client_id, kind, subject, '', ciphertext, key_id \
         FROM marketplace_token_cache WHERE subject = 'alice' AND scopes <> ''",
    )
    .execute(&db.pool)
    .await
    .unwrap();
    let err = TokenCache::new(db.pool.clone(), Keyring::new(b))
        .read(&CacheKey::user(ENV, APP, "alice"))
        .await
        .unwrap_err();
    assert!(matches!(err, Error::Decrypt { .. }), "{err:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn racing_holders_get_exactly_one_lease() {
    let db = migrated().await;
    let cache = TokenCache::new(db.pool.clone(), ring(1));
    let app = CacheKey::application(ENV, APP, "https://api.ebay.com/oauth/api_scope");
    let mut tasks = Vec::new();
    for i in 0..8 {
        let cache = cache.clone();
        let app = app.clone();
        tasks.push(tokio::spawn(async move {
            cache
                .try_lease(&app, &format!("holder-{i}"), Duration::from_secs(30))
                .await
        }));
    }
    let mut granted = Vec::new();
    for task in tasks {
        if let Some(lease) = task.await.unwrap().unwrap() {
            granted.push(lease);
        }
    }
    assert_eq!(granted.len(), 1, "{granted:?}");
    assert_eq!(granted[0].fence(), 1);
    let row = cache.read(&app).await.unwrap().unwrap();
    assert_eq!(row.lease_holder.as_deref(), Some(granted[0].holder()));
    assert_eq!(row.fence, 1);
    assert!(row.token.is_none());
}

#[tokio::test]
async fn a_stale_leader_cannot_publish_over_its_successor() {
    let db = migrated().await;
    let cache = TokenCache::new(db.pool.clone(), ring(1));
    let app = CacheKey::application(ENV, APP, "scope");

    let before = db_now(&db.pool).await.unwrap();
    let old = cache
        .try_lease(&app, "leader-a", Duration::from_secs(1))
        .await
        .unwrap()
        .expect("first lease");
    let ahead = old.until().duration_since(before).unwrap();
    assert!(
        ahead > Duration::from_millis(500) && ahead < Duration::from_secs(5),
        "{ahead:?}"
    );
    assert!(
        cache
            .try_lease(&app, "leader-b", Duration::from_secs(1))
            .await
            .unwrap()
            .is_none(),
        "granted while held"
    );

    tokio::time::sleep(Duration::from_millis(1300)).await;
    let new = cache
        .try_lease(&app, "leader-b", Duration::from_secs(30))
        .await
        .unwrap()
        .expect("the lease ran out");
    assert!(new.fence() > old.fence());

    // The stale leader's write touches nothing.
    assert!(
        !cache
            .publish(&app, &old, cached("stale-token", at(2_000_000_000)))
            .await
            .unwrap()
    );
    let row = cache.read(&app).await.unwrap().unwrap();
    assert!(row.token.is_none());
    assert_eq!(row.lease_holder.as_deref(), Some("leader-b"));
    assert!(!cache.release(&app, &old).await.unwrap());
    assert!(
        !cache
            .record_failure(&app, &old, at(2_000_000_000), "stale")
            .await
            .unwrap()
    );

    let expires = at(2_000_000_000);
    assert!(
        cache
            .publish(&app, &new, cached("fresh-token", expires))
            .await
            .unwrap()
    );
    let row = cache.read(&app).await.unwrap().unwrap();
    assert_eq!(row.token.as_ref().map(|t| t.expose()), Some("fresh-token"));
    assert_eq!(row.token_type.as_deref(), Some("Bearer"));
    assert_eq!(row.expires_at, Some(expires));
    assert_eq!(row.renew_at, Some(expires - Duration::from_secs(300)));
    assert_eq!(row.lease_holder, None);
    assert!(row.retry_not_before.is_none());
    // A published lease is used up.
    assert!(
        !cache
            .publish(&app, &new, cached("again", expires))
            .await
            .unwrap()
    );
    // With the lease ended, the next renewal can be leased at once.
    let next = cache
        .try_lease(&app, "leader-c", Duration::from_secs(30))
        .await
        .unwrap()
        .expect("free after publish");
    assert_eq!(next.fence(), new.fence() + 1);
    assert!(cache.release(&app, &next).await.unwrap());
    assert!(
        cache
            .try_lease(&app, "leader-d", Duration::from_secs(30))
            .await
            .unwrap()
            .is_some(),
        "free after release"
    );
}

#[tokio::test]
async fn shared_back_off_is_recorded_and_read() {
    let db = migrated().await;
    let cache = TokenCache::new(db.pool.clone(), ring(1));
    let user = CacheKey::user(ENV, APP, "alice");
    let lease = cache
        .try_lease(&user, "worker-1", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    let retry = db_now(&db.pool).await.unwrap() + Duration::from_secs(60);
    assert!(
        cache
            .record_failure(
                &user,
                &lease,
                retry,
                "token endpoint answered 503\nService Unavailable"
            )
            .await
            .unwrap()
    );
    let row = cache.read(&user).await.unwrap().unwrap();
    assert_eq!(row.retry_not_before, Some(retry));
    assert_eq!(
        row.last_error.as_deref(),
        Some("token endpoint answered 503 Service Unavailable")
    );
    assert_eq!(row.lease_holder, None);
    assert!(row.token.is_none());
    // The lease ended with the failure.
    assert!(
        !cache
            .record_failure(&user, &lease, retry, "again")
            .await
            .unwrap()
    );

    // A later successful renewal clears the back-off.
    let lease = cache
        .try_lease(&user, "worker-2", Duration::from_secs(30))
        .await
        .unwrap()
        .unwrap();
    assert!(
        cache
            .publish(&user, &lease, cached("user-token", at(2_000_000_000)))
            .await
            .unwrap()
    );
    let row = cache.read(&user).await.unwrap().unwrap();
    assert_eq!(row.retry_not_before, None);
    assert_eq!(row.last_error, None);
}

#[tokio::test]
async fn a_stopped_database_is_an_error_naming_the_operation() {
    let mut db = TestDb::with_own_server().await;
    migrate(&db.pool).await.unwrap();
    // The store's pool waits 1 s for a connection to the stopped server, not the test pool's
    // 3 s: each failed call below is such a wait.
    let pool = sqlx::postgres::PgPoolOptions::new()
        .acquire_timeout(Duration::from_secs(1))
        .connect(&db.url())
        .await
        .unwrap();
    let store = RefreshTokens::new(pool, ring(1));
    store
        .save(&key("alice"), refresh("token-before-the-outage", None))
        .await
        .unwrap();

    db.server().stop().expect("stop the server");
    let err = store.load(&key("alice")).await.unwrap_err();
    assert!(matches!(err, Error::Database { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("load a refresh token"), "{message}");
    let err = store
        .save(&key("alice"), refresh("token-during-the-outage", None))
        .await
        .unwrap_err();
    assert!(err.to_string().contains("save a refresh token"), "{err}");

    db.server().start().expect("start the server again");
    let loaded = store.load(&key("alice")).await.unwrap().unwrap();
    assert_eq!(loaded.token.expose(), "token-before-the-outage");
}

/// The eBay user recorded at consent: listed, cleared by a new consent (a save), and the key
/// of an account deletion, which removes the accounts' refresh tokens and every cached access
/// token of theirs, and nothing of another user's.
#[tokio::test]
async fn the_ebay_user_of_an_account_is_recorded_cleared_by_a_new_consent_and_deleted() {
    let db = migrated().await;
    let store = RefreshTokens::new(db.pool.clone(), ring(1));
    for account in ["alice-us", "alice-de", "bob"] {
        store
            .save(&key(account), refresh("rt", None))
            .await
            .unwrap();
    }
    assert!(!store.set_ebay_user(&key("nobody"), "x", "y").await.unwrap());
    for (account, user) in [
        ("alice-us", "alice01"),
        ("alice-de", "alice01"),
        ("bob", "bob02"),
    ] {
        assert!(
            store
                .set_ebay_user(&key(account), user, "name")
                .await
                .unwrap()
        );
    }
    let listed = store.list(ENV, APP).await.unwrap();
    assert!(
        listed
            .iter()
            .all(|a| a.ebay_username.as_deref() == Some("name"))
    );

    // A new consent of bob's account: its user is unknown until recorded again.
    store.save(&key("bob"), refresh("rt2", None)).await.unwrap();
    let bob = store.list(ENV, APP).await.unwrap();
    let bob = bob.iter().find(|a| a.account == "bob").unwrap();
    assert_eq!(
        (bob.ebay_user_id.as_deref(), bob.ebay_username.as_deref()),
        (None, None)
    );
    assert!(
        store
            .set_ebay_user(&key("bob"), "bob02", "bob")
            .await
            .unwrap()
    );

    // Cached access tokens of alice's accounts (two scope sets) and bob's.
    for (account, scopes) in [
        ("alice-us", ""),
        ("alice-us", "narrow"),
        ("alice-de", ""),
        ("bob", ""),
    ] {
        sqlx::query(
            "INSERT INTO marketplace_token_cache (environment, client_id, kind, subject, scopes) \
             VALUES ($1, $2, 'user', $3, $4)",
        )
        .bind(ENV)
        .bind(APP)
        .bind(account)
        .bind(scopes)
        .execute(&db.pool)
        .await
        .unwrap();
    }
    let gone = store.delete_ebay_user(ENV, APP, "alice01").await.unwrap();
    assert_eq!(gone, ["alice-de", "alice-us"]);
    let left: Vec<String> =
        sqlx::query_scalar("SELECT account FROM marketplace_refresh_tokens ORDER BY account")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(left, ["bob"]);
    let cached: Vec<String> =
        sqlx::query_scalar("SELECT subject FROM marketplace_token_cache ORDER BY subject")
            .fetch_all(&db.pool)
            .await
            .unwrap();
    assert_eq!(cached, ["bob"]);
    assert!(
        store
            .delete_ebay_user(ENV, "Another-App", "bob02")
            .await
            .unwrap()
            .is_empty(),
        "another application's user is not this one's"
    );
}
