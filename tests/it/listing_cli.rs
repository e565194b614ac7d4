//! The `listing` command end to end: `check` names every problem of every file by its field
//! and sends nothing (the fake's request log stays empty); `publish` publishes with the user
//! token of an account `consent` stored, and a rerun gives the same listing and no second offer.

use crate::common;
use crate::oauth_support as support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use fake_marketplace::FakeMarketplace;
use marketplace_client::oauth::{FileStore, ScopeSet, UserTokenProvider};
use support::*;

const GOOD: &str = r#"{
  "inventoryItem": {
    "product": {
      "title": "Dell OptiPlex 7010",
      "description": "A Dell OptiPlex 7010 desktop, tested and working.",
      "aspects": {"Brand": ["Dell"], "Type": ["Desktop"], "MPN": ["7010"]},
      "imageUrls": ["https://example.com/1.jpg"]
    },
    "condition": "USED_EXCELLENT",
    "availability": {"shipToLocationAvailability": {"quantity": 3}}
  },
  "offer": {
    "sku": "DESKTOP-1", "marketplaceId": "EBAY_US", "format": "FIXED_PRICE",
    "categoryId": "179", "availableQuantity": 3,
    "pricingSummary": {"price": {"value": "149.00", "currency": "USD"}},
    "listingPolicies": {"fulfillmentPolicyId": "f", "paymentPolicyId": "p", "returnPolicyId": "r"},
    "merchantLocationKey": "warehouse-1"
  }
}"#;

/// Wrong in many fields at once: the SKU, a picture, the condition, the price and its
/// currency, the policies, the location, and a category with children.
const BAD: &str = r#"{
  "inventoryItem": {
    "product": {"title": "Dell", "aspects": {"Type": ["Desktop"]}, "imageUrls": ["http://x/a.jpg"]}
  },
  "offer": {
    "sku": "BAD SKU", "marketplaceId": "EBAY_US", "categoryId": "58058",
    "pricingSummary": {"price": {"value": "0", "currency": "EUR"}}
  }
}"#;

/// In a category the build has rules for (179), but without its required `Brand`.
const NO_BRAND: &str = r#"{
  "inventoryItem": {
    "product": {"title": "Desktop", "description": "A desktop.", "aspects": {"Type": ["Desktop"], "MPN": ["7010"]},
      "imageUrls": ["https://example.com/1.jpg"]},
    "condition": "NEW",
    "availability": {"shipToLocationAvailability": {"quantity": 1}}
  },
  "offer": {
    "sku": "NO-BRAND", "marketplaceId": "EBAY_US", "categoryId": "179",
    "pricingSummary": {"price": {"value": "10.00", "currency": "USD"}},
    "listingPolicies": {"fulfillmentPolicyId": "f", "paymentPolicyId": "p", "returnPolicyId": "r"},
    "merchantLocationKey": "warehouse-1"
  }
}"#;

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// `listing` with the fake's settings (so that anything it sent would reach the fake).
pub(crate) fn listing(fake: &FakeMarketplace, home: &Path) -> Command {
    let mut cmd = common::clean_command(env!("CARGO_BIN_EXE_listing"));
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret());
    cmd
}

pub(crate) fn run(cmd: &mut Command) -> (Output, String, String) {
    let output = cmd.output().unwrap();
    let (out, err) = common::output_text(&output);
    (output, out, err)
}

/// A refresh-token file with `account`'s consent on the fake, as `consent` leaves it: the
/// consent page visited, the code exchanged, the token stored.
pub(crate) fn consented_store(fake: &FakeMarketplace, path: &Path, account: &str) -> String {
    consented_store_with(fake, path, account, &["/sell.inventory"])
}

/// [`consented_store`] with a consent to `scopes` (suffixes of `{base_url}/oauth/api_scope`).
fn consented_store_with(
    fake: &FakeMarketplace,
    path: &Path,
    account: &str,
    scopes: &[&str],
) -> String {
    let token = consented_store_without_location(fake, path, account, scopes);
    // The location the listings of these tests ship from (GOOD's merchantLocationKey).
    fake.add_inventory_location("warehouse-1");
    token
}

/// [`consented_store_with`] for a seller with no inventory location yet (as the fake starts).
fn consented_store_without_location(
    fake: &FakeMarketplace,
    path: &Path,
    account: &str,
    scopes: &[&str],
) -> String {
    let client = Arc::new(client(fake));
    let request = client
        .consent_request(&ScopeSet::new(scopes.iter().map(|s| fake.scope(s))))
        .unwrap();
    let code = request.complete(&consent_redirect(fake, &request)).unwrap();
    let store = Arc::new(FileStore::new(path.to_path_buf()));
    UserTokenProvider::new(client, store, account)
        .exchange_code(&code, request.scopes())
        .unwrap();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    json["accounts"][account]["refresh_token"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn listing_check_names_every_problem_of_each_file_by_field_and_sends_nothing() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let good = write(home.path(), "good.json", GOOD);
    let bad = write(home.path(), "bad.json", BAD);
    let no_brand = write(home.path(), "no-brand.json", NO_BRAND);
    let broken = write(home.path(), "broken.json", r#"{"offer": 3}"#);
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .arg("check")
        .args([&good, &bad, &no_brand, &broken]));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    let good = good.display().to_string();
    let bad = bad.display().to_string();
    let no_brand = no_brand.display().to_string();
    let broken = broken.display().to_string();
    assert!(stdout.contains(&format!("{good}: ok")), "{stdout}");
    for field in [
        "offer.sku",
        "inventoryItem.product.imageUrls[0]",
        "inventoryItem.condition",
        "offer.pricingSummary.price.value",
        "offer.pricingSummary.price.currency",
        "offer.listingPolicies.fulfillmentPolicyId",
        "offer.listingPolicies.paymentPolicyId",
        "offer.listingPolicies.returnPolicyId",
        "offer.merchantLocationKey",
        "offer.categoryId",
    ] {
        assert!(
            stdout.contains(&format!("{bad}: {field}: ")),
            "{field} of {bad}:\n{stdout}"
        );
    }
    assert!(
        stdout.contains(&format!(
            "{no_brand}: inventoryItem.product.aspects[\"Brand\"]: "
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("{broken}: not a listing file")),
        "{stdout}"
    );
    assert!(
        stderr.contains("3 of 4 listing file(s) have problems"),
        "{stderr}"
    );
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

#[test]
fn listing_check_with_dir_checks_against_that_directorys_rules() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let good = write(home.path(), "good.json", GOOD);
    // The committed trees without the pinned rules: category 179 has none to check against.
    let snapshots = common::copy_of_snapshots();
    assert!(!snapshots.path().join("pinned").exists());
    let (output, stdout, _) = run(listing(&fake, home.path())
        .arg("--dir")
        .arg(snapshots.path())
        .arg("check")
        .arg(&good));
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("inventoryItem.product.aspects: no aspect rules"),
        "{stdout}"
    );
    // With them, as compiled in: no problem.
    let (output, stdout, _) = run(listing(&fake, home.path())
        .args(["--dir", &common::snapshots_dir().display().to_string()])
        .arg("check")
        .arg(&good));
    assert!(output.status.success(), "{stdout}");
    assert!(fake.requests().is_empty());
}

/// A seller's shop directory: `./snapshots` holding the committed trees and their pins of
/// 179 and of 111418 ("Apple Desktops & All-In-Ones", not pinned in this build); a listing of
/// 111418 in `listing.json`.
fn shop_with_pinned_111418() -> (tempfile::TempDir, PathBuf) {
    let shop = tempfile::tempdir().unwrap();
    let snapshots = shop.path().join("snapshots");
    std::fs::create_dir_all(snapshots.join("pinned")).unwrap();
    for site in common::snapshot_sites() {
        let name = site.snapshot_file_name();
        std::fs::copy(common::snapshots_dir().join(name), snapshots.join(name)).unwrap();
    }
    let pinned = std::fs::read_to_string(common::snapshots_dir().join("pinned/EBAY_US-179.json"))
        .unwrap()
        .replacen("\"categoryId\": 179,", "\"categoryId\": 111418,", 1);
    std::fs::write(snapshots.join("pinned/EBAY_US-111418.json"), pinned).unwrap();
    let listing = write(
        shop.path(),
        "listing.json",
        &GOOD.replace("\"categoryId\": \"179\"", "\"categoryId\": \"111418\""),
    );
    (shop, listing)
}

/// Without --dir, `listing` reads the seller's snapshots as `snapshot` does (./snapshots,
/// else TAXONOMY_SNAPSHOTS_DIR) and says which: a category the seller pinned passes there,
/// while the compiled-in rules know nothing of it.
#[test]
fn listing_check_without_dir_reads_the_sellers_snapshots_as_snapshot_does() {
    let fake = FakeMarketplace::new();
    let (shop, file) = shop_with_pinned_111418();
    let snapshots = std::path::absolute(shop.path().join("snapshots")).unwrap();
    let (output, stdout, stderr) = run(listing(&fake, shop.path())
        .current_dir(shop.path())
        .arg("check")
        .arg(&file));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "snapshots: {} (from the default, ./snapshots)",
            snapshots.display()
        )),
        "{stderr}"
    );
    // Run from elsewhere, TAXONOMY_SNAPSHOTS_DIR names it.
    let elsewhere = tempfile::tempdir().unwrap();
    let (output, stdout, stderr) = run(listing(&fake, shop.path())
        .current_dir(elsewhere.path())
        .env("TAXONOMY_SNAPSHOTS_DIR", &snapshots)
        .arg("check")
        .arg(&file));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "snapshots: {} (from TAXONOMY_SNAPSHOTS_DIR)",
            snapshots.display()
        )),
        "{stderr}"
    );
    assert!(fake.requests().is_empty());
}

/// A category without pinned rules: the hint names the snapshots directory looked in and the
/// exact `snapshot aspects pin` command, the listing's site and category filled in.
#[test]
fn the_no_aspect_rules_hint_names_the_directory_and_the_pin_command_of_the_listing() {
    let fake = FakeMarketplace::new();
    let (shop, _) = shop_with_pinned_111418();
    let snapshots = std::path::absolute(shop.path().join("snapshots")).unwrap();
    let file = write(
        shop.path(),
        "laptop.json",
        &GOOD.replace("\"categoryId\": \"179\"", "\"categoryId\": \"177\""),
    );
    let (output, stdout, stderr) = run(listing(&fake, shop.path())
        .current_dir(shop.path())
        .arg("check")
        .arg(&file));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    let dir = snapshots.display();
    assert!(
        stdout.contains(&format!(
            "no aspect rules of EBAY_US 177 are pinned in {dir}/pinned (pin them: `snapshot --dir {dir} aspects pin --site EBAY_US --category 177`)"
        )),
        "{stdout}"
    );
}

