//! The taxonomy operations beyond the tree, against the fake marketplace over loopback:
//! getExpiredCategories, fetchItemAspects (streamed to disk, read entry by entry),
//! getCompatibilityProperties, getCompatibilityPropertyValues, every documented field of
//! getItemAspectsForCategory, and getCategorySubtree held to the tree's rules. Each with the
//! exact request, the typed answer and the error paths.

use crate::taxonomy_support as support;

use std::io::Write as _;
use std::path::Path;

use fake_marketplace::taxonomy::{
    ERROR_BAD_FILTER, ERROR_BAD_PROPERTY, ERROR_CATEGORY_NOT_IN_TREE,
    ERROR_NOT_COMPATIBILITY_ENABLED, ERROR_TREE_NOT_FOUND, aspects_file_path,
    compatibility_properties_path, compatibility_values_path, expired_path,
};
use fake_marketplace::{FakeConfig, FakeMarketplace, Fault, Request, Response};
use marketplace_client::model::{
    AspectAdvancedDataType, AspectApplicableTo, AspectCardinality, AspectDataType, AspectMode,
    AspectUsage, AspectsFileError, ExpiredCategory, ItemAspectsReader,
};
use marketplace_client::taxonomy::ApiError;
use marketplaces::MARKETPLACE_HEADER;
use marketplaces::Marketplace;
use support::*;

/// The request carries a bearer token the fake issued, the marketplace header, the language
/// and `Accept-Encoding: gzip`, and is a GET.
fn assert_headers(fake: &FakeMarketplace, r: &Request, site: Marketplace) {
    let token = r
        .header("Authorization")
        .and_then(|b| b.strip_prefix("Bearer "))
        .expect("Bearer token");
    assert!(
        fake.issued_token(token).is_some(),
        "a token the fake issued"
    );
    assert_eq!(
        r.headers_named(MARKETPLACE_HEADER),
        vec![site.marketplace_id()]
    );
    assert_eq!(
        r.headers_named("Accept-Language"),
        vec![site.default_language()]
    );
    assert_eq!(r.headers_named("Accept-Encoding"), vec!["gzip"]);
    assert_eq!(r.method, "GET");
}

fn only_request(fake: &FakeMarketplace, path: &str) -> Request {
    let mut requests = fake.requests_to(path);
    assert_eq!(requests.len(), 1, "requests to {path}");
    requests.remove(0)
}

fn not_found_body() -> String {
    r#"{"errors":[{"errorId":62004,"domain":"API_TAXONOMY","category":"REQUEST","message":"The specified category tree ID was not found.","parameters":[{"name":"category_tree_id","value":"0"}]}]}"#.into()
}

/// The files in `dir`.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

// ---- getExpiredCategories ----

#[test]
fn expired_categories_exact_request_and_typed_answer() {
    let fake = FakeMarketplace::start(FakeConfig {
        expired_categories: vec![(Marketplace::Us, vec![(853, 852), (1000, 852)])],
        ..FakeConfig::default()
    })
    .unwrap();
    let (client, _) = client(&fake);
    let got = client.expired_categories(Marketplace::Us).unwrap();
    let r = only_request(&fake, &expired_path(0));
    assert_eq!(r.query, None);
    assert_headers(&fake, &r, Marketplace::Us);
    assert_eq!(got.tree_id, 0);
    assert_eq!(
        got.mappings,
        vec![
            ExpiredCategory { from: 853, to: 852 },
            ExpiredCategory {
                from: 1000,
                to: 852
            }
        ]
    );
    assert_eq!(got.replacement(1000), Some(852));
    assert_eq!(got.replacement(852), None);

    // A tree with none: 204 No Content, an empty list.
    let de = client.expired_categories(Marketplace::De).unwrap();
    assert_eq!(de.tree_id, 77);
    assert!(de.mappings.is_empty());
    // The setter changes the mapping of a running fake.
    fake.set_expired_categories(Marketplace::De, vec![(5, 6)]);
    let de = client.expired_categories(Marketplace::De).unwrap();
    assert_eq!(de.mappings, vec![ExpiredCategory { from: 5, to: 6 }]);
}

