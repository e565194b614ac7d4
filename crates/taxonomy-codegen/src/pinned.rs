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
//! A leaf without aspects, which getItemAspectsForCategory answers `204 No Content`, is pinned
//! with the answer `{}`: a category whose rules are that it has no aspect.
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
    /// The API host it was fetched from (`api.ebay.com`), when known (`fetchedFrom`; files
    /// written before it was recorded have none).
    pub fetched_from: Option<String>,
    /// True when the server marked the answer as made up (`madeUp`): taken from the
    /// toolkit's fake marketplace, whose rules are not eBay's for any marketplace. The build
    /// warns about such a file.
    pub made_up: bool,
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
        if let Some(host) = &self.fetched_from {
            let _ = writeln!(out, "  \"fetchedFrom\": {},", text(host));
        }
        if self.made_up {
            let _ = writeln!(out, "  \"madeUp\": true,");
        }
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
            fetched_from: match value.get("fetchedFrom") {
                None => None,
                Some(_) => Some(string("fetchedFrom")?),
            },
            made_up: match value.get("madeUp") {
                None => false,
                Some(v) => v
                    .as_bool()
                    .ok_or_else(|| invalid("\"madeUp\" is not true or false".into()))?,
            },
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
            fetched_from: None,
            made_up: false,
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

/// One aspect's rule as read from a pinned answer, as `taxonomy-model`'s `AspectRules::new`
/// reads it (the comparison test in `tests/it/pinned_aspects.rs` holds the two together).
#[derive(Debug, Clone, PartialEq)]
struct Rule {
    name: String,
    single: bool,
    selection_only: bool,
    enabled_for_variations: bool,
    required: bool,
    max_length: Option<u32>,
    format: taxonomy_aspects::Format,
    expected_required_by: Option<String>,
    values: Vec<String>,
    /// (value position, control aspect, its allowing values).
    constraints: Vec<(u32, String, Vec<String>)>,
}

/// The most aspects (distinct names) a pinned category may have: `PinnedRules` holds the
/// required aspects as 16-bit indexes.
const MAX_ASPECTS: usize = 1 << 16;

/// Why a pinned answer cannot be compiled in because one of its fields is missing.
fn missing(at: &str, field: String) -> String {
    format!("{at}: {field} is missing; pin the category again with `snapshot aspects pin`")
}

