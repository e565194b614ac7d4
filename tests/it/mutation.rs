//! Deterministic mutation testing of the parsers of outside data: the getCategoryTree decoder,
//! the snapshot parser and the consent redirect parser (whose refusals go through the
//! sanitizer).
//!
//! A fixed-seed generator (splitmix64) mutates real inputs: small cuts of the saved
//! getCategoryTree answers (`tests/fixtures/trees/`), the same cuts of the committed snapshots in
//! the snapshot format, and consent redirects. Mutations are byte-level (flips, interesting
//! bytes, truncation, deleted, duplicated and inserted spans) and structure-aware (swapped ids,
//! a removed or repeated child, a nesting or parent cycle, numeric and huge ids, empty names,
//! names with `>`, wrong levels and leaf flags, missing fields, deep chains; repeated, dropped
//! and encoded redirect parameters).
//!
//! Properties: nothing panics; every accepted tree is valid, reads back unchanged from its
//! snapshot (`snapshot::to_string` then `snapshot::parse`) and from its encoded answer, and goes
//! through code generation; an accepted redirect gives the code and state it carried; a refused
//! one keeps no control character and neither its code nor its state. A failure names the
//! iteration, the mutations and the input. The fuzz targets in `fuzz/` explore the same
//! properties without a time limit.

use crate::common;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;

use marketplace_client::oauth::OAuthError;
use marketplace_client::test_util::{MAX_BODY_IN_ERROR, parse_redirect};
use marketplaces::Marketplace;
use serde_json::{Value, json};
use taxonomy_codegen::codegen::{SiteData, fingerprint, generate};
use taxonomy_tree::decode::{Provenance, decode_tree};
use taxonomy_tree::encode::encode_response;
use taxonomy_tree::snapshot;
use taxonomy_tree::tree::{Category, CategoryTree};
use url::{Url, form_urlencoded};

const SEED: u64 = 0x5eed_2026_0102_0134;
const TREE_INPUTS: usize = 2_500;
const SNAPSHOT_INPUTS: usize = 1_500;
const REDIRECT_INPUTS: usize = 2_500;
/// Children kept per category when cutting the real trees (a few dozen categories each).
const BREADTH: usize = 2;

/// splitmix64 (Steele, Lea, Flood 2014): small, fast, and the same sequence everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    fn one_in(&mut self, n: u64) -> bool {
        self.next().is_multiple_of(n)
    }
}

// ---------------------------------------------------------------------------------------------
// Byte-level mutations, shared by every input kind.

const INTERESTING: &[u8] = b"\"{}[],:\\0 9>-+.%&=?#\x00\x7f\xff\xc3\n";

fn mutate_bytes(rng: &mut Rng, input: &mut Vec<u8>, log: &mut Vec<String>) {
    let len = input.len();
    match rng.below(7) {
        0 if len > 0 => {
            let i = rng.below(len);
            input[i] ^= 1 << rng.below(8);
            log.push(format!("flip a bit at {i}"));
        }
        1 if len > 0 => {
            let i = rng.below(len);
            input[i] = *rng.pick(INTERESTING);
            log.push(format!("byte {i} := {:?}", input[i] as char));
        }
        2 => {
            let at = rng.below(len + 1);
            input.truncate(at);
            log.push(format!("truncate at {at}"));
        }
        3 if len > 0 => {
            let start = rng.below(len);
            let end = (start + 1 + rng.below(64)).min(len);
            input.drain(start..end);
            log.push(format!("delete {start}..{end}"));
        }
        4 if len > 0 => {
            let start = rng.below(len);
            let end = (start + 1 + rng.below(64)).min(len);
            let span = input[start..end].to_vec();
            let at = rng.below(len + 1);
            input.splice(at..at, span);
            log.push(format!("copy {start}..{end} to {at}"));
        }
        5 => {
            let at = rng.below(len + 1);
            let n = 1 + rng.below(8);
            let bytes: Vec<u8> = (0..n).map(|_| *rng.pick(INTERESTING)).collect();
            input.splice(at..at, bytes);
            log.push(format!("insert {n} bytes at {at}"));
        }
        _ if len > 1 => {
            let a = rng.below(len);
            let b = rng.below(len);
            input.swap(a, b);
            log.push(format!("swap bytes {a} and {b}"));
        }
        _ => log.push("no byte change".into()),
    }
}

