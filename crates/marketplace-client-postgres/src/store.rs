//! Sellers' refresh tokens in PostgreSQL as the providers' store: [`PgRefreshTokenStore`]
//! implements the async [`RefreshTokenStore`] of `marketplace_client::aio::oauth` (and,
//! through [`blocking::TokenStore`](crate::blocking::TokenStore), the blocking one).

mod consent;

use std::future::Future;
use std::time::Duration;

use marketplace_client::aio::oauth::{BoxFuture, RefreshTokenStore};
use marketplace_client::oauth::{
    ConfigError, ConsentRequest, CsrfState, OAuthConfig, OAuthError, RefreshToken, ScopeSet,
    SharedTokenRequest, StoreError, StoredRefreshToken,
};

use crate::crypto::Keyring;
use crate::error::Error;
use crate::refresh::{AccountSummary, NewRefreshToken, RefreshKey, RefreshTokens};

/// How the store names itself in errors: the table, never the URL (it may hold a password).
const STORE: &str = "postgres table marketplace_refresh_tokens";

/// The longest a store operation waits for the database before failing.
pub const DEFAULT_STORE_TIMEOUT: Duration = Duration::from_secs(10);

/// The refresh tokens of one application in one environment (`"production"`, `"sandbox"` or
/// another host's base URL, as
/// [`SharedTokenRequest::environment_of`](marketplace_client::oauth::SharedTokenRequest::environment_of)
/// names it), keyed by account; made with [`from_config`](Self::from_config). Saves never half-happen (one statement), a rotated token replaces the
/// stored one only if it is still the one the refresh started from (compare and swap under a
/// row lock), and a save that cannot reach the database returns an error.
#[derive(Debug, Clone)]
pub struct PgRefreshTokenStore {
    tokens: RefreshTokens,
    environment: String,
    client_id: String,
    timeout: Duration,
}

impl PgRefreshTokenStore {
    /// The store of the refresh tokens of `oauth`'s application (its client id) on `oauth`'s
    /// service (production, the sandbox, or another host), in the database of `pool`
    /// (migrated with [`crate::migrate`]), encrypted under `keyring`: the same rows as every
    /// other process configured alike, with no name to spell. Fails only when `oauth` has no
    /// client id.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use marketplace_client::aio::oauth::OAuthConfig;
    /// use marketplace_client_postgres::{Keyring, PgRefreshTokenStore, sqlx::PgPool};
    /// let pool = PgPool::connect("postgres://backend@db.internal/backend").await?;
    /// let oauth = OAuthConfig::from_env()?;
    /// let store = PgRefreshTokenStore::from_config(pool, Keyring::from_env()?, &oauth)?;
    /// # Ok(()) }
    /// ```
    pub fn from_config(
        pool: sqlx::PgPool,
        keyring: Keyring,
        oauth: &OAuthConfig,
    ) -> Result<Self, ConfigError> {
        let client_id = oauth.require_client_id()?;
        Ok(Self::new(
            pool,
            keyring,
            SharedTokenRequest::environment_of(&oauth.endpoints),
            client_id.as_str(),
        ))
    }

    /// The store of `client_id`'s refresh tokens in `environment` (private: a typo in either
    /// would silently name another set of tokens; [`from_config`](Self::from_config) takes
    /// both from the configuration).
    pub(crate) fn new(
        pool: sqlx::PgPool,
        keyring: Keyring,
        environment: impl Into<String>,
        client_id: impl Into<String>,
    ) -> Self {
        Self {
            tokens: RefreshTokens::new(pool, keyring),
            environment: environment.into(),
            client_id: client_id.into(),
            timeout: DEFAULT_STORE_TIMEOUT,
        }
    }

    /// Sets the longest wait for the database ([`DEFAULT_STORE_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The accounts with a stored refresh token, those expiring soonest first (eBay's are
    /// valid for 18 months), with their needs-consent marks.
    pub async fn accounts(&self) -> Result<Vec<AccountSummary>, OAuthError> {
        self.bounded(
            "list the accounts of",
            self.tokens.list(&self.environment, &self.client_id),
        )
        .await
    }

