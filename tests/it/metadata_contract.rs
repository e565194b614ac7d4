//! The client's getItemConditionPolicies request and the fake's answers to it, held to eBay's
//! OpenAPI description of the Sell Metadata API (`tests/contract/sell_metadata_v1_oas3.json`,
//! see `tests/contract/README.md`): the operation is documented and served, each request the
//! client sends is its documented method and path with only documented query parameters (the
//! filter encoded as eBay's reference shows it) and `Accept-Encoding: gzip`, and every answer
//! of the fake has a documented status, a body of the documented schema, and documented error
//! and warning ids with their domain and category.

use crate::openapi;
use crate::taxonomy_support as support;

use std::path::Path;

use fake_marketplace::FakeMarketplace;
use fake_marketplace::metadata::condition_policies_path;
use marketplaces::Marketplace;
use openapi::Document;
use serde_json::Value;

const OPERATION: &str = "getItemConditionPolicies";

/// What the fake answers that the description lists elsewhere: (status, error id). The
/// description lists 46002 (invalid filter) and 46003 (category not found) with the 200
/// answer, beside the warning 46004; they are errors of the request (category `REQUEST`),
/// which the fake answers with 400 and eBay's error body, as eBay's other APIs answer theirs.
const DEPARTURES: [(u16, u32); 2] = [(400, 46002), (400, 46003)];

fn document() -> Document {
    Document::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/contract/sell_metadata_v1_oas3.json"),
    )
}

#[test]
fn get_item_condition_policies_is_documented_and_served() {
    let doc = document();
    assert_eq!(doc.base_path(), "/sell/metadata/v1");
    assert_eq!(doc.version(), "v1.7.1");
    let ops = doc.operations();
    let op = ops.iter().find(|o| o.id == OPERATION).expect("documented");
    assert_eq!(op.method, "GET");
    let served = FakeMarketplace::new().route_patterns();
    assert!(served.iter().any(|(m, p)| *m == op.method && *p == op.path));
    // The fake serves nothing of the Metadata API but documented operations.
    for (method, pattern) in served
        .iter()
        .filter(|(_, p)| p.starts_with("/sell/metadata/"))
    {
        assert!(
            ops.iter()
                .any(|o| o.method == *method && o.path == *pattern),
            "{method} {pattern}"
        );
    }
    // The application token's scope (what the client's token sources ask for) is documented.
    assert!(
        op.scopes
            .iter()
            .any(|s| s == "https://api.ebay.com/oauth/api_scope"),
        "{:?}",
        op.scopes
    );
    assert_eq!(
        op.responses.get(&200).and_then(|r| r.schema.as_deref()),
        Some("ItemConditionPolicyResponse")
    );
}

