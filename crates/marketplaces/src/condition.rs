//! Item conditions: eBay's table "Item condition ID and name values" (the Inventory API's
//! `ConditionEnum` names and the numeric ids the Metadata API's getItemConditionPolicies and
//! the Trading API use), and a category's condition policy as getItemConditionPolicies
//! describes it ([`ConditionPolicy`]): which conditions it allows, whether it requires one,
//! and the condition descriptors (a trading card's grader, grade, certification number) each
//! condition takes.
//!
//! A policy borrows its lists: `taxonomy-data` compiles them in as `'static` tables
//! (`LeafCategory::conditions`), a program that reads them from a file borrows them from it.

use core::fmt;
use core::str::FromStr;

macro_rules! conditions {
    ($($variant:ident = $name:literal, $id:literal;)*) => {
        /// An item condition: its `ConditionEnum` name (what the Inventory API takes in
        /// `condition`) and its condition id (what the Metadata API's getItemConditionPolicies
        /// and the Trading API's `ConditionID` use), both ways, from eBay's table "Item
        /// condition ID and name values".
        ///
        /// ```
        /// use marketplaces::Condition;
        /// assert_eq!(Condition::from_id(2750), Some(Condition::LikeNew));
        /// assert_eq!(Condition::UsedExcellent.id(), 3000);
        /// assert_eq!("FOR_PARTS_OR_NOT_WORKING".parse::<Condition>().unwrap().id(), 7000);
        /// assert_eq!(Condition::NewOther.name(), "NEW_OTHER");
        /// ```
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Condition {
            $(
                #[doc = concat!("`", $name, "`, condition id ", stringify!($id), ".")]
                $variant,
            )*
        }

        impl Condition {
            /// Every condition, in the table's order.
            pub const ALL: &'static [Condition] = &[$(Condition::$variant),*];

            /// The `ConditionEnum` name, `NEW`.
            pub const fn name(self) -> &'static str {
                match self { $(Condition::$variant => $name,)* }
            }

            /// The numeric condition id, 1000.
            pub const fn id(self) -> u16 {
                match self { $(Condition::$variant => $id,)* }
            }

            /// The condition of a numeric condition id.
            pub const fn from_id(id: u16) -> Option<Condition> {
                match id { $($id => Some(Condition::$variant),)* _ => None }
            }

            /// The condition of a `ConditionEnum` name (exact, as eBay takes it).
            pub fn from_name(name: &str) -> Option<Condition> {
                match name { $($name => Some(Condition::$variant),)* _ => None }
            }
        }
    };
}

conditions! {
    New = "NEW", 1000;
    LikeNew = "LIKE_NEW", 2750;
    NewOther = "NEW_OTHER", 1500;
    NewWithDefects = "NEW_WITH_DEFECTS", 1750;
    CertifiedRefurbished = "CERTIFIED_REFURBISHED", 2000;
    ExcellentRefurbished = "EXCELLENT_REFURBISHED", 2010;
    VeryGoodRefurbished = "VERY_GOOD_REFURBISHED", 2020;
    GoodRefurbished = "GOOD_REFURBISHED", 2030;
    SellerRefurbished = "SELLER_REFURBISHED", 2500;
    PreOwnedExcellent = "PRE_OWNED_EXCELLENT", 2990;
    UsedExcellent = "USED_EXCELLENT", 3000;
    PreOwnedFair = "PRE_OWNED_FAIR", 3010;
    UsedVeryGood = "USED_VERY_GOOD", 4000;
    UsedGood = "USED_GOOD", 5000;
    UsedAcceptable = "USED_ACCEPTABLE", 6000;
    ForPartsOrNotWorking = "FOR_PARTS_OR_NOT_WORKING", 7000;
}

impl Condition {
    /// Whether eBay restricts the condition to sellers it approved (getItemConditionPolicies'
    /// `usage: RESTRICTED`: the refurbished conditions 2000, 2010, 2020 and 2030).
    /// getItemConditionPolicies lists such a condition only to a user token of an eligible
    /// seller, so a policy fetched with an application token cannot say whether a category
    /// takes it ([`ConditionPolicy::refuses`]).
    ///
    /// ```
    /// use marketplaces::Condition;
    /// assert!(Condition::CertifiedRefurbished.is_restricted());
    /// assert!(!Condition::SellerRefurbished.is_restricted());
    /// ```
    pub const fn is_restricted(self) -> bool {
        matches!(
            self,
            Condition::CertifiedRefurbished
                | Condition::ExcellentRefurbished
                | Condition::VeryGoodRefurbished
                | Condition::GoodRefurbished
        )
    }
}

