//! # taxonomy-macros
//!
//! `category!` turns a category id or a full path into a `taxonomy_data::LeafCategory`, checked at
//! compile time against the very tables `taxonomy-data` compiles into your program.
//! Only leaf categories accept listings, so anything else is a compile error that says what to
//! write instead.
//!
//! ```
//! use taxonomy_data::typed::{Checked, EBAY_DE, In};
//! use taxonomy_data::{LeafCategory, Site};
//! use taxonomy_macros::category;
//!
//! // An id on the US site (the default site); `.leaf()` gives the `LeafCategory`.
//! const PHONES: LeafCategory = category!("9355").leaf();
//! // Another site, named by its marketplace id; the value's type names both.
//! let handys: Checked<In<EBAY_DE, 9355>, LeafCategory> = category!(EBAY_DE, "9355");
//! // A full path, from the top level down (leaf names alone are not unique).
//! let by_path = category!("Cell Phones & Accessories > Cell Phones & Smartphones");
//!
//! assert_eq!(PHONES, by_path);
//! assert_eq!(handys.site(), Site::De);
//! assert_eq!(handys.name(), "Handys & Smartphones");
//! ```
//!
//! `aspects!` checks a listing's item aspects against its category's pinned rules the same way
//! (see [`aspects!`]), and `condition!` an item condition against its category's condition
//! policy (see [`condition!`]).
//!
//! Each macro's value carries its marketplace and category in its type
//! (`taxonomy_data::typed::Checked<In<EBAY_US, 179>, …>`; a leaf or aspects dereference to
//! the `LeafCategory` or `Aspects` they hold, a condition gives its `Condition` with
//! `.condition()`), so code that takes several of them can require one category:
//! `marketplace_listing::ListingBuilder` does not compile with aspects or a condition checked
//! for another category or marketplace than its `category!`'s, and the error names both
//! (`aspects checked for taxonomy_data::typed::In<EBAY_US, 179> given to a listing of
//! taxonomy_data::typed::In<EBAY_US, 177>`, taxonomy-macros' `tests/ui/fail_listing_*`).
//!
//! Listing code depends on both `taxonomy-data` and `taxonomy-macros`; the expansion names
//! `::taxonomy_data`. The logic (parsing, lookups, suggestions, messages) lives in
//! `taxonomy-macros-core`, where it is unit-tested and benchmarked; this crate is its shim.

use proc_macro::TokenStream;

/// A leaf category checked at compile time: `category!("9355")`, `category!(EBAY_DE, "9355")`,
/// `category!(Site::De, "9355")` or
/// `category!("Cell Phones & Accessories > Cell Phones & Smartphones")`.
///
/// The site defaults to `EBAY_US`; another is named by its marketplace id (`EBAY_DE`) or by
/// the path of its `taxonomy_data::Site` variant (`Site::De`), and must be compiled in. The
/// literal is a decimal category id or a full path of names separated by `>`. The expansion is
/// a constant expression of type `taxonomy_data::typed::Checked<In<EBAY_US, 9355>,
/// LeafCategory>` (its marketplace and category in its type; it dereferences to the
/// `LeafCategory`, which `.leaf()` gives, in `const` items too).
///
/// Compile errors point at the literal: a category that is not a leaf (with some of its leaves
/// to choose from), an unknown id or path (with close matches), an unknown site, a malformed
/// or empty literal.
#[proc_macro]
pub fn category(input: TokenStream) -> TokenStream {
    taxonomy_macros_core::expand(input.into()).into()
}

/// A listing's aspects (item specifics) checked at compile time against its category's
/// pinned rules: `aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "Features":
/// ["Bluetooth", "Wi-Fi"], "Model": model })`.
///
/// The site and category are written as for [`category!`] (the site defaults to `EBAY_US`);
/// the category must be pinned (`snapshot aspects pin --site EBAY_US --category 179`, which
/// saves its getItemAspectsForCategory answer in the snapshots directory's `pinned/`,
/// compiled into `taxonomy-data`). A value is a string literal, an array of them, or any
/// expression giving a text or a list of texts (`taxonomy_data::aspects::IntoAspectValues`).
///
/// With literal values only, the expansion is a `taxonomy_data::aspects::Aspects` carrying
/// its marketplace and category in its type (`taxonomy_data::typed::Checked<In<EBAY_US,
/// 179>, Aspects>`, which dereferences to it; `into_inner()` gives it): it
/// serialises (feature `serde`) to the Inventory API's `{"Brand": ["Dell"], …}` and converts
/// into `taxonomy_model::aspects::ListingAspects`. With an expression among the values, it is
/// a `Result<Checked<In<…>, Aspects>, AspectsError>`: the names, the required aspects and the
/// literals are checked at compile time, the expressions' values at run time against the same
/// compiled-in rules, with the same problems.
///
/// Compile errors, each on the offending name or value and saying what to do: required
/// aspects missing (listed, with some of their values), a value not in a selection-only list
/// (with the closest allowed values), more than one value for a single-value aspect, a value
/// over its length limit, a value of the wrong data type or format, a value whose control
/// aspect does not allow it, a category with no pinned aspects (with the command that pins
/// it). Warnings, never errors (stable Rust has no macro warnings: each is the use of a
/// deprecated constant whose note is the message, silenced by `#[allow(deprecated)]`): an
/// aspect the category does not know (eBay takes custom aspects; the closest known name is
/// suggested), a name given twice, an aspect that becomes required at a date and is missing.
///
/// ```
/// use taxonomy_macros::aspects;
///
/// // The repository pins EBAY_US category 179 (PC Desktops & All-In-Ones).
/// let desktop = aspects!(EBAY_US, "179", {
///     "Brand": "Dell",
///     "Type": "Desktop",
///     "Features": ["Bluetooth", "Wi-Fi"],
/// });
/// assert_eq!(desktop.category_id(), 179);
/// assert_eq!(desktop.listing().values("features").unwrap(), ["Bluetooth", "Wi-Fi"]);
///
/// // A value known at run time: checked then, against the same rules.
/// let model = String::from("OptiPlex 7010");
/// let with_model = aspects!("179", { "Brand": "Dell", "Type": "Desktop", "Model": model });
/// assert!(with_model.is_ok());
/// let too_long = "x".repeat(66);
/// let refused = aspects!("179", { "Brand": "Dell", "Type": "Desktop", "Model": too_long });
/// assert!(refused.unwrap_err().to_string().contains("over the limit of 65"));
/// ```
#[proc_macro]
pub fn aspects(input: TokenStream) -> TokenStream {
    taxonomy_macros_core::expand_aspects(input.into()).into()
}

