//! The fake's Inventory API refuses, over real HTTP, each listing eBay refuses: at publishOffer
//! the fields eBay requires to publish (a picture: 25014; a description: 25017; a quantity to
//! sell: 25004; a price of the currency's decimals: 25003; a `listingDuration` the format
//! takes: 25016; `conditionDescription` within 1,000 characters: 25080), and at
//! createOrReplaceInventoryItem and createOffer a value outside one of eBay's enumerations
//! (errorId 2004, "Could not serialize field [condition]"), a `Content-Language` that is no
//! marketplace's locale and a `Content-Type` other than `application/json` (25709 naming the
//! header). Each refusal is checked against a listing that differs from one the fake
//! publishes by that one field.

use crate::inventory_support as fake_inventory;

use fake_marketplace::FakeMarketplace;
use serde_json::{Value, json};

/// A listing of EBAY_US category 179 that the fake publishes.
fn good_item() -> Value {
    json!({
        "product": {
            "title": "Dell OptiPlex 7010",
            "description": "A Dell OptiPlex 7010 desktop, tested and working.",
            "aspects": {"Brand": ["Dell"], "Type": ["Desktop"], "MPN": ["7010"]},
            "imageUrls": ["https://example.com/1.jpg"]
        },
        "condition": "USED_EXCELLENT",
        "availability": {"shipToLocationAvailability": {"quantity": 3}}
    })
}

fn good_offer(sku: &str) -> Value {
    json!({
        "sku": sku, "marketplaceId": "EBAY_US", "format": "FIXED_PRICE",
        "categoryId": "179", "availableQuantity": 3,
        "pricingSummary": {"price": {"value": "149.00", "currency": "USD"}},
        "listingPolicies": {"fulfillmentPolicyId": "f", "paymentPolicyId": "p", "returnPolicyId": "r"},
        "merchantLocationKey": "warehouse-1"
    })
}

/// A seller on the fake, calling the Inventory API with plain HTTP.
struct Seller {
    http: reqwest::blocking::Client,
    base: String,
    token: String,
}

impl Seller {
    fn new(fake: &FakeMarketplace) -> Self {
        let token = fake_inventory::seller_tokens(fake, &[fake_inventory::INVENTORY])
            .access_token()
            .unwrap()
            .secret()
            .to_owned();
        let http = reqwest::blocking::Client::builder()
            .no_proxy()
            .build()
            .unwrap();
        let base = format!("{}/sell/inventory/v1", fake.base_url());
        Seller { http, base, token }
    }

