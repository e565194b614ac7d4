//! Publishing against the fake marketplace over loopback HTTP: a typed listing goes out, the
//! offline check sends nothing, the fake refuses as eBay does, a crash between createOffer and
//! publishOffer and a rerun give one offer and one listing, and 100 listings go through the bulk
//! calls.

use std::time::Duration;

use fake_marketplace::{FakeMarketplace, Fault};
use marketplace_client::api::ApiRequest;
use marketplace_listing::aio::Published;
use marketplace_listing::blocking::Inventory;
use marketplace_listing::{
    Condition, ErrorKind, Listing, ListingBuilder, ListingError, OtherFormat,
};
use marketplaces::Marketplace;
use serde_json::json;
use taxonomy_macros::{aspects, category};

use crate::fake_inventory;
use fake_inventory::{api, inventory};

const OFFER: &str = "/sell/inventory/v1/offer";

fn desktop(sku: &str) -> Listing {
    ListingBuilder::new(
        sku,
        category!(EBAY_US, "179"),
        aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "MPN": "7010" }),
    )
    .title("Dell OptiPlex 7010")
    .description("A Dell OptiPlex 7010 desktop, tested and working.")
    .image("https://example.com/1.jpg")
    .condition(Condition::UsedExcellent)
    .quantity(3)
    .price("149.00")
    .policies("f", "p", "r")
    .merchant_location_key("warehouse-1")
    .build()
    .unwrap()
}

/// `desktop(sku)` offered by auction: a 7-day auction starting at 99.00.
fn auction(sku: &str) -> Listing {
    let mut listing = desktop(sku);
    listing.offer.format = Some("AUCTION".into());
    price_of(&mut listing).value = "99.00".into();
    listing
        .offer
        .other
        .insert("listingDuration".into(), json!("DAYS_7"));
    listing
}

fn price_of(listing: &mut Listing) -> &mut marketplace_listing::Amount {
    listing
        .offer
        .pricing_summary
        .as_mut()
        .unwrap()
        .price
        .as_mut()
        .unwrap()
}

/// `listings` published again with `publish_many`: the same offers and listings as
/// `published`, each left alone (eBay holds them live as they are).
fn republished_unchanged(fake: &FakeMarketplace, listings: &[Listing], published: &[Published]) {
    let again: Vec<_> = inventory(fake)
        .publish_many(listings)
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    let ids = |p: &[Published]| -> Vec<(String, String)> {
        p.iter()
            .map(|p| (p.offer_id.clone(), p.listing_id.clone()))
            .collect()
    };
    assert_eq!(ids(&again), ids(published));
    assert!(again.iter().all(|p| p.unchanged), "{again:?}");
}

