//! marketplace-listing's Inventory API calls and the fake's answers to them, held to eBay's
//! OpenAPI description (`tests/contract/sell_inventory_v1_oas3.json`, see
//! `tests/contract/README.md`): every operation the crate calls is documented and served, each
//! request the client sends is the documented method and path, with the documented required
//! headers and a body of the documented schema, and every answer of the fake has a documented
//! status and, for an error, a documented error id with its domain and category.

use crate::openapi;

use crate::inventory_support as fake_inventory;
use fake_inventory::inventory;
use std::path::Path;

use fake_marketplace::FakeMarketplace;
use marketplace_listing::{Condition, ListingBuilder};
use marketplaces::Marketplace;
use openapi::Document;
use serde_json::{Value, json};
use taxonomy_macros::{aspects, category};

/// Every operation marketplace-listing calls (and `listing publish`: getInventoryLocations,
/// once a run), with the schema of its request body.
const CALLED: [(&str, Option<&str>); 16] = [
    ("createOrReplaceInventoryItem", Some("InventoryItem")),
    ("getInventoryItem", None),
    ("deleteInventoryItem", None),
    ("getOffers", None),
    ("createOffer", Some("EbayOfferDetailsWithKeys")),
    ("updateOffer", Some("EbayOfferDetailsWithId")),
    ("publishOffer", None),
    ("withdrawOffer", None),
    (
        "bulkCreateOrReplaceInventoryItem",
        Some("BulkInventoryItem"),
    ),
    ("bulkGetInventoryItem", Some("BulkGetInventoryItem")),
    ("bulkCreateOffer", Some("BulkEbayOfferDetailsWithKeys")),
    ("bulkPublishOffer", Some("BulkOffer")),
    ("createInventoryLocation", Some("InventoryLocationFull")),
    ("getInventoryLocation", None),
    ("getInventoryLocations", None),
    ("bulkUpdatePriceQuantity", Some("BulkPriceQuantity")),
];

/// The operations `publish_group` calls beyond [`CALLED`] (the inventory item group calls,
/// and deleteOffer for a variant removed), with the schema of their request body: their
/// requests and answers are held to the description by
/// `every_request_and_answer_of_the_group_calls_is_documented`.
const CALLED_BY_GROUPS: [(&str, Option<&str>); 6] = [
    (
        "createOrReplaceInventoryItemGroup",
        Some("InventoryItemGroup"),
    ),
    ("getInventoryItemGroup", None),
    ("deleteInventoryItemGroup", None),
    (
        "publishOfferByInventoryItemGroup",
        Some("PublishByInventoryItemGroupRequest"),
    ),
    (
        "withdrawOfferByInventoryItemGroup",
        Some("WithdrawByInventoryItemGroupRequest"),
    ),
    ("deleteOffer", None),
];

/// The operations the fake serves that marketplace-listing does not call, for the other
/// clients that run eBay's Inventory calls against it (hendt's `ebay-api`, `ebay-rest`), with
/// the schema of their 200 answer.
const SERVED_ONLY: [(&str, Option<&str>); 2] = [
    ("getOffer", Some("EbayOfferDetailsWithAll")),
    ("getInventoryItems", Some("InventoryItems")),
];

/// What the fake answers that the description does not list, each as eBay answers it:
/// (operation, status, error id). A second createOffer of a SKU and marketplace is eBay's
/// 25002 "Offer entity already exists" naming the offerId; a SKU without offers is getOffers'
/// 404 with 25713.
const DEPARTURES: [(&str, u16, u32); 2] = [("createOffer", 400, 25002), ("getOffers", 404, 25713)];

fn document() -> Document {
    Document::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/contract/sell_inventory_v1_oas3.json"),
    )
}

#[test]
fn every_operation_called_is_documented_and_served() {
    let doc = document();
    assert_eq!(doc.base_path(), "/sell/inventory/v1");
    assert_eq!(doc.version(), "1.18.0");
    let ops = doc.operations();
    let served = FakeMarketplace::new().route_patterns();
    for &(id, schema) in CALLED.iter().chain(&CALLED_BY_GROUPS) {
        let op = ops
            .iter()
            .find(|o| o.id == id)
            .unwrap_or_else(|| panic!("{id} is not documented"));
        assert!(
            served.iter().any(|(m, p)| *m == op.method && *p == op.path),
            "{} {} ({id}) is not served",
            op.method,
            op.path
        );
        if let Some(schema) = schema {
            let _ = doc.schema(schema);
        }
    }
    for (method, pattern) in served
        .iter()
        .filter(|(_, p)| p.starts_with("/sell/inventory/"))
    {
        let op = ops
            .iter()
            .find(|o| o.method == *method && o.path == *pattern)
            .unwrap_or_else(|| panic!("{method} {pattern} is not documented"));
        assert!(
            CALLED
                .iter()
                .chain(&CALLED_BY_GROUPS)
                .chain(&SERVED_ONLY)
                .any(|(id, _)| *id == op.id),
            "{} is served but neither called nor one of SERVED_ONLY",
            op.id
        );
    }
}

