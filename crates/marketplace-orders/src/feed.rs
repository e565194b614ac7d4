//! [`OrderFeed`]: every change of a seller's orders handed to the application once, incremental
//! on getOrders' `lastmodifieddate`, with a watermark and an overlap window kept in a
//! [`FeedStore`].
//!
//! How it works. A poll ([`OrderFeed::poll_once`]) walks
//! `lastmodifieddate:[watermark - overlap..now]` ([`Orders::modified_between`], pages of 200
//! to the end). An order is new or changed by its [`ChangeKey`] (`orderId`,
//! `lastModifiedDate`); the keys handed over within the overlap window are kept with the
//! watermark, so the orders the overlap reads again are dropped. An order whose
//! `cancelStatus.cancelState` is not `NONE_REQUESTED` is read again with getOrder before it is
//! handed over (getOrders leaves `cancelStatus.cancelRequests` empty). When the walk reaches its
//! end, the watermark moves to the walk's `now` and the keys older than the new overlap window
//! are forgotten. [`OrderFeed::wake`] (what an ORDER_CONFIRMATION notification calls) reads
//! one order with getOrder and hands it over unless a poll or a wake already did.
//!
//! What "once" means depends on the store. The feed hands a page's changes to the handler with
//! the store's [`FeedStore::Context`], then records their keys through
//! [`FeedStore::commit`] with that context. With [`FileStore`] the context is nothing and the
//! record is a file written after the handler: a crash (or a handler's error, or a failed
//! write) between the two hands the same changes again at the next poll, with the same
//! [`ChangeKey`]: **at least once**; the application de-duplicates by the key it is handed. A
//! store whose context is a database transaction that the handler writes in and the feed
//! commits makes it exactly once.

use std::collections::BTreeSet;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::aio::Orders;
use crate::error::OrdersError;
use crate::model::Order;
use crate::time::parse_timestamp;

/// An error of the application's handler or of a store, as the feed passes it on.
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// One change of an order: its `orderId` and `lastModifiedDate` as eBay sent them. The feed
/// hands each key over once per store record; with [`FileStore`] the application de-duplicates
/// by it (see the [module](self)).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChangeKey {
    /// The order's `orderId`.
    pub order_id: String,
    /// The order's `lastModifiedDate` (eBay's timestamp text; empty when eBay sent none).
    pub last_modified_date: String,
}

impl ChangeKey {
    /// The key of `order` as it is.
    pub fn of(order: &Order) -> Self {
        Self {
            order_id: order.order_id.clone(),
            last_modified_date: order.last_modified_date.clone().unwrap_or_default(),
        }
    }
}

/// What a store keeps for one seller's feed: the watermark (every change up to it was handed
/// over) and the keys handed over within the overlap window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FeedState {
    /// The end of the last poll that reached the end of its walk (eBay's timestamp text);
    /// `None` before the first.
    pub watermark: Option<String>,
    /// The changes handed over whose `lastModifiedDate` is within the overlap window below the
    /// watermark, or after it.
    pub recent: BTreeSet<ChangeKey>,
}

/// Where a feed keeps its [`FeedState`], and what the handler gets with each change.
///
/// The feed calls [`begin`](Self::begin) before it hands a batch of changes over, passes the
/// context to the handler for each, then [`commit`](Self::commit)s the state with the
/// context. A batch that fails (the handler's error, the store's) drops its context without
/// committing.
pub trait FeedStore: Send + Sync {
    /// What the handler gets with each change: the application's writes made through it are
    /// committed with the feed's record (nothing, `()`, for [`FileStore`]).
    type Context: Send;

    /// The state of `account`'s feed (the default state when none was recorded).
    fn load(&self, account: &str) -> impl Future<Output = Result<FeedState, BoxError>> + Send;

    /// A new context for a batch of `account`'s changes.
    fn begin(&self, account: &str) -> impl Future<Output = Result<Self::Context, BoxError>> + Send;

    /// Records `state` as `account`'s, with what was done through `context`.
    fn commit(
        &self,
        account: &str,
        context: Self::Context,
        state: &FeedState,
    ) -> impl Future<Output = Result<(), BoxError>> + Send;
}

/// One change handed to the application: its key and the order as eBay answered it (with
/// its cancel requests when a cancellation was requested).
#[derive(Debug, Clone)]
pub struct OrderChange {
    /// What identifies this change; the application's de-duplication key with [`FileStore`].
    pub key: ChangeKey,
    /// The order.
    pub order: Order,
}

