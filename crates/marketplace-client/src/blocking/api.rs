//! The blocking client of the generic request: the async [`ApiClient`](crate::aio::api::ApiClient)
//! (the one retry loop) driven on the blocking front's runtime.

use std::sync::Arc;

use super::Driver;
use super::bridge::Source;
#[cfg(feature = "test-util")]
use super::sleep::Sleeper;
use crate::aio::api as aio;
use crate::api::{ApiError, ApiRequest, ApiResponse, ClientConfig};
use crate::oauth::{AccessTokenSource, HttpOptions};

/// A blocking client of the service's REST APIs: sends any [`ApiRequest`] with the bearer
/// token of its [`AccessTokenSource`] (an application token source, or a user token
/// provider for the Sell APIs).
///
/// * A 401 makes the client [`invalidate`](AccessTokenSource::invalidate) the token, get a new
///   one and try once more (this does not count as a retry).
/// * 429, 5xx, connection failures and cut-off bodies are retried up to
///   [`ClientConfig::max_retries`] times, waiting `Retry-After` when the answer has one and
///   otherwise a random delay in `[0, min(cap, base · 2^n)]` (exponential back-off with full
///   jitter). Time-outs are not retried. A retried `POST` is sent again: the service's
///   idempotent calls (`PUT`, `DELETE`) are the safe ones to retry.
/// * The body is read incrementally; past [`ClientConfig::max_body_bytes`] the call fails with
///   [`ApiError::BodyTooLarge`].
/// * Redirects are never followed (the token would follow them).
///
/// The client is `Send + Sync`. See the [module](crate::api) for an example.
pub struct ApiClient {
    inner: aio::ApiClient,
    driver: Driver,
}

impl std::fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.inner.fmt(f)
    }
}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<ApiClient>();
};

impl ApiClient {
    /// A client of the API host of `config` that takes its tokens from `tokens`.
    pub fn new(config: ClientConfig, tokens: Arc<dyn AccessTokenSource>) -> Result<Self, ApiError> {
        Self::with_options(config, tokens, HttpOptions::default())
    }

    /// A client with its own HTTP options (proxy, user agent, extra root certificates); the
    /// time-outs are the configuration's ([`ClientConfig::timeout`],
    /// [`ClientConfig::connect_timeout`]).
    pub fn with_options(
        config: ClientConfig,
        tokens: Arc<dyn AccessTokenSource>,
        options: HttpOptions,
    ) -> Result<Self, ApiError> {
        let url = config.base_url.to_string();
        let inner = aio::ApiClient::with_options(config, Arc::new(Source(tokens)), options)?;
        let driver = Driver::shared().map_err(|message| ApiError::Transport { url, message })?;
        Ok(Self { inner, driver })
    }

    /// Replaces the way the client waits between attempts (tests pass a
    /// [`RecordingSleeper`](crate::test_util::RecordingSleeper); feature `test-util`).
    #[cfg(feature = "test-util")]
    pub fn with_sleeper(self, sleeper: Arc<dyn Sleeper>) -> Self {
        self.map(|inner| inner.with_sleeper(sleeper))
    }

    /// Signs every request with `key` (feature `signing`): the signature eBay requires on
    /// some calls for sellers in the EU and the UK (see [`crate::signing`]). Each attempt is
    /// signed when it is sent, with `created` from the clock, so a retry carries a new
    /// signature. eBay ignores a signature where it does not need one.
    #[cfg(feature = "signing")]
    pub fn with_signing_key(self, key: impl Into<Arc<crate::signing::SigningKey>>) -> Self {
        self.map(|inner| inner.with_signing_key(key))
    }

    /// Takes the signatures' `created` from `clock` (tests pass a
    /// [`ManualClock`](crate::test_util::ManualClock); features `signing` and `test-util`).
    #[cfg(all(feature = "signing", feature = "test-util"))]
    pub fn with_clock(self, clock: Arc<dyn crate::test_util::Clock>) -> Self {
        self.map(|inner| inner.with_clock(clock))
    }

    #[cfg(any(feature = "signing", feature = "test-util"))]
    fn map(self, f: impl FnOnce(aio::ApiClient) -> aio::ApiClient) -> Self {
        Self {
            inner: f(self.inner),
            driver: self.driver,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig {
        self.inner.config()
    }

    /// Sends `request` and returns its 2xx answer; any other status is an [`ApiError`]
    /// ([`ApiError::Service`] with the service's error body, [`ApiError::Signature`] when
    /// that body says a digital signature was missing or refused, [`ApiError::Http`] without
    /// one, [`ApiError::RateLimited`] for a 429 still refused after the retries).
    pub fn send(&self, request: ApiRequest) -> Result<ApiResponse, ApiError> {
        let url = self.inner.config().base_url.to_string();
        self.wait(&url, self.inner.send(request))
    }

    /// createSigningKey (Key Management API, feature `signing`) with `cipher`, `ED25519`
    /// (what eBay recommends) or `RSA`, with an application token, on the API host that serves
    /// it (`https://apiz.ebay.com`). eBay shows the private key this once: store
    /// [`NewSigningKey::private_key`](crate::signing::NewSigningKey::private_key) before anything
    /// else.
    #[cfg(feature = "signing")]
    pub fn create_signing_key(
        &self,
        cipher: &str,
    ) -> Result<crate::signing::NewSigningKey, ApiError> {
        use crate::signing::key_management;
        key_management::created(&self.send(key_management::create(cipher))?)
    }

    /// getSigningKey (feature `signing`): the key `signing_key_id`, without its private key.
    #[cfg(feature = "signing")]
    pub fn signing_key(
        &self,
        signing_key_id: &str,
    ) -> Result<crate::signing::SigningKeyInfo, ApiError> {
        use crate::signing::key_management;
        key_management::one(&self.send(key_management::get(signing_key_id))?)
    }

    /// getSigningKeys (feature `signing`): every key of the application, without their
    /// private keys.
    #[cfg(feature = "signing")]
    pub fn signing_keys(&self) -> Result<Vec<crate::signing::SigningKeyInfo>, ApiError> {
        use crate::signing::key_management;
        key_management::many(&self.send(key_management::list())?)
    }

    /// Waits for `call` (a call to `url`) on the blocking front's runtime.
    fn wait<T: Send>(
        &self,
        url: &str,
        call: impl std::future::Future<Output = Result<T, ApiError>> + Send,
    ) -> Result<T, ApiError> {
        self.driver.wait(call, |message| ApiError::Transport {
            url: url.to_owned(),
            message,
        })
    }
}
