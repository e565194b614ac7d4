//! The check: a listing's aspects against a category's rules, whatever holds the rules.

use alloc::borrow::ToOwned;
use alloc::collections::{BTreeMap, BTreeSet};
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
    /// `aspectEnabledForVariations`: the aspect may be a variation axis of an inventory item
    /// group (createOrReplaceInventoryItemGroup's `variesBy.specifications`).
    pub enabled_for_variations: bool,
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

/// The bounds of [`check`]: however many values a listing gives, its problems and their
/// printed size stay proportional to the category's rules, not to the listing.
pub mod limits {
    /// The most values an aspect whose `itemToAspectCardinality` is `MULTI` takes: the
    /// Trading API's per-site threshold for one item specific (GeteBayDetails,
    /// `ItemSpecificDetails.MaxValuesPerName`, 30 on eBay's sites). One more is
    /// [`TooManyValues`](crate::Problem::TooManyValues), as two are for a `SINGLE` aspect.
    pub const MULTI_VALUES: usize = 30;
    /// The most problems listed for the values of one aspect; the rest are counted in one
    /// [`MoreProblems`](crate::Problem::MoreProblems).
    pub const PROBLEMS_PER_ASPECT: usize = 10;
    /// The most values (or spellings) a problem lists; it says how many there are.
    pub const SHOWN_VALUES: usize = 5;
    /// The most aspects the category does not know listed one by one; the rest are counted in
    /// one [`MoreUnknownAspects`](crate::Problem::MoreUnknownAspects).
    pub const UNKNOWN_ASPECTS: usize = 10;
    /// The most closest-value suggestions ("did you mean") computed for one listing: each
    /// compares the value with every allowed value (milliseconds against a list of 20,000),
    /// so past these a wrong value is refused without one.
    pub const SUGGESTIONS: usize = 5;
}

