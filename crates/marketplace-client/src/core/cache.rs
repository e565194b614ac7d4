//! The token cache without I/O: when a cached token is handed out, when it is renewed, who
//! renews it while the others wait (single flight), and the back-off after a failed grant.
//!
//! * One request per expiry: when many callers ask at once, one of them is told to fetch
//!   ([`Step::Fetch`]) and the others to wait for it ([`Step::Wait`]).
//! * Refresh early, but not too early: a token is renewed at the later of "the refresh margin
//!   (5 minutes by default) before expiry" and "half-way through its lifetime", so a 2-hour
//!   token renews at 1 h 55 min and a 4-minute token at 2 min. While the renewal runs, other
//!   callers keep getting the old, still valid token.
//! * A failed renewal while the old token is still valid hands out the old token, reports the
//!   failure and waits a back-off before trying again. Without a usable token a failure is
//!   returned, and until the back-off has passed the same failure is answered without a
//!   request, as [`OAuthError::BackingOff`]: at most one request per back-off.
//! * A fetch that never lands (a panic, or an async caller dropped half way) is abandoned:
//!   the waiters wake and the next caller fetches.
//! * Deadlines run on the monotonic clock; only what is stored (a refresh token's expiry) is
//!   wall-clock time. Both come from a [`Clock`].
//! * A new consent is never undone by a refresh that was already running (a generation
//!   counter drops the older flight's result).
//!
//! The async front keeps a [`CacheState`] behind a mutex (never held across an `.await`) and
//! a `tokio::sync::Notify`; the blocking providers wait for the async ones.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use super::token::{MAX_RETRY_AFTER, TokenResponse};
use crate::oauth::{AccessToken, OAuthError, lock};

/// The default refresh margin: renew a token when less than this much of its life is left
/// (but not before half of its lifetime has passed).
pub const DEFAULT_REFRESH_MARGIN: Duration = Duration::from_secs(5 * 60);

/// The default wait before trying again after a failed renewal.
pub const DEFAULT_RETRY_BACKOFF: Duration = Duration::from_secs(30);

/// Where the providers get the time from.
///
/// Two clocks, each for its own job. The wall clock ([`now`](Self::now)) dates what is
/// stored: the expiry of a refresh token. The monotonic clock ([`instant`](Self::instant))
/// times every deadline kept in the process: when a cached token is renewed and when it
/// expires, when a back-off ends. A step of the wall clock (NTP, an administrator, a resumed
/// virtual machine) therefore neither locks a provider out nor hands out an expired token.
pub trait Clock: Send + Sync {
    /// The wall-clock time.
    fn now(&self) -> SystemTime;

    /// The monotonic time, which only moves forward as time passes. The default is
    /// [`Instant::now`]: a clock that overrides only [`now`](Self::now) moves no deadline.
    fn instant(&self) -> Instant {
        Instant::now()
    }
}

/// The system clock.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// A clock that moves only when told to, for tests: a wall clock and a monotonic clock.
/// [`advance`](Self::advance) lets time pass (both move); [`set`](Self::set) steps the wall
/// clock only, as NTP or an administrator would, and moves no deadline.
///
/// ```
/// use marketplace_client::test_util::{Clock, ManualClock};
/// use std::time::{Duration, UNIX_EPOCH};
/// let clock = ManualClock::new(UNIX_EPOCH + Duration::from_secs(10_000));
/// let start = clock.instant();
/// clock.advance(Duration::from_secs(5));
/// assert_eq!(clock.now(), UNIX_EPOCH + Duration::from_secs(10_005));
/// assert_eq!(clock.instant() - start, Duration::from_secs(5));
/// // An hour back on the wall: the monotonic clock does not move.
/// clock.set(UNIX_EPOCH + Duration::from_secs(6_405));
/// assert_eq!(clock.instant() - start, Duration::from_secs(5));
/// ```
#[cfg(feature = "test-util")]
#[derive(Debug)]
pub struct ManualClock {
    state: Mutex<ManualState>,
}

