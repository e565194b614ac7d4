//! The taxonomy client against the fake marketplace over loopback: the exact requests, the
//! typed answers, and every error path (401 renewal, 429, 5xx, time-out, cut-off and oversize
//! bodies, error bodies, unexpected bodies).

use crate::taxonomy_support as support;

use std::path::Path;
use std::time::{Duration, Instant};

use fake_marketplace::taxonomy::{
    DEFAULT_TREE_ID_PATH, ERROR_CATEGORY_NOT_IN_TREE, ERROR_NOT_LEAF, ERROR_TREE_NOT_FOUND,
    TREE_GET_PATH, aspects_path, subtree_path, suggestions_path, tree_path,
};
use fake_marketplace::{FakeMarketplace, Fault, Request, Response, TreeRoutes};
use marketplace_client::model::{AspectCardinality, AspectDataType, AspectMode, AspectUsage};
use marketplace_client::taxonomy::{ApiError, TreePath};
use marketplaces::MARKETPLACE_HEADER;
use marketplaces::Marketplace;
use support::*;
use taxonomy_tree::decode::Provenance;
use taxonomy_tree::tree::Category;

fn snapshot(site: Marketplace) -> taxonomy_tree::tree::CategoryTree {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("snapshots")
        .join(site.snapshot_file_name());
    taxonomy_tree::snapshot::read(&path).expect("committed snapshot")
}

fn provenance_of(tree: &taxonomy_tree::tree::CategoryTree) -> Provenance {
    Provenance {
        language: tree.meta.language.clone(),
        taken_at: tree.meta.taken_at.clone(),
        source: tree.meta.source.clone(),
        note: tree.meta.note.clone(),
    }
}

/// The request carries a bearer token the fake issued, the marketplace header, the language
/// and `Accept-Encoding: gzip`.
fn assert_headers(
    fake: &fake_marketplace::FakeMarketplace,
    r: &Request,
    site: Marketplace,
    lang: &str,
) {
    let bearer = r.header("Authorization").expect("Authorization");
    let token = bearer.strip_prefix("Bearer ").expect("Bearer scheme");
    assert!(
        fake.issued_token(token).is_some(),
        "a token the fake issued"
    );
    assert_eq!(
        r.headers_named(MARKETPLACE_HEADER),
        vec![site.marketplace_id()]
    );
    assert_eq!(r.headers_named("Accept-Language"), vec![lang]);
    assert_eq!(r.headers_named("Accept-Encoding"), vec!["gzip"]);
    assert_eq!(r.method, "GET");
}

#[test]
fn path_form_by_default_exact_request_and_body_decodes_to_the_snapshot() {
    let fake = fake();
    let (client, _) = client(&fake);
    // A custom host: `auto`, which tries eBay's documented getCategoryTree path first.
    assert_eq!(client.config().tree_path, TreePath::Auto);
    let body = client.fetch_tree_body(Marketplace::Us, None).unwrap();

    let requests = fake.requests_to(&tree_path(0));
    assert_eq!(requests.len(), 1);
    let r = &requests[0];
    assert_eq!(r.query, None);
    assert_headers(&fake, r, Marketplace::Us, "en-US");
    assert!(fake.requests_to(TREE_GET_PATH).is_empty());
    assert_eq!(
        body.url.as_str(),
        format!("{}{}", fake.base_url(), tree_path(0))
    );
    assert_eq!(client.tree_path_in_use(), TreePath::Path);
    assert_eq!(body.language, "en-US");
    assert_eq!(body.site, Marketplace::Us);
    // The fake answered gzip (the request accepted it); the client hands back the JSON.
    assert_eq!(body.bytes.first(), Some(&b'{'));

    let expected = snapshot(Marketplace::Us);
    let tree = taxonomy_tree::decode::decode_tree(&body.bytes, &provenance_of(&expected))
        .expect("decodes");
    assert_eq!(tree, expected);
}

#[test]
fn query_form_when_configured_with_language_override_decodes_to_the_snapshot() {
    let fake = fake();
    fake.set_tree_routes(TreeRoutes::Query);
    let config = config(&fake).with_tree_path(TreePath::Query);
    let (client, _) = client_with(&fake, config);
    let expected = snapshot(Marketplace::Au);
    let mut tree = client
        .fetch_tree(Marketplace::Au, &provenance_of(&expected))
        .unwrap();
    // Completeness is the snapshot's own record (the AU file is partial), not the answer's.
    tree.meta.complete = expected.meta.complete;
    assert_eq!(tree, expected);

    let body = client
        .fetch_tree_body(Marketplace::De, Some("en-GB"))
        .unwrap();
    assert_eq!(body.language, "en-GB");
    let requests = fake.requests_to(TREE_GET_PATH);
    assert_eq!(requests.len(), 2);
    assert_eq!(requests[0].query.as_deref(), Some("category_tree_id=15"));
    assert_eq!(requests[1].query.as_deref(), Some("category_tree_id=77"));
    assert_headers(&fake, &requests[0], Marketplace::Au, "en-AU");
    assert_headers(&fake, &requests[1], Marketplace::De, "en-GB");
    assert!(fake.requests_to(&tree_path(77)).is_empty());
}

