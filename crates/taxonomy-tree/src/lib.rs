//! # taxonomy-tree
//!
//! The category-tree model and the snapshot format: everything the toolkit knows about a
//! tree without talking to the service or generating code.
//!
//! - [`tree`]: [`tree::CategoryTree`] (flat, sorted by id) and its validation, one rule each;
//! - [`decode`]: the getCategoryTree answer, read into a validated tree; [`encode`] the reverse;
//! - [`snapshot`]: the committed snapshot files, one category per line;
//! - [`expired`]: the expired-category mapping committed beside each snapshot;
//! - [`diff`]: what changed between two trees;
//! - [`pipeline`]: prepare a snapshot (decode, validate, diff), then commit every file at once;
//! - [`atomic`]: the writes behind every commit (temp file, fsync, rename);
//! - [`clock`]: today's date, for a snapshot's provenance.
//!
//! See the repository's `ARCHITECTURE.md` for where this crate sits.

pub mod atomic;
pub mod clock;
pub mod decode;
pub mod diff;
pub mod encode;
pub mod expired;
pub mod pipeline;
pub mod snapshot;
pub mod tree;
