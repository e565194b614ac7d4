//! The offline check, a rule a test: each refuses a listing naming the field, and a listing
//! with several problems gets them all at once.

use marketplace_listing::{
    Catalog, CategoryStatus, CompiledIn, Condition, Listing, ListingBuilder, Problem, ProblemKind,
    check,
};
use marketplaces::Marketplace;
use serde_json::{Value, json};
use taxonomy_macros::{aspects, category};

/// A listing of category 179 (EBAY_US, rules pinned) with nothing wrong.
fn valid() -> Value {
    json!({
        "inventoryItem": {
            "product": {
                "title": "Dell OptiPlex 7010",
                "description": "A desktop.",
                "aspects": {"Brand": ["Dell"], "Type": ["Desktop"]},
                "imageUrls": ["https://example.com/1.jpg"]
            },
            "condition": "USED_EXCELLENT",
            "availability": {"shipToLocationAvailability": {"quantity": 3}}
        },
        "offer": {
            "sku": "DESKTOP-1",
            "marketplaceId": "EBAY_US",
            "format": "FIXED_PRICE",
            "categoryId": "179",
            "availableQuantity": 3,
            "pricingSummary": {"price": {"value": "149.00", "currency": "USD"}},
            "listingPolicies": {"fulfillmentPolicyId": "f", "paymentPolicyId": "p", "returnPolicyId": "r"},
            "merchantLocationKey": "warehouse-1"
        }
    })
}

fn problems_of(value: Value) -> Vec<Problem> {
    let listing: Listing = serde_json::from_value(value).unwrap();
    check(&listing, &CompiledIn)
}

/// The one problem of `value` after `change`: its field and kind.
fn only(change: impl FnOnce(&mut Value)) -> Problem {
    let mut value = valid();
    change(&mut value);
    let problems = problems_of(value);
    assert_eq!(problems.len(), 1, "{problems:#?}");
    problems.into_iter().next().unwrap()
}

#[test]
fn a_valid_listing_has_no_problem() {
    assert_eq!(problems_of(valid()), vec![]);
}

#[test]
fn ebay_uk_as_the_marketplace_id_asks_did_you_mean_ebay_gb() {
    let p = only(|v| v["offer"]["marketplaceId"] = json!("EBAY_UK"));
    assert_eq!(p.field, "offer.marketplaceId");
    assert_eq!(
        p.kind,
        ProblemKind::UnknownMarketplace {
            closest: Some(Marketplace::Gb)
        }
    );
    assert_eq!(
        p.to_string(),
        "offer.marketplaceId: not a known marketplace id; did you mean EBAY_GB (United Kingdom)?"
    );
    // A name nothing stands out for gets no suggestion.
    let p = only(|v| v["offer"]["marketplaceId"] = json!("EBAY_XX"));
    assert_eq!(p.kind, ProblemKind::UnknownMarketplace { closest: None });
}

#[test]
fn a_category_with_children_is_refused() {
    let p = only(|v| v["offer"]["categoryId"] = json!("58058"));
    assert_eq!(p.field, "offer.categoryId");
    assert!(matches!(p.kind, ProblemKind::NotALeaf { .. }), "{p}");
}

#[test]
fn an_unknown_category_is_refused_naming_the_id_and_the_tree_looked_in() {
    let p = only(|v| v["offer"]["categoryId"] = json!("999999999"));
    let version = taxonomy_data::Site::Us.tree_version();
    assert_eq!(
        (p.field.as_str(), &p.kind),
        (
            "offer.categoryId",
            &ProblemKind::UnknownCategory {
                id: 999999999,
                marketplace: Marketplace::Us,
                tree_id: 0,
                tree_version: version.to_owned(),
            }
        )
    );
    assert_eq!(
        p.to_string(),
        format!(
            "offer.categoryId: no category 999999999 in EBAY_US's category tree (tree 0, version {version})"
        )
    );
}

#[test]
fn a_category_with_children_is_refused_listing_some_of_its_leaves_as_category_does() {
    // 15032 Cell Phones & Accessories: category!(EBAY_US, "15032") lists its leaves too.
    let p = only(|v| v["offer"]["categoryId"] = json!("15032"));
    let ProblemKind::NotALeaf {
        name,
        leaves,
        leaf_count,
    } = &p.kind
    else {
        panic!("{p}")
    };
    assert_eq!(name, "Cell Phones & Accessories");
    let parent = taxonomy_data::Site::Us.category(15032).unwrap();
    let expected: Vec<(u32, String)> = parent
        .leaves()
        .take(marketplace_listing::limits::SHOWN_LEAVES)
        .map(|l| (l.id(), l.path().to_string()))
        .collect();
    assert!(!expected.is_empty());
    assert_eq!(leaves, &expected);
    assert_eq!(*leaf_count, parent.leaves().count());
    let text = p.to_string();
    let (id, path) = &expected[0];
    assert!(
        text.contains(&format!(
            "pick one of its {leaf_count} leaf categories, for example {id} ({path})"
        )),
        "{text}"
    );
}

