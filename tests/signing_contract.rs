//! The fake's Key Management API held to eBay's OpenAPI description of it
//! (`tests/contract/developer_key_management_v1_oas3.json`, see `tests/contract/README.md`):
//! it serves exactly the documented operations, each answer has the documented shape (every
//! `SigningKey` field; `privateKey` in createSigningKey's answer only), and its errors are
//! documented ids with their status, domain and category.

#[path = "contract/openapi.rs"]
#[allow(dead_code)]
mod openapi;
#[path = "common/taxonomy.rs"]
mod support;

use std::path::Path;

use fake_marketplace::FakeMarketplace;
use openapi::Document;
use serde_json::{Value, json};

fn document() -> Document {
    Document::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/contract/developer_key_management_v1_oas3.json"),
    )
}

/// Sends `method path` with `body` and the fake's token; the status and the JSON answer.
fn call(fake: &FakeMarketplace, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let token = support::tokens(fake).access_token().unwrap();
    let http = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    let url = format!("{}{path}", fake.base_url());
    let mut request = http
        .request(method.parse().unwrap(), url)
        .bearer_auth(token.secret());
    if let Some(body) = body {
        request = request.json(&body);
    }
    let answer = request.send().unwrap();
    let status = answer.status().as_u16();
    (status, answer.json().unwrap_or(Value::Null))
}

#[test]
fn the_fake_serves_every_documented_operation_and_no_other() {
    let doc = document();
    let base = doc.base_path();
    assert_eq!(base, "/developer/key_management/v1");
    let ops = doc.operations();
    assert_eq!(ops.len(), 3);
    let served: Vec<(String, String)> = FakeMarketplace::new()
        .route_patterns()
        .into_iter()
        .filter(|(_, p)| p.starts_with(&base))
        .collect();
    for op in &ops {
        assert!(
            served.iter().any(|(m, p)| *m == op.method && *p == op.path),
            "{} {} ({}) is not served",
            op.method,
            op.path,
            op.id
        );
    }
    for (method, pattern) in &served {
        assert!(
            ops.iter()
                .any(|op| op.method == *method && op.path == *pattern),
            "{method} {pattern} is not documented"
        );
    }
}

#[test]
fn the_fakes_answers_have_the_documented_shape() {
    let doc = document();
    let fake = FakeMarketplace::new();
    let every_field: Vec<String> = doc.schema("SigningKey")["properties"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let mut ids = Vec::new();
    for cipher in ["ED25519", "RSA"] {
        let (status, key) = call(
            &fake,
            "POST",
            "/developer/key_management/v1/signing_key",
            Some(json!({"signingKeyCipher": cipher})),
        );
        assert_eq!(status, 200);
        assert_eq!(doc.conformance(&key, "SigningKey"), Vec::<String>::new());
        for field in &every_field {
            assert!(key.get(field).is_some(), "createSigningKey lacks {field}");
        }
        assert_eq!(key["signingKeyCipher"], cipher);
        // "All keys have an expiration date of three (3) years after their creationTime."
        let created = key["creationTime"].as_u64().unwrap();
        assert_eq!(
            key["expirationTime"].as_u64().unwrap() - created,
            3 * 365 * 24 * 3600
        );
        ids.push(key["signingKeyId"].as_str().unwrap().to_owned());

        let (status, got) = call(
            &fake,
            "GET",
            &format!(
                "/developer/key_management/v1/signing_key/{}",
                ids.last().unwrap()
            ),
            None,
        );
        assert_eq!(status, 200);
        assert_eq!(doc.conformance(&got, "SigningKey"), Vec::<String>::new());
        assert!(
            got.get("privateKey").is_none(),
            "getSigningKey never returns it"
        );
        assert_eq!(got["jwe"], key["jwe"]);
    }
    let (status, list) = call(
        &fake,
        "GET",
        "/developer/key_management/v1/signing_key",
        None,
    );
    assert_eq!(status, 200);
    assert_eq!(
        doc.conformance(&list, "QuerySigningKeysResponse"),
        Vec::<String>::new()
    );
    let listed: Vec<&str> = list["signingKeys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["signingKeyId"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ids);
}

#[test]
fn the_fakes_errors_are_documented_ids_with_their_status_domain_and_category() {
    let doc = document();
    let fake = FakeMarketplace::new();
    let ops = doc.operations();
    let documented = |op_id: &str, status: u16, body: &Value| {
        let op = ops.iter().find(|o| o.id == op_id).unwrap();
        let response = op
            .responses
            .get(&status)
            .unwrap_or_else(|| panic!("{op_id} does not document {status}"));
        let error = &body["errors"][0];
        let id = error["errorId"].as_u64().unwrap() as u32;
        let doc_error = response
            .errors
            .iter()
            .find(|e| e.id == id)
            .unwrap_or_else(|| panic!("{op_id} {status}: errorId {id} is not documented"));
        assert_eq!(error["domain"], doc_error.domain.as_str());
        assert_eq!(error["category"], doc_error.category.as_str());
    };
    let (status, body) = call(
        &fake,
        "POST",
        "/developer/key_management/v1/signing_key",
        Some(json!({"signingKeyCipher": "ECDSA"})),
    );
    assert_eq!(status, 400);
    documented("createSigningKey", status, &body);
    let (status, body) = call(
        &fake,
        "GET",
        "/developer/key_management/v1/signing_key/no-such-key",
        None,
    );
    assert_eq!(status, 404);
    documented("getSigningKey", status, &body);
}
