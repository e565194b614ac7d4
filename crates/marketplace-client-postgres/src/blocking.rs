//! The store for blocking programs (the `snapshot` and `consent` commands, a backend without
//! an async runtime): [`TokenStore`] runs the database work on a runtime of its own, one
//! worker thread, so its methods can be called from any thread, inside a tokio runtime or
//! not.
//!
//! ```no_run
//! use std::sync::Arc;
//! use marketplace_client::oauth::{
//!     AccessTokenSource, ApplicationTokenProvider, OAuthClient, OAuthConfig, UserTokenProvider,
//! };
//! use marketplace_client_postgres::{Keyring, blocking::TokenStore};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let store = TokenStore::connect("postgres://backend@db.internal/backend", Keyring::from_env()?)?;
//! store.migrate()?;
//! let config = OAuthConfig::from_env()?;
//! let provider = ApplicationTokenProvider::new(OAuthClient::from_config(&config)?)
//!     .with_shared_cache(store.token_cache());
//! let token = provider.access_token()?; // one request for the whole fleet
//! // The refresh tokens of `config`'s application on its service.
//! let refresh_tokens = Arc::new(store.refresh_tokens(&config)?);
//! let seller = UserTokenProvider::new(OAuthClient::from_config(&config)?, refresh_tokens, "seller-1")
//!     .with_shared_cache(store.token_cache());
//! # let _ = (token, seller); Ok(()) }
//! ```

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

/// The longest wait of the direct connection that finds why the pool could not connect.
const PROBE: Duration = Duration::from_secs(3);

use marketplace_client::aio::oauth::BoxFuture;
use marketplace_client::oauth::{
    self, OAuthError, RefreshToken, SharedCacheError, SharedToken, SharedTokenRequest, StoreError,
    StoredRefreshToken, TokenResponse,
};
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};

use crate::crypto::Keyring;
use crate::error::Error;
use crate::refresh::AccountSummary;
use crate::shared::{DEFAULT_DB_TIMEOUT, PgTokenCache};
use crate::store::PgRefreshTokenStore;

/// The longest [`TokenStore::rekey`] waits for the database, all rows together.
pub const REKEY_TIMEOUT: Duration = Duration::from_secs(300);

/// The runtime the database work runs on; shut down without waiting when dropped, so that
/// dropping the store inside an async context does not panic.
struct Runtime(Option<tokio::runtime::Runtime>);

impl Drop for Runtime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl Runtime {
    fn handle(&self) -> Option<&tokio::runtime::Runtime> {
        self.0.as_ref()
    }

    /// Runs `work` on the runtime and waits for it from this thread; `None` if the runtime
    /// is gone.
    fn run<T: Send + 'static>(&self, work: impl Future<Output = T> + Send + 'static) -> Option<T> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.handle()?.spawn(async move {
            let _ = tx.send(work.await);
        });
        rx.recv().ok()
    }
}

/// A PostgreSQL token store for blocking code: the shared access-token cache and the
/// refresh tokens, over a pool of its own (at most 4 connections, made when first needed).
pub struct TokenStore {
    runtime: Arc<Runtime>,
    pool: sqlx::PgPool,
    keyring: Keyring,
    lease: Option<Duration>,
    db_timeout: Duration,
}

impl std::fmt::Debug for TokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenStore")
            .field("lease", &self.lease)
            .field("db_timeout", &self.db_timeout)
            .finish_non_exhaustive()
    }
}

impl TokenStore {
    /// A store on the database at `url` (`postgres://user:password@host/database`); no
    /// connection is made yet, so this succeeds while the database is down. Fails only on a
    /// URL that cannot be read (the error does not repeat it) or when the runtime cannot
    /// start.
    pub fn connect(url: &str, keyring: Keyring) -> Result<Self, Error> {
        let options: PgConnectOptions = url.parse().map_err(|_| Error::InvalidUrl)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("marketplace-token-store")
            .enable_all()
            .build()
            .map_err(Error::Runtime)?;
        let pool = {
            let _entered = runtime.enter();
            PgPoolOptions::new()
                .max_connections(4)
                .acquire_timeout(DEFAULT_DB_TIMEOUT)
                .connect_lazy_with(options)
        };
        Ok(Self {
            runtime: Arc::new(Runtime(Some(runtime))),
            pool,
            keyring,
            lease: None,
            db_timeout: DEFAULT_DB_TIMEOUT,
        })
    }

