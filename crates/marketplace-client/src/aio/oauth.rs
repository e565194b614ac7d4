//! OAuth 2.0 for async programs: the same types as [`crate::oauth`], with `async fn` where
//! those do I/O. Configuration, answers, secrets and errors are the blocking module's own
//! types, re-exported here, so code moves from one to the other by changing the import and
//! adding `.await`.
//!
//! ```no_run
//! use marketplace_client::aio::oauth::{AccessTokenSource, ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig};
//!
//! # async fn run() -> Result<(), marketplace_client::oauth::OAuthError> {
//! let config = OAuthConfig::new(Endpoints::production()).with_credentials("MyApp-PRD-1", "PRD-cert-id");
//! let client = OAuthClient::from_config(&config)?;
//! let provider = ApplicationTokenProvider::new(client);
//! let token = provider.access_token().await?; // one request, however many tasks ask at once
//! let _header = format!("Bearer {}", token.secret());
//! # Ok(()) }
//! ```
//!
//! The caches are the core's: one request per expiry across all the tasks that ask (single
//! flight), renewal ahead of expiry, a back-off after a failed grant. No lock is held across
//! an `.await`, and a task dropped while it fetches (cancelled, timed out) leaves the cache
//! usable: the next caller fetches. Needs a tokio runtime with time enabled
//! (`#[tokio::main]` has it).

use std::collections::HashMap;
use std::future::Future;
use std::pin::pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::core::cache::{CacheState, Flight, Held, Landing, Policy, Step, policy_settings};
use crate::core::token::{self, TokenCall};
use crate::core::trace;
use crate::core::user::{self, Retried, Unsaved};
use crate::oauth::lock;
use tracing::Instrument as _;

pub use crate::oauth::{
    AccessToken, AuthorizationCode, CachedToken, ClientId, ClientSecret, ConfigError,
    ConsentRequest, CsrfState, Endpoints, Environment, FileStore, Grant, HttpOptions, MemoryStore,
    OAuthConfig, OAuthError, OAuthErrorCode, RefreshToken, ScopeSet, SharedCacheError, SharedToken,
    SharedTokenRequest, StoreError, StoredRefreshToken, TokenResponse,
};
use crate::oauth::{Clock, Credentials};

pub use super::future::BoxFuture;

/// A client of the token endpoint for one application (the async
/// [`crate::oauth::OAuthClient`]).
pub struct OAuthClient {
    endpoints: Endpoints,
    credentials: Credentials,
    http: reqwest::Client,
    timeout: Duration,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("endpoints", &self.endpoints)
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// A client with the endpoints and credentials of `config` and the default time-out
    /// (30 s); [`OAuthError::Config`] naming the missing setting when `config` has no
    /// application id or no certificate id.
    pub fn from_config(config: &OAuthConfig) -> Result<Self, OAuthError> {
        Self::with_options(config, HttpOptions::default())
    }

    /// [`from_config`](Self::from_config) with requests that give up after `timeout`.
    pub fn with_timeout(config: &OAuthConfig, timeout: Duration) -> Result<Self, OAuthError> {
        Self::with_options(config, HttpOptions::default().with_timeout(timeout))
    }

    /// [`from_config`](Self::from_config) with its own HTTP options (time-outs, proxy, user
    /// agent, extra root certificates).
    pub fn with_options(config: &OAuthConfig, options: HttpOptions) -> Result<Self, OAuthError> {
        let credentials = config.credentials()?;
        let endpoints = config.endpoints.clone();
        let http = super::transport::client(endpoints.base_url(), &options)
            .map_err(|message| OAuthError::Transport { message })?;
        Ok(Self {
            endpoints,
            credentials,
            http,
            timeout: options.timeout,
        })
    }

    /// The endpoints.
    pub fn endpoints(&self) -> &Endpoints {
        &self.endpoints
    }

    /// The application id.
    pub fn client_id(&self) -> &ClientId {
        &self.credentials.client_id
    }

    /// The redirect URI (RuName) of the consent flow, if configured.
    pub fn redirect_uri(&self) -> Option<&str> {
        self.credentials.redirect_uri.as_deref()
    }

