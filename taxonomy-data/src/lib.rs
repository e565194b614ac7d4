//! # taxonomy-data
//!
//! The marketplace's category trees (US, UK, Germany, Australia), compiled into your program:
//! lookups by id are a perfect hash over static tables, with no allocation, no parsing and no
//! start-up cost. Listing code takes a [`LeafCategory`], which only ever holds a category that
//! accepts listings: checked at compile time by `taxonomy_macros::category!`, or at run time
//! by [`LeafCategory::new`].
//!
//! ```
//! use taxonomy_data::{Category, LeafCategory, Site};
//!
//! let site = Site::from_marketplace_id("EBAY_DE").unwrap();
//! assert_eq!(site, Site::De);
//! assert_eq!(Site::from_tree_id(77), Some(Site::De));
//!
//! let phones: Category = site.category(9355).unwrap();
//! assert_eq!(phones.name(), "Handys & Smartphones");
//! assert!(phones.is_leaf());
//! assert_eq!(phones.level(), 2);
//! let parent = phones.parent().unwrap();
//! assert_eq!(parent.id(), 15032);
//! assert!(parent.children().any(|c| c.id() == 9355));
//! assert_eq!(phones.path().to_string(), "Handys & Kommunikation > Handys & Smartphones");
//!
//! let leaf = LeafCategory::new(Site::Us, 9355).unwrap();
//! assert_eq!(leaf.name(), "Cell Phones & Smartphones");
//! assert!(LeafCategory::new(Site::Us, 15032).is_err()); // not a leaf
//! ```
//!
//! ## Choosing the sites
//!
//! Every site is compiled in by default. Set `TAXONOMY_SITES` (e.g. `EBAY_US,EBAY_DE`) when
//! building to keep only some: the others are present as [`Site`] values but have no
//! categories ([`Site::is_compiled_in`] is `false`).
//!
//! ## Where the data comes from
//!
//! `taxonomy-data`'s build script reads the committed snapshots in `snapshots/` (see the
//! repository's README for how they are refreshed). Each site's version and date are
//! [`Site::tree_version`] and [`Site::taken_at`].

#![no_std]

use core::fmt;
use core::iter::FusedIterator;

use taxonomy_hash as hash;

/// The generated tables (`OUT_DIR/taxonomy.rs`): every site's tables, the [`Site`] enum
/// (one variant per marketplace of `marketplaces::Marketplace`) and the [`versions`]
/// constants.
mod generated {
    use super::SiteTables;
    include!(concat!(env!("OUT_DIR"), "/taxonomy.rs"));
}

mod search;
#[cfg(feature = "serde")]
mod serde_impls;
pub mod typed;

#[cfg(feature = "aspects")]
/// Item aspects: the pinned categories' rules ([`LeafCategory::aspects`]), the listing they
/// check ([`ListingAspects`](aspects::ListingAspects)), its [`Problem`](aspects::Problem)s, and
/// what `taxonomy_macros::aspects!` gives ([`Aspects`](aspects::Aspects)): the
/// `taxonomy-aspects` crate, re-exported.
pub mod aspects {
    pub use taxonomy_aspects::*;
}

pub use generated::{Site, versions};
pub use marketplaces::{
    AllowedCondition, Condition, ConditionPolicy, DescriptorRule, DescriptorValue, Marketplace,
    MarketplaceCategory, UnknownCondition, UnknownMarketplace,
};
pub use search::{NearestWords, SEARCH_RESULTS, Search};

/// The tables of one site, as the build script generates them.
#[doc(hidden)]
pub struct SiteTables {
    compiled_in: bool,
    /// The id of the compiled-in tree (the marketplace's default tree when none is).
    tree_id: u32,
    version: &'static str,
    taken_at: &'static str,
    source: &'static str,
    note: Option<&'static str>,
    language: &'static str,
    fingerprint: u64,
    leaf_count: u32,
    /// Category ids, sorted; position 0 is the root (id 0).
    ids: &'static [u32],
    /// Position of each category's parent (0 for the root and the top level).
    parents: &'static [u32],
    /// Depth of each category: 0 for the root, 1 for the top level.
    levels: &'static [u8],
    /// `NAMES[name_offsets[i]..name_offsets[i + 1]]` is the name of category `i`.
    name_offsets: &'static [u32],
    /// `children[child_offsets[i]..child_offsets[i + 1]]` are the positions of `i`'s children.
    child_offsets: &'static [u32],
    children: &'static [u32],
    seed: u64,
    bucket_shift: u32,
    pilots: &'static [u16],
    /// `(id + 1) << 32 | position` of the category that owns each slot, or 0.
    slots: &'static [u64],
    /// `(expired id, replacement id)` from getExpiredCategories, sorted by the expired id; no
    /// expired id is a category, every replacement is a leaf (checked by the build).
    expired: &'static [(u32, u32)],
    /// The keyword index of [`Site::search`] (`taxonomy_codegen::codegen::SearchIndex`): how
    /// many top bits of a word's hash are its key, every `INDEX_STEP`-th word's key and
    /// offset, and the words' lists of positions.
    search_bits: u32,
    search_keys: &'static [u32],
    search_offsets: &'static [u32],
    search: &'static [u8],
    /// Where the condition policies were taken from (the file's `source`); `None`: the site
    /// has no condition-policy file, its policies are not known.
    conditions_source: Option<&'static str>,
    /// The file's `madeUp`: the policies came from the toolkit's fake marketplace.
    conditions_made_up: bool,
    /// Each distinct condition policy once (getItemConditionPolicies).
    condition_policies: &'static [ConditionPolicy<'static>],
    /// Per position (as `ids`), the number of its policy in `condition_policies`, or the
    /// width's maximum: no known policy. Empty without a file.
    condition_index: ConditionIndex,
    /// Where the listing-structure policies (getListingStructurePolicies) were taken from
    /// (the file's `source`); `None`: the site has no listing-structure file.
    structure_source: Option<&'static str>,
    /// One bit a position (as `ids`; bit `pos % 64` of word `pos / 64`): the leaf takes
    /// variations (`variationsSupported: true`). Empty without a file
    /// (`taxonomy_codegen::codegen::structure_source`).
    variations: &'static [u64],
    /// The leaves the file does not name (not known).
    variations_unknown: UnknownLeaves,
}

