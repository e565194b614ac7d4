//! marketplace-budget's call budget shared by a fleet of processes through PostgreSQL.
//!
//! [`PgBudgetStore`] is a [`BudgetStore`]: every process of the fleet puts a
//! [`CallBudget`](marketplace_budget::CallBudget) over a store on the same database, and
//! together they make no more calls of an API resource than eBay's getRateLimits (for the
//! application) and getUserRateLimits (for a user) allow:
//!
//! - a reservation is **one round trip**: one statement that locks the (scope, resource) row,
//!   rolls its window over when the database's clock is past eBay's `reset` (`remaining`
//!   back to `limit`, as eBay does; never by a process's own clock, so the whole fleet rolls
//!   a window at the same instant), takes `min(batch, remaining)` calls and returns what it took. A process
//!   asks for a batch (16 calls by default, `CallBudget::with_batch`) and hands the calls out
//!   from memory: 1,000 calls with batches of 16 are at most 63 round trips;
//! - a refresh from getRateLimits or getUserRateLimits writes all of a scope's resources in
//!   one statement. Within the window the fleet is counting, it only lowers what is left
//!   (eBay's `remaining` does not know the calls other processes reserved and have not made
//!   yet; a raised `limit` adds its difference); a new window, or one eBay answered 429 in,
//!   takes eBay's figures;
//! - eBay's 429, reported by any process (`CallBudget::exhausted`), refuses the resource (for
//!   the user whose call got it, else for the application) to the whole fleet until its end;
//!   a refresh never lifts it early. A process holding a batch spends it first, and one that
//!   found no quota for the resource lets calls through uncounted for at most 5 s before it
//!   asks the database again, so the 429 reaches every process within that time.
//!
//! One row per (scope, resource, window length): a resource with a daily rate and a shorter
//! one has two rows, and a reservation takes from both (the one with the fewest calls left
//! bounds it), so the daily quota holds while the short window refills. A rate without
//! `timeWindow` does not roll over: past its reset it grants nothing until a refresh.
//!
//! What a process reserved and did not use is lost to the fleet until the window resets: a
//! process killed while holding a batch loses at most that batch, and a fleet of N processes
//! strands at most N batches a window.
//!
//! When the database cannot be reached, a reservation is refused for one second
//! ([`Reservation::Exhausted`], with an `error` event, target `marketplace_budget_postgres`)
//! rather than let calls through uncounted: the caller waits or fails fast as its
//! `Mode` says.
//!
//! The table is `marketplace_call_budgets`, created by [`migrate`] beside the application's
//! own tables; the migrations are recorded in `marketplace_budget_migrations`, never in the
//! application's `_sqlx_migrations`.
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//! use marketplace_budget::{CallBudget, Mode};
//! use marketplace_budget_postgres::{PgBudgetStore, migrate};
//!
//! # async fn run(api: marketplace_client::aio::api::ApiClient) -> Result<(), Box<dyn std::error::Error>> {
//! let pool = sqlx::PgPool::connect("postgres://backend@db.internal/backend").await?;
//! migrate(&pool).await?;
//! let budget = CallBudget::new(
//!     Arc::new(PgBudgetStore::new(pool)),
//!     Mode::Wait { at_most: Duration::from_secs(30) },
//! );
//! let api = api.with_budget(Arc::new(budget), None);
//! // getRateLimits, at start and then every few minutes.
//! api.refresh_budget().await?;
//! # Ok(()) }
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use marketplace_budget::{BudgetKey, BudgetStore, Reservation, Scope, StoreFuture, Window};
use sqlx::PgPool;

mod migrate;

pub use migrate::migrate;

/// How long a reservation is refused when the database cannot be reached.
const OUTAGE_REFUSAL: Duration = Duration::from_secs(1);

/// What [`migrate`] fails with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PgBudgetError {
    /// Creating or updating `marketplace_call_budgets` failed.
    #[error("the call budget's schema (marketplace_call_budgets): {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
}

/// A [`BudgetStore`] on PostgreSQL, shared by every process whose store is on the same
/// database (see the crate's documentation). Cheap to clone the pool it is made from.
/// A window's roll (in a reservation, a release or a refresh) follows the database's clock,
/// not the `now` a reservation is given; that `now` only ends a 429.
#[derive(Debug)]
pub struct PgBudgetStore {
    pool: PgPool,
    round_trips: AtomicU64,
}

