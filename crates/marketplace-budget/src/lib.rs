//! # marketplace-budget
//!
//! One call budget for eBay's APIs, so that a seller's backend slows down or refuses a call
//! itself instead of collecting eBay's 429s:
//!
//! - the Analytics API's answers as types ([`RateLimitsResponse`]: `rateLimits[].apiContext`,
//!   `apiName`, `apiVersion`, `resources[].name`, `rates[].limit`, `remaining`, `reset`,
//!   `timeWindow`), which marketplace-client's `ApiClient::rate_limits` (getRateLimits) and
//!   `user_rate_limits` (getUserRateLimits) return;
//! - which API resource a call draws from ([`resource_of`], one table: [`API_RESOURCES`]);
//! - [`CallBudget`]: a budget per (application, resource) and per (user, resource), read from
//!   getRateLimits and getUserRateLimits ([`CallBudget::refresh`]), each window rolled over at
//!   its `reset` as eBay does; a call whose budget is spent waits for the reset or fails fast
//!   with [`BudgetExceeded`] (naming the resource, the calls left and the reset), by the
//!   caller's [`Mode`]; eBay's 429 marks the resource exhausted for the call's user (else the
//!   application) until its `Retry-After` (else for [`DEFAULT_EXHAUSTED_FOR`])
//!   ([`CallBudget::exhausted`]).
//!
//! marketplace-client's `ApiClient::with_budget` puts a budget in front of every call the
//! client sends (every attempt of it: retries are calls), so marketplace-listing's and
//! marketplace-orders' calls, which go through that client, draw from it too.
//!
//! # Where the counts live
//!
//! [`BudgetStore`] holds the counts; [`InMemoryStore`] is the store of one process. The trait
//! is made for a store shared by a fleet (a database): a process never asks it for one call
//! but reserves a batch ([`CallBudget::with_batch`], 16 by default) in one round trip and
//! hands the calls out from memory, so a call's check costs a map lookup (see
//! `benches/budget_check.rs`) and the database sees one request per batch.
//!
//! # Tracing
//!
//! Target `marketplace_budget`: a refusal is a `warn` event with the counter field
//! `monotonic_counter.budget_refused = 1` (the form metrics layers such as
//! tracing-opentelemetry count), `scope`, `resource`, `remaining` and `reset`, and the
//! refusal's message; a wait is an `info` event with `monotonic_counter.budget_waits = 1` and
//! `wait_ms`; eBay's 429 is a `warn` event with `monotonic_counter.budget_429 = 1` and `until`.

mod analytics;
mod budget;
mod resources;
mod store;
mod time;

pub use analytics::{
    ANALYTICS_BASE_PATH, Rate, RateLimit, RateLimitsResponse, Resource, windows_of,
};
pub use budget::{BudgetExceeded, CallBudget, DEFAULT_EXHAUSTED_FOR, Mode};
pub use resources::{API_RESOURCES, ApiResource, api_of_resource, resource_of};
pub use store::{BudgetKey, BudgetStore, InMemoryStore, Reservation, Scope, StoreFuture, Window};
pub use time::format as format_time;
