//! The call budget's answers to eBay's 429 and to a store that knows no quota yet, over the
//! in-memory store shared by two budgets (two processes of a fleet).

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use marketplace_budget::{
    CallBudget, DEFAULT_EXHAUSTED_FOR, InMemoryStore, Mode, RateLimitsResponse, Scope,
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