/// [`SiteTables::variations_unknown`]: the leaves a listing-structure file does not name, in
/// the smaller of two forms (`taxonomy_codegen::codegen::structure_source`).
#[allow(
    dead_code,
    reason = "the generated tables construct `Bits` only for a file that leaves many leaves out"
)]
enum UnknownLeaves {
    /// Their positions, sorted: four bytes a leaf left out.
    Positions(&'static [u32]),
    /// One bit a position (as `SiteTables::variations`), set for a leaf left out.
    Bits(&'static [u64]),
}

impl UnknownLeaves {
    /// Whether the leaf at `pos` is left out.
    #[inline]
    const fn contains(&self, pos: u32) -> bool {
        match *self {
            UnknownLeaves::Bits(words) => {
                let i = pos as usize;
                i / 64 < words.len() && (words[i / 64] >> (i % 64)) & 1 == 1
            }
            UnknownLeaves::Positions(table) => {
                let (mut lo, mut hi) = (0, table.len());
                while lo < hi {
                    let mid = lo + (hi - lo) / 2;
                    if table[mid] == pos {
                        return true;
                    }
                    if table[mid] < pos {
                        lo = mid + 1;
                    } else {
                        hi = mid;
                    }
                }
                false
            }
        }
    }

    /// Whether no leaf is left out in the `Positions` form (an answer for the whole tree).
    #[inline]
    const fn is_empty(&self) -> bool {
        matches!(*self, UnknownLeaves::Positions(table) if table.is_empty())
    }

    /// Bytes of static data.
    const fn bytes(&self) -> usize {
        match *self {
            UnknownLeaves::Positions(table) => 4 * table.len(),
            UnknownLeaves::Bits(words) => 8 * words.len(),
        }
    }
}

/// [`SiteTables::condition_index`]: as narrow as the site's number of distinct policies
/// allows (`taxonomy_codegen::codegen::conditions_source`).
#[allow(
    dead_code,
    reason = "the generated tables construct the wider variants only for a site with many policies"
)]
enum ConditionIndex {
    /// Fewer than 255 policies; 255 is "no known policy".
    Narrow(&'static [u8]),
    /// Fewer than 65 535 policies; 65 535 is "no known policy".
    Wide(&'static [u16]),
    /// More; `u32::MAX` is "no known policy".
    Widest(&'static [u32]),
}

impl ConditionIndex {
    /// The policy number at `pos`, if it has one.
    #[inline]
    const fn get(&self, pos: usize) -> Option<usize> {
        match *self {
            ConditionIndex::Narrow(index) if pos < index.len() && index[pos] != u8::MAX => {
                Some(index[pos] as usize)
            }
            ConditionIndex::Wide(index) if pos < index.len() && index[pos] != u16::MAX => {
                Some(index[pos] as usize)
            }
            ConditionIndex::Widest(index) if pos < index.len() && index[pos] != u32::MAX => {
                Some(index[pos] as usize)
            }
            _ => None,
        }
    }

    /// Bytes of static data.
    const fn bytes(&self) -> usize {
        match *self {
            ConditionIndex::Narrow(index) => index.len(),
            ConditionIndex::Wide(index) => 2 * index.len(),
            ConditionIndex::Widest(index) => 4 * index.len(),
        }
    }
}

/// The name of the category at `pos` of `t`.
fn name_at(t: &SiteTables, pos: u32) -> &'static str {
    let i = pos as usize;
    match (t.name_offsets.get(i), t.name_offsets.get(i + 1)) {
        (Some(&a), Some(&b)) => generated::NAMES.get(a as usize..b as usize).unwrap_or(""),
        _ => "",
    }
}

impl SiteTables {
    /// Position of `id` in `ids`, if it is a category of this site (the root is not).
    #[inline]
    const fn position(&self, id: u32) -> Option<u32> {
        let h = hash::key_hash(id, self.seed);
        let pilot = self.pilots[hash::bucket_of(h, self.bucket_shift, self.pilots.len())];
        hash::entry_position(self.slots[hash::slot_of(h, pilot, self.slots.len())], id)
    }

    #[inline]
    const fn is_leaf(&self, pos: u32) -> bool {
        let i = pos as usize;
        pos != 0 && self.child_offsets[i] == self.child_offsets[i + 1]
    }

    /// Whether the leaf at `pos` takes variations, if the site's listing-structure file says.
    #[inline]
    const fn variations_supported(&self, pos: u32) -> Option<bool> {
        // No file: no word, every position out of bounds.
        let i = pos as usize;
        if i / 64 >= self.variations.len() {
            None
        } else {
            // No branch on the bit itself: which leaves take variations follows no pattern a
            // branch predictor learns (a branch on it tripled the lookup's time).
            let set = (self.variations[i / 64] >> (i % 64)) & 1 == 1;
            if self.variations_unknown.is_empty() || set || !self.variations_unknown.contains(pos) {
                Some(set)
            } else {
                // Clear, and left out of the file.
                None
            }
        }
    }

    /// The replacement id of an expired id (binary search of `expired`).
    const fn replacement(&self, id: u32) -> Option<u32> {
        let table = self.expired;
        let (mut lo, mut hi) = (0, table.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (from, to) = table[mid];
            if from == id {
                return Some(to);
            }
            if from < id {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        None
    }
}

impl Site {
    /// The site of a marketplace id such as `EBAY_US` (ASCII case ignored).
    ///
    /// ```
    /// # use taxonomy_data::Site;
    /// assert_eq!(Site::from_marketplace_id("EBAY_GB"), Some(Site::Gb));
    /// assert_eq!(Site::from_marketplace_id("ebay_fr"), Some(Site::Fr));
    /// assert_eq!(Site::from_marketplace_id("EBAY_XX"), None);
    /// ```
    pub fn from_marketplace_id(marketplace_id: &str) -> Option<Site> {
        let mut upper = [0_u8; 32];
        let bytes = marketplace_id.trim().as_bytes();
        let upper = upper.get_mut(..bytes.len())?;
        for (u, b) in upper.iter_mut().zip(bytes) {
            *u = b.to_ascii_uppercase();
        }
        let key = core::str::from_utf8(upper).ok()?;
        generated::MARKETPLACES.get(key).copied()
    }

    /// The site one of whose trees has this id: a marketplace's default tree (0, 3, 77, 15,
    /// …) or its tree in another language (210: Canada in French).
    pub fn from_tree_id(tree_id: u32) -> Option<Site> {
        Marketplace::from_tree_id(tree_id).map(Site::from_marketplace)
    }

    /// The id of the compiled-in tree; the marketplace's default tree when none is compiled in.
    pub const fn tree_id(self) -> u32 {
        self.tables().tree_id
    }

    /// The marketplace id, e.g. `EBAY_DE`.
    pub const fn marketplace_id(self) -> &'static str {
        self.marketplace().marketplace_id()
    }

    /// The language of the compiled-in category names, e.g. `de-DE` (the marketplace's
    /// default language when no tree is compiled in). The marketplace's own default is
    /// [`Marketplace::default_language`].
    pub const fn language(self) -> &'static str {
        self.tables().language
    }

    /// `false` when the build left this site out (`TAXONOMY_SITES`): it then has no categories.
    pub const fn is_compiled_in(self) -> bool {
        self.tables().compiled_in
    }

    /// The sites compiled into this build.
    pub fn compiled_in() -> impl Iterator<Item = Site> + Clone {
        Site::ALL.into_iter().filter(|s| s.is_compiled_in())
    }

    /// The service's `categoryTreeVersion` of the compiled-in tree.
    pub const fn tree_version(self) -> &'static str {
        self.tables().version
    }

    /// When the compiled-in tree was taken (ISO 8601 date).
    pub const fn taken_at(self) -> &'static str {
        self.tables().taken_at
    }

