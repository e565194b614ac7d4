//! The answers serialize (marketplace-client's `serde` feature, which this package's
//! dev-dependency turns on) under eBay's field names: each answer is fetched from the fake
//! marketplace over loopback (a recorded getItemAspectsForCategory answer, a
//! getCategorySuggestions answer) both typed and raw, and the names of the serialized answer
//! are compared with the names in the raw JSON, level by level.

use crate::taxonomy_support as support;

use std::collections::BTreeSet;

use fake_marketplace::taxonomy::{aspects_path, suggestions_path};
use marketplace_client::Marketplace;
use marketplace_client::api::{ApiClient, ApiRequest};
use marketplace_client::model::ServiceError;
use serde_json::{Map, Value};
use support::*;

/// The raw JSON the fake answers at `path` (with `query`) for the US marketplace.
fn raw(fake: &fake_marketplace::FakeMarketplace, path: &str, query: (&str, &str)) -> Value {
    let api = ApiClient::new(config(fake), tokens(fake)).unwrap();
    let request = ApiRequest::get(path)
        .query(query.0, query.1)
        .marketplace(Marketplace::Us);
    api.send(request).unwrap().json().unwrap()
}

fn object<'a>(value: &'a Value, what: &str) -> &'a Map<String, Value> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("{what} is not an object: {value}"))
}

/// Every name of the raw object is a name of the serialized one, and every serialized name
/// that holds something (not `null`, `[]` or `false`) was in the raw object.
fn same_names(serialized: &Map<String, Value>, raw: &Map<String, Value>, what: &str) {
    let ours: BTreeSet<&str> = serialized.keys().map(String::as_str).collect();
    let theirs: BTreeSet<&str> = raw.keys().map(String::as_str).collect();
    let missing: Vec<_> = theirs.difference(&ours).collect();
    assert!(
        missing.is_empty(),
        "{what}: eBay's {missing:?} not serialized"
    );
    let held =
        |v: &Value| !matches!(v, Value::Null | Value::Bool(false)) && v != &Value::Array(vec![]);
    let invented: Vec<_> = serialized
        .iter()
        .filter(|(k, v)| held(v) && !theirs.contains(k.as_str()))
        .map(|(k, _)| k)
        .collect();
    assert!(
        invented.is_empty(),
        "{what}: {invented:?} are not eBay's names"
    );
}

#[test]
fn item_aspects_serialize_under_ebays_names() {
    let fake = fake();
    let (client, _) = client(&fake);
    // 27386: a recorded real answer of getItemAspectsForCategory.
    let typed = client.item_aspects((Marketplace::Us, 27386)).unwrap();
    let raw = raw(&fake, &aspects_path(0), ("category_id", "27386"));
    let serialized = serde_json::to_value(&typed).unwrap();
    assert_eq!(serialized["categoryId"], 27386);

    let raw_aspects = raw["aspects"].as_array().expect("aspects");
    let ours = serialized["aspects"].as_array().expect("aspects");
    assert_eq!(ours.len(), raw_aspects.len());
    assert!(!ours.is_empty());
    for (ours, theirs) in ours.iter().zip(raw_aspects) {
        let name = theirs["localizedAspectName"].as_str().unwrap_or("?");
        assert_eq!(ours["localizedAspectName"], theirs["localizedAspectName"]);
        // The constraint's fields sit on the aspect itself.
        let mut flat = object(theirs, name).clone();
        if let Some(constraint) = flat.remove("aspectConstraint") {
            flat.extend(object(&constraint, "aspectConstraint").clone());
        }
        same_names(object(ours, name), &flat, name);
        for (v, raw_v) in ours["aspectValues"]
            .as_array()
            .unwrap()
            .iter()
            .zip(theirs["aspectValues"].as_array().into_iter().flatten())
        {
            same_names(object(v, "value"), object(raw_v, "value"), name);
            assert_eq!(v["localizedValue"], raw_v["localizedValue"]);
        }
        if theirs["aspectConstraint"]["aspectRequired"] == true {
            assert_eq!(ours["aspectRequired"], true, "{name}");
        }
    }
}

#[test]
fn category_suggestions_serialize_under_ebays_names() {
    let fake = fake();
    let (client, _) = client(&fake);
    let typed = client
        .category_suggestions(Marketplace::Us, "iphone")
        .unwrap();
    let raw = raw(&fake, &suggestions_path(0), ("q", "iphone"));
    let serialized = serde_json::to_value(&typed).unwrap();
    same_names(
        object(&serialized, "answer"),
        object(&raw, "answer"),
        "answer",
    );

    let ours = serialized["categorySuggestions"].as_array().unwrap();
    let theirs = raw["categorySuggestions"].as_array().unwrap();
    assert!(!ours.is_empty());
    assert_eq!(ours.len(), theirs.len());
    for (s, raw_s) in ours.iter().zip(theirs) {
        same_names(
            object(s, "suggestion"),
            object(raw_s, "suggestion"),
            "suggestion",
        );
        same_names(
            object(&s["category"], "category"),
            object(&raw_s["category"], "category"),
            "category",
        );
        // Ids are numbers here, decimal strings on the wire.
        assert_eq!(
            s["category"]["categoryId"].to_string(),
            raw_s["category"]["categoryId"].as_str().unwrap()
        );
        for (a, raw_a) in s["categoryTreeNodeAncestors"]
            .as_array()
            .unwrap()
            .iter()
            .zip(raw_s["categoryTreeNodeAncestors"].as_array().unwrap())
        {
            same_names(object(a, "ancestor"), object(raw_a, "ancestor"), "ancestor");
        }
    }
}

#[test]
fn the_service_error_serializes_under_ebays_names() {
    let body = br#"{"errors":[{"errorId":62004,"domain":"API_TAXONOMY","category":"REQUEST",
        "message":"The specified category tree ID was not found.",
        "parameters":[{"name":"categoryTreeId","value":"9999"}]}]}"#;
    let errors: Vec<ServiceError> =
        marketplace_client::model::decode::service_errors(body).expect("an error body");
    let serialized = serde_json::to_value(&errors[0]).unwrap();
    assert_eq!(serialized["errorId"], 62004);
    assert_eq!(serialized["parameters"][0]["name"], "categoryTreeId");
    let raw: Value = serde_json::from_slice(body).unwrap();
    same_names(
        object(&serialized, "error"),
        object(&raw["errors"][0], "error"),
        "error",
    );
}