    /// A consent request for `scopes` (empty: the default scope) with a fresh random state,
    /// sent to the configured redirect URI (the optional `prompt` and `locale`:
    /// [`ConsentRequest::with_prompt`], [`ConsentRequest::with_locale`]).
    pub fn consent_request(&self, scopes: &ScopeSet) -> Result<ConsentRequest, OAuthError> {
        crate::oauth::consent::new_request(
            &self.endpoints,
            self.client_id(),
            self.redirect_uri(),
            scopes,
        )
    }

    /// Completes a pending consent kept in `store`, in whichever task or process the redirect
    /// landed: the async [`crate::oauth::OAuthClient::complete_consent`] (the same checks:
    /// used once, refused once expired, the state compared in constant time), returning the
    /// request and the code to exchange ([`UserTokenProvider::exchange_code`]).
    pub async fn complete_consent(
        &self,
        store: &dyn RefreshTokenStore,
        redirect: &str,
    ) -> Result<(ConsentRequest, AuthorizationCode), OAuthError> {
        use crate::oauth::consent;
        let state = consent::redirect_state(redirect)?;
        let taken = store.take_consent(&state).await?;
        consent::complete_taken(taken, redirect, std::time::SystemTime::now())
    }

    /// Requests an application token (the client-credentials grant).
    pub async fn client_credentials(&self, scopes: &ScopeSet) -> Result<TokenResponse, OAuthError> {
        self.post(token::client_credentials(
            &self.endpoints,
            &self.credentials,
            scopes,
            self.timeout,
        )?)
        .await
    }

    /// Exchanges an authorization code for a user token (the authorization-code grant).
    pub async fn exchange_code(
        &self,
        code: &AuthorizationCode,
    ) -> Result<TokenResponse, OAuthError> {
        self.post(token::exchange_code(
            &self.endpoints,
            &self.credentials,
            code,
            self.timeout,
        )?)
        .await
    }

    /// Gets a new user access token from a refresh token (the refresh-token grant).
    pub async fn refresh(
        &self,
        refresh_token: &RefreshToken,
        scopes: &ScopeSet,
    ) -> Result<TokenResponse, OAuthError> {
        self.post(token::refresh(
            &self.endpoints,
            &self.credentials,
            refresh_token,
            scopes,
            self.timeout,
        )?)
        .await
    }

    async fn post(&self, mut call: TokenCall) -> Result<TokenResponse, OAuthError> {
        let span = call.span();
        let request = std::mem::take(&mut call.request);
        let started = Instant::now();
        let outcome = super::transport::exchange(&self.http, request, call.timeout, call.limits())
            .instrument(span.clone())
            .await;
        call.finish(outcome, &span, started.elapsed())
    }
}

/// Something that hands out a current bearer token (the async
/// [`crate::oauth::AccessTokenSource`]). The taxonomy client takes one of these: on a 401
/// answer it calls [`invalidate`](Self::invalidate) with the token it sent and asks again.
pub trait AccessTokenSource: Send + Sync {
    /// A token that is valid now.
    fn access_token(&self) -> BoxFuture<'_, Result<AccessToken, OAuthError>>;

    /// Tells the source that `token` was rejected, so the next call fetches a new one.
    fn invalidate(&self, token: &AccessToken);

    /// Ends the wait after a failed request, so the next call asks the server at once.
    fn retry_now(&self) {}
}

impl<T: AccessTokenSource + ?Sized> AccessTokenSource for Arc<T> {
    fn access_token(&self) -> BoxFuture<'_, Result<AccessToken, OAuthError>> {
        (**self).access_token()
    }
    fn invalidate(&self, token: &AccessToken) {
        (**self).invalidate(token)
    }
    fn retry_now(&self) {
        (**self).retry_now()
    }
}

