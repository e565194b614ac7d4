//! The async front (tokio): the same clients as [`crate::oauth`] and [`crate::taxonomy`],
//! with `async fn` where those do I/O.

pub mod api;
mod future;
pub mod oauth;
pub(crate) mod store;
pub mod taxonomy;
mod transport;
