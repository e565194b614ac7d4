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
//!
//! # Quick start
//!
//! A getCategoryTree answer, decoded into a validated tree and rendered as a snapshot:
//!
//! ```
//! use taxonomy_tree::decode::{Provenance, decode_tree};
//!
//! let answer = br#"{
//!   "categoryTreeId": "0", "categoryTreeVersion": "130", "applicableMarketplaceIds": ["EBAY_US"],
//!   "rootCategoryNode": {
//!     "category": {"categoryId": "0", "categoryName": "Root"}, "categoryTreeNodeLevel": 0,
//!     "childCategoryTreeNodes": [{
//!       "category": {"categoryId": "15032", "categoryName": "Cell Phones & Accessories"},
//!       "categoryTreeNodeLevel": 1,
//!       "childCategoryTreeNodes": [{
//!         "category": {"categoryId": "9355", "categoryName": "Cell Phones & Smartphones"},
//!         "categoryTreeNodeLevel": 2, "leafCategoryTreeNode": true
//!       }]
//!     }]
//!   }
//! }"#;
//! let provenance = Provenance {
//!     language: "en-US".into(),
//!     taken_at: "2026-11-25".into(),
//!     source: "an example".into(),
//!     note: None,
//! };
//! let tree = decode_tree(answer, &provenance)?;
//! assert_eq!((tree.len(), tree.leaf_count()), (2, 1));
//! assert_eq!(tree.get(9355).map(|c| c.name.as_str()), Some("Cell Phones & Smartphones"));
//!
//! // The committed form: one category per line, read back to the same tree.
//! let text = taxonomy_tree::snapshot::to_string(&tree);
//! assert_eq!(taxonomy_tree::snapshot::parse(&text, "EBAY_US.json".as_ref())?, tree);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod atomic;
mod beside;
pub mod bounded;
pub mod clock;
pub mod conditions;
pub mod decode;
pub mod diff;
pub mod encode;
pub mod expired;
pub mod pipeline;
pub mod snapshot;
pub mod structure;
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
