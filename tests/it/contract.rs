//! The client and the fake held to eBay's published OpenAPI description of the Taxonomy API
//! (`tests/contract/commerce_taxonomy_v1_oas3.json`, v1.1.1; see `tests/contract/README.md`).
//! Everything here is derived from the document:
//!
//! - what the client sends: for every operation, the method, the path, each documented query
//!   and header parameter, the bearer token and a scope the operation lists;
//! - what the client does with every documented answer: 200 with every field present (each
//!   field kept: changing any one changes the decoded answer) and with every optional field
//!   absent (accepted, or refused naming a field the client cannot do without); 204 where it
//!   is listed; each documented error id with its status, domain and category;
//! - what the fake serves: only documented paths, documented status codes and error ids,
//!   answers of the documented shape, 204 only where it is listed.
//!
//! Replacing the document with a newer version and running this test lists every difference.

use crate::openapi;
use crate::taxonomy_support as support;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use fake_marketplace::{FakeMarketplace, Request, Response};
use marketplace_client::model::ServiceError;
use marketplace_client::oauth::Endpoints;
use marketplace_client::taxonomy::{ApiError, TaxonomyClient, TreePath};
use marketplaces::MARKETPLACE_HEADER;
use marketplaces::Marketplace;
use openapi::{Document, Operation, changed_at, pattern_of, scalar_pointers};
use serde_json::{Value, json};
use taxonomy_tree::decode::Provenance;

const SITE: Marketplace = Marketplace::Us;
/// The category a per-category call asks about (the canned answers do not depend on it).
const CATEGORY: u32 = 15032;

fn document() -> Document {
    Document::load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/contract/commerce_taxonomy_v1_oas3.json"),
    )
}

// ---- the client's calls, one per documented operation ----

/// What a call gave: its answer (printed with `Debug`, so two answers compare field for
/// field), or how it failed.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    Answer(String),
    Failed {
        status: Option<u16>,
        errors: Vec<ServiceError>,
        retryable: bool,
        no_default_tree: bool,
        message: String,
    },
}

impl From<ApiError> for Outcome {
    fn from(e: ApiError) -> Self {
        Outcome::Failed {
            status: e.status(),
            errors: e.service_errors().to_vec(),
            retryable: e.is_retryable(),
            no_default_tree: matches!(e, ApiError::NoDefaultTree { .. }),
            message: e.to_string(),
        }
    }
}

fn answer<T: std::fmt::Debug>(r: Result<T, ApiError>) -> Outcome {
    match r {
        Ok(a) => Outcome::Answer(format!("{a:#?}")),
        Err(e) => e.into(),
    }
}

/// A client call for one operation; `dir` is a scratch directory for downloads.
type Run = fn(&TaxonomyClient, &Path) -> Outcome;

/// Every operation the client calls: its call, and what its empty answer (`204`) shows.
fn calls() -> BTreeMap<&'static str, (Run, &'static str)> {
    BTreeMap::from([
        (
            "getCategoryTree",
            (
                (|c: &TaxonomyClient, _: &Path| {
                    answer(c.fetch_tree(
                        SITE,
                        &Provenance {
                            language: "en-US".into(),
                            taken_at: "2026-01-01".into(),
                            source: "contract test".into(),
                            note: None,
                        },
                    ))
                }) as Run,
                "",
            ),
        ),
        (
            "getCategorySubtree",
            (
                (|c: &TaxonomyClient, _: &Path| answer(c.category_subtree((SITE, CATEGORY))))
                    as Run,
                "",
            ),
        ),
        (
            "getCategorySuggestions",
            (
                (|c: &TaxonomyClient, _: &Path| answer(c.category_suggestions(SITE, "iphone 15")))
                    as Run,
                "suggestions: []",
            ),
        ),
        (
            "getItemAspectsForCategory",
            (
                (|c: &TaxonomyClient, _: &Path| answer(c.item_aspects((SITE, CATEGORY)))) as Run,
                "aspects: []",
            ),
        ),
        (
            "getDefaultCategoryTreeId",
            (
                (|c: &TaxonomyClient, _: &Path| answer(c.default_tree_id(SITE.marketplace_id())))
                    as Run,
                "",
            ),
        ),
        (
            "getExpiredCategories",
            (
                (|c: &TaxonomyClient, _: &Path| answer(c.expired_categories(SITE))) as Run,
                "mappings: []",
            ),
        ),
        (
            "getCompatibilityProperties",
            (
                (|c: &TaxonomyClient, _: &Path| {
                    answer(c.compatibility_properties((SITE, CATEGORY)))
                }) as Run,
                "properties: []",
            ),
        ),
        (
            "getCompatibilityPropertyValues",
            (
                (|c: &TaxonomyClient, _: &Path| {
                    answer(c.compatibility_property_values(
                        (SITE, CATEGORY),
                        "Model",
                        &[("Year", "2018"), ("Make", "Toyota")],
                    ))
                }) as Run,
                "values: []",
            ),
        ),
        (
            "fetchItemAspects",
            (
                (|c: &TaxonomyClient, dir: &Path| {
                    let file = match c.fetch_item_aspects(
                        SITE,
                        &dir.join("aspects.json.gz"),
                        &mut |_, _| {},
                    ) {
                        Ok(file) => file,
                        Err(e) => return e.into(),
                    };
                    let read = file.reader().and_then(|mut reader| {
                        let entries = reader.by_ref().collect::<Result<Vec<_>, _>>()?;
                        Ok(format!(
                            "{:?} {:?} {entries:#?}",
                            reader.tree_id(),
                            reader.tree_version()
                        ))
                    });
                    match read {
                        Ok(text) => Outcome::Answer(text),
                        Err(e) => Outcome::Failed {
                            status: None,
                            errors: Vec::new(),
                            retryable: false,
                            no_default_tree: false,
                            message: e.to_string(),
                        },
                    }
                }) as Run,
                "",
            ),
        ),
    ])
}

