//! The service's REST APIs for async programs: the same [`ApiRequest`] and [`ApiResponse`]
//! as [`crate::api`], sent by an async [`ApiClient`] with the core's renewal on 401, retries
//! (waiting with `tokio::time::sleep`), limits, redaction and tracing.
//!
//! ```no_run
//! use std::sync::Arc;
//! use marketplace_client::Marketplace;
//! use marketplace_client::aio::api::{ApiClient, ClientConfig, ApiRequest};
//! use marketplace_client::aio::oauth::{FileStore, OAuthClient, OAuthConfig, UserTokenProvider};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let oauth = OAuthConfig::from_env()?;
//! let store = Arc::new(FileStore::new("/var/lib/my-backend/refresh-tokens.json"));
//! let tokens = Arc::new(UserTokenProvider::new(OAuthClient::from_config(&oauth)?, store, "seller-1"));
//! let api = ApiClient::new(ClientConfig::from_oauth_config(&oauth), tokens)?;
//! let item = api
//!     .send(ApiRequest::get_segments(["sell", "inventory", "v1", "inventory_item", "SKU 1/A"])
//!         .marketplace(Marketplace::Us))
//!     .await?;
//! println!("{}", item.text()?);
//! # Ok(()) }
//! ```

use std::future::Future;
use std::sync::Arc;
use std::time::Instant;

use tracing::Instrument as _;

use super::oauth::{AccessTokenSource, HttpOptions};
use crate::core::answer::Fetched;
use crate::core::api::ApiCall;
use crate::core::retry::{Attempts, Next};
use crate::core::signer::Signer;
use crate::oauth::redact::Redactor;

pub use crate::api::{ApiError, ApiRequest, ApiResponse, ClientConfig};

/// A client of the service's REST APIs for async programs: the async
/// [`crate::api::ApiClient`], with the same behaviour. `Send + Sync`: one client serves every
/// task.
pub struct ApiClient {
    config: ClientConfig,
    tokens: Arc<dyn AccessTokenSource>,
    http: reqwest::Client,
    signer: Signer,
    /// What waits between attempts instead of `tokio::time::sleep` (the blocking client's
    /// `with_sleeper`; feature `test-util`).
    #[cfg(feature = "test-util")]
    sleeper: Option<Arc<dyn crate::test_util::Sleeper>>,
}

impl std::fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl ApiClient {
    /// A client of the API host of `config` that takes its tokens from `tokens`.
    pub fn new(config: ClientConfig, tokens: Arc<dyn AccessTokenSource>) -> Result<Self, ApiError> {
        Self::with_options(config, tokens, HttpOptions::default())
    }

