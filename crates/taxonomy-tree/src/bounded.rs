//! Caps on how many array elements a decoded answer may hold, so that its memory is bounded
//! by what a real answer can hold rather than by its size in bytes.
//!
//! Every decoder of an eBay answer here (this crate's [`decode`](crate::decode), and
//! taxonomy-model's answers and fetchItemAspects entries) takes its body whole or an entry
//! at a time, under a byte limit (64 MiB). Bytes alone do not bound memory: an array element
//! `{}` is three bytes of JSON but a whole wire struct once decoded (tens to hundreds of
//! bytes), so 60 MB of `{},{},…` (60 KB of gzip) decoded into 3 to 5 GB. Decoding under
//! [`with_element_limit`] counts every element of every array decoded through [`vec()`] (or
//! [`opt_vec`], [`vec_at_most`]) on this thread, and refuses the answer as soon as the count
//! passes the limit, with an error that names the limit; [`vec_at_most`] also caps one array.
//! [`skipped`] reads a value the decoder keeps only the kind of (an id sent as an array)
//! without holding what is inside.
//!
//! The count lives in a thread-local for the duration of one synchronous decode
//! (serde has no way to hand a context down to nested types); outside
//! [`with_element_limit`] nothing is counted.

use std::cell::Cell;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, SeqAccess, Visitor};

#[derive(Clone, Copy)]
struct Budget {
    left: usize,
    limit: usize,
    what: &'static str,
}

thread_local! {
    /// The elements the decode running on this thread may still create.
    static BUDGET: Cell<Option<Budget>> = const { Cell::new(None) };
}

/// Runs `decode` (a synchronous decode of one answer, on this thread) allowing at most
/// `limit` array elements in all; `what` names the answer in the error
/// (`"a getCategoryTree answer"`). Nested calls each have their own count, restored after.
///
/// ```
/// use taxonomy_tree::bounded::{vec, with_element_limit};
/// #[derive(serde::Deserialize)]
/// struct Answer {
///     #[serde(deserialize_with = "vec")]
///     items: Vec<u8>,
/// }
/// let decode = |json: &str| {
///     with_element_limit(3, "an answer", || serde_json::from_str::<Answer>(json))
/// };
/// assert_eq!(decode(r#"{"items":[1,2,3]}"#).unwrap().items, [1, 2, 3]);
/// let error = decode(r#"{"items":[1,2,3,4]}"#).err().unwrap().to_string();
/// assert!(error.starts_with("more than 3 array elements in all in an answer"), "{error}");
/// ```
pub fn with_element_limit<T>(limit: usize, what: &'static str, decode: impl FnOnce() -> T) -> T {
    struct Restore(Option<Budget>);
    impl Drop for Restore {
        fn drop(&mut self) {
            BUDGET.with(|b| b.set(self.0));
        }
    }
    let previous = BUDGET.with(|b| {
        b.replace(Some(Budget {
            left: limit,
            limit,
            what,
        }))
    });
    let _restore = Restore(previous);
    decode()
}

/// Counts one element against the running decode's limit.
fn count<E: de::Error>() -> Result<(), E> {
    BUDGET.with(|b| match b.get() {
        None => Ok(()),
        Some(budget) if budget.left == 0 => Err(E::custom(format_args!(
            "more than {} array elements in all in {}, far more than a real one holds \
             (the decoder's limit, which keeps its memory bounded)",
            budget.limit, budget.what
        ))),
        Some(budget) => {
            b.set(Some(Budget {
                left: budget.left - 1,
                ..budget
            }));
            Ok(())
        }
    })
}

struct Elements<T> {
    max: usize,
    what: &'static str,
    element: PhantomData<T>,
}

