//! Token providers: thread-safe caches that hand out a current access token and fetch a new
//! one shortly before the old one expires, never more often than needed.
//!
//! * One request per expiry: when many threads ask at once, one of them asks the server and
//!   the others wait for its answer (single flight).
//! * Refresh early, but not too early: a token is renewed at the later of "the refresh margin
//!   (5 minutes by default) before expiry" and "half-way through its lifetime", so a 2-hour
//!   token renews at 1 h 55 min and a 4-minute token at 2 min. While the renewal runs, other
//!   threads keep getting the old, still valid token.
//! * A failed renewal while the old token is still valid hands out the old token, reports the
//!   failure (hook and [`ApplicationTokenProvider::last_error`]) and waits a back-off before
//!   trying again. Without a usable token a failure is returned, and until the back-off has
//!   passed the same failure is answered without a request, as [`OAuthError::BackingOff`]
//!   ("the last attempt failed 2 s ago; next attempt in 28 s"): at most one request per
//!   back-off, however often it is asked. [`AccessTokenSource::retry_now`] ends the wait.
//! * Deadlines kept in the process (renewal, expiry, back-off) run on the monotonic clock, so
//!   a step of the wall clock, back or forward, moves none of them; only what is stored (the
//!   expiry of a refresh token) is wall-clock time. Both come from a [`Clock`], so tests move
//!   time with [`ManualClock`](crate::oauth::ManualClock) instead of sleeping.
//! * A new consent is never undone by a refresh that was already running (a generation
//!   counter drops the older flight's result), and a rotated refresh token is saved only over
//!   the token its refresh started from.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};

use crate::core::cache::{
    CacheState, CachedToken, Clock, Flight, Held, Landing, Policy, Step, policy_settings,
};
use crate::core::trace;
use crate::oauth::shared::{self, SharedTokenCache};
use crate::oauth::{
    AccessToken, AuthorizationCode, Grant, OAuthConfig, OAuthError, RefreshToken,
    RefreshTokenStore, ScopeSet, StoredRefreshToken, TokenResponse, lock,
};

use super::oauth::OAuthClient;
use crate::core::user::{self, Retried, Unsaved};

/// Something that hands out a current bearer token. The taxonomy client takes one of these:
/// on a 401 answer it calls [`invalidate`](Self::invalidate) with the token it sent and asks
/// again.
pub trait AccessTokenSource: Send + Sync {
    /// A token that is valid now.
    fn access_token(&self) -> Result<AccessToken, OAuthError>;

    /// Tells the source that `token` was rejected, so the next call fetches a new one. A token
    /// other than the cached one (already replaced) is ignored.
    fn invalidate(&self, token: &AccessToken);

    /// Ends the wait after a failed request, so the next call asks the server at once instead
    /// of answering [`OAuthError::BackingOff`] (for example once a dependency that was not up
    /// yet is). A cached token is kept. Does nothing by default.
    fn retry_now(&self) {}
}

impl<T: AccessTokenSource + ?Sized> AccessTokenSource for Arc<T> {
    fn access_token(&self) -> Result<AccessToken, OAuthError> {
        (**self).access_token()
    }
    fn invalidate(&self, token: &AccessToken) {
        (**self).invalidate(token)
    }
    fn retry_now(&self) {
        (**self).retry_now()
    }
}

/// A fixed token (for example `MARKETPLACE_ACCESS_TOKEN`) is its own source: it is handed
/// out as is, and [`invalidate`](AccessTokenSource::invalidate) does nothing, since there is
/// nothing to renew it with. Its `Debug` stays `AccessToken([redacted])`.
///
/// ```
/// use marketplace_client::oauth::{AccessToken, AccessTokenSource};
/// let token = AccessToken::new("v^1.1#i^1#…");
/// assert_eq!(token.access_token().unwrap(), token);
/// ```
impl AccessTokenSource for AccessToken {
    fn access_token(&self) -> Result<AccessToken, OAuthError> {
        Ok(self.clone())
    }
    fn invalidate(&self, _token: &AccessToken) {}
}

/// One cached token and the single-flight machinery around it: the core's
/// [`CacheState`] behind a mutex, and a condition variable the waiters sleep on.
#[derive(Default)]
struct Slot {
    state: Mutex<CacheState>,
    done: Condvar,
}

