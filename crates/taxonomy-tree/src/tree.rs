//! The validated, flat form of a category tree: what a snapshot holds and what the code
//! generator reads.
//!
//! Every path into this crate (a saved response, a live download, a committed snapshot) ends in
//! [`CategoryTree::validate`], so nothing downstream has to re-check the structure.

use std::collections::HashMap;
use std::fmt;

/// Id of the tree's root node. The root is not a listable category.
pub const ROOT_ID: u32 = 0;

/// The deepest level a category may have (real trees are at most 6 deep); the generated
/// tables and their iterators rely on it.
pub const MAX_LEVEL: usize = 32;

/// One category of a flat tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Category {
    /// The category id, the value listing code must send.
    pub id: u32,
    /// The name, in the language of the snapshot.
    pub name: String,
    /// The parent's id; `None` only on the root.
    pub parent: Option<u32>,
    /// `true` when the category accepts listings (it has no children).
    pub leaf: bool,
    /// Ids of the children, in the order the service returned them.
    pub children: Vec<u32>,
}

/// Where a tree came from and which version it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeMeta {
    /// The category tree id (0, 3, 77, 15 …).
    pub tree_id: u32,
    /// The marketplace id, e.g. `EBAY_US`.
    pub marketplace_id: String,
    /// The language tag of the names, e.g. `en-US`.
    pub language: String,
    /// The service's `categoryTreeVersion`.
    pub version: String,
    /// When the data was taken (ISO 8601 date or date-time).
    pub taken_at: String,
    /// Where it was taken from (a URL or a description of the file).
    pub source: String,
    /// Anything a user of the data should know (staleness, partial coverage).
    pub note: Option<String>,
    /// `false` when the tree is not a complete copy of its version (e.g. cut to a depth):
    /// such a copy never counts as current when the service reports the same version.
    pub complete: bool,
}

/// A category tree: its metadata and its categories, sorted by id, the root (id 0) first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CategoryTree {
    /// Version and provenance.
    pub meta: TreeMeta,
    /// All categories including the root, sorted by id.
    pub categories: Vec<Category>,
}

/// A broken rule of the tree's structure, naming the category that breaks it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TreeError {
    /// The id is `u32::MAX`, which the tables cannot hold.
    #[error("category {id}: id out of range (rule: ids are below {})", u32::MAX)]
    IdOutOfRange {
        /// The id.
        id: u32,
    },
    /// Two categories share an id.
    #[error("category {id}: duplicate id (rule: ids are unique)")]
    DuplicateId {
        /// The repeated id.
        id: u32,
    },
    /// The categories are not in ascending id order.
    #[error("category {id}: comes after category {previous} (rule: categories are sorted by id)")]
    NotSorted {
        /// The category out of order.
        id: u32,
        /// The category before it.
        previous: u32,
    },
    /// No category without a parent.
    #[error("the tree has no root (rule: exactly one category, id 0, has no parent)")]
    NoRoot,
    /// A category other than 0 has no parent, or the root has one.
    #[error("category {id}: {problem} (rule: exactly one root, id 0, without a parent)")]
    BadRoot {
        /// The offending category.
        id: u32,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The parent id names no category.
    #[error("category {id}: parent {parent} does not exist (rule: every parent exists)")]
    MissingParent {
        /// The category.
        id: u32,
        /// Its missing parent.
        parent: u32,
    },
    /// A child id names no category.
    #[error("category {id}: child {child} does not exist (rule: every child exists)")]
    MissingChild {
        /// The category.
        id: u32,
        /// Its missing child.
        child: u32,
    },
    /// A child names another parent.
    #[error(
        "category {id}: lists child {child}, whose parent is {child_parent} (rule: parent and child agree)"
    )]
    ChildDisagrees {
        /// The category listing the child.
        id: u32,
        /// The child.
        child: u32,
        /// The parent the child names (`none` for no parent).
        child_parent: ParentName,
    },
    /// A category is missing from its parent's child list.
    #[error(
        "category {id}: its parent {parent} does not list it as a child (rule: parent and child agree)"
    )]
    NotListedByParent {
        /// The category.
        id: u32,
        /// Its parent.
        parent: u32,
    },
    /// A category lists the same child twice.
    #[error("category {id}: lists child {child} twice (rule: parent and child agree)")]
    RepeatedChild {
        /// The category.
        id: u32,
        /// The repeated child.
        child: u32,
    },
    /// Following parents from this category never reaches the root.
    #[error("category {id}: its ancestors form a cycle ({chain}) (rule: no cycles)")]
    Cycle {
        /// A category on the cycle.
        id: u32,
        /// The cycle, as `a → b → a`.
        chain: String,
    },
    /// A category is deeper than [`MAX_LEVEL`].
    #[error(
        "category {id}: at level {level}, deeper than {MAX_LEVEL} (rule: at most {MAX_LEVEL} levels)"
    )]
    TooDeep {
        /// The category.
        id: u32,
        /// Its level.
        level: usize,
    },
    /// A category flagged leaf has children.
    #[error(
        "category {id}: flagged leaf but has {children} children (rule: leaf exactly when no children)"
    )]
    LeafWithChildren {
        /// The category.
        id: u32,
        /// How many children it has.
        children: usize,
    },
    /// A category not flagged leaf has no children.
    #[error(
        "category {id}: not flagged leaf but has no children (rule: leaf exactly when no children)"
    )]
    NonLeafWithoutChildren {
        /// The category.
        id: u32,
    },
    /// A name is empty or would make paths ambiguous.
    #[error(
        "category {id}: name {name:?} {problem} (rule: names are non-empty and contain no `>`)"
    )]
    BadName {
        /// The category.
        id: u32,
        /// The name.
        name: String,
        /// What is wrong with it.
        problem: &'static str,
    },
}

