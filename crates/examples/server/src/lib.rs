//! An async backend over the toolkit: `GET /suggest?q=iphone%2015[&site=EBAY_US]` asks
//! getCategorySuggestions through [`marketplace_client::aio`] with one shared application
//! token, and answers only the suggestions that `taxonomy-data`'s compiled snapshot knows as
//! leaf categories of that site:
//!
//! ```json
//! {"site":"EBAY_US","q":"iphone 15","leaves":[{"id":9355,"name":"Cell Phones & Smartphones",
//!  "path":"Cell Phones & Accessories > Cell Phones & Smartphones"}],"dropped":[]}
//! ```
//!
//! `dropped` holds the ids the service suggested that are not leaves of the compiled
//! snapshot (or not in it at all). Errors are JSON `{"error": "…"}`: 400 for a missing `q`
//! or an unknown site, 502 (504 on a time-out) with the service's message when the upstream
//! call fails.
//!
//! eBay's Marketplace Account Deletion endpoint is mounted at [`NOTIFICATIONS_PATH`]
//! (`/ebay/notifications`) by [`with_notifications`]: the challenge, verified notifications
//! (the `marketplace-notifications` crate); a deletion removes the refresh token of every
//! account the deleted eBay user consented for.
//!
//! A seller logs in ([`session`]: `POST /login`, a signed session cookie) and connects their
//! eBay account through [`consent`]'s endpoints, mounted by [`with_consent`]: `GET /consent`
//! redirects to eBay's consent page for the session's account and `GET /callback` completes
//! the consent on whichever instance the redirect lands (the pending consent, the refresh
//! token and the eBay user in a store the instances share, [`TokenStore`]: PostgreSQL for a
//! fleet).
//!
//! The binary (`src/main.rs`) is a thin shell over [`router`]; the tests build the same
//! router.

pub mod consent;
pub mod session;
mod store;
pub use consent::{ConsentEndpoints, with_consent};
pub use session::Sessions;
pub use store::TokenStore;

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use fake_marketplace::FakeMarketplace;
use marketplace_client::Marketplace;
use marketplace_client::aio::api::ApiClient;
use marketplace_client::aio::oauth::{
    AccessTokenSource, ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig, ScopeSet,
};
use marketplace_client::aio::taxonomy::{ClientConfig, TaxonomyClient};
use marketplace_notifications::{
    Notification, NotificationEndpoint, PublicKeyCache, VerificationToken,
};
use serde::{Deserialize, Serialize};
use taxonomy_data::Site;

/// Where eBay's notifications are received (the path of the endpoint URL registered with
/// eBay).
pub const NOTIFICATIONS_PATH: &str = "/ebay/notifications";

/// The verification token of the `--fake` demo (a real one is the application's secret:
/// `EBAY_VERIFICATION_TOKEN`).
pub const FAKE_VERIFICATION_TOKEN: &str = "example-server_demo-verification-token_0001";

/// `router` with eBay's Marketplace Account Deletion endpoint at [`NOTIFICATIONS_PATH`].
pub fn with_notifications(router: Router, endpoint: Arc<NotificationEndpoint>) -> Router {
    router.merge(marketplace_notifications::axum::router(
        NOTIFICATIONS_PATH,
        endpoint,
    ))
}

/// The notification endpoint registered with eBay as `endpoint_url` (exactly that URL) with
/// `verification_token`, its public keys fetched with the application token of `oauth`. With
/// the consents' `store`, an account deletion removes the tokens of the accounts the deleted
/// eBay user consented for (recorded at consent), then is logged; without, only logged.
pub fn notification_endpoint(
    oauth: &OAuthConfig,
    endpoint_url: &str,
    verification_token: &str,
    store: Option<&TokenStore>,
) -> Result<Arc<NotificationEndpoint>, Box<dyn std::error::Error>> {
    let token = VerificationToken::new(verification_token)?;
    let tokens: Arc<dyn AccessTokenSource> = Arc::new(ApplicationTokenProvider::new(
        OAuthClient::from_config(oauth)?,
    ));
    let keys = PublicKeyCache::new(ApiClient::new(
        ClientConfig::from_oauth_config(oauth),
        tokens,
    )?);
    let mut endpoint = NotificationEndpoint::new(endpoint_url, token, Arc::new(keys))?;
    if let Some(store) = store {
        endpoint = store.delete_tokens_of_deleted_users(endpoint);
    }
    let endpoint = endpoint.on_notification(|notification: Notification| async move {
        // The application deletes what else it keeps of the user here.
        println!(
            "notification {} ({}) handled",
            notification.notification_id(),
            notification.topic()
        );
        Ok::<(), std::io::Error>(())
    });
    Ok(Arc::new(endpoint))
}

