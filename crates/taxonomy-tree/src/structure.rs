//! A site's listing-structure policies (the Metadata API's getListingStructurePolicies:
//! whether each leaf category takes listings with item variations, `variationsSupported`),
//! committed beside its snapshot: `snapshots/EBAY_US.structure.json` next to
//! `snapshots/EBAY_US.json`.
//!
//! The answer gives one flag a category; the file keeps the leaves in two sorted lists, those
//! that take variations and those that do not, so a refresh reads as a diff of ids:
//!
//! ```text
//! {
//!   "format": 1,
//!   "categoryTreeId": 0,
//!   "marketplaceId": "EBAY_US",
//!   "categoryTreeVersion": "134",
//!   "source": "https://api.ebay.com/sell/metadata/v1/marketplace/EBAY_US/get_listing_structure_policies",
//!   "madeUp": false,
//!   "categoryCount": 3,
//!   "variationsSupported": [15687,57990],
//!   "variationsNotSupported": [88433],
//!   "treeFingerprint": "5f0e4b1c9a2d7e63"
//! }
//! ```
//!
//! `madeUp` is true when the answer was marked as made up (the toolkit's fake marketplace marks
//! its answers so): such a file must never be committed as the marketplace's policies. The
//! header ties the file to its tree as the condition-policy file's does (tree id, version,
//! fingerprint: see [`crate::conditions`]); a file out of step with its tree is refused by
//! [`read_in_step`].
//!
//! ## The rules, checked against the site's tree
//!
//! - every id of either list is a leaf of the tree, and appears once in the file;
//! - each list is sorted.
//!
//! A leaf the file does not name has no known policy (the answer did not include it, or left
//! its `variationsSupported` out). The file holds at most one id a leaf of the tree, so it
//! needs no bound of its own.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use crate::expired::fingerprint;
use crate::tree::CategoryTree;

/// The format number written in every listing-structure file.
pub const FORMAT: u32 = 1;

/// The contents of a listing-structure file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructureFile {
    /// The category tree id; the same as the snapshot's.
    pub tree_id: u32,
    /// The marketplace id, e.g. `EBAY_US`.
    pub marketplace_id: String,
    /// The `categoryTreeVersion` of the tree the policies were checked against.
    pub version: String,
    /// The fingerprint of that tree (as the expired-category file's).
    pub tree_fingerprint: u64,
    /// Where the policies were taken from (the getListingStructurePolicies URL).
    pub source: String,
    /// Whether the answer was marked as made up (the toolkit's fake marketplace's).
    pub made_up: bool,
    /// The leaves that take variations (`variationsSupported: true`), sorted.
    pub supported: Vec<u32>,
    /// The leaves that do not (`variationsSupported: false`), sorted.
    pub not_supported: Vec<u32>,
}

impl StructureFile {
    /// Whether leaf `id` takes listings with variations; `None` when the file does not name it.
    pub fn variations_supported(&self, id: u32) -> Option<bool> {
        if self.supported.binary_search(&id).is_ok() {
            Some(true)
        } else if self.not_supported.binary_search(&id).is_ok() {
            Some(false)
        } else {
            None
        }
    }

    /// The number of leaves the file names.
    pub fn category_count(&self) -> usize {
        self.supported.len() + self.not_supported.len()
    }
}

/// A broken rule of the file (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StructureRule {
    /// The file is another tree's or another marketplace's.
    #[error(
        "the policies are for {found}, but the snapshot is {expected} (rule: the file beside a snapshot is that snapshot's site's)"
    )]
    WrongTree {
        /// The snapshot's tree id and marketplace.
        expected: String,
        /// The file's.
        found: String,
    },
    /// An id is not a leaf of the tree.
    #[error("category {id} is not a leaf of the tree (rule: a policy is a leaf's)")]
    NotALeaf {
        /// The id.
        id: u32,
    },
    /// An id appears twice (in one list or in both).
    #[error("category {id} appears twice (rule: one policy a leaf)")]
    Duplicate {
        /// The id.
        id: u32,
    },
    /// A list is not sorted.
    #[error("{list} is not sorted: {id} follows a larger id (rule: each list is sorted)")]
    Unsorted {
        /// `variationsSupported` or `variationsNotSupported`.
        list: &'static str,
        /// The first id out of order.
        id: u32,
    },
}

