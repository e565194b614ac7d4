//! Values checked at compile time that carry their category in their type.
//!
//! `taxonomy_macros::category!(EBAY_US, "179")` gives a
//! `Checked<In<EBAY_US, 179>, LeafCategory>`, `aspects!(EBAY_US, "179", {…})` a
//! `Checked<In<EBAY_US, 179>, Aspects>` and `condition!(EBAY_US, "179", NEW)` a
//! `Checked<In<EBAY_US, 179>, Condition>`: code that takes several of them (a listing's
//! builder) can require the same `In<…>` of each, so aspects or a condition checked for
//! another category or marketplace than the listing's is a compile error naming both.
//!
//! A checked leaf or checked aspects dereference to what they hold; each gives it back with
//! [`into_inner`](Checked::into_inner) (in a `const`: [`Checked::leaf`],
//! [`Checked::condition`]).
//!
//! (`taxonomy-macros`' documentation shows them in use.)

use core::fmt;
use core::marker::PhantomData;
use core::ops::Deref;

use crate::{Condition, LeafCategory};

pub use crate::generated::markers::*;

/// Leaf category `ID` of marketplace `M` (a type of [`markers`](self), such as [`EBAY_US`])
/// as a type: no value has it.
pub struct In<M, const ID: u32>(PhantomData<fn() -> M>, Never);

/// The category of what a macro could not check (its compile error is the message): it
/// keeps the code after the error typed without a second error.
pub struct Unresolved(Never);

/// No value: `In` and `Unresolved` are only types.
enum Never {}

/// `value`, checked at compile time for category `C` (an [`In`]).
pub struct Checked<C, T> {
    value: T,
    category: PhantomData<fn() -> C>,
}

impl<C, T> Checked<C, T> {
    /// What the macros expand to, after their checks (in a `const`).
    #[doc(hidden)]
    pub const fn __by_macro(value: T) -> Self {
        Checked {
            value,
            category: PhantomData,
        }
    }

    /// The value, without its category's type.
    pub fn into_inner(self) -> T {
        self.value
    }
}

impl<C> Checked<C, LeafCategory> {
    /// The leaf category, in a `const` too: `const PHONES: LeafCategory =
    /// category!("9355").leaf();`.
    pub const fn leaf(self) -> LeafCategory {
        self.value
    }
}

impl<C> Checked<C, Condition> {
    /// The condition, in a `const` too.
    pub const fn condition(self) -> Condition {
        self.value
    }
}

/// A checked leaf reads as its `LeafCategory` (`category!(…).id()`).
impl<C> Deref for Checked<C, LeafCategory> {
    type Target = LeafCategory;
    fn deref(&self) -> &LeafCategory {
        &self.value
    }
}

/// Checked aspects read as their `Aspects` (`aspects!(…).listing()`). A checked condition
/// does not dereference: [`Checked::condition`] says that its category's type is left.
#[cfg(feature = "aspects")]
impl<C> Deref for Checked<C, crate::aspects::Aspects> {
    type Target = crate::aspects::Aspects;
    fn deref(&self) -> &crate::aspects::Aspects {
        &self.value
    }
}

impl<C, T: Clone> Clone for Checked<C, T> {
    fn clone(&self) -> Self {
        Checked {
            value: self.value.clone(),
            category: PhantomData,
        }
    }
}

impl<C, T: Copy> Copy for Checked<C, T> {}

impl<C, T: fmt::Debug> fmt::Debug for Checked<C, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}

impl<C, D, T: PartialEq> PartialEq<Checked<D, T>> for Checked<C, T> {
    fn eq(&self, other: &Checked<D, T>) -> bool {
        self.value == other.value
    }
}

impl<C, T: Eq> Eq for Checked<C, T> {}

impl<C> PartialEq<LeafCategory> for Checked<C, LeafCategory> {
    fn eq(&self, other: &LeafCategory) -> bool {
        self.value == *other
    }
}

impl<C> PartialEq<Checked<C, LeafCategory>> for LeafCategory {
    fn eq(&self, other: &Checked<C, LeafCategory>) -> bool {
        *self == other.value
    }
}

impl<C> PartialEq<Condition> for Checked<C, Condition> {
    fn eq(&self, other: &Condition) -> bool {
        self.value == *other
    }
}

impl<C> From<Checked<C, LeafCategory>> for LeafCategory {
    fn from(checked: Checked<C, LeafCategory>) -> Self {
        checked.value
    }
}

impl<C> From<Checked<C, Condition>> for Condition {
    fn from(checked: Checked<C, Condition>) -> Self {
        checked.value
    }
}

#[cfg(feature = "aspects")]
impl<C> From<Checked<C, crate::aspects::Aspects>> for crate::aspects::Aspects {
    fn from(checked: Checked<C, crate::aspects::Aspects>) -> Self {
        checked.value
    }
}

#[cfg(feature = "serde")]
impl<C, T: serde::Serialize> serde::Serialize for Checked<C, T> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(serializer)
    }
}

/// `category!`'s value goes to the client's calls as a `LeafCategory` does
/// (`client.item_aspects(category!(EBAY_US, "9355"))`).
impl<C> crate::MarketplaceCategory for Checked<C, LeafCategory> {
    fn marketplace(&self) -> crate::Marketplace {
        self.value.marketplace()
    }

    fn category_id(&self) -> u32 {
        self.value.category_id()
    }
}

#[cfg(feature = "aspects")]
impl<C> From<Checked<C, crate::aspects::Aspects>> for crate::aspects::ListingAspects {
    fn from(checked: Checked<C, crate::aspects::Aspects>) -> Self {
        checked.value.into()
    }
}
