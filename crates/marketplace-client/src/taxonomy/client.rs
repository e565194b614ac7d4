//! The blocking taxonomy client: one method per call, the same request discipline for all
//! (headers, token renewal on 401, retries with back-off, time-outs, body limit).

use std::io::Read as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::Duration;

use reqwest::header::{ACCEPT, ACCEPT_ENCODING, ACCEPT_LANGUAGE, AUTHORIZATION, HeaderValue};
use serde::de::DeserializeOwned;
use url::Url;

use super::aspects_file::{Download, DownloadProgress, ItemAspectsFile};
use super::config::{MARKETPLACE_HEADER, TaxonomyConfig, TreePath};
use super::error::{TaxonomyError, parse_error_body_redacted};
use super::retry::{Sleeper, ThreadSleeper, backoff_ceiling, full_jitter};
use super::types::{
    CategorySuggestions, CompatibilityProperties, CompatibilityPropertyValues, DefaultTreeId,
    ExpiredCategories, ItemAspects, TreeBody, WireAspects, WireCompatibilityProperties,
    WireCompatibilityValues, WireDefaultTreeId, WireExpiredCategories, WireSuggestions,
    aspects_from_wire, compatibility_properties_from_wire, compatibility_values_from_wire,
    default_tree_id_from_wire, expired_from_wire, suggestions_from_wire,
};
use crate::http::error_chain;
use crate::oauth::redact::Redactor;
use crate::oauth::{AccessToken, AccessTokenSource, OAuthConfig};
use marketplaces::Marketplace;
use taxonomy_tree::decode::{CategorySubtree, Provenance, decode_subtree, decode_tree};
use taxonomy_tree::tree::CategoryTree;

/// At most this much is read of an answer whose documented shape is a few short fields: an
/// error answer (only its start is kept anyway), and getDefaultCategoryTreeId's (two fields
/// of a few bytes, asked of every site at once before a refresh).
const MAX_SHORT_ANSWER: u64 = 1024 * 1024;

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
/// use marketplaces::Marketplace;
/// use marketplace_client::taxonomy::TaxonomyClient;
/// # fn main() -> Result<(), marketplace_client::taxonomy::TaxonomyError> {
/// // MARKETPLACE_CLIENT_ID / MARKETPLACE_CLIENT_SECRET (or MARKETPLACE_ACCESS_TOKEN), and
/// // MARKETPLACE_BASE_URL + MARKETPLACE_AUTH_URL for another host.
/// let client = TaxonomyClient::from_env()?;
/// let body = client.fetch_tree_body(Marketplace::De, None)?; // Accept-Language: de-DE
/// println!("{} bytes from {}", body.bytes.len(), body.url);
/// for s in client.category_suggestions(Marketplace::Us, "iphone 15")?.suggestions {
///     println!("{} {}", s.category.id, s.path());
/// }
/// # Ok(()) }
/// ```
pub struct TaxonomyClient {
    config: TaxonomyConfig,
    tokens: Arc<dyn AccessTokenSource>,
    http: crate::http::Http,
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

/// One request's settings.
struct Call<'a> {
    url: &'a Url,
    marketplace_id: &'a str,
    language: &'a str,
    accept: &'static str,
    timeout: Duration,
}

/// What [`TaxonomyClient::send`] hands each success answer to (with its URL and the request's
/// sanitizer); `Send`, since the call may run on a thread of its own.
type ReadAnswer<'a, T> = dyn FnMut(&mut reqwest::blocking::Response, &str, &Redactor) -> Result<T, TaxonomyError>
    + Send
    + 'a;

/// One successful exchange.
struct Fetched {
    url: Url,
    status: u16,
    bytes: Vec<u8>,
    /// The sanitizer of the request (it knows the token sent), for errors about the body.
    redactor: Redactor,
}

