//! The offline check: every problem eBay would refuse a listing for that can be known before a
//! request, each naming its field.

use std::fmt;

use marketplaces::{Condition, ConditionPolicy, DescriptorRule, Marketplace};
use serde_json::Number;
use taxonomy_aspects::ListingAspects;
use taxonomy_data::Site;

use crate::{ConditionDescriptor, InventoryItem, Listing};

/// eBay's limits (the Inventory API reference: `Product.title`, `Product.subtitle`,
/// `Product.description`, `Product.imageUrls`, the `sku` path parameter of
/// createOrReplaceInventoryItem).
pub mod limits {
    /// `product.title`: at most 80 characters.
    pub const TITLE: usize = 80;
    /// `product.subtitle`: at most 55 characters.
    pub const SUBTITLE: usize = 55;
    /// `product.description` and `listingDescription`: at most 500,000 characters.
    pub const DESCRIPTION: usize = 500_000;
    /// `sku`: at most 50 characters.
    pub const SKU: usize = 50;
    /// `inventoryItemGroupKey`: at most 50 characters (createOrReplaceInventoryItemGroup's
    /// path parameter, "Max Length: 50").
    pub const INVENTORY_ITEM_GROUP_KEY: usize = 50;
    /// `conditionDescription`: at most 1,000 characters (the Inventory API reference,
    /// `InventoryItem.conditionDescription`, "Max Length: 1000").
    pub const CONDITION_DESCRIPTION: usize = 1_000;
    /// `product.imageUrls`: at most 24 pictures.
    pub const IMAGES: usize = 24;
    /// A quantity (`availableQuantity`, `lotSize`, `quantityLimitPerBuyer`,
    /// `shipToLocationAvailability.quantity`): eBay types each as an `integer` of format
    /// `int32`, so at most 2,147,483,647.
    pub const QUANTITY: u64 = i32::MAX as u64;
    /// The most problems listed for one list of the file (`product.imageUrls`,
    /// `conditionDescriptors`, a descriptor's values); the rest are counted in one
    /// [`ProblemKind::More`](super::ProblemKind::More). An aspect's problems are bounded by
    /// `taxonomy_aspects::limits`.
    pub const PROBLEMS_PER_LIST: usize = 10;
    /// The most values a problem lists (a descriptor's allowed values); it says how many
    /// more there are.
    pub const SHOWN_VALUES: usize = 10;
    /// The most leaf categories a problem names for a category that is not a leaf (as
    /// `category!` names them).
    pub const SHOWN_LEAVES: usize = 5;
}

/// What a catalog knows of a category of a marketplace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CategoryStatus {
    /// A leaf: a listing may name it.
    Leaf,
    /// A category with children (eBay: 25005).
    NotLeaf {
        /// Its name.
        name: String,
        /// Its first leaf categories (at most [`limits::SHOWN_LEAVES`]), depth first in the
        /// tree's order: id and path, as `category!` lists them.
        leaves: Vec<(u32, String)>,
        /// How many leaf categories it has.
        leaf_count: usize,
    },
    /// No longer a category: getExpiredCategories names its replacement.
    Expired {
        /// The leaf that replaces it.
        replacement: u32,
        /// The replacement's path (`A > B > C`, its name last).
        replacement_path: String,
    },
    /// No category of the tree.
    Unknown {
        /// The tree looked in (`categoryTreeId`).
        tree_id: u32,
        /// Its version (`categoryTreeVersion`).
        tree_version: String,
    },
    /// The catalog holds no tree of the marketplace.
    NoTree,
}

/// What the check asks of the categories and their aspect rules: the trees and pinned rules
/// compiled into `taxonomy-data` ([`CompiledIn`]), or those of a directory (`listing check
/// --dir DIR`).
pub trait Catalog {
    /// What `id` is in the marketplace's tree.
    fn category(&self, marketplace: Marketplace, id: u32) -> CategoryStatus;
    /// The problems of `aspects` against the leaf's aspect rules (errors and warnings, as
    /// `taxonomy_aspects::check` gives them); `None` when the catalog has no rules for it.
    fn check_aspects(
        &self,
        marketplace: Marketplace,
        id: u32,
        aspects: &ListingAspects,
    ) -> Option<Vec<taxonomy_aspects::Problem>>;

    /// Whether the leaf's rules name the aspect `name` (case ignored). An aspect they do not
    /// name is only ever a warning (eBay takes the seller's own aspects), so the check leaves
    /// it out; `true` (the default) checks every aspect.
    fn knows_aspect(&self, marketplace: Marketplace, id: u32, name: &str) -> bool {
        let _ = (marketplace, id, name);
        true
    }

    /// Lends the leaf's condition policy (getItemConditionPolicies) to `f`; `false`, without
    /// calling it, when the catalog knows none (the default). Without a policy the check
    /// only asks for a condition, as a published offer needs one.
    fn condition_policy(
        &self,
        marketplace: Marketplace,
        id: u32,
        f: &mut dyn FnMut(ConditionPolicy<'_>),
    ) -> bool {
        let _ = (marketplace, id, f);
        false
    }

    /// What the leaf's aspect rules say of the aspect `name` as a variation axis taking
    /// `values` (`aspectEnabledForVariations`, a selection-only aspect's allowed values:
    /// [`axis_rule`](crate::axis::axis_rule) over the rules); `None` when the catalog has no rules
    /// for the leaf (the default).
    fn variation_axis(
        &self,
        marketplace: Marketplace,
        id: u32,
        name: &str,
        values: &[String],
    ) -> Option<crate::axis::AxisRule> {
        let _ = (marketplace, id, name, values);
        None
    }

    /// Whether the leaf takes variations (getListingStructurePolicies' `variationsSupported`);
    /// `None` when unknown (the default), and the group check says nothing of it.
    fn variations_supported(&self, marketplace: Marketplace, id: u32) -> Option<bool> {
        let _ = (marketplace, id);
        None
    }
}

/// The trees and pinned aspect rules compiled into `taxonomy-data`: what `category!` and
/// `aspects!` check against.
#[derive(Debug, Clone, Copy, Default)]
pub struct CompiledIn;

impl Catalog for CompiledIn {
    fn category(&self, marketplace: Marketplace, id: u32) -> CategoryStatus {
        let site = Site::from(marketplace);
        if !site.is_compiled_in() {
            return CategoryStatus::NoTree;
        }
        match site.category(id) {
            Some(c) if c.is_leaf() => CategoryStatus::Leaf,
            // The leaves as `category!` lists them for a parent (taxonomy-macros-core).
            Some(c) => CategoryStatus::NotLeaf {
                name: c.name().to_owned(),
                leaves: c
                    .leaves()
                    .take(limits::SHOWN_LEAVES)
                    .map(|leaf| (leaf.id(), leaf.path().to_string()))
                    .collect(),
                leaf_count: c.leaves().count(),
            },
            None => match site.replacement(id) {
                Some(leaf) => CategoryStatus::Expired {
                    replacement: leaf.id(),
                    replacement_path: leaf.path().to_string(),
                },
                None => CategoryStatus::Unknown {
                    tree_id: site.tree_id(),
                    tree_version: site.tree_version().to_owned(),
                },
            },
        }
    }