    /// Records that the refresh token of `account` was granted by eBay user `user_id`
    /// (getUser's `userId`) named `username`, at consent, so that an account deletion
    /// notification for that user finds it ([`RefreshTokens::set_ebay_user`]). False when no
    /// token is stored for `account`.
    pub async fn set_ebay_user(
        &self,
        account: &str,
        user_id: &str,
        username: &str,
    ) -> Result<bool, OAuthError> {
        self.bounded(
            "record the eBay user of an account in",
            self.tokens
                .set_ebay_user(&self.key(account), user_id, username),
        )
        .await
    }

    /// Deletes the refresh tokens and the shared access tokens of every account recorded as
    /// eBay user `user_id`'s ([`RefreshTokens::delete_ebay_user`]); returns those accounts.
    pub async fn delete_ebay_user(&self, user_id: &str) -> Result<Vec<String>, OAuthError> {
        self.bounded(
            "delete the accounts of a deleted eBay user from",
            self.tokens
                .delete_ebay_user(&self.environment, &self.client_id, user_id),
        )
        .await
    }

    /// The environment of this store's tokens.
    pub fn environment(&self) -> &str {
        &self.environment
    }

    /// The application (client id) of this store's tokens.
    pub fn client_id(&self) -> &str {
        &self.client_id
    }

    /// The connection pool.
    pub fn pool(&self) -> &sqlx::PgPool {
        self.tokens.pool()
    }

    fn key(&self, account: &str) -> RefreshKey {
        RefreshKey::new(&self.environment, &self.client_id, account)
    }

    async fn bounded<T>(
        &self,
        action: &'static str,
        statement: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, OAuthError> {
        self.bounded_as(action, statement, store_error).await
    }

    /// `statement` within the store's time-out; its error turned into the caller's by
    /// `error`, a time-out into the store's "unavailable".
    async fn bounded_as<T>(
        &self,
        action: &'static str,
        statement: impl Future<Output = Result<T, Error>>,
        error: fn(&'static str, Error) -> OAuthError,
    ) -> Result<T, OAuthError> {
        match tokio::time::timeout(self.timeout, statement).await {
            Ok(result) => result.map_err(|e| error(action, e)),
            // Worded as every unavailable store's error, the time-out as its cause.
            Err(_) => Err(StoreError::unavailable(
                STORE,
                action,
                std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "the database did not answer within {} s",
                        self.timeout.as_secs()
                    ),
                ),
            )
            .into()),
        }
    }

    pub(crate) async fn read_record(
        &self,
        account: &str,
    ) -> Result<Option<StoredRefreshToken>, OAuthError> {
        let stored = self
            .bounded(
                "read a refresh token from",
                self.tokens.load(&self.key(account)),
            )
            .await?;
        Ok(stored.map(|s| StoredRefreshToken {
            refresh_token: RefreshToken::new(s.token.expose()),
            scopes: ScopeSet::from_space_separated(&s.scopes),
            expires_at: s.expires_at,
        }))
    }

    pub(crate) async fn write_record(
        &self,
        account: &str,
        token: &StoredRefreshToken,
    ) -> Result<(), OAuthError> {
        let scopes = token.scopes.to_space_separated();
        let new = new_token(token, &scopes);
        self.bounded(
            "save a refresh token to",
            self.tokens.save(&self.key(account), new),
        )
        .await
        .map(drop)
    }

    pub(crate) async fn delete_record(&self, account: &str) -> Result<(), OAuthError> {
        self.bounded(
            "delete a refresh token from",
            self.tokens.delete(&self.key(account)),
        )
        .await
        .map(drop)
    }