#[test]
fn an_expired_category_names_its_replacements_id_and_name() {
    struct Expired;
    impl Catalog for Expired {
        fn category(&self, _: Marketplace, id: u32) -> CategoryStatus {
            assert_eq!(id, 179);
            CategoryStatus::Expired {
                replacement: 171957,
                replacement_path: "Computers/Tablets & Networking > Desktops & All-In-Ones > PC Desktops & All-In-Ones".into(),
            }
        }
        fn check_aspects(
            &self,
            _: Marketplace,
            _: u32,
            _: &taxonomy_aspects::ListingAspects,
        ) -> Option<Vec<taxonomy_aspects::Problem>> {
            unreachable!("an expired category's aspects are not checked")
        }
    }
    let listing: Listing = serde_json::from_value(valid()).unwrap();
    let problems = check(&listing, &Expired);
    assert_eq!(problems.len(), 1);
    assert_eq!(problems[0].field, "offer.categoryId");
    assert!(
        matches!(
            &problems[0].kind,
            ProblemKind::Expired {
                replacement: 171957,
                ..
            }
        ),
        "{:?}",
        problems[0].kind
    );
    assert!(
        problems[0].to_string().ends_with(
            "list in its replacement, 171957 (Computers/Tablets & Networking > Desktops & All-In-Ones > PC Desktops & All-In-Ones)"
        ),
        "{}",
        problems[0]
    );
}

#[test]
fn a_missing_required_aspect_is_refused_naming_it() {
    let p = only(|v| {
        v["inventoryItem"]["product"]["aspects"]
            .as_object_mut()
            .unwrap()
            .remove("Brand");
    });
    assert_eq!(p.field, "inventoryItem.product.aspects[\"Brand\"]");
    assert!(matches!(
        p.kind,
        ProblemKind::Aspect(taxonomy_aspects::Problem::MissingRequired { .. })
    ));
}

#[test]
fn a_value_outside_a_selection_only_list_is_refused() {
    let p = only(|v| v["inventoryItem"]["product"]["aspects"]["Type"] = json!(["Desktops"]));
    assert_eq!(p.field, "inventoryItem.product.aspects[\"Type\"]");
    assert!(matches!(
        p.kind,
        ProblemKind::Aspect(taxonomy_aspects::Problem::NotAllowed { .. })
    ));
}

#[test]
fn a_title_over_80_characters_is_refused() {
    let p = only(|v| v["inventoryItem"]["product"]["title"] = json!("é".repeat(81)));
    assert_eq!(p.field, "inventoryItem.product.title");
    assert_eq!(
        p.kind,
        ProblemKind::TooLong {
            length: 81,
            max: 80
        }
    );
    // 80 characters of two bytes each are fine: characters, not bytes, are counted.
    let mut value = valid();
    value["inventoryItem"]["product"]["title"] = json!("é".repeat(80));
    assert_eq!(problems_of(value), vec![]);
}

#[test]
fn a_missing_title_is_refused() {
    let p = only(|v| {
        v["inventoryItem"]["product"]
            .as_object_mut()
            .unwrap()
            .remove("title");
    });
    assert_eq!(
        (p.field.as_str(), p.kind),
        ("inventoryItem.product.title", ProblemKind::Missing)
    );
}

#[test]
fn a_subtitle_over_55_characters_is_refused() {
    let p = only(|v| v["inventoryItem"]["product"]["subtitle"] = json!("x".repeat(56)));
    assert_eq!(p.field, "inventoryItem.product.subtitle");
    assert_eq!(
        p.kind,
        ProblemKind::TooLong {
            length: 56,
            max: 55
        }
    );
}

#[test]
fn a_description_over_500000_characters_is_refused() {
    let p = only(|v| v["inventoryItem"]["product"]["description"] = json!("x".repeat(500_001)));
    assert_eq!(p.field, "inventoryItem.product.description");
    let p = only(|v| v["offer"]["listingDescription"] = json!("x".repeat(500_001)));
    assert_eq!(p.field, "offer.listingDescription");
}

#[test]
fn a_sku_over_50_characters_is_refused() {
    let p = only(|v| v["offer"]["sku"] = json!("A".repeat(51)));
    assert_eq!(p.field, "offer.sku");
    assert_eq!(
        p.kind,
        ProblemKind::TooLong {
            length: 51,
            max: 50
        }
    );
}

#[test]
fn a_sku_outside_the_alphabet_is_refused() {
    let p = only(|v| v["offer"]["sku"] = json!("SHOE 42/blue"));
    assert_eq!(p.field, "offer.sku");
    assert_eq!(p.kind, ProblemKind::BadSkuCharacter { character: ' ' });
}

#[test]
fn more_than_24_images_are_refused() {
    let p = only(|v| {
        v["inventoryItem"]["product"]["imageUrls"] = json!(
            (0..25)
                .map(|i| format!("https://example.com/{i}.jpg"))
                .collect::<Vec<_>>()
        )
    });
    assert_eq!(p.field, "inventoryItem.product.imageUrls");
    assert_eq!(p.kind, ProblemKind::TooManyImages { count: 25, max: 24 });
}

#[test]
fn an_image_that_is_not_https_is_refused() {
    let p = only(|v| {
        v["inventoryItem"]["product"]["imageUrls"] =
            json!(["https://example.com/1.jpg", "http://example.com/2.jpg"])
    });
    assert_eq!(
        (p.field.as_str(), p.kind),
        ("inventoryItem.product.imageUrls[1]", ProblemKind::NotHttps)
    );
}

