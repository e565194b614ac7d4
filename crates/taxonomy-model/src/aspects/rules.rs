//! One category's aspect rules, indexed for checking listings, and the check.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use super::listing::ListingAspects;
use super::problem::Problem;
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
    allowed_keys: HashSet<String>,
}

/// What a value must look like (`aspectDataType` with `aspectFormat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Any,
    /// NUMBER without a format: an integer or a decimal.
    Number,
    Int32,
    Double,
    /// DATE without a format: any of the three forms.
    Date,
    DateYear,
    DateYearMonth,
    DateFull,
}

impl Format {
    fn of(aspect: &Aspect) -> Self {
        let format = aspect.format.as_deref().map(str::trim).unwrap_or_default();
        match aspect.data_type {
            Some(AspectDataType::Number) => match format.to_ascii_lowercase().as_str() {
                "int32" => Format::Int32,
                "double" => Format::Double,
                _ => Format::Number,
            },
            Some(AspectDataType::Date) => match format.to_ascii_uppercase().as_str() {
                "YYYY" => Format::DateYear,
                "YYYYMM" => Format::DateYearMonth,
                "YYYYMMDD" => Format::DateFull,
                _ => Format::Date,
            },
            _ => Format::Any,
        }
    }

    fn accepts(self, value: &str) -> bool {
        let v = value.trim();
        match self {
            Format::Any => true,
            Format::Int32 => v.parse::<i32>().is_ok(),
            Format::Number | Format::Double => v.parse::<f64>().is_ok_and(f64::is_finite),
            Format::DateYear => date(v, 4),
            Format::DateYearMonth => date(v, 6),
            Format::DateFull => date(v, 8),
            Format::Date => date(v, 4) || date(v, 6) || date(v, 8),
        }
    }

    fn expected(self) -> &'static str {
        match self {
            Format::Any => "STRING",
            Format::Number => "NUMBER",
            Format::Int32 => "NUMBER (int32: a whole number)",
            Format::Double => "NUMBER (double)",
            Format::Date => "DATE (YYYY, YYYYMM or YYYYMMDD)",
            Format::DateYear => "DATE (YYYY)",
            Format::DateYearMonth => "DATE (YYYYMM)",
            Format::DateFull => "DATE (YYYYMMDD)",
        }
    }
}

/// `digits` ASCII digits forming a year, a year and month, or a valid calendar date.
fn date(v: &str, digits: usize) -> bool {
    if v.len() != digits || !v.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let n = |range: std::ops::Range<usize>| v[range].parse::<u32>().unwrap_or(0);
    let year = n(0..4);
    if digits == 4 {
        return true;
    }
    let month = n(4..6);
    if !(1..=12).contains(&month) {
        return false;
    }
    if digits == 6 {
        return true;
    }
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    (1..=days).contains(&n(6..8))
}

