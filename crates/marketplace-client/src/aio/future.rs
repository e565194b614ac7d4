//! What the async traits return (`aio::oauth`'s and `aio::store`'s), below both.

use std::future::Future;
use std::pin::Pin;

/// A boxed future that can be sent between threads: what the traits of this module return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;