#[cfg(feature = "test-util")]
#[derive(Debug)]
struct ManualState {
    wall: SystemTime,
    /// The monotonic clock is `origin + elapsed`.
    origin: Instant,
    elapsed: Duration,
}

#[cfg(feature = "test-util")]
impl ManualClock {
    /// A clock whose wall time stands at `start`.
    pub fn new(start: SystemTime) -> Self {
        Self {
            state: Mutex::new(ManualState {
                wall: start,
                origin: Instant::now(),
                elapsed: Duration::ZERO,
            }),
        }
    }

    /// Lets `by` pass: both clocks move forward.
    pub fn advance(&self, by: Duration) {
        let mut st = lock(&self.state);
        st.wall += by;
        st.elapsed += by;
    }

    /// Steps the wall clock to `to` (back or forward), as NTP or an administrator would. The
    /// monotonic clock does not move, so no deadline kept in the process moves either: to let
    /// time pass, use [`advance`](Self::advance).
    pub fn set(&self, to: SystemTime) {
        lock(&self.state).wall = to;
    }
}

#[cfg(feature = "test-util")]
impl Clock for ManualClock {
    fn now(&self) -> SystemTime {
        lock(&self.state).wall
    }

    fn instant(&self) -> Instant {
        let st = lock(&self.state);
        later(st.origin, st.elapsed)
    }
}

/// `t + d`, or the latest time the platform can represent past `t` when that overflows.
fn later(t: Instant, d: Duration) -> Instant {
    let mut d = d;
    loop {
        match t.checked_add(d) {
            Some(at) => return at,
            None => d /= 2,
        }
    }
}

/// The wall-clock reading of the monotonic time `at`, given that `wall` and `mono` are now.
fn wall_time_of(at: Instant, wall: SystemTime, mono: Instant) -> SystemTime {
    let shifted = if at >= mono {
        wall.checked_add(at - mono)
    } else {
        wall.checked_sub(mono - at)
    };
    shifted.unwrap_or(wall)
}

/// A token held by a provider, as [`cached`](crate::oauth::UserTokenProvider::cached) reports it.
///
/// The provider keeps the deadlines on the monotonic clock; the wall-clock times here are
/// what they come to on the wall clock at the moment of the call, so a step of the wall clock
/// moves these values, not the deadlines.
#[derive(Debug, Clone)]
pub struct CachedToken {
    /// The token.
    pub access_token: AccessToken,
    /// When it expires (time of the request plus `expires_in`).
    pub expires_at: SystemTime,
    /// When the provider renews it: the later of `expires_at` minus the refresh margin and
    /// half-way through its lifetime.
    pub renew_at: SystemTime,
    /// `token_type` of the answer.
    pub token_type: String,
}

/// A token as a slot holds it, with its deadlines on the monotonic clock.
#[derive(Clone)]
pub(crate) struct Held {
    pub(crate) access_token: AccessToken,
    pub(crate) token_type: String,
    pub(crate) renew_at: Instant,
    pub(crate) expires_at: Instant,
    /// Whether this process asked the token endpoint for it (`false`: another process did,
    /// and it was read from a shared cache), for the traces.
    pub(crate) requested: bool,
}

impl Held {
    pub(crate) fn from_response(
        response: &TokenResponse,
        requested_at: Instant,
        margin: Duration,
    ) -> Self {
        let lifetime = response.expires_in;
        Self {
            access_token: response.access_token.clone(),
            token_type: response.token_type.clone(),
            renew_at: later(
                requested_at,
                crate::oauth::shared::renew_after(lifetime, margin),
            ),
            expires_at: later(requested_at, lifetime),
            requested: true,
        }
    }

    /// A token handed out by a shared cache `now` (its deadlines count from then);
    /// `requested`: this process fetched it (the shared cache elected it), rather than read
    /// another process's.
    pub(crate) fn from_shared(
        token: &crate::oauth::SharedToken,
        now: Instant,
        requested: bool,
    ) -> Self {
        Self {
            access_token: token.access_token.clone(),
            token_type: token.token_type.clone(),
            renew_at: later(now, token.renew_in.min(token.expires_in)),
            expires_at: later(now, token.expires_in),
            requested,
        }
    }