#[test]
fn a_price_of_zero_is_refused() {
    for value in ["0", "0.00", "-5", "abc"] {
        let p = only(|v| v["offer"]["pricingSummary"]["price"]["value"] = json!(value));
        assert_eq!(
            (p.field.as_str(), p.kind),
            (
                "offer.pricingSummary.price.value",
                ProblemKind::PriceNotPositive
            )
        );
    }
}

#[test]
fn a_price_in_another_currency_than_the_marketplaces_is_refused() {
    let p = only(|v| v["offer"]["pricingSummary"]["price"]["currency"] = json!("EUR"));
    assert_eq!(
        (p.field.as_str(), p.kind),
        (
            "offer.pricingSummary.price.currency",
            ProblemKind::WrongCurrency { expected: "USD" }
        )
    );
}

#[test]
fn a_quantity_that_is_not_a_whole_number_of_at_least_0_is_refused() {
    for q in [json!(-1), json!(1.5)] {
        let p = only(|v| v["offer"]["availableQuantity"] = q.clone());
        assert_eq!(
            (p.field.as_str(), p.kind),
            ("offer.availableQuantity", ProblemKind::BadQuantity)
        );
        let p = only(|v| {
            v["inventoryItem"]["availability"]["shipToLocationAvailability"]["quantity"] = q
        });
        assert_eq!(
            p.field,
            "inventoryItem.availability.shipToLocationAvailability.quantity"
        );
    }
}

/// eBay types every quantity as an `int32`: one above 2,147,483,647 passed the check and
/// eBay refused it. Each is refused naming its field; the largest int32 passes.
#[test]
fn a_quantity_above_ebays_32_bit_limit_is_refused_naming_its_field() {
    // Each field, as the problem names it; its place in the file is the same path.
    let fields = [
        "offer.availableQuantity",
        "offer.lotSize",
        "offer.quantityLimitPerBuyer",
        "inventoryItem.availability.shipToLocationAvailability.quantity",
    ];
    let set = |v: &mut Value, field: &str, q: Value| {
        let mut at = v;
        for key in field.split('.') {
            at = &mut at[key];
        }
        *at = q;
    };
    for field in fields {
        for q in [json!(2_147_483_648_u64), json!(u64::MAX), json!(-1)] {
            let p = only(|v| set(v, field, q.clone()));
            assert_eq!(
                (p.field.as_str(), &p.kind),
                (field, &ProblemKind::BadQuantity),
                "{q}"
            );
            assert_eq!(
                p.to_string(),
                format!(
                    "{field}: a quantity is a whole number from 0 to 2147483647 (eBay's int32)"
                )
            );
        }
        let mut largest = valid();
        set(&mut largest, field, json!(2_147_483_647));
        assert_eq!(problems_of(largest), vec![], "{field}");
    }
}

/// The issue's listing, through the compiled-in rules of US 179: `"Operating System
/// Edition": "Home"` (allowed only with Windows) and `"Operating System": "macOS"`, each
/// given 2,000 times: the problems of each aspect are bounded and their printed size does not
/// grow with the values given (it needed 3.5 GB at 8,000).
#[test]
fn a_constrained_value_repeated_thousands_of_times_gives_bounded_problems() {
    let mut value = valid();
    let aspects = &mut value["inventoryItem"]["product"]["aspects"];
    aspects["Operating System Edition"] = json!(vec!["Home"; 2_000]);
    aspects["Operating System"] = json!(vec!["macOS"; 2_000]);
    aspects["Features"] = json!(
        (0..2_000)
            .map(|i| format!("Feature {i}"))
            .collect::<Vec<_>>()
    );
    let problems = problems_of(value);
    let text: String = problems.iter().map(|p| format!("{p}\n")).collect();
    let of = |aspect: &str| {
        let field = format!("inventoryItem.product.aspects[{aspect:?}]");
        problems.iter().filter(move |p| p.field == field)
    };
    // TooManyValues, ten ConstraintNotMet, the count of the others.
    assert_eq!(
        of("Operating System Edition").count(),
        taxonomy_aspects::limits::PROBLEMS_PER_ASPECT + 2,
        "{text}"
    );
    assert!(
        text.contains(
            r#""Operating System Edition" has 1990 more problems of its values, not listed"#
        ),
        "{text}"
    );
    // A SINGLE aspect and a MULTI one given more values than eBay takes: one problem each.
    assert_eq!(of("Operating System").count(), 1, "{text}");
    assert!(
        text.contains(r#""Features" takes at most 30 values (itemToAspectCardinality MULTI), got 2000: "Feature 0", "Feature 1", "Feature 2", "Feature 3", "Feature 4" and 1995 more; keep 30"#),
        "{text}"
    );
    assert_eq!(problems.len(), 14, "{text}");
    assert!(text.len() < 4096, "{} bytes:\n{text}", text.len());
}

#[test]
fn each_listing_policy_and_the_location_are_needed_to_publish() {
    for field in ["fulfillmentPolicyId", "paymentPolicyId", "returnPolicyId"] {
        let p = only(|v| {
            v["offer"]["listingPolicies"]
                .as_object_mut()
                .unwrap()
                .remove(field);
        });
        assert_eq!(p.field, format!("offer.listingPolicies.{field}"));
        assert_eq!(p.kind, ProblemKind::Missing);
    }
    let p = only(|v| {
        v["offer"]
            .as_object_mut()
            .unwrap()
            .remove("merchantLocationKey");
    });
    assert_eq!(
        (p.field.as_str(), p.kind),
        ("offer.merchantLocationKey", ProblemKind::Missing)
    );
}

#[test]
fn every_problem_of_a_listing_is_reported_at_once() {
    let mut value = valid();
    value["offer"]["sku"] = json!("bad sku");
    value["offer"]["pricingSummary"]["price"] = json!({"value": "0", "currency": "GBP"});
    value["inventoryItem"]["product"]["title"] = json!("t".repeat(90));
    value["inventoryItem"]["product"]["aspects"]["Type"] = json!(["Laptop"]);
    let fields: Vec<String> = problems_of(value).into_iter().map(|p| p.field).collect();
    assert_eq!(
        fields,
        [
            "offer.sku",
            "inventoryItem.product.title",
            "offer.pricingSummary.price.value",
            "offer.pricingSummary.price.currency",
            "inventoryItem.product.aspects[\"Type\"]",
        ]
    );
}

#[test]
fn a_listing_built_from_category_and_aspects_is_not_checked_again_but_is_whole() {
    let listing = ListingBuilder::new(
        "DESKTOP-1",
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
    .unwrap();
    // The same listing as eBay's JSON: the file form, checked in full, passes too.
    let json = serde_json::to_value(&listing).unwrap();
    assert_eq!(json["offer"]["pricingSummary"]["price"]["currency"], "USD");
    assert_eq!(
        json["inventoryItem"]["product"]["aspects"]["Brand"],
        json!(["Dell"])
    );
    assert_eq!(problems_of(json), vec![]);

    // What the builder cannot vouch for is still checked: a missing location.
    let refused = ListingBuilder::new(
        "DESKTOP-2",
        category!(EBAY_US, "179"),
        aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "MPN": "7010" }),
    )
    .title("Dell")
    .description("A Dell OptiPlex 7010 desktop, tested and working.")
    .image("https://example.com/1.jpg")
    .condition(Condition::New)
    .quantity(1)
    .price("1.00")
    .policies("f", "p", "r")
    .build()
    .unwrap_err();
    let fields: Vec<&str> = refused.0.iter().map(|p| p.field.as_str()).collect();
    assert_eq!(fields, ["offer.merchantLocationKey"]);
}

