//! The blocking taxonomy client: one method per call, the same request discipline for all
//! (headers, token renewal on 401, retries with back-off, time-outs, body limit).

use std::io::Read as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use reqwest::header::{ACCEPT, ACCEPT_ENCODING, ACCEPT_LANGUAGE, AUTHORIZATION, HeaderValue};
use serde::de::DeserializeOwned;
use url::Url;

use super::config::{MARKETPLACE_HEADER, TaxonomyConfig, TreePath};
use super::error::{TaxonomyError, parse_error_body};
use super::retry::{Sleeper, ThreadSleeper, backoff_ceiling, full_jitter};
use super::types::{
    CategorySubtree, CategorySuggestions, DefaultTreeId, ItemAspects, TreeBody, WireAspects,
    WireDefaultTreeId, WireSubtree, WireSuggestions, aspects_from_wire, default_tree_id_from_wire,
    subtree_from_wire, suggestions_from_wire,
};
use crate::decode::{Provenance, decode_tree};
use crate::oauth::client::error_chain;
use crate::oauth::{AccessToken, AccessTokenSource, OAuthConfig, sanitize_body};
use crate::site::SiteId;
use crate::tree::CategoryTree;

/// At most this much of an error answer's body is read (only its start is kept anyway).
const MAX_ERROR_BODY: u64 = 1024 * 1024;

/// A client of eBay's Commerce Taxonomy API (v1): getCategoryTree, getCategorySuggestions,
/// getCategorySubtree, getItemAspectsForCategory, getDefaultCategoryTreeId and the others.
///
/// Every call sends `Authorization: Bearer …` from the token source, the marketplace header
/// [`MARKETPLACE_HEADER`] with the site's marketplace id, `Accept-Language` (the language
/// argument, else [`TaxonomyConfig::language`], else the site's language) and
/// `Accept-Encoding: gzip`.
///
/// * A 401 makes the client [`invalidate`](AccessTokenSource::invalidate) the token, get a new
///   one and try once more (this does not count as a retry).
/// * 429, 5xx, connection failures and cut-off bodies are retried up to
///   [`TaxonomyConfig::max_retries`] times, waiting `Retry-After` when the answer has one and
///   otherwise a random delay in `[0, min(cap, base · 2^n)]` (exponential back-off with full
///   jitter). Time-outs are not retried: the time budget is spent.
/// * The body is read incrementally and the call fails with
///   [`TaxonomyError::BodyTooLarge`] as soon as it passes [`TaxonomyConfig::max_body_bytes`].
///
/// The client is `Send + Sync`: one client can serve many threads.
///
/// ```no_run
/// use marketplace_toolkit::site::SiteId;
/// use marketplace_toolkit::taxonomy::TaxonomyClient;
/// # fn main() -> Result<(), marketplace_toolkit::taxonomy::TaxonomyError> {
/// // MARKETPLACE_CLIENT_ID / MARKETPLACE_CLIENT_SECRET (or MARKETPLACE_ACCESS_TOKEN), and
/// // MARKETPLACE_BASE_URL + MARKETPLACE_AUTH_URL for another host.
/// let client = TaxonomyClient::from_env()?;
/// let body = client.fetch_tree_body(SiteId::De, None)?; // Accept-Language: de-DE
/// println!("{} bytes from {}", body.bytes.len(), body.url);
/// for s in client.category_suggestions(SiteId::Us, "iphone 15")?.suggestions {
///     println!("{} {}", s.category.id, s.path());
/// }
/// # Ok(()) }
/// ```
pub struct TaxonomyClient {
    config: TaxonomyConfig,
    tokens: Arc<dyn AccessTokenSource>,
    http: reqwest::blocking::Client,
    sleeper: Arc<dyn Sleeper>,
    /// With [`TreePath::Auto`]: the form that worked (`FORM_*`).
    tree_form: AtomicU8,
}

const FORM_UNKNOWN: u8 = 0;
const FORM_PATH: u8 = 1;
const FORM_QUERY: u8 = 2;