// ---------------------------------------------------------------------------------------------
// The getCategoryTree answer.

/// The answer with every node cut to its first `BREADTH` children (still a valid tree).
fn cut_answer(answer: &mut Value) {
    fn cut(node: &mut Value) {
        if let Some(kids) = node
            .get_mut("childCategoryTreeNodes")
            .and_then(Value::as_array_mut)
        {
            kids.truncate(BREADTH);
            kids.iter_mut().for_each(cut);
        }
    }
    cut(&mut answer["rootCategoryNode"]);
}

/// JSON pointers of every node, root first, with their depth.
fn node_pointers(answer: &Value) -> Vec<(String, usize)> {
    fn walk(node: &Value, at: String, depth: usize, out: &mut Vec<(String, usize)>) {
        out.push((at.clone(), depth));
        if let Some(kids) = node.get("childCategoryTreeNodes").and_then(Value::as_array) {
            for (i, k) in kids.iter().enumerate() {
                walk(
                    k,
                    format!("{at}/childCategoryTreeNodes/{i}"),
                    depth + 1,
                    out,
                );
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &answer["rootCategoryNode"],
        "/rootCategoryNode".into(),
        0,
        &mut out,
    );
    out
}

const ODD_IDS: &[&str] = &[
    "4294967295",
    "4294967294",
    "4294967296",
    "18446744073709551616",
    "99999999999999999999999999",
    "-1",
    "+1",
    "0x1F",
    " 7",
    "7 ",
    "007",
    "",
    "１２",
    "1e3",
];

const ODD_NAMES: &[&str] = &[
    "",
    "   ",
    "\t",
    "A > B",
    ">",
    "Phones>",
    "\"quoted\" \\ back",
    "\u{202e}evil",
    "line\nbreak",
    "😀 emoji",
    "\u{0}",
    "Ünïcødé & Co.",
];

/// One structure-aware mutation of the answer; returns what it did.
fn mutate_answer(rng: &mut Rng, answer: &mut Value) -> String {
    if !answer["rootCategoryNode"].is_object() {
        return "no root node left to mutate".into();
    }
    let nodes = node_pointers(answer);
    let (p, depth) = rng.pick(&nodes).clone();
    let (q, _) = rng.pick(&nodes).clone();
    let id_of = |v: &Value, p: &str| v.pointer(&format!("{p}/category/categoryId")).cloned();
    match rng.below(18) {
        0 => {
            let (a, b) = (id_of(answer, &p), id_of(answer, &q));
            if let (Some(a), Some(b)) = (a, b) {
                node_mut(answer, &p)["category"]["categoryId"] = b;
                node_mut(answer, &q)["category"]["categoryId"] = a;
            }
            format!("swap ids of {p} and {q}")
        }
        1 => {
            if let Some(kids) = node_mut(answer, &p)["childCategoryTreeNodes"].as_array_mut()
                && !kids.is_empty()
            {
                let i = rng.below(kids.len());
                kids.remove(i);
            }
            format!("remove a child of {p}")
        }
        2 => {
            // The nested form of a cycle: an ancestor's subtree again below a descendant.
            if depth >= 1 {
                let ancestor = nodes
                    .iter()
                    .filter(|(a, d)| *d < depth && p.starts_with(a.as_str()))
                    .map(|(a, _)| a.clone())
                    .collect::<Vec<_>>();
                let a = rng.pick(&ancestor).clone();
                let copy = node_mut(answer, &a).clone();
                push_child(node_mut(answer, &p), copy);
                return format!("nest {a} again below {p}");
            }
            format!("no cycle at the root {p}")
        }
        3 => {
            // An ancestor's id on a descendant (the same cycle, by id only).
            let root_id = id_of(answer, "/rootCategoryNode").unwrap_or(Value::Null);
            node_mut(answer, &p)["category"]["categoryId"] = root_id;
            format!("root's id on {p}")
        }
        4 => {
            if let Some(Value::String(s)) = id_of(answer, &p) {
                let n: Value = s.parse::<u64>().map_or(Value::Null, Value::from);
                node_mut(answer, &p)["category"]["categoryId"] = n;
            }
            format!("numeric id at {p}")
        }
        5 => {
            let id = *rng.pick(ODD_IDS);
            node_mut(answer, &p)["category"]["categoryId"] = json!(id);
            format!("id {id:?} at {p}")
        }
        6 => {
            let name = *rng.pick(ODD_NAMES);
            node_mut(answer, &p)["category"]["categoryName"] = json!(name);
            format!("name {name:?} at {p}")
        }
        7 => {
            let node = node_mut(answer, &p);
            let flag = rng
                .pick(&[json!(true), json!(false), json!("yes"), Value::Null])
                .clone();
            node["leafCategoryTreeNode"] = flag.clone();
            format!("leafCategoryTreeNode {flag} at {p}")
        }
        8 => {
            let level = *rng.pick(&[0_i64, 1, 2, 7, -1, 4_294_967_295, 4_294_967_296]);
            node_mut(answer, &p)["categoryTreeNodeLevel"] = json!(level);
            format!("level {level} at {p}")
        }
        9 => {
            let field = *rng.pick(&[
                "categoryTreeId",
                "categoryTreeVersion",
                "applicableMarketplaceIds",
                "rootCategoryNode",
            ]);
            answer.as_object_mut().map(|o| o.remove(field));
            format!("remove {field}")
        }
        10 => {
            let node = node_mut(answer, &p);
            let field = *rng.pick(&["category", "childCategoryTreeNodes"]);
            node.as_object_mut().map(|o| o.remove(field));
            if let Some(c) = node.get_mut("category").and_then(Value::as_object_mut) {
                let inner = if rng.one_in(2) {
                    "categoryId"
                } else {
                    "categoryName"
                };
                c.remove(inner);
            }
            format!("remove {field} (or a field of category) at {p}")
        }
        11 => {
            // The contract's node shape, with a childCategoryIds list that may disagree.
            let node = node_mut(answer, &p);
            let category = node["category"].take();
            node["categoryId"] = category["categoryId"].clone();
            node["categoryName"] = category["categoryName"].clone();
            if let Some(obj) = node.as_object_mut() {
                obj.remove("category");
            }
            let mut ids: Vec<Value> = node["childCategoryTreeNodes"]
                .as_array()
                .map(|kids| {
                    kids.iter()
                        .map(|k| k["category"]["categoryId"].clone())
                        .collect()
                })
                .unwrap_or_default();
            if rng.one_in(3) {
                ids.push(json!("9355"));
            }
            node["childCategoryIds"] = Value::Array(ids);
            format!("contract shape at {p}")
        }
        12 => {
            // A chain of up to 40 levels below a node (deeper than MAX_LEVEL at times).
            let n = 1 + rng.below(40);
            let mut chain = json!({"category": {"categoryId": "900000000", "categoryName": "Deep"},
                "leafCategoryTreeNode": true});
            for k in 1..n {
                chain = json!({"category": {"categoryId": (900_000_000 + k).to_string(),
                    "categoryName": "Deep"}, "childCategoryTreeNodes": [chain]});
            }
            let node = node_mut(answer, &p);
            node["leafCategoryTreeNode"] = json!(false);
            push_child(node, chain);
            format!("chain of {n} below {p}")
        }
        13 => {
            // Move a subtree (valid when it lands below a non-leaf outside itself).
            if p != "/rootCategoryNode" && !q.starts_with(p.as_str()) {
                let moved = node_mut(answer, &p).clone();
                *node_mut(answer, &p) = Value::Null;
                push_child(node_mut(answer, &q), moved);
                strip_nulls(&mut answer["rootCategoryNode"]);
                return format!("move {p} below {q}");
            }
            format!("no move of {p}")
        }
        14 => {
            if let Some(first) = node_mut(answer, &p)["childCategoryTreeNodes"]
                .as_array()
                .and_then(|k| k.first().cloned())
            {
                push_child(node_mut(answer, &p), first);
            }
            format!("repeat a child of {p}")
        }
        15 => {
            let id = rng
                .pick(&[json!("3"), json!(3), json!("4294967296"), json!("")])
                .clone();
            answer["categoryTreeId"] = id.clone();
            format!("categoryTreeId {id}")
        }
        16 => {
            let ids = rng
                .pick(&[json!([]), json!(["EBAY_XX"]), json!(["EBAY_GB", "EBAY_US"])])
                .clone();
            answer["applicableMarketplaceIds"] = ids.clone();
            format!("applicableMarketplaceIds {ids}")
        }
        _ => {
            // A valid change: a new name (sometimes odd, but allowed) keeps the tree accepted.
            let name = *rng.pick(&["Smartphones", "\"quoted\"", "tab\there", "Ünï", "😀", " x "]);
            node_mut(answer, &p)["category"]["categoryName"] = json!(name);
            format!("rename {p} to {name:?}")
        }
    }
}

fn node_mut<'a>(answer: &'a mut Value, p: &str) -> &'a mut Value {
    answer
        .pointer_mut(p)
        .expect("a pointer taken from this answer")
}

