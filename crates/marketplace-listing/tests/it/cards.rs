//! Trading cards through the builder: a graded card (Professional Grader, Grade, Certification
//! Number) and an ungraded one (Card Condition) built in a few lines, checked, and published on
//! the fake marketplace over loopback HTTP, whose getItemConditionPolicies gives the trading-card
//! leaves (183454 CCG Individual Cards) their Graded and Ungraded conditions; what a seller
//! writes for a grader, a grade or a card condition read as eBay's value ids; every field the
//! check checks set through the builder; and a built listing written as a file and read back.

use fake_marketplace::FakeMarketplace;
use marketplace_listing::{
    CardCondition, CompiledIn, Condition, ConditionDescriptor, Grade, Grader, Listing,
    ListingBuilder, PackageWeightAndSize, check,
};
use serde_json::{Value, json};
use taxonomy_macros::{aspects, category};

use crate::fake_inventory;
use fake_inventory::inventory;

/// A Charizard card of CCG Individual Cards (183454), everything but its condition.
fn charizard(sku: &str) -> ListingBuilder<impl Sized> {
    ListingBuilder::new(
        sku,
        category!(EBAY_US, "183454"),
        aspects!(EBAY_US, "183454", {
            "Game": "Pokémon TCG", "Card Name": "Charizard", "Set": "Base Set"
        }),
    )
    .title("Charizard Base Set 4/102 Holo")
    .description("Holo rare, 1999 Base Set.")
    .image("https://example.com/charizard-front.jpg")
    .quantity(1)
    .price("4999.00")
    .policies("f", "p", "r")
    .merchant_location_key("warehouse-1")
}

