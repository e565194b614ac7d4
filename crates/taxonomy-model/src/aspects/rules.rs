//! One category's aspect rules, indexed for checking listings, and the check.

use std::collections::HashMap;
use std::path::Path;

use taxonomy_aspects::{
    ConstraintView, Format, ListingAspects, Problem, RuleSet, RuleView, Texts, key,
};

use crate::{
    Aspect, AspectCardinality, AspectDataType, AspectMode, AspectsFileError, CategoryAspects,
    ItemAspects, ItemAspectsReader,
};

/// The aspect rules of one leaf category, from a getItemAspectsForCategory answer
/// ([`From<&ItemAspects>`](#impl-From<%26ItemAspects>-for-AspectRules)) or an entry of a
/// fetchItemAspects file ([`From<&CategoryAspects>`](#impl-From<%26CategoryAspects>-for-AspectRules),
/// [`from_aspects_file`](Self::from_aspects_file)), indexed once so that
/// [`check`](Self::check) looks every aspect and value up by hash.
///
/// Names and values are compared ignoring case (the names as the service localizes them).
#[derive(Debug, Clone)]
pub struct AspectRules {
    category_id: u32,
    aspects: Vec<Rule>,
    /// Lower-case name → index in `aspects`.
    by_name: HashMap<String, usize>,
    /// The required aspects' indexes.
    required: Vec<usize>,
}

#[derive(Debug, Clone)]
struct Rule {
    name: String,
    single: bool,
    selection_only: bool,
    enabled_for_variations: bool,
    /// The allowed (or suggested) values.
    values: Vec<String>,
    /// Each value as sent and in lower case → its index in `values` (the value as sent is
    /// found without allocating; another case only after lower-casing it).
    by_value: HashMap<String, usize>,
    /// `valueConstraints`: value index → (control aspect, its allowing values in lower case,
    /// as sent).
    constraints: HashMap<usize, Vec<Constraint>>,
    max_length: Option<u32>,
    format: Format,
    expected_required_by: Option<String>,
}

#[derive(Debug, Clone)]
struct Constraint {
    control: String,
    control_key: String,
    allowed: Vec<String>,
    allowed_keys: Vec<String>,
}

/// What a value of `aspect` must look like.
fn format_of(aspect: &Aspect) -> Format {
    let data_type = match &aspect.data_type {
        Some(AspectDataType::Number) => Some("NUMBER"),
        Some(AspectDataType::Date) => Some("DATE"),
        _ => None,
    };
    Format::from_wire(data_type, aspect.format.as_deref())
}

impl AspectRules {
    /// The rules of `category_id` from its aspects.
    pub fn new(category_id: u32, aspects: &[Aspect]) -> Self {
        let mut rules = Vec::with_capacity(aspects.len());
        let mut by_name = HashMap::with_capacity(aspects.len());
        let mut required = Vec::new();
        for aspect in aspects {
            let index = rules.len();
            // A name the category repeats keeps its first rule.
            if by_name.insert(key(&aspect.name), index).is_some() {
                continue;
            }
            if aspect.required {
                required.push(index);
            }
            let mut by_value = HashMap::with_capacity(2 * aspect.values.len());
            let mut constraints = HashMap::new();
            for (i, v) in aspect.values.iter().enumerate() {
                // The value as sent finds what its lower case finds.
                let index = *by_value.entry(key(&v.value)).or_insert(i);
                by_value.entry(v.value.clone()).or_insert(index);
                let list: Vec<Constraint> = v
                    .constraints
                    .iter()
                    .filter_map(|c| {
                        let control = c.aspect_name.clone()?;
                        Some(Constraint {
                            control_key: key(&control),
                            control,
                            allowed_keys: c.aspect_values.iter().map(|a| key(a)).collect(),
                            allowed: c.aspect_values.clone(),
                        })
                    })
                    .collect();
                if !list.is_empty() {
                    constraints.insert(i, list);
                }
            }
            rules.push(Rule {
                name: aspect.name.clone(),
                single: aspect.cardinality == Some(AspectCardinality::Single),
                selection_only: aspect.mode == Some(AspectMode::SelectionOnly),
                enabled_for_variations: aspect.enabled_for_variations,
                values: aspect.values.iter().map(|v| v.value.clone()).collect(),
                by_value,
                constraints,
                max_length: aspect.max_length,
                format: format_of(aspect),
                expected_required_by: if aspect.required {
                    None
                } else {
                    aspect
                        .expected_required_by_date
                        .clone()
                        .filter(|d| !d.trim().is_empty())
                },
            });
        }
        Self {
            category_id,
            aspects: rules,
            by_name,
            required,
        }
    }

