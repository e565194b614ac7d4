//! A generic authenticated request to any of the service's REST APIs (Inventory, Account,
//! Fulfillment, Taxonomy, …): method, path, query, JSON body, marketplace and language
//! headers, sent with the clients' token renewal on 401, retries with back-off, bounded
//! body reads, sanitized errors and tracing.
//!
//! * [`ApiRequest`]: what to send (a builder; the path below the client's base URL, user
//!   values as percent-encoded segments);
//! * [`ApiClient`]: the blocking client that sends it with the bearer token of an
//!   [`AccessTokenSource`](crate::oauth::AccessTokenSource) (`ApiClient::send`);
//! * [`ApiResponse`]: a 2xx answer (status, headers, body, typed JSON);
//! * [`ApiError`]: every failure, with the service's error body typed ([`ServiceError`](crate::model::ServiceError)).
//!   The taxonomy client is one user of this request: its errors are
//!   this [`ApiError`] (re-exported as `taxonomy::ApiError`).
//!
//! A call sends `Authorization: Bearer …` from the token source; a 401 makes the client
//! invalidate the token, take a new one and try once more; 429, 5xx, connection failures and
//! cut-off bodies are retried up to [`ClientConfig::max_retries`] times (`Retry-After` honoured,
//! else exponential back-off with full jitter). The token never appears in an error.
//!
//! With the feature `signing`, `ApiClient::with_signing_key` signs every request with eBay's
//! digital signature, which some calls need for sellers in the EU and the UK (the Finances
//! API, issueRefund, …): see the `signing` module. A missing or refused signature is
//! [`ApiError::Signature`].
//!
//! An Inventory call with a user token (from the consent flow or a refresh-token store; here
//! a token at hand):
//!
//! ```no_run
//! use std::sync::Arc;
//! use marketplace_client::Marketplace;
//! use marketplace_client::api::{ApiClient, ClientConfig, ApiError, ApiRequest};
//! use marketplace_client::oauth::AccessToken;
//!
//! # fn main() -> Result<(), ApiError> {
//! let tokens = Arc::new(AccessToken::new("v^1.1#i^1#…"));
//! let client = ApiClient::new(ClientConfig::production(), tokens)?;
//! let sku = "SHOE 42/blue"; // one path segment, whatever it holds
//! let item = serde_json::json!({
//!     "availability": {"shipToLocationAvailability": {"quantity": 5}},
//!     "condition": "NEW",
//!     "product": {"title": "Running shoe", "aspects": {"Brand": ["Acme"]}}
//! });
//! let response = client.send(
//!     ApiRequest::put_segments(["sell", "inventory", "v1", "inventory_item", sku])
//!         .marketplace(Marketplace::Us) // X-EBAY-C-MARKETPLACE-ID, Accept-Language: en-US
//!         .content_language("en-US")
//!         .json(&item)
//!         .operation("createOrReplaceInventoryItem"),
//! )?;
//! assert!(response.is_empty()); // 204 No Content
//!
//! let page = client.send(
//!     ApiRequest::get("/sell/inventory/v1/inventory_item")
//!         .query("limit", "25")
//!         .marketplace(Marketplace::Us),
//! )?;
//! let list: serde_json::Value = page.json()?;
//! println!("{} items", list["total"]);
//! # Ok(()) }
//! ```
//!
//! The async front will offer the same names.

pub(crate) mod error;
mod request;

/// The settings of the client (re-exported from the crate root).
pub use crate::ClientConfig;
pub use crate::blocking::api::ApiClient;
pub use error::ApiError;
pub use request::{ApiRequest, ApiResponse};