#[test]
fn every_request_and_answer_of_the_calls_is_documented() {
    let doc = document();
    let fake = FakeMarketplace::new();
    let inventory = inventory(&fake);
    let listing = |sku: &str| {
        ListingBuilder::new(
            sku,
            category!(EBAY_US, "179"),
            aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "MPN": "7010" }),
        )
        .title("Dell OptiPlex 7010")
        .description("A Dell OptiPlex 7010 desktop, tested and working.")
        .condition(Condition::UsedExcellent)
        .quantity(3)
        .price("149.00")
        .policies("f", "p", "r")
        .merchant_location_key("warehouse-1")
        .image("https://example.com/1.jpg")
        .build()
        .unwrap()
    };
    // Every call, and the errors the fake answers to them.
    inventory
        .create_inventory_location(
            "warehouse-1",
            &json!({"location": {"address": {"postalCode": "95125", "country": "US"}},
                    "locationTypes": ["WAREHOUSE"], "name": "Warehouse 1"}),
        )
        .unwrap();
    inventory.get_inventory_location("warehouse-1").unwrap();
    assert!(inventory.get_inventory_location("nowhere").is_err());
    // getInventoryLocations (`listing publish` asks it once a run).
    let api = fake_inventory::api(&fake);
    let page = api
        .send(
            marketplace_client::api::ApiRequest::get("/sell/inventory/v1/location")
                .query("limit", "100"),
        )
        .unwrap();
    let page: Value = page.json().unwrap();
    assert_eq!(page["locations"][0]["merchantLocationKey"], "warehouse-1");
    let published = inventory.publish(&listing("C-1")).unwrap();
    inventory.publish(&listing("C-1")).unwrap();
    assert!(inventory.create_offer(&listing("C-1").offer).is_err());
    let mut moved = listing("C-1");
    moved.offer.category_id = Some("58058".into());
    inventory
        .update_offer(&published.offer_id, &moved.offer)
        .unwrap();
    assert!(inventory.publish_offer(&published.offer_id).is_err());
    inventory.withdraw_offer(&published.offer_id).unwrap();
    inventory.get_inventory_item("C-1").unwrap();
    inventory.delete_inventory_item("C-1").unwrap();
    assert!(inventory.get_inventory_item("C-1").is_err());
    let many: Vec<_> = (0..3).map(|i| listing(&format!("B-{i}"))).collect();
    for r in inventory.publish_many(&many) {
        r.unwrap();
    }
    // bulkUpdatePriceQuantity (marketplace-listing's stock): a quantity and a price.
    let mut update = marketplace_listing::stock::StockUpdate::new();
    update
        .set_quantity("B-0", 5)
        .set_price("B-1", "139.00", "USD");
    let report = inventory.update_stock(
        &update,
        &mut Default::default(),
        &marketplace_listing::stock::MemoryRevisions::default(),
    );
    assert_eq!(report.applied.len(), 2, "{:?}", report.failed);
    // publish_many asked bulkGetInventoryItem of the new SKUs (207, none in the inventory);
    // the error bodies are asked again below, so the SKUs go as they came.
    for i in 0..3 {
        inventory.delete_inventory_item(&format!("B-{i}")).unwrap();
    }
    assert!(
        inventory
            .get_offers("NONE", Marketplace::Us)
            .unwrap()
            .is_empty()
    );

    let seen = held_to_description(&doc, &fake, &CALLED);
    for (id, _) in CALLED {
        assert!(seen.contains(id), "{id} was not exercised");
    }
}