impl<'de, T: Deserialize<'de>> Visitor<'de> for Elements<T> {
    type Value = Vec<T>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<T>, A::Error> {
        let mut out = Vec::new();
        while let Some(element) = seq.next_element()? {
            if out.len() == self.max {
                return Err(de::Error::custom(format_args!(
                    "more than {} {}, far more than a real answer holds (the decoder's limit)",
                    self.max, self.what
                )));
            }
            count()?;
            out.push(element);
        }
        Ok(out)
    }
}

/// A JSON array as a `Vec`, each element counted against the limit of
/// [`with_element_limit`] (for `#[serde(deserialize_with = "…")]`).
pub fn vec<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    d.deserialize_seq(Elements {
        max: usize::MAX,
        what: "elements",
        element: PhantomData,
    })
}

/// [`vec()`] for an optional array (`null` or absent: `None`; give the field
/// `#[serde(default)]`).
pub fn opt_vec<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Vec<T>>, D::Error> {
    struct Opt<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Opt<T> {
        type Value = Option<Vec<T>>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("an array or null")
        }
        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            vec(d).map(Some)
        }
    }
    d.deserialize_option(Opt(PhantomData))
}

/// [`vec()`] for an array of at most `max` elements; `what` names them in the error
/// (`"aspects in one category"`).
pub fn vec_at_most<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
    max: usize,
    what: &'static str,
) -> Result<Vec<T>, D::Error> {
    d.deserialize_seq(Elements {
        max,
        what,
        element: PhantomData,
    })
}

/// A JSON value of which only scalars are kept: an array or an object is read past without
/// holding its contents, and comes out empty (`[]`, `{}`), so that an error can still say what
/// kind of value was sent.
pub fn skipped<'de, D: Deserializer<'de>>(d: D) -> Result<serde_json::Value, D::Error> {
    use serde_json::Value;
    struct Scalar;
    impl<'de> Visitor<'de> for Scalar {
        type Value = Value;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
            Ok(Value::Bool(v))
        }
        fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
            Ok(Value::from(v))
        }
        fn visit_str<E>(self, v: &str) -> Result<Value, E> {
            Ok(Value::String(v.to_owned()))
        }
        fn visit_string<E>(self, v: String) -> Result<Value, E> {
            Ok(Value::String(v))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_none<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
            d.deserialize_any(self)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Value::Array(Vec::new()))
        }
        fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
            Ok(Value::Object(serde_json::Map::new()))
        }
    }
    d.deserialize_any(Scalar)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize)]
    #[allow(dead_code)] // only decoded
    struct Nested {
        #[serde(default, deserialize_with = "vec")]
        inner: Vec<Nested>,
    }

    #[test]
    fn every_element_of_every_array_counts_and_the_count_is_per_decode() {
        let decode = |limit, json: &str| {
            with_element_limit(limit, "a test answer", || {
                serde_json::from_str::<Nested>(json).map(|_| ())
            })
        };
        let json = r#"{"inner":[{"inner":[{},{}]},{"inner":[{}]}]}"#;
        assert!(decode(5, json).is_ok());
        let error = decode(4, json).unwrap_err().to_string();
        assert!(
            error.starts_with("more than 4 array elements in all in a test answer"),
            "{error}"
        );
        // Outside a limit nothing is counted, and a nested limit restores the outer one.
        assert!(serde_json::from_str::<Nested>(json).is_ok());
        with_element_limit(1, "outer", || {
            assert!(decode(5, json).is_ok());
            assert!(serde_json::from_str::<Nested>(json).is_err());
        });
    }

    #[test]
    fn skipped_keeps_scalars_and_the_kind_of_the_rest() {
        let read = |json: &str| skipped(&mut serde_json::Deserializer::from_str(json)).unwrap();
        assert_eq!(read(r#""12""#), serde_json::json!("12"));
        assert_eq!(read("12"), serde_json::json!(12));
        assert_eq!(read("null"), serde_json::Value::Null);
        assert_eq!(read(r#"[{},{},[1]]"#), serde_json::json!([]));
        assert_eq!(read(r#"{"a":[1,2]}"#), serde_json::json!({}));
    }
}
