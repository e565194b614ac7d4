//! What changed between two fetchItemAspects files: the comparison eBay's taxonomy-sdk makes
//! (categories added and removed; per category, aspects added, removed and changed: their
//! constraint fields and their values).

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::{Aspect, AspectsFileError, CategoryAspects, ItemAspectsReader};

/// The differences between an older and a newer fetchItemAspects file of one tree.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AspectsDiff {
    /// Categories only the newer file has, with their aspects.
    pub new_categories: Vec<CategoryAspects>,
    /// Categories only the older file has.
    pub removed_categories: Vec<u32>,
    /// Categories in both whose aspects changed, in the newer file's order.
    pub modified_categories: Vec<CategoryChange>,
}

/// The changes of one category's aspects.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CategoryChange {
    /// The category.
    pub category_id: u32,
    /// Its name in the newer file.
    pub category_name: String,
    /// Aspects only the newer file has.
    pub new_aspects: Vec<Aspect>,
    /// Aspects only the older file has (their names).
    pub removed_aspects: Vec<String>,
    /// Aspects in both that changed.
    pub modified_aspects: Vec<AspectChange>,
}

/// The changes of one aspect.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AspectChange {
    /// The aspect's name.
    pub name: String,
    /// The constraint fields that changed.
    pub constraint: Vec<ConstraintChange>,
    /// Values only the newer file lists.
    pub new_values: Vec<String>,
    /// Values only the older file lists.
    pub removed_values: Vec<String>,
    /// Whether the aspect is `SELECTION_ONLY` in the newer file (a removed value then
    /// makes listings that use it fail).
    pub selection_only: bool,
}

/// One constraint field of an aspect that changed (`aspectRequired`, `aspectUsage`, …),
/// with its old and new value as sent (`None`: absent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstraintChange {
    /// The field's wire name.
    pub field: &'static str,
    /// Its value in the older file.
    pub old: Option<Value>,
    /// Its value in the newer file.
    pub new: Option<Value>,
}

/// The constraint fields of an aspect, by wire name, as JSON values (absent ones left out).
fn constraint_fields(a: &Aspect) -> Vec<(&'static str, Option<Value>)> {
    let text = |v: Option<&str>| v.map(|s| json!(s));
    vec![
        (
            "aspectDataType",
            text(a.data_type.as_ref().map(|v| v.as_str())),
        ),
        (
            "itemToAspectCardinality",
            text(a.cardinality.as_ref().map(|v| v.as_str())),
        ),
        ("aspectMode", text(a.mode.as_ref().map(|v| v.as_str()))),
        ("aspectRequired", Some(json!(a.required))),
        ("aspectUsage", text(a.usage.as_ref().map(|v| v.as_str()))),
        (
            "aspectEnabledForVariations",
            Some(json!(a.enabled_for_variations)),
        ),
        ("aspectMaxLength", a.max_length.map(|n| json!(n))),
        ("aspectFormat", text(a.format.as_deref())),
        (
            "aspectAdvancedDataType",
            text(a.advanced_data_type.as_ref().map(|v| v.as_str())),
        ),
        (
            "aspectApplicableTo",
            (!a.applicable_to.is_empty()).then(|| {
                json!(
                    a.applicable_to
                        .iter()
                        .map(|v| v.as_str())
                        .collect::<Vec<_>>()
                )
            }),
        ),
        (
            "expectedRequiredByDate",
            text(a.expected_required_by_date.as_deref()),
        ),
    ]
}

impl AspectChange {
    /// The changes of `old` into `new` (same name); `None` when nothing changed.
    fn between(old: &Aspect, new: &Aspect) -> Option<Self> {
        let constraint: Vec<ConstraintChange> = constraint_fields(old)
            .into_iter()
            .zip(constraint_fields(new))
            .filter(|((_, o), (_, n))| o != n)
            .map(|((field, old), (_, new))| ConstraintChange { field, old, new })
            .collect();
        // Value lists run to thousands (Brand, Model): compare through sets, keep the order.
        let old_values: HashSet<&str> = old.value_names().collect();
        let new_values: HashSet<&str> = new.value_names().collect();
        let change = Self {
            name: new.name.clone(),
            constraint,
            new_values: new
                .value_names()
                .filter(|v| !old_values.contains(v))
                .map(str::to_owned)
                .collect(),
            removed_values: old
                .value_names()
                .filter(|v| !new_values.contains(v))
                .map(str::to_owned)
                .collect(),
            selection_only: new.mode == Some(crate::AspectMode::SelectionOnly),
        };
        let changed = !change.constraint.is_empty()
            || !change.new_values.is_empty()
            || !change.removed_values.is_empty();
        changed.then_some(change)
    }

