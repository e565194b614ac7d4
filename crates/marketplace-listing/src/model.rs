//! eBay's own shapes, under eBay's field names: the inventory item (createOrReplaceInventoryItem's
//! body, eBay's `InventoryItem`) and the offer (createOffer's body, `EbayOfferDetailsWithKeys`).
//! A field this crate does not name is kept as it came (`other`), so a file eBay accepts
//! round-trips unchanged.

use std::collections::BTreeMap;

use marketplaces::Marketplace;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Number, Value};

use crate::Condition;

/// An inventory item: createOrReplaceInventoryItem's body (eBay's `InventoryItem`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InventoryItem {
    /// The product: title, description, aspects, images, identifiers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub product: Option<Product>,
    /// The item's condition (`ConditionEnum`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<Condition>,
    /// More about a used item's condition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition_description: Option<String>,
    /// The condition descriptors of some categories (trading cards).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub condition_descriptors: Vec<ConditionDescriptor>,
    /// How many can be bought.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub availability: Option<Availability>,
    /// The package's weight and size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_weight_and_size: Option<PackageWeightAndSize>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `Product`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Product {
    /// The title (at most 80 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The subtitle (at most 55 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subtitle: Option<String>,
    /// The description (at most 500,000 characters, HTML allowed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The item specifics: `{"Brand": ["Dell"], …}`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub aspects: BTreeMap<String, Vec<String>>,
    /// The pictures (at most 24, each `https`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_urls: Vec<String>,
    /// The brand.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub brand: Option<String>,
    /// The manufacturer part number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mpn: Option<String>,
    /// European Article Numbers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ean: Vec<String>,
    /// Universal Product Codes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub upc: Vec<String>,
    /// International Standard Book Numbers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub isbn: Vec<String>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `ConditionDescriptor` (createOrReplaceInventoryItem's
/// `conditionDescriptors`): a descriptor id in `name`, its value ids in `values`, free text in
/// `additionalInfo`; the ids a category takes are getItemConditionPolicies'
/// `conditionDescriptors`.
///
/// A trading card's are made from what a seller writes: [`graded`](Self::graded) (Professional
/// Grader 27501, Grade 27502, Certification Number 27503) and [`ungraded`](Self::ungraded)
/// (Card Condition 40001), with the value ids of eBay's "Condition descriptor IDs for trading
/// cards"; any other with [`new`](Self::new).
///
/// ```
/// use marketplace_listing::{CardCondition, ConditionDescriptor, Grade, Grader};
///
/// let graded = ConditionDescriptor::graded(Grader::Psa, Grade::Ten, "12345678");
/// assert_eq!(graded[0], ConditionDescriptor::new(27501, [275010]));
/// assert_eq!(graded[1], ConditionDescriptor::new(27502, [275020]));
/// assert_eq!(graded[2].additional_info.as_deref(), Some("12345678"));
/// // What a spreadsheet holds reads too.
/// let grader: Grader = "bgs".parse().unwrap();
/// let grade: Grade = "9.5".parse().unwrap();
/// assert_eq!(ConditionDescriptor::graded(grader, grade, "").len(), 2);
/// let ungraded = ConditionDescriptor::ungraded(CardCondition::NearMintOrBetter);
/// assert_eq!(ungraded, ConditionDescriptor::new(40001, [400010]));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConditionDescriptor {
    /// The descriptor's id, as text (`"27501"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Its value ids, as text (`["275010"]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    /// Free text (a graded card's certification number: at most 30 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_info: Option<String>,
}

impl ConditionDescriptor {
    /// A trading card's Professional Grader (getItemConditionPolicies'
    /// `conditionDescriptorId` 27501), required for a graded card.
    pub const PROFESSIONAL_GRADER: u32 = 27501;
    /// A trading card's Grade (27502), required for a graded card, with its grader.
    pub const GRADE: u32 = 27502;
    /// A graded card's Certification Number (27503), free text in `additionalInfo`, optional.
    pub const CERTIFICATION_NUMBER: u32 = 27503;
    /// An ungraded card's Card Condition (40001), required for an ungraded card.
    pub const CARD_CONDITION: u32 = 40001;

