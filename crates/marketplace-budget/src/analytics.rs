//! The Analytics API's answers (getRateLimits, getUserRateLimits) under eBay's names, as
//! `developer_analytics_v1_beta_oas3.json` describes them: `RateLimitsResponse`, `RateLimit`,
//! `Resource`, `Rate`. Every field is optional, as the description leaves them.

use serde::{Deserialize, Serialize};

use crate::store::Window;

/// The base path of the Analytics API (`/developer/analytics/v1_beta`): getRateLimits is
/// `GET {base}/rate_limit/`, getUserRateLimits `GET {base}/user_rate_limit/`.
pub const ANALYTICS_BASE_PATH: &str = "/developer/analytics/v1_beta";

/// The answer of getRateLimits and getUserRateLimits: the rate-limit data of every API asked
/// about, for the current time window.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RateLimitsResponse {
    /// One entry per API (`apiContext`, `apiName`, `apiVersion`) with its resources.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rate_limits: Vec<RateLimit>,
}

/// The rate-limit data of one API: its context (`buy`, `sell`, `commerce`, `developer`), its
/// name (`inventory`, `browse`, `taxonomy`), its version and its resources.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RateLimit {
    /// `apiContext`: `buy`, `sell`, `commerce` or `developer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_context: Option<String>,
    /// `apiName`: `inventory`, `browse`, `taxonomy`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_name: Option<String>,
    /// `apiVersion`: `v1`, `v2`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_version: Option<String>,
    /// The API's resources (`sell.inventory`, `buy.browse.item.bulk`, …) and their rates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resources: Vec<Resource>,
}

/// One resource of an API and its quotas.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Resource {
    /// The resource's name, such as `sell.inventory` or `buy.browse`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its quotas, one per time window.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rates: Vec<Rate>,
}

/// A quota: `limit` calls per `timeWindow` seconds, `remaining` of them until `reset`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rate {
    /// The calls allowed in a time window (the "call quota").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// The calls left before the window resets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining: Option<i64>,
    /// When the window resets, ISO 8601 in UTC (`2018-08-04T07:09:00.000Z`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset: Option<String>,
    /// The window's length in seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_window: Option<i64>,
}

/// The quotas of `answer` (getRateLimits' or getUserRateLimits'), one [`Window`] per named
/// resource and `timeWindow` (a resource may have a daily rate and a shorter one: a call
/// counts against each); of two rates of one resource and one `timeWindow`, the one with the
/// fewest calls left. A rate
/// without `limit`, `remaining` or a readable `reset` is left out (with a `warn` event naming
/// the resource).
pub fn windows_of(answer: &RateLimitsResponse) -> Vec<Window> {
    let mut windows: Vec<Window> = Vec::new();
    for resource in answer.rate_limits.iter().flat_map(|api| &api.resources) {
        let Some(name) = resource.name.as_deref() else {
            continue;
        };
        for rate in &resource.rates {
            let reset = rate.reset.as_deref().and_then(crate::time::parse);
            let (Some(limit), Some(remaining), Some(reset)) = (rate.limit, rate.remaining, reset)
            else {
                tracing::warn!(
                    target: "marketplace_budget",
                    resource = name,
                    "a rate of {name} without limit, remaining or an ISO 8601 reset is left out: {rate:?}"
                );
                continue;
            };
            let window = Window {
                resource: name.to_owned(),
                limit: u32::try_from(limit.max(0)).unwrap_or(u32::MAX),
                remaining: u32::try_from(remaining.max(0)).unwrap_or(u32::MAX),
                reset,
                length: std::time::Duration::from_secs(
                    u64::try_from(rate.time_window.unwrap_or(0)).unwrap_or(0),
                ),
            };
            match windows
                .iter_mut()
                .find(|w| w.resource == window.resource && w.length == window.length)
            {
                Some(known) if known.remaining <= window.remaining => {}
                Some(known) => *known = window,
                None => windows.push(window),
            }
        }
    }
    windows
}