impl PgBudgetStore {
    /// A store over `pool` (the tables made by [`migrate`]).
    pub fn new(pool: PgPool) -> Self {
        Self {
            pool,
            round_trips: AtomicU64::new(0),
        }
    }

    /// The statements this store has sent to the database (each one round trip) since it was
    /// made: a reservation, a release, a refresh or a 429 is one each.
    pub fn round_trips(&self) -> u64 {
        self.round_trips.load(Ordering::Relaxed)
    }

    fn sent(&self) {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
    }
}

/// The `scope` column of `scope`: `application`, or `user/NAME`.
fn scope_column(scope: &Scope) -> String {
    match scope {
        Scope::Application => "application".to_owned(),
        Scope::User(user) => format!("user/{user}"),
    }
}

/// Milliseconds since the Unix epoch (0 before it).
fn millis(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

fn time_of(millis: i64) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(millis).unwrap_or(0))
}

fn count(value: i64) -> u32 {
    u32::try_from(value.max(0)).unwrap_or(u32::MAX)
}

/// The database's clock in milliseconds since the Unix epoch: every process of the fleet
/// rolls a window over at the same instant, whatever its own clock says.
macro_rules! db_now_ms {
    () => {
        "(extract(epoch from clock_timestamp()) * 1000)::bigint"
    };
}

/// The locked rows of a (scope, resource), one per window, each rolled over to the database's
/// clock (`c.now_ms`), what they grant of `$4` calls (the fewest left of any bounds it), and
/// the update of each: one statement. A window of unknown length (a rate without
/// `timeWindow`, `length_ms` 0) does not roll over: past its reset it grants nothing (a
/// refusal that names a minute on) until a refresh. `FOR UPDATE` makes concurrent reservations of a row
/// wait for each other and read the row as the previous one left it. A 429's end is compared
/// with `$3`, the process's now (the process's clock set it: `CallBudget::exhausted`).
const RESERVE: &str = concat!(
    "\
WITH cur AS (
    SELECT scope, resource, length_ms, known,
           CASE WHEN reset_ms > c.now_ms THEN remaining
                WHEN length_ms = 0 THEN 0
                ELSE call_limit END AS avail,
           CASE WHEN reset_ms > c.now_ms OR length_ms = 0 THEN reset_ms
                ELSE reset_ms + ((c.now_ms - reset_ms) / length_ms + 1) * length_ms
           END AS next_reset,
           CASE WHEN reset_ms <= c.now_ms AND length_ms = 0 THEN c.now_ms + 60000
           END AS unknown_retry,
           CASE WHEN exhausted_until_ms > $3 THEN exhausted_until_ms END AS blocked_until
    FROM marketplace_call_budgets, (SELECT ",
    db_now_ms!(),
    " AS now_ms) c
    WHERE scope = $1 AND resource = $2
    FOR UPDATE OF marketplace_call_budgets
), agg AS (
    SELECT count(*) AS windows, bool_and(known) AS known, max(blocked_until) AS blocked_until,
           min(avail) AS avail,
           CASE WHEN max(blocked_until) IS NOT NULL OR NOT bool_and(known) THEN 0
                ELSE LEAST(min(avail), $4) END AS take,
           min(next_reset) AS first_reset,
           max(COALESCE(unknown_retry, next_reset)) FILTER (WHERE avail = 0) AS spent_reset
    FROM cur
), upd AS (
    UPDATE marketplace_call_budgets b
    SET remaining = c.avail - a.take,
        reset_ms = c.next_reset,
        exhausted_until_ms = a.blocked_until,
        updated_at = now()
    FROM cur c, agg a
    WHERE b.scope = c.scope AND b.resource = c.resource AND b.length_ms = c.length_ms
)
SELECT take, avail - take, CASE WHEN take > 0 THEN first_reset
                                ELSE COALESCE(spent_reset, first_reset) END,
       blocked_until, known
FROM agg
WHERE windows > 0"
);

