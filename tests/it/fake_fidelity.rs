//! The fake marketplace held to eBay's public API reference where two third-party clients
//! (hendt's `ebay-api`, `ebay-rest`) found it to differ: compression, the query, tree ids and
//! languages, 200 where eBay answers 200, the token endpoint's credentials and scopes, the
//! bearer scheme, kept-alive connections and parts compatibility. Every request is raw HTTP
//! over loopback, so what is checked is what went on the wire.

use crate::taxonomy_support as support;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::time::Duration;

use fake_marketplace::FakeMarketplace;
use marketplaces::Marketplace;
use serde_json::Value;

const BASE: &str = "/commerce/taxonomy/v1";

/// A reqwest client that neither decompresses nor asks for compression by itself: the
/// `Accept-Encoding` sent is the test's, and the body read is the body sent.
fn raw_http() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .no_proxy()
        .no_gzip()
        .build()
        .unwrap()
}

fn token(fake: &FakeMarketplace) -> String {
    support::tokens(fake)
        .access_token()
        .unwrap()
        .secret()
        .to_owned()
}

/// What came back: status, headers (names lower-case) and the body as sent.
struct Raw {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Raw {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The body, gunzipped when it was sent with `Content-Encoding: gzip`.
    fn json(&self) -> Value {
        let plain = if self.header("Content-Encoding") == Some("gzip") {
            gunzip(&self.body)
        } else {
            self.body.clone()
        };
        serde_json::from_slice(&plain)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&plain)))
    }

    fn error_id(&self) -> Option<u64> {
        self.json()["errors"][0]["errorId"].as_u64()
    }
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("a gzip stream");
    out
}

fn get(fake: &FakeMarketplace, token: &str, target: &str, headers: &[(&str, &str)]) -> Raw {
    let mut request = raw_http()
        .get(format!("{}{target}", fake.base_url()))
        .bearer_auth(token);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let r = request.send().unwrap();
    let status = r.status().as_u16();
    let headers = r
        .headers()
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_str().unwrap_or_default().to_owned()))
        .collect();
    Raw {
        status,
        headers,
        body: r.bytes().unwrap().to_vec(),
    }
}

// ---- 2. gzip ----

/// eBay compresses an answer when the request accepts gzip, whatever the operation: the
/// client's Accept-Encoding: gzip must get compressed subtrees, suggestions and aspects, not
/// only trees. `gzip;q=0` refuses gzip (RFC 9110 §12.5.3).
#[test]
fn every_answer_is_gzipped_when_the_request_accepts_gzip_and_none_when_q_is_0() {
    let fake = FakeMarketplace::new();
    let token = token(&fake);
    let us = format!("{BASE}/category_tree/0");
    let targets = [
        format!("{us}/get_category_subtree?category_id=15032"),
        format!("{us}/get_category_suggestions?q=iphone"),
        format!("{us}/get_item_aspects_for_category?category_id=9355"),
        format!("{BASE}/get_default_category_tree_id?marketplace_id=EBAY_US"),
        format!("{us}/get_category_subtree?category_id=999999999"), // an error body too
        us.clone(),
    ];
    for target in &targets {
        let r = get(&fake, &token, target, &[("Accept-Encoding", "gzip")]);
        assert_eq!(
            r.header("Content-Encoding"),
            Some("gzip"),
            "{target} answered {} uncompressed",
            r.status
        );
        assert_eq!(&r.body[..2], &[0x1f, 0x8b], "{target}: a gzip stream");
        assert!(r.json().is_object(), "{target}");

        for refused in ["gzip;q=0", "identity", "gzip;q=0, identity"] {
            let r = get(&fake, &token, target, &[("Accept-Encoding", refused)]);
            assert_eq!(
                r.header("Content-Encoding"),
                None,
                "{target} with Accept-Encoding: {refused}"
            );
            assert!(r.json().is_object(), "{target}: plain JSON");
        }
    }
}

