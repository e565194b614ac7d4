//! # marketplace-client
//!
//! Clients of the marketplace's Open API (eBay's Sell/Commerce APIs are the public instance):
//!
//! - [`oauth`]: OAuth 2.0 application and user tokens: configuration, the token endpoint,
//!   cached providers, the consent flow, refresh-token stores;
//! - [`taxonomy`]: the Taxonomy API (getCategoryTree, getCategorySuggestions, …), typed
//!   answers and errors, token renewal and back-off;
//! - [`aspects`]: a listing's aspects checked against a category's rules before it goes out,
//!   and what changed between two fetchItemAspects files;
//! - [`refresh`]: several sites' trees fetched concurrently and prepared as snapshots (the
//!   `snapshot refresh` command and the build-time download use it).
//!
//! See the repository's `ARCHITECTURE.md` for where this crate sits.

pub mod aspects;
mod http;
pub mod oauth;
pub mod refresh;
pub mod taxonomy;
