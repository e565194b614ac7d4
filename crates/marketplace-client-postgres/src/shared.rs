//! The fleet's token cache: [`PgTokenCache`] decides, for one provider's flight, whether to
//! hand out the token another process published, wait for the process renewing it, or renew
//! it here under a lease.

use std::fmt;
use std::time::{Duration, Instant, SystemTime};

use marketplace_client::aio::oauth::{BoxFuture, SharedTokenCache};
use marketplace_client::oauth::{
    OAuthError, SharedCacheError, SharedToken, SharedTokenRequest, TokenResponse,
};

use crate::cache::{CacheKey, CachedRow, Lease, NewCachedToken, TokenCache};
use crate::crypto::Keyring;
use crate::error::Error;

/// How long a process may renew a token before another may take over (its lease).
pub const DEFAULT_LEASE: Duration = Duration::from_secs(10);

/// The longest a token call waits for the database before going on without it.
pub const DEFAULT_DB_TIMEOUT: Duration = Duration::from_secs(2);

/// The longest a call waits for another process's token request (which may take as long as
/// its time-out) before going on alone.
const MAX_WAIT: Duration = Duration::from_secs(120);

/// How often a process waiting for another's renewal looks at the cache.
const POLL: Duration = Duration::from_millis(25);

/// While another process renews a still valid token, the old one is handed out for this long
/// before this process looks again.
const WHILE_RENEWING: Duration = Duration::from_secs(1);

/// Access tokens shared by every process of a fleet through PostgreSQL: the
/// [`SharedTokenCache`] of the `aio` providers (and, through
/// [`blocking::TokenStore`](crate::blocking::TokenStore), of the blocking ones).
///
/// For each flight of a provider it reads the cache row (by the database's clock):
/// - a token not yet due for renewal is handed out;
/// - during a shared back-off (another process's grant failed), the old token while it is
///   valid, otherwise that failure ([`OAuthError::BackingOff`]);
/// - otherwise one process takes the row's [`Lease`], asks the token endpoint and publishes
///   the token under the lease's fence; the others hand out the old token while it is valid,
///   or wait for the new one. A leader that dies is replaced when its lease runs out.
///
/// Only the token endpoint's own refusals (an error status) become the fleet's back-off; a
/// failure of this process alone (a refresh token its key cannot decrypt, a store it cannot
/// read, a network that does not reach the endpoint) gives the lease back at once and is this
/// process's answer only.
///
/// When the database fails or takes longer than the time-out (2 s by default) before this
/// process asked the token endpoint, the answer is [`SharedCacheError::Unavailable`]: the
/// provider asks for its own token and logs a warning. A token fetched here is returned even
/// when it cannot be published.
#[derive(Clone)]
pub struct PgTokenCache {
    cache: TokenCache,
    holder: String,
    lease: Duration,
    db_timeout: Duration,
}

impl fmt::Debug for PgTokenCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgTokenCache")
            .field("holder", &self.holder)
            .field("lease", &self.lease)
            .field("db_timeout", &self.db_timeout)
            .finish_non_exhaustive()
    }
}

impl PgTokenCache {
    /// The cache in the database of `pool` (migrated with [`crate::migrate`]), its tokens
    /// encrypted under `keyring`.
    pub fn new(pool: sqlx::PgPool, keyring: Keyring) -> Self {
        Self::over(TokenCache::new(pool, keyring))
    }

    pub(crate) fn over(cache: TokenCache) -> Self {
        Self {
            cache,
            holder: holder_name(),
            lease: DEFAULT_LEASE,
            db_timeout: DEFAULT_DB_TIMEOUT,
        }
    }