    /// Sets the lease of the shared cache ([`crate::DEFAULT_LEASE`]).
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = Some(lease);
        self
    }

    /// Sets the longest wait for the database in a token call ([`DEFAULT_DB_TIMEOUT`]).
    pub fn with_db_timeout(mut self, timeout: Duration) -> Self {
        self.db_timeout = timeout;
        self
    }

    /// Creates or updates the tables ([`crate::migrate`]), waiting at most the database
    /// time-out. A migration cut short by the time-out closes the store's connections (so
    /// that no lock it took outlives it); the store then answers "unavailable", and the
    /// token calls go on without it.
    pub fn migrate(&self) -> Result<(), Error> {
        let pool = self.pool.clone();
        let timeout = self.db_timeout;
        self.runtime
            .run(async move {
                match tokio::time::timeout(timeout, crate::migrate(&pool)).await {
                    Ok(Err(e)) => Err(e.explained(&pool, timeout.min(PROBE)).await),
                    Ok(done) => done,
                    Err(_) => {
                        let _ = tokio::time::timeout(timeout, pool.close()).await;
                        // No answer in time: a refused connection says so (the pool keeps
                        // trying a refused one until its own time-out).
                        let operation = "migrate the token store's schema";
                        match Error::unreachable(&pool, operation, timeout.min(PROBE)).await {
                            Some(unreachable) => Err(unreachable),
                            None => Err(Error::TimedOut {
                                operation,
                                after: timeout,
                            }),
                        }
                    }
                }
            })
            .unwrap_or(Err(Error::RuntimeGone))
    }

    /// How many stored tokens each key of the store's keyring encrypts ([`crate::key_census`]),
    /// waiting at most the database time-out.
    pub fn key_census(&self) -> Result<crate::KeyCensus, Error> {
        let (pool, keyring, timeout) = (self.pool.clone(), self.keyring.clone(), self.db_timeout);
        self.runtime
            .run(async move {
                tokio::time::timeout(timeout, crate::key_census(&pool, &keyring))
                    .await
                    .unwrap_or(Err(Error::TimedOut {
                        operation: "count the tokens by key",
                        after: timeout,
                    }))
            })
            .unwrap_or(Err(Error::RuntimeGone))
    }

    /// Re-encrypts every token under the previous key with the current one ([`crate::rekey`]),
    /// waiting at most [`REKEY_TIMEOUT`] (or the database time-out, if longer).
    pub fn rekey(&self) -> Result<crate::Rekeyed, Error> {
        let (pool, keyring) = (self.pool.clone(), self.keyring.clone());
        let timeout = self.db_timeout.max(REKEY_TIMEOUT);
        self.runtime
            .run(async move {
                tokio::time::timeout(timeout, crate::rekey(&pool, &keyring))
                    .await
                    .unwrap_or(Err(Error::TimedOut {
                        operation: "re-encrypt the tokens under the current key",
                        after: timeout,
                    }))
            })
            .unwrap_or(Err(Error::RuntimeGone))
    }

    /// The signing keys of `oauth`'s application (feature `signing`), on this store's pool and
    /// keyring ([`crate::PgSigningKeys::from_config`]); run their calls with
    /// [`block_on`](Self::block_on). Fails only when `oauth` has no client id.
    #[cfg(feature = "signing")]
    pub fn signing_keys(
        &self,
        oauth: &oauth::OAuthConfig,
    ) -> Result<crate::PgSigningKeys, marketplace_client::oauth::ConfigError> {
        crate::PgSigningKeys::from_config(self.pool.clone(), self.keyring.clone(), oauth)
    }

    /// Runs `work` (for example a call of [`crate::PgSigningKeys`]) on the store's runtime and
    /// waits for it from this thread (feature `signing`).
    #[cfg(feature = "signing")]
    pub fn block_on<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T, Error>> + Send + 'static,
    ) -> Result<T, Error> {
        self.runtime.run(work).unwrap_or(Err(Error::RuntimeGone))
    }

    /// The shared access-token cache for async providers that run on this store's runtime
    /// (inside [`block_on`](Self::block_on), such as [`crate::PgSigningKeys`]' calls): the
    /// same rows as [`token_cache`](Self::token_cache)'s.
    pub fn async_token_cache(&self) -> PgTokenCache {
        let mut cache = PgTokenCache::new(self.pool.clone(), self.keyring.clone())
            .with_db_timeout(self.db_timeout);
        if let Some(lease) = self.lease {
            cache = cache.with_lease(lease);
        }
        cache
    }

    /// The shared access-token cache, for
    /// [`ApplicationTokenProvider::with_shared_cache`](marketplace_client::oauth::ApplicationTokenProvider::with_shared_cache)
    /// and [`UserTokenProvider::with_shared_cache`](marketplace_client::oauth::UserTokenProvider::with_shared_cache).
    pub fn token_cache(&self) -> Arc<dyn oauth::SharedTokenCache> {
        Arc::new(BlockingTokenCache {
            runtime: self.runtime.clone(),
            cache: self.async_token_cache(),
        })
    }

    /// The refresh tokens of `oauth`'s application on its service
    /// ([`PgRefreshTokenStore::from_config`]), for
    /// [`UserTokenProvider::new`](marketplace_client::oauth::UserTokenProvider::new). Fails
    /// only when `oauth` has no client id.
    pub fn refresh_tokens(
        &self,
        oauth: &oauth::OAuthConfig,
    ) -> Result<BlockingRefreshTokenStore, oauth::ConfigError> {
        Ok(BlockingRefreshTokenStore {
            runtime: self.runtime.clone(),
            store: PgRefreshTokenStore::from_config(
                self.pool.clone(),
                self.keyring.clone(),
                oauth,
            )?,
        })
    }
}

