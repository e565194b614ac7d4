//! A site's expired-category mapping (getExpiredCategories), committed beside its snapshot:
//! `snapshots/EBAY_US.expired.json` next to `snapshots/EBAY_US.json`, one mapping a line,
//! sorted by the expired id, so a refresh reads as a line diff.
//!
//! ```text
//! {
//!   "format": 2,
//!   "categoryTreeId": 0,
//!   "marketplaceId": "EBAY_US",
//!   "categoryTreeVersion": "134",
//!   "source": "https://api.ebay.com/commerce/taxonomy/v1/category_tree/0/get_expired_categories",
//!   "mappingCount": 2,
//!   "expired": [
//!     {"from":853,"to":852},
//!     {"from":854,"to":852}
//!   ],
//!   "treeFingerprint": "5f0e4b1c9a2d7e63"
//! }
//! ```
//!
//! A site without the file has no expired categories; an empty mapping is never written as a
//! new file, so the committed snapshots stay as they are until the service reports one.
//!
//! ## In step with its tree
//!
//! The header says which tree the mapping was checked against: `categoryTreeId`,
//! `categoryTreeVersion` and `treeFingerprint` ([`fingerprint`]: the tree's category ids and
//! leaf flags, all the rules below read). A file whose header names another tree than the
//! snapshot beside it is **out of step** ([`out_of_step`]): what a commit interrupted between
//! a site's two renames leaves (see [`crate::pipeline::commit_all`]). [`read_in_step`] reports
//! it as [`ExpiredError::OutOfStep`], which the build and `snapshot verify` pass over with a
//! warning (the site compiles in without expired categories) and `snapshot refresh` counts as
//! stale, so that it downloads the site again and rewrites the file. Format 1 (before the
//! fingerprint) is still read; its files are in step when the tree id and version agree.
//!
//! ## The rule, checked against the site's tree
//!
//! getExpiredCategories maps "expired leaf categories" to "the currently active leaf category
//! that has replaced" each. So, against the tree of the same snapshot:
//!
//! - `from` is **not a category of the tree** (the root included): an id that is both a live
//!   category and an expired one would make `LeafCategory::new` ambiguous;
//! - `to` is **a leaf of the tree**: taxonomy-data hands it out as a `LeafCategory`, which only
//!   ever holds a leaf;
//! - each `from` appears once, in increasing order (the generated table is binary-searched).
//!
//! Several expired ids may share one replacement. A mapping that breaks a rule is refused with
//! the file and the line ([`ExpiredError::Invalid`]), never silently dropped: a refresh that
//! gets such an answer writes nothing.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

pub use crate::beside::fingerprint;

use crate::atomic::write_atomic;
use crate::tree::CategoryTree;

/// The format number written in every expired-category file (format 1, without
/// `treeFingerprint`, is still read, and written back as it was).
pub const FORMAT: u32 = 2;

/// One expired leaf and the active leaf that replaced it (getExpiredCategories'
/// `fromCategoryId`, `toCategoryId`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ExpiredMapping {
    /// The expired leaf category.
    pub from: u32,
    /// The active leaf category that replaced it.
    pub to: u32,
}

/// The contents of an expired-category file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpiredFile {
    /// The category tree id; the same as the snapshot's.
    pub tree_id: u32,
    /// The marketplace id, e.g. `EBAY_US`.
    pub marketplace_id: String,
    /// The `categoryTreeVersion` of the tree the mapping was checked against.
    pub version: String,
    /// The [`fingerprint`] of that tree (`None` in a format-1 file).
    pub tree_fingerprint: Option<u64>,
    /// Where the mapping was taken from (the getExpiredCategories URL).
    pub source: String,
    /// The mappings, sorted by `from`, each `from` once.
    pub mappings: Vec<ExpiredMapping>,
}

