//! The check: a listing's aspects against a category's rules, whatever holds the rules.

use alloc::borrow::ToOwned;
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec;
use alloc::vec::Vec;

use crate::listing::{ListingAspect, ListingAspects};
use crate::problem::Problem;
use crate::text::{Format, closest, key};

/// A list of texts as a rule set holds it: owned (`taxonomy-model`'s rules, read from an
/// answer) or static (compiled into `taxonomy-data`).
#[derive(Debug, Clone, Copy)]
pub enum Texts<'a> {
    /// Owned strings.
    Owned(&'a [String]),
    /// Static strings.
    Static(&'a [&'a str]),
}

impl<'a> Texts<'a> {
    /// The texts, in order.
    pub fn iter(self) -> impl Iterator<Item = &'a str> + 'a {
        let (owned, fixed): (&'a [String], &'a [&'a str]) = match self {
            Texts::Owned(o) => (o, &[]),
            Texts::Static(s) => (&[], s),
        };
        owned
            .iter()
            .map(String::as_str)
            .chain(fixed.iter().copied())
    }

    fn to_vec(self) -> Vec<String> {
        self.iter().map(str::to_owned).collect()
    }
}

/// One aspect's rule as the check reads it.
#[derive(Debug, Clone, Copy)]
pub struct RuleView<'a> {
    /// The aspect's name, as the category gives it.
    pub name: &'a str,
    /// `itemToAspectCardinality` is `SINGLE`.
    pub single: bool,
    /// `aspectMode` is `SELECTION_ONLY`.
    pub selection_only: bool,
    /// `aspectMaxLength`.
    pub max_length: Option<u32>,
    /// `aspectDataType` with `aspectFormat`.
    pub format: Format,
    /// `expectedRequiredByDate` of an aspect not required yet (as sent, never blank).
    pub expected_required_by: Option<&'a str>,
    /// The allowed (or suggested) values.
    pub values: Texts<'a>,
}

/// One `valueConstraints` entry of a value: the value is allowed only when the control
/// aspect has one of `allowed`.
#[derive(Debug, Clone, Copy)]
pub struct ConstraintView<'a> {
    /// The control aspect, as the category names it.
    pub control: &'a str,
    /// Its [`key`](crate::key).
    pub control_key: &'a str,
    /// Its values that allow the value, as sent.
    pub allowed: Texts<'a>,
    /// The same, as keys.
    pub allowed_keys: Texts<'a>,
}

/// What the check needs of one category's rules. `taxonomy-model`'s `AspectRules` (built from
/// an answer, indexed by `HashMap`s) and [`PinnedRules`](crate::PinnedRules) (compiled into
/// `taxonomy-data`, indexed by perfect hashes) both give it, so both run [`check`]: one
/// implementation of the rules.
pub trait RuleSet {
    /// How many aspects (a name the category repeats counts once: its first rule).
    fn aspect_count(&self) -> usize;
    /// The aspect whose name's [`key`](crate::key) is `key`.
    fn find_aspect(&self, key: &str) -> Option<usize>;
    /// The rule of aspect `index` (below [`aspect_count`](Self::aspect_count)).
    fn rule(&self, index: usize) -> RuleView<'_>;
    /// The required aspects (`aspectRequired`), in the category's order.
    fn required(&self) -> impl Iterator<Item = usize> + '_;
    /// The position in [`RuleView::values`] of the first value of aspect `index` whose key is
    /// that of `value` (as given by the listing).
    fn find_value(&self, index: usize, value: &str) -> Option<usize>;
    /// The `valueConstraints` of value `value` of aspect `index`.
    fn constraints(&self, index: usize, value: usize) -> impl Iterator<Item = ConstraintView<'_>>;
}