/// fetchItemAspects is the gzip file itself (application/octet-stream, no Content-Encoding,
/// never compressed twice), whether the request accepts gzip, `application/gzip` or nothing.
#[test]
fn fetch_item_aspects_is_the_gzip_file_whatever_the_request_accepts() {
    let fake = FakeMarketplace::new();
    let token = token(&fake);
    let target = format!("{BASE}/category_tree/0/fetch_item_aspects");
    for headers in [
        vec![],
        vec![("Accept-Encoding", "gzip")],
        vec![("Accept", "application/gzip")],
        vec![("Accept-Encoding", "application/gzip")],
    ] {
        let r = get(&fake, &token, &target, &headers);
        assert_eq!(r.status, 200, "{headers:?}");
        assert_eq!(r.header("Content-Encoding"), None, "{headers:?}");
        assert_eq!(
            r.header("Content-Type"),
            Some("application/octet-stream"),
            "{headers:?}"
        );
        let file: Value = serde_json::from_slice(&gunzip(&r.body)).unwrap();
        assert_eq!(file["categoryTreeId"], "0", "{headers:?}");
    }
}

// ---- 5. the query ----

/// eBay's documented request URIs carry `:` and `,` unencoded (`filter=Year:2018,Make:Toyota`);
/// one of them must not make every other parameter disappear.
#[test]
fn an_unencoded_colon_or_comma_in_the_query_keeps_every_parameter() {
    let fake = FakeMarketplace::new();
    let token = token(&fake);
    let us = format!("{BASE}/category_tree/0");
    let r = get(
        &fake,
        &token,
        &format!("{us}/get_category_subtree?category_id=15032&note=a:b,c"),
        &[],
    );
    assert_eq!(r.status, 200, "{:?}", r.json());
    assert_eq!(
        r.json()["categorySubtreeNode"]["category"]["categoryId"],
        "15032"
    );
    let r = get(
        &fake,
        &token,
        &format!("{us}/get_category_suggestions?q=iphone,case:black"),
        &[],
    );
    assert_eq!(r.status, 200, "{:?}", r.json());
    let r = get(
        &fake,
        &token,
        &format!("{us}/get_item_aspects_for_category?category_id=9355&x=1:2"),
        &[],
    );
    assert_eq!(r.status, 200, "{:?}", r.json());
}

// ---- 3. tree ids and languages ----

/// A Canadian tree in French (tree 210), as a snapshot of EBAY_CA may hold it.
fn french_canada() -> taxonomy_tree::tree::CategoryTree {
    let mut tree = support::small_tree(Marketplace::Ca);
    tree.meta.tree_id = 210;
    tree.meta.language = "fr-CA".into();
    for c in &mut tree.categories {
        c.name = match c.id {
            10 => "Téléphones".into(),
            11 => "Téléphones intelligents".into(),
            12 => "Étuis".into(),
            20 => "Livres".into(),
            _ => c.name.clone(),
        };
    }
    tree
}

/// A tree the fake does not hold is eBay's 62004, not another tree under its id; the tree it
/// holds is answered under its own id and language.
#[test]
fn a_tree_is_answered_under_its_own_id_and_a_tree_not_held_is_62004() {
    let fake = FakeMarketplace::new();
    let token = token(&fake);
    // EBAY_CA in English (tree 2): tree 210 is not held.
    fake.set_tree(Marketplace::Ca, support::small_tree(Marketplace::Ca));
    for target in [
        format!("{BASE}/category_tree/210"),
        format!("{BASE}/category_tree/210/get_category_subtree?category_id=10"),
        format!("{BASE}/category_tree/210/get_category_suggestions?q=books"),
    ] {
        let r = get(&fake, &token, &target, &[]);
        assert_eq!((r.status, r.error_id()), (400, Some(62004)), "{target}");
    }
    let r = get(&fake, &token, &format!("{BASE}/category_tree/2"), &[]);
    assert_eq!(r.json()["categoryTreeId"], "2");

    // EBAY_CA in French (tree 210): answered as 210 in fr-CA, and tree 2 is not held.
    fake.set_tree(Marketplace::Ca, french_canada());
    let r = get(&fake, &token, &format!("{BASE}/category_tree/210"), &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["categoryTreeId"], "210");
    assert_eq!(r.header("Content-Language"), Some("fr-CA"));
    assert_eq!(
        r.json()["rootCategoryNode"]["childCategoryTreeNodes"][0]["category"]["categoryName"],
        "Téléphones"
    );
    for op in [
        "get_category_subtree?category_id=10",
        "get_category_suggestions?q=livres",
    ] {
        let r = get(
            &fake,
            &token,
            &format!("{BASE}/category_tree/210/{op}"),
            &[],
        );
        assert_eq!(r.status, 200, "{op}");
        assert_eq!(r.json()["categoryTreeId"], "210", "{op}");
    }
    let r = get(&fake, &token, &format!("{BASE}/category_tree/2"), &[]);
    assert_eq!((r.status, r.error_id()), (400, Some(62004)));
}

