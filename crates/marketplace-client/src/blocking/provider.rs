//! The blocking token providers: each wraps the async provider of the same name
//! ([`crate::aio::oauth`]), whose cache, single flight and back-off ([`crate::core::cache`]
//! says what they do) it waits for on the blocking front's runtime, so many threads share one
//! flight as many tasks do.

use std::sync::Arc;

use super::Driver;
use super::bridge::{Cache, Store};
use super::oauth::{OAuthClient, transport};
use super::source::AccessTokenSource;
use crate::aio::oauth::{self as aio, AccessTokenSource as _, BoxFuture};
use crate::core::cache::CachedToken;
#[cfg(feature = "test-util")]
use crate::core::cache::Clock;
use crate::oauth::lock;
use crate::oauth::shared::SharedTokenCache;
use crate::oauth::{
    AccessToken, AuthorizationCode, OAuthConfig, OAuthError, RefreshTokenStore, ScopeSet,
    StoredRefreshToken,
};

/// What both blocking providers add to the async one they wrap (`$inner`): its policy's
/// settings, and the shared cache, bridged.
macro_rules! provider_settings {
    ($inner:ty) => {
        crate::core::cache::policy_settings!(inner.policy);

        /// Shares the tokens through `cache` with every process that uses it (for example
        /// `marketplace-client-postgres`): one process of the fleet asks the token endpoint
        /// per expiry. When the cache cannot be reached, this provider asks for its own
        /// token, with a warning.
        pub fn with_shared_cache(self, cache: Arc<dyn SharedTokenCache>) -> Self {
            self.map(|p| p.with_shared_cache(Arc::new(Cache(cache))))
        }

        fn map(self, f: impl FnOnce($inner) -> $inner) -> Self {
            Self {
                inner: f(self.inner),
                driver: self.driver,
            }
        }
    };
}

/// A blocking provider's `Debug` (the async provider's) and its token source: the async
/// provider's, waited for (or, for the blocking clients, its future handed over).
macro_rules! provider_impls {
    ($name:ident) => {
        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.inner.fmt(f)
            }
        }

        impl AccessTokenSource for $name {
            fn access_token(&self) -> Result<AccessToken, OAuthError> {
                self.driver.wait(self.inner.access_token(), transport)
            }
            fn invalidate(&self, token: &AccessToken) {
                self.inner.invalidate(token)
            }
            fn retry_now(&self) {
                self.inner.retry_now()
            }
            fn token_future(&self) -> Option<BoxFuture<'_, Result<AccessToken, OAuthError>>> {
                Some(self.inner.access_token())
            }
        }
    };
}

/// Application tokens (client-credentials grant), cached per scope set.
///
/// ```no_run
/// use marketplace_client::oauth::{
///     AccessTokenSource, ApplicationTokenProvider, OAuthClient, OAuthConfig,
/// };
/// # fn main() -> Result<(), marketplace_client::oauth::OAuthError> {
/// let config = OAuthConfig::from_env()?;
/// let provider = ApplicationTokenProvider::new(OAuthClient::from_config(&config)?)
///     .on_refresh_error(|e| eprintln!("token renewal failed, still using the old token: {e}"));
/// let token = provider.access_token()?; // one request; later calls reuse it
/// // send `Authorization: Bearer {token.secret()}`; on a 401:
/// provider.invalidate(&token);
/// # Ok(()) }
/// ```
pub struct ApplicationTokenProvider {
    inner: aio::ApplicationTokenProvider,
    driver: Driver,
}

impl ApplicationTokenProvider {
    /// A provider for `client` whose default scope is `{base_url}/oauth/api_scope`.
    pub fn new(client: impl Into<Arc<OAuthClient>>) -> Self {
        let client = client.into();
        Self {
            inner: aio::ApplicationTokenProvider::new(client.inner.clone()),
            driver: client.driver.clone(),
        }
    }

    /// The provider of the application whose settings are in the environment
    /// (`MARKETPLACE_CLIENT_ID` and `MARKETPLACE_CLIENT_SECRET`, or the SDK configuration file
    /// named by `MARKETPLACE_CONFIG`; see [`OAuthConfig`]): the common case in one line.
    ///
    /// ```no_run
    /// use marketplace_client::oauth::{AccessTokenSource, ApplicationTokenProvider};
    /// let token = ApplicationTokenProvider::from_env()?.access_token()?;
    /// # let _ = token; Ok::<(), marketplace_client::oauth::OAuthError>(())
    /// ```
    pub fn from_env() -> Result<Self, OAuthError> {
        OAuthClient::from_config(&OAuthConfig::from_env()?).map(Self::new)
    }

    /// The application-token source `config` describes: the ready token of
    /// `MARKETPLACE_ACCESS_TOKEN` when it has one, otherwise a provider over
    /// [`OAuthClient::from_config`]. What a client of the Taxonomy API or any other takes.
    /// The async front's `ApplicationTokenProvider::source` is the same for async programs.
    ///
    /// ```no_run
    /// use marketplace_client::oauth::{AccessTokenSource, ApplicationTokenProvider, OAuthConfig};
    /// let tokens = ApplicationTokenProvider::source(&OAuthConfig::from_env()?)?;
    /// let token = tokens.access_token()?;
    /// # let _ = token; Ok::<(), marketplace_client::oauth::OAuthError>(())
    /// ```
    pub fn source(config: &OAuthConfig) -> Result<Arc<dyn AccessTokenSource>, OAuthError> {
        Ok(match &config.access_token {
            Some(token) => Arc::new(token.clone()),
            None => Arc::new(Self::new(OAuthClient::from_config(config)?)),
        })
    }