impl Condition {
    /// The condition eBay reads a deprecated `ConditionEnum` name as: `MANUFACTURER_REFURBISHED`
    /// is CERTIFIED_REFURBISHED. eBay's ConditionEnum: "no longer applicable, and should not be
    /// used", yet "if the MANUFACTURER_REFURBISHED enum is used in a
    /// createOrReplaceInventoryItem method, it will be accepted but automatically converted by
    /// eBay to CERTIFIED_REFURBISHED" (and may one day be refused). A condition read from JSON
    /// takes the deprecated name as its replacement; `FromStr` and
    /// [`from_name`](Condition::from_name) take current names only.
    ///
    /// ```
    /// use marketplaces::Condition;
    /// assert_eq!(
    ///     Condition::from_deprecated_name("MANUFACTURER_REFURBISHED"),
    ///     Some(Condition::CertifiedRefurbished)
    /// );
    /// assert_eq!(Condition::from_deprecated_name("NEW"), None);
    /// ```
    pub fn from_deprecated_name(name: &str) -> Option<Condition> {
        match name {
            "MANUFACTURER_REFURBISHED" => Some(Condition::CertifiedRefurbished),
            _ => None,
        }
    }
}

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A text that is not one of `ConditionEnum`'s names (`Condition`'s `FromStr` error). Its
/// message lists the names; a caller puts the text it was given before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UnknownCondition;

impl fmt::Display for UnknownCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a ConditionEnum value (one of ")?;
        for (i, c) in Condition::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(c.name())?;
        }
        f.write_str(")")
    }
}

impl core::error::Error for UnknownCondition {}

impl FromStr for Condition {
    type Err = UnknownCondition;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Condition::from_name(s).ok_or(UnknownCondition)
    }
}

/// A category's condition policy (getItemConditionPolicies' `ItemConditionPolicy`): the
/// conditions it allows, in eBay's order, and whether a listing must name one.
///
/// ```
/// use marketplaces::{AllowedCondition, Condition, ConditionPolicy};
/// let policy = ConditionPolicy {
///     required: true,
///     conditions: &[
///         AllowedCondition { condition: Condition::New, descriptors: &[] },
///         AllowedCondition { condition: Condition::UsedExcellent, descriptors: &[] },
///     ],
/// };
/// assert!(policy.allows(Condition::New));
/// assert!(!policy.allows(Condition::LikeNew));
/// assert_eq!(policy.names().to_string(), "NEW, USED_EXCELLENT");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConditionPolicy<'a> {
    /// `itemConditionRequired`: a listing in the category must name a condition.
    pub required: bool,
    /// `itemConditions`: the conditions the category allows (empty: it takes none).
    pub conditions: &'a [AllowedCondition<'a>],
}

impl<'a> ConditionPolicy<'a> {
    /// Whether the category allows `condition`.
    pub fn allows(&self, condition: Condition) -> bool {
        self.allowed(condition).is_some()
    }

    /// Whether the category refuses `condition`: the policy does not list it, and it is not
    /// a [restricted](Condition::is_restricted) condition of a category that takes conditions
    /// (those are listed only for eligible sellers, so their absence says nothing). What
    /// `condition!` and the listing check refuse.
    ///
    /// ```
    /// use marketplaces::{AllowedCondition, Condition, ConditionPolicy};
    /// let policy = ConditionPolicy {
    ///     required: false,
    ///     conditions: &[AllowedCondition { condition: Condition::New, descriptors: &[] }],
    /// };
    /// assert!(!policy.refuses(Condition::New));
    /// assert!(policy.refuses(Condition::UsedGood));
    /// assert!(!policy.refuses(Condition::CertifiedRefurbished)); // not known either way
    /// assert!(ConditionPolicy { required: false, conditions: &[] }
    ///     .refuses(Condition::CertifiedRefurbished));
    /// ```
    pub const fn refuses(&self, condition: Condition) -> bool {
        let mut i = 0;
        while i < self.conditions.len() {
            if self.conditions[i].condition as u8 == condition as u8 {
                return false;
            }
            i += 1;
        }
        self.conditions.is_empty() || !condition.is_restricted()
    }

    /// What the category says about `condition` (its descriptors); `None` when it does not
    /// list it.
    pub fn allowed(&self, condition: Condition) -> Option<&'a AllowedCondition<'a>> {
        self.conditions.iter().find(|c| c.condition == condition)
    }

    /// The allowed conditions' names, comma-separated (`NEW, USED_EXCELLENT`), or `none`.
    pub fn names(&self) -> impl fmt::Display + 'a {
        let conditions = self.conditions;
        Names(conditions)
    }
}

/// [`ConditionPolicy::names`].
struct Names<'a>(&'a [AllowedCondition<'a>]);

impl fmt::Display for Names<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("none");
        }
        for (i, c) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(c.condition.name())?;
        }
        Ok(())
    }
}

/// A condition a category allows (`ItemCondition`), with the condition descriptors it takes
/// there (`conditionDescriptors`; only trading-card categories have any today).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AllowedCondition<'a> {
    /// The condition.
    pub condition: Condition,
    /// The descriptors a listing in this condition may (or must) give.
    pub descriptors: &'a [DescriptorRule<'a>],
}

