//! # marketplaces
//!
//! Every marketplace of the service that has a default category tree, in one table: its
//! marketplace id, its default category tree id, the language of that tree, its name, and
//! the tree of its other language where it has one. Everything else in the workspace derives
//! from this table: `taxonomy-data` generates its `Site` enum from it (as chrono-tz generates
//! `Tz`), the snapshot files are named after it, the clients send its ids and languages.
//!
//! ```
//! use marketplaces::Marketplace;
//!
//! let de: Marketplace = "EBAY_DE".parse().unwrap();
//! assert_eq!(de, Marketplace::De);
//! assert_eq!(de.tree_id(), 77);
//! assert_eq!(de.default_language(), "de-DE");
//! assert_eq!(de.currency(), "EUR");
//! assert_eq!(Marketplace::from_tree_id(210), Some(Marketplace::Ca)); // Canada in French
//! assert_eq!(Marketplace::Ca.tree_for_language("fr-CA"), 210);
//! assert_eq!(Marketplace::ALL.len(), 20);
//! ```
//!
//! ## Where the facts come from
//!
//! - The marketplace ids: eBay's Taxonomy API reference, "Marketplaces with Default Category
//!   Trees" (<https://developer.ebay.com/api-docs/commerce/taxonomy/static/supportedmarketplaces.html>),
//!   the ids getDefaultCategoryTreeId accepts. EBAY_IN is kept although that page no longer
//!   lists it (the MarketplaceIdEnum page says eBay India "is no longer a functioning eBay
//!   marketplace"); EBAY_RU is listed there but no tree id for it is published, so it is left
//!   out.
//! - The tree ids: the Taxonomy API's own list in the `category_tree_id` parameter of
//!   getCompatibilityProperties (US 0, Motors 100, Canada 2, UK 3, Germany 77, Australia 15,
//!   France 71, Italy 101, Spain 186), and for the others the migration guide's rule that "the
//!   category_tree_id … is the same value as the CategorySiteID used in the GetCategories
//!   call", with the site ids of eBay's "Global ID Values" and "eBay sites" tables
//!   (<https://developer.ebay.com/api-docs/user-guides/static/trading-user-guide/global-sites.html>).
//! - The languages: the Language column of the "Global ID Values" table
//!   (<https://developer.ebay.com/devzone/merchandising/docs/CallRef/Enums/GlobalIdList.html>),
//!   as BCP 47 tags for `Accept-Language`; and MarketplaceIdEnum's notes that Canada's French
//!   locale is asked with `Accept-Language: fr-CA` and Belgium's other locale with its own tag.
//!   Two entries depart from that column: Germany, which it gives as `en-DE` (the German
//!   site's names are German: `de-DE`), and Hong Kong, which it gives as `zh-Hant`
//!   (`zh-HK`, the locale eBay's MIP locale list gives for the Hong Kong site, names the
//!   region as well as the script).
//! - The currencies: the Inventory API's CurrencyCodeEnum and its MarketplaceIdEnum (the
//!   currency each marketplace's prices are given in: USD for EBAY_US and EBAY_MOTORS_US, CAD
//!   for EBAY_CA, GBP for EBAY_GB, EUR for the euro area's sites, CHF, HKD, INR, MYR, PHP, PLN
//!   and SGD for the others), ISO 4217 codes.
//! - The Inventory API's ids: its MarketplaceEnum
//!   (<https://developer.ebay.com/api-docs/sell/inventory/types/slr:MarketplaceEnum>), what an
//!   offer's `marketplaceId` and getOffers' `marketplace_id` take. It names every marketplace
//!   as the Taxonomy API does but eBay Motors, `EBAY_MOTORS` (the Taxonomy API's and the
//!   Metadata API's id is `EBAY_MOTORS_US`: getItemConditionPolicies' reference says to
//!   "specify EBAY_MOTORS_US" for the US Motors policies); the table's `inventory` column
//!   gives it where it differs.
//! - Belgium: the sites table gives 23 for French Belgium and 123 for Dutch Belgium; eBay's
//!   newer REST pages call EBAY_BE "eBay Belgium (Dutch)" while older ones call its default
//!   French. Which tree getDefaultCategoryTreeId answers for EBAY_BE is not documented; the
//!   table keeps site id 23 as the default and 123 as the `nl-BE` tree, and `snapshot refresh`
//!   asks the service (getDefaultCategoryTreeId) rather than trusting the table.

