//! # taxonomy-model
//!
//! The answers of eBay's Commerce Taxonomy API (v1) as Rust types, without HTTP: what
//! getItemAspectsForCategory, getCategorySuggestions, getDefaultCategoryTreeId,
//! getExpiredCategories, getCompatibilityProperties and getCompatibilityPropertyValues answer
//! ([`ItemAspects`], [`CategorySuggestions`], …, the schemas of eBay's OpenAPI description of
//! the Taxonomy API, every documented field kept), their decoding from JSON ([`decode`]), the
//! reader of fetchItemAspects files ([`ItemAspectsReader`]: every leaf category's aspects of a
//! marketplace, one gzipped file), and a listing's aspects checked against a category's rules
//! before it goes out ([`aspects`]).
//!
//! A listing service can check listings against a fetchItemAspects file, or read a stored
//! answer, with this crate alone: it compiles no HTTP client, TLS or async runtime.
//! `marketplace-client`, the client that calls the Taxonomy API, returns these types and
//! re-exports this crate as `marketplace_client::model`.
//!
//! The Sell Metadata API's getItemConditionPolicies answer (the item conditions each category
//! takes: [`ItemConditionPolicyResponse`]) is here too, decoded by
//! [`decode::item_condition_policies`], and its getListingStructurePolicies answer (whether
//! each category takes listings with variations: [`ListingStructurePolicyResponse`]),
//! decoded by [`decode::listing_structure_policies`].
//!
//! getCategoryTree and getCategorySubtree answer category trees, which the `taxonomy-tree`
//! crate models and decodes ([`CategorySubtree`] is re-exported here). A failed call of any
//! eBay REST API answers an error body: [`ServiceError`].
//!
//! # Quick start
//!
//! The rules of a category from a fetchItemAspects file (here a tiny one, in memory), and a
//! listing checked against them:
//!
//! ```
//! use taxonomy_model::ItemAspectsReader;
//! use taxonomy_model::aspects::{AspectRules, ListingAspects, Problem, Severity};
//!
//! // `ItemAspectsReader::open(path)` reads a downloaded (gzipped) file.
//! let file = br#"{"categoryTreeId":"0","categoryTreeVersion":"134","categoryAspects":[
//!   {"category":{"categoryId":"9355","categoryName":"Cell Phones & Smartphones"},
//!    "aspects":[{"localizedAspectName":"Brand","aspectConstraint":{"aspectRequired":true,
//!      "itemToAspectCardinality":"SINGLE","aspectMode":"FREE_TEXT"}},
//!     {"localizedAspectName":"Storage Capacity","aspectConstraint":{"aspectMode":"SELECTION_ONLY"},
//!      "aspectValues":[{"localizedValue":"128 GB"},{"localizedValue":"256 GB"}]}]}]}"#;
//! let mut reader = ItemAspectsReader::new(&file[..]);
//! let entry = reader.next().unwrap()?;
//! assert_eq!(reader.tree_version(), Some("134"));
//! let rules = AspectRules::from(&entry);
//!
//! // The `aspects` object of the Inventory API's inventory item.
//! let listing = ListingAspects::from_json(br#"{"Storage Capacity": ["128GB"]}"#)?;
//! let problems = rules.check(&listing);
//! for problem in &problems {
//!     println!("{problem}"); // "Storage Capacity" = "128GB" is not an allowed value …
//! }
//! assert!(matches!(&problems[0], Problem::NotAllowed { suggestion: Some(s), .. } if s == "128 GB"));
//! assert!(matches!(&problems[1], Problem::MissingRequired { aspect } if aspect == "Brand"));
//! assert!(problems.iter().all(|p| p.severity() == Severity::Error));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The same rules from a getItemAspectsForCategory answer:
//! `AspectRules::from(&decode::item_aspects(9355, &body)?)`.
//!
//! # Features
//!
//! `serde` (off by default): the answers implement `serde::Serialize`, each field under the
//! name of the eBay field it holds (`categoryTreeId`, `localizedAspectName`, …), so a backend
//! can pass them on through its own JSON API. The shape is this crate's: ids are JSON
//! numbers, an aspect's `aspectConstraint` fields sit on the aspect itself, and a field the
//! answer left out is `null` (or `[]`, or `false` for the flags).

#[macro_use]
mod answers;
pub mod aspects;
mod conditions;
pub mod decode;
mod file;
mod service_error;
mod structure;

pub use answers::{
    Ancestor, Aspect, AspectAdvancedDataType, AspectApplicableTo, AspectCardinality,
    AspectDataType, AspectMode, AspectUsage, AspectValue, CategoryAspects, CategoryRef,
    CategorySuggestion, CategorySuggestions, CompatibilityProperties, CompatibilityProperty,
    CompatibilityPropertyValues, DefaultTreeId, ExpiredCategories, ExpiredCategory, ItemAspects,
    RelevanceIndicator, ValueConstraint,
};
pub use conditions::{
    ConditionUsage, DescriptorCardinality, DescriptorMode, DescriptorUsage, ItemCondition,
    ItemConditionDescriptor, ItemConditionDescriptorConstraint, ItemConditionDescriptorValue,
    ItemConditionDescriptorValueConstraint, ItemConditionPolicy, ItemConditionPolicyResponse,
};
pub use file::{AspectsFileError, ItemAspectsFile, ItemAspectsReader};
pub use service_error::{ErrorParameter, ServiceError};
pub use structure::{ListingStructurePolicy, ListingStructurePolicyResponse};

/// One category and everything below it: a getCategorySubtree answer (the `taxonomy-tree`
/// crate's, which decodes category trees).
pub use taxonomy_tree::decode::CategorySubtree;
