//! The Taxonomy API for async programs: the same client as [`crate::taxonomy`], with
//! `async fn` for every call. Configuration and errors are the blocking module's own types,
//! re-exported here; the answers are [`crate::model`]'s, as for the blocking client.
//!
//! ```no_run
//! use std::sync::Arc;
//! use marketplace_client::Marketplace;
//! use marketplace_client::aio::oauth::{ApplicationTokenProvider, OAuthConfig, OAuthClient};
//! use marketplace_client::aio::taxonomy::{TaxonomyClient, ClientConfig};
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let oauth = OAuthConfig::from_env()?;
//! let tokens = Arc::new(ApplicationTokenProvider::new(OAuthClient::from_config(&oauth)?));
//! let client = TaxonomyClient::new(ClientConfig::from_oauth_config(&oauth), tokens)?;
//! for s in client.category_suggestions(Marketplace::Us, "iphone 15").await?.suggestions {
//!     println!("{} {}", s.category.id, s.path());
//! }
//! # Ok(()) }
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use tracing::Instrument as _;

use marketplaces::{Marketplace, MarketplaceCategory};
use taxonomy_tree::decode::Provenance;
use taxonomy_tree::tree::CategoryTree;

use super::oauth::{AccessTokenSource, HttpOptions, OAuthConfig};
use crate::core::api::ApiCall;
use crate::core::taxonomy::{self as ops, Operation, TreeForms};
use crate::model::CategorySubtree;
use crate::taxonomy::download::Download;

use crate::model::{
    CategorySuggestions, CompatibilityProperties, CompatibilityPropertyValues, DefaultTreeId,
    ExpiredCategories, ItemAspects, ItemAspectsFile, ItemConditionPolicyResponse,
    ListingStructurePolicyResponse,
};
#[cfg(feature = "trees")]
pub use crate::taxonomy::TreeBody;
#[cfg(not(feature = "trees"))]
use crate::taxonomy::TreeBody;
pub use crate::taxonomy::{ApiError, ClientConfig, TreePath};

/// A client of eBay's Commerce Taxonomy API (v1) for async programs: the async
/// [`crate::taxonomy::TaxonomyClient`], with the same requests, renewal on 401, retries with
/// back-off (waiting with `tokio::time::sleep`), time-outs and limits. `Send + Sync`: one
/// client serves every task.
pub struct TaxonomyClient {
    /// The client every call goes through; it holds the configuration.
    api: super::api::ApiClient,
    tree_forms: TreeForms,
}

impl std::fmt::Debug for TaxonomyClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaxonomyClient")
            .field("config", self.config())
            .finish_non_exhaustive()
    }
}

