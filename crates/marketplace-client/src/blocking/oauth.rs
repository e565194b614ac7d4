//! The blocking client of the token endpoint: it sends the core's token requests through
//! reqwest's blocking client (off a tokio runtime's threads) and hands the answers back.

use std::time::{Duration, Instant};

use crate::core::token::{self, DEFAULT_TIMEOUT, TokenCall, TokenResponse};
use crate::oauth::{
    AuthorizationCode, ClientId, Credentials, Endpoints, HttpOptions, OAuthConfig, OAuthError,
    RefreshToken, ScopeSet,
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
    endpoints: Endpoints,
    credentials: Credentials,
    http: super::transport::Http,
    /// Bounds each whole call, body included.
    timeout: Duration,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("endpoints", &self.endpoints)
            .field("credentials", &self.credentials)
            .finish_non_exhaustive()
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
        let credentials = config.credentials()?;
        let endpoints = config.endpoints.clone();
        // A token request carries credentials: the client never follows a redirect with them.
        let http = super::transport::client(endpoints.base_url(), &options)
            .map_err(|message| OAuthError::Transport { message })?;
        Ok(Self {
            endpoints,
            credentials,
            http,
            timeout: options.timeout,
        })
    }

    /// The endpoints.
    pub fn endpoints(&self) -> &Endpoints {
        &self.endpoints
    }

    /// The application id.
    pub fn client_id(&self) -> &ClientId {
        &self.credentials.client_id
    }

    /// The redirect URI (RuName) of the consent flow, if configured.
    pub fn redirect_uri(&self) -> Option<&str> {
        self.credentials.redirect_uri.as_deref()
    }

    /// Requests an application token (the client-credentials grant of the Identity API,
    /// "Getting an application access token"): `grant_type=client_credentials` and `scope`.
    /// An empty `scopes` asks for the default scope `{base_url}/oauth/api_scope`.
    pub fn client_credentials(&self, scopes: &ScopeSet) -> Result<TokenResponse, OAuthError> {
        self.post(token::client_credentials(
            &self.endpoints,
            &self.credentials,
            scopes,
            self.timeout,
        )?)
    }

    /// Exchanges an authorization code for a user token (the authorization-code grant,
    /// "Exchanging the authorization code for a user access token"):
    /// `grant_type=authorization_code`, `code` and the configured `redirect_uri`.
    pub fn exchange_code(&self, code: &AuthorizationCode) -> Result<TokenResponse, OAuthError> {
        self.post(token::exchange_code(
            &self.endpoints,
            &self.credentials,
            code,
            self.timeout,
        )?)
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
        self.post(token::refresh(
            &self.endpoints,
            &self.credentials,
            refresh_token,
            scopes,
            self.timeout,
        )?)
    }

    /// One token request, on a thread of its own when a tokio runtime is current (reqwest's
    /// blocking client panics on a runtime's thread; see [`super::transport::off_runtime`]).
    fn post(&self, mut call: TokenCall) -> Result<TokenResponse, OAuthError> {
        super::transport::off_runtime(
            || {
                let span = call.span();
                let request = std::mem::take(&mut call.request);
                let started = Instant::now();
                let outcome = span.in_scope(|| {
                    super::transport::exchange(&self.http, request, call.timeout, call.limits())
                });
                call.finish(outcome, &span, started.elapsed())
            },
            |message| OAuthError::Transport { message },
        )
    }
}
