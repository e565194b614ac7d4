//! Where a budget's counts live: [`BudgetStore`], the trait a process reserves calls from in
//! batches, and [`InMemoryStore`], its one-process form.

use std::borrow::Cow;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};

/// Whose quota a count is: the application's (getRateLimits) or one user's
/// (getUserRateLimits), by the name the application gives its user (a seller's account name).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    /// The application's quota.
    Application,
    /// One user's quota.
    User(Arc<str>),
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Scope::Application => f.write_str("the application"),
            Scope::User(user) => write!(f, "user {user}"),
        }
    }
}

/// One budget: a scope and an API resource (`sell.inventory`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BudgetKey {
    /// Whose quota.
    pub scope: Scope,
    /// The resource's name, as getRateLimits names it.
    pub resource: Cow<'static, str>,
}

/// One quota (rate) of a resource as getRateLimits reported it (see [`crate::windows_of`]): a
/// resource may have several, one per window length, and a call counts against each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    /// The resource's name.
    pub resource: String,
    /// Calls allowed per window.
    pub limit: u32,
    /// Calls left in this window, as eBay counted them.
    pub remaining: u32,
    /// When the window resets.
    pub reset: SystemTime,
    /// The window's length (zero when eBay did not say: such a window does not roll over by
    /// itself, it is spent past its reset until a refresh).
    pub length: Duration,
}

/// What a store grants a reservation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reservation {
    /// `calls` calls (at least one, at most those asked for), usable until `reset`.
    Granted {
        /// How many.
        calls: u32,
        /// When the window they belong to resets.
        reset: SystemTime,
    },
    /// No quota is known for the key (never read from getRateLimits): calls are not counted.
    Unlimited,
    /// Nothing left: `remaining` calls (fewer than one batch's minimum: zero) until `reset`.
    Exhausted {
        /// Calls left.
        remaining: u32,
        /// When calls are allowed again.
        reset: SystemTime,
        /// Whether eBay's 429 ([`BudgetStore::exhaust`]) made it so, rather than the count.
        after_429: bool,
    },
}

/// A future a store answers with (`Send`, boxed: the trait stays object-safe, and a store
/// backed by a database awaits its round trip in it).
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Where the counts of a budget live, shared by whoever holds the store: one process
/// ([`InMemoryStore`]) or, through a database, a fleet.
///
/// A process never asks the store for one call: [`CallBudget`](crate::CallBudget) reserves
/// calls in batches ([`reserve`](Self::reserve) with its batch size) and hands them out from
/// memory, so a store on PostgreSQL makes one round trip per batch (one `UPDATE … SET
/// remaining = remaining - LEAST(remaining, $wanted) … RETURNING`), not per call. What a
/// process reserved and did not use is lost to the fleet until the window resets (or given
/// back by [`release`](Self::release)), so the batch size trades round trips against calls
/// left unused: a fleet of N processes strands at most N × batch calls a window.
pub trait BudgetStore: Send + Sync {
    /// Takes up to `wanted` calls of `key`'s budget at `now` from every window of the
    /// resource (the one with the fewest calls left bounds it), rolling a window over first
    /// when `now` is past its reset, as eBay does: `remaining` back to `limit`.
    fn reserve<'a>(
        &'a self,
        key: &'a BudgetKey,
        wanted: u32,
        now: SystemTime,
    ) -> StoreFuture<'a, Reservation>;

    /// Gives back `calls` reserved from `key` but not used (before its reset).
    fn release<'a>(&'a self, key: &'a BudgetKey, calls: u32) -> StoreFuture<'a, ()>;

    /// Replaces what is known of `scope`'s quotas with `windows` (what getRateLimits or
    /// getUserRateLimits just answered), in one write.
    fn refresh<'a>(&'a self, scope: &'a Scope, windows: &'a [Window]) -> StoreFuture<'a, ()>;

    /// Marks `key` exhausted until `until` (eBay answered 429).
    fn exhaust<'a>(&'a self, key: &'a BudgetKey, until: SystemTime) -> StoreFuture<'a, ()>;
}

/// How far on a refusal puts the next try when a window of unknown length (a rate without
/// `timeWindow`) is past its reset: it stays spent until a refresh says what it holds.
const UNKNOWN_WINDOW_RETRY: Duration = Duration::from_secs(60);