    /// A client with its own HTTP options (proxy, user agent, extra root certificates); the
    /// time-outs are the configuration's.
    pub fn with_options(
        config: ClientConfig,
        tokens: Arc<dyn AccessTokenSource>,
        options: HttpOptions,
    ) -> Result<Self, ApiError> {
        let options = options
            .with_timeout(config.timeout)
            .with_connect_timeout(config.connect_timeout);
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
            signer: Signer::default(),
            #[cfg(feature = "test-util")]
            sleeper: None,
        })
    }

    /// Waits between attempts with `sleeper` (a recording one, in tests).
    #[cfg(feature = "test-util")]
    pub(crate) fn with_sleeper(mut self, sleeper: Arc<dyn crate::test_util::Sleeper>) -> Self {
        self.sleeper = Some(sleeper);
        self
    }

    /// Waits `delay` before the next attempt.
    async fn sleep(&self, delay: std::time::Duration) {
        #[cfg(feature = "test-util")]
        if let Some(sleeper) = &self.sleeper {
            return sleeper.sleep(delay);
        }
        tokio::time::sleep(delay).await
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

    /// Sends `request` and returns its 2xx answer; any other status is an [`ApiError`].
    pub async fn send(&self, request: ApiRequest) -> Result<ApiResponse, ApiError> {
        let call = ApiCall::from_request(&request, &self.config)?;
        self.fetch(&call).await.map(ApiResponse::new)
    }

    /// createSigningKey (Key Management API, feature `signing`) with `cipher`, `ED25519`
    /// (what eBay recommends) or `RSA`, with an application token, on the API host that serves
    /// it (`https://apiz.ebay.com`). eBay shows the private key this once: store
    /// [`NewSigningKey::private_key`](crate::signing::NewSigningKey::private_key) before anything
    /// else.
    #[cfg(feature = "signing")]
    pub async fn create_signing_key(
        &self,
        cipher: &str,
    ) -> Result<crate::signing::NewSigningKey, ApiError> {
        use crate::signing::key_management;
        key_management::created(&self.send(key_management::create(cipher)).await?)
    }

    /// getSigningKey (feature `signing`): the key `signing_key_id`, without its private key.
    #[cfg(feature = "signing")]
    pub async fn signing_key(
        &self,
        signing_key_id: &str,
    ) -> Result<crate::signing::SigningKeyInfo, ApiError> {
        use crate::signing::key_management;
        key_management::one(&self.send(key_management::get(signing_key_id)).await?)
    }

    /// getSigningKeys (feature `signing`): every key of the application, without their
    /// private keys.
    #[cfg(feature = "signing")]
    pub async fn signing_keys(&self) -> Result<Vec<crate::signing::SigningKeyInfo>, ApiError> {
        use crate::signing::key_management;
        key_management::many(&self.send(key_management::list()).await?)
    }

    /// The HTTP client (for a call that reads its answer its own way).
    pub(crate) fn http(&self) -> &reqwest::Client {
        &self.http
    }

    /// Sends `call` and reads its answer whole, within its limits.
    pub(crate) async fn fetch(&self, call: &ApiCall) -> Result<Fetched, ApiError> {
        let http = &self.http;
        self.send_call(call, move |request, redactor, span| async move {
            let started = Instant::now();
            let outcome = super::transport::exchange(http, request, call.timeout, call.limits)
                .instrument(span.clone())
                .await;
            call.finish(outcome, redactor, &span, started.elapsed())
        })
        .await
    }

    /// Sends `call` with the core's renewal on 401 and retries ([`Attempts`]); `attempt`
    /// makes one attempt in its span. The one retry loop of the async front.
    pub(crate) async fn send_call<T, F, Fut>(
        &self,
        call: &ApiCall,
        mut attempt: F,
    ) -> Result<T, ApiError>
    where
        F: FnMut(http::Request<Vec<u8>>, Redactor, tracing::Span) -> Fut,
        Fut: Future<Output = Result<T, ApiError>>,
    {
        let mut token = self.tokens.access_token().await?;
        let mut attempts = Attempts::new(&self.config);
        if call.once {
            attempts = attempts.without_retries();
        }
        loop {
            let (mut request, redactor) = call.request(&token)?;
            self.signer.sign(&mut request)?;
            let span = call.span(attempts.attempt());
            let error = match attempt(request, redactor, span).await {
                Ok(done) => return Ok(done),
                Err(e) => e,
            };
            match attempts.after(&error) {
                Next::Renew => {
                    self.tokens.invalidate(&token);
                    token = self.tokens.access_token().await?;
                }
                Next::Wait(delay) => self.sleep(delay).await,
                Next::Fail => return Err(error),
            }
        }
    }
}

/// The signing-key file's calls on this front (feature `signing`).
#[cfg(feature = "signing")]
impl crate::signing::SigningKeyFile {
    /// [`signing_key`](Self::signing_key) for the async front: the file is read and written
    /// on tokio's blocking threads, never on the runtime's.
    pub async fn signing_key_async(
        &self,
        api: &ApiClient,
    ) -> Result<crate::signing::SigningKey, crate::signing::SigningKeyStoreError> {
        self.obtain(false, |cipher| async move {
            api.create_signing_key(&cipher).await
        })
        .await
    }

    /// [`rotate`](Self::rotate) for the async front.
    pub async fn rotate_async(
        &self,
        api: &ApiClient,
    ) -> Result<crate::signing::SigningKey, crate::signing::SigningKeyStoreError> {
        self.obtain(true, |cipher| async move {
            api.create_signing_key(&cipher).await
        })
        .await
    }
}
