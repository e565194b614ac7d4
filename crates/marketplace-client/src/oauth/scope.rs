//! Sets of OAuth scopes: the unit the token cache is keyed by.

use std::collections::BTreeSet;
use std::fmt;

/// A set of OAuth scopes (each usually a URL such as `https://api.ebay.com/oauth/api_scope`).
///
/// The set is ordered and free of duplicates, so two requests for the same scopes in another
/// order share one cached token. It is sent space-separated in that order.
///
/// ```
/// use marketplace_client::oauth::ScopeSet;
/// let a = ScopeSet::from_space_separated("https://x/b https://x/a https://x/b");
/// let b = ScopeSet::new(["https://x/a", "https://x/b"]);
/// assert_eq!(a, b);
/// assert_eq!(a.to_space_separated(), "https://x/a https://x/b");
/// ```
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ScopeSet(BTreeSet<String>);

impl ScopeSet {
    /// A set of the given scopes; blank entries are dropped.
    pub fn new<I, S>(scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self(
            scopes
                .into_iter()
                .map(Into::into)
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
                .collect(),
        )
    }

    /// Parses the space-separated form used by the `scope` parameter.
    pub fn from_space_separated(scopes: &str) -> Self {
        Self::new(scopes.split_whitespace())
    }

    /// The scopes separated by single spaces, as sent in `scope`.
    pub fn to_space_separated(&self) -> String {
        self.0
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// True when there is no scope.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The number of scopes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// True when every scope of `self` is in `other`.
    pub fn is_subset(&self, other: &ScopeSet) -> bool {
        self.0.is_subset(&other.0)
    }

    /// The scopes in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(String::as_str)
    }
}

impl fmt::Debug for ScopeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.0.iter()).finish()
    }
}

impl fmt::Display for ScopeSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_space_separated())
    }
}

impl<S: Into<String>> FromIterator<S> for ScopeSet {
    fn from_iter<I: IntoIterator<Item = S>>(iter: I) -> Self {
        Self::new(iter)
    }
}