#[test]
fn expired_categories_error_paths() {
    let fake = fake();
    let (client, _) = client(&fake);
    fake.fail_next(
        &expired_path(3),
        Fault::Status {
            status: 400,
            body: not_found_body(),
            headers: vec![],
        },
    );
    let err = client.expired_categories(Marketplace::Gb).unwrap_err();
    assert_eq!(err.status(), Some(400));
    assert_eq!(err.error_id(), Some(ERROR_TREE_NOT_FOUND));
    assert!(
        err.to_string().contains("category tree ID was not found"),
        "{err}"
    );

    // Ids are decimal strings; a number is refused with the field's place.
    fake.route(
        "GET",
        "/commerce/taxonomy/v1/category_tree/{id}/get_expired_categories",
        |_, _| {
            Response::json(
                200,
                &serde_json::json!({"expiredCategories": [
                    {"fromCategoryId": "1", "toCategoryId": "2"},
                    {"fromCategoryId": 3, "toCategoryId": "4"}]}),
            )
        },
    );
    let err = client.expired_categories(Marketplace::Gb).unwrap_err();
    let ApiError::UnexpectedBody { reason, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(
        reason.contains("expiredCategories[1].fromCategoryId 3 is a number"),
        "{reason}"
    );
}

// ---- getCompatibilityProperties / getCompatibilityPropertyValues ----

/// eBay Motors' Brakes & Brake Parts (tree 100), the category of eBay's own
/// getCompatibilityProperties sample: eBay enables parts compatibility for it.
const BRAKES: (Marketplace, u32) = (Marketplace::MotorsUs, 33559);
/// Graphics/Video Cards (EBAY_US): no vehicle part, so eBay answers 62101.
const GRAPHICS_CARDS: (Marketplace, u32) = (Marketplace::Us, 27386);

#[test]
fn compatibility_properties_exact_request_and_typed_answer() {
    let fake = fake();
    let (client, _) = client(&fake);
    let got = client.compatibility_properties(BRAKES).unwrap();
    let r = only_request(&fake, &compatibility_properties_path(100));
    assert_eq!(r.query.as_deref(), Some("category_id=33559"));
    assert_headers(&fake, &r, Marketplace::MotorsUs);
    assert_eq!(got.category_id, BRAKES.1);
    let names: Vec<&str> = got.properties.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["Make", "Model", "Year", "Trim", "Engine"]);
    assert_eq!(got.properties[0].localized_name.as_deref(), Some("Make"));

    // Categories eBay does not enable (no vehicle part: graphics cards, bicycle brake pads; a
    // vehicle; tools), and one that is not in the tree.
    for category in [
        GRAPHICS_CARDS,
        (Marketplace::Us, 177806),
        (Marketplace::MotorsUs, 6001),
        (Marketplace::MotorsUs, 34998),
    ] {
        let err = client.compatibility_properties(category).unwrap_err();
        assert_eq!(err.status(), Some(400), "{category:?}");
        assert_eq!(
            err.error_id(),
            Some(ERROR_NOT_COMPATIBILITY_ENABLED),
            "{category:?}"
        );
    }
    let err = client
        .compatibility_properties((Marketplace::MotorsUs, 4_000_000))
        .unwrap_err();
    assert_eq!(err.error_id(), Some(ERROR_CATEGORY_NOT_IN_TREE));
}

