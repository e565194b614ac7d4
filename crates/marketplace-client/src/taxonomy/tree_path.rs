//! [`TreePath`]: the form of getCategoryTree's path, a setting of
//! [`ClientConfig`](crate::ClientConfig), below both the configuration and the URLs built from it.

use url::Url;

/// Which path the get-category-tree call (getCategoryTree) uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TreePath {
    /// `GET {base_url}/commerce/taxonomy/v1/category_tree/N`: the form eBay documents for
    /// getCategoryTree. The default of the production and sandbox hosts.
    Path,
    /// `GET {base_url}/commerce/taxonomy/v1/category_tree/get?category_tree_id=N`: the tree id
    /// as a query parameter (the form this project first targeted, kept as a setting).
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