// ---- a server that answers what a case sets ----

/// The fake (for its token endpoint and request log) with one route per documented
/// operation that answers the canned response.
struct Canned {
    fake: FakeMarketplace,
    next: Arc<Mutex<Response>>,
    client: TaxonomyClient,
    dir: tempfile::TempDir,
}

impl Canned {
    fn start(doc: &Document) -> Self {
        let fake = FakeMarketplace::new();
        let next = Arc::new(Mutex::new(Response::new(500, Vec::new())));
        for op in doc.operations() {
            let next = Arc::clone(&next);
            fake.route(&op.method, &op.path, move |_, _| {
                next.lock().unwrap().clone()
            });
        }
        // The documented path form, no retries: one request per call.
        let config = support::config(&fake)
            .with_tree_path(TreePath::Path)
            .with_max_retries(0);
        let (client, _) = support::client_with(&fake, config);
        Self {
            fake,
            next,
            client,
            dir: tempfile::tempdir().unwrap(),
        }
    }

    /// Runs `op`'s call against `response`.
    fn call(&self, op: &str, response: Response) -> Outcome {
        *self.next.lock().unwrap() = response;
        let (run, _) = calls()[op];
        run(&self.client, self.dir.path())
    }
}

/// A 200 answer with `body` as the operation sends it: fetchItemAspects sends the gzip file
/// itself, the others JSON.
fn ok_response(op: &str, body: &Value) -> Response {
    let json = serde_json::to_vec(body).unwrap();
    if op == "fetchItemAspects" {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&json).unwrap();
        Response::new(200, gz.finish().unwrap())
            .with_header("Content-Type", "application/octet-stream")
    } else {
        Response::new(200, json).with_header("Content-Type", "application/json")
    }
}

/// What the request determines in an answer, set in a generated one: the tree asked for, and
/// a category tree that is a tree (the root is 0, or the subtree starts at the category
/// asked for; levels follow the nesting; a leaf has no children).
fn as_answer_to_the_request(op: &str, mut body: Value) -> Value {
    if body.get("categoryTreeId").is_some() {
        body["categoryTreeId"] = json!(SITE.tree_id().to_string());
    }
    fn tree(node: &mut Value, id: Option<String>, level: u64) {
        if let Some(id) = id {
            node["category"]["categoryId"] = json!(id);
        }
        node["categoryTreeNodeLevel"] = json!(level);
        let children = node["childCategoryTreeNodes"]
            .as_array_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        node["leafCategoryTreeNode"] = json!(children.is_empty());
        let mut kept = Vec::new();
        for mut child in children {
            tree(&mut child, None, level + 1);
            kept.push(child);
        }
        node["childCategoryTreeNodes"] = Value::Array(kept);
    }
    match op {
        "getCategoryTree" => {
            body["applicableMarketplaceIds"] = json!([SITE.marketplace_id()]);
            tree(&mut body["rootCategoryNode"], Some("0".into()), 0);
        }
        "getCategorySubtree" => {
            let node = &mut body["categorySubtreeNode"];
            tree(node, Some(CATEGORY.to_string()), 1);
            node["parentCategoryTreeNodeHref"] = json!(
                "https://api.ebay.com/commerce/taxonomy/v1/category_tree/0/get_category_subtree?category_id=0"
            );
        }
        _ => {}
    }
    body
}

