//! `snapshot aspects check|refresh|diff` against the fake marketplace over loopback, which
//! answers getItemAspectsForCategory for category 27386 with a real answer of the production
//! service and for 852 with eBay taxonomy-sdk's sample (`tests/fixtures/aspects/`).

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Output;

use fake_marketplace::FakeMarketplace;
use fake_marketplace::taxonomy::{DEFAULT_TREE_ID_PATH, aspects_file_path, aspects_path};
use serde_json::{Value, json};

const GRAPHICS_CARDS: u32 = 27386;

/// Runs `snapshot aspects ARGS --dir DIR` with credentials for the fake.
fn aspects(fake: &FakeMarketplace, dir: &Path, args: &[&str]) -> Output {
    common::snapshot_on_fake(fake, "aspects", args, dir)
}

use common::output_text as text;

fn write(dir: &Path, name: &str, value: &Value) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
    path
}

/// A graphics card listing that breaks four rules of the real answer: no Brand (required),
/// two memory sizes (SINGLE), a misspelt country (SELECTION_ONLY), an 801-character Prop 65
/// warning (aspectMaxLength 800); and one unknown aspect name.
fn bad_listing() -> Value {
    json!({
        "Chipset Manufacturer": ["NVIDIA"],
        "Chipset/GPU Model": ["NVIDIA GeForce RTX 3080"],
        "Memory Size": ["10 GB", "12 GB"],
        "Country/Region of Manufacture": ["Untied States"],
        "California Prop 65 Warning": ["x".repeat(801)],
        "Colour": ["Black"],
    })
}

/// The same card, following every rule; as an inventory item (`product.aspects`).
fn good_listing() -> Value {
    json!({"sku": "GPU-1", "product": {"title": "RTX 3080", "aspects": {
        "Brand": ["NVIDIA"],
        "Chipset Manufacturer": ["NVIDIA"],
        "Chipset/GPU Model": ["NVIDIA GeForce RTX 3080"],
        "Memory Size": ["10 GB"],
        "Country/Region of Manufacture": ["Taiwan"],
    }}})
}

