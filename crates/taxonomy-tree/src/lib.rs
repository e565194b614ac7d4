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

/// FNV-1a's starting value (64 bits).
const FNV1A_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a, 64 bits: a stable hash of bytes (not a defence against tampering), for the
/// fingerprints of snapshots and trees (the generated code, the build cache, the expired-category
/// file's `treeFingerprint`).
///
/// ```
/// assert_eq!(taxonomy_tree::fnv1a(b""), 0xcbf2_9ce4_8422_2325);
/// assert_eq!(taxonomy_tree::fnv1a(b"ab"), taxonomy_tree::fnv1a_continue(taxonomy_tree::fnv1a(b"a"), b"b"));
/// ```
pub fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_continue(FNV1A_OFFSET, bytes)
}

/// FNV-1a of `bytes` continued from the hash `h` of what came before them.
pub fn fnv1a_continue(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}
