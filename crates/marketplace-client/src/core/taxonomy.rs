//! The Taxonomy API's operations without I/O: for each, the request ([`ApiCall`]) and the
//! decoding of its answer into the typed result. A front runs an [`Operation`] (with token
//! renewal and retries) and hands the answer back to it.

use std::sync::atomic::{AtomicU8, Ordering};

use marketplaces::{Marketplace, MarketplaceCategory};
use taxonomy_tree::decode::{CategorySubtree, Provenance, decode_subtree, decode_tree};
use taxonomy_tree::tree::CategoryTree;

use super::answer::Fetched;
use super::api::{ApiCall, MAX_ERROR_ANSWER};
use crate::model::decode;
use crate::model::{
    CategorySuggestions, CompatibilityProperties, CompatibilityPropertyValues, DefaultTreeId,
    ExpiredCategories, ItemAspects, ItemConditionPolicyResponse, ListingStructurePolicyResponse,
};
use crate::taxonomy::{ApiError, ClientConfig, TreeBody, TreePath};

/// A call and what turns its answer into `T`.
pub(crate) struct Operation<T> {
    /// The request.
    pub(crate) call: ApiCall,
    decode: Box<dyn FnOnce(Fetched) -> Result<T, ApiError> + Send>,
}

impl<T> Operation<T> {
    fn new(
        call: ApiCall,
        decode: impl FnOnce(Fetched) -> Result<T, ApiError> + Send + 'static,
    ) -> Self {
        Self {
            call,
            decode: Box::new(decode),
        }
    }

    /// The typed result of a successful answer.
    pub(crate) fn decode(self, fetched: Fetched) -> Result<T, ApiError> {
        (self.decode)(fetched)
    }

    /// A call whose empty answer (`204 No Content`, or no body) is `empty()`, and any other
    /// answer is `decode`d by `taxonomy-model`'s decoder.
    fn or_empty(
        call: ApiCall,
        empty: impl FnOnce() -> T + Send + 'static,
        decode: impl FnOnce(&[u8]) -> Result<T, decode::DecodeError> + Send + 'static,
    ) -> Self {
        Self::new(call, move |fetched| {
            if fetched.is_empty() {
                return Ok(empty());
            }
            decode(&fetched.bytes).map_err(|e| fetched.undecoded(e))
        })
    }
}

/// The `Accept-Language` a call for `site` sends: `language`, else the configured language,
/// else the site's language.
pub(crate) fn language_for(
    config: &ClientConfig,
    site: Marketplace,
    language: Option<&str>,
) -> String {
    language
        .filter(|l| !l.trim().is_empty())
        .or(config.language.as_deref())
        .unwrap_or(site.default_language())
        .to_owned()
}

/// The tree a call for `site` addresses: the site's tree in the configured language
/// ([`Marketplace::tree_for_language`]: Canada's French tree with `fr-CA`), else its default
/// tree.
pub(crate) fn tree_id_for(config: &ClientConfig, site: Marketplace) -> u32 {
    site.tree_for_language(&language_for(config, site, None))
}

/// A `GET` of `url` in `site` with the configured language and limits.
fn site_call(
    config: &ClientConfig,
    operation: &'static str,
    url: url::Url,
    site: Marketplace,
) -> ApiCall {
    ApiCall::get(operation, url, config.timeout, config.max_body_bytes)
        .in_marketplace(site.marketplace_id(), &language_for(config, site, None))
}

/// getCategoryTree of `site` in `language`, in the path form `form`: the body unparsed.
pub(crate) fn tree_body(
    config: &ClientConfig,
    site: Marketplace,
    language: Option<&str>,
    form: TreePath,
) -> Operation<TreeBody> {
    let language = language_for(config, site, language);
    let tree_id = site.tree_for_language(&language);
    let call = ApiCall::get(
        "getCategoryTree",
        config.tree_url_in(tree_id, form),
        config.timeout,
        config.max_body_bytes,
    )
    .in_marketplace(site.marketplace_id(), &language);
    Operation::new(call, move |fetched| {
        if fetched.is_empty() {
            let answer = match fetched.status {
                204 => "204 No Content",
                _ => "a success",
            };
            return Err(fetched.unexpected(format!(
                "getCategoryTree answered with no tree (`{answer}` and an empty body): the \
                 service holds no tree {tree_id} to give"
            )));
        }
        Ok(TreeBody {
            site,
            tree_id,
            url: fetched.url,
            language,
            bytes: fetched.bytes,
        })
    })
}