/// The descriptors as the fake holds them: `(name, values, additionalInfo)`.
fn descriptors_held(item: &Value) -> Vec<(String, Vec<String>, Option<String>)> {
    item["conditionDescriptors"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| {
            (
                d["name"].as_str().unwrap_or_default().to_owned(),
                d["values"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
                d["additionalInfo"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

/// The inventory item the fake holds for `sku`, as JSON (getInventoryItem over HTTP).
fn held_item(fake: &FakeMarketplace, sku: &str) -> Value {
    let item = inventory(fake).get_inventory_item(sku).unwrap();
    serde_json::to_value(item).unwrap()
}

#[test]
fn a_graded_psa_10_card_built_in_a_few_lines_passes_the_check_and_publishes_on_the_fake() {
    let card = charizard("CHARIZARD-PSA10")
        .graded_card(Grader::Psa, Grade::Ten, "12345678")
        .build()
        .unwrap();
    assert!(check(&card, &CompiledIn).is_empty());
    let fake = FakeMarketplace::new();
    let published = inventory(&fake).publish(&card).unwrap();
    assert!(!published.listing_id.is_empty());
    // The fake's publishOffer took LIKE_NEW (2750, Graded), which 183454's policy lists; a
    // condition it does not list (NEW) is refused there with 25021.
    let item = held_item(&fake, "CHARIZARD-PSA10");
    assert_eq!(item["condition"], json!("LIKE_NEW"));
    assert_eq!(
        descriptors_held(&item),
        [
            ("27501".into(), vec!["275010".into()], None),
            ("27502".into(), vec!["275020".into()], None),
            ("27503".into(), vec![], Some("12345678".into())),
        ]
    );
    let mut new = card.clone();
    new.offer.sku = "CHARIZARD-NEW".into();
    new.inventory_item.condition = Some(Condition::New);
    let refused = inventory(&fake).publish(&new).unwrap_err();
    assert!(refused.to_string().contains("25021"), "{refused}");
}

#[test]
fn an_ungraded_near_mint_card_publishes_with_its_card_condition() {
    let card = charizard("CHARIZARD-NM")
        .ungraded_card(CardCondition::NearMintOrBetter)
        .build()
        .unwrap();
    let fake = FakeMarketplace::new();
    inventory(&fake).publish(&card).unwrap();
    let item = held_item(&fake, "CHARIZARD-NM");
    assert_eq!(item["condition"], json!("USED_VERY_GOOD"));
    assert_eq!(
        descriptors_held(&item),
        [("40001".into(), vec!["400010".into()], None)]
    );
}

#[test]
fn a_graded_card_without_a_certification_number_has_grader_and_grade_only() {
    let card = charizard("CHARIZARD-BGS95")
        .graded_card(Grader::Bgs, Grade::NineAndAHalf, "  ")
        .build()
        .unwrap();
    assert_eq!(
        card.inventory_item.condition_descriptors,
        [
            ConditionDescriptor::new(27501, [275013]),
            ConditionDescriptor::new(27502, [275021]),
        ]
    );
}

#[test]
fn what_a_seller_writes_for_a_grader_a_grade_and_a_card_condition_reads_as_ebays_value_ids() {
    for (text, grader) in [
        ("PSA", Grader::Psa),
        ("psa", Grader::Psa),
        (" Beckett ", Grader::Bgs),
        ("cgc", Grader::Cgc),
        ("275016", Grader::Sgc),
        ("Rare Edition", Grader::RareEdition),
    ] {
        assert_eq!(text.parse::<Grader>(), Ok(grader), "{text:?}");
    }
    for (text, grade, id) in [
        ("10", Grade::Ten, 275020),
        ("10.0", Grade::Ten, 275020),
        ("9.5", Grade::NineAndAHalf, 275021),
        ("1.0", Grade::One, 2750218),
        ("1", Grade::One, 2750218),
        ("5", Grade::Five, 2750210),
        ("authentic", Grade::Authentic, 2750219),
        ("2750211", Grade::FourAndAHalf, 2750211),
    ] {
        assert_eq!(text.parse::<Grade>(), Ok(grade), "{text:?}");
        assert_eq!(grade.value_id(), id);
    }
    for (text, condition) in [
        ("Near mint or better", CardCondition::NearMintOrBetter),
        ("NM", CardCondition::NearMintOrBetter),
        ("near-mint-or-better", CardCondition::NearMintOrBetter),
        ("Lightly played", CardCondition::Excellent),
        ("VG", CardCondition::VeryGood),
        ("400013", CardCondition::Poor),
    ] {
        assert_eq!(text.parse::<CardCondition>(), Ok(condition), "{text:?}");
    }
    // Refused, naming the descriptor and what it takes.
    let e = "PSB".parse::<Grader>().unwrap_err();
    assert_eq!(e.given, "PSB");
    let text = e.to_string();
    assert!(
        text.starts_with(
            "\"PSB\" is not a value of the condition descriptor 27501 Professional Grader"
        ) && text.contains("PSA, BCCG, BVG, BGS"),
        "{text}"
    );
    let text = "11".parse::<Grade>().unwrap_err().to_string();
    assert!(
        text.contains("27502 Grade") && text.contains("10, 9.5, 9"),
        "{text}"
    );
    let text = "".parse::<CardCondition>().unwrap_err().to_string();
    assert!(text.contains("40001 Card Condition"), "{text}");
    // A value id of another descriptor is not taken for one of this one.
    assert!("275010".parse::<Grade>().is_err());
}

#[test]
fn every_field_the_check_checks_is_set_by_the_builder_where_the_file_has_it() {
    let package: PackageWeightAndSize = serde_json::from_value(json!({
        "packageType": "LETTER", "weight": {"value": 1, "unit": "OUNCE"}
    }))
    .unwrap();
    let card = charizard("CHARIZARD-ALL")
        .subtitle("1999, holo")
        .images([
            "https://example.com/charizard-back.jpg",
            "https://example.com/charizard-edge.jpg",
        ])
        .ean("4006381333931")
        .upc("820650801217")
        .isbn("9780306406157")
        .brand_mpn("Wizards of the Coast", "4/102")
        .condition_description("Light whitening on the back edge.")
        .condition_descriptor(ConditionDescriptor::new(40001, [400011]))
        .condition_descriptors([ConditionDescriptor::new(27503, []).with_additional_info("X1")])
        .package_weight_and_size(package)
        .listing_description("<p>Charizard</p>")
        .lot_size(1)
        .quantity_limit_per_buyer(2)
        .ungraded_card(CardCondition::Excellent)
        .build()
        .unwrap();
    let file = serde_json::to_value(&card).unwrap();
    let item = &file["inventoryItem"];
    let product = &item["product"];
    assert_eq!(product["subtitle"], json!("1999, holo"));
    assert_eq!(product["imageUrls"].as_array().unwrap().len(), 3);
    assert_eq!(product["ean"], json!(["4006381333931"]));
    assert_eq!(product["upc"], json!(["820650801217"]));
    assert_eq!(product["isbn"], json!(["9780306406157"]));
    assert_eq!(
        item["conditionDescription"],
        json!("Light whitening on the back edge.")
    );
    // ungraded_card replaced the descriptors given before it.
    assert_eq!(
        item["conditionDescriptors"],
        json!([{"name": "40001", "values": ["400011"]}])
    );
    assert_eq!(item["packageWeightAndSize"]["packageType"], json!("LETTER"));
    let offer = &file["offer"];
    assert_eq!(offer["listingDescription"], json!("<p>Charizard</p>"));
    assert_eq!(offer["lotSize"], json!(1));
    assert_eq!(offer["quantityLimitPerBuyer"], json!(2));
    // A fixed-price listing is good 'til cancelled unless given another duration.
    assert_eq!(offer["listingDuration"], json!("GTC"));
    // Another duration is set as given, and the check holds it to the format (publishOffer:
    // a fixed-price listing is GTC only).
    let seven_days = charizard("CHARIZARD-7-DAYS")
        .listing_duration("DAYS_7")
        .graded_card(Grader::Psa, Grade::Nine, "")
        .build()
        .unwrap_err();
    assert!(
        seven_days
            .0
            .iter()
            .any(|p| p.field == "offer.listingDuration"),
        "{seven_days:?}"
    );
}

#[test]
fn a_built_card_written_as_a_file_reads_back_as_the_same_listing() {
    let card = charizard("CHARIZARD-FILE")
        .graded_card(Grader::Cgc, Grade::EightAndAHalf, "CGC-0042")
        .condition_description("Sharp corners.")
        .build()
        .unwrap();
    let file = serde_json::to_string_pretty(&card).unwrap();
    let read: Listing = serde_json::from_str(&file).unwrap();
    assert_eq!(read, card);
    assert!(check(&read, &CompiledIn).is_empty());
    assert_eq!(serde_json::to_string_pretty(&read).unwrap(), file);
}