fn push_child(node: &mut Value, child: Value) {
    if !node["childCategoryTreeNodes"].is_array() {
        node["childCategoryTreeNodes"] = json!([]);
    }
    if let Some(kids) = node["childCategoryTreeNodes"].as_array_mut() {
        kids.push(child);
    }
}

fn strip_nulls(node: &mut Value) {
    if let Some(kids) = node
        .get_mut("childCategoryTreeNodes")
        .and_then(Value::as_array_mut)
    {
        kids.retain(|k| !k.is_null());
        kids.iter_mut().for_each(strip_nulls);
    }
}

fn provenance() -> Provenance {
    Provenance {
        language: "en-US".into(),
        taken_at: "2026-01-02".into(),
        source: "tests/it/mutation.rs".into(),
        note: Some("cut and mutated".into()),
    }
}

/// What every accepted tree must satisfy.
fn check_accepted(tree: &CategoryTree) {
    tree.validate().expect("an accepted tree is valid");
    let text = snapshot::to_string(tree);
    let reread = snapshot::parse(&text, Path::new("mutated.json")).expect("its snapshot parses");
    assert_eq!(&reread, tree, "the snapshot round trip changed the tree");
    assert_eq!(
        snapshot::to_string(&reread),
        text,
        "snapshots are deterministic"
    );
    // The tree's id may be any site's: generate it as the site it names, or the US.
    let site = Marketplace::from_tree_id(tree.meta.tree_id).unwrap_or(Marketplace::Us);
    let code = generate(&[SiteData {
        site,
        tree: Some(tree),
        expired: &[],
    }])
    .expect("every valid tree gets its tables (the perfect hash places any distinct ids)");
    assert!(
        code.contains(&format!("fingerprint: {:#018x},", fingerprint(tree))),
        "the generated tables carry the tree's fingerprint"
    );
}

