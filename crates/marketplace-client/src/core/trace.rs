//! What the clients tell `tracing`: one span per HTTP attempt and the token cache's events,
//! with no secret in any of them.
//!
//! The span of an attempt is `http` (target `marketplace_client::http`) with the fields
//! `operation` (the service's name of the call, e.g. `getCategoryTree`, or `token` for the
//! token endpoint), `method`, `url` (without user information; it never holds a token),
//! `marketplace`, `attempt` (1 for the first), and once answered `status`, `elapsed_ms`,
//! `error_ids` (the service's `errorId`s) and `retry_after_s`. A token request adds `grant`
//! and `scopes`, and its answer `expires_in_s`. Each answer is also an event in its span
//! (`answered`, level debug, with `status`, `elapsed_ms`, `error_ids`, `retry_after_s`; a
//! failure without an answer: `no answer`, with `elapsed_ms` and `error`), so a plain `fmt`
//! subscriber (no span events) prints one line per attempt. The token cache's events (target
//! `marketplace_client::token`, inside a provider's `token` span, [`token_source`], which
//! names `grant` and `scopes`) say when a token was handed out from the in-process cache
//! (`cache hit`, level trace), when a
//! caller waited for another's request (single flight), when a shared cache was asked for
//! the fleet's token (`shared cache lookup`), when this process asked the token endpoint
//! (`token request`, or `token renewal`, with its `reason`), and what lifetime the token came
//! with: `token received` (this process requested it) or `token read from the shared cache`
//! (another process did), with `expires_in_s`. No field ever holds a token, a code, a secret or an `Authorization` header: the
//! values recorded are built here, from what is known to be free of them.

use std::time::Duration;

use tracing::field::{Empty, display};

/// The span of one attempt of `operation`.
pub(crate) fn attempt(
    operation: &str,
    method: &http::Method,
    url: &url::Url,
    marketplace: Option<&str>,
    attempt: u32,
) -> tracing::Span {
    tracing::info_span!(
        target: "marketplace_client::http",
        "http",
        operation = %operation,
        method = %method,
        url = %url_for_trace(url),
        marketplace = %marketplace.unwrap_or(""),
        attempt,
        grant = Empty,
        scopes = Empty,
        status = Empty,
        elapsed_ms = Empty,
        error_ids = Empty,
        retry_after_s = Empty,
        expires_in_s = Empty,
    )
}

/// The span of a token provider's call for a token (`token`, target
/// `marketplace_client::token`, level debug): the `grant` the provider uses, the `account`
/// of a user token (the store's key, which names the seller: every event of the call carries
/// it) and the `scopes` it asks for (empty: recorded later, or none sent), around the token
/// cache's events and the token request's own `http` span.
pub(crate) fn token_source(
    grant: crate::oauth::Grant,
    account: Option<&str>,
    scopes: Option<&str>,
) -> tracing::Span {
    let span = tracing::debug_span!(
        target: "marketplace_client::token",
        "token",
        grant = %grant.as_str(),
        account = Empty,
        scopes = Empty,
    );
    if let Some(account) = account {
        span.record("account", display(account));
    }
    if let Some(scopes) = scopes {
        span.record("scopes", display(scopes));
    }
    span
}

/// `url` without user information (which may hold a password).
fn url_for_trace(url: &url::Url) -> String {
    if url.username().is_empty() && url.password().is_none() {
        return url.to_string();
    }
    let mut url = url.clone();
    let _ = url.set_username("");
    let _ = url.set_password(None);
    url.to_string()
}

/// Records an answer's status, the time it took, its `Retry-After` and its service error ids,
/// after saying them in an event (`answered`, level debug, inside the span, so that a plain
/// `fmt` subscriber prints one line per answer with the span's operation, method, URL and
/// attempt and the event's outcome; recorded in the span only afterwards, so the line does
/// not say them twice).
pub(crate) fn answered(
    span: &tracing::Span,
    status: u16,
    elapsed: Duration,
    retry_after: Option<Duration>,
    error_ids: &[u32],
) {
    let elapsed_ms = elapsed.as_millis() as u64;
    let ids: Vec<String> = error_ids.iter().map(u32::to_string).collect();
    let ids = ids.join(",");
    const TARGET: &str = "marketplace_client::http";
    match (ids.is_empty(), retry_after) {
        (true, None) => {
            tracing::debug!(target: TARGET, parent: span, status, elapsed_ms, "answered");
        }
        (false, None) => tracing::debug!(
            target: TARGET, parent: span, status, elapsed_ms, error_ids = %ids, "answered"
        ),
        (true, Some(wait)) => tracing::debug!(
            target: TARGET, parent: span, status, elapsed_ms,
            retry_after_s = wait.as_secs(), "answered"
        ),
        (false, Some(wait)) => tracing::debug!(
            target: TARGET, parent: span, status, elapsed_ms, error_ids = %ids,
            retry_after_s = wait.as_secs(), "answered"
        ),
    }
    span.record("status", status);
    span.record("elapsed_ms", elapsed_ms);
    if let Some(wait) = retry_after {
        span.record("retry_after_s", wait.as_secs());
    }
    if !ids.is_empty() {
        span.record("error_ids", display(ids));
    }
}

/// Records a failure without an answer (no connection, a time-out, a cut-off body), after
/// saying it in an event (`no answer`, level debug, inside the span).
pub(crate) fn failed(span: &tracing::Span, elapsed: Duration, message: &str) {
    let elapsed_ms = elapsed.as_millis() as u64;
    tracing::debug!(
        target: "marketplace_client::http",
        parent: span,
        elapsed_ms,
        error = message,
        "no answer"
    );
    span.record("elapsed_ms", elapsed_ms);
}
