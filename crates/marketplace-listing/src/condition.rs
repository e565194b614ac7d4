//! The item's condition: the Inventory API's `ConditionEnum` names and the numeric condition
//! ids of eBay's table "Item condition ID and name values" (Selling Integration Guide), which
//! getItemConditionPolicies (Metadata API) answers with.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! conditions {
    ($($variant:ident = $name:literal, $id:literal;)*) => {
        /// An item condition: its `ConditionEnum` name (what the Inventory API takes in
        /// `condition`) and its condition id (what the Metadata API's getItemConditionPolicies
        /// and the Trading API's `ConditionID` use), both ways, from eBay's table "Item
        /// condition ID and name values".
        ///
        /// ```
        /// use marketplace_listing::Condition;
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

impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A `condition` that is not one of `ConditionEnum`'s names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCondition(pub String);

impl fmt::Display for UnknownCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not a ConditionEnum value (one of ", self.0)?;
        for (i, c) in Condition::ALL.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            f.write_str(c.name())?;
        }
        f.write_str(")")
    }
}

impl std::error::Error for UnknownCondition {}

impl FromStr for Condition {
    type Err = UnknownCondition;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Condition::from_name(s).ok_or_else(|| UnknownCondition(s.to_owned()))
    }
}

impl Serialize for Condition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Condition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        name.parse().map_err(serde::de::Error::custom)
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
            ("USED_EXCELLENT", 3000),
            ("USED_VERY_GOOD", 4000),
            ("USED_GOOD", 5000),
            ("USED_ACCEPTABLE", 6000),
            ("FOR_PARTS_OR_NOT_WORKING", 7000),
        ];
        for (name, id) in table {
            let c = Condition::from_name(name).unwrap();
            assert_eq!(c.id(), id, "{name}");
            assert_eq!(Condition::from_id(id), Some(c));
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{name}\""));
            assert_eq!(serde_json::from_str::<Condition>(&json).unwrap(), c);
        }
        for c in Condition::ALL {
            assert_eq!(Condition::from_id(c.id()), Some(*c));
        }
        assert!(serde_json::from_str::<Condition>("\"USED\"").is_err());
        assert_eq!(Condition::from_id(1234), None);
    }
}
