//! The fields eBay's Inventory API description defines for each object of a listing file, and
//! the warning for a field it does not: eBay ignores a field it does not know (a typo such as
//! `catgoryId` is silently dropped, and the seller's value with it), so `listing check` and
//! `listing publish` name each one with the closest known field.
//!
//! [`OBJECTS`] is written from eBay's Inventory API description (sell_inventory_v1_oas3.json,
//! `components.schemas`): every object reachable from `InventoryItem`
//! (createOrReplaceInventoryItem's body) and `EbayOfferDetailsWithKeys` (createOffer's body),
//! with each property's name and, when the property is an object (or an array of objects)
//! the description defines, that object's schema name. Fields eBay defines that
//! [`Listing`](crate::Listing) does not model (`offer.tax`, `offer.regulatory`, …) are known
//! here, so they never warn. `product.aspects` is a map of the seller's own names: not walked.

use serde_json::Value;

/// An object's properties: each name, and the schema of an object (or array-of-objects)
/// property.
type Fields = &'static [(&'static str, Option<&'static str>)];

/// Each object of a listing file as eBay's Inventory API description defines it: its schema
/// name, and its properties (name, and the schema of an object or array-of-objects property).
pub(crate) const OBJECTS: &[(&str, Fields)] = &[
    (
        "InventoryItem",
        &[
            ("availability", Some("Availability")),
            ("condition", None),
            ("conditionDescription", None),
            ("conditionDescriptors", Some("ConditionDescriptor")),
            ("packageWeightAndSize", Some("PackageWeightAndSize")),
            ("product", Some("Product")),
        ],
    ),
    (
        "EbayOfferDetailsWithKeys",
        &[
            ("availableQuantity", None),
            ("categoryId", None),
            ("charity", Some("Charity")),
            (
                "extendedProducerResponsibility",
                Some("ExtendedProducerResponsibility"),
            ),
            ("format", None),
            ("hideBuyerDetails", None),
            ("includeCatalogProductDetails", None),
            ("listingDescription", None),
            ("listingDuration", None),
            ("listingPolicies", Some("ListingPolicies")),
            ("listingStartDate", None),
            ("lotSize", None),
            ("marketplaceId", None),
            ("merchantLocationKey", None),
            ("pricingSummary", Some("PricingSummary")),
            ("quantityLimitPerBuyer", None),
            ("regulatory", Some("Regulatory")),
            ("secondaryCategoryId", None),
            ("sku", None),
            ("storeCategoryNames", None),
            ("tax", Some("Tax")),
        ],
    ),
    (
        "Availability",
        &[
            (
                "pickupAtLocationAvailability",
                Some("PickupAtLocationAvailability"),
            ),
            (
                "shipToLocationAvailability",
                Some("ShipToLocationAvailability"),
            ),
        ],
    ),
    (
        "ConditionDescriptor",
        &[("additionalInfo", None), ("name", None), ("values", None)],
    ),
    (
        "PackageWeightAndSize",
        &[
            ("dimensions", Some("Dimension")),
            ("packageType", None),
            ("shippingIrregular", None),
            ("weight", Some("Weight")),
        ],
    ),
    (
        "Product",
        &[
            ("aspects", None),
            ("brand", None),
            ("description", None),
            ("ean", None),
            ("epid", None),
            ("imageUrls", None),
            ("isbn", None),
            ("mpn", None),
            ("subtitle", None),
            ("title", None),
            ("upc", None),
            ("videoIds", None),
        ],
    ),
    (
        "Charity",
        &[("charityId", None), ("donationPercentage", None)],
    ),
    (
        "ExtendedProducerResponsibility",
        &[
            ("ecoParticipationFee", Some("Amount")),
            ("producerProductId", None),
            ("productDocumentationId", None),
            ("productPackageId", None),
            ("shipmentPackageId", None),
        ],
    ),
    (
        "ListingPolicies",
        &[
            ("bestOfferTerms", Some("BestOffer")),
            ("eBayPlusIfEligible", None),
            ("fulfillmentPolicyId", None),
            ("paymentPolicyId", None),
            ("productCompliancePolicyIds", None),
            (
                "regionalProductCompliancePolicies",
                Some("RegionalProductCompliancePolicies"),
            ),
            ("regionalTakeBackPolicies", Some("RegionalTakeBackPolicies")),
            ("returnPolicyId", None),
            ("shippingCostOverrides", Some("ShippingCostOverride")),
            ("takeBackPolicyId", None),
        ],
    ),
    (
        "PricingSummary",
        &[
            ("auctionReservePrice", Some("Amount")),
            ("auctionStartPrice", Some("Amount")),
            ("minimumAdvertisedPrice", Some("Amount")),
            ("originallySoldForRetailPriceOn", None),
            ("originalRetailPrice", Some("Amount")),
            ("price", Some("Amount")),
            ("pricingVisibility", None),
        ],
    ),
    (
        "Regulatory",
        &[
            ("documents", Some("Document")),
            ("energyEfficiencyLabel", Some("EnergyEfficiencyLabel")),
            ("hazmat", Some("Hazmat")),
            ("manufacturer", Some("Manufacturer")),
            ("productSafety", Some("ProductSafety")),
            ("repairScore", None),
            ("responsiblePersons", Some("ResponsiblePerson")),
        ],
    ),
    (
        "Tax",
        &[
            ("applyTax", None),
            ("thirdPartyTaxCategory", None),
            ("vatPercentage", None),
        ],
    ),
    (
        "PickupAtLocationAvailability",
        &[
            ("availabilityType", None),
            ("fulfillmentTime", Some("TimeDuration")),
            ("merchantLocationKey", None),
            ("quantity", None),
        ],
    ),
    (
        "ShipToLocationAvailability",
        &[
            (
                "availabilityDistributions",
                Some("AvailabilityDistribution"),
            ),
            ("quantity", None),
        ],
    ),
    (
        "Dimension",
        &[
            ("height", None),
            ("length", None),
            ("unit", None),
            ("width", None),
        ],
    ),
    ("Weight", &[("unit", None), ("value", None)]),
    ("Amount", &[("currency", None), ("value", None)]),
    (
        "BestOffer",
        &[
            ("autoAcceptPrice", Some("Amount")),
            ("autoDeclinePrice", Some("Amount")),
            ("bestOfferEnabled", None),
        ],
    ),
    (
        "RegionalProductCompliancePolicies",
        &[("countryPolicies", Some("CountryPolicy"))],
    ),
    (
        "RegionalTakeBackPolicies",
        &[("countryPolicies", Some("CountryPolicy"))],
    ),
    (
        "ShippingCostOverride",
        &[
            ("additionalShippingCost", Some("Amount")),
            ("priority", None),
            ("shippingCost", Some("Amount")),
            ("shippingServiceType", None),
            ("surcharge", Some("Amount")),
        ],
    ),
    ("Document", &[("documentId", None)]),
    (
        "EnergyEfficiencyLabel",
        &[
            ("imageDescription", None),
            ("imageURL", None),
            ("productInformationSheet", None),
        ],
    ),
    (
        "Hazmat",
        &[
            ("component", None),
            ("pictograms", None),
            ("signalWord", None),
            ("statements", None),
        ],
    ),
    (
        "Manufacturer",
        &[
            ("addressLine1", None),
            ("addressLine2", None),
            ("city", None),
            ("companyName", None),
            ("country", None),
            ("email", None),
            ("phone", None),
            ("postalCode", None),
            ("stateOrProvince", None),
        ],
    ),
    (
        "ProductSafety",
        &[
            ("component", None),
            ("pictograms", None),
            ("statements", None),
        ],
    ),
    (
        "ResponsiblePerson",
        &[
            ("addressLine1", None),
            ("addressLine2", None),
            ("city", None),
            ("companyName", None),
            ("country", None),
            ("email", None),
            ("phone", None),
            ("postalCode", None),
            ("stateOrProvince", None),
            ("types", None),
        ],
    ),
    ("TimeDuration", &[("unit", None), ("value", None)]),
    (
        "AvailabilityDistribution",
        &[
            ("fulfillmentTime", Some("TimeDuration")),
            ("merchantLocationKey", None),
            ("quantity", None),
        ],
    ),
    ("CountryPolicy", &[("country", None), ("policyIds", None)]),
];

