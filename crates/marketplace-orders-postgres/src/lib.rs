//! marketplace-orders' [`OrderFeed`](marketplace_orders::feed::OrderFeed) on PostgreSQL:
//! every change of a seller's orders handed to the application **exactly once**, by a fleet
//! of processes of which one feeds a seller at a time.
//!
//! [`PgFeedStore`] is a [`FeedStore`] whose handler context is the sqlx transaction
//! ([`PgFeedTx`]) in which the feed then records its watermark and the (orderId,
//! lastModifiedDate) keys it handed over: the application's writes in the handler and the
//! feed's record commit together or not at all. A crash, a handler's error or a refused commit
//! rolls both back, and the next poll hands the same changes over again into a new
//! transaction; a committed change is never handed over again.
//!
//! One process feeds an account at a time: [`load`](FeedStore::load) (the start of each
//! `poll_once` and `wake`) takes or renews a lease on the account's row, granted by the
//! database's clock, each grant incrementing the row's fencing counter; each batch renews it
//! ([`begin`](FeedStore::begin)), and each [`commit`](FeedStore::commit) writes the watermark
//! only while the row's fence is still the one this store was granted, in the same
//! transaction as the application's writes. A process that stalls past its lease (a long
//! pause, a lost connection) is taken over once the lease runs out, and its commit is then
//! refused ([`PgFeedError::LeaseLost`]): what it handed over since its last commit is rolled
//! back, and the new holder, which read the state after the last accepted commit, hands it
//! over once. A process that finds the account fed by another gets
//! [`PgFeedError::LeaseHeld`] from its poll (see [`PgFeedError::of`]) and tries again later.
//!
//! The tables are `marketplace_order_feeds` (the watermark and the lease, a row per account)
//! and `marketplace_order_feed_keys` (the keys of the overlap window), created by [`migrate`]
//! beside the application's own tables; the migrations are recorded in
//! `marketplace_orders_migrations`, never in the application's `_sqlx_migrations`.
//!
//! ```no_run
//! use marketplace_orders::aio::Orders;
//! use marketplace_orders::feed::{BoxError, OrderChange, OrderFeed, OrderHandler};
//! use marketplace_orders_postgres::{PgFeedError, PgFeedStore, PgFeedTx, migrate};
//!
//! /// Writes each order into the application's own table, in the feed's transaction.
//! struct IntoOrdersTable;
//!
//! impl OrderHandler<PgFeedTx> for IntoOrdersTable {
//!     async fn handle(&mut self, change: &OrderChange, tx: &mut PgFeedTx) -> Result<(), BoxError> {
//!         sqlx::query("INSERT INTO app_orders (order_id, modified) VALUES ($1, $2)")
//!             .bind(&change.key.order_id)
//!             .bind(&change.key.last_modified_date)
//!             .execute(&mut **tx)
//!             .await?;
//!         Ok(())
//!     }
//! }
//!
//! # async fn run(api: marketplace_client::aio::api::ApiClient) -> Result<(), Box<dyn std::error::Error>> {
//! let pool = sqlx::PgPool::connect("postgres://backend@db.internal/backend").await?;
//! migrate(&pool).await?;
//! let mut feed = OrderFeed::new(Orders::new(api), PgFeedStore::new(pool), "seller-1");
//! match feed.poll_once(&mut IntoOrdersTable).await {
//!     Ok(polled) => println!("{} changes", polled.handed_over),
//!     // Another process feeds seller-1: try again at the next poll.
//!     Err(e) if matches!(PgFeedError::of(&e), Some(PgFeedError::LeaseHeld { .. })) => {}
//!     Err(e) => return Err(e.into()),
//! }
//! # Ok(()) }
//! ```

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use marketplace_orders::feed::{BoxError, ChangeKey, FeedError, FeedState, FeedStore};
use sqlx::{PgPool, Postgres, Transaction};

mod migrate;

pub use migrate::migrate;

/// The handler's context with [`PgFeedStore`]: the transaction the feed commits its record
/// in. Write through it (`.execute(&mut **tx)`) to commit with the feed, or not at all.
pub type PgFeedTx = Transaction<'static, Postgres>;