#[test]
fn aspects_changed_after_building_are_checked_again() {
    let mut listing = ListingBuilder::new(
        "DESKTOP-1",
        category!(EBAY_US, "179"),
        aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "MPN": "7010" }),
    )
    .title("Dell")
    .description("A Dell OptiPlex 7010 desktop, tested and working.")
    .image("https://example.com/1.jpg")
    .condition(Condition::New)
    .quantity(1)
    .price("1.00")
    .policies("f", "p", "r")
    .merchant_location_key("w")
    .build()
    .unwrap();
    let product = listing.inventory_item.product.as_mut().unwrap();
    product.aspects.remove("Brand");
    let problems = check(&listing, &CompiledIn);
    assert_eq!(problems.len(), 1);
    assert_eq!(
        problems[0].field,
        "inventoryItem.product.aspects[\"Brand\"]"
    );
}

#[test]
fn a_file_round_trips_unchanged_fields_included() {
    let mut value = valid();
    value["offer"]["tax"] = json!({"vatPercentage": 19});
    value["inventoryItem"]["product"]["epid"] = json!("123");
    let listing: Listing = serde_json::from_value(value.clone()).unwrap();
    assert_eq!(serde_json::to_value(&listing).unwrap(), value);
}

mod conditions {
    //! The condition against the category's policy (getItemConditionPolicies). The committed
    //! snapshots carry no policy, so these tests lend one through a catalog that is the
    //! compiled-in one plus a policy for category 179, shaped like eBay's trading-card
    //! policies (graded: grader and grade required, certification number free text).

    use super::*;
    use marketplace_listing::{AllowedCondition, ConditionPolicy, DescriptorRule, DescriptorValue};