/// [`PgTokenCache`] for the blocking providers: the cache's decisions run on the store's
/// runtime; the provider's token request runs on the calling thread, when the cache asks.
struct BlockingTokenCache {
    runtime: Arc<Runtime>,
    cache: PgTokenCache,
}

/// What the cache's task tells the calling thread.
enum Message {
    /// Ask the token endpoint now, and answer here.
    Fetch(tokio::sync::oneshot::Sender<Result<TokenResponse, OAuthError>>),
    /// The cache's answer.
    Done(Result<SharedToken, SharedCacheError>),
}

impl oauth::SharedTokenCache for BlockingTokenCache {
    fn token(
        &self,
        request: &SharedTokenRequest,
        fetch: &mut dyn FnMut() -> Result<TokenResponse, OAuthError>,
    ) -> Result<SharedToken, SharedCacheError> {
        let Some(runtime) = self.runtime.handle() else {
            return Err(SharedCacheError::Unavailable(
                "the token store's runtime has stopped".into(),
            ));
        };
        let (tx, rx) = std::sync::mpsc::channel::<Message>();
        let cache = self.cache.clone();
        let original = request;
        let request = request.clone();
        runtime.spawn(async move {
            let asker = tx.clone();
            let ask = move || -> BoxFuture<'static, Result<TokenResponse, OAuthError>> {
                let asker = asker.clone();
                Box::pin(async move {
                    let (reply, answer) = tokio::sync::oneshot::channel();
                    if asker.send(Message::Fetch(reply)).is_err() {
                        return Err(gone());
                    }
                    answer.await.unwrap_or_else(|_| Err(gone()))
                })
            };
            let result = cache.token(&request, &ask).await;
            let _ = tx.send(Message::Done(result));
        });
        // The grant's answer, kept: once asked, the token endpoint is never asked again
        // because the cache's task ended early.
        let mut fetched: Option<Result<TokenResponse, OAuthError>> = None;
        loop {
            match rx.recv() {
                Ok(Message::Fetch(reply)) => {
                    let answer = fetch();
                    fetched = Some(answer.clone());
                    let _ = reply.send(answer);
                }
                Ok(Message::Done(result)) => return result,
                Err(_) if fetched.is_some() => {
                    return match fetched {
                        Some(Ok(response)) => Ok(SharedToken::from_response(&response, original)),
                        Some(Err(error)) => Err(SharedCacheError::Grant(error)),
                        None => Err(SharedCacheError::Grant(gone())),
                    };
                }
                Err(_) => {
                    return Err(SharedCacheError::Unavailable(
                        "the token store's runtime has stopped".into(),
                    ));
                }
            }
        }
    }
}

