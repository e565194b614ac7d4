//! `fake-marketplace buy …` against a running fake over loopback: the listing's quantity goes
//! down, the order exists, a listing at 0 ends, and a purchase the fake refuses is said.

use std::process::Command;

use fake_marketplace::FakeMarketplace;

fn buy(fake: &FakeMarketplace, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_fake-marketplace"))
        .arg("buy")
        .args(args)
        .args(["--fake", &fake.base_url()])
        .env_remove("MARKETPLACE_BASE_URL")
        .output()
        .unwrap()
}

#[test]
fn the_buy_command_turns_a_published_listing_into_an_order_and_ends_it_at_zero() {
    let fake = FakeMarketplace::new();
    let listing = fake.add_listing("fake_seller", "MUG-1", 3, "12.50");
    let out = buy(
        &fake,
        &["--listing", &listing, "--quantity", "2", "--country", "DE"],
    );
    assert!(out.status.success(), "{out:?}");
    let order_id = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    let order = fake
        .order(&order_id)
        .expect("the order the command printed");
    assert_eq!(order["lineItems"][0]["legacyItemId"], listing.as_str());
    assert_eq!(order["lineItems"][0]["quantity"], 2);
    assert_eq!(order["pricingSummary"]["total"]["value"], "25.00");
    assert_eq!(order["buyer"]["taxAddress"]["countryCode"], "DE");
    assert_eq!(order["orderPaymentStatus"], "PAID");
    assert_eq!(order["sellerId"], "fake_seller");

    // One left: three is refused, naming the listing and what is left; one sells it out.
    let out = buy(&fake, &["--listing", &listing, "--quantity", "3"]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains(&format!("listing {listing} has 1 available, 3 asked")),
        "{said}"
    );
    let out = buy(&fake, &["--listing", &listing, "--payment", "PENDING"]);
    assert!(out.status.success(), "{out:?}");
    let pending = String::from_utf8(out.stdout).unwrap().trim().to_owned();
    assert_eq!(
        fake.order(&pending).unwrap()["orderPaymentStatus"],
        "PENDING"
    );
    let out = buy(&fake, &["--listing", &listing]);
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && said.contains("is not active"),
        "{said}"
    );
    // Without a listing: the usage, exit 2.
    let out = buy(&fake, &["--quantity", "1"]);
    assert_eq!(out.status.code(), Some(2));
}