/// Decodes a fetched tree with `provenance` (an empty language or source is filled with the
/// language sent and the URL), and checks it is the tree asked for.
pub(crate) fn decode_tree_body(
    body: &TreeBody,
    provenance: &Provenance,
) -> Result<CategoryTree, ApiError> {
    let mut provenance = provenance.clone();
    if provenance.language.trim().is_empty() {
        provenance.language = body.language.clone();
    }
    if provenance.source.trim().is_empty() {
        provenance.source = body.url.to_string();
    }
    let tree = decode_tree(&body.bytes, &provenance).map_err(|source| ApiError::Decode {
        url: body.url.to_string(),
        source,
    })?;
    if tree.meta.tree_id != body.tree_id {
        return Err(ApiError::UnexpectedBody {
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

/// getCategorySuggestions: no match (an empty list, or `204 No Content`) is an empty list.
pub(crate) fn suggestions(
    config: &ClientConfig,
    site: Marketplace,
    q: &str,
) -> Operation<CategorySuggestions> {
    let tree_id = tree_id_for(config, site);
    let call = site_call(
        config,
        "getCategorySuggestions",
        config.suggestions_url(tree_id, q),
        site,
    );
    Operation::or_empty(
        call,
        move || CategorySuggestions {
            tree_id,
            tree_version: String::new(),
            suggestions: Vec::new(),
        },
        move |bytes| decode::category_suggestions(tree_id, bytes),
    )
}

/// getCategorySubtree, through the tree's node decoder and structural rules.
pub(crate) fn subtree(
    config: &ClientConfig,
    category: impl MarketplaceCategory,
) -> Operation<CategorySubtree> {
    let (site, category_id) = (category.marketplace(), category.category_id());
    let tree = tree_id_for(config, site);
    let url = config.category_url(tree, "get_category_subtree", category_id);
    Operation::new(
        site_call(config, "getCategorySubtree", url, site),
        move |fetched| {
            decode_subtree(&fetched.bytes, category_id).map_err(|source| ApiError::Decode {
                url: fetched.url.to_string(),
                source,
            })
        },
    )
}

/// getItemAspectsForCategory: `204 No Content` is a category without aspects.
pub(crate) fn item_aspects(
    config: &ClientConfig,
    category: impl MarketplaceCategory,
) -> Operation<ItemAspects> {
    let (site, category_id) = (category.marketplace(), category.category_id());
    let tree = tree_id_for(config, site);
    let url = config.category_url(tree, "get_item_aspects_for_category", category_id);
    Operation::or_empty(
        site_call(config, "getItemAspectsForCategory", url, site),
        move || ItemAspects {
            category_id,
            aspects: Vec::new(),
        },
        move |bytes| decode::item_aspects(category_id, bytes),
    )
}

/// getDefaultCategoryTreeId: `204 No Content` is [`ApiError::NoDefaultTree`]; the answer
/// is two short fields, so at most 1 MiB of it is read.
pub(crate) fn default_tree_id(
    config: &ClientConfig,
    marketplace_id: &str,
) -> Operation<DefaultTreeId> {
    let language = match Marketplace::from_marketplace_id(marketplace_id) {
        Some(site) => language_for(config, site, None),
        None => config
            .language
            .clone()
            .unwrap_or_else(|| "en-US".to_owned()),
    };
    let call = ApiCall::get(
        "getDefaultCategoryTreeId",
        config.default_tree_id_url(marketplace_id),
        config.timeout,
        config.max_body_bytes.min(MAX_ERROR_ANSWER),
    )
    .in_marketplace(marketplace_id, &language);
    let marketplace_id = marketplace_id.to_owned();
    Operation::new(call, move |fetched| {
        if fetched.is_empty() {
            return Err(ApiError::NoDefaultTree {
                marketplace_id,
                url: fetched.url.to_string(),
            });
        }
        decode::default_tree_id(&fetched.bytes).map_err(|e| fetched.undecoded(e))
    })
}

/// getExpiredCategories: none (an empty list, or `204 No Content`) is an empty list.
pub(crate) fn expired_categories(
    config: &ClientConfig,
    site: Marketplace,
) -> Operation<ExpiredCategories> {
    let tree_id = tree_id_for(config, site);
    let url = config.expired_categories_url(tree_id);
    Operation::or_empty(
        site_call(config, "getExpiredCategories", url, site),
        move || ExpiredCategories {
            tree_id,
            mappings: Vec::new(),
        },
        move |bytes| decode::expired_categories(tree_id, bytes),
    )
}

/// getCompatibilityProperties: `204 No Content` is an empty list.
pub(crate) fn compatibility_properties(
    config: &ClientConfig,
    category: impl MarketplaceCategory,
) -> Operation<CompatibilityProperties> {
    let (site, category_id) = (category.marketplace(), category.category_id());
    let tree = tree_id_for(config, site);
    let url = config.category_url(tree, "get_compatibility_properties", category_id);
    Operation::or_empty(
        site_call(config, "getCompatibilityProperties", url, site),
        move || CompatibilityProperties {
            category_id,
            properties: Vec::new(),
        },
        move |bytes| decode::compatibility_properties(category_id, bytes),
    )
}

/// getCompatibilityPropertyValues: `204 No Content` is an empty list.
pub(crate) fn compatibility_property_values(
    config: &ClientConfig,
    category: impl MarketplaceCategory,
    property: &str,
    filter: &[(&str, &str)],
) -> Operation<CompatibilityPropertyValues> {
    let (site, category_id) = (category.marketplace(), category.category_id());
    let url = config.compatibility_property_values_url(
        tree_id_for(config, site),
        category_id,
        property,
        filter,
    );
    let property = property.to_owned();
    let empty = property.clone();
    Operation::or_empty(
        site_call(config, "getCompatibilityPropertyValues", url, site),
        move || CompatibilityPropertyValues {
            category_id,
            property: empty,
            values: Vec::new(),
        },
        move |bytes| decode::compatibility_property_values(category_id, &property, bytes),
    )
}

/// The most category ids getItemConditionPolicies considers in one filter: eBay answers the
/// first 50 of a longer list (with warning 46004), so a longer list is asked in calls of 50.
pub(crate) const MAX_CONDITION_FILTER_IDS: usize = 50;

/// getItemConditionPolicies (the Sell Metadata API) of `site`: the policies of `categories`
/// (at most [`MAX_CONDITION_FILTER_IDS`]), or of every category when it is empty. `204 No
/// Content` is no policy. The answer of every category can be tens of megabytes: it is read
/// within [`ClientConfig::max_body_bytes`] (decompressed; `Accept-Encoding: gzip` is sent).
pub(crate) fn item_condition_policies(
    config: &ClientConfig,
    site: Marketplace,
    categories: &[u32],
) -> Operation<ItemConditionPolicyResponse> {
    debug_assert!(categories.len() <= MAX_CONDITION_FILTER_IDS);
    let url = config.item_condition_policies_url(site.marketplace_id(), categories);
    Operation::or_empty(
        site_call(config, "getItemConditionPolicies", url, site),
        ItemConditionPolicyResponse::default,
        decode::item_condition_policies,
    )
}

/// getListingStructurePolicies (the Sell Metadata API) of `site`: the policies of
/// `categories` (at most [`MAX_CONDITION_FILTER_IDS`], the same bound), or of every category
/// when it is empty. `204 No Content` is no policy; read and sent as
/// [`item_condition_policies`].
pub(crate) fn listing_structure_policies(
    config: &ClientConfig,
    site: Marketplace,
    categories: &[u32],
) -> Operation<ListingStructurePolicyResponse> {
    debug_assert!(categories.len() <= MAX_CONDITION_FILTER_IDS);
    let url = config.listing_structure_policies_url(site.marketplace_id(), categories);
    Operation::or_empty(
        site_call(config, "getListingStructurePolicies", url, site),
        ListingStructurePolicyResponse::default,
        decode::listing_structure_policies,
    )
}

/// fetchItemAspects of `site`: the request only (the answer streams to a file).
pub(crate) fn item_aspects_file_call(config: &ClientConfig, site: Marketplace) -> ApiCall {
    let mut call = site_call(
        config,
        "fetchItemAspects",
        config.item_aspects_file_url(tree_id_for(config, site)),
        site,
    );
    call.accept = "application/octet-stream, application/json";
    call.timeout = config.download_timeout;
    call.limits.success = config.max_download_bytes;
    call
}

/// The getCategoryTree path form of one client: the configured one, or with
/// [`TreePath::Auto`] the form that worked, and the order to try them in.
#[derive(Debug, Default)]
pub(crate) struct TreeForms {
    /// With [`TreePath::Auto`]: the form that worked (`FORM_*`).
    worked: AtomicU8,
}

const FORM_PATH: u8 = 1;
const FORM_QUERY: u8 = 2;

impl TreeForms {
    /// The form in use: `configured`, or with [`TreePath::Auto`] the form that worked (`Auto`
    /// until a tree was fetched).
    pub(crate) fn in_use(&self, configured: TreePath) -> TreePath {
        match (configured, self.worked.load(Ordering::Acquire)) {
            (TreePath::Auto, FORM_PATH) => TreePath::Path,
            (TreePath::Auto, FORM_QUERY) => TreePath::Query,
            (form, _) => form,
        }
    }

    /// The forms to try, in order: with [`TreePath::Auto`] and none known yet, the path form
    /// and then the query form.
    pub(crate) fn to_try(&self, configured: TreePath) -> TreeFallback {
        let forms = match self.in_use(configured) {
            TreePath::Auto => vec![TreePath::Path, TreePath::Query],
            form => vec![form],
        };
        TreeFallback {
            forms,
            next: 0,
            first_error: None,
        }
    }

    /// `form` worked: later calls use it.
    pub(crate) fn worked(&self, form: TreePath) {
        let value = match form {
            TreePath::Path => FORM_PATH,
            TreePath::Query => FORM_QUERY,
            TreePath::Auto => return,
        };
        self.worked.store(value, Ordering::Release);
    }
}

/// The forms of one getCategoryTree call still to try.
#[derive(Debug)]
pub(crate) struct TreeFallback {
    forms: Vec<TreePath>,
    next: usize,
    first_error: Option<ApiError>,
}

impl TreeFallback {
    /// The next form to try (`None` when none is left).
    pub(crate) fn next_form(&mut self) -> Option<TreePath> {
        let form = self.forms.get(self.next).copied();
        self.next += 1;
        form
    }

    /// The form tried last failed with `error`: `None` to try the next form (a 404 or the
    /// service's "tree not found", errorId 62004, when a form is left), or the call's error.
    /// When every form says "not found", the tree id is unknown, and the first answer (of the
    /// documented form) says so.
    pub(crate) fn failed(&mut self, error: ApiError) -> Option<ApiError> {
        let not_found = is_tree_not_found(&error);
        if !not_found {
            return Some(error);
        }
        let first = self.first_error.take().unwrap_or(error);
        if self.next < self.forms.len() {
            self.first_error = Some(first);
            None
        } else {
            Some(first)
        }
    }
}

/// A 404, or the service's "category tree not found" (errorId 62004) whatever its status.
fn is_tree_not_found(error: &ApiError) -> bool {
    error.status() == Some(404) || error.error_id() == Some(62004)
}