    /// A request with a JSON body and the headers eBay requires, `headers` replacing them.
    fn send(
        &self,
        method: &str,
        path: &str,
        body: &Value,
        headers: &[(&str, &str)],
    ) -> (u16, Value) {
        let mut all = vec![
            ("Content-Language", "en-US"),
            ("Content-Type", "application/json"),
        ];
        for (name, value) in headers {
            all.retain(|(n, _)| n != name);
            all.push((name, value));
        }
        let mut request = self
            .http
            .request(method.parse().unwrap(), format!("{}{path}", self.base))
            .bearer_auth(&self.token)
            .body(body.to_string());
        for (name, value) in all {
            request = request.header(name, value);
        }
        let answer = request.send().unwrap();
        let status = answer.status().as_u16();
        let text = answer.text().unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// createOrReplaceInventoryItem, createOffer and publishOffer of `item` and `offer`: the
    /// status and body of publishOffer's answer.
    fn publish(&self, sku: &str, item: &Value, offer: &Value) -> (u16, Value) {
        let (status, body) = self.send("PUT", &format!("/inventory_item/{sku}"), item, &[]);
        assert_eq!(status, 204, "createOrReplaceInventoryItem: {body}");
        let (status, body) = self.send("POST", "/offer", offer, &[]);
        assert_eq!(status, 201, "createOffer: {body}");
        let id = body["offerId"].as_str().unwrap().to_owned();
        self.send("POST", &format!("/offer/{id}/publish"), &json!({}), &[])
    }
}

/// The error id of a refusal, after checking it is a 400 of domain `domain`.
fn refused(answer: &(u16, Value), domain: &str) -> u64 {
    let (status, body) = answer;
    assert_eq!(*status, 400, "{body}");
    let e = &body["errors"][0];
    assert_eq!(e["domain"], domain, "{body}");
    e["errorId"].as_u64().unwrap()
}

#[test]
fn publish_offer_refuses_each_listing_ebay_refuses_to_publish() {
    let fake = FakeMarketplace::new();
    let seller = Seller::new(&fake);
    // The listing all the others differ from is published.
    let (status, body) = seller.publish("GOOD-1", &good_item(), &good_offer("GOOD-1"));
    assert_eq!(status, 200, "{body}");

    type Change = fn(&mut Value, &mut Value);
    let cases: [(&str, Change, u64, &str); 9] = [
        (
            "NO-PICTURE",
            |i, _| i["product"]["imageUrls"] = json!([]),
            25014,
            "imageUrls",
        ),
        (
            "NO-PICTURE-FIELD",
            |i, _| {
                i["product"].as_object_mut().unwrap().remove("imageUrls");
            },
            25014,
            "imageUrls",
        ),
        (
            "NO-DESCRIPTION",
            |i, _| {
                i["product"].as_object_mut().unwrap().remove("description");
            },
            25017,
            "description",
        ),
        (
            "ZERO-QUANTITY",
            |_, o| o["availableQuantity"] = json!(0),
            25004,
            "quantity",
        ),
        (
            "ZERO-ITEM-QUANTITY",
            |i, o| {
                o.as_object_mut().unwrap().remove("availableQuantity");
                i["availability"]["shipToLocationAvailability"]["quantity"] = json!(0);
            },
            25004,
            "quantity",
        ),
        (
            "THREE-DECIMALS",
            |_, o| o["pricingSummary"]["price"]["value"] = json!("12.999"),
            25003,
            "at most 2 decimals",
        ),
        (
            "PRICE-ZERO",
            |_, o| o["pricingSummary"]["price"]["value"] = json!("0.00"),
            25003,
            "above 0",
        ),
        (
            "SEVEN-DAYS-FIXED",
            |_, o| o["listingDuration"] = json!("DAYS_7"),
            25016,
            "GTC",
        ),
        (
            "LONG-CONDITION-TEXT",
            |i, _| i["conditionDescription"] = json!("x".repeat(1_100)),
            25080,
            "1000 characters",
        ),
    ];
    for (sku, change, id, says) in cases {
        let (mut item, mut offer) = (good_item(), good_offer(sku));
        change(&mut item, &mut offer);
        let answer = seller.publish(sku, &item, &offer);
        assert_eq!(refused(&answer, "API_INVENTORY"), id, "{sku}: {}", answer.1);
        assert!(answer.1.to_string().contains(says), "{sku}: {}", answer.1);
    }
    // The offer's description stands in for the product's; a GTC duration is a fixed price's.
    let mut item = good_item();
    item["product"]
        .as_object_mut()
        .unwrap()
        .remove("description");
    let mut offer = good_offer("OFFER-DESCRIPTION");
    offer["listingDescription"] = json!("A desktop, as listed.");
    offer["listingDuration"] = json!("GTC");
    let (status, body) = seller.publish("OFFER-DESCRIPTION", &item, &offer);
    assert_eq!(status, 200, "{body}");
}

/// A value outside one of eBay's enumerations is refused by the call that carries it, as
/// eBay cannot read the request: 400, errorId 2004, the reason naming the field.
#[test]
fn a_value_outside_an_ebay_enumeration_is_refused_at_create_time_with_2004() {
    let fake = FakeMarketplace::new();
    let seller = Seller::new(&fake);
    let mut used = good_item();
    used["condition"] = json!("USED");
    let answer = seller.send("PUT", "/inventory_item/USED-1", &used, &[]);
    assert_eq!(refused(&answer, "ACCESS"), 2004);
    assert_eq!(
        answer.1["errors"][0]["parameters"][0]["value"],
        "Could not serialize field [condition]"
    );
    let bulk = json!({"requests": [{"sku": "USED-2", "locale": "en_US", "condition": "USED"}]});
    let answer = seller.send("POST", "/bulk_create_or_replace_inventory_item", &bulk, &[]);
    assert_eq!(refused(&answer, "ACCESS"), 2004);

    let (status, body) = seller.send("PUT", "/inventory_item/ENUM-1", &good_item(), &[]);
    assert_eq!(status, 204, "{body}");
    for (field, value) in [("format", "FIXED"), ("listingDuration", "FOREVER")] {
        let mut offer = good_offer("ENUM-1");
        offer[field] = json!(value);
        let answer = seller.send("POST", "/offer", &offer, &[]);
        assert_eq!(refused(&answer, "ACCESS"), 2004, "{field}");
        assert_eq!(
            answer.1["errors"][0]["parameters"][0]["value"],
            format!("Could not serialize field [{field}]")
        );
        let answer = seller.send(
            "POST",
            "/bulk_create_offer",
            &json!({"requests": [offer]}),
            &[],
        );
        assert_eq!(refused(&answer, "ACCESS"), 2004, "{field}");
    }
    // An auction needs a duration (createOffer's 25755).
    let mut auction = good_offer("ENUM-1");
    auction["format"] = json!("AUCTION");
    let answer = seller.send("POST", "/offer", &auction, &[]);
    assert_eq!(refused(&answer, "API_INVENTORY"), 25755);
    // None of them was stored: the good offer is created.
    let (status, body) = seller.send("POST", "/offer", &good_offer("ENUM-1"), &[]);
    assert_eq!(status, 201, "{body}");
}

/// `Content-Language` must be a marketplace's locale and `Content-Type` `application/json`:
/// anything else is 25709 naming the header.
#[test]
fn a_content_language_or_content_type_ebay_does_not_take_is_refused() {
    let fake = FakeMarketplace::new();
    let seller = Seller::new(&fake);
    for headers in [
        [("Content-Language", "xx-XX")],
        [("Content-Language", "english")],
        [("Content-Type", "text/plain")],
        [("Content-Type", "application/x-www-form-urlencoded")],
    ] {
        let answer = seller.send("PUT", "/inventory_item/HEADERS-1", &good_item(), &headers);
        assert_eq!(refused(&answer, "API_INVENTORY"), 25709, "{headers:?}");
        assert_eq!(
            answer.1["errors"][0]["parameters"][0]["value"], headers[0].0,
            "{headers:?}"
        );
        let answer = seller.send("POST", "/offer", &good_offer("HEADERS-1"), &headers);
        assert_eq!(refused(&answer, "API_INVENTORY"), 25709, "{headers:?}");
    }
    for headers in [
        [("Content-Language", "de-DE")],
        [("Content-Language", "fr-CA")],
        [("Content-Type", "application/json; charset=utf-8")],
    ] {
        let (status, body) =
            seller.send("PUT", "/inventory_item/HEADERS-1", &good_item(), &headers);
        assert_eq!(status, 204, "{headers:?}: {body}");
    }
}