    fn check_aspects(
        &self,
        marketplace: Marketplace,
        id: u32,
        aspects: &ListingAspects,
    ) -> Option<Vec<taxonomy_aspects::Problem>> {
        let leaf = Site::from(marketplace).category(id)?.as_leaf()?;
        Some(leaf.aspects()?.check(aspects))
    }

    fn knows_aspect(&self, marketplace: Marketplace, id: u32, name: &str) -> bool {
        Site::from(marketplace)
            .category(id)
            .and_then(|c| c.as_leaf())
            .and_then(|leaf| leaf.aspects())
            .is_none_or(|rules| rules.values_of(name).is_some())
    }

    fn condition_policy(
        &self,
        marketplace: Marketplace,
        id: u32,
        f: &mut dyn FnMut(ConditionPolicy<'_>),
    ) -> bool {
        let policy = Site::from(marketplace)
            .category(id)
            .and_then(|c| c.as_leaf())
            .and_then(|leaf| leaf.condition_policy());
        policy.map(|p| f(*p)).is_some()
    }

    fn variation_axis(
        &self,
        marketplace: Marketplace,
        id: u32,
        name: &str,
        values: &[String],
    ) -> Option<crate::axis::AxisRule> {
        let rules = Site::from(marketplace).category(id)?.as_leaf()?.aspects()?;
        Some(crate::axis::axis_rule(rules, name, values))
    }

    /// The compiled-in listing-structure policies (getListingStructurePolicies'
    /// `variationsSupported`, one bit a category): `None` when the build had no file for the
    /// site or the file does not name the leaf.
    fn variations_supported(&self, marketplace: Marketplace, id: u32) -> Option<bool> {
        Site::from(marketplace)
            .category(id)?
            .as_leaf()?
            .variations_supported()
    }
}

/// One problem of a listing: the field (`offer.pricingSummary.price.currency`,
/// `inventoryItem.product.aspects["Brand"]`) and what is wrong there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// The field, as a path in the listing file's JSON.
    pub field: String,
    /// What is wrong.
    pub kind: ProblemKind,
}

/// What is wrong with a field.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProblemKind {
    /// A field a published offer needs is missing or empty.
    Missing,
    /// Longer than eBay takes.
    TooLong {
        /// Its length in characters.
        length: usize,
        /// The limit.
        max: usize,
    },
    /// A character the SKU alphabet has not.
    BadSkuCharacter {
        /// The character.
        character: char,
    },
    /// More pictures than eBay takes.
    TooManyImages {
        /// How many.
        count: usize,
        /// The limit.
        max: usize,
    },
    /// A picture's URL that is not `https`.
    NotHttps,
    /// Not a marketplace id of the table (eBay's `MarketplaceEnum`).
    UnknownMarketplace {
        /// The marketplace it most likely meant (`EBAY_GB` for `EBAY_UK`), as `category!`'s
        /// and `snapshot --site`'s parser finds it ([`Marketplace::parse`]).
        closest: Option<Marketplace>,
    },
    /// A category id that is not a number.
    NotACategoryId,
    /// No tree of the marketplace to check the category against.
    NoTree,
    /// A category that is not in the marketplace's tree.
    UnknownCategory {
        /// The id looked for.
        id: u32,
        /// The marketplace whose tree it was looked in.
        marketplace: Marketplace,
        /// That tree's id (`categoryTreeId`).
        tree_id: u32,
        /// That tree's version (`categoryTreeVersion`).
        tree_version: String,
    },
    /// A category with children.
    NotALeaf {
        /// Its name.
        name: String,
        /// Some of its leaf categories, id and path ([`CategoryStatus::NotLeaf`]'s).
        leaves: Vec<(u32, String)>,
        /// How many leaf categories it has.
        leaf_count: usize,
    },
    /// An expired category, and the leaf that replaces it.
    Expired {
        /// The replacement.
        replacement: u32,
        /// The replacement's path, its name last.
        replacement_path: String,
    },
    /// No aspect rules known for the category (pin it: `snapshot aspects pin`).
    NoAspectRules,
    /// Aspects `aspects!` checked for another category than the listing's.
    AspectsOfAnotherCategory {
        /// Their marketplace.
        marketplace_id: &'static str,
        /// Their category.
        category_id: u32,
    },
    /// An aspect that breaks the category's rules.
    Aspect(taxonomy_aspects::Problem),
    /// A price that is not a decimal above 0.
    PriceNotPositive,
    /// A price in another currency than the marketplace's.
    WrongCurrency {
        /// The marketplace's.
        expected: &'static str,
    },
    /// A quantity that is not a whole number from 0 to [`limits::QUANTITY`] (eBay's `int32`).
    BadQuantity,
    /// A condition the category's policy does not allow (eBay: errorId 25021).
    ConditionNotAllowed {
        /// The condition given.
        condition: Condition,
        /// The conditions the category allows (`NEW, USED_EXCELLENT`, or `none`).
        allowed: String,
    },
    /// A condition descriptor the condition does not take in this category.
    DescriptorNotAllowed {
        /// The descriptors it takes (`27501 Professional Grader, …`, or `none`).
        allowed: String,
    },
    /// A condition descriptor the category requires with this condition is missing.
    DescriptorRequired {
        /// Its id and name (`27502 Grade`).
        descriptor: String,
    },
    /// A descriptor given twice.
    DescriptorTwice,
    /// A descriptor value that is not one of the descriptor's values.
    DescriptorValueNotAllowed {
        /// The descriptor's id and name.
        descriptor: String,
        /// Its values (`275020 10, 275021 9.5, …`).
        allowed: String,
    },
    /// Several values for a descriptor that takes one.
    DescriptorTakesOneValue,
    /// A descriptor given without another one it must come with.
    DescriptorNeeds {
        /// The descriptor's id and name.
        descriptor: String,
        /// The one it needs, id and name.
        other: String,
    },
    /// No picture: publishOffer publishes an offer only with at least one
    /// `product.imageUrls` entry (the Inventory API's "required fields" to publish).
    NoPicture,
    /// No description: publishOffer needs the product's `description` or the offer's
    /// `listingDescription`.
    NoDescription,
    /// A value that is not one of the enumeration's (`FormatTypeEnum`, `ListingDurationEnum`,
    /// `WeightUnitOfMeasureEnum`, …): eBay refuses the request that carries it
    /// (createOrReplaceInventoryItem, createOffer: errorId 2004, "Could not serialize field").
    NotInEnum {
        /// The value given.
        value: String,
        /// The enumeration's name in eBay's reference.
        enumeration: &'static str,
        /// Its values.
        allowed: &'static [&'static str],
    },
    /// A `listingDuration` the offer's format does not take (fixed price: `GTC` only;
    /// auction: `DAYS_1` to `DAYS_10`).
    DurationNotForFormat {
        /// The format (`FIXED_PRICE`, `AUCTION`).
        format: String,
        /// The durations it takes.
        allowed: &'static [&'static str],
    },
    /// A quantity of 0 on an offer to publish: publishOffer needs at least 1 to sell (eBay:
    /// errorId 25004, invalid quantity).
    NothingToSell,
    /// A price with more decimals than its currency has (eBay: errorId 25003).
    TooManyDecimals {
        /// The currency.
        currency: String,
        /// The decimals it has ([`Marketplace::currency_decimals`]).
        max: u32,
    },
    /// More problems in a list of the file than are listed (at most
    /// [`limits::PROBLEMS_PER_LIST`] are): how many more.
    More {
        /// How many problems were not listed.
        count: usize,
    },
    /// A group's variation problem ([`check_group`](crate::check_group)).
    Variation(crate::variation_problem::VariationProblem),
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.field)?;
        match &self.kind {
            ProblemKind::Missing => f.write_str("missing (a published offer needs it)"),
            ProblemKind::TooLong { length, max } => {
                write!(f, "{length} characters, at most {max} allowed")
            }
            ProblemKind::BadSkuCharacter { character } => write!(
                f,
                "{character:?} is not allowed (letters, digits, '-' and '_' only: eBay's errorId 25707)"
            ),
            ProblemKind::TooManyImages { count, max } => {
                write!(f, "{count} pictures, at most {max} allowed")
            }
            ProblemKind::NotHttps => f.write_str("not an https URL (eBay takes https only)"),
            ProblemKind::UnknownMarketplace { closest } => {
                f.write_str("not a known marketplace id")?;
                match closest {
                    Some(m) => write!(
                        f,
                        "; did you mean {} ({})?",
                        m.inventory_marketplace_id(),
                        m.name()
                    ),
                    None => Ok(()),
                }
            }
            ProblemKind::NotACategoryId => f.write_str("not a category id"),
            ProblemKind::NoTree => f.write_str(
                "no tree of this marketplace is compiled in (snapshot refresh --sites …)",
            ),
            ProblemKind::UnknownCategory {
                id,
                marketplace,
                tree_id,
                tree_version,
            } => write!(
                f,
                "no category {id} in {marketplace}'s category tree (tree {tree_id}, version {tree_version})"
            ),
            ProblemKind::NotALeaf {
                name,
                leaves,
                leaf_count,
            } => {
                write!(
                    f,
                    "{name:?} is not a leaf category (eBay: errorId 25005): only leaf categories accept listings; pick one of its {leaf_count} leaf categories"
                )?;
                for (i, (id, path)) in leaves.iter().enumerate() {
                    let lead = if i == 0 { ", for example " } else { ", " };
                    write!(f, "{lead}{id} ({path})")?;
                }
                if *leaf_count > leaves.len() {
                    f.write_str(", …")?;
                }
                Ok(())
            }
            ProblemKind::Expired {
                replacement,
                replacement_path,
            } => write!(
                f,
                "the category has expired (getExpiredCategories): list in its replacement, {replacement} ({replacement_path})"
            ),
            ProblemKind::NoAspectRules => f.write_str(
                "no aspect rules of this category are known (pin them: snapshot aspects pin)",
            ),
            ProblemKind::AspectsOfAnotherCategory {
                marketplace_id,
                category_id,
            } => write!(
                f,
                "the aspects were checked for {marketplace_id} {category_id}, not the listing's category"
            ),
            ProblemKind::Aspect(problem) => write!(f, "{problem}"),
            ProblemKind::PriceNotPositive => f.write_str("the price must be a decimal above 0"),
            ProblemKind::WrongCurrency { expected } => write!(
                f,
                "the marketplace's currency is {expected} (eBay: errorId 25003)"
            ),
            ProblemKind::BadQuantity => write!(
                f,
                "a quantity is a whole number from 0 to {} (eBay's int32)",
                limits::QUANTITY
            ),
            // getItemConditionPolicies lists no itemConditions for the category.
            ProblemKind::ConditionNotAllowed { condition, allowed } if allowed == "none" => write!(
                f,
                "{condition} is not allowed: this category takes no item condition, leave it out (eBay: errorId 25021; getItemConditionPolicies)"
            ),
            ProblemKind::ConditionNotAllowed { condition, allowed } => write!(
                f,
                "{condition} is not allowed in this category (eBay: errorId 25021); it allows {allowed} (getItemConditionPolicies)"
            ),
            ProblemKind::DescriptorNotAllowed { allowed } => write!(
                f,
                "not a condition descriptor of this condition in this category; it takes {allowed}"
            ),
            ProblemKind::DescriptorRequired { descriptor } => write!(
                f,
                "the category requires condition descriptor {descriptor} with this condition"
            ),
            ProblemKind::DescriptorTwice => f.write_str("this condition descriptor is given twice"),
            ProblemKind::DescriptorValueNotAllowed {
                descriptor,
                allowed,
            } => write!(f, "not a value of {descriptor}; it takes {allowed}"),
            ProblemKind::DescriptorTakesOneValue => {
                f.write_str("this condition descriptor takes one value")
            }
            ProblemKind::DescriptorNeeds { descriptor, other } => {
                write!(f, "{descriptor} must come with {other}")
            }
            ProblemKind::NoPicture => f.write_str(
                "no picture: eBay publishes an offer only with at least one picture URL (publishOffer; errorId 25014)",
            ),
            ProblemKind::NoDescription => f.write_str(
                "no description: eBay publishes an offer only with a description, inventoryItem.product.description or offer.listingDescription (publishOffer)",
            ),
            ProblemKind::NotInEnum {
                value,
                enumeration,
                allowed,
            } => write!(
                f,
                "{value:?} is not a {enumeration} value (eBay refuses it: errorId 2004); it takes {}",
                allowed.join(", ")
            ),
            ProblemKind::DurationNotForFormat { format, allowed } => write!(
                f,
                "not a duration of a {format} offer (publishOffer); it takes {}",
                allowed.join(", ")
            ),
            ProblemKind::NothingToSell => f.write_str(
                "0: a published offer needs a quantity of at least 1 (publishOffer: errorId 25004)",
            ),
            ProblemKind::TooManyDecimals { currency, max } => write!(
                f,
                "more decimals than {currency} has (at most {max}; eBay: errorId 25003)"
            ),
            ProblemKind::More { count } => write!(
                f,
                "{count} more problems here, not listed (at most {} a list are): fix those above and check again",
                limits::PROBLEMS_PER_LIST
            ),
            ProblemKind::Variation(v) => write!(f, "{v}"),
        }
    }
}