#[test]
fn listing_publish_with_a_consented_account_gives_a_listing_id_and_a_rerun_the_same_one() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    let refresh_token = consented_store(&fake, &store, "seller-1");
    let good = write(home.path(), "good.json", GOOD);
    let publish = || {
        run(listing(&fake, home.path())
            .args(["publish", "--account", "seller-1", "--store"])
            .arg(&store)
            .arg(&good))
    };
    let (output, first, stderr) = publish();
    assert!(output.status.success(), "{first}\n{stderr}");
    let listing_id = first
        .split_once(": listing ")
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no listing id in {first:?}"))
        .to_owned();
    assert!(!listing_id.is_empty());

    // Rerun: the same listing, and createOffer was sent once.
    let (output, again, stderr2) = publish();
    assert!(output.status.success(), "{again}\n{stderr2}");
    assert_eq!(
        again.trim_end(),
        format!(
            "{}, unchanged: live as the file has it, nothing written",
            first.trim_end()
        )
    );
    let creates = fake
        .requests_to("/sell/inventory/v1/bulk_create_offer")
        .iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(creates, 1, "one bulkCreateOffer");

    // The seller's inventory (the user token's), and no token printed.
    let bearers: Vec<String> = fake
        .requests()
        .iter()
        .filter_map(|r| r.header("authorization").map(str::to_owned))
        .filter_map(|h| h.strip_prefix("Bearer ").map(str::to_owned))
        .collect();
    assert!(!bearers.is_empty());
    for token in bearers.iter().chain([&refresh_token]) {
        for text in [&first, &stderr, &again, &stderr2] {
            assert!(!text.contains(token.as_str()), "a token printed: {text}");
        }
    }
    let token = fake.issued_token(&bearers[0]).unwrap();
    assert!(token.token_type.starts_with("User"), "{token:?}");
}

#[test]
fn listing_publish_sends_nothing_for_a_file_the_check_refuses() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    fake.clear_requests();
    let bad = write(home.path(), "bad.json", BAD);
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .arg(&bad));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("offer.merchantLocationKey"), "{stdout}");
    assert!(
        stderr.contains("1 of 1 listing file(s) not published"),
        "{stderr}"
    );
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

/// `listing check` reads a regular file of at most 4 MiB only: a named pipe (which would block
/// the read for ever) and an oversized file (which would be read whole into memory) are each
/// refused at once, naming the file, and the other files are checked all the same.
#[test]
fn listing_check_refuses_a_pipe_and_an_oversized_file_without_reading_them() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let good = write(home.path(), "good.json", GOOD);
    let pipe = home.path().join("pipe.json");
    let made = Command::new("mkfifo").arg(&pipe).status().unwrap();
    assert!(made.success());
    let huge = home.path().join("huge.json");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(5 * 1024 * 1024)
        .unwrap();
    let mut child = listing(&fake, home.path())
        .arg("check")
        .args([&pipe, &huge, &good])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("listing check blocked on a named pipe");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    let (out, err) = common::output_text(&output);
    assert_eq!(output.status.code(), Some(1), "{out}\n{err}");
    let text = format!("{out}{err}");
    assert!(
        text.contains("pipe.json") && text.contains("is not a regular file"),
        "{text}"
    );
    assert!(
        text.contains("huge.json") && text.contains("over the 4194304 bytes"),
        "{text}"
    );
    assert!(text.contains("good.json: ok"), "{text}");
    assert!(fake.requests().is_empty(), "check sent a request");
}

/// A file switched from FIXED_PRICE to AUCTION while its fixed-price listing is live: refused by
/// default, naming the live offer, nothing sent after getOffers; `--other-format withdraw` ends
/// the fixed-price listing first.
#[test]
fn listing_publish_of_a_file_switched_to_auction_is_refused_unless_told_to_withdraw() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    let fixed = write(home.path(), "fixed.json", GOOD);
    let mut switched: serde_json::Value = serde_json::from_str(GOOD).unwrap();
    switched["offer"]["format"] = serde_json::json!("AUCTION");
    switched["offer"]["listingDuration"] = serde_json::json!("DAYS_7");
    let switched = write(home.path(), "switched.json", &switched.to_string());
    let publish = |file: &std::path::Path, flags: &[&str]| {
        run(listing(&fake, home.path())
            .args(["publish", "--account", "seller-1", "--store"])
            .arg(&store)
            .args(flags)
            .arg(file))
    };
    let (output, first, stderr) = publish(&fixed, &[]);
    assert!(output.status.success(), "{first}\n{stderr}");
    fake.clear_requests();
    let (output, stdout, stderr) = publish(&switched, &[]);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("is live on EBAY_US as FIXED_PRICE") && stderr.contains("--other-format"),
        "{stderr}"
    );
    let changed: Vec<_> = fake
        .requests()
        .iter()
        .filter(|r| r.path.starts_with("/sell/"))
        .map(|r| format!("{} {}", r.method, r.path))
        .filter(|r| is_write(r))
        .collect();
    assert!(changed.is_empty(), "{changed:?}");
    let (output, stdout, stderr) = publish(&switched, &["--other-format", "withdraw"]);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let withdrawn = fake
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/withdraw"))
        .count();
    assert_eq!(withdrawn, 1, "the fixed-price listing withdrawn");
}

/// `GOOD` under another SKU.
fn good_with_sku(sku: &str) -> String {
    GOOD.replace("\"DESKTOP-1\"", &format!("{sku:?}"))
}

/// `listing publish` reads, checks and publishes one chunk of 25 files (a bulk call's worth)
/// before it reads the next (so that it holds one chunk's listings at a time, not every
/// file's): the first chunk's bulkGetInventoryItem writes the 26th file, which did not exist when the run
/// started, and the run publishes it. A run that read every file before publishing the first
/// found it missing.
#[test]
fn listing_publish_publishes_each_chunk_of_25_files_before_reading_the_next() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    let mut files: Vec<PathBuf> = (0..25)
        .map(|i| {
            write(
                home.path(),
                &format!("sku-{i:02}.json"),
                &good_with_sku(&format!("SKU-{i:02}")),
            )
        })
        .collect();
    let last = home.path().join("last.json");
    let (written, text) = (last.clone(), good_with_sku("LAST-1"));
    // bulkGetInventoryItem as the fake answers SKUs it does not have (every SKU here), once
    // the last file is written.
    fake.route(
        "POST",
        "/sell/inventory/v1/bulk_get_inventory_item",
        move |request, _| {
            if !written.exists() {
                let _ = std::fs::write(&written, &text);
            }
            let body: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
            let responses: Vec<serde_json::Value> = body["requests"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| {
                    serde_json::json!({"sku": r["sku"], "statusCode": 404,
                    "errors": [{"errorId": 25702, "domain": "API_INVENTORY",
                        "category": "REQUEST", "message": "SKU is not available in the system"}]})
                })
                .collect();
            fake_marketplace::Response::json(207, &serde_json::json!({"responses": responses}))
        },
    );
    files.push(last);
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .args(&files));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for file in &files {
        assert!(
            stdout.contains(&format!("{}: listing ", file.display())),
            "{}:\n{stdout}\n{stderr}",
            file.display()
        );
    }
}

/// `n` files of `GOOD` under SKUs SKU-00, SKU-01, … in `dir`.
fn good_files(dir: &Path, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            write(
                dir,
                &format!("sku-{i:02}.json"),
                &good_with_sku(&format!("SKU-{i:02}")),
            )
        })
        .collect()
}

/// Whether a request (as [`sell_requests`] gives it) writes: not a GET, and not
/// bulkGetInventoryItem (a read sent as a POST).
fn is_write(request: &str) -> bool {
    !request.starts_with("GET ") && !request.ends_with("/bulk_get_inventory_item")
}

/// The requests the fake saw below /sell/, as `METHOD path?query`.
fn sell_requests(fake: &FakeMarketplace) -> Vec<String> {
    fake.requests()
        .iter()
        .filter(|r| r.path.starts_with("/sell/"))
        .map(|r| match &r.query {
            Some(query) => format!("{} {}?{query}", r.method, r.path),
            None => format!("{} {}", r.method, r.path),
        })
        .collect()
}

/// During an outage `listing publish` stops at the first chunk in which no file was published
/// and the failure concerns every file, instead of trying every file (each costing the
/// client's and publish's retries): of 60 files, the fake sees the first chunk's
/// its bulkGetInventoryItem and bulkCreateOrReplaceInventoryItem only; the error is printed once, and the run says
/// how many files were not tried, from which, and that rerunning is safe.
#[test]
fn listing_publish_stops_at_a_chunk_that_fails_with_a_server_error_and_prints_it_once() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    fake.clear_requests();
    let files = good_files(home.path(), 60);
    // Every bulkCreateOrReplaceInventoryItem answered eBay's system error, HTTP 503.
    fake.inject(fake_marketplace::FaultRule {
        method: Some("POST".into()),
        path: Some("/sell/inventory/v1/bulk_create_or_replace_inventory_item".into()),
        times: None,
        fault: fake_marketplace::Fault::Status {
            status: 503,
            body: serde_json::json!({"errors": [{"errorId": 25001, "domain": "API_INVENTORY",
                "category": "APPLICATION", "message": "A system error has occurred."}]})
            .to_string(),
            headers: vec![
                ("Content-Type".into(), "application/json".into()),
                ("Retry-After".into(), "0".into()),
            ],
        },
    });
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .args(&files));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    let asked: std::collections::BTreeSet<String> = sell_requests(&fake).into_iter().collect();
    // bulkGetInventoryItem: none of the 25 SKUs is in the inventory, so no getOffers. Before
    // it, once for the run, the seller's locations and policies (refused: no sell.account).
    let expected: std::collections::BTreeSet<String> = [
        "GET /sell/inventory/v1/location?limit=100&offset=0",
        "GET /sell/account/v1/fulfillment_policy?marketplace_id=EBAY_US",
        "POST /sell/inventory/v1/bulk_get_inventory_item",
        "POST /sell/inventory/v1/bulk_create_or_replace_inventory_item",
    ]
    .map(str::to_owned)
    .into();
    assert_eq!(asked, expected, "{stderr}");
    assert_eq!(
        stderr.matches("A system error has occurred").count(),
        1,
        "the error printed once:\n{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "failing with a server error (HTTP 5xx) (above), which concerns every file; 35 listing file(s) not tried, from {} on",
            files[25].display()
        )) && stderr.contains("Rerun the same command")
            && stderr.contains("idempotent by SKU"),
        "{stderr}"
    );
}

