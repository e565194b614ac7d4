//! getItemConditionPolicies (the Sell Metadata API) through the Taxonomy client, against the
//! fake marketplace over loopback: every category (gzipped, one policy a leaf), a filter, more
//! than 50 ids split into calls of 50, `204 No Content`, eBay's error ids typed with eBay's
//! message, a cut-off gzip body; and the fake's publishOffer refusing a condition the
//! category's policy does not take (errorId 25021) through marketplace-listing's publish.

use crate::taxonomy_support as support;

use crate::inventory_support as fake_inventory;

use fake_marketplace::metadata::condition_policies_path;
use fake_marketplace::{FakeMarketplace, Fault};
use marketplace_client::model::{DescriptorMode, DescriptorUsage};
use marketplace_client::taxonomy::ApiError;
use marketplaces::Marketplace;
use serde_json::json;
use support::*;

fn us_path() -> String {
    condition_policies_path("EBAY_US")
}

#[test]
fn every_category_comes_gzipped_and_decoded_one_policy_a_leaf() {
    let fake = fake();
    let (client, _) = client(&fake);
    let answer = client.all_item_condition_policies(Marketplace::Us).unwrap();
    let tree = fake.tree(Marketplace::Us);
    assert_eq!(answer.item_condition_policies.len(), tree.leaf_count());
    assert!(
        answer
            .item_condition_policies
            .iter()
            .all(|p| tree.get(p.category_id).is_some_and(|c| c.leaf)
                && p.category_tree_id == Some(tree.meta.tree_id))
    );
    let requests = fake.requests_to(&us_path());
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].query, None);
    assert_eq!(requests[0].header("Accept-Encoding"), Some("gzip"));
    let answered = fake.answers_to(&us_path());
    assert_eq!(answered[0].header("Content-Encoding"), Some("gzip"));
    // The trading cards' graded condition, with eBay's descriptors.
    let cards = answer.get(183454).unwrap();
    assert!(cards.item_condition_required);
    let graded = cards.condition(2750).unwrap();
    let grader = &graded.condition_descriptors[0];
    assert_eq!(grader.condition_descriptor_id, 27501);
    let constraint = grader.condition_descriptor_constraint.as_ref().unwrap();
    assert_eq!(constraint.usage, Some(DescriptorUsage::Required));
    assert_eq!(constraint.applicable_to_condition_descriptor_ids, [27502]);
    let number = &graded.condition_descriptors[2];
    let free = number.condition_descriptor_constraint.as_ref().unwrap();
    assert_eq!(
        (free.mode.clone(), free.max_length),
        (Some(DescriptorMode::FreeText), Some(30))
    );
    // The restricted conditions are answered only to a seller's sell.inventory token.
    assert!(answer.get(179).unwrap().condition(2010).is_none());
}

#[test]
fn a_filter_gives_a_leafs_policy_and_the_leaves_below_a_parent() {
    let fake = fake();
    let (client, _) = client(&fake);
    let answer = client
        .item_condition_policies(Marketplace::Us, &[179, 179])
        .unwrap();
    assert_eq!(answer.item_condition_policies.len(), 1);
    assert!(answer.get(179).unwrap().condition(3000).is_some());
    let requests = fake.requests_to(&us_path());
    assert_eq!(
        requests[0].query.as_deref(),
        Some("filter=categoryIds%3A%7B179%7D")
    );
    let tree = fake.tree(Marketplace::Us);
    let parent = tree.get(183454).unwrap().parent.unwrap();
    let below = client
        .item_condition_policies(Marketplace::Us, &[parent])
        .unwrap();
    let (mut expected, mut stack) = (Vec::new(), vec![parent]);
    while let Some(id) = stack.pop() {
        let c = tree.get(id).unwrap();
        if c.leaf {
            expected.push(id);
        }
        stack.extend(&c.children);
    }
    let mut got: Vec<u32> = below
        .item_condition_policies
        .iter()
        .map(|p| p.category_id)
        .collect();
    expected.sort_unstable();
    got.sort_unstable();
    assert_eq!(got, expected);
    // No id asks nothing.
    fake.clear_requests();
    assert!(
        client
            .item_condition_policies(Marketplace::Us, &[])
            .unwrap()
            .item_condition_policies
            .is_empty()
    );
    assert!(fake.requests_to(&us_path()).is_empty());
}

