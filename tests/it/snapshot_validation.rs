//! Loading a corrupted snapshot fails with an error that names the file, the line, the
//! category and the broken rule: one table row per rule, each on the committed US snapshot
//! with a line or two changed; and validation stays fast, with short messages, on huge trees.

use std::path::{Path, PathBuf};

use taxonomy_tree::snapshot::{self, SnapshotError};
use taxonomy_tree::tree::{
    Category, CategoryTree, CycleChain, MAX_LEVEL, ParentName, TreeError, TreeMeta,
};

fn us_snapshot() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("snapshots/EBAY_US.json");
    std::fs::read_to_string(path).unwrap()
}

/// The line of category `id` (it must exist), without its indentation and trailing comma.
fn line(text: &str, id: u32) -> &str {
    let needle = format!("{{\"id\":{id},");
    let l = text
        .lines()
        .find(|l| l.trim_start().starts_with(&needle))
        .unwrap_or_else(|| panic!("no line for category {id}"));
    l.trim().trim_end_matches(',')
}

/// Replaces the line of category `id` (it must exist) with `new_line`.
fn replace_line(text: &str, id: u32, new_line: &str) -> String {
    let old = line(text, id).to_string();
    text.replacen(&format!("    {old}"), &format!("    {new_line}"), 1)
}

fn meta() -> TreeMeta {
    TreeMeta {
        tree_id: 0,
        marketplace_id: "EBAY_US".into(),
        language: "en-US".into(),
        version: "1".into(),
        taken_at: "2026-01-01".into(),
        source: "test".into(),
        note: None,
        complete: true,
    }
}

/// What a case must fail with.
enum Expected {
    /// A broken structural rule, exactly this error, at the line of its category.
    Rule(TreeError),
    /// Not a snapshot at all.
    Syntax,
    /// The header's counts disagree.
    Count,
}

/// One broken snapshot: its name, how it is broken, the rule its message names, and the error.
struct Case {
    name: &'static str,
    edit: fn(String) -> String,
    rule: &'static str,
    expected: Expected,
}

