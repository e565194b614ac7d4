//! The blocking client of the generic request: the async [`ApiClient`](crate::aio::api::ApiClient)
//! (the one retry loop) driven on the blocking front's runtime.

use std::sync::Arc;

use super::Driver;
use crate::aio::api as aio;
#[cfg(doc)]
use crate::api::ClientConfig;
use crate::api::{ApiError, ApiRequest, ApiResponse};
#[cfg(doc)]
use crate::oauth::AccessTokenSource;

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
    pub(crate) inner: aio::ApiClient,
    pub(crate) driver: Driver,
}

super::client_wrapper!(ApiClient, aio::ApiClient);

impl ApiClient {
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

    fn map(self, f: impl FnOnce(aio::ApiClient) -> aio::ApiClient) -> Self {
        Self {
            inner: f(self.inner),
            driver: self.driver,
        }
    }

    /// Draws every call from `budget` (for `user`, if given): see the async
    /// [`with_budget`](crate::aio::api::ApiClient::with_budget).
    pub fn with_budget(
        self,
        budget: Arc<marketplace_budget::CallBudget>,
        user: Option<&str>,
    ) -> Self {
        self.map(|inner| inner.with_budget(budget, user))
    }

    /// getRateLimits (Analytics API): see the async
    /// [`rate_limits`](crate::aio::api::ApiClient::rate_limits).
    pub fn rate_limits(
        &self,
        api_context: Option<&str>,
        api_name: Option<&str>,
    ) -> Result<marketplace_budget::RateLimitsResponse, ApiError> {
        self.wait(self.inner.rate_limits(api_context, api_name))
    }

    /// getUserRateLimits (Analytics API): see the async
    /// [`user_rate_limits`](crate::aio::api::ApiClient::user_rate_limits).
    pub fn user_rate_limits(
        &self,
        api_context: Option<&str>,
        api_name: Option<&str>,
    ) -> Result<marketplace_budget::RateLimitsResponse, ApiError> {
        self.wait(self.inner.user_rate_limits(api_context, api_name))
    }

    /// Reads this client's quotas into its budget: see the async
    /// [`refresh_budget`](crate::aio::api::ApiClient::refresh_budget).
    pub fn refresh_budget(&self) -> Result<usize, ApiError> {
        self.wait(self.inner.refresh_budget())
    }

    /// Sends `request` and returns its 2xx answer; any other status is an [`ApiError`]
    /// ([`ApiError::Service`] with the service's error body, [`ApiError::Signature`] when
    /// that body says a digital signature was missing or refused, [`ApiError::Http`] without
    /// one, [`ApiError::RateLimited`] for a 429 still refused after the retries).
    pub fn send(&self, request: ApiRequest) -> Result<ApiResponse, ApiError> {
        self.wait(self.inner.send(request))
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
        self.wait(self.inner.create_signing_key(cipher))
    }

    /// getSigningKey (feature `signing`): the key `signing_key_id`, without its private key.
    #[cfg(feature = "signing")]
    pub fn signing_key(
        &self,
        signing_key_id: &str,
    ) -> Result<crate::signing::SigningKeyInfo, ApiError> {
        self.wait(self.inner.signing_key(signing_key_id))
    }

    /// getSigningKeys (feature `signing`): every key of the application, without their
    /// private keys.
    #[cfg(feature = "signing")]
    pub fn signing_keys(&self) -> Result<Vec<crate::signing::SigningKeyInfo>, ApiError> {
        self.wait(self.inner.signing_keys())
    }
}

/// The signing-key file's calls on this front (feature `signing`): the async ones, waited for
/// on the blocking front's runtime.
#[cfg(feature = "signing")]
impl crate::signing::SigningKeyFile {
    /// The key to sign with (blocking front): the newest stored key unless it is within 30
    /// days of its expiry; otherwise a new one created with createSigningKey through `api`
    /// (an application token suffices), saved, then returned. Should the creation fail while
    /// the stored key has not expired, that key is returned (a warning is logged) and the
    /// creation tried again after [`RENEWAL_RETRY`](Self::RENEWAL_RETRY).
    pub fn signing_key(
        &self,
        api: &ApiClient,
    ) -> Result<crate::signing::SigningKey, crate::signing::SigningKeyStoreError> {
        let url = api.config().base_url.to_string();
        api.driver
            .wait(self.signing_key_async(&api.inner), |message| {
                ApiError::Transport { url, message }.into()
            })
    }

    /// Creates a new key now (blocking front), saves it and returns it; older keys are kept
    /// until they expire.
    pub fn rotate(
        &self,
        api: &ApiClient,
    ) -> Result<crate::signing::SigningKey, crate::signing::SigningKeyStoreError> {
        let url = api.config().base_url.to_string();
        api.driver.wait(self.rotate_async(&api.inner), |message| {
            ApiError::Transport { url, message }.into()
        })
    }
}