/// Runs `f`, turning a panic into a failure that names the input.
fn run<T>(what: &str, i: usize, log: &[String], input: &[u8], f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(outcome) => outcome,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let shown = String::from_utf8_lossy(&input[..input.len().min(4000)]);
            panic!(
                "{what} #{i} panicked: {message}\nmutations: {log:?}\ninput ({} bytes): {shown:?}",
                input.len()
            );
        }
    }
}

#[derive(Default, Debug)]
struct Tally {
    inputs: usize,
    accepted: usize,
}

#[test]
fn tree_answers() {
    let mut rng = Rng(SEED);
    let bases: Vec<Value> = common::snapshot_sites()
        .into_iter()
        .map(|site| {
            let mut answer: Value = serde_json::from_slice(&common::saved_response(site)).unwrap();
            cut_answer(&mut answer);
            answer
        })
        .collect();
    let mut tally = Tally::default();
    for i in 0..TREE_INPUTS + bases.len() {
        let mut log = Vec::new();
        let input = if i < bases.len() {
            serde_json::to_vec(&bases[i]).unwrap()
        } else {
            let mut answer = rng.pick(&bases).clone();
            let structural = 1 + rng.below(3);
            for _ in 0..structural {
                log.push(mutate_answer(&mut rng, &mut answer));
            }
            let mut bytes = serde_json::to_vec(&answer).unwrap();
            if rng.one_in(4) {
                mutate_bytes(&mut rng, &mut bytes, &mut log);
            }
            bytes
        };
        let accepted = run("tree answer", i, &log, &input, || {
            let Ok(tree) = decode_tree(&input, &provenance()) else {
                return false;
            };
            check_accepted(&tree);
            let again = decode_tree(
                &encode_response(&tree, "https://api.example"),
                &provenance(),
            )
            .expect("its encoding decodes");
            assert_eq!(again, tree, "encode then decode changed the tree");
            true
        });
        assert!(
            accepted || i >= bases.len(),
            "the real answer {i} is accepted"
        );
        tally.inputs += 1;
        tally.accepted += usize::from(accepted);
    }
    eprintln!("getCategoryTree answers: {tally:?}");
    assert!(tally.accepted > TREE_INPUTS / 20 && tally.accepted < TREE_INPUTS / 2);
}