/// The operations whose 200 answer has a body, with the body's schema.
fn operations_with_answers(doc: &Document) -> Vec<(Operation, String)> {
    doc.operations()
        .into_iter()
        .filter_map(|op| {
            let schema = op.responses.get(&200)?.schema.clone()?;
            Some((op, schema))
        })
        .collect()
}

/// Fields of an answer the client does not keep, on purpose. Each is a pattern of JSON
/// pointers (`*` for an array index).
const NOT_KEPT: &[(&str, &str, &str)] = &[
    (
        "getCategoryTree",
        "/rootCategoryNode/parentCategoryTreeNodeHref",
        "the root has no parent",
    ),
    (
        "getCategoryTree",
        "/rootCategoryNode/childCategoryTreeNodes/*/parentCategoryTreeNodeHref",
        "a node's parent follows from the nesting",
    ),
    (
        "getCategorySubtree",
        "/categorySubtreeNode/childCategoryTreeNodes/*/parentCategoryTreeNodeHref",
        "a node's parent follows from the nesting",
    ),
];

/// The fields each operation's answer cannot do without: an answer that lacks one is refused
/// with an error that names it (a snapshot needs a complete, valid tree; an aspect is of no
/// use without its name, a suggestion without its category, a mapping without its ids).
const NEEDED: &[(&str, &[&str])] = &[
    (
        "getCategoryTree",
        &[
            "categoryTreeId",
            "categoryTreeVersion",
            "applicableMarketplaceIds",
            "rootCategoryNode",
            "categoryId",
            "categoryName",
        ],
    ),
    (
        "getCategorySubtree",
        &[
            "categoryTreeId",
            "categoryTreeVersion",
            "categorySubtreeNode",
            "categoryId",
            "categoryName",
        ],
    ),
    ("getDefaultCategoryTreeId", &["categoryTreeId"]),
    ("getCategorySuggestions", &["category", "categoryId"]),
    (
        "getItemAspectsForCategory",
        &["localizedAspectName", "localizedValue"],
    ),
    (
        "fetchItemAspects",
        &[
            "category",
            "categoryId",
            "localizedAspectName",
            "localizedValue",
        ],
    ),
    ("getExpiredCategories", &["fromCategoryId", "toCategoryId"]),
    ("getCompatibilityProperties", &["name"]),
    ("getCompatibilityPropertyValues", &["value"]),
];

fn names_a_needed_field(op: &str, message: &str) -> bool {
    let needed = NEEDED
        .iter()
        .find(|(o, _)| *o == op)
        .map_or(&[][..], |(_, f)| *f);
    needed.iter().any(|f| {
        message.contains(&format!("{f} is missing"))
            || message.contains(&format!("{f} at "))
            || message.contains(&format!("missing field `{f}`"))
    })
}

// ---- the tests ----

/// The client calls every documented operation, and nothing the document does not list.
#[test]
fn the_client_has_a_call_for_every_documented_operation() {
    let doc = document();
    let documented: BTreeSet<String> = doc.operations().into_iter().map(|o| o.id).collect();
    let called: BTreeSet<String> = calls().keys().map(|k| k.to_string()).collect();
    assert_eq!(
        documented, called,
        "documented operations (left) and the client's calls (right) differ"
    );
    assert_eq!(
        doc.version(),
        "v1.1.1",
        "update tests/contract/README.md with the version"
    );
}