    /// Sets the scopes of [`AccessTokenSource::access_token`].
    pub fn with_default_scopes(self, scopes: ScopeSet) -> Self {
        self.map(|p| p.with_default_scopes(scopes))
    }

    provider_settings!(aio::ApplicationTokenProvider);

    /// The scopes of [`AccessTokenSource::access_token`].
    pub fn default_scopes(&self) -> &ScopeSet {
        self.inner.default_scopes()
    }

    /// A valid token for `scopes` (empty: the default scopes), from the cache or the server.
    pub fn access_token_for(&self, scopes: &ScopeSet) -> Result<AccessToken, OAuthError> {
        self.driver
            .wait(self.inner.access_token_for(scopes), transport)
    }

    /// The cached token for `scopes`, if any (valid or not).
    pub fn cached(&self, scopes: &ScopeSet) -> Option<CachedToken> {
        self.inner.cached(scopes)
    }
}

provider_impls!(ApplicationTokenProvider);

/// User tokens of one account, renewed with the refresh token kept in a
/// [`RefreshTokenStore`]; a rotated refresh token is saved back.
///
/// A new consent ([`exchange_code`](Self::exchange_code)) always wins over a refresh that was
/// already running: the refresh's access token is dropped, and a refresh token the server
/// rotated on it is saved only if the store still holds the token the refresh started from
/// ([`RefreshTokenStore::replace`]).
///
/// ```no_run
/// use std::sync::Arc;
/// use marketplace_client::oauth::{
///     AccessTokenSource, FileStore, OAuthClient, OAuthConfig, UserTokenProvider,
/// };
/// # fn main() -> Result<(), marketplace_client::oauth::OAuthError> {
/// let config = OAuthConfig::from_env()?;
/// let store = Arc::new(FileStore::new("/var/lib/my-backend/refresh-tokens.json"));
/// let provider = UserTokenProvider::new(OAuthClient::from_config(&config)?, store, "seller-1");
/// let token = provider.access_token()?; // refreshes with the stored refresh token
/// # let _ = token; Ok(()) }
/// ```
pub struct UserTokenProvider {
    inner: aio::UserTokenProvider,
    driver: Driver,
}

impl UserTokenProvider {
    /// The account.
    pub fn account(&self) -> &str {
        self.inner.account()
    }

    /// A provider for `account`, whose refresh token is (or will be) in `store`.
    pub fn new(
        client: impl Into<Arc<OAuthClient>>,
        store: Arc<dyn RefreshTokenStore>,
        account: impl Into<String>,
    ) -> Self {
        let client = client.into();
        Self {
            inner: aio::UserTokenProvider::new(
                client.inner.clone(),
                Arc::new(Store(store)),
                account,
            ),
            driver: client.driver.clone(),
        }
    }

    /// The provider of `account`'s user token, for the application whose settings are in the
    /// environment (see [`OAuthConfig`]), its refresh token in `store`: the common case in one
    /// line.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use marketplace_client::oauth::{AccessTokenSource, FileStore, UserTokenProvider};
    /// let store = Arc::new(FileStore::new("/var/lib/my-backend/refresh-tokens.json"));
    /// let token = UserTokenProvider::from_env(store, "seller-1")?.access_token()?;
    /// # let _ = token; Ok::<(), marketplace_client::oauth::OAuthError>(())
    /// ```
    pub fn from_env(
        store: Arc<dyn RefreshTokenStore>,
        account: impl Into<String>,
    ) -> Result<Self, OAuthError> {
        let client = OAuthClient::from_config(&OAuthConfig::from_env()?)?;
        Ok(Self::new(client, store, account))
    }

    /// Asks for `scopes` on refresh: a subset of the scopes granted at consent (the default
    /// is all of them, as stored with the refresh token).
    pub fn with_scopes(self, scopes: ScopeSet) -> Self {
        self.map(|p| p.with_scopes(scopes))
    }

    provider_settings!(aio::UserTokenProvider);

    /// The cached access token, if any.
    pub fn cached(&self) -> Option<CachedToken> {
        self.inner.cached()
    }

    /// The refresh token the store failed to save, if any: the provider keeps it, uses it and
    /// saves it again on every refresh until the store takes it. A process that is about to
    /// end can write it somewhere safe (never to a log).
    pub fn unsaved_refresh_token(&self) -> Option<StoredRefreshToken> {
        self.inner.unsaved_refresh_token()
    }

    /// Completes consent: exchanges `code` (the authorization-code grant, "Exchanging the
    /// authorization code for a user access token"), stores the refresh token with the
    /// `granted_scopes` (those of the consent URL) and caches the access token (and, once the
    /// refresh token is saved, hands it to the shared cache, if any, so that the fleet's next
    /// process gets it). A refresh that is running meanwhile cannot undo it (see the type's
    /// documentation).
    ///
    /// When the store fails to save the refresh token, the store's error is returned, but the
    /// consent is not lost: the access token is cached, and the refresh token is kept
    /// ([`unsaved_refresh_token`](Self::unsaved_refresh_token)) and saved again on each
    /// refresh. Check the store first ([`FileStore::check`](crate::oauth::FileStore::check)) so that
    /// a one-time code is not spent on a store that cannot take its token.
    pub fn exchange_code(
        &self,
        code: &AuthorizationCode,
        granted_scopes: &ScopeSet,
    ) -> Result<StoredRefreshToken, OAuthError> {
        self.driver
            .wait(self.inner.exchange_code(code, granted_scopes), transport)
    }
}

provider_impls!(UserTokenProvider);
