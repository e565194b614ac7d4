//! `listing check` over group files (`{"inventoryItemGroup": …, "variants": […]}`), alone and
//! in a directory mixed with single listings: every problem printed with its file and field,
//! against a snapshots directory holding the committed US tree and eBay's
//! getItemAspectsForCategory answer for Graphics/Video Cards (27386) pinned beside it.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use crate::common;

fn fixture(path: &str) -> PathBuf {
    common::snapshots_dir().parent().unwrap().join(path)
}

/// A snapshots directory: the committed US tree, and 27386's answer pinned as `snapshot
/// aspects pin` writes it.
pub(crate) fn snapshots_with_graphics_cards(dir: &Path) {
    std::fs::create_dir_all(dir.join("pinned")).unwrap();
    std::fs::copy(
        common::snapshots_dir().join("EBAY_US.json"),
        dir.join("EBAY_US.json"),
    )
    .unwrap();
    let tree: Value =
        serde_json::from_slice(&std::fs::read(dir.join("EBAY_US.json")).unwrap()).unwrap();
    let answer: Value = serde_json::from_slice(
        &std::fs::read(fixture(
            "tests/fixtures/aspects/ebay-us-27386-graphics-cards.json",
        ))
        .unwrap(),
    )
    .unwrap();
    let pinned = json!({
        "format": 1,
        "marketplaceId": "EBAY_US",
        "categoryTreeId": 0,
        "categoryTreeVersion": tree["categoryTreeVersion"],
        "categoryId": 27386,
        "takenAt": "2023-11-22",
        "source": "getItemAspectsForCategory",
        "answer": answer
    });
    std::fs::write(
        dir.join("pinned/EBAY_US-27386.json"),
        serde_json::to_string_pretty(&pinned).unwrap(),
    )
    .unwrap();
}

fn group() -> Value {
    serde_json::from_slice(
        &std::fs::read(fixture("tests/fixtures/listings/graphics-cards-group.json")).unwrap(),
    )
    .unwrap()
}

/// `listing check --dir SNAPSHOTS FILE…`: exit status, standard output.
fn check(snapshots: &Path, files: &[&Path]) -> (bool, String) {
    let mut cmd: Command = common::clean_command(env!("CARGO_BIN_EXE_listing"));
    cmd.arg("check").arg("--dir").arg(snapshots).args(files);
    let output = cmd.output().unwrap();
    let (out, err) = common::output_text(&output);
    assert!(!err.contains("panicked"), "{err}");
    (output.status.success(), out)
}

#[test]
fn listing_check_passes_a_good_group_file_beside_a_single_listing() {
    let tmp = tempfile::tempdir().unwrap();
    let snapshots = tmp.path().join("snapshots");
    snapshots_with_graphics_cards(&snapshots);
    let files = tmp.path().join("listings");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::copy(
        fixture("tests/fixtures/listings/graphics-cards-group.json"),
        files.join("a-group.json"),
    )
    .unwrap();
    let mut single = group()["variants"][0].clone();
    single["offer"]["sku"] = json!("GPU-ALONE");
    single["inventoryItem"]["product"] = json!({
        "title": "AMD Radeon HD 6450, 4 GB",
        "description": "A new graphics card.",
        "aspects": {"Brand": ["Acme"], "Chipset Manufacturer": ["AMD"], "Chipset/GPU Model": ["AMD Radeon HD 6450"]},
        "imageUrls": ["https://example.com/alone.jpg"]
    });
    std::fs::write(files.join("b-single.json"), single.to_string()).unwrap();
    let (ok, out) = check(&snapshots, &[&files]);
    assert!(ok, "{out}");
    assert!(out.contains("a-group.json: ok"), "{out}");
    assert!(out.contains("b-single.json: ok"), "{out}");
}

#[test]
fn listing_check_names_a_group_files_problems_by_file_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    let snapshots = tmp.path().join("snapshots");
    snapshots_with_graphics_cards(&snapshots);
    let mut g = group();
    g["inventoryItemGroup"]["variesBy"]["specifications"][1]["name"] = json!("Brand");
    g["variants"][3]["inventoryItem"]["product"]["aspects"]["Memory Size"] = json!(["24 GB"]);
    let file = tmp.path().join("gpu.json");
    std::fs::write(&file, g.to_string()).unwrap();
    let (ok, out) = check(&snapshots, &[&file]);
    assert!(!ok, "{out}");
    let name = file.display();
    assert!(
        out.contains(&format!(
            "{name}: inventoryItemGroup.variesBy.specifications[1].name: Brand is not allowed as a variation specific"
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "{name}: variants[3].inventoryItem.product.aspects[\"Memory Size\"]: not one of the axis's values"
        )),
        "{out}"
    );
}

#[test]
fn listing_check_refuses_a_variant_sku_also_listed_alone_in_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let snapshots = tmp.path().join("snapshots");
    snapshots_with_graphics_cards(&snapshots);
    let group_file = fixture("tests/fixtures/listings/graphics-cards-group.json");
    let mut single = group()["variants"][0].clone();
    single["inventoryItem"]["product"]["title"] = json!("A graphics card");
    single["inventoryItem"]["product"]["description"] = json!("A new graphics card.");
    let single_file = tmp.path().join("single.json");
    std::fs::write(&single_file, single.to_string()).unwrap();
    let (ok, out) = check(&snapshots, &[&group_file, &single_file]);
    assert!(!ok, "{out}");
    assert!(
        out.contains(&format!(
            "{}: variants[0].offer.sku: this SKU is also a single-SKU listing of this run",
            group_file.display()
        )),
        "{out}"
    );
}

#[test]
fn listing_check_refuses_two_group_files_of_the_run_that_share_a_variant_sku_under_two_keys() {
    // As `listing publish` refuses them: a copy of the group file under another key whose
    // SKUs were not renamed. One file named twice is one group: ok.
    let tmp = tempfile::tempdir().unwrap();
    let snapshots = tmp.path().join("snapshots");
    snapshots_with_graphics_cards(&snapshots);
    let first = fixture("tests/fixtures/listings/graphics-cards-group.json");
    let mut copy = group();
    copy["inventoryItemGroup"]["inventoryItemGroupKey"] = json!("GPU-RADEON-6450-LP");
    let second = tmp.path().join("gpu-lp.json");
    std::fs::write(&second, copy.to_string()).unwrap();
    let sku = copy["variants"][0]["offer"]["sku"]
        .as_str()
        .unwrap()
        .to_owned();
    let (ok, out) = check(&snapshots, &[&first, &second]);
    assert!(!ok, "{out}");
    for (file, other, other_key) in [
        (&first, &second, "GPU-RADEON-6450-LP"),
        (&second, &first, "GPU-RADEON-6450"),
    ] {
        assert!(
            out.contains(&format!(
                "{}: variants[0].offer.sku: SKU {sku} is also a variant of group {other_key} in {} (a SKU is a variant of one group)",
                file.display(),
                other.display()
            )),
            "{out}"
        );
    }
    let (ok, out) = check(&snapshots, &[&first, &first]);
    assert!(ok, "{out}");
}
