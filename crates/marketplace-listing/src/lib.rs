//! # marketplace-listing
//!
//! A listing for eBay's Inventory API, checked before it leaves and published idempotently.
//!
//! * [`Listing`]: eBay's own shapes under eBay's field names, the inventory item
//!   (createOrReplaceInventoryItem's body) and the offer (createOffer's body), as a `listing`
//!   file holds them: `{"inventoryItem": …, "offer": …}`;
//! * [`ListingBuilder`]: a listing from what `category!` and `aspects!` give, which the check
//!   does not check again;
//! * [`check`]: every problem eBay would refuse the listing for that can be known offline,
//!   each naming its field, against the trees and pinned aspect rules compiled into
//!   `taxonomy-data` ([`CompiledIn`]) or another [`Catalog`];
//! * [`GroupListing`]: a listing with variations, eBay's inventory item group and its
//!   variants, as a `listing` file holds it (`{"inventoryItemGroup": …, "variants": […]}`);
//!   [`check_group`]: its offline check, each problem naming its field;
//! * [`unknown_fields`]: the fields of a listing file eBay's Inventory API description does
//!   not define (eBay ignores them), each with the closest field it does;
//! * [`Condition`]: the Inventory API's `ConditionEnum` and eBay's numeric condition ids, both
//!   ways (eBay's table "Item condition ID and name values"; defined in `marketplaces`, where
//!   `taxonomy-data`'s condition policies find it);
//! * [`aio::Inventory`]: the Inventory API's calls, and [`aio::Inventory::publish`], idempotent
//!   by SKU, which refuses to put a second listing of a SKU live in the other format unless
//!   told ([`OtherFormat`]); [`blocking::Inventory`]: the same for blocking code;
//! * [`stock`]: quantities and prices of many SKUs through bulkUpdatePriceQuantity, 25 SKUs a
//!   call, within eBay's 250 revisions of a listing a calendar day, and the stock left after a
//!   sale pushed to every offer of its SKU in one call ([`aio::Inventory::push_stock_left`]).
//!
//! The calls (`aio`, `blocking`, the errors eBay answers) are the `client` feature, on by
//! default; without it (`default-features = false`) the crate is the model, the builder and
//! the check alone, with no HTTP stack.
//!
//! A marketplace's currency is one of its facts, in `marketplaces`
//! ([`marketplaces::Marketplace::currency`]).

#[cfg(feature = "client")]
pub mod aio;
mod axis;
#[cfg(feature = "client")]
pub mod blocking;
mod builder;
mod check;
#[cfg(feature = "client")]
mod error;
mod fields;
mod group;
mod group_check;
mod model;
#[cfg(feature = "client")]
pub mod stock;
mod variation_problem;

#[cfg(feature = "client")]
pub use aio::OtherFormat;
pub use axis::{AxisRule, axis_rule};
pub use builder::{AspectsOf, ConditionFor, ConditionOf, ListingBuilder};
pub use check::{
    Catalog, CategoryStatus, CompiledIn, Problem, ProblemKind, Problems, check, limits,
};
#[cfg(feature = "client")]
pub use error::{ErrorKind, InventoryError, ListingError, LiveInOtherFormat};
pub use fields::{UNKNOWN_FIELDS_SHOWN, UnknownField, unknown_fields};
pub use group::{GroupListing, InventoryItemGroup, ListingFile, Specification, VariesBy};
pub use group_check::{check_group, variation_limits};
pub use marketplaces::{
    AllowedCondition, Condition, ConditionPolicy, DescriptorRule, DescriptorValue, UnknownCondition,
};
pub use model::{
    Amount, Availability, CardCondition, ConditionDescriptor, Grade, Grader, InventoryItem,
    Listing, ListingPolicies, Offer, PackageWeightAndSize, PricingSummary, Product,
    ShipToLocationAvailability, UnknownCardValue,
};
pub use variation_problem::VariationProblem;