/// Every problem of `listing` against `rules`: errors (what the service refuses) and warnings,
/// in the order of the listing's aspects, then the missing aspects in the category's order.
///
/// An aspect whose values are known only at run time ([`ListingAspects::with_later`], what
/// `aspects!` checks at compile time) counts as given, and a constraint whose control aspect
/// is one of them is not checked; the whole listing is checked again once its values are
/// known.
pub fn check<R: RuleSet + ?Sized>(rules: &R, listing: &ListingAspects) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut given = vec![false; rules.aspect_count()];
    // Names that differ only in case are one aspect, as the service takes them: the
    // entries of each aspect together, in the order of its first spelling.
    // (`None`: an aspect the category does not know, each spelling on its own.)
    let mut spellings: Vec<(Option<usize>, Vec<&ListingAspect>)> = Vec::new();
    let mut at: BTreeMap<usize, usize> = BTreeMap::new();
    for entry in &listing.entries {
        let index = rules.find_aspect(&entry.key);
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
            let names: Vec<&str> = (0..rules.aspect_count())
                .map(|i| rules.rule(i).name)
                .collect();
            problems.push(Problem::UnknownAspect {
                aspect: name.clone(),
                suggestion: closest(name, names.into_iter()).map(str::to_owned),
            });
            continue;
        };
        let rule = rules.rule(index);
        if entries.len() > 1 {
            problems.push(Problem::SpelledTwice {
                aspect: rule.name.to_owned(),
                spellings: entries.iter().map(|e| e.name.clone()).collect(),
            });
        }
        let later = entries.iter().any(|e| e.later);
        let values: Vec<&String> = entries
            .iter()
            .flat_map(|e| &e.values)
            .filter(|v| !v.trim().is_empty())
            .collect();
        if later {
            given[index] = true;
        }
        if values.is_empty() {
            continue; // counted as missing below, unless given at run time
        }
        given[index] = true;
        if rule.single && values.len() > 1 {
            problems.push(Problem::TooManyValues {
                aspect: rule.name.to_owned(),
                values: values.iter().map(|v| (*v).clone()).collect(),
            });
        }
        for value in values {
            check_value(rules, index, &rule, value, listing, &mut problems);
        }
    }
    for index in rules.required() {
        if !given[index] {
            problems.push(Problem::MissingRequired {
                aspect: rules.rule(index).name.to_owned(),
            });
        }
    }
    for (index, &was_given) in given.iter().enumerate() {
        let rule = rules.rule(index);
        if let Some(from) = rule.expected_required_by
            && !was_given
        {
            problems.push(Problem::RequiredSoon {
                aspect: rule.name.to_owned(),
                from: from.to_owned(),
            });
        }
    }
    problems
}

fn check_value<R: RuleSet + ?Sized>(
    rules: &R,
    index: usize,
    rule: &RuleView<'_>,
    value: &str,
    listing: &ListingAspects,
    problems: &mut Vec<Problem>,
) {
    let known = rules.find_value(index, value);
    if rule.selection_only && known.is_none() {
        problems.push(Problem::NotAllowed {
            aspect: rule.name.to_owned(),
            value: value.to_owned(),
            suggestion: closest(value, rule.values.iter()).map(str::to_owned),
        });
    }
    if let Some(max) = rule.max_length {
        let length = value.chars().count();
        if length > max as usize {
            problems.push(Problem::TooLong {
                aspect: rule.name.to_owned(),
                value: value.to_owned(),
                length,
                max,
            });
        }
    }
    if !rule.format.accepts(value) {
        problems.push(Problem::BadFormat {
            aspect: rule.name.to_owned(),
            value: value.to_owned(),
            expected: rule.format.expected().to_owned(),
        });
    }
    let Some(known) = known else {
        return;
    };
    for c in rules.constraints(index, known) {
        let entries = || listing.entries.iter().filter(|e| e.key == c.control_key);
        // A control aspect given at run time: checked then, not now.
        if entries().any(|e| e.later) {
            continue;
        }
        // The control aspect's values under every spelling of its name.
        let found: Vec<String> = entries().flat_map(|e| e.values.iter().cloned()).collect();
        let allows = |f: &String| {
            let k = key(f);
            c.allowed_keys.iter().any(|a| a == k)
        };
        if !found.iter().any(allows) {
            problems.push(Problem::ConstraintNotMet {
                aspect: rule.name.to_owned(),
                value: value.to_owned(),
                control: c.control.to_owned(),
                allowed: c.allowed.to_vec(),
                found,
            });
        }
    }
}