    /// Sets how long a renewing process holds the lease ([`DEFAULT_LEASE`]) between its
    /// extensions (every third of it, while it asks the token endpoint): short enough that
    /// a dead leader is replaced soon. It is taken between 100 ms and a day.
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease.clamp(Duration::from_millis(100), Duration::from_secs(86_400));
        self
    }

    /// Sets the longest wait for each database statement ([`DEFAULT_DB_TIMEOUT`]).
    pub fn with_db_timeout(mut self, timeout: Duration) -> Self {
        self.db_timeout = timeout;
        self
    }

    /// This process's name in the leases it takes (host, process id and a random suffix).
    pub fn holder(&self) -> &str {
        &self.holder
    }

    /// The current token of `request`, from the cache, from another process or from `fetch`
    /// (see the type's documentation).
    pub async fn token<'f>(
        &self,
        request: &SharedTokenRequest,
        fetch: &(dyn Fn() -> BoxFuture<'f, Result<TokenResponse, OAuthError>> + Send + Sync + 'f),
    ) -> Result<SharedToken, SharedCacheError> {
        let key = key_of(request);
        let started = Instant::now();
        loop {
            // Within one round, the database's statements share one time-out: when it is down
            // or slow, the caller goes on alone after `db_timeout`, not after several.
            let budget = crate::time::deadline_in(self.db_timeout);
            let row = self.read(&key, budget).await?;
            let seen = row.as_ref().map(|row| Seen::of(row, request));
            if let Some(seen) = &seen {
                if let Some(renewed_ago) = seen.refused_again {
                    // Renewed after a refusal less than a back-off ago, by this process or
                    // another, and refused too: no process renews it before the back-off
                    // ends (a host refusing every token would cost a grant per process).
                    tracing::warn!(
                        renewed_ago_ms = renewed_ago.as_millis() as u64,
                        backoff_ms = request.retry_backoff.as_millis() as u64,
                        "the shared token renewed after a refusal was refused too: no renewal before the back-off ends"
                    );
                    return Err(SharedCacheError::Grant(OAuthError::RenewedTokenRefused {
                        renewed_ago,
                    }));
                }
                if let Some(token) = &seen.fresh {
                    return Ok(token.clone());
                }
                if let Some(answer) = seen.backing_off() {
                    return answer;
                }
            }
            let held_elsewhere = row
                .as_ref()
                .is_some_and(|r| r.lease_until.is_some_and(|until| until > r.read_at));
            let lease = if held_elsewhere {
                None
            } else {
                self.within(budget, self.cache.try_lease(&key, &self.holder, self.lease))
                    .await?
            };
            match lease {
                Some(lease) => return self.renew(&key, lease, request, fetch, budget).await,
                None => {
                    // Another process renews: the old token while it is valid (looked at
                    // again soon), otherwise wait for the new one.
                    if let Some(token) = seen.and_then(|s| s.valid) {
                        return Ok(SharedToken {
                            renew_in: WHILE_RENEWING.min(token.expires_in),
                            ..token
                        });
                    }
                    if started.elapsed() > MAX_WAIT {
                        return Err(SharedCacheError::Unavailable(format!(
                            "waited {} s for another process's token request",
                            MAX_WAIT.as_secs()
                        )));
                    }
                    tokio::time::sleep(POLL).await;
                }
            }
        }
    }

    /// Renews the token of `key` under `lease`: asks the token endpoint (unless another
    /// process published a token, or a failure, just before the lease was granted) while
    /// keeping the lease alive, and publishes the answer, or records the token endpoint's
    /// refusal as the fleet's back-off (any other failure only gives the lease back). Dropped
    /// half way (a cancelled call), it gives the lease back.
    async fn renew<'f>(
        &self,
        key: &CacheKey,
        lease: Lease,
        request: &SharedTokenRequest,
        fetch: &(dyn Fn() -> BoxFuture<'f, Result<TokenResponse, OAuthError>> + Send + Sync + 'f),
        budget: tokio::time::Instant,
    ) -> Result<SharedToken, SharedCacheError> {
        let mut guard = LeaseGuard {
            cache: self.cache.clone(),
            key: key.clone(),
            lease: lease.clone(),
            db_timeout: self.db_timeout,
            heartbeat: None,
            armed: true,
        };
        let granted = Instant::now();
        let granted_at = lease
            .until()
            .checked_sub(self.lease)
            .unwrap_or(lease.until());
        // Published between this process's read and its lease: no request needed.
        let mut after_refusal = false;
        match self.read(key, budget).await {
            Ok(Some(row)) => {
                let seen = Seen::of(&row, request);
                let early = seen.fresh.clone().map(Ok).or_else(|| seen.backing_off());
                if let Some(answer) = early {
                    guard.release(self).await;
                    return answer;
                }
                after_refusal = seen.refused;
            }
            Ok(None) => {}
            Err(unavailable) => {
                guard.release(self).await;
                return Err(unavailable);
            }
        }
        guard.heartbeat = Some(tokio::spawn(heartbeat(
            self.cache.clone(),
            key.clone(),
            lease.clone(),
            self.lease,
            self.db_timeout,
        )));
        let answer = fetch().await;
        if let Some(beat) = guard.heartbeat.take() {
            beat.abort();
        }
        // Publishing or recording ends the lease (when it is still this process's).
        guard.armed = false;
        match answer {
            Ok(response) => {
                let token = SharedToken::from_response(&response, request);
                self.publish(key, &lease, granted_at, &token, after_refusal)
                    .await;
                Ok(token)
            }
            Err(error) if !answered_by_token_endpoint(&error) => {
                // This process's own failure (its store, its key, its network): not the
                // fleet's. The lease goes back at once, so another process renews.
                if let Err(e) = self.db(self.cache.release(key, &lease)).await {
                    tracing::warn!(reason = %e, "could not release a token cache lease; it runs out by itself");
                }
                Err(SharedCacheError::Grant(error))
            }
            Err(error) => {
                let wait = request.backoff_after(&error);
                let retry_not_before = granted_at
                    .checked_add(granted.elapsed())
                    .and_then(|t| t.checked_add(wait))
                    .unwrap_or(granted_at);
                let message = error.to_string();
                match self
                    .db(self
                        .cache
                        .record_failure(key, &lease, retry_not_before, &message))
                    .await
                {
                    Ok(true) => {}
                    Ok(false) => tracing::warn!(
                        "the token request failed after this process's lease ran out; its \
                         failure was not shared"
                    ),
                    Err(e) => tracing::warn!(reason = %e, "could not share a failed token request"),
                }
                Err(SharedCacheError::Grant(error))
            }
        }
    }

    async fn publish(
        &self,
        key: &CacheKey,
        lease: &Lease,
        granted_at: SystemTime,
        token: &SharedToken,
        renewed_after_refusal: bool,
    ) {
        let (Some(expires_at), Some(renew_at)) = (
            granted_at.checked_add(token.expires_in),
            granted_at.checked_add(token.renew_in),
        ) else {
            tracing::warn!("a token lifetime too long to store; this process uses it alone");
            return;
        };
        let new = NewCachedToken {
            token: token.access_token.secret(),
            token_type: &token.token_type,
            expires_at,
            renew_at,
            renewed_after_refusal,
        };
        match self.db(self.cache.publish(key, lease, new)).await {
            Ok(true) => {}
            // The cache logs the stale lease itself.
            Ok(false) => {}
            Err(e) => tracing::warn!(
                reason = %e,
                "could not share the new token; this process uses it alone"
            ),
        }
    }

    /// The row of `key`, read before `deadline`. A row that does not decrypt (written under
    /// a key this process does not hold) counts as holding no token, so that it is replaced.
    async fn read(
        &self,
        key: &CacheKey,
        deadline: tokio::time::Instant,
    ) -> Result<Option<CachedRow>, SharedCacheError> {
        match tokio::time::timeout_at(deadline, self.cache.read(key)).await {
            Ok(Ok(row)) => Ok(row),
            Ok(Err(e @ (Error::Decrypt { .. } | Error::Corrupt { .. }))) => {
                tracing::warn!(reason = %e, "a cached token cannot be read; it will be replaced");
                Ok(None)
            }
            Ok(Err(e)) => Err(self.unavailable(e).await),
            Err(_) => Err(self.too_slow()),
        }
    }

    /// `statement`, bounded by `deadline`; any failure is "unavailable".
    async fn within<T>(
        &self,
        deadline: tokio::time::Instant,
        statement: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, SharedCacheError> {
        match tokio::time::timeout_at(deadline, statement).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(self.unavailable(e).await),
            Err(_) => Err(self.too_slow()),
        }
    }

    /// `e` as the cache's unavailability. The pool's "timed out while waiting for an open
    /// connection" says nothing of why: one direct attempt finds it (refused, …).
    async fn unavailable(&self, e: Error) -> SharedCacheError {
        let probe = self.db_timeout.min(Duration::from_secs(3));
        SharedCacheError::Unavailable(e.explained(self.cache.pool(), probe).await.to_string())
    }

    /// `statement`, bounded by the time-out; any failure is "unavailable".
    async fn db<T>(
        &self,
        statement: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, SharedCacheError> {
        self.within(crate::time::deadline_in(self.db_timeout), statement)
            .await
    }

    fn too_slow(&self) -> SharedCacheError {
        SharedCacheError::Unavailable(format!(
            "the database did not answer within {} ms",
            self.db_timeout.as_millis()
        ))
    }
}

