//! The Sell Metadata API's getItemConditionPolicies answer: the item conditions each category
//! of a marketplace takes, whether it needs one, and (trading cards) the condition descriptors
//! of each condition. The types follow eBay's schemas (`ItemConditionPolicyResponse`,
//! `ItemConditionPolicy`, `ItemCondition`, `ItemConditionDescriptor`, …), each field under
//! eBay's name in snake case; ids, strings in eBay's JSON (`"1000"`), are numbers here.

use serde::Deserialize;
use taxonomy_tree::bounded;

use crate::ServiceError;
use crate::answers::parse_id;

wire_enum! {
    /// `usage` of an item condition: a restriction on who may list with it.
    ConditionUsage {
        /// `RESTRICTED`: only sellers eBay approved may list with the condition (2000, 2010,
        /// 2020, 2030: the refurbished conditions).
        Restricted = "RESTRICTED",
    }
}

wire_enum! {
    /// `cardinality` of a condition descriptor (eBay's `CardinalityEnum`): how many values a
    /// listing gives it.
    DescriptorCardinality {
        /// `SINGLE`: one value.
        Single = "SINGLE",
        /// `MULTI`: several values.
        Multi = "MULTI",
    }
}

wire_enum! {
    /// `mode` of a condition descriptor (eBay's `ConditionDescriptorModeEnum`): listed values
    /// or the seller's own text.
    DescriptorMode {
        /// `FREE_TEXT`: the seller's text (the Certification Number), at most `maxLength`.
        FreeText = "FREE_TEXT",
        /// `SELECTION_ONLY`: one of `conditionDescriptorValues`.
        SelectionOnly = "SELECTION_ONLY",
    }
}

wire_enum! {
    /// `usage` of a condition descriptor (eBay's `DescriptorUsageEnum`).
    DescriptorUsage {
        /// `REQUIRED`: a listing with the condition gives the descriptor.
        Required = "REQUIRED",
    }
}

/// The answer of getItemConditionPolicies: the policies of the categories asked for (every
/// category of the marketplace when none was named), and eBay's warnings (errorId 46004: only
/// the first 50 category ids of the filter were considered).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ItemConditionPolicyResponse {
    /// `itemConditionPolicies`: one a category, in the service's order.
    pub item_condition_policies: Vec<ItemConditionPolicy>,
    /// `warnings`: eBay's `Error` objects sent beside a success.
    pub warnings: Vec<ServiceError>,
}

impl ItemConditionPolicyResponse {
    /// The policy of `category_id`, if the answer holds one.
    pub fn get(&self, category_id: u32) -> Option<&ItemConditionPolicy> {
        self.item_condition_policies
            .iter()
            .find(|p| p.category_id == category_id)
    }
}

/// `ItemConditionPolicy`: the item conditions of one category.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ItemConditionPolicy {
    /// `categoryId`.
    pub category_id: u32,
    /// `categoryTreeId`: the tree of the marketplace the category belongs to, if sent.
    pub category_tree_id: Option<u32>,
    /// `itemConditionRequired`: a listing in the category must give a condition (`false`
    /// when the answer leaves it out).
    pub item_condition_required: bool,
    /// `itemConditions`: the conditions the category takes (empty: none).
    pub item_conditions: Vec<ItemCondition>,
}

impl ItemConditionPolicy {
    /// The condition of id `condition_id` (eBay's condition ids: 1000 for New, 3000 for Used),
    /// if the category takes it.
    pub fn condition(&self, condition_id: u32) -> Option<&ItemCondition> {
        self.item_conditions
            .iter()
            .find(|c| c.condition_id == condition_id)
    }
}

/// `ItemCondition`: one condition a category takes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ItemCondition {
    /// `conditionId`, e.g. 1000 (New), 3000 (Used), 2750 (Graded, for trading cards).
    pub condition_id: u32,
    /// `conditionDescription`: its label in the category, localized ("New", "Brand New").
    pub condition_description: Option<String>,
    /// `conditionHelpText`: what the condition means.
    pub condition_help_text: Option<String>,
    /// `usage`: who may list with it ([`ConditionUsage::Restricted`]), if restricted.
    pub usage: Option<ConditionUsage>,
    /// `conditionDescriptors`: the descriptors a listing with this condition gives (trading
    /// cards only; empty elsewhere).
    pub condition_descriptors: Vec<ItemConditionDescriptor>,
}

