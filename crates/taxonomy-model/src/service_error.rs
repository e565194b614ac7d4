//! The error body every eBay REST API answers a failed call with (the `Error` and
//! `ErrorParameter` schemas of eBay's OpenAPI descriptions).

use std::fmt;

use serde::Deserialize;

/// One entry of the service's error body, every field of eBay's documented `Error` object
/// (`{"errors": [{"errorId", "domain", "subdomain", "category", "message", "longMessage",
/// "inputRefIds", "outputRefIds", "parameters"}]}`). A field the body leaves out is empty.
///
/// `marketplace-client` reports these in its `ApiError::Service`, every text sanitized
/// (token-like values and control characters removed, cut to 512 bytes).
/// [`decode::service_errors`](crate::decode::service_errors) keeps the texts as sent.
///
/// With the `serde` feature it serializes under eBay's names.
///
/// ```
/// use taxonomy_model::decode;
///
/// let body = br#"{"errors":[{"errorId":62004,"domain":"API_TAXONOMY","category":"REQUEST",
///   "message":"The specified category tree ID was not found.",
///   "parameters":[{"name":"categoryTreeId","value":"999"}]}]}"#;
/// let errors = decode::service_errors(body).unwrap();
/// assert_eq!(errors[0].error_id, 62004);
/// assert_eq!(
///     errors[0].to_string(),
///     "The specified category tree ID was not found. (errorId 62004, API_TAXONOMY) [categoryTreeId=999]"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[serde(rename_all = "camelCase", default)]
pub struct ServiceError {
    /// The error id, e.g. `62004` (category tree not found) or `1001` (invalid token).
    pub error_id: u32,
    /// The domain, e.g. `API_TAXONOMY`.
    pub domain: Option<String>,
    /// A subdomain, if sent.
    pub subdomain: Option<String>,
    /// `REQUEST`, `APPLICATION` or `BUSINESS`.
    pub category: Option<String>,
    /// The short message.
    pub message: String,
    /// The long message, if sent.
    pub long_message: Option<String>,
    /// The input the error refers to (`inputRefIds`), if sent.
    #[serde(deserialize_with = "taxonomy_tree::bounded::vec")]
    pub input_ref_ids: Vec<String>,
    /// The output the error refers to (`outputRefIds`), if sent.
    #[serde(deserialize_with = "taxonomy_tree::bounded::vec")]
    pub output_ref_ids: Vec<String>,
    /// Named values of the error.
    #[serde(deserialize_with = "taxonomy_tree::bounded::vec")]
    pub parameters: Vec<ErrorParameter>,
}

/// A `{name, value}` pair of a [`ServiceError`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[serde(default)]
pub struct ErrorParameter {
    /// The name.
    pub name: String,
    /// The value.
    pub value: String,
}

impl fmt::Display for ServiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (errorId {}", self.message, self.error_id)?;
        if let Some(domain) = &self.domain {
            write!(f, ", {domain}")?;
        }
        f.write_str(")")?;
        if let Some(long) = self
            .long_message
            .as_deref()
            .filter(|l| !l.is_empty() && *l != self.message)
        {
            write!(f, ": {long}")?;
        }
        for p in &self.parameters {
            write!(f, " [{}={}]", p.name, p.value)?;
        }
        Ok(())
    }
}

/// The error body's shape.
#[derive(Deserialize)]
pub(crate) struct ErrorBody {
    #[serde(default, deserialize_with = "taxonomy_tree::bounded::vec")]
    pub(crate) errors: Vec<ServiceError>,
}
