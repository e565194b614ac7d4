//! Where the taxonomy API lives and how patient the client is: base URL, the form of the
//! get-category-tree path, the language, time-outs, the body limit and the retry policy.

use std::time::Duration;

use url::Url;

use super::ApiError;
use crate::api::ApiConfig;
use crate::oauth::{Endpoints, OAuthConfig};

/// The marketplace header sent on every call of the taxonomy API.
pub(crate) use marketplaces::MARKETPLACE_HEADER;

/// The path prefix of version 1 of the taxonomy API.
pub(crate) const TAXONOMY_PREFIX: &str = "commerce/taxonomy/v1";

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

/// Which path the get-category-tree call (getCategoryTree) uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TreePath {
    /// `GET {base_url}/commerce/taxonomy/v1/category_tree/N`: the form eBay documents for
    /// getCategoryTree. The default of the production and sandbox hosts.
    Path,
    /// `GET {base_url}/commerce/taxonomy/v1/category_tree/get?category_tree_id=N`: the tree id
    /// as a query parameter, as the API contract this project started from states it.
    Query,
    /// Try [`Path`](TreePath::Path) first; on a 404 or the service's "tree not found" answer
    /// (errorId 62004) try [`Query`](TreePath::Query) once, and remember the form that worked
    /// for the rest of the client's life. The default of any other host.
    Auto,
}

impl TreePath {
    /// Parses `path`, `query` or `auto` (ASCII case and surrounding blanks ignored).
    ///
    /// ```
    /// use marketplace_client::taxonomy::TreePath;
    /// assert_eq!(TreePath::parse(" Query "), Some(TreePath::Query));
    /// assert_eq!(TreePath::parse("documented"), None);
    /// ```
    pub fn parse(text: &str) -> Option<TreePath> {
        match text.trim().to_ascii_lowercase().as_str() {
            "path" => Some(TreePath::Path),
            "query" => Some(TreePath::Query),
            "auto" => Some(TreePath::Auto),
            _ => None,
        }
    }

    /// `path`, `query` or `auto`.
    pub fn as_str(self) -> &'static str {
        match self {
            TreePath::Path => "path",
            TreePath::Query => "query",
            TreePath::Auto => "auto",
        }
    }

    /// The default for `base_url`: [`Path`](TreePath::Path) on eBay's production and sandbox
    /// hosts, [`Auto`](TreePath::Auto) anywhere else.
    pub fn default_for(base_url: &Url) -> TreePath {
        match base_url.host_str() {
            Some(host)
                if host.eq_ignore_ascii_case("api.ebay.com")
                    || host.eq_ignore_ascii_case("api.sandbox.ebay.com") =>
            {
                TreePath::Path
            }
            _ => TreePath::Auto,
        }
    }
}

impl std::fmt::Display for TreePath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The settings of a [`TaxonomyClient`](super::TaxonomyClient).
///
/// The base URL, time-outs, body limit and retry policy are those of the generic request
/// the client is built on ([`ApiConfig`], derived with [`api_config`](Self::api_config));
/// the rest is the Taxonomy API's own.
///
/// ```
/// use std::time::Duration;
/// use marketplace_client::taxonomy::{TaxonomyConfig, TreePath};
/// let config = TaxonomyConfig::for_base_url("http://127.0.0.1:8080")
///     .unwrap()
///     .with_tree_path(TreePath::Path)
///     .with_language("de-DE")
///     .with_max_retries(5)
///     .with_backoff(Duration::from_millis(1), Duration::from_millis(10));
/// assert_eq!(config.base_url.as_str(), "http://127.0.0.1:8080/");
/// assert_eq!((config.tree_path, config.max_retries), (TreePath::Path, 5));
/// assert_eq!(TaxonomyConfig::sandbox().tree_path, TreePath::Path);
/// let local = TaxonomyConfig::for_base_url("http://127.0.0.1:8080").unwrap();
/// assert_eq!(local.tree_path, TreePath::Auto);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaxonomyConfig {
    /// The API host, ending with `/`.
    pub base_url: Url,
    /// The form of the get-category-tree path (default: [`TreePath::default_for`] the host).
    pub tree_path: TreePath,
    /// `Accept-Language` for every call; `None`: the site's language ([`marketplaces::Marketplace::default_language`]).
    pub language: Option<String>,
    /// Time allowed to open a connection.
    pub connect_timeout: Duration,
    /// Total time allowed for one request, from sending to the last byte of the body.
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
    /// The longest `Retry-After` waited for.
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