impl TaxonomyClient {
    /// A client with `config` that takes its tokens from `tokens`.
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
        Ok(Self {
            api: super::api::ApiClient::with_options(config, tokens, options)?,
            tree_forms: TreeForms::default(),
        })
    }

    /// A client configured from the environment, as [`crate::taxonomy::TaxonomyClient::from_env`].
    pub fn from_env() -> Result<Self, ApiError> {
        let oauth = OAuthConfig::from_env().map_err(crate::oauth::OAuthError::from)?;
        let tokens = crate::aio::oauth::ApplicationTokenProvider::source(&oauth)?;
        let config =
            ClientConfig::from_oauth_config(&oauth).with_env(|name| std::env::var(name).ok())?;
        Self::new(config, tokens)
    }

    /// Draws every call from `budget` (resource `commerce.taxonomy`; for `user`, if given):
    /// see [`ApiClient::with_budget`](super::api::ApiClient::with_budget).
    pub fn with_budget(
        mut self,
        budget: Arc<marketplace_budget::CallBudget>,
        user: Option<&str>,
    ) -> Self {
        self.api = self.api.with_budget(budget, user);
        self
    }

    /// Waits between attempts with `sleeper` (the blocking client's `with_sleeper`).
    #[cfg(feature = "test-util")]
    pub(crate) fn with_sleeper(mut self, sleeper: Arc<dyn crate::test_util::Sleeper>) -> Self {
        self.api = self.api.with_sleeper(sleeper);
        self
    }

    /// The configuration.
    pub fn config(&self) -> &ClientConfig {
        self.api.config()
    }

    /// The getCategoryTree path form this client uses: the configured one, or with
    /// [`TreePath::Auto`] the form that worked (`Auto` until a tree was fetched).
    pub fn tree_path_in_use(&self) -> TreePath {
        self.tree_forms.in_use(self.config().tree_path)
    }

    /// The `Accept-Language` a call for `site` sends: `language`, else the configured
    /// language, else the site's language.
    pub fn language_for(&self, site: impl Into<Marketplace>, language: Option<&str>) -> String {
        ops::language_for(self.config(), site.into(), language)
    }

    /// getCategoryTree of `site`, the body unparsed: as
    /// [`crate::taxonomy::TaxonomyClient::fetch_tree_body`] (with [`TreePath::Auto`], the form
    /// that worked is kept).
    #[cfg(feature = "trees")]
    pub async fn fetch_tree_body(
        &self,
        site: impl Into<Marketplace>,
        language: Option<&str>,
    ) -> Result<TreeBody, ApiError> {
        self.tree_body(site.into(), language).await
    }

    /// getCategoryTree of `site`, the body unparsed (see `fetch_tree_body`).
    async fn tree_body(
        &self,
        site: Marketplace,
        language: Option<&str>,
    ) -> Result<TreeBody, ApiError> {
        let mut forms = self.tree_forms.to_try(self.config().tree_path);
        while let Some(form) = forms.next_form() {
            match self
                .run(ops::tree_body(self.config(), site, language, form))
                .await
            {
                Ok(body) => {
                    self.tree_forms.worked(form);
                    return Ok(body);
                }
                Err(error) => {
                    if let Some(error) = forms.failed(error) {
                        return Err(error);
                    }
                }
            }
        }
        Err(ApiError::Invalid("no getCategoryTree form to try".into()))
    }

    /// getCategoryTree of `site`, decoded (on the blocking pool: a 20 MB tree is CPU work): as
    /// [`crate::taxonomy::TaxonomyClient::fetch_tree`].
    pub async fn fetch_tree(
        &self,
        site: impl Into<Marketplace>,
        provenance: &Provenance,
    ) -> Result<CategoryTree, ApiError> {
        let site: Marketplace = site.into();
        let body = self
            .tree_body(site, Some(provenance.language.as_str()))
            .await?;
        let provenance = provenance.clone();
        // Decoding a 20 MB tree is CPU work: off the runtime's threads.
        off_runtime(move || ops::decode_tree_body(&body, &provenance)).await
    }

    /// getCategorySuggestions: as [`crate::taxonomy::TaxonomyClient::category_suggestions`].
    pub async fn category_suggestions(
        &self,
        site: impl Into<Marketplace>,
        q: &str,
    ) -> Result<CategorySuggestions, ApiError> {
        self.run(ops::suggestions(self.config(), site.into(), q))
            .await
    }

    /// getCategorySubtree: as [`crate::taxonomy::TaxonomyClient::category_subtree`].
    pub async fn category_subtree(
        &self,
        category: impl MarketplaceCategory,
    ) -> Result<CategorySubtree, ApiError> {
        self.run(ops::subtree(self.config(), category)).await
    }

    /// getItemAspectsForCategory: as [`crate::taxonomy::TaxonomyClient::item_aspects`].
    pub async fn item_aspects(
        &self,
        category: impl MarketplaceCategory,
    ) -> Result<ItemAspects, ApiError> {
        self.run(ops::item_aspects(self.config(), category)).await
    }

    /// getDefaultCategoryTreeId: as [`crate::taxonomy::TaxonomyClient::default_tree_id`].
    pub async fn default_tree_id(&self, marketplace_id: &str) -> Result<DefaultTreeId, ApiError> {
        self.run(ops::default_tree_id(self.config(), marketplace_id))
            .await
    }

    /// getExpiredCategories: as [`crate::taxonomy::TaxonomyClient::expired_categories`].
    pub async fn expired_categories(
        &self,
        site: impl Into<Marketplace>,
    ) -> Result<ExpiredCategories, ApiError> {
        self.run(ops::expired_categories(self.config(), site.into()))
            .await
    }

    /// getCompatibilityProperties: as
    /// [`crate::taxonomy::TaxonomyClient::compatibility_properties`].
    pub async fn compatibility_properties(
        &self,
        category: impl MarketplaceCategory,
    ) -> Result<CompatibilityProperties, ApiError> {
        self.run(ops::compatibility_properties(self.config(), category))
            .await
    }

    /// getCompatibilityPropertyValues: as
    /// [`crate::taxonomy::TaxonomyClient::compatibility_property_values`].
    pub async fn compatibility_property_values(
        &self,
        category: impl MarketplaceCategory,
        property: &str,
        filter: &[(&str, &str)],
    ) -> Result<CompatibilityPropertyValues, ApiError> {
        self.run(ops::compatibility_property_values(
            self.config(),
            category,
            property,
            filter,
        ))
        .await
    }

    /// getItemConditionPolicies of `categories`: as
    /// [`crate::taxonomy::TaxonomyClient::item_condition_policies`] (a list of more than 50
    /// ids asked in calls of 50, one after the other, the answers merged).
    pub async fn item_condition_policies(
        &self,
        site: impl Into<Marketplace>,
        categories: &[u32],
    ) -> Result<ItemConditionPolicyResponse, ApiError> {
        let site: Marketplace = site.into();
        let mut ids: Vec<u32> = Vec::with_capacity(categories.len());
        let mut asked = std::collections::HashSet::new();
        ids.extend(categories.iter().filter(|id| asked.insert(**id)));
        let mut merged = ItemConditionPolicyResponse::default();
        let mut answered = std::collections::HashSet::new();
        for chunk in ids.chunks(ops::MAX_CONDITION_FILTER_IDS) {
            let answer = self
                .run(ops::item_condition_policies(self.config(), site, chunk))
                .await?;
            // A parent's leaves may also be named, or below another parent named: once each.
            merged.item_condition_policies.extend(
                answer
                    .item_condition_policies
                    .into_iter()
                    .filter(|p| answered.insert(p.category_id)),
            );
            merged.warnings.extend(answer.warnings);
        }
        Ok(merged)
    }

    /// [`all_item_condition_policies`](Self::all_item_condition_policies), with where the
    /// answer came from and whether the server marked it as made up (`X-Fake-Marketplace:
    /// made-up`, as the toolkit's fake marketplace does): what `snapshot refresh` records.
    #[cfg(feature = "trees")]
    pub(crate) async fn all_item_condition_policies_marked(
        &self,
        site: Marketplace,
    ) -> Result<(ItemConditionPolicyResponse, String, bool), ApiError> {
        let operation = ops::item_condition_policies(self.config(), site, &[]);
        let fetched = self.api.fetch(&operation.call).await?;
        let url = fetched.url.to_string();
        let made_up = fetched
            .headers
            .get("x-fake-marketplace")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("made-up"));
        let answer = off_runtime(move || operation.decode(fetched)).await?;
        Ok((answer, url, made_up))
    }

    /// getItemConditionPolicies of every category of `site`: as
    /// [`crate::taxonomy::TaxonomyClient::all_item_condition_policies`].
    pub async fn all_item_condition_policies(
        &self,
        site: impl Into<Marketplace>,
    ) -> Result<ItemConditionPolicyResponse, ApiError> {
        self.run(ops::item_condition_policies(
            self.config(),
            site.into(),
            &[],
        ))
        .await
    }

    /// getListingStructurePolicies of `categories`: as
    /// [`crate::taxonomy::TaxonomyClient::listing_structure_policies`] (a list of more than 50
    /// ids asked in calls of 50, one after the other, the answers merged).
    pub async fn listing_structure_policies(
        &self,
        site: impl Into<Marketplace>,
        categories: &[u32],
    ) -> Result<ListingStructurePolicyResponse, ApiError> {
        let site: Marketplace = site.into();
        let mut ids: Vec<u32> = Vec::with_capacity(categories.len());
        let mut asked = std::collections::HashSet::new();
        ids.extend(categories.iter().filter(|id| asked.insert(**id)));
        let mut merged = ListingStructurePolicyResponse::default();
        let mut answered = std::collections::HashSet::new();
        for chunk in ids.chunks(ops::MAX_CONDITION_FILTER_IDS) {
            let answer = self
                .run(ops::listing_structure_policies(self.config(), site, chunk))
                .await?;
            // A parent's leaves may also be named, or below another parent named: once each.
            merged.listing_structure_policies.extend(
                answer
                    .listing_structure_policies
                    .into_iter()
                    .filter(|p| answered.insert(p.category_id)),
            );
            merged.warnings.extend(answer.warnings);
        }
        Ok(merged)
    }

    /// getListingStructurePolicies of every category of `site`: as
    /// [`crate::taxonomy::TaxonomyClient::all_listing_structure_policies`].
    pub async fn all_listing_structure_policies(
        &self,
        site: impl Into<Marketplace>,
    ) -> Result<ListingStructurePolicyResponse, ApiError> {
        self.run(ops::listing_structure_policies(
            self.config(),
            site.into(),
            &[],
        ))
        .await
    }

    /// [`all_listing_structure_policies`](Self::all_listing_structure_policies), with where
    /// the answer came from and whether the server marked it as made up, as
    /// [`all_item_condition_policies_marked`](Self::all_item_condition_policies_marked).
    #[cfg(feature = "trees")]
    pub(crate) async fn all_listing_structure_policies_marked(
        &self,
        site: Marketplace,
    ) -> Result<(ListingStructurePolicyResponse, String, bool), ApiError> {
        let operation = ops::listing_structure_policies(self.config(), site, &[]);
        let fetched = self.api.fetch(&operation.call).await?;
        let url = fetched.url.to_string();
        let made_up = fetched
            .headers
            .get("x-fake-marketplace")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.eq_ignore_ascii_case("made-up"));
        let answer = off_runtime(move || operation.decode(fetched)).await?;
        Ok((answer, url, made_up))
    }

    /// fetchItemAspects to `dest`, streamed to disk and checked as it arrives: as
    /// [`crate::taxonomy::TaxonomyClient::fetch_item_aspects`]. Here the answer's bytes arrive
    /// on the runtime and are handed to the blocking pool, where the file is written and
    /// checked; `on_progress` is called there.
    pub async fn fetch_item_aspects(
        &self,
        site: impl Into<Marketplace>,
        dest: &std::path::Path,
        on_progress: impl FnMut(u64, Option<u64>) + Send + 'static,
    ) -> Result<ItemAspectsFile, ApiError> {
        let site: Marketplace = site.into();
        let call = ops::item_aspects_file_call(self.config(), site);
        let tree_id = ops::tree_id_for(self.config(), site);
        let on_progress = Arc::new(std::sync::Mutex::new(on_progress));
        let call = &call;
        self.api
            .send_call(call, move |request, redactor, span| {
                let on_progress = on_progress.clone();
                async move {
                    self.download(call, request, redactor, &span, dest, tree_id, on_progress)
                        .instrument(span.clone())
                        .await
                }
            })
            .await
    }

    /// One attempt of a download: the answer's chunks go through a channel to
    /// [`Download::run`] on the blocking pool.
    #[allow(clippy::too_many_arguments)]
    async fn download<P: FnMut(u64, Option<u64>) + Send + 'static>(
        &self,
        call: &ApiCall,
        request: http::Request<Vec<u8>>,
        redactor: crate::oauth::redact::Redactor,
        span: &tracing::Span,
        dest: &std::path::Path,
        tree_id: u32,
        on_progress: Arc<std::sync::Mutex<P>>,
    ) -> Result<ItemAspectsFile, ApiError> {
        let started = Instant::now();
        let deadline = started.checked_add(call.timeout);
        let mut response = super::transport::send(self.api.http(), request, call.timeout)
            .await
            .map_err(|failure| call.no_answer(failure, span, started.elapsed()))?;
        if !response.status().is_success() {
            let outcome =
                super::transport::collect(response, call.limits, call.timeout, deadline).await;
            return Err(
                match call.finish(outcome, redactor, span, started.elapsed()) {
                    Err(error) => error,
                    Ok(fetched) => fetched.unexpected("an error status read as a success".into()),
                },
            );
        }
        let status = response.status().as_u16();
        let total = response.content_length();
        let (sender, receiver) = tokio::sync::mpsc::channel::<std::io::Result<bytes::Bytes>>(16);
        let at = call.url.to_string();
        let (dest, limit, json_limit) = (
            dest.to_owned(),
            self.config().max_download_bytes,
            self.config().max_decompressed_bytes,
        );
        let writer = tokio::task::spawn_blocking(move || {
            let mut body = ChannelReader {
                receiver,
                current: bytes::Bytes::new(),
            };
            let mut progress =
                |received, total| (crate::oauth::lock(&on_progress))(received, total);
            Download {
                dest: &dest,
                url: &at,
                limit,
                json_limit,
                on_progress: &mut progress,
            }
            .run(&mut body, total, tree_id)
        });
        loop {
            // No deadline (a time-out too large to add to now): tokio waits without end.
            let left = deadline.map_or(Duration::MAX, |d| {
                d.saturating_duration_since(Instant::now())
            });
            let next = match tokio::time::timeout(left, response.chunk()).await {
                Ok(next) => next.map_err(|e| {
                    let kind = if e.is_timeout() {
                        std::io::ErrorKind::TimedOut
                    } else {
                        std::io::ErrorKind::Other
                    };
                    std::io::Error::new(kind, crate::core::exchange::error_chain(&e))
                }),
                Err(_) => Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!(
                        "the download was not complete after {} ms",
                        call.timeout.as_millis()
                    ),
                )),
            };
            let item = match next {
                Ok(Some(bytes)) => Ok(bytes),
                Ok(None) => break,
                Err(e) => Err(e),
            };
            let failed = item.is_err();
            // The writer may have stopped (a limit, a bad file): its result says why.
            let sent = sender.send(item).await.is_ok();
            if failed || !sent {
                break;
            }
        }
        drop(sender);
        let result = writer.await.unwrap_or_else(|e| {
            Err(ApiError::Invalid(format!(
                "the download's writer failed: {e}"
            )))
        });
        call.record(span, status, started.elapsed(), result.as_ref().err());
        result
    }

    /// Runs `operation`: its call (through the [`ApiClient`](super::api::ApiClient)'s retry
    /// loop), then its decoding: on the blocking pool for an answer over
    /// [`DECODE_INLINE_BYTES`], as [`fetch_tree`](Self::fetch_tree) decodes its tree, so that
    /// a large answer (a getItemAspectsForCategory answer can list a million values, a
    /// second of work) never stalls the runtime's other tasks.
    async fn run<T: Send + 'static>(&self, operation: Operation<T>) -> Result<T, ApiError> {
        let fetched = self.api.fetch(&operation.call).await?;
        if fetched.bytes.len() <= DECODE_INLINE_BYTES {
            return operation.decode(fetched);
        }
        off_runtime(move || operation.decode(fetched)).await
    }
}

/// Runs the decoding `decode` on the blocking pool, off the runtime's threads.
async fn off_runtime<T: Send + 'static>(
    decode: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(decode)
        .await
        .unwrap_or_else(|e| Err(ApiError::Invalid(format!("decoding failed: {e}"))))
}

/// The largest answer decoded on the runtime's thread: 64 KiB, well under a millisecond of
/// decoding (a larger one goes to the blocking pool, whose hand-over costs tens of
/// microseconds).
const DECODE_INLINE_BYTES: usize = 64 * 1024;

/// The answer's chunks as a `Read`, on the blocking pool.
struct ChannelReader {
    receiver: tokio::sync::mpsc::Receiver<std::io::Result<bytes::Bytes>>,
    current: bytes::Bytes,
}

impl std::io::Read for ChannelReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.current.is_empty() {
            // On the blocking pool, where waiting for the next chunk is allowed.
            match self.receiver.blocking_recv() {
                Some(Ok(bytes)) => self.current = bytes,
                Some(Err(e)) => return Err(e),
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.current.len());
        buf[..n].copy_from_slice(&self.current[..n]);
        self.current = self.current.slice(n..);
        Ok(n)
    }
}