/// Every problem of a listing, in the order of its fields (at least one).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} problem(s): {}", .0.len(), .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
pub struct Problems(pub Vec<Problem>);

pub(crate) fn problem(problems: &mut Vec<Problem>, field: &str, kind: ProblemKind) {
    problems.push(Problem {
        field: field.to_owned(),
        kind,
    });
}

pub(crate) fn too_long(problems: &mut Vec<Problem>, field: &str, text: Option<&str>, max: usize) {
    if let Some(text) = text {
        // Characters as eBay counts them (Unicode scalar values); counting stops past the limit.
        let length = text.chars().take(max + 1).count();
        if length > max {
            let length = text.chars().count();
            problem(problems, field, ProblemKind::TooLong { length, max });
        }
    }
}

pub(crate) fn missing_text(problems: &mut Vec<Problem>, field: &str, text: Option<&str>) {
    if text.is_none_or(|t| t.trim().is_empty()) {
        problem(problems, field, ProblemKind::Missing);
    }
}

fn quantity(problems: &mut Vec<Problem>, field: &str, n: Option<&Number>) {
    if let Some(n) = n
        && n.as_u64().is_none_or(|n| n > limits::QUANTITY)
    {
        problem(problems, field, ProblemKind::BadQuantity);
    }
}

/// A quantity the model keeps among the offer's other fields (`lotSize`,
/// `quantityLimitPerBuyer`): a number checked as [`quantity`] checks one, anything else
/// refused.
fn other_quantity(problems: &mut Vec<Problem>, field: &str, value: Option<&serde_json::Value>) {
    match value {
        None => {}
        Some(serde_json::Value::Number(n)) => quantity(problems, field, Some(n)),
        Some(_) => problem(problems, field, ProblemKind::BadQuantity),
    }
}

