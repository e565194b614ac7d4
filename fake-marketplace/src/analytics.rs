//! The Analytics API's getRateLimits and getUserRateLimits, answered from the fake's own
//! counts of the calls it served, and eBay's 429 past a quota.
//!
//! Every call the fake serves with a valid bearer token to a path of an API context (`/sell/`,
//! `/buy/`, `/commerce/`, `/developer/`) counts against the resource named after its API as
//! eBay names them (`/sell/inventory/v1/…`: `sell.inventory`): for the application, and for
//! the seller of a user token. A test gives a resource a quota
//! ([`FakeMarketplace::set_rate_limit`], [`FakeMarketplace::set_user_rate_limit`]): `limit`
//! calls per window (a day by default, as eBay's quotas; shorter for a test that waits for
//! the reset); a call past it is answered `429 Too Many Requests` with eBay's error (errorId
//! 2001, "Too many requests. The request limit has been reached for the resource.") and not
//! served. getRateLimits and getUserRateLimits list the resources with a quota (`limit`,
//! `remaining`, `reset`, `timeWindow`), filtered by `api_context` and `api_name`, `204 No
//! Content` when none is left.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use crate::{FakeMarketplace, FakeState, Request, Response, Route, lock};

/// The base path of the Analytics API.
const BASE: &str = "/developer/analytics/v1_beta";

/// One resource's quota and its counts in the current window.
#[derive(Debug, Clone)]
struct Quota {
    limit: u64,
    window: Duration,
    /// The current window's start.
    start: SystemTime,
    /// Calls served in the window, per counter (`app`, or the seller key).
    counts: HashMap<String, u64>,
}

impl Quota {
    fn roll(&mut self, now: SystemTime) {
        if self.window.is_zero() {
            return;
        }
        while now >= self.start + self.window {
            self.start += self.window;
            self.counts.clear();
        }
    }

    fn reset(&self) -> SystemTime {
        self.start + self.window
    }
}

#[derive(Debug, Default)]
pub(crate) struct AnalyticsState {
    /// The application's quotas, by resource.
    app: Mutex<HashMap<String, Quota>>,
    /// The users' quotas, by resource (each user counted on its own).
    user: Mutex<HashMap<String, Quota>>,
    /// The API version seen per resource (`v1`), for `apiVersion`.
    versions: Mutex<HashMap<String, String>>,
}

/// The resource (and version) a path counts against: `/sell/inventory/v1/…` is
/// `sell.inventory`, `v1`.
fn resource_of(path: &str) -> Option<(String, String)> {
    let mut segments = path.trim_start_matches('/').split('/');
    let context = segments.next()?;
    if !["sell", "buy", "commerce", "developer"].contains(&context) {
        return None;
    }
    let api = segments.next().filter(|s| !s.is_empty())?;
    let version = segments.next().unwrap_or("v1");
    Some((format!("{context}.{api}"), version.to_owned()))
}

/// eBay's answer past a quota.
fn too_many_requests() -> Response {
    Response::json(
        429,
        &serde_json::json!({"errors": [{
            "errorId": 2001,
            "message": "Too many requests. The request limit has been reached for the resource."
        }]}),
    )
}

/// Counts `request` against its resource's quotas, or answers 429 past one (`Some`: the
/// answer to send instead of routing). Requests without a valid bearer are not counted (their
/// route answers 401).
pub(crate) fn meter(state: &FakeState, request: &Request) -> Option<Response> {
    let (resource, version) = resource_of(&request.path)?;
    let token = state.check_bearer(request).ok()?;
    let now = state.now();
    let analytics = &state.analytics;
    let seller = token.user.is_some().then(|| state.seller_of(&token));
    let mut app = lock(&analytics.app);
    let mut user = lock(&analytics.user);
    if let Some(quota) = app.get_mut(&resource) {
        quota.roll(now);
        if quota.counts.get("app").copied().unwrap_or(0) >= quota.limit {
            return Some(too_many_requests());
        }
    }
    if let (Some(seller), Some(quota)) = (&seller, user.get_mut(&resource)) {
        quota.roll(now);
        if quota.counts.get(seller).copied().unwrap_or(0) >= quota.limit {
            return Some(too_many_requests());
        }
    }
    if let Some(quota) = app.get_mut(&resource) {
        *quota.counts.entry("app".into()).or_default() += 1;
    }
    if let (Some(seller), Some(quota)) = (&seller, user.get_mut(&resource)) {
        *quota.counts.entry(seller.clone()).or_default() += 1;
    }
    lock(&analytics.versions).entry(resource).or_insert(version);
    None
}