    fn report(&self, clock: &dyn Clock) -> CachedToken {
        let (wall, mono) = (clock.now(), clock.instant());
        CachedToken {
            access_token: self.access_token.clone(),
            expires_at: wall_time_of(self.expires_at, wall, mono),
            renew_at: wall_time_of(self.renew_at, wall, mono),
            token_type: self.token_type.clone(),
        }
    }
}

/// A callback told of every failed renewal.
pub type ErrorHook = Arc<dyn Fn(&OAuthError) + Send + Sync>;

/// The timing policy and error reporting shared by both providers.
pub(crate) struct Policy {
    pub(crate) clock: Arc<dyn Clock>,
    pub(crate) margin: Duration,
    pub(crate) backoff: Duration,
    pub(crate) hook: Option<ErrorHook>,
    pub(crate) last_error: Mutex<Option<OAuthError>>,
}

impl Policy {
    pub(crate) fn new() -> Self {
        Self {
            clock: Arc::new(SystemClock),
            margin: DEFAULT_REFRESH_MARGIN,
            backoff: DEFAULT_RETRY_BACKOFF,
            hook: None,
            last_error: Mutex::new(None),
        }
    }

    pub(crate) fn report(&self, error: &OAuthError) {
        *lock(&self.last_error) = Some(error.clone());
        if let Some(hook) = &self.hook {
            hook(error);
        }
    }
}

/// The settings of every provider, as builder methods on a type whose `policy` (a path of
/// fields, e.g. `inner.policy` for a blocking provider) is its [`Policy`].
macro_rules! policy_settings {
    ($($policy:ident).+) => {
        /// Sets the clock (tests use
        /// [`ManualClock`](crate::test_util::ManualClock); feature `test-util`).
        #[cfg(feature = "test-util")]
        pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
            self.$($policy).+.clock = clock;
            self
        }

        /// Sets how long before expiry a token is renewed (5 minutes by default); a
        /// token is never renewed before half of its lifetime has passed.
        pub fn with_refresh_margin(mut self, margin: std::time::Duration) -> Self {
            self.$($policy).+.margin = margin;
            self
        }

        /// Sets the wait after a failed renewal (30 s by default; a 429's
        /// `Retry-After` wins, up to 2 minutes), which is also the least time between two
        /// renewals caused by refused tokens (a 401 of the token renewed after a 401).
        pub fn with_retry_backoff(mut self, backoff: std::time::Duration) -> Self {
            self.$($policy).+.backoff = backoff;
            self
        }

        /// Calls `hook` with every failed renewal, including those hidden by a still valid
        /// token.
        pub fn on_refresh_error(
            mut self,
            hook: impl Fn(&OAuthError) + Send + Sync + 'static,
        ) -> Self {
            self.$($policy).+.hook = Some(Arc::new(hook));
            self
        }

        /// The last failed request, until a request succeeds.
        pub fn last_error(&self) -> Option<OAuthError> {
            lock(&self.$($policy).+.last_error).clone()
        }
    };
}

pub(crate) use policy_settings;

/// One cached token and its flight: the state the providers keep behind their lock.
#[derive(Default)]
pub(crate) struct CacheState {
    token: Option<Held>,
    in_flight: bool,
    /// Counts finished requests, so waiters can tell that theirs has ended.
    flights: u64,
    /// Counts the tokens installed from outside a flight (a new consent): a flight that
    /// started before the last of them ended with a result of the grant that consent
    /// replaced, and that result is dropped.
    generation: u64,
    /// The error of the last request, while no newer one succeeded.
    failure: Option<OAuthError>,
    /// No new request before this moment (after a failure), on the monotonic clock.
    retry_not_before: Option<Instant>,
    /// When `failure` happened, on the monotonic clock (for the message of a cached failure).
    failed_at: Option<Instant>,
    /// Whether the cached token was dropped by [`invalidate`](Self::invalidate) (a 401) and
    /// no token came since: the next request is a renewal, for the traces.
    invalidated: bool,
    /// Why the running flight was started (see [`RequestReason`]), for the traces.
    reason: RequestReason,
    /// When [`invalidate`](Self::invalidate) last dropped a token the marketplace refused
    /// (so that the next call renewed it), on the monotonic clock: a refusal of the renewed
    /// token within the back-off renews nothing.
    dropped_after_refusal: Option<Instant>,
}

