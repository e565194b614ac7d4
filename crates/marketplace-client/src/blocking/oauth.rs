//! The blocking client of the token endpoint: the async one ([`crate::aio::oauth::OAuthClient`])
//! driven on the blocking front's runtime.

use std::sync::Arc;
use std::time::Duration;

use super::Driver;
use crate::aio::oauth as aio;
use crate::core::token::{DEFAULT_TIMEOUT, TokenResponse};
use crate::oauth::consent::{complete_taken, redirect_state};
use crate::oauth::{
    AuthorizationCode, ClientId, ConsentRequest, Endpoints, HttpOptions, OAuthConfig, OAuthError,
    RefreshToken, RefreshTokenStore, ScopeSet,
};

/// A client of the token endpoint for one application.
///
/// ```no_run
/// use marketplace_client::oauth::{Endpoints, OAuthClient, OAuthConfig, ScopeSet};
/// # fn main() -> Result<(), marketplace_client::oauth::OAuthError> {
/// let config = OAuthConfig::new(Endpoints::sandbox()).with_credentials("MyApp-SBX-1", "SBX-secret");
/// let client = OAuthClient::from_config(&config)?;
/// // An application token for the default scope ({base_url}/oauth/api_scope).
/// let token = client.client_credentials(&ScopeSet::default())?;
/// println!("valid for {} s", token.expires_in.as_secs());
/// # Ok(()) }
/// ```
pub struct OAuthClient {
    /// The async client, shared with the providers built over this one.
    pub(crate) inner: Arc<aio::OAuthClient>,
    pub(crate) driver: Driver,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

impl OAuthClient {
    /// A client with the endpoints and credentials of `config` and the default time-out
    /// (30 s); [`OAuthError::Config`] naming the missing setting when `config` has no
    /// application id or no certificate id.
    pub fn from_config(config: &OAuthConfig) -> Result<Self, OAuthError> {
        Self::with_timeout(config, DEFAULT_TIMEOUT)
    }

    /// [`from_config`](Self::from_config) with requests that give up after `timeout`. A
    /// time-out too long for the clock (up to [`Duration::MAX`]) is taken as no deadline
    /// beyond what the HTTP client allows.
    pub fn with_timeout(config: &OAuthConfig, timeout: Duration) -> Result<Self, OAuthError> {
        Self::with_options(config, HttpOptions::default().with_timeout(timeout))
    }

    /// [`from_config`](Self::from_config) with its own HTTP options (time-outs, proxy, user
    /// agent, extra root certificates).
    pub fn with_options(config: &OAuthConfig, options: HttpOptions) -> Result<Self, OAuthError> {
        let inner = Arc::new(aio::OAuthClient::with_options(config, options)?);
        let driver = Driver::shared().map_err(transport)?;
        Ok(Self { inner, driver })
    }

    /// The endpoints.
    pub fn endpoints(&self) -> &Endpoints {
        self.inner.endpoints()
    }

    /// The application id.
    pub fn client_id(&self) -> &ClientId {
        self.inner.client_id()
    }

    /// The redirect URI (RuName) of the consent flow, if configured.
    pub fn redirect_uri(&self) -> Option<&str> {
        self.inner.redirect_uri()
    }

    /// Requests an application token (the client-credentials grant of the Identity API,
    /// "Getting an application access token"): `grant_type=client_credentials` and `scope`.
    /// An empty `scopes` asks for the default scope `{base_url}/oauth/api_scope`.
    pub fn client_credentials(&self, scopes: &ScopeSet) -> Result<TokenResponse, OAuthError> {
        self.driver
            .wait(self.inner.client_credentials(scopes), transport)
    }

    /// Exchanges an authorization code for a user token (the authorization-code grant,
    /// "Exchanging the authorization code for a user access token"):
    /// `grant_type=authorization_code`, `code` and the configured `redirect_uri`.
    pub fn exchange_code(&self, code: &AuthorizationCode) -> Result<TokenResponse, OAuthError> {
        self.driver.wait(self.inner.exchange_code(code), transport)
    }

    /// Gets a new user access token from a refresh token (the refresh-token grant,
    /// "Refreshing a user access token"): `grant_type=refresh_token`, `refresh_token` and
    /// `scope`.
    ///
    /// `scopes` must be the scopes granted at consent or a subset of them (asking for more is
    /// answered with `invalid_scope`). An empty set leaves `scope` out, which RFC 6749 §6
    /// defines as "the scopes originally granted"; the service documents `scope` as required,
    /// so pass the granted scopes.
    pub fn refresh(
        &self,
        refresh_token: &RefreshToken,
        scopes: &ScopeSet,
    ) -> Result<TokenResponse, OAuthError> {
        self.driver
            .wait(self.inner.refresh(refresh_token, scopes), transport)
    }
}

/// A failure of the runtime's threads, as the token calls report a transport failure.
pub(crate) fn transport(message: String) -> OAuthError {
    OAuthError::Transport { message }
}

impl OAuthClient {
    /// A consent request for `scopes` (empty: the default scope) with a fresh random state,
    /// sent to the configured redirect URI (the optional `prompt` and `locale`:
    /// [`ConsentRequest::with_prompt`], [`ConsentRequest::with_locale`]).
    pub fn consent_request(&self, scopes: &ScopeSet) -> Result<ConsentRequest, OAuthError> {
        self.inner.consent_request(scopes)
    }

    /// Completes a pending consent kept in `store` ([`RefreshTokenStore::save_consent`]),
    /// in whichever process the redirect (a full URL or its query string) landed: takes the
    /// request of the redirect's `state` out of the store, so that the redirect is used once
    /// (again: [`OAuthError::ConsentNotPending`]), refuses it once expired
    /// ([`OAuthError::ConsentExpired`]), checks the state in constant time and returns the
    /// request (its [`account`](ConsentRequest::account) and
    /// [`scopes`](ConsentRequest::scopes)) and the code to exchange
    /// ([`UserTokenProvider::exchange_code`](crate::oauth::UserTokenProvider::exchange_code)).
    /// A refusal of the user is [`OAuthError::ConsentDenied`], and uses the request too.
    pub fn complete_consent(
        &self,
        store: &dyn RefreshTokenStore,
        redirect: &str,
    ) -> Result<(ConsentRequest, AuthorizationCode), OAuthError> {
        let state = redirect_state(redirect)?;
        let taken = store.take_consent(&state)?;
        complete_taken(taken, redirect, std::time::SystemTime::now())
    }
}
