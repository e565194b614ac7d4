//! The client of eBay's Commerce Taxonomy API (v1): the full category tree of a site
//! (getCategoryTree), category suggestions for a keyword (getCategorySuggestions), one
//! category's subtree (getCategorySubtree), the aspects of a leaf category
//! (getItemAspectsForCategory) and the default tree id of a marketplace
//! (getDefaultCategoryTreeId).
//!
//! [`TaxonomyClient`] is blocking (reqwest), `Send + Sync`, and takes its bearer tokens from
//! any [`AccessTokenSource`](crate::oauth::AccessTokenSource). Its settings live in
//! [`ClientConfig`]; every failure is an [`ApiError`] that carries the service's error
//! body typed ([`ServiceError`](crate::model::ServiceError)).
//!
//! ```no_run
//! use std::sync::Arc;
//! use marketplace_client::oauth::AccessToken;
//! use marketplace_client::Marketplace;
//! use marketplace_client::taxonomy::{TaxonomyClient, ClientConfig, TreePath};
//!
//! # fn main() -> Result<(), marketplace_client::taxonomy::ApiError> {
//! let tokens = Arc::new(AccessToken::new("v^1.1#i^1#…"));
//! let config = ClientConfig::production().with_tree_path(TreePath::Path); // the default
//! let client = TaxonomyClient::new(config, tokens)?;
//! let aspects = client.item_aspects((Marketplace::Us, 9355))?;
//! for aspect in aspects.required() {
//!     println!("{} ({:?}): {:?}", aspect.name, aspect.mode, aspect.value_names().collect::<Vec<_>>());
//! }
//! # Ok(()) }
//! ```
//!
//! The answers are the types of [`crate::model`] (the `taxonomy-model` crate): with the
//! crate's `serde` feature (off by default) they, the service's error body included, implement
//! `serde::Serialize`, each field under the name of the eBay field it holds
//! (`categoryTreeId`, `localizedAspectName`, …), so a backend can pass them on through its
//! own JSON API. No token, secret or configuration serializes.
//!
#![doc = "\n# Guide\n"]
#![doc = include_str!("../../docs/taxonomy.md")]

pub(crate) mod config;
pub(crate) mod download;
mod tree_body;
mod tree_path;

/// The settings of the client (re-exported from the crate root).
pub use crate::ClientConfig;

pub use crate::blocking::taxonomy::TaxonomyClient;
pub(crate) use config::MARKETPLACE_HEADER;
pub use tree_path::TreePath;

/// Everything a taxonomy call can fail with: the [`ApiError`] of the
/// generic request the taxonomy client is built on (same variants, same messages).
pub use crate::api::ApiError;

#[cfg(feature = "trees")]
pub use tree_body::TreeBody;
#[cfg(not(feature = "trees"))]
pub(crate) use tree_body::TreeBody;