/// A seller without consent on record, 30 files: an error that concerns every file is printed
/// once, before any file is read or anything sent, and the run stops saying to run `consent`.
#[test]
fn listing_publish_without_consent_says_so_once_and_stops() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    fake.clear_requests();
    let files = good_files(home.path(), 30);
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "nobody", "--store"])
        .arg(&store)
        .args(&files));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
    assert_eq!(
        stderr.matches("no consent is stored for account").count(),
        1,
        "{stderr}"
    );
    assert!(
        !stderr.contains("the same failure as") && !stdout.contains("sku-"),
        "no file was tried:\n{stdout}\n{stderr}"
    );
    assert!(stderr.contains("consent --account \"nobody\""), "{stderr}");
}

/// Refused before anything is sent (no consent stored), a `--report` still has a line a file
/// (`not_tried`) and the summary line, as a run stopped half-way has: a cron job reading it
/// learns that nothing was published, and why from standard error.
#[test]
fn a_run_refused_before_sending_still_writes_a_report_line_per_file_and_the_summary() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    fake.clear_requests();
    let files = good_files(home.path(), 3);
    let report = home.path().join("report.jsonl");
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "nobody", "--store"])
        .arg(&store)
        .arg("--report")
        .arg(&report)
        .args(&files));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
    let text = std::fs::read_to_string(&report).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "{text}");
    for (line, file) in lines.iter().zip(&files) {
        assert_eq!(line["status"], "not_tried", "{text}");
        assert_eq!(line["file"], file.display().to_string(), "{text}");
    }
    assert_eq!(lines[3]["summary"]["notTried"], 3, "{text}");
    assert!(stderr.contains("3 listing file(s)"), "{stderr}");
}

/// `listing publish` sends the bulk calls, 25 listings a call: 60 new files are 3
/// bulkCreateOrReplaceInventoryItem, 3 bulkCreateOffer and 3 bulkPublishOffer calls (and a
/// getOffers per SKU), never createOrReplaceInventoryItem, createOffer or publishOffer.
#[test]
fn listing_publish_of_60_new_files_sends_three_calls_of_each_bulk_call() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    fake.clear_requests();
    let files = good_files(home.path(), 60);
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .args(&files));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stdout.matches(": listing ").count(), 60, "{stdout}");
    let asked = sell_requests(&fake);
    let count = |what: &str| asked.iter().filter(|r| r.as_str() == what).count();
    for call in [
        "bulk_create_or_replace_inventory_item",
        "bulk_create_offer",
        "bulk_publish_offer",
    ] {
        assert_eq!(
            count(&format!("POST /sell/inventory/v1/{call}")),
            3,
            "{call}: {asked:?}"
        );
    }
    let writes = asked.iter().filter(|r| is_write(r)).count();
    assert_eq!(writes, 9, "{asked:?}");
    // New SKUs: bulkGetInventoryItem says they are not in the inventory, so no getOffers.
    assert_eq!(
        count("POST /sell/inventory/v1/bulk_get_inventory_item"),
        3,
        "{asked:?}"
    );
    // And, once for the run, getInventoryLocations and getFulfillmentPolicies (refused: the
    // consent has no sell.account scope, so the policies go unchecked).
    assert_eq!(asked.len(), 14, "{asked:?}");
    assert!(
        stderr.contains("60 listing file(s): 60 published, 0 unchanged"),
        "{stderr}"
    );
}

/// A nightly rerun of 1,000 published files nobody changed sends no write (the bulk and
/// getOffers reads only) and gives the same listings; a file changed since is written again,
/// and only it.
#[test]
fn a_rerun_of_unchanged_published_files_sends_no_write() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    // A nightly run's size: 1,000 files (40 chunks of the bulk calls).
    let files = good_files(home.path(), 1000);
    let publish = || {
        run(listing(&fake, home.path())
            .args(["publish", "--account", "seller-1", "--store"])
            .arg(&store)
            .args(&files))
    };
    let (output, first, stderr) = publish();
    assert!(output.status.success(), "{first}\n{stderr}");
    fake.clear_requests();
    let (output, again, stderr) = publish();
    assert!(output.status.success(), "{again}\n{stderr}");
    // The same listings, each line saying it was left unchanged.
    let unchanged: Vec<String> = first
        .lines()
        .map(|l| format!("{l}, unchanged: live as the file has it, nothing written"))
        .collect();
    assert_eq!(again.lines().collect::<Vec<_>>(), unchanged);
    let writes: Vec<String> = sell_requests(&fake)
        .into_iter()
        .filter(|r| is_write(r))
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
    assert!(
        stderr.contains("1000 listing file(s): 0 published, 1000 unchanged"),
        "{stderr}"
    );
    // One file's price changed: that offer is updated and published, nothing else written
    // (its inventory item is as eBay holds it: not written again).
    let changed = good_with_sku("SKU-07").replace("149.00", "139.00");
    std::fs::write(&files[7], changed).unwrap();
    fake.clear_requests();
    let (output, _, stderr) = publish();
    assert!(output.status.success(), "{stderr}");
    let writes: Vec<String> = sell_requests(&fake)
        .into_iter()
        .filter(|r| is_write(r))
        .collect();
    assert!(
        writes
            .iter()
            .any(|w| w.starts_with("PUT /sell/inventory/v1/offer/"))
            && writes.contains(&"POST /sell/inventory/v1/bulk_publish_offer".into())
            && writes.len() == 2,
        "{writes:?}"
    );
    assert!(
        stderr.contains("1000 listing file(s): 1 published, 999 unchanged"),
        "{stderr}"
    );
}

/// `--report FILE` writes a JSON line per file (file, sku, offerId, listingId, status, its
/// problems by field and eBay's errors) and a summary line; a directory argument stands for
/// its `*.json` files, sorted by name.
#[test]
fn listing_publish_report_has_a_json_line_per_file_of_the_directory_and_a_summary() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    let dir = home.path().join("listings");
    std::fs::create_dir(&dir).unwrap();
    write(&dir, "b-good.json", GOOD);
    write(&dir, "a-bad.json", BAD);
    write(&dir, "c-broken.json", "{\"inventoryItem\": ");
    write(&dir, "notes.txt", "not a listing");
    let report = home.path().join("report.jsonl");
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .arg("--report")
        .arg(&report)
        .arg(&dir));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    let text = std::fs::read_to_string(&report).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4, "{text}");
    let file = |name: &str| dir.join(name).display().to_string();
    assert_eq!(lines[0]["file"], file("a-bad.json"), "{text}");
    assert_eq!(lines[0]["status"], "refused");
    assert_eq!(lines[0]["sku"], "BAD SKU");
    assert!(
        lines[0]["problems"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["field"] == "offer.merchantLocationKey"),
        "{text}"
    );
    assert_eq!(lines[1]["file"], file("b-good.json"));
    assert_eq!(lines[1]["status"], "published");
    assert_eq!(lines[1]["sku"], "DESKTOP-1");
    assert!(lines[1]["offerId"].is_string() && lines[1]["listingId"].is_string());
    assert!(
        stdout.contains(lines[1]["listingId"].as_str().unwrap()),
        "{stdout}"
    );
    assert_eq!(lines[2]["file"], file("c-broken.json"));
    assert_eq!(lines[2]["status"], "unreadable");
    assert_eq!(
        lines[3]["summary"],
        serde_json::json!({"files": 3, "published": 1, "unchanged": 0, "refused": 1,
            "failed": 0, "unreadable": 1, "notTried": 0}),
        "{text}"
    );
    assert!(
        stderr.contains("3 listing file(s): 1 published"),
        "{stderr}"
    );
}

/// eBay's error for one listing lands in the report with its errorId.
#[test]
fn listing_publish_report_names_ebays_error_id_for_a_refused_listing() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    let files = good_files(home.path(), 2);
    fake.inject(fake_marketplace::FaultRule {
        method: Some("POST".into()),
        path: Some("/sell/inventory/v1/bulk_publish_offer".into()),
        times: None,
        fault: fake_marketplace::Fault::Status {
            status: 400,
            body: serde_json::json!({"errors": [{"errorId": 25021, "domain": "API_INVENTORY",
                "category": "REQUEST", "message": "Invalid item condition information."}]})
            .to_string(),
            headers: vec![("Content-Type".into(), "application/json".into())],
        },
    });
    let report = home.path().join("report.jsonl");
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .arg("--report")
        .arg(&report)
        .args(&files));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    let text = std::fs::read_to_string(&report).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["status"], "failed", "{text}");
    assert_eq!(first["errors"][0]["errorId"], 25021, "{text}");
}

/// A listing file of nearly 4 MiB (the most `listing` reads) made to be expensive to check:
/// a constrained value and its control aspect repeated (`"Operating System Edition": "Home"`,
/// allowed only with Windows, and `"Operating System": "macOS"`), distinct wrong values of a
/// SELECTION_ONLY aspect (each worth a "did you mean"), a MULTI aspect and a NUMBER one given
/// thousands of values, thousands of `http` pictures, a quantity over eBay's int32, and a
/// condition descriptor given 100,000 wrong values and repeated thousands of times.
fn hostile_listing() -> String {
    let repeat = |text: &str, n: usize| vec![text.to_owned(); n];
    let numbered =
        |prefix: &str, n: usize| (0..n).map(|i| format!("{prefix}{i}")).collect::<Vec<_>>();
    let mut descriptors =
        vec![serde_json::json!({"name": "40010", "values": repeat("999", 100_000)})];
    descriptors.extend(vec![
        serde_json::json!({"name": "27501", "values": ["275010"]});
        5_000
    ]);
    serde_json::json!({
        "inventoryItem": {
            "product": {
                "title": "Hostile",
                "aspects": {
                    "Brand": ["Dell"],
                    "Operating System Edition": repeat("Home", 108_000),
                    "Operating System": repeat("macOS", 108_000),
                    "Type": numbered("Desktopp ", 40_000),
                    "Features": numbered("Feature ", 20_000),
                    "Release Year": numbered("year ", 20_000),
                },
                "imageUrls": numbered("http://example.com/", 20_000),
            },
            "condition": "LIKE_NEW",
            "conditionDescriptors": descriptors,
            "availability": {"shipToLocationAvailability": {"quantity": 2_147_483_648_u64}}
        },
        "offer": {
            "sku": "HOSTILE-1", "marketplaceId": "EBAY_US", "format": "FIXED_PRICE",
            "categoryId": "179", "availableQuantity": 3,
            "pricingSummary": {"price": {"value": "149.00", "currency": "USD"}},
            "listingPolicies": {"fulfillmentPolicyId": "f", "paymentPolicyId": "p", "returnPolicyId": "r"},
            "merchantLocationKey": "warehouse-1"
        }
    })
    .to_string()
}