/// The answer of getRateLimits (`counter` `app`) or getUserRateLimits (the seller's key).
fn answer(state: &FakeState, request: &Request, user: bool) -> Response {
    let token = match state.check_bearer(request) {
        Ok(token) => token,
        Err(denied) => return denied,
    };
    let counter = if user {
        state.seller_of(&token)
    } else {
        "app".to_owned()
    };
    let context_filter = request.query_param("api_context");
    let name_filter = request.query_param("api_name");
    let now = state.now();
    let mut quotas = if user {
        lock(&state.analytics.user)
    } else {
        lock(&state.analytics.app)
    };
    let versions = lock(&state.analytics.versions);
    let mut apis: Vec<(String, String, String, Vec<serde_json::Value>)> = Vec::new();
    let mut names: Vec<&String> = quotas.keys().collect();
    names.sort();
    let names: Vec<String> = names.into_iter().cloned().collect();
    for name in names {
        let Some(quota) = quotas.get_mut(&name) else {
            continue;
        };
        quota.roll(now);
        let (context, api) = name.split_once('.').unwrap_or((name.as_str(), ""));
        if context_filter.as_deref().is_some_and(|f| f != context)
            || name_filter.as_deref().is_some_and(|f| f != api)
        {
            continue;
        }
        let used = quota.counts.get(&counter).copied().unwrap_or(0);
        let rate = serde_json::json!({
            "limit": quota.limit,
            "remaining": quota.limit.saturating_sub(used),
            "reset": marketplace_budget::format_time(quota.reset()),
            "timeWindow": quota.window.as_secs(),
        });
        let resource = serde_json::json!({"name": name, "rates": [rate]});
        let version = versions.get(&name).cloned().unwrap_or_else(|| "v1".into());
        match apis
            .iter_mut()
            .find(|(c, a, v, _)| c == context && a == api && *v == version)
        {
            Some((.., resources)) => resources.push(resource),
            None => apis.push((context.into(), api.into(), version, vec![resource])),
        }
    }
    if apis.is_empty() {
        return Response::new(204, Vec::new());
    }
    let rate_limits: Vec<serde_json::Value> = apis
        .into_iter()
        .map(|(context, api, version, resources)| {
            serde_json::json!({"apiContext": context, "apiName": api,
                "apiVersion": version, "resources": resources})
        })
        .collect();
    Response::json(200, &serde_json::json!({ "rateLimits": rate_limits }))
}

pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::new("GET", &format!("{BASE}/rate_limit/"), |req, state| {
            answer(state, req, false)
        }),
        Route::new("GET", &format!("{BASE}/user_rate_limit/"), |req, state| {
            answer(state, req, true)
        }),
    ]
}

fn set(
    map: &Mutex<HashMap<String, Quota>>,
    now: SystemTime,
    resource: &str,
    limit: u64,
    window: Duration,
) {
    let mut quotas = lock(map);
    let quota = quotas.entry(resource.to_owned()).or_insert_with(|| Quota {
        limit,
        window,
        start: now,
        counts: HashMap::new(),
    });
    quota.limit = limit;
    if quota.window != window {
        quota.window = window;
        quota.start = now;
        quota.counts.clear();
    }
}

impl FakeMarketplace {
    /// Gives the application `limit` calls of `resource` (`sell.inventory`) per `window`,
    /// the window starting now (a day: `Duration::from_secs(86_400)`, as eBay's quotas); a
    /// call past it gets eBay's 429. Setting it again changes the limit and keeps the counts
    /// (a new window length starts a new window).
    pub fn set_rate_limit(&self, resource: &str, limit: u64, window: Duration) {
        let state = self.state();
        set(&state.analytics.app, state.now(), resource, limit, window);
    }

    /// [`set_rate_limit`](Self::set_rate_limit) for each user of the application (each
    /// seller counted on its own; getUserRateLimits answers a user token's seller's).
    pub fn set_user_rate_limit(&self, resource: &str, limit: u64, window: Duration) {
        let state = self.state();
        set(&state.analytics.user, state.now(), resource, limit, window);
    }

    /// The calls of `resource` the fake served to the application in the current window
    /// (0 without a quota).
    pub fn calls_served(&self, resource: &str) -> u64 {
        let state = self.state();
        let mut quotas = lock(&state.analytics.app);
        quotas.get_mut(resource).map_or(0, |quota| {
            quota.roll(state.now());
            quota.counts.get("app").copied().unwrap_or(0)
        })
    }
}
