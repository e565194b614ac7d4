//! A listing's aspects (item specifics) checked before it goes out, and what changed between
//! two versions of a marketplace's aspects.
//!
//! The Taxonomy API says what each leaf category expects of a listing's aspects:
//! getItemAspectsForCategory for one category, fetchItemAspects for every leaf of a
//! marketplace in one file. [`AspectRules`] holds one category's rules from either source and
//! [checks](AspectRules::check) a listing ([`ListingAspects`], the `aspects` object the
//! Inventory API takes) against them, reporting every [`Problem`] the service would refuse
//! the listing for (a missing required aspect, two values where one is allowed, a value not
//! in a selection-only list, a value too long or of the wrong format, a value whose control
//! aspect does not allow it) and, as warnings, what it will refuse soon or cannot match.
//!
//! ```
//! use taxonomy_model::ItemAspectsReader;
//! use taxonomy_model::aspects::{AspectRules, ListingAspects, Problem};
//!
//! // One category of a fetchItemAspects file (or a getItemAspectsForCategory answer, `decode::item_aspects`).
//! let file = br#"{"categoryTreeId":"0","categoryAspects":[{"category":{"categoryId":"179"},
//!   "aspects":[{"localizedAspectName":"Brand","aspectConstraint":{"aspectRequired":true,
//!     "itemToAspectCardinality":"SINGLE","aspectMode":"FREE_TEXT"}},
//!   {"localizedAspectName":"Type","aspectConstraint":{"aspectMode":"SELECTION_ONLY"},
//!     "aspectValues":[{"localizedValue":"Desktop"},{"localizedValue":"All-in-One"}]}]}]}"#;
//! let entry = ItemAspectsReader::new(&file[..]).next().unwrap().unwrap();
//! let rules = AspectRules::from(&entry);
//!
//! let listing = ListingAspects::from_json(br#"{"Type": ["Desktops"]}"#).unwrap();
//! let problems = rules.check(&listing);
//! // The listing's aspects first, then what it lacks.
//! assert!(matches!(&problems[0], Problem::NotAllowed { suggestion: Some(s), .. } if s == "Desktop"));
//! assert!(matches!(&problems[1], Problem::MissingRequired { aspect } if aspect == "Brand"));
//! println!("{}", problems[0]); // "Type" = "Desktops" is not an allowed value …
//! ```

mod diff;
mod rules;

pub use diff::{AspectChange, AspectsDiff, CategoryChange, ConstraintChange};
pub use rules::AspectRules;
/// The check's listing and problems are those of the `taxonomy-aspects` crate (the one
/// implementation of the check, which `taxonomy-data` runs over compiled-in rules), re-exported.
pub use taxonomy_aspects::{ListingAspects, ListingError, Problem, Severity, limits};
