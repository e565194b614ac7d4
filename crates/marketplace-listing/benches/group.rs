//! The offline check of a 100-variant group (`check_group`: 20 memory sizes by 5 coolings of
//! a graphics card, EBAY_US 27386, against eBay's getItemAspectsForCategory answer read as
//! `listing check --dir` reads a pinned one), against checking one single listing of the same
//! category in the same run. The goal: under 100 µs.

use std::collections::HashSet;
use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use marketplace_listing::{
    AxisRule, Catalog, CategoryStatus, CompiledIn, GroupListing, Listing, axis_rule, check,
    check_group,
};
use marketplaces::Marketplace;
use serde_json::{Value, json};
use taxonomy_model::aspects::{AspectRules, ListingAspects, Problem as AspectProblem};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/aspects/ebay-us-27386-graphics-cards.json"
);

/// The compiled-in tree, with category 27386's rules read from eBay's answer.
struct Rules(AspectRules);

impl Catalog for Rules {
    fn category(&self, marketplace: Marketplace, id: u32) -> CategoryStatus {
        CompiledIn.category(marketplace, id)
    }
    fn check_aspects(
        &self,
        _: Marketplace,
        _: u32,
        a: &ListingAspects,
    ) -> Option<Vec<AspectProblem>> {
        Some(self.0.check(a))
    }
    fn knows_aspect(&self, _: Marketplace, _: u32, name: &str) -> bool {
        self.0.aspect_names().any(|n| n.eq_ignore_ascii_case(name))
    }
    fn variation_axis(
        &self,
        _: Marketplace,
        _: u32,
        name: &str,
        values: &[String],
    ) -> Option<AxisRule> {
        Some(axis_rule(&self.0, name, values))
    }
}

const MEMORY: [&str; 20] = [
    "1 GB", "1.25 GB", "1.28 GB", "1.5 GB", "1.75 GB", "1.8 GB", "2 GB", "2.5 GB", "3 GB", "4 GB",
    "5 GB", "6 GB", "8 GB", "11 GB", "12 GB", "16 GB", "24 GB", "32 GB", "128 MB", "256 MB",
];
const COOLING: [&str; 5] = [
    "Fan only",
    "Fan with Heatsink",
    "Heatsink only",
    "None/Video Card only",
    "Vapor Chamber",
];

fn variant(sku: &str, aspects: Value) -> Value {
    json!({
        "inventoryItem": {
            "product": {
                "title": "Graphics card",
                "description": "A new graphics card.",
                "aspects": aspects,
                "imageUrls": [format!("https://example.com/{sku}.jpg")]
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
            "pricingSummary": {"price": {"value": "149.99", "currency": "USD"}},
            "listingPolicies": {"fulfillmentPolicyId": "f", "paymentPolicyId": "p", "returnPolicyId": "r"},
            "merchantLocationKey": "warehouse-1"
        }
    })
}

fn shared() -> Value {
    json!({
        "Brand": ["Acme"],
        "Chipset Manufacturer": ["AMD"],
        "Chipset/GPU Model": ["AMD Radeon HD 6450"]
    })
}

fn group() -> GroupListing {
    let mut variants = Vec::new();
    let mut skus = Vec::new();
    for (i, memory) in MEMORY.iter().enumerate() {
        for (j, cooling) in COOLING.iter().enumerate() {
            let sku = format!("GPU-{i}-{j}");
            variants.push(variant(
                &sku,
                json!({"Memory Size": [memory], "Cooling Component Included": [cooling]}),
            ));
            skus.push(sku);
        }
    }
    serde_json::from_value(json!({
        "inventoryItemGroup": {
            "title": "Graphics card, 20 memory sizes, five coolers",
            "description": "New graphics cards.",
            "aspects": shared(),
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
    }))
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let answer = std::fs::read(FIXTURE).unwrap();
    let rules = Rules(AspectRules::from(
        &taxonomy_model::decode::item_aspects(27386, &answer).unwrap(),
    ));
    let group = group();
    assert_eq!(group.variants.len(), 100);
    let none = HashSet::new();
    let problems = check_group(&group, &rules, &none);
    assert!(problems.is_empty(), "{problems:#?}");
    let mut aspects = shared();
    aspects["Memory Size"] = json!(["8 GB"]);
    aspects["Cooling Component Included"] = json!(["Fan only"]);
    let single: Listing = serde_json::from_value(variant("GPU-1", aspects)).unwrap();
    let problems = check(&single, &rules);
    assert!(problems.is_empty(), "{problems:#?}");
    let mut g = c.benchmark_group("group_check_100_variants");
    g.bench_function("baseline: check one single listing", |b| {
        b.iter(|| check(black_box(&single), &rules))
    });
    g.bench_function("check_group", |b| {
        b.iter(|| check_group(black_box(&group), &rules, &none))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
