//! The blocking client of the generic request: an [`ApiRequest`] sent through reqwest's
//! blocking client (off a tokio runtime's threads) with the core's renewal on 401 and
//! retries. The one retry loop of the blocking front: the taxonomy client sends through it.

use std::sync::Arc;
use std::time::Instant;

use super::sleep::{Sleeper, ThreadSleeper};
use super::transport::Http;
use crate::api::{ApiError, ApiRequest, ApiResponse, ClientConfig};
use crate::core::api::{ApiCall, Fetched};
use crate::core::retry::{Attempts, Next};
use crate::core::signer::Signer;
use crate::oauth::redact::Redactor;
use crate::oauth::{AccessTokenSource, HttpOptions};

/// One attempt of a call: the request, its sanitizer and its span, to a result.
pub(crate) type Attempt<'a, T> =
    dyn FnMut(http::Request<Vec<u8>>, Redactor, &tracing::Span) -> Result<T, ApiError> + Send + 'a;

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
    config: ClientConfig,
    tokens: Arc<dyn AccessTokenSource>,
    http: Http,
    sleeper: Arc<dyn Sleeper>,
    signer: Signer,
}

impl std::fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
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
        let options = options
            .with_timeout(config.timeout)
            .with_connect_timeout(config.connect_timeout);
        // The requests carry a bearer token: the client never follows a redirect with it.
        let http = super::transport::client(&config.base_url, &options).map_err(|message| {
            ApiError::Transport {
                url: config.base_url.to_string(),
                message,
            }
        })?;
        Ok(Self {
            config,
            tokens,
            http,
            sleeper: Arc::new(ThreadSleeper),
            signer: Signer::default(),
        })
    }

    /// Replaces the way the client waits between attempts (tests pass a
    /// [`RecordingSleeper`](crate::test_util::RecordingSleeper); feature `test-util`).
    #[cfg(feature = "test-util")]
    pub fn with_sleeper(mut self, sleeper: Arc<dyn Sleeper>) -> Self {
        self.sleeper = sleeper;
        self
    }

    /// Signs every request with `key` (feature `signing`): the signature eBay requires on
    /// some calls for sellers in the EU and the UK (see [`crate::signing`]). Each attempt is
    /// signed when it is sent, with `created` from the clock, so a retry carries a new
    /// signature. eBay ignores a signature where it does not need one.
    #[cfg(feature = "signing")]
    pub fn with_signing_key(mut self, key: impl Into<Arc<crate::signing::SigningKey>>) -> Self {
        self.signer = self.signer.with_key(key.into());
        self
    }

    /// Takes the signatures' `created` from `clock` (tests pass a
    /// [`ManualClock`](crate::test_util::ManualClock); features `signing` and `test-util`).
    #[cfg(all(feature = "signing", feature = "test-util"))]
    pub fn with_clock(mut self, clock: Arc<dyn crate::test_util::Clock>) -> Self {
        self.signer = self.signer.with_clock(clock);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// Sends `request` and returns its 2xx answer; any other status is an [`ApiError`]
    /// ([`ApiError::Service`] with the service's error body, [`ApiError::Signature`] when
    /// that body says a digital signature was missing or refused, [`ApiError::Http`] without
    /// one, [`ApiError::RateLimited`] for a 429 still refused after the retries).
    pub fn send(&self, request: ApiRequest) -> Result<ApiResponse, ApiError> {
        let call = ApiCall::from_request(&request, &self.config)?;
        self.fetch(&call).map(ApiResponse::new)
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

    /// The HTTP client (for a call that reads its answer its own way).
    pub(crate) fn http(&self) -> &Http {
        &self.http
    }

    /// Sends `call` (see [`send_call`](Self::send_call)) and reads its answer whole, within
    /// its limits.
    pub(crate) fn fetch(&self, call: &ApiCall) -> Result<Fetched, ApiError> {
        self.send_call(call, &mut |request, redactor, span| {
            let started = Instant::now();
            let outcome =
                super::transport::exchange(&self.http, request, call.timeout, call.limits);
            call.finish(outcome, redactor, span, started.elapsed())
        })
    }

    /// Sends `call` with the core's renewal on 401 and retries ([`Attempts`]); `attempt`
    /// makes one attempt in its span. On a thread of its own when a tokio runtime is current
    /// (reqwest's blocking client panics on a runtime's thread; see
    /// [`super::transport::off_runtime`]). Every call of the blocking front's API clients
    /// goes through here.
    pub(crate) fn send_call<T: Send>(
        &self,
        call: &ApiCall,
        attempt: &mut Attempt<'_, T>,
    ) -> Result<T, ApiError> {
        super::transport::off_runtime(
            || {
                let mut token = self.tokens.access_token()?;
                let mut attempts = Attempts::new(&self.config);
                loop {
                    let (mut request, redactor) = call.request(&token)?;
                    self.signer.sign(&mut request)?;
                    let span = call.span(attempts.attempt());
                    let result = span.in_scope(|| attempt(request, redactor, &span));
                    let error = match result {
                        Ok(done) => return Ok(done),
                        Err(e) => e,
                    };
                    match attempts.after(&error) {
                        Next::Renew => {
                            self.tokens.invalidate(&token);
                            token = self.tokens.access_token()?;
                        }
                        Next::Wait(delay) => self.sleeper.sleep(delay),
                        Next::Fail => return Err(error),
                    }
                }
            },
            |message| ApiError::Transport {
                url: call.url.to_string(),
                message,
            },
        )
    }
}