#[test]
fn more_than_fifty_ids_are_asked_fifty_a_call_and_no_category_is_lost() {
    let fake = fake();
    let (client, _) = client(&fake);
    let leaves: Vec<u32> = fake
        .tree(Marketplace::Us)
        .listable()
        .filter(|c| c.leaf)
        .take(120)
        .map(|c| c.id)
        .collect();
    let answer = client
        .item_condition_policies(Marketplace::Us, &leaves)
        .unwrap();
    let got: Vec<u32> = answer
        .item_condition_policies
        .iter()
        .map(|p| p.category_id)
        .collect();
    assert_eq!(got, leaves);
    assert!(answer.warnings.is_empty(), "{:?}", answer.warnings);
    let requests = fake.requests_to(&us_path());
    let counts: Vec<usize> = requests
        .iter()
        .map(|r| r.query.as_deref().unwrap().matches("%7C").count() + 1)
        .collect();
    assert_eq!(counts, [50, 50, 20]);
}

#[test]
fn no_policy_is_204_and_an_empty_answer() {
    let fake = fake();
    fake.set_item_condition_policy(Marketplace::Us, 179, None);
    let (client, _) = client(&fake);
    let answer = client
        .item_condition_policies(Marketplace::Us, &[179])
        .unwrap();
    assert!(answer.item_condition_policies.is_empty());
    assert_eq!(fake.answers_to(&us_path())[0].status, 204);
}

#[test]
fn ebays_error_ids_are_typed_with_ebays_message() {
    let fake = fake();
    let (client, _) = client(&fake);
    let unknown = client
        .item_condition_policies(Marketplace::Us, &[999_999_999])
        .unwrap_err();
    assert_eq!(
        (unknown.status(), unknown.error_id()),
        (Some(400), Some(46003))
    );
    let text = unknown.to_string();
    assert!(
        text.contains("The specified categoryId was not found for the marketplace.")
            && text.contains("the metadata API")
            && text.contains("not a category of the marketplace's tree"),
        "{text}"
    );
    assert!(!unknown.is_retryable());
    let marketplace = client
        .all_item_condition_policies(Marketplace::Fr)
        .unwrap_err();
    assert_eq!(marketplace.error_id(), Some(46001));
    assert!(
        marketplace
            .to_string()
            .contains("The specified marketplace ID was not found."),
        "{marketplace}"
    );
    // 46002 and 46000 as eBay sends them (the client never sends a malformed filter).
    let body = |id: u32, category: &str, message: &str| {
        json!({"errors": [{"errorId": id, "domain": "API_METADATA", "category": category,
            "message": message}]})
        .to_string()
    };
    fake.fail_next(
        &us_path(),
        Fault::Status {
            status: 400,
            body: body(46002, "REQUEST", "The filter value is invalid."),
            headers: vec![],
        },
    );
    let filter = client
        .item_condition_policies(Marketplace::Us, &[179])
        .unwrap_err();
    assert_eq!(filter.error_id(), Some(46002));
    assert!(
        filter.to_string().contains("categoryIds:{id|id|…}"),
        "{filter}"
    );
    fake.fail_times(
        &us_path(),
        Fault::Status {
            status: 500,
            body: body(
                46000,
                "APPLICATION",
                "There was a problem with an eBay internal system or process.",
            ),
            headers: vec![],
        },
        10,
    );
    let internal = client
        .item_condition_policies(Marketplace::Us, &[179])
        .unwrap_err();
    assert_eq!(
        (internal.status(), internal.error_id()),
        (Some(500), Some(46000))
    );
    assert!(internal.is_retryable());
    assert!(fake.requests_to(&us_path()).len() > 3, "500 is retried");
}

#[test]
fn a_cut_off_gzip_body_is_a_clear_error() {
    let fake = fake();
    let (client, _) = client_with(&fake, config(&fake).with_max_retries(0));
    fake.fail_next(&us_path(), Fault::CutOffBody);
    let error = client
        .all_item_condition_policies(Marketplace::Us)
        .unwrap_err();
    assert!(matches!(error, ApiError::Truncated { .. }), "{error:?}");
    assert!(error.to_string().contains("was cut off"), "{error}");
    assert_eq!(
        fake.answers_to(&us_path())[0].header("Content-Encoding"),
        Some("gzip")
    );
}