/// A token cache shared by processes, for the async providers: the async
/// [`crate::oauth::SharedTokenCache`], with the same contract.
///
/// [`token`](Self::token) returns the fleet's current token for `request`, or calls `fetch`
/// (at most once) when this process is the one elected to ask the token endpoint, and shares
/// its answer. `fetch` is the provider's own grant (its future is the token request). Once
/// `fetch` has been called, the answer is never [`SharedCacheError::Unavailable`].
pub trait SharedTokenCache: Send + Sync {
    /// The current token of `request`, from the cache or from `fetch`.
    fn token<'a, 'f: 'a>(
        &'a self,
        request: &'a SharedTokenRequest,
        fetch: &'a (
                dyn Fn() -> BoxFuture<'f, Result<TokenResponse, OAuthError>> + Send + Sync + 'f
            ),
    ) -> BoxFuture<'a, Result<SharedToken, SharedCacheError>>;
}

/// A provider's shared cache, if it has one, and the last token the marketplace refused.
#[derive(Default)]
struct Shared {
    cache: Option<Arc<dyn SharedTokenCache>>,
    rejected: Mutex<Option<AccessToken>>,
}

impl Shared {
    /// Remembers `token` as refused, so the shared cache does not hand it out again.
    fn reject(&self, token: &AccessToken) {
        if self.cache.is_some() {
            *lock(&self.rejected) = Some(token.clone());
        }
    }

    /// The request a provider of `client` makes of its shared cache.
    fn request(
        &self,
        client: &OAuthClient,
        account: Option<&str>,
        scopes: &ScopeSet,
        policy: &Policy,
    ) -> SharedTokenRequest {
        SharedTokenRequest {
            environment: SharedTokenRequest::environment_of(client.endpoints()),
            client_id: client.client_id().as_str().to_owned(),
            account: account.map(str::to_owned),
            scopes: scopes.clone(),
            rejected: lock(&self.rejected).clone(),
            refresh_margin: policy.margin,
            retry_backoff: policy.backoff,
        }
    }

    /// A flight's token: through the shared cache when there is one and it can be reached,
    /// otherwise from `grant` directly.
    async fn fetch<'a>(
        &'a self,
        client: &'a OAuthClient,
        account: Option<&'a str>,
        scopes: &'a ScopeSet,
        policy: &'a Policy,
        flight: Flight,
        grant: &'a (
                dyn Fn() -> BoxFuture<'a, Result<TokenResponse, OAuthError>> + Send + Sync + 'a
            ),
    ) -> Result<Held, OAuthError> {
        if let Some(cache) = &self.cache {
            let request = self.request(client, account, scopes, policy);
            flight.asking_shared_cache();
            let requested = std::sync::atomic::AtomicBool::new(false);
            let counted = || {
                requested.store(true, std::sync::atomic::Ordering::Relaxed);
                flight.requesting();
                grant()
            };
            let answer = cache.token(&request, &counted).await;
            let requested = requested.load(std::sync::atomic::Ordering::Relaxed);
            match answer {
                Ok(token) => {
                    return Ok(Held::from_shared(&token, policy.clock.instant(), requested));
                }
                Err(SharedCacheError::Grant(error)) => return Err(error),
                Err(SharedCacheError::Unavailable(message)) => tracing::warn!(
                    reason = %message,
                    "the shared token cache is unavailable; this process asks the token endpoint itself"
                ),
            }
        }
        flight.requesting();
        let response = grant().await?;
        Ok(Held::from_response(&response, flight.mono, policy.margin))
    }

    /// Hands a new consent's access token (`response`, the code exchange's answer) to the
    /// shared cache, if there is one, so that the fleet's next process gets it instead of an
    /// older consent's (a database store clears those when the refresh token is saved). The
    /// cache publishes it as if fetched; a cache that cannot be reached only logs it.
    async fn share_consent(
        &self,
        client: &OAuthClient,
        account: &str,
        policy: &Policy,
        response: &TokenResponse,
    ) {
        let Some(cache) = &self.cache else { return };
        let request = self.request(client, Some(account), &ScopeSet::default(), policy);
        let exchanged = || -> BoxFuture<'_, Result<TokenResponse, OAuthError>> {
            Box::pin(std::future::ready(Ok(response.clone())))
        };
        if let Err(e) = cache.token(&request, &exchanged).await {
            tracing::warn!(reason = %e, "the new consent's access token was not shared");
        }
    }
}