/// The top of a listing file: `{"inventoryItem": …, "offer": …}`.
const FILE: Fields = &[
    ("inventoryItem", Some("InventoryItem")),
    ("offer", Some("EbayOfferDetailsWithKeys")),
];

/// A field of a listing file that eBay's Inventory API description does not define for its
/// object: eBay ignores it, so the value written there is lost (a warning, not a refusal).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownField {
    /// Where it is, as the check names fields: `offer.catgoryId`,
    /// `inventoryItem.product.imageUrl`, `offer.listingPolicies.bestOfferTerms.autoAccept`.
    pub path: String,
    /// The object it is in, by its name in eBay's description (`EbayOfferDetailsWithKeys`,
    /// `Product`, …; `listing file` for the top).
    pub object: &'static str,
    /// The field of that object closest to it, when one is close (`categoryId`).
    pub closest: Option<&'static str>,
}

/// How many of a file's unknown fields its warnings name (each with its closest field); the
/// rest are counted, not listed (a file of 300,000 made-up fields printed 38 MB of warnings
/// and took over a minute to check).
pub const UNKNOWN_FIELDS_SHOWN: usize = 20;

/// The longest field name compared with the known ones (no field of eBay's description is
/// near it): a 3 MB name took a minute of edit distances.
const LONGEST_COMPARED: usize = 100;