    /// `Some(true)` when the aspect became required, `Some(false)` when it stopped being.
    pub fn became_required(&self) -> Option<bool> {
        self.constraint
            .iter()
            .find(|c| c.field == "aspectRequired")
            .map(|c| c.new == Some(json!(true)))
    }
}

impl CategoryChange {
    fn between(old: &CategoryAspects, new: &CategoryAspects) -> Option<Self> {
        let by_name: HashMap<&str, &Aspect> =
            old.aspects.iter().map(|a| (a.name.as_str(), a)).collect();
        let mut change = Self {
            category_id: new.category.id,
            category_name: new.category.name.clone(),
            ..Self::default()
        };
        for aspect in &new.aspects {
            match by_name.get(aspect.name.as_str()) {
                None => change.new_aspects.push(aspect.clone()),
                Some(before) => change
                    .modified_aspects
                    .extend(AspectChange::between(before, aspect)),
            }
        }
        // By hash: a category can list tens of thousands of aspects, and a scan of the
        // newer list for each older aspect made the diff quadratic.
        let new_names: HashSet<&str> = new.aspects.iter().map(|a| a.name.as_str()).collect();
        change.removed_aspects = old
            .aspects
            .iter()
            .filter(|a| !new_names.contains(a.name.as_str()))
            .map(|a| a.name.clone())
            .collect();
        let changed = !change.new_aspects.is_empty()
            || !change.removed_aspects.is_empty()
            || !change.modified_aspects.is_empty();
        changed.then_some(change)
    }
}

impl AspectsDiff {
    /// Compares two fetchItemAspects files (gzipped, as downloaded, or plain JSON). The older
    /// file is held
    /// in memory (its entries decoded); the newer one streams past it entry by entry.
    pub fn between_files(old: &Path, new: &Path) -> Result<Self, AspectsFileError> {
        let mut older: Vec<Option<CategoryAspects>> = Vec::new();
        let mut index = HashMap::new();
        for entry in ItemAspectsReader::open_gzipped_or_plain(old)? {
            let entry = entry?;
            index.insert(entry.category.id, older.len());
            older.push(Some(entry));
        }
        let mut diff = Self::default();
        for entry in ItemAspectsReader::open_gzipped_or_plain(new)? {
            let entry = entry?;
            match index.get(&entry.category.id).and_then(|&i| older[i].take()) {
                None => diff.new_categories.push(entry),
                Some(before) => diff
                    .modified_categories
                    .extend(CategoryChange::between(&before, &entry)),
            }
        }
        diff.removed_categories = older.into_iter().flatten().map(|c| c.category.id).collect();
        Ok(diff)
    }

    /// Compares two sets of categories' aspects held in memory (getItemAspectsForCategory
    /// answers as [`CategoryAspects`], pinned ones for example), as
    /// [`between_files`](Self::between_files) compares two files.
    pub fn between_categories(
        old: impl IntoIterator<Item = CategoryAspects>,
        new: impl IntoIterator<Item = CategoryAspects>,
    ) -> Self {
        let mut older: Vec<Option<CategoryAspects>> = Vec::new();
        let mut index = HashMap::new();
        for entry in old {
            index.insert(entry.category.id, older.len());
            older.push(Some(entry));
        }
        let mut diff = Self::default();
        for entry in new {
            match index.get(&entry.category.id).and_then(|&i| older[i].take()) {
                None => diff.new_categories.push(entry),
                Some(before) => diff
                    .modified_categories
                    .extend(CategoryChange::between(&before, &entry)),
            }
        }
        diff.removed_categories = older.into_iter().flatten().map(|c| c.category.id).collect();
        diff
    }

    /// Whether the two files have the same aspects.
    pub fn is_empty(&self) -> bool {
        self.new_categories.is_empty()
            && self.removed_categories.is_empty()
            && self.modified_categories.is_empty()
    }

