//! Stock and prices against the fake marketplace over loopback HTTP: bulkUpdatePriceQuantity,
//! many changes coalesced into few calls, what is equal not sent, a SKU's failure reported
//! while the rest is applied, eBay's 250 revisions of a listing a day (counted by the client,
//! and by the fake when the client's count is bypassed), the stock left after a sale pushed to
//! every offer of its SKU.

use fake_marketplace::FakeMarketplace;
use marketplace_listing::stock::{
    MemoryRevisions, OfferPriceQuantity, PriceQuantity, REVISIONS_A_DAY, StockError, StockState,
    StockUpdate,
};
use marketplaces::Marketplace;

use crate::fake_inventory;
use fake_inventory::inventory;

const UPDATE: &str = "/sell/inventory/v1/bulk_update_price_quantity";

/// The requests the fake received that write an inventory item (createOrReplaceInventoryItem
/// or its bulk form).
fn item_writes(fake: &FakeMarketplace) -> usize {
    fake.requests()
        .iter()
        .filter(|r| {
            (r.method == "PUT" && r.path.starts_with("/sell/inventory/v1/inventory_item/"))
                || r.path == "/sell/inventory/v1/bulk_create_or_replace_inventory_item"
        })
        .count()
}

/// The offers' available quantities and the item's quantity of `sku`, as eBay holds them.
fn held(fake: &FakeMarketplace, sku: &str) -> (Vec<u64>, Option<u64>) {
    let inventory = inventory(fake);
    let offers = inventory.get_offers(sku, Marketplace::Us).unwrap();
    let item = inventory.get_inventory_item(sku).unwrap();
    (
        offers
            .iter()
            .map(|o| {
                o.offer
                    .available_quantity
                    .as_ref()
                    .unwrap()
                    .as_u64()
                    .unwrap()
            })
            .collect(),
        item.availability
            .and_then(|a| a.ship_to_location_availability)
            .and_then(|s| s.quantity)
            .and_then(|q| q.as_u64()),
    )
}

#[test]
fn ten_thousand_quantity_changes_for_two_thousand_skus_take_a_call_per_25_skus_and_no_item_write() {
    let fake = FakeMarketplace::new();
    let seller = fake.user().username;
    let skus: Vec<String> = (0..2_000).map(|i| format!("SKU-{i:04}")).collect();
    for sku in &skus {
        fake.add_listing(&seller, sku, 10, "5.00");
    }
    let inventory = inventory(&fake);
    let mut state = StockState::default();
    let refs: Vec<&str> = skus.iter().map(String::as_str).collect();
    assert!(inventory.read_stock(&refs, &mut state).is_empty());
    fake.clear_requests();

    let mut update = StockUpdate::new();
    for round in 0..5u32 {
        for (i, sku) in skus.iter().enumerate() {
            // The last change of each SKU wins: 20 + i % 7, never the 10 eBay holds.
            update.set_quantity(sku, 100 * (4 - round) + 20 + (i % 7) as u32);
        }
    }
    assert_eq!(update.changes(), 10_000);
    let revisions = MemoryRevisions::default();
    let report = inventory.update_stock(&update, &mut state, &revisions);
    assert!(report.failed.is_empty(), "{:?}", report.failed.first());
    assert_eq!(report.applied.len(), 2_000);
    let calls = fake.requests().len();
    assert!(calls <= 10_000 / 25, "{calls} calls for 10,000 changes");
    assert_eq!(fake.requests_to(UPDATE).len(), 2_000 / 25);
    assert_eq!(report.calls, 80);
    assert_eq!(item_writes(&fake), 0, "no inventory item written");
    for (i, sku) in skus.iter().enumerate().step_by(397) {
        let want = 20 + (i % 7) as u64;
        assert_eq!(held(&fake, sku), (vec![want], Some(want)), "{sku}");
    }

    // The same batch again: eBay already holds it, nothing is sent.
    fake.clear_requests();
    let again = inventory.update_stock(&update, &mut state, &revisions);
    assert_eq!(again.unchanged.len(), 2_000);
    assert_eq!(again.calls, 0);
    assert!(fake.requests().is_empty(), "{:?}", fake.requests().first());
}

