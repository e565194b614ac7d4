//! `snapshot aspects pin` and `snapshot aspects refresh --pinned [--check]` against the fake
//! marketplace over loopback (which answers getItemAspectsForCategory for 179 from
//! `tests/fixtures/aspects/ebay-us-179-desktops.json`), and the repository's own pinned
//! categories (`snapshots/pinned/`) checked through `LeafCategory` exactly as the model checks
//! the answer they were pinned from.

use crate::common;

use std::path::Path;
use std::process::Output;

use fake_marketplace::FakeMarketplace;
use fake_marketplace::taxonomy::aspects_path;
use marketplace_client::model::aspects::ListingAspects;
use marketplaces::Marketplace;
use serde_json::json;
use taxonomy_codegen::pinned::{self, PinnedAspects};

/// Runs `snapshot aspects ARGS --dir DIR` with credentials for the fake.
fn aspects(fake: &FakeMarketplace, dir: &Path, args: &[&str]) -> Output {
    common::snapshot_on_fake(fake, "aspects", args, dir)
}

use common::output_text as text;

/// A snapshots directory holding the committed US tree (pins are used only beside their
/// marketplace's tree).
fn dir_with_the_us_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let us = Marketplace::Us.snapshot_file_name();
    std::fs::copy(common::snapshots_dir().join(us), dir.path().join(us)).unwrap();
    dir
}

#[test]
fn pin_saves_the_answer_normalised_with_its_tree_version() {
    let fake = FakeMarketplace::new();
    let dir = dir_with_the_us_tree();
    let out = aspects(
        &fake,
        dir.path(),
        &[
            "pin",
            "--site",
            "EBAY_US",
            "--category",
            "179",
            "--category",
            "Computers/Tablets & Networking > Computer Components & Parts > Graphics/Video Cards",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("EBAY_US: pinned category 179 (8 aspects, 2 required; tree version 134)"),
        "{stdout}"
    );
    let path = pinned::path_of(dir.path(), Marketplace::Us, 179);
    let file = PinnedAspects::read(&path).unwrap();
    assert_eq!((file.tree_id, file.tree_version.as_str()), (0, "134"));
    assert_eq!(file.source, "getItemAspectsForCategory");
    assert_eq!(file.taken_at, taxonomy_tree::clock::today_utc());
    // Pinned from the fake: marked as such, with its host, and said on the way.
    let host = fake.base_url();
    let host = host.trim_start_matches("http://").trim_end_matches('/');
    assert_eq!(
        (file.made_up, file.fetched_from.as_deref()),
        (true, Some(host))
    );
    assert!(
        stderr.contains("came from a fake marketplace") && stderr.contains("not eBay's rules"),
        "{stderr}"
    );
    // A committed file taken from eBay says neither.
    let committed = PinnedAspects::read(&pinned::path_of(
        &common::snapshots_dir(),
        Marketplace::Us,
        179,
    ))
    .unwrap();
    assert!(!committed.made_up);
    let recorded: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            common::root().join("tests/fixtures/aspects/ebay-us-179-desktops.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(file.answer, recorded, "the answer as the service sent it");
    // Normalised: the file is its own rendering, keys sorted.
    let bytes = std::fs::read_to_string(&path).unwrap();
    assert_eq!(file.to_text(), bytes);
    assert!(bytes.contains("\"aspectApplicableTo\": [\n"), "{bytes}");
    // The path form named the graphics cards' leaf: pinned under its id.
    assert!(pinned::path_of(dir.path(), Marketplace::Us, 27386).is_file());

    // Pinning again the same day gives the same bytes.
    let out = aspects(
        &fake,
        dir.path(),
        &["pin", "--site", "EBAY_US", "--category", "179"],
    );
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), bytes);
}

