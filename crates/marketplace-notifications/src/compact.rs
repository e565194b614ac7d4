//! The compact re-serialisation of a JSON body, keys in their order (what JavaScript's
//! `JSON.stringify(JSON.parse(body))` gives, the form eBay's SDKs verify), without turning on
//! serde_json's `preserve_order` for the whole build.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

enum Ordered {
    Null,
    Bool(bool),
    Number(serde_json::Number),
    String(String),
    Array(Vec<Ordered>),
    Object(Vec<(String, Ordered)>),
}

/// `body` re-serialised compactly, or `None` when it is not JSON.
pub(crate) fn reserialise(body: &[u8]) -> Option<Vec<u8>> {
    let value: Ordered = serde_json::from_slice(body).ok()?;
    serde_json::to_vec(&value).ok()
}

struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E: de::Error>(self) -> Result<Ordered, E> {
        Ok(Ordered::Null)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Ordered, E> {
        Ok(Ordered::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Ordered, E> {
        Ok(Ordered::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Ordered, E> {
        Ok(Ordered::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Ordered, E> {
        serde_json::Number::from_f64(v)
            .map(Ordered::Number)
            .ok_or_else(|| E::custom("not a finite number"))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Ordered, E> {
        Ok(Ordered::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Ordered, E> {
        Ok(Ordered::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Ordered, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Ordered::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Ordered>()? {
            entries.push((key, value));
        }
        Ok(Ordered::Object(entries))
    }
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(OrderedVisitor)
    }
}

impl Serialize for Ordered {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Ordered::Null => serializer.serialize_unit(),
            Ordered::Bool(b) => serializer.serialize_bool(*b),
            Ordered::Number(n) => n.serialize(serializer),
            Ordered::String(s) => serializer.serialize_str(s),
            Ordered::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Ordered::Object(entries) => {
                let mut map = serializer.serialize_map(Some(entries.len()))?;
                for (k, v) in entries {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::reserialise;

    #[test]
    fn keys_keep_their_order_and_whitespace_goes() {
        let body = br#"{ "z": 1, "a": {"y": [1, 2.5, "x\/y\u00e9"], "b": null},
            "m": true }"#;
        let compact = reserialise(body).unwrap();
        assert_eq!(
            String::from_utf8(compact).unwrap(),
            r#"{"z":1,"a":{"y":[1,2.5,"x/yé"],"b":null},"m":true}"#
        );
        assert_eq!(reserialise(b"{\"a\":"), None);
        assert_eq!(reserialise(b"not json"), None);
    }
}