/// A scope's windows in one statement, one row per (resource, window length). A row whose
/// window is still running (its reset after the database's clock) and is the one eBay
/// answered for (eBay's reset not later than the row's, give or take a second) keeps the lower
/// of its own `remaining` (which counts the calls the fleet reserved) and eBay's (which counts
/// only those made), plus what a raised limit adds; any other row, and a row eBay answered
/// 429 for (its count proved wrong), takes eBay's figures. A 429's end is kept (carried to
/// the resource's new rows); the rows of a resource eBay answered for whose window length it
/// no longer reports are removed.
const REFRESH: &str = concat!(
    "\
WITH w AS (
    SELECT * FROM UNNEST($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[])
         AS w(resource, call_limit, remaining, reset_ms, length_ms)
), gone AS (
    DELETE FROM marketplace_call_budgets b
    WHERE b.scope = $1 AND b.resource IN (SELECT resource FROM w)
      AND NOT EXISTS (SELECT 1 FROM w
                      WHERE w.resource = b.resource AND w.length_ms = b.length_ms)
    RETURNING b.resource, b.exhausted_until_ms
)
INSERT INTO marketplace_call_budgets AS b
    (scope, resource, call_limit, remaining, reset_ms, length_ms, known, exhausted_until_ms)
SELECT $1, w.resource, w.call_limit, w.remaining, w.reset_ms, w.length_ms, true,
       (SELECT max(g.exhausted_until_ms) FROM gone g WHERE g.resource = w.resource)
FROM w
ON CONFLICT (scope, resource, length_ms) DO UPDATE SET
    remaining = CASE
        WHEN b.known AND b.reset_ms > ",
    db_now_ms!(),
    " AND EXCLUDED.reset_ms <= b.reset_ms + 1000
             AND b.exhausted_until_ms IS NULL
        THEN GREATEST(0, LEAST(EXCLUDED.remaining,
                               b.remaining + GREATEST(0, EXCLUDED.call_limit - b.call_limit)))
        ELSE EXCLUDED.remaining END,
    call_limit = EXCLUDED.call_limit,
    reset_ms = EXCLUDED.reset_ms,
    exhausted_until_ms = GREATEST(b.exhausted_until_ms, EXCLUDED.exhausted_until_ms),
    known = true,
    updated_at = now()"
);

/// eBay's 429: no call of the resource (every window row of it) until `$3`, and nothing left
/// in its windows; a row of its own when no quota is known.
const EXHAUST: &str = "\
WITH up AS (
    UPDATE marketplace_call_budgets
    SET remaining = 0,
        exhausted_until_ms = GREATEST(COALESCE(exhausted_until_ms, 0), $3),
        updated_at = now()
    WHERE scope = $1 AND resource = $2
    RETURNING 1
)
INSERT INTO marketplace_call_budgets
    (scope, resource, call_limit, remaining, reset_ms, length_ms, exhausted_until_ms, known)
SELECT $1, $2, 0, 0, $3, 0, $3, false
WHERE NOT EXISTS (SELECT 1 FROM up)
ON CONFLICT (scope, resource, length_ms) DO UPDATE SET
    remaining = 0,
    exhausted_until_ms = GREATEST(COALESCE(marketplace_call_budgets.exhausted_until_ms, 0), $3),
    updated_at = now()";

/// Calls given back to every window of the resource while it runs (by the database's clock).
const RELEASE: &str = concat!(
    "\
UPDATE marketplace_call_budgets
SET remaining = LEAST(call_limit, remaining + $3), updated_at = now()
WHERE scope = $1 AND resource = $2 AND known AND reset_ms > ",
    db_now_ms!()
);

type Granted = (i64, i64, i64, Option<i64>, bool);