/// A snapshots directory for `listing --dir`: the committed US tree and pinned rules, and a
/// condition policy for 179 whose LIKE_NEW takes a grader and a 40-value descriptor.
fn dir_with_card_policy(dir: &Path) {
    use taxonomy_tree::conditions::{self, ConditionEntry, ConditionRule, DescriptorEntry};
    let snapshot = dir.join("EBAY_US.json");
    std::fs::create_dir_all(dir.join("pinned")).unwrap();
    std::fs::copy(common::snapshots_dir().join("EBAY_US.json"), &snapshot).unwrap();
    std::fs::copy(
        common::snapshots_dir().join("pinned/EBAY_US-179.json"),
        dir.join("pinned/EBAY_US-179.json"),
    )
    .unwrap();
    let descriptor = |id: u32, name: &str, values: Vec<(u32, String)>| DescriptorEntry {
        id,
        name: name.into(),
        required: false,
        multiple: false,
        free_text: false,
        max_length: None,
        values,
        requires: Vec::new(),
    };
    let rule = ConditionRule {
        required: true,
        conditions: vec![ConditionEntry {
            condition: marketplaces::Condition::LikeNew,
            descriptors: vec![
                descriptor(27501, "Professional Grader", vec![(275010, "PSA".into())]),
                descriptor(
                    40010,
                    "Card Grade",
                    (0..40)
                        .map(|i| (400_100 + i, format!("Grade {i}")))
                        .collect(),
                ),
            ],
        }],
    };
    let tree = taxonomy_tree::snapshot::read(&snapshot).unwrap();
    let path = conditions::path_beside(&snapshot);
    let (file, _) = conditions::from_answer(
        [(179, rule)],
        &tree,
        "made up by tests/it/listing_cli.rs",
        true,
        &path,
    )
    .unwrap();
    std::fs::write(&path, conditions::to_string(&file)).unwrap();
}

/// A hostile listing file of nearly 4 MiB gets a bounded report, against the compiled-in
/// rules and against a directory's (which also checks its condition descriptors): at most a
/// few problems of each field, then how many more, and well under 64 KB printed. (A 137 KB
/// file of the repeated pair needed 3.5 GB; 800,000 wrong descriptor values printed 317 MB.)
/// With HOSTILE_LISTING_DIR set, the file and the directory are written there and kept, for
/// measuring the command (docs/security.md).
#[test]
fn a_4_mib_hostile_listing_file_gets_a_bounded_report() {
    let fake = FakeMarketplace::new();
    let temp = tempfile::tempdir().unwrap();
    let home = match std::env::var_os("HOSTILE_LISTING_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => temp.path().to_owned(),
    };
    std::fs::create_dir_all(&home).unwrap();
    let text = hostile_listing();
    assert!(
        (3_900_000..4 * 1024 * 1024).contains(&text.len()),
        "{} bytes",
        text.len()
    );
    let file = write(&home, "hostile.json", &text);
    let dir = home.join("snapshots");
    dir_with_card_policy(&dir);
    let name = file.display().to_string();
    for with_dir in [false, true] {
        let mut cmd = listing(&fake, &home);
        if with_dir {
            cmd.arg("--dir").arg(&dir);
        }
        let (output, stdout, stderr) = run(cmd.arg("check").arg(&file));
        assert_eq!(output.status.code(), Some(1), "{stderr}");
        assert!(
            stdout.len() < 16 * 1024,
            "{} bytes:\n{stdout}",
            stdout.len()
        );
        let lines = |field: &str| {
            let prefix = format!("{name}: {field}");
            stdout.lines().filter(|l| l.starts_with(&prefix)).count()
        };
        // TooManyValues, ten listed, the count of the rest.
        for aspect in ["Operating System Edition", "Type", "Release Year"] {
            let field = format!("inventoryItem.product.aspects[{aspect:?}]");
            assert_eq!(lines(&field), 12, "{aspect}:\n{stdout}");
            assert!(
                stdout.contains(&format!("{name}: {field}: error: {aspect:?} has ")),
                "{stdout}"
            );
        }
        for aspect in ["Operating System", "Features"] {
            let field = format!("inventoryItem.product.aspects[{aspect:?}]");
            assert_eq!(lines(&field), 1, "{aspect}:\n{stdout}");
        }
        assert_eq!(lines("inventoryItem.product.imageUrls"), 12, "{stdout}");
        assert_eq!(
            lines("inventoryItem.availability.shipToLocationAvailability.quantity"),
            1
        );
        // The "did you mean"s: a few, not one for each of the 40,000 wrong values.
        assert!(stdout.matches("did you mean").count() <= 5, "{stdout}");
        let descriptors = lines("inventoryItem.conditionDescriptors");
        if with_dir {
            assert_eq!(descriptors, 11, "{stdout}");
            assert!(
                stdout.contains(&format!(
                    "{name}: inventoryItem.conditionDescriptors: {} more problems here, not listed",
                    1 + 100_000 + 4_999 - 10
                )),
                "{stdout}"
            );
        } else {
            // No condition policy is compiled in: the descriptors are not checked.
            assert_eq!(descriptors, 0, "{stdout}");
        }
    }
    assert!(fake.requests().is_empty());
}

#[test]
fn listing_publish_refuses_a_stored_consent_without_sell_inventory_and_sends_nothing() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    // A consent to api_scope only (what `consent` asked for by default before).
    consented_store_with(&fake, &store, "seller-1", &[""]);
    let good = write(home.path(), "good.json", GOOD);
    fake.clear_requests();
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .arg(&good));
    assert!(!output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("https://api.ebay.com/oauth/api_scope/sell.inventory"),
        "the missing scope is named: {stderr}"
    );
    assert!(
        stderr.contains("consent --account \"seller-1\" --for listing"),
        "the command that grants it is named: {stderr}"
    );
    assert!(stderr.contains("nothing was sent"), "{stderr}");
    assert!(
        fake.requests().is_empty(),
        "nothing sent, not even a token request: {:?}",
        fake.requests()
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect::<Vec<_>>()
    );
}

#[test]
fn listing_publish_without_a_stored_consent_names_the_consent_command_and_sends_nothing() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    // Another account consented; seller-2 did not.
    consented_store(&fake, &store, "seller-1");
    let good = write(home.path(), "good.json", GOOD);
    fake.clear_requests();
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-2", "--store"])
        .arg(&store)
        .arg(&good));
    assert!(!output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("consent --account \"seller-2\" --for listing"),
        "{stderr}"
    );
    assert!(fake.requests().is_empty(), "nothing sent");
}

/// Runs `listing publish --dry-run` (with `flags`) of `files` for seller-1: the output, and the
/// requests it sent below /sell/ that write.
fn dry_run(
    fake: &FakeMarketplace,
    home: &Path,
    store: &Path,
    files: &[PathBuf],
    flags: &[&str],
) -> (Output, String, String, Vec<String>) {
    fake.clear_requests();
    let (output, stdout, stderr) = run(listing(fake, home)
        .args(["publish", "--dry-run", "--account", "seller-1", "--store"])
        .arg(store)
        .args(flags)
        .args(files));
    let writes = sell_requests(fake)
        .into_iter()
        .filter(|r| is_write(r))
        .collect();
    (output, stdout, stderr, writes)
}

/// `listing publish --dry-run` of files eBay holds nothing of sends only reads and says, per
/// file, that the inventory item and the offer would be created and published; its report
/// line carries the plan; a real run after it publishes them (the dry run changed nothing).
#[test]
fn a_dry_run_of_new_files_sends_no_write_and_says_create() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    let files = good_files(home.path(), 3);
    let report = home.path().join("report.jsonl");
    let (output, stdout, stderr, writes) = dry_run(
        &fake,
        home.path(),
        &store,
        &files,
        &["--report", report.to_str().unwrap()],
    );
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(writes.is_empty(), "a dry run wrote: {writes:?}");
    assert_eq!(
        stdout
            .lines()
            .filter(|l| l.ends_with(": create: inventory item, offer; publish"))
            .count(),
        3,
        "{stdout}"
    );
    assert!(stderr.contains("3 to publish"), "{stderr}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&report)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["status"], "planned", "{lines:?}");
    assert_eq!(lines[0]["plan"]["offer"], "create", "{lines:?}");
    assert_eq!(lines[3]["summary"]["dryRun"], true, "{lines:?}");
    let (output, published, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .args(&files));
    assert!(output.status.success(), "{published}\n{stderr}");
    assert!(stderr.contains("3 published"), "{stderr}");
}

/// After publishing, a dry run of the files says "left alone" of those eBay holds live as they
/// are, and "revise: pricingSummary" of the one whose price changed, sending no write; the
/// real rerun then writes that one only.
#[test]
fn a_dry_run_after_publishing_says_revise_pricing_summary_of_a_changed_price_and_left_alone_of_the_others()
 {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    let files = good_files(home.path(), 3);
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .args(&files));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let (output, stdout, stderr, writes) = dry_run(&fake, home.path(), &store, &files, &[]);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(writes.is_empty(), "{writes:?}");
    assert_eq!(stdout.matches(": left alone").count(), 3, "{stdout}");
    std::fs::write(
        &files[1],
        good_with_sku("SKU-01").replace("149.00", "139.00"),
    )
    .unwrap();
    let (output, stdout, stderr, writes) = dry_run(&fake, home.path(), &store, &files, &[]);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(writes.is_empty(), "{writes:?}");
    let changed = format!("{}: revise: pricingSummary; publish", files[1].display());
    assert!(stdout.lines().any(|l| l == changed), "{stdout}");
    assert_eq!(stdout.matches(": left alone").count(), 2, "{stdout}");
    assert!(
        stderr.contains("1 to publish, 2 left alone (live as it is)"),
        "{stderr}"
    );
}