/// getDefaultCategoryTreeId answers the tree of the language asked for: EBAY_CA in fr-CA is
/// tree 210.
#[test]
fn the_default_tree_id_follows_accept_language() {
    let fake = FakeMarketplace::new();
    let token = token(&fake);
    fake.set_tree(Marketplace::Ca, french_canada());
    let target = format!("{BASE}/get_default_category_tree_id?marketplace_id=EBAY_CA");
    let r = get(&fake, &token, &target, &[("Accept-Language", "fr-CA")]);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["categoryTreeId"], "210");
    // English is tree 2, which this fake does not hold: no default tree (204).
    let r = get(&fake, &token, &target, &[("Accept-Language", "en-CA")]);
    assert_eq!(r.status, 204);
    fake.set_tree(Marketplace::Ca, support::small_tree(Marketplace::Ca));
    let r = get(&fake, &token, &target, &[("Accept-Language", "en-CA")]);
    assert_eq!(r.json()["categoryTreeId"], "2");
    let r = get(&fake, &token, &target, &[]);
    assert_eq!(r.json()["categoryTreeId"], "2");
}

// ---- 4. Motors and expired categories by default ----

/// The default fake serves eBay Motors (tree 100) and a set of expired categories, so the
/// 200 answers of getDefaultCategoryTreeId and getExpiredCategories can be asked of it.
#[test]
fn the_default_fake_serves_motors_and_expired_categories() {
    let fake = FakeMarketplace::new();
    let token = token(&fake);
    let r = get(
        &fake,
        &token,
        &format!("{BASE}/get_default_category_tree_id?marketplace_id=EBAY_MOTORS_US"),
        &[],
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["categoryTreeId"], "100");
    let r = get(&fake, &token, &format!("{BASE}/category_tree/100"), &[]);
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["categoryTreeId"], "100");

    for tree in [0, 100] {
        let r = get(
            &fake,
            &token,
            &format!("{BASE}/category_tree/{tree}/get_expired_categories"),
            &[],
        );
        assert_eq!(r.status, 200, "tree {tree}");
        let list = r.json()["expiredCategories"].as_array().cloned().unwrap();
        assert!(!list.is_empty(), "tree {tree}");
    }
}

// ---- 1. parts compatibility ----

