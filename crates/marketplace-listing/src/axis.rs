//! What a category's aspect rules say of an aspect as a variation axis: read by the catalogs
//! ([`Catalog::variation_axis`](crate::Catalog::variation_axis), check.rs) and by the group
//! check (group_check.rs), below them both.

use taxonomy_aspects::RuleSet;

/// What a category's aspect rules say of an aspect named as a variation axis
/// ([`Catalog::variation_axis`](crate::Catalog::variation_axis)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AxisRule {
    /// The aspect's name as the category spells it; `None` when the category has no such
    /// aspect.
    pub aspect: Option<String>,
    /// `aspectEnabledForVariations`.
    pub enabled_for_variations: bool,
    /// The axis's values a selection-only aspect does not allow: each value's position among
    /// the axis's values, with the closest allowed value.
    pub not_allowed: Vec<(usize, Option<String>)>,
}

/// What `rules` (any [`RuleSet`]: the compiled-in pinned rules, or those read from a
/// getItemAspectsForCategory answer) say of the aspect `name` as a variation axis taking
/// `values`: what [`Catalog::variation_axis`](crate::Catalog::variation_axis) answers.
pub fn axis_rule<R: RuleSet + ?Sized>(rules: &R, name: &str, values: &[String]) -> AxisRule {
    let Some(index) = rules.find_aspect(&taxonomy_aspects::key(name)) else {
        return AxisRule {
            aspect: None,
            enabled_for_variations: false,
            not_allowed: Vec::new(),
        };
    };
    let rule = rules.rule(index);
    let mut not_allowed = Vec::new();
    if rule.selection_only {
        for (i, value) in values.iter().enumerate() {
            if rules.find_value(index, value).is_none() {
                let closest = (not_allowed.len() < taxonomy_aspects::limits::SUGGESTIONS)
                    .then(|| taxonomy_aspects::closest(value, rule.values.iter()))
                    .flatten()
                    .map(str::to_owned);
                not_allowed.push((i, closest));
            }
        }
    }
    AxisRule {
        aspect: Some(rule.name.to_owned()),
        enabled_for_variations: rule.enabled_for_variations,
        not_allowed,
    }
}
