//! Loading a corrupted snapshot fails with an error that names the file, the line, the
//! category and the broken rule: one test per rule, each on the committed US snapshot with
//! one line changed.

use std::path::{Path, PathBuf};

use taxonomy_tree::snapshot::{self, SnapshotError};
use taxonomy_tree::tree::TreeError;

fn us_snapshot() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("snapshots/EBAY_US.json");
    std::fs::read_to_string(path).unwrap()
}

/// Replaces the line of category `id` (it must exist) with `new_line`.
fn replace_line(text: &str, id: u32, new_line: &str) -> String {
    let needle = format!("{{\"id\":{id},");
    let mut found = false;
    let out: Vec<String> = text
        .lines()
        .map(|l| {
            if l.trim_start().starts_with(&needle) {
                found = true;
                let comma = if l.ends_with(',') { "," } else { "" };
                format!("    {new_line}{comma}")
            } else {
                l.to_string()
            }
        })
        .collect();
    assert!(found, "no line for category {id}");
    out.join("\n") + "\n"
}

fn load_err(text: &str) -> SnapshotError {
    snapshot::parse(text, Path::new("snapshots/EBAY_US.json")).unwrap_err()
}

/// Asserts the error is an `Invalid` naming `id` at the line where `id` stands.
fn assert_names(err: &SnapshotError, id: u32, rule: &str) -> TreeError {
    let message = err.to_string();
    assert!(message.contains(&format!("category {id}")), "{message}");
    assert!(
        message.contains(rule),
        "expected rule {rule:?} in: {message}"
    );
    assert!(message.starts_with("snapshots/EBAY_US.json:"), "{message}");
    match err {
        SnapshotError::Invalid { line, source, .. } => {
            assert!(*line > 0, "the line should be found: {message}");
            assert_eq!(source.category_id(), Some(id));
            source.clone()
        }
        other => panic!("expected a structural error, got {other:?}"),
    }
}

#[test]
fn the_committed_snapshot_loads() {
    let tree = snapshot::parse(&us_snapshot(), Path::new("EBAY_US.json")).unwrap();
    assert_eq!((tree.len(), tree.leaf_count()), (17_104, 15_111));
}

#[test]
fn duplicate_id() {
    let text = us_snapshot().replacen(
        "    {\"id\":852,",
        "    {\"id\":852,\"name\":\"Fountain\",\"parent\":36,\"leaf\":true,\"children\":[]},\n    {\"id\":852,",
        1,
    );
    let err = load_err(&text);
    assert!(matches!(
        assert_names(&err, 852, "ids are unique"),
        TreeError::DuplicateId { id: 852 }
    ));
}

#[test]
fn unsorted() {
    let text = us_snapshot();
    let a = text.lines().find(|l| l.contains("{\"id\":852,")).unwrap();
    let b = text.lines().find(|l| l.contains("{\"id\":853,")).unwrap();
    let swapped = text.replace(a, "@@A@@").replace(b, a).replace("@@A@@", b);
    let err = load_err(&swapped);
    assert!(matches!(
        assert_names(&err, 852, "sorted by id"),
        TreeError::NotSorted {
            id: 852,
            previous: 853
        }
    ));
}

#[test]
fn missing_parent() {
    let text = replace_line(
        &us_snapshot(),
        9355,
        r#"{"id":9355,"name":"Cell Phones & Smartphones","parent":999999,"leaf":true,"children":[]}"#,
    );
    let err = load_err(&text);
    assert!(matches!(
        assert_names(&err, 9355, "every parent exists"),
        TreeError::MissingParent {
            id: 9355,
            parent: 999_999
        }
    ));
}

#[test]
fn missing_child() {
    let text = replace_line(
        &us_snapshot(),
        15032,
        r#"{"id":15032,"name":"Cell Phones & Accessories","parent":0,"leaf":false,"children":[9355,9394,38331,43304,45065,136699,146492,175744,178893,182064,182073,999999]}"#,
    );
    let err = load_err(&text);
    assert!(matches!(
        assert_names(&err, 15032, "every child exists"),
        TreeError::MissingChild {
            id: 15032,
            child: 999_999
        }
    ));
}

#[test]
fn parent_does_not_list_child() {
    let text = replace_line(
        &us_snapshot(),
        9355,
        r#"{"id":9355,"name":"Cell Phones & Smartphones","parent":1,"leaf":true,"children":[]}"#,
    );
    let err = load_err(&text);
    assert!(matches!(
        assert_names(&err, 9355, "parent and child agree"),
        TreeError::NotListedByParent {
            id: 9355,
            parent: 1
        }
    ));
}

#[test]
fn child_names_another_parent() {
    // 36 lists 852, but 852 says its parent is 34; 34 is made to list 852 too.
    let text = us_snapshot();
    let line_34 = text.lines().find(|l| l.contains("{\"id\":34,")).unwrap();
    let text = text.replace(
        line_34,
        &line_34.replacen("\"children\":[", "\"children\":[852,", 1),
    );
    let text = replace_line(
        &text,
        852,
        r#"{"id":852,"name":"Fountain","parent":34,"leaf":true,"children":[]}"#,
    );
    let err = load_err(&text);
    assert!(matches!(
        assert_names(&err, 36, "parent and child agree"),
        TreeError::ChildDisagrees {
            id: 36,
            child: 852,
            ..
        }
    ));
}

