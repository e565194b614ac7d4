//! The HTTP settings of a client, in our own types (so an upgrade of the HTTP client is not a
//! breaking change for users).

use std::time::Duration;

/// How a client talks HTTP: time-outs, a proxy, its user agent, extra root certificates.
///
/// Every client built from these never follows a redirect (its requests carry credentials,
/// which would follow it) and bypasses proxies on loopback.
///
/// ```
/// use std::time::Duration;
/// use marketplace_client::HttpOptions;
/// let options = HttpOptions::default()
///     .with_timeout(Duration::from_secs(10))
///     .with_proxy("http://proxy.internal:3128")
///     .with_user_agent("my-backend/2.1");
/// assert_eq!(options.timeout(), Duration::from_secs(10));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct HttpOptions {
    pub(crate) connect_timeout: Duration,
    pub(crate) timeout: Duration,
    pub(crate) proxy: Option<String>,
    pub(crate) user_agent: String,
    pub(crate) root_certificates: Vec<Vec<u8>>,
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpOptions")
            .field("connect_timeout", &self.connect_timeout)
            .field("timeout", &self.timeout)
            // A proxy URL may carry a password.
            .field(
                "proxy",
                &self
                    .proxy
                    .as_deref()
                    .map(crate::oauth::redact::url_for_message),
            )
            .field("user_agent", &self.user_agent)
            .field("root_certificates", &self.root_certificates.len())
            .finish()
    }
}

impl Default for HttpOptions {
    /// A 30 s time-out per call (body included), 10 s to connect, no proxy but the
    /// environment's (`HTTPS_PROXY`, …), the user agent `marketplace-toolkit/<version>`.
    fn default() -> Self {
        Self {
            connect_timeout: Duration::from_secs(10),
            timeout: crate::core::token::DEFAULT_TIMEOUT,
            proxy: None,
            user_agent: concat!("marketplace-toolkit/", env!("CARGO_PKG_VERSION")).to_owned(),
            root_certificates: Vec::new(),
        }
    }
}

impl HttpOptions {
    /// Sets the time-out of one call, from connecting to the last byte of the answer. The
    /// connect time-out becomes the smaller of it and 10 s unless set after this.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self.connect_timeout = timeout.min(Duration::from_secs(10));
        self
    }

    /// Sets the time-out of connecting.
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Sends every request (but those to loopback) through the proxy at `url`
    /// (`http://` or `https://`, with user information if it needs it).
    pub fn with_proxy(mut self, url: impl Into<String>) -> Self {
        self.proxy = Some(url.into());
        self
    }

    /// Sets the `User-Agent` header.
    pub fn with_user_agent(mut self, user_agent: impl Into<String>) -> Self {
        self.user_agent = user_agent.into();
        self
    }

    /// Trusts the root certificate `pem` (PEM) besides the built-in roots (a corporate TLS
    /// proxy, a test server).
    pub fn with_root_certificate(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.root_certificates.push(pem.into());
        self
    }

    /// The time-out of one call.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }
}