#[test]
fn check_reports_every_problem_online_and_offline_alike() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let bad = write(dir.path(), "listing-bad.json", &bad_listing());
    let good = write(dir.path(), "listing-good.json", &good_listing());
    let category = GRAPHICS_CARDS.to_string();
    let check = |extra: &[&str], files: &[&Path]| {
        let mut args = vec!["check", "--site", "EBAY_US", "--category", &category];
        args.extend_from_slice(extra);
        let files: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
        args.extend(files.iter().map(String::as_str));
        aspects(&fake, dir.path(), &args)
    };

    let out = check(&[], &[&bad]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let shown = bad.display();
    // The listing's aspects in name order (as a JSON object is read), then the missing ones.
    let expected = [
        format!(
            r#"{shown}: error: "California Prop 65 Warning" = "{}"… is 801 characters, over the limit of 800 (aspectMaxLength): shorten it"#,
            "x".repeat(60)
        ),
        format!(r#"{shown}: warning: "Colour" is not an aspect of this category: check the name"#),
        format!(
            r#"{shown}: error: "Country/Region of Manufacture" = "Untied States" is not an allowed value (aspectMode SELECTION_ONLY): did you mean "United States"?"#
        ),
        format!(
            r#"{shown}: error: "Memory Size" takes one value (itemToAspectCardinality SINGLE), got 2: "10 GB", "12 GB"; keep one"#
        ),
        format!(
            r#"{shown}: error: "Brand" is required (aspectRequired) and missing: add it with a value"#
        ),
    ];
    assert_eq!(stdout.lines().collect::<Vec<_>>(), expected, "{stdout}");
    assert!(
        stderr.contains("from getItemAspectsForCategory"),
        "{stderr}"
    );
    assert_eq!(fake.requests_to(&aspects_path(0)).len(), 1);

    let out = check(&[], &[&good]);
    assert_eq!(out.status.code(), Some(0), "{:?}", text(&out));
    assert_eq!(text(&out).0, "");

    // Offline: the fetchItemAspects file, downloaded once, gives the same problems.
    let out = aspects(&fake, dir.path(), &["refresh", "--sites", "EBAY_US"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("EBAY_US: downloaded"), "{stdout}");
    assert!(dir.path().join("aspects/EBAY_US.json.gz").is_file());
    assert_eq!(
        std::fs::read_to_string(dir.path().join("aspects/.gitignore"))
            .unwrap()
            .lines()
            .last(),
        Some("*")
    );
    let online = text(&check(&[], &[&bad, &good])).0;
    let out = check(&["--offline"], &[&bad, &good]);
    let (offline, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(offline, online);
    assert!(stderr.contains("EBAY_US.json.gz"), "{stderr}");
    assert!(
        stderr.contains("2 listing(s) checked against category 27386: 4 error(s), 1 warning(s)"),
        "{stderr}"
    );

    // A second refresh asks the tree version only: unchanged, nothing downloaded.
    fake.clear_requests();
    let out = aspects(&fake, dir.path(), &["refresh", "--sites", "EBAY_US"]);
    let (stdout, _) = text(&out);
    assert!(
        stdout.contains("EBAY_US: unchanged (tree version 134)"),
        "{stdout}"
    );
    assert_eq!(fake.requests_to(DEFAULT_TREE_ID_PATH).len(), 1);
    assert!(fake.requests_to(&aspects_file_path(0)).is_empty());

    // Several listings in one JSON Lines file, read against the rules loaded once.
    let lines = format!("{}\n{}\n", bad_listing(), good_listing());
    let jsonl = dir.path().join("listings.jsonl");
    std::fs::write(&jsonl, lines).unwrap();
    let out = check(&["--offline"], &[&jsonl]);
    let (stdout, _) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout.lines().count(), 5, "{stdout}");
    assert!(
        stdout
            .lines()
            .all(|l| l.starts_with(&format!("{}:1: ", jsonl.display()))),
        "{stdout}"
    );
}

#[test]
fn check_names_what_it_cannot_read_or_find() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let listing = dir.path().join("bad-shape.json");
    std::fs::write(&listing, br#"{"Brand": "NVIDIA"}"#).unwrap();
    let listing = listing.display().to_string();
    // Every file is read and reported, the bad ones among the good: a wrong shape, a file
    // that is not there, a broken line of a .jsonl file, and a listing with problems.
    let lines = dir.path().join("many.jsonl");
    std::fs::write(
        &lines,
        format!("{}\n{{\"Brand\": [\n{}\n", good_listing(), bad_listing()),
    )
    .unwrap();
    let missing = dir.path().join("no-such-listing.json");
    let out = aspects(
        &fake,
        dir.path(),
        &[
            "check",
            "--site",
            "EBAY_US",
            "--category",
            "27386",
            &listing,
            &missing.display().to_string(),
            &lines.display().to_string(),
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout
            .contains(r#"bad-shape.json: aspects["Brand"]: is a string, not an array of strings"#),
        "{stdout}"
    );
    assert!(stdout.contains("no-such-listing.json: "), "{stdout}");
    assert!(stdout.contains("many.jsonl:2: "), "{stdout}");
    assert!(stdout.contains("many.jsonl:3: "), "{stdout}");
    assert!(
        !stdout.contains("many.jsonl:1: "),
        "the good listing: {stdout}"
    );
    assert!(
        stderr.contains("2 listing(s) checked against category 27386 (3 unreadable)"),
        "{stderr}"
    );
    // --offline without a download says what to run.
    let out = aspects(
        &fake,
        dir.path(),
        &[
            "check",
            "--offline",
            "--site",
            "EBAY_US",
            "--category",
            "27386",
            &listing,
        ],
    );
    let (_, stderr) = text(&out);
    assert!(
        stderr.contains("run `snapshot aspects refresh --sites EBAY_US` first"),
        "{stderr}"
    );
    // A category that the compiled-in tree knows is not a leaf: said here, as `category!`
    // says it, without asking the service.
    fake.clear_requests();
    let out = aspects(
        &fake,
        dir.path(),
        &[
            "check",
            "--site",
            "EBAY_US",
            "--category",
            "15032",
            &listing,
        ],
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "EBAY_US category 15032 \"Cell Phones & Accessories\" is not a leaf: only leaf categories accept listings."
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("9355 (Cell Phones & Accessories > Cell Phones & Smartphones)"),
        "{stderr}"
    );
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

/// Reads the SDK's test data.
fn sdk_file(name: &str) -> PathBuf {
    common::root()
        .join("tests/fixtures/aspects/taxonomy-sdk")
        .join(name)
}

/// `aspectMaxLength` as a string, as the SDK writes it (the service sends a number).
fn max_length_as_text(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, v) in m.iter_mut() {
                if k == "aspectMaxLength"
                    && let Some(n) = v.as_u64()
                {
                    *v = json!(n.to_string());
                }
                max_length_as_text(v);
            }
        }
        Value::Array(items) => items.iter_mut().for_each(max_length_as_text),
        _ => {}
    }
}

#[test]
fn diff_lists_what_ebays_taxonomy_sdk_expects() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let old = sdk_file("fetch_item_aspects-previous.json");
    let new = sdk_file("fetch_item_aspects-current.json");
    let out = aspects(
        &fake,
        dir.path(),
        &[
            "diff",
            &old.display().to_string(),
            &new.display().to_string(),
            "--json",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    let mut ours: Value = serde_json::from_str(&stdout).unwrap();
    max_length_as_text(&mut ours);
    let expected: Value =
        serde_json::from_slice(&std::fs::read(sdk_file("aspects_difference.json")).unwrap())
            .unwrap();
    assert_eq!(ours, expected);

    let out = aspects(
        &fake,
        dir.path(),
        &[
            "diff",
            &old.display().to_string(),
            &new.display().to_string(),
        ],
    );
    let (stdout, _) = text(&out);
    for line in [
        r#"+ category 5555 "Canada Dry" (8 aspects)"#,
        "- category 853",
        "- category 10000",
        r#"~ category 852 "Fountain": new aspect "NewAspect""#,
        r#"~ category 852 "Fountain": aspect "Date of Creation" removed"#,
        r#"~ category 852 "Fountain": "Brand" aspectUsage OPTIONAL → RECOMMENDED"#,
        r#"~ category 852 "Fountain": "Color" suggested values: removed ["Multi-color"]"#,
    ] {
        assert!(stdout.lines().any(|l| l == line), "{line}\n{stdout}");
    }
}

#[test]
fn diff_names_the_listings_a_change_breaks() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    // A newer version derived from the SDK's: Brand becomes required, and "May be" leaves
    // the selection-only list of "Modified Item".
    let old = sdk_file("fetch_item_aspects-current.json");
    let mut newer: Value = serde_json::from_slice(&std::fs::read(&old).unwrap()).unwrap();
    for entry in newer["categoryAspects"].as_array_mut().unwrap() {
        for aspect in entry["aspects"].as_array_mut().unwrap() {
            match aspect["localizedAspectName"].as_str() {
                Some("Brand") => aspect["aspectConstraint"]["aspectRequired"] = json!(true),
                Some("Modified Item") => aspect["aspectValues"]
                    .as_array_mut()
                    .unwrap()
                    .retain(|v| v["localizedValue"] != "May be"),
                _ => {}
            }
        }
    }
    let new = write(dir.path(), "newer.json", &newer);
    let a = write(
        dir.path(),
        "a.json",
        &json!({"Brand": ["Coca-Cola"], "Modified Item": ["May be"]}),
    );
    let b = write(dir.path(), "b.json", &json!({"Modified Item": ["No"]}));
    let c = write(
        dir.path(),
        "c.json",
        &json!({"Brand": ["Coca-Cola"], "Modified Item": ["No"]}),
    );
    let args: Vec<String> = [
        "diff".into(),
        old.display().to_string(),
        new.display().to_string(),
        "--category".into(),
        "5555".into(),
    ]
    .into_iter()
    .chain(
        [&a, &b, &c]
            .iter()
            .flat_map(|p| ["--listing".to_string(), p.display().to_string()]),
    )
    .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = aspects(&fake, dir.path(), &args);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stdout.contains(r#"~ category 852 "Fountain": "Brand" is now required"#),
        "{stdout}"
    );
    assert!(
        stdout.contains(
            r#"~ category 5555 "Canada Dry": "Modified Item" selection-only list: removed ["May be"]"#
        ),
        "{stdout}"
    );
    let broken: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("breaks "))
        .collect();
    assert_eq!(
        broken,
        [
            format!("breaks {}:", a.display()),
            format!("breaks {}:", b.display())
        ],
        "{stdout}"
    );
    assert!(
        stdout.contains(r#"  error: "Modified Item" = "May be" is not an allowed value"#),
        "{stdout}"
    );
    assert!(
        stdout.contains(r#"  error: "Brand" is required (aspectRequired) and missing"#),
        "{stdout}"
    );
}
