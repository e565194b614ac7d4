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
//! - [`model`]: the Taxonomy API's answers as types (`ItemAspects`, `CategorySuggestions`,
//!   …), the fetchItemAspects file reader, and a listing's aspects checked against a
//!   category's rules before it goes out ([`model::aspects`]): the `taxonomy-model` crate,
//!   which needs no HTTP;
//!
//! Two features add what applications do not call: `trees` (several sites' trees fetched
//! concurrently and prepared as snapshots, for the `snapshot refresh` command and the
//! build-time download) and `test-util` (a recording sleeper, a manual clock and the consent
//! flow's parts, for tests). The feature `signing` adds `signing`: eBay's request signatures,
//! which some calls need for sellers in the EU and the UK (`ApiClient::with_signing_key`).
//!
//! Every call that addresses a marketplace takes a [`Marketplace`] (or anything that converts
//! into one, such as `taxonomy-data`'s `Site`), and every call that addresses a category a
//! [`MarketplaceCategory`] (`taxonomy-data`'s `LeafCategory`, or a `(Marketplace, u32)`
//! pair); both are re-exported here from the `marketplaces` crate (so a project needs no
//! dependency of its own on it).
//!
//! # Quick start
//!
//! An application token and a call of the Taxonomy API. With eBay's keys in
//! `MARKETPLACE_CLIENT_ID` and `MARKETPLACE_CLIENT_SECRET`, the first two lines are
//! `ApplicationTokenProvider::from_env()?` and `ClientConfig::production()`; this example
//! runs against the repository's fake marketplace on loopback instead, so that it runs
//! anywhere:
//!
//! ```
//! use std::sync::Arc;
//! use marketplace_client::Marketplace;
//! use marketplace_client::oauth::{ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig};
//! use marketplace_client::taxonomy::{TaxonomyClient, ClientConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let fake = fake_marketplace::FakeMarketplace::new();
//! # let base_url = fake.base_url();
//! # let (app_id, cert_id) = (fake.client_id(), fake.client_secret());
//! let endpoints = Endpoints::custom(&base_url, &base_url)?; // Endpoints::production() on eBay
//! let config = OAuthConfig::new(endpoints.clone()).with_credentials(app_id, cert_id);
//! let client = OAuthClient::from_config(&config)?;
//! let tokens = Arc::new(ApplicationTokenProvider::new(client)); // one request per expiry
//! let taxonomy = TaxonomyClient::new(ClientConfig::from_endpoints(&endpoints), tokens)?;
//!
//! let answer = taxonomy.category_suggestions(Marketplace::Us, "iphone 15")?;
//! let best = &answer.suggestions[0].category;
//! assert_eq!((best.id, best.name.as_str()), (9355, "Cell Phones & Smartphones"));
//! # Ok(()) }
//! ```
//!
//! The same in an async program: `marketplace_client::aio::{oauth, taxonomy}`, the same names
//! with `.await`. A fleet of processes shares its tokens through `marketplace-client-postgres`
//! ([`oauth::SharedTokenCache`]).
//!
//! See the repository's `ARCHITECTURE.md` for where this crate sits.
//!
//! # Tracing
//!
//! The clients report through the [`tracing`](https://docs.rs/tracing) crate; install any
//! subscriber to see it (the `snapshot` and `consent` commands do with `-v` or `RUST_LOG`).
//!
//! * Target `marketplace_client::http`: one span `http` (level info) per HTTP attempt, with
//!   `operation` (the service's name, e.g. `getCategoryTree`, or `token` for the token
//!   endpoint), `method`, `url` (no user information; tokens never travel in a URL),
//!   `marketplace`, `attempt` (1 for the first), and once answered `status`, `elapsed_ms`,
//!   `error_ids` (the service's `errorId`s, comma-separated) and `retry_after_s`. A token
//!   request adds `grant` and `scopes`, and its success `expires_in_s`. Each answer is also a
//!   debug event `answered` in the span (`status`, `elapsed_ms`, `error_ids`,
//!   `retry_after_s`), so a plain `tracing_subscriber::fmt()` with
//!   `with_env_filter("marketplace_client=debug")` prints one line per answer, the span's
//!   fields first; no span events are needed. An attempt without an answer records
//!   `elapsed_ms` and a debug event `no answer` with the transport's error.
//! * Target `marketplace_client::token`: a span `token` (level debug) around each call of a
//!   token provider, with `grant` and `scopes`, and in it the events `cache hit` (trace: the
//!   in-process cache), `single-flight wait` (another caller is fetching), `shared cache
//!   lookup` (a provider with a shared cache asks it for the fleet's token), `token request`
//!   (the first) or `token renewal` (with `reason`: `renewal due`, `expired`, `invalidated`
//!   after a 401, `after failure`), said only when this process asks the token endpoint, then
//!   `token received` (`expires_in_s`) or, when another process had asked, `token read from
//!   the shared cache`; `token request failed` (warn, with the sanitized error and the
//!   back-off), `token invalidated` and `token installed (new consent)`.
//!
//! No span or event holds a token, an authorization code, a client secret, a refresh token or
//! an `Authorization` header: every value is built from what is known to be free of them, and
//! error texts pass the same sanitizer as the errors. The repository's `tests/it/tracing.rs`
//! checks it at TRACE over the whole flow.

