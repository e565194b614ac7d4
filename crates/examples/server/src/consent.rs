//! A seller's consent, on a fleet: `GET /consent` (by a seller logged in: [`crate::session`])
//! saves a pending consent for the session's account in the refresh-token store and redirects
//! the browser to eBay's consent page; `GET /callback?state=…&code=…` (the page eBay sends the
//! browser back to: the accept URL of the application's RuName) completes it, on whichever
//! instance the redirect lands, for the same logged-in seller only, stores the seller's
//! refresh token under the account and records the eBay user who granted it (getUser), so that
//! eBay's account deletion notification for that user removes the token.
//!
//! The account always comes from the session, never from the request: whoever could name an
//! account would replace its refresh token with one of their own eBay account. A request
//! without a session is a 401 and saves nothing.
//!
//! The pending consent is found by the redirect's `state` in the shared store (PostgreSQL for
//! a fleet), is used once (a replayed redirect is refused, on every instance) and expires
//! (10 minutes unless [`ConsentEndpoints::with_ttl`] says otherwise); a store keeps at most a
//! few of an account and a bounded number in all (`ConsentRequest::MAX_PENDING_PER_ACCOUNT`,
//! `ConsentRequest::MAX_PENDING`).

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::Redirect;
use axum::routing::get;
use marketplace_client::aio::api::{ApiClient, ClientConfig};
use marketplace_client::aio::oauth::{
    ConsentRequest, OAuthClient, OAuthError, ScopeSet, UserTokenProvider,
};
use marketplace_notifications::{IDENTITY_SCOPE, get_user, identity_base_url};
use serde::{Deserialize, Serialize};

use crate::ApiError;
pub use crate::session::MAX_ACCOUNT_CHARS;
use crate::session::{Sessions, with_login};
use crate::store::TokenStore;

/// Where a logged-in seller starts a consent: `GET /consent`.
pub const CONSENT_PATH: &str = "/consent";

/// Where eBay sends the browser back: `GET /callback?state=…&code=…` (register
/// `https://<host>/callback` as the accept URL of the RuName).
pub const CALLBACK_PATH: &str = "/callback";

/// What the consent endpoints share: the application's client, the store (the one every
/// instance uses), the scopes asked for and the sessions of the application's users.
pub struct ConsentEndpoints {
    client: Arc<OAuthClient>,
    store: TokenStore,
    scopes: ScopeSet,
    sessions: Arc<Sessions>,
    ttl: Duration,
}

impl ConsentEndpoints {
    /// Consents for `scopes` (empty: the default scope) and the Identity API's scope (getUser,
    /// [`IDENTITY_SCOPE`], always added) through `client` (which needs the RuName:
    /// `OAuthConfig::with_redirect_uri`), kept in `store`, for the users of `sessions`.
    pub fn new(
        client: Arc<OAuthClient>,
        store: TokenStore,
        scopes: ScopeSet,
        sessions: Arc<Sessions>,
    ) -> Self {
        let mut asked: Vec<String> = if scopes.is_empty() {
            client
                .endpoints()
                .default_scope()
                .split_whitespace()
                .map(str::to_owned)
                .collect()
        } else {
            scopes.iter().map(str::to_owned).collect()
        };
        if !asked.iter().any(|s| s == IDENTITY_SCOPE) {
            asked.push(IDENTITY_SCOPE.to_owned());
        }
        Self {
            client,
            store,
            scopes: ScopeSet::new(asked),
            sessions,
            ttl: ConsentRequest::DEFAULT_TTL,
        }
    }

    /// How long a started consent waits for its redirect
    /// ([`ConsentRequest::DEFAULT_TTL`]: 10 minutes).
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The account of the request's session: 401 without one.
    fn logged_in(&self, headers: &HeaderMap) -> Result<String, ApiError> {
        self.sessions.account(headers).ok_or_else(|| ApiError {
            status: StatusCode::UNAUTHORIZED,
            message: format!(
                "log in first (POST {}): the account comes from the session",
                crate::session::LOGIN_PATH
            ),
        })
    }
}

/// `router` with [`CONSENT_PATH`] and [`CALLBACK_PATH`], and the login of the sessions
/// (`POST /login`, `POST /logout`).
pub fn with_consent(router: Router, endpoints: Arc<ConsentEndpoints>) -> Router {
    let router = with_login(router, endpoints.sessions.clone());
    router.merge(
        Router::new()
            .route(CONSENT_PATH, get(start))
            .route(CALLBACK_PATH, get(callback))
            .with_state(endpoints),
    )
}

/// The answer of `GET /callback`: the account now connected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Connected {
    /// The account.
    pub account: String,
    /// The scopes granted.
    pub scopes: Vec<String>,
    /// The eBay user who granted them (getUser's `username`).
    pub ebay_username: String,
}

async fn start(
    State(endpoints): State<Arc<ConsentEndpoints>>,
    headers: HeaderMap,
) -> Result<Redirect, ApiError> {
    // Never a parameter of the request: the session's account.
    let account = endpoints.logged_in(&headers)?;
    let request = endpoints
        .client
        .consent_request(&endpoints.scopes)
        .map_err(|e| consent_error(&e))?
        .with_account(account)
        .with_ttl(endpoints.ttl);
    endpoints
        .store
        .refresh_tokens()
        .save_consent(&request)
        .await
        .map_err(|e| consent_error(&e))?;
    Ok(Redirect::to(request.url().as_str()))
}

async fn callback(
    State(endpoints): State<Arc<ConsentEndpoints>>,
    headers: HeaderMap,
    uri: Uri,
) -> Result<Json<Connected>, ApiError> {
    let session = endpoints.logged_in(&headers)?;
    let redirect = uri.query().unwrap_or_default();
    let store = endpoints.store.refresh_tokens();
    let (request, code) = endpoints
        .client
        .complete_consent(&*store, redirect)
        .await
        .map_err(|e| consent_error(&e))?;
    // A consent started by another account (its consent page sent to this seller) stores
    // nothing: its token would be this seller's eBay account under the other's name.
    if request.account() != Some(session.as_str()) {
        return Err(ApiError {
            status: StatusCode::FORBIDDEN,
            message: "this consent was started by another account; start your own at /consent"
                .into(),
        });
    }
    let account = session;
    let provider = Arc::new(UserTokenProvider::new(
        endpoints.client.clone(),
        store.clone(),
        &account,
    ));
    provider
        .exchange_code(&code, request.scopes())
        .await
        .map_err(|e| consent_error(&e))?;
    // The eBay user of the new token, recorded with the account; without it a deletion
    // notification would not find the account, so the token is not kept.
    let recorded = async {
        let base_url = identity_base_url(endpoints.client.endpoints().base_url().as_str());
        let api = ApiClient::new(ClientConfig::for_base_url(&base_url)?, provider)?;
        let user = get_user(&api).await?;
        endpoints.store.record_ebay_user(&account, &user).await?;
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(user)
    }
    .await;
    let user = match recorded {
        Ok(user) => user,
        Err(e) => {
            let _ = store.remove(&account).await;
            return Err(ApiError {
                status: StatusCode::BAD_GATEWAY,
                message: format!(
                    "the eBay user of the consent could not be recorded ({e}); nothing was kept: \
                     start the consent again"
                ),
            });
        }
    };
    Ok(Json(Connected {
        account,
        scopes: request.scopes().iter().map(str::to_owned).collect(),
        ebay_username: user.username,
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