/// The group calls (createOrReplaceInventoryItemGroup, getInventoryItemGroup,
/// deleteInventoryItemGroup, publishOfferByInventoryItemGroup,
/// withdrawOfferByInventoryItemGroup, deleteOffer) of the 20-variant graphics-card group,
/// each answered with success and with the errors the fake gives them (25705 no such group,
/// 25725 nothing live, 25703 a SKU of another group, 25702 a SKU without an inventory item,
/// 25005 a category without variations, 25713 an offer gone): every request and answer
/// documented. An error body is asked again after the calls (the fake records answers without
/// their bodies), so each fake ends in a state that gives every error it answered again: the
/// deletions run on a second fake.
#[test]
fn every_request_and_answer_of_the_group_calls_is_documented() {
    let doc = document();
    let called: Vec<(&str, Option<&str>)> =
        CALLED.iter().chain(&CALLED_BY_GROUPS).copied().collect();
    let us = Marketplace::Us;

    // The reads, publishing, withdrawing and the refusals.
    let fake = FakeMarketplace::new();
    let inventory = inventory(&fake);
    assert_eq!(inventory.get_inventory_item_group("NONE").unwrap(), None);
    assert_eq!(
        error_id(inventory.delete_inventory_item_group("NONE")),
        25705
    );
    assert_eq!(
        error_id(inventory.publish_offer_by_inventory_item_group("NONE", us)),
        25705
    );
    let (sent, _) = group_with_offers(&fake, &inventory);
    inventory
        .create_or_replace_inventory_item_group(GROUP_KEY, us, &sent)
        .unwrap();
    assert!(
        inventory
            .get_inventory_item_group(GROUP_KEY)
            .unwrap()
            .is_some()
    );
    inventory
        .publish_offer_by_inventory_item_group(GROUP_KEY, us)
        .unwrap();
    inventory
        .withdraw_offer_by_inventory_item_group(GROUP_KEY, us)
        .unwrap();
    assert_eq!(
        error_id(inventory.withdraw_offer_by_inventory_item_group(GROUP_KEY, us)),
        25725
    );
    let mut other = sent.clone();
    other.variant_skus.truncate(1);
    assert_eq!(
        error_id(inventory.create_or_replace_inventory_item_group("OTHER", us, &other)),
        25703
    );
    other.variant_skus = vec!["NO-ITEM".into()];
    assert_eq!(
        error_id(inventory.create_or_replace_inventory_item_group("OTHER", us, &other)),
        25702
    );
    fake.set_variations_supported(us, 27386, Some(false));
    assert_eq!(
        error_id(inventory.publish_offer_by_inventory_item_group(GROUP_KEY, us)),
        25005
    );
    let mut seen = held_to_description(&doc, &fake, &called);

    // A variant's offer deleted (and again: 25713), then the group.
    let fake = FakeMarketplace::new();
    let inventory = fake_inventory::inventory(&fake);
    let (sent, offers) = group_with_offers(&fake, &inventory);
    inventory
        .create_or_replace_inventory_item_group(GROUP_KEY, us, &sent)
        .unwrap();
    inventory
        .publish_offer_by_inventory_item_group(GROUP_KEY, us)
        .unwrap();
    inventory.delete_offer(&offers[19]).unwrap();
    assert_eq!(error_id(inventory.delete_offer(&offers[19])), 25713);
    inventory.delete_inventory_item_group(GROUP_KEY).unwrap();
    seen.extend(held_to_description(&doc, &fake, &called));
    for (id, _) in CALLED_BY_GROUPS {
        assert!(seen.contains(id), "{id} was not exercised");
    }
}

/// The graphics-card group's key (tests/fixtures/listings/graphics-cards-group.json).
const GROUP_KEY: &str = "GPU-RADEON-6450";

/// The graphics-card group's variants' inventory items and offers created on `fake`: the
/// group as createOrReplaceInventoryItemGroup sends it, and the offers' ids.
fn group_with_offers(
    fake: &FakeMarketplace,
    inventory: &marketplace_listing::blocking::Inventory,
) -> (marketplace_listing::InventoryItemGroup, Vec<String>) {
    fake.add_inventory_location("warehouse-1");
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/listings/graphics-cards-group.json"),
    )
    .unwrap();
    let group: marketplace_listing::GroupListing = serde_json::from_str(&text).unwrap();
    let mut offers = Vec::new();
    for v in &group.variants {
        inventory
            .create_or_replace_inventory_item(&v.offer.sku, Marketplace::Us, &v.inventory_item)
            .unwrap();
        offers.push(inventory.create_offer(&v.offer).unwrap());
    }
    let mut sent = group.inventory_item_group;
    sent.inventory_item_group_key = None;
    (sent, offers)
}

/// The error id of a refused call's first error.
fn error_id<T: std::fmt::Debug>(result: Result<T, marketplace_listing::ListingError>) -> u32 {
    let e = result.unwrap_err();
    e.errors()
        .first()
        .unwrap_or_else(|| panic!("no error id: {e:?}"))
        .error
        .error_id
}

