//! The cost of a call's budget check, in process: [`CallBudget::acquire`] for the
//! application and a user (two budgets, each with a quota read from a getRateLimits-shaped
//! answer, batches of 16 from an [`InMemoryStore`]) against the same call without a budget
//! (an empty future awaited on the same runtime: what an unbudgeted client does in its
//! place). The goal: at most 5 µs a call.
//!
//! One run (`cargo bench -p marketplace-budget --bench budget_check -- --warm-up-time 1
//! --measurement-time 3`, optimized, on the 2-core machine shared with other builds,
//! 2026-11-29): unbudgeted 321 ns, budgeted 742 ns (2.3×; the check's own cost 0.42 µs);
//! with `--profile dev`: 1.58 µs and 4.28 µs (2.7×). See docs/benchmarks.md.

use std::hint::black_box;
use std::sync::Arc;

use criterion::Criterion;
use marketplace_budget::{CallBudget, InMemoryStore, Mode, RateLimitsResponse, Scope};

fn answer(resource: &str) -> RateLimitsResponse {
    serde_json::from_value(serde_json::json!({"rateLimits": [{
        "apiContext": "sell", "apiName": "inventory", "apiVersion": "v1",
        "resources": [{"name": resource, "rates": [{
            "limit": u32::MAX, "remaining": u32::MAX,
            "reset": "2999-01-01T00:00:00.000Z", "timeWindow": 86400}]}]}]}))
    .expect("a getRateLimits answer")
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let budget = CallBudget::new(Arc::new(InMemoryStore::new()), Mode::FailFast);
    let user: Arc<str> = Arc::from("seller-1");
    runtime.block_on(async {
        budget
            .refresh(Scope::Application, &answer("sell.inventory"))
            .await;
        budget
            .refresh(Scope::User(user.clone()), &answer("sell.inventory"))
            .await;
    });
    c.bench_function("unbudgeted_call_check", |b| {
        b.iter(|| runtime.block_on(async { black_box(()) }))
    });
    c.bench_function("budgeted_call_check", |b| {
        b.iter(|| {
            runtime.block_on(async {
                budget
                    .acquire(black_box("sell.inventory"), Some(&user))
                    .await
                    .expect("within the budget")
            })
        })
    });
    c.final_summary();
}
