//! The offline check of a listing with variations (`check_group`): each check refuses a group
//! naming the field, with no request sent. The rules are eBay's getItemAspectsForCategory
//! answer for Graphics/Video Cards (EBAY_US 27386, tests/fixtures/aspects), read as
//! `listing check --dir` reads a pinned answer; the tree and condition policies are the
//! compiled-in ones.

use std::collections::HashSet;

use marketplace_listing::{
    AllowedCondition, AxisRule, Catalog, CategoryStatus, CompiledIn, Condition, ConditionPolicy,
    GroupListing, Problem, ProblemKind, VariationProblem, axis_rule, check_group,
};
use marketplaces::Marketplace;
use serde_json::{Value, json};
use taxonomy_model::aspects::{AspectRules, ListingAspects, Problem as AspectProblem};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/aspects/ebay-us-27386-graphics-cards.json"
);

/// The compiled-in tree and policies, with category 27386's rules read from eBay's answer.
struct Rules {
    rules: AspectRules,
    variations_supported: Option<bool>,
    /// A condition policy for the category (none is compiled in for 27386).
    policy: Option<ConditionPolicy<'static>>,
}

impl Rules {
    fn from_answer(answer: &Value) -> Self {
        let body = serde_json::to_vec(answer).unwrap();
        let answer = taxonomy_model::decode::item_aspects(27386, &body).unwrap();
        Self {
            rules: AspectRules::from(&answer),
            variations_supported: None,
            policy: None,
        }
    }

    fn ebay() -> Self {
        Self::from_answer(
            &serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap(),
        )
    }
}

impl Catalog for Rules {
    fn category(&self, marketplace: Marketplace, id: u32) -> CategoryStatus {
        CompiledIn.category(marketplace, id)
    }
    fn check_aspects(
        &self,
        _: Marketplace,
        id: u32,
        aspects: &ListingAspects,
    ) -> Option<Vec<AspectProblem>> {
        (id == 27386).then(|| self.rules.check(aspects))
    }
    fn knows_aspect(&self, _: Marketplace, _: u32, name: &str) -> bool {
        self.rules
            .aspect_names()
            .any(|n| n.eq_ignore_ascii_case(name))
    }
    fn condition_policy(
        &self,
        marketplace: Marketplace,
        id: u32,
        f: &mut dyn FnMut(ConditionPolicy<'_>),
    ) -> bool {
        match self.policy {
            Some(policy) => {
                f(policy);
                true
            }
            None => CompiledIn.condition_policy(marketplace, id, f),
        }
    }
    fn variation_axis(
        &self,
        _: Marketplace,
        id: u32,
        name: &str,
        values: &[String],
    ) -> Option<AxisRule> {
        (id == 27386).then(|| axis_rule(&self.rules, name, values))
    }
    fn variations_supported(&self, _: Marketplace, _: u32) -> Option<bool> {
        self.variations_supported
    }
}

const MEMORY: [&str; 4] = ["4 GB", "8 GB", "12 GB", "16 GB"];
const COOLING: [&str; 5] = [
    "Fan only",
    "Fan with Heatsink",
    "Heatsink only",
    "None/Video Card only",
    "Vapor Chamber",
];

/// A good group of 20 graphics cards: 4 memory sizes by 5 coolings.
fn group_json() -> Value {
    let mut variants = Vec::new();
    let mut skus = Vec::new();
    for (i, memory) in MEMORY.iter().enumerate() {
        for (j, cooling) in COOLING.iter().enumerate() {
            let sku = format!("GPU-{i}-{j}");
            skus.push(sku.clone());
            variants.push(json!({
                "inventoryItem": {
                    "product": {
                        "aspects": {"Memory Size": [memory], "Cooling Component Included": [cooling]},
                        "imageUrls": [format!("https://example.com/{i}-{j}.jpg")]
                    },
                    "condition": "NEW",
                    "availability": {"shipToLocationAvailability": {"quantity": 5}}
                },
                "offer": {
                    "sku": sku,
                    "marketplaceId": "EBAY_US",
                    "format": "FIXED_PRICE",
                    "categoryId": "27386",
                    "availableQuantity": 5,
                    "pricingSummary": {"price": {"value": format!("{}.99", 100 + 10 * i), "currency": "USD"}},
                    "listingPolicies": {"fulfillmentPolicyId": "f", "paymentPolicyId": "p", "returnPolicyId": "r"},
                    "merchantLocationKey": "warehouse-1"
                }
            }));
        }
    }
    json!({
        "inventoryItemGroup": {
            "inventoryItemGroupKey": "GPU-GROUP",
            "title": "Graphics card, 4 to 16 GB, five coolers",
            "description": "New graphics cards.",
            "aspects": {
                "Brand": ["Acme"],
                "Chipset Manufacturer": ["AMD"],
                "Chipset/GPU Model": ["AMD Radeon HD 6450"]
            },
            "imageUrls": ["https://example.com/group.jpg"],
            "variesBy": {
                "aspectsImageVariesBy": ["Memory Size"],
                "specifications": [
                    {"name": "Memory Size", "values": MEMORY},
                    {"name": "Cooling Component Included", "values": COOLING}
                ]
            },
            "variantSKUs": skus
        },
        "variants": variants
    })
}

fn problems_of(group: &Value, catalog: &dyn Catalog, singles: &[&str]) -> Vec<Problem> {
    let group: GroupListing = serde_json::from_value(group.clone()).unwrap();
    let singles: HashSet<String> = singles.iter().map(|s| (*s).to_owned()).collect();
    check_group(&group, catalog, &singles)
}

fn check(group: &Value) -> Vec<Problem> {
    problems_of(group, &Rules::ebay(), &[])
}

/// The one problem of `field`, whatever else there is.
fn at<'p>(problems: &'p [Problem], field: &str) -> &'p ProblemKind {
    let found: Vec<&Problem> = problems.iter().filter(|p| p.field == field).collect();
    assert_eq!(found.len(), 1, "{field}: {problems:#?}");
    &found[0].kind
}

