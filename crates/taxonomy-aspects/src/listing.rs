//! A listing's aspects, as the Inventory API takes them.

use alloc::string::String;
use alloc::vec::Vec;
#[cfg(feature = "json")]
use alloc::{borrow::ToOwned, format, string::ToString};
use core::fmt;

/// A listing's aspects: names, each with its values (in the order added; a JSON object's
/// aspects in name order).
///
/// Read from the Inventory API's shape, `{"Brand": ["Dell"], "Type": ["Desktop"]}`, or a
/// whole inventory item, whose `product.aspects` is that object
/// ([`from_json`](Self::from_json)); or built in code ([`with`](Self::with)).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListingAspects {
    pub(crate) entries: Vec<ListingAspect>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListingAspect {
    pub name: String,
    /// `name` in lower case, to find the category's aspect without allocating.
    pub key: String,
    pub values: Vec<String>,
    /// The values are known only at run time (an expression of `aspects!`, checked at compile
    /// time for its name only).
    pub later: bool,
}

/// Why a listing could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListingError {
    /// Not JSON.
    Json(String),
    /// JSON, but not an aspects object (or an inventory item with `product.aspects`).
    Shape {
        /// Where: `aspects`, `aspects["Brand"]`, `aspects["Brand"][1]`.
        at: String,
        /// What is wrong there.
        problem: String,
    },
}

impl fmt::Display for ListingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ListingError::Json(e) => write!(f, "the listing is not JSON: {e}"),
            ListingError::Shape { at, problem } => write!(
                f,
                "{at}: {problem}; expected {{\"Brand\": [\"Dell\"], …}} or an inventory item with product.aspects"
            ),
        }
    }
}

impl core::error::Error for ListingError {}

impl ListingAspects {
    /// No aspects.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds an aspect with its values.
    ///
    /// ```
    /// use taxonomy_aspects::ListingAspects;
    /// let listing = ListingAspects::new().with("Brand", ["Dell"]).with("Features", ["Wi-Fi", "Bluetooth"]);
    /// assert_eq!(listing.values("brand"), Some(&["Dell".to_string()][..]));
    /// ```
    pub fn with<V: Into<String>>(
        mut self,
        name: impl Into<String>,
        values: impl IntoIterator<Item = V>,
    ) -> Self {
        let name = name.into();
        self.entries.push(ListingAspect {
            key: crate::text::key(&name),
            name,
            values: values.into_iter().map(Into::into).collect(),
            later: false,
        });
        self
    }

    /// Adds an aspect whose values are known only at run time: checked for its name (and
    /// counted as given) by [`check`](crate::check), as `aspects!` checks a listing at compile
    /// time.
    pub fn with_later(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        self.entries.push(ListingAspect {
            key: crate::text::key(&name),
            name,
            values: Vec::new(),
            later: true,
        });
        self
    }

    /// Reads `{"Brand": ["Dell"], …}`, or an inventory item with `product.aspects` (as
    /// createOrReplaceInventoryItem takes it). Every value must be an array of strings.
    #[cfg(feature = "json")]
    pub fn from_json(bytes: &[u8]) -> Result<Self, ListingError> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| ListingError::Json(e.to_string()))?;
        Self::from_value(&value)
    }

    /// [`from_json`](Self::from_json) for a value already parsed.
    #[cfg(feature = "json")]
    pub fn from_value(value: &serde_json::Value) -> Result<Self, ListingError> {
        let shape = |at: &str, problem: String| ListingError::Shape {
            at: at.to_owned(),
            problem,
        };
        let (object, at) = match value.get("product") {
            Some(product) => match product.get("aspects") {
                Some(aspects) => (aspects, "product.aspects"),
                None => return Err(shape("product", "has no aspects".into())),
            },
            None => (value, "aspects"),
        };
        let object = object
            .as_object()
            .ok_or_else(|| shape(at, format!("is {}, not an object", kind(object))))?;
        let mut listing = Self::new();
        for (name, values) in object {
            let here = format!("{at}[{name:?}]");
            let values = values.as_array().ok_or_else(|| {
                shape(
                    &here,
                    format!("is {}, not an array of strings", kind(values)),
                )
            })?;
            let mut texts = Vec::with_capacity(values.len());
            for (i, v) in values.iter().enumerate() {
                texts.push(
                    v.as_str()
                        .ok_or_else(|| {
                            shape(
                                &format!("{here}[{i}]"),
                                format!("is {}, not a string", kind(v)),
                            )
                        })?
                        .to_owned(),
                );
            }
            listing = listing.with(name.clone(), texts);
        }
        Ok(listing)
    }

    /// The values of the aspect `name` (case ignored), if the listing gives it.
    pub fn values(&self, name: &str) -> Option<&[String]> {
        let key = crate::text::key(name);
        self.entries
            .iter()
            .find(|e| e.key == key)
            .map(|e| e.values.as_slice())
    }

    /// The aspects' names, in the order given.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.name.as_str())
    }
}

#[cfg(feature = "json")]
fn kind(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "null",
        serde_json::Value::Bool(_) => "a boolean",
        serde_json::Value::Number(_) => "a number",
        serde_json::Value::String(_) => "a string",
        serde_json::Value::Array(_) => "an array",
        serde_json::Value::Object(_) => "an object",
    }
}

/// The Inventory API's `aspects` object: `{"Brand": ["Dell"], …}`, in the listing's order
/// (names given twice are written twice, as given).
#[cfg(feature = "serde")]
impl serde::Serialize for ListingAspects {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for e in &self.entries {
            map.serialize_entry(&e.name, &e.values)?;
        }
        map.end()
    }
}

#[cfg(all(test, feature = "json"))]
mod tests {
    use super::*;

    #[test]
    fn both_shapes_and_every_error_named() {
        let plain =
            ListingAspects::from_json(br#"{"Brand":["Dell"],"Type":["Desktop","Tower"]}"#).unwrap();
        let item = ListingAspects::from_json(
            br#"{"sku":"A1","product":{"title":"PC","aspects":{"Brand":["Dell"],"Type":["Desktop","Tower"]}}}"#,
        )
        .unwrap();
        assert_eq!(plain, item);
        assert_eq!(plain.names().collect::<Vec<_>>(), ["Brand", "Type"]);
        let err = ListingAspects::from_json(br#"{"Brand":"Dell"}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "aspects[\"Brand\"]: is a string, not an array of strings; expected {\"Brand\": [\"Dell\"], …} or an inventory item with product.aspects"
        );
        let err = ListingAspects::from_json(br#"{"product":{"aspects":{"Brand":["Dell",3]}}}"#)
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("product.aspects[\"Brand\"][1]: is a number"),
            "{err}"
        );
        assert!(matches!(
            ListingAspects::from_json(b"[1]"),
            Err(ListingError::Shape { .. })
        ));
        assert!(matches!(
            ListingAspects::from_json(b"{"),
            Err(ListingError::Json(_))
        ));
    }
}

#[cfg(all(test, feature = "serde"))]
mod serde_tests {
    use super::*;

    #[test]
    fn serialises_to_the_inventory_apis_aspects_object() {
        let listing = ListingAspects::new()
            .with("Brand", ["Dell"])
            .with("Features", ["Bluetooth", "Wi-Fi"]);
        assert_eq!(
            serde_json::to_string(&listing).unwrap(),
            r#"{"Brand":["Dell"],"Features":["Bluetooth","Wi-Fi"]}"#
        );
    }
}
