//! The integration tests of marketplace-client-postgres, one binary: one link, one copy of the shared
//! helpers. Each module is what was a test file of its own;
//! `cargo test -p marketplace-client-postgres --test it MODULE::` runs one module's tests.
//! fleet.rs stays a binary of its own (`harness = false`): it starts itself as the
//! fleet's worker processes.

#[path = "../support/mod.rs"]
#[allow(dead_code)]
mod support;

mod pending_consents;
mod postgres;
mod settings;
#[cfg(feature = "signing")]
mod signing_keys;