impl TaxonomyClient {
    /// A client with `config` that takes its tokens from `tokens` (for example
    /// [`OAuthConfig::application_token_source`] or an
    /// [`ApplicationTokenProvider`](crate::oauth::ApplicationTokenProvider)).
    pub fn new(
        config: TaxonomyConfig,
        tokens: Arc<dyn AccessTokenSource>,
    ) -> Result<Self, TaxonomyError> {
        // The requests carry a bearer token: the client never follows a redirect with it.
        let http = crate::http::client(&config.base_url, config.connect_timeout, config.timeout)
            .map_err(|message| TaxonomyError::Transport {
                url: config.base_url.to_string(),
                message,
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

    /// The tree a call for `site` addresses: the site's tree in the configured language
    /// ([`Marketplace::tree_for_language`]: Canada's French tree with `fr-CA`), else its
    /// default tree.
    fn tree_id_for(&self, site: Marketplace) -> u32 {
        site.tree_for_language(&self.language_for(site, None))
    }

    /// The `Accept-Language` a call for `site` sends: `language`, else the configured
    /// language, else the site's language.
    pub fn language_for(&self, site: Marketplace, language: Option<&str>) -> String {
        language
            .filter(|l| !l.trim().is_empty())
            .or(self.config.language.as_deref())
            .unwrap_or(site.default_language())
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
        site: Marketplace,
        language: Option<&str>,
    ) -> Result<TreeBody, TaxonomyError> {
        let language = self.language_for(site, language);
        let tree_id = site.tree_for_language(&language);
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
            tree_id,
            url: fetched.url,
            language,
            bytes: fetched.bytes,
        })
    }

    /// Fetches and decodes the full category tree of `site` with
    /// [`decode_tree`](taxonomy_tree::decode::decode_tree).
    ///
    /// `Accept-Language` is `provenance.language` when it is not empty (else as in
    /// [`language_for`](Self::language_for)); an empty `provenance.language` or
    /// `provenance.source` is filled with the language sent and the URL.
    pub fn fetch_tree(
        &self,
        site: Marketplace,
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
        if tree.meta.tree_id != body.tree_id {
            return Err(TaxonomyError::UnexpectedBody {
                url: body.url.to_string(),
                status: 200,
                reason: format!(
                    "categoryTreeId is {} but tree {} was asked for",
                    tree.meta.tree_id, body.tree_id
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
        site: Marketplace,
        q: &str,
    ) -> Result<CategorySuggestions, TaxonomyError> {
        let url = self.config.suggestions_url(self.tree_id_for(site), q);
        let fetched = self.execute(url, site.marketplace_id(), &self.language_for(site, None))?;
        if is_empty(&fetched) {
            // The service documents 204 No Content when nothing matches.
            return Ok(CategorySuggestions {
                tree_id: self.tree_id_for(site),
                tree_version: String::new(),
                suggestions: Vec::new(),
            });
        }
        let wire: WireSuggestions = parse_json(&fetched)?;
        suggestions_from_wire(self.tree_id_for(site), wire)
            .map_err(|reason| unexpected(&fetched, reason))
    }

    /// One category and everything below it (getCategorySubtree):
    /// `GET …/category_tree/{id}/get_category_subtree?category_id=…`. The answer goes through
    /// the tree's node decoder and structural rules
    /// ([`decode_subtree`](taxonomy_tree::decode::decode_subtree)); a failure is
    /// [`TaxonomyError::Decode`].
    pub fn category_subtree(
        &self,
        site: Marketplace,
        category_id: u32,
    ) -> Result<CategorySubtree, TaxonomyError> {
        let url = self.config.subtree_url(self.tree_id_for(site), category_id);
        let fetched = self.execute(url, site.marketplace_id(), &self.language_for(site, None))?;
        decode_subtree(&fetched.bytes, category_id).map_err(|source| TaxonomyError::Decode {
            url: fetched.url.to_string(),
            source,
        })
    }

    /// The aspects a listing in a leaf category fills in (getItemAspectsForCategory):
    /// `GET …/category_tree/{id}/get_item_aspects_for_category?category_id=…`. A category
    /// without aspects (`204 No Content`) gives empty [`ItemAspects::aspects`]. Every
    /// documented field of an aspect is kept; only an aspect without `localizedAspectName`
    /// (or a value without `localizedValue`) is refused, as
    /// [`TaxonomyError::UnexpectedBody`] naming the field.
    pub fn item_aspects(
        &self,
        site: Marketplace,
        category_id: u32,
    ) -> Result<ItemAspects, TaxonomyError> {
        let url = self.config.aspects_url(self.tree_id_for(site), category_id);
        let fetched = self.execute(url, site.marketplace_id(), &self.language_for(site, None))?;
        if is_empty(&fetched) {
            // The service documents 204 No Content for a category without aspects.
            return Ok(ItemAspects {
                category_id,
                aspects: Vec::new(),
            });
        }
        let wire: WireAspects = parse_json(&fetched)?;
        aspects_from_wire(category_id, wire).map_err(|reason| unexpected(&fetched, reason))
    }

    /// The default category tree id of a marketplace (getDefaultCategoryTreeId):
    /// `GET …/get_default_category_tree_id?marketplace_id=…`. The marketplace header carries
    /// the same id, and `Accept-Language` the site's language when the marketplace is known.
    /// `204 No Content` (the service has no default tree for it) is
    /// [`TaxonomyError::NoDefaultTree`]. The answer is two short fields: one of over 1 MiB
    /// (or over [`TaxonomyConfig::max_body_bytes`], if smaller) is
    /// [`TaxonomyError::BodyTooLarge`].
    pub fn default_tree_id(&self, marketplace_id: &str) -> Result<DefaultTreeId, TaxonomyError> {
        let language = match Marketplace::from_marketplace_id(marketplace_id) {
            Some(site) => self.language_for(site, None),
            None => self
                .config
                .language
                .clone()
                .unwrap_or_else(|| "en-US".to_owned()),
        };
        let url = self.config.default_tree_id_url(marketplace_id);
        let limit = self.config.max_body_bytes.min(MAX_SHORT_ANSWER);
        let fetched = self.execute_limited(url, marketplace_id, &language, limit)?;
        if is_empty(&fetched) {
            return Err(TaxonomyError::NoDefaultTree {
                marketplace_id: marketplace_id.to_owned(),
                url: fetched.url.to_string(),
            });
        }
        let wire: WireDefaultTreeId = parse_json(&fetched)?;
        default_tree_id_from_wire(wire).map_err(|reason| unexpected(&fetched, reason))
    }

    /// The expired leaf categories of `site`'s tree mapped to the active leaf categories that
    /// replaced them (getExpiredCategories):
    /// `GET …/category_tree/{id}/get_expired_categories`. A tree with none (an empty list, or
    /// `204 No Content`) gives empty [`ExpiredCategories::mappings`].
    pub fn expired_categories(
        &self,
        site: Marketplace,
    ) -> Result<ExpiredCategories, TaxonomyError> {
        let url = self.config.expired_categories_url(self.tree_id_for(site));
        let fetched = self.execute(url, site.marketplace_id(), &self.language_for(site, None))?;
        if is_empty(&fetched) {
            return Ok(ExpiredCategories {
                tree_id: self.tree_id_for(site),
                mappings: Vec::new(),
            });
        }
        let wire: WireExpiredCategories = parse_json(&fetched)?;
        expired_from_wire(self.tree_id_for(site), wire)
            .map_err(|reason| unexpected(&fetched, reason))
    }

    /// The parts-compatibility properties of a category, e.g. `Make`, `Model`, `Year`
    /// (getCompatibilityProperties):
    /// `GET …/category_tree/{id}/get_compatibility_properties?category_id=…`. `204 No Content`
    /// gives an empty list.
    pub fn compatibility_properties(
        &self,
        site: Marketplace,
        category_id: u32,
    ) -> Result<CompatibilityProperties, TaxonomyError> {
        let url = self
            .config
            .compatibility_properties_url(self.tree_id_for(site), category_id);
        let fetched = self.execute(url, site.marketplace_id(), &self.language_for(site, None))?;
        if is_empty(&fetched) {
            return Ok(CompatibilityProperties {
                category_id,
                properties: Vec::new(),
            });
        }
        let wire: WireCompatibilityProperties = parse_json(&fetched)?;
        compatibility_properties_from_wire(category_id, wire)
            .map_err(|reason| unexpected(&fetched, reason))
    }

    /// The values of one compatibility property, narrowed by `filter` (`name:value` pairs of
    /// other properties, e.g. `[("Year", "2018"), ("Make", "Toyota")]`)
    /// (getCompatibilityPropertyValues):
    /// `GET …/get_compatibility_property_values?category_id=…&compatibility_property=…&filter=…`.
    /// `204 No Content` gives an empty list.
    pub fn compatibility_property_values(
        &self,
        site: Marketplace,
        category_id: u32,
        property: &str,
        filter: &[(&str, &str)],
    ) -> Result<CompatibilityPropertyValues, TaxonomyError> {
        let url = self.config.compatibility_property_values_url(
            self.tree_id_for(site),
            category_id,
            property,
            filter,
        );
        let fetched = self.execute(url, site.marketplace_id(), &self.language_for(site, None))?;
        if is_empty(&fetched) {
            return Ok(CompatibilityPropertyValues {
                category_id,
                property: property.to_owned(),
                values: Vec::new(),
            });
        }
        let wire: WireCompatibilityValues = parse_json(&fetched)?;
        compatibility_values_from_wire(category_id, property, wire)
            .map_err(|reason| unexpected(&fetched, reason))
    }

    /// Downloads the aspects of every leaf category of `site` (fetchItemAspects:
    /// `GET …/category_tree/{id}/fetch_item_aspects`) to `dest`, a gzipped JSON file that can
    /// pass 100 MB.
    ///
    /// The answer streams to a temporary file beside `dest` (never whole into memory) while
    /// its gzip stream is decompressed and its JSON followed; only a complete, intact file
    /// (every gzip member whole, the JSON object ended) is renamed over `dest`, so a failed or
    /// cut-off download leaves `dest` as it was and no temporary file behind. Temporary files
    /// get random names ([`taxonomy_tree::atomic::stage_file`]), so downloads in other
    /// processes or containers never collide, and leftovers of a killed download are removed
    /// by a later one. A server that sent the JSON transport-compressed instead gets it stored
    /// gzipped all the same. `on_progress` is called as bytes arrive (an `indicatif` bar can
    /// follow it). The call has its own time-out and size limits
    /// ([`TaxonomyConfig::download_timeout`], [`TaxonomyConfig::max_download_bytes`] as
    /// received, [`TaxonomyConfig::max_decompressed_bytes`] for the JSON inside); a connection
    /// that breaks is retried like any other call, from the start. Read the file with
    /// [`ItemAspectsFile::reader`].
    pub fn fetch_item_aspects(
        &self,
        site: Marketplace,
        dest: &std::path::Path,
        on_progress: &mut (dyn FnMut(DownloadProgress) + Send),
    ) -> Result<ItemAspectsFile, TaxonomyError> {
        let url = self.config.item_aspects_file_url(self.tree_id_for(site));
        let language = self.language_for(site, None);
        let call = Call {
            url: &url,
            marketplace_id: site.marketplace_id(),
            language: &language,
            accept: "application/octet-stream, application/json",
            timeout: self.config.download_timeout,
        };
        self.send(&call, &mut |response, at, _| {
            let total = response.content_length();
            Download {
                dest,
                url: at,
                limit: self.config.max_download_bytes,
                json_limit: self.config.max_decompressed_bytes,
                on_progress: &mut *on_progress,
            }
            .run(response, total, self.tree_id_for(site), &|e, received| {
                read_error(&e, at, received)
            })
        })
    }

    /// Sends the request with renewal on 401 and retries; returns the success body (at most
    /// [`TaxonomyConfig::max_body_bytes`]).
    fn execute(
        &self,
        url: Url,
        marketplace_id: &str,
        language: &str,
    ) -> Result<Fetched, TaxonomyError> {
        let limit = self.config.max_body_bytes;
        self.execute_limited(url, marketplace_id, language, limit)
    }

    /// [`execute`](Self::execute) with a success body of at most `limit` bytes.
    fn execute_limited(
        &self,
        url: Url,
        marketplace_id: &str,
        language: &str,
        limit: u64,
    ) -> Result<Fetched, TaxonomyError> {
        let call = Call {
            url: &url,
            marketplace_id,
            language,
            accept: "application/json",
            timeout: self.config.timeout,
        };
        self.send(&call, &mut |response, at, redactor| {
            let status = response.status().as_u16();
            let bytes = read_limited(response, limit, at)?;
            Ok(Fetched {
                url: url.clone(),
                status,
                bytes,
                redactor: redactor.clone(),
            })
        })
    }

    /// [`send_here`](Self::send_here), on a thread of its own when a tokio runtime is current
    /// (reqwest's blocking client panics on a runtime's thread; see
    /// [`crate::http::off_runtime`]). Every call goes through here.
    fn send<T: Send>(
        &self,
        call: &Call<'_>,
        read: &mut ReadAnswer<'_, T>,
    ) -> Result<T, TaxonomyError> {
        crate::http::off_runtime(
            || self.send_here(call, read),
            |message| TaxonomyError::Transport {
                url: call.url.to_string(),
                message,
            },
        )
    }

    /// Sends `call` with renewal on 401 and retries; `read` consumes each success answer
    /// (a retry after a failed read calls it again with the new answer).
    fn send_here<T>(
        &self,
        call: &Call<'_>,
        read: &mut dyn FnMut(
            &mut reqwest::blocking::Response,
            &str,
            &Redactor,
        ) -> Result<T, TaxonomyError>,
    ) -> Result<T, TaxonomyError> {
        let marketplace = header_value("marketplace id", call.marketplace_id)?;
        let language = header_value("Accept-Language", call.language)?;
        let mut token = self.tokens.access_token()?;
        let mut renewed = false;
        let mut retry = 0u32;
        loop {
            let error = match self.attempt(call, &token, &marketplace, &language, read) {
                Ok(done) => return Ok(done),
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
    fn attempt<T>(
        &self,
        call: &Call<'_>,
        token: &AccessToken,
        marketplace: &HeaderValue,
        language: &HeaderValue,
        read: &mut dyn FnMut(
            &mut reqwest::blocking::Response,
            &str,
            &Redactor,
        ) -> Result<T, TaxonomyError>,
    ) -> Result<T, TaxonomyError> {
        let mut authorization = HeaderValue::from_str(&format!("Bearer {}", token.secret()))
            .map_err(|_| {
                TaxonomyError::Invalid(
                    "the access token contains characters that cannot be sent in a header".into(),
                )
            })?;
        authorization.set_sensitive(true);
        let at = call.url.to_string();
        let mut response = self
            .http
            .get(call.url.clone())
            .header(AUTHORIZATION, authorization)
            .header(MARKETPLACE_HEADER, marketplace.clone())
            .header(ACCEPT_LANGUAGE, language.clone())
            .header(ACCEPT, call.accept)
            .header(ACCEPT_ENCODING, "gzip")
            .timeout(call.timeout)
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
        let redactor = Redactor::new().with(token.secret());

        if (200..300).contains(&status) {
            return read(&mut response, &at, &redactor);
        }
        // An error answer: its start is enough, and a broken error body is no reason to fail
        // differently.
        let limit = self.config.max_body_bytes.min(MAX_SHORT_ANSWER);
        let mut bytes = Vec::new();
        let _ = (&mut response).take(limit).read_to_end(&mut bytes);
        let errors = parse_error_body_redacted(&bytes, &redactor);
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
                body: redactor.body(&bytes),
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
            Err(e) => return Err(read_error(&e, url, bytes.len() as u64)),
        }
    }
}

/// A failed body read: a time-out, or a cut-off body (retried).
fn read_error(e: &std::io::Error, url: &str, received: u64) -> TaxonomyError {
    let message = error_chain(e);
    if io_is_timeout(e) {
        TaxonomyError::Timeout {
            url: url.to_owned(),
            message,
        }
    } else {
        TaxonomyError::Truncated {
            url: url.to_owned(),
            received,
            message,
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

/// `204 No Content`, or a success with an empty body.
fn is_empty(fetched: &Fetched) -> bool {
    fetched.status == 204 || fetched.bytes.iter().all(u8::is_ascii_whitespace)
}

fn parse_json<T: DeserializeOwned>(fetched: &Fetched) -> Result<T, TaxonomyError> {
    serde_json::from_slice(&fetched.bytes).map_err(|e| {
        let reason = match e.classify() {
            // "invalid type: string \"…\", expected u32": it names the field's expected type
            // and may quote the body, so it passes the request's sanitizer.
            serde_json::error::Category::Data => format!(
                "not the documented shape: {}",
                fetched.redactor.text(&e.to_string())
            ),
            // Syntax and EOF errors would quote nothing useful: where it failed is enough.
            category => format!(
                "not the expected JSON ({category:?} error at line {} column {})",
                e.line(),
                e.column()
            ),
        };
        unexpected(fetched, reason)
    })
}

/// An answer that is not what the call documents. The reason may quote the answer, so it
/// passes the request's sanitizer like the body; the sanitizer reads only the start of
/// either, however large the answer.
fn unexpected(fetched: &Fetched, reason: String) -> TaxonomyError {
    TaxonomyError::UnexpectedBody {
        url: fetched.url.to_string(),
        status: fetched.status,
        reason: fetched.redactor.text(&reason),
        body: fetched.redactor.body(&fetched.bytes),
    }
}
