//! The offline check of a 30-aspect listing (category 179, whose rules are pinned), against a
//! baseline measured in the same run: serializing the same listing to JSON (what sending it
//! costs before the network). The check must stay under 10 µs.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use marketplace_listing::{CompiledIn, Listing, check};

/// A listing of category 179 with 30 aspects: the 8 the category knows, 22 of the seller's own.
fn listing() -> Listing {
    let mut aspects = serde_json::json!({
        "Brand": ["Dell"],
        "Type": ["Desktop"],
        "Features": ["Bluetooth", "Wi-Fi"],
        "Model": ["OptiPlex 7010"],
        "Operating System": ["Windows 11"],
        "Operating System Edition": ["Pro"],
        "Release Year": ["2023"],
        "MPN": ["7010-XYZ"],
    });
    for i in 0..22 {
        aspects[format!("Custom {i}")] = serde_json::json!([format!("value {i}")]);
    }
    serde_json::from_value(serde_json::json!({
        "inventoryItem": {
            "product": {
                "title": "Dell OptiPlex 7010 desktop, 16 GB, 512 GB SSD",
                "description": "A desktop in excellent condition.",
                "aspects": aspects,
                "imageUrls": ["https://example.com/1.jpg", "https://example.com/2.jpg"]
            },
            "condition": "USED_EXCELLENT",
            "availability": {"shipToLocationAvailability": {"quantity": 3}}
        },
        "offer": {
            "sku": "DESKTOP-7010-1",
            "marketplaceId": "EBAY_US",
            "format": "FIXED_PRICE",
            "categoryId": "179",
            "availableQuantity": 3,
            "pricingSummary": {"price": {"value": "149.00", "currency": "USD"}},
            "listingPolicies": {"fulfillmentPolicyId": "f", "paymentPolicyId": "p", "returnPolicyId": "r"},
            "merchantLocationKey": "warehouse-1"
        }
    }))
    .unwrap()
}

fn bench(c: &mut Criterion) {
    let listing = listing();
    let problems = check(&listing, &CompiledIn);
    assert!(problems.is_empty(), "{problems:?}");
    let mut group = c.benchmark_group("listing_check_30_aspects");
    group.bench_function("baseline: serialize to JSON", |b| {
        b.iter(|| serde_json::to_vec(black_box(&listing)).unwrap())
    });
    group.bench_function("check", |b| {
        b.iter(|| check(black_box(&listing), &CompiledIn))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