/// Why a listing-structure file cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StructureError {
    /// The file could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: Arc<std::io::Error>,
    },
    /// The file is not a listing-structure file (bad JSON, missing fields, wrong format).
    #[error("{path}: not a valid listing-structure file: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// What the parser said, with line and column.
        message: String,
    },
    /// The file breaks a rule.
    #[error("{path}: {rule}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The broken rule.
        rule: StructureRule,
    },
    /// The file was written for another tree than the snapshot beside it.
    #[error("{path}: out of step with its snapshot: {reason}")]
    OutOfStep {
        /// The file.
        path: PathBuf,
        /// How they differ.
        reason: String,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FileHeader {
    format: u32,
    category_tree_id: u32,
    marketplace_id: String,
    category_tree_version: String,
    source: String,
    made_up: bool,
    category_count: usize,
    variations_supported: Vec<u32>,
    variations_not_supported: Vec<u32>,
    tree_fingerprint: String,
}

/// The listing-structure file beside a snapshot: `EBAY_US.json` → `EBAY_US.structure.json`.
///
/// ```
/// use std::path::Path;
/// let p = taxonomy_tree::structure::path_beside(Path::new("snapshots/EBAY_US.json"));
/// assert_eq!(p, Path::new("snapshots/EBAY_US.structure.json"));
/// ```
pub fn path_beside(snapshot_path: &Path) -> PathBuf {
    crate::beside::path_beside(snapshot_path, "structure")
}

/// What [`from_answer`] left out of an answer, for the refresh's summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeftOut {
    /// Categories of the answer that are not in the tree (the tree is older or newer).
    pub not_in_tree: Vec<u32>,
    /// Categories of the answer that are in the tree but not leaves (a filter on a parent
    /// answers for it too).
    pub not_leaves: usize,
}

/// Makes the file for `tree` from an answer's policies, one `(category id,
/// variationsSupported)` a category: keeps leaves of the tree only (the rest is counted in
/// [`LeftOut`]) and checks the rules; `path` names the file in errors. A category answered
/// twice with one flag is kept once; with two flags it is refused
/// ([`StructureRule::Duplicate`]). The same answer gives the same file, whatever its order.
pub fn from_answer(
    policies: impl IntoIterator<Item = (u32, bool)>,
    tree: &CategoryTree,
    source: &str,
    made_up: bool,
    path: &Path,
) -> Result<(StructureFile, LeftOut), StructureError> {
    let mut left_out = LeftOut::default();
    let mut flags: BTreeMap<u32, bool> = BTreeMap::new();
    for (id, supported) in policies {
        match tree.get(id) {
            None => left_out.not_in_tree.push(id),
            Some(c) if !c.leaf || c.id == crate::tree::ROOT_ID => left_out.not_leaves += 1,
            Some(_) => {
                if flags
                    .insert(id, supported)
                    .is_some_and(|was| was != supported)
                {
                    return Err(invalid(path, StructureRule::Duplicate { id }));
                }
            }
        }
    }
    left_out.not_in_tree.sort_unstable();
    left_out.not_in_tree.dedup();
    let file = StructureFile {
        tree_id: tree.meta.tree_id,
        marketplace_id: tree.meta.marketplace_id.clone(),
        version: tree.meta.version.clone(),
        tree_fingerprint: fingerprint(tree),
        source: source.to_string(),
        made_up,
        supported: flags
            .iter()
            .filter(|(_, s)| **s)
            .map(|(id, _)| *id)
            .collect(),
        not_supported: flags
            .iter()
            .filter(|(_, s)| !**s)
            .map(|(id, _)| *id)
            .collect(),
    };
    check(&file, tree).map_err(|rule| invalid(path, rule))?;
    Ok((file, left_out))
}

fn invalid(path: &Path, rule: StructureRule) -> StructureError {
    StructureError::Invalid {
        path: path.to_path_buf(),
        rule,
    }
}