    const GRADER: DescriptorRule<'static> = DescriptorRule {
        id: 27501,
        name: "Professional Grader",
        required: true,
        multiple: false,
        free_text: false,
        max_length: None,
        values: &[
            DescriptorValue {
                id: 275010,
                name: "PSA",
            },
            DescriptorValue {
                id: 275011,
                name: "BCCG",
            },
        ],
        requires: &[27502],
    };
    const GRADE: DescriptorRule<'static> = DescriptorRule {
        id: 27502,
        name: "Grade",
        required: true,
        multiple: false,
        free_text: false,
        max_length: None,
        values: &[
            DescriptorValue {
                id: 275020,
                name: "10",
            },
            DescriptorValue {
                id: 275021,
                name: "9.5",
            },
        ],
        requires: &[],
    };
    const CERTIFICATION: DescriptorRule<'static> = DescriptorRule {
        id: 27503,
        name: "Certification Number",
        required: false,
        multiple: false,
        free_text: true,
        max_length: Some(30),
        values: &[],
        requires: &[],
    };
    const CARD_CONDITION: DescriptorRule<'static> = DescriptorRule {
        id: 40001,
        name: "Card Condition",
        required: false,
        multiple: false,
        free_text: false,
        max_length: None,
        values: &[DescriptorValue {
            id: 400010,
            name: "Near mint or better",
        }],
        requires: &[],
    };

    struct WithPolicy(ConditionPolicy<'static>);

    impl Catalog for WithPolicy {
        fn category(&self, m: Marketplace, id: u32) -> CategoryStatus {
            CompiledIn.category(m, id)
        }
        fn check_aspects(
            &self,
            m: Marketplace,
            id: u32,
            aspects: &taxonomy_aspects::ListingAspects,
        ) -> Option<Vec<taxonomy_aspects::Problem>> {
            CompiledIn.check_aspects(m, id, aspects)
        }
        fn condition_policy(
            &self,
            m: Marketplace,
            id: u32,
            f: &mut dyn FnMut(ConditionPolicy<'_>),
        ) -> bool {
            (m, id) == (Marketplace::Us, 179) && {
                f(self.0);
                true
            }
        }
    }

    fn cards() -> WithPolicy {
        WithPolicy(ConditionPolicy {
            required: true,
            conditions: &[
                AllowedCondition {
                    condition: Condition::LikeNew,
                    descriptors: &[GRADER, GRADE, CERTIFICATION],
                },
                AllowedCondition {
                    condition: Condition::UsedVeryGood,
                    descriptors: &[CARD_CONDITION],
                },
            ],
        })
    }

    fn problems_with(catalog: &dyn Catalog, change: impl FnOnce(&mut Value)) -> Vec<Problem> {
        let mut value = valid();
        change(&mut value);
        let listing: Listing = serde_json::from_value(value).unwrap();
        check(&listing, catalog)
    }

    fn graded(v: &mut Value) {
        v["inventoryItem"]["condition"] = json!("LIKE_NEW");
        v["inventoryItem"]["conditionDescriptors"] = json!([
            {"name": "27501", "values": ["275010"]},
            {"name": "27502", "values": ["275020"]},
            {"name": "27503", "additionalInfo": "1234567890"}
        ]);
    }

    #[test]
    fn a_condition_and_descriptors_the_policy_allows_pass() {
        assert_eq!(problems_with(&cards(), graded), vec![]);
        let ungraded = |v: &mut Value| {
            v["inventoryItem"]["condition"] = json!("USED_VERY_GOOD");
            v["inventoryItem"]["conditionDescriptors"] =
                json!([{"name": "40001", "values": ["400010"]}]);
        };
        assert_eq!(problems_with(&cards(), ungraded), vec![]);
    }

    #[test]
    fn a_condition_the_category_does_not_allow_is_refused_naming_the_allowed_ones() {
        // valid() is USED_EXCELLENT.
        let problems = problems_with(&cards(), |_| {});
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!(problems[0].field, "inventoryItem.condition");
        assert_eq!(
            problems[0].kind,
            ProblemKind::ConditionNotAllowed {
                condition: Condition::UsedExcellent,
                allowed: "LIKE_NEW, USED_VERY_GOOD".into()
            }
        );
        assert_eq!(
            problems[0].to_string(),
            "inventoryItem.condition: USED_EXCELLENT is not allowed in this category (eBay: errorId 25021); it allows LIKE_NEW, USED_VERY_GOOD (getItemConditionPolicies)"
        );
    }

    #[test]
    fn a_restricted_condition_the_policy_does_not_list_is_not_refused() {
        // The refurbished conditions are listed only to eligible sellers' user tokens.
        let problems = problems_with(&cards(), |v| {
            v["inventoryItem"]["condition"] = json!("EXCELLENT_REFURBISHED");
        });
        assert_eq!(problems, vec![]);
        let none = WithPolicy(ConditionPolicy {
            required: false,
            conditions: &[],
        });
        let problems = problems_with(&none, |v| {
            v["inventoryItem"]["condition"] = json!("EXCELLENT_REFURBISHED");
        });
        assert_eq!(problems.len(), 1, "{problems:#?}");
    }

    #[test]
    fn a_condition_in_a_category_that_takes_none_says_the_category_takes_no_item_condition() {
        let none = WithPolicy(ConditionPolicy {
            required: false,
            conditions: &[],
        });
        let problems = problems_with(&none, |_| {});
        assert_eq!(problems.len(), 1, "{problems:#?}");
        let text = problems[0].to_string();
        assert!(
            text.starts_with("inventoryItem.condition: USED_EXCELLENT is not allowed: this category takes no item condition, leave it out"),
            "{text}"
        );
        assert!(!text.contains("allows none"), "{text}");
    }

    #[test]
    fn a_missing_condition_is_refused_only_where_the_policy_requires_one() {
        let none = |v: &mut Value| {
            v["inventoryItem"]
                .as_object_mut()
                .unwrap()
                .remove("condition");
        };
        let problems = problems_with(&cards(), none);
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!(
            (problems[0].field.as_str(), &problems[0].kind),
            ("inventoryItem.condition", &ProblemKind::Missing)
        );
        let optional = WithPolicy(ConditionPolicy {
            required: false,
            conditions: &[],
        });
        assert_eq!(problems_with(&optional, none), vec![]);
        // A category that takes no condition refuses one.
        let problems = problems_with(&optional, |_| {});
        assert_eq!(
            problems[0].kind,
            ProblemKind::ConditionNotAllowed {
                condition: Condition::UsedExcellent,
                allowed: "none".into()
            }
        );
        // Without a known policy, a condition is still needed (a published offer needs one).
        let problems = problems_with(&CompiledIn, none);
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!(problems[0].field, "inventoryItem.condition");
    }

    #[test]
    fn descriptors_that_break_their_constraints_are_refused_each_naming_its_field() {
        let problems = problems_with(&cards(), |v| {
            v["inventoryItem"]["condition"] = json!("LIKE_NEW");
            v["inventoryItem"]["conditionDescriptors"] = json!([
                {"name": "27501", "values": ["275010", "275011"]},
                {"name": "27503", "additionalInfo": "x".repeat(31)},
                {"name": "40001", "values": ["400010"]},
                {"name": "27501", "values": ["275010"]}
            ]);
        });
        let got: Vec<(String, ProblemKind)> =
            problems.into_iter().map(|p| (p.field, p.kind)).collect();
        assert_eq!(
            got,
            vec![
                (
                    "inventoryItem.conditionDescriptors[0].values".into(),
                    ProblemKind::DescriptorTakesOneValue
                ),
                (
                    "inventoryItem.conditionDescriptors[1].additionalInfo".into(),
                    ProblemKind::TooLong {
                        length: 31,
                        max: 30
                    }
                ),
                (
                    "inventoryItem.conditionDescriptors[2].name".into(),
                    ProblemKind::DescriptorNotAllowed {
                        allowed:
                            "27501 Professional Grader, 27502 Grade, 27503 Certification Number"
                                .into()
                    }
                ),
                (
                    "inventoryItem.conditionDescriptors[3].name".into(),
                    ProblemKind::DescriptorTwice
                ),
                (
                    "inventoryItem.conditionDescriptors".into(),
                    ProblemKind::DescriptorRequired {
                        descriptor: "27502 Grade".into()
                    }
                ),
            ]
        );
    }

    #[test]
    fn a_value_outside_the_descriptors_values_and_a_lone_descriptor_are_refused() {
        let problems = problems_with(&cards(), |v| {
            graded(v);
            v["inventoryItem"]["conditionDescriptors"][1]["values"] = json!(["999"]);
        });
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!(
            problems[0].to_string(),
            "inventoryItem.conditionDescriptors[1].values[0]: not a value of 27502 Grade; it takes 275020 10, 275021 9.5"
        );
        // The grader needs the grade; when the grade is optional, that is said of the grader.
        const OPTIONAL_GRADE: DescriptorRule<'static> = DescriptorRule {
            required: false,
            ..GRADE
        };
        let catalog = WithPolicy(ConditionPolicy {
            required: true,
            conditions: &[AllowedCondition {
                condition: Condition::LikeNew,
                descriptors: &[GRADER, OPTIONAL_GRADE],
            }],
        });
        let problems = problems_with(&catalog, |v| {
            v["inventoryItem"]["condition"] = json!("LIKE_NEW");
            v["inventoryItem"]["conditionDescriptors"] =
                json!([{"name": "27501", "values": ["275010"]}]);
        });
        assert_eq!(problems.len(), 1, "{problems:#?}");
        assert_eq!(
            problems[0].to_string(),
            "inventoryItem.conditionDescriptors[0].name: 27501 Professional Grader must come with 27502 Grade"
        );
    }

    /// 800,000 wrong values of one descriptor printed 317 MB: each its own problem listing
    /// every allowed value. The problems of the descriptors are bounded (a few listed, the rest
    /// counted) and each lists a few allowed values and how many more.
    #[test]
    fn wrong_descriptor_values_give_a_bounded_number_of_problems_of_bounded_size() {
        use marketplace_listing::limits;
        let values: &'static [DescriptorValue<'static>] = Box::leak(
            (0..40)
                .map(|i| DescriptorValue {
                    id: 400_100 + i,
                    name: Box::leak(format!("Grade {i}").into_boxed_str()),
                })
                .collect(),
        );
        let many = DescriptorRule {
            id: 40010,
            name: "Card Grade",
            required: false,
            multiple: true,
            free_text: false,
            max_length: None,
            values,
            requires: &[27502],
        };
        let descriptors: &'static [DescriptorRule<'static>] =
            Box::leak(vec![GRADER, GRADE, many].into_boxed_slice());
        let conditions: &'static [AllowedCondition<'static>] =
            Box::leak(Box::new([AllowedCondition {
                condition: Condition::LikeNew,
                descriptors,
            }]));
        let catalog = WithPolicy(ConditionPolicy {
            required: true,
            conditions,
        });
        let wrong = 100_000;
        let problems = problems_with(&catalog, |v| {
            v["inventoryItem"]["condition"] = json!("LIKE_NEW");
            let mut entries = vec![
                json!({"name": "40010", "values": vec!["999"; wrong]}),
                json!({"name": "27501", "values": ["275010"]}),
            ];
            // A thousand repetitions: each "given twice", counted with the rest.
            entries.extend(vec![json!({"name": "27501", "values": ["275010"]}); 1_000]);
            v["inventoryItem"]["conditionDescriptors"] = json!(entries);
        });
        let text: String = problems.iter().map(|p| format!("{p}\n")).collect();
        // The grade required (a rule of the policy, always said), ten listed, the rest counted.
        assert_eq!(problems.len(), limits::PROBLEMS_PER_LIST + 2, "{text}");
        assert_eq!(
            problems[0].to_string(),
            "inventoryItem.conditionDescriptors[0].values[0]: not a value of 40010 Card Grade; it takes 400100 Grade 0, 400101 Grade 1, 400102 Grade 2, 400103 Grade 3, 400104 Grade 4, 400105 Grade 5, 400106 Grade 6, 400107 Grade 7, 400108 Grade 8, 400109 Grade 9 and 30 more"
        );
        let omitted = wrong + 1_000 - limits::PROBLEMS_PER_LIST;
        assert!(
            problems
                .iter()
                .any(|p| p.field == "inventoryItem.conditionDescriptors"
                    && p.kind == ProblemKind::More { count: omitted }),
            "{text}"
        );
        assert!(
            problems.iter().any(|p| p.kind
                == ProblemKind::DescriptorRequired {
                    descriptor: "27502 Grade".into()
                }),
            "{text}"
        );
        assert!(text.len() < 4096, "{} bytes:\n{text}", text.len());
    }
}