fn cases() -> Vec<Case> {
    use Expected::*;
    vec![
        Case {
            name: "duplicate id",
            edit: |t| {
                t.replacen(
                    "    {\"id\":852,",
                    "    {\"id\":852,\"name\":\"Fountain\",\"parent\":36,\"leaf\":true,\"children\":[]},\n    {\"id\":852,",
                    1,
                )
            },
            rule: "ids are unique",
            expected: Rule(TreeError::DuplicateId { id: 852 }),
        },
        Case {
            name: "unsorted",
            edit: |t| {
                let (a, b) = (line(&t, 852).to_string(), line(&t, 853).to_string());
                t.replace(&a, "@@A@@").replace(&b, &a).replace("@@A@@", &b)
            },
            rule: "sorted by id",
            expected: Rule(TreeError::NotSorted {
                id: 852,
                previous: 853,
            }),
        },
        Case {
            name: "id out of range",
            edit: |t| {
                let t = t.replacen(
                    "\n  ]\n}",
                    ",\n    {\"id\":4294967295,\"name\":\"Max\",\"parent\":36,\"leaf\":true,\"children\":[]}\n  ]\n}",
                    1,
                );
                t.replacen("\"categoryCount\": 17104", "\"categoryCount\": 17105", 1)
            },
            rule: "ids are below 4294967295",
            expected: Rule(TreeError::IdOutOfRange { id: u32::MAX }),
        },
        Case {
            name: "missing parent",
            edit: |t| {
                replace_line(
                    &t,
                    9355,
                    r#"{"id":9355,"name":"Cell Phones & Smartphones","parent":999999,"leaf":true,"children":[]}"#,
                )
            },
            rule: "every parent exists",
            expected: Rule(TreeError::MissingParent {
                id: 9355,
                parent: 999_999,
            }),
        },
        Case {
            name: "missing child",
            edit: |t| {
                let old = line(&t, 15032).to_string();
                t.replacen(&old, &old.replacen("]}", ",999999]}", 1), 1)
            },
            rule: "every child exists",
            expected: Rule(TreeError::MissingChild {
                id: 15032,
                child: 999_999,
            }),
        },
        Case {
            name: "a child listed twice",
            edit: |t| {
                let old = line(&t, 15032).to_string();
                t.replacen(&old, &old.replacen("]}", ",9355]}", 1), 1)
            },
            rule: "parent and child agree",
            expected: Rule(TreeError::RepeatedChild {
                id: 15032,
                child: 9355,
            }),
        },
        Case {
            name: "parent does not list child",
            edit: |t| {
                replace_line(
                    &t,
                    9355,
                    r#"{"id":9355,"name":"Cell Phones & Smartphones","parent":1,"leaf":true,"children":[]}"#,
                )
            },
            rule: "parent and child agree",
            expected: Rule(TreeError::NotListedByParent {
                id: 9355,
                parent: 1,
            }),
        },
        Case {
            // 36 lists 852, but 852 says its parent is 34; 34 is made to list 852 too.
            name: "child names another parent",
            edit: |t| {
                let old = line(&t, 34).to_string();
                let t = t.replacen(
                    &old,
                    &old.replacen("\"children\":[", "\"children\":[852,", 1),
                    1,
                );
                replace_line(
                    &t,
                    852,
                    r#"{"id":852,"name":"Fountain","parent":34,"leaf":true,"children":[]}"#,
                )
            },
            rule: "parent and child agree",
            expected: Rule(TreeError::ChildDisagrees {
                id: 36,
                child: 852,
                child_parent: ParentName(Some(34)),
            }),
        },
        Case {
            name: "a second root",
            edit: |t| {
                replace_line(
                    &t,
                    9355,
                    r#"{"id":9355,"name":"Cell Phones & Smartphones","parent":null,"leaf":true,"children":[]}"#,
                )
            },
            rule: "exactly one root",
            expected: Rule(TreeError::BadRoot {
                id: 9355,
                problem: "has no parent but is not the root",
            }),
        },
        Case {
            name: "no root",
            edit: |t| {
                let root = format!("    {},\n", line(&t, 0));
                t.replacen(&root, "", 1)
            },
            rule: "the tree has no root",
            expected: Rule(TreeError::NoRoot),
        },
        Case {
            // 852 and 853 become each other's parent and child, cut off from the root.
            name: "cycle",
            edit: |t| {
                let old = line(&t, 36).to_string();
                let t = t.replacen(&old, &old.replacen("852,853,", "", 1), 1);
                let t = replace_line(
                    &t,
                    852,
                    r#"{"id":852,"name":"Fountain","parent":853,"leaf":false,"children":[853]}"#,
                );
                replace_line(
                    &t,
                    853,
                    r#"{"id":853,"name":"Canada Dry","parent":852,"leaf":false,"children":[852]}"#,
                )
            },
            rule: "its ancestors form a cycle (852 → 853 → 852) (rule: no cycles)",
            expected: Rule(TreeError::Cycle {
                id: 852,
                chain: CycleChain {
                    first: vec![852, 853],
                    len: 2,
                },
            }),
        },
        Case {
            name: "leaf with children",
            edit: |t| {
                let old = line(&t, 15032).to_string();
                t.replacen(&old, &old.replacen("\"leaf\":false", "\"leaf\":true", 1), 1)
            },
            rule: "leaf exactly when no children",
            expected: Rule(TreeError::LeafWithChildren {
                id: 15032,
                children: 11,
            }),
        },
        Case {
            name: "non-leaf without children",
            edit: |t| {
                replace_line(
                    &t,
                    9355,
                    r#"{"id":9355,"name":"Cell Phones & Smartphones","parent":15032,"leaf":false,"children":[]}"#,
                )
            },
            rule: "leaf exactly when no children",
            expected: Rule(TreeError::NonLeafWithoutChildren { id: 9355 }),
        },
        Case {
            name: "empty name",
            edit: |t| {
                replace_line(
                    &t,
                    9355,
                    r#"{"id":9355,"name":" ","parent":15032,"leaf":true,"children":[]}"#,
                )
            },
            rule: "names are non-empty",
            expected: Rule(TreeError::BadName {
                id: 9355,
                name: " ".into(),
                problem: "is empty",
            }),
        },
        Case {
            name: "a name with the path separator",
            edit: |t| {
                replace_line(
                    &t,
                    9355,
                    r#"{"id":9355,"name":"Phones > Smart","parent":15032,"leaf":true,"children":[]}"#,
                )
            },
            rule: "contain no `>`",
            expected: Rule(TreeError::BadName {
                id: 9355,
                name: "Phones > Smart".into(),
                problem: "contains the path separator `>`",
            }),
        },
        Case {
            name: "a name with an escape sequence",
            edit: |t| {
                replace_line(
                    &t,
                    9355,
                    r#"{"id":9355,"name":"\u001b[31mPhones","parent":15032,"leaf":true,"children":[]}"#,
                )
            },
            rule: "no control and no bidirectional formatting character",
            expected: Rule(TreeError::BadName {
                id: 9355,
                name: "\u{1b}[31mPhones".into(),
                problem: "contains a control character",
            }),
        },
        Case {
            name: "a name with a newline",
            edit: |t| {
                replace_line(
                    &t,
                    9355,
                    r#"{"id":9355,"name":"Cell Phones\nSmartphones","parent":15032,"leaf":true,"children":[]}"#,
                )
            },
            rule: "no control",
            expected: Rule(TreeError::BadName {
                id: 9355,
                name: "Cell Phones\nSmartphones".into(),
                problem: "contains a control character",
            }),
        },
        Case {
            name: "a name with the right-to-left override",
            edit: |t| {
                replace_line(
                    &t,
                    9355,
                    r#"{"id":9355,"name":"Phones\u202egpj.exe","parent":15032,"leaf":true,"children":[]}"#,
                )
            },
            rule: "no bidirectional formatting character",
            expected: Rule(TreeError::BadName {
                id: 9355,
                name: "Phones\u{202e}gpj.exe".into(),
                problem: "contains a bidirectional formatting character",
            }),
        },
        Case {
            name: "a version with an escape sequence",
            edit: |t| {
                t.replacen(
                    "\"categoryTreeVersion\": \"134\",",
                    "\"categoryTreeVersion\": \"134\\u001b[2J\",",
                    1,
                )
            },
            rule: "categoryTreeVersion \"134\\u{1b}[2J\" contains a control character",
            expected: Rule(TreeError::BadVersion {
                version: "134\u{1b}[2J".into(),
                problem: "contains a control character",
            }),
        },
        Case {
            name: "truncated file",
            edit: |t| t[..t.len() / 2].to_string(),
            rule: "line",
            expected: Syntax,
        },
        Case {
            name: "header counts must match",
            edit: |t| t.replacen("\"leafCount\": 15111", "\"leafCount\": 15112", 1),
            rule: "leafCount is 15112 but the categories give 15111",
            expected: Count,
        },
        Case {
            name: "unknown format",
            edit: |t| t.replacen("\"format\": 1,", "\"format\": 2,", 1),
            rule: "format 2 is not supported",
            expected: Syntax,
        },
    ]
}