#[test]
fn a_second_root() {
    let text = replace_line(
        &us_snapshot(),
        9355,
        r#"{"id":9355,"name":"Cell Phones & Smartphones","parent":null,"leaf":true,"children":[]}"#,
    );
    let err = load_err(&text);
    assert!(matches!(
        assert_names(&err, 9355, "exactly one root"),
        TreeError::BadRoot { id: 9355, .. }
    ));
}

#[test]
fn no_root() {
    let text = us_snapshot();
    let root = text
        .lines()
        .find(|l| l.contains("{\"id\":0,"))
        .unwrap()
        .to_string()
        + "\n";
    let err = load_err(&text.replacen(&root, "", 1));
    let message = err.to_string();
    assert!(message.contains("no root"), "{message}");
    assert!(matches!(
        err,
        SnapshotError::Invalid {
            source: TreeError::NoRoot,
            ..
        }
    ));
}

#[test]
fn cycle() {
    // 852 and 853 become each other's parent and child, cut off from the root.
    let text = us_snapshot();
    let line_36 = text.lines().find(|l| l.contains("{\"id\":36,")).unwrap();
    let text = text.replace(line_36, &line_36.replacen("852,853,", "", 1));
    let text = replace_line(
        &text,
        852,
        r#"{"id":852,"name":"Fountain","parent":853,"leaf":false,"children":[853]}"#,
    );
    let text = replace_line(
        &text,
        853,
        r#"{"id":853,"name":"Canada Dry","parent":852,"leaf":false,"children":[852]}"#,
    );
    let err = load_err(&text);
    let rule = assert_names(&err, 852, "no cycles");
    assert!(err.to_string().contains("852 → 853 → 852"), "{err}");
    assert!(matches!(rule, TreeError::Cycle { id: 852, .. }));
}

#[test]
fn leaf_with_children() {
    let text = replace_line(
        &us_snapshot(),
        15032,
        r#"{"id":15032,"name":"Cell Phones & Accessories","parent":0,"leaf":true,"children":[9355,9394,38331,43304,45065,136699,146492,175744,178893,182064,182073]}"#,
    );
    let err = load_err(&text);
    assert!(matches!(
        assert_names(&err, 15032, "leaf exactly when no children"),
        TreeError::LeafWithChildren {
            id: 15032,
            children: 11
        }
    ));
}

#[test]
fn non_leaf_without_children() {
    let text = replace_line(
        &us_snapshot(),
        9355,
        r#"{"id":9355,"name":"Cell Phones & Smartphones","parent":15032,"leaf":false,"children":[]}"#,
    );
    let err = load_err(&text);
    assert!(matches!(
        assert_names(&err, 9355, "leaf exactly when no children"),
        TreeError::NonLeafWithoutChildren { id: 9355 }
    ));
}

#[test]
fn empty_name() {
    let text = replace_line(
        &us_snapshot(),
        9355,
        r#"{"id":9355,"name":" ","parent":15032,"leaf":true,"children":[]}"#,
    );
    let err = load_err(&text);
    assert_names(&err, 9355, "names are non-empty");
}

#[test]
fn truncated_file_is_a_syntax_error_with_position() {
    let text = us_snapshot();
    let err = load_err(&text[..text.len() / 2]);
    let message = err.to_string();
    assert!(matches!(err, SnapshotError::Syntax { .. }), "{message}");
    assert!(message.contains("line"), "{message}");
}

#[test]
fn header_counts_must_match() {
    let text = us_snapshot().replacen("\"leafCount\": 15111", "\"leafCount\": 15112", 1);
    let message = load_err(&text).to_string();
    assert!(
        message.contains("leafCount is 15112 but the categories give 15111"),
        "{message}"
    );
}

#[test]
fn unknown_format_is_refused() {
    let text = us_snapshot().replacen("\"format\": 1,", "\"format\": 2,", 1);
    let message = load_err(&text).to_string();
    assert!(message.contains("format 2 is not supported"), "{message}");
}

#[test]
fn rendering_is_the_inverse_of_parsing() {
    let text = us_snapshot();
    let tree = snapshot::parse(&text, Path::new("EBAY_US.json")).unwrap();
    assert!(snapshot::to_string(&tree) == text);
}

#[test]
fn a_name_with_the_path_separator() {
    let text = replace_line(
        &us_snapshot(),
        9355,
        r#"{"id":9355,"name":"Phones > Smart","parent":15032,"leaf":true,"children":[]}"#,
    );
    let err = load_err(&text);
    assert_names(&err, 9355, "contain no `>`");
}

#[test]
fn a_tree_deeper_than_the_limit() {
    use taxonomy_tree::tree::{Category, CategoryTree, MAX_LEVEL, TreeMeta};
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
    let tree = CategoryTree {
        meta: TreeMeta {
            tree_id: 0,
            marketplace_id: "EBAY_US".into(),
            language: "en-US".into(),
            version: "1".into(),
            taken_at: "2026-01-01".into(),
            source: "test".into(),
            note: None,
            complete: true,
        },
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
}