/// The application's handler of changes. A closure
/// `FnMut(&OrderChange, &mut Context) -> Result<(), BoxError>` is one; an async handler
/// implements the trait (`async fn handle`).
pub trait OrderHandler<C>: Send {
    /// Hands `change` over, with the store's `context`. An error stops the poll (or the wake)
    /// before the batch is recorded: the same changes are handed over again later.
    fn handle(
        &mut self,
        change: &OrderChange,
        context: &mut C,
    ) -> impl Future<Output = Result<(), BoxError>> + Send;
}

impl<C: Send, F> OrderHandler<C> for F
where
    F: FnMut(&OrderChange, &mut C) -> Result<(), BoxError> + Send,
{
    fn handle(
        &mut self,
        change: &OrderChange,
        context: &mut C,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        std::future::ready(self(change, context))
    }
}

/// What a feed failed with; what was handed over before is recorded, what was not is handed
/// over again by the next poll.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FeedError {
    /// A getOrders or getOrder call failed.
    #[error("the order feed of {account}: {source}")]
    Orders {
        /// The feed's account.
        account: String,
        /// The call's error.
        source: Box<OrdersError>,
    },
    /// The store failed to load, begin or commit.
    #[error("the order feed of {account}: its store failed to {action}: {source}")]
    Store {
        /// The feed's account.
        account: String,
        /// `load`, `begin` or `commit`.
        action: &'static str,
        /// The store's error.
        source: BoxError,
    },
    /// The application's handler failed on the change `key`.
    #[error(
        "the order feed of {account}: the handler failed on order {} modified {}: {source}",
        key.order_id, key.last_modified_date
    )]
    Handler {
        /// The feed's account.
        account: String,
        /// The change the handler failed on.
        key: ChangeKey,
        /// The handler's error.
        source: BoxError,
    },
}

/// What one poll did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Polled {
    /// The changes handed over.
    pub handed_over: usize,
    /// The getOrders and getOrder calls answered.
    pub calls: u32,
}

type Clock = Arc<dyn Fn() -> SystemTime + Send + Sync>;

/// The overlap window's default: how far below the watermark a poll reads again.
pub const DEFAULT_OVERLAP: Duration = Duration::from_secs(5 * 60);

/// How far back the first poll reads by default (getOrders' default window is 90 days).
const FIRST_LOOKBACK: Duration = Duration::from_secs(90 * 24 * 3600);

/// The order feed of one seller (`account`): see the [module](self).
///
/// ```no_run
/// # async fn run(api: marketplace_client::aio::api::ApiClient) -> Result<(), marketplace_orders::feed::FeedError> {
/// use marketplace_orders::aio::Orders;
/// use marketplace_orders::feed::{FileStore, OrderChange, OrderFeed};
///
/// let mut feed = OrderFeed::new(Orders::new(api), FileStore::new("feed-state"), "seller-1");
/// let mut handler = |change: &OrderChange, _: &mut ()| {
///     // At least once with the file store: de-duplicate by `change.key`.
///     println!("{} {}", change.key.order_id, change.key.last_modified_date);
///     Ok(())
/// };
/// feed.poll_once(&mut handler).await?;
/// # Ok(()) }
/// ```
pub struct OrderFeed<S> {
    orders: Orders,
    store: S,
    account: String,
    overlap: Duration,
    first_from: Option<SystemTime>,
    clock: Clock,
}

impl<S> std::fmt::Debug for OrderFeed<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrderFeed")
            .field("account", &self.account)
            .field("overlap", &self.overlap)
            .field("first_from", &self.first_from)
            .finish_non_exhaustive()
    }
}

impl<S: FeedStore> OrderFeed<S> {
    /// The feed of `account`'s orders through `orders` (a client with that seller's user
    /// token), its state in `store`.
    pub fn new(orders: Orders, store: S, account: impl Into<String>) -> Self {
        Self {
            orders,
            store,
            account: account.into(),
            overlap: DEFAULT_OVERLAP,
            first_from: None,
            clock: Arc::new(SystemTime::now),
        }
    }

    /// How far below the watermark each poll reads again (default [`DEFAULT_OVERLAP`]):
    /// longer than eBay's clock and paging are off by.
    pub fn with_overlap(mut self, overlap: Duration) -> Self {
        self.overlap = overlap;
        self
    }