/// Every request `fake` received on the Inventory API and its answer held to eBay's
/// description: a documented operation, its required headers, the body of each operation of
/// `called` that has a schema conforming to it, a documented status, and each error id of an
/// error answer documented for that operation and status with its domain and category
/// (except the [`DEPARTURES`]). The operations seen.
fn held_to_description(
    doc: &Document,
    fake: &FakeMarketplace,
    called: &[(&str, Option<&str>)],
) -> std::collections::BTreeSet<String> {
    let ops = doc.operations();
    let requests: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/sell/inventory/"))
        .collect();
    let answers: Vec<_> = fake
        .answers()
        .into_iter()
        .filter(|a| a.path.starts_with("/sell/inventory/"))
        .collect();
    assert_eq!(requests.len(), answers.len());
    let mut seen = std::collections::BTreeSet::new();
    for (request, answer) in requests.iter().zip(&answers) {
        let op = ops
            .iter()
            .find(|o| o.method == request.method && o.matches(&request.path))
            .unwrap_or_else(|| panic!("{} {} is no operation", request.method, request.path));
        seen.insert(op.id.clone());
        for p in op.parameters_in("header").filter(|p| p.required) {
            if p.name != "Content-Type" || !request.body.is_empty() {
                assert!(
                    request.header(&p.name).is_some(),
                    "{}: no {} header",
                    op.id,
                    p.name
                );
            }
        }
        if let Some((_, Some(schema))) = called.iter().find(|(id, _)| *id == op.id) {
            let body: Value = serde_json::from_slice(&request.body).unwrap();
            // The description types `Product.aspects` (and `InventoryItemGroup.aspects`) as a
            // string; eBay's reference and its samples send the object `{"Brand": ["Dell"]}`
            // (what eBay takes), so that one field is not held to it.
            let found: Vec<String> = doc
                .conformance(&body, schema)
                .into_iter()
                .filter(|p| {
                    let at = p.split(':').next().unwrap_or_default();
                    !(at.ends_with("/product/aspects") || at == "/aspects")
                })
                .collect();
            assert_eq!(found, Vec::<String>::new(), "{}", op.id);
        }
        let departure = |id: u32| DEPARTURES.contains(&(op.id.as_str(), answer.status, id));
        if answer.status >= 400 {
            // The error body: documented ids with their domain and category.
            let body = fake_error_body(fake, request);
            for e in body["errors"].as_array().unwrap() {
                let id = e["errorId"].as_u64().unwrap() as u32;
                if departure(id) {
                    continue;
                }
                let documented = op
                    .responses
                    .get(&answer.status)
                    .and_then(|r| r.errors.iter().find(|d| d.id == id))
                    .unwrap_or_else(|| {
                        panic!(
                            "{} {}: errorId {id} is not documented",
                            op.id, answer.status
                        )
                    });
                assert_eq!(e["domain"], documented.domain.as_str());
                assert_eq!(e["category"], documented.category.as_str());
            }
        } else {
            assert!(
                op.responses.contains_key(&answer.status),
                "{} answered {}, not documented",
                op.id,
                answer.status
            );
        }
    }
    seen
}

/// The error body the fake answers `request` (sent again: the fake's answers are recorded
/// without their bodies; an error changes nothing, so the same error comes back).
fn fake_error_body(fake: &FakeMarketplace, request: &fake_marketplace::Request) -> Value {
    let token = request.header("Authorization").unwrap().to_owned();
    let http = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    let mut url = format!("{}{}", fake.base_url(), request.path);
    if let Some(q) = &request.query {
        url.push('?');
        url.push_str(q);
    }
    let mut r = http
        .request(request.method.parse().unwrap(), url)
        .header("Authorization", token)
        .body(request.body.clone());
    for name in ["Content-Language", "Content-Type"] {
        if let Some(v) = request.header(name) {
            r = r.header(name, v);
        }
    }
    r.send().unwrap().json().unwrap()
}