fn rules_of(pinned: &PinnedAspects) -> Result<Vec<Rule>, String> {
    let at = format!("{} category {}", pinned.site, pinned.category_id);
    let aspects = pinned.answer["aspects"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut rules: Vec<Rule> = Vec::with_capacity(aspects.len());
    let mut seen = std::collections::HashSet::new();
    for (i, a) in aspects.iter().enumerate() {
        let name = a["localizedAspectName"]
            .as_str()
            .ok_or_else(|| missing(&at, format!("aspects[{i}].localizedAspectName")))?;
        // A name the category repeats keeps its first rule.
        if !seen.insert(taxonomy_aspects::key(name)) {
            continue;
        }
        let c = &a["aspectConstraint"];
        let text = |field: &str| c[field].as_str();
        let required = c["aspectRequired"].as_bool().unwrap_or(false);
        let mut values = Vec::new();
        let mut constraints = Vec::new();
        for (k, v) in a["aspectValues"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let value = v["localizedValue"].as_str().ok_or_else(|| {
                missing(
                    &at,
                    format!("aspects[{i}].aspectValues[{k}].localizedValue"),
                )
            })?;
            values.push(value.to_owned());
            for vc in v["valueConstraints"].as_array().into_iter().flatten() {
                let Some(control) = vc["applicableForLocalizedAspectName"].as_str() else {
                    continue;
                };
                let allowed = vc["applicableForLocalizedAspectValues"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|x| x.as_str().map(str::to_owned))
                    .collect();
                constraints.push((k as u32, control.to_owned(), allowed));
            }
        }
        rules.push(Rule {
            name: name.to_owned(),
            single: text("itemToAspectCardinality") == Some("SINGLE"),
            selection_only: text("aspectMode") == Some("SELECTION_ONLY"),
            enabled_for_variations: c["aspectEnabledForVariations"].as_bool().unwrap_or(false),
            required,
            max_length: c["aspectMaxLength"]
                .as_u64()
                .and_then(|n| u32::try_from(n).ok()),
            format: taxonomy_aspects::Format::from_wire(
                text("aspectDataType"),
                text("aspectFormat"),
            ),
            expected_required_by: if required {
                None
            } else {
                text("expectedRequiredByDate")
                    .filter(|d| !d.trim().is_empty())
                    .map(str::to_owned)
            },
            values,
            constraints,
        });
    }
    if rules.len() > MAX_ASPECTS {
        return Err(format!(
            "{at}: {} aspects, more than the {MAX_ASPECTS} a pinned category can hold, so it \
             cannot be pinned (check its listings against the fetched answer; remove \
             {PINNED_DIR}/{} if it is there)",
            rules.len(),
            file_name(pinned.site, pinned.category_id)
        ));
    }
    Ok(rules)
}

/// The perfect hash of `keys` (each distinct key at its first position), as
/// `taxonomy_aspects::TextTable` source: any distinct texts have one
/// (`PerfectHash::build_texts`).
fn text_table(keys: &[String], what: &str) -> Result<String, String> {
    let mut entries: Vec<(&str, u32)> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, k) in keys.iter().enumerate() {
        // The same key again: its first position stands.
        if seen.insert(k.as_str()) {
            let position = u32::try_from(i).map_err(|_| format!("{what}: {i} texts"))?;
            entries.push((k, position));
        }
    }
    if entries.is_empty() {
        return Ok(
            "::taxonomy_aspects::TextTable { seed: 0, bucket_shift: 63, pilots: &[], slots: &[] }"
                .into(),
        );
    }
    let ph =
        crate::phash::PerfectHash::build_texts(&entries).map_err(|e| format!("{what}: {e}"))?;
    Ok(format!(
        "::taxonomy_aspects::TextTable {{ seed: {:#018x}, bucket_shift: {}, pilots: &{:?}, slots: &[{}] }}",
        ph.seed,
        ph.bucket_shift,
        ph.pilots,
        ph.slots
            .iter()
            .map(|s| format!("{s:#x}"))
            .collect::<Vec<_>>()
            .join(", ")
    ))
}

fn strs(items: &[String]) -> String {
    format!("&{items:?}")
}

