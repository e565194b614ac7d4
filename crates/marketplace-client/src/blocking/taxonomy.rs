//! The blocking taxonomy client: the async one ([`crate::aio::taxonomy::TaxonomyClient`])
//! driven on the blocking front's runtime.

use std::future::Future;
use std::task::Poll;

use marketplaces::{Marketplace, MarketplaceCategory};
use taxonomy_tree::decode::{CategorySubtree, Provenance};
use taxonomy_tree::tree::CategoryTree;

use super::Driver;
use crate::aio::taxonomy as aio;
use crate::model::{
    CategorySuggestions, CompatibilityProperties, CompatibilityPropertyValues, DefaultTreeId,
    ExpiredCategories, ItemAspects, ItemAspectsFile, ItemConditionPolicyResponse,
    ListingStructurePolicyResponse,
};
use crate::oauth::OAuthConfig;
#[cfg(feature = "trees")]
use crate::taxonomy::TreeBody;
use crate::taxonomy::{ApiError, ClientConfig, TreePath};

/// A client of eBay's Commerce Taxonomy API (v1): getCategoryTree, getCategorySuggestions,
/// getCategorySubtree, getItemAspectsForCategory, getDefaultCategoryTreeId and the others.
///
/// Every call sends `Authorization: Bearer …` from the token source, the marketplace header
/// [`MARKETPLACE_HEADER`](crate::taxonomy::MARKETPLACE_HEADER) with the site's marketplace id, `Accept-Language` (the language
/// argument, else [`ClientConfig::language`], else the site's language) and
/// `Accept-Encoding: gzip`.
///
/// Each call goes through an [`ApiClient`](crate::api::ApiClient) of the same configuration:
/// the same renewal of the token on a 401, retries with back-off (up to
/// [`ClientConfig::max_retries`]; time-outs are not retried) and body limit
/// ([`ClientConfig::max_body_bytes`], past which the call fails with
/// [`ApiError::BodyTooLarge`]).
///
/// A `site` is a [`Marketplace`] or anything that converts into one (`taxonomy-data`'s
/// `Site`); a `category` is a [`MarketplaceCategory`]: `taxonomy-data`'s `LeafCategory` (e.g.
/// `category!(EBAY_US, "9355")`) or `Category`, or a `(Marketplace, u32)` pair, whose
/// marketplace goes in the marketplace header and picks the tree, and whose id is
/// `category_id`.
///
/// The client is `Send + Sync`: one client can serve many threads.
///
/// ```no_run
/// use marketplace_client::Marketplace;
/// use marketplace_client::taxonomy::TaxonomyClient;
/// # fn main() -> Result<(), marketplace_client::taxonomy::ApiError> {
/// // MARKETPLACE_CLIENT_ID / MARKETPLACE_CLIENT_SECRET (or MARKETPLACE_ACCESS_TOKEN), and
/// // MARKETPLACE_BASE_URL + MARKETPLACE_AUTH_URL for another host.
/// let client = TaxonomyClient::from_env()?;
/// let aspects = client.item_aspects((Marketplace::De, 9355))?; // Accept-Language: de-DE
/// println!("{} aspects, {} required", aspects.aspects.len(), aspects.required().count());
/// for s in client.category_suggestions(Marketplace::Us, "iphone 15")?.suggestions {
///     println!("{} {}", s.category.id, s.path());
/// }
/// # Ok(()) }
/// ```
pub struct TaxonomyClient {
    inner: aio::TaxonomyClient,
    driver: Driver,
}

super::client_wrapper!(TaxonomyClient, aio::TaxonomyClient);

impl TaxonomyClient {
    /// Draws every call from `budget` (resource `commerce.taxonomy`; for `user`, if given):
    /// see the async [`with_budget`](crate::aio::api::ApiClient::with_budget).
    pub fn with_budget(
        self,
        budget: std::sync::Arc<marketplace_budget::CallBudget>,
        user: Option<&str>,
    ) -> Self {
        Self {
            inner: self.inner.with_budget(budget, user),
            driver: self.driver,
        }
    }

