//! The scopes of eBay's Inventory API, as its reference gives them per call: every call that
//! writes (createOrReplaceInventoryItem, createOffer, publishOffer, the bulk calls, …) needs a
//! user token with `https://api.ebay.com/oauth/api_scope/sell.inventory`; the calls that only
//! read (getInventoryItem, getOffers, getInventoryLocation, …) also take
//! `…/sell.inventory.readonly`. The API takes user tokens only (the authorization-code flow).
//! Without the scope eBay answers 403 with errorId 1100 ("Access denied", "Insufficient
//! permissions to fulfill the request."), and so does the fake.

use crate::inventory_support as fake_inventory;

use fake_inventory::{INVENTORY, seller_tokens};
use fake_marketplace::FakeMarketplace;
use marketplace_client::oauth::{
    AccessTokenSource as _, ApplicationTokenProvider, Endpoints, OAuthClient, OAuthConfig,
};
use serde_json::{Value, json};

fn http() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
}

/// An application token of the fake (client credentials, `api_scope`).
fn application_token(fake: &FakeMarketplace) -> String {
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let client = OAuthClient::from_config(
        &OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap();
    let provider = ApplicationTokenProvider::new(client);
    provider.access_token().unwrap().secret().to_owned()
}

/// A user token of the fake's seller granting `scopes` (suffixes of `…/oauth/api_scope`).
fn user_token(fake: &FakeMarketplace, scopes: &[&str]) -> String {
    seller_tokens(fake, scopes)
        .access_token()
        .unwrap()
        .secret()
        .to_owned()
}

/// createOrReplaceInventoryItem of a small item with `token`: the status and the body.
fn put_item(fake: &FakeMarketplace, token: &str) -> (u16, Value) {
    let answer = http()
        .put(format!(
            "{}/sell/inventory/v1/inventory_item/SCOPE-1",
            fake.base_url()
        ))
        .bearer_auth(token)
        .header("Content-Language", "en-US")
        .json(&json!({
            "availability": {"shipToLocationAvailability": {"quantity": 1}},
            "condition": "NEW",
            "product": {"title": "A lamp", "description": "A lamp.",
                "imageUrls": ["https://example.com/lamp.jpg"]},
        }))
        .send()
        .unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().unwrap_or(Value::Null))
}

/// getOffers of a SKU with `token`: the status and the body.
fn get_offers(fake: &FakeMarketplace, token: &str) -> (u16, Value) {
    let answer = http()
        .get(format!(
            "{}/sell/inventory/v1/offer?sku=SCOPE-1&marketplace_id=EBAY_US",
            fake.base_url()
        ))
        .bearer_auth(token)
        .send()
        .unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().unwrap_or(Value::Null))
}

fn assert_insufficient_scope((status, body): (u16, Value), what: &str) {
    assert_eq!(status, 403, "{what}: {body}");
    let error = &body["errors"][0];
    assert_eq!(error["errorId"], 1100, "{what}: {body}");
    assert_eq!(error["message"], "Access denied", "{what}: {body}");
    assert_eq!(
        error["longMessage"], "Insufficient permissions to fulfill the request.",
        "{what}: {body}"
    );
}

#[test]
fn the_fake_refuses_inventory_calls_with_an_application_token_with_1100() {
    let fake = FakeMarketplace::new();
    let token = application_token(&fake);
    assert_insufficient_scope(put_item(&fake, &token), "createOrReplaceInventoryItem");
    assert_insufficient_scope(get_offers(&fake, &token), "getOffers");
}

#[test]
fn the_fake_refuses_inventory_calls_with_a_user_token_of_api_scope_only_with_1100() {
    let fake = FakeMarketplace::new();
    let token = user_token(&fake, &[""]);
    assert_insufficient_scope(put_item(&fake, &token), "createOrReplaceInventoryItem");
    assert_insufficient_scope(get_offers(&fake, &token), "getOffers");
}

#[test]
fn the_fake_refuses_inventory_writes_with_a_readonly_token_with_1100_and_lets_it_read() {
    let fake = FakeMarketplace::new();
    let token = user_token(&fake, &["/sell.inventory.readonly"]);
    assert_insufficient_scope(put_item(&fake, &token), "createOrReplaceInventoryItem");
    // A read is the readonly scope's: no offer of the SKU yet is getOffers' 404 (25713).
    let (status, body) = get_offers(&fake, &token);
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["errors"][0]["errorId"], 25713, "{body}");
}

#[test]
fn the_fake_takes_inventory_calls_with_a_sell_inventory_user_token() {
    let fake = FakeMarketplace::new();
    let token = user_token(&fake, &[INVENTORY]);
    let (status, body) = put_item(&fake, &token);
    assert!(status == 200 || status == 204, "{status}: {body}");
    let (status, body) = get_offers(&fake, &token);
    assert_eq!(status, 404, "{body}");
}