impl TaxonomyConfig {
    /// getCategoryTree's form: `path`, `query` or `auto` (`MARKETPLACE_TREE_PATH`).
    pub const ENV_TREE_PATH: &'static str = ENV_TREE_PATH;

    /// The defaults for the API host `base_url` (which should end with `/`; one is added).
    pub fn new(base_url: Url) -> Self {
        let base_url = crate::api::with_trailing_slash(base_url);
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

    /// The settings of the generic request ([`ApiConfig`]) the taxonomy client sends its
    /// calls with: the base URL, time-outs, body limit and retry policy of this
    /// configuration (the fields of the same names).
    pub fn api_config(&self) -> ApiConfig {
        let mut api = ApiConfig::new(self.base_url.clone());
        api.connect_timeout = self.connect_timeout;
        api.timeout = self.timeout;
        api.max_body_bytes = self.max_body_bytes;
        api.max_retries = self.max_retries;
        api.backoff_base = self.backoff_base;
        api.backoff_cap = self.backoff_cap;
        api.max_retry_after = self.max_retry_after;
        api
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
    /// use marketplace_client::taxonomy::{TaxonomyConfig, TreePath};
    /// let config = TaxonomyConfig::production()
    ///     .with_env(|name| (name == "MARKETPLACE_TREE_PATH").then(|| "query".to_string()))
    ///     .unwrap();
    /// assert_eq!(config.tree_path, TreePath::Query);
    /// assert!(TaxonomyConfig::production().with_env(|_| Some("sideways".into())).is_err());
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

    /// `{base_url}/commerce/taxonomy/v1/{rest}`.
    fn api_url(&self, rest: &str) -> Url {
        let mut url = self.base_url.clone();
        let path = format!("{}{TAXONOMY_PREFIX}/{rest}", self.base_url.path());
        url.set_path(&path);
        url
    }

    /// The getCategoryTree URL of `tree_id` in the configured [`TreePath`] form (the path
    /// form for [`TreePath::Auto`], which tries it first).
    #[cfg(test)]
    pub(crate) fn tree_url(&self, tree_id: u32) -> Url {
        self.tree_url_in(tree_id, self.tree_path)
    }

    /// The getCategoryTree URL of `tree_id` in the form `form` ([`TreePath::Auto`]: the path
    /// form).
    pub(crate) fn tree_url_in(&self, tree_id: u32, form: TreePath) -> Url {
        match form {
            TreePath::Query => {
                let mut url = self.api_url("category_tree/get");
                url.query_pairs_mut()
                    .append_pair("category_tree_id", &tree_id.to_string());
                url
            }
            TreePath::Path | TreePath::Auto => self.api_url(&format!("category_tree/{tree_id}")),
        }
    }

    /// `…/category_tree/{tree_id}/get_category_suggestions?q=…` (getCategorySuggestions).
    pub(crate) fn suggestions_url(&self, tree_id: u32, q: &str) -> Url {
        let mut url = self.api_url(&format!("category_tree/{tree_id}/get_category_suggestions"));
        url.query_pairs_mut().append_pair("q", q);
        url
    }

    /// `…/category_tree/{tree_id}/get_category_subtree?category_id=…` (getCategorySubtree).
    pub(crate) fn subtree_url(&self, tree_id: u32, category_id: u32) -> Url {
        let mut url = self.api_url(&format!("category_tree/{tree_id}/get_category_subtree"));
        url.query_pairs_mut()
            .append_pair("category_id", &category_id.to_string());
        url
    }

    /// `…/category_tree/{tree_id}/get_item_aspects_for_category?category_id=…`
    /// (getItemAspectsForCategory).
    pub(crate) fn aspects_url(&self, tree_id: u32, category_id: u32) -> Url {
        let mut url = self.api_url(&format!(
            "category_tree/{tree_id}/get_item_aspects_for_category"
        ));
        url.query_pairs_mut()
            .append_pair("category_id", &category_id.to_string());
        url
    }

    /// `…/get_default_category_tree_id?marketplace_id=…` (getDefaultCategoryTreeId).
    pub(crate) fn default_tree_id_url(&self, marketplace_id: &str) -> Url {
        let mut url = self.api_url("get_default_category_tree_id");
        url.query_pairs_mut()
            .append_pair("marketplace_id", marketplace_id);
        url
    }

    /// `…/category_tree/{tree_id}/get_expired_categories` (getExpiredCategories).
    pub(crate) fn expired_categories_url(&self, tree_id: u32) -> Url {
        self.api_url(&format!("category_tree/{tree_id}/get_expired_categories"))
    }

    /// `…/category_tree/{tree_id}/fetch_item_aspects` (fetchItemAspects).
    pub(crate) fn item_aspects_file_url(&self, tree_id: u32) -> Url {
        self.api_url(&format!("category_tree/{tree_id}/fetch_item_aspects"))
    }

    /// `…/category_tree/{tree_id}/get_compatibility_properties?category_id=…`
    /// (getCompatibilityProperties).
    pub(crate) fn compatibility_properties_url(&self, tree_id: u32, category_id: u32) -> Url {
        let mut url = self.api_url(&format!(
            "category_tree/{tree_id}/get_compatibility_properties"
        ));
        url.query_pairs_mut()
            .append_pair("category_id", &category_id.to_string());
        url
    }

    /// `…/category_tree/{tree_id}/get_compatibility_property_values?category_id=…&compatibility_property=…[&filter=…]`
    /// (getCompatibilityPropertyValues). `filter` holds `name:value` pairs; they are joined
    /// with commas, a comma inside a value escaped as `\,` as eBay documents.
    pub(crate) fn compatibility_property_values_url(
        &self,
        tree_id: u32,
        category_id: u32,
        property: &str,
        filter: &[(&str, &str)],
    ) -> Url {
        let mut url = self.api_url(&format!(
            "category_tree/{tree_id}/get_compatibility_property_values"
        ));
        {
            let mut query = url.query_pairs_mut();
            query.append_pair("category_id", &category_id.to_string());
            query.append_pair("compatibility_property", property);
            if !filter.is_empty() {
                let joined: Vec<String> = filter
                    .iter()
                    .map(|(name, value)| format!("{name}:{}", value.replace(',', "\\,")))
                    .collect();
                query.append_pair("filter", &joined.join(","));
            }
        }
        url
    }
}

#[cfg(test)]
mod url_tests {
    use super::*;

    #[test]
    fn tree_urls_take_the_configured_form() {
        let config = TaxonomyConfig::for_base_url("http://127.0.0.1:8080")
            .unwrap()
            .with_tree_path(TreePath::Path);
        assert_eq!(
            config.tree_url(77).as_str(),
            "http://127.0.0.1:8080/commerce/taxonomy/v1/category_tree/77"
        );
        assert_eq!(
            TaxonomyConfig::production().tree_url(0).as_str(),
            "https://api.ebay.com/commerce/taxonomy/v1/category_tree/0"
        );
        assert_eq!(
            config.tree_url_in(0, TreePath::Query).as_str(),
            "http://127.0.0.1:8080/commerce/taxonomy/v1/category_tree/get?category_tree_id=0"
        );
        let url = TaxonomyConfig::production().compatibility_property_values_url(
            100,
            6016,
            "Model",
            &[("Year", "2018"), ("Make", "Toyota")],
        );
        assert_eq!(
            url.query(),
            Some(
                "category_id=6016&compatibility_property=Model&filter=Year%3A2018%2CMake%3AToyota"
            )
        );
    }
}
