//! A seller's consent, on a fleet: `GET /consent?account=seller-1` saves a pending consent in
//! the refresh-token store and redirects the browser to eBay's consent page;
//! `GET /callback?state=…&code=…` (the page eBay sends the browser back to: the accept URL of
//! the application's RuName) completes it, on whichever instance the redirect lands, and
//! stores the seller's refresh token under the account.
//!
//! The pending consent is found by the redirect's `state` in the shared store (PostgreSQL for
//! a fleet), is used once (a replayed redirect is refused, on every instance) and expires
//! (10 minutes unless [`ConsentEndpoints::with_ttl`] says otherwise).

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::{StatusCode, Uri};
use axum::response::Redirect;
use axum::routing::get;
use marketplace_client::aio::oauth::{
    ConsentRequest, OAuthClient, OAuthError, RefreshTokenStore, ScopeSet, UserTokenProvider,
};
use serde::{Deserialize, Serialize};

use crate::ApiError;

/// Where a consent starts: `GET /consent?account=…`.
pub const CONSENT_PATH: &str = "/consent";

/// Where eBay sends the browser back: `GET /callback?state=…&code=…` (register
/// `https://<host>/callback` as the accept URL of the RuName).
pub const CALLBACK_PATH: &str = "/callback";

/// The longest account name accepted.
pub const MAX_ACCOUNT_CHARS: usize = 128;

/// What the consent endpoints share: the application's client, the refresh-token store (the
/// one every instance uses) and the scopes asked for.
pub struct ConsentEndpoints {
    client: Arc<OAuthClient>,
    store: Arc<dyn RefreshTokenStore>,
    scopes: ScopeSet,
    ttl: Duration,
}

impl ConsentEndpoints {
    /// Consents for `scopes` (empty: the default scope) through `client` (which needs the
    /// RuName: `OAuthConfig::with_redirect_uri`), kept in `store`.
    pub fn new(
        client: Arc<OAuthClient>,
        store: Arc<dyn RefreshTokenStore>,
        scopes: ScopeSet,
    ) -> Self {
        Self {
            client,
            store,
            scopes,
            ttl: ConsentRequest::DEFAULT_TTL,
        }
    }

    /// How long a started consent waits for its redirect
    /// ([`ConsentRequest::DEFAULT_TTL`]: 10 minutes).
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }
}

/// `router` with [`CONSENT_PATH`] and [`CALLBACK_PATH`].
pub fn with_consent(router: Router, endpoints: Arc<ConsentEndpoints>) -> Router {
    router.merge(
        Router::new()
            .route(CONSENT_PATH, get(start))
            .route(CALLBACK_PATH, get(callback))
            .with_state(endpoints),
    )
}

/// The query of `GET /consent`.
#[derive(Debug, Deserialize)]
pub struct ConsentParams {
    /// The account the seller's refresh token is stored under.
    pub account: Option<String>,
}

/// The answer of `GET /callback`: the account now connected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connected {
    /// The account.
    pub account: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
}

async fn start(
    State(endpoints): State<Arc<ConsentEndpoints>>,
    params: Result<Query<ConsentParams>, QueryRejection>,
) -> Result<Redirect, ApiError> {
    let Query(params) = params
        .map_err(|e| ApiError::bad_request(format!("bad query string: {}", e.body_text())))?;
    let account = params.account.unwrap_or_default();
    if account.trim().is_empty() || account.chars().count() > MAX_ACCOUNT_CHARS {
        return Err(ApiError::bad_request(format!(
            "missing or too long account (at most {MAX_ACCOUNT_CHARS} characters): /consent?account=…"
        )));
    }
    let request = endpoints
        .client
        .consent_request(&endpoints.scopes)
        .map_err(|e| consent_error(&e))?
        .with_account(account)
        .with_ttl(endpoints.ttl);
    endpoints
        .store
        .save_consent(&request)
        .await
        .map_err(|e| consent_error(&e))?;
    Ok(Redirect::to(request.url().as_str()))
}

async fn callback(
    State(endpoints): State<Arc<ConsentEndpoints>>,
    uri: Uri,
) -> Result<Json<Connected>, ApiError> {
    let redirect = uri.query().unwrap_or_default();
    let (request, code) = endpoints
        .client
        .complete_consent(&*endpoints.store, redirect)
        .await
        .map_err(|e| consent_error(&e))?;
    let account = request
        .account()
        .ok_or_else(|| ApiError::bad_request("the consent names no account"))?
        .to_owned();
    UserTokenProvider::new(endpoints.client.clone(), endpoints.store.clone(), &account)
        .exchange_code(&code, request.scopes())
        .await
        .map_err(|e| consent_error(&e))?;
    Ok(Json(Connected {
        account,
        scopes: request.scopes().iter().map(str::to_owned).collect(),
    }))
}

/// 400 for a redirect that completes nothing (used already, expired, forged, refused by the
/// seller), 503 when the store fails, 502 when the token endpoint does.
fn consent_error(error: &OAuthError) -> ApiError {
    let status = match error {
        OAuthError::ConsentNotPending
        | OAuthError::ConsentExpired { .. }
        | OAuthError::StateMismatch
        | OAuthError::InvalidRedirect { .. }
        | OAuthError::ConsentDenied { .. } => StatusCode::BAD_REQUEST,
        OAuthError::Store(_) => StatusCode::SERVICE_UNAVAILABLE,
        OAuthError::Config(_) => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::BAD_GATEWAY,
    };
    ApiError {
        status,
        message: error.to_string(),
    }
}
