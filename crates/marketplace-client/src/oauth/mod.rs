//! OAuth 2.0 for the marketplace: application tokens, the user-consent flow and refresh, with
//! secrets that cannot be printed by accident.
//!
//! # Application tokens (client-credentials grant)
//!
//! Read-only APIs such as taxonomy take an application token. [`ApplicationTokenProvider`]
//! requests one (`POST {base_url}/identity/v1/oauth2/token`, `grant_type=client_credentials`),
//! caches it per scope set, and renews it about 5 minutes before it expires, with one request
//! per expiry however many threads ask.
//!
//! ```no_run
//! use marketplace_client::oauth::{AccessTokenSource, ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig};
//!
//! # fn main() -> Result<(), marketplace_client::oauth::OAuthError> {
//! let config = OAuthConfig::new(Endpoints::production()).with_credentials("MyApp-PRD-1", "PRD-cert-id");
//! let client = OAuthClient::from_config(&config)?;
//! let provider = ApplicationTokenProvider::new(client);
//! let token = provider.access_token()?;
//! let _header = format!("Bearer {}", token.secret());
//! # Ok(()) }
//! ```
//!
//! The same from the environment (`MARKETPLACE_CLIENT_ID`, `MARKETPLACE_CLIENT_SECRET`, …; see
//! [`OAuthConfig`] for the list and the SDK file format), which also honours a ready
//! `MARKETPLACE_ACCESS_TOKEN`:
//!
//! ```no_run
//! # fn main() -> Result<(), marketplace_client::oauth::OAuthError> {
//! use marketplace_client::oauth::{AccessTokenSource, ApplicationTokenProvider, OAuthConfig};
//! let source = ApplicationTokenProvider::source(&OAuthConfig::from_env()?)?;
//! let token = source.access_token()?;
//! # let _ = token; Ok(()) }
//! ```
//!
//! # User tokens (authorization-code flow and refresh)
//!
//! Read/write APIs take a user token. Once per seller: send the seller to the consent URL,
//! take the address the browser lands on, check its `state`, exchange the code and store the
//! refresh token (the `consent` command does all of this). Then [`UserTokenProvider`] renews
//! the access token from the stored refresh token whenever needed.
//!
//! ```no_run
//! use std::sync::Arc;
//! use marketplace_client::oauth::*;
//!
//! # fn main() -> Result<(), OAuthError> {
//! let config = OAuthConfig::new(Endpoints::production())
//!     .with_credentials("MyApp-PRD-1", "PRD-cert-id")
//!     .with_redirect_uri("My_Company-MyApp-PRD-abcdefg"); // the RuName
//! let client = Arc::new(OAuthClient::from_config(&config)?);
//! let scopes = ScopeSet::new(["https://api.ebay.com/oauth/api_scope/sell.inventory"]);
//!
//! // 1. The consent URL, with a fresh random state.
//! let request = client.consent_request(&scopes)?;
//! println!("open {}", request.url());
//!
//! // 2. The address the browser ended on; its state is checked in constant time.
//! let landed = "https://example.com/accepted?state=…&code=v%5E1.1%23i%5E1…&expires_in=299";
//! let code = request.complete(landed)?;
//!
//! // 3. Exchange the code; the refresh token goes to the store (mode 0600).
//! let store = Arc::new(FileStore::new("refresh-tokens.json"));
//! let provider = UserTokenProvider::new(client.clone(), store, "seller-1");
//! provider.exchange_code(&code, request.scopes())?;
//!
//! // 4. From now on, and in later runs: a current user token, refreshed as needed.
//! let token = provider.access_token()?;
//! # let _ = token; Ok(()) }
//! ```
//!
//! # Secrets
//!
//! [`ClientSecret`], [`AccessToken`], [`RefreshToken`], [`AuthorizationCode`] and
//! [`CsrfState`] print as `TypeName([redacted])` with `{:?}`, have no `Display` (so
//! `format!("Bearer {token}")` does not compile), zero their memory on drop and give their
//! value only through `.secret()`. [`OAuthError`] never holds one: every text that came from
//! the server passes one sanitizer that knows every secret of the request, and is cut to 512
//! bytes.
//!
//! ```
//! use marketplace_client::oauth::ClientSecret;
//! let s = ClientSecret::new("PRD-1234");
//! assert_eq!(format!("{s:?}"), "ClientSecret([redacted])");
//! ```
#![doc = "\n# Guide\n"]
#![doc = include_str!("../../docs/oauth.md")]

pub(crate) mod config;
pub(crate) mod consent;
pub(crate) mod error;
mod pending;
pub(crate) mod redact;
mod scope;
pub(crate) mod secret;
pub(crate) mod shared;
mod store;

pub use crate::HttpOptions;
pub use crate::blocking::oauth::OAuthClient;
pub use crate::blocking::provider::{ApplicationTokenProvider, UserTokenProvider};
pub use crate::blocking::source::AccessTokenSource;
pub use crate::core::cache::CachedToken;
pub(crate) use crate::core::cache::Clock;
pub(crate) use crate::core::token::MAX_RETRY_AFTER;
pub use crate::core::token::TokenResponse;
pub(crate) use config::Credentials;
pub use config::{Endpoints, Environment, OAuthConfig};
pub(crate) use config::{is_loopback, require_redirect_uri};
pub use consent::ConsentRequest;
pub use error::{ConfigError, Grant, OAuthError, OAuthErrorCode, StoreError};
pub use scope::ScopeSet;
pub use secret::{AccessToken, AuthorizationCode, ClientId, ClientSecret, CsrfState, RefreshToken};
pub use shared::{SharedCacheError, SharedToken, SharedTokenCache, SharedTokenRequest};
pub use store::{FileStore, MemoryStore, RefreshTokenStore, StoredRefreshToken};

/// Locks `m`, taking the data of a poisoned mutex as it is (every critical section of this
/// module leaves its data consistent, so a panic elsewhere is no reason to fail here).
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