/// The updateOffer requests sent for `offer_id`.
fn updates(fake: &FakeMarketplace, offer_id: &str) -> usize {
    fake.requests_to(&format!("{OFFER}/{offer_id}"))
        .iter()
        .filter(|r| r.method == "PUT")
        .count()
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
    let inventory = inventory(&fake);
    // The seller's consent (the consent page, the code exchanged) is not the publish.
    fake.clear_requests();
    let e = inventory.publish(&listing).unwrap_err();
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
    // And bulkGetInventoryItem once a chunk: no SKU is in the inventory, so none has an offer
    // (live in the other format, or to update): no getOffers.
    assert_eq!(
        fake.requests_to("/sell/inventory/v1/bulk_get_inventory_item")
            .len(),
        4,
        "bulkGetInventoryItem: 25 SKUs a call"
    );
    let get_offers = fake
        .requests_to(OFFER)
        .iter()
        .filter(|r| r.method == "GET")
        .count();
    assert_eq!(get_offers, 0, "no getOffers of a SKU not in the inventory");
    // Rerun: the same listings, no second offer.
    republished_unchanged(&fake, &listings, &published);
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

#[test]
fn an_auction_and_a_fixed_price_offer_of_one_sku_are_both_published_each_with_its_own_offer() {
    let fake = FakeMarketplace::new();
    let listings = [desktop("BOTH-1"), auction("BOTH-1")];
    let published: Vec<_> = inventory(&fake)
        .publish_many(&listings)
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    assert_ne!(published[0].offer_id, published[1].offer_id, "two offers");
    assert_ne!(
        published[0].listing_id, published[1].listing_id,
        "two listings"
    );
    let each_has_its_own = |fake: &FakeMarketplace| {
        let offers = inventory(fake)
            .get_offers("BOTH-1", Marketplace::Us)
            .unwrap();
        assert_eq!(offers.len(), 2, "{offers:#?}");
        for (p, (format, price)) in published
            .iter()
            .zip([("FIXED_PRICE", "149.00"), ("AUCTION", "99.00")])
        {
            let offer = offers.iter().find(|o| o.offer_id == p.offer_id).unwrap();
            assert_eq!(offer.status.as_deref(), Some("PUBLISHED"));
            assert_eq!(offer.offer.format.as_deref(), Some(format));
            let held = offer.offer.pricing_summary.as_ref().unwrap();
            assert_eq!(held.price.as_ref().unwrap().value, price, "{format}");
        }
    };
    each_has_its_own(&fake);
    // The rerun: the same offers and listings, each with its own fields.
    republished_unchanged(&fake, &listings, &published);
    each_has_its_own(&fake);
}

#[test]
fn two_listings_of_one_offer_in_one_publish_many_are_both_refused_naming_each_other() {
    let fake = FakeMarketplace::new();
    let mut cheaper = desktop("TWICE-1");
    price_of(&mut cheaper).value = "129.00".into();
    let listings = [desktop("TWICE-1"), desktop("OTHER-1"), cheaper];
    let results = inventory(&fake).publish_many(&listings);
    for (i, others) in [(0, vec![2]), (2, vec![0])] {
        match &results[i] {
            Err(ListingError::Conflicting { sku, others: o, .. }) => {
                assert_eq!(sku, "TWICE-1");
                assert_eq!(*o, others);
            }
            other => panic!("listing {i}: {other:?}"),
        }
    }
    results[1].as_ref().unwrap();
    let offers = inventory(&fake)
        .get_offers("TWICE-1", Marketplace::Us)
        .unwrap();
    assert!(offers.is_empty(), "nothing sent for them: {offers:#?}");
}

#[test]
fn a_field_removed_from_the_listing_is_removed_from_the_live_offer() {
    let fields = [
        ("listingDescription", json!("A fine desktop, tested.")),
        ("secondaryCategoryId", json!("171957")),
        ("lotSize", json!(2)),
        ("quantityLimitPerBuyer", json!(1)),
        (
            "charity",
            json!({"charityId": "1135", "donationPercentage": "50"}),
        ),
        ("tax", json!({"applyTax": true, "vatPercentage": 19.0})),
    ];
    for (field, value) in fields {
        let fake = FakeMarketplace::new();
        let sku = format!("DROP-{field}");
        let without = desktop(&sku);
        let mut with = without.clone();
        if field == "listingDescription" {
            with.offer.listing_description = value.as_str().map(str::to_owned);
        } else {
            with.offer.other.insert(field.into(), value);
        }
        let published = inventory(&fake).publish(&with).unwrap();
        let held = |fake: &FakeMarketplace| {
            let offers = inventory(fake).get_offers(&sku, Marketplace::Us).unwrap();
            serde_json::to_value(&offers[0].offer).unwrap()
        };
        assert!(held(&fake).get(field).is_some(), "{field} published");
        let before = updates(&fake, &published.offer_id);
        assert_eq!(inventory(&fake).publish(&without).unwrap(), published);
        assert_eq!(
            updates(&fake, &published.offer_id),
            before + 1,
            "{field} removed: an updateOffer"
        );
        assert_eq!(
            held(&fake).get(field),
            None,
            "{field} no longer on the offer"
        );
        // Published again unchanged: no updateOffer.
        inventory(&fake).publish(&without).unwrap();
        assert_eq!(updates(&fake, &published.offer_id), before + 1, "{field}");
    }
}

#[test]
fn switching_a_listing_to_auction_is_refused_while_its_fixed_price_listing_is_live() {
    let fake = FakeMarketplace::new();
    let fixed = inventory(&fake).publish(&desktop("SWITCH-1")).unwrap();
    let refused = |e: ListingError| match e {
        ListingError::OtherFormatLive(live) => {
            assert_eq!(live.offer_id, fixed.offer_id);
            assert_eq!(live.listing_id.as_deref(), Some(fixed.listing_id.as_str()));
            assert_eq!(
                (live.format.as_str(), live.wanted.as_str()),
                ("FIXED_PRICE", "AUCTION")
            );
        }
        e => panic!("{e}"),
    };
    refused(inventory(&fake).publish(&auction("SWITCH-1")).unwrap_err());
    let mut many = inventory(&fake).publish_many(&[auction("SWITCH-1")]);
    refused(many.remove(0).unwrap_err());
    let offers = inventory(&fake)
        .get_offers("SWITCH-1", Marketplace::Us)
        .unwrap();
    assert_eq!(offers.len(), 1, "no auction offer: {offers:#?}");
    assert_eq!(offers[0].status.as_deref(), Some("PUBLISHED"));

    // Asked to withdraw it: the fixed-price listing ends, the auction is live.
    let published = inventory(&fake)
        .with_other_format(OtherFormat::Withdraw)
        .publish(&auction("SWITCH-1"))
        .unwrap();
    let offers = inventory(&fake)
        .get_offers("SWITCH-1", Marketplace::Us)
        .unwrap();
    let status = |id: &str| {
        let o = offers.iter().find(|o| o.offer_id == id).unwrap();
        (
            o.status.clone().unwrap(),
            o.listing.clone().unwrap().listing_status.unwrap(),
        )
    };
    assert_eq!(
        status(&fixed.offer_id),
        ("UNPUBLISHED".into(), "ENDED".into())
    );
    assert_eq!(
        status(&published.offer_id),
        ("PUBLISHED".into(), "ACTIVE".into())
    );
    // Now the auction is the live one: the fixed-price listing is refused in its turn.
    let e = inventory(&fake).publish(&desktop("SWITCH-1")).unwrap_err();
    assert!(matches!(e, ListingError::OtherFormatLive(_)), "{e}");
}

#[test]
fn both_formats_of_one_sku_stay_live_when_asked_to_keep_both() {
    let fake = FakeMarketplace::new();
    let fixed = inventory(&fake).publish(&desktop("KEEP-1")).unwrap();
    let auctioned = inventory(&fake)
        .with_other_format(OtherFormat::Keep)
        .publish(&auction("KEEP-1"))
        .unwrap();
    assert_ne!(fixed.offer_id, auctioned.offer_id);
    let offers = inventory(&fake)
        .get_offers("KEEP-1", Marketplace::Us)
        .unwrap();
    assert_eq!(offers.len(), 2);
    assert!(
        offers
            .iter()
            .all(|o| o.status.as_deref() == Some("PUBLISHED"))
    );
}

/// plan_many_with (reads only) says what publish_many then does: of five listings (one
/// unchanged, one with a new price, one with a field dropped, one with a new title, one new),
/// the plan names the fields revised and leaves the unchanged one alone, nothing is written
/// while planning, publish_many leaves exactly that one alone and updates exactly the offers
/// the plan revises, and a plan afterwards leaves all five alone.
#[test]
fn the_plan_names_the_fields_revised_and_publish_many_then_does_what_it_says() {
    use marketplace_listing::CompiledIn;
    use marketplace_listing::aio::Change;
    let fake = FakeMarketplace::new();
    let mut listings: Vec<Listing> = (0..4).map(|i| desktop(&format!("PLAN-{i}"))).collect();
    listings[2].offer.other.insert("lotSize".into(), json!(2));
    let first: Vec<Published> = inventory(&fake)
        .publish_many(&listings)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    price_of(&mut listings[1]).value = "139.00".into();
    listings[2].offer.other.remove("lotSize");
    listings[3].inventory_item.product.as_mut().unwrap().title =
        Some("Dell OptiPlex 7010 SFF".into());
    listings.push(desktop("PLAN-4"));
    let sent = fake.requests().len();
    let plans: Vec<_> = inventory(&fake)
        .plan_many_with(&listings, &CompiledIn)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let writes = fake.requests()[sent..]
        .iter()
        .filter(|r| r.path.starts_with("/sell/"))
        .filter(|r| r.method != "GET" && !r.path.ends_with("/bulk_get_inventory_item"))
        .count();
    assert_eq!(writes, 0, "planning sends only reads");
    assert!(!plans[0].publish, "{}", plans[0]);
    assert_eq!(
        plans[0].to_string(),
        "left alone (live as it is, nothing written)"
    );
    assert_eq!(
        plans[1].offer,
        Change::Revise(vec!["pricingSummary".into()])
    );
    assert_eq!(plans[1].to_string(), "revise: pricingSummary; publish");
    assert_eq!(plans[2].offer, Change::Revise(vec!["lotSize".into()]));
    assert_eq!(plans[3].item, Change::Revise(vec!["product.title".into()]));
    assert_eq!(plans[3].offer, Change::Same);
    assert_eq!(
        (&plans[4].item, &plans[4].offer),
        (&Change::Create, &Change::Create)
    );
    for (plan, published) in plans.iter().zip(&first) {
        assert_eq!(plan.offer_id.as_deref(), Some(published.offer_id.as_str()));
    }
    let updates_before: Vec<usize> = first.iter().map(|p| updates(&fake, &p.offer_id)).collect();
    let results: Vec<Published> = inventory(&fake)
        .publish_many(&listings)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    for (i, (plan, result)) in plans.iter().zip(&results).enumerate() {
        assert_eq!(result.unchanged, !plan.publish, "listing {i}: {plan}");
    }
    for (i, published) in first.iter().enumerate() {
        let updated = updates(&fake, &published.offer_id) - updates_before[i];
        let revised = matches!(plans[i].offer, Change::Revise(_));
        assert_eq!(updated, usize::from(revised), "listing {i}: {}", plans[i]);
    }
    let after = inventory(&fake).plan_many_with(&listings, &CompiledIn);
    assert!(
        after.iter().all(|p| p.as_ref().is_ok_and(|p| !p.publish)),
        "{after:?}"
    );
}

#[test]
fn bodyless_posts_publish_offer_and_withdraw_offer_send_content_length_zero() {
    let fake = FakeMarketplace::new();
    let inventory = inventory(&fake);
    let published = inventory.publish(&desktop("DESKTOP-1")).unwrap();
    let withdrawn = inventory.withdraw_offer(&published.offer_id).unwrap();
    assert_eq!(withdrawn, published.listing_id);
    for (operation, path) in [
        (
            "publishOffer",
            format!("{OFFER}/{}/publish", published.offer_id),
        ),
        (
            "withdrawOffer",
            format!("{OFFER}/{}/withdraw", published.offer_id),
        ),
    ] {
        let sent = fake.requests_to(&path);
        assert_eq!(sent.len(), 1, "{operation}: {sent:?}");
        assert_eq!(sent[0].method, "POST", "{operation}");
        assert_eq!(
            sent[0].header("Content-Length"),
            Some("0"),
            "{operation} sent no Content-Length: 0: {:?}",
            sent[0].headers
        );
    }
}

/// A rerun in which only a listing's price changed revises its offer (updateOffer, then
/// publishOffer) and writes no inventory item: bulkGetInventoryItem showed eBay holds the item
/// as the listing has it, as plan_many says (`inventoryItem`: same), so neither
/// bulkCreateOrReplaceInventoryItem nor createOrReplaceInventoryItem is sent.
#[test]
fn a_new_price_alone_revises_the_offer_and_writes_no_inventory_item() {
    let fake = FakeMarketplace::new();
    let mut listings = vec![desktop("PRICE-1"), desktop("PRICE-2")];
    let first: Vec<Published> = inventory(&fake)
        .publish_many(&listings)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    price_of(&mut listings[0]).value = "139.00".into();
    let sent = fake.requests().len();
    let again: Vec<Published> = inventory(&fake)
        .publish_many(&listings)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    let item_writes: Vec<String> = fake.requests()[sent..]
        .iter()
        .filter(|r| {
            r.path.ends_with("/bulk_create_or_replace_inventory_item")
                || (r.method == "PUT" && r.path.starts_with("/sell/inventory/v1/inventory_item/"))
        })
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(item_writes.is_empty(), "{item_writes:?}");
    assert!(!again[0].unchanged && again[1].unchanged, "{again:?}");
    assert_eq!(again[0].offer_id, first[0].offer_id);
    assert_eq!(again[0].listing_id, first[0].listing_id);
    assert_eq!(updates(&fake, &first[0].offer_id), 1);
    let held: serde_json::Value = api(&fake)
        .send(ApiRequest::get(format!("{OFFER}/{}", first[0].offer_id)))
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(held["pricingSummary"]["price"]["value"], "139.00", "{held}");
}