#![no_std]

mod condition;

pub use condition::{
    AllowedCondition, Condition, ConditionPolicy, DescriptorRule, DescriptorValue, UnknownCondition,
};

use core::fmt;
use core::str::FromStr;

/// The request header that names the marketplace a call is about (`X-EBAY-C-MARKETPLACE-ID`),
/// sent with a [`Marketplace::marketplace_id`] on every call of the Taxonomy API and most of
/// the Sell APIs.
pub const MARKETPLACE_HEADER: &str = "X-EBAY-C-MARKETPLACE-ID";

/// Defines [`Marketplace`] and its facts from one table, a row per marketplace.
macro_rules! marketplace_table {
    ($(
        $variant:ident: $id:literal, tree $tree:literal, $language:literal, $currency:ident, $name:literal
        $(, also $other_language:literal tree $other_tree:literal)?
        $(, inventory $inventory_id:literal)?;
    )*) => {
        /// A marketplace of the service with a default category tree.
        ///
        /// The variants, their ids, trees and languages all come from one table in this
        /// crate's source (see the crate documentation for where each fact comes from).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Marketplace {
            $(
                #[doc = concat!($name, ": marketplace `", $id, "`, category tree ", stringify!($tree), " (", $language, ", prices in ", stringify!($currency), ")",
                    $(", and tree ", stringify!($other_tree), " in ", $other_language,)? ".")]
                $variant,
            )*
        }

        impl Marketplace {
            /// Every marketplace, in the table's order.
            pub const ALL: [Marketplace; [$(stringify!($variant)),*].len()] = [$(Marketplace::$variant),*];

            const fn facts(self) -> &'static Facts {
                match self {
                    $(Marketplace::$variant => &Facts {
                        id: $id,
                        variant: stringify!($variant),
                        tree_id: $tree,
                        language: $language,
                        currency: stringify!($currency),
                        name: $name,
                        snapshot_file_name: concat!($id, ".json"),
                        other_tree: marketplace_table!(@other $($other_language, $other_tree)?),
                        inventory_id: marketplace_table!(@inventory $id $(, $inventory_id)?),
                    },)*
                }
            }
        }
    };
    (@other $language:literal, $tree:literal) => { Some(($language, $tree)) };
    (@other) => { None };
    (@inventory $id:literal, $inventory_id:literal) => { $inventory_id };
    (@inventory $id:literal) => { $id };
}

/// The facts of one row of the table.
struct Facts {
    id: &'static str,
    variant: &'static str,
    tree_id: u32,
    language: &'static str,
    currency: &'static str,
    name: &'static str,
    snapshot_file_name: &'static str,
    other_tree: Option<(&'static str, u32)>,
    inventory_id: &'static str,
}

/// ISO 4217's minor unit (the decimals of an amount) of each currency of eBay's
/// CurrencyCodeEnum that a marketplace of the table prices in, written once for every row
/// that shares it; an unknown code: 2, the minor unit of most currencies.
fn currency_decimals(currency: &str) -> u32 {
    match currency {
        "USD" | "CAD" | "GBP" | "AUD" | "EUR" | "CHF" | "HKD" | "INR" | "MYR" | "PHP" | "PLN"
        | "SGD" => 2,
        "JPY" | "KRW" => 0,
        _ => 2,
    }
}

marketplace_table! {
    Us: "EBAY_US", tree 0, "en-US", USD, "United States";
    MotorsUs: "EBAY_MOTORS_US", tree 100, "en-US", USD, "eBay Motors (United States)", inventory "EBAY_MOTORS";
    Ca: "EBAY_CA", tree 2, "en-CA", CAD, "Canada", also "fr-CA" tree 210;
    Gb: "EBAY_GB", tree 3, "en-GB", GBP, "United Kingdom";
    Au: "EBAY_AU", tree 15, "en-AU", AUD, "Australia";
    At: "EBAY_AT", tree 16, "de-AT", EUR, "Austria";
    Be: "EBAY_BE", tree 23, "fr-BE", EUR, "Belgium", also "nl-BE" tree 123;
    Fr: "EBAY_FR", tree 71, "fr-FR", EUR, "France";
    De: "EBAY_DE", tree 77, "de-DE", EUR, "Germany";
    It: "EBAY_IT", tree 101, "it-IT", EUR, "Italy";
    Nl: "EBAY_NL", tree 146, "nl-NL", EUR, "Netherlands";
    Es: "EBAY_ES", tree 186, "es-ES", EUR, "Spain";
    Ch: "EBAY_CH", tree 193, "de-CH", CHF, "Switzerland";
    Hk: "EBAY_HK", tree 201, "zh-HK", HKD, "Hong Kong";
    In: "EBAY_IN", tree 203, "en-IN", INR, "India";
    Ie: "EBAY_IE", tree 205, "en-IE", EUR, "Ireland";
    My: "EBAY_MY", tree 207, "en-MY", MYR, "Malaysia";
    Ph: "EBAY_PH", tree 211, "en-PH", PHP, "Philippines";
    Pl: "EBAY_PL", tree 212, "pl-PL", PLN, "Poland";
    Sg: "EBAY_SG", tree 216, "en-SG", SGD, "Singapore";
}

impl Marketplace {
    /// The marketplace id, as sent in the marketplace header, e.g. `EBAY_DE`.
    pub const fn marketplace_id(self) -> &'static str {
        self.facts().id
    }