/// A file switched from FIXED_PRICE to AUCTION while its fixed-price listing is live: the dry
/// run says it would be refused (naming the live offer), or under `--other-format withdraw`
/// that the fixed-price offer would be withdrawn and the auction's offer created, sending no
/// write either way.
#[test]
fn a_dry_run_of_a_switched_format_says_refused_or_withdraw() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    let fixed = write(home.path(), "fixed.json", GOOD);
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .arg(&fixed));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let mut switched: serde_json::Value = serde_json::from_str(GOOD).unwrap();
    switched["offer"]["format"] = serde_json::json!("AUCTION");
    switched["offer"]["listingDuration"] = serde_json::json!("DAYS_7");
    let switched = vec![write(home.path(), "switched.json", &switched.to_string())];
    let (output, stdout, stderr, writes) = dry_run(&fake, home.path(), &store, &switched, &[]);
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(writes.is_empty(), "{writes:?}");
    assert!(
        stderr.contains("switched.json: refused:")
            && stderr.contains("is live on EBAY_US as FIXED_PRICE"),
        "{stderr}"
    );
    let (output, stdout, stderr, writes) = dry_run(
        &fake,
        home.path(),
        &store,
        &switched,
        &["--other-format", "withdraw"],
    );
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(writes.is_empty(), "{writes:?}");
    assert!(
        stdout.contains("switched.json: withdraw offer ")
            && stdout.contains("(FIXED_PRICE, live); create: offer; publish"),
        "{stdout}"
    );
}

/// `listing check --dir` of a category that is not a listing's leaf says what `category!`
/// says: an unknown id names the id and the tree (id, version) it was looked in; a parent
/// lists some of its leaves, id and path; an expired one (getExpiredCategories, the file
/// beside the tree) names its replacement's id and name.
#[test]
fn listing_check_names_the_tree_looked_in_the_leaves_of_a_parent_and_the_replacements_name() {
    use taxonomy_tree::expired::{self, ExpiredFile, ExpiredMapping};
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let snapshots = common::copy_of_snapshots();
    let snapshot = snapshots.path().join("EBAY_US.json");
    let tree = taxonomy_tree::snapshot::read(&snapshot).unwrap();
    let retired = 99_999_999;
    assert!(tree.get(retired).is_none());
    let file = ExpiredFile {
        tree_id: tree.meta.tree_id,
        marketplace_id: "EBAY_US".into(),
        version: tree.meta.version.clone(),
        tree_fingerprint: Some(expired::fingerprint(&tree)),
        source: "made up by tests/it/listing_cli.rs".into(),
        mappings: vec![ExpiredMapping {
            from: retired,
            to: 179,
        }],
    };
    expired::write_beside(&snapshot, &file, &tree).unwrap();
    let check = |category: &str| {
        let path = write(
            home.path(),
            &format!("{category}.json"),
            &GOOD.replace("\"179\"", &format!("{category:?}")),
        );
        let (_, stdout, stderr) = run(listing(&fake, home.path())
            .arg("--dir")
            .arg(snapshots.path())
            .arg("check")
            .arg(&path));
        stdout
            .lines()
            .find(|l| l.contains("offer.categoryId"))
            .unwrap_or_else(|| panic!("no offer.categoryId problem: {stdout}{stderr}"))
            .to_owned()
    };
    let line = check("123456789");
    assert!(
        line.ends_with(&format!(
            "offer.categoryId: no category 123456789 in EBAY_US's category tree (tree 0, version {})",
            tree.meta.version
        )),
        "{line}"
    );
    // 58058 "Computers/Tablets & Networking": 179 is one of its leaves, among the first.
    let line = check("58058");
    assert!(
        line.contains(
            "\"Computers/Tablets & Networking\" is not a leaf category (eBay: errorId 25005)"
        ),
        "{line}"
    );
    let first_leaf = {
        let mut at = tree.get(58058).unwrap();
        while !at.leaf {
            at = tree.get(at.children[0]).unwrap();
        }
        at
    };
    assert!(
        line.contains(&format!(
            "leaf categories, for example {} ({})",
            first_leaf.id,
            expired::path_of(&tree, first_leaf.id)
        )),
        "{line}"
    );
    let line = check(&retired.to_string());
    let name = &tree.get(179).unwrap().name;
    assert!(
        line.contains(&format!(
            "list in its replacement, 179 ({})",
            expired::path_of(&tree, 179)
        )) && line.contains(name.as_str()),
        "{line}"
    );
    assert!(fake.requests().is_empty());
}

/// `MANUFACTURER_REFURBISHED`, deprecated in eBay's ConditionEnum (createOrReplaceInventoryItem
/// still accepts it, converted to CERTIFIED_REFURBISHED), is read as its replacement, with a
/// warning naming it; the file is not refused for it.
#[test]
fn manufacturer_refurbished_is_read_with_a_warning_naming_certified_refurbished() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let file = write(
        home.path(),
        "refurbished.json",
        &GOOD.replace("\"USED_EXCELLENT\"", "\"MANUFACTURER_REFURBISHED\""),
    );
    let (output, stdout, stderr) = run(listing(&fake, home.path()).arg("check").arg(&file));
    assert!(!stdout.contains("not a listing file"), "{stdout}");
    assert!(
        stderr.contains(
            "refurbished.json: inventoryItem.condition: MANUFACTURER_REFURBISHED is deprecated in eBay's ConditionEnum: createOrReplaceInventoryItem converts it to CERTIFIED_REFURBISHED"
        ) && stderr.contains("write CERTIFIED_REFURBISHED"),
        "{stderr}"
    );
    assert!(output.status.success(), "{stdout}{stderr}");
    // A current name gets no such warning.
    let good = write(home.path(), "good.json", GOOD);
    let (_, _, stderr) = run(listing(&fake, home.path()).arg("check").arg(&good));
    assert!(!stderr.contains("deprecated"), "{stderr}");
    assert!(fake.requests().is_empty());
}

/// A bulkGetInventoryItem answer whose inventoryItem names another SKU than the response's
/// `sku` is not the SKU's item: the live listing whose title changed is written again
/// (getInventoryItem asked), not left alone as "unchanged" on the strength of that answer.
#[test]
fn a_bulk_get_inventory_item_answer_with_the_item_of_another_sku_is_not_taken_as_the_skus() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    let file = write(home.path(), "a.json", GOOD);
    let publish = || {
        run(listing(&fake, home.path())
            .args(["publish", "--account", "seller-1", "--store"])
            .arg(&store)
            .arg(&file))
    };
    let (output, _, stderr) = publish();
    assert!(output.status.success(), "{stderr}");
    let mut changed: serde_json::Value = serde_json::from_str(GOOD).unwrap();
    changed["inventoryItem"]["product"]["title"] = serde_json::json!("A new title");
    std::fs::write(&file, changed.to_string()).unwrap();
    let mut item = changed["inventoryItem"].clone();
    item["sku"] = serde_json::json!("SOMEONE-ELSE");
    fake.route(
        "POST",
        "/sell/inventory/v1/bulk_get_inventory_item",
        move |_, _| {
            fake_marketplace::Response::json(
                200,
                &serde_json::json!({"responses": [
                    {"sku": "DESKTOP-1", "statusCode": 200, "inventoryItem": item}
                ]}),
            )
        },
    );
    fake.clear_requests();
    let (output, stdout, stderr) = publish();
    assert!(output.status.success(), "{stdout}\n{stderr}");
    let writes: Vec<String> = sell_requests(&fake)
        .into_iter()
        .filter(|r| is_write(r))
        .collect();
    assert!(
        writes.contains(&"POST /sell/inventory/v1/bulk_create_or_replace_inventory_item".into()),
        "the changed title was never written: {writes:?}\n{stderr}"
    );
    assert!(stderr.contains("1 published, 0 unchanged"), "{stderr}");
}

/// Two files of one offer (the same SKU, marketplace and format) in one run of `listing
/// check`: each is refused naming the other, though each passes on its own.
#[test]
fn two_files_of_one_sku_are_both_refused_by_check_each_naming_the_other() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let first = write(home.path(), "first.json", GOOD);
    let other = write(home.path(), "other.json", &good_with_sku("OTHER-1"));
    let second = write(
        home.path(),
        "second.json",
        &GOOD.replace("149.00", "139.00"),
    );
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .arg("check")
        .args([&first, &other, &second]));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    let (first, second) = (first.display().to_string(), second.display().to_string());
    assert!(
        stdout.contains(&format!(
            "{first}: offer.sku: \"DESKTOP-1\" is also the SKU of {second}"
        )) && stdout.contains(&format!(
            "{second}: offer.sku: \"DESKTOP-1\" is also the SKU of {first}"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("{}: ok", other.display())),
        "{stdout}"
    );
    assert!(fake.requests().is_empty());
}

/// 2,000 files of one SKU in one run (a spreadsheet export whose SKU column was filled down):
/// each is refused naming 10 of the others and how many more, so the output grows with the
/// files, not with their square (1,000 such files printed 24 MB, each line naming 999 paths;
/// 10,000 would have held 100 million positions).
#[test]
fn two_thousand_files_of_one_sku_are_each_refused_naming_ten_others_and_how_many_more() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let dir = home.path().join("export");
    std::fs::create_dir_all(&dir).unwrap();
    for i in 0..2_000 {
        write(&dir, &format!("row-{i:04}.json"), GOOD);
    }
    let (output, stdout, stderr) = run(listing(&fake, home.path()).arg("check").arg(&dir));
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let refused: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("offer.sku: \"DESKTOP-1\" is also the SKU of "))
        .collect();
    assert_eq!(refused.len(), 2_000, "{stderr}");
    for line in &refused {
        assert!(
            line.contains(" and 1989 more files, and they are the same offer"),
            "{line}"
        );
        assert_eq!(line.matches(".json").count(), 11, "{line}");
    }
    assert!(stdout.len() < 2_000 * 1024, "{} bytes", stdout.len());
    assert!(fake.requests().is_empty());
}

/// Two files of one SKU 30 files apart (in two chunks of 25) in one run of `listing publish`:
/// both are refused, each naming the other, and nothing of either is sent; the others are
/// published. Chunk by chunk, the second had replaced the first's live listing.
#[test]
fn two_files_of_one_sku_in_different_chunks_are_both_refused_and_neither_is_sent() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    let files = good_files(home.path(), 40);
    std::fs::write(&files[3], good_with_sku("TWICE-1")).unwrap();
    let changed = good_with_sku("TWICE-1").replace("Dell OptiPlex 7010", "Dell OptiPlex 9020");
    std::fs::write(&files[33], changed).unwrap();
    let report = home.path().join("report.jsonl");
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--report"])
        .arg(&report)
        .arg("--store")
        .arg(&store)
        .args(&files));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    let (a, b) = (
        home.path().join("sku-03.json").display().to_string(),
        home.path().join("sku-33.json").display().to_string(),
    );
    assert!(
        stdout.contains(&format!(
            "{a}: offer.sku: \"TWICE-1\" is also the SKU of {b}"
        )) && stdout.contains(&format!(
            "{b}: offer.sku: \"TWICE-1\" is also the SKU of {a}"
        )),
        "{stdout}\n{stderr}"
    );
    let sent: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| {
            r.path.contains("TWICE-1") || String::from_utf8_lossy(&r.body).contains("TWICE-1")
        })
        .map(|r| r.path)
        .collect();
    assert!(sent.is_empty(), "{sent:?}");
    assert!(
        stderr.contains("38 published") && stderr.contains("2 refused"),
        "{stderr}"
    );
    let lines = std::fs::read_to_string(&report).unwrap();
    let refused: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|l| l["status"] == "refused")
        .collect();
    assert_eq!(refused.len(), 2, "{lines}");
    assert!(
        refused
            .iter()
            .all(|l| l["sku"] == "TWICE-1" && l["problems"][0]["field"] == "offer.sku")
    );
}