    pub(crate) async fn swap_record(
        &self,
        account: &str,
        current: &RefreshToken,
        token: &StoredRefreshToken,
    ) -> Result<bool, OAuthError> {
        let scopes = token.scopes.to_space_separated();
        let new = new_token(token, &scopes);
        self.bounded(
            "replace a refresh token in",
            self.tokens
                .replace(&self.key(account), current.secret(), new),
        )
        .await
    }

    pub(crate) async fn mark_record(
        &self,
        account: &str,
        token: &RefreshToken,
    ) -> Result<bool, OAuthError> {
        self.bounded(
            "mark an account as needing consent in",
            self.tokens
                .mark_needs_consent(&self.key(account), token.secret()),
        )
        .await
    }

    pub(crate) async fn is_marked(&self, account: &str) -> Result<bool, OAuthError> {
        self.bounded(
            "read a needs-consent mark from",
            self.tokens.needs_consent(&self.key(account)),
        )
        .await
    }
}

fn new_token<'a>(token: &'a StoredRefreshToken, scopes: &'a str) -> NewRefreshToken<'a> {
    NewRefreshToken {
        token: token.refresh_token.secret(),
        scopes,
        expires_at: token.expires_at,
    }
}

/// The store's error for `e`, met while doing `action`.
fn store_error(action: &'static str, e: Error) -> OAuthError {
    match &e {
        Error::Decrypt { .. } | Error::Corrupt { .. } | Error::TimeOutOfRange { .. } => {
            let message = format!("cannot {action} the refresh-token store {STORE}: {e}");
            StoreError::corrupt(STORE, action, &e)
                .with_message(message)
                .with_source(e)
        }
        _ => StoreError::unavailable(STORE, action, e),
    }
    .into()
}

impl RefreshTokenStore for PgRefreshTokenStore {
    fn load<'a>(
        &'a self,
        account: &'a str,
    ) -> BoxFuture<'a, Result<Option<StoredRefreshToken>, OAuthError>> {
        Box::pin(PgRefreshTokenStore::read_record(self, account))
    }
    fn save<'a>(
        &'a self,
        account: &'a str,
        token: &'a StoredRefreshToken,
    ) -> BoxFuture<'a, Result<(), OAuthError>> {
        Box::pin(PgRefreshTokenStore::write_record(self, account, token))
    }
    fn remove<'a>(&'a self, account: &'a str) -> BoxFuture<'a, Result<(), OAuthError>> {
        Box::pin(PgRefreshTokenStore::delete_record(self, account))
    }
    fn replace<'a>(
        &'a self,
        account: &'a str,
        current: &'a RefreshToken,
        token: &'a StoredRefreshToken,
    ) -> BoxFuture<'a, Result<bool, OAuthError>> {
        Box::pin(PgRefreshTokenStore::swap_record(
            self, account, current, token,
        ))
    }
    fn mark_needs_consent<'a>(
        &'a self,
        account: &'a str,
        token: &'a RefreshToken,
    ) -> BoxFuture<'a, Result<bool, OAuthError>> {
        Box::pin(PgRefreshTokenStore::mark_record(self, account, token))
    }
    fn needs_consent<'a>(&'a self, account: &'a str) -> BoxFuture<'a, Result<bool, OAuthError>> {
        Box::pin(PgRefreshTokenStore::is_marked(self, account))
    }
    /// In `marketplace_pending_consents`, the URL encrypted like the tokens.
    fn save_consent<'a>(
        &'a self,
        request: &'a ConsentRequest,
    ) -> BoxFuture<'a, Result<(), OAuthError>> {
        Box::pin(PgRefreshTokenStore::save_pending(self, request))
    }
    /// One `DELETE … RETURNING`: of two processes taking the same state, one gets it.
    fn take_consent<'a>(
        &'a self,
        state: &'a CsrfState,
    ) -> BoxFuture<'a, Result<Option<ConsentRequest>, OAuthError>> {
        Box::pin(PgRefreshTokenStore::take_pending(self, state))
    }
}