/// The problems of one list of the file (its elements' fields): the first
/// [`limits::PROBLEMS_PER_LIST`] listed, the rest counted, then one [`ProblemKind::More`] on
/// the list's own field.
struct ListProblems<'p> {
    problems: &'p mut Vec<Problem>,
    field: &'static str,
    listed: usize,
    omitted: usize,
}

impl<'p> ListProblems<'p> {
    fn new(problems: &'p mut Vec<Problem>, field: &'static str) -> Self {
        Self {
            problems,
            field,
            listed: 0,
            omitted: 0,
        }
    }

    /// Lists the problem (its field and kind made only when listed), or counts it.
    fn push(&mut self, field: impl FnOnce() -> String, kind: impl FnOnce() -> ProblemKind) {
        if self.listed < limits::PROBLEMS_PER_LIST {
            self.listed += 1;
            let field = field();
            problem(self.problems, &field, kind());
        } else {
            self.omitted += 1;
        }
    }

    /// The count of those not listed, if any.
    fn finish(self) {
        if self.omitted > 0 {
            problem(
                self.problems,
                self.field,
                ProblemKind::More {
                    count: self.omitted,
                },
            );
        }
    }
}

/// eBay's `FormatTypeEnum` (createOffer's `format`).
const FORMATS: &[&str] = &["AUCTION", "FIXED_PRICE"];
/// eBay's `ListingDurationEnum` (createOffer's `listingDuration`).
const DURATIONS: &[&str] = &[
    "DAYS_1", "DAYS_3", "DAYS_5", "DAYS_7", "DAYS_10", "DAYS_21", "DAYS_30", "GTC",
];
/// The durations of a fixed-price offer: `GTC` only (createOffer's `listingDuration`: "For
/// fixed-price listings, this value must be set to GTC").
const FIXED_PRICE_DURATIONS: &[&str] = &["GTC"];
/// The durations of an auction (eBay's auctions run 1, 3, 5, 7 or 10 days).
const AUCTION_DURATIONS: &[&str] = &["DAYS_1", "DAYS_3", "DAYS_5", "DAYS_7", "DAYS_10"];
/// eBay's `WeightUnitOfMeasureEnum` (`packageWeightAndSize.weight.unit`).
const WEIGHT_UNITS: &[&str] = &["POUND", "KILOGRAM", "OUNCE", "GRAM"];
/// eBay's `LengthUnitOfMeasureEnum` (`packageWeightAndSize.dimensions.unit`).
const LENGTH_UNITS: &[&str] = &["INCH", "FEET", "CENTIMETER", "METER"];