#[test]
fn pin_refuses_what_category_refuses_before_asking_the_service() {
    let fake = FakeMarketplace::new();
    let dir = dir_with_the_us_tree();
    let out = aspects(
        &fake,
        dir.path(),
        &[
            "pin",
            "--site",
            "EBAY_US",
            "--category",
            "179",
            "--category",
            "15032",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "--category \"15032\": EBAY_US category 15032 \"Cell Phones & Accessories\" is not a leaf"
        ) && stderr.contains("9355 (Cell Phones & Accessories > Cell Phones & Smartphones)"),
        "{stderr}"
    );
    let out = aspects(
        &fake,
        dir.path(),
        &["pin", "--site", "EBAY_US", "--category", "9356"],
    );
    let (_, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr.contains("EBAY_US has no category 9356") && stderr.contains("Did you mean:"),
        "{stderr}"
    );
    // Nothing asked, nothing written.
    assert!(fake.requests_to(&aspects_path(0)).is_empty());
    assert!(pinned::files_in(dir.path()).unwrap().is_empty());
}

#[test]
fn refresh_rewrites_pinned_categories_when_the_tree_moved_and_check_names_the_rule() {
    let fake = FakeMarketplace::new();
    let dir = dir_with_the_us_tree();
    let out = aspects(
        &fake,
        dir.path(),
        &["pin", "--site", "EBAY_US", "--category", "179"],
    );
    assert!(out.status.success(), "{:?}", text(&out));
    let path = pinned::path_of(dir.path(), Marketplace::Us, 179);
    let before = std::fs::read_to_string(&path).unwrap();

    // Same tree version: nothing fetched again.
    let asked = fake.requests_to(&aspects_path(0)).len();
    let out = aspects(&fake, dir.path(), &["refresh", "--pinned", "--check"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout,
        "EBAY_US category 179: unchanged (tree version 134)\n"
    );
    assert_eq!(fake.requests_to(&aspects_path(0)).len(), asked);

    // The tree moves to 135 and 179's Model becomes required, "Tower" leaves Type's list.
    let mut tree = fake.tree(Marketplace::Us);
    tree.meta.version = "135".into();
    fake.set_tree(Marketplace::Us, tree);
    let mut answer = PinnedAspects::read(&path).unwrap().answer;
    let aspects_list = answer["aspects"].as_array_mut().unwrap();
    for aspect in aspects_list.iter_mut() {
        match aspect["localizedAspectName"].as_str() {
            Some("Model") => aspect["aspectConstraint"]["aspectRequired"] = json!(true),
            Some("Type") => aspect["aspectValues"]
                .as_array_mut()
                .unwrap()
                .retain(|v| v["localizedValue"] != "Tower"),
            _ => {}
        }
    }
    fake.set_item_aspects(179, answer.clone());

    let out = aspects(&fake, dir.path(), &["refresh", "--pinned", "--check"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let at = "~ category 179 \"PC Desktops & All-In-Ones\":";
    assert!(
        stdout.contains(&format!("{at} \"Model\" is now required")),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "{at} \"Type\" selection-only list: removed [\"Tower\"]"
        )),
        "{stdout}"
    );
    assert!(
        stderr.contains("rules of pinned categories changed"),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        before,
        "--check writes nothing"
    );

    let out = aspects(&fake, dir.path(), &["refresh", "--pinned"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!("{at} \"Model\" is now required")),
        "{stdout}"
    );
    let after = PinnedAspects::read(&path).unwrap();
    assert_eq!(after.tree_version, "135");
    assert_eq!(after.answer, answer);

    // Up to date again.
    let out = aspects(&fake, dir.path(), &["refresh", "--pinned", "--check"]);
    assert!(out.status.success(), "{:?}", text(&out));
    assert_eq!(
        text(&out).0,
        "EBAY_US category 179: unchanged (tree version 135)\n"
    );
}

/// A getItemAspectsForCategory answer of `n` free-text aspects, "Aspect 0"…, the last one
/// required.
fn answer_of_aspects(n: usize) -> serde_json::Value {
    let aspects: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            json!({"localizedAspectName": format!("Aspect {i}"),
                "aspectConstraint": {"aspectMode": "FREE_TEXT", "aspectRequired": i + 1 == n}})
        })
        .collect();
    json!({ "aspects": aspects })
}