    /// A client configured from the environment: [`OAuthConfig::from_env`] for the host and
    /// the credentials (an application token source, or `MARKETPLACE_ACCESS_TOKEN`), and the
    /// default [`ClientConfig`] for that host with the environment's settings
    /// ([`ClientConfig::with_env`]: `MARKETPLACE_TREE_PATH`).
    pub fn from_env() -> Result<Self, ApiError> {
        let oauth = OAuthConfig::from_env().map_err(crate::oauth::OAuthError::from)?;
        let tokens = crate::oauth::ApplicationTokenProvider::source(&oauth)?;
        let config =
            ClientConfig::from_oauth_config(&oauth).with_env(|name| std::env::var(name).ok())?;
        Self::new(config, tokens)
    }

    /// The getCategoryTree path form this client uses: the configured one, or with
    /// [`TreePath::Auto`] the form that worked (`Auto` until a tree was fetched).
    pub fn tree_path_in_use(&self) -> TreePath {
        self.inner.tree_path_in_use()
    }

    /// The `Accept-Language` a call for `site` sends: `language`, else the configured
    /// language, else the site's language.
    pub fn language_for(&self, site: impl Into<Marketplace>, language: Option<&str>) -> String {
        self.inner.language_for(site, language)
    }

    /// Fetches the full category tree of `site` (getCategoryTree) and returns the body
    /// unparsed, with the URL and language it was fetched with. `language` overrides
    /// `Accept-Language`.
    ///
    /// The path form is [`ClientConfig::tree_path`]. With [`TreePath::Auto`] the path form
    /// is tried first; when it is answered with a 404 or the service's "tree not found"
    /// (errorId 62004), the query form is tried once; the form that worked is kept for every
    /// later call of this client (see [`tree_path_in_use`](Self::tree_path_in_use)).
    ///
    /// With the `trees` feature (the machinery of the `snapshot refresh` command and of
    /// taxonomy-data's `live` build): an application calls [`fetch_tree`](Self::fetch_tree).
    #[cfg(feature = "trees")]
    pub fn fetch_tree_body(
        &self,
        site: impl Into<Marketplace>,
        language: Option<&str>,
    ) -> Result<TreeBody, ApiError> {
        self.wait(self.inner.fetch_tree_body(site.into(), language))
    }
    /// Fetches and decodes the full category tree of `site` with
    /// [`decode_tree`](taxonomy_tree::decode::decode_tree).
    ///
    /// `Accept-Language` is `provenance.language` when it is not empty (else as in
    /// [`language_for`](Self::language_for)); an empty `provenance.language` or
    /// `provenance.source` is filled with the language sent and the URL.
    pub fn fetch_tree(
        &self,
        site: impl Into<Marketplace>,
        provenance: &Provenance,
    ) -> Result<CategoryTree, ApiError> {
        self.wait(self.inner.fetch_tree(site.into(), provenance))
    }

    /// Categories matching a keyword (getCategorySuggestions):
    /// `GET …/category_tree/{id}/get_category_suggestions?q=…` (`q` form-encoded by the `url`
    /// crate). No match (an empty list, or `204 No Content`) is an empty
    /// [`CategorySuggestions::suggestions`].
    pub fn category_suggestions(
        &self,
        site: impl Into<Marketplace>,
        q: &str,
    ) -> Result<CategorySuggestions, ApiError> {
        self.wait(self.inner.category_suggestions(site.into(), q))
    }

    /// One category and everything below it (getCategorySubtree):
    /// `GET …/category_tree/{id}/get_category_subtree?category_id=…`. The answer goes through
    /// the tree's node decoder and structural rules
    /// ([`decode_subtree`](taxonomy_tree::decode::decode_subtree)); a failure is
    /// [`ApiError::Decode`].
    pub fn category_subtree(
        &self,
        category: impl MarketplaceCategory,
    ) -> Result<CategorySubtree, ApiError> {
        self.wait(self.inner.category_subtree(pair(category)))
    }