    /// The marketplace's id in eBay's Inventory API (its MarketplaceEnum): an offer's
    /// `marketplaceId`, getOffers' `marketplace_id`. The same as
    /// [`marketplace_id`](Self::marketplace_id) but for eBay Motors, `EBAY_MOTORS` there
    /// (`EBAY_MOTORS_US` in the Taxonomy and Metadata APIs).
    ///
    /// ```
    /// use marketplaces::Marketplace;
    /// assert_eq!(Marketplace::MotorsUs.inventory_marketplace_id(), "EBAY_MOTORS");
    /// assert_eq!(Marketplace::De.inventory_marketplace_id(), "EBAY_DE");
    /// ```
    pub const fn inventory_marketplace_id(self) -> &'static str {
        self.facts().inventory_id
    }

    /// The marketplace with this Inventory API id ([`inventory_marketplace_id`](
    /// Self::inventory_marketplace_id): `EBAY_MOTORS`, not `EBAY_MOTORS_US`; ASCII case
    /// ignored).
    pub fn from_inventory_marketplace_id(id: &str) -> Option<Marketplace> {
        let id = id.trim();
        Marketplace::ALL
            .into_iter()
            .find(|m| m.inventory_marketplace_id().eq_ignore_ascii_case(id))
    }

    /// The id of the marketplace's default category tree (getDefaultCategoryTreeId's answer
    /// without `Accept-Language`).
    pub const fn tree_id(self) -> u32 {
        self.facts().tree_id
    }

    /// The language of the default tree, sent as `Accept-Language`, e.g. `de-DE`.
    pub const fn default_language(self) -> &'static str {
        self.facts().language
    }

    /// The currency of the marketplace's prices, as the Inventory API's `Amount.currency` takes
    /// it (ISO 4217, e.g. `EUR` for `EBAY_DE`): an offer priced in another currency is refused
    /// (createOffer/publishOffer, errorId 25003).
    pub const fn currency(self) -> &'static str {
        self.facts().currency
    }

    /// How many decimals a price in the marketplace's currency may have: ISO 4217's minor
    /// unit of [`currency`](Self::currency) (2 for every currency of the table; a currency
    /// without minor unit, such as JPY, has 0). eBay refuses a price with more decimals than
    /// its currency has (publishOffer, errorId 25003, "invalid price").
    ///
    /// ```
    /// use marketplaces::Marketplace;
    /// assert_eq!(Marketplace::Us.currency_decimals(), 2);
    /// ```
    pub fn currency_decimals(self) -> u32 {
        currency_decimals(self.currency())
    }

    /// The marketplace's name, in English.
    pub const fn name(self) -> &'static str {
        self.facts().name
    }

    /// The Rust name of the variant (`Us`, `MotorsUs`, …), for generated code.
    pub const fn variant(self) -> &'static str {
        self.facts().variant
    }

    /// The marketplace's tree in another language, where it has one: `("fr-CA", 210)` for
    /// Canada.
    pub const fn other_tree(self) -> Option<(&'static str, u32)> {
        self.facts().other_tree
    }

    /// The tree whose names are in `language`: the other tree when `language` is its
    /// language (ASCII case ignored), the default tree otherwise.
    pub fn tree_for_language(self, language: &str) -> u32 {
        match self.other_tree() {
            Some((other, tree)) if other.eq_ignore_ascii_case(language.trim()) => tree,
            _ => self.tree_id(),
        }
    }

    /// The file name of the marketplace's committed snapshot, e.g. `EBAY_US.json`.
    pub const fn snapshot_file_name(self) -> &'static str {
        self.facts().snapshot_file_name
    }

    /// The marketplace with this marketplace id (`EBAY_DE`; ASCII case ignored).
    pub fn from_marketplace_id(id: &str) -> Option<Marketplace> {
        let id = id.trim();
        Marketplace::ALL
            .into_iter()
            .find(|m| m.marketplace_id().eq_ignore_ascii_case(id))
    }

    /// The marketplace one of whose trees (the default or the other language's) has this id.
    pub fn from_tree_id(tree_id: u32) -> Option<Marketplace> {
        Marketplace::ALL
            .into_iter()
            .find(|m| m.tree_id() == tree_id || m.other_tree().is_some_and(|(_, t)| t == tree_id))
    }

    /// Parses a site as a person names it: the one parser of site names of every command,
    /// macro and `FromStr`. It takes a marketplace id (`EBAY_DE`), the id without its `EBAY_`
    /// prefix (`de`, `motors_us`) or a tree id (`77`, and `210` for Canada in French); ASCII
    /// case and surrounding spaces are ignored. What it refuses comes with the closest
    /// marketplace where one stands out ([`UnknownMarketplace::closest`]): by a common alias
    /// (`EBAY_UK` is EBAY_GB; eBay's older Global IDs such as `EBAY-ENCA`), by the
    /// marketplace's name (`germany`), or by a typo's distance from an id (`EBAY_DEE`).
    ///
    /// ```
    /// use marketplaces::Marketplace;
    /// assert_eq!(Marketplace::parse("EBAY_DE"), Ok(Marketplace::De));
    /// assert_eq!(Marketplace::parse("77"), Ok(Marketplace::De));
    /// assert_eq!(Marketplace::parse("fr"), Ok(Marketplace::Fr));
    /// let uk = Marketplace::parse("EBAY_UK").unwrap_err();
    /// assert_eq!(uk.closest(), Some(Marketplace::Gb));
    /// assert!(uk.to_string().starts_with("not a marketplace; did you mean EBAY_GB (United Kingdom)?"));
    /// assert_eq!(Marketplace::parse("EBAY_XX").unwrap_err().closest(), None);
    /// ```
    pub fn parse(text: &str) -> Result<Marketplace, UnknownMarketplace> {
        let text = text.trim();
        if let Some(m) = Marketplace::from_marketplace_id(text) {
            return Ok(m);
        }
        if let Ok(tree_id) = text.parse::<u32>() {
            return Marketplace::from_tree_id(tree_id).ok_or(UnknownMarketplace { closest: None });
        }
        Marketplace::ALL
            .into_iter()
            .find(|m| short_id(*m).eq_ignore_ascii_case(text))
            .ok_or(UnknownMarketplace {
                closest: closest(text),
            })
    }
}