    /// Where the compiled-in tree was taken from.
    pub const fn source(self) -> &'static str {
        self.tables().source
    }

    /// What a user of this site's data should know (staleness, partial coverage), if anything.
    pub const fn note(self) -> Option<&'static str> {
        self.tables().note
    }

    /// A fingerprint of the compiled-in tree; `category!` checks it against the tree it saw.
    pub const fn fingerprint(self) -> u64 {
        self.tables().fingerprint
    }

    /// Number of categories (the root not counted).
    pub const fn category_count(self) -> usize {
        self.tables().ids.len().saturating_sub(1)
    }

    /// Number of leaf categories.
    pub const fn leaf_count(self) -> usize {
        self.tables().leaf_count as usize
    }

    /// Bytes of static data this site compiles in: the id, parent, level, name-offset and
    /// child tables, the perfect hash, the expired-category table, its names, the keyword
    /// index of [`Site::search`] ([`Site::search_index_bytes`]) and the condition policies
    /// ([`Site::condition_table_bytes`]) and the listing-structure policies
    /// ([`Site::structure_table_bytes`]).
    pub fn table_bytes(self) -> usize {
        self.lookup_table_bytes()
            + self.search_index_bytes()
            + self.condition_table_bytes()
            + self.structure_table_bytes()
    }

    /// Whether this build knows the site's listing-structure policies
    /// (getListingStructurePolicies' `variationsSupported`): the snapshots directory has its
    /// listing-structure file (`EBAY_US.structure.json` beside `EBAY_US.json`, written by
    /// `snapshot refresh` with credentials), in step with its tree. Without it,
    /// [`LeafCategory::variations_supported`] is `None` for every leaf.
    ///
    /// ```
    /// # use taxonomy_data::Site;
    /// // The committed snapshots carry no listing-structure policies (eBay's are only had
    /// // with credentials: `snapshot refresh` writes them).
    /// assert!(!Site::Us.has_structure_policies());
    /// ```
    pub const fn has_structure_policies(self) -> bool {
        self.tables().structure_source.is_some()
    }

    /// Bytes of static data the listing-structure policies add to this site: one bit a
    /// category, rounded up to 64-bit words, and for the leaves the file does not name four
    /// bytes each or one more bit a category, whichever is smaller (0 without a
    /// listing-structure file).
    ///
    /// ```
    /// # use taxonomy_data::Site;
    /// assert_eq!(Site::Us.structure_table_bytes(), 0); // no policies committed
    /// ```
    pub const fn structure_table_bytes(self) -> usize {
        let t = self.tables();
        8 * t.variations.len() + t.variations_unknown.bytes()
    }

    /// Whether this build knows the site's condition policies (getItemConditionPolicies):
    /// the snapshots directory has its condition-policy file (`EBAY_US.conditions.json`
    /// beside `EBAY_US.json`, written by `snapshot refresh` with credentials), in step with
    /// its tree. Without it, [`LeafCategory::condition_policy`] is `None` for every leaf.
    ///
    /// ```
    /// # use taxonomy_data::Site;
    /// // The committed snapshots carry no condition policies (eBay's are only had with
    /// // credentials: `snapshot refresh` writes them).
    /// assert!(!Site::Us.has_condition_policies());
    /// assert_eq!(Site::Us.condition_policies_source(), None);
    /// ```
    pub const fn has_condition_policies(self) -> bool {
        self.tables().conditions_source.is_some()
    }

    /// Where the compiled-in condition policies were taken from (the getItemConditionPolicies
    /// URL of the file's `source`), or `None` when the site has none.
    pub const fn condition_policies_source(self) -> Option<&'static str> {
        self.tables().conditions_source
    }

    /// Whether the compiled-in condition policies were made up by the toolkit's fake
    /// marketplace (the file's `madeUp`; the build warns about such a file): never eBay's.
    ///
    /// ```
    /// # use taxonomy_data::Site;
    /// assert!(!Site::Us.condition_policies_made_up());
    /// ```
    pub const fn condition_policies_made_up(self) -> bool {
        self.tables().conditions_made_up
    }

    /// Bytes of static data the condition policies add to this site: the per-category index
    /// and the distinct policies with their conditions, descriptors, values and names (0
    /// without a condition-policy file).
    ///
    /// ```
    /// # use taxonomy_data::Site;
    /// assert_eq!(Site::Us.condition_table_bytes(), 0); // no policies committed
    /// ```
    pub fn condition_table_bytes(self) -> usize {
        use core::mem::size_of;
        let t = self.tables();
        let mut bytes = t.condition_index.bytes();
        for policy in t.condition_policies {
            bytes += size_of::<ConditionPolicy<'static>>();
            for allowed in policy.conditions {
                bytes += size_of::<AllowedCondition<'static>>();
                for d in allowed.descriptors {
                    bytes +=
                        size_of::<DescriptorRule<'static>>() + d.name.len() + 4 * d.requires.len();
                    for v in d.values {
                        bytes += size_of::<DescriptorValue<'static>>() + v.name.len();
                    }
                }
            }
        }
        bytes
    }

    /// Bytes of static data the keyword index of [`Site::search`] adds to this site.
    pub fn search_index_bytes(self) -> usize {
        let t = self.tables();
        4 * (t.search_keys.len() + t.search_offsets.len()) + t.search.len()
    }

    /// [`Site::table_bytes`] without the keyword index.
    fn lookup_table_bytes(self) -> usize {
        let t = self.tables();
        let names = match (t.name_offsets.first(), t.name_offsets.last()) {
            (Some(&a), Some(&b)) => (b - a) as usize,
            _ => 0,
        };
        4 * (t.ids.len()
            + t.parents.len()
            + t.name_offsets.len()
            + t.child_offsets.len()
            + t.children.len())
            + 8 * t.slots.len()
            + 8 * t.expired.len()
            + t.levels.len()
            + 2 * t.pilots.len()
            + names
    }

    /// The category with this id, or `None` when the site has none.
    ///
    /// ```
    /// # use taxonomy_data::Site;
    /// assert_eq!(Site::Gb.category(9355).unwrap().name(), "Mobile & Smart Phones");
    /// assert!(Site::Gb.category(4_000_000).is_none());
    /// assert!(Site::Gb.category(0).is_none()); // the root is not a category
    /// ```
    #[inline]
    pub const fn category(self, id: u32) -> Option<Category> {
        match self.tables().position(id) {
            Some(pos) => Some(Category { site: self, pos }),
            None => None,
        }
    }

    /// The category at the end of a full path of names separated by `>`, e.g.
    /// `"Cell Phones & Accessories > Cell Phones & Smartphones"`. Runs of white space are
    /// insignificant; names are compared exactly otherwise.
    ///
    /// ```
    /// # use taxonomy_data::Site;
    /// let c = Site::Us.category_by_path("Cell Phones & Accessories > Cell Phones & Smartphones");
    /// assert_eq!(c.unwrap().id(), 9355);
    /// ```
    pub fn category_by_path(self, path: &str) -> Option<Category> {
        let mut at: Option<Category> = None;
        for segment in path.split('>') {
            let mut candidates = match at {
                Some(c) => c.children(),
                None => self.top_level(),
            };
            at = Some(candidates.find(|c| same_words(c.name(), segment))?);
        }
        at
    }

    /// The leaf that replaced an expired category of this site (getExpiredCategories), or
    /// `None` when `expired_id` is not an expired category of the compiled-in mapping (a live
    /// category, an unknown id, or an expired one the service mapped to nothing).
    ///
    /// It returns a [`LeafCategory`], not a [`Category`]: the service maps expired leaves to
    /// active leaves, and the build checks that every replacement is a leaf of the compiled-in
    /// tree, so the answer can be listed in directly. [`LeafCategory::new`] on an expired id
    /// fails with [`LeafError::Expired`], which carries the same replacement.
    ///
    /// ```
    /// # use taxonomy_data::Site;
    /// // The committed snapshots carry no expired-category mapping yet.
    /// assert!(Site::Us.replacement(9355).is_none()); // a live leaf is not expired
    /// ```
    pub const fn replacement(self, expired_id: u32) -> Option<LeafCategory> {
        let t = self.tables();
        let Some(to) = t.replacement(expired_id) else {
            return None;
        };
        match t.position(to) {
            Some(pos) if t.is_leaf(pos) => Some(LeafCategory { site: self, pos }),
            _ => None,
        }
    }

    /// The top-level categories (the children of the root).
    pub fn top_level(self) -> Children {
        Children::of(self, 0)
    }

    /// Every category, in id order.
    pub fn categories(self) -> Categories {
        Categories {
            site: self,
            next: 1,
            end: self.tables().ids.len() as u32,
        }
    }

    /// Every leaf category, in id order.
    pub fn leaves(self) -> impl Iterator<Item = LeafCategory> {
        self.categories().filter_map(|c| c.as_leaf())
    }

    /// The leaf categories whose names and paths best match the words of `query`, best
    /// first (at most [`SEARCH_RESULTS`]), offline: no token, no network, no allocation.
    ///
    /// Words are compared with case, accents and endings folded by the tree's language
    /// ("Zubehör" finds "zubehor", "case" finds "Cases", in German "fahrrad" finds
    /// "Fahrräder"), in any order; a word the names do not have is cut into parts they have
    /// ("grafikkarte" finds "Grafik-/Videokarten", "iphone" "phone"), and in a German tree a
    /// word also finds the compounds that end with it ("hülle": "Schutzhüllen"). When
    /// nothing matches, [`Site::nearest_words`] says which words are near. A leaf ranks higher when its path
    /// has more of the query's words, when the query covers more of its own name, when its
    /// path has fewer words the query lacks (so a leaf's full path finds that leaf first), and
    /// when the words are in its own name rather than its parent's or an ancestor's (rare
    /// words weighing more than common ones). The index is generated at build time with
    /// the other tables ([`Site::search_index_bytes`]); a site that is not compiled in finds
    /// nothing. The service's getCategorySuggestions does the same online.
    ///
    /// ```
    /// use taxonomy_data::Site;
    /// let top3: Vec<u32> = Site::Us.search("smartphones").take(3).map(|c| c.id()).collect();
    /// assert!(top3.contains(&9355), "{top3:?}"); // Cell Phones & Smartphones
    ///
    /// let best = Site::De.search("handys smartphones").next().unwrap();
    /// assert_eq!(best.path().to_string(), "Handys & Kommunikation > Handys & Smartphones");
    /// assert_eq!(Site::Us.search("").count(), 0);
    /// ```
    pub fn search(self, query: &str) -> Search {
        search::search(self, query)
    }

    /// When [`Site::search`] finds nothing: the words of this site's category names nearest
    /// to the query's words that match nothing (at most five, fewest edits
    /// first, then in the order of the tree; within a third of the word's length), as the
    /// names write them, so that a program can say "no match; nearest words: …". Empty when
    /// every query word matches something. Offline and without allocation, but it reads
    /// every name (milliseconds, not microseconds): call it for a search that found nothing.
    ///
    /// ```
    /// use taxonomy_data::Site;
    /// assert_eq!(Site::De.search("smartfone").count(), 0);
    /// let nearest = Site::De.nearest_words("smartfone");
    /// assert_eq!(nearest.to_string(), "Smartphones");
    /// ```
    pub fn nearest_words(self, query: &str) -> NearestWords {
        search::nearest_words(self, query)
    }
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.marketplace_id())
    }
}