    /// The aspects a listing in a leaf category fills in (getItemAspectsForCategory):
    /// `GET …/category_tree/{id}/get_item_aspects_for_category?category_id=…`. A category
    /// without aspects (`204 No Content`) gives empty [`ItemAspects::aspects`]. Every
    /// documented field of an aspect is kept; only an aspect without `localizedAspectName`
    /// (or a value without `localizedValue`) is refused, as
    /// [`ApiError::UnexpectedBody`] naming the field.
    ///
    /// ```no_run
    /// use marketplace_client::Marketplace;
    /// use marketplace_client::taxonomy::TaxonomyClient;
    /// # fn main() -> Result<(), marketplace_client::taxonomy::ApiError> {
    /// let client = TaxonomyClient::from_env()?;
    /// // With taxonomy-data: `client.item_aspects(category!(EBAY_US, "9355"))?`.
    /// for aspect in client.item_aspects((Marketplace::Us, 9355))?.required() {
    ///     println!("{}", aspect.name);
    /// }
    /// # Ok(()) }
    /// ```
    pub fn item_aspects(
        &self,
        category: impl MarketplaceCategory,
    ) -> Result<ItemAspects, ApiError> {
        self.wait(self.inner.item_aspects(pair(category)))
    }

    /// The default category tree id of a marketplace (getDefaultCategoryTreeId):
    /// `GET …/get_default_category_tree_id?marketplace_id=…`. The marketplace header carries
    /// the same id, and `Accept-Language` the site's language when the marketplace is known.
    /// `204 No Content` (the service has no default tree for it) is
    /// [`ApiError::NoDefaultTree`]. The answer is two short fields: one of over 1 MiB
    /// (or over [`ClientConfig::max_body_bytes`], if smaller) is
    /// [`ApiError::BodyTooLarge`].
    pub fn default_tree_id(&self, marketplace_id: &str) -> Result<DefaultTreeId, ApiError> {
        self.wait(self.inner.default_tree_id(marketplace_id))
    }

    /// The expired leaf categories of `site`'s tree mapped to the active leaf categories that
    /// replaced them (getExpiredCategories):
    /// `GET …/category_tree/{id}/get_expired_categories`. A tree with none (an empty list, or
    /// `204 No Content`) gives empty [`ExpiredCategories::mappings`].
    pub fn expired_categories(
        &self,
        site: impl Into<Marketplace>,
    ) -> Result<ExpiredCategories, ApiError> {
        self.wait(self.inner.expired_categories(site.into()))
    }

    /// The parts-compatibility properties of a category, e.g. `Make`, `Model`, `Year`
    /// (getCompatibilityProperties):
    /// `GET …/category_tree/{id}/get_compatibility_properties?category_id=…`. `204 No Content`
    /// gives an empty list.
    pub fn compatibility_properties(
        &self,
        category: impl MarketplaceCategory,
    ) -> Result<CompatibilityProperties, ApiError> {
        self.wait(self.inner.compatibility_properties(pair(category)))
    }

    /// The values of one compatibility property, narrowed by `filter` (`name:value` pairs of
    /// other properties, e.g. `[("Year", "2018"), ("Make", "Toyota")]`)
    /// (getCompatibilityPropertyValues):
    /// `GET …/get_compatibility_property_values?category_id=…&compatibility_property=…&filter=…`.
    /// `204 No Content` gives an empty list.
    pub fn compatibility_property_values(
        &self,
        category: impl MarketplaceCategory,
        property: &str,
        filter: &[(&str, &str)],
    ) -> Result<CompatibilityPropertyValues, ApiError> {
        self.wait(
            self.inner
                .compatibility_property_values(pair(category), property, filter),
        )
    }