/// `answer` pinned for EBAY_US category 179.
fn pinned_179(answer: serde_json::Value) -> PinnedAspects {
    PinnedAspects {
        site: Marketplace::Us,
        tree_id: 0,
        tree_version: "134".into(),
        category_id: 179,
        taken_at: "2026-11-26".into(),
        source: "getItemAspectsForCategory".into(),
        fetched_from: None,
        made_up: false,
        answer,
    }
}

#[test]
fn more_than_65536_aspects_are_refused_at_build_naming_the_category() {
    // Required aspects are u16 indexes: the 65,537th aspect, required, became aspect 0.
    let generated = taxonomy_codegen::codegen::generate_with_pinned(
        &[],
        &[pinned_179(answer_of_aspects(65_537))],
    );
    let error = match generated {
        Ok(source) => panic!(
            "65,537 aspects were compiled in, {}",
            source
                .lines()
                .find(|l| l.contains("required: &["))
                .unwrap_or("")
        ),
        Err(error) => error.to_string(),
    };
    assert!(
        error.contains("EBAY_US category 179") && error.contains("65537 aspects"),
        "{error}"
    );
    // 65,536 fit, the last one required as the answer says.
    let (source, _) =
        pinned::rules_source(&pinned_179(answer_of_aspects(65_536)), "PINNED_US_179").unwrap();
    assert!(
        source.contains("    required: &[65535],\n"),
        "the last aspect is required"
    );
}

