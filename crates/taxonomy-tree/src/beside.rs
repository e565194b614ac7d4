//! What the files beside a snapshot share (the expired-category file, [`crate::expired`], and
//! the condition-policy file, [`crate::conditions`]): their name after the snapshot's, the
//! header that ties them to the tree they were checked against (the tree's [`fingerprint`]),
//! and how they are read.

use std::path::{Path, PathBuf};

use crate::tree::CategoryTree;

/// The fingerprint of the part of `tree` the rules read: FNV-1a (64 bits) over each
/// category's id (4 bytes, little-endian) and leaf flag (1 byte), in id order. Recorded in the
/// file as `treeFingerprint`, so that a file beside another tree of the same version (a
/// partial copy completed, say) is known to be out of step.
pub fn fingerprint(tree: &CategoryTree) -> u64 {
    tree.categories.iter().fold(crate::fnv1a(&[]), |h, c| {
        let id = c.id.to_le_bytes();
        crate::fnv1a_continue(h, &[id[0], id[1], id[2], id[3], u8::from(c.leaf)])
    })
}

/// The file of `kind` beside a snapshot: `EBAY_US.json` → `EBAY_US.{kind}.json`.
pub(crate) fn path_beside(snapshot_path: &Path, kind: &str) -> PathBuf {
    let stem = snapshot_path
        .file_stem()
        .map_or_else(Default::default, |s| s.to_string_lossy().into_owned());
    snapshot_path.with_file_name(format!("{stem}.{kind}.json"))
}

/// How a file's header (the tree id, version and fingerprint it was written for; no
/// fingerprint in an old format) and the snapshot's `tree` differ; `None` when it is in step.
pub(crate) fn out_of_step(
    tree_id: u32,
    version: &str,
    tree_fingerprint: Option<u64>,
    tree: &CategoryTree,
) -> Option<String> {
    // Debug-quoted: the file's version is not validated, and `{:?}` escapes control and
    // bidirectional formatting characters.
    if tree_id != tree.meta.tree_id {
        Some(format!(
            "written for category tree {tree_id}, the snapshot is tree {}",
            tree.meta.tree_id
        ))
    } else if version != tree.meta.version {
        Some(format!(
            "written for version {version:?}, the tree is version {:?}",
            tree.meta.version
        ))
    } else if tree_fingerprint.is_some_and(|f| f != fingerprint(tree)) {
        Some(format!(
            "written for other categories of version {version:?} (treeFingerprint)"
        ))
    } else {
        None
    }
}

/// A `treeFingerprint` as written: exactly 16 hexadecimal digits.
pub(crate) fn parse_fingerprint(hex: &str) -> Option<u64> {
    u64::from_str_radix(hex, 16)
        .ok()
        .filter(|_| hex.len() == 16 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The text of the file at `path`; `None` when there is none.
pub(crate) fn read_if_present(path: &Path) -> std::io::Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Root 0 > 1 (not a leaf) > `leaves`: the small tree the files' tests check against.
#[cfg(test)]
pub(crate) fn test_tree(leaves: &[u32]) -> CategoryTree {
    use crate::tree::{Category, TreeMeta};
    let c = |id, parent: Option<u32>, children: Vec<u32>| Category {
        id,
        name: format!("C{id}"),
        parent,
        leaf: id != 0 && children.is_empty(),
        children,
    };
    let mut categories = vec![c(0, None, vec![1]), c(1, Some(0), leaves.to_vec())];
    categories.extend(leaves.iter().map(|&id| c(id, Some(1), vec![])));
    CategoryTree {
        meta: TreeMeta {
            tree_id: 0,
            marketplace_id: "EBAY_US".into(),
            language: "en-US".into(),
            version: "7".into(),
            taken_at: "2026-01-02".into(),
            source: "test".into(),
            note: None,
            complete: true,
        },
        categories,
    }
}
