//! The order feed on PostgreSQL against the fake marketplace over loopback HTTP and a real
//! PostgreSQL (the server at `DATABASE_URL`, else a throwaway one: see
//! `marketplace-client-postgres/tests/support/pg.rs`). The application's handler writes a row
//! per change into its own table in the feed's transaction; the tests count the rows.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use fake_marketplace::{FakeMarketplace, FakeUser};
use marketplace_client::aio::api::ApiClient;
use marketplace_client::aio::oauth::AccessTokenSource;
use marketplace_client::api::ClientConfig;
use marketplace_orders::aio::Orders;
use marketplace_orders::feed::{BoxError, FeedError, OrderChange, OrderFeed, OrderHandler};
use marketplace_orders_postgres::{PgFeedError, PgFeedStore, PgFeedTx, migrate};
use sqlx::PgPool;

#[path = "../../marketplace-client-postgres/tests/support/pg.rs"]
mod pg;

#[path = "../../../tests/common/inventory.rs"]
mod fake_inventory;

/// A seller of the fake: its account name (its eBay username), its access token granting
/// `sell.fulfillment` (and the token's text, for the feed processes), and a published listing
/// buyers buy from.
struct Seller {
    name: String,
    token: Arc<dyn AccessTokenSource>,
    secret: String,
    listing: String,
}

/// The seller `name` on `fake`, consented as the fake's user `name`.
fn seller(fake: &FakeMarketplace, name: &str) -> Seller {
    fake.set_user(FakeUser {
        user_id: format!("{name}Id"),
        username: name.to_owned(),
    });
    let token = fake_inventory::seller_tokens(fake, &["/sell.fulfillment"])
        .access_token()
        .unwrap();
    let listing = fake.add_listing(name, &format!("SKU-{name}"), 100_000, "1.00");
    Seller {
        name: name.to_owned(),
        secret: token.secret().to_owned(),
        token: Arc::new(token),
        listing,
    }
}

/// `n` orders of `seller`'s listing, 1 ms apart on the fake's clock.
fn buy(fake: &FakeMarketplace, seller: &Seller, n: usize) -> Vec<String> {
    (0..n)
        .map(|_| {
            let id = fake.buy(&seller.listing, 1).unwrap();
            fake.advance_clock(Duration::from_millis(1));
            id
        })
        .collect()
}

/// `seller`'s feed on the fake's clock, reading from `start`, its state in `store`.
fn feed(
    fake: &FakeMarketplace,
    seller: &Seller,
    store: PgFeedStore,
    start: SystemTime,
) -> OrderFeed<PgFeedStore> {
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_max_retries(0);
    let api = ApiClient::new(config, seller.token.clone()).unwrap();
    let clock = fake.state().clone();
    OrderFeed::new(Orders::new(api), store, seller.name.clone())
        .starting_at(start)
        .with_clock(move || clock.now())
}

/// The application's table of the changes it was handed.
async fn app_table(pool: &PgPool) {
    migrate(pool).await.unwrap();
    sqlx::query(
        "CREATE TABLE app_order_changes (
             id                 bigserial PRIMARY KEY,
             account            text NOT NULL,
             order_id           text NOT NULL,
             last_modified_date text NOT NULL
         )",
    )
    .execute(pool)
    .await
    .unwrap();
}

/// The application's handler: a row per change in the feed's transaction; it fails (after
/// writing its row) on the order `fail_after_writing` once.
struct IntoAppTable {
    account: String,
    fail_after_writing: Option<String>,
}

impl IntoAppTable {
    fn new(account: &str) -> Self {
        Self {
            account: account.to_owned(),
            fail_after_writing: None,
        }
    }
}

