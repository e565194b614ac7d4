//! # marketplace-toolkit
//!
//! The toolkit behind `taxonomy-data` and `taxonomy-macros`: the snapshot format of a
//! marketplace's category tree, decoding and validation of the service's get-category-tree
//! response, and the code generator that turns snapshots into perfect-hash maps. With the
//! `live` feature (on by default) it also holds the OAuth 2.0 client, the taxonomy API client
//! and the concurrent refresh of the snapshots.
//!
//! See `ARCHITECTURE.md` for the codemap and the data flow.

pub mod atomic;
pub mod build_script;
pub mod clock;
pub mod codegen;
pub mod decode;
pub mod diff;
pub mod encode;
#[cfg(feature = "live")]
pub mod oauth;
pub mod phash;
pub mod pipeline;
#[cfg(feature = "live")]
pub mod refresh;
pub mod site;
pub mod snapshot;
#[cfg(feature = "live")]
pub mod taxonomy;
pub mod tree;

/// The README's examples, compiled and run as doc tests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;
