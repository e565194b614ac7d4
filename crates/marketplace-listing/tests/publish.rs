//! Publishing against the fake marketplace over loopback HTTP: a typed listing goes out, the
//! offline check sends nothing, the fake refuses as eBay does, a crash between createOffer and
//! publishOffer and a rerun give one offer and one listing, and 100 listings go through the bulk
//! calls.

use std::time::Duration;

use fake_marketplace::{FakeMarketplace, Fault};
use marketplace_client::api::ApiRequest;
use marketplace_listing::blocking::Inventory;
use marketplace_listing::{Condition, ErrorKind, Listing, ListingBuilder, ListingError};
use marketplaces::Marketplace;
use taxonomy_macros::{aspects, category};

#[path = "../../../tests/common/inventory.rs"]
mod fake_inventory;
use fake_inventory::{api, inventory};

const OFFER: &str = "/sell/inventory/v1/offer";

fn desktop(sku: &str) -> Listing {
    ListingBuilder::new(
        sku,
        category!(EBAY_US, "179"),
        aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "MPN": "7010" }),
    )
    .title("Dell OptiPlex 7010")
    .condition(Condition::UsedExcellent)
    .quantity(3)
    .price("149.00")
    .policies("f", "p", "r")
    .merchant_location_key("warehouse-1")
    .build()
    .unwrap()
}

fn ids(e: &ListingError) -> Vec<u32> {
    e.errors().iter().map(|e| e.error.error_id).collect()
}

#[test]
fn a_listing_built_from_category_and_aspects_publishes_and_returns_a_listing_id() {
    let fake = FakeMarketplace::new();
    let published = inventory(&fake).publish(&desktop("DESKTOP-1")).unwrap();
    assert!(!published.listing_id.is_empty());
    // Published again: the same listing.
    let again = inventory(&fake).publish(&desktop("DESKTOP-1")).unwrap();
    assert_eq!(again, published);
    let offers = inventory(&fake)
        .get_offers("DESKTOP-1", Marketplace::Us)
        .unwrap();
    assert_eq!(offers.len(), 1);
    assert_eq!(offers[0].status.as_deref(), Some("PUBLISHED"));
}

#[test]
fn a_listing_the_check_refuses_sends_no_request() {
    let fake = FakeMarketplace::new();
    let mut listing = desktop("DESKTOP-1");
    listing
        .offer
        .pricing_summary
        .as_mut()
        .unwrap()
        .price
        .as_mut()
        .unwrap()
        .currency = "EUR".into();
    let e = inventory(&fake).publish(&listing).unwrap_err();
    let ListingError::Refused(problems) = e else {
        panic!("{e}")
    };
    assert_eq!(problems.0[0].field, "offer.pricingSummary.price.currency");
    assert!(fake.requests().is_empty(), "{:?}", fake.requests());
}

#[test]
fn the_fake_refuses_as_ebay_does_naming_what_is_wrong() {
    let fake = FakeMarketplace::new();
    let inventory = inventory(&fake);
    // A missing required aspect: 25002 naming it.
    let mut listing = desktop("NO-BRAND");
    listing
        .inventory_item
        .product
        .as_mut()
        .unwrap()
        .aspects
        .remove("Brand");
    inventory
        .create_or_replace_inventory_item("NO-BRAND", Marketplace::Us, &listing.inventory_item)
        .unwrap();
    let offer_id = inventory.create_offer(&listing.offer).unwrap();
    let e = inventory.publish_offer(&offer_id).unwrap_err();
    assert_eq!(
        e.errors()[0].kind,
        ErrorKind::User {
            aspect: Some("Brand".into()),
            offer_id: None
        },
        "{e}"
    );
    // A second createOffer for the same SKU and marketplace: 25002 with the existing offerId.
    let e = inventory.create_offer(&listing.offer).unwrap_err();
    assert_eq!(
        e.errors()[0].kind,
        ErrorKind::User {
            aspect: None,
            offer_id: Some(offer_id.clone())
        }
    );
    // The wrong currency: 25003.
    let mut offer = desktop("NO-BRAND").offer;
    offer
        .pricing_summary
        .as_mut()
        .unwrap()
        .price
        .as_mut()
        .unwrap()
        .currency = "EUR".into();
    inventory
        .create_or_replace_inventory_item(
            "NO-BRAND",
            Marketplace::Us,
            &desktop("NO-BRAND").inventory_item,
        )
        .unwrap();
    inventory.update_offer(&offer_id, &offer).unwrap();
    assert_eq!(
        ids(&inventory.publish_offer(&offer_id).unwrap_err()),
        [25003]
    );
    // A category with children: 25005.
    offer.category_id = Some("58058".into());
    offer
        .pricing_summary
        .as_mut()
        .unwrap()
        .price
        .as_mut()
        .unwrap()
        .currency = "USD".into();
    inventory.update_offer(&offer_id, &offer).unwrap();
    let e = inventory.publish_offer(&offer_id).unwrap_err();
    assert_eq!(ids(&e), [25005]);
    assert_eq!(e.errors()[0].kind, ErrorKind::Category);
    // No Content-Language: 25709.
    let e = api(&fake)
        .send(
            ApiRequest::put_segments(["sell", "inventory", "v1", "inventory_item", "X1"])
                .json(&serde_json::json!({})),
        )
        .unwrap_err();
    assert_eq!(ids(&ListingError::from(e)), [25709]);
}