/// One window of a key: one rate of getRateLimits' answer for the resource.
#[derive(Debug, Clone)]
struct Counted {
    limit: u32,
    remaining: u32,
    reset: SystemTime,
    /// Zero when eBay did not say (`timeWindow` absent): such a window never rolls over.
    length: Duration,
}

impl Counted {
    /// Rolls the window over when `now` is past its reset (`remaining` back to `limit`, as
    /// eBay does); a window of unknown length is spent past its reset instead.
    fn roll(&mut self, now: SystemTime) {
        if now < self.reset {
            return;
        }
        if self.length.is_zero() {
            self.remaining = 0;
            self.reset = now + UNKNOWN_WINDOW_RETRY;
        } else {
            self.remaining = self.limit;
            while self.reset <= now {
                self.reset += self.length;
            }
        }
    }
}

#[derive(Debug, Clone, Default)]
struct Entry {
    /// One per (resource, window length), as getRateLimits answered: a call takes from each.
    /// Empty when only a 429 made the entry (no quota known).
    windows: Vec<Counted>,
    exhausted_until: Option<SystemTime>,
}

impl Entry {
    fn roll(&mut self, now: SystemTime) {
        for window in &mut self.windows {
            window.roll(now);
        }
        if self.exhausted_until.is_some_and(|until| now >= until) {
            self.exhausted_until = None;
        }
    }
}

/// A [`BudgetStore`] in this process's memory: the budget of one process.
#[derive(Debug, Default)]
pub struct InMemoryStore {
    entries: Mutex<HashMap<BudgetKey, Entry>>,
}

impl InMemoryStore {
    /// An empty store (no quota known: every call allowed until a refresh).
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<BudgetKey, Entry>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn reserve_now(&self, key: &BudgetKey, wanted: u32, now: SystemTime) -> Reservation {
        let mut entries = self.lock();
        let Some(entry) = entries.get_mut(key) else {
            return Reservation::Unlimited;
        };
        entry.roll(now);
        if entry.windows.is_empty() && entry.exhausted_until.is_none() {
            entries.remove(key);
            return Reservation::Unlimited;
        }
        if let Some(until) = entry.exhausted_until {
            return Reservation::Exhausted {
                remaining: 0,
                reset: until,
                after_429: true,
            };
        }
        // The window with the fewest calls left bounds the reservation; the calls granted
        // are usable until the first window resets.
        let left = entry.windows.iter().map(|w| w.remaining).min().unwrap_or(0);
        let calls = wanted.min(left);
        if calls == 0 {
            // Calls come back when every spent window has reset.
            let reset = entry
                .windows
                .iter()
                .filter(|w| w.remaining == 0)
                .map(|w| w.reset)
                .max()
                .unwrap_or(now + UNKNOWN_WINDOW_RETRY);
            return Reservation::Exhausted {
                remaining: left,
                reset,
                after_429: false,
            };
        }
        let mut reset = None::<SystemTime>;
        for window in &mut entry.windows {
            window.remaining -= calls;
            reset = Some(reset.map_or(window.reset, |r| r.min(window.reset)));
        }
        Reservation::Granted {
            calls,
            reset: reset.unwrap_or(now),
        }
    }
}