/// The configuration of the application of a running fake marketplace (its credentials and
/// URLs).
pub fn oauth_config_for_fake(
    fake: &FakeMarketplace,
) -> Result<OAuthConfig, Box<dyn std::error::Error>> {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url())?;
    Ok(OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret()))
}

/// [`notification_endpoint`] for a running fake marketplace and [`FAKE_VERIFICATION_TOKEN`].
pub fn notification_endpoint_for_fake(
    fake: &FakeMarketplace,
    endpoint_url: &str,
    store: Option<&TokenStore>,
) -> Result<Arc<NotificationEndpoint>, Box<dyn std::error::Error>> {
    notification_endpoint(
        &oauth_config_for_fake(fake)?,
        endpoint_url,
        FAKE_VERIFICATION_TOKEN,
        store,
    )
}

/// The consent endpoints for a running fake marketplace, with `redirect_uri` (a RuName the
/// fake maps to a `/callback`, or that URL itself), asking for the fake's `sell.inventory`
/// scope (and getUser's), the pending consents, refresh tokens and eBay users in `store`, for
/// the users of `sessions`.
pub fn consent_endpoints_for_fake(
    fake: &FakeMarketplace,
    redirect_uri: &str,
    store: TokenStore,
    sessions: Arc<Sessions>,
) -> Result<ConsentEndpoints, Box<dyn std::error::Error>> {
    let config = oauth_config_for_fake(fake)?.with_redirect_uri(redirect_uri);
    Ok(ConsentEndpoints::new(
        Arc::new(OAuthClient::from_config(&config)?),
        store,
        ScopeSet::new([fake.scope("/sell.inventory")]),
        sessions,
    ))
}

/// The marketplace asked when the request names none.
pub const DEFAULT_SITE: &str = "EBAY_US";

/// The longest keyword accepted (in characters); a longer one is a 400, not an upstream call.
pub const MAX_QUERY_CHARS: usize = 350;

/// A taxonomy client sharing one application token between every request.
///
/// The token provider caches the token and makes one request for all concurrent callers
/// (single flight), so a burst of requests to the server costs one token request.
pub fn shared_client(
    oauth: OAuthClient,
    taxonomy: ClientConfig,
) -> Result<Arc<TaxonomyClient>, marketplace_client::api::ApiError> {
    let tokens: Arc<dyn AccessTokenSource> = Arc::new(ApplicationTokenProvider::new(oauth));
    Ok(Arc::new(TaxonomyClient::new(taxonomy, tokens)?))
}

/// The client configured from the environment (`OAuthConfig::from_env`: the credentials
/// and the environment, production or sandbox).
pub fn client_from_env() -> Result<Arc<TaxonomyClient>, Box<dyn std::error::Error>> {
    let config = OAuthConfig::from_env()?;
    let oauth = OAuthClient::from_config(&config)?;
    Ok(shared_client(
        oauth,
        ClientConfig::from_oauth_config(&config),
    )?)
}

/// The client pointed at a running fake marketplace (its credentials and URLs).
pub fn client_for_fake(
    fake: &FakeMarketplace,
) -> Result<Arc<TaxonomyClient>, Box<dyn std::error::Error>> {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url())?;
    let oauth = OAuthClient::from_config(
        &OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret()),
    )?;
    Ok(shared_client(
        oauth,
        ClientConfig::for_base_url(&fake.base_url())?,
    )?)
}

/// The server's routes: `GET /suggest` over one shared client.
pub fn router(client: Arc<TaxonomyClient>) -> Router {
    Router::new()
        .route("/suggest", get(suggest))
        .with_state(client)
}