/// Why a token is requested, as the token events say it (`reason`, and `renewal`: whether a
/// token was held before).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum RequestReason {
    /// No token was ever held (or a new consent replaced the slot's state).
    #[default]
    First,
    /// The token is still valid but its renewal time has come.
    RenewalDue,
    /// The token has expired.
    Expired,
    /// The token was refused (a 401) and dropped.
    Invalidated,
    /// The last request failed and its back-off is over.
    AfterFailure,
}

impl RequestReason {
    /// The name used in traces.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::First => "first",
            Self::RenewalDue => "renewal due",
            Self::Expired => "expired",
            Self::Invalidated => "invalidated",
            Self::AfterFailure => "after failure",
        }
    }

    /// Whether a token was held before this request.
    pub(crate) fn is_renewal(self) -> bool {
        self != Self::First
    }
}

/// What a token request is told when it starts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Flight {
    /// The wall clock (to date what is stored).
    pub(crate) wall: SystemTime,
    /// The monotonic clock (for the deadlines of the token).
    pub(crate) mono: Instant,
    /// The slot's generation: the flight's result counts only while it is unchanged.
    pub(crate) generation: u64,
    /// Why the flight was started.
    pub(crate) reason: RequestReason,
}

impl Flight {
    /// Says that this flight asks the token endpoint now (`token request`, or `token renewal`
    /// when a token was held before, with the `reason`): called right before the grant, so a
    /// process that reads the fleet's token from a shared cache never says it.
    pub(crate) fn requesting(&self) {
        let renewal = self.reason.is_renewal();
        tracing::debug!(
            target: "marketplace_client::token",
            renewal,
            reason = %self.reason.as_str(),
            "{}",
            if renewal { "token renewal" } else { "token request" }
        );
    }

    /// Says that this flight asks a shared cache for the fleet's token (`shared cache
    /// lookup`, with the `reason`).
    pub(crate) fn asking_shared_cache(&self) {
        tracing::debug!(
            target: "marketplace_client::token",
            renewal = self.reason.is_renewal(),
            reason = %self.reason.as_str(),
            "shared cache lookup"
        );
    }
}

/// The flight a waiter waits for.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WaitFor {
    flights: u64,
    generation: u64,
}

/// What a caller of the cache does next.
pub(crate) enum Step {
    /// Hand out this token.
    Ready(AccessToken),
    /// Another caller is fetching: wait until [`CacheState::still_waiting`] is false, then
    /// call [`CacheState::after_wait`].
    Wait(WaitFor),
    /// Fetch a token (this caller is the flight), then [`CacheState::land`] it.
    Fetch(Flight),
    /// Answer this error (a failure whose back-off has not passed).
    Fail(OAuthError),
}

/// How a flight ended.
pub(crate) enum Landing {
    /// The result of an older grant (a new consent arrived meanwhile): ask the cache again.
    Stale,
    /// The caller's answer; `report` is a failure to report (outside the lock).
    Done {
        /// The answer.
        result: Result<AccessToken, OAuthError>,
        /// A failed request, to report.
        report: Option<OAuthError>,
    },
}

