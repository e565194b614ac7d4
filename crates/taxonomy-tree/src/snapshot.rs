//! The committed snapshot format: one JSON file per site, one category per line.
//!
//! ```text
//! {
//!   "format": 1,
//!   "categoryTreeId": 0,
//!   "marketplaceId": "EBAY_US",
//!   "language": "en-US",
//!   "categoryTreeVersion": "134",
//!   "takenAt": "2026-01-02",
//!   "source": "…",
//!   "note": null,
//!   "complete": false,
//!   "categoryCount": 17104,
//!   "leafCount": 15111,
//!   "categories": [
//!     {"id":0,"name":"Root","parent":null,"leaf":false,"children":[1,…]},
//!     {"id":1,"name":"Collectibles","parent":0,"leaf":false,"children":[34,…]},
//!     …
//!   ]
//! }
//! ```
//!
//! `"complete"` says whether the file is a complete copy of its `categoryTreeVersion`
//! (`snapshot import --partial` writes `false`, e.g. for a tree cut to a depth). It is written
//! only when `false` and read as `true` when absent, so complete snapshots do not carry it. A
//! partial copy never counts as current when the service reports the same version
//! (getDefaultCategoryTreeId), so `snapshot refresh` downloads it again.
//!
//! Categories are sorted by id and the root (id 0) is the first line, so a refresh reads as a
//! line diff. [`to_string`] and [`write()`] are byte-for-byte deterministic; [`read`] validates the whole tree and
//! reports a broken rule with the file, the line and the category.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::atomic::write_atomic;
use crate::tree::{Category, CategoryTree, TreeError, TreeMeta};
use marketplaces::Marketplace;

/// The format number written in every snapshot.
pub const FORMAT: u32 = 1;

/// Why a snapshot could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The snapshot file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not a snapshot (bad JSON, missing fields, wrong format number).
    #[error("{path}: not a valid snapshot: {message}")]
    Syntax {
        /// The snapshot file.
        path: PathBuf,
        /// What the parser said, with line and column.
        message: String,
    },
    /// The tree breaks a structural rule.
    #[error("{path}:{line}: {source}")]
    Invalid {
        /// The snapshot file.
        path: PathBuf,
        /// The line of the offending category (1-based; 0 when unknown).
        line: usize,
        /// The broken rule.
        source: TreeError,
    },
    /// The file named after one site holds another site's tree (its category tree id or
    /// marketplace id is another site's).
    #[error(
        "{path}: holds {field} {found}, but the file of {site} must hold {expected} (each site's tree is in the file named after its marketplace id)"
    )]
    WrongSite {
        /// The snapshot file.
        path: PathBuf,
        /// The site the file is named after.
        site: Marketplace,
        /// `categoryTreeId` or `marketplaceId`.
        field: &'static str,
        /// That site's value.
        expected: String,
        /// The file's value.
        found: String,
    },
    /// The header's counts disagree with the categories.
    #[error("{path}: header says {field} is {stated} but the categories give {actual}")]
    CountMismatch {
        /// The snapshot file.
        path: PathBuf,
        /// `categoryCount` or `leafCount`.
        field: &'static str,
        /// The header's value.
        stated: usize,
        /// The value counted.
        actual: usize,
    },
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FileHeader {
    format: u32,
    category_tree_id: u32,
    marketplace_id: String,
    language: String,
    category_tree_version: String,
    taken_at: String,
    source: String,
    note: Option<String>,
    #[serde(default = "complete_when_absent")]
    complete: bool,
    category_count: usize,
    leaf_count: usize,
    categories: Vec<FileCategory>,
}

fn complete_when_absent() -> bool {
    true
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FileCategory {
    id: u32,
    name: String,
    parent: Option<u32>,
    leaf: bool,
    children: Vec<u32>,
}

/// Renders a tree in the snapshot format. The same tree always gives the same bytes.
pub fn to_string(tree: &CategoryTree) -> String {
    let m = &tree.meta;
    let mut out = String::with_capacity(tree.categories.len() * 64 + 512);
    let q = |s: &str| serde_json::to_string(s).expect("strings always serialize");
    out.push_str("{\n");
    let _ = writeln!(out, "  \"format\": {FORMAT},");
    let _ = writeln!(out, "  \"categoryTreeId\": {},", m.tree_id);
    let _ = writeln!(out, "  \"marketplaceId\": {},", q(&m.marketplace_id));
    let _ = writeln!(out, "  \"language\": {},", q(&m.language));
    let _ = writeln!(out, "  \"categoryTreeVersion\": {},", q(&m.version));
    let _ = writeln!(out, "  \"takenAt\": {},", q(&m.taken_at));
    let _ = writeln!(out, "  \"source\": {},", q(&m.source));
    match &m.note {
        Some(note) => {
            let _ = writeln!(out, "  \"note\": {},", q(note));
        }
        None => out.push_str("  \"note\": null,\n"),
    }
    if !m.complete {
        out.push_str("  \"complete\": false,\n");
    }
    let _ = writeln!(out, "  \"categoryCount\": {},", tree.len());
    let _ = writeln!(out, "  \"leafCount\": {},", tree.leaf_count());
    out.push_str("  \"categories\": [\n");
    for (i, c) in tree.categories.iter().enumerate() {
        let _ = write!(
            out,
            "    {{\"id\":{},\"name\":{},\"parent\":",
            c.id,
            q(&c.name)
        );
        match c.parent {
            Some(p) => {
                let _ = write!(out, "{p}");
            }
            None => out.push_str("null"),
        }
        let _ = write!(out, ",\"leaf\":{},\"children\":[", c.leaf);
        for (j, child) in c.children.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            let _ = write!(out, "{child}");
        }
        out.push_str("]}");
        if i + 1 < tree.categories.len() {
            out.push(',');
        }
        out.push('\n');
    }
    out.push_str("  ]\n}\n");
    out
}

