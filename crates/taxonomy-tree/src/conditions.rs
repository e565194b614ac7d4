//! A site's item condition policies (the Metadata API's getItemConditionPolicies), committed
//! beside its snapshot: `snapshots/EBAY_US.conditions.json` next to `snapshots/EBAY_US.json`.
//!
//! The answer gives a policy per leaf category, but the distinct policies are few (most
//! categories share "new, used, for parts"): the file keeps each distinct policy once, with
//! the leaves that have it, so it stays small and a refresh reads as a diff of policies.
//!
//! ```text
//! {
//!   "format": 1,
//!   "categoryTreeId": 0,
//!   "marketplaceId": "EBAY_US",
//!   "categoryTreeVersion": "134",
//!   "source": "https://api.ebay.com/sell/metadata/v1/marketplace/EBAY_US/get_item_condition_policies",
//!   "madeUp": false,
//!   "policyCount": 2,
//!   "categoryCount": 3,
//!   "policies": [
//!     {
//!       "rule": {"required":true,"conditions":[{"condition":"NEW"},{"condition":"USED_EXCELLENT"}]},
//!       "categoryIds": [9355,20349]
//!     },
//!     {
//!       "rule": {"required":false,"conditions":[]},
//!       "categoryIds": [88433]
//!     }
//!   ],
//!   "treeFingerprint": "5f0e4b1c9a2d7e63"
//! }
//! ```
//!
//! `madeUp` is true when the answer was marked as made up (the toolkit's fake marketplace marks
//! its answers so): such a file must never be committed as the marketplace's rules, and the
//! build warns about it. The header ties the file to its tree as the expired-category file's
//! does (tree id, version, fingerprint: see [`crate::expired`]); a file out of step with its
//! tree is not compiled in.
//!
//! ## The rules, checked against the site's tree
//!
//! - every `categoryIds` entry is a leaf of the tree, and appears once in the file;
//! - `categoryIds` are sorted, no policy is empty of categories, no two policies are equal;
//! - within a policy a condition appears once; within a condition a descriptor id appears
//!   once, and within a descriptor a value id; a descriptor's `requires` names descriptors of
//!   the same condition.
//!
//! A leaf the file does not name has no known policy (the answer did not include it).
//!
//! ## The bounds
//!
//! A file holds at most what eBay's data can, with a wide margin ([`MAX_POLICIES`] distinct
//! policies, [`MAX_DESCRIPTORS_PER_POLICY`] descriptors a policy,
//! [`MAX_VALUES_PER_DESCRIPTOR`] values a descriptor, [`MAX_DESCRIPTORS`] descriptors and
//! [`MAX_VALUES`] values in all, names of at most [`MAX_NAME_BYTES`] bytes, a descriptor
//! required once). An answer above a bound (a hostile server's, or a fault's: each of 15,111
//! leaves its own policy with a 40-value descriptor fits in the client's 64 MiB body limit and
//! made 51 MB of generated Rust) is refused by [`from_answer`] and a file above one by
//! [`check`], naming the bound and the figure ([`ConditionsRule::AboveBound`]); `snapshot
//! refresh` then keeps the committed file, `snapshot verify` and the build refuse a committed
//! one, and the live build keeps the policies it had, as when getItemConditionPolicies fails.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use marketplaces::{AllowedCondition, Condition, ConditionPolicy, DescriptorRule, DescriptorValue};
use serde::{Deserialize, Serialize};

use crate::expired::fingerprint;
use crate::tree::CategoryTree;

/// The format number written in every condition-policy file.
pub const FORMAT: u32 = 1;

// The bounds of a file (see the module documentation), from what eBay's getItemConditionPolicies
// answers hold. Most leaves share a handful of policies ("new, used, for parts"); the distinct
// ones of a whole site are in the low hundreds at most (the fake's made-up answer has 4). The
// largest policies are the trading cards': Graded (2750) with a Professional Grader (about 30
// values), a Grade (about 20) and a Certification Number (free text), Ungraded (4000) with a
// Card Condition (4 values): 4 descriptors and about 60 values a policy. Each bound is several
// times (most of them ten times or more) what such data needs, and small enough that a file at
// every bound at once compiles into taxonomy-data in seconds (docs/security.md gives the
// measured figures).

/// The most distinct policies a file holds: 2,000 (a site's real ones are in the low hundreds at
/// most).
pub const MAX_POLICIES: usize = 2_000;

/// The most condition descriptors one policy holds, over all its conditions: 16 (a trading
/// card's policy has 4).
pub const MAX_DESCRIPTORS_PER_POLICY: usize = 16;

/// The most values one condition descriptor lists: 100 (a Professional Grader lists about 30,
/// a Grade about 20).
pub const MAX_VALUES_PER_DESCRIPTOR: usize = 100;

/// The most condition descriptors a file holds, summed over its distinct policies: 2,000 (20
/// distinct trading-card policies, more than eBay's card categories need, would hold 80).
pub const MAX_DESCRIPTORS: usize = 2_000;

