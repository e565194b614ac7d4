//! Where the taxonomy API lives and how patient the client is: base URL, the form of the
//! get-category-tree path, the language, time-outs, the body limit and the retry policy.

use std::time::Duration;

use url::Url;

use super::error::TaxonomyError;
use crate::oauth::{Endpoints, OAuthConfig};

/// The marketplace header sent on every call (seed 4.5, with the brand name in place of
/// `SERVICE`).
pub const MARKETPLACE_HEADER: &str = "X-EBAY-C-MARKETPLACE-ID";

/// The path prefix of version 1 of the taxonomy API (seed 9).
pub const TAXONOMY_PREFIX: &str = "commerce/taxonomy/v1";

/// Default connect time-out.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default total time-out of one request, body included. A full tree takes 2 to 5 seconds
/// (seed 8) and is tens of megabytes uncompressed, so this is generous.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Default limit on a (decompressed) response body: 64 MiB.
pub const DEFAULT_MAX_BODY_BYTES: u64 = 64 * 1024 * 1024;
/// Default number of retries after the first attempt (429, 5xx, connection failures).
pub const DEFAULT_MAX_RETRIES: u32 = 3;
/// Default base of the exponential back-off.
pub const DEFAULT_BACKOFF_BASE: Duration = Duration::from_millis(500);
/// Default cap of one back-off delay.
pub const DEFAULT_BACKOFF_CAP: Duration = Duration::from_secs(30);
/// Default longest `Retry-After` the client waits for; a longer one ends the call with
/// [`TaxonomyError::RateLimited`]. The same limit as the token providers'
/// ([`crate::oauth::MAX_RETRY_AFTER`]).
pub const DEFAULT_MAX_RETRY_AFTER: Duration = crate::oauth::MAX_RETRY_AFTER;

/// Which path the get-category-tree call uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TreePath {
    /// `GET {base_url}/commerce/taxonomy/v1/category_tree/get?category_tree_id=N`, exactly as
    /// the seed (4.5) states it. The default.
    #[default]
    SeedQuery,
    /// `GET {base_url}/commerce/taxonomy/v1/category_tree/N`: the path form of the production
    /// service's documentation.
    Documented,
}

impl TreePath {
    /// Parses `seed` / `seed-query` or `documented` / `path` (ASCII case ignored).
    pub fn parse(text: &str) -> Option<TreePath> {
        match text.trim().to_ascii_lowercase().as_str() {
            "seed" | "seed-query" | "seedquery" | "query" => Some(TreePath::SeedQuery),
            "documented" | "path" => Some(TreePath::Documented),
            _ => None,
        }
    }
}

/// The settings of a [`TaxonomyClient`](super::TaxonomyClient).
///
/// ```
/// use std::time::Duration;
/// use marketplace_client::taxonomy::{TaxonomyConfig, TreePath};
/// let config = TaxonomyConfig::for_base_url("http://127.0.0.1:8080")
///     .unwrap()
///     .with_tree_path(TreePath::Documented)
///     .with_language("de-DE")
///     .with_max_retries(5)
///     .with_backoff(Duration::from_millis(1), Duration::from_millis(10));
/// assert_eq!(
///     config.tree_url(77).as_str(),
///     "http://127.0.0.1:8080/commerce/taxonomy/v1/category_tree/77"
/// );
/// assert_eq!(
///     TaxonomyConfig::production().tree_url(0).as_str(),
///     "https://api.ebay.com/commerce/taxonomy/v1/category_tree/get?category_tree_id=0"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaxonomyConfig {
    /// The API host, ending with `/`.
    pub base_url: Url,
    /// The form of the get-category-tree path.
    pub tree_path: TreePath,
    /// `Accept-Language` for every call; `None`: the site's language ([`marketplaces::SiteId::language`]).
    pub language: Option<String>,
    /// Time allowed to open a connection.
    pub connect_timeout: Duration,
    /// Total time allowed for one request, from sending to the last byte of the body.
    pub timeout: Duration,
    /// Largest response body accepted (after decompression); a larger one ends the call with
    /// [`TaxonomyError::BodyTooLarge`].
    pub max_body_bytes: u64,
    /// Retries after the first attempt for 429, 5xx, connection failures and cut-off bodies.
    pub max_retries: u32,
    /// The first back-off delay's upper bound; it doubles with each retry.
    pub backoff_base: Duration,
    /// The largest back-off delay.
    pub backoff_cap: Duration,
    /// The longest `Retry-After` waited for.
    pub max_retry_after: Duration,
}

impl TaxonomyConfig {
    /// The defaults for the API host `base_url` (which should end with `/`; one is added).
    pub fn new(mut base_url: Url) -> Self {
        if !base_url.path().ends_with('/') {
            let path = format!("{}/", base_url.path());
            base_url.set_path(&path);
        }
        Self {
            base_url,
            tree_path: TreePath::default(),
            language: None,
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
    pub fn for_base_url(base_url: &str) -> Result<Self, TaxonomyError> {
        let endpoints = Endpoints::custom(base_url, base_url)
            .map_err(|e| TaxonomyError::OAuth(crate::oauth::OAuthError::Config(e)))?;
        Ok(Self::from_endpoints(&endpoints))
    }

    /// Sets the get-category-tree path form.
    pub fn with_tree_path(mut self, tree_path: TreePath) -> Self {
        self.tree_path = tree_path;
        self
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

    /// `{base_url}/commerce/taxonomy/v1/{rest}`.
    fn api_url(&self, rest: &str) -> Url {
        let mut url = self.base_url.clone();
        let path = format!("{}{TAXONOMY_PREFIX}/{rest}", self.base_url.path());
        url.set_path(&path);
        url
    }

    /// The get-category-tree URL of `tree_id` in the configured [`TreePath`] form.
    pub fn tree_url(&self, tree_id: u32) -> Url {
        match self.tree_path {
            TreePath::SeedQuery => {
                let mut url = self.api_url("category_tree/get");
                url.query_pairs_mut()
                    .append_pair("category_tree_id", &tree_id.to_string());
                url
            }
            TreePath::Documented => self.api_url(&format!("category_tree/{tree_id}")),
        }
    }

    /// `…/category_tree/{tree_id}/get_category_suggestions?q=…` (seed 4.6).
    pub fn suggestions_url(&self, tree_id: u32, q: &str) -> Url {
        let mut url = self.api_url(&format!("category_tree/{tree_id}/get_category_suggestions"));
        url.query_pairs_mut().append_pair("q", q);
        url
    }

    /// `…/category_tree/{tree_id}/get_category_subtree?category_id=…`.
    pub fn subtree_url(&self, tree_id: u32, category_id: u32) -> Url {
        let mut url = self.api_url(&format!("category_tree/{tree_id}/get_category_subtree"));
        url.query_pairs_mut()
            .append_pair("category_id", &category_id.to_string());
        url
    }

    /// `…/category_tree/{tree_id}/get_item_aspects_for_category?category_id=…`.
    pub fn aspects_url(&self, tree_id: u32, category_id: u32) -> Url {
        let mut url = self.api_url(&format!(
            "category_tree/{tree_id}/get_item_aspects_for_category"
        ));
        url.query_pairs_mut()
            .append_pair("category_id", &category_id.to_string());
        url
    }

    /// `…/get_default_category_tree_id?marketplace_id=…`.
    pub fn default_tree_id_url(&self, marketplace_id: &str) -> Url {
        let mut url = self.api_url("get_default_category_tree_id");
        url.query_pairs_mut()
            .append_pair("marketplace_id", marketplace_id);
        url
    }
}