#[test]
fn every_broken_rule_is_named_with_its_file_line_and_category() {
    let original = us_snapshot();
    for case in cases() {
        let name = case.name;
        let text = (case.edit)(original.clone());
        assert_ne!(text, original, "{name}: the edit changed nothing");
        let err = snapshot::parse(&text, Path::new("snapshots/EBAY_US.json"))
            .expect_err(&format!("{name}: the broken snapshot loaded"));
        let message = err.to_string();
        assert!(
            message.starts_with("snapshots/EBAY_US.json:"),
            "{name}: {message}"
        );
        assert!(
            message.contains(case.rule),
            "{name}: expected {:?} in: {message}",
            case.rule
        );
        match (case.expected, &err) {
            (Expected::Rule(expected), SnapshotError::Invalid { line, source, .. }) => {
                assert_eq!(source, &expected, "{name}");
                if let Some(id) = expected.category_id() {
                    assert!(
                        message.contains(&format!("category {id}")),
                        "{name}: {message}"
                    );
                    let at = text.lines().nth(*line - 1).unwrap_or_default();
                    assert!(
                        at.contains(&format!("{{\"id\":{id},")),
                        "{name}: line {line} is not category {id}'s: {at}"
                    );
                }
            }
            (Expected::Syntax, SnapshotError::Syntax { .. }) => {}
            (Expected::Count, SnapshotError::CountMismatch { .. }) => {}
            (_, other) => panic!("{name}: unexpected kind of error: {other:?}"),
        }
    }
}

#[test]
fn the_committed_snapshot_loads() {
    let tree = snapshot::parse(&us_snapshot(), Path::new("EBAY_US.json")).unwrap();
    assert_eq!((tree.len(), tree.leaf_count()), (17_104, 15_111));
}