    /// Where the first poll (no watermark yet) starts reading (default: 90 days before it).
    pub fn starting_at(mut self, from: SystemTime) -> Self {
        self.first_from = Some(from);
        self
    }

    /// The clock that ends each poll's walk (default the system clock; eBay's clock should
    /// not be ahead of it by more than the overlap).
    pub fn with_clock(mut self, clock: impl Fn() -> SystemTime + Send + Sync + 'static) -> Self {
        self.clock = Arc::new(clock);
        self
    }

    /// The feed's account.
    pub fn account(&self) -> &str {
        &self.account
    }

    /// The feed's store.
    pub fn store(&self) -> &S {
        &self.store
    }

    fn orders_error(&self, source: OrdersError) -> FeedError {
        FeedError::Orders {
            account: self.account.clone(),
            source: Box::new(source),
        }
    }

    fn store_error(&self, action: &'static str, source: BoxError) -> FeedError {
        FeedError::Store {
            account: self.account.clone(),
            action,
            source,
        }
    }

    async fn load(&self) -> Result<FeedState, FeedError> {
        self.store
            .load(&self.account)
            .await
            .map_err(|e| self.store_error("load", e))
    }

    async fn begin(&self) -> Result<S::Context, FeedError> {
        self.store
            .begin(&self.account)
            .await
            .map_err(|e| self.store_error("begin", e))
    }

    async fn commit(&self, context: S::Context, state: &FeedState) -> Result<(), FeedError> {
        self.store
            .commit(&self.account, context, state)
            .await
            .map_err(|e| self.store_error("commit", e))
    }

    /// One catch-up: every change since the watermark (less the overlap) up to now, pages of
    /// 200 to the end, each not handed over before given to `handler`, recorded page by
    /// page; the watermark moves to now at the end. On an error, what was recorded stays and
    /// the rest is handed over by the next poll.
    pub async fn poll_once<H: OrderHandler<S::Context>>(
        &mut self,
        handler: &mut H,
    ) -> Result<Polled, FeedError> {
        let mut state = self.load().await?;
        // In eBay's precision (milliseconds), as the watermark is written: the keys this poll
        // keeps (`lastModifiedDate` from `until - overlap` on) are then exactly those the next
        // poll reads again (from `watermark - overlap` on). A finer `until` would forget the
        // keys of the millisecond at the window's edge that the next poll reads again, and hand
        // them over twice.
        let until = to_millis((self.clock)());
        let from = match state.watermark.as_deref() {
            Some(text) => {
                let watermark = parse_timestamp(text).ok_or_else(|| {
                    self.store_error(
                        "load",
                        format!("the watermark {text:?} is not eBay's timestamp format").into(),
                    )
                })?;
                watermark.checked_sub(self.overlap).unwrap_or(watermark)
            }
            None => self
                .first_from
                .unwrap_or_else(|| until.checked_sub(FIRST_LOOKBACK).unwrap_or(until)),
        };
        let from = from.min(until);
        let mut polled = Polled {
            handed_over: 0,
            calls: 0,
        };
        let mut pages = self
            .orders
            .modified_between(from, until)
            .map_err(|e| self.orders_error(e))?;
        while let Some(page) = pages.next_page().await {
            let page = page.map_err(|e| self.orders_error(e))?;
            let mut context = None;
            let mut handed = Vec::new();
            for listed in page {
                let key = ChangeKey::of(&listed);
                if state.recent.contains(&key) {
                    continue;
                }
                let order = if listed.cancel_state().is_some_and(|s| s != "NONE_REQUESTED") {
                    // getOrders leaves cancelStatus.cancelRequests empty; getOrder fills them.
                    polled.calls += 1;
                    self.orders
                        .get_order(&listed.order_id)
                        .await
                        .map_err(|e| self.orders_error(e))?
                } else {
                    listed
                };
                let change = OrderChange {
                    key: ChangeKey::of(&order),
                    order,
                };
                handed.push(key);
                if state.recent.contains(&change.key) {
                    continue;
                }
                if context.is_none() {
                    context = Some(self.begin().await?);
                }
                if let Some(context) = context.as_mut() {
                    self.hand_over(handler, &change, context).await?;
                }
                polled.handed_over += 1;
                handed.push(change.key);
            }
            if let Some(context) = context {
                state.recent.extend(handed);
                self.commit(context, &state).await?;
            }
        }
        polled.calls += pages.calls();
        // The walk reached its end: every change up to `until` was handed over.
        let watermark = crate::time::format_timestamp(until, "the watermark")
            .map_err(|e| self.orders_error(e))?;
        let keep_from = until.checked_sub(self.overlap).unwrap_or(until);
        state
            .recent
            .retain(|k| parse_timestamp(&k.last_modified_date).is_some_and(|t| t >= keep_from));
        state.watermark = Some(watermark);
        let context = self.begin().await?;
        self.commit(context, &state).await?;
        Ok(polled)
    }

