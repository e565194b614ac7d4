//! Checking a listing's aspects, and loading a fetchItemAspects file.
//!
//! - `check_30_aspects`: a 30-aspect listing against a category of 30 aspects (the real
//!   answer for Graphics/Video Cards, 20 aspects with up to 864 values, and 10 more with 300
//!   values each, half of them selection-only): `AspectRules::check` against a walk of the
//!   answer's `serde_json::Value` that checks the same rules, measured in the same run.
//!   Targets: under 10 µs a listing, and at least 10× the `Value` walk.
//! - `load_aspects_file`: the rules of the last category of the fake's US fetchItemAspects
//!   file (every leaf of the committed tree), read in one streaming pass; criterion reports
//!   the throughput over the decompressed JSON in MB/s.
//!
//! Run with `cargo bench --bench aspects`.

use std::hint::black_box;
use std::io::Read as _;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use marketplace_client::model::ItemAspectsReader;
use marketplace_client::model::aspects::{AspectRules, ListingAspects};
use marketplaces::Marketplace;
use serde_json::{Value, json};

/// The category: the real 27386 answer with 10 generated aspects.
fn category() -> Value {
    let real = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/aspects/ebay-us-27386-graphics-cards.json"),
    )
    .expect("the real answer");
    let mut answer: Value = serde_json::from_slice(&real).expect("JSON");
    let aspects = answer["aspects"].as_array_mut().expect("aspects");
    for k in 0..10 {
        let values: Vec<Value> = (0..300)
            .map(|v| json!({"localizedValue": format!("Value {k}-{v}")}))
            .collect();
        aspects.push(json!({
            "localizedAspectName": format!("Generated {k}"),
            "aspectConstraint": {"aspectDataType": "STRING", "itemToAspectCardinality": "SINGLE",
                "aspectMode": if k % 2 == 0 { "SELECTION_ONLY" } else { "FREE_TEXT" },
                "aspectRequired": k < 3, "aspectMaxLength": 65},
            "aspectValues": values,
        }));
    }
    answer
}

/// A listing giving every aspect of `category` one value: the last of its list (the worst
/// case for a scan), or a free text.
fn listing(category: &Value) -> Value {
    let mut out = serde_json::Map::new();
    for a in category["aspects"].as_array().expect("aspects") {
        let value = a["aspectValues"]
            .as_array()
            .and_then(|v| v.last())
            .and_then(|v| v["localizedValue"].as_str())
            .unwrap_or("free text");
        out.insert(
            a["localizedAspectName"].as_str().expect("name").to_owned(),
            json!([value]),
        );
    }
    Value::Object(out)
}

/// The baseline: the same rules checked by walking the answer's JSON for every aspect of the
/// listing (names and values compared ignoring ASCII case, without allocating); the number
/// of problems.
fn check_by_value_walk(category: &Value, listing: &Value) -> usize {
    let mut problems = 0;
    let aspects = category["aspects"].as_array().expect("aspects");
    let listing = listing.as_object().expect("listing");
    for (name, values) in listing {
        let Some(aspect) = aspects.iter().find(|a| {
            a["localizedAspectName"]
                .as_str()
                .is_some_and(|n| n.eq_ignore_ascii_case(name))
        }) else {
            problems += 1;
            continue;
        };
        let c = &aspect["aspectConstraint"];
        let values = values.as_array().expect("values");
        if c["itemToAspectCardinality"] == "SINGLE" && values.len() > 1 {
            problems += 1;
        }
        for v in values {
            let v = v.as_str().expect("a string");
            let listed = aspect["aspectValues"].as_array().is_some_and(|list| {
                list.iter().any(|l| {
                    l["localizedValue"]
                        .as_str()
                        .is_some_and(|l| l.eq_ignore_ascii_case(v))
                })
            });
            if c["aspectMode"] == "SELECTION_ONLY" && !listed {
                problems += 1;
            }
            if c["aspectMaxLength"]
                .as_u64()
                .is_some_and(|max| v.chars().count() as u64 > max)
            {
                problems += 1;
            }
        }
    }
    for a in aspects {
        let name = a["localizedAspectName"].as_str().expect("name");
        if a["aspectConstraint"]["aspectRequired"] == true
            && !listing.keys().any(|k| k.eq_ignore_ascii_case(name))
        {
            problems += 1;
        }
    }
    problems
}

fn check(c: &mut Criterion) {
    let category = category();
    let file = json!({"categoryTreeId": "0", "categoryAspects": [
        {"category": {"categoryId": "27386"}, "aspects": category["aspects"]}]});
    let bytes = serde_json::to_vec(&file).expect("JSON");
    let entry = ItemAspectsReader::new(&bytes[..])
        .next()
        .expect("one entry")
        .expect("decodes");
    let rules = AspectRules::from(&entry);
    let listing_json = listing(&category);
    let listing = ListingAspects::from_value(&listing_json).expect("a listing");
    assert_eq!(listing.names().count(), 30);
    // Both find the same: nothing wrong with the listing; and both find a broken one.
    assert_eq!(rules.check(&listing).len(), 0);
    assert_eq!(check_by_value_walk(&category, &listing_json), 0);
    let mut broken = listing_json.clone();
    broken["Generated 0"] = json!(["not listed", "twice"]);
    assert_eq!(
        rules
            .check(&ListingAspects::from_value(&broken).expect("a listing"))
            .len(),
        3
    );
    assert_eq!(check_by_value_walk(&category, &broken), 3);

    let mut g = c.benchmark_group("check_30_aspects");
    g.throughput(Throughput::Elements(1));
    g.bench_function("aspect_rules", |b| {
        b.iter(|| rules.check(black_box(&listing)))
    });
    g.bench_function("value_walk", |b| {
        b.iter(|| check_by_value_walk(black_box(&category), black_box(&listing_json)))
    });
    g.finish();
}

fn load(c: &mut Criterion) {
    let fake = fake_marketplace::FakeMarketplace::new();
    let gzip = fake.item_aspects_file(Marketplace::Us);
    let mut json = Vec::new();
    flate2::read::MultiGzDecoder::new(&gzip[..])
        .read_to_end(&mut json)
        .expect("gzip");
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("EBAY_US.json.gz");
    std::fs::write(&path, &gzip).expect("written");
    let last = ItemAspectsReader::new(&json[..])
        .last()
        .expect("entries")
        .expect("decodes")
        .category
        .id;
    let mut g = c.benchmark_group("load_aspects_file");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(json.len() as u64));
    g.bench_function("last_category_of_us", |b| {
        b.iter(|| {
            let found = AspectRules::from_aspects_file(&path, &[last]).expect("read");
            assert!(found.contains_key(&last));
        })
    });
    g.finish();
}

criterion_group!(benches, check, load);
criterion_main!(benches);