/// A fixed token (for example `MARKETPLACE_ACCESS_TOKEN`) is its own source: it is handed
/// out as is, and [`invalidate`](AccessTokenSource::invalidate) does nothing (the async
/// twin of the blocking implementation).
impl AccessTokenSource for AccessToken {
    fn access_token(&self) -> BoxFuture<'_, Result<AccessToken, OAuthError>> {
        let token = self.clone();
        Box::pin(async move { Ok(token) })
    }
    fn invalidate(&self, _token: &AccessToken) {}
}

/// One cached token: the core's [`CacheState`] behind a mutex that is never held across an
/// `.await`, and a `Notify` the waiting tasks sleep on.
#[derive(Default)]
struct Slot {
    state: Mutex<CacheState>,
    done: tokio::sync::Notify,
}

/// Ends a flight whose future was dropped half way (cancelled) or panicked: the waiters wake
/// and the next caller fetches.
struct FlightGuard<'a> {
    slot: &'a Slot,
    armed: bool,
}

impl Drop for FlightGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            lock(&self.slot.state).abandon();
            self.slot.done.notify_waiters();
        }
    }
}

impl Slot {
    async fn get<F, Fut>(&self, policy: &Policy, fetch: F) -> Result<AccessToken, OAuthError>
    where
        F: Fn(Flight) -> Fut,
        Fut: Future<Output = Result<Held, OAuthError>>,
    {
        loop {
            let step = lock(&self.state).step(policy);
            match step {
                Step::Ready(token) => return Ok(token),
                Step::Fail(error) => return Err(error),
                Step::Wait(flight) => loop {
                    // Registered before the state is read, so no wake-up is lost.
                    let mut notified = pin!(self.done.notified());
                    notified.as_mut().enable();
                    {
                        let st = lock(&self.state);
                        if !st.still_waiting(flight) {
                            if let Some(error) = st.after_wait(policy) {
                                return Err(error);
                            }
                            break;
                        }
                    }
                    notified.await;
                },
                Step::Fetch(flight) => {
                    let mut guard = FlightGuard {
                        slot: self,
                        armed: true,
                    };
                    let result = fetch(flight).await;
                    guard.armed = false;
                    let landing = lock(&self.state).land(flight, result, policy);
                    self.done.notify_waiters();
                    match landing {
                        Landing::Stale => {}
                        Landing::Done { result, report } => {
                            if let Some(error) = report {
                                policy.report(&error);
                            }
                            return result;
                        }
                    }
                }
            }
        }
    }

    fn install(&self, token: Held) -> std::sync::MutexGuard<'_, CacheState> {
        let mut st = lock(&self.state);
        st.install(token);
        self.done.notify_waiters();
        st
    }

    fn invalidate(&self, token: &AccessToken, policy: &Policy) {
        lock(&self.state).invalidate(token, policy);
    }

    fn retry_now(&self) {
        lock(&self.state).retry_now();
    }

    fn cached(&self, clock: &dyn Clock) -> Option<CachedToken> {
        lock(&self.state).cached(clock)
    }
}

/// Application tokens (client-credentials grant), cached per scope set: the async
/// [`crate::oauth::ApplicationTokenProvider`]. 200 tasks asking at once make one request.
pub struct ApplicationTokenProvider {
    client: Arc<OAuthClient>,
    default_scopes: ScopeSet,
    slots: Mutex<HashMap<ScopeSet, Arc<Slot>>>,
    pub(crate) policy: Policy,
    shared: Shared,
}

impl std::fmt::Debug for ApplicationTokenProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApplicationTokenProvider")
            .field("client", &self.client)
            .field("default_scopes", &self.default_scopes)
            .field("refresh_margin", &self.policy.margin)
            .finish_non_exhaustive()
    }
}

impl ApplicationTokenProvider {
    /// A provider for `client` whose default scope is `{base_url}/oauth/api_scope`.
    pub fn new(client: impl Into<Arc<OAuthClient>>) -> Self {
        let client = client.into();
        let default_scopes = ScopeSet::new([client.endpoints().default_scope()]);
        Self {
            client,
            default_scopes,
            slots: Mutex::new(HashMap::new()),
            policy: Policy::new(),
            shared: Shared::default(),
        }
    }

