//! The sans-IO core: every decision of the clients, on the `http` crate's types, and no I/O.
//!
//! * [`token`]: the token endpoint's requests (each grant's form and headers) and answers;
//! * [`api`]: one authenticated request to any REST API of the service and its answer;
//! * [`answer`]: a successful answer read (as JSON, decoded), errors about it sanitized;
//! * [`taxonomy`]: the Taxonomy API's operations (request and decoding of each);
//! * [`exchange`]: what a front hands back (an answer or a failure) and the one bounded
//!   reading of a body;
//! * [`retry`]: after a failed attempt, renew the token, wait and retry, or give up;
//! * [`cache`]: the token cache's state machine (renewal, single flight, back-off);
//! * [`user`]: the user-token provider's decisions (consent, revocation, rotation);
//! * [`trace`]: the spans and events, without secrets;
//! * `signing` (feature `signing`): eBay's request signatures (key, base, headers);
//!   [`signer`]: the hook that signs each attempt.
//!
//! The fronts ([`crate::blocking`] and [`crate::aio`]) send bytes, read bytes and sleep;
//! they share nothing but their calls into this module.

pub(crate) mod answer;
pub(crate) mod api;
pub(crate) mod cache;
pub(crate) mod exchange;
pub(crate) mod retry;
pub(crate) mod signer;
#[cfg(feature = "signing")]
pub(crate) mod signing;
pub(crate) mod taxonomy;
pub(crate) mod token;
pub(crate) mod trace;
pub(crate) mod user;