/// How long a lease runs by default, renewed at each batch: longer than a page of 200
/// changes takes the application's handler.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(60);

/// What [`PgFeedStore`] fails with (in [`FeedError::Store`]'s `source`: see
/// [`PgFeedError::of`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PgFeedError {
    /// Another process holds the account's lease: it feeds the account, this one does not.
    #[error(
        "the order feed of {account} is fed by another process ({holder}) until {until} \
         (the database's clock)"
    )]
    LeaseHeld {
        /// The feed's account.
        account: String,
        /// The holder's name ([`PgFeedStore::with_holder`]).
        holder: String,
        /// When its lease runs out, as the database prints it.
        until: String,
    },
    /// This store's lease on the account was taken over by another process (it ran out): the
    /// commit was refused and rolled back with the application's writes.
    #[error(
        "the order feed of {account}: its lease (fence {fence}) was taken over by another \
         process; what was handed over since the last commit was rolled back"
    )]
    LeaseLost {
        /// The feed's account.
        account: String,
        /// The fence this store held.
        fence: i64,
    },
    /// A statement failed.
    #[error("the order feed of {account}: {action}: {source}")]
    Database {
        /// The feed's account.
        account: String,
        /// What the statement was for.
        action: &'static str,
        /// sqlx's error.
        source: sqlx::Error,
    },
    /// [`migrate`] failed.
    #[error("the order feed store's schema migration: {0}")]
    Migration(#[from] sqlx::migrate::MigrateError),
}

impl PgFeedError {
    /// The store's error in a feed's error, if that is what the feed failed with.
    pub fn of(error: &FeedError) -> Option<&PgFeedError> {
        match error {
            FeedError::Store { source, .. } => source.downcast_ref(),
            _ => None,
        }
    }
}

static STORES: AtomicU64 = AtomicU64::new(0);

/// A [`FeedStore`] on PostgreSQL: exactly once, one process an account (see the
/// [crate]). Give each feed (each `OrderFeed` value) a store of its own: the store
/// holds the fences of its leases.
#[derive(Debug)]
pub struct PgFeedStore {
    pool: PgPool,
    lease: Duration,
    holder: String,
    /// The fence of each account's lease this store holds.
    fences: Mutex<HashMap<String, i64>>,
    /// The keys `marketplace_order_feed_keys` holds for each account, as this store last read
    /// or committed them under its lease (no other process writes them meanwhile): a commit
    /// writes only the difference.
    stored: Mutex<HashMap<String, BTreeSet<ChangeKey>>>,
}

impl PgFeedStore {
    /// The store over `pool`'s database ([`migrate`] first), leases of [`DEFAULT_LEASE`],
    /// named after this process (its id, and a counter of the process's stores).
    pub fn new(pool: PgPool) -> Self {
        let n = STORES.fetch_add(1, Ordering::Relaxed);
        Self {
            pool,
            lease: DEFAULT_LEASE,
            holder: format!("process {} store {n}", std::process::id()),
            fences: Mutex::default(),
            stored: Mutex::default(),
        }
    }