/// Parses a site as a person names it, with [`Marketplace::parse`], the one parser of site
/// names of the commands and macros: a marketplace id (`EBAY_DE`), the same without `EBAY_`
/// (`de`) or a tree id (`77`), ASCII case ignored. The error names the marketplace a refused
/// name most likely meant.
///
/// ```
/// # use taxonomy_data::{Marketplace, Site};
/// assert_eq!("de".parse::<Site>(), Ok(Site::De));
/// let uk = "EBAY_UK".parse::<Site>().unwrap_err();
/// assert_eq!(uk.closest(), Some(Marketplace::Gb));
/// ```
impl core::str::FromStr for Site {
    type Err = UnknownMarketplace;

    fn from_str(s: &str) -> Result<Site, UnknownMarketplace> {
        Marketplace::parse(s).map(Site::from_marketplace)
    }
}

impl From<Marketplace> for Site {
    fn from(marketplace: Marketplace) -> Site {
        Site::from_marketplace(marketplace)
    }
}

impl From<Site> for Marketplace {
    fn from(site: Site) -> Marketplace {
        site.marketplace()
    }
}

/// A category goes to the client's calls as it is (`marketplace-client` takes any
/// [`MarketplaceCategory`]), e.g. a parent for getCategorySubtree: its site's marketplace
/// and its id.
impl MarketplaceCategory for Category {
    fn marketplace(&self) -> Marketplace {
        self.site.marketplace()
    }

