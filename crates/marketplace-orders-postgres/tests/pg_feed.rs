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
/// `sell.fulfillment`, and a published listing buyers buy from.
struct Seller {
    name: String,
    token: Arc<dyn AccessTokenSource>,
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

/// What marks this test binary, started by
/// [`processes_killed_mid_poll_and_restarted_hand_every_change_of_a_seller_once`], as one of
/// its feed processes; the other variables say which database, fake and seller.
const WORKER: &str = "ORDER_FEED_WORKER";
const WORKER_TEST: &str =
    "processes_killed_mid_poll_and_restarted_hand_every_change_of_a_seller_once";

/// A feed process: polls its seller every 20 ms with leases of 1 s, each change a row (with
/// its process id) in the feed's transaction, a millisecond per change (a poll of 200 changes
/// is long enough to be killed in), until it is killed (or after a minute).
fn feed_process() {
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let start_ms: u64 = var("FEED_START_MS").parse().unwrap();
    let start = SystemTime::UNIX_EPOCH + Duration::from_millis(start_ms);
    let account = var("FEED_ACCOUNT");
    let token = marketplace_client::oauth::AccessToken::new(var("FEED_TOKEN"));
    let config = ClientConfig::for_base_url(&var("FEED_BASE_URL"))
        .unwrap()
        .with_max_retries(0);
    let api = ApiClient::new(config, Arc::new(token)).unwrap();
    let pid = i64::from(std::process::id());
    runtime().block_on(async {
        let pool = PgPool::connect(&var("FEED_DATABASE_URL")).await.unwrap();
        let store = PgFeedStore::new(pool)
            .with_lease(Duration::from_secs(1))
            .with_holder(format!("process {pid}"));
        // The fake's clock is the system's (the test does not move it).
        let mut feed = OrderFeed::new(Orders::new(api), store, account.clone()).starting_at(start);
        let mut handler = Slow { account, pid };
        let until = std::time::Instant::now() + Duration::from_secs(60);
        while std::time::Instant::now() < until {
            // LeaseHeld: another process feeds the seller; a refused commit: taken over.
            let _ = feed.poll_once(&mut handler).await;
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
}

/// [`feed_process`]'s handler.
struct Slow {
    account: String,
    pid: i64,
}

impl OrderHandler<PgFeedTx> for Slow {
    async fn handle(&mut self, change: &OrderChange, tx: &mut PgFeedTx) -> Result<(), BoxError> {
        tokio::time::sleep(Duration::from_millis(1)).await;
        sqlx::query(
            "INSERT INTO app_order_changes (account, order_id, last_modified_date, process) \
             VALUES ($1, $2, $3, $4)",
        )
        .bind(&self.account)
        .bind(&change.key.order_id)
        .bind(&change.key.last_modified_date)
        .bind(self.pid)
        .execute(&mut **tx)
        .await?;
        Ok(())
    }
}

#[test]
fn processes_killed_mid_poll_and_restarted_hand_every_change_of_a_seller_once() {
    if std::env::var_os(WORKER).is_some() {
        return feed_process();
    }
    use std::process::{Child, Command, Stdio};
    let fake = FakeMarketplace::new();
    let start = fake.now() - Duration::from_secs(60);
    let seller = seller(&fake, "seller_1");
    let token = fake_inventory::seller_tokens(&fake, &["/sell.fulfillment"])
        .access_token()
        .unwrap();
    let runtime = runtime();
    let db = runtime.block_on(async {
        let db = pg::TestDb::new().await;
        app_table(&db.pool).await;
        sqlx::query("ALTER TABLE app_order_changes ADD COLUMN process bigint NOT NULL DEFAULT 0")
            .execute(&db.pool)
            .await
            .unwrap();
        db
    });
    let start_ms = start
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let spawn = || -> Child {
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", WORKER_TEST, "--nocapture", "--test-threads=1"])
            .env(WORKER, "1")
            .env("FEED_DATABASE_URL", db.url())
            .env("FEED_BASE_URL", fake.base_url())
            .env("FEED_TOKEN", token.secret())
            .env("FEED_ACCOUNT", &seller.name)
            .env("FEED_START_MS", start_ms.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut processes = [spawn(), spawn()];
    let mut bought = Vec::new();
    let mut kills = 0;
    // 8 rounds: 100 orders bought, 20 changed, 5 cancelled; a process killed (SIGKILL) at a
    // moment that varies and started again.
    for round in 0..8u64 {
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
        let victim = &mut processes[(round % 2) as usize];
        victim.kill().unwrap();
        victim.wait().unwrap();
        kills += 1;
        *victim = spawn();
    }
    // Every order's change as it is now arrives, each (orderId, lastModifiedDate) once.
    let deadline = std::time::Instant::now() + Duration::from_secs(40);
    let missing = runtime.block_on(async {
        loop {
            let mut missing = Vec::new();
            for id in &bought {
                let now = fake.order(id).unwrap()["lastModifiedDate"]
                    .as_str()
                    .unwrap()
                    .to_owned();
                let found: i64 = sqlx::query_scalar(
                    "SELECT count(*) FROM app_order_changes \
                     WHERE order_id = $1 AND last_modified_date = $2",
                )
                .bind(id)
                .bind(&now)
                .fetch_one(&db.pool)
                .await
                .unwrap();
                if found == 0 {
                    missing.push(id.clone());
                }
            }
            if missing.is_empty() || std::time::Instant::now() > deadline {
                return missing;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    });
    for process in &mut processes {
        let _ = process.kill();
        let _ = process.wait();
    }
    assert!(
        missing.is_empty(),
        "{} changes never handed over: {missing:?}",
        missing.len()
    );
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
