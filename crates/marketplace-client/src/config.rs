//! The settings of the service's clients ([`ClientConfig`]): where the API lives and how
//! patient a request is (base URL, time-outs, the body limit, the retry policy), and the
//! Taxonomy API's own settings (getCategoryTree's path form, the language, download limits).

use std::time::Duration;

use url::Url;

use crate::api::ApiError;
use crate::oauth::{Endpoints, OAuthConfig};
use crate::taxonomy::TreePath;

/// Default connect time-out.
pub(crate) const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default total time-out of one request, body included. A full tree (getCategoryTree) takes
/// 2 to 5 seconds and is tens of megabytes uncompressed, so this is generous.
pub(crate) const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Default limit on a (decompressed) response body: 64 MiB.
pub(crate) const DEFAULT_MAX_BODY_BYTES: u64 = 64 * 1024 * 1024;
/// Default number of retries after the first attempt (429, 5xx, connection failures).
pub(crate) const DEFAULT_MAX_RETRIES: u32 = 3;
/// Default base of the exponential back-off.
pub(crate) const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(500);
/// Default cap of one back-off delay.
pub(crate) const DEFAULT_BACKOFF_CAP: Duration = Duration::from_secs(30);
/// Default longest `Retry-After` the client waits for; a longer one ends the call with
/// [`ApiError::RateLimited`]. The same limit as the token providers'
/// ([`crate::oauth::MAX_RETRY_AFTER`]).
pub(crate) const DEFAULT_MAX_RETRY_AFTER: Duration = crate::oauth::MAX_RETRY_AFTER;

/// The environment variable that picks the get-category-tree path form
/// (`path`, `query` or `auto`, see [`TreePath`]).
pub(crate) const ENV_TREE_PATH: &str = "MARKETPLACE_TREE_PATH";

/// Default total time-out of a file download (fetchItemAspects: over 100 MB compressed).
pub(crate) const DEFAULT_DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// Default limit on a downloaded file (fetchItemAspects), as received: 4 GiB.
pub(crate) const DEFAULT_MAX_DOWNLOAD_BYTES: u64 = 4 * 1024 * 1024 * 1024;
/// Default limit on the JSON inside a downloaded file (fetchItemAspects), decompressed:
/// 16 GiB. A real file is over 100 MB compressed and some gigabytes of JSON; a few megabytes
/// of gzip can hold far more than that (a gzip bomb).
pub(crate) const DEFAULT_MAX_DECOMPRESSED_BYTES: u64 = 16 * 1024 * 1024 * 1024;

/// The settings of the service's clients: the API host, time-outs, the body limit and the
/// retry policy that every request shares, and the Taxonomy API's own settings (the form of
/// getCategoryTree's path, the language, the limits of a fetchItemAspects download).
///
/// One configuration serves both clients: [`api::ApiClient::new`](crate::api::ApiClient::new)
/// (which reads the common settings) and
/// [`taxonomy::TaxonomyClient::new`](crate::taxonomy::TaxonomyClient::new) (which reads them
/// all, and sends its calls through the generic request with the same settings), and the
/// same two of the async front. A common setting means the same in both; the tree path, the
/// language and the download limits are the taxonomy client's only.
///
/// ```
/// use std::time::Duration;
/// use marketplace_client::ClientConfig;
/// use marketplace_client::taxonomy::TreePath;
/// let config = ClientConfig::for_base_url("http://127.0.0.1:8080")
///     .unwrap()
///     .with_tree_path(TreePath::Path)
///     .with_language("de-DE")
///     .with_max_retries(5)
///     .with_backoff(Duration::from_millis(1), Duration::from_millis(10));
/// assert_eq!(config.base_url.as_str(), "http://127.0.0.1:8080/");
/// assert_eq!((config.tree_path, config.max_retries), (TreePath::Path, 5));
/// assert_eq!(ClientConfig::sandbox().base_url.as_str(), "https://api.sandbox.ebay.com/");
/// assert_eq!(ClientConfig::sandbox().tree_path, TreePath::Path);
/// let local = ClientConfig::for_base_url("http://127.0.0.1:8080").unwrap();
/// assert_eq!(local.tree_path, TreePath::Auto);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ClientConfig {
    /// The API host, ending with `/`; a request's path is below it.
    pub base_url: Url,
    /// The form of getCategoryTree's path (default: [`TreePath::default_for`] the host).
    pub tree_path: TreePath,
    /// `Accept-Language` for every taxonomy call; `None`: the site's language
    /// ([`marketplaces::Marketplace::default_language`]).
    pub language: Option<String>,
    /// Time allowed to open a connection.
    pub connect_timeout: Duration,
    /// Total time allowed for one request, from sending to the last byte of the body (a
    /// request can set its own: [`ApiRequest::timeout`](crate::api::ApiRequest::timeout)).
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
    /// Total time allowed for a file download (fetchItemAspects), from sending to the last
    /// byte; replaces [`timeout`](Self::timeout) for that call.
    pub download_timeout: Duration,
    /// Largest downloaded file accepted (fetchItemAspects), as received; replaces
    /// [`max_body_bytes`](Self::max_body_bytes) for that call.
    pub max_download_bytes: u64,
    /// Largest JSON accepted inside a downloaded file (fetchItemAspects), decompressed; the
    /// download stops as soon as the file holds more.
    pub max_decompressed_bytes: u64,
}