    /// Reads the order `order_id` with getOrder (what an ORDER_CONFIRMATION notification
    /// wakes) and hands it over unless a poll or a wake already handed this change over:
    /// whether it was handed over.
    pub async fn wake<H: OrderHandler<S::Context>>(
        &mut self,
        order_id: &str,
        handler: &mut H,
    ) -> Result<bool, FeedError> {
        let mut state = self.load().await?;
        let order = self
            .orders
            .get_order(order_id)
            .await
            .map_err(|e| self.orders_error(e))?;
        let change = OrderChange {
            key: ChangeKey::of(&order),
            order,
        };
        if state.recent.contains(&change.key) {
            return Ok(false);
        }
        // A change older than the overlap window below the watermark was handed over by the
        // poll that moved the watermark past it.
        let covered = state
            .watermark
            .as_deref()
            .and_then(parse_timestamp)
            .zip(change.order.last_modified())
            .is_some_and(|(watermark, modified)| {
                modified < watermark.checked_sub(self.overlap).unwrap_or(watermark)
            });
        if covered {
            return Ok(false);
        }
        let mut context = self.begin().await?;
        self.hand_over(handler, &change, &mut context).await?;
        state.recent.insert(change.key);
        self.commit(context, &state).await?;
        Ok(true)
    }

    async fn hand_over<H: OrderHandler<S::Context>>(
        &self,
        handler: &mut H,
        change: &OrderChange,
        context: &mut S::Context,
    ) -> Result<(), FeedError> {
        handler
            .handle(change, context)
            .await
            .map_err(|source| FeedError::Handler {
                account: self.account.clone(),
                key: change.key.clone(),
                source,
            })
    }
}

/// `time` without its fraction of a millisecond (eBay's timestamps end at milliseconds).
fn to_millis(time: SystemTime) -> SystemTime {
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(since) => time - Duration::from_nanos(u64::from(since.subsec_nanos() % 1_000_000)),
        Err(_) => time,
    }
}

/// A [`FeedStore`] in files: `DIR/ACCOUNT.json`, each write a temporary file renamed over it
/// (a reader sees the old state or the new, never half of one). The handler's context is
/// nothing (`()`), and the state is written after the handler: **at least once** — a crash
/// between the two hands the same changes over again, with the same [`ChangeKey`], for the
/// application to de-duplicate.
///
/// Two processes feeding one account from one directory (two `orders sync` at once) each
/// write a whole state, the last one written wins: the other's changes are handed over again
/// by the next poll (at least once still), never half a file. One process a seller is the
/// PostgreSQL store's lease, not this store's. A state file that does not read (cut short by
/// something other than this store, which renames whole files) is refused, naming the file
/// and what removing it costs, never taken for no state.
///
/// Its I/O is blocking (small files: the keys of the overlap window).
#[derive(Debug, Clone)]
pub struct FileStore {
    dir: PathBuf,
}

impl FileStore {
    /// The store in `dir` (created at the first write).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The file of `account`; an account name that is not a plain file name is refused.
    fn path(&self, account: &str) -> Result<PathBuf, BoxError> {
        let plain = !account.is_empty()
            && !account.starts_with('.')
            && account
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'));
        if !plain {
            return Err(format!(
                "the account name {account:?} is not a plain file name (letters, digits, \
                 '-', '_', '.', '@', not starting with '.')"
            )
            .into());
        }
        Ok(self.dir.join(format!("{account}.json")))
    }

    fn read(&self, account: &str) -> Result<FeedState, BoxError> {
        let path = self.path(account)?;
        match std::fs::read(&path) {
            // Refused, never taken for no state: starting again would hand over every order
            // of the last 90 days once more. The operator decides.
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                format!(
                    "{}: not a feed state ({e}): cut short or written by something else; \
                     restore it, or remove it to start again as a first poll does (every \
                     order since the feed's start, 90 days back unless set, handed over again)",
                    path.display()
                )
                .into()
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(FeedState::default()),
            Err(e) => Err(format!("{}: {e}", path.display()).into()),
        }
    }