impl std::fmt::Display for UnknownField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = match self.path.char_indices().nth(LONGEST_COMPARED) {
            Some((cut, _)) => format!(
                "{}… ({} characters)",
                &self.path[..cut],
                self.path.chars().count()
            ),
            None => self.path.clone(),
        };
        write!(
            f,
            "{path}: not a field of eBay's {} (eBay ignores it: its value is lost)",
            self.object
        )?;
        match self.closest {
            Some(closest) => write!(f, "; did you mean {closest}?"),
            None => Ok(()),
        }
    }
}

/// Every field of `file` (a listing file's JSON, `{"inventoryItem": …, "offer": …}`) that
/// eBay's Inventory API description does not define for the object it is in, in the order of
/// the file, each with the closest field the object has (the first [`UNKNOWN_FIELDS_SHOWN`]
/// only, and none for a name over 100 bytes). Values that are not objects where
/// an object is due are left to the check (they are not field names).
pub fn unknown_fields(file: &Value) -> Vec<UnknownField> {
    let mut found = Vec::new();
    walk(file, "", "listing file", FILE, &mut found);
    found
}

fn fields_of(schema: &str) -> Fields {
    OBJECTS
        .iter()
        .find(|(name, _)| *name == schema)
        .map_or(&[], |(_, fields)| fields)
}

fn walk(
    value: &Value,
    at: &str,
    object: &'static str,
    fields: Fields,
    found: &mut Vec<UnknownField>,
) {
    let Value::Object(map) = value else { return };
    for (name, value) in map {
        let path = if at.is_empty() {
            name.clone()
        } else {
            format!("{at}.{name}")
        };
        match fields.iter().find(|(known, _)| known == name) {
            Some((_, Some(schema))) => {
                let inner = fields_of(schema);
                let schema: &'static str = schema;
                match value {
                    Value::Array(items) => {
                        for (i, item) in items.iter().enumerate() {
                            walk(item, &format!("{path}[{i}]"), schema, inner, found);
                        }
                    }
                    _ => walk(value, &path, schema, inner, found),
                }
            }
            Some((_, None)) => {}
            None => found.push(UnknownField {
                // Only the fields a warning names are compared (UNKNOWN_FIELDS_SHOWN).
                closest: if found.len() < UNKNOWN_FIELDS_SHOWN {
                    closest(name, fields)
                } else {
                    None
                },
                path,
                object,
            }),
        }
    }
}

/// The known field closest to `name`: the same but for case, else the one at the smallest
/// edit distance (Damerau-Levenshtein, case ignored) if it is at most a third of the name's
/// length (at least 1): `catgoryId` -> `categoryId`, `imageUrl` -> `imageUrls`.
fn closest(name: &str, fields: &[(&'static str, Option<&str>)]) -> Option<&'static str> {
    if name.len() > LONGEST_COMPARED {
        return None;
    }
    let lower = name.to_lowercase();
    let (distance, best) = fields
        .iter()
        .map(|(known, _)| {
            let d = strsim::damerau_levenshtein(&lower, &known.to_lowercase());
            (d, *known)
        })
        .min_by_key(|(d, _)| *d)?;
    (distance <= (name.chars().count() / 3).max(1)).then_some(best)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_object_a_field_names_is_in_the_table() {
        for (object, fields) in OBJECTS {
            for (field, schema) in *fields {
                if let Some(schema) = schema {
                    assert!(!fields_of(schema).is_empty(), "{object}.{field}: {schema}");
                }
            }
        }
    }

    #[test]
    fn a_typo_is_named_with_its_closest_field_and_known_unmodelled_fields_are_not() {
        let file = json!({
            "inventoryItem": {"product": {"imageUrl": ["https://x/a.jpg"], "epid": "1",
                "aspects": {"Anything": ["x"]}}},
            "offer": {"catgoryId": "179", "tax": {"vatPercentage": 19},
                "listingPolicies": {"bestOfferTerms": {"bestOfferEnabled": true, "autoAccept": 1}},
                "regulatory": {"documents": [{"documentId": "d"}, {"documentID": "e"}]},
                "zzzzzz": 1}
        });
        let found: Vec<(String, Option<&str>)> = unknown_fields(&file)
            .into_iter()
            .map(|u| (u.path, u.closest))
            .collect();
        assert_eq!(
            found,
            [
                ("inventoryItem.product.imageUrl".into(), Some("imageUrls")),
                ("offer.catgoryId".into(), Some("categoryId")),
                (
                    "offer.listingPolicies.bestOfferTerms.autoAccept".into(),
                    None
                ),
                (
                    "offer.regulatory.documents[1].documentID".into(),
                    Some("documentId")
                ),
                ("offer.zzzzzz".into(), None),
            ]
        );
    }
}