/// publishOffer needs at least one picture: a listing with `imageUrls: []` or none passed
/// the check and was published by the fake.
#[test]
fn a_listing_without_a_picture_is_refused() {
    for change in [
        (|v: &mut Value| v["inventoryItem"]["product"]["imageUrls"] = json!([])) as fn(&mut Value),
        |v| {
            v["inventoryItem"]["product"]
                .as_object_mut()
                .unwrap()
                .remove("imageUrls");
        },
    ] {
        let p = only(change);
        assert_eq!(
            (p.field.as_str(), &p.kind),
            ("inventoryItem.product.imageUrls", &ProblemKind::NoPicture)
        );
        assert!(p.to_string().contains("at least one picture"), "{p}");
    }
}

/// publishOffer needs a description: the product's or the offer's `listingDescription`.
#[test]
fn a_listing_without_a_description_is_refused_unless_the_offer_has_one() {
    let p = only(|v| v["inventoryItem"]["product"]["description"] = json!(" "));
    assert_eq!(
        (p.field.as_str(), &p.kind),
        (
            "inventoryItem.product.description",
            &ProblemKind::NoDescription
        )
    );
    assert!(p.to_string().contains("offer.listingDescription"), "{p}");
    let mut value = valid();
    value["inventoryItem"]["product"]
        .as_object_mut()
        .unwrap()
        .remove("description");
    value["offer"]["listingDescription"] = json!("A desktop, as listed.");
    assert_eq!(problems_of(value), vec![]);
}