    fn category_id(&self) -> u32 {
        self.id()
    }
}

/// A checked leaf category goes to the client's calls as it is, e.g.
/// `client.item_aspects(category!(EBAY_US, "9355"))`: its site's marketplace and its id.
///
/// ```
/// use taxonomy_data::{LeafCategory, Marketplace, MarketplaceCategory, Site};
/// let phones = LeafCategory::new(Site::Au, 9355).unwrap();
/// assert_eq!((phones.marketplace(), phones.category_id()), (Marketplace::Au, 9355));
/// ```
impl MarketplaceCategory for LeafCategory {
    fn marketplace(&self) -> Marketplace {
        self.site.marketplace()
    }

    fn category_id(&self) -> u32 {
        self.id()
    }
}

/// Compares two names word by word, so that runs of white space do not matter.
fn same_words(a: &str, b: &str) -> bool {
    a.split_whitespace().eq(b.split_whitespace())
}

/// A category of a site. Cheap to copy; every accessor reads the static tables.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Category {
    site: Site,
    pos: u32,
}

impl Category {
    /// The category id: the value a listing sends.
    pub const fn id(self) -> u32 {
        self.site.tables().ids[self.pos as usize]
    }

    /// The site this category belongs to.
    pub const fn site(self) -> Site {
        self.site
    }

