//! [`CallBudget`]: what a client asks before each call.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

use crate::analytics::RateLimitsResponse;
use crate::store::{BudgetKey, BudgetStore, Reservation, Scope};
use crate::time::format;

/// How long a resource counts as exhausted after eBay's 429 when its answer carries no
/// `Retry-After`.
pub const DEFAULT_EXHAUSTED_FOR: Duration = Duration::from_secs(60);

/// How long a process lets calls of a key through uncounted after its store answered that no
/// quota is known ([`Reservation::Unlimited`]) before it asks the store again: another
/// process's getRateLimits refresh or eBay's 429 reaches it within that time.
const UNLIMITED_FOR: Duration = Duration::from_secs(5);

/// What a call does when its budget is spent: the caller's choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Refuse at once with [`BudgetExceeded`].
    FailFast,
    /// Wait for the window's reset, when it comes within `at_most`; else refuse.
    Wait {
        /// The longest wait.
        at_most: Duration,
    },
}

/// A call refused before it was sent: its budget is spent until `reset`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "call refused before sending: the call budget of {resource} for {scope} has {remaining} \
     calls left until {}{}; wait until then (Mode::Wait), or refresh the budget from \
     getRateLimits if the quota was raised",
    format(*reset),
    if *after_429 { " (eBay answered 429 for it)" } else { "" }
)]
pub struct BudgetExceeded {
    /// Whose quota.
    pub scope: Scope,
    /// The API resource (`sell.inventory`).
    pub resource: String,
    /// Calls left (0, or fewer than the call needs).
    pub remaining: u32,
    /// When calls are allowed again.
    pub reset: SystemTime,
    /// Whether the refusal comes from eBay's 429 rather than the counted quota.
    pub after_429: bool,
}

#[derive(Debug, Clone, Copy)]
enum Lease {
    /// Calls reserved from the store, usable until `reset`.
    Calls { left: u32, reset: SystemTime },
    /// No quota known: not counted until `until` (then the store is asked again).
    Unlimited { until: SystemTime },
}

/// The call budget of one process, over a [`BudgetStore`]: a client asks it before each
/// call ([`acquire`](Self::acquire)), tells it of eBay's 429s ([`exhausted`](Self::exhausted))
/// and feeds it getRateLimits' and getUserRateLimits' answers ([`refresh`](Self::refresh)).
///
/// Calls are taken from the store in batches (see [`with_batch`](Self::with_batch)) and handed
/// out from memory: a call's check is a map lookup under a mutex. `Send + Sync`: one budget
/// serves every client of the process.
///
/// ```
/// use std::sync::Arc;
/// use std::time::{Duration, SystemTime};
/// use marketplace_budget::{CallBudget, InMemoryStore, Mode, RateLimitsResponse, Scope};
///
/// # tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(async {
/// let budget = CallBudget::new(Arc::new(InMemoryStore::new()), Mode::FailFast);
/// let answer: RateLimitsResponse = serde_json::from_str(r#"{"rateLimits": [{"apiContext": "sell",
///     "apiName": "inventory", "apiVersion": "v1", "resources": [{"name": "sell.inventory",
///     "rates": [{"limit": 2, "remaining": 1, "reset": "2099-01-01T00:00:00.000Z",
///     "timeWindow": 86400}]}]}]}"#).unwrap();
/// budget.refresh(Scope::Application, &answer).await;
/// assert!(budget.acquire("sell.inventory", None).await.is_ok());
/// let refused = budget.acquire("sell.inventory", None).await.unwrap_err();
/// assert_eq!((refused.resource.as_str(), refused.remaining), ("sell.inventory", 0));
/// # });
/// ```
pub struct CallBudget {
    store: Arc<dyn BudgetStore>,
    mode: Mode,
    batch: u32,
    leases: Mutex<HashMap<BudgetKey, Lease>>,
}

impl std::fmt::Debug for CallBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallBudget")
            .field("mode", &self.mode)
            .field("batch", &self.batch)
            .finish_non_exhaustive()
    }
}

impl CallBudget {
    /// A budget over `store` that answers a spent budget by `mode`, reserving 16 calls at a
    /// time.
    pub fn new(store: Arc<dyn BudgetStore>, mode: Mode) -> Self {
        Self {
            store,
            mode,
            batch: 16,
            leases: Mutex::new(HashMap::new()),
        }
    }