    /// The provider of the application whose settings are in the environment (see
    /// [`OAuthConfig`]): the common case in one line.
    ///
    /// ```no_run
    /// use marketplace_client::aio::oauth::{AccessTokenSource, ApplicationTokenProvider};
    /// # async fn run() -> Result<(), marketplace_client::oauth::OAuthError> {
    /// let token = ApplicationTokenProvider::from_env()?.access_token().await?;
    /// # let _ = token; Ok(()) }
    /// ```
    pub fn from_env() -> Result<Self, OAuthError> {
        OAuthClient::from_config(&OAuthConfig::from_env()?).map(Self::new)
    }

    /// The application-token source `config` describes, for async programs: the ready token
    /// of `MARKETPLACE_ACCESS_TOKEN` when it has one, otherwise a provider over
    /// [`OAuthClient::from_config`] (the blocking front's `ApplicationTokenProvider::source`,
    /// the same name). Building it does no I/O; the source's
    /// [`access_token`](AccessTokenSource::access_token) is what awaits.
    ///
    /// ```no_run
    /// use marketplace_client::aio::oauth::{AccessTokenSource, ApplicationTokenProvider, OAuthConfig};
    /// # async fn run() -> Result<(), marketplace_client::oauth::OAuthError> {
    /// let tokens = ApplicationTokenProvider::source(&OAuthConfig::from_env()?)?;
    /// let token = tokens.access_token().await?;
    /// # let _ = token; Ok(()) }
    /// ```
    pub fn source(config: &OAuthConfig) -> Result<Arc<dyn AccessTokenSource>, OAuthError> {
        if let Some(token) = &config.access_token {
            return Ok(Arc::new(token.clone()));
        }
        Ok(Arc::new(Self::new(OAuthClient::from_config(config)?)))
    }

    /// Shares the tokens through `cache` with every process that uses it (for example
    /// `marketplace-client-postgres`): one process of the fleet asks the token endpoint per
    /// expiry. When the cache cannot be reached, this provider asks for its own token, with
    /// a warning.
    pub fn with_shared_cache(mut self, cache: Arc<dyn SharedTokenCache>) -> Self {
        self.shared.cache = Some(cache);
        self
    }

    /// Sets the scopes of [`AccessTokenSource::access_token`].
    pub fn with_default_scopes(mut self, scopes: ScopeSet) -> Self {
        if !scopes.is_empty() {
            self.default_scopes = scopes;
        }
        self
    }

    policy_settings!(policy);

    /// The scopes of [`AccessTokenSource::access_token`].
    pub fn default_scopes(&self) -> &ScopeSet {
        &self.default_scopes
    }

    fn slot(&self, scopes: &ScopeSet) -> Arc<Slot> {
        lock(&self.slots).entry(scopes.clone()).or_default().clone()
    }

    /// A valid token for `scopes` (empty: the default scopes), from the cache or the server.
    pub async fn access_token_for(&self, scopes: &ScopeSet) -> Result<AccessToken, OAuthError> {
        let scopes = if scopes.is_empty() {
            &self.default_scopes
        } else {
            scopes
        };
        let slot = self.slot(scopes);
        let span = trace::token_source(
            Grant::ClientCredentials,
            None,
            Some(&scopes.to_space_separated()),
        );
        let result = slot
            .get(&self.policy, |flight| async move {
                let grant = || -> BoxFuture<'_, Result<TokenResponse, OAuthError>> {
                    Box::pin(self.client.client_credentials(scopes))
                };
                self.shared
                    .fetch(&self.client, None, scopes, &self.policy, flight, &grant)
                    .await
            })
            .instrument(span)
            .await;
        if result.is_ok() && !self.has_failure() {
            *lock(&self.policy.last_error) = None;
        }
        result
    }

    fn has_failure(&self) -> bool {
        lock(&self.slots)
            .values()
            .any(|s| lock(&s.state).has_failure())
    }

    /// The cached token for `scopes`, if any (valid or not).
    pub fn cached(&self, scopes: &ScopeSet) -> Option<CachedToken> {
        let scopes = if scopes.is_empty() {
            &self.default_scopes
        } else {
            scopes
        };
        let slot = lock(&self.slots).get(scopes).cloned();
        slot.and_then(|s| s.cached(&*self.policy.clock))
    }
}

