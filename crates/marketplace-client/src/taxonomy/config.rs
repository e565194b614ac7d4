//! The Taxonomy API's paths: the URL of each call below a [`ClientConfig`]'s base URL, in the
//! form of getCategoryTree's path it is set to ([`TreePath`]).

use url::Url;

use super::tree_path::TreePath;
use crate::ClientConfig;

/// The marketplace header sent on every call of the taxonomy API.
pub(crate) use marketplaces::MARKETPLACE_HEADER;

/// The path prefix of version 1 of the taxonomy API.
pub(crate) const TAXONOMY_PREFIX: &str = "commerce/taxonomy/v1";

/// The path prefix of version 1 of the Sell Metadata API (getItemConditionPolicies,
/// getListingStructurePolicies).
pub(crate) const METADATA_PREFIX: &str = "sell/metadata/v1";

impl ClientConfig {
    /// `{base_url}/commerce/taxonomy/v1/{rest}`.
    fn api_url(&self, rest: &str) -> Url {
        let mut url = self.base_url.clone();
        let path = format!("{}{TAXONOMY_PREFIX}/{rest}", self.base_url.path());
        url.set_path(&path);
        url
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

    /// `…/category_tree/{tree_id}/{call}?category_id=…`, the URL of a call about one category:
    /// `get_category_subtree` (getCategorySubtree), `get_item_aspects_for_category`
    /// (getItemAspectsForCategory), `get_compatibility_properties` (getCompatibilityProperties).
    pub(crate) fn category_url(&self, tree_id: u32, call: &str, category_id: u32) -> Url {
        let mut url = self.api_url(&format!("category_tree/{tree_id}/{call}"));
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

    /// `{base_url}/sell/metadata/v1/marketplace/{marketplace_id}/get_item_condition_policies`
    /// (the Sell Metadata API's getItemConditionPolicies), with
    /// `filter=categoryIds:{a|b|c}` when `categories` names any, form-encoded as eBay's
    /// reference shows it (`filter=categoryIds%3A%7B100%7C101%7D`).
    pub(crate) fn item_condition_policies_url(
        &self,
        marketplace_id: &str,
        categories: &[u32],
    ) -> Url {
        self.metadata_url(marketplace_id, "get_item_condition_policies", categories)
    }

    /// `{base_url}/sell/metadata/v1/marketplace/{marketplace_id}/get_listing_structure_policies`
    /// (the Sell Metadata API's getListingStructurePolicies), with the filter as
    /// [`item_condition_policies_url`](Self::item_condition_policies_url) gives it.
    pub(crate) fn listing_structure_policies_url(
        &self,
        marketplace_id: &str,
        categories: &[u32],
    ) -> Url {
        self.metadata_url(marketplace_id, "get_listing_structure_policies", categories)
    }

    /// `{base_url}/sell/metadata/v1/marketplace/{marketplace_id}/{call}`, with
    /// `filter=categoryIds:{a|b|c}` when `categories` names any.
    fn metadata_url(&self, marketplace_id: &str, call: &str, categories: &[u32]) -> Url {
        let mut url = self.base_url.clone();
        let path = format!(
            "{}{METADATA_PREFIX}/marketplace/{marketplace_id}/{call}",
            self.base_url.path()
        );
        url.set_path(&path);
        if !categories.is_empty() {
            let ids: Vec<String> = categories.iter().map(u32::to_string).collect();
            url.query_pairs_mut()
                .append_pair("filter", &format!("categoryIds:{{{}}}", ids.join("|")));
        }
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
        let config = ClientConfig::for_base_url("http://127.0.0.1:8080")
            .unwrap()
            .with_tree_path(TreePath::Path);
        assert_eq!(
            config.tree_url_in(77, config.tree_path).as_str(),
            "http://127.0.0.1:8080/commerce/taxonomy/v1/category_tree/77"
        );
        assert_eq!(
            ClientConfig::production()
                .tree_url_in(0, ClientConfig::production().tree_path)
                .as_str(),
            "https://api.ebay.com/commerce/taxonomy/v1/category_tree/0"
        );
        assert_eq!(
            config.tree_url_in(0, TreePath::Query).as_str(),
            "http://127.0.0.1:8080/commerce/taxonomy/v1/category_tree/get?category_tree_id=0"
        );
        let url = ClientConfig::production().compatibility_property_values_url(
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
        let url = ClientConfig::production().item_condition_policies_url("EBAY_US", &[100, 101]);
        assert_eq!(
            url.as_str(),
            "https://api.ebay.com/sell/metadata/v1/marketplace/EBAY_US/get_item_condition_policies\
             ?filter=categoryIds%3A%7B100%7C101%7D"
        );
        let url = ClientConfig::production().listing_structure_policies_url("EBAY_US", &[15687]);
        assert_eq!(
            url.as_str(),
            "https://api.ebay.com/sell/metadata/v1/marketplace/EBAY_US/get_listing_structure_policies\
             ?filter=categoryIds%3A%7B15687%7D"
        );
    }
}
