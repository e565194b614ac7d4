//! The call budget of a fleet on PostgreSQL (the server at `DATABASE_URL`, else a throwaway
//! one: see `marketplace-client-postgres/tests/support/pg.rs`) against the fake marketplace
//! over loopback HTTP, which allows N calls a day of the Taxonomy API (`commerce.taxonomy`)
//! and answers 429 past them. The processes of the fleet are this test binary started again
//! (`BUDGET_WORKER=1`), each with a `CallBudget` over a `PgBudgetStore` of its own in front of
//! an `ApiClient`; the fake counts the calls it served.

#[path = "../../marketplace-client-postgres/tests/support/pg.rs"]
mod pg;

use std::io::{BufRead as _, BufReader};

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use fake_marketplace::FakeMarketplace;
use marketplace_budget::Window;
use marketplace_budget::{BudgetKey, BudgetStore as _, CallBudget, Mode, Reservation, Scope};
use marketplace_budget_postgres::{PgBudgetStore, migrate};
use marketplace_client::aio::api::ApiClient;
use marketplace_client::api::{ApiError, ApiRequest, ClientConfig};
use marketplace_client::oauth::{
    AccessToken, AccessTokenSource as _, ApplicationTokenProvider, Endpoints, OAuthClient,
    OAuthConfig,
};

const DAY: Duration = Duration::from_secs(86_400);
const TAXONOMY: &str = "commerce.taxonomy";
/// getDefaultCategoryTreeId: a call of the Taxonomy API (resource `commerce.taxonomy`).
const DEFAULT_TREE: &str = "/commerce/taxonomy/v1/get_default_category_tree_id";
const WORKER: &str = "BUDGET_WORKER";
/// The batch every process reserves.
const BATCH: u32 = 16;

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

/// The text of an application token of `fake` (the workers send it as it is).
fn app_token(fake: &FakeMarketplace) -> String {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth =
        OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret());
    let provider = ApplicationTokenProvider::new(OAuthClient::from_config(&oauth).unwrap());
    provider.access_token().unwrap().secret().to_owned()
}

/// A client of `base_url` sending `token`, drawing from `budget`, without retries.
fn budgeted_api(base_url: &str, token: &str, budget: Arc<CallBudget>) -> ApiClient {
    let config = ClientConfig::for_base_url(base_url)
        .unwrap()
        .with_max_retries(0);
    ApiClient::new(config, Arc::new(AccessToken::new(token)))
        .unwrap()
        .with_budget(budget, None)
}

fn taxonomy_call() -> ApiRequest {
    ApiRequest::get(DEFAULT_TREE).query("marketplace_id", "EBAY_US")
}

/// The name of the worker test as the harness knows it (its module path, whichever binary
/// it is compiled into).
fn worker_name() -> String {
    match module_path!().split_once("::") {
        Some((_, module)) => format!("{module}::budget_worker"),
        None => "budget_worker".to_owned(),
    }
}

/// A process of the fleet (only with `BUDGET_WORKER=1`): getRateLimits into its budget, then
/// calls of the Taxonomy API until its budget refuses one; prints `ok=N other=M` (M: answers
/// other than the budget's refusal, a 429 among them). With `BUDGET_HOLD=1` it makes one call
/// (holding the rest of its batch), prints `holding` and sleeps until it is killed.
#[test]
fn budget_worker() {
    if std::env::var_os(WORKER).is_none() {
        return;
    }
    let var = |name: &str| std::env::var(name).unwrap_or_else(|_| panic!("{name} is not set"));
    let hold = std::env::var("BUDGET_HOLD").is_ok_and(|v| v == "1");
    runtime().block_on(async {
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(2)
            .connect(&var("BUDGET_DATABASE_URL"))
            .await
            .unwrap();
        let budget = Arc::new(
            CallBudget::new(Arc::new(PgBudgetStore::new(pool)), Mode::FailFast).with_batch(BATCH),
        );
        let api = budgeted_api(&var("BUDGET_BASE_URL"), &var("BUDGET_TOKEN"), budget);
        assert!(
            api.refresh_budget().await.unwrap() >= 1,
            "getRateLimits read"
        );
        let (mut ok, mut other) = (0u32, Vec::new());
        loop {
            match api.send(taxonomy_call()).await {
                Ok(_) => ok += 1,
                Err(ApiError::Budget { .. }) => break,
                Err(e) => {
                    other.push(e.to_string());
                    break;
                }
            }
            if hold {
                println!("holding");
                tokio::time::sleep(Duration::from_secs(120)).await;
            }
        }
        println!("ok={ok} other={}", other.len());
        for e in other {
            println!("error: {e}");
        }
    });
}