impl AccessTokenSource for ApplicationTokenProvider {
    fn access_token(&self) -> BoxFuture<'_, Result<AccessToken, OAuthError>> {
        Box::pin(async move { self.access_token_for(&self.default_scopes).await })
    }

    fn invalidate(&self, token: &AccessToken) {
        self.shared.reject(token);
        let slots: Vec<Arc<Slot>> = lock(&self.slots).values().cloned().collect();
        for slot in slots {
            slot.invalidate(token, &self.policy);
        }
    }

    fn retry_now(&self) {
        let slots: Vec<Arc<Slot>> = lock(&self.slots).values().cloned().collect();
        for slot in slots {
            slot.retry_now();
        }
    }
}

pub use super::store::RefreshTokenStore;

/// User tokens of one account, renewed with the refresh token kept in an async
/// [`RefreshTokenStore`]; a rotated refresh token is saved back: the async
/// [`crate::oauth::UserTokenProvider`], with the same guarantees (a new consent always wins
/// over a refresh already running; a refresh token the store failed to save is kept and saved
/// again).
pub struct UserTokenProvider {
    client: Arc<OAuthClient>,
    store: Arc<dyn RefreshTokenStore>,
    account: String,
    scopes: Option<ScopeSet>,
    slot: Slot,
    pub(crate) policy: Policy,
    shared: Shared,
    /// The last refresh-token record read from or saved to the store.
    known: user::Known,
    /// A refresh token the store failed to save, kept and used until the store takes it.
    unsaved: Mutex<Option<Unsaved>>,
    /// Held through [`exchange_code`](Self::exchange_code): one consent at a time (an async
    /// lock, since it is held across the exchange).
    consent: tokio::sync::Mutex<()>,
    /// When the store last confirmed that it still holds the account's refresh token.
    confirmed: Mutex<Option<std::time::Instant>>,
}

/// How often a cached user token is confirmed against the store before it is handed out: a
/// deletion of the account's refresh token (eBay's account deletion notification, `consent
/// forget`) is noticed within this time, by every process sharing the store.
const STORE_RECHECK: std::time::Duration = std::time::Duration::from_secs(1);

