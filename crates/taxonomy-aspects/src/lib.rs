//! # taxonomy-aspects
//!
//! A listing's item aspects checked against a leaf category's rules (what
//! getItemAspectsForCategory and fetchItemAspects answer): the one implementation of the
//! check ([`check`]), over any [`RuleSet`]. `taxonomy-model`'s `AspectRules` (rules read from
//! an answer at run time) and [`PinnedRules`] (a pinned category's rules compiled into
//! `taxonomy-data`) are both rule sets, so a listing gets the same [`Problem`]s from either,
//! and `taxonomy_macros::aspects!` reports at compile time what the service would refuse.
//!
//! `no_std` (with `alloc`), no dependency but `taxonomy-hash`: `taxonomy-data` depends on it
//! and stays small. Most users reach it through `taxonomy_model::aspects` or
//! `taxonomy_data::aspects`, which re-export it.
//!
//! ```
//! use taxonomy_aspects::{ListingAspects, Problem};
//!
//! let listing = ListingAspects::new().with("Brand", ["Dell"]).with("Features", ["Wi-Fi", "Bluetooth"]);
//! assert_eq!(listing.names().collect::<Vec<_>>(), ["Brand", "Features"]);
//! let problem = Problem::MissingRequired { aspect: "Type".into() };
//! assert_eq!(problem.to_string(), r#"error: "Type" is required (aspectRequired) and missing: add it with a value"#);
//! ```

#![no_std]

extern crate alloc;

mod check;
mod listing;
mod pinned;
mod problem;
mod text;
mod value;
mod variations;

pub use check::{ConstraintView, RuleSet, RuleView, Texts, check, limits};
pub use listing::{ListingAspects, ListingError};
pub use pinned::PinnedRules;
#[doc(hidden)]
pub use pinned::{PinnedAspect, PinnedConstraint, TextTable};
pub use problem::{Problem, Severity};
pub use text::{Format, closest, key};
#[doc(hidden)]
pub use value::MacroValue;
pub use value::{Aspects, AspectsError, IntoAspectValues};
pub use variations::{Variations, variation_limits};