/// A marketplace id without its `EBAY_` prefix: `DE`, `MOTORS_US`.
fn short_id(m: Marketplace) -> &'static str {
    &m.marketplace_id()["EBAY_".len()..]
}

/// Other names of marketplaces, folded as [`fold`] folds what a person typed (upper case,
/// `_` between words, no `EBAY_` prefix): countries' other English and own names, and the
/// Global IDs of eBay's older APIs (`EBAY-ENCA`, `EBAY-MOTOR`; "Global ID Values",
/// <https://developer.ebay.com/devzone/merchandising/docs/CallRef/Enums/GlobalIdList.html>).
/// Each suggests its marketplace; none is accepted as a name.
const ALIASES: &[(&str, Marketplace)] = &[
    ("UK", Marketplace::Gb),
    ("GBR", Marketplace::Gb),
    ("BRITAIN", Marketplace::Gb),
    ("GREAT_BRITAIN", Marketplace::Gb),
    ("ENGLAND", Marketplace::Gb),
    ("CO_UK", Marketplace::Gb),
    ("USA", Marketplace::Us),
    ("AMERICA", Marketplace::Us),
    ("COM", Marketplace::Us),
    ("MOTOR", Marketplace::MotorsUs),
    ("MOTORS", Marketplace::MotorsUs),
    ("MOTORSUS", Marketplace::MotorsUs),
    ("ENCA", Marketplace::Ca),
    ("FRCA", Marketplace::Ca),
    ("FRBE", Marketplace::Be),
    ("NLBE", Marketplace::Be),
    ("DEUTSCHLAND", Marketplace::De),
    ("GER", Marketplace::De),
    ("OESTERREICH", Marketplace::At),
    ("SCHWEIZ", Marketplace::Ch),
    ("SUISSE", Marketplace::Ch),
    ("SWISS", Marketplace::Ch),
    ("ITALIA", Marketplace::It),
    ("ESPANA", Marketplace::Es),
    ("NEDERLAND", Marketplace::Nl),
    ("HOLLAND", Marketplace::Nl),
    ("BELGIE", Marketplace::Be),
    ("BELGIQUE", Marketplace::Be),
    ("POLSKA", Marketplace::Pl),
    ("EIRE", Marketplace::Ie),
];