/// The error of a token request whose caller went away (the runtime stopped).
fn gone() -> OAuthError {
    OAuthError::Transport {
        message: "the token store's runtime stopped during the token request".into(),
    }
}

/// [`PgRefreshTokenStore`] for blocking code: the blocking
/// [`RefreshTokenStore`](marketplace_client::oauth::RefreshTokenStore).
#[derive(Clone)]
pub struct BlockingRefreshTokenStore {
    runtime: Arc<Runtime>,
    store: PgRefreshTokenStore,
}

impl std::fmt::Debug for BlockingRefreshTokenStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlockingRefreshTokenStore")
            .field("store", &self.store)
            .finish_non_exhaustive()
    }
}

impl BlockingRefreshTokenStore {
    /// The accounts with a stored refresh token, those expiring soonest first.
    pub fn accounts(&self) -> Result<Vec<AccountSummary>, OAuthError> {
        let store = self.store.clone();
        self.run(async move { store.accounts().await })
    }

    /// Records the eBay user who granted `account`'s refresh token (getUser's `userId` and
    /// `username`), at consent ([`PgRefreshTokenStore::set_ebay_user`]); false when no token
    /// is stored for `account`.
    pub fn set_ebay_user(
        &self,
        account: &str,
        user_id: &str,
        username: &str,
    ) -> Result<bool, OAuthError> {
        let store = self.store.clone();
        let (account, user_id, username) =
            (account.to_owned(), user_id.to_owned(), username.to_owned());
        self.run(async move { store.set_ebay_user(&account, &user_id, &username).await })
    }

    fn run<T: Send + 'static>(
        &self,
        work: impl Future<Output = Result<T, OAuthError>> + Send + 'static,
    ) -> Result<T, OAuthError> {
        self.runtime.run(work).unwrap_or_else(|| {
            Err(StoreError::unavailable(
                "postgres table marketplace_refresh_tokens",
                "reach",
                crate::Error::RuntimeGone,
            )
            .with_message("the token store's runtime has stopped")
            .into())
        })
    }
}

impl oauth::RefreshTokenStore for BlockingRefreshTokenStore {
    fn load(&self, account: &str) -> Result<Option<StoredRefreshToken>, OAuthError> {
        let (store, account) = (self.store.clone(), account.to_owned());
        self.run(async move { store.read_record(&account).await })
    }

    fn save(&self, account: &str, token: &StoredRefreshToken) -> Result<(), OAuthError> {
        let (store, account, token) = (self.store.clone(), account.to_owned(), token.clone());
        self.run(async move { store.write_record(&account, &token).await })
    }

    fn remove(&self, account: &str) -> Result<(), OAuthError> {
        let (store, account) = (self.store.clone(), account.to_owned());
        self.run(async move { store.delete_record(&account).await })
    }

    fn replace(
        &self,
        account: &str,
        current: &RefreshToken,
        token: &StoredRefreshToken,
    ) -> Result<bool, OAuthError> {
        let (store, account) = (self.store.clone(), account.to_owned());
        let (current, token) = (current.clone(), token.clone());
        self.run(async move { store.swap_record(&account, &current, &token).await })
    }

    fn mark_needs_consent(&self, account: &str, token: &RefreshToken) -> Result<bool, OAuthError> {
        let (store, account, token) = (self.store.clone(), account.to_owned(), token.clone());
        self.run(async move { store.mark_record(&account, &token).await })
    }

    fn needs_consent(&self, account: &str) -> Result<bool, OAuthError> {
        let (store, account) = (self.store.clone(), account.to_owned());
        self.run(async move { store.is_marked(&account).await })
    }

    fn save_consent(&self, request: &oauth::ConsentRequest) -> Result<(), OAuthError> {
        let (store, request) = (self.store.clone(), request.clone());
        self.run(async move { store.save_pending(&request).await })
    }

    fn take_consent(
        &self,
        state: &oauth::CsrfState,
    ) -> Result<Option<oauth::ConsentRequest>, OAuthError> {
        let (store, state) = (self.store.clone(), state.clone());
        self.run(async move { store.take_pending(&state).await })
    }
}