#[test]
fn compatibility_property_values_exact_request_filter_and_typed_answer() {
    let fake = fake();
    let (client, _) = client(&fake);
    let got = client
        .compatibility_property_values(BRAKES, "Model", &[("Year", "2018"), ("Make", "Toyota")])
        .unwrap();
    let r = only_request(&fake, &compatibility_values_path(100));
    assert_eq!(
        r.query.as_deref(),
        Some("category_id=33559&compatibility_property=Model&filter=Year%3A2018%2CMake%3AToyota")
    );
    assert_headers(&fake, &r, Marketplace::MotorsUs);
    assert_eq!(got.property, "Model");
    assert_eq!(got.category_id, BRAKES.1);
    assert_eq!(got.values, ["Camry", "Corolla"]);

    // A comma inside a value is escaped (`\,`), so the value arrives whole.
    let audi = client
        .compatibility_property_values(BRAKES, "Make", &[("Trim", "AWD B9 8W5,8WD")])
        .unwrap();
    assert_eq!(audi.values, ["Audi"]);
    let r = fake
        .requests_to(&compatibility_values_path(100))
        .pop()
        .unwrap();
    assert_eq!(
        r.query_param("filter").as_deref(),
        Some("Trim:AWD B9 8W5\\,8WD")
    );

    // No filter: every value. No match: 204, an empty list.
    let makes = client
        .compatibility_property_values(BRAKES, "Make", &[])
        .unwrap();
    assert_eq!(makes.values, ["Audi", "Ford", "Honda", "Toyota"]);
    assert!(
        !fake
            .requests_to(&compatibility_values_path(100))
            .last()
            .unwrap()
            .query
            .as_deref()
            .unwrap()
            .contains("filter")
    );
    let none = client
        .compatibility_property_values(BRAKES, "Model", &[("Year", "1901")])
        .unwrap();
    assert!(none.values.is_empty());

    // Error paths: the service's error bodies, typed.
    let err = client
        .compatibility_property_values(BRAKES, "Colour", &[])
        .unwrap_err();
    assert_eq!(err.error_id(), Some(ERROR_BAD_PROPERTY));
    let err = client
        .compatibility_property_values(BRAKES, "Model", &[("Year", "2018"), ("", "x")])
        .unwrap_err();
    assert_eq!(err.error_id(), Some(ERROR_BAD_FILTER));
    let err = client
        .compatibility_property_values(GRAPHICS_CARDS, "Make", &[])
        .unwrap_err();
    assert_eq!(err.error_id(), Some(ERROR_NOT_COMPATIBILITY_ENABLED));
}

// ---- getItemAspectsForCategory: every documented field ----

#[test]
fn item_aspects_keep_every_documented_field_and_unknown_enum_values() {
    let fake = fake();
    fake.route(
        "GET",
        "/commerce/taxonomy/v1/category_tree/{id}/get_item_aspects_for_category",
        |_, _| {
            Response::json(
                200,
                &serde_json::json!({"aspects": [
                    {
                        "localizedAspectName": "Voltage",
                        "aspectConstraint": {
                            "aspectApplicableTo": ["PRODUCT", "ITEM", "BUNDLE"],
                            "aspectDataType": "NUMBER",
                            "aspectAdvancedDataType": "NUMERIC_RANGE",
                            "aspectEnabledForVariations": true,
                            "aspectFormat": "double",
                            "aspectMaxLength": 30,
                            "aspectMode": "FREE_TEXT",
                            "aspectRequired": true,
                            "aspectUsage": "RECOMMENDED",
                            "expectedRequiredByDate": "2026-09-30T00:00:00.000Z",
                            "itemToAspectCardinality": "MULTI"
                        },
                        "aspectValues": [
                            {"localizedValue": "12 V"},
                            {"localizedValue": "24 V", "valueConstraints": [
                                {"applicableForLocalizedAspectName": "Type",
                                 "applicableForLocalizedAspectValues": ["Truck", "Bus"]}]}
                        ],
                        "relevanceIndicator": {"searchCount": 1234}
                    },
                    {
                        "localizedAspectName": "Size",
                        "aspectConstraint": {"aspectDataType": "RANGE",
                            "aspectAdvancedDataType": "DATE_RANGE", "aspectMode": "GUIDED",
                            "itemToAspectCardinality": "FEW", "aspectUsage": "SOMETIMES"}
                    },
                    {"localizedAspectName": "Bare"}
                ]}),
            )
        },
    );
    let (client, _) = client(&fake);
    let got = client.item_aspects((Marketplace::Us, 9355)).unwrap();
    let v = &got.aspects[0];
    assert_eq!(v.name, "Voltage");
    assert_eq!(
        v.applicable_to,
        [
            AspectApplicableTo::Product,
            AspectApplicableTo::Item,
            AspectApplicableTo::Unknown("BUNDLE".into())
        ]
    );
    assert_eq!(v.data_type, Some(AspectDataType::Number));
    assert_eq!(
        v.advanced_data_type,
        Some(AspectAdvancedDataType::NumericRange)
    );
    assert!(v.enabled_for_variations);
    assert_eq!(v.format.as_deref(), Some("double"));
    assert_eq!(v.max_length, Some(30));
    assert_eq!(v.mode, Some(AspectMode::FreeText));
    assert!(v.required);
    assert_eq!(v.usage, Some(AspectUsage::Recommended));
    assert_eq!(
        v.expected_required_by_date.as_deref(),
        Some("2026-09-30T00:00:00.000Z")
    );
    assert_eq!(v.cardinality, Some(AspectCardinality::Multi));
    assert_eq!(v.values[0].value, "12 V");
    assert!(v.values[0].constraints.is_empty());
    let constraint = &v.values[1].constraints[0];
    assert_eq!(constraint.aspect_name.as_deref(), Some("Type"));
    assert_eq!(constraint.aspect_values, ["Truck", "Bus"]);
    assert_eq!(v.relevance.unwrap().search_count, Some(1234));

    // Values the client does not know are kept as sent, never replaced by a default.
    let size = &got.aspects[1];
    assert_eq!(
        size.data_type,
        Some(AspectDataType::Unknown("RANGE".into()))
    );
    assert_eq!(
        size.advanced_data_type,
        Some(AspectAdvancedDataType::Unknown("DATE_RANGE".into()))
    );
    assert_eq!(size.mode, Some(AspectMode::Unknown("GUIDED".into())));
    assert_eq!(
        size.cardinality,
        Some(AspectCardinality::Unknown("FEW".into()))
    );
    assert_eq!(size.usage, Some(AspectUsage::Unknown("SOMETIMES".into())));
    assert_eq!(size.data_type.as_ref().unwrap().as_str(), "RANGE");
    // Fields the answer leaves out stay absent.
    let bare = &got.aspects[2];
    assert_eq!(
        (
            bare.data_type.clone(),
            bare.mode.clone(),
            bare.usage.clone()
        ),
        (None, None, None)
    );
    assert!(bare.values.is_empty() && bare.applicable_to.is_empty() && bare.relevance.is_none());
}

