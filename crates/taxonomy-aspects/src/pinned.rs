//! A pinned category's rules as `taxonomy-data` compiles them in: static tables, names and
//! values found by perfect hash (`taxonomy-hash`), checked by the one [`check`](crate::check).

use alloc::vec::Vec;

use taxonomy_hash::{bucket_of, entry_position, slot_of, text_hash, text_tag};

use crate::check::{ConstraintView, RuleSet, RuleView, Texts};
use crate::listing::ListingAspects;
use crate::problem::Problem;
use crate::text::{Format, key};

/// A perfect hash over texts: each text's [`text_hash`] under the table's seed placed by the
/// generator (`taxonomy_codegen::phash::PerfectHash::build_texts`), a slot holding the hash's
/// [`text_tag`] and the text's position; the text itself is compared on a hit, so any set of
/// distinct texts has a table.
#[doc(hidden)]
#[derive(Debug)]
pub struct TextTable {
    pub seed: u64,
    pub bucket_shift: u32,
    pub pilots: &'static [u16],
    pub slots: &'static [u64],
}

impl TextTable {
    /// The position of `text` among `texts` (the keys the table was built from, in order).
    fn find(&self, text: &str, texts: &[&str]) -> Option<usize> {
        self.find_by(text, |p| texts.get(p) == Some(&text))
    }

    /// The position the table holds for `text`'s key, if `is` says it is `text`'s.
    fn find_by(&self, text: &str, is: impl Fn(usize) -> bool) -> Option<usize> {
        if self.slots.is_empty() || self.pilots.is_empty() {
            return None;
        }
        let h = text_hash(text, self.seed);
        let pilot = self.pilots[bucket_of(h, self.bucket_shift, self.pilots.len())];
        let slot = self.slots[slot_of(h, pilot, self.slots.len())];
        let position = entry_position(slot, text_tag(h))?;
        let position = position as usize;
        is(position).then_some(position)
    }
}

/// One aspect of a [`PinnedRules`] (generated code).
#[doc(hidden)]
#[derive(Debug)]
pub struct PinnedAspect {
    pub name: &'static str,
    pub single: bool,
    pub selection_only: bool,
    /// `aspectEnabledForVariations` (one bit an aspect).
    pub enabled_for_variations: bool,
    pub max_length: Option<u32>,
    pub format: Format,
    pub expected_required_by: Option<&'static str>,
    pub values: &'static [&'static str],
    /// Built from `key(values[i])` (the first position of each key).
    pub value_table: TextTable,
    /// Sorted by `value`.
    pub constraints: &'static [PinnedConstraint],
}

/// One `valueConstraints` entry of a value (generated code).
#[doc(hidden)]
#[derive(Debug)]
pub struct PinnedConstraint {
    pub value: u32,
    pub control: &'static str,
    pub control_key: &'static str,
    pub allowed: &'static [&'static str],
    pub allowed_keys: &'static [&'static str],
}

/// The aspect rules of a pinned category (`snapshot aspects pin`), compiled into
/// `taxonomy-data`: `LeafCategory::aspects` gives them, and [`check`](Self::check) finds the
/// same problems as `taxonomy-model`'s `AspectRules::check` of the answer they were pinned
/// from (the same code runs both), with no file, token or network.
#[derive(Debug)]
pub struct PinnedRules {
    #[doc(hidden)]
    pub category_id: u32,
    #[doc(hidden)]
    pub tree_version: &'static str,
    #[doc(hidden)]
    pub taken_at: &'static str,
    #[doc(hidden)]
    pub aspects: &'static [PinnedAspect],
    /// `key(aspects[i].name)`: what `names` was built from.
    #[doc(hidden)]
    pub name_keys: &'static [&'static str],
    #[doc(hidden)]
    pub names: TextTable,
    /// The required aspects' indexes in `aspects` (16 bits: the generator refuses a category
    /// of more than 65,536 aspects).
    #[doc(hidden)]
    pub required: &'static [u16],
}

impl PinnedRules {
    /// The category.
    pub fn category_id(&self) -> u32 {
        self.category_id
    }

    /// The version of the tree the rules were pinned with.
    pub fn tree_version(&self) -> &'static str {
        self.tree_version
    }

    /// The date they were pinned (`YYYY-MM-DD`).
    pub fn taken_at(&self) -> &'static str {
        self.taken_at
    }

    /// The aspects' names, in the service's order.
    pub fn aspect_names(&self) -> impl Iterator<Item = &'static str> + use<> {
        let aspects = self.aspects;
        aspects.iter().map(|a| a.name)
    }

    /// The required aspects' names, in the service's order.
    pub fn required_names(&self) -> impl Iterator<Item = &'static str> + use<> {
        let aspects = self.aspects;
        self.required.iter().map(move |&i| aspects[i as usize].name)
    }

    /// The allowed (or suggested) values of the aspect `name` (case ignored).
    pub fn values_of(&self, name: &str) -> Option<&'static [&'static str]> {
        let index = self.find_aspect(&key(name))?;
        Some(self.aspects[index].values)
    }

    /// Every problem of `listing` against these rules ([`check`](crate::check)).
    pub fn check(&self, listing: &ListingAspects) -> Vec<Problem> {
        crate::check(self, listing)
    }
}

impl RuleSet for PinnedRules {
    fn aspect_count(&self) -> usize {
        self.aspects.len()
    }

    fn find_aspect(&self, key: &str) -> Option<usize> {
        self.names.find(key, self.name_keys)
    }

    fn rule(&self, index: usize) -> RuleView<'_> {
        let a = &self.aspects[index];
        RuleView {
            name: a.name,
            single: a.single,
            selection_only: a.selection_only,
            enabled_for_variations: a.enabled_for_variations,
            max_length: a.max_length,
            format: a.format,
            expected_required_by: a.expected_required_by,
            values: Texts::Static(a.values),
        }
    }

    fn required(&self) -> impl Iterator<Item = usize> + '_ {
        self.required.iter().map(|&i| i as usize)
    }

    fn find_value(&self, index: usize, value: &str) -> Option<usize> {
        let a = &self.aspects[index];
        let wanted = key(value);
        a.value_table.find_by(&wanted, |p| {
            a.values.get(p).is_some_and(|v| key(v) == wanted)
        })
    }

    fn constraints(&self, index: usize, value: usize) -> impl Iterator<Item = ConstraintView<'_>> {
        let list = self.aspects[index].constraints;
        let start = list.partition_point(|c| (c.value as usize) < value);
        list[start..]
            .iter()
            .take_while(move |c| c.value as usize == value)
            .map(|c| ConstraintView {
                control: c.control,
                control_key: c.control_key,
                allowed: Texts::Static(c.allowed),
                allowed_keys: Texts::Static(c.allowed_keys),
            })
    }
}