/// The most descriptor values a file holds, summed over its descriptors: 10,000 (20 distinct
/// trading-card policies would hold about 1,200).
pub const MAX_VALUES: usize = 10_000;

/// The longest descriptor or value name, in bytes: 256 (eBay's longest are about 40, such as
/// "Professional Sports Authenticator (PSA)").
pub const MAX_NAME_BYTES: usize = 256;

/// A category's condition policy, owned (the file's `rule`; see [`ConditionPolicy`] for the
/// fields). [`ConditionRule::with_policy`] lends it as a [`ConditionPolicy`].
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionRule {
    /// `itemConditionRequired`.
    pub required: bool,
    /// `itemConditions`, in eBay's order.
    pub conditions: Vec<ConditionEntry>,
}

/// A condition a category allows, owned ([`AllowedCondition`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConditionEntry {
    /// The condition, by its `ConditionEnum` name in the file.
    #[serde(with = "condition_name")]
    pub condition: Condition,
    /// Its condition descriptors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub descriptors: Vec<DescriptorEntry>,
}

/// A condition descriptor's rules, owned ([`DescriptorRule`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DescriptorEntry {
    /// `conditionDescriptorId`.
    pub id: u32,
    /// `conditionDescriptorName`.
    pub name: String,
    /// `usage` is `REQUIRED`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub required: bool,
    /// `cardinality` is `MULTI`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub multiple: bool,
    /// `mode` is `FREE_TEXT`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub free_text: bool,
    /// `maxLength`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u32>,
    /// `conditionDescriptorValues`: `(id, name)`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<(u32, String)>,
    /// `applicableToConditionDescriptorIds`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<u32>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

mod condition_name {
    use marketplaces::Condition;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(c: &Condition, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(c.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Condition, D::Error> {
        let name = String::deserialize(d)?;
        name.parse()
            .map_err(|e| serde::de::Error::custom(format!("{name:?} is {e}")))
    }
}

impl ConditionRule {
    /// Calls `f` with this rule as a [`ConditionPolicy`] (what the listing check and
    /// `taxonomy-data` read), borrowed for the call.
    ///
    /// ```
    /// use marketplaces::Condition;
    /// use taxonomy_tree::conditions::{ConditionEntry, ConditionRule};
    /// let rule = ConditionRule {
    ///     required: true,
    ///     conditions: vec![ConditionEntry { condition: Condition::New, descriptors: vec![] }],
    /// };
    /// assert!(rule.with_policy(|p| p.required && p.allows(Condition::New)));
    /// ```
    pub fn with_policy<R>(&self, f: impl FnOnce(ConditionPolicy<'_>) -> R) -> R {
        let values: Vec<Vec<Vec<DescriptorValue<'_>>>> = self
            .conditions
            .iter()
            .map(|c| {
                c.descriptors
                    .iter()
                    .map(|d| {
                        d.values
                            .iter()
                            .map(|(id, name)| DescriptorValue { id: *id, name })
                            .collect()
                    })
                    .collect()
            })
            .collect();
        let descriptors: Vec<Vec<DescriptorRule<'_>>> = self
            .conditions
            .iter()
            .zip(&values)
            .map(|(c, values)| {
                c.descriptors
                    .iter()
                    .zip(values)
                    .map(|(d, values)| DescriptorRule {
                        id: d.id,
                        name: &d.name,
                        required: d.required,
                        multiple: d.multiple,
                        free_text: d.free_text,
                        max_length: d.max_length,
                        values,
                        requires: &d.requires,
                    })
                    .collect()
            })
            .collect();
        let conditions: Vec<AllowedCondition<'_>> = self
            .conditions
            .iter()
            .zip(&descriptors)
            .map(|(c, descriptors)| AllowedCondition {
                condition: c.condition,
                descriptors,
            })
            .collect();
        f(ConditionPolicy {
            required: self.required,
            conditions: &conditions,
        })
    }
}

/// One distinct policy of a file and the leaves that have it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyGroup {
    /// The policy.
    pub rule: ConditionRule,
    /// The leaves that have it, sorted.
    pub category_ids: Vec<u32>,
}

/// The contents of a condition-policy file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionsFile {
    /// The category tree id; the same as the snapshot's.
    pub tree_id: u32,
    /// The marketplace id, e.g. `EBAY_US`.
    pub marketplace_id: String,
    /// The `categoryTreeVersion` of the tree the policies were checked against.
    pub version: String,
    /// The [`fingerprint`] of that tree.
    pub tree_fingerprint: u64,
    /// Where the policies were taken from (the getItemConditionPolicies URL).
    pub source: String,
    /// Whether the answer was marked as made up (the toolkit's fake marketplace's).
    pub made_up: bool,
    /// The distinct policies, in the order of their first leaf.
    pub policies: Vec<PolicyGroup>,
}

impl ConditionsFile {
    /// The policy of leaf `id`; `None` when the file does not name it.
    pub fn rule_of(&self, id: u32) -> Option<&ConditionRule> {
        self.policies
            .iter()
            .find(|p| p.category_ids.binary_search(&id).is_ok())
            .map(|p| &p.rule)
    }