    /// The category these rules are of.
    pub fn category_id(&self) -> u32 {
        self.category_id
    }

    /// The names of the category's aspects, in the service's order.
    pub fn aspect_names(&self) -> impl Iterator<Item = &str> {
        self.aspects.iter().map(|a| a.name.as_str())
    }

    /// Every problem of `listing` against these rules: errors (what the service refuses)
    /// and warnings, in the order of the listing's aspects (name order for a listing read
    /// from JSON), then the missing aspects in the category's order
    /// ([`taxonomy_aspects::check`], which also checks the rules `taxonomy-data` compiles in).
    pub fn check(&self, listing: &ListingAspects) -> Vec<Problem> {
        taxonomy_aspects::check(self, listing)
    }
}

impl RuleSet for AspectRules {
    fn aspect_count(&self) -> usize {
        self.aspects.len()
    }

    fn find_aspect(&self, key: &str) -> Option<usize> {
        self.by_name.get(key).copied()
    }

    fn rule(&self, index: usize) -> RuleView<'_> {
        let rule = &self.aspects[index];
        RuleView {
            name: &rule.name,
            single: rule.single,
            selection_only: rule.selection_only,
            enabled_for_variations: rule.enabled_for_variations,
            max_length: rule.max_length,
            format: rule.format,
            expected_required_by: rule.expected_required_by.as_deref(),
            values: Texts::Owned(&rule.values),
        }
    }

    fn required(&self) -> impl Iterator<Item = usize> + '_ {
        self.required.iter().copied()
    }

    fn find_value(&self, index: usize, value: &str) -> Option<usize> {
        let rule = &self.aspects[index];
        rule.by_value
            .get(value)
            .or_else(|| rule.by_value.get(&key(value)))
            .copied()
    }

    fn constraints(&self, index: usize, value: usize) -> impl Iterator<Item = ConstraintView<'_>> {
        self.aspects[index]
            .constraints
            .get(&value)
            .into_iter()
            .flatten()
            .map(|c| ConstraintView {
                control: &c.control,
                control_key: &c.control_key,
                allowed: Texts::Owned(&c.allowed),
                allowed_keys: Texts::Owned(&c.allowed_keys),
            })
    }
}

impl AspectRules {
    /// The rules of each of `categories` from a fetchItemAspects file (gzipped, as
    /// downloaded, or plain JSON), read in one pass that holds one entry at a time; a category
    /// the file lacks is not in the map.
    pub fn from_aspects_file(
        path: &Path,
        categories: &[u32],
    ) -> Result<HashMap<u32, AspectRules>, AspectsFileError> {
        let mut found = HashMap::with_capacity(categories.len());
        for entry in ItemAspectsReader::open_gzipped_or_plain(path)? {
            let entry = entry?;
            if categories.contains(&entry.category.id) {
                found.insert(entry.category.id, AspectRules::from(&entry));
                if found.len() == categories.len() {
                    break;
                }
            }
        }
        Ok(found)
    }
}

impl From<&ItemAspects> for AspectRules {
    fn from(answer: &ItemAspects) -> Self {
        Self::new(answer.category_id, &answer.aspects)
    }
}

impl From<&CategoryAspects> for AspectRules {
    fn from(entry: &CategoryAspects) -> Self {
        Self::new(entry.category.id, &entry.aspects)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AspectValue, ValueConstraint};

    fn aspect(name: &str) -> Aspect {
        Aspect {
            name: name.into(),
            data_type: Some(AspectDataType::String),
            advanced_data_type: None,
            required: false,
            mode: Some(AspectMode::FreeText),
            cardinality: Some(AspectCardinality::Single),
            usage: None,
            applicable_to: Vec::new(),
            enabled_for_variations: false,
            max_length: None,
            format: None,
            expected_required_by_date: None,
            values: Vec::new(),
            relevance: None,
        }
    }

