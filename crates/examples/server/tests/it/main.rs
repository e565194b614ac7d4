//! The integration tests of taxonomy-example-server, one binary: one link, one copy of the shared
//! helpers. Each module is what was a test file of its own;
//! `cargo test -p taxonomy-example-server --test it MODULE::` runs one module's tests.

#[path = "../../../../marketplace-client-postgres/tests/support/pg.rs"]
mod pg;

mod consent;
mod notifications;
mod server;