/// The longest text [`closest`] compares: longer names are no typo of a marketplace's.
const FOLDED_MAX: usize = 32;

/// `text` as [`ALIASES`] spell names: ASCII upper case, every run of spaces, `-`, `_` or `.`
/// one `_`, without a leading `EBAY` (`ebay-uk`, `EBAY UK` and `ebay.co.uk` all fold to `UK`,
/// `CO_UK`); `None` when it is longer than [`FOLDED_MAX`] or not ASCII.
fn fold(text: &str, out: &mut [u8; FOLDED_MAX]) -> Option<usize> {
    let mut len = 0;
    let mut gap = false;
    for b in text.trim().bytes() {
        if !b.is_ascii() {
            return None;
        }
        if matches!(b, b' ' | b'-' | b'_' | b'.') {
            gap = len > 0;
            continue;
        }
        if gap {
            *out.get_mut(len)? = b'_';
            len += 1;
            gap = false;
        }
        *out.get_mut(len)? = b.to_ascii_uppercase();
        len += 1;
    }
    let folded = &out[..len];
    let skip = if folded.starts_with(b"EBAY_") {
        5
    } else if folded.starts_with(b"EBAY") && len > 4 {
        4
    } else {
        0
    };
    out.copy_within(skip..len, 0);
    Some(len - skip)
}

/// Whether `name`, folded, is `folded` (`United Kingdom` is `UNITED_KINGDOM`).
fn folds_to(name: &str, folded: &[u8]) -> bool {
    let mut buffer = [0; FOLDED_MAX];
    fold(name, &mut buffer).is_some_and(|len| &buffer[..len] == folded)
}

/// The edit distance between `a` and `b` (insertions, deletions, substitutions and swaps of
/// neighbours, each 1), both at most [`FOLDED_MAX`] bytes.
fn distance(a: &[u8], b: &[u8]) -> usize {
    let mut before = [0_usize; FOLDED_MAX + 1];
    let mut previous: [usize; FOLDED_MAX + 1] = core::array::from_fn(|j| j);
    let mut current = [0_usize; FOLDED_MAX + 1];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
        }
        before = previous;
        previous = current;
    }
    previous[b.len()]
}