    /// The descriptor `name_id` with the value ids `value_ids` (`new(27501, [275010])`: the
    /// grader PSA), as getItemConditionPolicies lists them for the category.
    pub fn new(name_id: u32, value_ids: impl IntoIterator<Item = u32>) -> Self {
        Self {
            name: Some(name_id.to_string()),
            values: value_ids.into_iter().map(|v| v.to_string()).collect(),
            additional_info: None,
        }
    }

    /// The same with `additionalInfo`, the free text of a descriptor that takes it
    /// (`new(27503, []).with_additional_info("12345678")`).
    #[must_use]
    pub fn with_additional_info(mut self, text: impl Into<String>) -> Self {
        self.additional_info = Some(text.into());
        self
    }

    /// A graded card's descriptors: its Professional Grader (27501), its Grade (27502) and,
    /// unless `certification_number` is blank, its Certification Number (27503, at most 30
    /// characters, which the check enforces). A graded card's condition is eBay's `LIKE_NEW`
    /// (2750, "Graded" in the trading-card categories):
    /// [`ListingBuilder::graded_card`](crate::ListingBuilder::graded_card) sets both.
    pub fn graded(
        grader: Grader,
        grade: Grade,
        certification_number: impl Into<String>,
    ) -> Vec<Self> {
        let mut descriptors = vec![
            Self::new(Self::PROFESSIONAL_GRADER, [grader.value_id()]),
            Self::new(Self::GRADE, [grade.value_id()]),
        ];
        let number = certification_number.into();
        if !number.trim().is_empty() {
            descriptors
                .push(Self::new(Self::CERTIFICATION_NUMBER, []).with_additional_info(number));
        }
        descriptors
    }

    /// An ungraded card's descriptor: its Card Condition (40001). An ungraded card's
    /// condition is eBay's `USED_VERY_GOOD` (4000, "Ungraded" in the trading-card categories):
    /// [`ListingBuilder::ungraded_card`](crate::ListingBuilder::ungraded_card) sets both.
    pub fn ungraded(condition: CardCondition) -> Self {
        Self::new(Self::CARD_CONDITION, [condition.value_id()])
    }
}

/// A value of a trading card's descriptor that is not one eBay lists, as written: what it was,
/// for which descriptor, and what is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownCardValue {
    /// The descriptor (`27501 Professional Grader`).
    pub descriptor: &'static str,
    /// The text given.
    pub given: String,
}

impl std::fmt::Display for UnknownCardValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let accepted: Vec<&str> = match self.descriptor {
            GRADER_LABEL => Grader::ALL.iter().map(|g| g.name()).collect(),
            GRADE_LABEL => Grade::ALL.iter().map(|g| g.name()).collect(),
            _ => CardCondition::ALL.iter().map(|c| c.name()).collect(),
        };
        write!(
            f,
            "{:?} is not a value of the condition descriptor {} (eBay's \"Condition descriptor IDs for trading cards\"); one of {}",
            self.given,
            self.descriptor,
            accepted.join(", ")
        )
    }
}

impl std::error::Error for UnknownCardValue {}

const GRADER_LABEL: &str = "27501 Professional Grader";
const GRADE_LABEL: &str = "27502 Grade";
const CARD_CONDITION_LABEL: &str = "40001 Card Condition";