    /// The item conditions `categories` of `site` take (the Sell Metadata API's
    /// getItemConditionPolicies:
    /// `GET {base}/sell/metadata/v1/marketplace/{marketplace_id}/get_item_condition_policies?filter=categoryIds:{a|b|c}`,
    /// the filter form-encoded as eBay's reference shows it). A leaf's id gives its policy, a
    /// parent's the policies of the leaves below it. eBay considers at most 50 ids a call
    /// (the rest silently dropped, with warning 46004): a longer list is asked in calls of
    /// 50, one after the other, and their answers merged (each category once, every warning
    /// kept), so no category is lost. Repeated ids are asked once; no id asks nothing and
    /// gives an empty answer ([`all_item_condition_policies`](Self::all_item_condition_policies)
    /// asks for every category). `204 No Content` is no policy.
    ///
    /// The call takes an application token (scope `https://api.ebay.com/oauth/api_scope`), as
    /// the Taxonomy API's calls do; the restricted refurbished conditions are only answered to
    /// a seller's token with `sell.inventory`. eBay's errors come back as
    /// [`ApiError::Service`] with eBay's message and id ([`ApiError::error_id`]): 46001 (the
    /// marketplace is not found), 46002 (the filter is invalid), 46003 (a category id is not
    /// found for the marketplace), 46000 (an internal error, HTTP 500, retried).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use marketplace_client::Marketplace;
    /// # use marketplace_client::oauth::{ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig};
    /// # use marketplace_client::taxonomy::{ClientConfig, TaxonomyClient};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let fake = fake_marketplace::FakeMarketplace::new(); // its policies are made up
    /// # let endpoints = Endpoints::custom(&fake.base_url(), &fake.base_url())?;
    /// # let oauth = OAuthConfig::new(endpoints.clone())
    /// #     .with_credentials(fake.client_id(), fake.client_secret());
    /// # let tokens = Arc::new(ApplicationTokenProvider::new(OAuthClient::from_config(&oauth)?));
    /// # let client = TaxonomyClient::new(ClientConfig::from_endpoints(&endpoints), tokens)?;
    /// let answer = client.item_condition_policies(Marketplace::Us, &[179])?;
    /// let desktops = answer.get(179).unwrap();
    /// assert!(desktops.condition(1000).is_some()); // New
    /// # Ok(()) }
    /// ```
    pub fn item_condition_policies(
        &self,
        site: impl Into<Marketplace>,
        categories: &[u32],
    ) -> Result<ItemConditionPolicyResponse, ApiError> {
        self.wait(self.inner.item_condition_policies(site.into(), categories))
    }

    /// The item conditions of every category of `site` (getItemConditionPolicies without a
    /// filter), in one answer: tens of megabytes for a large marketplace, sent gzipped
    /// (`Accept-Encoding: gzip`, as eBay recommends) and read within
    /// [`ClientConfig::max_body_bytes`] decompressed (past it: [`ApiError::BodyTooLarge`]); a
    /// body cut off, or a gzip stream that ends early, is [`ApiError::Truncated`] (retried).
    /// Errors as [`item_condition_policies`](Self::item_condition_policies).
    pub fn all_item_condition_policies(
        &self,
        site: impl Into<Marketplace>,
    ) -> Result<ItemConditionPolicyResponse, ApiError> {
        self.wait(self.inner.all_item_condition_policies(site.into()))
    }

    /// [`all_item_condition_policies`](Self::all_item_condition_policies), with the URL asked
    /// and whether the server marked the answer as made up (the `trees` machinery's).
    #[cfg(feature = "trees")]
    pub(crate) fn all_item_condition_policies_marked(
        &self,
        site: Marketplace,
    ) -> Result<(ItemConditionPolicyResponse, String, bool), ApiError> {
        self.wait(self.inner.all_item_condition_policies_marked(site))
    }

    /// Whether `categories` of `site` take listings with item variations (the Sell Metadata
    /// API's getListingStructurePolicies:
    /// `GET {base}/sell/metadata/v1/marketplace/{marketplace_id}/get_listing_structure_policies?filter=categoryIds:{a|b|c}`,
    /// the filter form-encoded as eBay's reference shows it). A leaf's id gives its policy, a
    /// parent's its own and those of the leaves below it. As
    /// [`item_condition_policies`](Self::item_condition_policies): more than 50 ids are asked
    /// in calls of 50 and their answers merged, repeated ids asked once, no id asks nothing,
    /// `204 No Content` is no policy, and eBay's errors (46001 marketplace not found, 46002
    /// invalid filter, 46003 category not found, 46000 internal, retried) come back as
    /// [`ApiError::Service`]. The call takes an application token (scope
    /// `https://api.ebay.com/oauth/api_scope`).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use marketplace_client::Marketplace;
    /// # use marketplace_client::oauth::{ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig};
    /// # use marketplace_client::taxonomy::{ClientConfig, TaxonomyClient};
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let fake = fake_marketplace::FakeMarketplace::new(); // its policies are made up
    /// # let endpoints = Endpoints::custom(&fake.base_url(), &fake.base_url())?;
    /// # let oauth = OAuthConfig::new(endpoints.clone())
    /// #     .with_credentials(fake.client_id(), fake.client_secret());
    /// # let tokens = Arc::new(ApplicationTokenProvider::new(OAuthClient::from_config(&oauth)?));
    /// # let client = TaxonomyClient::new(ClientConfig::from_endpoints(&endpoints), tokens)?;
    /// let answer = client.listing_structure_policies(Marketplace::Us, &[15687])?;
    /// let t_shirts = answer.get(15687).unwrap();
    /// assert_eq!(t_shirts.variations_supported, Some(true));
    /// # Ok(()) }
    /// ```
    pub fn listing_structure_policies(
        &self,
        site: impl Into<Marketplace>,
        categories: &[u32],
    ) -> Result<ListingStructurePolicyResponse, ApiError> {
        self.wait(
            self.inner
                .listing_structure_policies(site.into(), categories),
        )
    }

