//! What is wrong with a listing with variations ([`VariationProblem`]): a kind of the
//! single-listing check's problems (check.rs) that the group check (group_check.rs) reports,
//! below them both.

use std::fmt;

/// What is wrong with a group or a variant as a listing with variations.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum VariationProblem {
    /// The category does not take variations (getListingStructurePolicies'
    /// `variationsSupported` is false).
    CategoryWithoutVariations,
    /// An axis that is not an aspect of the category, or one whose `aspectEnabledForVariations`
    /// is false (eBay: "Variation Specifics" not allowed).
    AxisNotEnabled {
        /// Whether the category has the aspect at all.
        known: bool,
    },
    /// Brand as an axis: eBay does not take Brand as a variation specific.
    BrandAxis,
    /// An axis named twice.
    AxisTwice,
    /// An axis whose value is given twice.
    AxisValueTwice,
    /// An axis value a selection-only aspect does not allow.
    ValueNotAllowed {
        /// The closest allowed value.
        closest: Option<String>,
    },
    /// More than eBay takes (axes, values of an axis, variants).
    TooMany {
        /// What (`axes`, `values`, `variants`).
        what: &'static str,
        /// How many.
        count: usize,
        /// eBay's limit ([`variation_limits`](crate::variation_limits)).
        max: usize,
    },
    /// An axis also among the group's shared aspects: a name that varies cannot be shared.
    AxisAlsoShared,
    /// A variant without a value for an axis.
    NoValueForAxis,
    /// A variant with several values for an axis (one each).
    OneValuePerAxis {
        /// How many it has.
        count: usize,
    },
    /// A variant's value that is not one of the axis's values (`variesBy.specifications`).
    NotAnAxisValue {
        /// The axis's values.
        values: Vec<String>,
    },
    /// Two variants with the same values on every axis.
    SameCombination {
        /// The other variant.
        other: usize,
    },
    /// A variant's aspect that is not what the group shares.
    DisagreesWithGroup {
        /// The group's values.
        group: Vec<String>,
    },
    /// `aspectsImageVariesBy` naming an aspect that is not an axis.
    ImageAxisNotAnAxis,
    /// A value of the picture axis that no variant with it has a picture for.
    NoPictureForValue {
        /// The value.
        value: String,
    },
    /// A field that differs from the first variant's (category, marketplace, format,
    /// policies, currency): a group is one listing.
    DiffersFromFirstVariant {
        /// The first variant's value (`none` when it has none).
        first: String,
    },
    /// A format other than `FIXED_PRICE`: a listing with variations is fixed price only
    /// (publishOfferByInventoryItemGroup).
    NotFixedPrice,
    /// A SKU also listed alone in the same run.
    AlsoASingleListing,
    /// A variant's SKU missing from `variantSKUs`.
    NotInVariantSkus,
    /// A `variantSKUs` entry with no variant (or named twice).
    NoSuchVariant,
    /// Two variants of one SKU.
    SkuTwice {
        /// The other variant.
        other: usize,
    },
    /// A SKU eBay holds in another inventory item group (getInventoryItem's `groupIds`).
    InAnotherGroup {
        /// That group's `inventoryItemGroupKey`.
        group: String,
    },
}

impl fmt::Display for VariationProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::CategoryWithoutVariations => f.write_str(
                "the category does not take variations (getListingStructurePolicies: variationsSupported false)",
            ),
            Self::AxisNotEnabled { known: true } => f.write_str(
                "not enabled for variations in this category (aspectEnabledForVariations false)",
            ),
            Self::AxisNotEnabled { known: false } => f.write_str(
                "not an aspect of this category, so not enabled for variations (getItemAspectsForCategory)",
            ),
            Self::BrandAxis => f.write_str("Brand is not allowed as a variation specific"),
            Self::AxisTwice => f.write_str("axis named twice"),
            Self::AxisValueTwice => f.write_str("value given twice for this axis"),
            Self::ValueNotAllowed { closest } => {
                f.write_str("not an allowed value of this selection-only aspect")?;
                match closest {
                    Some(c) => write!(f, "; did you mean {c:?}?"),
                    None => Ok(()),
                }
            }
            Self::TooMany { what, count, max } => {
                write!(f, "{count} {what}, at most {max} allowed")
            }
            Self::AxisAlsoShared => f.write_str(
                "an axis (variesBy.specifications) cannot also be a shared aspect of the group",
            ),
            Self::NoValueForAxis => f.write_str("missing: every variant needs a value for each axis"),
            Self::OneValuePerAxis { count } => {
                write!(f, "{count} values, a variant takes one value per axis")
            }
            Self::NotAnAxisValue { values } => write!(
                f,
                "not one of the axis's values (variesBy.specifications: {})",
                values.join(", ")
            ),
            Self::SameCombination { other } => {
                write!(f, "the same values on every axis as variants[{other}]")
            }
            Self::DisagreesWithGroup { group } => write!(
                f,
                "differs from the group's shared aspect ({})",
                group.join(", ")
            ),
            Self::ImageAxisNotAnAxis => f.write_str("not an axis of variesBy.specifications"),
            Self::NoPictureForValue { value } => write!(
                f,
                "no variant with {value:?} has a picture (product.imageUrls)"
            ),
            Self::DiffersFromFirstVariant { first } => write!(
                f,
                "differs from variants[0]'s ({first}): the variants of a group share it"
            ),
            Self::NotFixedPrice => f.write_str("a listing with variations is FIXED_PRICE only"),
            Self::AlsoASingleListing => {
                f.write_str("this SKU is also a single-SKU listing of this run")
            }
            Self::NotInVariantSkus => f.write_str("missing from inventoryItemGroup.variantSKUs"),
            Self::NoSuchVariant => f.write_str("no variant of this SKU (or named twice)"),
            Self::SkuTwice { other } => write!(f, "variants[{other}] has this SKU too"),
            Self::InAnotherGroup { group } => write!(
                f,
                "eBay holds this SKU in the inventory item group {group} (getInventoryItem's groupIds): a SKU is a variant of one group"
            ),
        }
    }
}
