//! The integration tests of marketplace-notifications, one binary: one link, one copy of the shared
//! helpers. Each module is what was a test file of its own;
//! `cargo test -p marketplace-notifications --test it MODULE::` runs one module's tests.
//! blocking.rs stays a binary of its own: it counts its process's threads in
//! /proc/self/task, which other modules' tests running beside it would change.

#[cfg(feature = "axum")]
#[path = "../../../../tests/contract/openapi.rs"]
#[allow(dead_code)]
mod openapi;
#[cfg(feature = "postgres")]
#[path = "../../../marketplace-client-postgres/tests/support/pg.rs"]
mod pg;

mod deletion;
#[cfg(feature = "axum")]
mod endpoint;
#[cfg(feature = "axum")]
mod order_confirmation;
#[cfg(feature = "postgres")]
mod postgres;
mod verify;