/// Ends a flight even when the fetch panics, so waiters never hang.
struct FlightGuard<'a> {
    slot: &'a Slot,
    armed: bool,
}

impl Drop for FlightGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            lock(&self.slot.state).abandon(Some(OAuthError::Transport {
                message: "the token request was interrupted by a panic".into(),
            }));
            self.slot.done.notify_all();
        }
    }
}

impl Slot {
    /// A current token: from the cache, from another thread's request (waited for), or from
    /// `fetch`, as the core's [`CacheState::step`] decides.
    fn get(
        &self,
        policy: &Policy,
        fetch: impl Fn(Flight) -> Result<Held, OAuthError>,
    ) -> Result<AccessToken, OAuthError> {
        let mut st = lock(&self.state);
        loop {
            match st.step(policy) {
                Step::Ready(token) => return Ok(token),
                Step::Fail(error) => return Err(error),
                Step::Wait(flight) => {
                    while st.still_waiting(flight) {
                        st = self.done.wait(st).unwrap_or_else(|e| e.into_inner());
                    }
                    if let Some(error) = st.after_wait(policy) {
                        return Err(error);
                    }
                }
                Step::Fetch(flight) => {
                    drop(st);
                    let mut guard = FlightGuard {
                        slot: self,
                        armed: true,
                    };
                    let result = fetch(flight);
                    guard.armed = false;
                    st = lock(&self.state);
                    let landing = st.land(flight, result, policy);
                    self.done.notify_all();
                    match landing {
                        Landing::Stale => {}
                        Landing::Done { result, report } => {
                            drop(st);
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

    /// Installs a token obtained outside a flight (a new consent); returns the state, still
    /// locked, for what must change with it.
    fn install(&self, token: Held) -> std::sync::MutexGuard<'_, CacheState> {
        let mut st = lock(&self.state);
        st.install(token);
        self.done.notify_all();
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
    client: Arc<OAuthClient>,
    default_scopes: ScopeSet,
    slots: Mutex<HashMap<ScopeSet, Arc<Slot>>>,
    policy: Policy,
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
        Ok(Self::new(OAuthClient::from_config(
            &OAuthConfig::from_env()?,
        )?))
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

    policy_settings!();

    /// The scopes of [`AccessTokenSource::access_token`].
    pub fn default_scopes(&self) -> &ScopeSet {
        &self.default_scopes
    }

    fn slot(&self, scopes: &ScopeSet) -> Arc<Slot> {
        lock(&self.slots).entry(scopes.clone()).or_default().clone()
    }

    /// A valid token for `scopes` (empty: the default scopes), from the cache or the server.
    pub fn access_token_for(&self, scopes: &ScopeSet) -> Result<AccessToken, OAuthError> {
        let scopes = if scopes.is_empty() {
            &self.default_scopes
        } else {
            scopes
        };
        let slot = self.slot(scopes);
        let span =
            trace::token_source(Grant::ClientCredentials, Some(&scopes.to_space_separated()));
        let result = span.in_scope(|| {
            slot.get(&self.policy, |flight| {
                self.shared.fetch(
                    &self.client,
                    None,
                    scopes,
                    &self.policy,
                    flight,
                    &mut || self.client.client_credentials(scopes),
                )
            })
        });
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
    fn access_token(&self) -> Result<AccessToken, OAuthError> {
        self.access_token_for(&self.default_scopes.clone())
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
    client: Arc<OAuthClient>,
    store: Arc<dyn RefreshTokenStore>,
    account: String,
    scopes: Option<ScopeSet>,
    slot: Slot,
    policy: Policy,
    shared: Shared,
    /// The last refresh-token record read from or saved to the store.
    known: user::Known,
    /// A refresh token the store failed to save (after a consent or a rotation): kept here (it
    /// may be the only valid one), used, and saved again on the next refresh. Locked after
    /// `slot.state` when both are held.
    unsaved: Mutex<Option<Unsaved>>,
    /// Held through [`exchange_code`](Self::exchange_code): one consent at a time, so the one
    /// that ends last is the one that stays, in the store and in the cache.
    consent: Mutex<()>,
}

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
            consent: Mutex::new(()),
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

    /// Asks for `scopes` on refresh: a subset of the scopes granted at consent (the default
    /// is all of them, as stored with the refresh token).
    pub fn with_scopes(mut self, scopes: ScopeSet) -> Self {
        self.scopes = Some(scopes).filter(|s| !s.is_empty());
        self
    }

    policy_settings!();

    /// The account.
    pub fn account(&self) -> &str {
        &self.account
    }

    /// The cached access token, if any.
    pub fn cached(&self) -> Option<CachedToken> {
        self.slot.cached(&*self.policy.clock)
    }

    /// The refresh token the store failed to save, if any: the provider keeps it, uses it and
    /// saves it again on every refresh until the store takes it. A process that is about to
    /// end can write it somewhere safe (never to a log).
    pub fn unsaved_refresh_token(&self) -> Option<StoredRefreshToken> {
        lock(&self.unsaved).as_ref().map(|u| u.record.clone())
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
        let _one_consent_at_a_time = lock(&self.consent);
        let span = trace::token_source(
            Grant::AuthorizationCode,
            Some(&granted_scopes.to_space_separated()),
        );
        let _entered = span.enter();
        let (wall, mono) = (self.policy.clock.now(), self.policy.clock.instant());
        let response = self.client.exchange_code(code)?;
        let record = user::consent_record(&response, granted_scopes, wall)?;
        // The new consent replaces whatever the store holds; the flights still running see
        // the generation change and drop their results.
        let saved = self.store.save(&self.account, &record);
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
            .share_consent(&self.client, &self.account, &self.policy, &response);
        Ok(record)
    }

    /// Saves `record` in place of `replaces` (or of anything, for `None`); `Ok(false)` when
    /// the store holds another token by now.
    fn save(
        &self,
        record: &StoredRefreshToken,
        replaces: Option<&RefreshToken>,
    ) -> Result<bool, OAuthError> {
        match replaces {
            Some(current) => self.store.replace(&self.account, current, record),
            None => self.store.save(&self.account, record).map(|()| true),
        }
    }

    /// Sets the unsaved token, unless a consent came since the flight `generation` started.
    fn set_unsaved(&self, generation: u64, unsaved: Option<Unsaved>) {
        let st = lock(&self.slot.state);
        if st.generation() == generation {
            *lock(&self.unsaved) = unsaved;
        }
    }

    /// Forgets the unsaved token if it is still `token`.
    fn clear_unsaved(&self, token: &RefreshToken) {
        let mut unsaved = lock(&self.unsaved);
        if unsaved
            .as_ref()
            .is_some_and(|u| u.record.refresh_token.ct_eq(token))
        {
            *unsaved = None;
        }
    }

    /// The refresh token to use, and the one the store is known to hold (`None`: unknown, as
    /// when a consent's token could not be saved).
    fn current_record(&self) -> Result<(StoredRefreshToken, Option<RefreshToken>), OAuthError> {
        self.known.start();
        let unsaved = lock(&self.unsaved).clone();
        if let Some(u) = unsaved {
            // Try the save that failed last time; the token is used either way, unless the
            // store has taken a newer one meanwhile (another process's consent).
            match user::retried(&self.save(&u.record, u.replaces.as_ref())) {
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
            .loaded(self.store.load(&self.account), &self.account)?;
        let held = record.refresh_token.clone();
        Ok((record, Some(held)))
    }

    /// The server refused `refused` (`invalid_grant` on refresh): marks the account in the
    /// store, if the store still holds that token, and says which account needs consent.
    fn consent_revoked(
        &self,
        refused: &RefreshToken,
        description: Option<String>,
        status: u16,
    ) -> OAuthError {
        if let Err(e) = self.store.mark_needs_consent(&self.account, refused) {
            // The error below still says what to do; the store's failure is reported aside.
            self.policy.report(&e);
        }
        user::consent_revoked(&self.account, description, status)
    }

    fn refresh(&self, flight: Flight, span: &tracing::Span) -> Result<TokenResponse, OAuthError> {
        let (record, stored) = self.current_record()?;
        if self.scopes.is_none() {
            span.record(
                "scopes",
                tracing::field::display(record.scopes.to_space_separated()),
            );
        }
        user::check_usable(&record, flight.wall, &self.account)?;
        let scopes = user::refresh_scopes(self.scopes.as_ref(), &record);
        let response = match self.client.refresh(&record.refresh_token, scopes) {
            Ok(response) => response,
            Err(e) => {
                return Err(match user::revoked(&e) {
                    // Refused, but the token came from memory while the store was down: the
                    // store may hold a newer one; say the store is down, mark nothing.
                    Some(_) if self.known.refused_from_memory().is_some() => {
                        self.known.refused_from_memory().unwrap_or(e)
                    }
                    Some((description, status)) => {
                        self.consent_revoked(&record.refresh_token, description, status)
                    }
                    None => e,
                });
            }
        };
        if let Some(updated) = user::rotated(&record, &response, flight.wall) {
            // Saved only over the token this refresh started from: if the store took a new
            // consent meanwhile, the rotated token belongs to the grant it replaced.
            match self.save(&updated, stored.as_ref()) {
                Ok(saved) => {
                    if saved {
                        self.known.remember(&updated);
                    }
                    self.set_unsaved(flight.generation, None)
                }
                Err(e) => {
                    // Do not lose the new refresh token (the old one may be dead): keep it in
                    // memory, report the failure, and hand out the access token anyway.
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

impl AccessTokenSource for UserTokenProvider {
    fn access_token(&self) -> Result<AccessToken, OAuthError> {
        let span = trace::token_source(
            Grant::RefreshToken,
            self.scopes
                .as_ref()
                .map(|s| s.to_space_separated())
                .as_deref(),
        );
        let result = span.in_scope(|| {
            self.slot.get(&self.policy, |flight| {
                let scopes = self.scopes.clone().unwrap_or_default();
                self.shared.fetch(
                    &self.client,
                    Some(&self.account),
                    &scopes,
                    &self.policy,
                    flight,
                    &mut || self.refresh(flight, &span),
                )
            })
        });
        // A refresh token still waiting to be saved stays reported.
        if result.is_ok() && !lock(&self.slot.state).has_failure() && lock(&self.unsaved).is_none()
        {
            *lock(&self.policy.last_error) = None;
        }
        result
    }

    fn invalidate(&self, token: &AccessToken) {
        self.shared.reject(token);
        self.slot.invalidate(token, &self.policy);
    }

    fn retry_now(&self) {
        self.slot.retry_now();
    }
}

/// A provider's shared cache: the core's, over this front's trait.
type Shared = shared::Shared<dyn SharedTokenCache>;

impl Shared {
    /// A flight's token: through the shared cache when there is one and it can be reached,
    /// otherwise from `grant` directly.
    fn fetch(
        &self,
        client: &OAuthClient,
        account: Option<&str>,
        scopes: &ScopeSet,
        policy: &Policy,
        flight: Flight,
        grant: &mut dyn FnMut() -> Result<TokenResponse, OAuthError>,
    ) -> Result<Held, OAuthError> {
        if let Some(cache) = &self.cache {
            let request = self.request(
                client.endpoints(),
                client.client_id().as_str(),
                account,
                scopes,
                policy,
            );
            flight.asking_shared_cache();
            let mut requested = false;
            let answer = cache.token(&request, &mut || {
                requested = true;
                flight.requesting();
                grant()
            });
            if let Some(held) = shared::settle(answer, policy.clock.instant(), requested)? {
                return Ok(held);
            }
        }
        flight.requesting();
        let response = grant()?;
        Ok(Held::from_response(&response, flight.mono, policy.margin))
    }

    /// Hands a new consent's access token (`response`, the code exchange's answer) to the
    /// shared cache, if there is one, so that the fleet's next process gets it instead of an
    /// older consent's (a database store clears those when the refresh token is saved). The
    /// cache publishes it as if fetched; a cache that cannot be reached only logs it.
    fn share_consent(
        &self,
        client: &OAuthClient,
        account: &str,
        policy: &Policy,
        response: &TokenResponse,
    ) {
        let Some(cache) = &self.cache else { return };
        let request = self.request(
            client.endpoints(),
            client.client_id().as_str(),
            Some(account),
            &ScopeSet::default(),
            policy,
        );
        if let Err(e) = cache.token(&request, &mut || Ok(response.clone())) {
            tracing::warn!(reason = %e, "the new consent's access token was not shared");
        }
    }
}
