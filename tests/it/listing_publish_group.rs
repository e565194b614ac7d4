//! `listing publish` of a group file (`{"inventoryItemGroup": …, "variants": […]}`) end to
//! end against the fake marketplace over loopback: the 20-variant graphics-card group
//! (tests/fixtures/listings/graphics-cards-group.json, EBAY_US 27386) goes out as one listing
//! with one offer per variant, and a rerun gives the same listing; the command killed with
//! SIGKILL while each kind of call of publish_group is under way (getInventoryItemGroup,
//! bulkCreateOrReplaceInventoryItem, getOffers, bulkCreateOffer,
//! createOrReplaceInventoryItemGroup, publishOfferByInventoryItemGroup) and run again still
//! gives one group, one listing and one offer per variant; a group the check refuses sends
//! nothing; two group files of a run sharing a variant SKU under two keys are both refused.
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use fake_marketplace::{FakeMarketplace, Fault, FaultRule};
use marketplace_listing::GroupListing;
use marketplaces::Marketplace;
use serde_json::{Value, json};

use crate::common;
use crate::inventory_support::inventory;
use crate::listing_cli::{consented_store, listing, run};
use crate::listing_groups::snapshots_with_graphics_cards;

const V1: &str = "/sell/inventory/v1";
const KEY: &str = "GPU-RADEON-6450";

fn group_file() -> PathBuf {
    common::snapshots_dir()
        .parent()
        .unwrap()
        .join("tests/fixtures/listings/graphics-cards-group.json")
}

/// A seller's home on `fake`: its consent stored, and the snapshots directory with 27386's
/// rules pinned. (home, store, snapshots).
fn seller(fake: &FakeMarketplace) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(fake, &store, "seller-1");
    let snapshots = home.path().join("snapshots");
    snapshots_with_graphics_cards(&snapshots);
    (home, store, snapshots)
}

fn publish_command(
    fake: &FakeMarketplace,
    home: &Path,
    store: &Path,
    snapshots: &Path,
    file: &Path,
) -> std::process::Command {
    let mut cmd = listing(fake, home);
    cmd.args(["publish", "--dir"])
        .arg(snapshots)
        .args(["--account", "seller-1", "--store"])
        .arg(store)
        .arg(file);
    cmd
}

/// The listing id `publish` printed for `file`.
fn printed_listing(stdout: &str, file: &Path) -> String {
    let prefix = format!("{}: listing ", file.display());
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no listing line for {}: {stdout}", file.display()));
    let id = line[prefix.len()..].split_whitespace().next().unwrap();
    assert!(
        line.contains(&format!("(group {KEY}, 20 variants)")),
        "{line}"
    );
    id.to_owned()
}

/// eBay (the fake) holds one group `KEY` of the file's 20 SKUs, and each variant has exactly
/// one offer on EBAY_US, published under one and the same listing id, which it returns.
fn one_listing_of_20_offers(fake: &FakeMarketplace) -> String {
    let file: GroupListing = serde_json::from_slice(&std::fs::read(group_file()).unwrap()).unwrap();
    let inventory = inventory(fake);
    let held = inventory
        .get_inventory_item_group(KEY)
        .unwrap()
        .expect("the group is held");
    let skus: Vec<String> = file.variants.iter().map(|v| v.offer.sku.clone()).collect();
    assert_eq!(held.variant_skus, skus);
    let mut listing_ids = Vec::new();
    for sku in &skus {
        let offers = inventory.get_offers(sku, Marketplace::Us).unwrap();
        assert_eq!(offers.len(), 1, "{sku}: {offers:?}");
        assert_eq!(offers[0].status.as_deref(), Some("PUBLISHED"), "{sku}");
        listing_ids.push(offers[0].listing.as_ref().unwrap().listing_id.clone());
    }
    listing_ids.dedup();
    assert_eq!(listing_ids.len(), 1, "one listing: {listing_ids:?}");
    listing_ids.pop().unwrap().unwrap_or_default()
}

#[test]
fn a_20_variant_group_file_is_published_by_listing_publish_as_one_listing_and_a_rerun_gives_it_again()
 {
    let fake = FakeMarketplace::new();
    let (home, store, snapshots) = seller(&fake);
    let file = group_file();
    let (output, stdout, stderr) = run(&mut publish_command(
        &fake,
        home.path(),
        &store,
        &snapshots,
        &file,
    ));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let listing_id = printed_listing(&stdout, &file);
    assert_eq!(one_listing_of_20_offers(&fake), listing_id);
    assert!(
        stderr.contains("1 listing file(s): 1 published"),
        "{stderr}"
    );

    let (output, again, stderr) = run(&mut publish_command(
        &fake,
        home.path(),
        &store,
        &snapshots,
        &file,
    ));
    assert!(output.status.success(), "{again}\n{stderr}");
    assert_eq!(printed_listing(&again, &file), listing_id);
    assert_eq!(one_listing_of_20_offers(&fake), listing_id);
    let creates = fake
        .requests_to(&format!("{V1}/bulk_create_offer"))
        .iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(creates, 1, "the offers are created once");
}