/// The marketplace a refused site name most likely meant: an alias or a marketplace's name,
/// folded, names it; else the one marketplace whose short id, name or alias is within a typo
/// or two of it (none when two marketplaces are as close).
fn closest(text: &str) -> Option<Marketplace> {
    let mut buffer = [0; FOLDED_MAX];
    let len = fold(text, &mut buffer)?;
    let folded = &buffer[..len];
    if folded.is_empty() {
        return None;
    }
    let exact = Marketplace::ALL
        .into_iter()
        .find(|m| folds_to(short_id(*m), folded) || folds_to(m.name(), folded))
        .or_else(|| {
            ALIASES
                .iter()
                .find(|(alias, _)| alias.as_bytes() == folded)
                .map(|&(_, m)| m)
        });
    if exact.is_some() {
        return exact;
    }
    // A typo: at most one edit in a name of up to four letters, two in a longer one.
    let allowed = if len <= 4 { 1 } else { 2 };
    let candidates = Marketplace::ALL
        .into_iter()
        .flat_map(|m| [(short_id(m), m), (m.name(), m)])
        .chain(ALIASES.iter().copied());
    let mut best: Option<(usize, Marketplace)> = None;
    let mut tied = false;
    for (name, m) in candidates {
        let mut name_buffer = [0; FOLDED_MAX];
        let Some(name_len) = fold(name, &mut name_buffer) else {
            continue;
        };
        let d = distance(folded, &name_buffer[..name_len]);
        if d > allowed {
            continue;
        }
        match best {
            Some((b, bm)) if d == b && bm != m => tied = true,
            Some((b, _)) if d >= b => {}
            _ => {
                best = Some((d, m));
                tied = false;
            }
        }
    }
    best.filter(|_| !tied).map(|(_, m)| m)
}

impl fmt::Display for Marketplace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.marketplace_id())
    }
}

/// A site name that is not a marketplace of the table ([`Marketplace::parse`]'s and
/// `FromStr`'s error), with the marketplace it most likely meant. Its message starts with
/// "not a marketplace", then the suggestion ("did you mean EBAY_GB (United Kingdom)?") when
/// there is one, then the forms a site takes; a caller puts the name it was given before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownMarketplace {
    closest: Option<Marketplace>,
}

impl UnknownMarketplace {
    /// The marketplace the refused name most likely meant: `EBAY_GB` for `EBAY_UK`.
    pub fn closest(&self) -> Option<Marketplace> {
        self.closest
    }
}

impl fmt::Display for UnknownMarketplace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a marketplace")?;
        if let Some(m) = self.closest {
            write!(f, "; did you mean {} ({})?", m.marketplace_id(), m.name())?;
        } else {
            f.write_str(".")?;
        }
        f.write_str(" A site is a marketplace id (")?;
        for (i, m) in Marketplace::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(m.marketplace_id())?;
        }
        f.write_str("), the same without `EBAY_` (us, de, …) or a tree id (0, 77, …)")
    }
}

impl core::error::Error for UnknownMarketplace {}

/// Parses a site as [`Marketplace::parse`] does (`EBAY_DE`, `de`, `77`), with its suggestion
/// on a refused name.
impl FromStr for Marketplace {
    type Err = UnknownMarketplace;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Marketplace::parse(s)
    }
}

/// A category of a marketplace: what every Taxonomy call that takes a category
/// (getItemAspectsForCategory, getCategorySubtree, getCompatibilityProperties,
/// getCompatibilityPropertyValues) needs to know, its marketplace and its category id.
///
/// `taxonomy-data`'s `LeafCategory` (what its `category!` macro produces) and `Category`
/// implement it, so a checked category goes to the client as it is; a `(marketplace, id)`
/// pair implements it too, for an id known only at run time (unchecked: the service is the
/// judge). The marketplace of a pair can be anything that converts into a [`Marketplace`],
/// such as `taxonomy-data`'s `Site`.
///
/// ```
/// use marketplaces::{Marketplace, MarketplaceCategory};
/// let phones = (Marketplace::Us, 9355);
/// assert_eq!((phones.marketplace(), phones.category_id()), (Marketplace::Us, 9355));
/// ```
pub trait MarketplaceCategory {
    /// The marketplace the category belongs to (its header and tree).
    fn marketplace(&self) -> Marketplace;
    /// The category id, as the service's `category_id` parameter takes it.
    fn category_id(&self) -> u32;
}

impl<M: Copy + Into<Marketplace>> MarketplaceCategory for (M, u32) {
    fn marketplace(&self) -> Marketplace {
        self.0.into()
    }

    fn category_id(&self) -> u32 {
        self.1
    }
}

impl<C: MarketplaceCategory + ?Sized> MarketplaceCategory for &C {
    fn marketplace(&self) -> Marketplace {
        (**self).marketplace()
    }

    fn category_id(&self) -> u32 {
        (**self).category_id()
    }
}

#[cfg(test)]
mod tests {
    extern crate alloc;

    use alloc::string::ToString;