/// Checks `file` against the rules and `tree`.
pub fn check(file: &StructureFile, tree: &CategoryTree) -> Result<(), StructureRule> {
    if file.tree_id != tree.meta.tree_id || file.marketplace_id != tree.meta.marketplace_id {
        return Err(StructureRule::WrongTree {
            expected: format!("{} tree {}", tree.meta.marketplace_id, tree.meta.tree_id),
            found: format!("{} tree {}", file.marketplace_id, file.tree_id),
        });
    }
    for (list, ids) in [
        ("variationsSupported", &file.supported),
        ("variationsNotSupported", &file.not_supported),
    ] {
        for pair in ids.windows(2) {
            if pair[1] == pair[0] {
                return Err(StructureRule::Duplicate { id: pair[1] });
            }
            if pair[1] < pair[0] {
                return Err(StructureRule::Unsorted { list, id: pair[1] });
            }
        }
        for &id in ids.iter() {
            if !tree
                .get(id)
                .is_some_and(|c| c.leaf && c.id != crate::tree::ROOT_ID)
            {
                return Err(StructureRule::NotALeaf { id });
            }
        }
    }
    // Both lists sorted: one in the other is found by a merge walk.
    let (mut a, mut b) = (
        file.supported.iter().peekable(),
        file.not_supported.iter().peekable(),
    );
    while let (Some(&&x), Some(&&y)) = (a.peek(), b.peek()) {
        match x.cmp(&y) {
            std::cmp::Ordering::Less => {
                a.next();
            }
            std::cmp::Ordering::Greater => {
                b.next();
            }
            std::cmp::Ordering::Equal => return Err(StructureRule::Duplicate { id: x }),
        }
    }
    Ok(())
}

/// How `file` and the snapshot's `tree` differ, when the file was written for another tree;
/// `None` when it is in step.
pub fn out_of_step(file: &StructureFile, tree: &CategoryTree) -> Option<String> {
    crate::beside::out_of_step(
        file.tree_id,
        &file.version,
        Some(file.tree_fingerprint),
        tree,
    )
}

/// Renders the file: each list on one line. The same contents always give the same bytes.
pub fn to_string(file: &StructureFile) -> String {
    let q = |s: &str| serde_json::to_string(s).expect("strings always serialize");
    let ids = |ids: &[u32]| serde_json::to_string(ids).expect("ids always serialize");
    let mut out = String::with_capacity(file.category_count() * 8 + 512);
    out.push_str("{\n");
    let _ = writeln!(out, "  \"format\": {FORMAT},");
    let _ = writeln!(out, "  \"categoryTreeId\": {},", file.tree_id);
    let _ = writeln!(out, "  \"marketplaceId\": {},", q(&file.marketplace_id));
    let _ = writeln!(out, "  \"categoryTreeVersion\": {},", q(&file.version));
    let _ = writeln!(out, "  \"source\": {},", q(&file.source));
    let _ = writeln!(out, "  \"madeUp\": {},", file.made_up);
    let _ = writeln!(out, "  \"categoryCount\": {},", file.category_count());
    let _ = writeln!(out, "  \"variationsSupported\": {},", ids(&file.supported));
    let _ = writeln!(
        out,
        "  \"variationsNotSupported\": {},",
        ids(&file.not_supported)
    );
    let _ = write!(
        out,
        "  \"treeFingerprint\": \"{:016x}\"\n}}\n",
        file.tree_fingerprint
    );
    out
}

/// Parses a file held in memory without checking it against a tree; `path` is only used in
/// errors.
pub fn parse_unchecked(text: &str, path: &Path) -> Result<StructureFile, StructureError> {
    let syntax = |message: String| StructureError::Syntax {
        path: path.to_path_buf(),
        message,
    };
    let header: FileHeader = serde_json::from_str(text).map_err(|e| syntax(e.to_string()))?;
    if header.format != FORMAT {
        return Err(syntax(format!(
            "format {} is not supported (this toolkit reads format {FORMAT}); regenerate it with `snapshot refresh` (the toolkit's snapshot command)",
            header.format
        )));
    }
    let hex = &header.tree_fingerprint;
    let tree_fingerprint = crate::beside::parse_fingerprint(hex).ok_or_else(|| {
        syntax(format!(
            "treeFingerprint {hex:?} is not 16 hexadecimal digits"
        ))
    })?;
    let file = StructureFile {
        tree_id: header.category_tree_id,
        marketplace_id: header.marketplace_id,
        version: header.category_tree_version,
        tree_fingerprint,
        source: header.source,
        made_up: header.made_up,
        supported: header.variations_supported,
        not_supported: header.variations_not_supported,
    };
    if header.category_count != file.category_count() {
        return Err(syntax(format!(
            "the header says {} categories, the file has {}",
            header.category_count,
            file.category_count()
        )));
    }
    Ok(file)
}