impl std::fmt::Debug for TaxonomyClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaxonomyClient")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<TaxonomyClient>();
};

/// One successful exchange.
struct Fetched {
    url: Url,
    status: u16,
    bytes: Vec<u8>,
}

impl TaxonomyClient {
    /// A client with `config` that takes its tokens from `tokens` (for example
    /// [`OAuthConfig::application_token_source`] or an
    /// [`ApplicationTokenProvider`](crate::oauth::ApplicationTokenProvider)).
    pub fn new(
        config: TaxonomyConfig,
        tokens: Arc<dyn AccessTokenSource>,
    ) -> Result<Self, TaxonomyError> {
        let mut builder = reqwest::blocking::Client::builder()
            .connect_timeout(config.connect_timeout)
            .timeout(config.timeout)
            // The request carries a bearer token: never follow a redirect with it.
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("marketplace-toolkit/", env!("CARGO_PKG_VERSION")));
        if is_loopback(&config.base_url) {
            builder = builder.no_proxy();
        }
        let http = builder.build().map_err(|e| TaxonomyError::Transport {
            url: config.base_url.to_string(),
            message: error_chain(&e),
        })?;
        Ok(Self {
            config,
            tokens,
            http,
            sleeper: Arc::new(ThreadSleeper),
            tree_form: AtomicU8::new(FORM_UNKNOWN),
        })
    }

    /// A client configured from the environment: [`OAuthConfig::from_env`] for the host and
    /// the credentials (an application token source, or `MARKETPLACE_ACCESS_TOKEN`), and the
    /// default [`TaxonomyConfig`] for that host with the environment's settings
    /// ([`TaxonomyConfig::with_env`]: `MARKETPLACE_TREE_PATH`).
    pub fn from_env() -> Result<Self, TaxonomyError> {
        let oauth = OAuthConfig::from_env().map_err(crate::oauth::OAuthError::from)?;
        let tokens = oauth.application_token_source()?;
        let config =
            TaxonomyConfig::from_oauth_config(&oauth).with_env(|name| std::env::var(name).ok())?;
        Self::new(config, tokens)
    }

    /// Replaces the way the client waits between attempts (tests pass a
    /// [`RecordingSleeper`](super::RecordingSleeper)).
    pub fn with_sleeper(mut self, sleeper: Arc<dyn Sleeper>) -> Self {
        self.sleeper = sleeper;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &TaxonomyConfig {
        &self.config
    }

    /// The getCategoryTree path form this client uses: the configured one, or with
    /// [`TreePath::Auto`] the form that worked (`Auto` until a tree was fetched).
    pub fn tree_path_in_use(&self) -> TreePath {
        match (
            self.config.tree_path,
            self.tree_form.load(Ordering::Acquire),
        ) {
            (TreePath::Auto, FORM_PATH) => TreePath::Path,
            (TreePath::Auto, FORM_QUERY) => TreePath::Query,
            (form, _) => form,
        }
    }

    /// The `Accept-Language` a call for `site` sends: `language`, else the configured
    /// language, else the site's language.
    pub fn language_for(&self, site: SiteId, language: Option<&str>) -> String {
        language
            .filter(|l| !l.trim().is_empty())
            .or(self.config.language.as_deref())
            .unwrap_or(site.language())
            .to_owned()
    }

    /// Fetches the full category tree of `site` (getCategoryTree) and returns the body
    /// unparsed, with the URL and language it was fetched with. `language` overrides
    /// `Accept-Language`.
    ///
    /// The path form is [`TaxonomyConfig::tree_path`]. With [`TreePath::Auto`] the path form
    /// is tried first; when it is answered with a 404 or the service's "tree not found"
    /// (errorId 62004), the query form is tried once; the form that worked is kept for every
    /// later call of this client (see [`tree_path_in_use`](Self::tree_path_in_use)).
    pub fn fetch_tree_body(
        &self,
        site: SiteId,
        language: Option<&str>,
    ) -> Result<TreeBody, TaxonomyError> {
        let language = self.language_for(site, language);
        let tree_id = site.tree_id();
        let fetch = |form: TreePath| {
            self.execute(
                self.config.tree_url_in(tree_id, form),
                site.marketplace_id(),
                &language,
            )
        };
        let fetched = match self.tree_path_in_use() {
            TreePath::Auto => match fetch(TreePath::Path) {
                Ok(fetched) => {
                    self.tree_form.store(FORM_PATH, Ordering::Release);
                    fetched
                }
                Err(first) if is_tree_not_found(&first) => match fetch(TreePath::Query) {
                    Ok(fetched) => {
                        self.tree_form.store(FORM_QUERY, Ordering::Release);
                        fetched
                    }
                    // Both forms say "not found": the tree id is unknown; the first answer
                    // (of the documented form) says so.
                    Err(second) if is_tree_not_found(&second) => return Err(first),
                    Err(second) => return Err(second),
                },
                Err(first) => return Err(first),
            },
            form => fetch(form)?,
        };
        Ok(TreeBody {
            site,
            url: fetched.url,
            language,
            bytes: fetched.bytes,
        })
    }

    /// Fetches and decodes the full category tree of `site` with
    /// [`decode_tree`](crate::decode::decode_tree).
    ///
    /// `Accept-Language` is `provenance.language` when it is not empty (else as in
    /// [`language_for`](Self::language_for)); an empty `provenance.language` or
    /// `provenance.source` is filled with the language sent and the URL.
    pub fn fetch_tree(
        &self,
        site: SiteId,
        provenance: &Provenance,
    ) -> Result<CategoryTree, TaxonomyError> {
        let body = self.fetch_tree_body(site, Some(provenance.language.as_str()))?;
        let mut provenance = provenance.clone();
        if provenance.language.trim().is_empty() {
            provenance.language = body.language.clone();
        }
        if provenance.source.trim().is_empty() {
            provenance.source = body.url.to_string();
        }
        let tree =
            decode_tree(&body.bytes, &provenance).map_err(|source| TaxonomyError::Decode {
                url: body.url.to_string(),
                source,
            })?;
        if tree.meta.tree_id != site.tree_id() {
            return Err(TaxonomyError::UnexpectedBody {
                url: body.url.to_string(),
                status: 200,
                reason: format!(
                    "categoryTreeId is {} but tree {} was asked for",
                    tree.meta.tree_id,
                    site.tree_id()
                ),
                body: String::new(),
            });
        }
        Ok(tree)
    }

    /// Categories matching a keyword (getCategorySuggestions):
    /// `GET …/category_tree/{id}/get_category_suggestions?q=…` (`q` form-encoded by the `url`
    /// crate). No match (an empty list, or `204 No Content`) is an empty
    /// [`CategorySuggestions::suggestions`].
    pub fn category_suggestions(
        &self,
        site: SiteId,
        q: &str,
    ) -> Result<CategorySuggestions, TaxonomyError> {
        let url = self.config.suggestions_url(site.tree_id(), q);
        let fetched = self.execute(url, site.marketplace_id(), &self.language_for(site, None))?;
        if fetched.status == 204 || fetched.bytes.iter().all(u8::is_ascii_whitespace) {
            // The service documents 204 No Content when nothing matches.
            return Ok(CategorySuggestions {
                tree_id: site.tree_id(),
                tree_version: String::new(),
                suggestions: Vec::new(),
            });
        }
        let wire: WireSuggestions = parse_json(&fetched)?;
        suggestions_from_wire(wire).map_err(|reason| unexpected(&fetched, reason))
    }

    /// One category and everything below it (getCategorySubtree):
    /// `GET …/category_tree/{id}/get_category_subtree?category_id=…`.
    pub fn category_subtree(
        &self,
        site: SiteId,
        category_id: u32,
    ) -> Result<CategorySubtree, TaxonomyError> {
        let url = self.config.subtree_url(site.tree_id(), category_id);
        let fetched = self.execute(url, site.marketplace_id(), &self.language_for(site, None))?;
        let wire: WireSubtree = parse_json(&fetched)?;
        subtree_from_wire(wire).map_err(|reason| unexpected(&fetched, reason))
    }

    /// The aspects a listing in a leaf category fills in (getItemAspectsForCategory):
    /// `GET …/category_tree/{id}/get_item_aspects_for_category?category_id=…`.
    pub fn item_aspects(
        &self,
        site: SiteId,
        category_id: u32,
    ) -> Result<ItemAspects, TaxonomyError> {
        let url = self.config.aspects_url(site.tree_id(), category_id);
        let fetched = self.execute(url, site.marketplace_id(), &self.language_for(site, None))?;
        let wire: WireAspects = parse_json(&fetched)?;
        Ok(aspects_from_wire(category_id, wire))
    }

    /// The default category tree id of a marketplace (getDefaultCategoryTreeId):
    /// `GET …/get_default_category_tree_id?marketplace_id=…`. The marketplace header carries
    /// the same id, and `Accept-Language` the site's language when the marketplace is known.
    pub fn default_tree_id(&self, marketplace_id: &str) -> Result<DefaultTreeId, TaxonomyError> {
        let language = match SiteId::from_marketplace_id(marketplace_id) {
            Some(site) => self.language_for(site, None),
            None => self
                .config
                .language
                .clone()
                .unwrap_or_else(|| "en-US".to_owned()),
        };
        let url = self.config.default_tree_id_url(marketplace_id);
        let fetched = self.execute(url, marketplace_id, &language)?;
        let wire: WireDefaultTreeId = parse_json(&fetched)?;
        default_tree_id_from_wire(wire).map_err(|reason| unexpected(&fetched, reason))
    }

    /// Sends the request with renewal on 401 and retries; returns the success body.
    fn execute(
        &self,
        url: Url,
        marketplace_id: &str,
        language: &str,
    ) -> Result<Fetched, TaxonomyError> {
        let marketplace = header_value("marketplace id", marketplace_id)?;
        let language = header_value("Accept-Language", language)?;
        let mut token = self.tokens.access_token()?;
        let mut renewed = false;
        let mut retry = 0u32;
        loop {
            let error = match self.attempt(&url, &token, &marketplace, &language) {
                Ok(fetched) => return Ok(fetched),
                Err(e) => e,
            };
            if error.status() == Some(401) && !renewed {
                self.tokens.invalidate(&token);
                token = self.tokens.access_token()?;
                renewed = true;
                continue;
            }
            if !error.is_retryable() || retry >= self.config.max_retries {
                return Err(error);
            }
            let delay = match error.retry_after() {
                Some(wait) if wait > self.config.max_retry_after => return Err(error),
                Some(wait) => wait,
                None => full_jitter(backoff_ceiling(
                    self.config.backoff_base,
                    self.config.backoff_cap,
                    retry,
                )),
            };
            self.sleeper.sleep(delay);
            retry += 1;
        }
    }

    /// One request.
    fn attempt(
        &self,
        url: &Url,
        token: &AccessToken,
        marketplace: &HeaderValue,
        language: &HeaderValue,
    ) -> Result<Fetched, TaxonomyError> {
        let mut authorization = HeaderValue::from_str(&format!("Bearer {}", token.secret()))
            .map_err(|_| {
                TaxonomyError::Invalid(
                    "the access token contains characters that cannot be sent in a header".into(),
                )
            })?;
        authorization.set_sensitive(true);
        let at = url.to_string();
        let mut response = self
            .http
            .get(url.clone())
            .header(AUTHORIZATION, authorization)
            .header(MARKETPLACE_HEADER, marketplace.clone())
            .header(ACCEPT_LANGUAGE, language.clone())
            .header(ACCEPT, "application/json")
            .header(ACCEPT_ENCODING, "gzip")
            .timeout(self.config.timeout)
            .send()
            .map_err(|e| {
                if e.is_timeout() {
                    TaxonomyError::Timeout {
                        url: at.clone(),
                        message: error_chain(&e),
                    }
                } else {
                    TaxonomyError::Transport {
                        url: at.clone(),
                        message: error_chain(&e),
                    }
                }
            })?;
        let status = response.status().as_u16();
        let retry_after = crate::oauth::client::retry_after(response.headers());

        if (200..300).contains(&status) {
            let bytes = read_limited(&mut response, self.config.max_body_bytes, &at)?;
            return Ok(Fetched {
                url: url.clone(),
                status,
                bytes,
            });
        }
        // An error answer: its start is enough, and a broken error body is no reason to fail
        // differently.
        let limit = self.config.max_body_bytes.min(MAX_ERROR_BODY);
        let mut bytes = Vec::new();
        let _ = (&mut response).take(limit).read_to_end(&mut bytes);
        let errors = parse_error_body(&bytes);
        if status == 429 {
            return Err(TaxonomyError::RateLimited {
                url: at,
                retry_after,
                errors: errors.unwrap_or_default(),
            });
        }
        Err(match errors {
            Some(errors) => TaxonomyError::Service {
                status,
                url: at,
                errors,
            },
            None => TaxonomyError::Http {
                status,
                url: at,
                body: sanitize_body(&bytes, &[token.secret()]),
            },
        })
    }
}