impl PgBudgetStore {
    async fn reserve_now(&self, key: &BudgetKey, wanted: u32, now: SystemTime) -> Reservation {
        self.sent();
        let row: Result<Option<Granted>, sqlx::Error> = sqlx::query_as(RESERVE)
            .bind(scope_column(&key.scope))
            .bind(key.resource.as_ref())
            .bind(millis(now))
            .bind(i64::from(wanted.max(1)))
            .fetch_optional(&self.pool)
            .await;
        match row {
            Err(e) => {
                let reset = now + OUTAGE_REFUSAL;
                tracing::error!(
                    target: "marketplace_budget_postgres",
                    scope = %key.scope,
                    resource = %key.resource,
                    "the call budget of {} for {} could not be reserved from \
                     marketplace_call_budgets ({e}): calls refused for {} ms",
                    key.resource,
                    key.scope,
                    OUTAGE_REFUSAL.as_millis(),
                );
                Reservation::Exhausted {
                    remaining: 0,
                    reset,
                    after_429: false,
                }
            }
            Ok(None) => Reservation::Unlimited,
            Ok(Some((_, _, _, Some(until), _))) => Reservation::Exhausted {
                remaining: 0,
                reset: time_of(until),
                after_429: true,
            },
            Ok(Some((_, _, _, None, false))) => Reservation::Unlimited,
            Ok(Some((take, remaining, reset, None, true))) => {
                if take > 0 {
                    Reservation::Granted {
                        calls: count(take),
                        reset: time_of(reset),
                    }
                } else {
                    Reservation::Exhausted {
                        remaining: count(remaining),
                        reset: time_of(reset),
                        after_429: false,
                    }
                }
            }
        }
    }

    fn failed(&self, action: &str, scope: &Scope, e: &sqlx::Error) {
        tracing::error!(
            target: "marketplace_budget_postgres",
            scope = %scope,
            "the call budget of {scope}: {action} in marketplace_call_budgets failed: {e}"
        );
    }
}

impl BudgetStore for PgBudgetStore {
    fn reserve<'a>(
        &'a self,
        key: &'a BudgetKey,
        wanted: u32,
        now: SystemTime,
    ) -> StoreFuture<'a, Reservation> {
        Box::pin(self.reserve_now(key, wanted, now))
    }

    fn release<'a>(&'a self, key: &'a BudgetKey, calls: u32) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.sent();
            let done = sqlx::query(RELEASE)
                .bind(scope_column(&key.scope))
                .bind(key.resource.as_ref())
                .bind(i64::from(calls))
                .execute(&self.pool)
                .await;
            if let Err(e) = done {
                self.failed("giving back unused calls", &key.scope, &e);
            }
        })
    }

    fn refresh<'a>(&'a self, scope: &'a Scope, windows: &'a [Window]) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            if windows.is_empty() {
                return;
            }
            // One row per (scope, resource, window length): of two windows of one length,
            // the one with the fewest calls left.
            let mut fewest: Vec<&Window> = Vec::new();
            for window in windows {
                match fewest
                    .iter_mut()
                    .find(|w| w.resource == window.resource && w.length == window.length)
                {
                    Some(known) if known.remaining <= window.remaining => {}
                    Some(known) => *known = window,
                    None => fewest.push(window),
                }
            }
            let windows = fewest;
            let resources: Vec<String> = windows.iter().map(|w| w.resource.clone()).collect();
            let limits: Vec<i64> = windows.iter().map(|w| i64::from(w.limit)).collect();
            let remaining: Vec<i64> = windows
                .iter()
                .map(|w| i64::from(w.remaining.min(w.limit)))
                .collect();
            let resets: Vec<i64> = windows.iter().map(|w| millis(w.reset)).collect();
            let lengths: Vec<i64> = windows
                .iter()
                .map(|w| i64::try_from(w.length.as_millis()).unwrap_or(i64::MAX))
                .collect();
            self.sent();
            let done = sqlx::query(REFRESH)
                .bind(scope_column(scope))
                .bind(resources)
                .bind(limits)
                .bind(remaining)
                .bind(resets)
                .bind(lengths)
                .execute(&self.pool)
                .await;
            if let Err(e) = done {
                self.failed("writing getRateLimits' answer", scope, &e);
            }
        })
    }

    fn exhaust<'a>(&'a self, key: &'a BudgetKey, until: SystemTime) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.sent();
            let done = sqlx::query(EXHAUST)
                .bind(scope_column(&key.scope))
                .bind(key.resource.as_ref())
                .bind(millis(until))
                .execute(&self.pool)
                .await;
            if let Err(e) = done {
                self.failed("recording eBay's 429", &key.scope, &e);
            }
        })
    }
}
