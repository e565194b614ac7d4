//! What `taxonomy_macros::aspects!` expands to: a listing's aspects checked against a pinned
//! category's rules.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

use crate::listing::ListingAspects;
use crate::pinned::PinnedRules;
use crate::problem::Problem;

/// A listing's aspects checked against the pinned rules of its category: what
/// `taxonomy_macros::aspects!` gives. It serialises (feature `serde`) to the Inventory API's
/// `aspects` object, `{"Brand": ["Dell"], …}`, and converts into a [`ListingAspects`]
/// (`taxonomy-model`'s, the same type).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aspects {
    marketplace_id: &'static str,
    category_id: u32,
    listing: ListingAspects,
}

/// A value of an `aspects!` listing as the macro passes it: its literals, or the next of the
/// values known only at run time.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum MacroValue {
    /// Literals, checked by the macro.
    Literals(&'static [&'static str]),
    /// An expression's values (the next of `later`), checked at run time.
    Later,
}

impl Aspects {
    /// What `aspects!` expands to when every value is a literal: checked by the macro, so
    /// no check runs here. The entries are static data, and this function is not generic:
    /// each `aspects!` costs the compiler one call to type-check and generate.
    #[doc(hidden)]
    pub fn __checked_by_macro(
        rules: &'static PinnedRules,
        marketplace_id: &'static str,
        entries: &'static [(&'static str, &'static [&'static str])],
    ) -> Self {
        let mut listing = ListingAspects::new();
        for (name, values) in entries {
            listing = listing.with(*name, values.iter().copied());
        }
        Self {
            marketplace_id,
            category_id: rules.category_id(),
            listing,
        }
    }

    /// What `aspects!` expands to when some values are expressions: names, required aspects
    /// and literals were checked by the macro; the whole listing is checked here against the
    /// same compiled-in rules. `entries` is static data; `later` holds the expressions'
    /// values, in order, moved in (so the caller has nothing to drop).
    #[doc(hidden)]
    pub fn __checked_at_run_time<const N: usize>(
        rules: &'static PinnedRules,
        marketplace_id: &'static str,
        entries: &'static [(&'static str, MacroValue)],
        later: [Vec<String>; N],
    ) -> Result<Self, AspectsError> {
        Self::checked_at_run_time(rules, marketplace_id, entries, Vec::from(later))
    }

    fn checked_at_run_time(
        rules: &'static PinnedRules,
        marketplace_id: &'static str,
        entries: &'static [(&'static str, MacroValue)],
        later: Vec<Vec<String>>,
    ) -> Result<Self, AspectsError> {
        let mut later = later.into_iter();
        let mut listing = ListingAspects::new();
        for (name, value) in entries {
            listing = match value {
                MacroValue::Literals(values) => listing.with(*name, values.iter().copied()),
                MacroValue::Later => listing.with(*name, later.next().unwrap_or_default()),
            };
        }
        let problems = rules.check(&listing);
        if problems.iter().any(Problem::is_error) {
            return Err(AspectsError { problems });
        }
        Ok(Self {
            marketplace_id,
            category_id: rules.category_id(),
            listing,
        })
    }

    /// The marketplace, e.g. `EBAY_US`.
    pub fn marketplace_id(&self) -> &'static str {
        self.marketplace_id
    }

    /// The leaf category the aspects were checked for.
    pub fn category_id(&self) -> u32 {
        self.category_id
    }

    /// The aspects.
    pub fn listing(&self) -> &ListingAspects {
        &self.listing
    }
}

impl From<Aspects> for ListingAspects {
    fn from(aspects: Aspects) -> Self {
        aspects.listing
    }
}

/// The Inventory API's `aspects` object: `{"Brand": ["Dell"], …}`.
#[cfg(feature = "serde")]
impl serde::Serialize for Aspects {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.listing.serialize(serializer)
    }
}

/// A listing of `aspects!` whose values known only at run time break its category's rules:
/// every problem of the whole listing (at least one an error), as
/// [`check`](crate::check) reports them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AspectsError {
    /// The problems, errors and warnings.
    pub problems: Vec<Problem>,
}

impl fmt::Display for AspectsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the listing's aspects break its category's rules:")?;
        for p in &self.problems {
            write!(f, "\n  {p}")?;
        }
        Ok(())
    }
}

impl core::error::Error for AspectsError {}

/// The values an expression of `aspects!` gives: a text, or a list of them.
pub trait IntoAspectValues {
    /// The values.
    fn into_aspect_values(self) -> Vec<String>;
}

impl IntoAspectValues for &str {
    fn into_aspect_values(self) -> Vec<String> {
        alloc::vec![self.into()]
    }
}

impl IntoAspectValues for String {
    fn into_aspect_values(self) -> Vec<String> {
        alloc::vec![self]
    }
}

impl IntoAspectValues for &String {
    fn into_aspect_values(self) -> Vec<String> {
        alloc::vec![self.clone()]
    }
}

impl<T: Into<String>> IntoAspectValues for Vec<T> {
    fn into_aspect_values(self) -> Vec<String> {
        self.into_iter().map(Into::into).collect()
    }
}

impl<T: Into<String>, const N: usize> IntoAspectValues for [T; N] {
    fn into_aspect_values(self) -> Vec<String> {
        self.into_iter().map(Into::into).collect()
    }
}

impl<T: AsRef<str>> IntoAspectValues for &[T] {
    fn into_aspect_values(self) -> Vec<String> {
        self.iter().map(|t| t.as_ref().into()).collect()
    }
}

/// `None`: no value (a required aspect is then missing).
impl<T: IntoAspectValues> IntoAspectValues for Option<T> {
    fn into_aspect_values(self) -> Vec<String> {
        self.map(IntoAspectValues::into_aspect_values)
            .unwrap_or_default()
    }
}