// ---- fetchItemAspects ----

#[test]
fn fetch_item_aspects_streams_to_disk_and_reads_entry_by_entry() {
    let fake = fake();
    let (client, _) = client(&fake);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("EBAY_US.aspects.json.gz");
    let mut progress: Vec<(u64, Option<u64>)> = Vec::new();
    let file = client
        .fetch_item_aspects(Marketplace::Us, &dest, &mut |received, total| {
            progress.push((received, total))
        })
        .unwrap();

    let r = only_request(&fake, &aspects_file_path(0));
    assert_eq!(r.query, None);
    assert_headers(&fake, &r, Marketplace::Us);

    // The file on disk is the gzip file the service sent, byte for byte; nothing else is left.
    let served = fake.item_aspects_file(Marketplace::Us);
    assert_eq!(std::fs::read(&dest).unwrap(), served);
    assert_eq!(files_in(dir.path()), ["EBAY_US.aspects.json.gz"]);
    assert_eq!(file.path, dest);
    assert_eq!(file.tree_id, 0);
    assert_eq!(file.compressed_bytes, served.len() as u64);
    assert!(
        file.json_bytes > 4_000_000,
        "several MB of JSON: {}",
        file.json_bytes
    );

    // Progress: from 0 to the whole body, never backwards, with the announced size.
    assert!(progress.len() > 2, "{progress:?}");
    assert_eq!(progress[0].0, 0);
    assert!(progress.windows(2).all(|w| w[0].0 <= w[1].0));
    let last = progress.last().unwrap();
    assert_eq!(last.0, served.len() as u64);
    assert_eq!(last.1, Some(served.len() as u64));

    // The reader yields the entries one at a time, in the file's order: one per leaf.
    let tree = fake.tree(Marketplace::Us);
    let leaves: Vec<u32> = tree.listable().filter(|c| c.leaf).map(|c| c.id).collect();
    let mut reader = file.reader().unwrap();
    let first = reader.next().unwrap().unwrap();
    assert_eq!(reader.entries_read(), 1);
    assert_eq!(reader.tree_id(), Some(0));
    assert_eq!(reader.tree_version(), Some(tree.meta.version.as_str()));
    assert_eq!(first.category.id, leaves[0]);
    assert_eq!(first.category.name, tree.get(leaves[0]).unwrap().name);
    let mut ids = vec![first.category.id];
    for entry in reader {
        let entry = entry.unwrap();
        if entry.category.id == 9355 {
            assert_eq!(entry.aspects.len(), 5);
            assert!(entry.aspects[0].required);
        }
        ids.push(entry.category.id);
    }
    assert_eq!(ids, leaves);
}