/// `ItemConditionDescriptor`: a descriptor of a condition (27501 Professional Grader, 27502
/// Grade, 27503 Certification Number, 40001 Card Condition).
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ItemConditionDescriptor {
    /// `conditionDescriptorId`.
    pub condition_descriptor_id: u32,
    /// `conditionDescriptorName`.
    pub condition_descriptor_name: Option<String>,
    /// `conditionDescriptorHelpText`.
    pub condition_descriptor_help_text: Option<String>,
    /// `conditionDescriptorValues`: its values (empty for a free-text descriptor).
    pub condition_descriptor_values: Vec<ItemConditionDescriptorValue>,
    /// `conditionDescriptorConstraint`, if sent.
    pub condition_descriptor_constraint: Option<ItemConditionDescriptorConstraint>,
}

/// `ItemConditionDescriptorConstraint`: how a descriptor is given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ItemConditionDescriptorConstraint {
    /// `applicableToConditionDescriptorIds`: the descriptors that must be given with it
    /// (Grade with Professional Grader).
    pub applicable_to_condition_descriptor_ids: Vec<u32>,
    /// `cardinality`.
    pub cardinality: Option<DescriptorCardinality>,
    /// `defaultConditionDescriptorValueId`.
    pub default_condition_descriptor_value_id: Option<u32>,
    /// `maxLength`: the longest free text.
    pub max_length: Option<u32>,
    /// `mode`.
    pub mode: Option<DescriptorMode>,
    /// `usage`: sent only when the descriptor is required.
    pub usage: Option<DescriptorUsage>,
}

/// `ItemConditionDescriptorValue`: one value of a descriptor (275020 for Grade "10").
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ItemConditionDescriptorValue {
    /// `conditionDescriptorValueId`.
    pub condition_descriptor_value_id: u32,
    /// `conditionDescriptorValueName`.
    pub condition_descriptor_value_name: Option<String>,
    /// `conditionDescriptorValueHelpText`.
    pub condition_descriptor_value_help_text: Option<String>,
    /// `conditionDescriptorValueAdditionalHelpText`.
    pub condition_descriptor_value_additional_help_text: Vec<String>,
    /// `conditionDescriptorValueConstraints`.
    pub condition_descriptor_value_constraints: Vec<ItemConditionDescriptorValueConstraint>,
}

/// `ItemConditionDescriptorValueConstraint`: the descriptor (and its values) a value goes
/// with.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ItemConditionDescriptorValueConstraint {
    /// `applicableToConditionDescriptorId`.
    pub applicable_to_condition_descriptor_id: Option<u32>,
    /// `applicableToConditionDescriptorValueIds`.
    pub applicable_to_condition_descriptor_value_ids: Vec<u32>,
}

// ---- wire shapes ----