#[test]
fn what_ebay_already_holds_is_not_sent_and_only_what_differs_is() {
    let fake = FakeMarketplace::new();
    let seller = fake.user().username;
    fake.add_listing(&seller, "SAME", 4, "9.99");
    fake.add_listing(&seller, "PRICE", 4, "9.99");
    let inventory = inventory(&fake);
    let mut state = StockState::default();
    let mut update = StockUpdate::new();
    update
        .set_quantity("SAME", 4)
        .set_price("SAME", "9.99", "USD")
        .set_quantity("PRICE", 4)
        .set_price("PRICE", "8.49", "USD");
    let report = inventory.update_stock(&update, &mut state, &MemoryRevisions::default());
    assert_eq!(report.unchanged, ["SAME"]);
    assert_eq!(report.applied, ["PRICE"]);
    let sent = fake.requests_to(UPDATE);
    assert_eq!(sent.len(), 1);
    let body: serde_json::Value = serde_json::from_slice(&sent[0].body).unwrap();
    let requests = body["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 1, "{body}");
    assert_eq!(requests[0]["sku"], "PRICE");
    assert!(
        requests[0].get("shipToLocationAvailability").is_none(),
        "{body}"
    );
    assert_eq!(requests[0]["offers"][0]["price"]["value"], "8.49");
    assert!(
        requests[0]["offers"][0].get("availableQuantity").is_none(),
        "{body}"
    );
}

#[test]
fn a_skus_refused_change_is_reported_with_ebays_error_and_the_others_are_applied() {
    let fake = FakeMarketplace::new();
    let seller = fake.user().username;
    for sku in ["A", "B", "C"] {
        fake.add_listing(&seller, sku, 3, "5.00");
    }
    let inventory = inventory(&fake);
    let mut state = StockState::default();
    let mut update = StockUpdate::new();
    update
        .set_quantity("A", 8)
        .set_price("B", "0.00", "USD")
        .set_quantity("C", 9);
    let report = inventory.update_stock(&update, &mut state, &MemoryRevisions::default());
    assert_eq!(report.applied, ["A", "C"]);
    assert_eq!(report.calls, 1);
    let [
        (
            sku,
            StockError::Refused {
                errors, message, ..
            },
        ),
    ] = &report.failed[..]
    else {
        panic!("{:?}", report.failed);
    };
    assert_eq!(sku, "B");
    assert_eq!(errors[0].error.error_id, 25709);
    assert!(message.contains("price"), "{message}");
    assert_eq!(held(&fake, "A"), (vec![8], Some(8)));
    assert_eq!(held(&fake, "C"), (vec![9], Some(9)));
}

#[test]
fn the_251st_revision_of_a_listing_in_a_day_is_refused_locally_before_any_request() {
    let fake = FakeMarketplace::new();
    let seller = fake.user().username;
    let listing = fake.add_listing(&seller, "BUSY", 1_000, "5.00");
    let inventory = inventory(&fake);
    let mut state = StockState::default();
    let revisions = MemoryRevisions::default();
    for n in 0..REVISIONS_A_DAY {
        let mut update = StockUpdate::new();
        update.set_quantity("BUSY", 500 + n);
        let report = inventory.update_stock(&update, &mut state, &revisions);
        assert_eq!(
            report.applied,
            ["BUSY"],
            "revision {n}: {:?}",
            report.failed
        );
    }
    assert_eq!(fake.requests_to(UPDATE).len(), 250);
    let mut update = StockUpdate::new();
    update.set_quantity("BUSY", 1);
    let report = inventory.update_stock(&update, &mut state, &revisions);
    let [
        (
            _,
            e @ StockError::RevisionLimit {
                listing_id,
                revisions,
                ..
            },
        ),
    ] = &report.failed[..]
    else {
        panic!("{:?}", report.failed);
    };
    assert_eq!(listing_id, &listing);
    assert_eq!(*revisions, 250);
    assert!(e.to_string().contains(&listing), "{e}");
    assert_eq!(fake.requests_to(UPDATE).len(), 250, "nothing sent");
    assert_eq!(held(&fake, "BUSY").0, vec![749]);
}

#[test]
fn the_fake_refuses_the_251st_revision_of_a_listing_when_the_clients_count_is_bypassed() {
    let fake = FakeMarketplace::new();
    let seller = fake.user().username;
    fake.add_listing(&seller, "BYPASS", 1_000, "5.00");
    let inventory = inventory(&fake);
    let offer_id = inventory.get_offers("BYPASS", Marketplace::Us).unwrap()[0]
        .offer_id
        .clone();
    let request = |q| PriceQuantity {
        sku: Some("BYPASS".into()),
        offers: vec![OfferPriceQuantity {
            offer_id: offer_id.clone(),
            available_quantity: Some(q),
            price: None,
        }],
        ..PriceQuantity::default()
    };
    for n in 0..250 {
        let results = inventory.bulk_update_price_quantity(&[request(n)]).unwrap();
        assert_eq!(results[0].status_code, 200, "{n}: {results:?}");
    }
    let results = inventory.bulk_update_price_quantity(&[request(7)]).unwrap();
    assert_eq!(results[0].status_code, 400);
    assert_eq!(results[0].errors[0].error.error_id, 25002);
    assert_eq!(held(&fake, "BYPASS").0, vec![249]);

    // More requests than eBay takes in one call: the whole call is refused, 25709.
    let many: Vec<PriceQuantity> = (0..26).map(|_| PriceQuantity::default()).collect();
    let e = inventory.bulk_update_price_quantity(&many).unwrap_err();
    assert_eq!(e.errors()[0].error.error_id, 25709, "{e}");
}

#[test]
fn the_stock_left_after_a_sale_reaches_every_offer_of_the_sku_in_one_call() {
    let fake = FakeMarketplace::new();
    let seller = fake.user().username;
    // Two listings of one SKU (two offers); a buyer buys 2 of the first.
    let first = fake.add_listing(&seller, "TWICE", 10, "5.00");
    fake.add_listing(&seller, "TWICE", 10, "5.00");
    fake.buy(&first, 2).unwrap();
    let inventory = inventory(&fake);
    fake.clear_requests();
    // The application says 6 are left (it sold some elsewhere too).
    let report = inventory
        .push_stock_left("TWICE", 6, &MemoryRevisions::default())
        .unwrap();
    assert_eq!(report.applied, ["TWICE"]);
    assert_eq!(fake.requests_to(UPDATE).len(), 1);
    assert_eq!(item_writes(&fake), 0);
    assert_eq!(held(&fake, "TWICE"), (vec![6, 6], Some(6)));
}
