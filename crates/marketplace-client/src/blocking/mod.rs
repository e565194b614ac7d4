//! The blocking front: the core's requests sent through reqwest's blocking client, token
//! caches behind a mutex and a condition variable, waits with `std::thread::sleep`.
//!
//! Its public types are re-exported from [`crate::api`], [`crate::oauth`] and
//! [`crate::taxonomy`]. Inside a
//! tokio runtime every call moves to a thread of its own ([`transport::off_runtime`]), so
//! nothing panics there; the async front ([`crate::aio`]) is the better fit in a runtime.

pub(crate) mod api;
pub(crate) mod oauth;
pub(crate) mod provider;
pub(crate) mod sleep;
pub(crate) mod taxonomy;
pub(crate) mod transport;
