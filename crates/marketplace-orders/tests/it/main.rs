//! The integration tests of marketplace-orders, one binary: one link, one copy of the shared
//! helpers. Each module is what was a test file of its own;
//! `cargo test -p marketplace-orders --test it MODULE::` runs one module's tests.

#[path = "../../../../tests/common/inventory.rs"]
mod fake_inventory;

mod hostile_pages;
mod orders;
mod refund;
mod refund_keys;
mod ship;