    /// Whether each category of `site` takes listings with variations
    /// (getListingStructurePolicies without a filter), in one answer, sent gzipped and read
    /// within [`ClientConfig::max_body_bytes`] as
    /// [`all_item_condition_policies`](Self::all_item_condition_policies).
    pub fn all_listing_structure_policies(
        &self,
        site: impl Into<Marketplace>,
    ) -> Result<ListingStructurePolicyResponse, ApiError> {
        self.wait(self.inner.all_listing_structure_policies(site.into()))
    }

    /// [`all_listing_structure_policies`](Self::all_listing_structure_policies), with the URL
    /// asked and whether the server marked the answer as made up (the `trees` machinery's).
    #[cfg(feature = "trees")]
    pub(crate) fn all_listing_structure_policies_marked(
        &self,
        site: Marketplace,
    ) -> Result<(ListingStructurePolicyResponse, String, bool), ApiError> {
        self.wait(self.inner.all_listing_structure_policies_marked(site))
    }

    /// Downloads the aspects of every leaf category of `site` (fetchItemAspects:
    /// `GET …/category_tree/{id}/fetch_item_aspects`) to `dest`, a gzipped JSON file that can
    /// pass 100 MB.
    ///
    /// The answer streams to a temporary file beside `dest` (never whole into memory) while its
    /// gzip stream is decompressed and its JSON followed; only a complete, intact file (every gzip
    /// member whole, the JSON object ended) is renamed over `dest`, so a failed or cut-off download
    /// leaves `dest` as it was and no temporary file behind. Temporary files get random names
    /// ([`taxonomy_tree::atomic::stage_file`]), so downloads in other processes or containers never
    /// collide, and leftovers of a killed download are removed by a later one. A server that sent
    /// the JSON transport-compressed instead gets it stored gzipped all the same. `on_progress` is
    /// called as bytes arrive, with the bytes received so far (as sent: compressed) and the
    /// announced size (`Content-Length`), if any (an `indicatif` bar: `set_length` from the second,
    /// `set_position` from the first). The call has its own time-out and size limits
    /// ([`ClientConfig::download_timeout`], [`ClientConfig::max_download_bytes`] as received,
    /// [`ClientConfig::max_decompressed_bytes`] for the JSON inside); a connection that breaks is
    /// retried like any other call, from the start. Read the file with [`ItemAspectsFile::reader`].
    pub fn fetch_item_aspects(
        &self,
        site: impl Into<Marketplace>,
        dest: &std::path::Path,
        on_progress: &mut (dyn FnMut(u64, Option<u64>) + Send),
    ) -> Result<ItemAspectsFile, ApiError> {
        // The async download calls its progress on the blocking pool; here `on_progress` is
        // the caller's, called where the call waits, as the bytes arrive.
        let (progress, mut arrived) = tokio::sync::mpsc::unbounded_channel();
        let download = self
            .inner
            .fetch_item_aspects(site.into(), dest, move |received, total| {
                let _ = progress.send((received, total));
            });
        let mut download = std::pin::pin!(download);
        self.wait(std::future::poll_fn(move |cx| {
            while let Poll::Ready(Some((received, total))) = arrived.poll_recv(cx) {
                on_progress(received, total);
            }
            let done = download.as_mut().poll(cx);
            if done.is_ready() {
                while let Ok((received, total)) = arrived.try_recv() {
                    on_progress(received, total);
                }
            }
            done
        }))
    }
}

/// A category as a `(Marketplace, u32)` pair, which a future sent to the runtime can hold.
fn pair(category: impl MarketplaceCategory) -> (Marketplace, u32) {
    (category.marketplace(), category.category_id())
}
