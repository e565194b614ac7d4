//! A token store on PostgreSQL, shared by a fleet of processes and hosts of a seller's
//! backend.
//!
//! eBay allows each application 1,000 client-credentials grants a day, so many processes must
//! share one application token; and a seller's refresh token must never be lost. This crate is
//! the repository layer for both, over a [`sqlx::PgPool`]:
//!
//! - [`RefreshTokens`]: sellers' refresh tokens, keyed by (environment, client id, account),
//!   with versioned writes, a compare-and-swap [`replace`](RefreshTokens::replace) and
//!   needs-consent marks;
//! - [`TokenCache`]: a shared access-token cache with single flight across processes: a
//!   [`Lease`] granted by the database's clock, with a fencing counter so that a stale leader's
//!   write changes nothing, and a shared back-off after failures.
//!
//! Every token is stored encrypted (AES-256-GCM, a random nonce per write, the row's identity
//! as associated data) under a [`Keyring`]: the current [`TokenKey`] and, during a rotation,
//! the previous one. Make a key with `head -c 32 /dev/urandom | base64` and set it in
//! `MARKETPLACE_TOKEN_KEY`. No error message, `Debug` output or log field of this crate holds a
//! token or a key.
//!
//! Run [`migrate`] once at start-up (it is idempotent). The tables are
//! `marketplace_refresh_tokens` (with each account's eBay user, recorded at consent:
//! [`RefreshTokens::set_ebay_user`], and removed by an account deletion:
//! [`RefreshTokens::delete_ebay_user`]) and `marketplace_token_cache`, and for eBay's
//! notifications `marketplace_notifications_seen` and `marketplace_notification_keys` (their
//! statements behind the feature `notifications`), and `marketplace_signing_keys` (eBay's
//! request signing keys, `PgSigningKeys`, behind the feature
//! `signing`), and `marketplace_pending_consents` (the pending consents of
//! [`PgRefreshTokenStore`], completed once by whichever process receives the redirect:
//! `save_consent`, `take_consent`); the migrations are recorded in
//! `marketplace_client_migrations`, beside (never in) the application's own `_sqlx_migrations`.
//! During a key rotation, [`key_census`] counts the tokens still under the previous key and
//! [`rekey`] re-encrypts them.
//!
//! # Quick start
//!
//! The providers of `marketplace-client` take [`PgTokenCache`] as their shared cache and
//! [`PgRefreshTokenStore`] as their refresh-token store ([`blocking::TokenStore`] gives both to
//! blocking code):
//!
//! ```no_run
//! use std::sync::Arc;
//! use marketplace_client::aio::oauth::{
//!     AccessTokenSource, ApplicationTokenProvider, OAuthClient, OAuthConfig, UserTokenProvider,
//! };
//! use marketplace_client_postgres::{Keyring, PgRefreshTokenStore, PgTokenCache, migrate};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let pool = sqlx::PgPool::connect("postgres://backend@db.internal/backend").await?;
//! migrate(&pool).await?;
//! let keyring = Keyring::from_env()?; // MARKETPLACE_TOKEN_KEY
//! let oauth = OAuthConfig::from_env()?;
//! let client = Arc::new(OAuthClient::from_config(&oauth)?);
//! let shared = Arc::new(PgTokenCache::new(pool.clone(), keyring.clone()));
//!
//! let app = ApplicationTokenProvider::new(client.clone()).with_shared_cache(shared.clone());
//! let _token = app.access_token().await?; // one token request per expiry for the fleet
//!
//! // The refresh tokens of `oauth`'s application on its service, as every process names them.
//! let store = Arc::new(PgRefreshTokenStore::from_config(pool, keyring, &oauth)?);
//! let seller = UserTokenProvider::new(client, store, "seller-1").with_shared_cache(shared);
//! let _token = seller.access_token().await?;
//! # Ok(()) }
//! ```
//!
//! The tests run against a real PostgreSQL: the server at `DATABASE_URL` when it is set (a
//! fresh database per test), otherwise a throwaway server they start themselves from the
//! `initdb`, `pg_ctl` and `postgres` binaries on `PATH` or in `/usr/lib/postgresql/*/bin`.

pub mod blocking;
mod cache;
mod crypto;
mod error;
mod migrate;
#[cfg(feature = "notifications")]
pub mod notifications;
mod refresh;
mod rotation;
mod shared;
#[cfg(feature = "signing")]
pub mod signing;
mod store;
mod time;

use std::time::SystemTime;

use sqlx::PgPool;

pub use cache::{CacheKey, CachedRow, Lease, NewCachedToken, TokenCache, TokenKind};
pub use crypto::{KEY_VAR, Keyring, PREVIOUS_KEY_VAR, SecretText, TokenKey};
pub use error::{DecryptFailure, Error, KeyProblem, RowId};
pub use refresh::{AccountSummary, NewRefreshToken, RefreshKey, RefreshTokens, StoredRefresh};
pub use rotation::{KeyCensus, KeyUse, Rekeyed, key_census, rekey};
pub use shared::{DEFAULT_DB_TIMEOUT, DEFAULT_LEASE, PgTokenCache};
#[cfg(feature = "signing")]
pub use signing::{DEFAULT_SIGNING_CIPHER, PgSigningKeys, SigningKeySummary};
pub use store::{DEFAULT_STORE_TIMEOUT, PgRefreshTokenStore};

/// The `sqlx` this crate is built on: **sqlx 0.9** (`sqlx = "0.9"`, with the features
/// `runtime-tokio`, `postgres`, `migrate`, `macros` and `chrono`). The pool its functions take
/// is this crate's [`sqlx::PgPool`]: a pool made with another major version of sqlx is
/// another type. Depend on `sqlx = "0.9"` yourself, or use this re-export
/// (`marketplace_client_postgres::sqlx::PgPool::connect(url)`).
pub use sqlx;

/// Creates or updates the store's tables. Running it again (from any number of processes) is
/// harmless: applied migrations are recorded and skipped.
///
/// The record is the table `marketplace_client_migrations`, not sqlx's default
/// `_sqlx_migrations`, so that an application's own `sqlx::migrate!` and this function run on
/// one database in any order. A database that an earlier version migrated into
/// `_sqlx_migrations` is taken over: the store's records move to its own table, the
/// application's stay.
pub async fn migrate(pool: &PgPool) -> Result<(), Error> {
    migrate::run(pool).await
}

/// The database's clock. Leases are granted by it; compute expiry and renewal times from it
/// too, so that hosts with skewed clocks agree.
pub async fn db_now(pool: &PgPool) -> Result<SystemTime, Error> {
    let now: chrono::DateTime<chrono::Utc> = sqlx::query_scalar("SELECT now()")
        .fetch_one(pool)
        .await
        .map_err(Error::db("read the database clock"))?;
    time::from_db(now, "database clock")
}
