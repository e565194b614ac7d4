//! The call budget's answers to eBay's 429 and to a store that knows no quota yet, over the
//! in-memory store shared by two budgets (two processes of a fleet).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use marketplace_budget::{
    BudgetKey, BudgetStore as _, CallBudget, DEFAULT_EXHAUSTED_FOR, InMemoryStore, Mode,
    RateLimitsResponse, Reservation, Scope, Window, windows_of,
};

const INVENTORY: &str = "sell.inventory";

fn run<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
        .block_on(future)
}

/// getRateLimits' (or getUserRateLimits') answer: `remaining` of 1,000 calls of `resource` a
/// day, the window resetting in 2999.
fn daily(resource: &str, remaining: u32) -> RateLimitsResponse {
    serde_json::from_value(serde_json::json!({"rateLimits": [{"apiContext": "sell",
        "apiName": "inventory", "apiVersion": "v1", "resources": [{"name": resource, "rates": [
            {"limit": 1000, "remaining": remaining, "reset": "2999-01-01T00:00:00.000Z",
             "timeWindow": 86400}]}]}]}))
    .unwrap()
}

#[test]
fn a_users_429_exhausts_only_that_user_for_the_short_default_not_the_fleet_until_the_reset() {
    let budget = CallBudget::new(Arc::new(InMemoryStore::new()), Mode::FailFast).with_batch(4);
    let seller: Arc<str> = Arc::from("seller-1");
    let other: Arc<str> = Arc::from("seller-2");
    run(async {
        budget
            .refresh(Scope::Application, &daily(INVENTORY, 500))
            .await;
        for user in [&seller, &other] {
            budget
                .refresh(Scope::User(user.clone()), &daily(INVENTORY, 500))
                .await;
            budget.acquire(INVENTORY, Some(user)).await.unwrap();
        }
        let before = SystemTime::now();
        budget.exhausted(INVENTORY, Some(&seller), None).await;

        let refused = budget.acquire(INVENTORY, Some(&seller)).await.unwrap_err();
        assert_eq!(refused.scope, Scope::User(seller.clone()));
        assert!(refused.after_429);
        assert!(
            refused.reset <= SystemTime::now() + DEFAULT_EXHAUSTED_FOR
                && refused.reset >= before + DEFAULT_EXHAUSTED_FOR,
            "exhausted for the default {DEFAULT_EXHAUSTED_FOR:?}, not until the daily reset: \
             {refused}"
        );
        // The application and every other user keep calling.
        budget.acquire(INVENTORY, None).await.unwrap();
        budget.acquire(INVENTORY, Some(&other)).await.unwrap();
    });
}

#[test]
fn an_applications_429_without_retry_after_ends_after_the_default_not_at_the_window_reset() {
    let budget = CallBudget::new(Arc::new(InMemoryStore::new()), Mode::FailFast).with_batch(4);
    run(async {
        budget
            .refresh(Scope::Application, &daily(INVENTORY, 500))
            .await;
        budget.acquire(INVENTORY, None).await.unwrap();
        budget.exhausted(INVENTORY, None, None).await;
        let refused = budget.acquire(INVENTORY, None).await.unwrap_err();
        assert!(refused.after_429);
        assert!(
            refused.reset <= SystemTime::now() + DEFAULT_EXHAUSTED_FOR,
            "{refused}"
        );
    });
}

#[test]
fn a_process_that_found_no_quota_asks_the_store_again_and_sees_another_processs_429() {
    let store = Arc::new(InMemoryStore::new());
    let first = CallBudget::new(store.clone(), Mode::FailFast);
    let second = CallBudget::new(store, Mode::FailFast);
    run(async {
        // No process has written a quota yet: calls are let through uncounted.
        first.acquire(INVENTORY, None).await.unwrap();
        second
            .exhausted(INVENTORY, None, Some(Duration::from_secs(3600)))
            .await;
        tokio::time::sleep(Duration::from_millis(5_200)).await;
        let refused = first.acquire(INVENTORY, None).await.unwrap_err();
        assert!(refused.after_429, "{refused}");
        assert_eq!(refused.resource, INVENTORY);
    });
}

fn key() -> BudgetKey {
    BudgetKey {
        scope: Scope::Application,
        resource: INVENTORY.into(),
    }
}

#[test]
fn a_daily_and_a_five_minute_rate_are_both_kept_and_a_call_counts_against_each() {
    let answer: RateLimitsResponse = serde_json::from_value(serde_json::json!({"rateLimits": [{
    "resources": [{"name": INVENTORY, "rates": [
        {"limit": 1000, "remaining": 10, "reset": "2999-01-01T00:00:00.000Z", "timeWindow": 86400},
        {"limit": 5, "remaining": 5, "reset": "2999-01-01T00:00:00.000Z", "timeWindow": 300}
    ]}]}]}))
    .unwrap();
    let windows = windows_of(&answer);
    let lengths: Vec<u64> = windows.iter().map(|w| w.length.as_secs()).collect();
    assert_eq!(lengths, [86_400, 300], "{windows:?}");

    let store = InMemoryStore::new();
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    let daily = Window {
        resource: INVENTORY.into(),
        limit: 1000,
        remaining: 10,
        reset: t0 + Duration::from_secs(86_400),
        length: Duration::from_secs(86_400),
    };
    let short = Window {
        resource: INVENTORY.into(),
        limit: 5,
        remaining: 5,
        reset: t0 + Duration::from_secs(300),
        length: Duration::from_secs(300),
    };
    run(async {
        store
            .refresh(&Scope::Application, &[daily.clone(), short])
            .await;
        // Five calls a window of 5 minutes; ten left of the day.
        for minute in [0, 6] {
            let at = t0 + Duration::from_secs(minute * 60);
            assert!(
                matches!(
                    store.reserve(&key(), 16, at).await,
                    Reservation::Granted { calls: 5, .. }
                ),
                "minute {minute}"
            );
        }
        // The short window refilled again, but the day's ten calls are spent.
        assert_eq!(
            store
                .reserve(&key(), 16, t0 + Duration::from_secs(12 * 60))
                .await,
            Reservation::Exhausted {
                remaining: 0,
                reset: daily.reset,
                after_429: false
            }
        );
    });
}

#[test]
fn a_rate_without_time_window_is_refused_past_its_reset_until_a_refresh() {
    let store = InMemoryStore::new();
    let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
    let window = Window {
        resource: INVENTORY.into(),
        limit: 5,
        remaining: 5,
        reset: t0 + Duration::from_secs(10),
        length: Duration::ZERO,
    };
    run(async {
        store
            .refresh(&Scope::Application, std::slice::from_ref(&window))
            .await;
        assert!(matches!(
            store.reserve(&key(), 16, t0).await,
            Reservation::Granted { calls: 5, .. }
        ));
        for later in [11, 12] {
            let answer = store
                .reserve(&key(), 16, t0 + Duration::from_secs(later))
                .await;
            assert!(
                matches!(
                    answer,
                    Reservation::Exhausted {
                        remaining: 0,
                        after_429: false,
                        ..
                    }
                ),
                "{later} s on, its length unknown, the window is not rolled over: {answer:?}"
            );
        }
        let read_again = Window {
            reset: t0 + Duration::from_secs(100),
            ..window
        };
        store
            .refresh(&Scope::Application, std::slice::from_ref(&read_again))
            .await;
        assert!(matches!(
            store
                .reserve(&key(), 16, t0 + Duration::from_secs(13))
                .await,
            Reservation::Granted { calls: 5, .. }
        ));
    });
}