impl CacheState {
    /// Decides what a caller does now. A [`Step::Fetch`] makes this caller the flight.
    pub(crate) fn step(&mut self, policy: &Policy) -> Step {
        let now = policy.clock.instant();
        let mut still_valid = None;
        if let Some(t) = &self.token {
            if now < t.renew_at {
                tracing::trace!(target: "marketplace_client::token", "cache hit");
                return Step::Ready(t.access_token.clone());
            }
            if now < t.expires_at {
                still_valid = Some(t.access_token.clone());
            }
        }
        let backing_off = self.retry_not_before.is_some_and(|r| now < r);
        if let Some(token) = still_valid {
            // Renewal due, but the old token still works: hand it out while another caller
            // renews, or while the back-off of a failed renewal runs.
            if self.in_flight || backing_off {
                tracing::trace!(target: "marketplace_client::token", in_flight = self.in_flight, backing_off, "cache hit (renewal due)");
                return Step::Ready(token);
            }
        } else if self.in_flight {
            tracing::debug!(target: "marketplace_client::token", "single-flight wait");
            return Step::Wait(WaitFor {
                flights: self.flights,
                generation: self.generation,
            });
        } else if backing_off
            && let (Some(e), Some(retry_at)) = (&self.failure, self.retry_not_before)
        {
            return Step::Fail(OAuthError::BackingOff {
                error: Box::new(e.clone()),
                failed_ago: self.failed_at.map_or(Duration::ZERO, |at| now - at),
                retry_in: retry_at - now,
            });
        }
        self.reason = match &self.token {
            Some(t) if now < t.expires_at => RequestReason::RenewalDue,
            Some(_) => RequestReason::Expired,
            None if self.invalidated => RequestReason::Invalidated,
            None if self.failure.is_some() => RequestReason::AfterFailure,
            None => RequestReason::First,
        };
        // The flight says what it does (`Flight::requesting`, `Flight::asking_shared_cache`).
        self.in_flight = true;
        Step::Fetch(Flight {
            wall: policy.clock.now(),
            mono: now,
            generation: self.generation,
            reason: self.reason,
        })
    }

    /// Whether the flight `wait` waits for is still running (and no new consent came).
    pub(crate) fn still_waiting(&self, wait: WaitFor) -> bool {
        self.in_flight && self.flights == wait.flights && self.generation == wait.generation
    }

    /// After a wait: the flight's failure when it left no usable token; `None` to ask
    /// [`step`](Self::step) again.
    pub(crate) fn after_wait(&self, policy: &Policy) -> Option<OAuthError> {
        let has_valid = self
            .token
            .as_ref()
            .is_some_and(|t| policy.clock.instant() < t.expires_at);
        if has_valid {
            None
        } else {
            self.failure.clone()
        }
    }

    /// Ends `flight` with `result` (wake the waiters after this).
    pub(crate) fn land(
        &mut self,
        flight: Flight,
        result: Result<Held, OAuthError>,
        policy: &Policy,
    ) -> Landing {
        self.in_flight = false;
        self.flights += 1;
        if self.generation != flight.generation {
            // A newer token (a new consent) arrived while this request ran: the result of
            // the older flight never replaces it, and its failure is no one's business.
            return Landing::Stale;
        }
        match result {
            Ok(token) => {
                let expires_in_s = token
                    .expires_at
                    .saturating_duration_since(flight.mono)
                    .as_secs();
                if token.requested {
                    tracing::debug!(
                        target: "marketplace_client::token",
                        expires_in_s,
                        renewal = self.reason.is_renewal(),
                        reason = %self.reason.as_str(),
                        "token received"
                    );
                } else {
                    tracing::debug!(
                        target: "marketplace_client::token",
                        expires_in_s,
                        renewal = self.reason.is_renewal(),
                        reason = %self.reason.as_str(),
                        "token read from the shared cache"
                    );
                }
                self.invalidated = false;
                let access = token.access_token.clone();
                self.token = Some(token);
                self.failure = None;
                self.retry_not_before = None;
                Landing::Done {
                    result: Ok(access),
                    report: None,
                }
            }
            Err(error) => {
                let after = policy.clock.instant();
                let old = self
                    .token
                    .as_ref()
                    .filter(|t| after < t.expires_at)
                    .map(|t| t.access_token.clone());
                // A 429's Retry-After wins, but only up to MAX_RETRY_AFTER.
                let wait = error
                    .retry_after()
                    .map_or(policy.backoff, |d| d.min(MAX_RETRY_AFTER));
                tracing::warn!(
                    target: "marketplace_client::token",
                    error = %error,
                    renewal = self.reason.is_renewal(),
                    backoff_ms = wait.as_millis() as u64,
                    old_token_used = old.is_some(),
                    "token request failed"
                );
                // With or without a usable token: no new request before the wait is over.
                self.retry_not_before = Some(later(after, wait));
                self.failed_at = Some(after);
                self.failure = Some(error.clone());
                Landing::Done {
                    result: old.ok_or_else(|| error.clone()),
                    report: Some(error),
                }
            }
        }
    }