/// Text as it is compared: letters, digits and `.` only, lower case (`"Near Mint or Better"`,
/// `"near-mint-or-better"` and `"NEAR_MINT_OR_BETTER"` are the same; `"1.0"` is not `"10"`).
fn folded(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '.')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// One of a trading card descriptor's values: the enum, its value id, the name eBay gives it
/// and the other names a seller writes for it.
macro_rules! card_values {
    (
        $(#[$meta:meta])* $name:ident, $label:expr;
        $( $(#[$vmeta:meta])* $variant:ident = $id:literal, $text:literal $(, $alias:literal)* ; )+
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// Every value, in the order of eBay's list.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// Its value id (`conditionDescriptorValueId`).
            pub const fn value_id(self) -> u32 {
                match self { $($name::$variant => $id,)+ }
            }

            /// The name eBay gives it (`conditionDescriptorValueName`, short).
            pub const fn name(self) -> &'static str {
                match self { $($name::$variant => $text,)+ }
            }

            /// The value of the id `id`, if it is one.
            pub fn from_value_id(id: u32) -> Option<Self> {
                Self::ALL.iter().copied().find(|v| v.value_id() == id)
            }
        }

        impl std::str::FromStr for $name {
            type Err = UnknownCardValue;

            /// Reads what a seller writes: the name (case, blanks and punctuation ignored),
            /// another usual name, or the value id.
            fn from_str(text: &str) -> Result<Self, Self::Err> {
                let key = folded(text);
                let found = match text.trim().parse::<u32>() {
                    Ok(id) if id >= 100_000 => Self::from_value_id(id),
                    _ => None,
                }
                .or_else(|| {
                    [$( ($name::$variant, &[$text $(, $alias)*][..]), )+]
                        .into_iter()
                        .find(|(_, names)| !key.is_empty() && names.iter().any(|n| folded(n) == key))
                        .map(|(v, _)| v)
                });
                found.ok_or_else(|| UnknownCardValue {
                    descriptor: $label,
                    given: text.to_owned(),
                })
            }
        }
    };
}

card_values! {
    /// A trading card's professional grader (descriptor 27501 Professional Grader), with the
    /// value ids of eBay's "Condition descriptor IDs for trading cards". Parsed from its
    /// abbreviation (`"PSA"`, `"bgs"`) or its value id.
    Grader, GRADER_LABEL;
    /// Professional Sports Authenticator.
    Psa = 275010, "PSA", "Professional Sports Authenticator";
    /// Beckett Collectors Club Grading.
    Bccg = 275011, "BCCG";
    /// Beckett Vintage Grading.
    Bvg = 275012, "BVG";
    /// Beckett Grading Services.
    Bgs = 275013, "BGS", "Beckett", "Beckett Grading Services";
    /// Certified Sports Guaranty.
    Csg = 275014, "CSG";
    /// Certified Guaranty Company.
    Cgc = 275015, "CGC", "Certified Guaranty Company";
    /// Sportscard Guaranty Corporation.
    Sgc = 275016, "SGC";
    /// KSA Certification.
    Ksa = 275017, "KSA";
    /// Gem Mint Authentication.
    Gma = 275018, "GMA";
    /// Hybrid Grading Approach.
    Hga = 275019, "HGA";
    /// International Sports Authentication.
    Isa = 2750110, "ISA";
    /// Professional Card Authenticator.
    Pca = 2750111, "PCA";
    /// Gold Standard Grading.
    Gsg = 2750112, "GSG";
    /// Platin Grading Service.
    Pgs = 2750113, "PGS";
    /// MNT Grading.
    Mnt = 2750114, "MNT";
    /// Technical Authentication & Grading.
    Tag = 2750115, "TAG";
    /// Rare Edition.
    RareEdition = 2750116, "Rare Edition", "Rare";
    /// Revolution Card Grading.
    Rcg = 2750117, "RCG";
    /// Premier Card Grading.
    Pcg = 2750118, "PCG";
    /// Ace Grading.
    Ace = 2750119, "Ace Grading", "Ace";
    /// Card Grading Australia.
    Cga = 2750120, "CGA";
    /// Trading Card Grading.
    Tcg = 2750121, "TCG";
    /// ARK Grading.
    Ark = 2750122, "ARK";
    /// Another grader.
    Other = 2750123, "Other";
}

card_values! {
    /// A graded card's grade (descriptor 27502 Grade), with the value ids of eBay's
    /// "Condition descriptor IDs for trading cards". Parsed from the grade as written
    /// (`"10"`, `"9.5"`, `"Authentic"`) or its value id.
    Grade, GRADE_LABEL;
    /// 10.
    Ten = 275020, "10", "10.0";
    /// 9.5.
    NineAndAHalf = 275021, "9.5", "9.50";
    /// 9.
    Nine = 275022, "9", "9.0";
    /// 8.5.
    EightAndAHalf = 275023, "8.5", "8.50";
    /// 8.
    Eight = 275024, "8", "8.0";
    /// 7.5.
    SevenAndAHalf = 275025, "7.5", "7.50";
    /// 7.
    Seven = 275026, "7", "7.0";
    /// 6.5.
    SixAndAHalf = 275027, "6.5", "6.50";
    /// 6.
    Six = 275028, "6", "6.0";
    /// 5.5.
    FiveAndAHalf = 275029, "5.5", "5.50";
    /// 5.
    Five = 2750210, "5", "5.0";
    /// 4.5.
    FourAndAHalf = 2750211, "4.5", "4.50";
    /// 4.
    Four = 2750212, "4", "4.0";
    /// 3.5.
    ThreeAndAHalf = 2750213, "3.5", "3.50";
    /// 3.
    Three = 2750214, "3", "3.0";
    /// 2.5.
    TwoAndAHalf = 2750215, "2.5", "2.50";
    /// 2.
    Two = 2750216, "2", "2.0";
    /// 1.5.
    OneAndAHalf = 2750217, "1.5", "1.50";
    /// 1.
    One = 2750218, "1", "1.0";
    /// Authentic (authenticated, not graded).
    Authentic = 2750219, "Authentic";
    /// Authentic, altered.
    AuthenticAltered = 2750220, "Authentic Altered";
    /// Authentic, trimmed.
    AuthenticTrimmed = 2750221, "Authentic - Trimmed";
    /// Authentic, coloured.
    AuthenticColoured = 2750222, "Authentic - Coloured", "Authentic - Colored";
}

card_values! {
    /// An ungraded card's condition (descriptor 40001 Card Condition), with the value ids of
    /// eBay's "Condition descriptor IDs for trading cards". Parsed from its name (`"Near mint
    /// or better"`, `"NM"`, `"Lightly played"`) or its value id.
    CardCondition, CARD_CONDITION_LABEL;
    /// Near mint or better.
    NearMintOrBetter = 400010, "Near mint or better", "Near mint", "NM", "Mint";
    /// Excellent (lightly played).
    Excellent = 400011, "Excellent", "EX", "Lightly played", "LP";
    /// Very good (moderately played).
    VeryGood = 400012, "Very good", "VG", "Moderately played", "MP";
    /// Poor (heavily played).
    Poor = 400013, "Poor", "Heavily played", "HP";
}

/// eBay's `Availability`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Availability {
    /// The quantity that ships.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ship_to_location_availability: Option<ShipToLocationAvailability>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `ShipToLocationAvailability`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShipToLocationAvailability {
    /// The quantity (a whole number, at least 0), kept as written so the check can say
    /// what is wrong with `1.5` or `-1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantity: Option<Number>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `PackageWeightAndSize`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PackageWeightAndSize {
    /// The dimensions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<Value>,
    /// `LETTER`, `PACKAGE_THICK_ENVELOPE`, …
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub package_type: Option<String>,
    /// The weight: `{"value": 1.2, "unit": "KILOGRAM"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<Value>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// An offer: createOffer's body (eBay's `EbayOfferDetailsWithKeys`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Offer {
    /// The inventory item's SKU (at most 50 characters).
    #[serde(default)]
    pub sku: String,
    /// `EBAY_US`, `EBAY_DE`, …
    #[serde(default)]
    pub marketplace_id: String,
    /// `FIXED_PRICE` (the default) or `AUCTION`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The leaf category, as text (`"9355"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category_id: Option<String>,
    /// The price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pricing_summary: Option<PricingSummary>,
    /// The quantity offered (a whole number, at least 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub available_quantity: Option<Number>,
    /// The business policies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing_policies: Option<ListingPolicies>,
    /// The inventory location the item ships from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merchant_location_key: Option<String>,
    /// The listing's description, when not the product's (at most 500,000 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listing_description: Option<String>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `PricingSummary`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PricingSummary {
    /// The price.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub price: Option<Amount>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// eBay's `Amount`: a decimal in text and its currency.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Amount {
    /// The amount, `"19.99"`.
    #[serde(default)]
    pub value: String,
    /// ISO 4217, the marketplace's ([`marketplaces::Marketplace::currency`]).
    #[serde(default)]
    pub currency: String,
}