    /// The number of leaves the file names.
    pub fn category_count(&self) -> usize {
        self.policies.iter().map(|p| p.category_ids.len()).sum()
    }
}

/// A broken rule of the file (see the [module documentation](self)).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConditionsRule {
    /// The file is another tree's or another marketplace's.
    #[error(
        "the policies are for {found}, but the snapshot is {expected} (rule: the file beside a snapshot is that snapshot's site's)"
    )]
    WrongTree {
        /// The snapshot's tree id and marketplace.
        expected: String,
        /// The file's.
        found: String,
    },
    /// A category id is not a category of the tree, or not a leaf.
    #[error("category {id} is {what} of the tree (rule: a policy is a leaf's)")]
    NotALeaf {
        /// The id.
        id: u32,
        /// `not a category`, `not a leaf`.
        what: &'static str,
    },
    /// A category id appears twice.
    #[error("category {id} has two policies (rule: a leaf has one)")]
    Duplicate {
        /// The id.
        id: u32,
    },
    /// `categoryIds` are not sorted, or empty.
    #[error("{0} (rule: categoryIds are sorted and not empty)")]
    Unsorted(String),
    /// Two policies are equal.
    #[error("it repeats policy {earlier} (rule: each policy is kept once)")]
    Repeated {
        /// The 1-based number of the earlier policy.
        earlier: usize,
    },
    /// A condition, descriptor or value appears twice, or a descriptor requires one the
    /// condition does not have.
    #[error("{0}")]
    Malformed(String),
    /// The file (or one policy, descriptor or name of it) holds more than a bound allows
    /// ([`MAX_POLICIES`], [`MAX_DESCRIPTORS_PER_POLICY`], [`MAX_VALUES_PER_DESCRIPTOR`],
    /// [`MAX_DESCRIPTORS`], [`MAX_VALUES`], [`MAX_NAME_BYTES`]).
    #[error(
        "{what}: {figure}, above the bound of {bound} (rule: a condition-policy file holds at most what eBay's data can, with a wide margin; see docs/security.md)"
    )]
    AboveBound {
        /// What was counted, e.g. `distinct policies`.
        what: String,
        /// How many the file holds.
        figure: usize,
        /// The bound.
        bound: usize,
    },
}

/// Why a condition-policy file could not be read, or an answer not accepted.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ConditionsError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: Arc<std::io::Error>,
    },
    /// The file is not a condition-policy file (bad JSON, missing fields, wrong format).
    #[error("{path}: not a valid condition-policy file: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// What the parser said, with line and column.
        message: String,
    },
    /// A policy breaks a rule; `policy` is its 1-based number (0: the header).
    #[error("{path}: policy {policy}: {rule}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The 1-based number of the policy (0: the header).
        policy: usize,
        /// The broken rule.
        rule: ConditionsRule,
    },
    /// The file was written for another tree than the snapshot beside it: the site is
    /// compiled in without condition policies until a refresh rewrites it.
    #[error(
        "{path}: out of step with the snapshot beside it ({reason}): the site is compiled in without condition policies until `snapshot refresh` (the toolkit's snapshot command) rewrites the file"
    )]
    OutOfStep {
        /// The file.
        path: PathBuf,
        /// How its header and the snapshot differ.
        reason: String,
    },
}

