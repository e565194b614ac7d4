//! The fleet's store on PostgreSQL (the server at `DATABASE_URL`, else a throwaway one: see
//! `marketplace-client-postgres/tests/support/pg.rs`) rolls windows over by the database's
//! clock, not by the clock of the process that asks.

#[path = "../../marketplace-client-postgres/tests/support/pg.rs"]
mod pg;

use std::time::{Duration, SystemTime};

use marketplace_budget::{BudgetKey, BudgetStore as _, Reservation, Scope, Window};
use marketplace_budget_postgres::{PgBudgetStore, migrate};

const TAXONOMY: &str = "commerce.taxonomy";
const DAY: Duration = Duration::from_secs(86_400);

#[test]
fn a_process_whose_clock_runs_a_day_ahead_does_not_roll_the_fleets_window_over() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let db = runtime.block_on(pg::TestDb::new());
    runtime.block_on(async {
        migrate(&db.pool).await.unwrap();
        let store = PgBudgetStore::new(db.pool.clone());
        let now = SystemTime::now();
        let window = Window {
            resource: TAXONOMY.to_owned(),
            limit: 100,
            remaining: 0,
            reset: now + Duration::from_secs(3600),
            length: DAY,
        };
        store
            .refresh(&Scope::Application, std::slice::from_ref(&window))
            .await;
        let key = BudgetKey {
            scope: Scope::Application,
            resource: TAXONOMY.into(),
        };
        // Its clock says the window reset an hour ago: the database's says it runs.
        let skewed = now + DAY;
        let answer = store.reserve(&key, 16, skewed).await;
        assert!(
            matches!(
                answer,
                Reservation::Exhausted {
                    remaining: 0,
                    after_429: false,
                    ..
                }
            ),
            "the window of 0 calls left still runs by the database's clock: {answer:?}"
        );
    });
}

#[test]
fn a_rate_without_time_window_grants_nothing_past_its_reset_until_a_refresh() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let db = runtime.block_on(pg::TestDb::new());
    runtime.block_on(async {
        migrate(&db.pool).await.unwrap();
        let store = PgBudgetStore::new(db.pool.clone());
        let window = Window {
            resource: TAXONOMY.to_owned(),
            limit: 5,
            remaining: 5,
            reset: SystemTime::now() + Duration::from_millis(800),
            length: Duration::ZERO,
        };
        store
            .refresh(&Scope::Application, std::slice::from_ref(&window))
            .await;
        let key = BudgetKey {
            scope: Scope::Application,
            resource: TAXONOMY.into(),
        };
        assert!(matches!(
            store.reserve(&key, 16, SystemTime::now()).await,
            Reservation::Granted { calls: 5, .. }
        ));
        tokio::time::sleep(Duration::from_millis(1_000)).await;
        for _ in 0..2 {
            let answer = store.reserve(&key, 16, SystemTime::now()).await;
            assert!(
                matches!(
                    answer,
                    Reservation::Exhausted {
                        remaining: 0,
                        after_429: false,
                        ..
                    }
                ),
                "past its reset, its length unknown, the window is not rolled over: {answer:?}"
            );
        }
        let read_again = Window {
            reset: SystemTime::now() + DAY,
            ..window
        };
        store
            .refresh(&Scope::Application, std::slice::from_ref(&read_again))
            .await;
        assert!(matches!(
            store.reserve(&key, 16, SystemTime::now()).await,
            Reservation::Granted { calls: 5, .. }
        ));
    });
}

#[test]
fn a_daily_and_a_short_window_of_one_resource_are_both_counted_by_the_fleet() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let db = runtime.block_on(pg::TestDb::new());
    runtime.block_on(async {
        migrate(&db.pool).await.unwrap();
        let store = PgBudgetStore::new(db.pool.clone());
        let now = SystemTime::now();
        let daily = Window {
            resource: TAXONOMY.to_owned(),
            limit: 1000,
            remaining: 6,
            reset: now + DAY,
            length: DAY,
        };
        // A window of one second that has just begun.
        let short = Window {
            resource: TAXONOMY.to_owned(),
            limit: 4,
            remaining: 4,
            reset: now + Duration::from_millis(700),
            length: Duration::from_secs(1),
        };
        store
            .refresh(&Scope::Application, &[daily.clone(), short])
            .await;
        let key = BudgetKey {
            scope: Scope::Application,
            resource: TAXONOMY.into(),
        };
        let mut granted = 0;
        for _ in 0..3 {
            match store.reserve(&key, 16, SystemTime::now()).await {
                Reservation::Granted { calls, .. } => granted += calls,
                Reservation::Exhausted { .. } => {}
                other => panic!("{other:?}"),
            }
            tokio::time::sleep(Duration::from_millis(1_000)).await;
        }
        // Three short windows of 4 calls: the day's 6 bound them.
        assert_eq!(
            granted, 6,
            "the daily window's 6 calls, not 3 short windows' 12"
        );
        let answer = store.reserve(&key, 16, SystemTime::now()).await;
        assert!(
            matches!(
                answer,
                Reservation::Exhausted {
                    remaining: 0,
                    after_429: false,
                    ..
                }
            ),
            "{answer:?}"
        );
    });
}