/// A bulk call some of whose requests failed answers 207, whose reason phrase is
/// "Multi-Status" (RFC 4918, as eBay's bulkGetInventoryItem, bulkCreateOffer and
/// bulkPublishOffer answer); the status line is read raw off the wire.
#[test]
fn a_bulk_answer_of_207_has_the_reason_phrase_multi_status() {
    use std::io::{Read as _, Write as _};
    let fake = FakeMarketplace::new();
    let token = fake_inventory::seller_tokens(&fake, &[fake_inventory::INVENTORY])
        .access_token()
        .unwrap()
        .secret()
        .to_owned();
    let body = r#"{"requests":[{"sku":"NOT-IN-THE-INVENTORY"}]}"#;
    let mut stream = std::net::TcpStream::connect(fake.addr()).unwrap();
    write!(
        stream,
        "POST /sell/inventory/v1/bulk_get_inventory_item HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        fake.addr(),
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status_line = answer.lines().next().unwrap_or_default();
    assert_eq!(status_line, "HTTP/1.1 207 Multi-Status", "{answer}");
}

/// createOrReplaceInventoryItem and bulkCreateOrReplaceInventoryItem take an InventoryItem
/// object: a body (or a request) that is JSON but not an object is refused with 400, and
/// getInventoryItem and bulkGetInventoryItem answer afterwards (the fake stored `[1]` and
/// its connection thread panicked adding the SKU to it: no answer at all).
#[test]
fn an_inventory_item_that_is_not_an_object_is_refused_and_the_reads_still_answer() {
    let fake = FakeMarketplace::new();
    let token = fake_inventory::seller_tokens(&fake, &[fake_inventory::INVENTORY])
        .access_token()
        .unwrap()
        .secret()
        .to_owned();
    let http = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    let base = format!("{}/sell/inventory/v1", fake.base_url());
    let put = http
        .put(format!("{base}/inventory_item/ODD-1"))
        .bearer_auth(&token)
        .header("Content-Language", "en-US")
        .json(&json!([1]))
        .send()
        .unwrap();
    assert_eq!(put.status().as_u16(), 400, "{:?}", put.text());
    let bulk = http
        .post(format!("{base}/bulk_create_or_replace_inventory_item"))
        .bearer_auth(&token)
        .header("Content-Language", "en-US")
        .json(&json!({"requests": ["ODD-2", [1]]}))
        .send()
        .unwrap();
    let bulk: Value = bulk.json().unwrap();
    for r in bulk["responses"].as_array().unwrap() {
        assert_eq!(r["statusCode"], 400, "{bulk}");
    }
    let get = http
        .get(format!("{base}/inventory_item/ODD-1"))
        .bearer_auth(&token)
        .send()
        .expect("getInventoryItem answers");
    assert_eq!(get.status().as_u16(), 400);
    let answer = http
        .post(format!("{base}/bulk_get_inventory_item"))
        .bearer_auth(&token)
        .json(&json!({"requests": [{"sku": "ODD-1"}, {"sku": ""}]}))
        .send()
        .expect("bulkGetInventoryItem answers");
    let answer: Value = answer.json().unwrap();
    for r in answer["responses"].as_array().unwrap() {
        assert_eq!(r["statusCode"], 404, "{answer}");
    }
}

/// A seller's raw HTTP client on the fake: the client, a `sell.inventory` user token and the
/// Inventory API's base URL.
fn seller_http(fake: &FakeMarketplace) -> (reqwest::blocking::Client, String, String) {
    let token = fake_inventory::seller_tokens(fake, &[fake_inventory::INVENTORY])
        .access_token()
        .unwrap()
        .secret()
        .to_owned();
    let http = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    (
        http,
        token,
        format!("{}/sell/inventory/v1", fake.base_url()),
    )
}

/// The 200 answer `answer` held to the description: its problems against the schema `name`
/// (but `Product.aspects`, typed a string by the description and an object by eBay's samples).
fn departures(doc: &Document, answer: &Value, name: &str) -> Vec<String> {
    doc.conformance(answer, name)
        .into_iter()
        .filter(|p| {
            !p.split(':')
                .next()
                .unwrap_or_default()
                .ends_with("/product/aspects")
        })
        .collect()
}

/// An error answer's ids, each held to what the description documents for `operation` and
/// `status` (its domain and category).
fn documented_error(doc: &Document, operation: &str, status: u16, body: &Value) -> u32 {
    let op = doc
        .operations()
        .into_iter()
        .find(|o| o.id == operation)
        .unwrap();
    let e = &body["errors"][0];
    let id = e["errorId"].as_u64().unwrap() as u32;
    let documented = op
        .responses
        .get(&status)
        .and_then(|r| r.errors.iter().find(|d| d.id == id))
        .unwrap_or_else(|| panic!("{operation} {status}: errorId {id} is not documented"));
    assert_eq!(e["domain"], documented.domain.as_str());
    assert_eq!(e["category"], documented.category.as_str());
    id
}

/// Stores the inventory item `sku` and creates its offer in `format`: the offer's id.
fn item_and_offer(
    http: &reqwest::blocking::Client,
    token: &str,
    base: &str,
    sku: &str,
    format: &str,
) -> String {
    let put = http
        .put(format!("{base}/inventory_item/{sku}"))
        .bearer_auth(token)
        .header("Content-Language", "en-US")
        .json(
            &json!({"product": {"title": format!("Item {sku}"), "aspects": {"Brand": ["Dell"]}},
                      "condition": "USED_EXCELLENT",
                      "availability": {"shipToLocationAvailability": {"quantity": 2}}}),
        )
        .send()
        .unwrap();
    assert_eq!(put.status().as_u16(), 204);
    let created: Value = http
        .post(format!("{base}/offer"))
        .bearer_auth(token)
        .header("Content-Language", "en-US")
        .json(
            &json!({"sku": sku, "marketplaceId": "EBAY_US", "format": format,
                      "categoryId": "179", "availableQuantity": 2,
                      "pricingSummary": {"price": {"value": "10.00", "currency": "USD"}}}),
        )
        .send()
        .unwrap()
        .json()
        .unwrap();
    created["offerId"].as_str().unwrap().to_owned()
}

/// getOffer answers an offer in eBay's EbayOfferDetailsWithAll, deleteOffer removes it (204),
/// and both answer an offer that is not there with eBay's documented 400, errorId 25713 (the
/// fake served neither: other clients' getOffer got a 404 without an error body).
#[test]
fn get_offer_and_delete_offer_are_served_as_documented() {
    let doc = document();
    let fake = FakeMarketplace::new();
    let (http, token, base) = seller_http(&fake);
    let id = item_and_offer(&http, &token, &base, "GO-1", "FIXED_PRICE");
    let got = http
        .get(format!("{base}/offer/{id}"))
        .bearer_auth(&token)
        .send()
        .unwrap();
    assert_eq!(got.status().as_u16(), 200);
    let offer: Value = got.json().unwrap();
    assert_eq!(offer["offerId"], id.as_str());
    assert_eq!(offer["sku"], "GO-1");
    assert_eq!(offer["status"], "UNPUBLISHED");
    assert_eq!(
        departures(&doc, &offer, "EbayOfferDetailsWithAll"),
        Vec::<String>::new()
    );
    let deleted = http
        .delete(format!("{base}/offer/{id}"))
        .bearer_auth(&token)
        .send()
        .unwrap();
    assert_eq!(deleted.status().as_u16(), 204);
    for (method, operation) in [("GET", "getOffer"), ("DELETE", "deleteOffer")] {
        let gone = http
            .request(method.parse().unwrap(), format!("{base}/offer/{id}"))
            .bearer_auth(&token)
            .send()
            .unwrap();
        assert_eq!(gone.status().as_u16(), 400, "{operation}");
        let body: Value = gone.json().unwrap();
        assert_eq!(documented_error(&doc, operation, 400, &body), 25713);
    }
}

/// getInventoryItems answers the seller's items a page at a time (`limit`, `offset` the page
/// number), with `total`, `size` (the pages), `href`, `prev` and `next` as eBay's
/// InventoryItems describes them; a limit outside 1 to 200 is eBay's 25706.
#[test]
fn get_inventory_items_answers_pages_by_limit_and_offset() {
    let doc = document();
    let fake = FakeMarketplace::new();
    let (http, token, base) = seller_http(&fake);
    for sku in ["GI-1", "GI-2", "GI-3"] {
        item_and_offer(&http, &token, &base, sku, "FIXED_PRICE");
    }
    let page = |query: &str| -> (u16, Value) {
        let r = http
            .get(format!("{base}/inventory_item{query}"))
            .bearer_auth(&token)
            .send()
            .unwrap();
        (r.status().as_u16(), r.json().unwrap())
    };
    let (status, first) = page("?limit=2&offset=0");
    assert_eq!(status, 200, "{first}");
    assert_eq!(
        departures(&doc, &first, "InventoryItems"),
        Vec::<String>::new()
    );
    let skus = |v: &Value| -> Vec<String> {
        v["inventoryItems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["sku"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(skus(&first), ["GI-1", "GI-2"]);
    assert_eq!(first["total"], 3);
    assert_eq!(first["size"], 2);
    assert_eq!(first["limit"], 2);
    assert!(first.get("prev").is_none(), "{first}");
    let next = first["next"].as_str().unwrap();
    assert!(next.ends_with("limit=2&offset=1"), "{next}");
    let (_, second) = page("?limit=2&offset=1");
    assert_eq!(skus(&second), ["GI-3"]);
    assert!(second.get("next").is_none(), "{second}");
    assert!(
        second["prev"]
            .as_str()
            .unwrap()
            .ends_with("limit=2&offset=0")
    );
    let (_, all) = page("");
    assert_eq!(skus(&all), ["GI-1", "GI-2", "GI-3"]);
    assert_eq!(all["limit"], 25);
    let (status, refused) = page("?limit=201");
    assert_eq!(status, 400);
    assert_eq!(
        documented_error(&doc, "getInventoryItems", 400, &refused),
        25706
    );
}

/// getOffers honours `limit` and `offset` (the page number): a SKU offered in both formats
/// answers one offer a page with `total` 2, `size` 1 and the links between them (the fake
/// answered every offer whatever the limit); `format` picks one of them.
#[test]
fn get_offers_honours_limit_and_offset() {
    let doc = document();
    let fake = FakeMarketplace::new();
    let (http, token, base) = seller_http(&fake);
    let fixed = item_and_offer(&http, &token, &base, "GF-1", "FIXED_PRICE");
    let created: Value = http
        .post(format!("{base}/offer"))
        .bearer_auth(&token)
        .header("Content-Language", "en-US")
        .json(&json!({"sku": "GF-1", "marketplaceId": "EBAY_US", "format": "AUCTION",
                      "categoryId": "179", "listingDuration": "DAYS_7",
                      "pricingSummary": {"auctionStartPrice": {"value": "1.00", "currency": "USD"}}}))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let auction = created["offerId"].as_str().unwrap().to_owned();
    let offers = |query: &str| -> Value {
        let r = http
            .get(format!("{base}/offer?sku=GF-1{query}"))
            .bearer_auth(&token)
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
        let v: Value = r.json().unwrap();
        assert_eq!(departures(&doc, &v, "Offers"), Vec::<String>::new());
        v
    };
    let ids = |v: &Value| -> Vec<String> {
        v["offers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["offerId"].as_str().unwrap().to_owned())
            .collect()
    };
    let first = offers("&limit=1&offset=0");
    let second = offers("&limit=1&offset=1");
    assert_eq!(
        (first["total"].clone(), first["size"].clone()),
        (json!(2), json!(1))
    );
    assert_eq!(first["limit"], 1);
    assert_eq!(second["size"], 1);
    let mut both = [ids(&first), ids(&second)].concat();
    both.sort();
    let mut expected = vec![fixed.clone(), auction.clone()];
    expected.sort();
    assert_eq!(both, expected);
    assert!(
        first["next"]
            .as_str()
            .unwrap()
            .ends_with("limit=1&offset=1")
    );
    assert!(first.get("prev").is_none());
    assert!(
        second["prev"]
            .as_str()
            .unwrap()
            .ends_with("limit=1&offset=0")
    );
    assert!(second.get("next").is_none());
    assert_eq!(ids(&offers("&format=AUCTION")), [auction]);
    assert_eq!(offers("")["limit"], 100);
    let refused = http
        .get(format!("{base}/offer?sku=GF-1&limit=0"))
        .bearer_auth(&token)
        .send()
        .unwrap();
    assert_eq!(refused.status().as_u16(), 400);
    let body: Value = refused.json().unwrap();
    assert_eq!(documented_error(&doc, "getOffers", 400, &body), 25706);
}

/// The Inventory API's MarketplaceEnum names eBay Motors `EBAY_MOTORS` (the Taxonomy API's
/// `EBAY_MOTORS_US` is not one of its values): createOffer refuses `EBAY_MOTORS_US` with
/// 25709 naming marketplaceId, and an `EBAY_MOTORS` offer of a Motors leaf is created and
/// published (the fake took `EBAY_MOTORS_US` and answered 25005 at publish for
/// `EBAY_MOTORS`).
#[test]
fn an_ebay_motors_offer_is_created_with_ebay_motors_and_refused_with_ebay_motors_us() {
    let doc = document();
    let fake = FakeMarketplace::new();
    let (http, token, base) = seller_http(&fake);
    let put = http
        .put(format!("{base}/inventory_item/MOTORS-1"))
        .bearer_auth(&token)
        .header("Content-Language", "en-US")
        .json(
            &json!({"product": {"title": "Fuel pump", "description": "A fuel pump.",
                                  "aspects": {"Brand": ["Bosch"]},
                                  "imageUrls": ["https://example.com/1.jpg"]},
                      "condition": "NEW",
                      "availability": {"shipToLocationAvailability": {"quantity": 2}}}),
        )
        .send()
        .unwrap();
    assert_eq!(put.status().as_u16(), 204);
    let offer = |marketplace: &str| {
        json!({"sku": "MOTORS-1", "marketplaceId": marketplace, "format": "FIXED_PRICE",
               "categoryId": "33564", "availableQuantity": 2,
               "listingPolicies": {"fulfillmentPolicyId": "f", "paymentPolicyId": "p",
                                   "returnPolicyId": "r"},
               "merchantLocationKey": "warehouse-1",
               "pricingSummary": {"price": {"value": "10.00", "currency": "USD"}}})
    };
    let refused = http
        .post(format!("{base}/offer"))
        .bearer_auth(&token)
        .header("Content-Language", "en-US")
        .json(&offer("EBAY_MOTORS_US"))
        .send()
        .unwrap();
    assert_eq!(refused.status().as_u16(), 400);
    let body: Value = refused.json().unwrap();
    assert_eq!(documented_error(&doc, "createOffer", 400, &body), 25709);
    assert_eq!(body["errors"][0]["parameters"][0]["value"], "marketplaceId");
    let created: Value = http
        .post(format!("{base}/offer"))
        .bearer_auth(&token)
        .header("Content-Language", "en-US")
        .json(&offer("EBAY_MOTORS"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let id = created["offerId"].as_str().expect("an offer id").to_owned();
    let published = http
        .post(format!("{base}/offer/{id}/publish"))
        .bearer_auth(&token)
        .header("Content-Length", "0")
        .send()
        .unwrap();
    let status = published.status().as_u16();
    let answer: Value = published.json().unwrap();
    assert_eq!(status, 200, "{answer}");
    assert!(answer["listingId"].is_string(), "{answer}");
}

/// bulkUpdatePriceQuantity (marketplace-listing's stock module) held to the description: the
/// request a `BulkPriceQuantity`, the answers `BulkPriceQuantityResponse`s, and each error id
/// the fake answers one the call documents, with its domain and category: a request's (a
/// price refused, an offer or SKU unknown: 25709; a listing's 251st revision of the day:
/// 25002) and the whole call's (26 requests: 400, 25709).
#[test]
fn bulk_update_price_quantity_requests_answers_and_error_ids_are_documented() {
    let doc = document();
    let op = doc
        .operations()
        .into_iter()
        .find(|o| o.id == "bulkUpdatePriceQuantity")
        .unwrap();
    let fake = FakeMarketplace::new();
    fake.add_listing(&fake.user().username, "PQ-1", 10, "5.00");
    let offer_id = inventory(&fake)
        .get_offers("PQ-1", Marketplace::Us)
        .unwrap()[0]
        .offer_id
        .clone();
    let (http, token, base) = seller_http(&fake);
    let send = |body: &Value| {
        let r = http
            .post(format!("{base}/bulk_update_price_quantity"))
            .bearer_auth(&token)
            .json(body)
            .send()
            .unwrap();
        (r.status().as_u16(), r.json::<Value>().unwrap())
    };
    let change = |q: u32| {
        json!({"requests": [{"sku": "PQ-1", "shipToLocationAvailability": {"quantity": q},
            "offers": [{"offerId": offer_id, "availableQuantity": q,
                "price": {"value": "4.50", "currency": "USD"}}]}]})
    };
    assert_eq!(
        doc.conformance(&change(3), "BulkPriceQuantity"),
        Vec::<String>::new()
    );
    let (status, answer) = send(&change(3));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(
        departures(&doc, &answer, "BulkPriceQuantityResponse"),
        Vec::<String>::new()
    );
    // A request's error: documented for the call, with its domain and category.
    let refused = |body: &Value| -> u32 {
        assert_eq!(
            doc.conformance(body, "BulkPriceQuantity"),
            Vec::<String>::new()
        );
        let (status, answer) = send(body);
        assert_eq!(status, 207, "{answer}");
        assert_eq!(
            departures(&doc, &answer, "BulkPriceQuantityResponse"),
            Vec::<String>::new()
        );
        assert_eq!(answer["responses"][0]["statusCode"], 400, "{answer}");
        let e = &answer["responses"][0]["errors"][0];
        let id = e["errorId"].as_u64().unwrap() as u32;
        let documented = op
            .responses
            .values()
            .flat_map(|r| r.errors.iter())
            .find(|d| d.id == id)
            .unwrap_or_else(|| panic!("errorId {id} is not documented: {answer}"));
        assert_eq!(e["domain"], documented.domain.as_str());
        assert_eq!(e["category"], documented.category.as_str());
        id
    };
    let price = json!({"requests": [{"offers": [{"offerId": offer_id,
        "price": {"value": "0.00", "currency": "USD"}}]}]});
    assert_eq!(refused(&price), 25709);
    let offer = json!({"requests": [{"offers": [{"offerId": "999", "availableQuantity": 1}]}]});
    assert_eq!(refused(&offer), 25709);
    let sku =
        json!({"requests": [{"sku": "NOT-THERE", "shipToLocationAvailability": {"quantity": 1}}]});
    assert_eq!(refused(&sku), 25709);
    for q in 0..249 {
        assert_eq!(send(&change(q)).0, 200);
    }
    assert_eq!(refused(&change(1)), 25002, "the 251st revision of the day");
    let many = json!({"requests": vec![json!({"sku": "PQ-1"}); 26]});
    let (status, body) = send(&many);
    assert_eq!(status, 400);
    assert_eq!(
        documented_error(&doc, "bulkUpdatePriceQuantity", 400, &body),
        25709
    );
}