/// A condition descriptor's rules (`ItemConditionDescriptor` and its
/// `conditionDescriptorConstraint`): what the Inventory API's `conditionDescriptors` entry
/// whose `name` is this id must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DescriptorRule<'a> {
    /// `conditionDescriptorId`, e.g. 27501 (the entry's `name` in the Inventory API).
    pub id: u32,
    /// `conditionDescriptorName`, e.g. `Professional Grader`.
    pub name: &'a str,
    /// `usage` is `REQUIRED`: a listing in this condition must give it.
    pub required: bool,
    /// `cardinality` is `MULTI`: it may take several values (else one).
    pub multiple: bool,
    /// `mode` is `FREE_TEXT`: its value is the seller's text (`additionalInfo`), not one of
    /// `values`.
    pub free_text: bool,
    /// `maxLength`: the longest free text, in characters.
    pub max_length: Option<u32>,
    /// `conditionDescriptorValues`: the values it takes (the entry's `values`).
    pub values: &'a [DescriptorValue<'a>],
    /// `applicableToConditionDescriptorIds`: the descriptors that must be given with it.
    pub requires: &'a [u32],
}

impl<'a> DescriptorRule<'a> {
    /// The value whose id is `id`.
    pub fn value(&self, id: u32) -> Option<&'a DescriptorValue<'a>> {
        self.values.iter().find(|v| v.id == id)
    }
}

/// A value of a condition descriptor (`ItemConditionDescriptorValue`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DescriptorValue<'a> {
    /// `conditionDescriptorValueId`, e.g. 275010.
    pub id: u32,
    /// `conditionDescriptorValueName`, e.g. `PSA`.
    pub name: &'a str,
}

#[cfg(feature = "serde")]
mod serde_impls {
    use super::Condition;
    use core::fmt;
    use serde::de::{self, Deserializer, Visitor};
    use serde::{Deserialize, Serialize, Serializer};

    /// A condition is its `ConditionEnum` name, `"USED_EXCELLENT"`.
    impl Serialize for Condition {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            serializer.serialize_str(self.name())
        }
    }

    /// A condition is read from its `ConditionEnum` name, a deprecated one as eBay reads it
    /// ([`Condition::from_deprecated_name`]: `MANUFACTURER_REFURBISHED` is
    /// CERTIFIED_REFURBISHED); another text is an error naming it and the names.
    impl<'de> Deserialize<'de> for Condition {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Name;
            impl Visitor<'_> for Name {
                type Value = Condition;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a ConditionEnum name such as \"USED_EXCELLENT\"")
                }
                fn visit_str<E: de::Error>(self, v: &str) -> Result<Condition, E> {
                    v.parse()
                        .or_else(|e| Condition::from_deprecated_name(v).ok_or(e))
                        .map_err(|e| E::custom(format_args!("{v:?} is {e}")))
                }
            }
            deserializer.deserialize_str(Name)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_ids_map_both_ways_as_ebays_table_says() {
        let table = [
            ("NEW", 1000),
            ("LIKE_NEW", 2750),
            ("NEW_OTHER", 1500),
            ("NEW_WITH_DEFECTS", 1750),
            ("CERTIFIED_REFURBISHED", 2000),
            ("EXCELLENT_REFURBISHED", 2010),
            ("VERY_GOOD_REFURBISHED", 2020),
            ("GOOD_REFURBISHED", 2030),
            ("SELLER_REFURBISHED", 2500),
            ("PRE_OWNED_EXCELLENT", 2990),
            ("USED_EXCELLENT", 3000),
            ("PRE_OWNED_FAIR", 3010),
            ("USED_VERY_GOOD", 4000),
            ("USED_GOOD", 5000),
            ("USED_ACCEPTABLE", 6000),
            ("FOR_PARTS_OR_NOT_WORKING", 7000),
        ];
        assert_eq!(table.len(), Condition::ALL.len());
        for (name, id) in table {
            let c = Condition::from_name(name).unwrap();
            assert_eq!(c.id(), id, "{name}");
            assert_eq!(c.name(), name);
            assert_eq!(Condition::from_id(id), Some(c));
        }
        assert_eq!(Condition::from_id(1234), None);
        assert_eq!("USED".parse::<Condition>(), Err(UnknownCondition));
    }

    #[test]
    fn a_policy_without_conditions_names_none() {
        let policy = ConditionPolicy {
            required: false,
            conditions: &[],
        };
        assert!(!policy.allows(Condition::New));
        struct Out([u8; 16], usize);
        impl fmt::Write for Out {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                let end = self.1 + s.len();
                self.0
                    .get_mut(self.1..end)
                    .ok_or(fmt::Error)?
                    .copy_from_slice(s.as_bytes());
                self.1 = end;
                Ok(())
            }
        }
        let mut out = Out([0; 16], 0);
        fmt::write(&mut out, format_args!("{}", policy.names())).unwrap();
        assert_eq!(&out.0[..out.1], b"none");
    }
}