/// An item condition checked at compile time against its category's condition policy (the
/// Sell Metadata API's getItemConditionPolicies): `condition!(EBAY_US, "9355", USED_EXCELLENT)`.
///
/// The site and category are written as for [`category!`] (the site defaults to `EBAY_US`;
/// an id or a full path, with `category!`'s errors); the condition is its `ConditionEnum`
/// name. The expansion is a constant expression of type `taxonomy_data::typed::Checked<In<EBAY_US,
/// 9355>, Condition>` (its marketplace and category in its type; `.condition()` gives the
/// `taxonomy_data::Condition`, in `const` items too), which a listing of another category
/// does not take (`marketplace_listing::ListingBuilder::condition`).
///
/// The policies are compiled into `taxonomy-data` from the condition-policy file beside each
/// snapshot (`EBAY_US.conditions.json`, written by `snapshot refresh` run with credentials).
/// Compile errors, on the condition: a condition the category does not allow (naming those
/// it allows, and saying when it requires one), a name that is no `ConditionEnum` name (with
/// the closest names), and a leaf whose policy is not known (the site has no condition-policy
/// file, or the file does not name the leaf), saying how to get it: never a silent pass.
///
/// ```compile_fail
/// use taxonomy_macros::condition;
/// // The committed snapshots carry no condition policies (eBay's are only had with
/// // credentials), so this fails: "EBAY_US's condition policies are not in the snapshots".
/// const USED: taxonomy_data::Condition = condition!(EBAY_US, "9355", USED_EXCELLENT).condition();
/// ```
///
/// With `EBAY_US.conditions.json` in the snapshots directory, allowing `USED_EXCELLENT` in
/// 9355, the same line compiles to `Condition::UsedExcellent` (taxonomy-macros'
/// `tests/ui/pass_condition.rs`).
#[proc_macro]
pub fn condition(input: TokenStream) -> TokenStream {
    taxonomy_macros_core::expand_condition(input.into()).into()
}

/// A listing with variations' axes checked at compile time against its category's pinned
/// rules: `variations!(EBAY_US, "15687", { "Size": ["S", "M", "L"], "Color": ["Black",
/// "White"] })`.
///
/// The site and category are written as for [`category!`] (the site defaults to `EBAY_US`);
/// the category must be pinned, as for [`aspects!`]. Each axis is an aspect name with its
/// values (string literals, in an array). The expansion is a constant expression of type
/// `taxonomy_data::typed::Checked<In<EBAY_US, 15687>, Variations>`
/// (`taxonomy_data::aspects::Variations`: each axis as the category spells it, with its
/// values; `into_inner()` gives it), which
/// `marketplace_listing::VariesBy` is made from (`VariesBy::from(v.into_inner())`: the
/// group's `variesBy.specifications`).
///
/// Compile errors, each on the axis or value it is about: an axis that is not an aspect of
/// the category or not enabled for variations (getItemAspectsForCategory's
/// `aspectEnabledForVariations`), naming the closest aspects that are; Brand as an axis
/// (eBay: "Brand is not allowed as a variation specific"); a value a selection-only aspect
/// does not allow, naming the closest allowed values; an axis or a value given twice; more
/// axes or values than eBay takes (`taxonomy_data::aspects::variation_limits`, the limits
/// marketplace-listing's `check_group` applies); a category that is not a leaf or has no
/// pinned aspects. Whether the category takes variations at all (getListingStructurePolicies'
/// `variationsSupported`) is checked by what is compiled in: a category whose pinned rules
/// enable no aspect for variations refuses every axis, and says so.
///
/// ```compile_fail
/// use taxonomy_macros::variations;
/// // EBAY_US 179's pinned rules enable no aspect for variations: "\"Type\" is not enabled
/// // for variations in EBAY_US category 179 … has no aspect enabled for variations".
/// let axes = variations!(EBAY_US, "179", { "Type": ["Desktop", "All-in-One"] });
/// ```
///
/// With a category whose pinned rules enable aspects for variations (EBAY_US 27386,
/// Graphics/Video Cards, in taxonomy-macros' `tests/ui/pass_variations.rs`):
///
/// ```ignore
/// use marketplace_listing::VariesBy;
/// use taxonomy_macros::variations;
///
/// let axes = variations!(EBAY_US, "27386", {
///     "Memory Size": ["8 GB", "16 GB"],
///     "Cooling Component Included": ["Fan with Heatsink", "Water Cooler"],
/// });
/// let varies_by = VariesBy::from(axes.into_inner());
/// assert_eq!(varies_by.specifications[0].name, "Memory Size");
/// ```
#[proc_macro]
pub fn variations(input: TokenStream) -> TokenStream {
    taxonomy_macros_core::expand_variations(input.into()).into()
}