/// Parses and validates a snapshot held in memory; `path` is only used in errors.
pub fn parse(text: &str, path: &Path) -> Result<CategoryTree, SnapshotError> {
    let header: FileHeader = serde_json::from_str(text).map_err(|e| SnapshotError::Syntax {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    if header.format != FORMAT {
        return Err(SnapshotError::Syntax {
            path: path.to_path_buf(),
            message: format!(
                "format {} is not supported (this toolkit reads format {FORMAT}); regenerate it with the `snapshot` command (`snapshot refresh`)",
                header.format
            ),
        });
    }
    let tree = CategoryTree {
        meta: TreeMeta {
            tree_id: header.category_tree_id,
            marketplace_id: header.marketplace_id,
            language: header.language,
            version: header.category_tree_version,
            taken_at: header.taken_at,
            source: header.source,
            note: header.note,
            complete: header.complete,
        },
        categories: header
            .categories
            .into_iter()
            .map(|c| Category {
                id: c.id,
                name: c.name,
                parent: c.parent,
                leaf: c.leaf,
                children: c.children,
            })
            .collect(),
    };
    tree.validate().map_err(|source| SnapshotError::Invalid {
        path: path.to_path_buf(),
        line: match (&source, source.category_id()) {
            (TreeError::BadVersion { .. }, _) => text
                .lines()
                .position(|l| l.trim_start().starts_with("\"categoryTreeVersion\""))
                .map_or(0, |i| i + 1),
            (_, id) => id.map_or(0, |id| line_of(text, id)),
        },
        source,
    })?;
    for (field, stated, actual) in [
        ("categoryCount", header.category_count, tree.len()),
        ("leafCount", header.leaf_count, tree.leaf_count()),
    ] {
        if stated != actual {
            return Err(SnapshotError::CountMismatch {
                path: path.to_path_buf(),
                field,
                stated,
                actual,
            });
        }
    }
    Ok(tree)
}

/// Reads and validates the snapshot at `path`.
pub fn read(path: &Path) -> Result<CategoryTree, SnapshotError> {
    let text = std::fs::read_to_string(path).map_err(|source| SnapshotError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse(&text, path)
}

/// The marketplaces that have a snapshot file in `dir` (`EBAY_US.json` …), in the order of
/// [`Marketplace::ALL`]. A directory that cannot be read has none.
pub fn sites_in(dir: &Path) -> Vec<Marketplace> {
    Marketplace::ALL
        .into_iter()
        .filter(|site| dir.join(site.snapshot_file_name()).is_file())
        .collect()
}

/// Reads and validates the committed snapshot of `site` in `dir` (`EBAY_US.json` …) and checks
/// that it is that site's tree: its category tree id and marketplace id are the site's.
///
/// This is every check a snapshot gets when it is loaded: the build (`taxonomy-data`'s build
/// script) and `snapshot verify` both call it, so verify passes exactly what the build accepts.
pub fn read_site(site: Marketplace, dir: &Path) -> Result<CategoryTree, SnapshotError> {
    let path = dir.join(site.snapshot_file_name());
    let tree = read(&path)?;
    let wrong = |field, expected: String, found: String| SnapshotError::WrongSite {
        path: path.clone(),
        site,
        field,
        expected,
        found,
    };
    // The site's default tree, or its tree in its other language (Canada's French tree).
    if Marketplace::from_tree_id(tree.meta.tree_id) != Some(site) {
        let expected = match site.other_tree() {
            Some((language, other)) => format!("{} (or {other} in {language})", site.tree_id()),
            None => site.tree_id().to_string(),
        };
        return Err(wrong(
            "categoryTreeId",
            expected,
            tree.meta.tree_id.to_string(),
        ));
    }
    // As the import pipeline compares them (`pipeline::prepare_tree`).
    if !tree
        .meta
        .marketplace_id
        .eq_ignore_ascii_case(site.marketplace_id())
    {
        return Err(wrong(
            "marketplaceId",
            format!("{:?}", site.marketplace_id()),
            format!("{:?}", tree.meta.marketplace_id),
        ));
    }
    Ok(tree)
}

/// Validates `tree` and replaces the snapshot at `path` atomically. On any error the file on
/// disk is left as it was.
pub fn write(path: &Path, tree: &CategoryTree) -> Result<(), SnapshotError> {
    tree.validate().map_err(|source| SnapshotError::Invalid {
        path: path.to_path_buf(),
        line: 0,
        source,
    })?;
    let text = to_string(tree);
    // Belt and braces: what goes to disk must read back as the same tree.
    let reread = parse(&text, path)?;
    debug_assert_eq!(&reread, tree);
    write_atomic(path, text.as_bytes(), None).map_err(|source| SnapshotError::Io {
        path: path.to_path_buf(),
        source,
    })
}

/// The 1-based line that holds category `id` (0 when it cannot be found).
fn line_of(text: &str, id: u32) -> usize {
    let needle = format!("{{\"id\":{id},");
    text.lines()
        .position(|l| l.trim_start().starts_with(&needle))
        .map_or(0, |i| i + 1)
}