/// A field eBay's Inventory API description does not define (`catgoryId` beside
/// `categoryId`, `imageUrl` in the product) is named in a warning with the closest field
/// eBay defines, by `check` and by `publish` (eBay ignores it: the seller's value is lost); a
/// field eBay defines that the listing does not model (`offer.tax`, `product.epid`) is not.
/// Neither refuses the file.
#[test]
fn an_unknown_field_is_a_warning_naming_its_path_and_the_closest_field() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let text = GOOD
        .replace(
            r#""categoryId": "179","#,
            r#""categoryId": "179", "catgoryId": "179", "tax": {"vatPercentage": 19},"#,
        )
        .replace(
            r#""title": "Dell OptiPlex 7010","#,
            r#""title": "Dell OptiPlex 7010", "epid": "123", "imageUrl": "https://x/a.jpg","#,
        );
    let file = write(home.path(), "typo.json", &text);
    let name = file.display().to_string();
    let (output, stdout, stderr) = run(listing(&fake, home.path()).arg("check").arg(&file));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    for (path, closest) in [
        ("offer.catgoryId", "categoryId"),
        ("inventoryItem.product.imageUrl", "imageUrls"),
    ] {
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with(&format!("warning: {name}: {path}: "))
                    && l.ends_with(&format!("did you mean {closest}?"))),
            "{path}:\n{stderr}"
        );
    }
    assert!(
        !stderr.contains("tax") && !stderr.contains("epid"),
        "{stderr}"
    );
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .arg(&file));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!("warning: {name}: offer.catgoryId: ")),
        "{stderr}"
    );
    // And in the --report line of the file, for cron.
    let report = home.path().join("report.jsonl");
    let (output, _, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .arg("--report")
        .arg(&report)
        .arg(&file));
    assert!(output.status.success(), "{stderr}");
    let line: serde_json::Value = serde_json::from_str(
        std::fs::read_to_string(&report)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let warned: Vec<(&str, &str)> = line["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| (w["field"].as_str().unwrap(), w["closest"].as_str().unwrap()))
        .collect();
    assert_eq!(
        warned,
        [
            ("inventoryItem.product.imageUrl", "imageUrls"),
            ("offer.catgoryId", "categoryId")
        ],
        "{line}"
    );
}

/// A file of 100,000 made-up fields and one field named by 1 MB of text (a spreadsheet export
/// gone wrong, or a hostile file): its warnings are bounded (the first 20 fields, then how
/// many more; a long name cut) and the check is quick. (300,000 fields printed 38 MB of
/// warnings and took over a minute; a 3 MB name took a minute of edit distances.)
#[test]
fn a_file_of_100000_unknown_fields_and_a_1_mb_field_name_gets_bounded_warnings() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let made_up: String = (0..100_000).map(|i| format!(r#""x{i}": 1, "#)).collect();
    let long = "k".repeat(1 << 20);
    let text = GOOD.replace(
        r#""categoryId": "179","#,
        &format!(r#""{long}": 1, {made_up}"categoryId": "179","#),
    );
    let file = write(home.path(), "many.json", &text);
    let started = std::time::Instant::now();
    let (output, stdout, stderr) = run(listing(&fake, home.path()).arg("check").arg(&file));
    let took = started.elapsed();
    assert!(output.status.success(), "{stdout}");
    assert!(
        stderr.len() < 16 * 1024,
        "{} bytes of warnings",
        stderr.len()
    );
    assert!(
        stderr.contains(
            "99981 more fields eBay's Inventory API description does not define, not listed \
             (at most 20 are)"
        ),
        "{stderr}"
    );
    assert!(stderr.contains("(1048582 characters)"), "{stderr}");
    assert!(took < std::time::Duration::from_secs(30), "{took:?}");
}

/// `GOOD` under `sku` with the seller's own (made-up) policies of `marketplace` (the fake's
/// seeded ones) for EBAY_US.
fn good_with_policies(sku: &str, fulfillment: &str) -> String {
    use fake_marketplace::account::{PolicyKind, seeded_policy_id};
    let us = marketplaces::Marketplace::Us;
    good_with_sku(sku).replace(
        r#""listingPolicies": {"fulfillmentPolicyId": "f", "paymentPolicyId": "p", "returnPolicyId": "r"}"#,
        &format!(
            r#""listingPolicies": {{"fulfillmentPolicyId": "{fulfillment}", "paymentPolicyId": "{}", "returnPolicyId": "{}"}}"#,
            seeded_policy_id(PolicyKind::Payment, us),
            seeded_policy_id(PolicyKind::Return, us)
        ),
    )
}

/// A seller of 3,000 fulfillment policies and 3,000 inventory locations: a file naming a
/// policy and a location the seller has not got is refused naming 10 of each and how many
/// more, not all of them (each refused file's line named every policy and every location:
/// hundreds of kilobytes a file).
#[test]
fn a_refused_policy_or_location_names_ten_of_the_sellers_and_how_many_more() {
    use fake_marketplace::account::{PolicyKind, seeded_policy_id};
    let us = marketplaces::Marketplace::Us;
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store_with(
        &fake,
        &store,
        "seller-1",
        &["/sell.inventory", "/sell.account.readonly"],
    );
    for i in 0..3_000 {
        fake.add_policy(PolicyKind::Fulfillment, us, &format!("77{i:04}"), "Courier");
        fake.add_inventory_location(&format!("store-{i:04}"));
    }
    let us_ship = seeded_policy_id(PolicyKind::Fulfillment, us);
    let files: Vec<PathBuf> = (0..20)
        .map(|i| {
            write(
                home.path(),
                &format!("f{i}.json"),
                &good_with_policies(&format!("NOPE-{i}"), "5551")
                    .replace("warehouse-1", "garage-9"),
            )
        })
        .collect();
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .args(&files));
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    let policy = stdout
        .lines()
        .filter(|l| l.contains("offer.listingPolicies.fulfillmentPolicyId: \"5551\""))
        .collect::<Vec<_>>();
    let location = stdout
        .lines()
        .filter(|l| l.contains("offer.merchantLocationKey: \"garage-9\""))
        .collect::<Vec<_>>();
    assert_eq!((policy.len(), location.len()), (20, 20), "{stdout}");
    for line in policy {
        assert!(line.contains(&format!("{us_ship} (")), "{line}");
        assert!(
            line.contains(" and 2991 more); publishOffer would refuse it"),
            "{line}"
        );
        assert!(line.len() < 1024, "{} bytes", line.len());
    }
    for line in location {
        assert!(line.contains(" and 2991 more); create it"), "{line}");
        assert!(line.len() < 1024, "{} bytes", line.len());
    }
}

/// getInventoryLocations answering the same location under a `total` of u64::MAX on every
/// page: `listing publish` stops asking when a page adds no location not seen before (it
/// asked forever, its memory growing) and publishes.
#[test]
fn locations_paged_forever_end_the_lookup_and_the_run_publishes() {
    use fake_marketplace::account::{PolicyKind, seeded_policy_id};
    let us = marketplaces::Marketplace::Us;
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store_with(
        &fake,
        &store,
        "seller-1",
        &["/sell.inventory", "/sell.account.readonly"],
    );
    fake.inject(fake_marketplace::FaultRule {
        method: Some("GET".into()),
        path: Some("/sell/inventory/v1/location".into()),
        times: None,
        fault: fake_marketplace::Fault::Status {
            status: 200,
            body: serde_json::json!({"total": u64::MAX, "limit": 100,
                "locations": [{"merchantLocationKey": "warehouse-1"}]})
            .to_string(),
            headers: vec![("Content-Type".into(), "application/json".into())],
        },
    });
    let file = write(
        home.path(),
        "good.json",
        &good_with_policies("LOC-1", &seeded_policy_id(PolicyKind::Fulfillment, us)),
    );
    let mut child = listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .arg(&file)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().unwrap();
            let asked = fake.requests_to("/sell/inventory/v1/location").len();
            panic!("listing publish still running after 60 s ({asked} getInventoryLocations)");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let output = child.wait_with_output().unwrap();
    let (stdout, stderr) = common::output_text(&output);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!("{}: listing ", file.display())),
        "{stdout}"
    );
}

/// Before sending any write, `listing publish` asks the seller's policies once per
/// marketplace (getFulfillmentPolicies, getPaymentPolicies, getReturnPolicies) and the
/// locations (getInventoryLocations): a listing naming the seller's GB policy on a US offer,
/// or a location the seller has not got, is refused naming the field, the id, the marketplace
/// and the ids the seller has, and nothing of it is sent; the good one is published.
#[test]
fn a_policy_of_another_marketplace_or_an_unknown_location_is_refused_before_sending() {
    use fake_marketplace::account::{PolicyKind, seeded_policy_id};
    let (us, gb) = (marketplaces::Marketplace::Us, marketplaces::Marketplace::Gb);
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store_with(
        &fake,
        &store,
        "seller-1",
        &["/sell.inventory", "/sell.account.readonly"],
    );
    fake.add_policy(PolicyKind::Fulfillment, gb, "5551", "UK courier");
    let us_ship = seeded_policy_id(PolicyKind::Fulfillment, us);
    let good = write(
        home.path(),
        "a-good.json",
        &good_with_policies("GOOD-1", &us_ship),
    );
    let gb_policy = write(
        home.path(),
        "b-gb.json",
        &good_with_policies("GBPOL-1", "5551"),
    );
    let nowhere = write(
        home.path(),
        "c-nowhere.json",
        &good_with_policies("NOWHERE-1", &us_ship).replace("warehouse-1", "garage-9"),
    );
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .args([&good, &gb_policy, &nowhere]));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!("{}: listing ", good.display())),
        "{stdout}\n{stderr}"
    );
    let line = format!(
        "{}: offer.listingPolicies.fulfillmentPolicyId: \"5551\" is not one of the seller's policies on EBAY_US (getFulfillmentPolicies: {us_ship} (\"Standard shipping\"))",
        gb_policy.display()
    );
    assert!(stdout.contains(&line), "{line}\n{stdout}\n{stderr}");
    let line = format!(
        "{}: offer.merchantLocationKey: \"garage-9\" is not one of the seller's inventory locations (getInventoryLocations: warehouse-1)",
        nowhere.display()
    );
    assert!(stdout.contains(&line), "{line}\n{stdout}\n{stderr}");
    let sent: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| {
            let body = String::from_utf8_lossy(&r.body);
            ["GBPOL-1", "NOWHERE-1"]
                .iter()
                .any(|sku| r.path.contains(sku) || body.contains(sku))
        })
        .map(|r| r.path)
        .collect();
    assert!(sent.is_empty(), "{sent:?}");
    for path in [
        "/sell/account/v1/fulfillment_policy",
        "/sell/account/v1/payment_policy",
        "/sell/account/v1/return_policy",
        "/sell/inventory/v1/location",
    ] {
        assert_eq!(fake.requests_to(path).len(), 1, "{path}");
    }
    assert!(
        stderr.contains("1 published") && stderr.contains("2 refused"),
        "{stderr}"
    );
}

