//! The validated, flat form of a category tree: what a snapshot holds and what the code
//! generator reads.
//!
//! Every path into this crate (a saved response, a live download, a committed snapshot) ends in
//! [`CategoryTree::validate`], so nothing downstream has to re-check the structure.

use std::fmt;

/// Id of the tree's root node. The root is not a listable category.
pub const ROOT_ID: u32 = 0;

/// The deepest level a category may have (the root is level 0, top-level categories level
/// 1; real trees are at most 6 deep). Validation refuses deeper trees, and the code generator
/// passes this constant to `taxonomy-data`, whose depth-first walk keeps one stack entry per
/// level, `MAX_LEVEL + 1` in all (levels 0 through `MAX_LEVEL`).
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
        /// The cycle, shown as `a → b → a`: its first categories and a count of the rest.
        chain: CycleChain,
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
    /// A name is empty, would make paths ambiguous, or holds a character that drives a
    /// terminal ([`is_unsafe_char`]).
    #[error(
        "category {id}: name {} {problem} (rule: names are non-empty and contain no `>`, no control and no bidirectional formatting character)",
        shown_name(name)
    )]
    BadName {
        /// The category.
        id: u32,
        /// The name.
        name: String,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// The tree's version holds a character that drives a terminal ([`is_unsafe_char`]).
    #[error(
        "the tree's categoryTreeVersion {} {problem} (rule: the version contains no control and no bidirectional formatting character)",
        shown_name(version)
    )]
    BadVersion {
        /// The version.
        version: String,
        /// What is wrong with it.
        problem: &'static str,
    },
}

/// Whether `c` may not appear in a name or a version: a control character (C0, DEL and C1:
/// ESC, BEL, newline …, which start terminal escape sequences or new lines) or a
/// bidirectional formatting character (the embeddings, overrides and isolates U+202A–U+202E
/// and U+2066–U+2069, which reorder what is shown). Text from the service is validated against
/// this, and printed with [`escaped`].
///
/// ```
/// use taxonomy_tree::tree::is_unsafe_char;
/// assert!(is_unsafe_char('\u{1b}') && is_unsafe_char('\n') && is_unsafe_char('\u{202e}'));
/// assert!(!is_unsafe_char('é') && !is_unsafe_char('&') && !is_unsafe_char(' '));
/// ```
pub fn is_unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// What is wrong with `text` by [`is_unsafe_char`], if anything.
fn unsafe_text_problem(text: &str) -> Option<&'static str> {
    let c = text.chars().find(|&c| is_unsafe_char(c))?;
    Some(if c.is_control() {
        "contains a control character"
    } else {
        "contains a bidirectional formatting character"
    })
}