impl BudgetStore for InMemoryStore {
    fn reserve<'a>(
        &'a self,
        key: &'a BudgetKey,
        wanted: u32,
        now: SystemTime,
    ) -> StoreFuture<'a, Reservation> {
        let answer = self.reserve_now(key, wanted, now);
        Box::pin(std::future::ready(answer))
    }

    fn release<'a>(&'a self, key: &'a BudgetKey, calls: u32) -> StoreFuture<'a, ()> {
        if let Some(entry) = self.lock().get_mut(key) {
            for window in &mut entry.windows {
                window.remaining = window.remaining.saturating_add(calls).min(window.limit);
            }
        }
        Box::pin(std::future::ready(()))
    }

    fn refresh<'a>(&'a self, scope: &'a Scope, windows: &'a [Window]) -> StoreFuture<'a, ()> {
        let mut read: HashMap<BudgetKey, Vec<Counted>> = HashMap::new();
        for window in windows {
            let key = BudgetKey {
                scope: scope.clone(),
                resource: Cow::Owned(window.resource.clone()),
            };
            let counted = read.entry(key).or_default();
            let new = Counted {
                limit: window.limit,
                remaining: window.remaining.min(window.limit),
                reset: window.reset,
                length: window.length,
            };
            // One window per (resource, length): of two, the one with fewer calls left.
            match counted.iter_mut().find(|w| w.length == new.length) {
                Some(known) if known.remaining <= new.remaining => {}
                Some(known) => *known = new,
                None => counted.push(new),
            }
        }
        let mut entries = self.lock();
        for (key, windows) in read {
            let entry = entries.entry(key).or_default();
            // A 429 outlives a refresh until its own end: eBay's count may lag.
            entry.windows = windows;
        }
        drop(entries);
        Box::pin(std::future::ready(()))
    }

    fn exhaust<'a>(&'a self, key: &'a BudgetKey, until: SystemTime) -> StoreFuture<'a, ()> {
        let mut entries = self.lock();
        let entry = entries.entry(key.clone()).or_default();
        for window in &mut entry.windows {
            window.remaining = 0;
        }
        entry.exhausted_until = Some(entry.exhausted_until.map_or(until, |u| u.max(until)));
        drop(entries);
        Box::pin(std::future::ready(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> BudgetKey {
        BudgetKey {
            scope: Scope::Application,
            resource: Cow::Borrowed("sell.inventory"),
        }
    }

    fn block_on<T>(future: StoreFuture<'_, T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn a_window_past_its_reset_starts_again_at_its_limit_and_its_next_reset() {
        let store = InMemoryStore::new();
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let window = Window {
            resource: "sell.inventory".into(),
            limit: 5,
            remaining: 1,
            reset: t0 + Duration::from_secs(10),
            length: Duration::from_secs(60),
        };
        block_on(store.refresh(&Scope::Application, std::slice::from_ref(&window)));
        let granted = block_on(store.reserve(&key(), 16, t0));
        assert_eq!(
            granted,
            Reservation::Granted {
                calls: 1,
                reset: window.reset
            }
        );
        assert!(matches!(
            block_on(store.reserve(&key(), 16, t0)),
            Reservation::Exhausted {
                remaining: 0,
                after_429: false,
                ..
            }
        ));
        // 70 s later: past the reset (t0 + 10) and the next one (t0 + 70).
        let later = t0 + Duration::from_secs(70);
        assert_eq!(
            block_on(store.reserve(&key(), 16, later)),
            Reservation::Granted {
                calls: 5,
                reset: t0 + Duration::from_secs(130)
            }
        );
    }

    #[test]
    fn a_429_on_a_resource_without_a_known_quota_refuses_until_its_end_then_counts_nothing() {
        let store = InMemoryStore::new();
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        assert_eq!(
            block_on(store.reserve(&key(), 1, t0)),
            Reservation::Unlimited
        );
        let until = t0 + Duration::from_secs(30);
        block_on(store.exhaust(&key(), until));
        assert_eq!(
            block_on(store.reserve(&key(), 1, t0 + Duration::from_secs(29))),
            Reservation::Exhausted {
                remaining: 0,
                reset: until,
                after_429: true
            }
        );
        assert_eq!(
            block_on(store.reserve(&key(), 1, until)),
            Reservation::Unlimited
        );
    }

    #[test]
    fn a_refresh_does_not_lift_a_429_before_its_end() {
        let store = InMemoryStore::new();
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let until = t0 + Duration::from_secs(30);
        block_on(store.exhaust(&key(), until));
        let window = Window {
            resource: "sell.inventory".into(),
            limit: 5,
            remaining: 5,
            reset: t0 + Duration::from_secs(3600),
            length: Duration::from_secs(86_400),
        };
        block_on(store.refresh(&Scope::Application, &[window]));
        assert!(matches!(
            block_on(store.reserve(&key(), 1, t0)),
            Reservation::Exhausted {
                after_429: true,
                ..
            }
        ));
        assert!(matches!(
            block_on(store.reserve(&key(), 1, until)),
            Reservation::Granted { calls: 1, .. }
        ));
    }
}