    /// Reserves `calls` at a time from the store (at least 1): one store round trip per
    /// batch. A larger batch means fewer round trips and more calls a process may hold
    /// unused when the window resets.
    pub fn with_batch(mut self, calls: u32) -> Self {
        self.batch = calls.max(1);
        self
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    fn leases(&self) -> MutexGuard<'_, HashMap<BudgetKey, Lease>> {
        self.leases.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes one call of `resource` from the application's budget and, with `user`, from that
    /// user's: waits or refuses as the mode says when one is spent (a `warn` event with the
    /// counter `monotonic_counter.budget_refused`, or an `info` one with
    /// `monotonic_counter.budget_waits`, target `marketplace_budget`).
    pub async fn acquire(
        &self,
        resource: &'static str,
        user: Option<&Arc<str>>,
    ) -> Result<(), BudgetExceeded> {
        let app = BudgetKey {
            scope: Scope::Application,
            resource: Cow::Borrowed(resource),
        };
        self.take(&app).await?;
        if let Some(user) = user {
            let key = BudgetKey {
                scope: Scope::User(user.clone()),
                resource: Cow::Borrowed(resource),
            };
            if let Err(refused) = self.take(&key).await {
                self.give_back(&app);
                return Err(refused);
            }
        }
        Ok(())
    }

    /// The fast path: a call from this process's lease, if it has one.
    fn take_local(&self, key: &BudgetKey, now: SystemTime) -> bool {
        match self.leases().get_mut(key) {
            Some(Lease::Unlimited { until }) if now < *until => true,
            Some(Lease::Calls { left, reset }) if *left > 0 && now < *reset => {
                *left -= 1;
                true
            }
            _ => false,
        }
    }

    fn give_back(&self, key: &BudgetKey) {
        if let Some(Lease::Calls { left, .. }) = self.leases().get_mut(key) {
            *left += 1;
        }
    }

    async fn take(&self, key: &BudgetKey) -> Result<(), BudgetExceeded> {
        loop {
            let now = SystemTime::now();
            if self.take_local(key, now) {
                return Ok(());
            }
            match self.store.reserve(key, self.batch, now).await {
                Reservation::Granted { calls, reset } => {
                    let mut leases = self.leases();
                    let lease = leases
                        .entry(key.clone())
                        .or_insert(Lease::Calls { left: 0, reset });
                    match lease {
                        Lease::Calls { left, reset: r } if *r == reset && now < reset => {
                            *left += calls - 1
                        }
                        _ => {
                            *lease = Lease::Calls {
                                left: calls - 1,
                                reset,
                            }
                        }
                    }
                    return Ok(());
                }
                Reservation::Unlimited => {
                    self.leases().insert(
                        key.clone(),
                        Lease::Unlimited {
                            until: now + UNLIMITED_FOR,
                        },
                    );
                    return Ok(());
                }
                Reservation::Exhausted {
                    remaining,
                    reset,
                    after_429,
                } => {
                    let wait = reset.duration_since(now).unwrap_or_default();
                    match self.mode {
                        Mode::Wait { at_most } if wait <= at_most => {
                            tracing::info!(
                                target: "marketplace_budget",
                                scope = %key.scope,
                                resource = %key.resource,
                                monotonic_counter.budget_waits = 1u64,
                                remaining,
                                reset = %format(reset),
                                wait_ms = wait.as_millis() as u64,
                                "call budget spent: waiting {} ms for the reset of {} ({})",
                                wait.as_millis(),
                                key.resource,
                                key.scope,
                            );
                            tokio::time::sleep(wait.max(Duration::from_millis(1))).await;
                        }
                        _ => {
                            let refused = BudgetExceeded {
                                scope: key.scope.clone(),
                                resource: key.resource.to_string(),
                                remaining,
                                reset,
                                after_429,
                            };
                            tracing::warn!(
                                target: "marketplace_budget",
                                scope = %key.scope,
                                resource = %key.resource,
                                monotonic_counter.budget_refused = 1u64,
                                remaining,
                                reset = %format(reset),
                                "{refused}",
                            );
                            return Err(refused);
                        }
                    }
                }
            }
        }
    }

    /// eBay answered 429 to a call of `resource` made for `user`, if any (with a user's
    /// token: the 429 is that user's quota, as getUserRateLimits counts it apart from
    /// getRateLimits' application quota), else for the application: that one key counts as
    /// exhausted until `retry_after` from now, else [`DEFAULT_EXHAUSTED_FOR`] from now (never
    /// until the window's own reset, which may be a day away: the next getRateLimits refresh
    /// says what is left). Other users and the application keep their budgets. A `warn` event
    /// with the counter `monotonic_counter.budget_429`.
    pub async fn exhausted(
        &self,
        resource: &'static str,
        user: Option<&Arc<str>>,
        retry_after: Option<Duration>,
    ) {
        let now = SystemTime::now();
        let key = BudgetKey {
            scope: user.map_or(Scope::Application, |user| Scope::User(user.clone())),
            resource: Cow::Borrowed(resource),
        };
        self.leases().remove(&key);
        let until = now + retry_after.unwrap_or(DEFAULT_EXHAUSTED_FOR);
        tracing::warn!(
            target: "marketplace_budget",
            scope = %key.scope,
            resource = %key.resource,
            monotonic_counter.budget_429 = 1u64,
            until = %format(until),
            "eBay answered 429 for {}: {} counts it exhausted until {}",
            key.resource,
            key.scope,
            format(until),
        );
        self.store.exhaust(&key, until).await;
    }

    /// Replaces what is known of `scope`'s quotas with getRateLimits' (for
    /// [`Scope::Application`]) or getUserRateLimits' (for a user) `answer`, and drops the
    /// calls this process held for that scope (eBay's `remaining` already counts the calls
    /// made). Returns how many resources were read.
    pub async fn refresh(&self, scope: Scope, answer: &RateLimitsResponse) -> usize {
        let windows = crate::analytics::windows_of(answer);
        self.store.refresh(&scope, &windows).await;
        self.leases().retain(|key, _| key.scope != scope);
        windows.len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::InMemoryStore;

    fn answer(resource: &str, limit: u32, remaining: u32) -> RateLimitsResponse {
        serde_json::from_value(serde_json::json!({"rateLimits": [{"resources": [{
            "name": resource, "rates": [
                {"limit": 1_000_000, "remaining": 999_999, "reset": "2999-01-01T00:00:00.000Z", "timeWindow": 86400},
                {"limit": limit, "remaining": remaining, "reset": "2999-01-01T00:00:00.000Z", "timeWindow": 86400}
            ]}]}]}))
        .unwrap()
    }

    /// The turn of a test that reaches the budget's events. They take turns: tracing caches
    /// whether a callsite is enabled, and a test with no subscriber reaching `warn!` while
    /// [`a_refusal_is_a_warning_with_a_counter_field_naming_the_resource`] sets its own up
    /// can leave that callsite disabled for it (about one run in three, in parallel).
    fn events_turn() -> std::sync::MutexGuard<'static, ()> {
        static TURN: Mutex<()> = Mutex::new(());
        TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn run<T>(future: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(future)
    }

    /// What a `fmt` subscriber writes, kept.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_resource_with_two_rates_is_held_to_the_one_with_fewer_calls_left() {
        let _turn = events_turn();
        let budget = CallBudget::new(Arc::new(InMemoryStore::new()), Mode::FailFast).with_batch(4);
        run(async {
            assert_eq!(
                budget
                    .refresh(Scope::Application, &answer("buy.browse", 10, 3))
                    .await,
                1
            );
            for _ in 0..3 {
                budget.acquire("buy.browse", None).await.unwrap();
            }
            assert_eq!(
                budget
                    .acquire("buy.browse", None)
                    .await
                    .unwrap_err()
                    .remaining,
                0
            );
        });
    }

    #[test]
    fn a_users_spent_budget_gives_the_applications_call_back() {
        let _turn = events_turn();
        let budget = CallBudget::new(Arc::new(InMemoryStore::new()), Mode::FailFast).with_batch(1);
        let user: Arc<str> = Arc::from("seller-1");
        run(async {
            budget
                .refresh(Scope::Application, &answer("sell.inventory", 2, 2))
                .await;
            budget
                .refresh(Scope::User(user.clone()), &answer("sell.inventory", 1, 1))
                .await;
            budget.acquire("sell.inventory", Some(&user)).await.unwrap();
            let refused = budget
                .acquire("sell.inventory", Some(&user))
                .await
                .unwrap_err();
            assert_eq!(refused.scope, Scope::User(user.clone()));
            // The application's second call was not spent on the refused one.
            budget.acquire("sell.inventory", None).await.unwrap();
            assert!(budget.acquire("sell.inventory", None).await.is_err());
        });
    }

    #[test]
    fn a_refusal_is_a_warning_with_a_counter_field_naming_the_resource() {
        let _turn = events_turn();
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        let budget = CallBudget::new(Arc::new(InMemoryStore::new()), Mode::FailFast);
        tracing::subscriber::with_default(subscriber, || {
            run(async {
                budget
                    .refresh(Scope::Application, &answer("sell.fulfillment", 5, 0))
                    .await;
                assert!(budget.acquire("sell.fulfillment", None).await.is_err());
            })
        });
        let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        let line = text
            .lines()
            .find(|l| l.contains("WARN"))
            .unwrap_or_else(|| panic!("{text}"));
        for part in [
            "monotonic_counter.budget_refused=1",
            "resource=sell.fulfillment",
            "remaining=0",
            "reset=2999-01-01T00:00:00.000Z",
            "call refused before sending",
        ] {
            assert!(line.contains(part), "{part} in {line}");
        }
    }
}