    fn values(names: &[&str]) -> Vec<AspectValue> {
        names
            .iter()
            .map(|v| AspectValue {
                value: (*v).into(),
                constraints: Vec::new(),
            })
            .collect()
    }

    fn rules() -> AspectRules {
        let mut make = aspect("Make");
        make.required = true;
        make.mode = Some(AspectMode::SelectionOnly);
        make.values = values(&["Apple", "Samsung"]);
        let mut model = aspect("Model");
        model.values = values(&["iPhone 15", "Galaxy S24"]);
        model.values[0].constraints = vec![ValueConstraint {
            aspect_name: Some("Make".into()),
            aspect_values: vec!["Apple".into()],
        }];
        let mut year = aspect("Year");
        year.data_type = Some(AspectDataType::Number);
        year.format = Some("int32".into());
        let mut released = aspect("Release Date");
        released.data_type = Some(AspectDataType::Date);
        released.format = Some("YYYYMMDD".into());
        let mut note = aspect("Note");
        note.max_length = Some(5);
        let mut colour = aspect("Colour");
        colour.cardinality = Some(AspectCardinality::Multi);
        let mut mpn = aspect("MPN");
        mpn.expected_required_by_date = Some("2027-01-01T00:00:00.000Z".into());
        AspectRules::new(1, &[make, model, year, released, note, colour, mpn])
    }

    #[test]
    fn every_rule_and_its_message() {
        let listing = ListingAspects::new()
            .with("Make", ["Samsnug", "Apple"])
            .with("model", ["iPhone 15"])
            .with("Year", ["2018.5"])
            .with("Release Date", ["20230231"])
            .with("Note", ["ÄÖÜäöü"])
            .with("Color", ["Red", "Blue"]);
        let problems = rules().check(&listing);
        let shown: Vec<String> = problems.iter().map(ToString::to_string).collect();
        assert_eq!(
            shown,
            [
                r#"error: "Make" takes one value (itemToAspectCardinality SINGLE), got 2: "Samsnug", "Apple"; keep one"#,
                r#"error: "Make" = "Samsnug" is not an allowed value (aspectMode SELECTION_ONLY): did you mean "Samsung"?"#,
                r#"error: "Year" = "2018.5" is not a NUMBER (int32: a whole number) (aspectDataType, aspectFormat): give the value in that form"#,
                r#"error: "Release Date" = "20230231" is not a DATE (YYYYMMDD) (aspectDataType, aspectFormat): give the value in that form"#,
                r#"error: "Note" = "ÄÖÜäöü" is 6 characters, over the limit of 5 (aspectMaxLength): shorten it"#,
                r#"warning: "Color" is not an aspect of this category: did you mean "Colour"?"#,
                r#"warning: "MPN" will be required from "2027-01-01T00:00:00.000Z" (expectedRequiredByDate) and is missing: add it now"#,
            ]
        );
        // "iPhone 15" is allowed with Make "Apple", which the listing gives (among others).
        assert!(
            !problems
                .iter()
                .any(|p| matches!(p, Problem::ConstraintNotMet { .. }))
        );
    }

    #[test]
    fn a_constraint_not_met_and_a_missing_required_aspect() {
        let listing = ListingAspects::new()
            .with("Model", ["iPhone 15"])
            .with("Make", [" "]);
        let problems = rules().check(&listing);
        assert_eq!(
            problems[0].to_string(),
            r#"error: "Model" = "iPhone 15" is allowed only when "Make" is "Apple" (valueConstraints), but it is " ": change one of them"#
        );
        assert_eq!(
            problems[1],
            Problem::MissingRequired {
                aspect: "Make".into()
            }
        );
        assert!(problems.iter().filter(|p| p.is_error()).count() == 2);
    }

    #[test]
    fn a_listing_that_follows_every_rule_has_no_problem() {
        let listing = ListingAspects::new()
            .with("MAKE", ["apple"])
            .with("Model", ["iPhone 15"])
            .with("Year", ["2018"])
            .with("Release Date", ["20240229"])
            .with("Note", ["short"])
            .with("Colour", ["Red", "Blue"])
            .with("MPN", ["A2846"]);
        assert_eq!(rules().check(&listing), []);
    }
}