type Id = serde_json::Value;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireResponse {
    #[serde(default, deserialize_with = "bounded::vec")]
    item_condition_policies: Vec<WirePolicy>,
    #[serde(default, deserialize_with = "bounded::vec")]
    warnings: Vec<ServiceError>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WirePolicy {
    #[serde(default, deserialize_with = "bounded::skipped")]
    category_id: Id,
    #[serde(default, deserialize_with = "bounded::skipped")]
    category_tree_id: Id,
    #[serde(default)]
    item_condition_required: Option<bool>,
    #[serde(default, deserialize_with = "bounded::vec")]
    item_conditions: Vec<WireCondition>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireCondition {
    #[serde(default, deserialize_with = "bounded::skipped")]
    condition_id: Id,
    #[serde(default)]
    condition_description: Option<String>,
    #[serde(default)]
    condition_help_text: Option<String>,
    #[serde(default)]
    usage: Option<ConditionUsage>,
    #[serde(default, deserialize_with = "bounded::vec")]
    condition_descriptors: Vec<WireDescriptor>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireDescriptor {
    #[serde(default, deserialize_with = "bounded::skipped")]
    condition_descriptor_id: Id,
    #[serde(default)]
    condition_descriptor_name: Option<String>,
    #[serde(default)]
    condition_descriptor_help_text: Option<String>,
    #[serde(default, deserialize_with = "bounded::vec")]
    condition_descriptor_values: Vec<WireValue>,
    #[serde(default)]
    condition_descriptor_constraint: Option<WireConstraint>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireConstraint {
    #[serde(default, deserialize_with = "bounded::vec")]
    applicable_to_condition_descriptor_ids: Vec<Id>,
    #[serde(default)]
    cardinality: Option<DescriptorCardinality>,
    #[serde(default, deserialize_with = "bounded::skipped")]
    default_condition_descriptor_value_id: Id,
    #[serde(default)]
    max_length: Option<u32>,
    #[serde(default)]
    mode: Option<DescriptorMode>,
    #[serde(default)]
    usage: Option<DescriptorUsage>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireValue {
    #[serde(default, deserialize_with = "bounded::skipped")]
    condition_descriptor_value_id: Id,
    #[serde(default)]
    condition_descriptor_value_name: Option<String>,
    #[serde(default)]
    condition_descriptor_value_help_text: Option<String>,
    #[serde(default, deserialize_with = "bounded::vec")]
    condition_descriptor_value_additional_help_text: Vec<String>,
    #[serde(default, deserialize_with = "bounded::vec")]
    condition_descriptor_value_constraints: Vec<WireValueConstraint>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireValueConstraint {
    #[serde(default, deserialize_with = "bounded::skipped")]
    applicable_to_condition_descriptor_id: Id,
    #[serde(default, deserialize_with = "bounded::vec")]
    applicable_to_condition_descriptor_value_ids: Vec<Id>,
}

/// An id that may be left out: `None` when absent (or null), else a decimal string.
fn optional_id(field: &str, value: &Id) -> Result<Option<u32>, String> {
    if value.is_null() {
        Ok(None)
    } else {
        parse_id(field, value).map(Some)
    }
}

/// A list of ids, each a decimal string, named `{field}[k]` in errors.
fn ids(field: &str, values: &[Id]) -> Result<Vec<u32>, String> {
    values
        .iter()
        .enumerate()
        .map(|(k, v)| parse_id(&format!("{field}[{k}]"), v))
        .collect()
}

pub(crate) fn policies_from_wire(w: WireResponse) -> Result<ItemConditionPolicyResponse, String> {
    let mut policies = Vec::with_capacity(w.item_condition_policies.len());
    for (i, p) in w.item_condition_policies.into_iter().enumerate() {
        let at = format!("itemConditionPolicies[{i}]");
        let mut conditions = Vec::with_capacity(p.item_conditions.len());
        for (j, c) in p.item_conditions.into_iter().enumerate() {
            let at = format!("{at}.itemConditions[{j}]");
            let mut descriptors = Vec::with_capacity(c.condition_descriptors.len());
            for (k, d) in c.condition_descriptors.into_iter().enumerate() {
                descriptors.push(descriptor_from_wire(
                    &format!("{at}.conditionDescriptors[{k}]"),
                    d,
                )?);
            }
            conditions.push(ItemCondition {
                condition_id: parse_id(&format!("{at}.conditionId"), &c.condition_id)?,
                condition_description: c.condition_description,
                condition_help_text: c.condition_help_text,
                usage: c.usage,
                condition_descriptors: descriptors,
            });
        }
        policies.push(ItemConditionPolicy {
            category_id: parse_id(&format!("{at}.categoryId"), &p.category_id)?,
            category_tree_id: optional_id(&format!("{at}.categoryTreeId"), &p.category_tree_id)?,
            item_condition_required: p.item_condition_required.unwrap_or(false),
            item_conditions: conditions,
        });
    }
    Ok(ItemConditionPolicyResponse {
        item_condition_policies: policies,
        warnings: w.warnings,
    })
}

fn descriptor_from_wire(at: &str, d: WireDescriptor) -> Result<ItemConditionDescriptor, String> {
    let mut values = Vec::with_capacity(d.condition_descriptor_values.len());
    for (v, value) in d.condition_descriptor_values.into_iter().enumerate() {
        let at = format!("{at}.conditionDescriptorValues[{v}]");
        let mut constraints = Vec::new();
        for (n, c) in value
            .condition_descriptor_value_constraints
            .into_iter()
            .enumerate()
        {
            let at = format!("{at}.conditionDescriptorValueConstraints[{n}]");
            constraints.push(ItemConditionDescriptorValueConstraint {
                applicable_to_condition_descriptor_id: optional_id(
                    &format!("{at}.applicableToConditionDescriptorId"),
                    &c.applicable_to_condition_descriptor_id,
                )?,
                applicable_to_condition_descriptor_value_ids: ids(
                    &format!("{at}.applicableToConditionDescriptorValueIds"),
                    &c.applicable_to_condition_descriptor_value_ids,
                )?,
            });
        }
        values.push(ItemConditionDescriptorValue {
            condition_descriptor_value_id: parse_id(
                &format!("{at}.conditionDescriptorValueId"),
                &value.condition_descriptor_value_id,
            )?,
            condition_descriptor_value_name: value.condition_descriptor_value_name,
            condition_descriptor_value_help_text: value.condition_descriptor_value_help_text,
            condition_descriptor_value_additional_help_text: value
                .condition_descriptor_value_additional_help_text,
            condition_descriptor_value_constraints: constraints,
        });
    }
    let constraint = match d.condition_descriptor_constraint {
        None => None,
        Some(c) => {
            let at = format!("{at}.conditionDescriptorConstraint");
            Some(ItemConditionDescriptorConstraint {
                applicable_to_condition_descriptor_ids: ids(
                    &format!("{at}.applicableToConditionDescriptorIds"),
                    &c.applicable_to_condition_descriptor_ids,
                )?,
                cardinality: c.cardinality,
                default_condition_descriptor_value_id: optional_id(
                    &format!("{at}.defaultConditionDescriptorValueId"),
                    &c.default_condition_descriptor_value_id,
                )?,
                max_length: c.max_length,
                mode: c.mode,
                usage: c.usage,
            })
        }
    };
    Ok(ItemConditionDescriptor {
        condition_descriptor_id: parse_id(
            &format!("{at}.conditionDescriptorId"),
            &d.condition_descriptor_id,
        )?,
        condition_descriptor_name: d.condition_descriptor_name,
        condition_descriptor_help_text: d.condition_descriptor_help_text,
        condition_descriptor_values: values,
        condition_descriptor_constraint: constraint,
    })
}

#[cfg(test)]
mod tests {
    use crate::decode;

    #[test]
    fn a_trading_card_policy_decodes_with_its_descriptors() {
        let body = br#"{"itemConditionPolicies":[{"categoryId":"183454","categoryTreeId":"0",
          "itemConditionRequired":true,"itemConditions":[{"conditionId":"2750",
          "conditionDescription":"Graded","conditionDescriptors":[{"conditionDescriptorId":"27501",
          "conditionDescriptorName":"Professional Grader","conditionDescriptorConstraint":{
          "applicableToConditionDescriptorIds":["27502"],"cardinality":"SINGLE",
          "mode":"SELECTION_ONLY","usage":"REQUIRED"},"conditionDescriptorValues":[
          {"conditionDescriptorValueId":"275010","conditionDescriptorValueName":"PSA",
           "conditionDescriptorValueConstraints":[{"applicableToConditionDescriptorId":"27502",
           "applicableToConditionDescriptorValueIds":["275020"]}]}]}],"someNewField":1}]}],
          "warnings":[{"errorId":46004,"domain":"API_METADATA","message":"Only 50"}]}"#;
        let answer = decode::item_condition_policies(body).unwrap();
        let policy = answer.get(183454).unwrap();
        assert_eq!(policy.category_tree_id, Some(0));
        assert!(policy.item_condition_required);
        let graded = policy.condition(2750).unwrap();
        let grader = &graded.condition_descriptors[0];
        assert_eq!(grader.condition_descriptor_id, 27501);
        let constraint = grader.condition_descriptor_constraint.as_ref().unwrap();
        assert_eq!(constraint.applicable_to_condition_descriptor_ids, [27502]);
        assert_eq!(constraint.usage, Some(super::DescriptorUsage::Required));
        assert_eq!(
            grader.condition_descriptor_values[0].condition_descriptor_value_constraints[0]
                .applicable_to_condition_descriptor_value_ids,
            [275020]
        );
        assert_eq!(answer.warnings[0].error_id, 46004);
    }

    #[test]
    fn a_bad_id_is_refused_naming_its_field_path() {
        let body = br#"{"itemConditionPolicies":[{"categoryId":"1","itemConditions":[
          {"conditionId":"1000"},{"conditionId":3000}]}]}"#;
        let error = decode::item_condition_policies(body).unwrap_err();
        assert_eq!(
            error.to_string(),
            "itemConditionPolicies[0].itemConditions[1].conditionId 3000 is a number, expected \
             a decimal string like \"3000\""
        );
        let missing = br#"{"itemConditionPolicies":[{"itemConditions":[]}]}"#;
        assert_eq!(
            decode::item_condition_policies(missing)
                .unwrap_err()
                .to_string(),
            "itemConditionPolicies[0].categoryId is missing"
        );
    }
}