// ---------------------------------------------------------------------------------------------
// The snapshot format.

/// The committed tree cut to the first `BREADTH` children of every category.
fn cut_tree(tree: &CategoryTree) -> CategoryTree {
    let mut kept: Vec<Category> = Vec::new();
    let mut stack = vec![0_u32];
    while let Some(id) = stack.pop() {
        let mut c = tree.get(id).unwrap().clone();
        c.children.truncate(BREADTH);
        stack.extend(&c.children);
        kept.push(c);
    }
    kept.sort_by_key(|c| c.id);
    CategoryTree {
        meta: tree.meta.clone(),
        categories: kept,
    }
}

/// One structure-aware mutation of a snapshot's JSON; returns what it did.
fn mutate_snapshot(rng: &mut Rng, snap: &mut Value) -> String {
    let n = snap["categories"].as_array().map_or(0, Vec::len);
    if n < 3 {
        return "too small".into();
    }
    let a = 1 + rng.below(n - 1);
    let b = 1 + rng.below(n - 1);
    let id = |s: &Value, k: usize| s["categories"][k]["id"].clone();
    let cats = |s: &mut Value| s["categories"].as_array_mut().unwrap().clone();
    match rng.below(14) {
        0 => {
            let (x, y) = (id(snap, a), id(snap, b));
            snap["categories"][a]["id"] = y;
            snap["categories"][b]["id"] = x;
            format!("swap ids of lines {a} and {b}")
        }
        1 => {
            // A parent cycle: a and b name each other, and list each other as children.
            let (x, y) = (id(snap, a), id(snap, b));
            for (k, other) in [(a, &y), (b, &x)] {
                let old = snap["categories"][k]["parent"].clone();
                let me = id(snap, k);
                if let Some(p) = cats(snap).iter().position(|c| c["id"] == old) {
                    snap["categories"][p]["children"]
                        .as_array_mut()
                        .unwrap()
                        .retain(|c| *c != me);
                }
                snap["categories"][k]["parent"] = other.clone();
            }
            for (k, child) in [(a, &y), (b, &x)] {
                snap["categories"][k]["children"]
                    .as_array_mut()
                    .unwrap()
                    .push(child.clone());
                snap["categories"][k]["leaf"] = json!(false);
            }
            format!("parent cycle between lines {a} and {b}")
        }
        2 => {
            let me = id(snap, a);
            snap["categories"][a]["parent"] = me.clone();
            snap["categories"][a]["children"]
                .as_array_mut()
                .unwrap()
                .push(me);
            format!("line {a} is its own parent")
        }
        3 => {
            let child = id(snap, b);
            snap["categories"][a]["children"]
                .as_array_mut()
                .unwrap()
                .push(child);
            format!("line {a} lists line {b} as a child")
        }
        4 => {
            snap["categories"][a]["children"]
                .as_array_mut()
                .unwrap()
                .pop();
            format!("line {a} loses a child")
        }
        5 => {
            let odd = rng
                .pick(&[
                    json!(4_294_967_295_u64),
                    json!(4_294_967_296_u64),
                    json!(-1),
                    json!(1.5),
                    json!("7"),
                    Value::Null,
                ])
                .clone();
            let field = *rng.pick(&["id", "parent"]);
            snap["categories"][a][field] = odd.clone();
            format!("{field} {odd} on line {a}")
        }
        6 => {
            let arr = snap["categories"].as_array_mut().unwrap();
            arr.swap(a, b);
            format!("swap lines {a} and {b}")
        }
        7 => {
            let copy = snap["categories"][a].clone();
            snap["categories"].as_array_mut().unwrap().insert(b, copy);
            format!("line {a} again at {b}")
        }
        8 => {
            let field = *rng.pick(&["categoryCount", "leafCount", "format", "categoryTreeId"]);
            let v = snap[field].as_u64().unwrap_or(0);
            snap[field] = json!(v + 1);
            format!("{field} + 1")
        }
        9 => {
            let field = *rng.pick(&["note", "source", "takenAt", "categories"]);
            snap.as_object_mut().map(|o| o.remove(field));
            format!("remove {field}")
        }
        10 => {
            let name = *rng.pick(ODD_NAMES);
            snap["categories"][a]["name"] = json!(name);
            format!("name {name:?} on line {a}")
        }
        11 => {
            let leaf = snap["categories"][a]["leaf"].as_bool().unwrap_or(false);
            snap["categories"][a]["leaf"] = json!(!leaf);
            format!("flip leaf on line {a}")
        }
        12 => {
            snap["categories"][0]["parent"] = id(snap, a);
            format!("the root's parent is line {a}")
        }
        _ => {
            snap["categories"][a]["extra"] = json!(1);
            format!("unknown field on line {a}")
        }
    }
}

