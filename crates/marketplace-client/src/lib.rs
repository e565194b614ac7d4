//! # marketplace-client
//!
//! Clients of the marketplace's Open API (eBay's Sell/Commerce APIs are the public instance):
//!
//! - [`oauth`]: OAuth 2.0 application and user tokens: configuration, the token endpoint,
//!   cached providers, the consent flow, refresh-token stores;
//! - [`api`]: a generic authenticated request to any of the service's REST APIs (Inventory,
//!   Account, Fulfillment, …) with the same token renewal, retries and errors;
//! - [`taxonomy`]: the Taxonomy API (getCategoryTree, getCategorySuggestions, …), typed
//!   answers and errors, token renewal and back-off;
//! - [`aspects`]: a listing's aspects checked against a category's rules before it goes out,
//!   and what changed between two fetchItemAspects files;
//! - [`refresh`]: several sites' trees fetched concurrently and prepared as snapshots (the
//!   `snapshot refresh` command and the build-time download use it).
//!
//! Every call that addresses a marketplace takes a [`Marketplace`], re-exported here from the
//! `marketplaces` crate (so a project needs no dependency of its own on it).
//!
//! See the repository's `ARCHITECTURE.md` for where this crate sits.

/// A marketplace (eBay site): its id (`EBAY_US`), default category tree, language and name,
/// from the one table of every marketplace (the `marketplaces` crate, re-exported).
///
/// ```
/// use marketplace_client::Marketplace;
/// let de: Marketplace = "EBAY_DE".parse().unwrap();
/// assert_eq!((de.tree_id(), de.default_language()), (77, "de-DE"));
/// ```
pub use marketplaces::Marketplace;

pub mod aio;
pub mod api;
pub mod aspects;
mod blocking;
mod core;
pub mod oauth;
mod options;
pub mod refresh;
pub mod taxonomy;

pub use options::HttpOptions;
