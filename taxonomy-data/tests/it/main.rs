//! The integration tests of taxonomy-data, one binary: one link, one copy of the shared
//! helpers. Each module is what was a test file of its own;
//! `cargo test -p taxonomy-data --test it MODULE::` runs one module's tests.
//! no_alloc.rs stays a binary of its own: it installs a counting global allocator for the
//! whole process.

mod conditions;
mod determinism;
mod expired;
mod search;
mod serde;
mod tables;