/// A value of an enumeration of eBay's, or the problem that it is not one (what eBay refuses
/// with errorId 2004 at createOrReplaceInventoryItem or createOffer).
fn enum_value<'v>(
    p: &mut Vec<Problem>,
    field: &str,
    value: &'v serde_json::Value,
    enumeration: &'static str,
    allowed: &'static [&'static str],
) -> Option<&'v str> {
    match value.as_str() {
        Some(v) if allowed.contains(&v) => Some(v),
        other => {
            let value = other.map_or_else(|| value.to_string(), str::to_owned);
            problem(
                p,
                field,
                ProblemKind::NotInEnum {
                    value,
                    enumeration,
                    allowed,
                },
            );
            None
        }
    }
}

/// createOffer's `format` (`FormatTypeEnum`) and `listingDuration` (`ListingDurationEnum`,
/// one the format takes; an auction needs one: createOffer's errorId 25755).
fn format_and_duration(p: &mut Vec<Problem>, offer: &crate::Offer) {
    let format = match offer.format.as_deref() {
        None => Some("FIXED_PRICE"),
        Some(f) => {
            let value = serde_json::Value::String(f.to_owned());
            enum_value(p, "offer.format", &value, "FormatTypeEnum", FORMATS).map(|_| {
                if f == "AUCTION" {
                    "AUCTION"
                } else {
                    "FIXED_PRICE"
                }
            })
        }
    };
    let duration = match offer.other.get("listingDuration") {
        None => None,
        Some(value) => match enum_value(
            p,
            "offer.listingDuration",
            value,
            "ListingDurationEnum",
            DURATIONS,
        ) {
            Some(d) => Some(d),
            None => return,
        },
    };
    let Some(format) = format else { return };
    let allowed = if format == "AUCTION" {
        AUCTION_DURATIONS
    } else {
        FIXED_PRICE_DURATIONS
    };
    match duration {
        None if format == "AUCTION" => {
            problem(p, "offer.listingDuration", ProblemKind::Missing);
        }
        Some(d) if !allowed.contains(&d) => problem(
            p,
            "offer.listingDuration",
            ProblemKind::DurationNotForFormat {
                format: format.to_owned(),
                allowed,
            },
        ),
        _ => {}
    }
}

/// `packageWeightAndSize`'s units, each a value of its enumeration.
fn package_units(p: &mut Vec<Problem>, item: &InventoryItem) {
    let Some(package) = item.package_weight_and_size.as_ref() else {
        return;
    };
    if let Some(unit) = package.weight.as_ref().and_then(|w| w.get("unit")) {
        enum_value(
            p,
            "inventoryItem.packageWeightAndSize.weight.unit",
            unit,
            "WeightUnitOfMeasureEnum",
            WEIGHT_UNITS,
        );
    }
    if let Some(unit) = package.dimensions.as_ref().and_then(|d| d.get("unit")) {
        enum_value(
            p,
            "inventoryItem.packageWeightAndSize.dimensions.unit",
            unit,
            "LengthUnitOfMeasureEnum",
            LENGTH_UNITS,
        );
    }
}

/// The decimals of a decimal in text (`"12.999"`: 3), trailing zeros counted as written.
fn decimals(value: &str) -> u32 {
    value
        .split_once('.')
        .map_or(0, |(_, f)| u32::try_from(f.len()).unwrap_or(u32::MAX))
}

/// Whether `value` is a decimal above 0 (`"19.99"`, `"5"`).
fn positive_decimal(value: &str) -> bool {
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    !whole.is_empty()
        && digits(whole)
        && digits(fraction)
        && (value.contains('.') <= !fraction.is_empty())
        && value.bytes().any(|b| (b'1'..=b'9').contains(&b))
}