/// A 404, or the service's "category tree not found" (errorId 62004) whatever its status.
fn is_tree_not_found(error: &TaxonomyError) -> bool {
    error.status() == Some(404) || error.error_id() == Some(62004)
}

fn header_value(what: &str, value: &str) -> Result<HeaderValue, TaxonomyError> {
    HeaderValue::from_str(value.trim()).map_err(|_| {
        TaxonomyError::Invalid(format!("the {what} {value:?} cannot be sent in a header"))
    })
}

fn read_limited(
    response: &mut reqwest::blocking::Response,
    limit: u64,
    url: &str,
) -> Result<Vec<u8>, TaxonomyError> {
    let too_large = || TaxonomyError::BodyTooLarge {
        url: url.to_owned(),
        limit,
    };
    if response.content_length().is_some_and(|n| n > limit) {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match response.read(&mut chunk) {
            Ok(0) => return Ok(bytes),
            Ok(n) => {
                if bytes.len() as u64 + n as u64 > limit {
                    return Err(too_large());
                }
                bytes.extend_from_slice(&chunk[..n]);
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                let message = error_chain(&e);
                return Err(if io_is_timeout(&e) {
                    TaxonomyError::Timeout {
                        url: url.to_owned(),
                        message,
                    }
                } else {
                    TaxonomyError::Truncated {
                        url: url.to_owned(),
                        received: bytes.len() as u64,
                        message,
                    }
                });
            }
        }
    }
}

fn io_is_timeout(e: &std::io::Error) -> bool {
    if e.kind() == std::io::ErrorKind::TimedOut {
        return true;
    }
    let mut source: Option<&(dyn std::error::Error + 'static)> = e.get_ref().map(|r| r as _);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<reqwest::Error>()
            && r.is_timeout()
        {
            return true;
        }
        if let Some(io) = s.downcast_ref::<std::io::Error>()
            && io.kind() == std::io::ErrorKind::TimedOut
        {
            return true;
        }
        source = s.source();
    }
    false
}

fn parse_json<T: DeserializeOwned>(fetched: &Fetched) -> Result<T, TaxonomyError> {
    serde_json::from_slice(&fetched.bytes).map_err(|e| {
        unexpected(
            fetched,
            // serde_json's message may quote the body: keep only where it failed.
            format!(
                "not the expected JSON ({:?} error at line {} column {})",
                e.classify(),
                e.line(),
                e.column()
            ),
        )
    })
}

fn unexpected(fetched: &Fetched, reason: String) -> TaxonomyError {
    TaxonomyError::UnexpectedBody {
        url: fetched.url.to_string(),
        status: fetched.status,
        reason,
        body: sanitize_body(&fetched.bytes, &[]),
    }
}

fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}