/// A broken rule of the mapping (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpiredRule {
    /// The file is another tree's.
    #[error(
        "the mapping is for category tree {found}, but the snapshot is tree {expected} (rule: the file beside a snapshot maps that snapshot's tree)"
    )]
    WrongTree {
        /// The snapshot's tree id.
        expected: u32,
        /// The file's tree id.
        found: u32,
    },
    /// `from` is not greater than the previous mapping's.
    #[error(
        "expired category {from} comes after {previous} (rule: mappings are sorted by the expired id)"
    )]
    Unsorted {
        /// The expired id.
        from: u32,
        /// The previous line's expired id.
        previous: u32,
    },
    /// `from` appears twice.
    #[error(
        "expired category {from} is mapped twice, to {first} and {second} (rule: an expired id has one replacement)"
    )]
    Duplicate {
        /// The expired id.
        from: u32,
        /// Its first replacement.
        first: u32,
        /// Its second replacement.
        second: u32,
    },
    /// `from` is still a category of the tree.
    #[error(
        "category {from} (mapped to {to}) is still a category of the tree (rule: an expired id is no longer in the tree)"
    )]
    StillACategory {
        /// The expired id.
        from: u32,
        /// Its replacement.
        to: u32,
    },
    /// `to` is not a category of the tree.
    #[error(
        "expired category {from} is mapped to {to}, which is not a category of the tree (rule: the replacement is a leaf of the tree)"
    )]
    UnknownReplacement {
        /// The expired id.
        from: u32,
        /// Its replacement.
        to: u32,
    },
    /// `to` has subcategories.
    #[error(
        "expired category {from} is mapped to {to}, which is not a leaf (rule: the replacement is a leaf of the tree)"
    )]
    ReplacementNotALeaf {
        /// The expired id.
        from: u32,
        /// Its replacement.
        to: u32,
    },
}