#[test]
fn snapshots() {
    let mut rng = Rng(SEED ^ 1);
    // The two smaller committed snapshots keep the test quick in a debug build.
    let bases: Vec<(CategoryTree, String)> = [Marketplace::Au, Marketplace::Gb]
        .iter()
        .map(|&site| {
            let cut = cut_tree(&common::committed(site));
            let text = snapshot::to_string(&cut);
            (cut, text)
        })
        .collect();
    let mut tally = Tally::default();
    for i in 0..SNAPSHOT_INPUTS + bases.len() {
        let mut log = Vec::new();
        let input = if i < bases.len() {
            bases[i].1.clone().into_bytes()
        } else {
            let (_, text) = rng.pick(&bases);
            let mut bytes = if rng.one_in(3) {
                text.clone().into_bytes()
            } else {
                // Mutate the parsed JSON, then write it back one category a line.
                let mut snap: Value = serde_json::from_str(text).unwrap();
                for _ in 0..1 + rng.below(2) {
                    log.push(mutate_snapshot(&mut rng, &mut snap));
                }
                serde_json::to_vec_pretty(&snap).unwrap()
            };
            if log.is_empty() || rng.one_in(3) {
                mutate_bytes(&mut rng, &mut bytes, &mut log);
            }
            bytes
        };
        let accepted = run("snapshot", i, &log, &input, || {
            let Ok(text) = std::str::from_utf8(&input) else {
                return false;
            };
            let Ok(tree) = snapshot::parse(text, Path::new("mutated.json")) else {
                return false;
            };
            check_accepted(&tree);
            true
        });
        assert!(
            accepted || i >= bases.len(),
            "the committed snapshot {i} is accepted"
        );
        tally.inputs += 1;
        tally.accepted += usize::from(accepted);
    }
    eprintln!("snapshots: {tally:?}");
    assert!(tally.accepted > SNAPSHOT_INPUTS / 50 && tally.accepted < SNAPSHOT_INPUTS / 2);
}