#[test]
fn fetch_item_aspects_truncated_gzip_is_a_clear_error_and_leaves_no_file() {
    let fake = fake();
    let whole = fake.item_aspects_file(Marketplace::Gb);
    let cut = whole[..whole.len() / 2].to_vec();
    // A complete HTTP answer whose gzip stream stops half-way.
    fake.route(
        "GET",
        "/commerce/taxonomy/v1/category_tree/{id}/fetch_item_aspects",
        move |_, _| {
            Response::new(200, cut.clone()).with_header("Content-Type", "application/octet-stream")
        },
    );
    let (client, sleeper) = client(&fake);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("aspects.json.gz");
    let err = client
        .fetch_item_aspects(Marketplace::Gb, &dest, &mut |_, _| {})
        .unwrap_err();
    let ApiError::UnexpectedBody { reason, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(reason.contains("gzip file ends before its end"), "{reason}");
    assert!(!dest.exists());
    assert!(
        files_in(dir.path()).is_empty(),
        "{:?}",
        files_in(dir.path())
    );
    assert!(sleeper.delays().is_empty(), "a broken file is not retried");

    // An older file at the destination is left as it was.
    std::fs::write(&dest, b"old").unwrap();
    client
        .fetch_item_aspects(Marketplace::Gb, &dest, &mut |_, _| {})
        .unwrap_err();
    assert_eq!(std::fs::read(&dest).unwrap(), b"old");
    assert_eq!(files_in(dir.path()), ["aspects.json.gz"]);
}

#[test]
fn fetch_item_aspects_cut_off_connection_is_retried_from_the_start() {
    let fake = fake();
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("au.json.gz");
    let (client, _) = client_with(&fake, config(&fake).with_max_retries(0));
    fake.fail_next(&aspects_file_path(15), Fault::CutOffBody);
    let err = client
        .fetch_item_aspects(Marketplace::Au, &dest, &mut |_, _| {})
        .unwrap_err();
    assert!(matches!(err, ApiError::Truncated { .. }), "{err:?}");
    assert!(files_in(dir.path()).is_empty());

    let (client, sleeper) = support::client(&fake);
    fake.fail_next(&aspects_file_path(15), Fault::CutOffBody);
    let file = client
        .fetch_item_aspects(Marketplace::Au, &dest, &mut |_, _| {})
        .unwrap();
    assert_eq!(sleeper.delays().len(), 1);
    assert_eq!(
        std::fs::read(&file.path).unwrap(),
        fake.item_aspects_file(Marketplace::Au)
    );
    assert_eq!(files_in(dir.path()), ["au.json.gz"]);
}

#[test]
fn fetch_item_aspects_limit_and_error_answers() {
    let fake = fake();
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("de.json.gz");
    let (client, _) = client_with(&fake, config(&fake).with_max_download_bytes(10_000));
    let err = client
        .fetch_item_aspects(Marketplace::De, &dest, &mut |_, _| {})
        .unwrap_err();
    assert!(
        matches!(err, ApiError::BodyTooLarge { limit: 10_000, .. }),
        "{err:?}"
    );
    assert!(files_in(dir.path()).is_empty());

    let (client, _) = support::client(&fake);
    fake.fail_next(
        &aspects_file_path(77),
        Fault::Status {
            status: 400,
            body: not_found_body(),
            headers: vec![],
        },
    );
    let err = client
        .fetch_item_aspects(Marketplace::De, &dest, &mut |_, _| {})
        .unwrap_err();
    assert_eq!(err.error_id(), Some(ERROR_TREE_NOT_FOUND));
    assert!(files_in(dir.path()).is_empty());

    // A destination that cannot be written is named.
    let err = client
        .fetch_item_aspects(
            Marketplace::De,
            &dir.path().join("missing/dir/x.gz"),
            &mut |_, _| {},
        )
        .unwrap_err();
    let ApiError::File { path, .. } = &err else {
        panic!("{err:?}")
    };
    assert!(path.starts_with(dir.path().join("missing")), "{path:?}");
}

#[test]
fn fetch_item_aspects_transport_compressed_json_is_stored_gzipped() {
    let fake = fake();
    let gz = fake.item_aspects_file(Marketplace::Au);
    // A server that sends the JSON with Content-Encoding: gzip instead of a gzip file: the
    // HTTP client decompresses it, the download compresses it again.
    fake.route(
        "GET",
        "/commerce/taxonomy/v1/category_tree/{id}/fetch_item_aspects",
        move |_, _| {
            Response::new(200, gz.clone())
                .with_header("Content-Type", "application/json")
                .with_header("Content-Encoding", "gzip")
        },
    );
    let (client, _) = client(&fake);
    let dir = tempfile::tempdir().unwrap();
    let file = client
        .fetch_item_aspects(Marketplace::Au, &dir.path().join("au.gz"), &mut |_, _| {})
        .unwrap();
    let entries: Vec<_> = file.reader().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(entries.len(), fake.tree(Marketplace::Au).leaf_count());
}

#[test]
fn reader_reports_a_truncated_file_after_the_entries_before_the_cut() {
    let fake = fake();
    let whole = fake.item_aspects_file(Marketplace::Us);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.json.gz");
    std::fs::write(&path, &whole[..whole.len() / 2]).unwrap();
    let mut ok = 0;
    let mut error = None;
    for entry in ItemAspectsReader::open(&path).unwrap() {
        match entry {
            Ok(_) => ok += 1,
            Err(e) => error = Some(e),
        }
    }
    assert!(ok > 100, "entries before the cut: {ok}");
    let Some(AspectsFileError::Io {
        path: named,
        message,
    }) = error
    else {
        panic!("{error:?}")
    };
    assert_eq!(named, path);
    assert!(message.contains("gzip stream is cut off"), "{message}");
    assert!(ItemAspectsReader::open(&dir.path().join("none.gz")).is_err());
}

// ---- fetchItemAspects against a hostile or broken server ----

const ASPECTS_FILE_ROUTE: &str = "/commerce/taxonomy/v1/category_tree/{id}/fetch_item_aspects";

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes).unwrap();
    gz.finish().unwrap()
}