/// The fake's publishOffer refuses an offer naming a policy the seller has on another
/// marketplace (createOffer takes it), as eBay does (25007); when the seller's consent lacks
/// the Account API's scope, `listing publish` says once that the policies are not checked
/// before sending, and goes on.
#[test]
fn without_the_account_scope_the_policies_go_unchecked_and_publish_offer_refuses_a_foreign_one() {
    use fake_marketplace::account::PolicyKind;
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    fake.add_policy(
        PolicyKind::Fulfillment,
        marketplaces::Marketplace::Gb,
        "5551",
        "UK courier",
    );
    let file = write(
        home.path(),
        "gb.json",
        &good_with_sku("GBPOL-1").replace(
            r#""fulfillmentPolicyId": "f""#,
            r#""fulfillmentPolicyId": "5551""#,
        ),
    );
    let other = write(home.path(), "ok.json", &good_with_sku("OK-1"));
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .args([&file, &other]));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert_eq!(
        stderr
            .matches("warning: the seller's business policies could not be read")
            .count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("sell.account.readonly"), "{stderr}");
    assert!(stderr.contains("25007"), "{stderr}");
    assert!(
        stdout.contains(&format!("{}: listing ", other.display())),
        "{stdout}"
    );
}

/// `--dry-run` shows the run-level refusals too, sending only reads: a file naming a policy of
/// the seller's other marketplace, and two files of one SKU.
#[test]
fn a_dry_run_shows_a_foreign_policy_and_a_repeated_sku_as_refused() {
    use fake_marketplace::account::{PolicyKind, seeded_policy_id};
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store_with(
        &fake,
        &store,
        "seller-1",
        &["/sell.inventory", "/sell.account.readonly"],
    );
    let gb_ship = seeded_policy_id(PolicyKind::Fulfillment, marketplaces::Marketplace::Gb);
    let us_ship = seeded_policy_id(PolicyKind::Fulfillment, marketplaces::Marketplace::Us);
    let foreign = write(home.path(), "a.json", &good_with_policies("A-1", &gb_ship));
    let first = write(
        home.path(),
        "b.json",
        &good_with_policies("TWICE-1", &us_ship),
    );
    let second = write(
        home.path(),
        "c.json",
        &good_with_policies("TWICE-1", &us_ship),
    );
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--dry-run", "--account", "seller-1", "--store"])
        .arg(&store)
        .args([&foreign, &first, &second]));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(&format!(
            "{}: offer.listingPolicies.fulfillmentPolicyId: \"{gb_ship}\" is not one of the seller's policies on EBAY_US",
            foreign.display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "{}: offer.sku: \"TWICE-1\" is also the SKU of {}",
            first.display(),
            second.display()
        )) && stdout.contains("so none of them would be sent"),
        "{stdout}"
    );
    let writes: Vec<String> = sell_requests(&fake)
        .into_iter()
        .filter(|r| is_write(r))
        .collect();
    assert!(writes.is_empty(), "{writes:?}");
}

/// The Account API down (HTTP 500 on every getFulfillmentPolicies) does not stop the nightly
/// run: a warning says once that the policies are not checked before sending (without the
/// scope hint, which a 500 is not about), and the listings are published.
#[test]
fn the_account_api_down_is_a_warning_and_the_run_publishes() {
    use fake_marketplace::account::{PolicyKind, seeded_policy_id};
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store_with(
        &fake,
        &store,
        "seller-1",
        &["/sell.inventory", "/sell.account.readonly"],
    );
    fake.inject(fake_marketplace::FaultRule {
        method: Some("GET".into()),
        path: Some("/sell/account/v1/fulfillment_policy".into()),
        times: None,
        fault: fake_marketplace::Fault::Status {
            status: 500,
            body: serde_json::json!({"errors": [{"errorId": 20500, "domain": "API_ACCOUNT",
                "category": "APPLICATION", "message": "System error."}]})
            .to_string(),
            headers: vec![
                ("Content-Type".into(), "application/json".into()),
                ("Retry-After".into(), "0".into()),
            ],
        },
    });
    let us_ship = seeded_policy_id(PolicyKind::Fulfillment, marketplaces::Marketplace::Us);
    let files: Vec<PathBuf> = (0..3)
        .map(|i| {
            write(
                home.path(),
                &format!("{i}.json"),
                &good_with_policies(&format!("UP-{i}"), &us_ship),
            )
        })
        .collect();
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .args(&files));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stderr
            .matches("warning: the seller's business policies could not be read")
            .count(),
        1,
        "{stderr}"
    );
    assert!(!stderr.contains("--for listing"), "{stderr}");
    assert!(stderr.contains("3 published"), "{stderr}");
}

/// A rerun's line for a file whose listing eBay holds live as the file has it says so,
/// "unchanged" (it read as the first run's "listing …" line, as if it had been published
/// again); a file published by the run does not.
#[test]
fn a_reruns_line_for_an_unchanged_published_file_says_unchanged() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    let good = write(home.path(), "good.json", GOOD);
    let publish = || {
        run(listing(&fake, home.path())
            .args(["publish", "--account", "seller-1", "--store"])
            .arg(&store)
            .arg(&good))
    };
    let (output, first, stderr) = publish();
    assert!(output.status.success(), "{first}\n{stderr}");
    assert!(!first.contains("unchanged"), "{first}");
    let (output, again, stderr) = publish();
    assert!(output.status.success(), "{again}\n{stderr}");
    let line = again.lines().next().unwrap_or_default();
    assert!(
        line.starts_with(&format!("{}: listing ", good.display()))
            && line.ends_with(", unchanged: live as the file has it, nothing written"),
        "{again}"
    );
}

/// A fake marketplace's made-up condition policies are warned of once, naming every file,
/// by `snapshot refresh` (which said it once a site) and by `listing check --dir` (once a
/// site's file, four times over for the four committed sites).
#[test]
fn the_made_up_warning_is_printed_once_not_for_every_site() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let snapshots = common::copy_of_snapshots();
    let out = common::snapshot_on_fake(&fake, "refresh", &[], snapshots.path());
    let (stdout, stderr) = common::output_text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(stdout.matches("made up").count(), 1, "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.contains("made up"))
        .unwrap_or_default();
    for site in common::snapshot_sites() {
        assert!(line.contains(site.marketplace_id()), "{site}: {line}");
    }
    let good = write(home.path(), "good.json", GOOD);
    let (_, stdout, stderr) = run(listing(&fake, home.path())
        .arg("--dir")
        .arg(snapshots.path())
        .arg("check")
        .arg(&good));
    assert_eq!(stderr.matches("made up").count(), 1, "{stdout}\n{stderr}");
    for site in common::snapshot_sites() {
        let file = format!("{}.conditions.json", site.marketplace_id());
        assert!(stderr.contains(&file), "{file}: {stderr}");
    }
}

/// A file refused before sending for what the seller has not got (here a location: the
/// seller has none yet) is refused with every problem of the file at once, the offline
/// check's too (no picture), as `check` names them, so that one fix of the file suffices; and
/// with no location at all, the message asks for createInventoryLocation, not to "name one of
/// these" of a list that is empty.
#[test]
fn a_file_refused_for_its_location_also_names_its_offline_problems() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store_without_location(&fake, &store, "seller-1", &["/sell.inventory"]);
    let good = write(home.path(), "a-good.json", GOOD);
    let no_picture = write(
        home.path(),
        "b-no-picture.json",
        &good_with_sku("NOPIC-1").replace(r#"["https://example.com/1.jpg"]"#, "[]"),
    );
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--dry-run", "--account", "seller-1", "--store"])
        .arg(&store)
        .args([&good, &no_picture]));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    let name = no_picture.display();
    assert!(
        stdout.contains(&format!(
            "{name}: inventoryItem.product.imageUrls: no picture"
        )),
        "{stdout}\n{stderr}"
    );
    let location = format!(
        "{name}: offer.merchantLocationKey: \"warehouse-1\" is not one of the seller's inventory locations (getInventoryLocations: none: the seller has no location yet); create it (createInventoryLocation)\n"
    );
    assert!(stdout.contains(&location), "{location}\n{stdout}\n{stderr}");
    assert!(!stdout.contains("name one of these"), "{stdout}");
}

/// A run whose unpublished files were all refused (not failed) says to fix them: rerunning
/// as it is would refuse them again, so "rerun to carry on" would mislead.
#[test]
fn a_run_whose_unpublished_files_are_all_refused_says_to_fix_them_not_to_rerun() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    let good = write(home.path(), "a-good.json", GOOD);
    let no_picture = write(
        home.path(),
        "b-no-picture.json",
        &good_with_sku("NOPIC-1").replace(r#"["https://example.com/1.jpg"]"#, "[]"),
    );
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .args(["publish", "--account", "seller-1", "--store"])
        .arg(&store)
        .args([&good, &no_picture]));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("1 published") && stderr.contains("1 refused"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "1 of 2 listing file(s) not published (fix the files named above, then rerun)"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("rerun to carry on"), "{stderr}");
}

/// A seller consented as `seller-1` on a new fake, for the `listing stock` tests: the fake,
/// the commands' home directory and the refresh-token store.
fn stock_seller() -> (FakeMarketplace, tempfile::TempDir, PathBuf) {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let store = home.path().join("refresh.json");
    consented_store(&fake, &store, "seller-1");
    (fake, home, store)
}

