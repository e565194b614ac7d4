//! The integration tests of fake-marketplace, one binary: one link, one copy of the shared
//! helpers. Each module is what was a test file of its own;
//! `cargo test -p fake-marketplace --test it MODULE::` runs one module's tests.

mod buy_cli;
mod notify_cli;
mod verbose_cli;