#[test]
fn every_request_and_answer_of_get_item_condition_policies_is_documented() {
    let doc = document();
    let ops = doc.operations();
    let op = ops.iter().find(|o| o.id == OPERATION).unwrap();
    let fake = FakeMarketplace::new();
    let (client, _) = support::client(&fake);
    // Every category; a filter; more than 50 ids (two calls); an unknown id; a marketplace
    // the fake holds no tree of; a malformed filter (not something the client sends).
    let all = client.all_item_condition_policies(Marketplace::Us).unwrap();
    assert!(!all.item_condition_policies.is_empty());
    client
        .item_condition_policies(Marketplace::Us, &[179, 183454, 2536])
        .unwrap();
    let leaves: Vec<u32> = fake
        .tree(Marketplace::Us)
        .listable()
        .filter(|c| c.leaf)
        .take(60)
        .map(|c| c.id)
        .collect();
    client
        .item_condition_policies(Marketplace::Us, &leaves)
        .unwrap();
    assert!(
        client
            .item_condition_policies(Marketplace::Us, &[999_999_999])
            .is_err()
    );
    assert!(client.all_item_condition_policies(Marketplace::Fr).is_err());
    let (token, http) = support::first_bearer_and_http(&fake, &condition_policies_path("EBAY_US"));
    let send = |query: &str| {
        http.get(format!(
            "{}{}?{query}",
            fake.base_url(),
            condition_policies_path("EBAY_US")
        ))
        .header("Authorization", &token)
        .send()
        .unwrap()
    };
    assert_eq!(send("filter=categoryId%3A179").status(), 400);
    let many: Vec<String> = leaves.iter().map(u32::to_string).collect();
    let warned: Value = send(&format!("filter=categoryIds%3A%7B{}%7D", many.join("%7C")))
        .json()
        .unwrap();
    assert_eq!(warned["warnings"][0]["errorId"], 46004);

    let requests: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.starts_with("/sell/metadata/"))
        .collect();
    let answers: Vec<_> = fake
        .answers()
        .into_iter()
        .filter(|a| a.path.starts_with("/sell/metadata/"))
        .collect();
    assert_eq!(requests.len(), answers.len());
    let documented_query: Vec<&str> = op.parameters_in("query").map(|p| p.name.as_str()).collect();
    let mut statuses = std::collections::BTreeSet::new();
    let mut ids = std::collections::BTreeSet::new();
    for (request, answer) in requests.iter().zip(&answers) {
        assert!(
            op.matches(&request.path),
            "{} is no operation",
            request.path
        );
        assert_eq!(request.method, "GET");
        statuses.insert(answer.status);
        // The request: only documented query parameters, the filter as eBay's reference
        // encodes it, gzip accepted (the client's requests: the reqwest ones above send none).
        let from_client = request.header("X-EBAY-C-MARKETPLACE-ID").is_some();
        if from_client {
            assert_eq!(request.header("Accept-Encoding"), Some("gzip"));
            if let Some(query) = &request.query {
                let (name, value) = query.split_once('=').unwrap();
                assert!(documented_query.contains(&name), "{name}");
                assert!(
                    value.starts_with("categoryIds%3A%7B") && value.ends_with("%7D"),
                    "{value}"
                );
                assert!(!value.contains('|') && !value.contains('{'), "{value}");
            }
        }
        // The answer, asked again without gzip (answers are recorded without their bodies;
        // the fake's answers are deterministic).
        let mut url = format!("{}{}", fake.base_url(), request.path);
        if let Some(q) = &request.query {
            url.push('?');
            url.push_str(q);
        }
        let again = http
            .get(url)
            .header("Authorization", &token)
            .send()
            .unwrap();
        assert_eq!(again.status().as_u16(), answer.status);
        assert_eq!(answer.header("X-Fake-Marketplace"), Some("made-up"));
        let documented = op
            .responses
            .get(&answer.status)
            .unwrap_or_else(|| panic!("{OPERATION} answered {}, not documented", answer.status));
        if answer.status == 204 {
            continue;
        }
        let body: Value = again.json().unwrap();
        let listed = |status: u16, id: u32| {
            op.responses
                .get(&status)
                .and_then(|r| r.errors.iter().find(|d| d.id == id))
        };
        if answer.status == 200 {
            if from_client {
                assert_eq!(answer.header("Content-Encoding"), Some("gzip"));
            }
            let found = doc.conformance(&body, "ItemConditionPolicyResponse");
            assert_eq!(found, Vec::<String>::new());
            for w in body["warnings"].as_array().into_iter().flatten() {
                let id = w["errorId"].as_u64().unwrap() as u32;
                ids.insert(id);
                let d = listed(200, id).unwrap_or_else(|| panic!("warning {id} not documented"));
                assert_eq!(w["domain"], d.domain.as_str());
                assert_eq!(w["category"], d.category.as_str());
            }
            continue;
        }
        assert!(documented.schema.is_none() || answer.status >= 400);
        for e in body["errors"].as_array().unwrap() {
            let id = e["errorId"].as_u64().unwrap() as u32;
            ids.insert(id);
            let d = if DEPARTURES.contains(&(answer.status, id)) {
                listed(200, id)
            } else {
                listed(answer.status, id)
            }
            .unwrap_or_else(|| {
                panic!(
                    "{OPERATION} {}: errorId {id} is not documented",
                    answer.status
                )
            });
            assert_eq!(e["domain"], d.domain.as_str());
            assert_eq!(e["category"], d.category.as_str());
            assert_eq!(doc.conformance(e, "Error"), Vec::<String>::new());
        }
    }
    assert_eq!(statuses.into_iter().collect::<Vec<_>>(), [200, 400]);
    assert_eq!(
        ids.into_iter().collect::<Vec<_>>(),
        [46001, 46002, 46003, 46004]
    );
}

