//! # marketplace-toolkit
//!
//! The repository's root package: it holds the `snapshot` and `consent` commands, the
//! committed `snapshots/`, taxonomy-data's top-level `build.rs`, and the integration tests.
//! The library code lives in the crates under `crates/` (see `ARCHITECTURE.md`); this
//! library holds what both commands share ([`token_store`]) and compiles the README's
//! examples as doc tests.

pub mod token_store;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