/// The form names and values are compared in: trimmed, lower case.
pub(crate) fn key(s: &str) -> String {
    s.trim().to_lowercase()
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
                values: aspect.values.iter().map(|v| v.value.clone()).collect(),
                by_value,
                constraints,
                max_length: aspect.max_length,
                format: Format::of(aspect),
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
    /// from JSON), then the missing aspects in the category's order.
    pub fn check(&self, listing: &ListingAspects) -> Vec<Problem> {
        let mut problems = Vec::new();
        let mut given = vec![false; self.aspects.len()];
        // Names that differ only in case are one aspect, as the service takes them: the
        // entries of each aspect together, in the order of its first spelling.
        // (`None`: an aspect the category does not know, each spelling on its own.)
        let mut spellings: Vec<(Option<usize>, Vec<&super::listing::ListingAspect>)> = Vec::new();
        let mut at: HashMap<usize, usize> = HashMap::new();
        for entry in &listing.entries {
            let index = self.by_name.get(&entry.key).copied();
            match index.and_then(|index| at.get(&index)) {
                Some(&i) => spellings[i].1.push(entry),
                None => {
                    if let Some(index) = index {
                        at.insert(index, spellings.len());
                    }
                    spellings.push((index, vec![entry]));
                }
            }
        }
        for (index, entries) in spellings {
            let Some(index) = index else {
                let name = &entries[0].name;
                problems.push(Problem::UnknownAspect {
                    aspect: name.clone(),
                    suggestion: closest(name, self.aspects.iter().map(|a| a.name.as_str()))
                        .map(str::to_owned),
                });
                continue;
            };
            let rule = &self.aspects[index];
            if entries.len() > 1 {
                problems.push(Problem::SpelledTwice {
                    aspect: rule.name.clone(),
                    spellings: entries.iter().map(|e| e.name.clone()).collect(),
                });
            }
            let values: Vec<&String> = entries
                .iter()
                .flat_map(|e| &e.values)
                .filter(|v| !v.trim().is_empty())
                .collect();
            if values.is_empty() {
                continue; // counted as missing below
            }
            given[index] = true;
            if rule.single && values.len() > 1 {
                problems.push(Problem::TooManyValues {
                    aspect: rule.name.clone(),
                    values: values.iter().map(|v| (*v).clone()).collect(),
                });
            }
            for value in values {
                self.check_value(rule, value, listing, &mut problems);
            }
        }
        for &index in &self.required {
            if !given[index] {
                problems.push(Problem::MissingRequired {
                    aspect: self.aspects[index].name.clone(),
                });
            }
        }
        for (index, rule) in self.aspects.iter().enumerate() {
            if let Some(from) = &rule.expected_required_by
                && !given[index]
            {
                problems.push(Problem::RequiredSoon {
                    aspect: rule.name.clone(),
                    from: from.clone(),
                });
            }
        }
        problems
    }

    fn check_value(
        &self,
        rule: &Rule,
        value: &str,
        listing: &ListingAspects,
        problems: &mut Vec<Problem>,
    ) {
        let known = rule
            .by_value
            .get(value)
            .or_else(|| rule.by_value.get(&key(value)))
            .copied();
        if rule.selection_only && known.is_none() {
            problems.push(Problem::NotAllowed {
                aspect: rule.name.clone(),
                value: value.to_owned(),
                suggestion: closest(value, rule.values.iter().map(String::as_str))
                    .map(str::to_owned),
            });
        }
        if let Some(max) = rule.max_length {
            let length = value.chars().count();
            if length > max as usize {
                problems.push(Problem::TooLong {
                    aspect: rule.name.clone(),
                    value: value.to_owned(),
                    length,
                    max,
                });
            }
        }
        if !rule.format.accepts(value) {
            problems.push(Problem::BadFormat {
                aspect: rule.name.clone(),
                value: value.to_owned(),
                expected: rule.format.expected().to_owned(),
            });
        }
        let Some(constraints) = known.and_then(|i| rule.constraints.get(&i)) else {
            return;
        };
        for c in constraints {
            // The control aspect's values under every spelling of its name.
            let found: Vec<String> = listing
                .entries
                .iter()
                .filter(|e| e.key == c.control_key)
                .flat_map(|e| e.values.iter().cloned())
                .collect();
            if !found.iter().any(|f| c.allowed_keys.contains(&key(f))) {
                problems.push(Problem::ConstraintNotMet {
                    aspect: rule.name.clone(),
                    value: value.to_owned(),
                    control: c.control.clone(),
                    allowed: c.allowed.clone(),
                    found,
                });
            }
        }
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

/// The most cells of the edit-distance table [`closest`] fills for one value, whatever the
/// number and length of the candidates: about a millisecond of work. A suggestion is a
/// convenience; past this the best candidate found so far (if any) is given.
const MAX_CLOSEST_WORK: usize = 2_000_000;

/// The candidate closest to `given` (edit distance, case ignored), when it is close: at most
/// a third of the longer text's characters differ (at least one, at most five).
///
/// In bounded time for any value: a candidate whose length differs from the value's by more
/// than the distance allowed cannot be close and is skipped without a comparison; the others
/// are compared by a distance computed only within that band (the exact distance when it is
/// within the limit, which is all that is asked); and the work for one value is capped
/// ([`MAX_CLOSEST_WORK`]).
pub(crate) fn closest<'a>(
    given: &str,
    candidates: impl Iterator<Item = &'a str>,
) -> Option<&'a str> {
    let given: Vec<char> = key(given).chars().collect();
    let mut best: Option<(usize, &str)> = None;
    let mut work = 0usize;
    let mut candidate_chars = Vec::new();
    for candidate in candidates {
        let lowered = key(candidate);
        let length = lowered.chars().count();
        let mut limit = (given.len().max(length) / 3).clamp(1, 5);
        if let Some((d, _)) = best {
            // Only a strictly closer candidate replaces the best.
            match d.checked_sub(1) {
                Some(tighter) => limit = limit.min(tighter),
                None => break, // an exact match (case ignored) cannot be beaten
            }
        }
        if given.len().abs_diff(length) > limit {
            continue;
        }
        candidate_chars.clear();
        candidate_chars.extend(lowered.chars());
        work += given.len().min(length).max(1) * (2 * limit + 1);
        if work > MAX_CLOSEST_WORK {
            break;
        }
        if let Some(distance) = banded_distance(&given, &candidate_chars, limit) {
            best = Some((distance, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// The Levenshtein distance of `a` and `b` when it is at most `limit`, else `None`, in
/// `O(min(|a|, |b|) · limit)`: only the cells within `limit` of the diagonal can lead to a
/// distance within it.
fn banded_distance(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    let (a, b) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if b.len() - a.len() > limit {
        return None;
    }
    let far = limit + 1;
    // row[j]: the distance of a[..i] and b[..j]; cells outside the band hold `far`.
    let mut previous: Vec<usize> = (0..=b.len()).map(|j| j.min(far)).collect();
    let mut row = vec![far; b.len() + 1];
    for i in 1..=a.len() {
        let from = i.saturating_sub(limit).max(1);
        let to = (i + limit).min(b.len());
        row[from - 1] = if from == 1 { i.min(far) } else { far };
        let mut smallest = row[from - 1];
        for j in from..=to {
            let substitute = previous[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            let cell = substitute.min(previous[j] + 1).min(row[j - 1] + 1).min(far);
            row[j] = cell;
            smallest = smallest.min(cell);
        }
        if to < b.len() {
            row[to + 1] = far;
        }
        if smallest > limit {
            return None;
        }
        std::mem::swap(&mut previous, &mut row);
    }
    Some(previous[b.len()]).filter(|&d| d <= limit)
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

    #[test]
    fn the_banded_distance_is_levenshtein_within_its_limit() {
        let words = [
            "",
            "a",
            "ab",
            "abc",
            "kitten",
            "sitting",
            "samsung",
            "samsnug",
            "apple",
            "äpfel",
            "iphone 15",
            "iphone 16 pro",
            "galaxy s24",
            "xxxxxxxxxxxx",
            "samsung galaxy",
        ];
        for a in words {
            for b in words {
                let (ac, bc): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
                let exact = strsim::levenshtein(a, b);
                for limit in 0..=6 {
                    let expected = (exact <= limit).then_some(exact);
                    assert_eq!(
                        banded_distance(&ac, &bc, limit),
                        expected,
                        "{a:?} {b:?} {limit}"
                    );
                }
            }
        }
    }

    #[test]
    fn dates_and_numbers() {
        assert!(date("2024", 4) && date("202402", 6) && date("20240229", 8));
        assert!(
            !date("20230229", 8) && !date("202413", 6) && !date("24", 4) && !date("２０２４", 4)
        );
        assert!(Format::Double.accepts("3.5") && !Format::Double.accepts("NaN"));
        assert!(Format::Int32.accepts("-7") && !Format::Int32.accepts("4294967296"));
    }
}
