//! The Taxonomy API's JSON answers decoded into this crate's types: one function a call,
//! each taking the answer's body (the JSON, decompressed) and what the call asked for that the
//! answer does not repeat (the category, the tree, the property).
//!
//! This is what marketplace-client's `TaxonomyClient` decodes its answers with; use it for an
//! answer you stored, received through another HTTP client, or recorded for a test. An
//! answer to a call is decoded the same way whichever program made the call: a field of an
//! unexpected JSON type, an id that is not a decimal string, a missing name are refused, and
//! the error names the field and where (`aspects[3].localizedAspectName is missing`). A
//! field the answer leaves out is `None` (or empty, or `false`), never a made-up default.
//!
//! An empty body (eBay's `204 No Content`) is not JSON: it means "none" (no aspects, no
//! suggestions, no expired categories), which the caller knows without decoding.
//!
//! ```
//! use taxonomy_model::{AspectMode, decode};
//!
//! let body = br#"{"aspects":[{"localizedAspectName":"Brand",
//!   "aspectConstraint":{"aspectRequired":true,"aspectMode":"FREE_TEXT"}}]}"#;
//! let answer = decode::item_aspects(9355, body)?;
//! assert_eq!(answer.category_id, 9355);
//! assert_eq!(answer.get("brand").unwrap().mode, Some(AspectMode::FreeText));
//!
//! let error = decode::item_aspects(9355, br#"{"aspects":[{"aspectValues":[]}]}"#).unwrap_err();
//! assert_eq!(error.to_string(), "aspects[0].localizedAspectName is missing");
//! # Ok::<(), decode::DecodeError>(())
//! ```

use std::fmt;

use serde::de::DeserializeOwned;

use crate::answers::{
    aspects_from_wire, compatibility_properties_from_wire, compatibility_values_from_wire,
    default_tree_id_from_wire, expired_from_wire, suggestions_from_wire,
};
use crate::conditions::policies_from_wire;
use crate::service_error::ErrorBody;
use crate::structure::structure_from_wire;
use crate::{
    CategorySuggestions, CompatibilityProperties, CompatibilityPropertyValues, DefaultTreeId,
    ExpiredCategories, ItemAspects, ItemConditionPolicyResponse, ListingStructurePolicyResponse,
    ServiceError,
};

/// Why an answer's body does not decode.
#[derive(Debug)]
#[non_exhaustive]
pub enum DecodeError {
    /// The body is not JSON, or a field holds a JSON type its schema does not allow (an
    /// object where a list belongs, a number where a flag belongs). serde_json's error tells
    /// where (line and column) and what was expected.
    Json(serde_json::Error),
    /// The JSON has the answer's shape, but a field the answer cannot do without is missing
    /// or invalid: the message names the field and where, e.g.
    /// `categorySuggestions[2].category.categoryId 9355 is a number, expected a decimal string
    /// like "9355"`.
    Field(String),
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DecodeError::Json(e) => match e.classify() {
                serde_json::error::Category::Data => write!(f, "not the documented shape: {e}"),
                category => write!(
                    f,
                    "not the expected JSON ({category:?} error at line {} column {})",
                    e.line(),
                    e.column()
                ),
            },
            DecodeError::Field(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DecodeError::Json(e) => Some(e),
            DecodeError::Field(_) => None,
        }
    }
}

/// The body as the wire shape `W`, holding at most
/// [`MAX_ANSWER_ELEMENTS`](crate::answers::MAX_ANSWER_ELEMENTS) array elements in all (a
/// larger answer is refused as soon as the count passes it, with a [`DecodeError::Json`]
/// that names the limit).
fn wire<W: DeserializeOwned>(body: &[u8]) -> Result<W, DecodeError> {
    taxonomy_tree::bounded::with_element_limit(
        crate::answers::MAX_ANSWER_ELEMENTS,
        "one answer",
        || serde_json::from_slice(body),
    )
    .map_err(DecodeError::Json)
}

/// A getItemAspectsForCategory answer for `category_id` (the category asked for: the answer
/// does not name it).
pub fn item_aspects(category_id: u32, body: &[u8]) -> Result<ItemAspects, DecodeError> {
    aspects_from_wire(category_id, wire(body)?).map_err(DecodeError::Field)
}

/// A getCategorySuggestions answer of the tree `tree_id` (the tree asked for, used when the
/// answer leaves out its `categoryTreeId`). A suggestion without its category (or the
/// category's id) is refused: it names nothing a listing could use.
pub fn category_suggestions(tree_id: u32, body: &[u8]) -> Result<CategorySuggestions, DecodeError> {
    suggestions_from_wire(tree_id, wire(body)?).map_err(DecodeError::Field)
}

/// A getDefaultCategoryTreeId answer.
pub fn default_tree_id(body: &[u8]) -> Result<DefaultTreeId, DecodeError> {
    default_tree_id_from_wire(wire(body)?).map_err(DecodeError::Field)
}

/// A getExpiredCategories answer for the tree `tree_id` (the tree asked for).
pub fn expired_categories(tree_id: u32, body: &[u8]) -> Result<ExpiredCategories, DecodeError> {
    expired_from_wire(tree_id, wire(body)?).map_err(DecodeError::Field)
}

/// A getCompatibilityProperties answer for `category_id` (the category asked for).
pub fn compatibility_properties(
    category_id: u32,
    body: &[u8],
) -> Result<CompatibilityProperties, DecodeError> {
    compatibility_properties_from_wire(category_id, wire(body)?).map_err(DecodeError::Field)
}

/// A getCompatibilityPropertyValues answer for `category_id` and `property` (what was asked
/// for).
pub fn compatibility_property_values(
    category_id: u32,
    property: &str,
    body: &[u8],
) -> Result<CompatibilityPropertyValues, DecodeError> {
    compatibility_values_from_wire(category_id, property, wire(body)?).map_err(DecodeError::Field)
}

/// A getItemConditionPolicies answer (the Sell Metadata API): every policy, each id checked
/// (`itemConditionPolicies[2].itemConditions[0].conditionId is missing`), the warnings kept.
pub fn item_condition_policies(body: &[u8]) -> Result<ItemConditionPolicyResponse, DecodeError> {
    policies_from_wire(wire(body)?).map_err(DecodeError::Field)
}

/// A getListingStructurePolicies answer (the Sell Metadata API): every policy, each id checked
/// (`listingStructurePolicies[2].categoryId is missing`), the warnings kept.
pub fn listing_structure_policies(
    body: &[u8],
) -> Result<ListingStructurePolicyResponse, DecodeError> {
    structure_from_wire(wire(body)?).map_err(DecodeError::Field)
}

/// The errors of an error body (`{"errors": [...]}`, as every eBay REST API answers a failed
/// call); `None` when `body` is not one, or lists no error. The texts are kept as the service
/// sent them, which may echo what the request sent (a token, a control character):
/// `marketplace-client`'s `ApiError::from_error_body` gives the same errors sanitized, as
/// its calls report them.
pub fn service_errors(body: &[u8]) -> Option<Vec<ServiceError>> {
    wire::<ErrorBody>(body)
        .ok()
        .map(|b| b.errors)
        .filter(|e| !e.is_empty())
}
