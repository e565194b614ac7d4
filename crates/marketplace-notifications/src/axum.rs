//! The endpoint in an axum application (feature `axum`).
//!
//! ```no_run
//! # use std::sync::Arc;
//! # use marketplace_notifications::NotificationEndpoint;
//! # fn app(endpoint: Arc<NotificationEndpoint>) -> axum::Router {
//! axum::Router::new()
//!     // … the application's own routes …
//!     .merge(marketplace_notifications::axum::router("/ebay/notifications", endpoint))
//! # }
//! ```

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::any;

use crate::{EndpointAnswer, NotificationEndpoint};

/// A router answering eBay's challenge and notifications at `path` (e.g.
/// `/ebay/notifications`, the path of the URL registered with eBay), to merge into the
/// application's router.
pub fn router<S: Clone + Send + Sync + 'static>(
    path: &str,
    endpoint: Arc<NotificationEndpoint>,
) -> Router<S> {
    Router::new().route(path, any(handle)).with_state(endpoint)
}

/// The axum handler itself (for a router built another way): state
/// `Arc<NotificationEndpoint>`.
pub async fn handle(
    State(endpoint): State<Arc<NotificationEndpoint>>,
    method: Method,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let headers: Vec<(&str, &str)> = headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)))
        .collect();
    let answer = endpoint
        .handle(method.as_str(), query.as_deref(), &headers, &body)
        .await;
    into_response(answer)
}

/// An [`EndpointAnswer`] as an axum response.
pub fn into_response(answer: EndpointAnswer) -> Response {
    let status = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut response = (status, answer.body).into_response();
    for (name, value) in answer.headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            response
                .headers_mut()
                .insert(HeaderName::from_static(lowercase(name)), value);
        }
    }
    response
}

fn lowercase(name: &'static str) -> &'static str {
    match name {
        "Content-Type" => "content-type",
        "Retry-After" => "retry-after",
        "Allow" => "allow",
        other => other,
    }
}
