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
//! - Belgium: the sites table gives 23 for French Belgium and 123 for Dutch Belgium; eBay's
//!   newer REST pages call EBAY_BE "eBay Belgium (Dutch)" while older ones call its default
//!   French. Which tree getDefaultCategoryTreeId answers for EBAY_BE is not documented; the
//!   table keeps site id 23 as the default and 123 as the `nl-BE` tree, and `snapshot refresh`
//!   asks the service (getDefaultCategoryTreeId) rather than trusting the table.

#![no_std]

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
        $(, also $other_language:literal tree $other_tree:literal)?;
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
                    },)*
                }
            }
        }
    };
    (@other $language:literal, $tree:literal) => { Some(($language, $tree)) };
    (@other) => { None };
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
}

marketplace_table! {
    Us: "EBAY_US", tree 0, "en-US", USD, "United States";
    MotorsUs: "EBAY_MOTORS_US", tree 100, "en-US", USD, "eBay Motors (United States)";
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

    /// Parses a marketplace as a person types it: a marketplace id (`EBAY_DE`), a tree id
    /// (`77`), or the id without its `EBAY_` prefix (`de`, `motors_us`); ASCII case ignored.
    ///
    /// ```
    /// use marketplaces::Marketplace;
    /// assert_eq!(Marketplace::parse("EBAY_DE"), Some(Marketplace::De));
    /// assert_eq!(Marketplace::parse("77"), Some(Marketplace::De));
    /// assert_eq!(Marketplace::parse("fr"), Some(Marketplace::Fr));
    /// assert_eq!(Marketplace::parse("EBAY_XX"), None);
    /// ```
    pub fn parse(text: &str) -> Option<Marketplace> {
        let text = text.trim();
        if let Some(m) = Marketplace::from_marketplace_id(text) {
            return Some(m);
        }
        if let Ok(tree_id) = text.parse::<u32>() {
            return Marketplace::from_tree_id(tree_id);
        }
        Marketplace::ALL
            .into_iter()
            .find(|m| m.marketplace_id()["EBAY_".len()..].eq_ignore_ascii_case(text))
    }
}

impl fmt::Display for Marketplace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.marketplace_id())
    }
}

/// A marketplace id that is not in the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownMarketplace;

impl fmt::Display for UnknownMarketplace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a known marketplace id (expected one of ")?;
        for (i, m) in Marketplace::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(m.marketplace_id())?;
        }
        f.write_str(")")
    }
}

impl core::error::Error for UnknownMarketplace {}

/// Parses a marketplace id such as `EBAY_DE` (ASCII case ignored); see
/// [`Marketplace::parse`] for the forms a person types.
impl FromStr for Marketplace {
    type Err = UnknownMarketplace;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Marketplace::from_marketplace_id(s).ok_or(UnknownMarketplace)
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
            assert_eq!(Marketplace::parse(&m.marketplace_id()[5..]), Some(m));
            assert!(m.marketplace_id().starts_with("EBAY_"));
            assert_eq!(m.tree_for_language(m.default_language()), m.tree_id());
        }
        assert_eq!("EBAY_XX".parse::<Marketplace>(), Err(UnknownMarketplace));
        assert_eq!(Marketplace::from_tree_id(123), Some(Marketplace::Be));
        assert_eq!(Marketplace::Be.tree_for_language("nl-be"), 123);
    }
}