impl std::fmt::Debug for UserTokenProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("UserTokenProvider")
            .field("client", &self.client)
            .field("account", &self.account)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl UserTokenProvider {
    /// A provider for `account`, whose refresh token is (or will be) in `store`.
    pub fn new(
        client: impl Into<Arc<OAuthClient>>,
        store: Arc<dyn RefreshTokenStore>,
        account: impl Into<String>,
    ) -> Self {
        Self {
            client: client.into(),
            store,
            account: account.into(),
            scopes: None,
            slot: Slot::default(),
            policy: Policy::new(),
            shared: Shared::default(),
            known: user::Known::default(),
            unsaved: Mutex::new(None),
            consent: tokio::sync::Mutex::new(()),
            confirmed: Mutex::new(None),
        }
    }

    /// The provider of `account`'s user token, for the application whose settings are in the
    /// environment (see [`OAuthConfig`]), its refresh token in `store`: the common case in one
    /// line.
    pub fn from_env(
        store: Arc<dyn RefreshTokenStore>,
        account: impl Into<String>,
    ) -> Result<Self, OAuthError> {
        Ok(Self::new(
            OAuthClient::from_config(&OAuthConfig::from_env()?)?,
            store,
            account,
        ))
    }

    /// Shares this account's access token through `cache` with every process that uses it:
    /// one process of the fleet refreshes it per expiry. When the cache cannot be reached,
    /// this provider refreshes on its own, with a warning.
    pub fn with_shared_cache(mut self, cache: Arc<dyn SharedTokenCache>) -> Self {
        self.shared.cache = Some(cache);
        self
    }

    /// Asks for `scopes` on refresh: a subset of the scopes granted at consent.
    pub fn with_scopes(mut self, scopes: ScopeSet) -> Self {
        self.scopes = Some(scopes).filter(|s| !s.is_empty());
        self
    }

    policy_settings!(policy);

    /// The account.
    pub fn account(&self) -> &str {
        &self.account
    }

    /// The cached access token, if any.
    pub fn cached(&self) -> Option<CachedToken> {
        self.slot.cached(&*self.policy.clock)
    }

    /// The refresh token the store failed to save, if any.
    pub fn unsaved_refresh_token(&self) -> Option<StoredRefreshToken> {
        lock(&self.unsaved).as_ref().map(|u| u.record.clone())
    }

    /// Completes consent: exchanges `code`, stores the refresh token with the
    /// `granted_scopes` and caches the access token (and, once the refresh token is saved,
    /// hands it to the shared cache, if any). When the store fails, its error is returned but
    /// the consent is not lost (see [`crate::oauth::UserTokenProvider`]).
    pub async fn exchange_code(
        &self,
        code: &AuthorizationCode,
        granted_scopes: &ScopeSet,
    ) -> Result<StoredRefreshToken, OAuthError> {
        let _one_consent_at_a_time = self.consent.lock().await;
        let span = trace::token_source(
            Grant::AuthorizationCode,
            Some(&self.account),
            Some(&granted_scopes.to_space_separated()),
        );
        let (wall, mono) = (self.policy.clock.now(), self.policy.clock.instant());
        let response = self
            .client
            .exchange_code(code)
            .instrument(span.clone())
            .await?;
        let record = user::consent_record(&response, granted_scopes, wall)?;
        let saved = self.store.save(&self.account, &record).await;
        {
            let _st = self
                .slot
                .install(Held::from_response(&response, mono, self.policy.margin));
            *lock(&self.unsaved) = saved.is_err().then(|| Unsaved {
                record: record.clone(),
                replaces: None,
            });
        }
        if let Err(e) = saved {
            self.policy.report(&e);
            return Err(e);
        }
        self.known.remember(&record);
        self.shared
            .share_consent(&self.client, &self.account, &self.policy, &response)
            .instrument(span)
            .await;
        Ok(record)
    }

    async fn save(
        &self,
        record: &StoredRefreshToken,
        replaces: Option<&RefreshToken>,
    ) -> Result<bool, OAuthError> {
        match replaces {
            Some(current) => self.store.replace(&self.account, current, record).await,
            None => self.store.save(&self.account, record).await.map(|()| true),
        }
    }

    fn set_unsaved(&self, generation: u64, unsaved: Option<Unsaved>) {
        let st = lock(&self.slot.state);
        if st.generation() == generation {
            *lock(&self.unsaved) = unsaved;
        }
    }

    fn clear_unsaved(&self, token: &RefreshToken) {
        let mut unsaved = lock(&self.unsaved);
        if unsaved
            .as_ref()
            .is_some_and(|u| u.record.refresh_token.ct_eq(token))
        {
            *unsaved = None;
        }
    }

    async fn current_record(
        &self,
    ) -> Result<(StoredRefreshToken, Option<RefreshToken>), OAuthError> {
        self.known.start();
        let unsaved = lock(&self.unsaved).clone();
        if let Some(u) = unsaved {
            match user::retried(&self.save(&u.record, u.replaces.as_ref()).await) {
                Retried::Saved => {
                    self.clear_unsaved(&u.record.refresh_token);
                    let held = u.record.refresh_token.clone();
                    return Ok((u.record, Some(held)));
                }
                Retried::Superseded => self.clear_unsaved(&u.record.refresh_token),
                Retried::Kept => return Ok((u.record, u.replaces)),
            }
        }
        let record = self
            .known
            .loaded(self.store.load(&self.account).await, &self.account)?;
        let held = record.refresh_token.clone();
        Ok((record, Some(held)))
    }

    async fn consent_revoked(
        &self,
        refused: &RefreshToken,
        description: Option<String>,
        status: u16,
    ) -> OAuthError {
        if let Err(e) = self.store.mark_needs_consent(&self.account, refused).await {
            self.policy.report(&e);
        }
        user::consent_revoked(&self.account, description, status)
    }

    async fn refresh(
        &self,
        flight: Flight,
        span: &tracing::Span,
    ) -> Result<TokenResponse, OAuthError> {
        let (record, stored) = self.current_record().await?;
        if self.scopes.is_none() {
            span.record(
                "scopes",
                tracing::field::display(record.scopes.to_space_separated()),
            );
        }
        user::check_usable(&record, flight.wall, &self.account)?;
        let scopes = user::refresh_scopes(self.scopes.as_ref(), &record);
        let response = match self.client.refresh(&record.refresh_token, scopes).await {
            Ok(response) => response,
            Err(e) => {
                return Err(match user::revoked(&e) {
                    Some(_) if self.known.refused_from_memory().is_some() => {
                        self.known.refused_from_memory().unwrap_or(e)
                    }
                    Some((description, status)) => {
                        self.consent_revoked(&record.refresh_token, description, status)
                            .await
                    }
                    None => e,
                });
            }
        };
        if let Some(updated) = user::rotated(&record, &response, flight.wall) {
            match self.save(&updated, stored.as_ref()).await {
                Ok(saved) => {
                    if saved {
                        self.known.remember(&updated);
                    }
                    self.set_unsaved(flight.generation, None)
                }
                Err(e) => {
                    self.policy.report(&e);
                    self.set_unsaved(
                        flight.generation,
                        Some(Unsaved {
                            record: updated,
                            replaces: stored,
                        }),
                    );
                }
            }
        }
        Ok(response)
    }
}