/// Keeps a lease alive while its holder asks the token endpoint (which may take longer than
/// the lease: up to the request's time-out), extending it every third of its length.
async fn heartbeat(
    cache: TokenCache,
    key: CacheKey,
    lease: Lease,
    lease_for: Duration,
    db_timeout: Duration,
) {
    let period = (lease_for / 3).max(Duration::from_millis(10));
    loop {
        tokio::time::sleep(period).await;
        match tokio::time::timeout(db_timeout, cache.extend(&key, &lease, lease_for)).await {
            Ok(Ok(true)) => {}
            Ok(Ok(false)) => {
                tracing::warn!(
                    "this process's token cache lease was taken over; stopping its heartbeat"
                );
                return;
            }
            // The database is unreachable: the lease may run out, the request goes on.
            Ok(Err(_)) | Err(_) => {}
        }
    }
}

/// A lease held while renewing: its heartbeat stops, and the lease is given back, when the
/// renewal ends early or is dropped half way.
struct LeaseGuard {
    cache: TokenCache,
    key: CacheKey,
    lease: Lease,
    db_timeout: Duration,
    heartbeat: Option<tokio::task::JoinHandle<()>>,
    armed: bool,
}

impl LeaseGuard {
    /// Gives the lease back now.
    async fn release(&mut self, owner: &PgTokenCache) {
        self.armed = false;
        if let Err(e) = owner.db(self.cache.release(&self.key, &self.lease)).await {
            tracing::warn!(reason = %e, "could not release a token cache lease; it runs out by itself");
        }
    }
}