#[test]
fn auto_falls_back_to_the_query_form_once_and_remembers_it() {
    let fake = fake();
    fake.set_tree_routes(TreeRoutes::Query);
    let (client, _) = client(&fake);
    assert_eq!(client.tree_path_in_use(), TreePath::Auto);
    client.fetch_tree_body(Marketplace::Us, None).unwrap();
    // The path form was refused with a 404, the query form answered.
    assert_eq!(fake.requests_to(&tree_path(0)).len(), 1);
    assert_eq!(fake.requests_to(TREE_GET_PATH).len(), 1);
    assert_eq!(client.tree_path_in_use(), TreePath::Query);
    // Remembered: the next tree goes straight to the query form, from any thread.
    std::thread::scope(|s| {
        s.spawn(|| client.fetch_tree_body(Marketplace::Gb, None).unwrap());
    });
    assert!(fake.requests_to(&tree_path(3)).is_empty());
    assert_eq!(fake.requests_to(TREE_GET_PATH).len(), 2);
    // Another client starts again from the path form.
    let (other, _) = support::client(&fake);
    other.fetch_tree_body(Marketplace::Gb, None).unwrap();
    assert_eq!(fake.requests_to(&tree_path(3)).len(), 1);
}

#[test]
fn auto_reports_the_first_answer_when_both_forms_say_not_found_and_remembers_nothing() {
    let fake = fake();
    let (client, _) = client(&fake);
    fake.fail_next(
        &tree_path(0),
        Fault::Status {
            status: 400,
            body: r#"{"errors":[{"errorId":62004,"domain":"API_TAXONOMY","category":"REQUEST","message":"The specified category tree ID was not found.","parameters":[{"name":"category_tree_id","value":"0"}]}]}"#.into(),
            headers: vec![],
        },
    );
    let err = client.fetch_tree_body(Marketplace::Us, None).unwrap_err();
    assert_eq!(err.error_id(), Some(ERROR_TREE_NOT_FOUND));
    assert!(err.to_string().contains(&tree_path(0)), "{err}");
    // The query form was tried once (the fake reads `get` as a tree id, as eBay does).
    assert_eq!(fake.requests_to(TREE_GET_PATH).len(), 1);
    assert_eq!(client.tree_path_in_use(), TreePath::Auto);
    // A failure that is not "not found" does not switch forms.
    fake.fail_next(
        &tree_path(0),
        Fault::Status {
            status: 400,
            body: "{}".into(),
            headers: vec![],
        },
    );
    assert_eq!(
        client
            .fetch_tree_body(Marketplace::Us, None)
            .unwrap_err()
            .status(),
        Some(400)
    );
    assert_eq!(fake.requests_to(TREE_GET_PATH).len(), 1);
    client.fetch_tree_body(Marketplace::Us, None).unwrap();
    assert_eq!(client.tree_path_in_use(), TreePath::Path);
}

#[test]
fn explicit_forms_never_fall_back() {
    let fake = fake();
    fake.set_tree_routes(TreeRoutes::Query);
    let (client, _) = client_with(&fake, config(&fake).with_tree_path(TreePath::Path));
    let err = client.fetch_tree_body(Marketplace::Us, None).unwrap_err();
    assert_eq!(err.status(), Some(404));
    assert!(fake.requests_to(TREE_GET_PATH).is_empty());
    fake.set_tree_routes(TreeRoutes::Path);
    let (client, _) = client_with(&fake, config(&fake).with_tree_path(TreePath::Query));
    let err = client.fetch_tree_body(Marketplace::Us, None).unwrap_err();
    assert_eq!(err.error_id(), Some(ERROR_TREE_NOT_FOUND));
    assert_eq!(
        fake.requests_to(&tree_path(0)).len(),
        1,
        "only the first client's request"
    );
}