/// Why an expired-category file could not be read, or a mapping not accepted.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ExpiredError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: Arc<std::io::Error>,
    },
    /// The file is not an expired-category file (bad JSON, missing fields, wrong format).
    #[error("{path}: not a valid expired-category file: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// What the parser said, with line and column.
        message: String,
    },
    /// A mapping breaks a rule. For a service answer, `path` is the file it would have been
    /// written to and `line` the line it would have had.
    #[error("{path}:{line}: {rule}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The 1-based line of the offending mapping (0 when unknown).
        line: usize,
        /// The broken rule.
        rule: ExpiredRule,
    },
    /// `mappingCount` disagrees with the mappings.
    #[error("{path}: header says mappingCount is {stated} but the file has {actual} mappings")]
    CountMismatch {
        /// The file.
        path: PathBuf,
        /// The header's value.
        stated: usize,
        /// The mappings counted.
        actual: usize,
    },
    /// The file was written for another tree than the snapshot beside it ([`out_of_step`]),
    /// as a commit interrupted between a site's two renames leaves it: not an error of the
    /// mapping, which is not checked, but a site to refresh.
    #[error(
        "{path}: out of step with the snapshot beside it ({reason}), as an interrupted commit leaves it: the site is compiled in without expired categories until `snapshot refresh` (the toolkit's snapshot command) rewrites the file"
    )]
    OutOfStep {
        /// The file.
        path: PathBuf,
        /// How its header and the snapshot differ, e.g. `written for version 134, the tree
        /// is version 135`.
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
    mapping_count: usize,
    expired: Vec<FileMapping>,
    /// Format 2 on.
    #[serde(default)]
    tree_fingerprint: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileMapping {
    from: u32,
    to: u32,
}

/// The expired-category file beside a snapshot: `EBAY_US.json` → `EBAY_US.expired.json`.
///
/// ```
/// use std::path::Path;
/// let p = taxonomy_tree::expired::path_beside(Path::new("snapshots/EBAY_US.json"));
/// assert_eq!(p, Path::new("snapshots/EBAY_US.expired.json"));
/// ```
pub fn path_beside(snapshot_path: &Path) -> PathBuf {
    crate::beside::path_beside(snapshot_path, "expired")
}

/// The line of the first mapping in [`to_string`]'s rendering (1-based).
const FIRST_MAPPING_LINE: usize = 9;

/// How `file` and the snapshot's `tree` differ, when the file was written for another tree
/// (its tree id, version or [`fingerprint`]); `None` when it is in step. A format-1 file has
/// no fingerprint: the tree id and version decide.
pub fn out_of_step(file: &ExpiredFile, tree: &CategoryTree) -> Option<String> {
    crate::beside::out_of_step(file.tree_id, &file.version, file.tree_fingerprint, tree)
}

/// Checks `mappings` against the rules and `tree`. On a broken rule, returns the index of the
/// offending mapping with the rule.
pub fn check(mappings: &[ExpiredMapping], tree: &CategoryTree) -> Result<(), (usize, ExpiredRule)> {
    for (i, m) in mappings.iter().enumerate() {
        if i > 0 {
            let previous = mappings[i - 1];
            if previous.from == m.from {
                return Err((
                    i,
                    ExpiredRule::Duplicate {
                        from: m.from,
                        first: previous.to,
                        second: m.to,
                    },
                ));
            }
            if previous.from > m.from {
                return Err((
                    i,
                    ExpiredRule::Unsorted {
                        from: m.from,
                        previous: previous.from,
                    },
                ));
            }
        }
        let (from, to) = (m.from, m.to);
        if tree.get(from).is_some() {
            return Err((i, ExpiredRule::StillACategory { from, to }));
        }
        match tree.get(to) {
            None => return Err((i, ExpiredRule::UnknownReplacement { from, to })),
            Some(c) if !c.leaf || c.id == crate::tree::ROOT_ID => {
                return Err((i, ExpiredRule::ReplacementNotALeaf { from, to }));
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// Makes the file for `tree` from a service answer: sorts the pairs by expired id, drops
/// exact repeats, and checks the rules. `path` is where the file would go (for errors).
pub fn from_answer(
    pairs: impl IntoIterator<Item = ExpiredMapping>,
    tree: &CategoryTree,
    source: &str,
    path: &Path,
) -> Result<ExpiredFile, ExpiredError> {
    let mut mappings: Vec<ExpiredMapping> = pairs.into_iter().collect();
    mappings.sort();
    mappings.dedup();
    check(&mappings, tree).map_err(|(i, rule)| ExpiredError::Invalid {
        path: path.to_path_buf(),
        line: FIRST_MAPPING_LINE + i,
        rule,
    })?;
    Ok(ExpiredFile {
        tree_id: tree.meta.tree_id,
        marketplace_id: tree.meta.marketplace_id.clone(),
        version: tree.meta.version.clone(),
        tree_fingerprint: Some(fingerprint(tree)),
        source: source.to_string(),
        mappings,
    })
}

/// `file`, now checked against `tree` (whose rules it must already hold): its header names
/// `tree`, so it is in step with it. What `import` writes when a new tree keeps the mapping.
pub fn carried_to(file: &ExpiredFile, tree: &CategoryTree) -> ExpiredFile {
    ExpiredFile {
        tree_id: tree.meta.tree_id,
        marketplace_id: tree.meta.marketplace_id.clone(),
        version: tree.meta.version.clone(),
        tree_fingerprint: Some(fingerprint(tree)),
        source: file.source.clone(),
        mappings: file.mappings.clone(),
    }
}

/// Renders the file: in [`FORMAT`], or in format 1 when it has no fingerprint (a format-1
/// file read back). The same contents always give the same bytes.
pub fn to_string(file: &ExpiredFile) -> String {
    let q = |s: &str| serde_json::to_string(s).expect("strings always serialize");
    let mut out = String::with_capacity(file.mappings.len() * 28 + 256);
    out.push_str("{\n");
    let format = if file.tree_fingerprint.is_some() {
        FORMAT
    } else {
        1
    };
    let _ = writeln!(out, "  \"format\": {format},");
    let _ = writeln!(out, "  \"categoryTreeId\": {},", file.tree_id);
    let _ = writeln!(out, "  \"marketplaceId\": {},", q(&file.marketplace_id));
    let _ = writeln!(out, "  \"categoryTreeVersion\": {},", q(&file.version));
    let _ = writeln!(out, "  \"source\": {},", q(&file.source));
    let _ = writeln!(out, "  \"mappingCount\": {},", file.mappings.len());
    out.push_str("  \"expired\": [\n");
    for (i, m) in file.mappings.iter().enumerate() {
        let comma = if i + 1 < file.mappings.len() { "," } else { "" };
        let _ = writeln!(out, "    {{\"from\":{},\"to\":{}}}{comma}", m.from, m.to);
    }
    // Last, so that the mappings keep their lines (FIRST_MAPPING_LINE) in both formats.
    match file.tree_fingerprint {
        Some(f) => {
            let _ = write!(out, "  ],\n  \"treeFingerprint\": \"{f:016x}\"\n}}\n");
        }
        None => out.push_str("  ]\n}\n"),
    }
    out
}

/// Parses a file held in memory without checking it against a tree; `path` is only used in
/// errors.
pub fn parse_unchecked(text: &str, path: &Path) -> Result<ExpiredFile, ExpiredError> {
    let header: FileHeader = serde_json::from_str(text).map_err(|e| ExpiredError::Syntax {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    let syntax = |message: String| ExpiredError::Syntax {
        path: path.to_path_buf(),
        message,
    };
    let tree_fingerprint = match (header.format, &header.tree_fingerprint) {
        (1, None) => None,
        (1, Some(_)) => {
            return Err(syntax(
                "treeFingerprint is a field of format 2, not 1".into(),
            ));
        }
        (FORMAT, Some(hex)) => Some(crate::beside::parse_fingerprint(hex).ok_or_else(|| {
            syntax(format!(
                "treeFingerprint {hex:?} is not 16 hexadecimal digits"
            ))
        })?),
        (FORMAT, None) => return Err(syntax("format 2 needs treeFingerprint".into())),
        (format, _) => {
            return Err(syntax(format!(
                "format {format} is not supported (this toolkit reads formats 1 to {FORMAT}); regenerate it with `snapshot refresh` (the toolkit's snapshot command)"
            )));
        }
    };
    if header.mapping_count != header.expired.len() {
        return Err(ExpiredError::CountMismatch {
            path: path.to_path_buf(),
            stated: header.mapping_count,
            actual: header.expired.len(),
        });
    }
    Ok(ExpiredFile {
        tree_id: header.category_tree_id,
        marketplace_id: header.marketplace_id,
        version: header.category_tree_version,
        tree_fingerprint,
        source: header.source,
        mappings: header
            .expired
            .into_iter()
            .map(|m| ExpiredMapping {
                from: m.from,
                to: m.to,
            })
            .collect(),
    })
}

/// Parses a file held in memory and checks it against `tree`, the tree of the snapshot beside
/// it; `path` is only used in errors, which name its line.
pub fn parse(text: &str, path: &Path, tree: &CategoryTree) -> Result<ExpiredFile, ExpiredError> {
    checked(parse_unchecked(text, path)?, text, path, tree)
}

/// Checks `file`, parsed from `text`, against `tree` ([`parse`] without parsing again).
pub(crate) fn checked(
    file: ExpiredFile,
    text: &str,
    path: &Path,
    tree: &CategoryTree,
) -> Result<ExpiredFile, ExpiredError> {
    if file.tree_id != tree.meta.tree_id {
        return Err(ExpiredError::Invalid {
            path: path.to_path_buf(),
            line: line_where(text, |l| l.starts_with("\"categoryTreeId\"")),
            rule: ExpiredRule::WrongTree {
                expected: tree.meta.tree_id,
                found: file.tree_id,
            },
        });
    }
    check(&file.mappings, tree).map_err(|(i, rule)| ExpiredError::Invalid {
        path: path.to_path_buf(),
        line: mapping_line(text, i),
        rule,
    })?;
    Ok(file)
}

/// Reads the file beside the snapshot at `snapshot_path` and checks it against `tree` (any
/// tree: a live download, say). `Ok(None)` when there is no file: the site has no expired
/// categories.
pub fn read_beside(
    snapshot_path: &Path,
    tree: &CategoryTree,
) -> Result<Option<ExpiredFile>, ExpiredError> {
    let path = path_beside(snapshot_path);
    match read_text(&path)? {
        Some(text) => parse(&text, &path, tree).map(Some),
        None => Ok(None),
    }
}

/// Reads the file beside the snapshot at `snapshot_path`, whose tree is `tree`: like
/// [`read_beside`], but a file written for another tree ([`out_of_step`]) is
/// [`ExpiredError::OutOfStep`], whatever its mappings. This is how the build, `snapshot
/// verify` and `snapshot refresh` read a committed pair.
pub fn read_in_step(
    snapshot_path: &Path,
    tree: &CategoryTree,
) -> Result<Option<ExpiredFile>, ExpiredError> {
    let path = path_beside(snapshot_path);
    let Some(text) = read_text(&path)? else {
        return Ok(None);
    };
    let file = parse_unchecked(&text, &path)?;
    if let Some(reason) = out_of_step(&file, tree) {
        return Err(ExpiredError::OutOfStep { path, reason });
    }
    checked(file, &text, &path, tree).map(Some)
}

/// The text of the file at `path`; `None` when there is none.
fn read_text(path: &Path) -> Result<Option<String>, ExpiredError> {
    crate::beside::read_if_present(path).map_err(|e| ExpiredError::Io {
        path: path.to_path_buf(),
        source: Arc::new(e),
    })
}

/// Checks `file` against `tree` and replaces the file beside `snapshot_path` atomically.
pub fn write_beside(
    snapshot_path: &Path,
    file: &ExpiredFile,
    tree: &CategoryTree,
) -> Result<(), ExpiredError> {
    let path = path_beside(snapshot_path);
    let text = to_string(file);
    parse(&text, &path, tree)?;
    write_atomic(&path, text.as_bytes(), None).map_err(|e| ExpiredError::Io {
        path,
        source: Arc::new(e),
    })
}

/// The full path of category `id` in `tree`, `"A > B > C"` (the id alone when absent).
pub fn path_of(tree: &CategoryTree, id: u32) -> String {
    let mut names = Vec::new();
    let mut at = tree.get(id);
    while let Some(c) = at {
        if c.id == crate::tree::ROOT_ID {
            break;
        }
        names.push(c.name.as_str());
        at = c.parent.and_then(|p| tree.get(p));
        if names.len() > crate::tree::MAX_LEVEL {
            break;
        }
    }
    if names.is_empty() {
        return id.to_string();
    }
    names.reverse();
    names.join(" > ")
}

/// The 1-based line of the `index`-th mapping (0 when it cannot be found).
fn mapping_line(text: &str, index: usize) -> usize {
    text.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with("{\"from\""))
        .nth(index)
        .map_or(0, |(i, _)| i + 1)
}

fn line_where(text: &str, pred: impl Fn(&str) -> bool) -> usize {
    text.lines()
        .position(|l| pred(l.trim_start()))
        .map_or(0, |i| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Root 0 > 1 (not a leaf) > 2, 3 (leaves).
    fn tree() -> CategoryTree {
        crate::beside::test_tree(&[2, 3])
    }

    fn m(from: u32, to: u32) -> ExpiredMapping {
        ExpiredMapping { from, to }
    }

    #[test]
    fn an_answer_is_sorted_and_round_trips() {
        let path = Path::new("EBAY_US.expired.json");
        let file = from_answer([m(9, 2), m(5, 3), m(9, 2)], &tree(), "url", path).unwrap();
        assert_eq!(file.mappings, [m(5, 3), m(9, 2)]);
        let text = to_string(&file);
        assert_eq!(
            text.lines().nth(FIRST_MAPPING_LINE - 1),
            Some("    {\"from\":5,\"to\":3},")
        );
        assert_eq!(parse(&text, path, &tree()).unwrap(), file);
        assert_eq!(path_of(&tree(), 3), "C1 > C3");
    }

    #[test]
    fn each_rule_is_reported_with_the_file_and_line() {
        let path = Path::new("x/EBAY_US.expired.json");
        let file = |mappings| ExpiredFile {
            tree_id: 0,
            marketplace_id: "EBAY_US".into(),
            version: "7".into(),
            tree_fingerprint: Some(fingerprint(&tree())),
            source: "url".into(),
            mappings,
        };
        let cases = [
            (vec![m(5, 2), m(4, 2)], 10, "comes after 5"),
            (vec![m(5, 2), m(5, 3)], 10, "mapped twice, to 2 and 3"),
            (
                vec![m(2, 3)],
                9,
                "category 2 (mapped to 3) is still a category",
            ),
            (
                vec![m(0, 3)],
                9,
                "category 0 (mapped to 3) is still a category",
            ),
            (vec![m(5, 6)], 9, "mapped to 6, which is not a category"),
            (vec![m(5, 1)], 9, "mapped to 1, which is not a leaf"),
            (vec![m(5, 0)], 9, "mapped to 0, which is not a leaf"),
        ];
        for (mappings, line, message) in cases {
            let e = parse(&to_string(&file(mappings)), path, &tree()).unwrap_err();
            let text = e.to_string();
            assert!(
                text.starts_with(&format!("x/EBAY_US.expired.json:{line}: ")),
                "{text}"
            );
            assert!(text.contains(message), "{text}");
        }
        let mut other = file(vec![]);
        other.tree_id = 3;
        let e = parse(&to_string(&other), path, &tree()).unwrap_err();
        assert!(
            matches!(
                e,
                ExpiredError::Invalid {
                    line: 3,
                    rule: ExpiredRule::WrongTree {
                        expected: 0,
                        found: 3
                    },
                    ..
                }
            ),
            "{e}"
        );
        let text =
            to_string(&file(vec![m(5, 2)])).replace("\"mappingCount\": 1", "\"mappingCount\": 2");
        assert!(matches!(
            parse(&text, path, &tree()),
            Err(ExpiredError::CountMismatch {
                stated: 2,
                actual: 1,
                ..
            })
        ));
        let e = parse("{\"format\": 1,\n  \"oops\": 1}", path, &tree()).unwrap_err();
        assert!(matches!(e, ExpiredError::Syntax { .. }), "{e}");
    }

    #[test]
    fn a_file_names_its_tree_and_is_out_of_step_beside_another() {
        let path = Path::new("EBAY_US.expired.json");
        let file = from_answer([m(5, 2)], &tree(), "url", path).unwrap();
        assert_eq!(file.tree_fingerprint, Some(fingerprint(&tree())));
        let text = to_string(&file);
        assert!(text.starts_with("{\n  \"format\": 2,\n"), "{text}");
        assert!(
            text.ends_with(&format!(
                "  ],\n  \"treeFingerprint\": \"{:016x}\"\n}}\n",
                fingerprint(&tree())
            )),
            "{text}"
        );
        assert_eq!(out_of_step(&file, &tree()), None);
        // Another version; the same version with other categories (a leaf more); another
        // tree id.
        let mut newer = tree();
        newer.meta.version = "8".into();
        assert_eq!(
            out_of_step(&file, &newer).as_deref(),
            Some("written for version \"7\", the tree is version \"8\"")
        );
        let mut completed = tree();
        completed.categories[1].children.push(4);
        completed.categories.push(crate::tree::Category {
            id: 4,
            name: "C4".into(),
            parent: Some(1),
            leaf: true,
            children: vec![],
        });
        assert_ne!(fingerprint(&completed), fingerprint(&tree()));
        assert!(
            out_of_step(&file, &completed)
                .unwrap()
                .contains("other categories")
        );
        let mut other = tree();
        other.meta.tree_id = 3;
        assert!(out_of_step(&file, &other).unwrap().contains("tree 3"));
        // Names do not count: the rules do not read them.
        let mut renamed = tree();
        renamed.categories[2].name = "Other".into();
        assert_eq!(out_of_step(&file, &renamed), None);
        // Carried to a tree it holds against, it is in step with it.
        assert_eq!(out_of_step(&carried_to(&file, &newer), &newer), None);
    }

    #[test]
    fn format_1_is_still_read_and_written_back_as_it_was() {
        let path = Path::new("EBAY_US.expired.json");
        let text = "{\n  \"format\": 1,\n  \"categoryTreeId\": 0,\n  \"marketplaceId\": \"EBAY_US\",\n  \"categoryTreeVersion\": \"7\",\n  \"source\": \"url\",\n  \"mappingCount\": 1,\n  \"expired\": [\n    {\"from\":5,\"to\":2}\n  ]\n}\n";
        let file = parse(text, path, &tree()).unwrap();
        assert_eq!(file.tree_fingerprint, None);
        assert_eq!(file.mappings, [m(5, 2)]);
        assert_eq!(to_string(&file), text);
        // In step by tree id and version alone.
        assert_eq!(out_of_step(&file, &tree()), None);
        let mut newer = tree();
        newer.meta.version = "8".into();
        assert!(out_of_step(&file, &newer).is_some());
        // A fingerprint needs format 2, and format 2 needs a well-formed one.
        let fingerprinted = to_string(&ExpiredFile {
            tree_fingerprint: Some(1),
            ..file.clone()
        });
        for (bad, message) in [
            (
                fingerprinted.replacen("\"format\": 2", "\"format\": 1", 1),
                "a field of format 2",
            ),
            (
                fingerprinted.replacen("0000000000000001", "xyz", 1),
                "not 16 hexadecimal digits",
            ),
            (
                text.replacen("\"format\": 1", "\"format\": 2", 1),
                "format 2 needs treeFingerprint",
            ),
            (
                text.replacen("\"format\": 1", "\"format\": 3", 1),
                "format 3 is not supported",
            ),
        ] {
            let e = parse_unchecked(&bad, path).unwrap_err();
            assert!(e.to_string().contains(message), "{e}");
        }
    }

    #[test]
    fn read_in_step_tells_a_file_written_for_another_tree() {
        let dir = tempfile::tempdir().unwrap();
        let snapshot = dir.path().join("EBAY_US.json");
        assert_eq!(read_in_step(&snapshot, &tree()).unwrap(), None);
        // 5 → 2 holds against `tree` only; against the next version 2 is gone.
        let file = from_answer([m(5, 2)], &tree(), "url", &path_beside(&snapshot)).unwrap();
        write_beside(&snapshot, &file, &tree()).unwrap();
        assert_eq!(read_in_step(&snapshot, &tree()).unwrap(), Some(file));
        let mut next = tree();
        next.meta.version = "8".into();
        next.categories.retain(|c| c.id != 2);
        next.categories[1].children.retain(|&k| k != 2);
        assert!(matches!(
            read_beside(&snapshot, &next),
            Err(ExpiredError::Invalid {
                rule: ExpiredRule::UnknownReplacement { from: 5, to: 2 },
                ..
            })
        ));
        let e = read_in_step(&snapshot, &next).unwrap_err();
        assert!(
            matches!(&e, ExpiredError::OutOfStep { reason, .. } if reason.contains("version \"7\"")),
            "{e}"
        );
        assert!(e.to_string().contains("snapshot refresh"), "{e}");
    }

    #[test]
    fn an_absent_file_is_no_mapping() {
        let dir = tempfile::tempdir().unwrap();
        let snapshot = dir.path().join("EBAY_US.json");
        assert_eq!(read_beside(&snapshot, &tree()).unwrap(), None);
        let file = from_answer([m(5, 2)], &tree(), "url", &path_beside(&snapshot)).unwrap();
        write_beside(&snapshot, &file, &tree()).unwrap();
        assert_eq!(read_beside(&snapshot, &tree()).unwrap(), Some(file));
    }
}