    /// The name, in the site's language.
    pub fn name(self) -> &'static str {
        name_at(self.site.tables(), self.pos)
    }

    /// The parent, or `None` for a top-level category.
    pub const fn parent(self) -> Option<Category> {
        match self.site.tables().parents[self.pos as usize] {
            0 => None,
            pos => Some(Category {
                site: self.site,
                pos,
            }),
        }
    }

    /// The children, in the service's order (empty for a leaf).
    pub fn children(self) -> Children {
        Children::of(self.site, self.pos)
    }

    /// The depth: 1 for a top-level category.
    pub const fn level(self) -> u8 {
        self.site.tables().levels[self.pos as usize]
    }

    /// `true` when the category accepts listings.
    pub const fn is_leaf(self) -> bool {
        self.site.tables().is_leaf(self.pos)
    }

    /// This category as a [`LeafCategory`], when it is a leaf.
    pub const fn as_leaf(self) -> Option<LeafCategory> {
        if self.is_leaf() {
            Some(LeafCategory {
                site: self.site,
                pos: self.pos,
            })
        } else {
            None
        }
    }

    /// The path from the top level down to this category. Iterate it, or display it as
    /// `"A > B > C"`.
    pub const fn path(self) -> Path {
        Path {
            target: self,
            next_level: 1,
        }
    }

    /// The leaf categories below this one (itself when it is a leaf), depth first in the
    /// service's order.
    pub fn leaves(self) -> impl Iterator<Item = LeafCategory> {
        let t = self.site.tables();
        // The subtree is a contiguous run of a depth-first walk; walk it with an explicit
        // position range per level, without allocating.
        Descendants {
            site: self.site,
            stack: [(0, 0); MAX_DEPTH],
            depth: 0,
            start: Some(self.pos),
            tables: t,
        }
        .filter_map(Category::as_leaf)
    }

    /// The ancestor of this category at `level` (1 = top level), or itself at its own level.
    const fn ancestor_at(self, level: u8) -> Category {
        let t = self.site.tables();
        let mut pos = self.pos;
        let mut at = t.levels[pos as usize];
        while at > level {
            pos = t.parents[pos as usize];
            at -= 1;
        }
        Category {
            site: self.site,
            pos,
        }
    }
}

impl fmt::Debug for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Category({} {} {:?})", self.site, self.id(), self.name())
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.id())
    }
}

/// The depth-first walk's stack: one entry per level it can hold open, levels 0 through
/// `MAX_LEVEL`, the deepest the toolkit's validation accepts (real trees are at most 6 deep).
const MAX_DEPTH: usize = generated::MAX_LEVEL + 1;

struct Descendants {
    site: Site,
    tables: &'static SiteTables,
    /// For each open level, the next and end positions in `children`.
    stack: [(u32, u32); MAX_DEPTH],
    depth: usize,
    start: Option<u32>,
}

impl Iterator for Descendants {
    type Item = Category;

    fn next(&mut self) -> Option<Category> {
        let t = self.tables;
        let pos = if let Some(pos) = self.start.take() {
            pos
        } else {
            loop {
                if self.depth == 0 {
                    return None;
                }
                let (next, end) = &mut self.stack[self.depth - 1];
                if *next < *end {
                    let pos = t.children[*next as usize];
                    *next += 1;
                    break pos;
                }
                self.depth -= 1;
            }
        };
        let (start, end) = (
            t.child_offsets[pos as usize],
            t.child_offsets[pos as usize + 1],
        );
        if start < end && self.depth < MAX_DEPTH {
            self.stack[self.depth] = (start, end);
            self.depth += 1;
        }
        Some(Category {
            site: self.site,
            pos,
        })
    }
}

/// The children of a category (or the top level of a site), in the service's order.
#[derive(Debug, Clone)]
pub struct Children {
    site: Site,
    next: u32,
    end: u32,
}

impl Children {
    fn of(site: Site, pos: u32) -> Children {
        let t = site.tables();
        let (next, end) = match (
            t.child_offsets.get(pos as usize),
            t.child_offsets.get(pos as usize + 1),
        ) {
            (Some(&a), Some(&b)) => (a, b),
            _ => (0, 0),
        };
        Children { site, next, end }
    }
}

impl Iterator for Children {
    type Item = Category;