/// eBay enables parts compatibility for vehicle parts: its own getCompatibilityProperties
/// sample asks category 33559 (Brakes & Brake Parts) of eBay Motors (tree 100). A category
/// that is no vehicle part (27386 Graphics/Video Cards, 177806 bicycle Brake Pads) is refused
/// with 62101.
#[test]
fn parts_compatibility_is_enabled_for_vehicle_parts_only() {
    let fake = FakeMarketplace::new();
    let token = token(&fake);
    let r = get(
        &fake,
        &token,
        &format!("{BASE}/category_tree/100/get_compatibility_properties?category_id=33559"),
        &[],
    );
    assert_eq!(r.status, 200, "{:?}", r.json());
    let names: Vec<Value> = r.json()["compatibilityProperties"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].clone())
        .collect();
    assert!(names.contains(&"Make".into()), "{names:?}");
    // eBay's documented request URI, `:` and `,` unencoded.
    let r = get(
        &fake,
        &token,
        &format!(
            "{BASE}/category_tree/100/get_compatibility_property_values?category_id=33559&compatibility_property=Trim&filter=Year:2018,Make:Toyota,Model:Camry"
        ),
        &[],
    );
    assert_eq!(r.status, 200, "{:?}", r.json());
    assert!(
        !r.json()["compatibilityPropertyValues"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    for (tree, category) in [(0, 27386), (0, 177806), (100, 6001)] {
        for op in [
            format!("get_compatibility_properties?category_id={category}"),
            format!(
                "get_compatibility_property_values?category_id={category}&compatibility_property=Make"
            ),
        ] {
            let r = get(
                &fake,
                &token,
                &format!("{BASE}/category_tree/{tree}/{op}"),
                &[],
            );
            assert_eq!(
                (r.status, r.error_id()),
                (400, Some(62101)),
                "tree {tree}: {op}"
            );
        }
    }
}

// ---- 7. minor ----

/// getCategorySuggestions' `relevancy` is reserved for future use (eBay's reference): eBay
/// does not fill it, and neither does the fake.
#[test]
fn suggestions_leave_the_reserved_relevancy_out() {
    let fake = FakeMarketplace::new();
    let token = token(&fake);
    let r = get(
        &fake,
        &token,
        &format!("{BASE}/category_tree/100/get_category_suggestions?q=brake+pads"),
        &[],
    );
    let list = r.json()["categorySuggestions"].as_array().cloned().unwrap();
    assert!(!list.is_empty());
    for s in &list {
        assert!(s.get("relevancy").is_none(), "{s}");
    }
}

/// The scope the Taxonomy API's description lists beside `api_scope`,
/// `https://api.ebay.com/oauth/api_scope/metadata.insights`, is granted to an application
/// token, which the taxonomy operations then take.
#[test]
fn the_metadata_insights_scope_is_granted() {
    use marketplace_client::oauth::{OAuthClient, OAuthConfig, ScopeSet};
    let fake = FakeMarketplace::new();
    let endpoints =
        marketplace_client::oauth::Endpoints::custom(&fake.base_url(), &fake.auth_url()).unwrap();
    let client = OAuthClient::from_config(
        &OAuthConfig::new(endpoints).with_credentials(fake.client_id(), fake.client_secret()),
    )
    .unwrap();
    let granted = client
        .client_credentials(&ScopeSet::new([
            "https://api.ebay.com/oauth/api_scope/metadata.insights",
        ]))
        .expect("the scope is granted");
    let r = get(
        &fake,
        granted.access_token.secret(),
        &format!("{BASE}/category_tree/0/get_item_aspects_for_category?category_id=9355"),
        &[],
    );
    assert_eq!(r.status, 200);
}

/// Authentication schemes are case-insensitive (RFC 7235 §2.1); eBay's samples write
/// `Bearer`, and the fake takes `bearer` too.
#[test]
fn a_lower_case_bearer_scheme_is_taken() {
    let fake = FakeMarketplace::new();
    let token = token(&fake);
    for scheme in ["Bearer", "bearer", "BEARER"] {
        let r = raw_http()
            .get(format!(
                "{}{BASE}/get_default_category_tree_id?marketplace_id=EBAY_US",
                fake.base_url()
            ))
            .header("Authorization", format!("{scheme} {token}"))
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 200, "{scheme}");
    }
    let r = raw_http()
        .get(format!(
            "{}{BASE}/get_default_category_tree_id?marketplace_id=EBAY_US",
            fake.base_url()
        ))
        .header("Authorization", format!("Basic {token}"))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
}

/// Reads one answer's head and body from `reader`; the head's lines.
fn read_answer(reader: &mut BufReader<TcpStream>) -> (Vec<String>, Vec<u8>) {
    let mut head = Vec::new();
    loop {
        let mut line = String::new();
        assert!(reader.read_line(&mut line).unwrap() > 0, "an answer");
        if line == "\r\n" {
            break;
        }
        head.push(line.trim_end().to_owned());
    }
    let length: usize = head
        .iter()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .expect("Content-Length");
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    (head, body)
}