#[test]
fn a_crash_between_create_offer_and_publish_offer_then_a_rerun_give_one_offer_and_one_listing() {
    let fake = FakeMarketplace::new();
    let listing = desktop("CRASH-1");
    // The first process sends the item and creates the offer; publishOffer then fails once
    // (a 500 with eBay's 25025) and the process gives up there: the crash.
    let body = serde_json::json!({"errors": [{"errorId": 25025, "domain": "API_INVENTORY",
        "category": "APPLICATION", "message": "Concurrent access of the same Inventory or Inventory Item Group. Please try again later."}]});
    let first = inventory(&fake);
    first
        .create_or_replace_inventory_item("CRASH-1", Marketplace::Us, &listing.inventory_item)
        .unwrap();
    let offer_id = first.create_offer(&listing.offer).unwrap();
    fake.fail_next(
        &format!("{OFFER}/{offer_id}/publish"),
        Fault::Status {
            status: 500,
            body: body.to_string(),
            headers: vec![("Content-Type".into(), "application/json".into())],
        },
    );
    let e = first.publish_offer(&offer_id).unwrap_err();
    assert_eq!(e.errors()[0].kind, ErrorKind::ConcurrentAccess);
    drop(first);

    // The rerun: a new process publishes the listing from the start.
    let published = inventory(&fake).publish(&listing).unwrap();
    assert_eq!(
        published.offer_id, offer_id,
        "the offer created before the crash"
    );
    let offers = inventory(&fake)
        .get_offers("CRASH-1", Marketplace::Us)
        .unwrap();
    assert_eq!(offers.len(), 1, "one offer");
    let again = inventory(&fake).publish(&listing).unwrap();
    assert_eq!(again.listing_id, published.listing_id, "one listing");
    let creates = fake
        .requests_to(OFFER)
        .iter()
        .filter(|r| r.method == "POST")
        .count();
    assert_eq!(creates, 1, "createOffer was sent once");
}

#[test]
fn a_system_error_25001_is_retried_and_the_existing_offer_is_used() {
    let fake = FakeMarketplace::new();
    let listing = desktop("LOST-1");
    let first = inventory(&fake);
    first
        .create_or_replace_inventory_item("LOST-1", Marketplace::Us, &listing.inventory_item)
        .unwrap();
    let offer_id = first.create_offer(&listing.offer).unwrap();
    // getOffers fails once as eBay's 25001, retried by publish.
    fake.fail_next(
        OFFER,
        Fault::Status {
            status: 500,
            body: r#"{"errors":[{"errorId":25001,"domain":"API_INVENTORY","category":"APPLICATION","message":"A system error has occurred."}]}"#.into(),
            headers: vec![("Content-Type".into(), "application/json".into())],
        },
    );
    let published = Inventory::new(api(&fake))
        .with_retries(2, Duration::from_millis(1))
        .publish(&listing)
        .unwrap();
    assert_eq!(published.offer_id, offer_id);
}

#[test]
fn a_hundred_listings_publish_through_the_bulk_calls() {
    let fake = FakeMarketplace::new();
    let listings: Vec<Listing> = (0..100).map(|i| desktop(&format!("BULK-{i}"))).collect();
    let results = inventory(&fake).publish_many(&listings);
    let published: Vec<_> = results.into_iter().map(|r| r.unwrap()).collect();
    let mut listing_ids: Vec<&str> = published.iter().map(|p| p.listing_id.as_str()).collect();
    listing_ids.sort();
    listing_ids.dedup();
    assert_eq!(listing_ids.len(), 100);
    for path in [
        "/sell/inventory/v1/bulk_create_or_replace_inventory_item",
        "/sell/inventory/v1/bulk_create_offer",
        "/sell/inventory/v1/bulk_publish_offer",
    ] {
        assert_eq!(fake.requests_to(path).len(), 4, "{path}: 25 a call");
    }
    // Rerun: the same listings, no second offer.
    let again: Vec<_> = inventory(&fake)
        .publish_many(&listings)
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(again, published);
}

/// Whether `result` is eBay's answer (a success or its error body), not a call that got none.
fn answered<T: std::fmt::Debug>(result: &Result<T, ListingError>) -> bool {
    match result {
        Ok(_) | Err(ListingError::Inventory { .. }) => true,
        Err(_) => false,
    }
}

#[test]
fn publish_offer_racing_delete_inventory_item_always_gets_an_answer() {
    let fake = FakeMarketplace::new();
    let publisher = inventory(&fake);
    let deleter = inventory(&fake);
    let listing = desktop("RACE-1");
    let mut unanswered = Vec::new();
    for round in 0..300 {
        publisher
            .create_or_replace_inventory_item("RACE-1", Marketplace::Us, &listing.inventory_item)
            .unwrap();
        let offer_id = publisher.create_offer(&listing.offer).unwrap();
        let barrier = std::sync::Barrier::new(2);
        let (published, deleted) = std::thread::scope(|s| {
            let publish = s.spawn(|| {
                barrier.wait();
                publisher.publish_offer(&offer_id)
            });
            let delete = s.spawn(|| {
                barrier.wait();
                deleter.delete_inventory_item("RACE-1")
            });
            (publish.join().unwrap(), delete.join().unwrap())
        });
        if !answered(&published) {
            unanswered.push(format!("round {round}: publishOffer: {published:?}"));
        }
        if !answered(&deleted) {
            unanswered.push(format!("round {round}: deleteInventoryItem: {deleted:?}"));
        }
    }
    assert!(
        unanswered.is_empty(),
        "{} without an answer: {unanswered:#?}",
        unanswered.len()
    );
}
