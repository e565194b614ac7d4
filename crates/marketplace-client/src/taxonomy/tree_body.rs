//! The raw body of a getCategoryTree answer (not one of the answers' types: the tree is
//! decoded by `taxonomy-tree`).

use url::Url;

use marketplaces::Marketplace;

/// The raw body of a getCategoryTree answer and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeBody {
    /// The site asked for.
    pub site: Marketplace,
    /// The tree asked for: the site's tree in the language sent.
    pub tree_id: u32,
    /// The URL it was fetched from.
    pub url: Url,
    /// The `Accept-Language` sent.
    pub language: String,
    /// The body (decompressed), unparsed.
    pub bytes: Vec<u8>,
}