#[test]
fn presets_use_the_documented_path_and_the_production_scope() {
    use marketplace_client::oauth::{
        Endpoints, OAuthClient, OAuthConfig, OAuthError, OAuthErrorCode, ScopeSet,
    };
    use marketplace_client::taxonomy::ClientConfig;
    for config in [ClientConfig::production(), ClientConfig::sandbox()] {
        assert_eq!(config.tree_path, TreePath::Path);
    }
    // eBay's sandbox grants application tokens for the production scope URL, and refuses
    // the sandbox-host one with invalid_scope; so does the fake.
    let fake = fake();
    let endpoints = Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth = OAuthClient::from_config(
        &OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap();
    let sandbox_default = Endpoints::sandbox().default_scope();
    assert_eq!(sandbox_default, "https://api.ebay.com/oauth/api_scope");
    oauth
        .client_credentials(&ScopeSet::new([sandbox_default]))
        .expect("the production scope URL is granted");
    let err = oauth
        .client_credentials(&ScopeSet::new([
            "https://api.sandbox.ebay.com/oauth/api_scope",
        ]))
        .unwrap_err();
    assert!(
        matches!(
            err,
            OAuthError::Server {
                code: OAuthErrorCode::InvalidScope,
                status: 400,
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn configured_language_applies_to_every_call() {
    let fake = fake();
    let (client, _) = client_with(&fake, config(&fake).with_language("de-DE"));
    client
        .category_suggestions(Marketplace::Us, "phones")
        .unwrap();
    client.item_aspects((Marketplace::Us, 9355)).unwrap();
    for r in fake.requests() {
        if r.path.starts_with("/commerce/") {
            assert_eq!(r.header("Accept-Language"), Some("de-DE"), "{}", r.path);
        }
    }
    // An explicit argument still wins for the tree.
    fake.set_tree(Marketplace::Us, small_tree(Marketplace::Us));
    let body = client
        .fetch_tree_body(Marketplace::Us, Some("es-US"))
        .unwrap();
    assert_eq!(body.language, "es-US");
}

#[test]
fn fetch_tree_fills_empty_provenance_and_follows_a_replaced_tree() {
    let fake = fake();
    let (client, _) = client(&fake);
    let mut tree = small_tree(Marketplace::Gb);
    fake.set_tree(Marketplace::Gb, tree.clone());
    let empty = Provenance {
        language: String::new(),
        taken_at: "2026-02-03".into(),
        source: String::new(),
        note: None,
    };
    let got = client.fetch_tree(Marketplace::Gb, &empty).unwrap();
    assert_eq!(got.categories, tree.categories);
    assert_eq!(got.meta.language, "en-GB");
    assert!(
        got.meta
            .source
            .ends_with("/commerce/taxonomy/v1/category_tree/3"),
        "{}",
        got.meta.source
    );

    // Remove "Books" and add a new leaf under Phones.
    tree.categories.retain(|c| c.id != 20);
    tree.categories[0].children = vec![10];
    tree.categories[1].children.push(13);
    tree.categories.push(Category {
        id: 13,
        name: "Phone Chargers".into(),
        parent: Some(10),
        leaf: true,
        children: vec![],
    });
    tree.categories.sort_by_key(|c| c.id);
    fake.set_tree(Marketplace::Gb, tree.clone());
    let got = client.fetch_tree(Marketplace::Gb, &empty).unwrap();
    assert!(got.get(20).is_none());
    assert_eq!(got.get(13).unwrap().name, "Phone Chargers");
}

#[test]
fn invalid_tree_body_is_a_decode_error_and_raw_bytes_are_returned_as_is() {
    let fake = fake();
    let (client, _) = client(&fake);
    let bad = br#"{"categoryTreeId":"15","categoryTreeVersion":"1","applicableMarketplaceIds":["EBAY_AU"],"rootCategoryNode":{"category":{"categoryId":"0","categoryName":"Root"},"childCategoryTreeNodes":[{"category":{"categoryId":17,"categoryName":"X"}}]}}"#;
    fake.set_tree_body(Marketplace::Au, bad.to_vec());
    let body = client.fetch_tree_body(Marketplace::Au, None).unwrap();
    assert_eq!(body.bytes, bad.to_vec());
    let err = client
        .fetch_tree(
            Marketplace::Au,
            &provenance_of(&small_tree(Marketplace::Au)),
        )
        .unwrap_err();
    assert!(matches!(err, ApiError::Decode { .. }), "{err:?}");
    assert!(err.to_string().contains("categoryId"), "{err}");
    fake.reset_tree(Marketplace::Au);
}

#[test]
fn suggestions_exact_request_and_typed_answer() {
    let fake = fake();
    let (client, _) = client(&fake);
    let q = "Cell Phones & Smartphones";
    let got = client.category_suggestions(Marketplace::Us, q).unwrap();

    let requests = fake.requests_to(&suggestions_path(0));
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].query.as_deref(),
        Some("q=Cell+Phones+%26+Smartphones")
    );
    assert_eq!(requests[0].query_param("q").as_deref(), Some(q));
    assert_headers(&fake, &requests[0], Marketplace::Us, "en-US");

    assert_eq!(got.tree_id, 0);
    assert_eq!(got.tree_version, snapshot(Marketplace::Us).meta.version);
    let first = &got.suggestions[0];
    assert_eq!(first.category.id, 9355);
    assert_eq!(first.category.name, "Cell Phones & Smartphones");
    assert_eq!(first.level, 2);
    // `relevancy` is reserved for future use (eBay's reference): not filled, so none.
    assert_eq!(first.relevancy, None);
    let ancestors: Vec<(u32, u32)> = first.ancestors.iter().map(|a| (a.id, a.level)).collect();
    assert_eq!(ancestors, vec![(15032, 1), (0, 0)]);
    assert_eq!(first.ancestors[0].name, "Cell Phones & Accessories");
    assert_eq!(
        first.ancestors[0].subtree_href.as_deref(),
        Some(format!("{}{}?category_id=15032", fake.base_url(), subtree_path(0)).as_str())
    );
    assert_eq!(
        first.path(),
        "Cell Phones & Accessories > Cell Phones & Smartphones"
    );

    let none = client
        .category_suggestions(Marketplace::Us, "zzzz-no-such-thing")
        .unwrap();
    assert!(none.suggestions.is_empty());
    assert_arrived_gzipped(&fake, &suggestions_path(0), 2);
}

/// Every answer to `path` came compressed (`Content-Encoding: gzip`, as the fake records what
/// it sent), so the client's decompression decoded it: `count` answers.
fn assert_arrived_gzipped(fake: &FakeMarketplace, path: &str, count: usize) {
    let answers = fake.answers_to(path);
    assert_eq!(answers.len(), count, "answers to {path}");
    for a in &answers {
        assert_eq!(
            a.header("Content-Encoding"),
            Some("gzip"),
            "{path} answered {} uncompressed: {:?}",
            a.status,
            a.headers
        );
    }
}

/// The README's query: "iphone 15" names no category, but its words do (a product word the
/// fake knows, iPhone, is a smartphone): phone leaves first, a whole-name match above a match
/// on an ancestor, and no leaf matching none of the words.
#[test]
fn suggestions_match_the_words_of_a_query() {
    let fake = fake();
    let (client, _) = client(&fake);
    let got = client
        .category_suggestions(Marketplace::Us, "iphone 15")
        .unwrap();
    let ids: Vec<u32> = got.suggestions.iter().map(|s| s.category.id).collect();
    assert!(!ids.is_empty(), "no suggestion for \"iphone 15\"");
    assert_eq!(
        got.suggestions[0].category.name,
        "Cell Phones & Smartphones"
    );
    for s in &got.suggestions {
        let path = s.path().to_lowercase();
        assert!(path.contains("phone"), "{}", s.path());
    }
    // More words matched rank higher: "cell phones" puts Cell Phones & Smartphones above a
    // leaf matching only "phone".
    let got = client
        .category_suggestions(Marketplace::Us, "used cell phone")
        .unwrap();
    assert_eq!(got.suggestions[0].category.id, 9355);
    // A query none of whose words is in a name still has no suggestion.
    let none = client
        .category_suggestions(Marketplace::Us, "zzzz qqqq")
        .unwrap();
    assert!(none.suggestions.is_empty());
}

#[test]
fn subtree_is_typed_and_flat() {
    let fake = fake();
    let (client, _) = client(&fake);
    let sub = client.category_subtree((Marketplace::Us, 15032)).unwrap();
    let r = &fake.requests_to(&subtree_path(0))[0];
    assert_eq!(r.query.as_deref(), Some("category_id=15032"));
    assert_headers(&fake, r, Marketplace::Us, "en-US");

    let full = snapshot(Marketplace::Us);
    assert_eq!(sub.tree_id, 0);
    assert_eq!(sub.level, 1);
    assert_eq!(sub.root().id, 15032);
    assert_eq!(sub.root().parent, Some(0));
    assert_eq!(sub.root().children, full.get(15032).unwrap().children);
    let phones = sub.get(9355).unwrap();
    assert_eq!(phones.parent, Some(15032));
    assert!(phones.leaf);
    for c in &sub.categories {
        assert_eq!(c, full.get(c.id).unwrap(), "category {}", c.id);
    }
    assert!(sub.leaves().count() > 1);
    assert_arrived_gzipped(&fake, &subtree_path(0), 1);
}

#[test]
fn aspects_are_typed() {
    let fake = fake();
    let (client, _) = client(&fake);
    let got = client.item_aspects((Marketplace::Us, 9355)).unwrap();
    let r = &fake.requests_to(&aspects_path(0))[0];
    assert_eq!(r.query.as_deref(), Some("category_id=9355"));
    assert_headers(&fake, r, Marketplace::Us, "en-US");

    assert_eq!(got.category_id, 9355);
    let brand = got.get("brand").unwrap();
    assert_eq!(brand.data_type, Some(AspectDataType::String));
    assert!(brand.required);
    assert_eq!(brand.mode, Some(AspectMode::SelectionOnly));
    assert_eq!(brand.cardinality, Some(AspectCardinality::Single));
    assert_eq!(brand.usage, Some(AspectUsage::Recommended));
    assert!(brand.value_names().any(|v| v == "Apple"));
    assert_eq!(got.get("Model").unwrap().mode, Some(AspectMode::FreeText));
    assert!(got.get("Storage Capacity").is_some());
    assert!(got.get("Colour").is_some());
    let features = got.get("Features").unwrap();
    assert_eq!(features.cardinality, Some(AspectCardinality::Multi));
    assert_eq!(features.data_type, Some(AspectDataType::StringArray));
    let required: Vec<&str> = got.required().map(|a| a.name.as_str()).collect();
    assert_eq!(required, vec!["Brand", "Model"]);

    // Another leaf: Brand and Condition.
    let other = client.item_aspects((Marketplace::Us, 12)).unwrap();
    let names: Vec<&str> = other.aspects.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, vec!["Brand", "Condition"]);

    // Not a leaf: the service's error body, typed.
    let err = client.item_aspects((Marketplace::Us, 15032)).unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert_eq!(err.error_id(), Some(ERROR_NOT_LEAF));
    assert!(err.to_string().contains("must be a leaf category"), "{err}");
    // The answers, the error's included, came compressed.
    assert_arrived_gzipped(&fake, &aspects_path(0), 3);
}

#[test]
fn unknown_enum_values_are_kept() {
    let fake = fake();
    fake.route(
        "GET",
        "/commerce/taxonomy/v1/category_tree/{id}/get_item_aspects_for_category",
        |_, _| {
            Response::json(
                200,
                &serde_json::json!({"aspects": [{
                    "localizedAspectName": "Size",
                    "aspectConstraint": {"aspectDataType": "RANGE", "aspectRequired": false,
                        "aspectMode": "GUIDED", "itemToAspectCardinality": "FEW",
                        "aspectUsage": "SOMETIMES", "aspectMaxLength": 65, "aspectFormat": "int32"},
                    "aspectValues": [{"localizedValue": "XL", "valueConstraints": []}]
                }]}),
            )
        },
    );
    let (client, _) = client(&fake);
    let got = client.item_aspects((Marketplace::Us, 9355)).unwrap();
    let size = &got.aspects[0];
    assert_eq!(
        size.data_type,
        Some(AspectDataType::Unknown("RANGE".into()))
    );
    assert_eq!(size.mode, Some(AspectMode::Unknown("GUIDED".into())));
    assert_eq!(
        size.cardinality,
        Some(AspectCardinality::Unknown("FEW".into()))
    );
    assert_eq!(size.usage, Some(AspectUsage::Unknown("SOMETIMES".into())));
    assert_eq!(size.max_length, Some(65));
    assert_eq!(size.format.as_deref(), Some("int32"));
    assert_eq!(size.value_names().collect::<Vec<_>>(), vec!["XL"]);
}

#[test]
fn default_tree_id_of_a_marketplace() {
    let fake = fake();
    let (client, _) = client(&fake);
    let got = client.default_tree_id("EBAY_DE").unwrap();
    assert_eq!(got.tree_id, 77);
    assert_eq!(got.tree_version, snapshot(Marketplace::De).meta.version);
    let r = &fake.requests_to(DEFAULT_TREE_ID_PATH)[0];
    assert_eq!(r.query.as_deref(), Some("marketplace_id=EBAY_DE"));
    assert_headers(&fake, r, Marketplace::De, "de-DE");

    let err = client.default_tree_id("EBAY_XX").unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert!(
        err.to_string().contains("marketplace ID was not found"),
        "{err}"
    );
}

#[test]
fn error_body_is_typed_with_message_in_display() {
    let fake = fake();
    let (client, sleeper) = client(&fake);
    let err = client
        .category_subtree((Marketplace::Us, 999_999_999))
        .unwrap_err();
    let ApiError::Service { status, errors, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*status, 400);
    assert_eq!(errors[0].error_id, ERROR_CATEGORY_NOT_IN_TREE);
    assert_eq!(errors[0].domain.as_deref(), Some("API_TAXONOMY"));
    assert_eq!(errors[0].category.as_deref(), Some("REQUEST"));
    assert_eq!(errors[0].parameters[0].name, "category_id");
    assert_eq!(errors[0].parameters[0].value, "999999999");
    assert_eq!(err.error_id(), Some(62005));
    assert!(
        err.to_string()
            .contains("The specified category ID does not belong to the specified category tree."),
        "{err}"
    );
    // A 400 is not retried.
    assert_eq!(fake.requests_to(&subtree_path(0)).len(), 1);
    assert!(sleeper.delays().is_empty());
}

#[test]
fn unauthorized_once_renews_the_token_and_retries() {
    let fake = fake();
    let (client, sleeper) = client(&fake);
    fake.set_tree(Marketplace::Us, small_tree(Marketplace::Us));
    fake.fail_next(
        &tree_path(0),
        Fault::Status {
            status: 401,
            body: r#"{"errors":[{"errorId":1001,"domain":"OAuth","category":"REQUEST","message":"Invalid access token"}]}"#.into(),
            headers: vec![],
        },
    );
    client.fetch_tree_body(Marketplace::Us, None).unwrap();
    let trees = fake.requests_to(&tree_path(0));
    assert_eq!(trees.len(), 2);
    assert_eq!(fake.token_requests().len(), 2);
    assert_ne!(
        trees[0].header("Authorization"),
        trees[1].header("Authorization"),
        "the second attempt carries the new token"
    );
    assert!(sleeper.delays().is_empty());
}

#[test]
fn unauthorized_twice_is_an_error_without_the_token() {
    let fake = fake();
    let (client, _) = client(&fake);
    fake.fail_times(
        &suggestions_path(0),
        Fault::Status {
            status: 401,
            body: r#"{"errors":[{"errorId":1001,"domain":"OAuth","category":"REQUEST","message":"Invalid access token"}]}"#.into(),
            headers: vec![],
        },
        5,
    );
    let err = client
        .category_suggestions(Marketplace::Us, "phone")
        .unwrap_err();
    assert_eq!(err.status(), Some(401));
    assert_eq!(err.error_id(), Some(1001));
    let requests = fake.requests_to(&suggestions_path(0));
    assert_eq!(requests.len(), 2);
    for r in &requests {
        let token = r
            .header("Authorization")
            .unwrap()
            .trim_start_matches("Bearer ");
        assert!(!err.to_string().contains(token));
        assert!(!format!("{err:?}").contains(token));
    }
}

#[test]
fn rate_limited_waits_retry_after_then_succeeds() {
    let fake = fake();
    let (client, sleeper) = client(&fake);
    fake.fail_next(
        &suggestions_path(0),
        Fault::TooManyRequests {
            retry_after_secs: 7,
        },
    );
    client
        .category_suggestions(Marketplace::Us, "phone")
        .unwrap();
    assert_eq!(fake.requests_to(&suggestions_path(0)).len(), 2);
    assert_eq!(sleeper.delays(), vec![Duration::from_secs(7)]);
}

#[test]
fn rate_limited_with_real_sleep_of_one_second() {
    let fake = fake();
    fake.set_tree(Marketplace::Gb, small_tree(Marketplace::Gb));
    let client =
        marketplace_client::taxonomy::TaxonomyClient::new(config(&fake), tokens(&fake)).unwrap();
    fake.fail_next(
        &tree_path(3),
        Fault::TooManyRequests {
            retry_after_secs: 1,
        },
    );
    let start = Instant::now();
    client.fetch_tree_body(Marketplace::Gb, None).unwrap();
    assert!(start.elapsed() >= Duration::from_secs(1));
    assert_eq!(fake.requests_to(&tree_path(3)).len(), 2);
}

#[test]
fn rate_limited_beyond_the_longest_wait_gives_up_at_once() {
    let fake = fake();
    let (client, sleeper) = client(&fake);
    fake.fail_next(
        &aspects_path(0),
        Fault::TooManyRequests {
            retry_after_secs: 3600,
        },
    );
    let err = client.item_aspects((Marketplace::Us, 9355)).unwrap_err();
    assert!(matches!(err, ApiError::RateLimited { .. }), "{err:?}");
    assert_eq!(err.retry_after(), Some(Duration::from_secs(3600)));
    assert_eq!(err.error_id(), Some(2001));
    assert_eq!(fake.requests_to(&aspects_path(0)).len(), 1);
    assert!(sleeper.delays().is_empty());
}

#[test]
fn server_errors_are_retried_then_given_up_with_exact_attempts() {
    let fake = fake();
    let (client, sleeper) = client_with(&fake, config(&fake).with_max_retries(3));
    fake.fail_times(
        &subtree_path(0),
        Fault::Status {
            status: 503,
            body: "<html>Service Unavailable</html>".into(),
            headers: vec![],
        },
        10,
    );
    let err = client
        .category_subtree((Marketplace::Us, 15032))
        .unwrap_err();
    let ApiError::Http { status, body, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(*status, 503);
    assert!(body.contains("Service Unavailable"));
    assert_eq!(fake.requests_to(&subtree_path(0)).len(), 4);
    let delays = sleeper.delays();
    assert_eq!(delays.len(), 3);
    for (n, d) in delays.iter().enumerate() {
        assert!(*d <= Duration::from_millis(1 << n), "retry {n}: {d:?}");
    }

    // A 500 with the service's error body, retried once then successful.
    fake.clear_faults();
    fake.fail_next(
        &subtree_path(0),
        Fault::Status {
            status: 500,
            body: r#"{"errors":[{"errorId":62000,"domain":"API_TAXONOMY","category":"APPLICATION","message":"There was a problem with an eBay internal system or process."}]}"#.into(),
            headers: vec![],
        },
    );
    client.category_subtree((Marketplace::Us, 15032)).unwrap();
    assert_eq!(fake.requests_to(&subtree_path(0)).len(), 6);
}

#[test]
fn server_error_body_after_retries_is_typed() {
    let fake = fake();
    let (client, _) = client_with(&fake, config(&fake).with_max_retries(1));
    fake.fail_times(
        DEFAULT_TREE_ID_PATH,
        Fault::Status {
            status: 500,
            body: r#"{"errors":[{"errorId":62000,"domain":"API_TAXONOMY","category":"APPLICATION","message":"There was a problem with an eBay internal system or process."}]}"#.into(),
            headers: vec![],
        },
        2,
    );
    let err = client.default_tree_id("EBAY_US").unwrap_err();
    assert_eq!(err.status(), Some(500));
    assert_eq!(err.error_id(), Some(62000));
    assert!(err.is_retryable());
    assert_eq!(fake.requests_to(DEFAULT_TREE_ID_PATH).len(), 2);
}

#[test]
fn timeout_is_reported_and_not_retried() {
    let fake = fake();
    let (client, sleeper) = client_with(
        &fake,
        config(&fake).with_timeout(Duration::from_millis(300)),
    );
    fake.fail_next(&suggestions_path(0), Fault::Delay(Duration::from_secs(2)));
    let start = Instant::now();
    let err = client
        .category_suggestions(Marketplace::Us, "phone")
        .unwrap_err();
    assert!(matches!(err, ApiError::Timeout { .. }), "{err:?}");
    assert!(start.elapsed() < Duration::from_secs(2));
    assert_eq!(fake.requests_to(&suggestions_path(0)).len(), 1);
    assert!(sleeper.delays().is_empty());
}

#[test]
fn slow_tree_within_the_timeout_is_fine() {
    let fake = fake();
    fake.set_tree(Marketplace::Us, small_tree(Marketplace::Us));
    fake.set_tree_delay(Some((
        Duration::from_millis(50),
        Duration::from_millis(100),
    )));
    let (client, _) = client(&fake);
    let start = Instant::now();
    client.fetch_tree_body(Marketplace::Us, None).unwrap();
    assert!(start.elapsed() >= Duration::from_millis(50));
}

#[test]
fn cut_off_body_is_truncated_and_retried() {
    let fake = fake();
    fake.set_tree(Marketplace::De, small_tree(Marketplace::De));
    let (client, sleeper) = client_with(&fake, config(&fake).with_max_retries(0));
    fake.fail_next(&tree_path(77), Fault::CutOffBody);
    let err = client.fetch_tree_body(Marketplace::De, None).unwrap_err();
    assert!(matches!(err, ApiError::Truncated { .. }), "{err:?}");
    assert!(sleeper.delays().is_empty());

    // With retries, the next attempt gets the whole body.
    let (client, sleeper) = support::client(&fake);
    fake.fail_next(&tree_path(77), Fault::CutOffBody);
    let body = client.fetch_tree_body(Marketplace::De, None).unwrap();
    assert!(body.bytes.starts_with(b"{"));
    assert_eq!(sleeper.delays().len(), 1);
    assert_eq!(fake.requests_to(&tree_path(77)).len(), 3);
}

#[test]
fn oversize_body_stops_at_the_limit() {
    let fake = fake();
    let (client, sleeper) = client_with(&fake, config(&fake).with_max_body_bytes(10_000));
    let err = client.fetch_tree_body(Marketplace::Us, None).unwrap_err();
    let ApiError::BodyTooLarge { limit, .. } = err else {
        panic!("{err:?}")
    };
    assert_eq!(limit, 10_000);
    assert_eq!(fake.requests_to(&tree_path(0)).len(), 1);
    assert!(sleeper.delays().is_empty());
    // The same limit is fine for a small answer.
    client.item_aspects((Marketplace::Us, 9355)).unwrap();
}

#[test]
fn unexpected_body_is_reported_with_its_start() {
    let fake = fake();
    let (client, _) = client(&fake);
    let html = format!("<html><body>{}</body></html>", "maintenance ".repeat(200));
    fake.fail_next(
        &suggestions_path(0),
        Fault::Status {
            status: 200,
            body: html,
            headers: vec![("Content-Type".into(), "text/html".into())],
        },
    );
    let err = client
        .category_suggestions(Marketplace::Us, "phone")
        .unwrap_err();
    let ApiError::UnexpectedBody {
        status,
        body,
        reason,
        ..
    } = &err
    else {
        panic!("{err:?}")
    };
    assert_eq!(*status, 200);
    assert!(body.starts_with("<html><body>maintenance"));
    assert!(body.len() < 600, "cut to about 512 bytes: {}", body.len());
    assert!(reason.contains("not the expected JSON"), "{reason}");
}

/// The issue's hostile answer (60 MB of escapes that every layer of the sanitizer's decoding
/// changes) to a call that reads up to 64 MiB: one such call took 94 s and 3.9 GB when the
/// whole body went to the sanitizer. It fails at once with the body's start.
#[test]
fn a_huge_hostile_answer_fails_at_once_with_its_start() {
    let fake = fake();
    let (client, _) = client(&fake);
    fake.route(
        "GET",
        "/commerce/taxonomy/v1/category_tree/{id}/get_item_aspects_for_category",
        |_, _| {
            // Sent as is (a server that does not compress): the fake would otherwise gzip
            // 60 MB for a client that accepts gzip, and the time measured would be its own.
            Response::new(200, br"%252525\u0025".repeat(60_000_000 / 13))
                .with_header("Content-Type", "application/json")
                .with_header("Content-Encoding", "identity")
        },
    );
    let started = Instant::now();
    let err = client.item_aspects((Marketplace::Us, 9355)).unwrap_err();
    let took = started.elapsed();
    let ApiError::UnexpectedBody { body, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(body.starts_with(r"%252525\u0025%252525"), "{body}");
    assert!(body.ends_with("…[truncated]"), "{body}");
    assert!(body.len() < 600, "{}", body.len());
    assert!(took < Duration::from_secs(10), "{took:?}");
}

/// getDefaultCategoryTreeId's answer is two short fields: more than 1 MiB of it is not read.
/// A long string in the answer is not quoted into the error, and a short one that echoes the
/// token passes the sanitizer.
#[test]
fn default_tree_id_answers_are_short() {
    let fake = fake();
    let (client, _) = client(&fake);
    fake.route("GET", DEFAULT_TREE_ID_PATH, |_, _| {
        Response::new(200, vec![b' '; 2 << 20]).with_header("Content-Type", "application/json")
    });
    let err = client.default_tree_id("EBAY_US").unwrap_err();
    assert!(
        matches!(err, ApiError::BodyTooLarge { limit, .. } if limit == 1 << 20),
        "{err:?}"
    );

    let long = format!(
        r#"{{"categoryTreeId":"{}","categoryTreeVersion":"1"}}"#,
        "7a".repeat(400_000)
    );
    fake.route("GET", DEFAULT_TREE_ID_PATH, move |_, _| {
        Response::new(200, long.clone()).with_header("Content-Type", "application/json")
    });
    let err = client.default_tree_id("EBAY_US").unwrap_err();
    let ApiError::UnexpectedBody { reason, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        reason,
        "categoryTreeId (a string of 800000 bytes) is not a decimal string"
    );

    fake.route("GET", DEFAULT_TREE_ID_PATH, |req, _| {
        let token = req.header("Authorization").unwrap_or_default();
        let token = token.trim_start_matches("Bearer ");
        Response::json(200, &serde_json::json!({"categoryTreeId": token}))
    });
    let err = client.default_tree_id("EBAY_US").unwrap_err();
    let ApiError::UnexpectedBody { reason, body, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(
        reason,
        "categoryTreeId \"[redacted]\" is not a decimal string"
    );
    assert!(
        !body.contains("v^1.1") && body.contains("[redacted]"),
        "{body}"
    );
}

#[test]
fn oauth_failure_is_an_oauth_error() {
    let fake = fake();
    let endpoints =
        marketplace_client::oauth::Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let oauth = marketplace_client::oauth::OAuthClient::from_config(
        &marketplace_client::oauth::OAuthConfig::new(endpoints)
            .with_credentials(fake.client_id(), "wrong-secret"),
    )
    .unwrap();
    let tokens = std::sync::Arc::new(marketplace_client::oauth::ApplicationTokenProvider::new(
        oauth,
    ));
    let client = marketplace_client::taxonomy::TaxonomyClient::new(config(&fake), tokens).unwrap();
    let err = client.default_tree_id("EBAY_US").unwrap_err();
    assert!(matches!(err, ApiError::OAuth(_)), "{err:?}");
    assert!(fake.requests_to(DEFAULT_TREE_ID_PATH).is_empty());
}

#[test]
fn connection_refused_is_retried_then_transport() {
    let fake = fake();
    let tokens = tokens(&fake);
    // A port nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = closed.local_addr().unwrap();
    drop(closed);
    let config =
        marketplace_client::taxonomy::ClientConfig::for_base_url(&format!("http://{addr}"))
            .unwrap()
            .with_backoff(Duration::from_millis(1), Duration::from_millis(2))
            .with_max_retries(2);
    let sleeper = std::sync::Arc::new(marketplace_client::test_util::RecordingSleeper::default());
    let client = marketplace_client::taxonomy::TaxonomyClient::new(config, tokens)
        .unwrap()
        .with_sleeper(sleeper.clone());
    let err = client.default_tree_id("EBAY_US").unwrap_err();
    assert!(matches!(err, ApiError::Transport { .. }), "{err:?}");
    assert_eq!(sleeper.delays().len(), 2);
}

#[test]
fn four_sites_concurrently_with_one_client() {
    let fake = fake();
    for site in Marketplace::ALL {
        fake.set_tree(site, small_tree(site));
    }
    let (client, _) = client(&fake);
    let client = &client;
    let results: Vec<_> = std::thread::scope(|s| {
        let handles: Vec<_> = Marketplace::ALL
            .into_iter()
            .map(|site| {
                s.spawn(move || {
                    let p = Provenance {
                        language: String::new(),
                        taken_at: "2026-01-01".into(),
                        source: String::new(),
                        note: None,
                    };
                    (site, client.fetch_tree(site, &p))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (site, tree) in results {
        let tree = tree.unwrap();
        assert_eq!(tree.meta.tree_id, site.tree_id());
        assert_eq!(tree.meta.marketplace_id, site.marketplace_id());
        assert_eq!(tree.meta.language, site.default_language());
    }
    for site in Marketplace::ALL {
        assert_eq!(fake.requests_to(&tree_path(site.tree_id())).len(), 1);
    }
}

/// The fake itself: unknown tree ids get the service's documented error body (400, errorId
/// 62004); the query form's `get` is such an id.
#[test]
fn fake_rejects_unknown_tree() {
    let fake = fake();
    let token = tokens(&fake).access_token().unwrap();
    let http = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    let get = |path: &str, marketplace: &str| {
        let r = http
            .get(format!("{}{path}", fake.base_url()))
            .bearer_auth(token.secret())
            .header(MARKETPLACE_HEADER, marketplace)
            .header("Accept-Language", "en-US")
            .send()
            .unwrap();
        let status = r.status().as_u16();
        let body: serde_json::Value = r.json().unwrap();
        (status, body["errors"][0]["errorId"].as_u64().unwrap_or(0))
    };
    // The query form is not eBay's: by default the fake reads `get` as a tree id, as eBay does.
    assert_eq!(
        get(&format!("{TREE_GET_PATH}?category_tree_id=0"), "EBAY_US"),
        (400, u64::from(ERROR_TREE_NOT_FOUND))
    );
    assert_eq!(
        get(&tree_path(9), "EBAY_US"),
        (400, u64::from(ERROR_TREE_NOT_FOUND))
    );
    let unauthenticated = http
        .get(format!("{}{}", fake.base_url(), tree_path(0)))
        .send()
        .unwrap();
    assert_eq!(unauthenticated.status().as_u16(), 401);
}