    use super::*;

    #[test]
    fn ids_and_trees_are_unique() {
        for (i, a) in Marketplace::ALL.iter().enumerate() {
            for b in &Marketplace::ALL[i + 1..] {
                assert_ne!(a.marketplace_id(), b.marketplace_id());
                assert_ne!(a.variant(), b.variant());
                assert_ne!(a.tree_id(), b.tree_id());
                assert_ne!(Some(a.tree_id()), b.other_tree().map(|t| t.1));
                assert_ne!(Some(b.tree_id()), a.other_tree().map(|t| t.1));
            }
        }
    }

    #[test]
    fn every_marketplace_round_trips_through_its_ids() {
        for m in Marketplace::ALL {
            assert_eq!(m.marketplace_id().parse(), Ok(m));
            assert_eq!(m.marketplace_id().to_ascii_lowercase().parse(), Ok(m));
            assert_eq!(Marketplace::from_tree_id(m.tree_id()), Some(m));
            assert_eq!(Marketplace::parse(&m.marketplace_id()[5..]), Ok(m));
            assert!(m.marketplace_id().starts_with("EBAY_"));
            assert_eq!(m.tree_for_language(m.default_language()), m.tree_id());
        }
        assert_eq!(
            "EBAY_XX".parse::<Marketplace>(),
            Err(UnknownMarketplace { closest: None })
        );
        assert_eq!(Marketplace::from_tree_id(123), Some(Marketplace::Be));
        assert_eq!(Marketplace::Be.tree_for_language("nl-be"), 123);
    }

    #[test]
    fn a_refused_site_name_suggests_the_marketplace_it_meant() {
        let closest = |text: &str| Marketplace::parse(text).unwrap_err().closest();
        // Aliases: the United Kingdom is EBAY_GB, whatever a person calls it.
        for uk in [
            "EBAY_UK",
            "ebay_uk",
            "uk",
            "EBAY-UK",
            "ebay.co.uk",
            "Great Britain",
        ] {
            assert_eq!(closest(uk), Some(Marketplace::Gb), "{uk}");
        }
        // The older APIs' Global IDs (a hyphen) and names.
        assert_eq!(closest("EBAY-GB"), Some(Marketplace::Gb));
        assert_eq!(closest("EBAY-ENCA"), Some(Marketplace::Ca));
        assert_eq!(closest("EBAY-MOTOR"), Some(Marketplace::MotorsUs));
        assert_eq!(closest("germany"), Some(Marketplace::De));
        assert_eq!(closest("Deutschland"), Some(Marketplace::De));
        assert_eq!(closest("united kingdom"), Some(Marketplace::Gb));
        // Typos of an id or a name.
        assert_eq!(closest("EBAY_DEE"), Some(Marketplace::De));
        assert_eq!(closest("EBAY_MOTOSR_US"), Some(Marketplace::MotorsUs));
        assert_eq!(closest("Autsralia"), Some(Marketplace::Au));
        // Nothing stands out: no suggestion rather than a guess.
        for nothing in ["EBAY_XX", "", "   ", "xyzzy", "12345", "EN", "ÜK"] {
            assert_eq!(closest(nothing), None, "{nothing:?}");
        }
        assert_eq!(closest(&"EBAY_UK".repeat(10)), None);
    }

    #[test]
    fn the_error_says_the_suggestion_then_the_forms_a_site_takes() {
        let message = Marketplace::parse("EBAY_UK").unwrap_err().to_string();
        assert!(
            message.starts_with("not a marketplace; did you mean EBAY_GB (United Kingdom)? A site is a marketplace id (EBAY_US, EBAY_MOTORS_US,"),
            "{message}"
        );
        assert!(message.ends_with("or a tree id (0, 77, …)"), "{message}");
        let message = Marketplace::parse("EBAY_XX").unwrap_err().to_string();
        assert!(
            message.starts_with("not a marketplace. A site is"),
            "{message}"
        );
    }

    #[test]
    fn from_str_takes_every_form_parse_takes() {
        assert_eq!("de".parse(), Ok(Marketplace::De));
        assert_eq!(" 210 ".parse(), Ok(Marketplace::Ca));
        assert_eq!("Motors_US".parse(), Ok(Marketplace::MotorsUs));
    }
}
