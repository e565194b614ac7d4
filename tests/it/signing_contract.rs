//! The client's and the fake's Key Management API held to eBay's OpenAPI description of it
//! (`tests/contract/developer_key_management_v1_oas3.json`, see `tests/contract/README.md`):
//! the client sends each documented operation's request and keeps every documented field of
//! its answer; the fake serves exactly the documented operations, each answer has the
//! documented shape (every `SigningKey` field; `privateKey` in createSigningKey's answer only),
//! and its errors are documented ids with their status, domain and category.

use crate::openapi;
use crate::taxonomy_support as support;

use std::path::Path;

use std::sync::{Arc, Mutex};

use fake_marketplace::{FakeMarketplace, Response};
use marketplace_client::api::{ApiClient, ClientConfig};
use marketplace_client::signing::SigningKeyInfo;
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

#[test]
fn the_client_sends_every_documented_request_and_keeps_every_field() {
    let doc = document();
    let ops = doc.operations();
    let fake = FakeMarketplace::new();
    let key = doc.all_present("SigningKey");
    let list = doc.all_present("QuerySigningKeysResponse");
    let seen: Arc<Mutex<Vec<fake_marketplace::Request>>> = Arc::default();
    for op in &ops {
        let answer = if op.id == "getSigningKeys" {
            list.clone()
        } else {
            key.clone()
        };
        let seen = seen.clone();
        fake.route(&op.method, &op.path, move |req, state| {
            seen.lock().unwrap().push(req.clone());
            match state.check_bearer(req) {
                Ok(_) => Response::json(200, &answer),
                Err(refused) => refused,
            }
        });
    }
    let api = ApiClient::new(
        ClientConfig::for_base_url(&fake.base_url()).unwrap(),
        support::tokens(&fake),
    )
    .unwrap();
    // Every documented field but privateKey, kept as sent.
    let info = |k: &Value| {
        (
            k["signingKeyId"].as_str().unwrap().to_owned(),
            k["signingKeyCipher"].as_str().unwrap().to_owned(),
            k["creationTime"].as_u64(),
            k["expirationTime"].as_u64(),
            k["jwe"].as_str().unwrap().to_owned(),
            k["publicKey"].as_str().map(str::to_owned),
        )
    };
    let fields = |i: &SigningKeyInfo| {
        (
            i.signing_key_id.clone(),
            i.cipher.clone(),
            i.creation_time,
            i.expiration_time,
            i.jwe.clone(),
            i.public_key.clone(),
        )
    };
    let created = api.create_signing_key("ED25519").unwrap();
    assert_eq!(fields(&created.info), info(&key));
    assert_eq!(created.private_key(), key["privateKey"].as_str().unwrap());
    let id = "100001/a b";
    assert_eq!(fields(&api.signing_key(id).unwrap()), info(&key));
    let listed = api.signing_keys().unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(fields(&listed[0]), info(&list["signingKeys"][0]));

    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 3);
    for (request, op_id) in seen
        .iter()
        .zip(["createSigningKey", "getSigningKey", "getSigningKeys"])
    {
        let op = ops.iter().find(|o| o.id == op_id).unwrap();
        assert_eq!(request.method, op.method, "{op_id}");
        assert!(
            op.matches(&request.path),
            "{op_id}: {} is not {}",
            request.path,
            op.path
        );
        assert!(request.query.is_none(), "{op_id} documents no query");
        assert!(
            request
                .header("Authorization")
                .unwrap()
                .starts_with("Bearer ")
        );
    }
    let body: Value = serde_json::from_slice(&seen[0].body).unwrap();
    assert_eq!(body, json!({"signingKeyCipher": "ED25519"}));
    assert_eq!(
        doc.conformance(&body, "CreateSigningKeyRequest"),
        Vec::<String>::new()
    );
    // The id is one path segment, percent-encoded.
    assert_eq!(
        seen[1].path,
        "/developer/key_management/v1/signing_key/100001%2Fa%20b"
    );
}