#[test]
fn a_token_without_the_api_scope_is_refused_with_ebays_insufficient_scope() {
    let fake = fake();
    let http = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    // An application token for another scope only.
    let token: serde_json::Value = http
        .post(format!(
            "{}{}",
            fake.base_url(),
            fake_marketplace::TOKEN_PATH
        ))
        .basic_auth(fake.client_id(), Some(fake.client_secret()))
        .form(&[
            ("grant_type", "client_credentials"),
            ("scope", &fake.scope("/buy.item.feed")),
        ])
        .send()
        .unwrap()
        .json()
        .unwrap();
    let token = token["access_token"].as_str().expect("a token");
    let answer = http
        .get(format!("{}{}", fake.base_url(), us_path()))
        .bearer_auth(token)
        .send()
        .unwrap();
    assert_eq!(answer.status(), 403);
    let body: serde_json::Value = answer.json().unwrap();
    assert_eq!(body["errors"][0]["errorId"], 1100);
}

#[test]
fn publish_offer_refuses_a_condition_the_categorys_policy_does_not_take_with_25021() {
    use marketplace_listing::{Condition, ErrorKind, ListingBuilder};
    use taxonomy_macros::{aspects, category};

    let fake = FakeMarketplace::new();
    // Desktops (179) take New only here, and need a condition.
    fake.set_item_condition_policy(
        Marketplace::Us,
        179,
        Some(json!({"itemConditionRequired": true,
            "itemConditions": [{"conditionId": "1000", "conditionDescription": "New"}]})),
    );
    let inventory = fake_inventory::inventory(&fake);
    let listing = |condition: Condition| {
        ListingBuilder::new(
            "COND-1",
            category!(EBAY_US, "179"),
            aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "MPN": "7010" }),
        )
        .title("Dell OptiPlex 7010")
        .description("A Dell OptiPlex 7010 desktop, tested and working.")
        .condition(condition)
        .quantity(1)
        .price("149.00")
        .policies("f", "p", "r")
        .merchant_location_key("warehouse-1")
        .image("https://example.com/1.jpg")
        .build()
        .unwrap()
    };
    let error = inventory
        .publish(&listing(Condition::UsedExcellent))
        .unwrap_err();
    let refused = &error.errors()[0];
    assert_eq!(refused.kind, ErrorKind::Condition);
    assert_eq!(refused.error.error_id, 25021);
    assert!(
        refused.error.message.starts_with(
            "The eBay listing associated with the inventory item, or the unpublished offer has \
             invalid item condition information. The item condition USED_EXCELLENT (3000) is \
             not allowed in category 179 (PC Desktops & All-In-Ones)"
        ),
        "{}",
        refused.error.message
    );
    // The condition the policy takes publishes.
    inventory.publish(&listing(Condition::New)).unwrap();
}

/// The fake's made-up policies are plausible for the common leaves: phones (9355 "Cell
/// Phones & Smartphones") and laptops (177 "PC Laptops & Netbooks", 111422 "Apple Laptops")
/// require a condition and take what eBay's pages list for them, new to for parts, the
/// refurbished grades (restricted: answered to a seller's sell.inventory token) and seller
/// refurbished; a ticket's leaf takes none (the fake's rule of ids 3 modulo 7 left both
/// phones and laptops with no condition at all).
#[test]
fn phones_and_laptops_take_realistic_conditions_and_tickets_take_none() {
    let fake = fake();
    let client = marketplace_client::taxonomy::TaxonomyClient::new(
        config(&fake),
        fake_inventory::seller_tokens(&fake, &[fake_inventory::INVENTORY]),
    )
    .unwrap();
    let tree = fake.tree(Marketplace::Us);
    // 1306 "Other Tickets & Experiences", a leaf of 1305 "Tickets & Experiences".
    let ticket = 1306;
    assert_eq!(tree.get(ticket).and_then(|c| c.parent), Some(1305));
    let answer = client
        .item_condition_policies(Marketplace::Us, &[9355, 177, 111422, ticket])
        .unwrap();
    for id in [9355, 177, 111422] {
        let policy = answer.get(id).unwrap();
        assert!(policy.item_condition_required, "{id}");
        let ids: Vec<u32> = policy
            .item_conditions
            .iter()
            .map(|c| c.condition_id)
            .collect();
        assert_eq!(
            ids,
            [1000, 1500, 2000, 2010, 2020, 2030, 2500, 3000, 7000],
            "{id}"
        );
    }
    let none = answer.get(ticket).unwrap();
    assert!(none.item_conditions.is_empty(), "{ticket}");
    assert!(!none.item_condition_required);
}