    fn next(&mut self) -> Option<Category> {
        if self.next >= self.end {
            return None;
        }
        let pos = self.site.tables().children[self.next as usize];
        self.next += 1;
        Some(Category {
            site: self.site,
            pos,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.end - self.next) as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Children {}
impl FusedIterator for Children {}

/// Every category of a site, in id order.
#[derive(Debug, Clone)]
pub struct Categories {
    site: Site,
    next: u32,
    end: u32,
}

impl Iterator for Categories {
    type Item = Category;

    fn next(&mut self) -> Option<Category> {
        if self.next >= self.end {
            return None;
        }
        let pos = self.next;
        self.next += 1;
        Some(Category {
            site: self.site,
            pos,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.end - self.next) as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for Categories {}
impl FusedIterator for Categories {}

/// The path from the top level to a category: an iterator, and `"A > B > C"` when displayed.
#[derive(Debug, Clone)]
pub struct Path {
    target: Category,
    next_level: u8,
}

impl Iterator for Path {
    type Item = Category;

    fn next(&mut self) -> Option<Category> {
        if self.next_level > self.target.level() {
            return None;
        }
        let c = self.target.ancestor_at(self.next_level);
        self.next_level += 1;
        Some(c)
    }
}

impl FusedIterator for Path {}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.clone().enumerate() {
            if i > 0 {
                f.write_str(" > ")?;
            }
            f.write_str(c.name())?;
        }
        Ok(())
    }
}

/// A category that accepts listings. It can only be made from a leaf of its site: at compile
/// time by `category!`, at run time by [`LeafCategory::new`].
///
/// ```
/// use taxonomy_data::{LeafCategory, LeafError, Site};
/// let phones = LeafCategory::new(Site::Au, 9355).unwrap();
/// assert_eq!((phones.site(), phones.id(), phones.name()), (Site::Au, 9355, "Mobile Phones"));
/// assert!(matches!(LeafCategory::new(Site::Au, 15032), Err(LeafError::NotALeaf { .. })));
/// assert!(matches!(LeafCategory::new(Site::Au, 2), Err(LeafError::UnknownCategory { .. })));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct LeafCategory {
    site: Site,
    pos: u32,
}

impl LeafCategory {
    /// Checks at run time that `id` is a leaf category of `site`. An id the service retired
    /// and mapped to a replacement (getExpiredCategories) fails with [`LeafError::Expired`],
    /// which names the replacement.
    pub const fn new(site: Site, id: u32) -> Result<LeafCategory, LeafError> {
        if !site.is_compiled_in() {
            return Err(LeafError::SiteNotCompiledIn { site });
        }
        match site.tables().position(id) {
            None => match site.replacement(id) {
                Some(replacement) => Err(LeafError::Expired {
                    site,
                    id,
                    replacement,
                }),
                None => Err(LeafError::UnknownCategory { site, id }),
            },
            Some(pos) if !site.tables().is_leaf(pos) => Err(LeafError::NotALeaf { site, id }),
            Some(pos) => Ok(LeafCategory { site, pos }),
        }
    }

    /// What `category!` expands to: the same check as [`LeafCategory::new`], evaluated in a
    /// `const`, so a mismatch fails the build. `fingerprint` is that of the tree the macro
    /// checked the id against; if this build compiled in another tree, the build fails too.
    #[doc(hidden)]
    pub const fn __checked_by_macro(site: Site, id: u32, fingerprint: u64) -> LeafCategory {
        if site.fingerprint() != fingerprint {
            panic!(
                "category!: the macro checked this id against another category tree than the one compiled into taxonomy-data: the two builds of taxonomy-data (the macro's and the program's) saw different trees. Delete target/taxonomy-live and build again, or build with TAXONOMY_OFFLINE=1 to use the committed snapshots."
            );
        }
        match LeafCategory::new(site, id) {
            Ok(leaf) => leaf,
            Err(_) => panic!(
                "category!: this id is not a leaf of the category tree compiled into taxonomy-data"
            ),
        }
    }

    /// The category id: the value a listing sends.
    pub const fn id(self) -> u32 {
        self.category().id()
    }

    /// The site.
    pub const fn site(self) -> Site {
        self.site
    }

    /// The category.
    pub const fn category(self) -> Category {
        Category {
            site: self.site,
            pos: self.pos,
        }
    }

    /// The name, in the site's language.
    pub fn name(self) -> &'static str {
        self.category().name()
    }

    /// The path from the top level.
    pub const fn path(self) -> Path {
        self.category().path()
    }

    /// This category's condition policy (the Sell Metadata API's getItemConditionPolicies):
    /// the conditions it allows, whether a listing must name one, and the condition
    /// descriptors each takes; `None` when it is not known (the site has no condition-policy
    /// file, see [`Site::has_condition_policies`], or the file does not name this leaf).
    /// What the listing check reads; `taxonomy_macros::condition!` checks a condition against
    /// it at compile time.
    ///
    /// ```
    /// use taxonomy_data::{LeafCategory, Site};
    /// let phones = LeafCategory::new(Site::Us, 9355).unwrap();
    /// // The committed snapshots carry no condition policies: `snapshot refresh`, run with
    /// // credentials, writes EBAY_US.conditions.json beside the tree, and the next build
    /// // compiles it in. Then, e.g., `policy.allows(Condition::UsedExcellent)`.
    /// assert!(phones.condition_policy().is_none());
    /// ```
    #[inline]
    pub const fn condition_policy(self) -> Option<&'static ConditionPolicy<'static>> {
        let t = self.site.tables();
        match t.condition_index.get(self.pos as usize) {
            Some(n) if n < t.condition_policies.len() => Some(&t.condition_policies[n]),
            _ => None,
        }
    }

    /// Whether listings in this category may have variations (a group of items that differ
    /// by size, colour…): the Sell Metadata API's getListingStructurePolicies,
    /// `variationsSupported`. `None` when it is not known (the site has no listing-structure
    /// file, see [`Site::has_structure_policies`], or the file does not name this leaf). What
    /// the listing check reads before it accepts a group in this category.
    ///
    /// ```
    /// use taxonomy_data::{LeafCategory, Site};
    /// let phones = LeafCategory::new(Site::Us, 9355).unwrap();
    /// // The committed snapshots carry no listing-structure policies: `snapshot refresh`,
    /// // run with credentials, writes EBAY_US.structure.json beside the tree, and the next
    /// // build compiles it in (one bit a category).
    /// assert_eq!(phones.variations_supported(), None);
    /// ```
    #[inline]
    pub const fn variations_supported(self) -> Option<bool> {
        self.site.tables().variations_supported(self.pos)
    }

    /// The conditions this category allows, in eBay's order (empty: it takes none), with
    /// their descriptors; `None` when its policy is not known (see
    /// [`LeafCategory::condition_policy`]).
    ///
    /// ```
    /// use taxonomy_data::{LeafCategory, Site};
    /// // None on the committed snapshots (no condition-policy file).
    /// assert_eq!(LeafCategory::new(Site::Us, 9355).unwrap().conditions(), None);
    /// ```
    #[inline]
    pub const fn conditions(self) -> Option<&'static [AllowedCondition<'static>]> {
        match self.condition_policy() {
            Some(policy) => Some(policy.conditions),
            None => None,
        }
    }

    /// Whether a listing in this category must name a condition (`itemConditionRequired`);
    /// `None` when its policy is not known (see [`LeafCategory::condition_policy`]).
    ///
    /// ```
    /// use taxonomy_data::{LeafCategory, Site};
    /// assert_eq!(LeafCategory::new(Site::Gb, 9355).unwrap().condition_required(), None);
    /// ```
    #[inline]
    pub const fn condition_required(self) -> Option<bool> {
        match self.condition_policy() {
            Some(policy) => Some(policy.required),
            None => None,
        }
    }

    /// What `condition!` expands to, in a `const`: `condition`, after checking that this
    /// build's compiled-in policy of the category does not refuse it (the macro checked it
    /// against the policies its own build of taxonomy-data saw; if the program's build has no
    /// policy for the category, or one that refuses the condition, the build fails; another
    /// policy that also takes the condition is not noticed).
    #[doc(hidden)]
    pub const fn __condition_checked_by_macro(self, condition: Condition) -> Condition {
        let Some(policy) = self.condition_policy() else {
            panic!(
                "condition!: the macro checked this condition against a condition policy that the taxonomy-data compiled into this program does not have: the two builds of taxonomy-data (the macro's and the program's) saw different snapshots directories"
            );
        };
        if !policy.refuses(condition) {
            return condition;
        }
        panic!(
            "condition!: the condition policy compiled into this program does not allow this condition: the two builds of taxonomy-data (the macro's and the program's) saw different snapshots directories"
        )
    }

    #[cfg(feature = "aspects")]
    /// The aspect rules of this category, when it is pinned (`snapshot aspects pin`, which
    /// saves its getItemAspectsForCategory answer beside the snapshots, compiled in by the
    /// build): a listing is [checked](aspects::PinnedRules::check) against them with no file,
    /// token or network, and gets the same [`Problem`](aspects::Problem)s as
    /// `taxonomy-model`'s check of the answer (the same code runs both).
    ///
    /// ```
    /// use taxonomy_data::aspects::{ListingAspects, Problem};
    /// use taxonomy_data::{LeafCategory, Site};
    ///
    /// // The repository pins EBAY_US category 179 (PC Desktops & All-In-Ones).
    /// let rules = LeafCategory::new(Site::Us, 179).unwrap().aspects().unwrap();
    /// let listing = ListingAspects::new().with("Brand", ["Dell"]).with("Type", ["Desktops"]);
    /// let problems = rules.check(&listing);
    /// assert!(matches!(&problems[0], Problem::NotAllowed { suggestion: Some(s), .. } if s == "Desktop"));
    /// assert!(LeafCategory::new(Site::Us, 9355).unwrap().aspects().is_none()); // not pinned
    /// ```
    pub const fn aspects(self) -> Option<&'static aspects::PinnedRules> {
        let pinned = self.site.pinned_rules();
        let id = self.id();
        let (mut lo, mut hi) = (0, pinned.len());
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let (at, rules) = pinned[mid];
            if at == id {
                return Some(rules);
            }
            if at < id {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        None
    }

    #[cfg(feature = "aspects")]
    /// What `aspects!` expands to: this category's pinned rules. The macro also calls it in
    /// a `const _: () = …` (see [`Self::__assert_pinned_by_macro`]), so a build whose
    /// taxonomy-data has none for it (the macro saw other pinned files) fails to compile.
    #[doc(hidden)]
    pub const fn __pinned_by_macro(self) -> &'static aspects::PinnedRules {
        match self.aspects() {
            Some(rules) => rules,
            None => panic!(
                "aspects!: the macro checked this listing against pinned aspect rules that the taxonomy-data compiled into this program does not have: the two builds of taxonomy-data (the macro's and the program's) saw different snapshots directories"
            ),
        }
    }