/// Every problem eBay would refuse `listing` for that can be known offline, each naming its
/// field; an empty list when there is none. Nothing is sent.
///
/// The rules: the category is a leaf of the offer's marketplace in `catalog` (an expired one
/// names its replacement); the aspects follow the category's rules (`catalog`'s; for a listing
/// built from `category!` and `aspects!` both were checked at compile time and are not checked
/// again); `product.title` ≤ 80 characters, `subtitle` ≤ 55, `description` and
/// `listingDescription` ≤ 500,000; `sku` ≤ 50 characters of letters, digits, `-` and `_`; ≤ 24
/// `imageUrls`, each `https`; the price above 0 in the marketplace's currency
/// ([`Marketplace::currency`]); quantities (`availableQuantity`, `lotSize`,
/// `quantityLimitPerBuyer`, `shipToLocationAvailability.quantity`) whole numbers from 0 to
/// [`limits::QUANTITY`] (eBay's `int32`); the title, the three listing policies and
/// `merchantLocationKey` present (a published offer needs them).
///
/// publishOffer's requirements (the Inventory API reference's "required fields" to publish,
/// and createOffer's and InventoryItem's fields): at least one picture (`imageUrls`); a
/// description (`product.description` or `listingDescription`); a quantity to sell of at
/// least 1 (`availableQuantity`, else `shipToLocationAvailability.quantity`; eBay: 25004);
/// a price with no more decimals than its currency has
/// ([`Marketplace::currency_decimals`]; eBay: 25003); `conditionDescription` ≤ 1,000
/// characters; `format` one of `FormatTypeEnum` (`FIXED_PRICE`, `AUCTION`) and
/// `listingDuration` one of `ListingDurationEnum` that the format takes (fixed price: `GTC`;
/// an auction needs one, `DAYS_1` to `DAYS_10`); the package's weight and length units of
/// their enumerations (a value outside an enumeration is eBay's errorId 2004 at
/// createOrReplaceInventoryItem or createOffer; a `condition` outside `ConditionEnum` is
/// refused when the file is read).
///
/// The problems stay few whatever the file holds: those of a list (`imageUrls`,
/// `conditionDescriptors`) at most [`limits::PROBLEMS_PER_LIST`] and then how many more, an
/// aspect's as `taxonomy_aspects::check` bounds them (`taxonomy_aspects::limits`).
///
/// The condition follows the category's condition policy (getItemConditionPolicies, when
/// `catalog` knows it: see [`Catalog::condition_policy`]): a condition the category allows
/// (eBay refuses another with errorId 25021), present when the category requires one, and its
/// condition descriptors (trading cards: grader, grade, certification number) each one the
/// condition takes, once, with a value of the descriptor's values (free text within its
/// length), the required ones present, each with the ones it must come with. A category whose
/// policy is not known (the committed snapshots carry none: `snapshot refresh` with
/// credentials writes them) only needs a condition.
///
/// ```
/// use marketplace_listing::{CompiledIn, Listing, check};
/// let listing: Listing = serde_json::from_str(r#"{
///   "inventoryItem": {"product": {"title": "Desktop"}},
///   "offer": {"sku": "A-1", "marketplaceId": "EBAY_US", "categoryId": "58058"}
/// }"#).unwrap();
/// let problems = check(&listing, &CompiledIn);
/// assert!(problems.iter().any(|p| p.field == "offer.categoryId"));
/// assert!(problems.iter().any(|p| p.field == "offer.merchantLocationKey"));
/// ```
pub fn check(listing: &Listing, catalog: &dyn Catalog) -> Vec<Problem> {
    check_listing(listing, catalog, true)
}