impl TreeError {
    /// The id of the category that breaks the rule, if the rule concerns one.
    pub fn category_id(&self) -> Option<u32> {
        match self {
            TreeError::NoRoot => None,
            TreeError::DuplicateId { id }
            | TreeError::IdOutOfRange { id }
            | TreeError::NotSorted { id, .. }
            | TreeError::BadRoot { id, .. }
            | TreeError::MissingParent { id, .. }
            | TreeError::MissingChild { id, .. }
            | TreeError::ChildDisagrees { id, .. }
            | TreeError::NotListedByParent { id, .. }
            | TreeError::RepeatedChild { id, .. }
            | TreeError::Cycle { id, .. }
            | TreeError::TooDeep { id, .. }
            | TreeError::LeafWithChildren { id, .. }
            | TreeError::NonLeafWithoutChildren { id }
            | TreeError::BadName { id, .. } => Some(*id),
        }
    }
}

/// A parent id as shown in an error: a number or `none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParentName(pub Option<u32>);

impl fmt::Display for ParentName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(id) => write!(f, "{id}"),
            None => f.write_str("none"),
        }
    }
}

impl CategoryTree {
    /// Checks every structural rule: ids unique and sorted, exactly one root (id 0), every
    /// parent and child exists, parent and child agree, no cycles, leaf exactly when there are
    /// no children, at most [`MAX_LEVEL`] levels, names non-empty and free of the path
    /// separator `>`.
    ///
    /// The first violation found is returned; it names the category and the rule.
    pub fn validate(&self) -> Result<(), TreeError> {
        let cats = &self.categories;
        let mut index: HashMap<u32, usize> = HashMap::with_capacity(cats.len());
        for (i, c) in cats.iter().enumerate() {
            if c.id == u32::MAX {
                return Err(TreeError::IdOutOfRange { id: c.id });
            }
            if index.insert(c.id, i).is_some() {
                return Err(TreeError::DuplicateId { id: c.id });
            }
            if i > 0 && cats[i - 1].id > c.id {
                return Err(TreeError::NotSorted {
                    id: c.id,
                    previous: cats[i - 1].id,
                });
            }
        }
        let mut root = None;
        for c in cats {
            match (c.id == ROOT_ID, c.parent) {
                (true, None) => root = Some(c.id),
                (true, Some(_)) => {
                    return Err(TreeError::BadRoot {
                        id: c.id,
                        problem: "is the root id but has a parent",
                    });
                }
                (false, None) => {
                    return Err(TreeError::BadRoot {
                        id: c.id,
                        problem: "has no parent but is not the root",
                    });
                }
                (false, Some(_)) => {}
            }
        }
        if root.is_none() {
            return Err(TreeError::NoRoot);
        }
        for c in cats {
            if c.id != ROOT_ID {
                if c.name.trim().is_empty() {
                    return Err(TreeError::BadName {
                        id: c.id,
                        name: c.name.clone(),
                        problem: "is empty",
                    });
                }
                if c.name.contains('>') {
                    return Err(TreeError::BadName {
                        id: c.id,
                        name: c.name.clone(),
                        problem: "contains the path separator `>`",
                    });
                }
            }
            if let Some(parent) = c.parent {
                let Some(&p) = index.get(&parent) else {
                    return Err(TreeError::MissingParent { id: c.id, parent });
                };
                if !cats[p].children.contains(&c.id) {
                    return Err(TreeError::NotListedByParent { id: c.id, parent });
                }
            }
            let mut seen = std::collections::HashSet::with_capacity(c.children.len());
            for &child in &c.children {
                let Some(&k) = index.get(&child) else {
                    return Err(TreeError::MissingChild { id: c.id, child });
                };
                if cats[k].parent != Some(c.id) {
                    return Err(TreeError::ChildDisagrees {
                        id: c.id,
                        child,
                        child_parent: ParentName(cats[k].parent),
                    });
                }
                if !seen.insert(child) {
                    return Err(TreeError::RepeatedChild { id: c.id, child });
                }
            }
            if c.id != ROOT_ID {
                if c.leaf && !c.children.is_empty() {
                    return Err(TreeError::LeafWithChildren {
                        id: c.id,
                        children: c.children.len(),
                    });
                }
                if !c.leaf && c.children.is_empty() {
                    return Err(TreeError::NonLeafWithoutChildren { id: c.id });
                }
            }
        }
        // Parents and children agree and every non-root has a parent, so a category that the
        // root does not reach sits on (or hangs below) a cycle of parents.
        let mut reached = vec![false; cats.len()];
        let mut stack = vec![(index[&ROOT_ID], 0_usize)];
        reached[index[&ROOT_ID]] = true;
        while let Some((i, level)) = stack.pop() {
            if level > MAX_LEVEL {
                return Err(TreeError::TooDeep {
                    id: cats[i].id,
                    level,
                });
            }
            for child in &cats[i].children {
                let k = index[child];
                if !reached[k] {
                    reached[k] = true;
                    stack.push((k, level + 1));
                }
            }
        }
        if let Some(first) = reached.iter().position(|r| !r) {
            let mut chain = vec![cats[first].id];
            let mut at = first;
            loop {
                let parent = cats[at]
                    .parent
                    .expect("checked: only the root lacks a parent");
                at = index[&parent];
                let id = cats[at].id;
                let repeat = chain.contains(&id);
                chain.push(id);
                if repeat {
                    break;
                }
            }
            let start = chain
                .iter()
                .position(|&x| x == *chain.last().unwrap())
                .unwrap();
            let cycle: Vec<String> = chain[start..].iter().map(u32::to_string).collect();
            return Err(TreeError::Cycle {
                id: chain[start],
                chain: cycle.join(" → "),
            });
        }
        Ok(())
    }

    /// The categories without the root.
    pub fn listable(&self) -> impl Iterator<Item = &Category> {
        self.categories.iter().filter(|c| c.id != ROOT_ID)
    }

    /// Number of categories, not counting the root.
    pub fn len(&self) -> usize {
        self.listable().count()
    }

    /// `true` when the tree has no category besides the root.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of leaf categories.
    pub fn leaf_count(&self) -> usize {
        self.listable().filter(|c| c.leaf).count()
    }

    /// The category with this id (binary search; the tree is sorted).
    pub fn get(&self, id: u32) -> Option<&Category> {
        self.categories
            .binary_search_by_key(&id, |c| c.id)
            .ok()
            .map(|i| &self.categories[i])
    }
}
