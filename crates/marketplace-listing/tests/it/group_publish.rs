//! A listing with variations published against the fake marketplace over loopback HTTP:
//! the 20-variant graphics-card group (tests/fixtures/listings/graphics-cards-group.json,
//! EBAY_US 27386) goes out as one listing with one offer per variant; a fault at any call and
//! a rerun give the same; a variant removed from the file leaves the listing alone; the fake
//! refuses at publishOfferByInventoryItemGroup what eBay refuses. The check's rules for 27386
//! are eBay's getItemAspectsForCategory answer (tests/fixtures/aspects), which the fake serves
//! too.

use fake_marketplace::{FakeMarketplace, Fault};
use marketplace_listing::blocking::Inventory;
use marketplace_listing::{
    AxisRule, Catalog, CategoryStatus, CompiledIn, ConditionPolicy, ErrorKind, GroupListing,
    ListingError, axis_rule,
};
use marketplaces::Marketplace;
use taxonomy_model::aspects::{AspectRules, ListingAspects, Problem as AspectProblem};

use crate::fake_inventory::inventory;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/fixtures");
const V1: &str = "/sell/inventory/v1";

/// The compiled-in tree and policies, with category 27386's rules read from eBay's answer.
struct Rules(AspectRules);

fn rules() -> Rules {
    let body = std::fs::read(format!("{ROOT}/aspects/ebay-us-27386-graphics-cards.json")).unwrap();
    let answer = taxonomy_model::decode::item_aspects(27386, &body).unwrap();
    Rules(AspectRules::from(&answer))
}