impl Drop for LeaseGuard {
    fn drop(&mut self) {
        if let Some(beat) = self.heartbeat.take() {
            beat.abort();
        }
        if !self.armed {
            return;
        }
        // Cancelled half way: give the lease back in the background, so that the fleet does
        // not wait for it to run out.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (cache, key, lease, db_timeout) = (
                self.cache.clone(),
                self.key.clone(),
                self.lease.clone(),
                self.db_timeout,
            );
            runtime.spawn(async move {
                let _ = tokio::time::timeout(db_timeout, cache.release(&key, &lease)).await;
            });
        }
    }
}

impl SharedTokenCache for PgTokenCache {
    fn token<'a, 'f: 'a>(
        &'a self,
        request: &'a SharedTokenRequest,
        fetch: &'a (
                dyn Fn() -> BoxFuture<'f, Result<TokenResponse, OAuthError>> + Send + Sync + 'f
            ),
    ) -> BoxFuture<'a, Result<SharedToken, SharedCacheError>> {
        Box::pin(PgTokenCache::token(self, request, fetch))
    }
}

/// True when the token endpoint itself refused the request (it answered with an error
/// status): the failure every process would meet, shared as the fleet's back-off. A failure
/// of this process alone (a store it cannot read, a key that does not decrypt, no refresh
/// token, a network that does not reach the endpoint) is not: the other processes may well
/// succeed, and this one backs off on its own (`retry_now` ends that wait).
fn answered_by_token_endpoint(error: &OAuthError) -> bool {
    matches!(
        error,
        OAuthError::Server { .. }
            | OAuthError::ConsentRevoked { .. }
            | OAuthError::RateLimited { .. }
            | OAuthError::Http { .. }
            | OAuthError::UnexpectedBody { .. }
    )
}

