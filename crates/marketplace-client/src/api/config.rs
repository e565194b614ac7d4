//! Where the service's REST APIs live and how patient a request is: base URL, time-outs, the
//! body limit and the retry policy.

use std::time::Duration;

use url::Url;

use super::ApiError;
use crate::oauth::{Endpoints, OAuthConfig};
use crate::taxonomy::{
    DEFAULT_BACKOFF_BASE, DEFAULT_BACKOFF_CAP, DEFAULT_CONNECT_TIMEOUT, DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_RETRIES, DEFAULT_MAX_RETRY_AFTER, DEFAULT_REQUEST_TIMEOUT,
};

/// The settings of an [`ApiClient`](super::ApiClient): the API host and the transport and
/// retry settings every request of the client shares.
///
/// The taxonomy client runs its requests with the [`ApiConfig`] its
/// [`TaxonomyConfig`](crate::taxonomy::TaxonomyConfig) derives
/// ([`TaxonomyConfig::api_config`](crate::taxonomy::TaxonomyConfig::api_config)): the same
/// fields, with the same names and defaults, so a setting means the same in both.
///
/// ```
/// use std::time::Duration;
/// use marketplace_client::api::ApiConfig;
/// let config = ApiConfig::for_base_url("http://127.0.0.1:8080")
///     .unwrap()
///     .with_max_retries(5)
///     .with_backoff(Duration::from_millis(1), Duration::from_millis(10));
/// assert_eq!(config.base_url.as_str(), "http://127.0.0.1:8080/");
/// assert_eq!(ApiConfig::sandbox().base_url.as_str(), "https://api.sandbox.ebay.com/");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApiConfig {
    /// The API host, ending with `/`; a request's path is below it.
    pub base_url: Url,
    /// Time allowed to open a connection.
    pub connect_timeout: Duration,
    /// Total time allowed for one request, from sending to the last byte of the body (a
    /// request can set its own: [`ApiRequest::timeout`](super::ApiRequest::timeout)).
    pub timeout: Duration,
    /// Largest response body accepted (after decompression); a larger one ends the call with
    /// [`ApiError::BodyTooLarge`].
    pub max_body_bytes: u64,
    /// Retries after the first attempt for 429, 5xx, connection failures and cut-off bodies.
    pub max_retries: u32,
    /// The first back-off delay's upper bound; it doubles with each retry.
    pub backoff_base: Duration,
    /// The largest back-off delay.
    pub backoff_cap: Duration,
    /// The longest `Retry-After` waited for; a longer one ends the call with
    /// [`ApiError::RateLimited`].
    pub max_retry_after: Duration,
}

impl ApiConfig {
    /// The defaults for the API host `base_url` (which should end with `/`; one is added).
    pub fn new(base_url: Url) -> Self {
        Self {
            base_url: with_trailing_slash(base_url),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            timeout: DEFAULT_REQUEST_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_retries: DEFAULT_MAX_RETRIES,
            backoff_base: DEFAULT_BACKOFF_BASE,
            backoff_cap: DEFAULT_BACKOFF_CAP,
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
        }
    }

    /// Production (`https://api.ebay.com`).
    pub fn production() -> Self {
        Self::from_endpoints(&Endpoints::production())
    }

    /// The sandbox (`https://api.sandbox.ebay.com`).
    pub fn sandbox() -> Self {
        Self::from_endpoints(&Endpoints::sandbox())
    }

    /// The API host of the OAuth endpoints.
    pub fn from_endpoints(endpoints: &Endpoints) -> Self {
        Self::new(endpoints.base_url().clone())
    }

    /// The API host of an OAuth configuration (for example [`OAuthConfig::from_env`]).
    pub fn from_oauth_config(config: &OAuthConfig) -> Self {
        Self::from_endpoints(&config.endpoints)
    }

    /// Any API host, checked like [`Endpoints::custom`]: `https`, or `http` on loopback only.
    pub fn for_base_url(base_url: &str) -> Result<Self, ApiError> {
        let endpoints = Endpoints::custom(base_url, base_url)
            .map_err(|e| ApiError::OAuth(crate::oauth::OAuthError::Config(e)))?;
        Ok(Self::from_endpoints(&endpoints))
    }

    /// Sets the connect time-out.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sets the total time-out of one request.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the body size limit.
    pub fn with_max_body_bytes(mut self, limit: u64) -> Self {
        self.max_body_bytes = limit;
        self
    }

    /// Sets the number of retries (0: one attempt only; a 401 is still retried once with a
    /// new token).
    pub fn with_max_retries(mut self, retries: u32) -> Self {
        self.max_retries = retries;
        self
    }

    /// Sets the back-off base and cap (tests use a millisecond).
    pub fn with_backoff(mut self, base: Duration, cap: Duration) -> Self {
        self.backoff_base = base;
        self.backoff_cap = cap;
        self
    }

    /// Sets the longest `Retry-After` waited for.
    pub fn with_max_retry_after(mut self, limit: Duration) -> Self {
        self.max_retry_after = limit;
        self
    }
}

/// `base_url` with a path that ends with `/`.
pub(crate) fn with_trailing_slash(mut base_url: Url) -> Url {
    if !base_url.path().ends_with('/') {
        let path = format!("{}/", base_url.path());
        base_url.set_path(&path);
    }
    base_url
}