/// HTTP/1.1 keeps a connection open unless a side says `Connection: close`: clients reuse
/// connections, and the fake serves several requests on one, closing it when asked.
#[test]
fn connections_are_kept_alive_until_the_client_closes_them() {
    let fake = FakeMarketplace::new();
    let token = token(&fake);
    let stream = TcpStream::connect(fake.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let request = |close: bool| {
        format!(
            "GET {BASE}/get_default_category_tree_id?marketplace_id=EBAY_US HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n{}\r\n",
            fake.addr(),
            if close { "Connection: close\r\n" } else { "" }
        )
    };
    for n in 0..3 {
        writer.write_all(request(false).as_bytes()).unwrap();
        let (head, body) = read_answer(&mut reader);
        assert_eq!(head[0], "HTTP/1.1 200 OK", "request {n}");
        assert!(
            head.iter()
                .any(|l| l.eq_ignore_ascii_case("connection: keep-alive")),
            "request {n}: {head:?}"
        );
        let v: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(v["categoryTreeId"], "0");
    }
    writer.write_all(request(true).as_bytes()).unwrap();
    let (head, _) = read_answer(&mut reader);
    assert!(
        head.iter()
            .any(|l| l.eq_ignore_ascii_case("connection: close")),
        "{head:?}"
    );
    let mut rest = Vec::new();
    assert_eq!(
        reader.read_to_end(&mut rest).unwrap(),
        0,
        "closed after the answer"
    );
}

/// A call on a kept-alive connection costs no more than one on a new connection: the answer
/// leaves whole, so it does not wait for the client's delayed ACK of its first piece (the
/// fake wrote the head and the body apart, and each call on a reused connection took ~40 ms
/// instead of well under one; benches/fake_keep_alive.rs measures both).
#[test]
fn a_kept_alive_connection_answers_without_waiting_for_a_delayed_ack() {
    let fake = FakeMarketplace::new();
    let token = token(&fake);
    let stream = TcpStream::connect(fake.addr()).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut writer = stream.try_clone().unwrap();
    let mut reader = BufReader::new(stream);
    let request = format!(
        "GET {BASE}/get_default_category_tree_id?marketplace_id=EBAY_US HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\r\n",
        fake.addr()
    );
    let mut times = Vec::new();
    for _ in 0..12 {
        let start = std::time::Instant::now();
        writer.write_all(request.as_bytes()).unwrap();
        let (head, _) = read_answer(&mut reader);
        times.push(start.elapsed());
        assert_eq!(head[0], "HTTP/1.1 200 OK");
    }
    times.sort();
    // The delayed ACK is 40 ms on Linux; a whole answer on loopback takes a fraction of one.
    let median = times[times.len() / 2];
    assert!(
        median < Duration::from_millis(20),
        "a call on a kept-alive connection took {median:?} (median of {times:?})"
    );
}

/// Every ancestor link of a suggestion answers, the root's included: eBay answers
/// getCategorySubtree of a tree's root with 62008 ("Please use {categoryTreeHref} to retrieve
/// the entire tree"), so the root ancestor links the tree (getCategoryTree), not a subtree
/// (the fake linked `get_category_subtree?category_id=0`, which it answers 62008 as eBay does).
#[test]
fn every_ancestor_link_of_a_suggestion_answers() {
    let fake = FakeMarketplace::new();
    let token = token(&fake);
    let r = get(
        &fake,
        &token,
        &format!("{BASE}/category_tree/100/get_category_suggestions?q=brake+pads"),
        &[],
    );
    assert_eq!(r.status, 200);
    let answer: Value = serde_json::from_slice(&r.body).unwrap();
    let ancestors = answer["categorySuggestions"][0]["categoryTreeNodeAncestors"]
        .as_array()
        .unwrap()
        .clone();
    let root = ancestors.last().unwrap();
    assert_eq!(root["categoryTreeNodeLevel"], 0);
    for ancestor in &ancestors {
        let href = ancestor["categorySubtreeNodeHref"].as_str().unwrap();
        let target = href.strip_prefix(&fake.base_url()).unwrap();
        let r = get(&fake, &token, target, &[]);
        assert_eq!(
            r.status,
            200,
            "{href}: {}",
            String::from_utf8_lossy(&r.body)
        );
    }
    // The root's subtree itself stays eBay's 62008.
    let r = get(
        &fake,
        &token,
        &format!("{BASE}/category_tree/100/get_category_subtree?category_id=0"),
        &[],
    );
    assert_eq!(r.status, 400);
}