#[test]
fn rendering_is_the_inverse_of_parsing() {
    let text = us_snapshot();
    let tree = snapshot::parse(&text, Path::new("EBAY_US.json")).unwrap();
    assert!(snapshot::to_string(&tree) == text);
}

#[test]
fn a_tree_deeper_than_the_limit() {
    // A chain 0 → 1 → 2 → … one level deeper than allowed.
    let depth = MAX_LEVEL as u32 + 1;
    let categories: Vec<Category> = (0..=depth)
        .map(|id| Category {
            id,
            name: if id == 0 {
                "Root".into()
            } else {
                format!("Level {id}")
            },
            parent: id.checked_sub(1),
            leaf: id == depth,
            children: if id == depth { vec![] } else { vec![id + 1] },
        })
        .collect();
    let mut tree = CategoryTree {
        meta: meta(),
        categories,
    };
    let err = tree.validate().unwrap_err();
    assert_eq!(
        err,
        TreeError::TooDeep {
            id: depth,
            level: depth as usize
        }
    );
    assert!(err.to_string().contains("at most 32 levels"), "{err}");
    // One level less is accepted.
    tree.categories.pop();
    let last = tree.categories.last_mut().unwrap();
    last.children.clear();
    last.leaf = true;
    tree.validate().unwrap();
}

/// A root with `n` leaves under one top-level category.
fn wide(n: u32) -> CategoryTree {
    let mut categories = vec![
        Category {
            id: 0,
            name: "Root".into(),
            parent: None,
            leaf: false,
            children: vec![1],
        },
        Category {
            id: 1,
            name: "Everything".into(),
            parent: Some(0),
            leaf: false,
            children: (2..n + 2).collect(),
        },
    ];
    categories.extend((2..n + 2).map(|id| Category {
        id,
        name: format!("Leaf {id}"),
        parent: Some(1),
        leaf: true,
        children: vec![],
    }));
    CategoryTree {
        meta: meta(),
        categories,
    }
}

#[test]
fn a_long_cycle_is_reported_in_a_short_message() {
    // 40,000 categories under one parent, then the chain 2 → 3 → … → 40001 → 2 cut off.
    let n = 40_000;
    let mut tree = wide(n);
    tree.categories[1].children = vec![n + 2];
    tree.categories.push(Category {
        id: n + 2,
        name: "Kept".into(),
        parent: Some(1),
        leaf: true,
        children: vec![],
    });
    for id in 2..n + 2 {
        let c = &mut tree.categories[id as usize];
        let next = if id == n + 1 { 2 } else { id + 1 };
        c.parent = Some(next);
        c.leaf = false;
    }
    for id in 2..n + 2 {
        let previous = if id == 2 { n + 1 } else { id - 1 };
        tree.categories[id as usize].children = vec![previous];
    }
    let err = tree.validate().unwrap_err();
    let message = err.to_string();
    assert!(
        message.starts_with(
            "category 2: its ancestors form a cycle (2 → 3 → 4 → 5 → 6 → 7 → … 39994 more → 2)"
        ),
        "{message}"
    );
    assert!(message.len() < 200, "{} bytes: {message}", message.len());
}

#[test]
fn a_long_name_is_cut_in_the_message() {
    let mut tree = wide(3);
    tree.categories[2].name = format!("{}>{}", "x".repeat(50_000), "y".repeat(50_000));
    let message = tree.validate().unwrap_err().to_string();
    assert!(
        message.contains("(100001 characters)"),
        "{}",
        &message[..200.min(message.len())]
    );
    assert!(message.len() < 300, "{} bytes", message.len());
}

#[test]
fn a_wide_tree_validates_and_its_errors_name_the_offender() {
    let tree = wide(100_000);
    tree.validate().unwrap();
    // The last leaf missing from the long child list.
    let mut broken = tree.clone();
    broken.categories[1].children.pop();
    assert_eq!(
        broken.validate(),
        Err(TreeError::NotListedByParent {
            id: 100_001,
            parent: 1
        })
    );
    // The last child listed twice.
    let mut broken = tree;
    broken.categories[1].children.push(100_001);
    assert_eq!(
        broken.validate(),
        Err(TreeError::RepeatedChild {
            id: 1,
            child: 100_001
        })
    );
}