/// The database of a fleet and the fake it calls.
struct Fleet {
    db: pg::TestDb,
    fake: FakeMarketplace,
    token: String,
}

impl Fleet {
    /// A fake allowing `n` calls a day of the Taxonomy API, and a migrated database.
    fn new(runtime: &tokio::runtime::Runtime, n: u64) -> Self {
        let fake = FakeMarketplace::new();
        fake.set_rate_limit(TAXONOMY, n, DAY);
        let token = app_token(&fake);
        let db = runtime.block_on(async {
            let db = pg::TestDb::new().await;
            migrate(&db.pool).await.unwrap();
            db
        });
        Self { db, fake, token }
    }

    fn spawn(&self, hold: bool) -> Child {
        Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &worker_name(), "--nocapture", "--test-threads=1"])
            .env(WORKER, "1")
            .env("BUDGET_HOLD", if hold { "1" } else { "0" })
            .env("BUDGET_DATABASE_URL", self.db.url())
            .env("BUDGET_BASE_URL", self.fake.base_url())
            .env("BUDGET_TOKEN", &self.token)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap()
    }

    /// The calls each of `processes` made, once all have finished (none got another answer
    /// than a success or its budget's refusal).
    fn finish(processes: Vec<Child>) -> Vec<u32> {
        processes
            .into_iter()
            .map(|child| {
                let out = child.wait_with_output().unwrap();
                let text = String::from_utf8_lossy(&out.stdout).into_owned();
                assert!(out.status.success(), "a worker failed: {text}");
                let line = text
                    .lines()
                    .find_map(|l| l.find("ok=").map(|at| &l[at..]))
                    .unwrap_or_else(|| panic!("no summary: {text}"));
                let (ok, other) = line.split_once(" other=").unwrap();
                assert_eq!(other, "0", "a call answered otherwise: {text}");
                ok.trim_start_matches("ok=").parse().unwrap()
            })
            .collect()
    }

    /// The statuses the fake answered to the Taxonomy API's call.
    fn too_many_requests(&self) -> usize {
        self.fake
            .answers_to(DEFAULT_TREE)
            .iter()
            .filter(|a| a.status == 429)
            .count()
    }
}

#[test]
fn four_processes_sharing_a_budget_of_n_calls_make_at_most_n_and_get_no_429() {
    let runtime = runtime();
    let n = 300;
    let fleet = Fleet::new(&runtime, n);
    let processes: Vec<Child> = (0..4).map(|_| fleet.spawn(false)).collect();
    let made = Fleet::finish(processes);
    let total: u32 = made.iter().sum();
    let served = fleet.fake.calls_served(TAXONOMY);
    println!("  calls per process: {made:?}, served by the fake: {served} of {n}");
    assert_eq!(u64::from(total), served, "every call made was served");
    assert!(served <= n, "{served} calls of a quota of {n}");
    assert_eq!(fleet.too_many_requests(), 0, "no process got a 429");
    // Each process ran until the fleet's budget was spent: nothing was stranded.
    assert_eq!(served, n, "the whole quota was used: {made:?}");
}

#[test]
fn a_process_killed_holding_a_batch_loses_at_most_that_batch_to_the_fleet() {
    let runtime = runtime();
    let n = 100;
    let fleet = Fleet::new(&runtime, n);
    let mut holder = fleet.spawn(true);
    let mut lines = BufReader::new(holder.stdout.take().unwrap()).lines();
    assert!(
        lines.any(|line| line.unwrap().contains("holding")),
        "the holder made its first call"
    );
    holder.kill().expect("SIGKILL the holder");
    holder.wait().unwrap();
    let processes: Vec<Child> = (0..3).map(|_| fleet.spawn(false)).collect();
    let made = Fleet::finish(processes);
    let served = fleet.fake.calls_served(TAXONOMY);
    println!("  after the kill: {made:?}, served by the fake: {served} of {n}");
    assert_eq!(fleet.too_many_requests(), 0, "no process got a 429");
    assert_eq!(
        served,
        n - u64::from(BATCH - 1),
        "the killed process's batch less the call it made is lost, nothing more"
    );
}