impl ClientConfig {
    /// getCategoryTree's form: `path`, `query` or `auto` (`MARKETPLACE_TREE_PATH`).
    pub const ENV_TREE_PATH: &'static str = ENV_TREE_PATH;

    /// The defaults for the API host `base_url` (which should end with `/`; one is added).
    pub fn new(base_url: Url) -> Self {
        let base_url = with_trailing_slash(base_url);
        Self {
            tree_path: TreePath::default_for(&base_url),
            base_url,
            language: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            timeout: DEFAULT_REQUEST_TIMEOUT,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            max_retries: DEFAULT_MAX_RETRIES,
            backoff_base: DEFAULT_BACKOFF_BASE,
            backoff_cap: DEFAULT_BACKOFF_CAP,
            max_retry_after: DEFAULT_MAX_RETRY_AFTER,
            download_timeout: DEFAULT_DOWNLOAD_TIMEOUT,
            max_download_bytes: DEFAULT_MAX_DOWNLOAD_BYTES,
            max_decompressed_bytes: DEFAULT_MAX_DECOMPRESSED_BYTES,
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

    /// Sets the get-category-tree path form.
    pub fn with_tree_path(mut self, tree_path: TreePath) -> Self {
        self.tree_path = tree_path;
        self
    }

    /// Applies the settings of the environment, read through `lookup` (a variable name to its
    /// value): [`Self::ENV_TREE_PATH`] (`path`, `query` or `auto`). Unset or empty variables change
    /// nothing; a value that is not one of those is an error that names the variable.
    ///
    /// ```
    /// use marketplace_client::taxonomy::{ClientConfig, TreePath};
    /// let config = ClientConfig::production()
    ///     .with_env(|name| (name == "MARKETPLACE_TREE_PATH").then(|| "query".to_string()))
    ///     .unwrap();
    /// assert_eq!(config.tree_path, TreePath::Query);
    /// assert!(ClientConfig::production().with_env(|_| Some("sideways".into())).is_err());
    /// ```
    pub fn with_env(mut self, lookup: impl Fn(&str) -> Option<String>) -> Result<Self, ApiError> {
        if let Some(value) = lookup(ENV_TREE_PATH).filter(|v| !v.trim().is_empty()) {
            self.tree_path = TreePath::parse(&value).ok_or_else(|| {
                ApiError::Invalid(format!(
                    "{ENV_TREE_PATH}={value:?} is not a tree path form; use path, query or auto"
                ))
            })?;
        }
        Ok(self)
    }

    /// Sends `language` as `Accept-Language` on every call instead of the site's language.
    pub fn with_language(mut self, language: impl Into<String>) -> Self {
        self.language = Some(language.into());
        self
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

    /// Sets the total time-out of a file download (fetchItemAspects).
    pub fn with_download_timeout(mut self, timeout: Duration) -> Self {
        self.download_timeout = timeout;
        self
    }

    /// Sets the size limit of a downloaded file (fetchItemAspects).
    pub fn with_max_download_bytes(mut self, limit: u64) -> Self {
        self.max_download_bytes = limit;
        self
    }

    /// Sets the size limit of the JSON inside a downloaded file (fetchItemAspects),
    /// decompressed.
    pub fn with_max_decompressed_bytes(mut self, limit: u64) -> Self {
        self.max_decompressed_bytes = limit;
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