/// The cache row of `request`.
pub(crate) fn key_of(request: &SharedTokenRequest) -> CacheKey {
    match &request.account {
        // A provider asking for a subset of the consented scopes has a token of its own, keyed
        // by the account and, in a column of its own, the scope set: no account name can
        // stand for another account's scoped token.
        Some(account) => CacheKey::user_for_scopes(
            &request.environment,
            &request.client_id,
            account,
            &request.scopes.to_space_separated(),
        ),
        None => CacheKey::application(
            &request.environment,
            &request.client_id,
            &request.scopes.to_space_separated(),
        ),
    }
}

/// What a cache row offers, by the database's clock at the read.
struct Seen {
    /// A token not yet due for renewal.
    fresh: Option<SharedToken>,
    /// A token not yet expired (due for renewal or not).
    valid: Option<SharedToken>,
    /// The shared back-off: the time left and the stored failure.
    backoff: Option<(Duration, Duration, String)>,
    /// Whether the row's token is the one the request says the marketplace refused.
    refused: bool,
    /// How long ago the refused token was published, when its grant was itself a renewal
    /// after a refusal less than the request's back-off ago.
    refused_again: Option<Duration>,
}

impl Seen {
    fn of(row: &CachedRow, request: &SharedTokenRequest) -> Self {
        let now = row.read_at;
        let left = |t: Option<SystemTime>| t.and_then(|t| t.duration_since(now).ok());
        // Whether the row's token is the one the marketplace refused (compared once).
        let refused = match (&row.token, &request.rejected) {
            (Some(token), Some(rejected)) => rejected.secret() == token.expose(),
            _ => false,
        };
        let valid = match (&row.token, left(row.expires_at)) {
            (Some(token), Some(expires_in)) if !expires_in.is_zero() && !refused => {
                Some(SharedToken {
                    access_token: marketplace_client::oauth::AccessToken::new(token.expose()),
                    token_type: row.token_type.clone().unwrap_or_default(),
                    expires_in,
                    renew_in: left(row.renew_at).unwrap_or_default().min(expires_in),
                })
            }
            _ => None,
        };
        let refused_again = row
            .renewed_after_refusal_at
            .filter(|_| refused)
            .map(|at| now.duration_since(at).unwrap_or_default())
            .filter(|ago| *ago < request.retry_backoff);
        let fresh = valid.clone().filter(|t| !t.renew_in.is_zero());
        let backoff = left(row.retry_not_before)
            .filter(|d| !d.is_zero())
            .map(|retry_in| {
                let failed_ago = now.duration_since(row.updated_at).unwrap_or_default();
                let message = row
                    .last_error
                    .clone()
                    .unwrap_or_else(|| "the token request failed".into());
                (retry_in, failed_ago, message)
            });
        Self {
            fresh,
            valid,
            backoff,
            refused,
            refused_again,
        }
    }

    /// During a shared back-off: the old token while valid (looked at again when the
    /// back-off ends), otherwise the stored failure.
    fn backing_off(&self) -> Option<Result<SharedToken, SharedCacheError>> {
        let (retry_in, failed_ago, message) = self.backoff.clone()?;
        Some(match &self.valid {
            Some(token) => Ok(SharedToken {
                renew_in: retry_in.min(token.expires_in),
                ..token.clone()
            }),
            None => Err(SharedCacheError::Grant(OAuthError::BackingOff {
                error: Box::new(OAuthError::FailedElsewhere { message }),
                failed_ago,
                retry_in,
            })),
        })
    }
}

/// `host:pid:random`, unique per process and readable in the table.
fn holder_name() -> String {
    use aes_gcm::aead::rand_core::RngCore;
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".into());
    let suffix = aes_gcm::aead::OsRng.next_u32();
    format!("{host}:{}:{suffix:08x}", std::process::id())
}