/// The query of `GET /suggest`.
#[derive(Debug, Deserialize)]
pub struct SuggestParams {
    /// The keyword(s).
    pub q: Option<String>,
    /// A marketplace id such as `EBAY_US` (ASCII case ignored); [`DEFAULT_SITE`] when absent.
    pub site: Option<String>,
}

/// One leaf category of the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Leaf {
    /// The category id.
    pub id: u32,
    /// Its name, as the service answered it.
    pub name: String,
    /// Its ancestors and itself, `A > B > C`, as the service answered them.
    pub path: String,
}

/// The answer of `GET /suggest`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SuggestAnswer {
    /// The marketplace id asked.
    pub site: String,
    /// The keyword(s), as received.
    pub q: String,
    /// The suggestions that are leaf categories of the compiled snapshot, in the service's order.
    pub leaves: Vec<Leaf>,
    /// The suggested ids that are not leaves of the compiled snapshot, or not in it.
    pub dropped: Vec<u32>,
}

/// An error answer: a status and `{"error": "…"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong.
    pub message: String,
}

impl ApiError {
    fn bad_request(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
        }
    }

    /// The answer to a failed upstream call: 504 on a time-out, else 502, with the service's
    /// own message when it sent one.
    pub fn upstream(error: &marketplace_client::api::ApiError) -> Self {
        let (status, message) = match error {
            marketplace_client::api::ApiError::Timeout { .. } => {
                (StatusCode::GATEWAY_TIMEOUT, error.to_string())
            }
            marketplace_client::api::ApiError::Service { status, errors, .. } => {
                let messages: Vec<&str> = errors
                    .iter()
                    .map(|e| e.long_message.as_deref().unwrap_or(&e.message))
                    .collect();
                (
                    StatusCode::BAD_GATEWAY,
                    format!(
                        "the taxonomy API answered {status}: {}",
                        messages.join("; ")
                    ),
                )
            }
            _ => (StatusCode::BAD_GATEWAY, error.to_string()),
        };
        Self { status, message }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (
            self.status,
            Json(serde_json::json!({ "error": self.message })),
        )
            .into_response()
    }
}

/// Whether `id` is a leaf category of `site` in the compiled snapshot.
pub fn is_compiled_leaf(site: Site, id: u32) -> bool {
    site.category(id).is_some_and(|c| c.is_leaf())
}

/// The site of a `site` parameter: 400 when unknown or left out of this build.
fn parse_site(site: Option<&str>) -> Result<Site, ApiError> {
    let text = site.unwrap_or(DEFAULT_SITE);
    let site = Site::from_marketplace_id(text)
        .ok_or_else(|| ApiError::bad_request(format!("unknown site {text:?}")))?;
    if !site.is_compiled_in() {
        return Err(ApiError::bad_request(format!(
            "site {} is not compiled into this build of taxonomy-data (TAXONOMY_SITES)",
            site.marketplace_id()
        )));
    }
    Ok(site)
}

async fn suggest(
    State(client): State<Arc<TaxonomyClient>>,
    params: Result<Query<SuggestParams>, QueryRejection>,
) -> Result<Json<SuggestAnswer>, ApiError> {
    let Query(params) = params
        .map_err(|e| ApiError::bad_request(format!("bad query string: {}", e.body_text())))?;
    let q = params.q.unwrap_or_default();
    if q.trim().is_empty() {
        return Err(ApiError::bad_request("missing keyword: /suggest?q=…"));
    }
    if q.chars().count() > MAX_QUERY_CHARS {
        return Err(ApiError::bad_request(format!(
            "keyword longer than {MAX_QUERY_CHARS} characters"
        )));
    }
    let site = parse_site(params.site.as_deref())?;
    let answer = client
        .category_suggestions(Marketplace::from(site), &q)
        .await
        .map_err(|e| ApiError::upstream(&e))?;
    let mut leaves = Vec::new();
    let mut dropped = Vec::new();
    for s in &answer.suggestions {
        if is_compiled_leaf(site, s.category.id) {
            leaves.push(Leaf {
                id: s.category.id,
                name: s.category.name.clone(),
                path: s.path(),
            });
        } else {
            dropped.push(s.category.id);
        }
    }
    Ok(Json(SuggestAnswer {
        site: site.marketplace_id().to_owned(),
        q,
        leaves,
        dropped,
    }))
}