    #[cfg(feature = "aspects")]
    /// What `aspects!` expands to, in a `const _: () = …`: fails the build when this
    /// category has no pinned rules in the taxonomy-data compiled into the program. A unit
    /// constant rather than a constant of the rules themselves: the compiler validates a
    /// constant's value, and a reference to the rules would have it walk all of them (every
    /// allowed value) at every `aspects!`.
    #[doc(hidden)]
    pub const fn __assert_pinned_by_macro(self) {
        let _ = self.__pinned_by_macro();
    }
}

impl fmt::Debug for LeafCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "LeafCategory({} {} {:?})",
            self.site,
            self.id(),
            self.name()
        )
    }
}

impl fmt::Display for LeafCategory {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.category().fmt(f)
    }
}

impl From<LeafCategory> for Category {
    fn from(leaf: LeafCategory) -> Category {
        leaf.category()
    }
}

/// Why an id is not a [`LeafCategory`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeafError {
    /// The site has no category with this id.
    UnknownCategory {
        /// The site.
        site: Site,
        /// The id.
        id: u32,
    },
    /// The category exists but has subcategories; listings need a leaf.
    NotALeaf {
        /// The site.
        site: Site,
        /// The id.
        id: u32,
    },
    /// The category expired: the service retired it and maps it to `replacement`
    /// (getExpiredCategories). Listings must use the replacement.
    Expired {
        /// The site.
        site: Site,
        /// The expired id.
        id: u32,
        /// The active leaf that replaced it.
        replacement: LeafCategory,
    },
    /// The site was left out of this build (`TAXONOMY_SITES`).
    SiteNotCompiledIn {
        /// The site.
        site: Site,
    },
}

impl fmt::Display for LeafError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            LeafError::UnknownCategory { site, id } => write!(
                f,
                "{site} has no category {id} (tree version {})",
                site.tree_version()
            ),
            LeafError::NotALeaf { site, id } => {
                let name = site.category(id).map_or("", Category::name);
                write!(
                    f,
                    "{site} category {id} ({name}) is not a leaf: only leaf categories accept listings; pick one of its subcategories"
                )
            }
            LeafError::Expired {
                site,
                id,
                replacement,
            } => write!(
                f,
                "{site} category {id} expired; use {} ({})",
                replacement.id(),
                replacement.path()
            ),
            LeafError::SiteNotCompiledIn { site } => write!(
                f,
                "{site} is not compiled into this build: it has no snapshot (`snapshot refresh --sites {site}`, run at your project's root, makes one) or TAXONOMY_SITES leaves it out"
            ),
        }
    }
}

impl core::error::Error for LeafError {}