/// Every problem of `listing` against `rules`: errors (what the service refuses) and warnings,
/// in the order of the listing's aspects, then the missing aspects in the category's order.
///
/// An aspect whose values are known only at run time ([`ListingAspects::with_later`], what
/// `aspects!` checks at compile time) counts as given, and a constraint whose control aspect
/// is one of them is not checked; the whole listing is checked again once its values are
/// known.
///
/// In time linear in the listing's values and with problems bounded whatever it holds (see
/// [`limits`]): an aspect's values beyond what its cardinality takes are one
/// [`TooManyValues`](Problem::TooManyValues) listing a few; at most
/// [`limits::PROBLEMS_PER_ASPECT`] problems of an aspect's values are listed, then one
/// [`MoreProblems`](Problem::MoreProblems) counts the rest; a control aspect's values are
/// read once for all the `valueConstraints` naming it; and at most [`limits::SUGGESTIONS`]
/// suggestions are computed.
pub fn check<R: RuleSet + ?Sized>(rules: &R, listing: &ListingAspects) -> Vec<Problem> {
    let mut problems = Vec::new();
    let mut given = vec![false; rules.aspect_count()];
    let mut suggestions = limits::SUGGESTIONS;
    let mut controls = Controls::default();
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
    let mut unknown = 0usize;
    let mut first_unlisted: Option<&str> = None;
    for (index, entries) in spellings {
        let Some(index) = index else {
            let name = &entries[0].name;
            unknown += 1;
            if unknown > limits::UNKNOWN_ASPECTS {
                first_unlisted.get_or_insert(name.as_str());
                continue;
            }
            let suggestion = take(&mut suggestions).then(|| {
                let names = (0..rules.aspect_count()).map(|i| rules.rule(i).name);
                closest(name, names).map(str::to_owned)
            });
            problems.push(Problem::UnknownAspect {
                aspect: name.clone(),
                suggestion: suggestion.flatten(),
            });
            continue;
        };
        let rule = rules.rule(index);
        if entries.len() > 1 {
            problems.push(Problem::SpelledTwice {
                aspect: rule.name.to_owned(),
                spellings: shown(entries.iter().map(|e| e.name.as_str())),
                count: entries.len(),
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
        let max = if rule.single { 1 } else { limits::MULTI_VALUES };
        if values.len() > max {
            problems.push(Problem::TooManyValues {
                aspect: rule.name.to_owned(),
                values: shown(values.iter().map(|v| v.as_str())),
                count: values.len(),
                max,
            });
        }
        let mut sink = Sink {
            problems: &mut problems,
            listed: 0,
            omitted: 0,
        };
        let mut context = Context {
            rules,
            listing,
            controls: &mut controls,
            suggestions: &mut suggestions,
        };
        for value in values {
            context.check_value(index, &rule, value, &mut sink);
        }
        if sink.omitted > 0 {
            let count = sink.omitted;
            problems.push(Problem::MoreProblems {
                aspect: rule.name.to_owned(),
                count,
            });
        }
    }
    if let Some(first) = first_unlisted {
        problems.push(Problem::MoreUnknownAspects {
            aspect: first.to_owned(),
            count: unknown - limits::UNKNOWN_ASPECTS,
        });
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

/// Takes one of the suggestions left: `false` when none is.
fn take(left: &mut usize) -> bool {
    let some = *left > 0;
    *left = left.saturating_sub(1);
    some
}

/// The first [`limits::SHOWN_VALUES`] of `texts`, owned.
fn shown<'a>(texts: impl Iterator<Item = &'a str>) -> Vec<String> {
    texts
        .take(limits::SHOWN_VALUES)
        .map(str::to_owned)
        .collect()
}

/// One aspect's value problems: the first [`limits::PROBLEMS_PER_ASPECT`] made and listed,
/// the rest only counted.
struct Sink<'p> {
    problems: &'p mut Vec<Problem>,
    listed: usize,
    omitted: usize,
}

impl Sink<'_> {
    /// Whether the next problem is listed (else it is counted).
    fn lists_next(&self) -> bool {
        self.listed < limits::PROBLEMS_PER_ASPECT
    }

    /// Lists the problem `make` gives, or counts it past the limit without making it.
    fn push(&mut self, make: impl FnOnce() -> Problem) {
        if self.lists_next() {
            self.listed += 1;
            self.problems.push(make());
        } else {
            self.omitted += 1;
        }
    }
}

/// A control aspect's values in the listing (under every spelling of its name), read once
/// for all the constraints that name it.
struct Control {
    /// Given at run time: its constraints are checked then, not now.
    later: bool,
    /// Its values' keys.
    keys: BTreeSet<String>,
    /// Its first values, as given, for messages.
    shown: Vec<String>,
    /// How many values it has.
    count: usize,
}

/// The control aspects read so far, by key.
#[derive(Default)]
struct Controls(BTreeMap<String, Control>);

impl Controls {
    fn get(&mut self, listing: &ListingAspects, control_key: &str) -> &Control {
        self.0.entry(control_key.to_owned()).or_insert_with(|| {
            let entries = || listing.entries.iter().filter(|e| e.key == control_key);
            let values = || entries().flat_map(|e| &e.values);
            Control {
                later: entries().any(|e| e.later),
                keys: values().map(|v| key(v)).collect(),
                shown: shown(values().map(String::as_str)),
                count: values().count(),
            }
        })
    }
}

/// What the check of one value needs besides the value.
struct Context<'c, R: RuleSet + ?Sized> {
    rules: &'c R,
    listing: &'c ListingAspects,
    controls: &'c mut Controls,
    suggestions: &'c mut usize,
}

impl<R: RuleSet + ?Sized> Context<'_, R> {
    fn check_value(&mut self, index: usize, rule: &RuleView<'_>, value: &str, sink: &mut Sink<'_>) {
        let known = self.rules.find_value(index, value);
        if rule.selection_only && known.is_none() {
            let suggestions = &mut *self.suggestions;
            sink.push(|| Problem::NotAllowed {
                aspect: rule.name.to_owned(),
                value: value.to_owned(),
                suggestion: take(suggestions)
                    .then(|| closest(value, rule.values.iter()).map(str::to_owned))
                    .flatten(),
            });
        }
        if let Some(max) = rule.max_length {
            let length = value.chars().count();
            if length > max as usize {
                sink.push(|| Problem::TooLong {
                    aspect: rule.name.to_owned(),
                    value: value.to_owned(),
                    length,
                    max,
                });
            }
        }
        if !rule.format.accepts(value) {
            sink.push(|| Problem::BadFormat {
                aspect: rule.name.to_owned(),
                value: value.to_owned(),
                expected: rule.format.expected().to_owned(),
            });
        }
        let Some(known) = known else {
            return;
        };
        for c in self.rules.constraints(index, known) {
            let control = self.controls.get(self.listing, c.control_key);
            // A control aspect given at run time: checked then, not now.
            if control.later || c.allowed_keys.iter().any(|a| control.keys.contains(a)) {
                continue;
            }
            sink.push(|| Problem::ConstraintNotMet {
                aspect: rule.name.to_owned(),
                value: value.to_owned(),
                control: c.control.to_owned(),
                allowed: c.allowed.to_vec(),
                found: control.shown.clone(),
                found_count: control.count,
            });
        }
    }
}