#[test]
fn pin_refuses_an_answer_the_build_could_not_compile_and_writes_nothing() {
    let fake = FakeMarketplace::new();
    let dir = dir_with_the_us_tree();
    let huge = answer_of_aspects(65_537);
    fake.set_item_aspects(179, huge.clone());
    let out = aspects(
        &fake,
        dir.path(),
        &[
            "pin",
            "--site",
            "EBAY_US",
            "--category",
            "27386",
            "--category",
            "179",
        ],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("EBAY_US category 179") && stderr.contains("65537 aspects"),
        "{stderr}"
    );
    assert!(
        pinned::files_in(dir.path()).unwrap().is_empty(),
        "nothing written, not even 27386's good answer"
    );

    // refresh --pinned neither: the pinned file stays as it was.
    fake.set_item_aspects(179, answer_of_aspects(3));
    let out = aspects(
        &fake,
        dir.path(),
        &["pin", "--site", "EBAY_US", "--category", "179"],
    );
    assert!(out.status.success(), "{:?}", text(&out));
    let path = pinned::path_of(dir.path(), Marketplace::Us, 179);
    let before = std::fs::read_to_string(&path).unwrap();
    fake.set_item_aspects(179, huge);
    let out = aspects(&fake, dir.path(), &["refresh", "--pinned", "--force"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("65537 aspects"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
}

/// Listings that touch every rule of `answer`'s aspects: each value, each value misspelt, in
/// another case, too long, twice, not a number or a date, under a misspelt or re-cased name,
/// each constrained value with and without its control aspect, and every aspect at once.
fn listings_for(answer: &marketplace_client::model::ItemAspects) -> Vec<ListingAspects> {
    let mut listings = vec![ListingAspects::new()];
    let mut all = ListingAspects::new();
    for a in &answer.aspects {
        let first = a.values.first().map_or("Something", |v| v.value.as_str());
        all = all.with(a.name.as_str(), [first]);
        let with = |values: Vec<String>| ListingAspects::new().with(a.name.as_str(), values);
        listings.push(with(vec![first.to_owned()]));
        listings.push(with(vec![first.to_uppercase()]));
        listings.push(with(vec![format!("{first}x")]));
        listings.push(with(vec![format!(" {} ", first.to_lowercase())]));
        listings.push(with(vec![first.to_owned(), "Other".into()]));
        listings.push(with(vec![
            "x".repeat(a.max_length.unwrap_or(65) as usize + 1),
        ]));
        listings.push(with(vec!["12.5".into(), "2024".into(), "20240230".into()]));
        listings.push(with(vec![String::new()]));
        listings.push(ListingAspects::new().with(format!("{}s", a.name), [first]));
        listings.push(
            ListingAspects::new()
                .with(a.name.as_str(), [first])
                .with(a.name.to_lowercase(), [first]),
        );
        for v in &a.values {
            for c in &v.constraints {
                let control = c.aspect_name.clone().unwrap_or_default();
                listings.push(with(vec![v.value.clone()]));
                listings.push(with(vec![v.value.clone()]).with(control.as_str(), ["Nothing"]));
                for allowed in &c.aspect_values {
                    listings.push(
                        with(vec![v.value.clone()])
                            .with(control.to_uppercase(), [allowed.as_str()]),
                    );
                }
            }
        }
    }
    listings.push(all);
    listings
}

#[test]
fn every_pinned_category_is_checked_through_leaf_category_as_the_model_checks_its_answer() {
    use marketplace_client::model::aspects::AspectRules;
    use marketplace_client::model::decode;
    use std::collections::BTreeSet;

    let files = pinned::read_all(&common::snapshots_dir()).unwrap();
    assert!(!files.is_empty(), "the repository pins categories");
    let mut kinds = BTreeSet::new();
    for file in files {
        let answer =
            decode::item_aspects(file.category_id, &serde_json::to_vec(&file.answer).unwrap())
                .unwrap();
        let model = AspectRules::from(&answer);
        let site = taxonomy_data::Site::from_marketplace(file.site);
        let compiled = taxonomy_data::LeafCategory::new(site, file.category_id)
            .unwrap()
            .aspects()
            .unwrap_or_else(|| panic!("{} {} is not compiled in", file.site, file.category_id));
        assert_eq!(compiled.tree_version(), file.tree_version);
        assert_eq!(
            compiled.aspect_names().collect::<Vec<_>>(),
            model.aspect_names().collect::<Vec<_>>()
        );
        let listings = listings_for(&answer);
        for listing in &listings {
            let expected = model.check(listing);
            assert_eq!(compiled.check(listing), expected, "{listing:?}");
            kinds.extend(
                expected
                    .iter()
                    .map(|p| format!("{p:?}").split(' ').next().unwrap().to_owned()),
            );
        }
    }
    // The listings reached every kind of problem (so the comparison is not of empty lists).
    for kind in [
        "MissingRequired",
        "TooManyValues",
        "NotAllowed",
        "TooLong",
        "BadFormat",
        "ConstraintNotMet",
        "UnknownAspect",
        "SpelledTwice",
        "RequiredSoon",
    ] {
        assert!(kinds.contains(kind), "no {kind} among {kinds:?}");
    }
}

/// The listing of the project below, with `{aspects}` replaced by each case's object.
const PROJECT_MAIN: &str = r#"
use taxonomy_macros::aspects;

fn main() {
    let listing = aspects!(EBAY_US, "179", {aspects});
    println!("{}", listing.listing().names().collect::<Vec<_>>().join(","));
}
"#;

/// A project outside the workspace with its own snapshots directory (the committed US tree),
/// in which `snapshot aspects pin` pins US 179 against the fake: a listing with every required
/// aspect compiles and runs; each mistake fails to compile naming the aspect.
#[test]
fn a_project_that_pins_179_compiles_good_listings_and_refuses_bad_ones() {
    let fake = FakeMarketplace::new();
    let project = tempfile::tempdir().unwrap();
    let project = &project.path().canonicalize().unwrap();
    let own = project.join("snapshots");
    std::fs::create_dir_all(&own).unwrap();
    let us = Marketplace::Us.snapshot_file_name();
    std::fs::copy(common::snapshots_dir().join(us), own.join(us)).unwrap();
    let out = aspects(
        &fake,
        &own,
        &["pin", "--site", "EBAY_US", "--category", "179"],
    );
    assert!(out.status.success(), "{:?}", text(&out));

    let own_text = own.display().to_string();
    let _turn = common::outside_probes_turn();
    let target = common::outside_probes_target();
    let build = |object: &str| {
        common::write_outside_crate(
            project,
            "pinned-project",
            "[dependencies]\ntaxonomy-data = { path = {data} }\ntaxonomy-macros = { path = {macros} }\n",
            &PROJECT_MAIN.replace("{aspects}", object),
        );
        common::build_outside_crate(project, &target, &[("TAXONOMY_SNAPSHOTS_DIR", &own_text)])
    };

    let out = build(
        r#"{ "Brand": "Dell", "Type": "Desktop", "Features": ["Bluetooth", "Wi-Fi"], "MPN": "D13M" }"#,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    // The build warns that these rules came from the fake.
    assert!(
        stderr.contains("EBAY_US-179.json came from a fake marketplace"),
        "{stderr}"
    );
    let run = std::process::Command::new(target.join("debug/pinned-project"))
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "Brand,Type,Features,MPN\n"
    );

    for (object, expected) in [
        (
            r#"{ "Brand": "Dell", "Features": ["Bluetooth"] }"#,
            "requires 1 aspect(s) this listing lacks (aspectRequired):\n         \"Type\"",
        ),
        (
            r#"{ "Brand": "Dell", "Type": "Desktops" }"#,
            "error: \"Type\" = \"Desktops\" is not an allowed value (aspectMode SELECTION_ONLY): did you mean \"Desktop\"?",
        ),
        (
            r#"{ "Brand": "Dell", "Type": ["Desktop", "Tower"] }"#,
            "error: \"Type\" takes one value (itemToAspectCardinality SINGLE), got 2",
        ),
        (
            r#"{ "Brand": "Dell", "Type": "Desktop", "Model": "OptiPlex 7010 Micro Form Factor Intel Core i5-13500T 16 GB RAM 512 GB SSD" }"#,
            "error: \"Model\" = \"OptiPlex 7010 Micro Form Factor Intel Core i5-13500T 16 GB R\"… is 73 characters, over the limit of 65 (aspectMaxLength)",
        ),
    ] {
        let out = build(object);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{object} compiled");
        assert!(stderr.contains(expected), "{object}:\n{stderr}");
    }
}

/// A leaf of the US tree that the fake is told has no aspects (Gift Cards & Coupons > Gift
/// Cards).
const LEAF_WITHOUT_ASPECTS: u32 = 172009;

/// A listing file of [`LEAF_WITHOUT_ASPECTS`] without any aspect.
const LISTING_WITHOUT_ASPECTS: &str = r#"{
  "inventoryItem": {
    "product": {
      "title": "A gift card", "description": "A gift card.",
      "imageUrls": ["https://example.com/gift-card.jpg"]
    },
    "condition": "NEW",
    "availability": {"shipToLocationAvailability": {"quantity": 1}}
  },
  "offer": {
    "sku": "GIFT-1", "marketplaceId": "EBAY_US", "format": "FIXED_PRICE",
    "categoryId": "172009", "availableQuantity": 1,
    "pricingSummary": {"price": {"value": "25.00", "currency": "USD"}},
    "listingPolicies": {"fulfillmentPolicyId": "f", "paymentPolicyId": "p", "returnPolicyId": "r"},
    "merchantLocationKey": "warehouse-1"
  }
}"#;

/// The program of a project pinning [`LEAF_WITHOUT_ASPECTS`]: a listing without aspects
/// passes `aspects!` (which refuses a category without pinned rules), and the compiled-in
/// rules name no aspect.
const LEAF_WITHOUT_ASPECTS_MAIN: &str = r#"
use taxonomy_macros::aspects;

fn main() {
    let listing = aspects!(EBAY_US, "172009", {});
    let rules = taxonomy_data::LeafCategory::new(taxonomy_data::Site::Us, 172009)
        .unwrap()
        .aspects()
        .map(|rules| rules.aspect_names().count());
    println!("{} {rules:?}", listing.listing().names().count());
}
"#;

/// getItemAspectsForCategory answers a leaf without aspects `204 No Content` (as eBay does):
/// `snapshot aspects pin` pins it as a category without aspects, as the typed client reads
/// that answer (it failed decoding the empty body); the pinned file compiles in, and `listing
/// check` of that category accepts a listing without aspects, which it refused as having no
/// rules before the pin.
#[test]
fn a_leaf_answered_204_no_content_is_pinned_as_a_category_without_aspects() {
    let fake = FakeMarketplace::new();
    fake.set_item_aspects(LEAF_WITHOUT_ASPECTS, json!({"aspects": []}));
    let project = tempfile::tempdir().unwrap();
    let project = &project.path().canonicalize().unwrap();
    let own = project.join("snapshots");
    std::fs::create_dir_all(&own).unwrap();
    let us = Marketplace::Us.snapshot_file_name();
    std::fs::copy(common::snapshots_dir().join(us), own.join(us)).unwrap();
    let listing_file = project.join("gift-card.json");
    std::fs::write(&listing_file, LISTING_WITHOUT_ASPECTS).unwrap();
    let check = || {
        common::clean_command(env!("CARGO_BIN_EXE_listing"))
            .arg("--dir")
            .arg(&own)
            .arg("check")
            .arg(&listing_file)
            .output()
            .unwrap()
    };
    let out = check();
    assert_eq!(out.status.code(), Some(1), "{:?}", text(&out));
    assert!(
        text(&out)
            .0
            .contains("inventoryItem.product.aspects: no aspect rules"),
        "{:?}",
        text(&out)
    );

    let out = aspects(
        &fake,
        &own,
        &["pin", "--site", "EBAY_US", "--category", "172009"],
    );
    let (stdout, stderr) = text(&out);
    let answered: Vec<u16> = fake
        .answers_to(&aspects_path(0))
        .iter()
        .map(|a| a.status)
        .collect();
    assert_eq!(answered, [204], "the fake answered as eBay does");
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout
            .contains("EBAY_US: pinned category 172009 (0 aspects, 0 required; tree version 134)"),
        "{stdout}"
    );
    let file = PinnedAspects::read(&pinned::path_of(
        &own,
        Marketplace::Us,
        LEAF_WITHOUT_ASPECTS,
    ))
    .unwrap();
    assert_eq!(file.answer, json!({}));
    assert!(file.made_up, "pinned from the fake");

    let out = check();
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(
        text(&out).0.contains("gift-card.json: ok"),
        "{:?}",
        text(&out)
    );

    let own_text = own.display().to_string();
    let _turn = common::outside_probes_turn();
    let target = common::outside_probes_target();
    common::write_outside_crate(
        project,
        "pinned-without-aspects",
        "[dependencies]\ntaxonomy-data = { path = {data} }\ntaxonomy-macros = { path = {macros} }\n",
        LEAF_WITHOUT_ASPECTS_MAIN,
    );
    let out =
        common::build_outside_crate(project, &target, &[("TAXONOMY_SNAPSHOTS_DIR", &own_text)]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = std::process::Command::new(target.join("debug/pinned-without-aspects"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&run.stdout), "0 Some(0)\n");
}

/// `snapshot aspects pin` into a directory without the marketplace's tree is refused before
/// anything is asked or written, saying its pins would not be used and naming the command
/// that gets the tree (a new user pinned into an empty directory, and the build and `listing
/// --dir` went on without the rules).
#[test]
fn pin_into_a_directory_without_the_marketplaces_tree_is_refused_naming_the_refresh() {
    let fake = FakeMarketplace::new();
    let dir = tempfile::tempdir().unwrap();
    let out = aspects(
        &fake,
        dir.path(),
        &["pin", "--site", "EBAY_US", "--category", "179"],
    );
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("holds no EBAY_US tree (EBAY_US.json): pins beside no tree are not used")
            && stderr.contains(&format!(
                "`snapshot --dir {} refresh --sites EBAY_US`",
                dir.path().display()
            )),
        "{stderr}"
    );
    assert!(
        fake.requests()
            .iter()
            .all(|r| !r.path.contains("get_item_aspects_for_category")),
        "asked the service"
    );
    assert!(!dir.path().join(pinned::PINNED_DIR).exists());
}
