//! The integration tests of taxonomy-model, one binary: one link, one copy of the shared
//! helpers. Each module is what was a test file of its own;
//! `cargo test -p taxonomy-model --test it MODULE::` runs one module's tests.

mod bounded;
mod decode;
mod reader;