    fn write(&self, account: &str, state: &FeedState) -> Result<(), BoxError> {
        use std::io::Write;
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let path = self.path(account)?;
        // A temporary file of this write alone (process id and a count): two processes (or
        // two stores) writing one account's state at once each rename a whole state of their
        // own into place, the last one wins; a shared name let one truncate and rename the
        // other's half-written file, or find it gone.
        let temp = self.dir.join(format!(
            ".{account}.json.{}.{}.tmp",
            std::process::id(),
            WRITES.fetch_add(1, Ordering::Relaxed)
        ));
        let named = |e: std::io::Error, p: &PathBuf| format!("{}: {e}", p.display());
        std::fs::create_dir_all(&self.dir).map_err(|e| named(e, &self.dir))?;
        let bytes = serde_json::to_vec(state)?;
        let written = (|| {
            let mut file = std::fs::File::create(&temp).map_err(|e| named(e, &temp))?;
            file.write_all(&bytes).map_err(|e| named(e, &temp))?;
            file.sync_all().map_err(|e| named(e, &temp))?;
            std::fs::rename(&temp, &path).map_err(|e| named(e, &path))
        })();
        if written.is_err() {
            // Best effort: a temporary file left behind is ignored by `read`.
            let _ = std::fs::remove_file(&temp);
        }
        written.map_err(Into::into)
    }
}

impl FeedStore for FileStore {
    type Context = ();

    fn load(&self, account: &str) -> impl Future<Output = Result<FeedState, BoxError>> + Send {
        std::future::ready(self.read(account))
    }

    fn begin(&self, _: &str) -> impl Future<Output = Result<(), BoxError>> + Send {
        std::future::ready(Ok(()))
    }

    fn commit(
        &self,
        account: &str,
        _: (),
        state: &FeedState,
    ) -> impl Future<Output = Result<(), BoxError>> + Send {
        std::future::ready(self.write(account, state))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state_of(writer: usize, round: usize) -> FeedState {
        // States of different sizes, so that one writer's bytes can outlast another's.
        let recent = (0..(writer * 40 + round % 7))
            .map(|i| ChangeKey {
                order_id: format!("{writer:02}-{round:05}-{i:05}"),
                last_modified_date: "2026-01-02T03:04:05.678Z".to_owned(),
            })
            .collect();
        FeedState {
            watermark: Some(format!("2026-01-02T03:04:{:02}.000Z", round % 60)),
            recent,
        }
    }

    #[test]
    fn a_state_file_cut_short_is_refused_naming_the_file_and_what_removing_it_costs() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let store = FileStore::new(dir.path());
        store
            .write("seller", &state_of(1, 3))
            .expect("a state written");
        let path = dir.path().join("seller.json");
        let whole = std::fs::read(&path).expect("the state file");
        std::fs::write(&path, &whole[..whole.len() / 2]).expect("the state cut short");
        let error = store
            .read("seller")
            .expect_err("a state cut short is not read as a state")
            .to_string();
        assert!(
            error.contains(&path.display().to_string())
                && error.contains("cut short")
                && error.contains("remove it")
                && error.contains("handed over again"),
            "the error does not name the file, what is wrong and the way out: {error}"
        );
    }

    #[test]
    fn two_processes_writing_one_file_stores_state_at_once_each_write_whole_and_none_refused() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let writers: Vec<_> = (1..=2)
            .map(|writer| {
                // A store of its own, as another process would have.
                let store = FileStore::new(dir.path());
                std::thread::spawn(move || {
                    (0..300)
                        .filter_map(|round| store.write("seller", &state_of(writer, round)).err())
                        .map(|e| e.to_string())
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut refused = Vec::new();
        for writer in writers {
            refused.extend(writer.join().expect("a writer ran"));
        }
        assert!(
            refused.is_empty(),
            "writes refused: {:?}",
            &refused[..refused.len().min(3)]
        );
        let last = FileStore::new(dir.path())
            .read("seller")
            .expect("the state file holds one writer's whole state");
        assert!(
            last == state_of(1, 299) || last == state_of(2, 299),
            "the state is neither writer's last: {last:?}"
        );
    }
}
