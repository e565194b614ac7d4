//! Trading cards between Rust code and the `listing` command: a card made with
//! `ListingBuilder` is written as a listing file (`serde_json::to_string`) that `listing check`
//! passes through the real binary, against the compiled-in rules and against a snapshots
//! directory whose condition policy of 183454 (CCG Individual Cards) is the fake marketplace's
//! getItemConditionPolicies answer; the committed card fixture reads into the same `Listing`
//! and writes back as it was; a card whose descriptors that policy does not take is refused,
//! naming each field.

use crate::common;
use crate::taxonomy_support as support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fake_marketplace::FakeMarketplace;
use marketplace_listing::{CardCondition, Grade, Grader, Listing, ListingBuilder};
use marketplaces::Marketplace;
use taxonomy_macros::{aspects, category};

/// The graded card of `tests/fixtures/listings/graded-card.json`, built in Rust.
fn graded_charizard() -> ListingBuilder<impl Sized> {
    ListingBuilder::new(
        "CHARIZARD-PSA10",
        category!(EBAY_US, "183454"),
        aspects!(EBAY_US, "183454", {
            "Game": "Pokémon TCG", "Card Name": "Charizard", "Set": "Base Set"
        }),
    )
    .title("Charizard Base Set 4/102 Holo PSA 10")
    .description("Holo rare, 1999 Base Set, graded PSA 10.")
    .image("https://example.com/charizard-front.jpg")
    .graded_card(Grader::Psa, Grade::Ten, "12345678")
    .quantity(1)
    .price("4999.00")
    .policies("f", "p", "r")
    .merchant_location_key("warehouse-1")
}

fn write_listing(dir: &Path, name: &str, listing: &Listing) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_string_pretty(listing).unwrap()).unwrap();
    path
}

/// `listing` run in `home` (no `./snapshots` there: without `--dir`, the compiled-in trees
/// and rules), with the fake's settings so that anything sent would reach the fake.
fn listing(fake: &FakeMarketplace, home: &Path) -> Command {
    let mut cmd = common::clean_command(env!("CARGO_BIN_EXE_listing"));
    cmd.current_dir(home)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret());
    cmd
}

fn run(cmd: &mut Command) -> (Output, String, String) {
    let output = cmd.output().unwrap();
    let (out, err) = common::output_text(&output);
    (output, out, err)
}

/// A snapshots directory for `listing --dir`: the committed US tree, the pinned rules of
/// 183454, and the condition policy of 183454 as the fake's getItemConditionPolicies answers
/// it (asked over HTTP, kept as `snapshot refresh` keeps it).
fn dir_with_the_fakes_card_policy(fake: &FakeMarketplace, dir: &Path) {
    use taxonomy_tree::conditions;
    let snapshot = dir.join("EBAY_US.json");
    std::fs::create_dir_all(dir.join("pinned")).unwrap();
    std::fs::copy(common::snapshots_dir().join("EBAY_US.json"), &snapshot).unwrap();
    std::fs::copy(
        common::snapshots_dir().join("pinned/EBAY_US-183454.json"),
        dir.join("pinned/EBAY_US-183454.json"),
    )
    .unwrap();
    let (client, _) = support::client(fake);
    let answer = client
        .item_condition_policies(Marketplace::Us, &[183454])
        .unwrap();
    let (rules, unknown) = marketplace_client::trees::condition_rules(&answer);
    assert!(unknown.is_empty(), "{unknown:?}");
    assert_eq!(rules.len(), 1);
    let tree = taxonomy_tree::snapshot::read(&snapshot).unwrap();
    let path = conditions::path_beside(&snapshot);
    let (file, _) = conditions::from_answer(
        rules,
        &tree,
        "getItemConditionPolicies of the fake marketplace",
        true,
        &path,
    )
    .unwrap();
    std::fs::write(&path, conditions::to_string(&file)).unwrap();
}

#[test]
fn a_card_built_with_the_builder_and_written_as_a_file_passes_listing_check_and_reads_back_equal() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let graded = graded_charizard().build().unwrap();
    let mut ungraded = graded_charizard()
        .ungraded_card(CardCondition::VeryGood)
        .condition_description("Soft corners, light scratches on the holo.")
        .build()
        .unwrap();
    ungraded.offer.sku = "CHARIZARD-VG".into();
    let graded_file = write_listing(home.path(), "graded.json", &graded);
    let ungraded_file = write_listing(home.path(), "ungraded.json", &ungraded);
    // The committed fixture, a file a seller would write, is the same listing, and writes
    // back as it was.
    let fixture = common::root().join("tests/fixtures/listings/graded-card.json");
    let text = std::fs::read_to_string(&fixture).unwrap();
    let read: Listing = serde_json::from_str(&text).unwrap();
    assert_eq!(read, graded);
    assert_eq!(
        serde_json::to_value(&read).unwrap(),
        serde_json::from_str::<serde_json::Value>(&text).unwrap()
    );
    // Against the compiled-in trees and rules. The fixture is the graded card's listing
    // (its SKU): checked in a run of its own, as two files of one SKU in a run are refused.
    let runs = [vec![&graded_file, &ungraded_file], vec![&fixture]];
    for files in &runs {
        let (output, stdout, stderr) = run(listing(&fake, home.path()).arg("check").args(files));
        assert!(output.status.success(), "{stdout}\n{stderr}");
        for file in files {
            assert!(
                stdout.contains(&format!("{}: ok", file.display())),
                "{stdout}"
            );
        }
    }
    // Against a directory holding the fake's condition policy of 183454: the descriptors
    // are checked too, and pass.
    let dir = home.path().join("snapshots-with-policy");
    dir_with_the_fakes_card_policy(&fake, &dir);
    for files in &runs {
        let (output, stdout, stderr) = run(listing(&fake, home.path())
            .arg("--dir")
            .arg(&dir)
            .arg("check")
            .args(files));
        assert!(output.status.success(), "{stdout}\n{stderr}");
        for file in files {
            let line = format!("{}: ok", file.display());
            assert!(stdout.lines().any(|l| l == line), "{stdout}");
        }
        assert!(!stdout.contains("condition not checked"), "{stdout}");
    }
    // Only getItemConditionPolicies was asked (the check itself sends nothing).
    assert!(
        fake.requests()
            .iter()
            .all(|r| r.path.contains("get_item_condition_policies") || r.path.contains("oauth")),
        "{:?}",
        fake.requests()
    );
}

#[test]
fn a_card_whose_grade_and_certification_number_the_policy_does_not_take_is_refused_by_field() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("snapshots-with-policy");
    dir_with_the_fakes_card_policy(&fake, &dir);
    // The fake's 183454 lists grades 10 to 8 and a certification number of at most 30
    // characters.
    let card = graded_charizard()
        .graded_card(Grader::Psa, Grade::Seven, "1".repeat(31))
        .build()
        .unwrap();
    let file = write_listing(home.path(), "card.json", &card);
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .arg("--dir")
        .arg(&dir)
        .arg("check")
        .arg(&file));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("inventoryItem.conditionDescriptors[1].values[0]")
            && stdout.contains("275020 10"),
        "{stdout}"
    );
    assert!(
        stdout.contains("inventoryItem.conditionDescriptors[2].additionalInfo"),
        "{stdout}"
    );
}