#[test]
fn every_field_the_description_lists_is_kept_by_the_client() {
    // An answer with every field of the schema, decoded: nothing the description lists is
    // dropped (each scalar changed is seen in the decoded answer's debug form).
    let doc = document();
    let mut full = doc.all_present("ItemConditionPolicyResponse");
    // Ids are decimal strings on the wire, in a list of ids too (`…Ids`), each distinct.
    for (i, pointer) in openapi::scalar_pointers(&full).into_iter().enumerate() {
        if pointer.contains("Ids/") {
            *full.pointer_mut(&pointer).unwrap() = Value::String((900_000 + i).to_string());
        }
    }
    let decoded = marketplace_client::model::decode::item_condition_policies(
        serde_json::to_vec(&full).unwrap().as_slice(),
    )
    .unwrap_or_else(|e| panic!("{e}: {full}"));
    let shown = format!("{decoded:?}");
    for pointer in openapi::scalar_pointers(&full) {
        let value = full.pointer(&pointer).unwrap();
        let text = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let field = pointer
            .rsplit('/')
            .find(|p| p.parse::<usize>().is_err())
            .unwrap();
        let snake: String = field
            .chars()
            .flat_map(|c| {
                if c.is_ascii_uppercase() {
                    vec!['_', c.to_ascii_lowercase()]
                } else {
                    vec![c]
                }
            })
            .collect();
        assert!(
            shown.contains(&format!("{snake}:")) && shown.contains(&text),
            "{pointer} ({snake} = {text}) is not kept: {shown}"
        );
    }
}

/// The fake writes its policy answers as text (tens of thousands of leaves a site): each is
/// exactly serde_json's serialization (sorted keys, no blanks) of the made-up policies with
/// their ids, as it was when the fake built a `serde_json::Value` per leaf, restricted
/// conditions left out for the application token; with a filter and its 46004 warning too.
#[test]
fn the_fakes_policy_answers_are_serde_jsons_text_of_the_made_up_policies() {
    use fake_marketplace::metadata::{
        made_up_policy, made_up_variations_supported, structure_policies_path,
    };
    let fake = FakeMarketplace::new();
    let (client, _) = support::client(&fake);
    client
        .item_condition_policies(Marketplace::Us, &[179])
        .unwrap();
    let (token, http) = support::first_bearer_and_http(&fake, &condition_policies_path("EBAY_US"));
    // The answer to `path?query`, parsed, once its text is checked to be serde_json's own.
    let answer = |path: &str, query: &str| -> Value {
        let answer = http
            .get(format!("{}{path}?{query}", fake.base_url()))
            .header("Authorization", &token)
            .send()
            .unwrap();
        assert_eq!(answer.status(), 200);
        let body = answer.text().unwrap();
        let parsed: Value = serde_json::from_str(&body).unwrap();
        assert_eq!(parsed.to_string(), body, "not serde_json's own text");
        parsed
    };
    let tree = fake.tree(Marketplace::Us);
    let tree_id = tree.meta.tree_id.to_string();
    let leaves: Vec<u32> = tree.listable().filter(|c| c.leaf).map(|c| c.id).collect();
    let many: Vec<String> = leaves.iter().take(60).map(u32::to_string).collect();
    let filter = format!("filter=categoryIds%3A%7B{}%7D", many.join("%7C"));
    for query in ["", filter.as_str()] {
        let parsed = answer(&condition_policies_path("EBAY_US"), query);
        let policies = parsed["itemConditionPolicies"].as_array().unwrap();
        assert_eq!(
            policies.len(),
            if query.is_empty() { leaves.len() } else { 50 }
        );
        assert_eq!(parsed.get("warnings").is_some(), !query.is_empty());
        for policy in policies {
            let id: u32 = policy["categoryId"].as_str().unwrap().parse().unwrap();
            let mut expected = made_up_policy(&tree, id).unwrap();
            expected["categoryId"] = Value::from(id.to_string());
            expected["categoryTreeId"] = Value::from(tree_id.clone());
            expected["itemConditions"]
                .as_array_mut()
                .unwrap()
                .retain(|c| c["usage"] != "RESTRICTED");
            assert_eq!(policy, &expected);
        }
        let parsed = answer(&structure_policies_path("EBAY_US"), query);
        let policies = parsed["listingStructurePolicies"].as_array().unwrap();
        assert_eq!(
            policies.len(),
            if query.is_empty() { leaves.len() } else { 50 }
        );
        for policy in policies {
            let id: u32 = policy["categoryId"].as_str().unwrap().parse().unwrap();
            let supported = made_up_variations_supported(&tree, id).unwrap();
            assert_eq!(
                policy,
                &serde_json::json!({"categoryId": id.to_string(), "categoryTreeId": tree_id,
                    "variationsSupported": supported})
            );
        }
    }
}
