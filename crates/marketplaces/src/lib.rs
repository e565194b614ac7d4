//! The marketplace sites this toolkit knows: their category tree ids, marketplace ids and
//! languages (seed section 2.5).
//!
//! `taxonomy-data` has its own run-time `Site` enum; this table is what the build script and the
//! snapshot tool use to name files, pick the default language and map ids to sites.

use std::fmt;

/// A marketplace site with a category tree of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SiteId {
    /// United States, category tree 0, `EBAY_US`.
    Us,
    /// United Kingdom, category tree 3, `EBAY_GB`.
    Gb,
    /// Germany, category tree 77, `EBAY_DE`.
    De,
    /// Australia, category tree 15, `EBAY_AU`.
    Au,
}

impl SiteId {
    /// Every known site, in the order the seed lists them.
    pub const ALL: [SiteId; 4] = [SiteId::Us, SiteId::Gb, SiteId::De, SiteId::Au];

    /// The category tree id (the `category_tree_id` query parameter).
    pub const fn tree_id(self) -> u32 {
        match self {
            SiteId::Us => 0,
            SiteId::Gb => 3,
            SiteId::De => 77,
            SiteId::Au => 15,
        }
    }

    /// The marketplace id sent in the marketplace header, e.g. `EBAY_US`.
    pub const fn marketplace_id(self) -> &'static str {
        match self {
            SiteId::Us => "EBAY_US",
            SiteId::Gb => "EBAY_GB",
            SiteId::De => "EBAY_DE",
            SiteId::Au => "EBAY_AU",
        }
    }

    /// The site's default language tag, sent as `Accept-Language`.
    pub const fn language(self) -> &'static str {
        match self {
            SiteId::Us => "en-US",
            SiteId::Gb => "en-GB",
            SiteId::De => "de-DE",
            SiteId::Au => "en-AU",
        }
    }

    /// The site's country, in English.
    pub const fn country(self) -> &'static str {
        match self {
            SiteId::Us => "United States",
            SiteId::Gb => "United Kingdom",
            SiteId::De => "Germany",
            SiteId::Au => "Australia",
        }
    }

    /// The Rust variant name used in generated code (`Us`, `Gb`, `De`, `Au`).
    pub const fn variant(self) -> &'static str {
        match self {
            SiteId::Us => "Us",
            SiteId::Gb => "Gb",
            SiteId::De => "De",
            SiteId::Au => "Au",
        }
    }

    /// The file name of the site's committed snapshot, e.g. `EBAY_US.json`.
    pub fn snapshot_file_name(self) -> String {
        format!("{}.json", self.marketplace_id())
    }

    /// The site with this category tree id.
    pub fn from_tree_id(tree_id: u32) -> Option<SiteId> {
        SiteId::ALL.into_iter().find(|s| s.tree_id() == tree_id)
    }

    /// The site with this marketplace id (`EBAY_DE`), ignoring ASCII case.
    pub fn from_marketplace_id(id: &str) -> Option<SiteId> {
        SiteId::ALL
            .into_iter()
            .find(|s| s.marketplace_id().eq_ignore_ascii_case(id))
    }

    /// Parses a site as a user types it: a marketplace id (`EBAY_DE`), a tree id (`77`) or a
    /// short code (`de`, `us`, `gb`/`uk`, `au`).
    ///
    /// ```
    /// use marketplaces::SiteId;
    /// assert_eq!(SiteId::parse("EBAY_DE"), Some(SiteId::De));
    /// assert_eq!(SiteId::parse("77"), Some(SiteId::De));
    /// assert_eq!(SiteId::parse("uk"), Some(SiteId::Gb));
    /// assert_eq!(SiteId::parse("EBAY_FR"), None);
    /// ```
    pub fn parse(text: &str) -> Option<SiteId> {
        let text = text.trim();
        if let Some(site) = SiteId::from_marketplace_id(text) {
            return Some(site);
        }
        if let Ok(tree_id) = text.parse::<u32>() {
            return SiteId::from_tree_id(tree_id);
        }
        match text.to_ascii_lowercase().as_str() {
            "us" => Some(SiteId::Us),
            "gb" | "uk" => Some(SiteId::Gb),
            "de" => Some(SiteId::De),
            "au" => Some(SiteId::Au),
            _ => None,
        }
    }
}

impl fmt::Display for SiteId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.marketplace_id())
    }
}