/// Runs `listing stock --account seller-1 --store STORE --file HOME/stock.csv`, the file
/// holding `text`.
fn run_stock(
    fake: &FakeMarketplace,
    home: &Path,
    store: &Path,
    text: &str,
) -> (std::process::Output, String, String) {
    let file = write(home, "stock.csv", text);
    run(listing(fake, home)
        .args(["stock", "--account", "seller-1", "--store"])
        .arg(store)
        .arg("--file")
        .arg(&file))
}

/// `listing stock --file stock.csv`: a bad line refuses the file before anything is sent;
/// then each SKU's quantity (and price) through bulkUpdatePriceQuantity, one call for the
/// file, no inventory item written, a SKU eBay refuses printed with eBay's error (exit 1)
/// while the others are applied.
#[test]
fn listing_stock_sets_quantities_and_prices_from_a_csv_file_in_one_call() {
    let (fake, home, store) = stock_seller();
    let seller = fake.user().username;
    fake.add_listing(&seller, "CSV-1", 10, "5.00");
    fake.add_listing(&seller, "CSV-2", 10, "5.00");
    let stock = |text: &str| run_stock(&fake, home.path(), &store, text);
    let (output, _, stderr) = stock("sku,quantity,price\nCSV-1,4\nCSV-2,-3\n");
    assert!(!output.status.success());
    assert!(
        stderr.contains("stock.csv:3: SKU CSV-2: the quantity \"-3\""),
        "{stderr}"
    );
    assert!(
        fake.requests_to("/sell/inventory/v1/bulk_update_price_quantity")
            .is_empty()
    );

    let (output, stdout, stderr) = stock("sku,quantity,price\nCSV-1,4\nCSV-2,7,4.50\nCSV-3,1\n");
    assert!(!output.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("CSV-1: updated\nCSV-2: updated\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("CSV-3: eBay refused the change (400): ") && stdout.contains("25709"),
        "{stdout}"
    );
    assert_eq!(
        fake.requests_to("/sell/inventory/v1/bulk_update_price_quantity")
            .len(),
        1
    );
    assert!(
        !fake
            .requests()
            .iter()
            .any(|r| r.method == "PUT" && r.path.contains("/inventory_item/")),
        "no inventory item written"
    );
    let offers = |sku: &str| -> serde_json::Value {
        let api = crate::inventory_support::api(&fake);
        api.send(
            marketplace_client::api::ApiRequest::get("/sell/inventory/v1/offer").query("sku", sku),
        )
        .unwrap()
        .json()
        .unwrap()
    };
    assert_eq!(offers("CSV-1")["offers"][0]["availableQuantity"], 4);
    let two = offers("CSV-2");
    assert_eq!(two["offers"][0]["availableQuantity"], 7);
    assert_eq!(two["offers"][0]["pricingSummary"]["price"]["value"], "4.50");
}

/// `listing stock` changes quantities and prices through bulkUpdatePriceQuantity only: it
/// reads no snapshots directory, so neither a snapshots line on standard error nor a
/// directory that cannot be read stops it.
#[test]
fn listing_stock_reads_no_snapshots_directory() {
    let (fake, home, store) = stock_seller();
    fake.add_listing(&fake.user().username, "CSV-9", 10, "5.00");
    let file = write(home.path(), "stock.csv", "sku,quantity\nCSV-9,4\n");
    let (output, stdout, stderr) = run(listing(&fake, home.path())
        .arg("--dir")
        .arg(home.path().join("no-such-snapshots"))
        .args(["stock", "--account", "seller-1", "--store"])
        .arg(&store)
        .arg("--file")
        .arg(&file));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("CSV-9: updated\n"), "{stdout}");
    assert!(!stderr.contains("snapshots"), "{stderr}");
}

/// `listing stock`: a line changing only a price (its quantity left empty) is refused before
/// anything is sent, naming the file, the line and the SKU, and saying that every line sets the
/// quantity (bulkUpdatePriceQuantity sends the one the line gives).
#[test]
fn listing_stock_names_the_sku_of_a_line_without_a_quantity_and_says_a_price_change_needs_one() {
    let (fake, home, store) = stock_seller();
    let seller = fake.user().username;
    fake.add_listing(&seller, "CSV-1", 10, "5.00");
    fake.add_listing(&seller, "CSV-2", 10, "6.00");
    let (output, _, stderr) = run_stock(
        &fake,
        home.path(),
        &store,
        "sku,quantity,price\nCSV-1,4,4.50\nCSV-2,,5.50\n",
    );
    assert!(!output.status.success());
    assert!(
        stderr.contains(
            "stock.csv:3: SKU CSV-2: the quantity \"\" is not a whole number of 0 or more (every \
             line sets the quantity, a line changing only the price too"
        ),
        "{stderr}"
    );
    assert!(
        fake.requests_to("/sell/inventory/v1/bulk_update_price_quantity")
            .is_empty(),
        "nothing sent"
    );
}

/// `listing stock`: a price that is not an amount above 0 of at most two decimals (`inf`,
/// `NaN`, `1e3`, a negative one, three decimals), or one whose SKU's offers give no currency,
/// refuses the file, each named by file, line, SKU and value; nothing is sent (no price goes
/// out with an empty currency).
#[test]
fn listing_stock_refuses_a_price_not_in_two_decimals_or_without_a_currency_naming_line_sku_and_value()
 {
    let (fake, home, store) = stock_seller();
    let seller = fake.user().username;
    fake.add_listing(&seller, "CSV-1", 10, "5.00");
    let stock = |text: &str| run_stock(&fake, home.path(), &store, text);
    let (output, _, stderr) = stock(
        "sku,quantity,price\nCSV-1,1,inf\nCSV-1,1,NaN\nCSV-1,1,1e3\nCSV-1,1,-2\nCSV-1,1,4.505\n",
    );
    assert!(!output.status.success());
    for (line, value) in [(2, "inf"), (3, "NaN"), (4, "1e3"), (5, "-2"), (6, "4.505")] {
        assert!(
            stderr.contains(&format!(
                "stock.csv:{line}: SKU CSV-1: the price \"{value}\" is not an amount above 0 of \
                 at most 2 decimals"
            )),
            "{value}: {stderr}"
        );
    }
    assert!(
        stderr.contains("5 line(s) refused; nothing was sent"),
        "{stderr}"
    );

    // CSV-9 has no published offer: its price would have no currency.
    let (output, _, stderr) = stock("sku,quantity,price\nCSV-1,3,4.50\nCSV-9,1,3.00\n");
    assert!(!output.status.success());
    assert!(
        stderr.contains("stock.csv:3: SKU CSV-9: the price \"3.00\" not sent: no currency"),
        "{stderr}"
    );
    assert!(
        fake.requests_to("/sell/inventory/v1/bulk_update_price_quantity")
            .is_empty(),
        "nothing sent"
    );
}

#[test]
fn listing_stock_refuses_a_price_of_a_sku_whose_offers_are_in_two_currencies_and_sends_nothing() {
    // One SKU, an offer on EBAY_US (USD) and one on EBAY_GB (GBP): a price line sets every
    // offer's price, and 4.50 cannot be both 4.50 USD and 4.50 GBP.
    let (fake, home, store) = stock_seller();
    let seller = fake.user().username;
    fake.add_listing(&seller, "CSV-1", 10, "5.00");
    fake.add_listing_on("EBAY_GB", &seller, "CSV-1", 10, "4.00")
        .expect("the fake moves the second offer to EBAY_GB");
    let (output, _, stderr) = run_stock(
        &fake,
        home.path(),
        &store,
        "sku,quantity,price\nCSV-1,3,4.50\n",
    );
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains(
            "stock.csv:2: SKU CSV-1: the price \"4.50\" not sent: its offers are priced in GBP \
             and USD"
        ),
        "{stderr}"
    );
    assert!(
        fake.requests_to("/sell/inventory/v1/bulk_update_price_quantity")
            .is_empty(),
        "nothing sent"
    );

    // Without a price the line is the quantity alone, sent as before.
    let (output, _, stderr) =
        run_stock(&fake, home.path(), &store, "sku,quantity,price\nCSV-1,3,\n");
    assert!(output.status.success(), "{stderr}");
}

#[test]
fn listing_stock_reads_a_csv_file_that_starts_with_a_byte_order_mark() {
    // A spreadsheet's "CSV UTF-8" export starts the file with U+FEFF before the header.
    let (fake, home, store) = stock_seller();
    let seller = fake.user().username;
    fake.add_listing(&seller, "CSV-1", 10, "5.00");
    let (output, stdout, stderr) = run_stock(
        &fake,
        home.path(),
        &store,
        "\u{feff}sku,quantity,price\r\nCSV-1,4,4.50\r\n",
    );
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("CSV-1: updated\n"), "{stdout}");
    let api = crate::inventory_support::api(&fake);
    let offers: serde_json::Value = api
        .send(
            marketplace_client::api::ApiRequest::get("/sell/inventory/v1/offer")
                .query("sku", "CSV-1"),
        )
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(offers["offers"][0]["availableQuantity"], 4);
    assert_eq!(
        offers["offers"][0]["pricingSummary"]["price"]["value"],
        "4.50"
    );
}

#[test]
fn listing_stock_refuses_a_sku_on_two_lines_with_other_values_naming_both_lines() {
    // A file merged from two sources: CSV-1 at 4 and at 9. Which is meant is not known, so
    // nothing is sent; the same line twice is one change.
    let (fake, home, store) = stock_seller();
    let seller = fake.user().username;
    fake.add_listing(&seller, "CSV-1", 10, "5.00");
    fake.add_listing(&seller, "CSV-2", 10, "5.00");
    let stock = |text: &str| run_stock(&fake, home.path(), &store, text);
    let (output, _, stderr) = stock("sku,quantity,price\nCSV-1,4\nCSV-2,3\nCSV-1,9\n");
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("stock.csv:4: SKU CSV-1 is on line 2 too, with another quantity or price"),
        "{stderr}"
    );
    assert!(
        stderr.contains("1 line(s) refused; nothing was sent"),
        "{stderr}"
    );
    assert!(
        fake.requests_to("/sell/inventory/v1/bulk_update_price_quantity")
            .is_empty(),
        "nothing sent"
    );
    let (output, stdout, stderr) = stock("sku,quantity,price\nCSV-1,4,4.50\nCSV-1,4,4.50\n");
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("CSV-1: updated\n"), "{stdout}");
}