/// For every operation: the method, the path, every required query parameter (and the
/// optional ones the call is given), no undocumented query parameter, the documented header
/// parameters, a bearer token, and a scope the operation lists as the default.
#[test]
fn every_request_is_the_documented_one() {
    let doc = document();
    let canned = Canned::start(&doc);
    let mut problems = Vec::new();
    for (op, schema) in operations_with_answers(&doc) {
        canned.fake.clear_requests();
        let body = as_answer_to_the_request(&op.id, doc.all_present(&schema));
        let outcome = canned.call(&op.id, ok_response(&op.id, &body));
        assert!(
            matches!(outcome, Outcome::Answer(_)),
            "{}: {outcome:?}",
            op.id
        );
        let requests: Vec<Request> = canned
            .fake
            .requests()
            .into_iter()
            .filter(|r| r.path.starts_with(&doc.base_path()))
            .collect();
        let [r] = requests.as_slice() else {
            problems.push(format!(
                "{}: {} requests, expected one",
                op.id,
                requests.len()
            ));
            continue;
        };
        let mut problem = |p: String| problems.push(format!("{}: {p}", op.id));
        if r.method != op.method {
            problem(format!("method {} (documented: {})", r.method, op.method));
        }
        if !op.matches(&r.path) {
            problem(format!("path {} does not match {}", r.path, op.path));
        }
        let tree = SITE.tree_id().to_string();
        if op.path.contains("{category_tree_id}")
            && r.path != op.path_with(&[("category_tree_id", &tree)])
        {
            problem(format!("path {} does not name tree {tree}", r.path));
        }
        let query: Vec<(String, String)> =
            url::form_urlencoded::parse(r.query.as_deref().unwrap_or_default().as_bytes())
                .into_owned()
                .collect();
        for p in op.parameters_in("query") {
            let sent = query.iter().find(|(n, _)| *n == p.name);
            match sent {
                Some((_, v)) if v.is_empty() => {
                    problem(format!("query parameter {} is empty", p.name))
                }
                Some(_) => {}
                // Each call is given every optional parameter (the filter), so all are sent.
                None => problem(format!(
                    "{} query parameter {} is not sent",
                    if p.required { "required" } else { "optional" },
                    p.name
                )),
            }
        }
        for (name, _) in &query {
            if !op.parameters_in("query").any(|p| p.name == *name) {
                problem(format!("query parameter {name} is not documented"));
            }
        }
        for p in op.parameters_in("header") {
            if r.header(&p.name).is_none() {
                problem(format!("header {} is not sent", p.name));
            }
        }
        // The security requirement (OAuth 2.0, bearer) and the headers every Taxonomy call
        // carries: the marketplace and the language.
        let token = r
            .header("Authorization")
            .and_then(|a| a.strip_prefix("Bearer "));
        if token.is_none_or(|t| canned.fake.issued_token(t).is_none()) {
            problem("no bearer token the token endpoint issued".into());
        }
        if r.header(MARKETPLACE_HEADER) != Some(SITE.marketplace_id()) {
            problem(format!(
                "{MARKETPLACE_HEADER} is {:?}",
                r.header(MARKETPLACE_HEADER)
            ));
        }
        if r.header("Accept-Language") != Some(SITE.default_language()) {
            problem(format!(
                "Accept-Language is {:?}",
                r.header("Accept-Language")
            ));
        }
        if !op.scopes.iter().any(|s| s == Endpoints::PRODUCTION_SCOPE) {
            problem(format!(
                "the default application scope {} is not among {:?}",
                Endpoints::PRODUCTION_SCOPE,
                op.scopes
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every field of every documented answer is kept: the answer with every field present
/// decodes, and changing any one field changes what the client returns (or makes it refuse
/// the answer, for a field it checks), except the fields of [`NOT_KEPT`].
#[test]
fn every_documented_field_of_every_answer_is_kept() {
    let doc = document();
    let canned = Canned::start(&doc);
    let mut problems = Vec::new();
    let mut not_kept_seen = BTreeSet::new();
    for (op, schema) in operations_with_answers(&doc) {
        let body = as_answer_to_the_request(&op.id, doc.all_present(&schema));
        let base = canned.call(&op.id, ok_response(&op.id, &body));
        if !matches!(base, Outcome::Answer(_)) {
            problems.push(format!(
                "{}: every field present is refused: {base:?}",
                op.id
            ));
            continue;
        }
        for pointer in scalar_pointers(&body) {
            let changed = as_answer_to_the_request(&op.id, changed_at(&body, &pointer));
            if changed == body {
                continue; // set by the request (the tree asked for, a level, a leaf flag)
            }
            let pattern = pattern_of(&pointer);
            let allowed = NOT_KEPT
                .iter()
                .any(|(o, p, _)| *o == op.id && *p == pattern);
            let kept = canned.call(&op.id, ok_response(&op.id, &changed)) != base;
            match (kept, allowed) {
                (true, false) => {}
                (false, false) => problems.push(format!("{}: {pointer} is dropped", op.id)),
                (false, true) => {
                    not_kept_seen.insert((op.id.clone(), pattern));
                }
                (true, true) => problems.push(format!(
                    "{}: {pattern} is listed in NOT_KEPT but is kept: remove it from the list",
                    op.id
                )),
            }
        }
    }
    for (op, pattern, _) in NOT_KEPT {
        if !not_kept_seen.contains(&(op.to_string(), pattern.to_string())) {
            problems.push(format!(
                "{op}: NOT_KEPT lists {pattern}, which the document does not have"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Every optional field absent, at the top (`{}`) and below it (arrays with one element
/// whose fields are all absent): the answer is accepted, or refused with an error that names
/// a field the operation cannot do without ([`NEEDED`]).
#[test]
fn answers_without_optional_fields_decode_or_name_what_is_missing() {
    let doc = document();
    let canned = Canned::start(&doc);
    let mut problems = Vec::new();
    for (op, schema) in operations_with_answers(&doc) {
        for (form, body) in [
            ("all absent", doc.all_absent(&schema)),
            ("skeleton", doc.skeleton(&schema)),
        ] {
            match canned.call(&op.id, ok_response(&op.id, &body)) {
                Outcome::Answer(_) => {}
                Outcome::Failed { message, .. } if names_a_needed_field(&op.id, &message) => {}
                failed => problems.push(format!("{} ({form}, {body}): {failed:?}", op.id)),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A `204 No Content` to getCategoryTree (eBay documents none; a proxy or a service without
/// the tree may send one) says that the service gave no tree, not that the JSON is broken.
#[test]
fn a_tree_answered_with_no_content_says_the_service_has_no_tree() {
    let canned = Canned::start(&document());
    match canned.call("getCategoryTree", Response::new(204, Vec::new())) {
        Outcome::Failed {
            status: Some(204),
            message,
            ..
        } => assert!(
            message.contains("answered with no tree (`204 No Content` and an empty body)")
                && message.contains("holds no tree 0"),
            "{message}"
        ),
        other => panic!("{other:?}"),
    }
}

/// Every documented status code of every operation, handled as documented: 204 is an empty
/// answer (getDefaultCategoryTreeId: a typed "no default category tree" error), each error id
/// comes back typed with its status, domain and category (5xx retryable, 4xx not), a 404
/// without a body is an HTTP error, and the error object keeps every documented field.
#[test]
fn every_documented_status_code_is_handled() {
    let doc = document();
    let canned = Canned::start(&doc);
    let error_schema = doc.all_present("Error");
    let mut problems = Vec::new();
    for op in doc.operations() {
        let (_, empty) = calls()[op.id.as_str()];
        for (&status, documented) in &op.responses {
            let mut problem = |p: String| problems.push(format!("{} {status}: {p}", op.id));
            match status {
                200 => {} // every_documented_field_of_every_answer_is_kept
                204 => match canned.call(&op.id, Response::new(204, Vec::new())) {
                    Outcome::Answer(a) if !empty.is_empty() && a.contains(empty) => {}
                    Outcome::Failed {
                        status: Some(204),
                        no_default_tree: true,
                        message,
                        ..
                    } if op.id == "getDefaultCategoryTreeId"
                        && message.contains("no default category tree for EBAY_US") => {}
                    other => problem(format!("not an empty answer: {other:?}")),
                },
                400.. => {
                    let mut bodies: Vec<(Option<&openapi::DocumentedError>, Value)> = documented
                        .errors
                        .iter()
                        .map(|e| {
                            let body = json!({"errors": [{"errorId": e.id, "domain": e.domain,
                                "category": e.category, "message": e.description}]});
                            (Some(e), body)
                        })
                        .collect();
                    if documented.errors.is_empty() {
                        bodies.push((None, Value::Null));
                    }
                    for (error, body) in bodies {
                        let bytes = if body.is_null() {
                            Vec::new()
                        } else {
                            serde_json::to_vec(&body).unwrap()
                        };
                        match (canned.call(&op.id, Response::new(status, bytes)), error) {
                            (
                                Outcome::Failed {
                                    status: Some(s),
                                    errors,
                                    retryable,
                                    ..
                                },
                                Some(e),
                            ) if s == status
                                && retryable == (status >= 500)
                                && errors.first().is_some_and(|got| {
                                    got.error_id == e.id
                                        && got.domain.as_deref() == Some(e.domain.as_str())
                                        && got.category.as_deref() == Some(e.category.as_str())
                                        && got.message == e.description
                                }) => {}
                            (
                                Outcome::Failed {
                                    status: Some(s),
                                    errors,
                                    ..
                                },
                                None,
                            ) if s == status && errors.is_empty() => {}
                            (other, _) => problem(format!(
                                "errorId {:?} not typed as documented: {other:?}",
                                error.map(|e| e.id)
                            )),
                        }
                    }
                    // Every field of the documented error object is kept.
                    let full = json!({"errors": [error_schema]});
                    let base = canned.call(
                        &op.id,
                        Response::new(status, serde_json::to_vec(&full).unwrap()),
                    );
                    for pointer in scalar_pointers(&full) {
                        let changed = changed_at(&full, &pointer);
                        let got = canned.call(
                            &op.id,
                            Response::new(status, serde_json::to_vec(&changed).unwrap()),
                        );
                        if got == base {
                            problem(format!("the error's {pointer} is dropped"));
                        }
                    }
                }
                other => problem(format!(
                    "no expectation for status {other}: decide how the client handles it"
                )),
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A real getItemAspectsForCategory answer of the production service (category 27386 on
/// EBAY_US, `tests/fixtures/aspects/`) decodes with every field kept: the decoded aspects,
/// written back in the wire shape, are the answer.
#[test]
fn a_real_item_aspects_answer_decodes_with_every_field_kept() {
    let path: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/aspects/ebay-us-27386-graphics-cards.json");
    let bytes = std::fs::read(&path).unwrap();
    let real: Value = serde_json::from_slice(&bytes).unwrap();
    let doc = document();
    assert!(
        doc.conformance(&real, "AspectMetadata").is_empty(),
        "{:?}",
        doc.conformance(&real, "AspectMetadata")
    );
    let canned = Canned::start(&doc);
    *canned.next.lock().unwrap() =
        Response::new(200, bytes).with_header("Content-Type", "application/json");
    let aspects = canned.client.item_aspects((SITE, 27386)).unwrap();
    assert_eq!(aspects.aspects.len(), 20);
    let rewritten = json!({"aspects": aspects.aspects.iter().map(wire_aspect).collect::<Vec<_>>()});
    assert_eq!(rewritten, real);
}

/// An aspect in eBay's wire shape, every field the answer had (absent stays absent).
fn wire_aspect(a: &marketplace_client::model::Aspect) -> Value {
    let mut constraint = serde_json::Map::new();
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            constraint.insert(k.into(), v);
        }
    };
    put(
        "aspectDataType",
        a.data_type.as_ref().map(|v| json!(v.as_str())),
    );
    put(
        "aspectAdvancedDataType",
        a.advanced_data_type.as_ref().map(|v| json!(v.as_str())),
    );
    put(
        "itemToAspectCardinality",
        a.cardinality.as_ref().map(|v| json!(v.as_str())),
    );
    put("aspectMode", a.mode.as_ref().map(|v| json!(v.as_str())));
    put("aspectRequired", Some(json!(a.required)));
    put("aspectUsage", a.usage.as_ref().map(|v| json!(v.as_str())));
    put(
        "aspectEnabledForVariations",
        Some(json!(a.enabled_for_variations)),
    );
    put(
        "aspectApplicableTo",
        (!a.applicable_to.is_empty()).then(|| {
            json!(
                a.applicable_to
                    .iter()
                    .map(|v| v.as_str())
                    .collect::<Vec<_>>()
            )
        }),
    );
    put("aspectMaxLength", a.max_length.map(|v| json!(v)));
    put("aspectFormat", a.format.as_ref().map(|v| json!(v)));
    put(
        "expectedRequiredByDate",
        a.expected_required_by_date.as_ref().map(|v| json!(v)),
    );
    let mut out = json!({"localizedAspectName": a.name, "aspectConstraint": constraint});
    if !a.values.is_empty() {
        out["aspectValues"] = a
            .values
            .iter()
            .map(|v| {
                let mut value = json!({"localizedValue": v.value});
                if !v.constraints.is_empty() {
                    value["valueConstraints"] = v
                        .constraints
                        .iter()
                        .map(|c| {
                            json!({"applicableForLocalizedAspectName": c.aspect_name,
                            "applicableForLocalizedAspectValues": c.aspect_values})
                        })
                        .collect();
                }
                value
            })
            .collect();
    }
    if let Some(r) = &a.relevance {
        out["relevanceIndicator"] = json!({"searchCount": r.search_count});
    }
    out
}

// ---- the fake against the document ----

/// The fake's taxonomy routes are the documented paths, every one of them.
#[test]
fn the_fake_serves_only_documented_paths() {
    let doc = document();
    let fake = FakeMarketplace::new();
    let base = doc.base_path();
    let ops = doc.operations();
    let mut problems = Vec::new();
    for (method, pattern) in fake.route_patterns() {
        if !pattern.starts_with(&base) {
            continue; // the OAuth endpoints, not this API
        }
        // `{id}` in the fake is `{category_tree_id}` in the document.
        let documented = ops.iter().any(|op| {
            op.method == method && pattern.replace("{id}", "{category_tree_id}") == op.path
        });
        if !documented {
            problems.push(format!("{method} {pattern} is not a documented operation"));
        }
    }
    for op in &ops {
        let served = fake
            .route_patterns()
            .iter()
            .any(|(m, p)| *m == op.method && p.replace("{id}", "{category_tree_id}") == op.path);
        if !served {
            problems.push(format!(
                "{} {} ({}) is not served",
                op.method, op.path, op.id
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Requests, good and bad, to every operation of the fake: each answer has a status the
/// document lists for the operation (or the platform's 401 for a missing token); an error
/// answer carries only error ids listed for that status, with their domain and category; a
/// 200 body has the documented shape; 204 only where it is listed. Each documented error id
/// the fake can be made to answer is seen.
#[test]
fn the_fake_answers_as_documented() {
    let doc = document();
    let fake = FakeMarketplace::new();
    let token = support::tokens(&fake).access_token().unwrap();
    let http = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    let base = doc.base_path();
    let us = format!("{base}/category_tree/0");
    // eBay Motors' Brakes & Brake Parts (tree 100; eBay's own getCompatibilityProperties
    // sample, compatibility-enabled), a leaf, a branch.
    let motors = format!("{base}/category_tree/100");
    let (brakes, leaf, branch) = (33559, 9355, 15032);
    let requests: Vec<(String, Option<u32>)> = vec![
        // getCategoryTree
        (us.clone(), None),
        (format!("{base}/category_tree/9"), Some(62004)),
        (format!("{base}/category_tree/101"), Some(62004)), // a site without a tree
        // getCategorySubtree
        (
            format!("{us}/get_category_subtree?category_id={branch}"),
            None,
        ),
        (
            format!("{us}/get_category_subtree?category_id=999999999"),
            Some(62005),
        ),
        (format!("{us}/get_category_subtree"), Some(62006)),
        (
            format!("{us}/get_category_subtree?category_id=0"),
            Some(62008),
        ),
        // getCategorySuggestions
        (format!("{us}/get_category_suggestions?q=iphone"), None),
        (format!("{us}/get_category_suggestions"), Some(62007)),
        // getItemAspectsForCategory
        (
            format!("{us}/get_item_aspects_for_category?category_id={leaf}"),
            None,
        ),
        (
            format!("{us}/get_item_aspects_for_category?category_id=999999999"),
            Some(62005),
        ),
        (
            format!("{us}/get_item_aspects_for_category?category_id=x"),
            Some(62006),
        ),
        (
            format!("{us}/get_item_aspects_for_category?category_id=0"),
            Some(62008),
        ),
        (
            format!("{us}/get_item_aspects_for_category?category_id={branch}"),
            Some(62009),
        ),
        // getDefaultCategoryTreeId
        (
            format!("{base}/get_default_category_tree_id?marketplace_id=EBAY_US"),
            None,
        ),
        (format!("{base}/get_default_category_tree_id"), Some(62002)),
        (
            format!("{base}/get_default_category_tree_id?marketplace_id=EBAY_XX"),
            Some(62003),
        ),
        // A marketplace of the table without a tree: no default tree (204), its tree id not
        // found.
        (
            format!("{base}/get_default_category_tree_id?marketplace_id=EBAY_IT"),
            None,
        ),
        (
            format!("{base}/category_tree/101/get_category_suggestions?q=phone"),
            Some(62004),
        ),
        // getExpiredCategories (the default fake's made-up set; none for EBAY_DE: 204)
        (format!("{us}/get_expired_categories"), None),
        (
            format!("{base}/category_tree/77/get_expired_categories"),
            None,
        ),
        // getCompatibilityProperties
        (
            format!("{motors}/get_compatibility_properties?category_id={brakes}"),
            None,
        ),
        (
            format!("{us}/get_compatibility_properties?category_id={leaf}"),
            Some(62101),
        ),
        // getCompatibilityPropertyValues
        (
            format!(
                "{motors}/get_compatibility_property_values?category_id={brakes}&compatibility_property=Make"
            ),
            None,
        ),
        (
            format!(
                "{motors}/get_compatibility_property_values?category_id={brakes}&compatibility_property=Make&filter=Year"
            ),
            Some(62100),
        ),
        (
            format!(
                "{motors}/get_compatibility_property_values?category_id={brakes}&compatibility_property=Colour"
            ),
            Some(62102),
        ),
        (
            format!("{motors}/get_compatibility_property_values?category_id={brakes}"),
            Some(62104),
        ),
        // fetchItemAspects
        (format!("{us}/fetch_item_aspects"), None),
    ];
    let ops = doc.operations();
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for (target, expected) in &requests {
        let path = target.split('?').next().unwrap();
        let Some(op) = ops.iter().find(|op| op.matches(path)) else {
            problems.push(format!("{target}: no documented operation"));
            continue;
        };
        let r = http
            .get(format!("{}{target}", fake.base_url()))
            .bearer_auth(token.secret())
            .header(MARKETPLACE_HEADER, "EBAY_US")
            .header("Accept-Language", "en-US")
            .send()
            .unwrap();
        let status = r.status().as_u16();
        let bytes = r.bytes().unwrap().to_vec();
        let mut problem = |p: String| problems.push(format!("{} {target} → {status}: {p}", op.id));
        let Some(documented) = op.responses.get(&status) else {
            problem("status not documented for the operation".into());
            continue;
        };
        if status == 204 && !bytes.is_empty() {
            problem("a 204 with a body".into());
        }
        if status >= 400 {
            let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let errors = body["errors"].as_array().cloned().unwrap_or_default();
            if errors.is_empty() && !documented.errors.is_empty() {
                problem("no error body".into());
            }
            for e in &errors {
                let id = e["errorId"].as_u64().unwrap_or(0) as u32;
                seen.insert(id);
                match documented.errors.iter().find(|d| d.id == id) {
                    None => problem(format!("errorId {id} is not documented for HTTP {status}")),
                    Some(d)
                        if e["domain"] != d.domain.as_str()
                            || e["category"] != d.category.as_str() =>
                    {
                        problem(format!(
                            "errorId {id}: {e} (documented {} {})",
                            d.domain, d.category
                        ))
                    }
                    Some(_) => {}
                }
            }
            if let Some(schema) = doc_error_conformance(&doc, &body) {
                problem(schema);
            }
        }
        if status == 200 {
            let json = if op.id == "fetchItemAspects" {
                let mut out = Vec::new();
                std::io::Read::read_to_end(
                    &mut flate2::read::MultiGzDecoder::new(&bytes[..]),
                    &mut out,
                )
                .unwrap();
                out
            } else {
                bytes
            };
            let body: Value = serde_json::from_slice(&json).unwrap();
            let schema = documented.schema.as_deref().expect("a 200 with a schema");
            for p in doc.conformance(&body, schema) {
                problem(p);
            }
        }
        match expected {
            Some(id) if !seen.contains(id) => problem(format!("expected errorId {id}")),
            None if status >= 300 => problem("expected a success".into()),
            _ => {}
        }
    }
    // The platform's answer to a request without a token (not this document's, eBay's OAuth).
    let r = http.get(format!("{}{us}", fake.base_url())).send().unwrap();
    assert_eq!(r.status().as_u16(), 401);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The error body's shape (`{"errors": [Error]}`), or what departs from it.
fn doc_error_conformance(doc: &Document, body: &Value) -> Option<String> {
    let errors = body["errors"].as_array()?;
    let problems: Vec<String> = errors
        .iter()
        .flat_map(|e| doc.conformance(e, "Error"))
        .collect();
    (!problems.is_empty()).then(|| format!("error body: {}", problems.join("; ")))
}

/// getItemAspectsForCategory's documented errors, from the fake through the client: each
/// typed with its id.
#[test]
fn item_aspects_errors_come_back_typed() {
    let fake = FakeMarketplace::new();
    let (client, _) = support::client(&fake);
    for (category, id) in [(999_999_999, 62005), (0, 62008), (15032, 62009)] {
        let err = client.item_aspects((SITE, category)).unwrap_err();
        assert_eq!(err.status(), Some(400), "{err}");
        assert_eq!(err.error_id(), Some(id), "{err}");
        assert_eq!(
            err.service_errors()[0].domain.as_deref(),
            Some("API_TAXONOMY")
        );
        assert!(!err.is_retryable());
    }
}