/// `text` with every [`is_unsafe_char`] replaced by its `\u{…}` escape, so that printing it
/// can neither move the cursor, recolour or retitle a terminal, start a line, nor reorder
/// what follows.
///
/// ```
/// use taxonomy_tree::tree::escaped;
/// assert_eq!(escaped("135\u{1b}[2J"), "135\\u{1b}[2J");
/// assert_eq!(escaped("Fountain"), "Fountain");
/// ```
pub fn escaped(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if is_unsafe_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

impl TreeError {
    /// The id of the category that breaks the rule, if the rule concerns one.
    pub fn category_id(&self) -> Option<u32> {
        match self {
            TreeError::NoRoot | TreeError::BadVersion { .. } => None,
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

/// What breaks rule 3 in a category's name, if anything: blank, the path separator `>`, or
/// an [`is_unsafe_char`]. (Shared with the subtree decoder.)
pub(crate) fn name_problem(name: &str) -> Option<&'static str> {
    if name.trim().is_empty() {
        Some("is empty")
    } else if name.contains('>') {
        Some("contains the path separator `>`")
    } else {
        unsafe_text_problem(name)
    }
}

/// Rule 3 for a version (shared with the subtree decoder).
pub(crate) fn check_version(version: &str) -> Result<(), TreeError> {
    match unsafe_text_problem(version) {
        Some(problem) => Err(TreeError::BadVersion {
            version: version.to_owned(),
            problem,
        }),
        None => Ok(()),
    }
}

/// How many categories of a cycle an error names before counting the rest.
const CYCLE_SHOWN: usize = 6;

/// How many characters of a name an error shows.
const NAME_SHOWN: usize = 80;

/// A name as shown in an error: quoted, and cut after [`NAME_SHOWN`] characters.
fn shown_name(name: &str) -> String {
    match name.char_indices().nth(NAME_SHOWN) {
        Some((cut, _)) => format!("{:?}… ({} characters)", &name[..cut], name.chars().count()),
        None => format!("{name:?}"),
    }
}

/// A cycle of parents as shown in an error: at most its first few categories, then how many
/// more there are, so the message stays short however long the cycle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CycleChain {
    /// The first categories of the cycle, in walking order (each one's parent is the next).
    pub first: Vec<u32>,
    /// How many categories the cycle has in all.
    pub len: usize,
}

impl CycleChain {
    fn of(cycle: &[u32]) -> CycleChain {
        CycleChain {
            first: cycle.iter().take(CYCLE_SHOWN).copied().collect(),
            len: cycle.len(),
        }
    }
}

impl fmt::Display for CycleChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for id in &self.first {
            write!(f, "{id} → ")?;
        }
        if self.len > self.first.len() {
            write!(f, "… {} more → ", self.len - self.first.len())?;
        }
        match self.first.first() {
            Some(id) => write!(f, "{id}"),
            None => Ok(()),
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
    /// Checks every structural rule, one step per rule, in this order:
    ///
    /// 1. [ids are below `u32::MAX`, unique and sorted](Self::check_ids);
    /// 2. [exactly one root, id 0, without a parent](Self::check_root);
    /// 3. [names are non-empty and contain no `>`, no control and no bidirectional
    ///    formatting character](Self::check_names), nor does [the version](Self::check_version);
    /// 4. [every parent exists](Self::check_parents_exist);
    /// 5. [every child exists](Self::check_children_exist);
    /// 6. [no category lists a child twice](Self::check_no_repeated_child);
    /// 7. [every category is listed by its parent](Self::check_listed_by_parent);
    /// 8. [every listed child names its lister as parent](Self::check_children_name_parent);
    /// 9. [leaf exactly when no children](Self::check_leaf_flags);
    /// 10. [every category is reached from the root: no cycles, at most
    ///     `MAX_LEVEL` levels](Self::check_reachable).
    ///
    /// The first violation found is returned; it names the category and the rule, and its
    /// message is bounded whatever the size of the tree. Each step assumes the earlier ones
    /// passed. The whole check is O(n log n) in the number of categories and children.
    // Each rule links to its check (documented with `--document-private-items`).
    #[allow(rustdoc::private_intra_doc_links)]
    pub fn validate(&self) -> Result<(), TreeError> {
        self.check_ids()?;
        self.check_root()?;
        self.check_names()?;
        self.check_version()?;
        self.check_parents_exist()?;
        self.check_children_exist()?;
        self.check_no_repeated_child()?;
        self.check_listed_by_parent()?;
        self.check_children_name_parent()?;
        self.check_leaf_flags()?;
        self.check_reachable()
    }

    /// The position of category `id` (binary search: valid once [`Self::check_ids`] passed).
    fn position(&self, id: u32) -> Option<usize> {
        self.categories.binary_search_by_key(&id, |c| c.id).ok()
    }

    /// The position of category `id`, which an earlier step showed to exist.
    fn position_of_existing(&self, id: u32) -> usize {
        self.position(id).unwrap_or_default()
    }

    /// Rule 1: every id is below `u32::MAX` (the tables store the id plus one), and the ids
    /// are strictly ascending, so they are unique and the tree can be searched by id.
    fn check_ids(&self) -> Result<(), TreeError> {
        let mut previous: Option<u32> = None;
        for c in &self.categories {
            if c.id == u32::MAX {
                return Err(TreeError::IdOutOfRange { id: c.id });
            }
            match previous {
                Some(p) if p == c.id => return Err(TreeError::DuplicateId { id: c.id }),
                Some(p) if p > c.id => {
                    return Err(TreeError::NotSorted {
                        id: c.id,
                        previous: p,
                    });
                }
                _ => {}
            }
            previous = Some(c.id);
        }
        Ok(())
    }

    /// Rule 2: the root, id [`ROOT_ID`], exists and is the only category without a parent.
    fn check_root(&self) -> Result<(), TreeError> {
        let mut root = false;
        for c in &self.categories {
            match (c.id == ROOT_ID, c.parent) {
                (true, None) => root = true,
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
        if root { Ok(()) } else { Err(TreeError::NoRoot) }
    }

    /// Rule 3: every category but the root has a name that is not blank and does not contain
    /// the path separator `>` (paths are shown and parsed as `A > B > C`); no name, the
    /// root's included, holds a control or bidirectional formatting character
    /// ([`is_unsafe_char`]: names are printed and compiled in).
    fn check_names(&self) -> Result<(), TreeError> {
        for c in &self.categories {
            // The root's name is never part of a path, but it is compiled in too.
            let problem = if c.id == ROOT_ID {
                unsafe_text_problem(&c.name)
            } else {
                name_problem(&c.name)
            };
            if let Some(problem) = problem {
                return Err(TreeError::BadName {
                    id: c.id,
                    name: c.name.clone(),
                    problem,
                });
            }
        }
        Ok(())
    }

    /// Rule 3, for the version: it holds no control or bidirectional formatting character
    /// (it is printed and compiled in too).
    fn check_version(&self) -> Result<(), TreeError> {
        check_version(&self.meta.version)
    }

    /// Rule 4: every parent id names a category.
    fn check_parents_exist(&self) -> Result<(), TreeError> {
        for c in &self.categories {
            if let Some(parent) = c.parent
                && self.position(parent).is_none()
            {
                return Err(TreeError::MissingParent { id: c.id, parent });
            }
        }
        Ok(())
    }

    /// Rule 5: every child id names a category.
    fn check_children_exist(&self) -> Result<(), TreeError> {
        for c in &self.categories {
            if let Some(&child) = c.children.iter().find(|&&k| self.position(k).is_none()) {
                return Err(TreeError::MissingChild { id: c.id, child });
            }
        }
        Ok(())
    }

    /// Rule 6: no category lists the same child twice. (One stamp per category, set to the
    /// lister's position: linear, however many children one category has.)
    fn check_no_repeated_child(&self) -> Result<(), TreeError> {
        let mut stamp = vec![usize::MAX; self.categories.len()];
        for (i, c) in self.categories.iter().enumerate() {
            for &child in &c.children {
                let k = self.position_of_existing(child);
                if stamp[k] == i {
                    return Err(TreeError::RepeatedChild { id: c.id, child });
                }
                stamp[k] = i;
            }
        }
        Ok(())
    }

    /// Rule 7: every category with a parent is among that parent's children.
    fn check_listed_by_parent(&self) -> Result<(), TreeError> {
        let mut listed = vec![false; self.categories.len()];
        for c in &self.categories {
            for &child in &c.children {
                let k = self.position_of_existing(child);
                if self.categories[k].parent == Some(c.id) {
                    listed[k] = true;
                }
            }
        }
        for (c, listed) in self.categories.iter().zip(listed) {
            if let Some(parent) = c.parent
                && !listed
            {
                return Err(TreeError::NotListedByParent { id: c.id, parent });
            }
        }
        Ok(())
    }

    /// Rule 8: every child a category lists names that category as its parent.
    fn check_children_name_parent(&self) -> Result<(), TreeError> {
        for c in &self.categories {
            for &child in &c.children {
                let child_parent = self.categories[self.position_of_existing(child)].parent;
                if child_parent != Some(c.id) {
                    return Err(TreeError::ChildDisagrees {
                        id: c.id,
                        child,
                        child_parent: ParentName(child_parent),
                    });
                }
            }
        }
        Ok(())
    }

    /// Rule 9: a category (the root aside) is flagged leaf exactly when it has no children:
    /// only leaves accept listings.
    fn check_leaf_flags(&self) -> Result<(), TreeError> {
        for c in self.listable() {
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
        Ok(())
    }

    /// Rule 10: a walk down from the root reaches every category within [`MAX_LEVEL`]
    /// levels. Parents and children agree (rules 7 and 8) and only the root lacks a parent
    /// (rule 2), so a category the walk misses sits on, or hangs below, a cycle of parents;
    /// the error names that cycle.
    fn check_reachable(&self) -> Result<(), TreeError> {
        let cats = &self.categories;
        let Some(root) = self.position(ROOT_ID) else {
            return Err(TreeError::NoRoot);
        };
        let mut reached = vec![false; cats.len()];
        reached[root] = true;
        let mut stack = vec![(root, 0_usize)];
        while let Some((i, level)) = stack.pop() {
            if level > MAX_LEVEL {
                return Err(TreeError::TooDeep {
                    id: cats[i].id,
                    level,
                });
            }
            for &child in &cats[i].children {
                let k = self.position_of_existing(child);
                if !reached[k] {
                    reached[k] = true;
                    stack.push((k, level + 1));
                }
            }
        }
        match reached.iter().position(|r| !r) {
            Some(first) => Err(self.cycle_above(first)),
            None => Ok(()),
        }
    }

    /// The cycle found by following parents up from the category at position `start`,
    /// which the root does not reach. Linear in the length of the walk: each position
    /// remembers the step at which the walk passed it.
    fn cycle_above(&self, start: usize) -> TreeError {
        let cats = &self.categories;
        let mut step_at = vec![usize::MAX; cats.len()];
        let mut walk = Vec::new();
        let mut at = start;
        while step_at[at] == usize::MAX {
            step_at[at] = walk.len();
            walk.push(cats[at].id);
            // Rules 2 and 4: every category but the (reached) root has an existing parent.
            at = cats[at]
                .parent
                .map_or(at, |parent| self.position_of_existing(parent));
        }
        let cycle = &walk[step_at[at]..];
        TreeError::Cycle {
            id: cycle[0],
            chain: CycleChain::of(cycle),
        }
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