/// The Rust source of a `static {ident}: ::taxonomy_aspects::PinnedRules` holding the rules
/// of `pinned` (deterministic), and the bytes of static data it holds (strings and tables,
/// not counting the slices' own pointers). An error names the category and why it cannot be
/// compiled in (a missing name or value, more than 65,536 aspects); `snapshot aspects pin`
/// runs this before it writes a file, so what it writes builds.
pub fn rules_source(pinned: &PinnedAspects, ident: &str) -> Result<(String, usize), String> {
    let at = format!("{} category {}", pinned.site, pinned.category_id);
    let rules = rules_of(pinned)?;
    let mut bytes = 0usize;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n/// The pinned aspect rules of {} category {} (tree version {}, taken {}).",
        pinned.site,
        pinned.category_id,
        pinned.tree_version.escape_debug(),
        pinned.taken_at.escape_debug()
    );
    let _ = writeln!(
        out,
        "#[cfg(feature = \"aspects\")]\nstatic {ident}: ::taxonomy_aspects::PinnedRules = ::taxonomy_aspects::PinnedRules {{"
    );
    let _ = writeln!(out, "    category_id: {},", pinned.category_id);
    let _ = writeln!(out, "    tree_version: {:?},", pinned.tree_version);
    let _ = writeln!(out, "    taken_at: {:?},", pinned.taken_at);
    out.push_str("    aspects: &[\n");
    for rule in &rules {
        let keys: Vec<String> = rule
            .values
            .iter()
            .map(|v| taxonomy_aspects::key(v))
            .collect();
        // The strings and their slice entries (16 bytes each), the table's slots below.
        bytes += rule.name.len()
            + rule.values.iter().map(String::len).sum::<usize>()
            + 16 * rule.values.len();
        let table = text_table(&keys, &format!("{at}: aspect {:?}", rule.name))?;
        bytes += table.matches("0x").count() * 8;
        let _ = writeln!(out, "        ::taxonomy_aspects::PinnedAspect {{");
        let _ = writeln!(out, "            name: {:?},", rule.name);
        let _ = writeln!(out, "            single: {},", rule.single);
        let _ = writeln!(out, "            selection_only: {},", rule.selection_only);
        let _ = writeln!(
            out,
            "            enabled_for_variations: {},",
            rule.enabled_for_variations
        );
        let _ = writeln!(out, "            max_length: {:?},", rule.max_length);
        let _ = writeln!(
            out,
            "            format: ::taxonomy_aspects::Format::{},",
            rule.format.variant()
        );
        let _ = writeln!(
            out,
            "            expected_required_by: {:?},",
            rule.expected_required_by
        );
        let _ = writeln!(out, "            values: {},", strs(&rule.values));
        let _ = writeln!(out, "            value_table: {table},");
        out.push_str("            constraints: &[");
        for (value, control, allowed) in &rule.constraints {
            let allowed_keys: Vec<String> =
                allowed.iter().map(|a| taxonomy_aspects::key(a)).collect();
            bytes += control.len() * 2 + allowed.iter().map(String::len).sum::<usize>() * 2 + 40;
            let _ = write!(
                out,
                "\n                ::taxonomy_aspects::PinnedConstraint {{ value: {value}, control: {control:?}, control_key: {:?}, allowed: {}, allowed_keys: {} }},",
                taxonomy_aspects::key(control),
                strs(allowed),
                strs(&allowed_keys)
            );
        }
        out.push_str("],\n        },\n");
    }
    out.push_str("    ],\n");
    let name_keys: Vec<String> = rules
        .iter()
        .map(|r| taxonomy_aspects::key(&r.name))
        .collect();
    let table = text_table(&name_keys, &format!("{at}: aspect names"))?;
    bytes += name_keys.iter().map(String::len).sum::<usize>() + table.matches("0x").count() * 8;
    let _ = writeln!(out, "    name_keys: {},", strs(&name_keys));
    let _ = writeln!(out, "    names: {table},");
    // 16-bit indexes: `rules_of` refused more than `MAX_ASPECTS` aspects.
    let required: Vec<u16> = rules
        .iter()
        .enumerate()
        .filter(|(_, r)| r.required)
        .map(|(i, _)| u16::try_from(i).map_err(|_| format!("{at}: aspect {i} of {}", rules.len())))
        .collect::<Result<_, _>>()?;
    let _ = writeln!(out, "    required: &{required:?},");
    out.push_str("};\n");
    Ok((out, bytes))
}

#[cfg(test)]
mod size_tests {
    use super::*;

    /// The repository's pinned 179 and the recorded real answer of 27386 (800 brands): the
    /// generated source is the same every time. `cargo test -p taxonomy-codegen static_data --
    /// --nocapture` prints the static data against the JSON it came from.
    #[test]
    fn static_data_is_deterministic() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let pinned = PinnedAspects::read(&root.join("snapshots/pinned/EBAY_US-179.json")).unwrap();
        let recorded = std::fs::read_to_string(
            root.join("tests/fixtures/aspects/ebay-us-27386-graphics-cards.json"),
        )
        .unwrap();
        let graphics = PinnedAspects {
            category_id: 27386,
            answer: serde_json::from_str(&recorded).unwrap(),
            ..pinned.clone()
        };
        for p in [pinned, graphics] {
            let (source, bytes) = rules_source(&p, "PINNED").unwrap();
            assert_eq!(rules_source(&p, "PINNED").unwrap().0, source);
            let json = serde_json::to_string(&p.answer).unwrap().len();
            println!(
                "{} category {}: {bytes} bytes of static data from {json} bytes of JSON (compact), {} of generated source",
                p.site,
                p.category_id,
                source.len()
            );
        }
    }
}