/// Parses a file held in memory and checks it against `tree`, the tree of the snapshot beside
/// it; `path` is only used in errors.
pub fn parse(
    text: &str,
    path: &Path,
    tree: &CategoryTree,
) -> Result<StructureFile, StructureError> {
    let file = parse_unchecked(text, path)?;
    check(&file, tree).map_err(|rule| invalid(path, rule))?;
    Ok(file)
}

/// Reads the file beside the snapshot at `snapshot_path`, whose tree is `tree`, and checks
/// it. `Ok(None)` when there is no file: the site's policies are not known. A file written for
/// another tree is [`StructureError::OutOfStep`], whatever its policies.
pub fn read_in_step(
    snapshot_path: &Path,
    tree: &CategoryTree,
) -> Result<Option<StructureFile>, StructureError> {
    let path = path_beside(snapshot_path);
    let text = match crate::beside::read_if_present(&path) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(e) => {
            return Err(StructureError::Io {
                path,
                source: Arc::new(e),
            });
        }
    };
    let file = parse_unchecked(&text, &path)?;
    if let Some(reason) = out_of_step(&file, tree) {
        return Err(StructureError::OutOfStep { path, reason });
    }
    check(&file, tree).map_err(|rule| invalid(&path, rule))?;
    Ok(Some(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Root 0 > 1 (not a leaf) > 2, 3, 4 (leaves).
    fn tree() -> CategoryTree {
        crate::beside::test_tree(&[2, 3, 4])
    }

    #[test]
    fn a_structure_answer_keeps_its_leaves_in_two_sorted_lists_and_reads_back() {
        let t = tree();
        let answer = vec![
            (4, true),
            (2, true),
            (3, false),
            (1, true),
            (99, false),
            (2, true),
        ];
        let path = Path::new("EBAY_US.structure.json");
        let (file, left_out) = from_answer(answer, &t, "src", true, path).unwrap();
        assert_eq!(
            (file.supported.as_slice(), file.not_supported.as_slice()),
            (&[2, 4][..], &[3][..])
        );
        assert_eq!(left_out.not_in_tree, [99]);
        assert_eq!(left_out.not_leaves, 1);
        assert_eq!(file.variations_supported(4), Some(true));
        assert_eq!(file.variations_supported(3), Some(false));
        assert_eq!(file.variations_supported(1), None);
        let text = to_string(&file);
        assert!(text.contains("\"variationsSupported\": [2,4],\n"), "{text}");
        assert!(text.contains("\"madeUp\": true,\n"), "{text}");
        assert_eq!(parse(&text, path, &t).unwrap(), file);
        assert_eq!(out_of_step(&file, &t), None);
    }

    #[test]
    fn a_structure_file_naming_a_leaf_twice_or_a_parent_is_refused_naming_the_file_and_id() {
        let t = tree();
        let path = Path::new("EBAY_US.structure.json");
        let (file, _) = from_answer(vec![(2, true), (3, false)], &t, "src", false, path).unwrap();
        let both = to_string(&file).replace(
            "\"variationsNotSupported\": [3]",
            "\"variationsNotSupported\": [2]",
        );
        assert_eq!(
            parse(&both, path, &t).unwrap_err().to_string(),
            "EBAY_US.structure.json: category 2 appears twice (rule: one policy a leaf)"
        );
        let parent = to_string(&file).replace(
            "\"variationsNotSupported\": [3]",
            "\"variationsNotSupported\": [1]",
        );
        assert_eq!(
            parse(&parent, path, &t).unwrap_err().to_string(),
            "EBAY_US.structure.json: category 1 is not a leaf of the tree (rule: a policy is a leaf's)"
        );
        assert_eq!(
            from_answer(vec![(2, true), (2, false)], &t, "src", false, path)
                .unwrap_err()
                .to_string(),
            "EBAY_US.structure.json: category 2 appears twice (rule: one policy a leaf)"
        );
        let miscounted = to_string(&file).replace("\"categoryCount\": 2", "\"categoryCount\": 3");
        assert!(
            parse(&miscounted, path, &t)
                .unwrap_err()
                .to_string()
                .contains("the header says 3 categories, the file has 2")
        );
    }
}