/// eBay's `ListingPolicies`: the three business policies a published offer needs.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListingPolicies {
    /// The fulfillment (shipping) policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fulfillment_policy_id: Option<String>,
    /// The payment policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payment_policy_id: Option<String>,
    /// The return policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub return_policy_id: Option<String>,
    /// Every other field, as given.
    #[serde(flatten)]
    pub other: Map<String, Value>,
}

/// A listing: what a `listing` file holds, `{"inventoryItem": …, "offer": …}`, each in
/// eBay's own JSON (createOrReplaceInventoryItem's body and createOffer's).
///
/// The file format both ways: `serde_json::from_str::<Listing>` reads what `listing check FILE`
/// reads, and `serde_json::to_string(&listing)` writes a file it reads back as the same
/// listing, every field of the inventory item and the offer it does not name kept (the
/// `other` maps, at every level). Two listings
/// are equal when their files are: what [`ListingBuilder`](crate::ListingBuilder) vouched for
/// is not compared.
///
/// ```
/// use marketplace_listing::{Grade, Grader, Listing, ListingBuilder};
/// use taxonomy_macros::{aspects, category};
///
/// let card = ListingBuilder::new(
///     "CHARIZARD-PSA10",
///     category!(EBAY_US, "183454"),
///     aspects!(EBAY_US, "183454", { "Game": "Pokémon TCG", "Card Name": "Charizard" }),
/// )
/// .title("Charizard Base Set 4/102 PSA 10")
/// .description("Holo, graded PSA 10.")
/// .image("https://example.com/charizard.jpg")
/// .graded_card(Grader::Psa, Grade::Ten, "12345678")
/// .quantity(1)
/// .price("4999.00")
/// .policies("fulfillment-1", "payment-1", "return-1")
/// .merchant_location_key("warehouse-1")
/// .build()?;
/// let file = serde_json::to_string_pretty(&card).unwrap();
/// assert_eq!(serde_json::from_str::<Listing>(&file).unwrap(), card);
/// # Ok::<(), marketplace_listing::Problems>(())
/// ```
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Listing {
    /// The inventory item.
    pub inventory_item: InventoryItem,
    /// The offer (its `sku` is the inventory item's).
    pub offer: Offer,
    /// What `category!` and `aspects!` vouched for, when built by
    /// [`ListingBuilder`](crate::ListingBuilder).
    #[serde(skip)]
    pub(crate) vouched: Option<Vouched>,
}