async fn write_row(account: &str, change: &OrderChange, tx: &mut PgFeedTx) -> Result<(), BoxError> {
    sqlx::query(
        "INSERT INTO app_order_changes (account, order_id, last_modified_date) \
         VALUES ($1, $2, $3)",
    )
    .bind(account)
    .bind(&change.key.order_id)
    .bind(&change.key.last_modified_date)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

impl OrderHandler<PgFeedTx> for IntoAppTable {
    async fn handle(&mut self, change: &OrderChange, tx: &mut PgFeedTx) -> Result<(), BoxError> {
        write_row(&self.account, change, tx).await?;
        if self.fail_after_writing.as_deref() == Some(change.key.order_id.as_str()) {
            self.fail_after_writing = None;
            return Err(format!("the application failed on {}", change.key.order_id).into());
        }
        Ok(())
    }
}

/// (rows, distinct (account, orderId, lastModifiedDate)) of the application's table.
async fn rows(pool: &PgPool) -> (i64, i64) {
    sqlx::query_as(
        "SELECT count(*), count(DISTINCT (account, order_id, last_modified_date)) \
         FROM app_order_changes",
    )
    .fetch_one(pool)
    .await
    .unwrap()
}

/// The rows of the order `order_id`.
async fn rows_of(pool: &PgPool, order_id: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM app_order_changes WHERE order_id = $1")
        .bind(order_id)
        .fetch_one(pool)
        .await
        .unwrap()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn every_change_of_2000_orders_of_four_sellers_is_written_once_in_the_feeds_transaction() {
    let fake = FakeMarketplace::new();
    let start = fake.now() - Duration::from_secs(60);
    let sellers: Vec<Seller> = (1..=4)
        .map(|i| seller(&fake, &format!("seller_{i}")))
        .collect();
    let bought: Vec<Vec<String>> = sellers.iter().map(|s| buy(&fake, s, 500)).collect();
    fake.advance_clock(Duration::from_millis(10));
    let runtime = runtime();
    runtime.block_on(async {
        let db = pg::TestDb::new().await;
        app_table(&db.pool).await;
        let mut feeds: Vec<_> = sellers
            .iter()
            .map(|s| feed(&fake, s, PgFeedStore::new(db.pool.clone()), start))
            .collect();
        for (feed, seller) in feeds.iter_mut().zip(&sellers) {
            let polled = feed
                .poll_once(&mut IntoAppTable::new(&seller.name))
                .await
                .unwrap();
            assert_eq!(
                (polled.handed_over, polled.calls),
                (500, 3),
                "{}",
                seller.name
            );
        }
        assert_eq!(rows(&db.pool).await, (2000, 2000));

        // Each seller: 40 orders change, 10 are cancelled (read again with getOrder).
        for ids in &bought {
            for id in &ids[..40] {
                fake.touch_order(id).unwrap();
            }
            for id in &ids[100..110] {
                fake.cancel_order(id).unwrap();
            }
        }
        fake.advance_clock(Duration::from_millis(10));
        for (feed, seller) in feeds.iter_mut().zip(&sellers) {
            let polled = feed
                .poll_once(&mut IntoAppTable::new(&seller.name))
                .await
                .unwrap();
            assert_eq!(polled.handed_over, 50, "{}", seller.name);
        }
        // Nothing new: nothing written.
        fake.advance_clock(Duration::from_secs(1));
        for (feed, seller) in feeds.iter_mut().zip(&sellers) {
            let polled = feed
                .poll_once(&mut IntoAppTable::new(&seller.name))
                .await
                .unwrap();
            assert_eq!(polled.handed_over, 0, "{}", seller.name);
        }
        assert_eq!(rows(&db.pool).await, (2200, 2200));
        // Each order's last row is the order as it is now.
        for ids in &bought {
            for id in ids.iter().step_by(7) {
                let last: String = sqlx::query_scalar(
                    "SELECT last_modified_date FROM app_order_changes WHERE order_id = $1 \
                     ORDER BY id DESC LIMIT 1",
                )
                .bind(id)
                .fetch_one(&db.pool)
                .await
                .unwrap();
                let order = fake.order(id).unwrap();
                assert_eq!(
                    order["lastModifiedDate"].as_str(),
                    Some(last.as_str()),
                    "{id}"
                );
            }
        }
        let watermarks: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM marketplace_order_feeds WHERE watermark IS NOT NULL",
        )
        .fetch_one(&db.pool)
        .await
        .unwrap();
        assert_eq!(watermarks, 4);
        // Past the overlap window: nothing handed over, and the keys below it forgotten.
        fake.advance_clock(Duration::from_secs(600));
        for (feed, seller) in feeds.iter_mut().zip(&sellers) {
            let polled = feed
                .poll_once(&mut IntoAppTable::new(&seller.name))
                .await
                .unwrap();
            assert_eq!(polled.handed_over, 0, "{}", seller.name);
        }
        let kept: i64 = sqlx::query_scalar("SELECT count(*) FROM marketplace_order_feed_keys")
            .fetch_one(&db.pool)
            .await
            .unwrap();
        assert_eq!(kept, 0);
        assert_eq!(rows(&db.pool).await, (2200, 2200));
    });
}

#[test]
fn a_handler_that_fails_after_writing_its_row_leaves_no_row_and_the_next_poll_writes_it_once() {
    let fake = FakeMarketplace::new();
    let start = fake.now() - Duration::from_secs(60);
    let seller = seller(&fake, "seller_1");
    let bought = buy(&fake, &seller, 300);
    fake.advance_clock(Duration::from_millis(10));
    let runtime = runtime();
    runtime.block_on(async {
        let db = pg::TestDb::new().await;
        app_table(&db.pool).await;
        let mut feed = feed(&fake, &seller, PgFeedStore::new(db.pool.clone()), start);
        let failing = bought[250].clone();
        let mut handler = IntoAppTable::new(&seller.name);
        handler.fail_after_writing = Some(failing.clone());
        let error = feed.poll_once(&mut handler).await.unwrap_err();
        assert!(
            matches!(&error, FeedError::Handler { key, .. } if key.order_id == failing),
            "{error}"
        );
        // Its row, and those of its batch, rolled back with the feed's record.
        assert_eq!(rows_of(&db.pool, &failing).await, 0);
        let (written, distinct) = rows(&db.pool).await;
        assert_eq!(written, distinct);
        assert!(written < 300, "{written} rows");

        let polled = feed.poll_once(&mut handler).await.unwrap();
        assert_eq!(polled.handed_over, 300 - written as usize);
        assert_eq!(rows_of(&db.pool, &failing).await, 1);
        assert_eq!(rows(&db.pool).await, (300, 300));
    });
}

/// A handler that, at its first change, says it entered and waits for the gate before
/// writing its row (a process stalled mid-poll).
struct Stalling {
    inner: IntoAppTable,
    entered: Option<tokio::sync::oneshot::Sender<()>>,
    gate: Option<tokio::sync::oneshot::Receiver<()>>,
}

impl OrderHandler<PgFeedTx> for Stalling {
    async fn handle(&mut self, change: &OrderChange, tx: &mut PgFeedTx) -> Result<(), BoxError> {
        if let Some(entered) = self.entered.take() {
            let _ = entered.send(());
        }
        if let Some(gate) = self.gate.take() {
            let _ = gate.await;
        }
        self.inner.handle(change, tx).await
    }
}

fn lease_held(result: &Result<marketplace_orders::feed::Polled, FeedError>) -> bool {
    matches!(
        result.as_ref().err().and_then(PgFeedError::of),
        Some(PgFeedError::LeaseHeld { .. })
    )
}

#[test]
fn only_the_lease_holder_feeds_a_seller_and_a_stalled_holders_commit_is_refused_after_a_takeover() {
    let fake = FakeMarketplace::new();
    let start = fake.now() - Duration::from_secs(60);
    let seller = seller(&fake, "seller_1");
    let bought = buy(&fake, &seller, 300);
    fake.advance_clock(Duration::from_millis(10));
    let runtime = runtime();
    runtime.block_on(async {
        let db = pg::TestDb::new().await;
        app_table(&db.pool).await;
        let lease = Duration::from_secs(1);
        let store = |name: &str| {
            PgFeedStore::new(db.pool.clone())
                .with_lease(lease)
                .with_holder(name)
        };
        let mut a = feed(&fake, &seller, store("A"), start);
        let mut b = feed(&fake, &seller, store("B"), start);
        let (entered_tx, entered) = tokio::sync::oneshot::channel();
        let (release, gate) = tokio::sync::oneshot::channel();
        let mut stalling = Stalling {
            inner: IntoAppTable::new(&seller.name),
            entered: Some(entered_tx),
            gate: Some(gate),
        };
        let a_poll = a.poll_once(&mut stalling);
        let driver = async {
            entered.await.unwrap();
            // A holds the lease: B hands nothing over.
            let held = b.poll_once(&mut IntoAppTable::new(&seller.name)).await;
            assert!(lease_held(&held), "{held:?}");
            assert_eq!(rows(&db.pool).await, (0, 0));
            // A stalls past its lease: B takes over and feeds every order.
            let polled = loop {
                tokio::time::sleep(Duration::from_millis(200)).await;
                let result = b.poll_once(&mut IntoAppTable::new(&seller.name)).await;
                if !lease_held(&result) {
                    break result.unwrap();
                }
            };
            assert_eq!(polled.handed_over, 300);
            let _ = release.send(());
        };
        let (a_result, ()) = tokio::join!(a_poll, driver);
        // A's commit after the takeover is refused; its rows rolled back.
        assert!(
            matches!(
                a_result.as_ref().err().and_then(PgFeedError::of),
                Some(PgFeedError::LeaseLost { .. })
            ),
            "{a_result:?}"
        );
        assert_eq!(rows(&db.pool).await, (300, 300));

        // Five orders change; B stops renewing, and A takes the seller back: only the five.
        for id in &bought[..5] {
            fake.touch_order(id).unwrap();
        }
        fake.advance_clock(Duration::from_millis(10));
        let polled = loop {
            let result = a.poll_once(&mut IntoAppTable::new(&seller.name)).await;
            if !lease_held(&result) {
                break result.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };
        assert_eq!(polled.handed_over, 5);
        assert_eq!(rows(&db.pool).await, (305, 305));
        let held = b.poll_once(&mut IntoAppTable::new(&seller.name)).await;
        assert!(lease_held(&held), "{held:?}");
    });
}

/// What marks this test binary, started by one of the fleet tests
/// ([`processes_killed_mid_poll_and_restarted_hand_every_change_of_a_seller_once`],
/// [`four_processes_killed_at_random_feed_20_sellers_every_change_once_one_process_a_seller`]),
/// as one of its feed processes; the other variables say which database, fake and sellers.
const WORKER: &str = "ORDER_FEED_WORKER";

/// A feed process: feeds each of its sellers (`FEED_SELLERS`: a line `NAME TOKEN` each, a
/// feed and a store of its own each) in turn, leases of 1 s, an overlap window of
/// `FEED_OVERLAP_MS` (else the default), then waits `FEED_PAUSE_MS`; each
/// change is a row (with its process id and the fence its store holds) in the feed's
/// transaction, a millisecond per change (a poll of 200 changes is long enough to be killed
/// in), until it is killed (or after two minutes).
fn feed_process() {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let start_ms: u64 = var("FEED_START_MS").parse().unwrap();
    let start = SystemTime::UNIX_EPOCH + Duration::from_millis(start_ms);
    let pause = Duration::from_millis(var("FEED_PAUSE_MS").parse().unwrap());
    let base_url = var("FEED_BASE_URL");
    let stall_every: Option<u64> = std::env::var("FEED_STALL_EVERY")
        .ok()
        .map(|n| n.parse().unwrap());
    let overlap = std::env::var("FEED_OVERLAP_MS")
        .ok()
        .map(|ms| Duration::from_millis(ms.parse().unwrap()));
    let sellers: Vec<(String, String)> = var("FEED_SELLERS")
        .lines()
        .map(|line| {
            let (name, token) = line.split_once(' ').unwrap();
            (name.to_owned(), token.to_owned())
        })
        .collect();
    let pid = i64::from(std::process::id());
    runtime().block_on(async {
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(3)
            .connect(&var("FEED_DATABASE_URL"))
            .await
            .unwrap();
        let mut feeds: Vec<_> = sellers
            .into_iter()
            .map(|(account, token)| {
                let token = marketplace_client::oauth::AccessToken::new(token);
                let config = ClientConfig::for_base_url(&base_url)
                    .unwrap()
                    .with_max_retries(0);
                let api = ApiClient::new(config, Arc::new(token)).unwrap();
                let store = PgFeedStore::new(pool.clone())
                    .with_lease(Duration::from_secs(1))
                    .with_holder(format!("process {pid}"));
                // The fake's clock is the system's (the test does not move it).
                let mut feed =
                    OrderFeed::new(Orders::new(api), store, account.clone()).starting_at(start);
                if let Some(overlap) = overlap {
                    feed = feed.with_overlap(overlap);
                }
                let handler = Slow {
                    account,
                    pid,
                    stall_every,
                    changes: 0,
                };
                (feed, handler)
            })
            .collect();
        let until = std::time::Instant::now() + Duration::from_secs(120);
        while std::time::Instant::now() < until {
            for (feed, handler) in &mut feeds {
                // LeaseHeld: another process feeds the seller; a refused commit: taken over.
                let _ = feed.poll_once(handler).await;
            }
            tokio::time::sleep(pause).await;
        }
    });
}

/// [`feed_process`]'s handler: the row records the fence of the lease as the feed's
/// transaction reads it (a commit is accepted only under that fence: a committed row names the
/// fence it was committed under).
///
/// With `stall_every` (`FEED_STALL_EVERY`), after writing the row of one change in that many
/// it stalls for 2.5 s, past its lease: another process takes the seller over and hands the
/// same changes over, and the stalled process's commit must be refused.
struct Slow {
    account: String,
    pid: i64,
    stall_every: Option<u64>,
    changes: u64,
}

impl OrderHandler<PgFeedTx> for Slow {
    async fn handle(&mut self, change: &OrderChange, tx: &mut PgFeedTx) -> Result<(), BoxError> {
        tokio::time::sleep(Duration::from_millis(1)).await;
        sqlx::query(
            "INSERT INTO app_order_changes \
               (account, order_id, last_modified_date, process, fence) \
             SELECT $1, $2, $3, $4, fence FROM marketplace_order_feeds WHERE account = $1",
        )
        .bind(&self.account)
        .bind(&change.key.order_id)
        .bind(&change.key.last_modified_date)
        .bind(self.pid)
        .execute(&mut **tx)
        .await?;
        self.changes += 1;
        let pid = self.pid.unsigned_abs();
        if self
            .stall_every
            .is_some_and(|n| (self.changes + pid).is_multiple_of(n))
        {
            tokio::time::sleep(Duration::from_millis(2500)).await;
        }
        Ok(())
    }
}

/// A fleet test's database (the application's table with the process and the fence of each
/// row) and its feed processes, each this test binary running `test` as a [`feed_process`]
/// of `sellers`.
struct Fleet<'a> {
    db: pg::TestDb,
    fake: &'a FakeMarketplace,
    test: &'static str,
    sellers: String,
    start_ms: u128,
    pause: Duration,
    overlap: Option<Duration>,
    stall_every: Option<u64>,
}

impl<'a> Fleet<'a> {
    fn new(
        runtime: &tokio::runtime::Runtime,
        fake: &'a FakeMarketplace,
        test: &'static str,
        sellers: &[Seller],
        pause: Duration,
    ) -> Self {
        let db = runtime.block_on(async {
            let db = pg::TestDb::new().await;
            app_table(&db.pool).await;
            sqlx::query(
                "ALTER TABLE app_order_changes \
                   ADD COLUMN process bigint NOT NULL DEFAULT 0, \
                   ADD COLUMN fence bigint NOT NULL DEFAULT 0",
            )
            .execute(&db.pool)
            .await
            .unwrap();
            db
        });
        let start = fake.now() - Duration::from_secs(60);
        Self {
            db,
            fake,
            test,
            sellers: sellers
                .iter()
                .map(|s| format!("{} {}\n", s.name, s.secret))
                .collect(),
            start_ms: start
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .as_millis(),
            pause,
            overlap: None,
            stall_every: None,
        }
    }

    /// The feeds' handlers stall past their lease after one change in `n` (see [`Slow`]).
    fn stalling_every(mut self, n: u64) -> Self {
        self.stall_every = Some(n);
        self
    }

    /// The feeds' overlap window (default: the feed's).
    fn with_overlap(mut self, overlap: Duration) -> Self {
        self.overlap = Some(overlap);
        self
    }

    /// A feed process, started.
    fn spawn(&self) -> std::process::Child {
        use std::process::{Command, Stdio};
        let mut command = Command::new(std::env::current_exe().unwrap());
        if let Some(overlap) = self.overlap {
            command.env("FEED_OVERLAP_MS", overlap.as_millis().to_string());
        }
        if let Some(n) = self.stall_every {
            command.env("FEED_STALL_EVERY", n.to_string());
        }
        command
            .args(["--exact", self.test, "--nocapture", "--test-threads=1"])
            .env(WORKER, "1")
            .env("FEED_DATABASE_URL", self.db.url())
            .env("FEED_BASE_URL", self.fake.base_url())
            .env("FEED_SELLERS", &self.sellers)
            .env("FEED_START_MS", self.start_ms.to_string())
            .env("FEED_PAUSE_MS", self.pause.as_millis().to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// Waits (up to `patience`) until the change of each of `orders` as it is now has a row:
    /// those that still have none.
    fn missing(
        &self,
        runtime: &tokio::runtime::Runtime,
        orders: &[String],
        patience: Duration,
    ) -> Vec<String> {
        let deadline = std::time::Instant::now() + patience;
        runtime.block_on(async {
            loop {
                let (ids, dates): (Vec<String>, Vec<String>) = orders
                    .iter()
                    .map(|id| {
                        let order = self.fake.order(id).unwrap();
                        let now = order["lastModifiedDate"].as_str().unwrap().to_owned();
                        (id.clone(), now)
                    })
                    .unzip();
                let missing: Vec<String> = sqlx::query_scalar(
                    "SELECT r.order_id \
                     FROM unnest($1::text[], $2::text[]) AS r(order_id, last_modified_date) \
                     WHERE NOT EXISTS (SELECT 1 FROM app_order_changes a \
                       WHERE a.order_id = r.order_id \
                         AND a.last_modified_date = r.last_modified_date)",
                )
                .bind(&ids)
                .bind(&dates)
                .fetch_all(&self.db.pool)
                .await
                .unwrap();
                if missing.is_empty() || std::time::Instant::now() > deadline {
                    return missing;
                }
                tokio::time::sleep(Duration::from_millis(300)).await;
            }
        })
    }
}

const TWO_PROCESSES: &str =
    "processes_killed_mid_poll_and_restarted_hand_every_change_of_a_seller_once";

#[test]
fn processes_killed_mid_poll_and_restarted_hand_every_change_of_a_seller_once() {
    if std::env::var_os(WORKER).is_some() {
        return feed_process();
    }
    let fake = FakeMarketplace::new();
    let seller = seller(&fake, "seller_1");
    let runtime = runtime();
    let fleet = Fleet::new(
        &runtime,
        &fake,
        TWO_PROCESSES,
        std::slice::from_ref(&seller),
        Duration::from_millis(20),
    );
    let mut processes = [fleet.spawn(), fleet.spawn()];
    let mut bought = Vec::new();
    let mut kills = 0;
    // 8 rounds: 100 orders bought, 20 changed, 5 cancelled; a process killed (SIGKILL) at a
    // moment that varies and started again.
    for round in 0..8u64 {
        // The last change written before this round's orders: the round waits for a newer one.
        let before: i64 = runtime
            .block_on(
                sqlx::query_scalar("SELECT coalesce(max(id), 0) FROM app_order_changes")
                    .fetch_one(&fleet.db.pool),
            )
            .unwrap();
        for _ in 0..100 {
            bought.push(fake.buy(&seller.listing, 1).unwrap());
        }
        for id in bought.iter().rev().skip(50).take(20) {
            fake.touch_order(id).unwrap();
        }
        for id in bought.iter().skip(round as usize * 7).take(5) {
            let _ = fake.cancel_order(id);
        }
        let nanos = u64::from(
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos(),
        );
        std::thread::sleep(Duration::from_millis(150 + (nanos + round * 97) % 400));
        // The process that wrote last (feeding the seller now, likely mid poll), so that the
        // other one, or its restart, has to take over: on a loaded machine one process could
        // otherwise feed through every round and no takeover be tested. It is waited for (a
        // change of this round's written): on a loaded machine a restarted process may take
        // longer than the pause to write anything, and killing one that never wrote tests
        // no takeover either.
        let waited = std::time::Instant::now();
        let last: Option<i64> = loop {
            let last: Option<i64> = runtime
                .block_on(
                    sqlx::query_scalar(
                        "SELECT process FROM app_order_changes WHERE id > $1 ORDER BY id DESC LIMIT 1",
                    )
                    .bind(before)
                    .fetch_optional(&fleet.db.pool),
                )
                .unwrap();
            if last.is_some() || waited.elapsed() > Duration::from_secs(60) {
                break last;
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        let feeding = processes
            .iter()
            .position(|p| last == Some(i64::from(p.id())));
        let victim = &mut processes[feeding.unwrap_or((round % 2) as usize)];
        victim.kill().unwrap();
        victim.wait().unwrap();
        kills += 1;
        *victim = fleet.spawn();
    }
    // Every order's change as it is now arrives, each (orderId, lastModifiedDate) once.
    let missing = fleet.missing(&runtime, &bought, Duration::from_secs(40));
    for process in &mut processes {
        let _ = process.kill();
        let _ = process.wait();
    }
    assert!(
        missing.is_empty(),
        "{} changes never handed over: {missing:?}",
        missing.len()
    );
    let db = &fleet.db;
    runtime.block_on(async {
        let (written, distinct) = rows(&db.pool).await;
        assert_eq!(written, distinct, "a change handed over twice");
        assert!(written >= 800, "{written} rows");
        let writers: i64 =
            sqlx::query_scalar("SELECT count(DISTINCT process) FROM app_order_changes")
                .fetch_one(&db.pool)
                .await
                .unwrap();
        let fence: i64 =
            sqlx::query_scalar("SELECT fence FROM marketplace_order_feeds WHERE account = $1")
                .bind(&seller.name)
                .fetch_one(&db.pool)
                .await
                .unwrap();
        assert!(
            writers >= 2 && fence >= 2,
            "{writers} writers, fence {fence}, {kills} kills"
        );
    });
}

const FOUR_PROCESSES: &str =
    "four_processes_killed_at_random_feed_20_sellers_every_change_once_one_process_a_seller";

/// A pseudo-random number generator (xorshift) started from the clock; its starting value is
/// printed with a failure.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// The fleet: 4 feed processes for 20 sellers; 2,000 orders bought (100 a seller, in
/// 20 rounds), 800 changes and 400 cancel requests (or changes) of orders of the rounds before
/// while the processes run;
/// after each round, at a random moment, a process killed with SIGKILL (every other round
/// the one that wrote last, else one at random) and started again. At
/// the end, the change of each order as it is now is a row of the application's table; no
/// change has two rows; and one process fed a seller at a time: each fence of a seller's
/// lease has the rows of one process, and in the order the rows were written a seller's fence
/// never goes back (no process committed under a lease older than one another process had
/// committed under).
#[test]
fn four_processes_killed_at_random_feed_20_sellers_every_change_once_one_process_a_seller() {
    if std::env::var_os(WORKER).is_some() {
        return feed_process();
    }
    let began = std::time::Instant::now();
    let fake = FakeMarketplace::new();
    let sellers: Vec<Seller> = (1..=20)
        .map(|i| seller(&fake, &format!("seller_{i}")))
        .collect();
    let runtime = runtime();
    let fleet = Fleet::new(
        &runtime,
        &fake,
        FOUR_PROCESSES,
        &sellers,
        Duration::from_millis(100),
    )
    // Each poll reads again the last 2 s rather than 5 minutes (every order of the test):
    // more than the fake's clock and paging are off by.
    .with_overlap(Duration::from_secs(2))
    // One change in 200 stalls its process past its lease, mid poll: a takeover of a live
    // process, whose commit must then be refused.
    .stalling_every(200);
    let seed = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
        | 1;
    let mut dice = Dice(seed);
    let mut processes: Vec<_> = (0..4).map(|_| fleet.spawn()).collect();
    let mut bought: Vec<Vec<String>> = vec![Vec::new(); sellers.len()];
    let mut kills = 0;
    for round in 0..20 {
        for (seller, bought) in sellers.iter().zip(&mut bought) {
            // Orders of the rounds before (that a feed has likely seen): 2 change, a buyer
            // asks to cancel 1 (or, asked already, it changes).
            let before = bought.len().max(1) as u64;
            for _ in 0..5 {
                bought.push(fake.buy(&seller.listing, 1).unwrap());
            }
            for _ in 0..2 {
                fake.touch_order(&bought[dice.below(before) as usize])
                    .unwrap();
            }
            let id = &bought[dice.below(before) as usize];
            if fake.order(id).unwrap()["cancelStatus"]["cancelState"] == "NONE_REQUESTED" {
                fake.cancel_order(id).unwrap();
            } else {
                fake.touch_order(id).unwrap();
            }
        }
        std::thread::sleep(Duration::from_millis(200 + dice.below(600)));
        // Every other round the process that wrote last (feeding a seller now, likely mid
        // poll), else one at random.
        let last: Option<i64> = runtime
            .block_on(
                sqlx::query_scalar(
                    "SELECT process FROM app_order_changes ORDER BY id DESC LIMIT 1",
                )
                .fetch_optional(&fleet.db.pool),
            )
            .unwrap();
        let feeding = processes
            .iter()
            .position(|p| last == Some(i64::from(p.id())))
            .filter(|_| round % 2 == 0);
        let victim = &mut processes[feeding.unwrap_or(dice.below(4) as usize)];
        victim.kill().unwrap();
        victim.wait().unwrap();
        kills += 1;
        *victim = fleet.spawn();
    }
    let all: Vec<String> = bought.concat();
    assert_eq!(all.len(), 2000);
    let missing = fleet.missing(&runtime, &all, Duration::from_secs(60));
    for process in &mut processes {
        let _ = process.kill();
        let _ = process.wait();
    }
    let took = began.elapsed();
    assert!(
        missing.is_empty(),
        "{} changes never handed over (seed {seed}): {missing:?}",
        missing.len()
    );
    let db = &fleet.db;
    runtime.block_on(async {
        let (written, distinct) = rows(&db.pool).await;
        // The rows of the changes written twice (id, account, orderId, lastModifiedDate,
        // process, fence), for the failure's message.
        let twice: Vec<(i64, String, String, String, i64, i64)> = sqlx::query_as(
            "SELECT id, account, order_id, last_modified_date, process, fence \
             FROM app_order_changes a WHERE EXISTS (SELECT 1 FROM app_order_changes b \
               WHERE b.order_id = a.order_id AND b.last_modified_date = a.last_modified_date \
                 AND b.id <> a.id) \
             ORDER BY order_id, id",
        )
        .fetch_all(&db.pool)
        .await
        .unwrap();
        assert_eq!(
            written, distinct,
            "a change handed over twice (seed {seed}): {twice:?}"
        );
        assert!(written >= 2000, "{written} rows");
        let scalar = |sql: &'static str| async move {
            let n: i64 = sqlx::query_scalar(sql).fetch_one(&db.pool).await.unwrap();
            n
        };
        // Every row was written under a lease (a fence granted to its process).
        assert_eq!(
            scalar("SELECT count(*) FROM app_order_changes WHERE fence < 1").await,
            0
        );
        // One process a lease.
        let shared = scalar(
            "SELECT count(*) FROM (SELECT account, fence FROM app_order_changes \
             GROUP BY account, fence HAVING count(DISTINCT process) > 1) s",
        )
        .await;
        assert_eq!(
            shared, 0,
            "a lease committed by two processes (seed {seed})"
        );
        // No commit under a lease older than one already committed under.
        let back = scalar(
            "SELECT count(*) FROM (SELECT fence, lag(fence) OVER \
               (PARTITION BY account ORDER BY id) AS before FROM app_order_changes) r \
             WHERE fence < before",
        )
        .await;
        assert_eq!(back, 0, "two processes fed a seller at once (seed {seed})");
        // The kills moved sellers between processes.
        let taken_over = scalar(
            "SELECT count(*) FROM (SELECT account FROM app_order_changes \
             GROUP BY account HAVING count(DISTINCT process) > 1) s",
        )
        .await;
        let writers = scalar("SELECT count(DISTINCT process) FROM app_order_changes").await;
        assert!(
            taken_over >= 1 && writers >= 4,
            "{taken_over} sellers taken over, {writers} writers, {kills} kills"
        );
        println!(
            "{written} rows of 2,000 orders from {writers} processes, {taken_over} sellers \
             taken over, {kills} kills, {took:.1?}"
        );
    });
}

#[test]
fn a_released_lease_lets_another_feed_take_the_seller_at_once_and_hand_over_only_what_is_new() {
    let fake = FakeMarketplace::new();
    let start = fake.now() - Duration::from_secs(60);
    let seller = seller(&fake, "seller_1");
    let bought = buy(&fake, &seller, 10);
    fake.advance_clock(Duration::from_millis(10));
    let runtime = runtime();
    runtime.block_on(async {
        let db = pg::TestDb::new().await;
        app_table(&db.pool).await;
        // Leases of a minute: only a release lets B in during the test.
        let store = |name: &str| {
            PgFeedStore::new(db.pool.clone())
                .with_lease(Duration::from_secs(60))
                .with_holder(name)
        };
        let mut a = feed(&fake, &seller, store("A"), start);
        let mut b = feed(&fake, &seller, store("B"), start);
        let polled = a.poll_once(&mut IntoAppTable::new(&seller.name)).await;
        assert_eq!(polled.unwrap().handed_over, 10);
        let held = b.poll_once(&mut IntoAppTable::new(&seller.name)).await;
        assert!(lease_held(&held), "{held:?}");
        let message = held.unwrap_err().to_string();
        assert!(
            message.contains("seller_1") && message.contains('A'),
            "{message}"
        );

        assert!(a.store().release(&seller.name).await.unwrap());
        assert!(!a.store().release(&seller.name).await.unwrap());
        let polled = b.poll_once(&mut IntoAppTable::new(&seller.name)).await;
        assert_eq!(polled.unwrap().handed_over, 0);
        fake.touch_order(&bought[3]).unwrap();
        fake.advance_clock(Duration::from_millis(10));
        let polled = b.poll_once(&mut IntoAppTable::new(&seller.name)).await;
        assert_eq!(polled.unwrap().handed_over, 1);
        let held = a.poll_once(&mut IntoAppTable::new(&seller.name)).await;
        assert!(lease_held(&held), "{held:?}");
        assert_eq!(rows(&db.pool).await, (11, 11));
    });
}
