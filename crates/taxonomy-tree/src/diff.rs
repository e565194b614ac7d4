//! What changed between two versions of a site's tree, in the terms listing code cares about.

use std::fmt;

use crate::tree::{CategoryTree, ROOT_ID};

/// The changes from an old tree to a new one. Each list holds category ids, sorted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TreeDiff {
    /// Ids only in the new tree.
    pub added: Vec<u32>,
    /// Ids only in the old tree. Listing code that uses them will stop compiling.
    pub removed: Vec<u32>,
    /// Ids whose name changed: `(id, old name, new name)`.
    pub renamed: Vec<(u32, String, String)>,
    /// Ids whose parent changed: `(id, old parent, new parent)`.
    pub moved: Vec<(u32, u32, u32)>,
    /// Ids that were leaves and are not any more: listings can no longer use them.
    pub no_longer_leaf: Vec<u32>,
    /// Ids that became leaves.
    pub became_leaf: Vec<u32>,
    /// The old and new `categoryTreeVersion`, when they differ.
    pub version: Option<(String, String)>,
}

impl TreeDiff {
    /// Compares two trees of the same site.
    pub fn between(old: &CategoryTree, new: &CategoryTree) -> TreeDiff {
        let mut d = TreeDiff::default();
        if old.meta.version != new.meta.version {
            d.version = Some((old.meta.version.clone(), new.meta.version.clone()));
        }
        let (mut i, mut j) = (0, 0);
        let (a, b) = (&old.categories, &new.categories);
        while i < a.len() || j < b.len() {
            match (a.get(i), b.get(j)) {
                (Some(x), Some(y)) if x.id == y.id => {
                    if x.id != ROOT_ID {
                        if x.name != y.name {
                            d.renamed.push((x.id, x.name.clone(), y.name.clone()));
                        }
                        if x.parent != y.parent {
                            d.moved
                                .push((x.id, x.parent.unwrap_or(0), y.parent.unwrap_or(0)));
                        }
                        if x.leaf && !y.leaf {
                            d.no_longer_leaf.push(x.id);
                        }
                        if !x.leaf && y.leaf {
                            d.became_leaf.push(x.id);
                        }
                    }
                    i += 1;
                    j += 1;
                }
                (Some(x), Some(y)) if x.id < y.id => {
                    d.removed.push(x.id);
                    i += 1;
                }
                (Some(_), Some(y)) => {
                    d.added.push(y.id);
                    j += 1;
                }
                (Some(x), None) => {
                    d.removed.push(x.id);
                    i += 1;
                }
                (None, Some(y)) => {
                    d.added.push(y.id);
                    j += 1;
                }
                (None, None) => break,
            }
        }
        d
    }

    /// `true` when nothing changed, version included.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty()
            && self.removed.is_empty()
            && self.renamed.is_empty()
            && self.moved.is_empty()
            && self.no_longer_leaf.is_empty()
            && self.became_leaf.is_empty()
            && self.version.is_none()
    }
}

/// One line per kind of change, with up to five example ids each.
impl fmt::Display for TreeDiff {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_empty() {
            return f.write_str("no changes");
        }
        if let Some((old, new)) = &self.version {
            writeln!(f, "version {old} → {new}")?;
        }
        let ids = |v: &[u32]| -> String {
            let mut s: Vec<String> = v.iter().take(5).map(u32::to_string).collect();
            if v.len() > 5 {
                s.push("…".into());
            }
            s.join(", ")
        };
        let lines: [(&str, Vec<u32>); 6] = [
            ("added", self.added.clone()),
            ("removed", self.removed.clone()),
            ("renamed", self.renamed.iter().map(|r| r.0).collect()),
            ("moved", self.moved.iter().map(|m| m.0).collect()),
            (
                "no longer leaves (listings must move)",
                self.no_longer_leaf.clone(),
            ),
            ("became leaves", self.became_leaf.clone()),
        ];
        for (label, v) in lines {
            if !v.is_empty() {
                writeln!(f, "{:>6} {label}: {}", v.len(), ids(&v))?;
            }
        }
        Ok(())
    }
}
