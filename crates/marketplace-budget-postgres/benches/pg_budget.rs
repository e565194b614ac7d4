//! The fleet's call budget against its baseline, in the same run: a call of the Taxonomy API
//! to the fake marketplace over loopback without a budget, the same call drawing from a
//! `CallBudget` over [`PgBudgetStore`] (batches of 16: one PostgreSQL round trip per 16
//! calls), and the budget's check alone (no HTTP); then the round trips 1,000 calls made.
//!
//! `cargo bench -p marketplace-budget-postgres --bench pg_budget`. Needs PostgreSQL as the
//! tests do: the server at `DATABASE_URL`, or a throwaway one from the binaries on the
//! machine. marketplace-budget's own bench (`budget_check`) times the check in memory.

#[path = "../../marketplace-client-postgres/tests/support/pg.rs"]
mod pg;

use std::sync::Arc;
use std::time::Duration;

use criterion::Criterion;
use fake_marketplace::FakeMarketplace;
use marketplace_budget::{CallBudget, Mode, Scope};
use marketplace_budget_postgres::{PgBudgetStore, migrate};
use marketplace_client::aio::api::ApiClient;
use marketplace_client::api::{ApiRequest, ClientConfig};
use marketplace_client::oauth::{
    AccessToken, AccessTokenSource as _, ApplicationTokenProvider, Endpoints, OAuthClient,
    OAuthConfig,
};

const TAXONOMY: &str = "commerce.taxonomy";
const DEFAULT_TREE: &str = "/commerce/taxonomy/v1/get_default_category_tree_id";

fn call() -> ApiRequest {
    ApiRequest::get(DEFAULT_TREE).query("marketplace_id", "EBAY_US")
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let fake = FakeMarketplace::new();
    fake.set_rate_limit(TAXONOMY, u64::from(u32::MAX), Duration::from_secs(86_400));
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth =
        OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret());
    let token = ApplicationTokenProvider::new(OAuthClient::from_config(&oauth).unwrap())
        .access_token()
        .unwrap();
    let config = ClientConfig::for_base_url(&fake.base_url())
        .unwrap()
        .with_max_retries(0);
    let db = runtime.block_on(async {
        let db = pg::TestDb::new().await;
        migrate(&db.pool).await.unwrap();
        db
    });
    let store = Arc::new(PgBudgetStore::new(db.pool.clone()));
    let budget = Arc::new(CallBudget::new(store.clone(), Mode::FailFast).with_batch(16));
    let plain = ApiClient::new(config.clone(), Arc::new(AccessToken::new(token.secret()))).unwrap();
    let budgeted = ApiClient::new(config, Arc::new(AccessToken::new(token.secret())))
        .unwrap()
        .with_budget(budget.clone(), None);
    runtime.block_on(async {
        let answer = plain.rate_limits(None, None).await.unwrap();
        budget.refresh(Scope::Application, &answer).await;
    });

    let mut criterion = Criterion::default()
        .configure_from_args()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    let mut group = criterion.benchmark_group("taxonomy call");
    group.bench_function("unbudgeted", |b| {
        b.iter(|| runtime.block_on(plain.send(call())).unwrap())
    });
    group.bench_function("budgeted, PostgreSQL store, batch 16", |b| {
        b.iter(|| runtime.block_on(budgeted.send(call())).unwrap())
    });
    group.finish();
    criterion.bench_function("budget check alone, PostgreSQL store, batch 16", |b| {
        b.iter(|| runtime.block_on(budget.acquire(TAXONOMY, None)).unwrap())
    });

    let before = store.round_trips();
    runtime.block_on(async {
        for _ in 0..1_000 {
            budgeted.send(call()).await.unwrap();
        }
    });
    println!(
        "1000 budgeted calls, batch 16: {} PostgreSQL round trips",
        store.round_trips() - before
    );
    criterion.final_summary();
}