impl ConditionsError {
    /// Whether the answer or file holds more than a bound allows ([`ConditionsRule::AboveBound`]):
    /// `snapshot refresh` then keeps the committed file instead of failing.
    pub fn is_above_bound(&self) -> bool {
        matches!(
            self,
            ConditionsError::Invalid {
                rule: ConditionsRule::AboveBound { .. },
                ..
            }
        )
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FileHeader {
    format: u32,
    category_tree_id: u32,
    marketplace_id: String,
    category_tree_version: String,
    source: String,
    made_up: bool,
    policy_count: usize,
    category_count: usize,
    policies: Vec<FilePolicy>,
    tree_fingerprint: String,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct FilePolicy {
    rule: ConditionRule,
    category_ids: Vec<u32>,
}

/// The condition-policy file beside a snapshot: `EBAY_US.json` → `EBAY_US.conditions.json`.
///
/// ```
/// use std::path::Path;
/// let p = taxonomy_tree::conditions::path_beside(Path::new("snapshots/EBAY_US.json"));
/// assert_eq!(p, Path::new("snapshots/EBAY_US.conditions.json"));
/// ```
pub fn path_beside(snapshot_path: &Path) -> PathBuf {
    crate::beside::path_beside(snapshot_path, "conditions")
}

/// What [`from_answer`] left out of an answer, for the refresh's summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LeftOut {
    /// Categories of the answer that are not in the tree (the tree is older or newer).
    pub not_in_tree: Vec<u32>,
    /// Categories of the answer that are in the tree but not leaves (a filter on a parent
    /// answers for it too).
    pub not_leaves: usize,
    /// Condition ids this toolkit does not know, with a category that allows each: they are
    /// left out of the policies.
    pub unknown_conditions: BTreeMap<String, u32>,
}

/// Makes the file for `tree` from an answer's policies, one `(category id, rule)` a
/// category: groups equal rules, keeps leaves of the tree only (the rest is counted in
/// [`LeftOut`]), and checks the rules. The same answer gives the same file, whatever its order.
pub fn from_answer(
    policies: impl IntoIterator<Item = (u32, ConditionRule)>,
    tree: &CategoryTree,
    source: &str,
    made_up: bool,
    path: &Path,
) -> Result<(ConditionsFile, LeftOut), ConditionsError> {
    let mut left_out = LeftOut::default();
    let mut by_rule: BTreeMap<ConditionRule, BTreeSet<u32>> = BTreeMap::new();
    let mut seen = BTreeSet::new();
    for (id, rule) in policies {
        match tree.get(id) {
            None => left_out.not_in_tree.push(id),
            Some(c) if !c.leaf || c.id == crate::tree::ROOT_ID => left_out.not_leaves += 1,
            Some(_) => {
                if !seen.insert(id) {
                    return Err(invalid(path, 0, ConditionsRule::Duplicate { id }));
                }
                by_rule.entry(rule).or_default().insert(id);
            }
        }
    }
    left_out.not_in_tree.sort_unstable();
    left_out.not_in_tree.dedup();
    let mut policies: Vec<PolicyGroup> = by_rule
        .into_iter()
        .map(|(rule, ids)| PolicyGroup {
            rule,
            category_ids: ids.into_iter().collect(),
        })
        .collect();
    policies.sort_by_key(|p| p.category_ids[0]);
    let file = ConditionsFile {
        tree_id: tree.meta.tree_id,
        marketplace_id: tree.meta.marketplace_id.clone(),
        version: tree.meta.version.clone(),
        tree_fingerprint: fingerprint(tree),
        source: source.to_string(),
        made_up,
        policies,
    };
    check(&file, tree).map_err(|(policy, rule)| invalid(path, policy, rule))?;
    Ok((file, left_out))
}

fn invalid(path: &Path, policy: usize, rule: ConditionsRule) -> ConditionsError {
    ConditionsError::Invalid {
        path: path.to_path_buf(),
        policy,
        rule,
    }
}

/// Checks `file` against the rules and `tree`. On a broken rule, returns the 1-based number
/// of the offending policy (0: the header) with the rule.
pub fn check(file: &ConditionsFile, tree: &CategoryTree) -> Result<(), (usize, ConditionsRule)> {
    check_bounds(file)?;
    if file.tree_id != tree.meta.tree_id || file.marketplace_id != tree.meta.marketplace_id {
        return Err((
            0,
            ConditionsRule::WrongTree {
                expected: format!("{} tree {}", tree.meta.marketplace_id, tree.meta.tree_id),
                found: format!("{} tree {}", file.marketplace_id, file.tree_id),
            },
        ));
    }
    let mut seen = BTreeSet::new();
    // Each rule and the number of the policy that has it (a hash map: a hostile file may hold
    // a policy a leaf).
    let mut rules: std::collections::HashMap<&ConditionRule, usize> =
        std::collections::HashMap::with_capacity(file.policies.len());
    for (i, p) in file.policies.iter().enumerate() {
        let n = i + 1;
        if p.category_ids.is_empty() {
            return Err((n, ConditionsRule::Unsorted("no categoryIds".into())));
        }
        if let Some(w) = p.category_ids.windows(2).find(|w| w[0] >= w[1]) {
            return Err((
                n,
                ConditionsRule::Unsorted(format!("category {} comes after {}", w[1], w[0])),
            ));
        }
        if let Some(earlier) = rules.insert(&p.rule, n) {
            return Err((n, ConditionsRule::Repeated { earlier }));
        }
        for &id in &p.category_ids {
            match tree.get(id) {
                None => {
                    return Err((
                        n,
                        ConditionsRule::NotALeaf {
                            id,
                            what: "not a category",
                        },
                    ));
                }
                Some(c) if !c.leaf || c.id == crate::tree::ROOT_ID => {
                    return Err((
                        n,
                        ConditionsRule::NotALeaf {
                            id,
                            what: "not a leaf",
                        },
                    ));
                }
                Some(_) => {}
            }
            if !seen.insert(id) {
                return Err((n, ConditionsRule::Duplicate { id }));
            }
        }
        check_rule(&p.rule).map_err(|m| (n, ConditionsRule::Malformed(m)))?;
    }
    Ok(())
}

/// Checks the file against the bounds (see the [module documentation](self)) before anything
/// else, so that a hostile file costs one pass: the policy count, then each policy's
/// descriptors, values and names, and the totals as they grow (the first policy past a
/// total is named).
fn check_bounds(file: &ConditionsFile) -> Result<(), (usize, ConditionsRule)> {
    let above = |what: String, figure: usize, bound: usize| ConditionsRule::AboveBound {
        what,
        figure,
        bound,
    };
    if file.policies.len() > MAX_POLICIES {
        return Err((
            0,
            above(
                "distinct policies".into(),
                file.policies.len(),
                MAX_POLICIES,
            ),
        ));
    }
    let (mut descriptors, mut values) = (0_usize, 0_usize);
    for (i, p) in file.policies.iter().enumerate() {
        let n = i + 1;
        let in_policy: usize = p.rule.conditions.iter().map(|c| c.descriptors.len()).sum();
        if in_policy > MAX_DESCRIPTORS_PER_POLICY {
            return Err((
                n,
                above(
                    "condition descriptors in the policy".into(),
                    in_policy,
                    MAX_DESCRIPTORS_PER_POLICY,
                ),
            ));
        }
        descriptors += in_policy;
        if descriptors > MAX_DESCRIPTORS {
            return Err((
                n,
                above(
                    "condition descriptors in the file up to this policy".into(),
                    descriptors,
                    MAX_DESCRIPTORS,
                ),
            ));
        }
        for c in &p.rule.conditions {
            for d in &c.descriptors {
                let here = || format!("condition {}: descriptor {}", c.condition, d.id);
                if d.values.len() > MAX_VALUES_PER_DESCRIPTOR {
                    return Err((
                        n,
                        above(
                            format!("{}: values", here()),
                            d.values.len(),
                            MAX_VALUES_PER_DESCRIPTOR,
                        ),
                    ));
                }
                values += d.values.len();
                if values > MAX_VALUES {
                    return Err((
                        n,
                        above(
                            "descriptor values in the file up to this policy".into(),
                            values,
                            MAX_VALUES,
                        ),
                    ));
                }
                let long = std::iter::once(&d.name)
                    .chain(d.values.iter().map(|v| &v.1))
                    .find(|name| name.len() > MAX_NAME_BYTES);
                if let Some(name) = long {
                    return Err((
                        n,
                        above(
                            format!("{}: a name's bytes", here()),
                            name.len(),
                            MAX_NAME_BYTES,
                        ),
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Checks a rule on its own: no condition, descriptor or value twice; `requires` within the
/// condition.
fn check_rule(rule: &ConditionRule) -> Result<(), String> {
    let mut conditions = BTreeSet::new();
    for c in &rule.conditions {
        if !conditions.insert(c.condition) {
            return Err(format!("condition {} appears twice", c.condition));
        }
        let ids: BTreeSet<u32> = c.descriptors.iter().map(|d| d.id).collect();
        if ids.len() != c.descriptors.len() {
            return Err(format!(
                "condition {}: a condition descriptor appears twice",
                c.condition
            ));
        }
        for d in &c.descriptors {
            // Names are server text that problems and compile errors print: no control or
            // bidirectional formatting character, as in a tree's names.
            let unsafe_name = std::iter::once(d.name.as_str())
                .chain(d.values.iter().map(|v| v.1.as_str()))
                .find(|name| name.chars().any(crate::tree::is_unsafe_char));
            if let Some(name) = unsafe_name {
                return Err(format!(
                    "condition {}: descriptor {}: the name {name:?} holds a control or bidirectional formatting character",
                    c.condition, d.id
                ));
            }
            let values: BTreeSet<u32> = d.values.iter().map(|v| v.0).collect();
            if values.len() != d.values.len() {
                return Err(format!(
                    "condition {}: descriptor {}: a value appears twice",
                    c.condition, d.id
                ));
            }
            let requires: BTreeSet<u32> = d.requires.iter().copied().collect();
            if requires.len() != d.requires.len() {
                return Err(format!(
                    "condition {}: descriptor {}: a required descriptor appears twice",
                    c.condition, d.id
                ));
            }
            if let Some(r) = d.requires.iter().find(|r| !ids.contains(r)) {
                return Err(format!(
                    "condition {}: descriptor {} requires descriptor {r}, which the condition does not have",
                    c.condition, d.id
                ));
            }
        }
    }
    Ok(())
}

/// How `file` and the snapshot's `tree` differ, when the file was written for another tree;
/// `None` when it is in step.
pub fn out_of_step(file: &ConditionsFile, tree: &CategoryTree) -> Option<String> {
    crate::beside::out_of_step(
        file.tree_id,
        &file.version,
        Some(file.tree_fingerprint),
        tree,
    )
}

/// Renders the file: a policy's rule on one line, its categories on the next. The same
/// contents always give the same bytes.
pub fn to_string(file: &ConditionsFile) -> String {
    let q = |s: &str| serde_json::to_string(s).expect("strings always serialize");
    let mut out = String::with_capacity(file.category_count() * 8 + 512);
    out.push_str("{\n");
    let _ = writeln!(out, "  \"format\": {FORMAT},");
    let _ = writeln!(out, "  \"categoryTreeId\": {},", file.tree_id);
    let _ = writeln!(out, "  \"marketplaceId\": {},", q(&file.marketplace_id));
    let _ = writeln!(out, "  \"categoryTreeVersion\": {},", q(&file.version));
    let _ = writeln!(out, "  \"source\": {},", q(&file.source));
    let _ = writeln!(out, "  \"madeUp\": {},", file.made_up);
    let _ = writeln!(out, "  \"policyCount\": {},", file.policies.len());
    let _ = writeln!(out, "  \"categoryCount\": {},", file.category_count());
    out.push_str("  \"policies\": [\n");
    for (i, p) in file.policies.iter().enumerate() {
        let rule = serde_json::to_string(&p.rule).expect("rules always serialize");
        let ids = serde_json::to_string(&p.category_ids).expect("ids always serialize");
        let comma = if i + 1 < file.policies.len() { "," } else { "" };
        let _ = write!(
            out,
            "    {{\n      \"rule\": {rule},\n      \"categoryIds\": {ids}\n    }}{comma}\n"
        );
    }
    let _ = write!(
        out,
        "  ],\n  \"treeFingerprint\": \"{:016x}\"\n}}\n",
        file.tree_fingerprint
    );
    out
}

/// Parses a file held in memory without checking it against a tree; `path` is only used in
/// errors.
pub fn parse_unchecked(text: &str, path: &Path) -> Result<ConditionsFile, ConditionsError> {
    let syntax = |message: String| ConditionsError::Syntax {
        path: path.to_path_buf(),
        message,
    };
    let header: FileHeader = serde_json::from_str(text).map_err(|e| syntax(e.to_string()))?;
    if header.format != FORMAT {
        return Err(syntax(format!(
            "format {} is not supported (this toolkit reads format {FORMAT}); regenerate it with `snapshot refresh` (the toolkit's snapshot command)",
            header.format
        )));
    }
    let hex = &header.tree_fingerprint;
    let tree_fingerprint = crate::beside::parse_fingerprint(hex).ok_or_else(|| {
        syntax(format!(
            "treeFingerprint {hex:?} is not 16 hexadecimal digits"
        ))
    })?;
    let file = ConditionsFile {
        tree_id: header.category_tree_id,
        marketplace_id: header.marketplace_id,
        version: header.category_tree_version,
        tree_fingerprint,
        source: header.source,
        made_up: header.made_up,
        policies: header
            .policies
            .into_iter()
            .map(|p| PolicyGroup {
                rule: p.rule,
                category_ids: p.category_ids,
            })
            .collect(),
    };
    if header.policy_count != file.policies.len() || header.category_count != file.category_count()
    {
        return Err(syntax(format!(
            "the header says {} policies of {} categories, the file has {} of {}",
            header.policy_count,
            header.category_count,
            file.policies.len(),
            file.category_count()
        )));
    }
    Ok(file)
}

/// Parses a file held in memory and checks it against `tree`, the tree of the snapshot beside
/// it; `path` is only used in errors.
pub fn parse(
    text: &str,
    path: &Path,
    tree: &CategoryTree,
) -> Result<ConditionsFile, ConditionsError> {
    let file = parse_unchecked(text, path)?;
    check(&file, tree).map_err(|(policy, rule)| invalid(path, policy, rule))?;
    Ok(file)
}

/// Reads the file beside the snapshot at `snapshot_path`, whose tree is `tree`, and checks
/// it. `Ok(None)` when there is no file: the site's policies are not known. A file written for
/// another tree is [`ConditionsError::OutOfStep`], whatever its policies.
pub fn read_in_step(
    snapshot_path: &Path,
    tree: &CategoryTree,
) -> Result<Option<ConditionsFile>, ConditionsError> {
    let path = path_beside(snapshot_path);
    let text = match crate::beside::read_if_present(&path) {
        Ok(Some(text)) => text,
        Ok(None) => return Ok(None),
        Err(e) => {
            return Err(ConditionsError::Io {
                path,
                source: Arc::new(e),
            });
        }
    };
    let file = parse_unchecked(&text, &path)?;
    if let Some(reason) = out_of_step(&file, tree) {
        return Err(ConditionsError::OutOfStep { path, reason });
    }
    check(&file, tree).map_err(|(policy, rule)| invalid(&path, policy, rule))?;
    Ok(Some(file))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Root 0 > 1 (not a leaf) > 2, 3, 4 (leaves).
    fn tree() -> CategoryTree {
        crate::beside::test_tree(&[2, 3, 4])
    }

    fn rule(required: bool, conditions: &[Condition]) -> ConditionRule {
        ConditionRule {
            required,
            conditions: conditions
                .iter()
                .map(|&condition| ConditionEntry {
                    condition,
                    descriptors: vec![],
                })
                .collect(),
        }
    }

    #[test]
    fn equal_policies_are_kept_once_and_the_file_reads_back() {
        let t = tree();
        let used = rule(true, &[Condition::New, Condition::UsedExcellent]);
        let answer = vec![
            (4, used.clone()),
            (2, used.clone()),
            (3, rule(false, &[])),
            (1, used.clone()),
            (99, used.clone()),
        ];
        let path = Path::new("EBAY_US.conditions.json");
        let (file, left_out) = from_answer(answer, &t, "src", false, path).unwrap();
        assert_eq!(file.policies.len(), 2);
        assert_eq!(file.policies[0].category_ids, [2, 4]);
        assert_eq!(file.rule_of(3), Some(&rule(false, &[])));
        assert_eq!(file.rule_of(1), None);
        assert_eq!(left_out.not_in_tree, [99]);
        assert_eq!(left_out.not_leaves, 1);
        let text = to_string(&file);
        assert_eq!(parse(&text, path, &t).unwrap(), file);
        assert!(text.contains(r#""rule": {"required":true,"conditions":[{"condition":"NEW"},{"condition":"USED_EXCELLENT"}]}"#), "{text}");
    }

    #[test]
    fn a_broken_file_is_refused_naming_the_policy_and_the_rule() {
        let t = tree();
        let path = Path::new("EBAY_US.conditions.json");
        let (file, _) = from_answer(
            vec![(2, rule(true, &[Condition::New])), (3, rule(false, &[]))],
            &t,
            "src",
            false,
            path,
        )
        .unwrap();
        let text = to_string(&file);
        let broken = text.replace("\"categoryIds\": [3]", "\"categoryIds\": [1]");
        let e = parse(&broken, path, &t).unwrap_err().to_string();
        assert_eq!(
            e,
            "EBAY_US.conditions.json: policy 2: category 1 is not a leaf of the tree (rule: a policy is a leaf's)"
        );
        let twice = text.replace("\"categoryIds\": [3]", "\"categoryIds\": [2]");
        let e = parse(&twice, path, &t).unwrap_err().to_string();
        assert!(e.contains("category 2 has two policies"), "{e}");
        let unknown = text.replace("\"NEW\"", "\"BRAND_NEW\"");
        let e = parse(&unknown, path, &t).unwrap_err().to_string();
        assert!(
            e.contains("\"BRAND_NEW\" is not a ConditionEnum value"),
            "{e}"
        );
    }

    #[test]
    fn a_descriptor_name_with_a_control_character_is_refused() {
        let t = tree();
        let path = Path::new("EBAY_US.conditions.json");
        let hostile = ConditionRule {
            required: false,
            conditions: vec![ConditionEntry {
                condition: Condition::LikeNew,
                descriptors: vec![DescriptorEntry {
                    id: 27502,
                    name: "Grade".into(),
                    required: false,
                    multiple: false,
                    free_text: false,
                    max_length: None,
                    values: vec![(275020, "10\u{1b}]0;x\u{7}".into())],
                    requires: vec![],
                }],
            }],
        };
        let e = from_answer([(2, hostile)], &t, "src", false, path)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("descriptor 27502: the name \"10\\u{1b}]0;x\\u{7}\" holds a control"),
            "{e}"
        );
    }

    /// A descriptor of `values` values (ids 0, 1, …), free text of at most `max_length`
    /// characters when it has none.
    fn descriptor(id: u32, values: u32, max_length: u32) -> DescriptorEntry {
        DescriptorEntry {
            id,
            name: format!("Descriptor {id}"),
            required: false,
            multiple: false,
            free_text: values == 0,
            max_length: (values == 0).then_some(max_length),
            values: (0..values).map(|v| (v, format!("Value {v}"))).collect(),
            requires: vec![],
        }
    }

    /// A policy allowing New with `descriptors`.
    fn with_descriptors(descriptors: Vec<DescriptorEntry>) -> ConditionRule {
        ConditionRule {
            required: true,
            conditions: vec![ConditionEntry {
                condition: Condition::New,
                descriptors,
            }],
        }
    }

    /// The error of `from_answer` for `answer` over a tree of the leaves `2..2 + leaves`.
    fn refusal(leaves: u32, answer: Vec<(u32, ConditionRule)>) -> String {
        let ids: Vec<u32> = (2..2 + leaves).collect();
        let t = crate::beside::test_tree(&ids);
        let path = Path::new("EBAY_US.conditions.json");
        match from_answer(answer, &t, "src", false, path) {
            Ok((file, _)) => panic!("accepted {} policies", file.policies.len()),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn an_answer_above_a_bound_of_what_ebays_data_holds_is_refused_naming_the_bound_and_the_figure()
    {
        // The review's answer: each of 15,111 leaves its own policy with a 40-value descriptor.
        let answer = (0..15_111)
            .map(|i| (2 + i, with_descriptors(vec![descriptor(7000 + i, 40, 0)])))
            .collect();
        let e = refusal(15_111, answer);
        assert_eq!(
            e,
            "EBAY_US.conditions.json: policy 0: distinct policies: 15111, above the bound of 2000 (rule: a condition-policy file holds at most what eBay's data can, with a wide margin; see docs/security.md)"
        );
        // 2,001 distinct policies, each as small as can be.
        let answer = (0..2_001)
            .map(|i| (2 + i, with_descriptors(vec![descriptor(1, 0, i + 1)])))
            .collect();
        assert!(
            refusal(2_001, answer).contains("distinct policies: 2001, above the bound of 2000"),
        );
        // A descriptor of 101 values.
        let e = refusal(1, vec![(2, with_descriptors(vec![descriptor(1, 101, 0)]))]);
        assert!(
            e.contains(
                "policy 1: condition NEW: descriptor 1: values: 101, above the bound of 100"
            ),
            "{e}"
        );
        // A policy of 17 descriptors.
        let e = refusal(
            1,
            vec![(
                2,
                with_descriptors((1..=17).map(|d| descriptor(d, 1, 0)).collect()),
            )],
        );
        assert!(
            e.contains("policy 1: condition descriptors in the policy: 17, above the bound of 16"),
            "{e}"
        );
        // 101 policies of 100 values: 10,100 values in all.
        let answer = (0..101)
            .map(|i| (2 + i, with_descriptors(vec![descriptor(i + 1, 100, 0)])))
            .collect();
        let e = refusal(101, answer);
        assert!(
            e.contains(
                "descriptor values in the file up to this policy: 10100, above the bound of 10000"
            ),
            "{e}"
        );
        // 126 policies of 16 descriptors: 2,016 descriptors in all.
        let answer = (0..126)
            .map(|i| {
                let ds = (0..16).map(|d| descriptor(i * 16 + d, 0, 30)).collect();
                (2 + i, with_descriptors(ds))
            })
            .collect();
        let e = refusal(126, answer);
        assert!(
            e.contains(
                "condition descriptors in the file up to this policy: 2016, above the bound of 2000"
            ),
            "{e}"
        );
        // A value's name of 257 bytes.
        let mut long = descriptor(1, 1, 0);
        long.values[0].1 = "x".repeat(257);
        let e = refusal(1, vec![(2, with_descriptors(vec![long]))]);
        assert!(
            e.contains("descriptor 1: a name's bytes: 257, above the bound of 256"),
            "{e}"
        );
        // A descriptor required twice.
        let mut twice = descriptor(1, 1, 0);
        twice.requires = vec![2, 2];
        let e = refusal(
            1,
            vec![(2, with_descriptors(vec![twice, descriptor(2, 1, 0)]))],
        );
        assert!(e.contains("a required descriptor appears twice"), "{e}");
    }

    #[test]
    fn an_answer_at_every_bound_is_accepted() {
        // Policy 1: 16 descriptors, one of 100 values (a name of 256 bytes), 15 free text.
        let mut first: Vec<DescriptorEntry> = (1..=15).map(|d| descriptor(d, 0, 30)).collect();
        first.insert(0, descriptor(100, 100, 0));
        first[0].values[0].1 = "x".repeat(256);
        let mut answer = vec![(2, with_descriptors(first))];
        // 1,984 policies of one descriptor (2,000 in all): 1,980 of 5 values (10,000 in all),
        // 4 free text.
        answer.extend((0..1_984).map(|i| {
            let d = if i < 1_980 {
                descriptor(1_000 + i, 5, 0)
            } else {
                descriptor(1_000 + i, 0, 30)
            };
            (3 + i, with_descriptors(vec![d]))
        }));
        // 15 policies without descriptors (2,000 in all), distinct by their conditions.
        answer.extend((0..15_u32).map(|i| {
            let conditions = (0..4)
                .filter(|bit| (i + 1) >> bit & 1 == 1)
                .map(|bit| Condition::ALL[bit as usize])
                .collect::<Vec<_>>();
            (1_987 + i, rule(false, &conditions))
        }));
        let ids: Vec<u32> = (2..2_002).collect();
        let t = crate::beside::test_tree(&ids);
        let path = Path::new("EBAY_US.conditions.json");
        let (file, _) = from_answer(answer, &t, "src", false, path).unwrap();
        assert_eq!(file.policies.len(), MAX_POLICIES);
        let descriptors = file
            .policies
            .iter()
            .flat_map(|p| &p.rule.conditions)
            .flat_map(|c| &c.descriptors);
        assert_eq!(descriptors.clone().count(), MAX_DESCRIPTORS);
        assert_eq!(
            descriptors.map(|d| d.values.len()).sum::<usize>(),
            MAX_VALUES
        );
        assert_eq!(parse(&to_string(&file), path, &t).unwrap(), file);
    }

    #[test]
    fn a_rule_lends_itself_as_a_policy_with_its_descriptors() {
        let r = ConditionRule {
            required: true,
            conditions: vec![ConditionEntry {
                condition: Condition::LikeNew,
                descriptors: vec![DescriptorEntry {
                    id: 27501,
                    name: "Professional Grader".into(),
                    required: true,
                    multiple: false,
                    free_text: false,
                    max_length: None,
                    values: vec![(275010, "PSA".into())],
                    requires: vec![],
                }],
            }],
        };
        let (name, value) = r.with_policy(|p| {
            let d = &p.allowed(Condition::LikeNew).unwrap().descriptors[0];
            (
                d.name.to_string(),
                d.value(275010).unwrap().name.to_string(),
            )
        });
        assert_eq!(
            (name.as_str(), value.as_str()),
            ("Professional Grader", "PSA")
        );
    }
}
