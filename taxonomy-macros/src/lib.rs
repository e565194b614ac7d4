//! # taxonomy-macros
//!
//! `category!` turns a category id or a full path into a `taxonomy_data::LeafCategory`, checked at
//! compile time against the very tables `taxonomy-data` compiles into your program.
//! Only leaf categories accept listings, so anything else is a compile error that says what to
//! write instead.
//!
//! ```
//! use taxonomy_data::{LeafCategory, Site};
//! use taxonomy_macros::category;
//!
//! // An id on the US site (the default site).
//! const PHONES: LeafCategory = category!("9355");
//! // Another site, named by its marketplace id.
//! let handys = category!(EBAY_DE, "9355");
//! // A full path, from the top level down (leaf names alone are not unique).
//! let by_path = category!("Cell Phones & Accessories > Cell Phones & Smartphones");
//!
//! assert_eq!(PHONES, by_path);
//! assert_eq!(handys.site(), Site::De);
//! assert_eq!(handys.name(), "Handys & Smartphones");
//! ```
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
/// a constant expression of type `taxonomy_data::LeafCategory`, usable in `const` items.
///
/// Compile errors point at the literal: a category that is not a leaf (with some of its leaves
/// to choose from), an unknown id or path (with close matches), an unknown site, a malformed
/// or empty literal.
#[proc_macro]
pub fn category(input: TokenStream) -> TokenStream {
    taxonomy_macros_core::expand(input.into()).into()
}