    /// The differences in the shape eBay's taxonomy-sdk writes them (`newCategories`,
    /// `removedCategories`, `modifiedCategories` with `modifiedAspects` (their
    /// `modifiedConstraint`: each changed field's new value), `removedAspects`,
    /// `newAspects`), so tools written for it read ours.
    pub fn to_json(&self) -> Value {
        let aspect = |a: &Aspect| {
            let mut constraint = Map::new();
            for (field, value) in constraint_fields(a) {
                if let Some(v) = value {
                    constraint.insert(field.into(), v);
                }
            }
            let mut out = json!({"localizedAspectName": a.name, "aspectConstraint": constraint});
            if !a.values.is_empty() {
                out["aspectValues"] = a
                    .value_names()
                    .map(|v| json!({"localizedValue": v}))
                    .collect();
            }
            out
        };
        let mut out = Map::new();
        if !self.new_categories.is_empty() {
            out.insert(
                "newCategories".into(),
                self.new_categories
                    .iter()
                    .map(|c| {
                        json!({"category": {"categoryId": c.category.id.to_string()},
                        "aspects": c.aspects.iter().map(aspect).collect::<Vec<_>>()})
                    })
                    .collect(),
            );
        }
        if !self.removed_categories.is_empty() {
            out.insert(
                "removedCategories".into(),
                self.removed_categories
                    .iter()
                    .map(|id| json!(id.to_string()))
                    .collect(),
            );
        }
        if !self.modified_categories.is_empty() {
            let categories = self.modified_categories.iter().map(|c| {
                let mut category = json!({"categoryId": c.category_id.to_string()});
                if !c.modified_aspects.is_empty() {
                    category["modifiedAspects"] = c
                        .modified_aspects
                        .iter()
                        .map(|m| {
                            let mut out = json!({"localizedAspectName": m.name});
                            let changed: Map<String, Value> = m
                                .constraint
                                .iter()
                                .filter_map(|c| Some((c.field.to_owned(), c.new.clone()?)))
                                .collect();
                            if !changed.is_empty() {
                                out["modifiedConstraint"] = Value::Object(changed);
                            }
                            if !m.new_values.is_empty() {
                                out["newAspectValues"] = json!(m.new_values);
                            }
                            if !m.removed_values.is_empty() {
                                out["removedAspectValues"] = json!(m.removed_values);
                            }
                            out
                        })
                        .collect();
                }
                if !c.removed_aspects.is_empty() {
                    category["removedAspects"] = json!(c.removed_aspects);
                }
                if !c.new_aspects.is_empty() {
                    category["newAspects"] = c.new_aspects.iter().map(aspect).collect();
                }
                category
            });
            out.insert("modifiedCategories".into(), categories.collect());
        }
        Value::Object(out)
    }
}

fn shown(v: &Option<Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

impl fmt::Display for AspectsDiff {
    /// One line a change: `+ category 5555 Canada Dry (8 aspects)`, `- category 853`,
    /// `~ category 852 Fountain: "Brand" aspectUsage OPTIONAL → RECOMMENDED`, …
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.new_categories {
            writeln!(
                f,
                "+ category {} {:?} ({} aspects)",
                c.category.id,
                c.category.name,
                c.aspects.len()
            )?;
        }
        for id in &self.removed_categories {
            writeln!(f, "- category {id}")?;
        }
        for c in &self.modified_categories {
            let at = format!("~ category {} {:?}:", c.category_id, c.category_name);
            for a in &c.new_aspects {
                let required = if a.required { " (required)" } else { "" };
                writeln!(f, "{at} new aspect {:?}{required}", a.name)?;
            }
            for name in &c.removed_aspects {
                writeln!(f, "{at} aspect {name:?} removed")?;
            }
            for m in &c.modified_aspects {
                match m.became_required() {
                    Some(true) => writeln!(f, "{at} {:?} is now required", m.name)?,
                    Some(false) => writeln!(f, "{at} {:?} is now optional", m.name)?,
                    None => {}
                }
                for k in m.constraint.iter().filter(|k| k.field != "aspectRequired") {
                    writeln!(
                        f,
                        "{at} {:?} {} {} → {}",
                        m.name,
                        k.field,
                        shown(&k.old),
                        shown(&k.new)
                    )?;
                }
                let list = if m.selection_only {
                    "selection-only list"
                } else {
                    "suggested values"
                };
                if !m.new_values.is_empty() {
                    writeln!(f, "{at} {:?} {list}: added {:?}", m.name, m.new_values)?;
                }
                if !m.removed_values.is_empty() {
                    writeln!(
                        f,
                        "{at} {:?} {list}: removed {:?}",
                        m.name, m.removed_values
                    )?;
                }
            }
        }
        Ok(())
    }
}