#[test]
fn listing_publish_killed_during_each_group_call_and_run_again_gives_one_listing_with_one_offer_per_variant()
 {
    // One kind of each call publish_group makes, in its order; each step on a fake of its own,
    // so that the kill interrupts the first publish of the group.
    let steps = [
        ("GET", format!("{V1}/inventory_item_group/{KEY}")),
        (
            "POST",
            format!("{V1}/bulk_create_or_replace_inventory_item"),
        ),
        ("GET", format!("{V1}/offer")),
        ("POST", format!("{V1}/bulk_create_offer")),
        ("PUT", format!("{V1}/inventory_item_group/{KEY}")),
        (
            "POST",
            format!("{V1}/offer/publish_by_inventory_item_group"),
        ),
    ];
    let file = group_file();
    for (method, path) in steps {
        let fake = FakeMarketplace::new();
        let (home, store, snapshots) = seller(&fake);
        fake.inject(FaultRule {
            method: Some(method.into()),
            path: Some(path.clone()),
            times: Some(1),
            fault: Fault::Delay(Duration::from_secs(2)),
        });
        let child = publish_command(&fake, home.path(), &store, &snapshots, &file)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The call the command was killed in finishes on the fake's side (as eBay's would).
        common::kill_during_call(&fake, child, (method, &path), 0, "listing publish");

        let (output, stdout, stderr) = run(&mut publish_command(
            &fake,
            home.path(),
            &store,
            &snapshots,
            &file,
        ));
        assert!(
            output.status.success(),
            "{method} {path}: {stdout}\n{stderr}"
        );
        let listing_id = printed_listing(&stdout, &file);
        assert_eq!(
            one_listing_of_20_offers(&fake),
            listing_id,
            "{method} {path}"
        );
    }
}

#[test]
fn listing_publish_sends_no_write_for_a_group_file_the_check_refuses() {
    let fake = FakeMarketplace::new();
    let (home, store, snapshots) = seller(&fake);
    let mut group: Value = serde_json::from_slice(&std::fs::read(group_file()).unwrap()).unwrap();
    group["inventoryItemGroup"]["variesBy"]["specifications"][1]["name"] = json!("Brand");
    let file = home.path().join("gpu.json");
    std::fs::write(&file, group.to_string()).unwrap();
    let (output, stdout, stderr) = run(&mut publish_command(
        &fake,
        home.path(),
        &store,
        &snapshots,
        &file,
    ));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!(
            "{}: inventoryItemGroup.variesBy.specifications[1].name: Brand is not allowed as a variation specific",
            file.display()
        )),
        "{stdout}"
    );
    assert!(stderr.contains("1 refused"), "{stderr}");
    let writes: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| r.path.starts_with(V1) && r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
}

#[test]
fn listing_publish_refuses_two_group_files_of_one_run_that_share_a_variant_sku_and_sends_no_write()
{
    // A copy of the group file under another key (a new series whose SKUs were not renamed):
    // publishing both would rewrite the first group's items for the second one before eBay
    // refuses the second createOrReplaceInventoryItemGroup.
    let fake = FakeMarketplace::new();
    let (home, store, snapshots) = seller(&fake);
    let first = home.path().join("gpu.json");
    std::fs::copy(group_file(), &first).unwrap();
    let mut copy: Value = serde_json::from_slice(&std::fs::read(group_file()).unwrap()).unwrap();
    copy["inventoryItemGroup"]["inventoryItemGroupKey"] = json!("GPU-RADEON-6450-LP");
    copy["inventoryItemGroup"]["title"] = json!("Radeon HD 6450 low profile");
    let second = home.path().join("gpu-lp.json");
    std::fs::write(&second, copy.to_string()).unwrap();
    let sku = copy["variants"][0]["offer"]["sku"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut cmd = publish_command(&fake, home.path(), &store, &snapshots, &first);
    let (output, stdout, stderr) = run(cmd.arg(&second));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    for (file, other, other_key) in [
        (&first, &second, "GPU-RADEON-6450-LP"),
        (&second, &first, KEY),
    ] {
        assert!(
            stdout.contains(&format!(
                "{}: variants[0].offer.sku: SKU {sku} is also a variant of group {other_key} in {} (a SKU is a variant of one group)",
                file.display(),
                other.display()
            )),
            "{stdout}"
        );
    }
    let writes: Vec<String> = fake
        .requests()
        .iter()
        .filter(|r| r.path.starts_with(V1) && r.method != "GET")
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(writes.is_empty(), "{writes:?}");

    // One group file named twice is one group: published.
    let mut cmd = publish_command(&fake, home.path(), &store, &snapshots, &first);
    let (output, stdout, stderr) = run(cmd.arg(&first));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        one_listing_of_20_offers(&fake),
        printed_listing(&stdout, &first)
    );
}