/// [`check`], the category and its aspects left out unless `category` (a group's variants:
/// the group check checks those once).
pub(crate) fn check_listing(
    listing: &Listing,
    catalog: &dyn Catalog,
    with_category: bool,
) -> Vec<Problem> {
    let mut problems = Vec::new();
    let p = &mut problems;
    let item = &listing.inventory_item;
    let offer = &listing.offer;

    // The SKU.
    if offer.sku.is_empty() {
        problem(p, "offer.sku", ProblemKind::Missing);
    }
    too_long(p, "offer.sku", Some(&offer.sku), limits::SKU);
    if let Some(character) = offer
        .sku
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        problem(p, "offer.sku", ProblemKind::BadSkuCharacter { character });
    }

    // The product.
    let product = item.product.as_ref();
    missing_text(
        p,
        "inventoryItem.product.title",
        product.and_then(|p| p.title.as_deref()),
    );
    if let Some(product) = product {
        too_long(
            p,
            "inventoryItem.product.title",
            product.title.as_deref(),
            limits::TITLE,
        );
        too_long(
            p,
            "inventoryItem.product.subtitle",
            product.subtitle.as_deref(),
            limits::SUBTITLE,
        );
        too_long(
            p,
            "inventoryItem.product.description",
            product.description.as_deref(),
            limits::DESCRIPTION,
        );
        if product.image_urls.len() > limits::IMAGES {
            problem(
                p,
                "inventoryItem.product.imageUrls",
                ProblemKind::TooManyImages {
                    count: product.image_urls.len(),
                    max: limits::IMAGES,
                },
            );
        }
        let mut urls = ListProblems::new(p, "inventoryItem.product.imageUrls");
        for (i, url) in product.image_urls.iter().enumerate() {
            let https = url
                .get(..8)
                .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
                && url.len() > 8;
            if !https {
                urls.push(
                    || format!("inventoryItem.product.imageUrls[{i}]"),
                    || ProblemKind::NotHttps,
                );
            }
        }
        urls.finish();
    }
    // publishOffer's required fields (the Inventory API reference, "Publishing offers":
    // `product.imageUrls`, at least one picture; `product.description`, unless the offer has
    // a `listingDescription`).
    if product.is_none_or(|p| p.image_urls.is_empty()) {
        problem(p, "inventoryItem.product.imageUrls", ProblemKind::NoPicture);
    }
    let blank = |t: Option<&str>| t.is_none_or(|t| t.trim().is_empty());
    if blank(product.and_then(|p| p.description.as_deref()))
        && blank(offer.listing_description.as_deref())
    {
        problem(
            p,
            "inventoryItem.product.description",
            ProblemKind::NoDescription,
        );
    }
    // `InventoryItem.conditionDescription`: at most 1,000 characters.
    too_long(
        p,
        "inventoryItem.conditionDescription",
        item.condition_description.as_deref(),
        limits::CONDITION_DESCRIPTION,
    );
    package_units(p, item);
    let ship_to = item
        .availability
        .as_ref()
        .and_then(|a| a.ship_to_location_availability.as_ref())
        .and_then(|s| s.quantity.as_ref());
    quantity(
        p,
        "inventoryItem.availability.shipToLocationAvailability.quantity",
        ship_to,
    );
    // The quantity to sell: the offer's `availableQuantity`, which overrides the item's
    // `shipToLocationAvailability.quantity` (createOffer's `availableQuantity`); publishOffer
    // refuses 0 (errorId 25004, invalid quantity), and an offer with neither.
    match (offer.available_quantity.as_ref(), ship_to) {
        (Some(n), _) if n.as_u64() == Some(0) => {
            problem(p, "offer.availableQuantity", ProblemKind::NothingToSell);
        }
        (None, Some(n)) if n.as_u64() == Some(0) => problem(
            p,
            "inventoryItem.availability.shipToLocationAvailability.quantity",
            ProblemKind::NothingToSell,
        ),
        (None, None) => problem(
            p,
            "inventoryItem.availability.shipToLocationAvailability.quantity",
            ProblemKind::Missing,
        ),
        _ => {}
    }

    // The offer.
    too_long(
        p,
        "offer.listingDescription",
        offer.listing_description.as_deref(),
        limits::DESCRIPTION,
    );
    quantity(
        p,
        "offer.availableQuantity",
        offer.available_quantity.as_ref(),
    );
    for name in ["lotSize", "quantityLimitPerBuyer"] {
        other_quantity(p, &format!("offer.{name}"), offer.other.get(name));
    }
    format_and_duration(p, offer);
    // The Inventory API's MarketplaceEnum: EBAY_MOTORS, where the Taxonomy API says
    // EBAY_MOTORS_US (createOffer refuses the latter).
    let marketplace = Marketplace::from_inventory_marketplace_id(&offer.marketplace_id);
    if marketplace.is_none() {
        let kind = if offer.marketplace_id.is_empty() {
            ProblemKind::Missing
        } else {
            ProblemKind::UnknownMarketplace {
                closest: closest_marketplace(&offer.marketplace_id),
            }
        };
        problem(p, "offer.marketplaceId", kind);
    }
    match offer
        .pricing_summary
        .as_ref()
        .and_then(|s| s.price.as_ref())
    {
        None => problem(p, "offer.pricingSummary.price", ProblemKind::Missing),
        Some(price) => {
            if !positive_decimal(price.value.trim()) {
                problem(
                    p,
                    "offer.pricingSummary.price.value",
                    ProblemKind::PriceNotPositive,
                );
            }
            if let Some(m) = marketplace
                && price.currency != m.currency()
            {
                problem(
                    p,
                    "offer.pricingSummary.price.currency",
                    ProblemKind::WrongCurrency {
                        expected: m.currency(),
                    },
                );
            } else if let Some(m) = marketplace
                && decimals(price.value.trim()) > m.currency_decimals()
            {
                // `Amount.value`: at most the currency's decimals (publishOffer: 25003).
                problem(
                    p,
                    "offer.pricingSummary.price.value",
                    ProblemKind::TooManyDecimals {
                        currency: price.currency.clone(),
                        max: m.currency_decimals(),
                    },
                );
            }
        }
    }
    let policies = offer.listing_policies.as_ref();
    for (field, value) in [
        (
            "offer.listingPolicies.fulfillmentPolicyId",
            policies.and_then(|l| l.fulfillment_policy_id.as_deref()),
        ),
        (
            "offer.listingPolicies.paymentPolicyId",
            policies.and_then(|l| l.payment_policy_id.as_deref()),
        ),
        (
            "offer.listingPolicies.returnPolicyId",
            policies.and_then(|l| l.return_policy_id.as_deref()),
        ),
        (
            "offer.merchantLocationKey",
            offer.merchant_location_key.as_deref(),
        ),
    ] {
        missing_text(p, field, value);
    }

    // The category and its aspects.
    let category = match offer.category_id.as_deref().map(str::trim) {
        None | Some("") => {
            problem(p, "offer.categoryId", ProblemKind::Missing);
            None
        }
        Some(text) => match text.parse::<u32>() {
            Ok(id) => Some(id),
            Err(_) => {
                problem(p, "offer.categoryId", ProblemKind::NotACategoryId);
                None
            }
        },
    };
    if let (Some(marketplace), Some(id)) = (marketplace, category) {
        let vouched = listing
            .vouched
            .as_ref()
            .is_some_and(|v| v.covers(marketplace, id, product));
        if !vouched && with_category {
            check_category(p, catalog, marketplace, id, product);
        }
        let known = catalog.condition_policy(marketplace, id, &mut |policy| {
            check_condition(p, policy, item);
        });
        if !known && item.condition.is_none() {
            problem(p, "inventoryItem.condition", ProblemKind::Missing);
        }
    } else if item.condition.is_none() {
        problem(p, "inventoryItem.condition", ProblemKind::Missing);
    }
    problems
}

/// The marketplace a marketplace id that is not one most likely meant: the one
/// [`Marketplace::parse`] reads it as (`ebay_us`, `us`) or, refused, its closest (`EBAY_UK`:
/// EBAY_GB), as `category!` and `snapshot --site` suggest it.
pub(crate) fn closest_marketplace(id: &str) -> Option<Marketplace> {
    match Marketplace::parse(id) {
        Ok(m) => Some(m),
        Err(e) => e.closest(),
    }
}

