//! Pinned aspects: a category's getItemAspectsForCategory answer kept beside the snapshots
//! (`snapshot aspects pin`), one file a category, `pinned/EBAY_US-179.json`, committed by the
//! user as the snapshots are, and compiled into `taxonomy-data` with the trees.
//!
//! The file is the answer as the service sent it, normalised (object keys sorted, arrays in
//! the service's order, two-space indentation), under a header that says where and when it was
//! taken:
//!
//! ```text
//! {
//!   "format": 1,
//!   "marketplaceId": "EBAY_US",
//!   "categoryTreeId": 0,
//!   "categoryTreeVersion": "134",
//!   "categoryId": 179,
//!   "takenAt": "2026-11-26",
//!   "source": "getItemAspectsForCategory",
//!   "answer": { "aspects": [ … ] }
//! }
//! ```
//!
//! The same answer gives the same bytes. Reading it needs only `serde_json` (already a
//! dependency of `taxonomy-tree`), so the build compiles nothing more for it.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use marketplaces::Marketplace;
use serde_json::{Map, Value};

/// The directory of the pinned files inside a snapshots directory.
pub const PINNED_DIR: &str = "pinned";

/// The format version this module writes and reads.
pub const FORMAT: u64 = 1;

/// One pinned category: its header and the answer.
#[derive(Debug, Clone, PartialEq)]
pub struct PinnedAspects {
    /// The marketplace.
    pub site: Marketplace,
    /// The category tree the answer is of.
    pub tree_id: u32,
    /// That tree's version when the answer was taken (getDefaultCategoryTreeId).
    pub tree_version: String,
    /// The leaf category.
    pub category_id: u32,
    /// The date it was taken (`YYYY-MM-DD`, UTC).
    pub taken_at: String,
    /// Where it came from (`getItemAspectsForCategory`).
    pub source: String,
    /// The answer, normalised.
    pub answer: Value,
}

/// Why a pinned file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PinnedError {
    /// The file or the directory could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The path.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not a pinned-aspects file.
    #[error("{path}: {problem}; pin the category again with `snapshot aspects pin`")]
    Invalid {
        /// The path.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
}

/// The file name of a pinned category: `EBAY_US-179.json`.
pub fn file_name(site: Marketplace, category_id: u32) -> String {
    format!("{}-{category_id}.json", site.marketplace_id())
}

/// The path of a pinned category in `snapshots_dir`.
pub fn path_of(snapshots_dir: &Path, site: Marketplace, category_id: u32) -> PathBuf {
    snapshots_dir
        .join(PINNED_DIR)
        .join(file_name(site, category_id))
}

/// `value` with every object's keys in sorted order (arrays keep theirs).
pub fn normalised(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let mut out = Map::new();
            for k in keys {
                out.insert(k.clone(), normalised(&map[k]));
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(normalised).collect()),
        other => other.clone(),
    }
}

impl PinnedAspects {
    /// The file's text: the header, then the normalised answer; the same content always
    /// gives the same bytes.
    pub fn to_text(&self) -> String {
        let answer =
            serde_json::to_string_pretty(&normalised(&self.answer)).unwrap_or_else(|_| "{}".into());
        let mut out = String::new();
        let text = |s: &str| Value::String(s.to_owned()).to_string();
        let _ = writeln!(out, "{{\n  \"format\": {FORMAT},");
        let _ = writeln!(
            out,
            "  \"marketplaceId\": {},",
            text(self.site.marketplace_id())
        );
        let _ = writeln!(out, "  \"categoryTreeId\": {},", self.tree_id);
        let _ = writeln!(
            out,
            "  \"categoryTreeVersion\": {},",
            text(&self.tree_version)
        );
        let _ = writeln!(out, "  \"categoryId\": {},", self.category_id);
        let _ = writeln!(out, "  \"takenAt\": {},", text(&self.taken_at));
        let _ = writeln!(out, "  \"source\": {},", text(&self.source));
        let _ = writeln!(out, "  \"answer\": {}", answer.replace('\n', "\n  "));
        out.push_str("}\n");
        out
    }

