//! `orders ship` end to end against the fake marketplace over loopback: run twice it makes one
//! fulfillment and says the second time that it was already there; killed with SIGKILL while
//! each of its calls is under way (the token, getShippingFulfillments, createShippingFulfillment)
//! and run again, the order's line items get one fulfillment with that tracking number; a
//! consent with only the read-only scope is refused before anything is sent.
#![cfg(unix)]

use crate::common;
use std::process::Stdio;
use std::time::Duration;

use fake_marketplace::fulfillments::fulfillments_path;
use fake_marketplace::{FakeMarketplace, Fault, FaultRule, TOKEN_PATH};

// `orders`, its run and a seller's consent, as orders_cli.rs sets them up.
use crate::orders_cli::{consent, orders, run};

/// An order of `quantity` of one listing of the fake's seller: its id and its line item's.
fn order_of(fake: &FakeMarketplace, quantity: u32) -> (String, String) {
    let listing = fake.add_listing("fake_seller", "MUG-1", 100, "12.00");
    let order_id = fake.buy(&listing, quantity).unwrap();
    let line = fake.order(&order_id).unwrap()["lineItems"][0]["lineItemId"]
        .as_str()
        .unwrap()
        .to_owned();
    (order_id, line)
}

fn ship_args(order_id: &str, extra: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = [
        "ship",
        order_id,
        "--account",
        "seller-1",
        "--tracking",
        "9400111899223",
        "--carrier",
        "USPS",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

#[test]
fn orders_ship_run_twice_makes_one_fulfillment_and_says_the_second_time_it_was_there() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    consent(&fake, home.path(), &["/sell.fulfillment"]);
    let (order_id, _) = order_of(&fake, 2);

    let (output, stdout, stderr) = run(orders(&fake, home.path()).args(ship_args(&order_id, &[])));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout.trim(),
        format!("order {order_id}: fulfillment 9400111899223 created")
    );
    let (output, stdout, stderr) = run(orders(&fake, home.path()).args(ship_args(&order_id, &[])));
    assert!(output.status.success(), "{stdout}\n{stderr}");
    assert_eq!(
        stdout.trim(),
        format!("order {order_id}: fulfillment 9400111899223 already there (nothing created)")
    );
    let made = fake.shipping_fulfillments(&order_id);
    assert_eq!(made.len(), 1, "{made:?}");
    assert_eq!(made[0]["lineItems"][0]["quantity"], 2);
    assert_eq!(
        fake.order(&order_id).unwrap()["orderFulfillmentStatus"],
        "FULFILLED"
    );
}

#[test]
fn orders_ship_killed_at_each_of_its_calls_and_run_again_makes_one_fulfillment() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    consent(&fake, home.path(), &["/sell.fulfillment"]);
    // Each call of a run, in the order it makes them. One of three shipped: a second POST
    // would be taken, so only the reads keep a rerun from shipping twice.
    let steps = |order_id: &str| {
        vec![
            ("POST", TOKEN_PATH.to_owned()),
            ("GET", fulfillments_path(order_id)),
            ("POST", fulfillments_path(order_id)),
        ]
    };
    for step in 0..3 {
        let (order_id, line) = order_of(&fake, 3);
        let item = format!("{line}:1");
        let (method, path) = steps(&order_id)[step].clone();
        let before = fake.requests().len();
        fake.inject(FaultRule {
            method: Some(method.into()),
            path: Some(path.clone()),
            times: Some(1),
            fault: Fault::Delay(Duration::from_secs(2)),
        });
        let child = orders(&fake, home.path())
            .args(ship_args(&order_id, &["--line-item", &item]))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The call the run was killed in finishes on the fake's side (as eBay's would).
        common::kill_during_call(
            &fake,
            child,
            (method, &path),
            before,
            &format!("step {step}"),
        );

        let (output, stdout, stderr) =
            run(orders(&fake, home.path()).args(ship_args(&order_id, &["--line-item", &item])));
        assert!(output.status.success(), "step {step}: {stdout}\n{stderr}");
        let made = fake.shipping_fulfillments(&order_id);
        assert_eq!(made.len(), 1, "step {step}: {made:?}");
        assert_eq!(made[0]["shipmentTrackingNumber"], "9400111899223");
        assert_eq!(made[0]["lineItems"][0]["quantity"], 1);
        let said = if step == 2 {
            "already there (nothing created)"
        } else {
            "created"
        };
        assert!(stdout.contains(said), "step {step}: {stdout}");
        assert_eq!(
            fake.order(&order_id).unwrap()["orderFulfillmentStatus"],
            "IN_PROGRESS"
        );
    }
}

#[test]
fn orders_ship_refuses_a_read_only_consent_before_sending_anything() {
    let fake = FakeMarketplace::new();
    let home = tempfile::tempdir().unwrap();
    consent(&fake, home.path(), &["/sell.fulfillment.readonly"]);
    let (order_id, _) = order_of(&fake, 1);
    let before = fake.requests().len();
    let (output, stdout, stderr) = run(orders(&fake, home.path()).args(ship_args(&order_id, &[])));
    assert_eq!(output.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("createShippingFulfillment needs") && stderr.contains("nothing was sent"),
        "{stderr}"
    );
    assert_eq!(fake.requests().len(), before);
}