// ---------------------------------------------------------------------------------------------
// Consent redirects (and, through refusals, the sanitizer).

const STATE: &str = "q7Yb3vXK0c9mZ2pL";
const CODE: &str = "v^1.1#i^1#p^3#r^1#f^0#I^3#t^Ul41XzA6";

/// Percent-encodes every byte outside the unreserved set (as form encoders do).
fn pct(s: &str) -> String {
    form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

fn redirects() -> Vec<String> {
    let (state, code) = (pct(STATE), pct(CODE));
    vec![
        format!("https://example.com/accepted?state={state}&code={code}&expires_in=299"),
        format!("?state={state}&code={code}"),
        format!("code={code}&state={state}"),
        format!("My_Company-MyApp-PRD-abcdefg?code={code}&state={state}#done"),
        format!(
            "https://example.com/declined?state={state}&error=access_denied&error_description=user+said+no"
        ),
        // The refusal's description quotes the code and state, encoded once more than the
        // query's own encoding (percent, JSON-escaped percent, raw).
        format!(
            "state={state}&code={code}&error=invalid_request&error_description={}",
            pct(&format!(
                "state {STATE} code {code} json {}",
                code.replace('%', "\\u0025")
            ))
        ),
        format!(
            "https://example.com/x?error=server_error&state={state}&code={code}&error_description={}",
            pct(&format!("{{\"code\":\"{}\"}}", CODE.replace('/', "\\/")))
        ),
    ]
}

/// The query `parse_redirect` reads: a full URL's, the text after `?`, or all of it.
fn query_of(input: &str) -> Option<String> {
    let input = input.trim();
    if input.contains("://") {
        Some(Url::parse(input).ok()?.query()?.to_owned())
    } else {
        Some(input.split_once('?').map_or(input, |(_, q)| q).to_owned())
    }
}

fn param(query: &str, key: &str) -> Option<String> {
    form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.into_owned())
}

/// A secret the sanitizer must have removed: 4 bytes or more (shorter ones are not searched
/// for), and made of characters that neither `[redacted]` nor a `\u{…}` escape contains.
fn checkable(secret: &str) -> bool {
    const LEFT_OUT: &str = "[]redactun{}\\…<>";
    secret.len() >= 4
        && !secret
            .chars()
            .any(|c| LEFT_OUT.contains(c) || c.is_control() || !c.is_ascii())
        && !secret.bytes().all(|b| b.is_ascii_hexdigit())
}

fn check_sanitized(text: &str, secrets: &[String]) {
    assert!(
        !text.chars().any(char::is_control),
        "control character in {text:?}"
    );
    assert!(text.len() <= MAX_BODY_IN_ERROR + "…[truncated]".len());
    for s in secrets.iter().filter(|s| checkable(s)) {
        assert!(!text.contains(s.as_str()), "{s:?} survived in {text:?}");
    }
}

