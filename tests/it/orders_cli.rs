//! The `orders` command end to end against the fake marketplace over loopback: `sync` prints
//! each order bought once (a JSON line, eBay's order), a rerun prints nothing, a changed
//! order is printed again (a cancellation with its cancel requests, which only getOrder
//! gives); `--dir` writes one file per order; `show` prints getOrder's answer; a consent
//! without `sell.fulfillment`, no consent, or a service that cannot be reached is one error
//! and exit code 1.

use crate::common;
use crate::oauth_support as support;

use std::path::Path;
use std::process::{Command, Output};
use std::sync::Arc;

use fake_marketplace::FakeMarketplace;
use marketplace_client::oauth::{FileStore, ScopeSet, UserTokenProvider};
use serde_json::Value;
use support::*;

/// The seller of the fake's consent page, whose listings the buyers buy.
const SELLER: &str = "fake_seller";

/// `orders` with the fake's settings, its home (token store, feed state) in `home`.
pub(crate) fn orders(fake: &FakeMarketplace, home: &Path) -> Command {
    let mut cmd = common::clean_command(env!("CARGO_BIN_EXE_orders"));
    cmd.env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_STATE_HOME", home.join("state"))
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

/// The refresh-token file `consent` leaves in `home` (the default one), with the account
/// `seller-1`'s consent to `scopes` (suffixes of the fake's `{base_url}/oauth/api_scope`).
pub(crate) fn consent(fake: &FakeMarketplace, home: &Path, scopes: &[&str]) {
    let path = home
        .join("config")
        .join("marketplace-toolkit")
        .join("refresh-tokens.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let client = Arc::new(client(fake));
    let request = client
        .consent_request(&ScopeSet::new(scopes.iter().map(|s| fake.scope(s))))
        .unwrap();
    let code = request.complete(&consent_redirect(fake, &request)).unwrap();
    UserTokenProvider::new(client, Arc::new(FileStore::new(path)), "seller-1")
        .exchange_code(&code, request.scopes())
        .unwrap();
}

/// The JSON lines of `stdout`, each an order.
fn printed(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn ids(orders: &[Value]) -> Vec<String> {
    let mut ids: Vec<String> = orders
        .iter()
        .map(|o| o["orderId"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    ids
}

/// The error lines of `stderr` (a line that starts with `error:`).
fn errors(stderr: &str) -> usize {
    stderr.lines().filter(|l| l.starts_with("error:")).count()
}

fn sync(fake: &FakeMarketplace, home: &Path) -> (Output, String, String) {
    run(orders(fake, home).args(["sync", "--account", "seller-1"]))
}

#[test]
fn orders_sync_prints_each_order_once_and_a_rerun_prints_only_the_changed_ones() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    consent(&fake, home.path(), &["/sell.fulfillment"]);
    let listing = fake.add_listing(SELLER, "MUG-1", 10, "12.00");
    let mut bought: Vec<String> = (0..3).map(|_| fake.buy(&listing, 1).unwrap()).collect();
    bought.sort();

    let (output, stdout, stderr) = sync(&fake, home.path());
    assert!(output.status.success(), "{stderr}");
    let first = printed(&stdout);
    assert_eq!(ids(&first), bought, "{stdout}");
    assert!(
        first.iter().all(|o| o["lineItems"][0]["sku"] == "MUG-1"),
        "{stdout}"
    );
    assert!(stderr.contains("3 new or changed order(s)"), "{stderr}");

    // Nothing changed: nothing printed.
    let (output, stdout, stderr) = sync(&fake, home.path());
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "", "{stderr}");
    assert!(stderr.contains("0 new or changed order(s)"), "{stderr}");

    // A buyer asks to cancel one: printed again, with the cancel request getOrder gives.
    fake.cancel_order(&bought[1]).unwrap();
    let (output, stdout, stderr) = sync(&fake, home.path());
    assert!(output.status.success(), "{stderr}");
    let changed = printed(&stdout);
    assert_eq!(ids(&changed), [bought[1].clone()], "{stdout}");
    let before = first.iter().find(|o| o["orderId"] == bought[1]).unwrap();
    assert_ne!(changed[0]["lastModifiedDate"], before["lastModifiedDate"]);
    assert_eq!(changed[0]["cancelStatus"]["cancelState"], "IN_PROGRESS");
    assert_eq!(
        changed[0]["cancelStatus"]["cancelRequests"][0]["cancelInitiator"], "BUYER",
        "{stdout}"
    );
}

#[test]
fn orders_sync_with_dir_writes_each_order_to_its_own_file() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    consent(&fake, home.path(), &["/sell.fulfillment"]);
    let listing = fake.add_listing(SELLER, "LAMP-1", 5, "30.00");
    let one = fake.buy(&listing, 2).unwrap();
    let two = fake.buy(&listing, 1).unwrap();
    let dir = home.path().join("orders");

    let (output, stdout, stderr) = run(orders(&fake, home.path())
        .args(["sync", "--account", "seller-1", "--dir"])
        .arg(&dir));
    assert!(output.status.success(), "{stderr}");
    assert_eq!(stdout, "");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let mut expected = vec![format!("{one}.json"), format!("{two}.json")];
    expected.sort();
    assert_eq!(files, expected);
    let written: Value =
        serde_json::from_slice(&std::fs::read(dir.join(format!("{one}.json"))).unwrap()).unwrap();
    assert_eq!(written["orderId"], one.as_str());
    assert_eq!(written["lineItems"][0]["quantity"], 2);
}

#[test]
fn orders_show_prints_the_order_as_get_order_answers_it() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    consent(&fake, home.path(), &["/sell.fulfillment.readonly"]);
    let listing = fake.add_listing(SELLER, "RUG-1", 5, "80.00");
    let id = fake.buy(&listing, 1).unwrap();
    fake.cancel_order(&id).unwrap();

    let (output, stdout, stderr) =
        run(orders(&fake, home.path()).args(["show", &id, "--account", "seller-1"]));
    assert!(output.status.success(), "{stderr}");
    let shown: Value = serde_json::from_str(&stdout).unwrap();
    let answered = fake.order(&id).unwrap();
    assert_eq!(shown["orderId"], answered["orderId"]);
    assert_eq!(shown["lastModifiedDate"], answered["lastModifiedDate"]);
    assert_eq!(shown["cancelStatus"], answered["cancelStatus"], "{stdout}");

    // An order the seller has not got: getOrder's 404, said once.
    let (output, stdout, stderr) =
        run(orders(&fake, home.path()).args(["show", "99-99999-99999", "--account", "seller-1"]));
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert_eq!(stdout, "");
    assert_eq!(errors(&stderr), 1, "{stderr}");
    assert!(stderr.contains("99-99999-99999"), "{stderr}");
}

#[test]
fn orders_refuses_a_consent_without_sell_fulfillment_before_sending_anything() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    consent(&fake, home.path(), &["/sell.inventory"]);
    let listing = fake.add_listing(SELLER, "HAT-1", 5, "15.00");
    fake.buy(&listing, 1).unwrap();
    let sent = fake.requests().len();

    for args in [
        &["sync", "--account", "seller-1"][..],
        &["show", "01-00000-00001", "--account", "seller-1"],
    ] {
        let (output, stdout, stderr) = run(orders(&fake, home.path()).args(args));
        assert_eq!(output.status.code(), Some(1), "{stdout}");
        assert_eq!(stdout, "");
        assert_eq!(errors(&stderr), 1, "{stderr}");
        assert!(
            stderr.contains("https://api.ebay.com/oauth/api_scope/sell.fulfillment")
                && stderr.contains("--for orders")
                && stderr.contains("nothing was sent"),
            "{stderr}"
        );
    }
    assert_eq!(fake.requests().len(), sent, "{:?}", fake.requests());
}

#[test]
fn orders_sync_without_a_stored_consent_or_a_reachable_service_says_so_once() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    let (output, stdout, stderr) = sync(&fake, home.path());
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert_eq!(errors(&stderr), 1, "{stderr}");
    assert!(
        stderr.contains("no consent is stored for account \"seller-1\"")
            && stderr.contains("--for orders"),
        "{stderr}"
    );

    // The service gone (the fake stopped, its port closed): one error, no order printed.
    consent(&fake, home.path(), &["/sell.fulfillment"]);
    let mut cmd = orders(&fake, home.path());
    drop(fake);
    let (output, stdout, stderr) = run(cmd.args(["sync", "--account", "seller-1"]));
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert_eq!(stdout, "");
    assert_eq!(errors(&stderr), 1, "{stderr}");
    assert!(
        stderr.contains("seller-1") && stderr.contains("cannot reach"),
        "{stderr}"
    );
}