impl UserTokenProvider {
    /// Before a cached token is handed out: whether the store still holds the account's
    /// refresh token (asked at most once per [`STORE_RECHECK`]). A refresh token deleted from
    /// the store (the seller's account was deleted, or consent forgotten) takes the cached
    /// access token with it: [`OAuthError::NoRefreshToken`], as a provider started now would
    /// answer. A store that cannot be reached, or a refresh token the store has not taken
    /// yet, leaves the token as it is.
    async fn confirm_stored(&self) -> Result<(), OAuthError> {
        if self.cached().is_none() || lock(&self.unsaved).is_some() {
            return Ok(());
        }
        let now = self.policy.clock.instant();
        if lock(&self.confirmed).is_some_and(|at| now.saturating_duration_since(at) < STORE_RECHECK)
        {
            return Ok(());
        }
        match self.store.load(&self.account).await {
            Ok(Some(_)) => {
                *lock(&self.confirmed) = Some(now);
                Ok(())
            }
            Ok(None) => {
                tracing::info!(
                    account = %self.account,
                    "the account's refresh token is no longer stored: its cached access token is dropped"
                );
                lock(&self.slot.state).forget();
                *lock(&self.confirmed) = None;
                Err(user::no_refresh_token(&self.account))
            }
            // Unreachable: keep the token (the refresh falls back as it does), and ask again
            // after STORE_RECHECK, not at every call while the store is down.
            Err(_) => {
                *lock(&self.confirmed) = Some(now);
                Ok(())
            }
        }
    }
}

impl AccessTokenSource for UserTokenProvider {
    fn access_token(&self) -> BoxFuture<'_, Result<AccessToken, OAuthError>> {
        Box::pin(async move {
            self.confirm_stored().await?;
            let span = trace::token_source(
                Grant::RefreshToken,
                Some(&self.account),
                self.scopes
                    .as_ref()
                    .map(|s| s.to_space_separated())
                    .as_deref(),
            );
            let result = self
                .slot
                .get(&self.policy, |flight| {
                    let span = &span;
                    async move {
                        let scopes = self.scopes.clone().unwrap_or_default();
                        let grant = || -> BoxFuture<'_, Result<TokenResponse, OAuthError>> {
                            Box::pin(self.refresh(flight, span))
                        };
                        self.shared
                            .fetch(
                                &self.client,
                                Some(&self.account),
                                &scopes,
                                &self.policy,
                                flight,
                                &grant,
                            )
                            .await
                    }
                })
                .instrument(span.clone())
                .await;
            if result.is_ok()
                && !lock(&self.slot.state).has_failure()
                && lock(&self.unsaved).is_none()
            {
                *lock(&self.policy.last_error) = None;
            }
            result
        })
    }

    fn invalidate(&self, token: &AccessToken) {
        self.shared.reject(token);
        self.slot.invalidate(token, &self.policy);
    }

    fn retry_now(&self) {
        self.slot.retry_now();
    }
}