/// A fetchItemAspects file of `n` entries, as JSON.
fn aspects_json(n: u32) -> String {
    let entries: Vec<String> = (1..=n)
        .map(|id| {
            format!(
                r#"{{"category":{{"categoryId":"{id}","categoryName":"Category {id}"}},"aspects":[{{"localizedAspectName":"Brand","aspectConstraint":{{"aspectRequired":true}}}}]}}"#
            )
        })
        .collect();
    format!(
        r#"{{"categoryTreeId":"0","categoryTreeVersion":"134","categoryAspects":[{}]}}"#,
        entries.join(",")
    )
}

/// Answers fetchItemAspects with `body` as `content_type` (the fake sends a matching
/// `Content-Length`).
fn serve_aspects(fake: &FakeMarketplace, body: Vec<u8>, content_type: &'static str) {
    fake.route("GET", ASPECTS_FILE_ROUTE, move |_, _| {
        Response::new(200, body.clone()).with_header("Content-Type", content_type)
    });
}

/// A gzip file of a few kilobytes that holds megabytes of JSON: refused once the JSON inside
/// passes the configured limit, as a file (checked while it streams) and as transport-
/// compressed JSON; the default limit is far above the real files.
#[test]
fn fetch_item_aspects_limits_the_decompressed_json() {
    assert_eq!(
        marketplace_client::test_util::DEFAULT_MAX_DECOMPRESSED_BYTES,
        16 << 30
    );
    let fake = fake();
    let json = format!(
        r#"{{"categoryTreeId":"0","categoryAspects":[{{"category":{{"categoryId":"1","categoryName":"{}"}},"aspects":[]}}]}}"#,
        "x".repeat(8_000_000)
    );
    let bomb = gzip(json.as_bytes());
    assert!(bomb.len() < 100_000, "{}", bomb.len());
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("us.json.gz");
    let (client, _) = client_with(&fake, config(&fake).with_max_decompressed_bytes(4_000_000));
    for (body, content_type, encoding) in [
        (bomb.clone(), "application/octet-stream", None),
        (bomb.clone(), "application/json", Some("gzip")),
    ] {
        fake.route("GET", ASPECTS_FILE_ROUTE, move |_, _| {
            let answer = Response::new(200, body.clone()).with_header("Content-Type", content_type);
            match encoding {
                Some(e) => answer.with_header("Content-Encoding", e),
                None => answer,
            }
        });
        let err = client
            .fetch_item_aspects(Marketplace::Us, &dest, &mut |_, _| {})
            .unwrap_err();
        assert!(
            matches!(
                err,
                ApiError::BodyTooLarge {
                    limit: 4_000_000,
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("max_decompressed_bytes"), "{err}");
        assert!(
            files_in(dir.path()).is_empty(),
            "{:?}",
            files_in(dir.path())
        );
    }
    // Under the limit the same file is taken.
    let (client, _) = client_with(&fake, config(&fake).with_max_decompressed_bytes(9_000_000));
    serve_aspects(&fake, bomb, "application/octet-stream");
    let file = client
        .fetch_item_aspects(Marketplace::Us, &dest, &mut |_, _| {})
        .unwrap();
    assert_eq!(file.json_bytes, json.len() as u64);
}

/// A 50-entry answer cut after 700 bytes, with a `Content-Length` that matches what was sent
/// (so the transport sees a whole answer), as plain JSON and inside a whole gzip stream: the
/// good file at the destination stays.
#[test]
fn fetch_item_aspects_keeps_the_good_file_when_the_json_is_cut_off() {
    let fake = fake();
    let (client, sleeper) = client(&fake);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("us.json.gz");
    let json = aspects_json(50);
    serve_aspects(&fake, gzip(json.as_bytes()), "application/octet-stream");
    client
        .fetch_item_aspects(Marketplace::Us, &dest, &mut |_, _| {})
        .unwrap();
    let good = std::fs::read(&dest).unwrap();

    let cut = json.as_bytes()[..700].to_vec();
    for (body, content_type) in [
        (cut.clone(), "application/json"),
        (gzip(&cut), "application/octet-stream"),
        (b"{}  x".to_vec(), "application/json"),
        (gzip(b"   "), "application/octet-stream"),
        (Vec::new(), "application/json"),
    ] {
        serve_aspects(&fake, body, content_type);
        let err = client
            .fetch_item_aspects(Marketplace::Us, &dest, &mut |_, _| {})
            .unwrap_err();
        let ApiError::UnexpectedBody { reason, .. } = &err else {
            panic!("{err:?}")
        };
        assert!(
            reason.contains("ends before its end")
                || reason.contains("data after its JSON")
                || reason.contains("holds no JSON"),
            "{reason}"
        );
        assert_eq!(std::fs::read(&dest).unwrap(), good, "the good file stays");
        assert_eq!(files_in(dir.path()), ["us.json.gz"]);
    }
    assert!(sleeper.delays().is_empty(), "a broken file is not retried");
}

/// A gzip file of several members (as `cat a.gz b.gz` makes, and `gzip -t` accepts) is taken
/// whole and read through every member.
#[test]
fn fetch_item_aspects_takes_a_multi_member_gzip() {
    let fake = fake();
    let (client, _) = client(&fake);
    let json = aspects_json(50);
    let (a, b) = json.as_bytes().split_at(json.len() / 3);
    let (b, c) = b.split_at(b.len() / 2);
    let mut members = gzip(a);
    members.extend(gzip(b));
    members.extend(gzip(c));
    serve_aspects(&fake, members.clone(), "application/octet-stream");
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("us.json.gz");
    let file = client
        .fetch_item_aspects(Marketplace::Us, &dest, &mut |_, _| {})
        .unwrap();
    assert_eq!(std::fs::read(&dest).unwrap(), members);
    assert_eq!(file.json_bytes, json.len() as u64);
    let ids: Vec<u32> = file
        .reader()
        .unwrap()
        .map(|e| e.unwrap().category.id)
        .collect();
    assert_eq!(ids, (1..=50).collect::<Vec<_>>());

    // A corrupt second member is still refused.
    let mut broken = gzip(a);
    broken.extend(b"\x1f\x8bnot a member");
    serve_aspects(&fake, broken, "application/octet-stream");
    let err = client
        .fetch_item_aspects(Marketplace::Us, &dest, &mut |_, _| {})
        .unwrap_err();
    assert!(matches!(err, ApiError::UnexpectedBody { .. }), "{err:?}");
    assert_eq!(std::fs::read(&dest).unwrap(), members);
}

/// Temporary files are named at random, as the snapshot writer's: another process's live
/// file (in a container every process is pid 1, so the old names by process id collided)
/// neither blocks a download nor is removed by it, and a leftover of a killed download is
/// removed once it is stale.
#[test]
fn fetch_item_aspects_temporary_files_never_collide_and_leftovers_go() {
    let fake = fake();
    let (client, _) = client(&fake);
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("gb.json.gz");
    // Live files of another process with this process's id, named as the old code named
    // its own (`.NAME.part.PID.N`), and one named as now.
    let pid = std::process::id();
    let mut live: Vec<String> = (0..64)
        .map(|n| format!(".gb.json.gz.part.{pid}.{n}"))
        .collect();
    live.push(".gb.json.gz.tmp.AAAAAAAAAAAA".into());
    for name in &live {
        std::fs::write(dir.path().join(name), b"another download").unwrap();
    }
    // A leftover of a download killed an hour ago.
    let stale = dir.path().join(".gb.json.gz.tmp.BBBBBBBBBBBB");
    std::fs::write(&stale, b"killed").unwrap();
    let hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(hour_ago)
        .unwrap();

    client
        .fetch_item_aspects(Marketplace::Gb, &dest, &mut |_, _| {})
        .unwrap();
    assert_eq!(
        std::fs::read(&dest).unwrap(),
        fake.item_aspects_file(Marketplace::Gb)
    );
    assert!(!stale.exists(), "the stale leftover is removed");
    for name in &live {
        assert_eq!(
            std::fs::read(dir.path().join(name)).unwrap(),
            b"another download",
            "{name} is left alone"
        );
    }
    let mut expected = live.clone();
    expected.push("gb.json.gz".into());
    expected.sort();
    assert_eq!(files_in(dir.path()), expected);
}

// ---- getCategorySubtree: the tree's node decoder and rules ----

#[test]
fn subtree_answers_are_held_to_the_tree_rules() {
    let fake = fake();
    let (client, _) = client(&fake);
    let cases: [(serde_json::Value, &str); 4] = [
        (
            serde_json::json!({"categoryTreeId": "0", "categoryTreeVersion": "1",
                "categorySubtreeNode": {"category": {"categoryId": "15032", "categoryName": "Phones"},
                    "categoryTreeNodeLevel": 1,
                    "childCategoryTreeNodes": [{"category": {"categoryId": 9355, "categoryName": "Smart"},
                        "categoryTreeNodeLevel": 2, "leafCategoryTreeNode": true}]}}),
            "categoryId at categorySubtreeNode > 15032 (Phones): 9355 is a number",
        ),
        (
            serde_json::json!({"categoryTreeId": "0", "categoryTreeVersion": "1",
                "categorySubtreeNode": {"category": {"categoryId": "9355", "categoryName": "Smart"},
                    "categoryTreeNodeLevel": 2, "leafCategoryTreeNode": true}}),
            "is \"9355\" but category \"15032\" was asked for",
        ),
        (
            serde_json::json!({"categoryTreeId": "0", "categoryTreeVersion": "1",
                "categorySubtreeNode": {"category": {"categoryId": "15032", "categoryName": "Phones"},
                    "categoryTreeNodeLevel": 1,
                    "childCategoryTreeNodes": [{"category": {"categoryId": "9355", "categoryName": "Smart"},
                        "categoryTreeNodeLevel": 3, "leafCategoryTreeNode": true}]}}),
            "categoryTreeNodeLevel at categorySubtreeNode > 15032 (Phones) > 9355 (Smart): is 3",
        ),
        (
            serde_json::json!({"categoryTreeId": "0", "categoryTreeVersion": "1",
                "categorySubtreeNode": {"category": {"categoryId": "15032", "categoryName": "Phones"},
                    "categoryTreeNodeLevel": 1,
                    "childCategoryTreeNodes": [{"category": {"categoryId": "9355", "categoryName": "Smart"},
                        "categoryTreeNodeLevel": 2}]}}),
            "category 9355",
        ),
    ];
    for (body, expected) in cases {
        fake.route(
            "GET",
            "/commerce/taxonomy/v1/category_tree/{id}/get_category_subtree",
            move |_, _| Response::json(200, &body),
        );
        let err = client
            .category_subtree((Marketplace::Us, 15032))
            .unwrap_err();
        assert!(matches!(err, ApiError::Decode { .. }), "{err:?}");
        let message = err.to_string();
        assert!(
            message.contains(expected),
            "{message}\nexpected: {expected}"
        );
    }
}
