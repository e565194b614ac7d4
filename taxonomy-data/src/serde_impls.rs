//! `serde` support (the `serde` feature): a [`Site`] is its marketplace id (`"EBAY_US"`; it
//! deserializes from what its `FromStr` takes, with its suggestion on an unknown name), a
//! [`LeafCategory`] is `{"site": "EBAY_US", "id": 9355}`, and deserializing one runs the same
//! leaf check as [`LeafCategory::new`]: an id that is not a leaf of its site is an error,
//! never a `LeafCategory`.

use core::fmt;

use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use crate::{LeafCategory, Site};

impl Serialize for Site {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.marketplace_id())
    }
}

impl<'de> Deserialize<'de> for Site {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Site, D::Error> {
        struct SiteVisitor;
        impl Visitor<'_> for SiteVisitor {
            type Value = Site;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a marketplace id such as \"EBAY_US\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Site, E> {
                v.parse().map_err(|e| E::custom(format_args!("{v:?}: {e}")))
            }
        }
        deserializer.deserialize_str(SiteVisitor)
    }
}

impl Serialize for LeafCategory {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("LeafCategory", 2)?;
        s.serialize_field("site", &self.site())?;
        s.serialize_field("id", &self.id())?;
        s.end()
    }
}

impl<'de> Deserialize<'de> for LeafCategory {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<LeafCategory, D::Error> {
        struct LeafVisitor;
        impl<'de> Visitor<'de> for LeafVisitor {
            type Value = LeafCategory;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a leaf category: {\"site\": \"EBAY_US\", \"id\": 9355}")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<LeafCategory, A::Error> {
                let (mut site, mut id) = (None, None);
                while let Some(key) = map.next_key::<Field>()? {
                    match key {
                        Field::Site => site = Some(map.next_value::<Site>()?),
                        Field::Id => id = Some(map.next_value::<u32>()?),
                        Field::Other => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                let site = site.ok_or_else(|| de::Error::missing_field("site"))?;
                let id = id.ok_or_else(|| de::Error::missing_field("id"))?;
                // The one way to a LeafCategory from outside: the leaf check.
                LeafCategory::new(site, id).map_err(de::Error::custom)
            }
        }
        deserializer.deserialize_struct("LeafCategory", &["site", "id"], LeafVisitor)
    }
}

/// A key of a serialized [`LeafCategory`].
enum Field {
    Site,
    Id,
    Other,
}

impl<'de> Deserialize<'de> for Field {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Field, D::Error> {
        struct FieldVisitor;
        impl Visitor<'_> for FieldVisitor {
            type Value = Field;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("`site` or `id`")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Field, E> {
                Ok(match v {
                    "site" => Field::Site,
                    "id" => Field::Id,
                    _ => Field::Other,
                })
            }
        }
        deserializer.deserialize_identifier(FieldVisitor)
    }
}
