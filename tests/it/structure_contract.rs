//! The client's getListingStructurePolicies request and the fake's answers to it, held to
//! eBay's OpenAPI description of the Sell Metadata API
//! (`tests/contract/sell_metadata_v1_oas3.json`): the operation is documented and served, each
//! request the client sends is its documented method and path with only documented query
//! parameters (the filter encoded as eBay's reference shows it) and `Accept-Encoding: gzip`,
//! and every answer of the fake has a documented status, a body of the documented schema
//! (`ListingStructurePolicyResponse`), and documented error and warning ids with their domain
//! and category.

use crate::openapi;
use crate::taxonomy_support as support;

use std::collections::BTreeSet;
use std::path::Path;

use fake_marketplace::FakeMarketplace;
use fake_marketplace::metadata::structure_policies_path;
use marketplaces::Marketplace;
use openapi::Document;
use serde_json::Value;

const OPERATION: &str = "getListingStructurePolicies";

/// What the fake answers that the description lists elsewhere: (status, error id), as for
/// getItemConditionPolicies (tests/it/metadata_contract.rs): 46002 and 46003 are listed with
/// the 200 answer but are errors of the request, answered with 400.
const DEPARTURES: [(u16, u32); 2] = [(400, 46002), (400, 46003)];

fn document() -> Document {
    Document::load(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/contract/sell_metadata_v1_oas3.json"),
    )
}

#[test]
fn get_listing_structure_policies_is_documented_and_served_with_the_application_scope() {
    let doc = document();
    let ops = doc.operations();
    let op = ops.iter().find(|o| o.id == OPERATION).expect("documented");
    assert_eq!(op.method, "GET");
    assert_eq!(
        op.path,
        "/sell/metadata/v1/marketplace/{marketplace_id}/get_listing_structure_policies"
    );
    let served = FakeMarketplace::new().route_patterns();
    assert!(
        served.iter().any(|(m, p)| *m == op.method && *p == op.path),
        "{served:?}"
    );
    assert!(
        op.scopes
            .iter()
            .any(|s| s == "https://api.ebay.com/oauth/api_scope"),
        "{:?}",
        op.scopes
    );
    assert_eq!(
        op.responses.get(&200).and_then(|r| r.schema.as_deref()),
        Some("ListingStructurePolicyResponse")
    );
}

#[test]
fn every_request_and_answer_of_get_listing_structure_policies_is_documented() {
    let doc = document();
    let ops = doc.operations();
    let op = ops.iter().find(|o| o.id == OPERATION).unwrap();
    let fake = FakeMarketplace::new();
    let (client, _) = support::client(&fake);
    // Every category; a filter (a leaf and a parent); more than 50 ids (two calls); an
    // unknown id; a marketplace the fake holds no tree of; a malformed filter.
    let all = client
        .all_listing_structure_policies(Marketplace::Us)
        .unwrap();
    assert!(!all.listing_structure_policies.is_empty());
    let some = client
        .listing_structure_policies(Marketplace::Us, &[15687, 185100])
        .unwrap();
    assert_eq!(some.get(15687).unwrap().variations_supported, Some(true));
    assert!(some.get(185100).is_some(), "the parent named is answered");
    let leaves: Vec<u32> = fake
        .tree(Marketplace::Us)
        .listable()
        .filter(|c| c.leaf)
        .take(60)
        .map(|c| c.id)
        .collect();
    let sixty = client
        .listing_structure_policies(Marketplace::Us, &leaves)
        .unwrap();
    assert_eq!(sixty.listing_structure_policies.len(), 60);
    let unknown = client
        .listing_structure_policies(Marketplace::Us, &[999_999_999])
        .unwrap_err();
    assert_eq!(unknown.error_id(), Some(46003), "{unknown}");
    let no_tree = client
        .all_listing_structure_policies(Marketplace::Fr)
        .unwrap_err();
    assert_eq!(no_tree.error_id(), Some(46001), "{no_tree}");
    let (token, http) = support::first_bearer_and_http(&fake, &structure_policies_path("EBAY_US"));
    let send = |query: &str| {
        http.get(format!(
            "{}{}?{query}",
            fake.base_url(),
            structure_policies_path("EBAY_US")
        ))
        .header("Authorization", &token)
        .send()
        .unwrap()
    };
    assert_eq!(send("filter=categoryId%3A15687").status(), 400);
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
    let mut statuses = BTreeSet::new();
    let mut ids = BTreeSet::new();
    for (request, answer) in requests.iter().zip(&answers) {
        assert!(
            op.matches(&request.path),
            "{} is no {OPERATION}",
            request.path
        );
        assert_eq!(request.method, "GET");
        statuses.insert(answer.status);
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
        assert!(
            op.responses.contains_key(&answer.status),
            "{OPERATION} answered {}, not documented",
            answer.status
        );
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
            let found = doc.conformance(&body, "ListingStructurePolicyResponse");
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
fn every_field_of_a_listing_structure_policy_is_kept_by_the_client() {
    let doc = document();
    let full = doc.all_present("ListingStructurePolicyResponse");
    let decoded = marketplace_client::model::decode::listing_structure_policies(
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

#[test]
fn the_fakes_made_up_structure_policies_let_clothing_take_variations_and_real_estate_not() {
    let fake = FakeMarketplace::new();
    let (client, _) = support::client(&fake);
    let tree = fake.tree(Marketplace::Us);
    let all = client
        .all_listing_structure_policies(Marketplace::Us)
        .unwrap();
    let leaves = tree.listable().filter(|c| c.leaf).count();
    assert_eq!(all.listing_structure_policies.len(), leaves);
    // A leaf of Real Estate (10542 on EBAY_US): its top-level ancestor is 10542.
    let top = |mut id: u32| {
        while let Some(parent) = tree.get(id).and_then(|c| c.parent).filter(|p| *p != 0) {
            id = parent;
        }
        id
    };
    let real_estate_leaf = tree
        .listable()
        .find(|c| c.leaf && top(c.id) == 10542)
        .map(|c| c.id)
        .expect("EBAY_US has a Real Estate leaf");
    assert_eq!(
        all.get(real_estate_leaf).unwrap().variations_supported,
        Some(false)
    );
    assert_eq!(all.get(15687).unwrap().variations_supported, Some(true));
    // A test's own answer wins over the made-up one.
    fake.set_variations_supported(Marketplace::Us, 15687, Some(false));
    let set = client
        .listing_structure_policies(Marketplace::Us, &[15687])
        .unwrap();
    assert_eq!(set.get(15687).unwrap().variations_supported, Some(false));
}