    /// How long a lease runs without renewal (each batch renews it): another process takes
    /// the account over that long after this one stopped renewing.
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = lease;
        self
    }

    /// The name other processes see in [`PgFeedError::LeaseHeld`] (a host and process, say).
    pub fn with_holder(mut self, holder: impl Into<String>) -> Self {
        self.holder = holder.into();
        self
    }

    /// The pool the store writes through.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Gives `account`'s lease up (at shutdown), so that another process takes over at once:
    /// whether this store held it.
    pub async fn release(&self, account: &str) -> Result<bool, PgFeedError> {
        let Some(fence) = self.take_fence(account) else {
            return Ok(false);
        };
        let done = sqlx::query(
            "UPDATE marketplace_order_feeds SET lease_until = NULL, holder = NULL, \
             updated_at = now() WHERE account = $1 AND fence = $2",
        )
        .bind(account)
        .bind(fence)
        .execute(&self.pool)
        .await
        .map_err(db(account, "release the lease"))?;
        Ok(done.rows_affected() == 1)
    }

    fn fence(&self, account: &str) -> Option<i64> {
        self.fences
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(account)
            .copied()
    }

    fn set_fence(&self, account: &str, fence: i64) {
        self.fences
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(account.to_owned(), fence);
    }

    fn take_fence(&self, account: &str) -> Option<i64> {
        self.fences
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(account)
    }

    fn lease_micros(&self) -> i64 {
        i64::try_from(self.lease.as_micros()).unwrap_or(i64::MAX)
    }

    fn lost(&self, account: &str, fence: i64) -> PgFeedError {
        self.take_fence(account);
        PgFeedError::LeaseLost {
            account: account.to_owned(),
            fence,
        }
    }

    /// Extends the lease of `fence` (by the database's clock): whether the row's fence is
    /// still `fence` (no other process was granted a lease since, even if this one ran out).
    async fn renew(&self, account: &str, fence: i64) -> Result<bool, PgFeedError> {
        let done = sqlx::query(
            "UPDATE marketplace_order_feeds \
             SET lease_until = now() + $3 * interval '1 microsecond', holder = $4, \
                 updated_at = now() \
             WHERE account = $1 AND fence = $2",
        )
        .bind(account)
        .bind(fence)
        .bind(self.lease_micros())
        .bind(&self.holder)
        .execute(&self.pool)
        .await
        .map_err(db(account, "renew the lease"))?;
        Ok(done.rows_affected() == 1)
    }

    /// Renews this store's lease on `account`, or takes the lease when nobody holds it or
    /// its holder's ran out (a new fence); [`PgFeedError::LeaseHeld`] otherwise.
    async fn acquire(&self, account: &str) -> Result<i64, PgFeedError> {
        if let Some(fence) = self.fence(account) {
            if self.renew(account, fence).await? {
                return Ok(fence);
            }
            self.take_fence(account);
        }
        let granted: Option<i64> = sqlx::query_scalar(
            "INSERT INTO marketplace_order_feeds AS f (account, fence, holder, lease_until) \
             VALUES ($1, 1, $2, now() + $3 * interval '1 microsecond') \
             ON CONFLICT (account) DO UPDATE SET \
               fence = f.fence + 1, holder = EXCLUDED.holder, \
               lease_until = EXCLUDED.lease_until, updated_at = now() \
             WHERE f.lease_until IS NULL OR f.lease_until <= now() \
             RETURNING fence",
        )
        .bind(account)
        .bind(&self.holder)
        .bind(self.lease_micros())
        .fetch_optional(&self.pool)
        .await
        .map_err(db(account, "take the lease"))?;
        if let Some(fence) = granted {
            self.set_fence(account, fence);
            return Ok(fence);
        }
        let (holder, until): (Option<String>, Option<String>) = sqlx::query_as(
            "SELECT holder, lease_until::text FROM marketplace_order_feeds WHERE account = $1",
        )
        .bind(account)
        .fetch_optional(&self.pool)
        .await
        .map_err(db(account, "read the lease"))?
        .unwrap_or_default();
        Err(PgFeedError::LeaseHeld {
            account: account.to_owned(),
            holder: holder.unwrap_or_default(),
            until: until.unwrap_or_default(),
        })
    }

    async fn load_state(&self, account: &str) -> Result<FeedState, PgFeedError> {
        self.acquire(account).await?;
        let watermark: Option<String> =
            sqlx::query_scalar("SELECT watermark FROM marketplace_order_feeds WHERE account = $1")
                .bind(account)
                .fetch_optional(&self.pool)
                .await
                .map_err(db(account, "read the watermark"))?
                .flatten();
        let keys: Vec<(String, String)> = sqlx::query_as(
            "SELECT order_id, last_modified_date FROM marketplace_order_feed_keys \
             WHERE account = $1",
        )
        .bind(account)
        .fetch_all(&self.pool)
        .await
        .map_err(db(account, "read the keys handed over"))?;
        let recent: BTreeSet<ChangeKey> = keys
            .into_iter()
            .map(|(order_id, last_modified_date)| ChangeKey {
                order_id,
                last_modified_date,
            })
            .collect();
        self.stored
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(account.to_owned(), recent.clone());
        Ok(FeedState { watermark, recent })
    }

    async fn begin_batch(&self, account: &str) -> Result<PgFeedTx, PgFeedError> {
        let fence = self.acquire_held(account)?;
        if !self.renew(account, fence).await? {
            return Err(self.lost(account, fence));
        }
        self.pool
            .begin()
            .await
            .map_err(db(account, "begin a transaction"))
    }

    /// The fence this store holds on `account`; a store that holds none lost it.
    fn acquire_held(&self, account: &str) -> Result<i64, PgFeedError> {
        self.fence(account).ok_or_else(|| PgFeedError::LeaseLost {
            account: account.to_owned(),
            fence: 0,
        })
    }

    async fn commit_batch(
        &self,
        account: &str,
        mut tx: PgFeedTx,
        state: &FeedState,
    ) -> Result<(), PgFeedError> {
        let fence = self.acquire_held(account)?;
        // First, under the row's lock: a takeover waits for this commit, or this commit sees
        // the takeover's fence and writes nothing.
        let fenced = sqlx::query(
            "UPDATE marketplace_order_feeds \
             SET watermark = $3, lease_until = now() + $4 * interval '1 microsecond', \
                 updated_at = now() \
             WHERE account = $1 AND fence = $2",
        )
        .bind(account)
        .bind(fence)
        .bind(&state.watermark)
        .bind(self.lease_micros())
        .execute(&mut *tx)
        .await
        .map_err(db(account, "record the watermark"))?;
        if fenced.rows_affected() != 1 {
            let _ = tx.rollback().await;
            return Err(self.lost(account, fence));
        }
        let stored = self
            .stored
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(account)
            .cloned()
            .unwrap_or_default();
        let columns = |keys: Vec<&ChangeKey>| -> (Vec<String>, Vec<String>) {
            keys.into_iter()
                .map(|k| (k.order_id.clone(), k.last_modified_date.clone()))
                .unzip()
        };
        let (ids, dates) = columns(stored.difference(&state.recent).collect());
        if !ids.is_empty() {
            sqlx::query(
                "DELETE FROM marketplace_order_feed_keys k \
                 USING unnest($2::text[], $3::text[]) AS r(order_id, last_modified_date) \
                 WHERE k.account = $1 AND k.order_id = r.order_id \
                   AND k.last_modified_date = r.last_modified_date",
            )
            .bind(account)
            .bind(&ids)
            .bind(&dates)
            .execute(&mut *tx)
            .await
            .map_err(db(account, "forget the keys out of the overlap window"))?;
        }
        let (ids, dates) = columns(state.recent.difference(&stored).collect());
        if !ids.is_empty() {
            sqlx::query(
                "INSERT INTO marketplace_order_feed_keys (account, order_id, last_modified_date) \
                 SELECT $1, order_id, last_modified_date \
                 FROM unnest($2::text[], $3::text[]) AS r(order_id, last_modified_date) \
                 ON CONFLICT DO NOTHING",
            )
            .bind(account)
            .bind(&ids)
            .bind(&dates)
            .execute(&mut *tx)
            .await
            .map_err(db(account, "record the keys handed over"))?;
        }
        tx.commit()
            .await
            .map_err(db(account, "commit the feed's record"))?;
        self.stored
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(account.to_owned(), state.recent.clone());
        Ok(())
    }
}

fn db<'a>(account: &'a str, action: &'static str) -> impl FnOnce(sqlx::Error) -> PgFeedError + 'a {
    move |source| PgFeedError::Database {
        account: account.to_owned(),
        action,
        source,
    }
}

impl FeedStore for PgFeedStore {
    type Context = PgFeedTx;

    async fn load(&self, account: &str) -> Result<FeedState, BoxError> {
        Ok(self.load_state(account).await?)
    }

    async fn begin(&self, account: &str) -> Result<PgFeedTx, BoxError> {
        Ok(self.begin_batch(account).await?)
    }

    async fn commit(
        &self,
        account: &str,
        context: PgFeedTx,
        state: &FeedState,
    ) -> Result<(), BoxError> {
        Ok(self.commit_batch(account, context, state).await?)
    }
}