    /// Ends a flight that never landed (a panic, a caller dropped half way; wake the waiters
    /// after this): the next caller fetches.
    pub(crate) fn abandon(&mut self) {
        self.in_flight = false;
        self.flights += 1;
    }

    /// Installs a token obtained outside a flight (a new consent): it replaces the cached one,
    /// clears any failure, and makes the result of every flight still running stale (wake the
    /// waiters after this).
    pub(crate) fn install(&mut self, token: Held) {
        tracing::debug!(target: "marketplace_client::token", "token installed (new consent)");
        self.generation += 1;
        self.token = Some(token);
        self.invalidated = false;
        self.dropped_after_refusal = None;
        self.failure = None;
        self.retry_not_before = None;
    }

    /// Drops the cached token, whatever it is (its refresh token was deleted from the store),
    /// and makes the result of every flight still running stale.
    pub(crate) fn forget(&mut self) {
        tracing::debug!(target: "marketplace_client::token", "token dropped (refresh token deleted)");
        self.generation += 1;
        self.token = None;
    }

    /// The generation (see [`Flight::generation`]).
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Whether the last request failed (and none succeeded since).
    pub(crate) fn has_failure(&self) -> bool {
        self.failure.is_some()
    }

    /// Drops the cached token if it is `token` (the marketplace refused it: a 401), and with
    /// it any pending back-off, so that the next call renews it; with no token cached (a
    /// failure left none), the back-off is cleared too, so the next call asks the server at
    /// once. A stale token (already replaced) changes nothing.
    ///
    /// At most one renewal a back-off is caused by refusals: when the token refused is the
    /// one renewed after a refusal less than the back-off ago (a host that refuses every
    /// token, wrong credentials or scopes), it is dropped without a renewal, and until the
    /// back-off has passed callers get [`OAuthError::RenewedTokenRefused`] without a request
    /// (each refused call would otherwise cost a grant of the day's quota).
    pub(crate) fn invalidate(&mut self, token: &AccessToken, policy: &Policy) {
        let current = match &self.token {
            Some(t) => t.access_token.ct_eq(token),
            None => true,
        };
        if !current {
            return;
        }
        let now = policy.clock.instant();
        if let Some(dropped) = self.dropped_after_refusal
            && self.token.is_some()
            && now < later(dropped, policy.backoff)
        {
            let renewed_ago = now.saturating_duration_since(dropped);
            tracing::warn!(
                target: "marketplace_client::token",
                renewed_ago_ms = renewed_ago.as_millis() as u64,
                backoff_ms = policy.backoff.as_millis() as u64,
                "the token renewed after a refusal was refused too: no renewal before the back-off ends"
            );
            self.token = None;
            self.invalidated = true;
            self.failure = Some(OAuthError::RenewedTokenRefused { renewed_ago });
            self.failed_at = Some(now);
            self.retry_not_before = Some(later(dropped, policy.backoff));
            return;
        }
        tracing::debug!(target: "marketplace_client::token", "token invalidated");
        if self.token.is_some() {
            self.dropped_after_refusal = Some(now);
        }
        self.invalidated |= self.token.is_some();
        self.token = None;
        self.retry_not_before = None;
    }

    /// Ends a pending back-off: the next call asks the server.
    pub(crate) fn retry_now(&mut self) {
        self.retry_not_before = None;
    }

    /// The cached token, as the caller's clock reads its deadlines.
    pub(crate) fn cached(&self, clock: &dyn Clock) -> Option<CachedToken> {
        self.token.as_ref().map(|t| t.report(clock))
    }
}