fn mutate_redirect(rng: &mut Rng, input: &mut String) -> String {
    match rng.below(6) {
        0 => {
            let extra = rng.pick(&["&code=again", "&state=other", "&error=x", "&expires_in=-5"]);
            input.push_str(extra);
            format!("append {extra}")
        }
        1 => {
            let key = *rng.pick(&["code=", "state=", "error=", "?"]);
            if let Some(at) = input.find(key) {
                input.replace_range(at..at + key.len(), "");
            }
            format!("drop {key:?}")
        }
        2 => {
            let odd = *rng.pick(&[
                "%", "%zz", "%C3", "%FF", "#", "?", "&&", "==", "+", "://", "\u{202e}",
            ]);
            let mut at = rng.below(input.len() + 1);
            while !input.is_char_boundary(at) {
                at -= 1;
            }
            input.insert_str(at, odd);
            format!("insert {odd:?} at {at}")
        }
        3 => {
            *input = pct(input);
            "percent-encode it all".into()
        }
        4 => {
            let scheme = *rng.pick(&["http://", "ftp://", "https://[::1", "://", "https://u:p@"]);
            *input = format!("{scheme}{input}");
            format!("prefix {scheme:?}")
        }
        _ => {
            // A refusal whose description quotes a secret, encoded once more.
            let secret = if rng.one_in(2) { STATE } else { CODE };
            let layer = match rng.below(3) {
                0 => secret.to_owned(),
                1 => pct(secret),
                _ => pct(secret).replace('%', "\\u0025"),
            };
            input.push_str(&format!("&error=denied&error_description={}", pct(&layer)));
            "a refusal quoting a secret".into()
        }
    }
}

#[test]
fn consent_redirects() {
    let mut rng = Rng(SEED ^ 2);
    let bases = redirects();
    let mut tally = Tally::default();
    let mut refusals = 0;
    for i in 0..REDIRECT_INPUTS + bases.len() {
        let mut log = Vec::new();
        let input = if i < bases.len() {
            bases[i].clone()
        } else {
            let mut text = rng.pick(&bases).clone();
            for _ in 0..1 + rng.below(2) {
                log.push(mutate_redirect(&mut rng, &mut text));
            }
            let mut bytes = text.into_bytes();
            if rng.one_in(3) {
                mutate_bytes(&mut rng, &mut bytes, &mut log);
            }
            String::from_utf8_lossy(&bytes).into_owned()
        };
        let outcome = run(
            "redirect",
            i,
            &log,
            input.as_bytes(),
            || match parse_redirect(&input) {
                Ok(response) => {
                    let query = query_of(&input).expect("an accepted redirect has a query");
                    assert_eq!(
                        Some(response.code.secret().to_owned()),
                        param(&query, "code")
                    );
                    assert!(!response.code.secret().is_empty());
                    assert_eq!(
                        response.state.as_ref().map(|s| s.secret().to_owned()),
                        param(&query, "state")
                    );
                    Some(true)
                }
                Err(OAuthError::ConsentDenied {
                    code, description, ..
                }) => {
                    let query = query_of(&input).expect("a refusal was read from a query");
                    let secrets: Vec<String> = ["code", "state"]
                        .iter()
                        .filter_map(|k| param(&query, k))
                        .collect();
                    check_sanitized(code.as_str(), &secrets);
                    if let Some(d) = &description {
                        check_sanitized(d, &secrets);
                    }
                    Some(false)
                }
                Err(OAuthError::InvalidRedirect { reason }) => {
                    assert!(!reason.chars().any(char::is_control), "{reason:?}");
                    None
                }
                Err(other) => panic!("unexpected error for a redirect: {other:?}"),
            },
        );
        tally.inputs += 1;
        tally.accepted += usize::from(outcome == Some(true));
        refusals += usize::from(outcome == Some(false));
    }
    eprintln!("consent redirects: {tally:?}, {refusals} refusals");
    assert!(tally.accepted > REDIRECT_INPUTS / 20 && refusals > REDIRECT_INPUTS / 20);
}