/// A marketplace (eBay site): its id (`EBAY_US`), default category tree, language and name,
/// from the one table of every marketplace (the `marketplaces` crate, re-exported).
///
/// ```
/// use marketplace_client::Marketplace;
/// let de: Marketplace = "EBAY_DE".parse().unwrap();
/// assert_eq!((de.tree_id(), de.default_language()), (77, "de-DE"));
/// ```
pub use marketplaces::Marketplace;

/// A category of a marketplace, as the calls that take a category (getItemAspectsForCategory,
/// getCategorySubtree, getCompatibilityProperties, getCompatibilityPropertyValues) take it:
/// `taxonomy-data`'s checked `LeafCategory` (what `category!` produces) or `Category`, or a
/// `(Marketplace, u32)` pair for an id known only at run time. Re-exported from the
/// `marketplaces` crate.
///
/// ```no_run
/// use marketplace_client::Marketplace;
/// use marketplace_client::taxonomy::TaxonomyClient;
/// # fn main() -> Result<(), marketplace_client::taxonomy::ApiError> {
/// let client = TaxonomyClient::from_env()?;
/// // With taxonomy-data: `client.item_aspects(category!(EBAY_US, "9355"))?`.
/// let aspects = client.item_aspects((Marketplace::Us, 9355))?;
/// # let _ = aspects; Ok(()) }
/// ```
pub use marketplaces::MarketplaceCategory;

pub mod aio;
pub mod api;
mod blocking;
mod config;
mod core;
pub mod oauth;
mod options;
#[cfg(feature = "signing")]
pub mod signing;
pub mod taxonomy;
#[cfg(feature = "test-util")]
pub mod test_util;
#[cfg(feature = "trees")]
pub mod trees;

pub use config::ClientConfig;
pub use options::HttpOptions;

/// The Taxonomy API's answers (what the clients' calls return: [`ItemAspects`],
/// [`CategorySuggestions`], …), their decoding from JSON, the fetchItemAspects file reader
/// ([`ItemAspectsReader`]) and a listing's aspects check ([`aspects`]): the `taxonomy-model`
/// crate, re-exported whole, so a project needs no dependency of its own on it. A service
/// that only checks listings or reads stored answers can depend on `taxonomy-model` alone,
/// without HTTP.
///
/// [`ItemAspects`]: taxonomy_model::ItemAspects
/// [`CategorySuggestions`]: taxonomy_model::CategorySuggestions
/// [`ItemAspectsReader`]: taxonomy_model::ItemAspectsReader
/// [`aspects`]: taxonomy_model::aspects
pub use taxonomy_model as model;