fn variation(kind: &ProblemKind) -> &VariationProblem {
    match kind {
        ProblemKind::Variation(v) => v,
        other => panic!("not a variation problem: {other:?}"),
    }
}

#[test]
fn a_good_20_variant_group_passes() {
    let problems = check(&group_json());
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn a_group_without_an_inventory_item_group_key_is_refused_naming_the_field() {
    for key in [Value::Null, json!(""), json!("  ")] {
        let mut g = group_json();
        match &key {
            Value::Null => {
                g["inventoryItemGroup"]
                    .as_object_mut()
                    .unwrap()
                    .remove("inventoryItemGroupKey");
            }
            given => g["inventoryItemGroup"]["inventoryItemGroupKey"] = given.clone(),
        }
        let p = check(&g);
        assert_eq!(
            at(&p, "inventoryItemGroup.inventoryItemGroupKey"),
            &ProblemKind::Missing,
            "{key}"
        );
    }
}

#[test]
fn a_group_key_longer_than_50_characters_is_refused_naming_the_field_and_the_length() {
    // createOrReplaceInventoryItemGroup's path parameter: "Max Length: 50". At 50 (some of
    // them two-byte letters) it passes; at 51 the check refuses it before anything is sent.
    let mut g = group_json();
    g["inventoryItemGroup"]["inventoryItemGroupKey"] =
        json!(format!("{}{}", "é".repeat(10), "K".repeat(40)));
    let p = check(&g);
    assert!(
        !p.iter()
            .any(|p| p.field == "inventoryItemGroup.inventoryItemGroupKey"),
        "{p:?}"
    );
    g["inventoryItemGroup"]["inventoryItemGroupKey"] = json!("K".repeat(51));
    let p = check(&g);
    assert_eq!(
        at(&p, "inventoryItemGroup.inventoryItemGroupKey"),
        &ProblemKind::TooLong {
            length: 51,
            max: 50
        }
    );
}

#[test]
fn an_axis_not_enabled_for_variations_is_refused_naming_it() {
    let mut g = group_json();
    // Memory Type: an aspect of the category with aspectEnabledForVariations false.
    g["inventoryItemGroup"]["variesBy"]["specifications"][1]["name"] = json!("Memory Type");
    let p = check(&g);
    assert_eq!(
        variation(at(&p, "inventoryItemGroup.variesBy.specifications[1].name")),
        &VariationProblem::AxisNotEnabled { known: true }
    );
}

#[test]
fn an_axis_of_the_compiled_in_rules_not_enabled_for_variations_is_refused() {
    // Category 179's pinned rules, compiled in: "Type" is not enabled for variations.
    let mut g = group_json();
    for v in g["variants"].as_array_mut().unwrap() {
        v["offer"]["categoryId"] = json!("179");
    }
    g["inventoryItemGroup"]["variesBy"]["specifications"][0]["name"] = json!("Type");
    let p = problems_of(&g, &CompiledIn, &[]);
    assert_eq!(
        variation(at(&p, "inventoryItemGroup.variesBy.specifications[0].name")),
        &VariationProblem::AxisNotEnabled { known: true }
    );
}

#[test]
fn brand_as_an_axis_is_refused() {
    let mut g = group_json();
    g["inventoryItemGroup"]["variesBy"]["specifications"][1]["name"] = json!("Brand");
    let p = check(&g);
    assert_eq!(
        variation(at(&p, "inventoryItemGroup.variesBy.specifications[1].name")),
        &VariationProblem::BrandAxis
    );
}

#[test]
fn a_value_outside_a_selection_only_axis_is_refused_naming_the_closest() {
    // A made-up rule: no answer we hold has a selection-only aspect enabled for variations, so
    // eBay's answer is changed here to make Memory Size one.
    let mut answer: Value =
        serde_json::from_str(&std::fs::read_to_string(FIXTURE).unwrap()).unwrap();
    for a in answer["aspects"].as_array_mut().unwrap() {
        if a["localizedAspectName"] == "Memory Size" {
            a["aspectConstraint"]["aspectMode"] = json!("SELECTION_ONLY");
        }
    }
    let mut g = group_json();
    g["inventoryItemGroup"]["variesBy"]["specifications"][0]["values"][1] = json!("8GB");
    for v in g["variants"].as_array_mut().unwrap() {
        if v["inventoryItem"]["product"]["aspects"]["Memory Size"][0] == "8 GB" {
            v["inventoryItem"]["product"]["aspects"]["Memory Size"] = json!(["8GB"]);
        }
    }
    let p = problems_of(&g, &Rules::from_answer(&answer), &[]);
    let kind = at(
        &p,
        "inventoryItemGroup.variesBy.specifications[0].values[1]",
    );
    assert_eq!(
        variation(kind),
        &VariationProblem::ValueNotAllowed {
            closest: Some("8 GB".into())
        }
    );
    assert!(
        kind_text(
            &p,
            "inventoryItemGroup.variesBy.specifications[0].values[1]"
        )
        .contains("\"8 GB\"")
    );
}

fn kind_text(p: &[Problem], field: &str) -> String {
    p.iter().find(|x| x.field == field).unwrap().to_string()
}

#[test]
fn more_axes_values_or_variants_than_ebay_takes_are_refused() {
    let mut g = group_json();
    let specs = g["inventoryItemGroup"]["variesBy"]["specifications"]
        .as_array_mut()
        .unwrap();
    for name in [
        "Connectors",
        "Compatible Slot",
        "Item Height",
        "Item Length",
    ] {
        specs.push(json!({"name": name, "values": ["x"]}));
    }
    let values: Vec<String> = (1..=61).map(|n| format!("{n} GB")).collect();
    specs[0]["values"] = json!(values);
    let p = check(&g);
    assert_eq!(
        variation(at(&p, "inventoryItemGroup.variesBy.specifications")),
        &VariationProblem::TooMany {
            what: "axes",
            count: 6,
            max: 5
        }
    );
    assert_eq!(
        variation(at(
            &p,
            "inventoryItemGroup.variesBy.specifications[0].values"
        )),
        &VariationProblem::TooMany {
            what: "values",
            count: 61,
            max: 60
        }
    );
    let mut g = group_json();
    let first = g["variants"][0].clone();
    let variants = g["variants"].as_array_mut().unwrap();
    while variants.len() < 251 {
        variants.push(first.clone());
    }
    let p = check(&g);
    assert_eq!(
        variation(at(&p, "variants")),
        &VariationProblem::TooMany {
            what: "variants",
            count: 251,
            max: 250
        }
    );
}

#[test]
fn a_variant_without_a_value_for_an_axis_or_with_two_is_refused() {
    let mut g = group_json();
    g["variants"][3]["inventoryItem"]["product"]["aspects"]
        .as_object_mut()
        .unwrap()
        .remove("Memory Size");
    g["variants"][4]["inventoryItem"]["product"]["aspects"]["Cooling Component Included"] =
        json!(["Fan only", "Heatsink only"]);
    let p = check(&g);
    assert_eq!(
        variation(at(
            &p,
            "variants[3].inventoryItem.product.aspects[\"Memory Size\"]"
        )),
        &VariationProblem::NoValueForAxis
    );
    assert_eq!(
        variation(at(
            &p,
            "variants[4].inventoryItem.product.aspects[\"Cooling Component Included\"]"
        )),
        &VariationProblem::OneValuePerAxis { count: 2 }
    );
}

#[test]
fn a_variant_value_not_among_the_axis_values_is_refused() {
    let mut g = group_json();
    g["variants"][2]["inventoryItem"]["product"]["aspects"]["Memory Size"] = json!(["24 GB"]);
    let p = check(&g);
    assert!(matches!(
        variation(at(
            &p,
            "variants[2].inventoryItem.product.aspects[\"Memory Size\"]"
        )),
        VariationProblem::NotAnAxisValue { .. }
    ));
}

#[test]
fn two_variants_of_one_combination_are_refused() {
    let mut g = group_json();
    g["variants"][1]["inventoryItem"]["product"]["aspects"] =
        g["variants"][0]["inventoryItem"]["product"]["aspects"].clone();
    let p = check(&g);
    assert_eq!(
        variation(at(&p, "variants[1].inventoryItem.product.aspects")),
        &VariationProblem::SameCombination { other: 0 }
    );
}

#[test]
fn a_variant_aspect_disagreeing_with_the_group_or_a_missing_required_aspect_is_refused() {
    let mut g = group_json();
    g["variants"][5]["inventoryItem"]["product"]["aspects"]["Brand"] = json!(["Other"]);
    g["inventoryItemGroup"]["aspects"]
        .as_object_mut()
        .unwrap()
        .remove("Chipset Manufacturer");
    let p = check(&g);
    assert!(matches!(
        variation(at(
            &p,
            "variants[5].inventoryItem.product.aspects[\"Brand\"]"
        )),
        VariationProblem::DisagreesWithGroup { .. }
    ));
    // Every variant lacks the required aspect.
    for n in [0, 19] {
        let field =
            format!("variants[{n}].inventoryItem.product.aspects[\"Chipset Manufacturer\"]");
        assert!(matches!(at(&p, &field), ProblemKind::Aspect(_)), "{p:#?}");
    }
}

#[test]
fn a_picture_axis_that_is_not_an_axis_or_a_value_without_a_picture_is_refused() {
    let mut g = group_json();
    for v in g["variants"].as_array_mut().unwrap() {
        if v["inventoryItem"]["product"]["aspects"]["Memory Size"][0] == "12 GB" {
            v["inventoryItem"]["product"]["imageUrls"] = json!([]);
        }
    }
    let p = check(&g);
    assert_eq!(
        variation(at(
            &p,
            "inventoryItemGroup.variesBy.specifications[0].values[2]"
        )),
        &VariationProblem::NoPictureForValue {
            value: "12 GB".into()
        }
    );
    let mut g = group_json();
    g["inventoryItemGroup"]["variesBy"]["aspectsImageVariesBy"] = json!(["Color"]);
    let p = check(&g);
    assert_eq!(
        variation(at(
            &p,
            "inventoryItemGroup.variesBy.aspectsImageVariesBy[0]"
        )),
        &VariationProblem::ImageAxisNotAnAxis
    );
}

#[test]
fn variants_of_another_category_policy_or_currency_are_refused() {
    let mut g = group_json();
    g["variants"][7]["offer"]["listingPolicies"]["returnPolicyId"] = json!("r2");
    g["variants"][8]["offer"]["pricingSummary"]["price"]["currency"] = json!("CAD");
    g["variants"][9]["offer"]["format"] = json!("AUCTION");
    let p = check(&g);
    assert_eq!(
        variation(at(&p, "variants[7].offer.listingPolicies.returnPolicyId")),
        &VariationProblem::DiffersFromFirstVariant { first: "r".into() }
    );
    assert!(p.iter().any(
        |x| x.field == "variants[8].offer.pricingSummary.price.currency"
            && x.kind
                == ProblemKind::Variation(VariationProblem::DiffersFromFirstVariant {
                    first: "USD".into()
                })
    ));
    assert!(p.iter().any(|x| x.field == "variants[9].offer.format"
        && x.kind
            == ProblemKind::Variation(VariationProblem::DiffersFromFirstVariant {
                first: "FIXED_PRICE".into()
            })));
}

#[test]
fn a_variant_condition_the_category_does_not_allow_is_refused() {
    // A policy allowing NEW alone (getItemConditionPolicies' shape; made up for the test).
    let mut rules = Rules::ebay();
    rules.policy = Some(ConditionPolicy {
        required: true,
        conditions: &[AllowedCondition {
            condition: Condition::New,
            descriptors: &[],
        }],
    });
    let mut g = group_json();
    g["variants"][6]["inventoryItem"]["condition"] = json!("USED_ACCEPTABLE");
    let p = problems_of(&g, &rules, &[]);
    assert!(
        matches!(
            at(&p, "variants[6].inventoryItem.condition"),
            ProblemKind::ConditionNotAllowed { .. }
        ),
        "{p:#?}"
    );
}

#[test]
fn a_sku_also_listed_alone_in_the_run_is_refused() {
    let p = problems_of(&group_json(), &Rules::ebay(), &["GPU-1-1"]);
    assert_eq!(
        variation(at(&p, "variants[6].offer.sku")),
        &VariationProblem::AlsoASingleListing
    );
}

#[test]
fn variant_skus_that_are_not_the_variants_skus_are_refused() {
    let mut g = group_json();
    g["inventoryItemGroup"]["variantSKUs"][0] = json!("GPU-GONE");
    let p = check(&g);
    assert_eq!(
        variation(at(&p, "inventoryItemGroup.variantSKUs[0]")),
        &VariationProblem::NoSuchVariant
    );
    assert_eq!(
        variation(at(&p, "variants[0].offer.sku")),
        &VariationProblem::NotInVariantSkus
    );
}

#[test]
fn a_category_without_variations_is_refused_when_known_and_unsaid_when_unknown() {
    let mut rules = Rules::ebay();
    rules.variations_supported = Some(false);
    let p = problems_of(&group_json(), &rules, &[]);
    assert_eq!(
        variation(at(&p, "variants[0].offer.categoryId")),
        &VariationProblem::CategoryWithoutVariations
    );
    assert!(check(&group_json()).is_empty());
}