/// What `category!` and `aspects!` vouched for ([`ListingBuilder`](crate::ListingBuilder)
/// writes it, the check reads it): the check skips the category and the aspects
/// while the listing still names that category and holds those aspects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Vouched {
    pub(crate) marketplace: Marketplace,
    pub(crate) category_id: u32,
    pub(crate) aspects: BTreeMap<String, Vec<String>>,
}

impl Vouched {
    pub(crate) fn covers(
        &self,
        marketplace: Marketplace,
        category_id: u32,
        product: Option<&Product>,
    ) -> bool {
        self.marketplace == marketplace
            && self.category_id == category_id
            && product.is_some_and(|p| p.aspects == self.aspects)
    }
}

impl PartialEq for Listing {
    fn eq(&self, other: &Self) -> bool {
        self.inventory_item == other.inventory_item && self.offer == other.offer
    }
}

impl Listing {
    /// The SKU (the offer's).
    pub fn sku(&self) -> &str {
        &self.offer.sku
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_condition_is_its_condition_enum_name_in_json() {
        for &c in Condition::ALL {
            let json = serde_json::to_string(&c).unwrap();
            assert_eq!(json, format!("\"{}\"", c.name()));
            assert_eq!(serde_json::from_str::<Condition>(&json).unwrap(), c);
        }
        let e = serde_json::from_str::<Condition>("\"USED\"").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("\"USED\" is not a ConditionEnum value (one of NEW, LIKE_NEW"),
            "{e}"
        );
    }
}
