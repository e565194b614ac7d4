//! The integration tests of marketplace-client, one binary: one link, one copy of the shared
//! helpers. Each module is what was a test file of its own;
//! `cargo test -p marketplace-client --test it MODULE::` runs one module's tests.

#[path = "../../../../tests/contract/openapi.rs"]
#[allow(dead_code)]
mod openapi;

mod budget;
mod layers;