impl Catalog for Rules {
    fn category(&self, marketplace: Marketplace, id: u32) -> CategoryStatus {
        CompiledIn.category(marketplace, id)
    }
    fn check_aspects(
        &self,
        _: Marketplace,
        id: u32,
        aspects: &ListingAspects,
    ) -> Option<Vec<AspectProblem>> {
        (id == 27386).then(|| self.0.check(aspects))
    }
    fn knows_aspect(&self, _: Marketplace, _: u32, name: &str) -> bool {
        self.0.aspect_names().any(|n| n.eq_ignore_ascii_case(name))
    }
    fn condition_policy(
        &self,
        marketplace: Marketplace,
        id: u32,
        f: &mut dyn FnMut(ConditionPolicy<'_>),
    ) -> bool {
        CompiledIn.condition_policy(marketplace, id, f)
    }
    fn variation_axis(
        &self,
        _: Marketplace,
        id: u32,
        name: &str,
        values: &[String],
    ) -> Option<AxisRule> {
        (id == 27386).then(|| axis_rule(&self.0, name, values))
    }
    fn variations_supported(&self, _: Marketplace, _: u32) -> Option<bool> {
        None
    }
}

fn group() -> GroupListing {
    let text =
        std::fs::read_to_string(format!("{ROOT}/listings/graphics-cards-group.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn publish(
    fake: &FakeMarketplace,
    group: &GroupListing,
) -> Result<marketplace_listing::aio::GroupPublished, ListingError> {
    inventory(fake).publish_group_with(group, &rules())
}

/// Every variant of `group` has exactly one offer on EBAY_US, published under `listing_id`.
fn one_offer_each_live_under(inventory: &Inventory, group: &GroupListing, listing_id: &str) {
    for variant in &group.variants {
        let offers = inventory
            .get_offers(&variant.offer.sku, Marketplace::Us)
            .unwrap();
        assert_eq!(offers.len(), 1, "{}: {offers:?}", variant.offer.sku);
        assert_eq!(offers[0].status.as_deref(), Some("PUBLISHED"));
        let listing = offers[0].listing.as_ref().unwrap();
        assert_eq!(listing.listing_id.as_deref(), Some(listing_id));
        assert_eq!(listing.listing_status.as_deref(), Some("ACTIVE"));
    }
}

#[test]
fn a_20_variant_group_is_published_as_one_listing_with_one_offer_per_variant() {
    let fake = FakeMarketplace::new();
    let group = group();
    assert_eq!(group.variants.len(), 20);
    let published = publish(&fake, &group).unwrap();
    assert_eq!(published.offers.len(), 20);
    let inventory = inventory(&fake);
    one_offer_each_live_under(&inventory, &group, &published.listing_id);
    let held = inventory
        .get_inventory_item_group("GPU-RADEON-6450")
        .unwrap()
        .unwrap();
    assert_eq!(held.variant_skus.len(), 20);
    assert_eq!(held.title, group.inventory_item_group.title);
    // Again: the same listing and offers, nothing added.
    let again = publish(&fake, &group).unwrap();
    assert_eq!(again, published);
    one_offer_each_live_under(&inventory, &group, &published.listing_id);
}

#[test]
fn a_fault_at_any_call_of_publish_group_and_a_rerun_give_one_listing() {
    let calls = [
        ("GET", format!("{V1}/inventory_item_group/GPU-RADEON-6450")),
        (
            "POST",
            format!("{V1}/bulk_create_or_replace_inventory_item"),
        ),
        ("GET", format!("{V1}/offer")),
        ("POST", format!("{V1}/bulk_create_offer")),
        ("PUT", format!("{V1}/inventory_item_group/GPU-RADEON-6450")),
        (
            "POST",
            format!("{V1}/offer/publish_by_inventory_item_group"),
        ),
    ];
    let group = group();
    for (method, path) in &calls {
        let fake = FakeMarketplace::new();
        fake.fail_next(
            path,
            Fault::Status {
                status: 500,
                body: r#"{"errors":[{"errorId":25001,"domain":"API_INVENTORY","category":"APPLICATION","message":"A system error has occurred."}]}"#.into(),
                headers: Vec::new(),
            },
        );
        let failed = publish(&fake, &group);
        assert!(failed.is_err(), "{method} {path}: {failed:?}");
        let published = publish(&fake, &group).unwrap();
        one_offer_each_live_under(&inventory(&fake), &group, &published.listing_id);
        let third = publish(&fake, &group).unwrap();
        assert_eq!(third.listing_id, published.listing_id, "{method} {path}");
    }
}

#[test]
fn a_variant_removed_from_the_file_leaves_the_listing_and_nothing_else_changes() {
    let fake = FakeMarketplace::new();
    let mut group = group();
    let published = publish(&fake, &group).unwrap();
    let gone = group.variants.remove(7);
    group
        .inventory_item_group
        .variant_skus
        .retain(|s| *s != gone.offer.sku);
    let again = publish(&fake, &group).unwrap();
    assert_eq!(again.listing_id, published.listing_id);
    assert_eq!(again.removed, vec![gone.offer.sku.clone()]);
    let inventory = inventory(&fake);
    assert!(
        inventory
            .get_offers(&gone.offer.sku, Marketplace::Us)
            .unwrap()
            .is_empty()
    );
    one_offer_each_live_under(&inventory, &group, &published.listing_id);
    let kept: Vec<_> = published
        .offers
        .iter()
        .filter(|(sku, _)| *sku != gone.offer.sku)
        .cloned()
        .collect();
    assert_eq!(again.offers, kept);
    let held = inventory
        .get_inventory_item_group("GPU-RADEON-6450")
        .unwrap()
        .unwrap();
    assert!(!held.variant_skus.contains(&gone.offer.sku));
    assert_eq!(held.variant_skus.len(), 19);
}

/// The group published, then changed on eBay's side by `change` (createOrReplaceInventoryItemGroup
/// or createOrReplaceInventoryItem sent directly, past the offline check), then
/// publishOfferByInventoryItemGroup: eBay's error.
fn refused_after(change: impl FnOnce(&Inventory, &mut GroupListing)) -> ListingError {
    let fake = FakeMarketplace::new();
    let mut group = group();
    let inventory = inventory(&fake);
    publish(&fake, &group).unwrap();
    change(&inventory, &mut group);
    inventory
        .publish_offer_by_inventory_item_group("GPU-RADEON-6450", Marketplace::Us)
        .unwrap_err()
}

fn user_error_text(e: &ListingError) -> String {
    assert!(
        matches!(e.errors()[0].kind, ErrorKind::User { .. }),
        "{e:?}"
    );
    e.errors()[0].error.message.clone()
}

#[test]
fn publish_by_group_refuses_a_category_whose_structure_policy_takes_no_variations() {
    let fake = FakeMarketplace::new();
    // getListingStructurePolicies: 27386 takes no variations (the check here does not know).
    fake.set_variations_supported(Marketplace::Us, 27386, Some(false));
    let e = publish(&fake, &group()).unwrap_err();
    let error = &e.errors()[0].error;
    // 25005 "Invalid category. {additionalInfo}": the closest id eBay's description documents
    // for publishOfferByInventoryItemGroup.
    assert_eq!(error.error_id, 25005, "{e:?}");
    assert!(
        error
            .message
            .contains("does not support listings with variations"),
        "{e}"
    );
    let published = fake
        .answers_to(&format!("{V1}/offer/publish_by_inventory_item_group"))
        .len();
    assert_eq!(published, 1, "refused by publishOfferByInventoryItemGroup");
}

#[test]
fn publish_by_group_refuses_an_axis_not_enabled_for_variations() {
    let e = refused_after(|inventory, group| {
        let g = &mut group.inventory_item_group;
        let specs = &mut g.varies_by.as_mut().unwrap().specifications;
        specs.push(marketplace_listing::Specification {
            name: "Brand".into(),
            values: vec!["Acme".into()],
        });
        inventory
            .create_or_replace_inventory_item_group("GPU-RADEON-6450", Marketplace::Us, g)
            .unwrap();
    });
    assert!(
        user_error_text(&e).contains("Brand is not allowed as a variation specific"),
        "{e}"
    );
}

#[test]
fn publish_by_group_refuses_a_variant_without_a_value_for_an_axis_and_a_repeated_combination() {
    let e = refused_after(|inventory, group| {
        let v = &mut group.variants[3];
        v.inventory_item
            .product
            .as_mut()
            .unwrap()
            .aspects
            .remove("Memory Size");
        inventory
            .create_or_replace_inventory_item(&v.offer.sku, Marketplace::Us, &v.inventory_item)
            .unwrap();
    });
    assert!(
        user_error_text(&e).contains("exactly one value of the variation specific Memory Size"),
        "{e}"
    );
    let e = refused_after(|inventory, group| {
        let item = group.variants[0].inventory_item.clone();
        let v = &group.variants[1];
        inventory
            .create_or_replace_inventory_item(&v.offer.sku, Marketplace::Us, &item)
            .unwrap();
    });
    assert!(
        user_error_text(&e).contains("repeats the combination"),
        "{e}"
    );
}

#[test]
fn the_group_calls_answer_ebays_error_ids() {
    let fake = FakeMarketplace::new();
    let inventory = inventory(&fake);
    assert_eq!(inventory.get_inventory_item_group("NONE").unwrap(), None);
    let e = inventory.delete_inventory_item_group("NONE").unwrap_err();
    assert_eq!(e.errors()[0].kind, ErrorKind::GroupNotFound);
    let e = inventory
        .publish_offer_by_inventory_item_group("NONE", Marketplace::Us)
        .unwrap_err();
    assert_eq!(e.errors()[0].kind, ErrorKind::GroupNotFound);
    let group = group();
    publish(&fake, &group).unwrap();
    inventory
        .withdraw_offer_by_inventory_item_group("GPU-RADEON-6450", Marketplace::Us)
        .unwrap();
    let e = inventory
        .withdraw_offer_by_inventory_item_group("GPU-RADEON-6450", Marketplace::Us)
        .unwrap_err();
    assert_eq!(e.errors()[0].kind, ErrorKind::NoOfferFound);
    // A variant's SKU in a second group: 25703.
    let mut other = group.inventory_item_group.clone();
    other.variant_skus.truncate(1);
    let e = inventory
        .create_or_replace_inventory_item_group("OTHER", Marketplace::Us, &other)
        .unwrap_err();
    assert_eq!(e.errors()[0].kind, ErrorKind::SkuInAnotherGroup);
    inventory
        .delete_inventory_item_group("GPU-RADEON-6450")
        .unwrap();
    assert_eq!(
        inventory
            .get_inventory_item_group("GPU-RADEON-6450")
            .unwrap(),
        None
    );
}

#[test]
fn a_group_whose_variant_ebay_holds_in_another_group_is_refused_before_any_write() {
    // The group published; then a copy under another key whose SKUs were not renamed (a new
    // series), published in a later run: eBay's createOrReplaceInventoryItemGroup would
    // refuse it (25703) only after bulkCreateOrReplaceInventoryItem had rewritten the first
    // group's items with the copy's title.
    let fake = FakeMarketplace::new();
    let first = group();
    let published = publish(&fake, &first).unwrap();
    let writes = |fake: &FakeMarketplace| {
        fake.requests()
            .iter()
            .filter(|r| r.path.starts_with(V1) && r.method != "GET")
            .count()
    };
    let before = writes(&fake);
    let sku = &first.variants[0].offer.sku;
    let item_before = inventory(&fake).get_inventory_item(sku).unwrap();
    let mut copy = serde_json::to_value(group()).unwrap();
    copy["inventoryItemGroup"]["inventoryItemGroupKey"] = "GPU-RADEON-6450-LP".into();
    copy["inventoryItemGroup"]["title"] = "Radeon HD 6450 low profile".into();
    copy["variants"][0]["inventoryItem"]["availability"]["shipToLocationAvailability"]["quantity"] =
        1.into();
    let copy: GroupListing = serde_json::from_value(copy).unwrap();
    let refused = publish(&fake, &copy).unwrap_err();
    let ListingError::Refused(problems) = &refused else {
        panic!("refused by the check: {refused:?}");
    };
    assert_eq!(problems.0.len(), copy.variants.len(), "{refused}");
    let text = refused.to_string();
    assert!(
        text.contains(
            "variants[0].offer.sku: eBay holds this SKU in the inventory item group GPU-RADEON-6450"
        ),
        "{text}"
    );
    assert_eq!(writes(&fake), before, "nothing written for the copy");
    assert_eq!(
        inventory(&fake).get_inventory_item(sku).unwrap(),
        item_before,
        "the first group's item is as it was"
    );
    // The first group, published again, is still this SKU's: its rerun is not refused.
    let again = publish(&fake, &first).unwrap();
    assert_eq!(again.listing_id, published.listing_id);
}