#[test]
fn a_thousand_calls_with_batches_of_16_are_at_most_63_round_trips_to_postgresql() {
    let runtime = runtime();
    let fleet = Fleet::new(&runtime, 10_000);
    runtime.block_on(async {
        let store = Arc::new(PgBudgetStore::new(fleet.db.pool.clone()));
        let budget = Arc::new(CallBudget::new(store.clone(), Mode::FailFast).with_batch(BATCH));
        let api = budgeted_api(&fleet.fake.base_url(), &fleet.token, budget);
        api.refresh_budget().await.unwrap();
        let before = store.round_trips();
        for _ in 0..1_000 {
            api.send(taxonomy_call()).await.unwrap();
        }
        let trips = store.round_trips() - before;
        println!("  1000 calls, batch {BATCH}: {trips} round trips");
        assert!(trips <= 63, "{trips} round trips for 1000 calls");
    });
    assert_eq!(fleet.fake.calls_served(TAXONOMY), 1_000);
}

fn key() -> BudgetKey {
    BudgetKey {
        scope: Scope::Application,
        resource: TAXONOMY.into(),
    }
}

#[test]
fn a_429_seen_by_one_process_refuses_the_resource_to_all_until_its_end_and_a_refresh_does_not_lift_it()
 {
    let runtime = runtime();
    let fleet = Fleet::new(&runtime, 1_000);
    runtime.block_on(async {
        // Two stores, two pools: two processes of the fleet.
        let (one, other) = (
            PgBudgetStore::new(fleet.db.pool.clone()),
            PgBudgetStore::new(
                sqlx::postgres::PgPoolOptions::new()
                    .max_connections(1)
                    .connect(&fleet.db.url())
                    .await
                    .unwrap(),
            ),
        );
        let now = SystemTime::now();
        let window = Window {
            resource: TAXONOMY.to_owned(),
            limit: 1_000,
            remaining: 1_000,
            reset: now + DAY,
            length: DAY,
        };
        one.refresh(&Scope::Application, std::slice::from_ref(&window))
            .await;
        assert!(matches!(
            other.reserve(&key(), BATCH, now).await,
            Reservation::Granted { calls: 16, .. }
        ));
        let until = now + Duration::from_secs(30);
        one.exhaust(&key(), until).await;
        // getRateLimits says 1,000 calls left: eBay's count lags its 429.
        other
            .refresh(&Scope::Application, std::slice::from_ref(&window))
            .await;
        assert_eq!(
            other
                .reserve(&key(), BATCH, now + Duration::from_secs(29))
                .await,
            Reservation::Exhausted {
                remaining: 0,
                reset: SystemTime::UNIX_EPOCH
                    + Duration::from_millis(
                        until
                            .duration_since(SystemTime::UNIX_EPOCH)
                            .unwrap()
                            .as_millis() as u64
                    ),
                after_429: true
            }
        );
        // After its end, the refreshed count holds again.
        assert!(matches!(
            one.reserve(&key(), BATCH, until).await,
            Reservation::Granted { calls: 16, .. }
        ));
    });
}

#[test]
fn a_refresh_within_the_window_never_gives_the_fleet_back_calls_it_reserved() {
    let runtime = runtime();
    let fleet = Fleet::new(&runtime, 100);
    runtime.block_on(async {
        let store = PgBudgetStore::new(fleet.db.pool.clone());
        let now = SystemTime::now();
        let mut window = Window {
            resource: TAXONOMY.to_owned(),
            limit: 100,
            remaining: 100,
            reset: now + DAY,
            length: DAY,
        };
        store
            .refresh(&Scope::Application, std::slice::from_ref(&window))
            .await;
        // Another process reserved 64 calls and made 10 of them: eBay says 90 left.
        for _ in 0..4 {
            store.reserve(&key(), BATCH, now).await;
        }
        window.remaining = 90;
        store
            .refresh(&Scope::Application, std::slice::from_ref(&window))
            .await;
        assert_eq!(
            store.reserve(&key(), 100, now).await,
            Reservation::Granted {
                calls: 36,
                reset: SystemTime::UNIX_EPOCH
                    + Duration::from_millis(
                        window
                            .reset
                            .duration_since(SystemTime::UNIX_EPOCH)
                            .unwrap()
                            .as_millis() as u64
                    ),
            },
            "what the fleet had not reserved, not eBay's 90"
        );
    });
}
