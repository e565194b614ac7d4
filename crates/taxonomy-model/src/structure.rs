//! The Sell Metadata API's getListingStructurePolicies answer: whether each category of a
//! marketplace takes listings with item variations (`variationsSupported`). The types follow
//! eBay's schemas (`ListingStructurePolicyResponse`, `ListingStructurePolicy`), each field
//! under eBay's name in snake case; ids, strings in eBay's JSON (`"15687"`), are numbers here.

use serde::Deserialize;
use taxonomy_tree::bounded;

use crate::ServiceError;
use crate::answers::parse_id;

/// The answer of getListingStructurePolicies: the policies of the categories asked for (every
/// category of the marketplace when none was named), and eBay's warnings (errorId 46004: only
/// the first 50 category ids of the filter were considered).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ListingStructurePolicyResponse {
    /// `listingStructurePolicies`: one a category, in the service's order.
    pub listing_structure_policies: Vec<ListingStructurePolicy>,
    /// `warnings`: eBay's `Error` objects sent beside a success.
    pub warnings: Vec<ServiceError>,
}

impl ListingStructurePolicyResponse {
    /// The policy of `category_id`, if the answer holds one.
    pub fn get(&self, category_id: u32) -> Option<&ListingStructurePolicy> {
        self.listing_structure_policies
            .iter()
            .find(|p| p.category_id == category_id)
    }
}

/// `ListingStructurePolicy`: the listing structure one category takes.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "camelCase"))]
pub struct ListingStructurePolicy {
    /// `categoryId`.
    pub category_id: u32,
    /// `categoryTreeId`: the tree of the marketplace the category belongs to, if sent.
    pub category_tree_id: Option<u32>,
    /// `variationsSupported`: whether the category takes listings with item variations (an
    /// inventory item group); `None` when the answer leaves it out (eBay documents no default).
    pub variations_supported: Option<bool>,
}

// ---- wire shapes ----

type Id = serde_json::Value;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct WireResponse {
    #[serde(default, deserialize_with = "bounded::vec")]
    listing_structure_policies: Vec<WirePolicy>,
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
    variations_supported: Option<bool>,
}

pub(crate) fn structure_from_wire(
    w: WireResponse,
) -> Result<ListingStructurePolicyResponse, String> {
    let mut policies = Vec::with_capacity(w.listing_structure_policies.len());
    for (i, p) in w.listing_structure_policies.into_iter().enumerate() {
        let at = format!("listingStructurePolicies[{i}]");
        let category_tree_id = if p.category_tree_id.is_null() {
            None
        } else {
            Some(parse_id(
                &format!("{at}.categoryTreeId"),
                &p.category_tree_id,
            )?)
        };
        policies.push(ListingStructurePolicy {
            category_id: parse_id(&format!("{at}.categoryId"), &p.category_id)?,
            category_tree_id,
            variations_supported: p.variations_supported,
        });
    }
    Ok(ListingStructurePolicyResponse {
        listing_structure_policies: policies,
        warnings: w.warnings,
    })
}

#[cfg(test)]
mod tests {
    use crate::decode;

    #[test]
    fn a_listing_structure_answer_decodes_each_category_and_its_warnings() {
        let body = br#"{"listingStructurePolicies":[
          {"categoryId":"15687","categoryTreeId":"0","variationsSupported":true},
          {"categoryId":"1305","categoryTreeId":"0","variationsSupported":false},
          {"categoryId":"99","someNewField":1}],
          "warnings":[{"errorId":46004,"domain":"API_METADATA","message":"Only 50"}]}"#;
        let answer = decode::listing_structure_policies(body).unwrap();
        assert_eq!(answer.get(15687).unwrap().variations_supported, Some(true));
        assert_eq!(answer.get(15687).unwrap().category_tree_id, Some(0));
        assert_eq!(answer.get(1305).unwrap().variations_supported, Some(false));
        assert_eq!(answer.get(99).unwrap().variations_supported, None);
        assert_eq!(answer.warnings[0].error_id, 46004);
    }

    #[test]
    fn a_listing_structure_policy_with_a_bad_id_is_refused_naming_its_field_path() {
        let body = br#"{"listingStructurePolicies":[{"categoryId":"1"},{"categoryId":15687}]}"#;
        assert_eq!(
            decode::listing_structure_policies(body)
                .unwrap_err()
                .to_string(),
            "listingStructurePolicies[1].categoryId 15687 is a number, expected a decimal \
             string like \"15687\""
        );
        let flag =
            br#"{"listingStructurePolicies":[{"categoryId":"1","variationsSupported":"yes"}]}"#;
        assert!(decode::listing_structure_policies(flag).is_err());
    }
}