    /// Reads a pinned file's text (`path` names it in errors).
    pub fn parse(text: &str, path: &Path) -> Result<Self, PinnedError> {
        let invalid = |problem: String| PinnedError::Invalid {
            path: path.to_owned(),
            problem,
        };
        let value: Value =
            serde_json::from_str(text).map_err(|e| invalid(format!("not JSON ({e})")))?;
        let field = |name: &str| {
            value
                .get(name)
                .ok_or_else(|| invalid(format!("no \"{name}\"")))
        };
        let number = |name: &str| {
            field(name)?
                .as_u64()
                .and_then(|n| u32::try_from(n).ok())
                .ok_or_else(|| invalid(format!("\"{name}\" is not a number")))
        };
        let string = |name: &str| {
            field(name)?
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| invalid(format!("\"{name}\" is not a string")))
        };
        if number("format")? as u64 != FORMAT {
            return Err(invalid(format!(
                "format {} (expected {FORMAT})",
                field("format")?
            )));
        }
        let id = string("marketplaceId")?;
        let site = Marketplace::from_marketplace_id(&id)
            .ok_or_else(|| invalid(format!("unknown marketplace {id:?}")))?;
        let answer = field("answer")?.clone();
        if !answer.is_object() {
            return Err(invalid("\"answer\" is not an object".into()));
        }
        Ok(Self {
            site,
            tree_id: number("categoryTreeId")?,
            tree_version: string("categoryTreeVersion")?,
            category_id: number("categoryId")?,
            taken_at: string("takenAt")?,
            source: string("source")?,
            answer,
        })
    }

    /// Reads the pinned file at `path`.
    pub fn read(path: &Path) -> Result<Self, PinnedError> {
        let text = std::fs::read_to_string(path).map_err(|source| PinnedError::Io {
            path: path.to_owned(),
            source,
        })?;
        let pinned = Self::parse(&text, path)?;
        let expected = file_name(pinned.site, pinned.category_id);
        if path.file_name().and_then(|n| n.to_str()) != Some(expected.as_str()) {
            return Err(PinnedError::Invalid {
                path: path.to_owned(),
                problem: format!("it holds {expected}"),
            });
        }
        Ok(pinned)
    }
}

/// The paths of the pinned files in `snapshots_dir` (`pinned/EBAY_*-*.json`), sorted; none
/// when there is no `pinned/` directory.
pub fn files_in(snapshots_dir: &Path) -> Result<Vec<PathBuf>, PinnedError> {
    let dir = snapshots_dir.join(PINNED_DIR);
    let entries = match std::fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(PinnedError::Io { path: dir, source }),
    };
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| PinnedError::Io {
            path: dir.clone(),
            source,
        })?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with("EBAY_") && name.ends_with(".json") {
            files.push(entry.path());
        }
    }
    files.sort();
    Ok(files)
}

/// Every pinned category of `snapshots_dir`, in file-name order.
pub fn read_all(snapshots_dir: &Path) -> Result<Vec<PinnedAspects>, PinnedError> {
    files_in(snapshots_dir)?
        .iter()
        .map(|p| PinnedAspects::read(p))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_normalised_and_reads_back() {
        let pinned = PinnedAspects {
            site: Marketplace::Us,
            tree_id: 0,
            tree_version: "134".into(),
            category_id: 179,
            taken_at: "2026-11-26".into(),
            source: "getItemAspectsForCategory".into(),
            answer: serde_json::json!({"aspects": [{"localizedAspectName": "Brand",
                "aspectConstraint": {"aspectRequired": true, "aspectMode": "FREE_TEXT"}}]}),
        };
        let text = pinned.to_text();
        assert!(text.contains("\"aspectMode\": \"FREE_TEXT\",\n          \"aspectRequired\""));
        let back = PinnedAspects::parse(&text, Path::new("EBAY_US-179.json")).unwrap();
        assert_eq!(back, pinned);
        assert_eq!(back.to_text(), text);
        let err = PinnedAspects::parse("{\"format\": 2}", Path::new("x")).unwrap_err();
        assert!(err.to_string().contains("format 2"), "{err}");
    }
}
