//! A listing with variations' axes (an inventory item group's `variesBy.specifications`, as
//! createOrReplaceInventoryItemGroup takes them): eBay's limits, and the axes
//! `taxonomy_macros::variations!` checked at compile time.

/// eBay's limits of a listing with variations (GeteBayDetails' `VariationDetails`, the same on
/// every site the Inventory API lists on; the Trading API's `NameValueListArrayType`: "up to
/// five VariationSpecifics"). One definition: `marketplace-listing`'s group check and
/// `variations!` both read these.
pub mod variation_limits {
    /// `MaxNamesPerVariationSpecificsSet`: at most 5 axes (`variesBy.specifications`).
    pub const AXES: usize = 5;
    /// `MaxValuesPerVariationSpecificsSetName`: at most 60 values an axis.
    pub const VALUES_PER_AXIS: usize = 60;
    /// `MaxVariationsPerItem`: at most 250 variants (`variantSKUs`).
    pub const VARIANTS: usize = 250;
}

/// The axes of a listing with variations, each an aspect of the category enabled for
/// variations (`aspectEnabledForVariations`) with the values the variants take, checked by
/// `variations!` against the category's pinned rules. `marketplace-listing` turns it into an
/// inventory item group's `variesBy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Variations {
    marketplace_id: &'static str,
    category_id: u32,
    axes: &'static [(&'static str, &'static [&'static str])],
}

impl Variations {
    /// What `variations!` expands to, after its checks: static data, no check here.
    #[doc(hidden)]
    pub const fn __checked_by_macro(
        marketplace_id: &'static str,
        category_id: u32,
        axes: &'static [(&'static str, &'static [&'static str])],
    ) -> Self {
        Self {
            marketplace_id,
            category_id,
            axes,
        }
    }

    /// The marketplace (`EBAY_US`).
    pub const fn marketplace_id(&self) -> &'static str {
        self.marketplace_id
    }

    /// The leaf category.
    pub const fn category_id(&self) -> u32 {
        self.category_id
    }

    /// The axes in the order written, each with its values in the order written (the
    /// aspect's name as the category spells it).
    pub const fn axes(&self) -> &'static [(&'static str, &'static [&'static str])] {
        self.axes
    }

    /// The values of the axis `name` (compared as aspect names are: [`key`](crate::key)).
    pub fn values_of(&self, name: &str) -> Option<&'static [&'static str]> {
        let k = crate::key(name);
        self.axes
            .iter()
            .find(|(axis, _)| crate::key(axis) == k)
            .map(|(_, values)| *values)
    }
}