/// `format` is eBay's FormatTypeEnum: `"FIXED"` (errorId 2004 at createOffer) is refused,
/// naming what eBay takes.
#[test]
fn a_format_other_than_fixed_price_or_auction_is_refused() {
    let p = only(|v| v["offer"]["format"] = json!("FIXED"));
    assert_eq!(p.field, "offer.format");
    assert_eq!(
        p.to_string(),
        "offer.format: \"FIXED\" is not a FormatTypeEnum value (eBay refuses it: errorId 2004); it takes AUCTION, FIXED_PRICE"
    );
}

/// `listingDuration`: a value of ListingDurationEnum, and one the format takes (a
/// fixed-price offer: GTC only; an auction: 1 to 10 days, and it needs one).
#[test]
fn a_listing_duration_the_format_does_not_take_is_refused() {
    let p = only(|v| v["offer"]["listingDuration"] = json!("FOREVER"));
    assert_eq!(p.field, "offer.listingDuration");
    assert!(
        matches!(&p.kind, ProblemKind::NotInEnum { value, enumeration: "ListingDurationEnum", .. } if value == "FOREVER"),
        "{p}"
    );
    let p = only(|v| v["offer"]["listingDuration"] = json!("DAYS_7"));
    assert_eq!(
        p.to_string(),
        "offer.listingDuration: not a duration of a FIXED_PRICE offer (publishOffer); it takes GTC"
    );
    let mut gtc = valid();
    gtc["offer"]["listingDuration"] = json!("GTC");
    assert_eq!(problems_of(gtc), vec![]);
    let p = only(|v| v["offer"]["format"] = json!("AUCTION"));
    assert_eq!(
        (p.field.as_str(), &p.kind),
        ("offer.listingDuration", &ProblemKind::Missing)
    );
    let p = only(|v| {
        v["offer"]["format"] = json!("AUCTION");
        v["offer"]["listingDuration"] = json!("GTC");
    });
    assert!(
        matches!(p.kind, ProblemKind::DurationNotForFormat { .. }),
        "{p}"
    );
}

/// An offer to publish with nothing to sell: `availableQuantity` 0, or no offer quantity and
/// the item's ship-to quantity 0 (publishOffer: 25004), or no quantity at all.
#[test]
fn a_quantity_of_0_on_an_offer_to_publish_is_refused() {
    let p = only(|v| v["offer"]["availableQuantity"] = json!(0));
    assert_eq!(
        (p.field.as_str(), &p.kind),
        ("offer.availableQuantity", &ProblemKind::NothingToSell)
    );
    let p = only(|v| {
        v["offer"]
            .as_object_mut()
            .unwrap()
            .remove("availableQuantity");
        v["inventoryItem"]["availability"]["shipToLocationAvailability"]["quantity"] = json!(0);
    });
    assert_eq!(
        (p.field.as_str(), &p.kind),
        (
            "inventoryItem.availability.shipToLocationAvailability.quantity",
            &ProblemKind::NothingToSell
        )
    );
    let p = only(|v| {
        v["offer"]
            .as_object_mut()
            .unwrap()
            .remove("availableQuantity");
        v["inventoryItem"]
            .as_object_mut()
            .unwrap()
            .remove("availability");
    });
    assert_eq!(p.kind, ProblemKind::Missing);
    // The offer's quantity overrides the item's.
    let mut value = valid();
    value["inventoryItem"]["availability"]["shipToLocationAvailability"]["quantity"] = json!(0);
    assert_eq!(problems_of(value), vec![]);
}