/// The condition and its descriptors against the category's policy.
fn check_condition(p: &mut Vec<Problem>, policy: ConditionPolicy<'_>, item: &InventoryItem) {
    let Some(condition) = item.condition else {
        if policy.required {
            problem(p, "inventoryItem.condition", ProblemKind::Missing);
        }
        return;
    };
    let Some(allowed) = policy.allowed(condition) else {
        // A restricted condition the policy does not list may be the seller's to use (see
        // ConditionPolicy::refuses): neither it nor its descriptors can be checked.
        if policy.refuses(condition) {
            problem(
                p,
                "inventoryItem.condition",
                ProblemKind::ConditionNotAllowed {
                    condition,
                    allowed: policy.names().to_string(),
                },
            );
        }
        return;
    };
    let rules = allowed.descriptors;
    let label = |id: u32, name: &str| format!("{id} {name}");
    let descriptors_allowed = || list(rules.iter().map(|r| label(r.id, r.name)), rules.len());
    // Each entry's rule (by its `name`, a descriptor id), once for both passes below.
    let matched: Vec<Option<&DescriptorRule<'_>>> = item
        .condition_descriptors
        .iter()
        .map(|d| descriptor_id(d).and_then(|id| rules.iter().find(|r| r.id == id)))
        .collect();
    // Whether each entry is the first of its descriptor (a repeated one is said once).
    let mut first = vec![false; matched.len()];
    let mut given: Vec<u32> = Vec::new();
    let mut out = ListProblems::new(p, "inventoryItem.conditionDescriptors");
    let field = |i: usize, rest: &str| format!("inventoryItem.conditionDescriptors[{i}].{rest}");
    for (i, (d, rule)) in item.condition_descriptors.iter().zip(&matched).enumerate() {
        let Some(rule) = rule else {
            out.push(
                || field(i, "name"),
                || ProblemKind::DescriptorNotAllowed {
                    allowed: descriptors_allowed(),
                },
            );
            continue;
        };
        if given.contains(&rule.id) {
            out.push(|| field(i, "name"), || ProblemKind::DescriptorTwice);
            continue;
        }
        given.push(rule.id);
        first[i] = true;
        if rule.free_text {
            let text = d.additional_info.as_deref();
            let mut found = Vec::new();
            missing_text(&mut found, "", text);
            if let Some(max) = rule.max_length {
                too_long(
                    &mut found,
                    "",
                    text,
                    usize::try_from(max).unwrap_or(usize::MAX),
                );
            }
            for found in found {
                out.push(|| field(i, "additionalInfo"), || found.kind);
            }
            continue;
        }
        if d.values.is_empty() {
            out.push(|| field(i, "values"), || ProblemKind::Missing);
        } else if d.values.len() > 1 && !rule.multiple {
            out.push(
                || field(i, "values"),
                || ProblemKind::DescriptorTakesOneValue,
            );
        }
        for (j, value) in d.values.iter().enumerate() {
            let known = value
                .trim()
                .parse::<u32>()
                .ok()
                .and_then(|v| rule.value(v))
                .is_some();
            if !known {
                out.push(
                    || field(i, &format!("values[{j}]")),
                    || ProblemKind::DescriptorValueNotAllowed {
                        descriptor: label(rule.id, rule.name),
                        allowed: list(
                            rule.values.iter().map(|v| label(v.id, v.name)),
                            rule.values.len(),
                        ),
                    },
                );
            }
        }
    }
    for rule in rules {
        if rule.required && !given.contains(&rule.id) {
            // One a rule of the policy, so never counted with the entries' problems.
            problem(
                out.problems,
                "inventoryItem.conditionDescriptors",
                ProblemKind::DescriptorRequired {
                    descriptor: label(rule.id, rule.name),
                },
            );
        }
    }
    for (i, rule) in matched.iter().enumerate() {
        let Some(rule) = rule.filter(|_| first[i]) else {
            continue;
        };
        // A required descriptor that is missing is reported once, above.
        let missing =
            |o: &&u32| !given.contains(o) && !rules.iter().any(|r| r.id == **o && r.required);
        for other in rule.requires.iter().filter(missing) {
            let name = rules.iter().find(|r| r.id == *other).map_or("", |r| r.name);
            out.push(
                || field(i, "name"),
                || ProblemKind::DescriptorNeeds {
                    descriptor: label(rule.id, rule.name),
                    other: label(*other, name),
                },
            );
        }
    }
    out.finish();
}

/// The first [`limits::SHOWN_VALUES`] of `items` (of `count`) joined, and how many more:
/// `"275020 10, 275021 9.5 and 38 more"`, or `none`.
fn list(items: impl Iterator<Item = String>, count: usize) -> String {
    let shown: Vec<String> = items.take(limits::SHOWN_VALUES).collect();
    if shown.is_empty() {
        return "none".to_owned();
    }
    let more = count.saturating_sub(shown.len());
    let mut text = shown.join(", ");
    if more > 0 {
        text.push_str(&format!(" and {more} more"));
    }
    text
}

/// A descriptor entry's id (its `name`, a number as text).
fn descriptor_id(d: &ConditionDescriptor) -> Option<u32> {
    d.name.as_deref()?.trim().parse().ok()
}

pub(crate) fn check_category(
    p: &mut Vec<Problem>,
    catalog: &dyn Catalog,
    marketplace: Marketplace,
    id: u32,
    product: Option<&crate::Product>,
) {
    let kind = match catalog.category(marketplace, id) {
        CategoryStatus::Leaf => None,
        CategoryStatus::NotLeaf {
            name,
            leaves,
            leaf_count,
        } => Some(ProblemKind::NotALeaf {
            name,
            leaves,
            leaf_count,
        }),
        CategoryStatus::Expired {
            replacement,
            replacement_path,
        } => Some(ProblemKind::Expired {
            replacement,
            replacement_path,
        }),
        CategoryStatus::Unknown {
            tree_id,
            tree_version,
        } => Some(ProblemKind::UnknownCategory {
            id,
            marketplace,
            tree_id,
            tree_version,
        }),
        CategoryStatus::NoTree => Some(ProblemKind::NoTree),
    };
    if let Some(kind) = kind {
        problem(p, "offer.categoryId", kind);
        return;
    }
    let mut aspects = ListingAspects::new();
    if let Some(product) = product {
        for (name, values) in &product.aspects {
            if !catalog.knows_aspect(marketplace, id, name) {
                continue;
            }
            aspects = aspects.with(name.as_str(), values.iter().map(String::as_str));
        }
    }
    match catalog.check_aspects(marketplace, id, &aspects) {
        None => problem(
            p,
            "inventoryItem.product.aspects",
            ProblemKind::NoAspectRules,
        ),
        Some(found) => {
            for found in found
                .into_iter()
                .filter(taxonomy_aspects::Problem::is_error)
            {
                p.push(Problem {
                    field: format!("inventoryItem.product.aspects[{:?}]", found.aspect()),
                    kind: ProblemKind::Aspect(found),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_decimal_above_zero_is_a_price() {
        for ok in ["1", "19.99", "0.01", "10.0"] {
            assert!(positive_decimal(ok), "{ok}");
        }
        for bad in ["0", "0.00", "-1", "1.", ".5", "", "abc", "1e3", "1.2.3"] {
            assert!(!positive_decimal(bad), "{bad}");
        }
    }
}
