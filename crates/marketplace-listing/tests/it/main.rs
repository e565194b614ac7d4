//! The integration tests of marketplace-listing, one binary: one link, one copy of the shared
//! helpers. Each module is what was a test file of its own;
//! `cargo test -p marketplace-listing --test it MODULE::` runs one module's tests.

#[path = "../../../../tests/common/inventory.rs"]
mod fake_inventory;

mod cards;
mod check;
mod group;
mod group_publish;
mod publish;
mod stock;