/// A price with more decimals than its currency has (`"12.999"` in USD) is refused naming
/// the currency's decimals; two decimals pass.
#[test]
fn a_price_with_more_decimals_than_its_currency_has_is_refused() {
    let p = only(|v| v["offer"]["pricingSummary"]["price"]["value"] = json!("12.999"));
    assert_eq!(
        (p.field.as_str(), &p.kind),
        (
            "offer.pricingSummary.price.value",
            &ProblemKind::TooManyDecimals {
                currency: "USD".into(),
                max: 2
            }
        )
    );
    assert!(p.to_string().contains("at most 2"), "{p}");
    for ok in ["12.99", "12.9", "12"] {
        let mut value = valid();
        value["offer"]["pricingSummary"]["price"]["value"] = json!(ok);
        assert_eq!(problems_of(value), vec![], "{ok}");
    }
}

/// `conditionDescription`: at most 1,000 characters.
#[test]
fn a_condition_description_over_1000_characters_is_refused() {
    let p = only(|v| v["inventoryItem"]["conditionDescription"] = json!("x".repeat(1_100)));
    assert_eq!(
        (p.field.as_str(), &p.kind),
        (
            "inventoryItem.conditionDescription",
            &ProblemKind::TooLong {
                length: 1_100,
                max: 1_000
            }
        )
    );
    let mut value = valid();
    value["inventoryItem"]["conditionDescription"] = json!("x".repeat(1_000));
    assert_eq!(problems_of(value), vec![]);
}

/// Values eBay refuses at createOrReplaceInventoryItem (errorId 2004): a condition outside
/// ConditionEnum (`USED`) is refused as the file is read, naming the field; a package unit
/// outside its enumeration is a problem naming the field.
#[test]
fn enum_values_ebay_refuses_at_create_time_are_refused() {
    let mut value = valid();
    value["inventoryItem"]["condition"] = json!("USED");
    let e = serde_json::from_value::<Listing>(value).unwrap_err();
    assert!(
        e.to_string()
            .contains("\"USED\" is not a ConditionEnum value"),
        "{e}"
    );
    let p = only(|v| {
        v["inventoryItem"]["packageWeightAndSize"] = json!({"weight": {"value": 2, "unit": "KG"}, "dimensions": {"length": 1, "width": 1, "height": 1, "unit": "CENTIMETER"}});
    });
    assert_eq!(p.field, "inventoryItem.packageWeightAndSize.weight.unit");
    assert!(p.to_string().contains("KILOGRAM"), "{p}");
}

/// eBay's Inventory API names eBay Motors `EBAY_MOTORS` (its MarketplaceEnum; the Taxonomy and
/// Metadata APIs say `EBAY_MOTORS_US`): a listing file with `EBAY_MOTORS` passes, one with
/// `EBAY_MOTORS_US` (which createOffer refuses) is refused asking "did you mean EBAY_MOTORS"
/// (the check took `EBAY_MOTORS_US` and refused `EBAY_MOTORS`).
#[test]
fn an_ebay_motors_listing_takes_the_inventory_apis_marketplace_id_ebay_motors() {
    struct Motors;
    impl Catalog for Motors {
        fn category(&self, marketplace: Marketplace, id: u32) -> CategoryStatus {
            assert_eq!((marketplace, id), (Marketplace::MotorsUs, 33564));
            CategoryStatus::Leaf
        }
        fn check_aspects(
            &self,
            _: Marketplace,
            _: u32,
            _: &taxonomy_aspects::ListingAspects,
        ) -> Option<Vec<taxonomy_aspects::Problem>> {
            Some(Vec::new())
        }
    }
    let motors = |id: &str| {
        let mut v = valid();
        v["offer"]["marketplaceId"] = json!(id);
        v["offer"]["categoryId"] = json!("33564");
        check(&serde_json::from_value(v).unwrap(), &Motors)
    };
    assert_eq!(motors("EBAY_MOTORS"), vec![]);
    let problems = motors("EBAY_MOTORS_US");
    assert_eq!(problems.len(), 1, "{problems:#?}");
    assert_eq!(
        problems[0].to_string(),
        "offer.marketplaceId: not a known marketplace id; did you mean EBAY_MOTORS (eBay Motors (United States))?"
    );
    assert_eq!(
        Marketplace::MotorsUs.inventory_marketplace_id(),
        "EBAY_MOTORS"
    );
    assert_eq!(Marketplace::MotorsUs.marketplace_id(), "EBAY_MOTORS_US");
    assert_eq!(Marketplace::Us.inventory_marketplace_id(), "EBAY_US");
}
