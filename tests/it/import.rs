//! `cargo run --bin snapshot -- import`: the committed snapshots are exactly what importing the
//! saved responses gives, changes are summarised, and a bad input never touches the files.

use crate::common;

use std::process::Command;

use marketplaces::Marketplace;
use taxonomy_tree::encode::encode_response;
use taxonomy_tree::pipeline;

fn snapshot_bin() -> Command {
    common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
}

#[test]
fn importing_the_saved_responses_reproduces_the_committed_snapshots_byte_for_byte() {
    for site in common::snapshot_sites() {
        let committed = common::committed(site);
        let mut tree = taxonomy_tree::decode::decode_tree(
            &common::saved_response(site),
            &common::provenance_of(&committed),
        )
        .unwrap();
        // As `snapshot import --partial` does for the AU file, cut to four levels.
        tree.meta.complete = committed.meta.complete;
        let prepared =
            pipeline::prepare_tree(tree, "saved response", &common::snapshots_dir()).unwrap();
        assert!(
            !prepared.changed,
            "{site}: a re-import would change the committed snapshot"
        );
        assert!(prepared.diff.as_ref().unwrap().is_empty(), "{site}");
    }
}

#[test]
fn import_writes_a_snapshot_and_reports_a_removed_category() {
    let dir = common::copy_of_snapshots();
    // Leaf 853 removed from its parent 36.
    let tree = common::without(common::committed(Marketplace::Us), 853);
    let response = dir.path().join("us.json");
    std::fs::write(&response, encode_response(&tree, "http://127.0.0.1:1")).unwrap();
    let out = snapshot_bin()
        .args(["import", "--taken-at", "2026-11-22", "--source", "test"])
        .arg(&response)
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("EBAY_US: 17103 categories"), "{stdout}");
    assert!(stdout.contains("1 removed: 853"), "{stdout}");
    let written = taxonomy_tree::snapshot::read(&dir.path().join("EBAY_US.json")).unwrap();
    assert!(written.get(853).is_none());
    assert_eq!(written.meta.taken_at, "2026-11-22");
    // No temporary file is left behind.
    let names: Vec<String> = common::dir_bytes(dir.path())
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(names.iter().all(|n| !n.starts_with('.')), "{names:?}");
}

#[test]
fn a_bad_file_among_good_ones_changes_nothing() {
    let dir = common::copy_of_snapshots();
    let before = common::dir_bytes(dir.path());
    let good = common::without(common::committed(Marketplace::Gb), 9355);
    let good_path = dir.path().join("gb.json");
    std::fs::write(&good_path, encode_response(&good, "http://127.0.0.1:1")).unwrap();
    let body = common::saved_response(Marketplace::Au);
    let bad_path = dir.path().join("au-truncated.json");
    std::fs::write(&bad_path, &body[..body.len() - 100]).unwrap();
    let out = snapshot_bin()
        .arg("import")
        .arg(&good_path)
        .arg(&bad_path)
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("au-truncated.json"), "{stderr}");
    assert!(stderr.contains("not a category tree"), "{stderr}");
    std::fs::remove_file(&good_path).unwrap();
    std::fs::remove_file(&bad_path).unwrap();
    assert!(
        common::dir_bytes(dir.path()) == before,
        "the snapshots changed"
    );
}

#[test]
fn a_tree_of_an_unknown_site_is_refused() {
    let dir = common::copy_of_snapshots();
    let mut tree = common::committed(Marketplace::Au);
    tree.meta.tree_id = 9;
    let path = dir.path().join("nine.json");
    std::fs::write(&path, encode_response(&tree, "http://127.0.0.1:1")).unwrap();
    let out = snapshot_bin()
        .arg("import")
        .arg(&path)
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("category tree 9 is not the tree of a known marketplace"),
        "{stderr}"
    );
}

#[test]
fn verify_checks_every_committed_snapshot() {
    // Run in the repository root without `--dir`: the default, ./snapshots.
    let out = snapshot_bin()
        .current_dir(common::root().canonicalize().unwrap())
        .arg("verify")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}");
    let used = format!(
        "snapshots: {} (from the default, ./snapshots)",
        common::snapshots_dir().canonicalize().unwrap().display()
    );
    assert!(stderr.contains(&used), "{stderr}");
    for line in [
        "EBAY_US: 17104 categories, 15111 leaves",
        "EBAY_GB: 12509 categories, 11171 leaves",
        "EBAY_DE: 18057 categories, 15786 leaves",
        "EBAY_AU: 10123 categories, 9001 leaves",
    ] {
        assert!(stdout.contains(line), "{line} missing from {stdout}");
    }
}

#[test]
fn two_files_of_one_site_are_refused() {
    let dir = common::copy_of_snapshots();
    let before = common::dir_bytes(dir.path());
    let tree = common::committed(Marketplace::Au);
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    std::fs::write(&a, encode_response(&tree, "http://127.0.0.1:1")).unwrap();
    std::fs::write(&b, encode_response(&tree, "http://127.0.0.1:1")).unwrap();
    let out = snapshot_bin()
        .args(["import", "--taken-at", "2030-01-01"])
        .arg(&a)
        .arg(&b)
        .arg("--dir")
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("both trees of EBAY_AU"), "{stderr}");
    std::fs::remove_file(&a).unwrap();
    std::fs::remove_file(&b).unwrap();
    assert!(common::dir_bytes(dir.path()) == before);
}

/// Runs `snapshot verify` on `dir`; returns (success, stderr).
fn verify(dir: &std::path::Path) -> (bool, String) {
    let out = snapshot_bin()
        .arg("verify")
        .arg("--dir")
        .arg(dir)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn verify_of_a_directory_without_snapshots_fails() {
    let empty = tempfile::tempdir().unwrap();
    let (ok, stderr) = verify(empty.path());
    assert!(!ok);
    assert!(
        stderr.contains("holds no snapshot (EBAY_*.json) to verify"),
        "{stderr}"
    );
    let (ok, stderr) = verify(&empty.path().join("missing"));
    assert!(!ok);
    assert!(stderr.contains("holds no snapshot"), "{stderr}");
}

#[test]
fn verify_refuses_what_the_build_refuses() {
    use taxonomy_codegen::build_script::generate_for;
    // The GB tree saved as EBAY_US.json: valid in itself, but not the US tree.
    let dir = common::copy_of_snapshots();
    std::fs::copy(
        dir.path().join("EBAY_GB.json"),
        dir.path().join("EBAY_US.json"),
    )
    .unwrap();
    let build = generate_for(&[Marketplace::Us], dir.path(), Vec::new())
        .unwrap_err()
        .to_string();
    let (ok, stderr) = verify(dir.path());
    assert!(!ok, "verify passed a snapshot the build refuses: {build}");
    assert!(
        stderr.contains("EBAY_US.json: holds categoryTreeId 3"),
        "{stderr}"
    );
    let first_line = build.lines().next().unwrap();
    assert!(
        stderr.contains(first_line),
        "verify: {stderr}\nbuild: {build}"
    );

    // The US tree with another marketplace id.
    let dir = common::copy_of_snapshots();
    let us = dir.path().join("EBAY_US.json");
    let text = std::fs::read_to_string(&us).unwrap();
    std::fs::write(&us, text.replacen("\"EBAY_US\"", "\"EBAY_GB\"", 1)).unwrap();
    let build = generate_for(&[Marketplace::Us], dir.path(), Vec::new())
        .unwrap_err()
        .to_string();
    let (ok, stderr) = verify(dir.path());
    assert!(!ok, "verify passed a snapshot the build refuses: {build}");
    assert!(
        stderr.contains("holds marketplaceId \"EBAY_GB\""),
        "{stderr}"
    );
    assert!(
        stderr.contains(build.lines().next().unwrap()),
        "{stderr}\n{build}"
    );
}

#[test]
fn a_failed_rename_half_way_through_an_import_changes_no_snapshot() {
    let dir = common::copy_of_snapshots();
    let before = common::dir_bytes(dir.path());
    let us = common::without(common::committed(Marketplace::Us), 853);
    let gb = common::without(common::committed(Marketplace::Gb), 9355);
    let provenance = common::provenance_of(&us);
    let prepared: Vec<_> = [us, gb]
        .iter()
        .map(|tree| {
            pipeline::prepare(
                &encode_response(tree, "http://127.0.0.1:1"),
                "test",
                &provenance,
                dir.path(),
            )
            .unwrap()
        })
        .collect();
    // EBAY_GB.json, written second, becomes a non-empty directory: its rename fails (for
    // root too) after EBAY_US.json was replaced.
    let gb_path = dir.path().join("EBAY_GB.json");
    let gb_bytes = std::fs::read(&gb_path).unwrap();
    std::fs::remove_file(&gb_path).unwrap();
    std::fs::create_dir(&gb_path).unwrap();
    std::fs::write(gb_path.join("keep"), b"x").unwrap();
    let err =
        pipeline::commit_all(dir.path(), &prepared, pipeline::WriteWhen::AnyChange).unwrap_err();
    assert!(err.to_string().contains("EBAY_GB.json"), "{err}");
    std::fs::remove_dir_all(&gb_path).unwrap();
    std::fs::write(&gb_path, gb_bytes).unwrap();
    assert!(
        common::dir_bytes(dir.path()) == before,
        "EBAY_US.json was left replaced"
    );
}

/// Names and versions holding a control character (ESC, a newline) or a bidirectional
/// override are refused when the tree is validated, so they reach neither the snapshots nor
/// the compiled tables; the error shows them escaped, and nothing is written.
#[test]
fn import_refuses_control_and_bidi_characters_in_names_and_versions() {
    let cases: [(&str, &str, &str); 5] = [
        (
            "name",
            "\u{1b}[31mFountain",
            "category 852: name \"\\u{1b}[31mFountain\"",
        ),
        (
            "name",
            "Fountain\u{202e}txt.exe",
            "category 852: name \"Fountain\\u{202e}txt.exe\"",
        ),
        (
            "name",
            "Fountain\nDrinks",
            "category 852: name \"Fountain\\nDrinks\"",
        ),
        ("name", "Fountain\u{2066}Drinks", "category 852: name"),
        (
            "version",
            "135\u{1b}[2J\u{1b}]0;owned\u{7}",
            "categoryTreeVersion \"135\\u{1b}[2J",
        ),
    ];
    for (field, value, message) in cases {
        let dir = common::copy_of_snapshots();
        let before = common::dir_bytes(dir.path());
        let mut tree = common::committed(Marketplace::Us);
        match field {
            "name" => {
                tree.categories
                    .iter_mut()
                    .find(|c| c.id == 852)
                    .unwrap()
                    .name = value.into()
            }
            _ => tree.meta.version = value.into(),
        }
        let responses = tempfile::tempdir().unwrap();
        let response = responses.path().join("us.json");
        std::fs::write(&response, encode_response(&tree, "http://127.0.0.1:1")).unwrap();
        let out = snapshot_bin()
            .arg("import")
            .arg(&response)
            .arg("--dir")
            .arg(dir.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{value:?} imported: {stdout}");
        assert!(stderr.contains(message), "{value:?}: {stderr}");
        for c in ['\u{1b}', '\u{7}', '\u{202e}', '\u{2066}'] {
            assert!(
                !stderr.contains(c) && !stdout.contains(c),
                "{value:?}: {c:?} was printed raw: {stderr}"
            );
        }
        assert!(
            common::dir_bytes(dir.path()) == before,
            "{value:?}: a file changed"
        );
    }
}

/// `snapshot verify | head -0`: the reader is gone before the first line. The command ends
/// quietly as a process killed by SIGPIPE would (status 141), not with a panic (101).
#[test]
fn verify_into_a_closed_pipe_ends_quietly() {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let out = snapshot_bin()
        .current_dir(common::root().canonicalize().unwrap())
        .arg("verify")
        .stdout(writer)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(!stderr.contains("error"), "{stderr}");
    assert_eq!(out.status.code(), Some(141), "{stderr}");
}

/// `verify` checks each condition-policy file against its tree as the build does: a valid
/// one is summed up (and a made-up one said so), one that breaks a rule fails naming the file
/// and the policy, and a site without one says how to get it.
#[test]
fn verify_checks_the_condition_policies_beside_each_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        common::snapshots_dir().join("EBAY_US.json"),
        dir.path().join("EBAY_US.json"),
    )
    .unwrap();
    std::fs::copy(
        common::snapshots_dir().join("EBAY_GB.json"),
        dir.path().join("EBAY_GB.json"),
    )
    .unwrap();
    let verify = || {
        let out = snapshot_bin()
            .args(["verify", "--dir"])
            .arg(dir.path())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (out.status.code(), stdout, stderr)
    };
    let (code, stdout, _) = verify();
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains("  condition policies: none (`snapshot refresh` with credentials writes EBAY_US.conditions.json)"),
        "{stdout}"
    );

    let us = dir.path().join("EBAY_US.json");
    let tree = taxonomy_tree::snapshot::read(&us).unwrap();
    let rule = |condition| taxonomy_tree::conditions::ConditionRule {
        required: true,
        conditions: vec![taxonomy_tree::conditions::ConditionEntry {
            condition,
            descriptors: vec![],
        }],
    };
    let path = taxonomy_tree::conditions::path_beside(&us);
    let (file, _) = taxonomy_tree::conditions::from_answer(
        [
            (9355, rule(marketplaces::Condition::New)),
            (179, rule(marketplaces::Condition::UsedGood)),
        ],
        &tree,
        "written by tests/it/import.rs",
        true,
        &path,
    )
    .unwrap();
    let text = taxonomy_tree::conditions::to_string(&file);
    std::fs::write(&path, &text).unwrap();
    let (code, stdout, _) = verify();
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains("  condition policies: 2 distinct for 2 leaves (made up by a fake marketplace: never commit them)"),
        "{stdout}"
    );

    // 58058 has children: the policy that names it breaks a rule.
    std::fs::write(&path, text.replace("[179]", "[58058]")).unwrap();
    let (code, stdout, stderr) = verify();
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "EBAY_US.conditions.json: policy 1: category 58058 is not a leaf of the tree"
        ),
        "{stderr}"
    );
}

/// `verify` refuses a committed condition-policy file holding more than eBay's data can
/// (`taxonomy_tree::conditions::MAX_POLICIES`: 2,000 distinct policies), naming the file,
/// the bound and the figure, as the build refuses it.
#[test]
fn verify_refuses_a_condition_policy_file_above_the_bound() {
    use taxonomy_tree::conditions::{
        self, ConditionEntry, ConditionRule, ConditionsFile, DescriptorEntry, PolicyGroup,
    };
    let dir = tempfile::tempdir().unwrap();
    let us = dir.path().join("EBAY_US.json");
    std::fs::copy(common::snapshots_dir().join("EBAY_US.json"), &us).unwrap();
    let tree = taxonomy_tree::snapshot::read(&us).unwrap();
    // 2,001 leaves, each its own policy: a free-text descriptor of its own maximum length.
    let policies = tree
        .categories
        .iter()
        .filter(|c| c.leaf)
        .take(2_001)
        .zip(1..)
        .map(|(leaf, n)| PolicyGroup {
            rule: ConditionRule {
                required: true,
                conditions: vec![ConditionEntry {
                    condition: marketplaces::Condition::New,
                    descriptors: vec![DescriptorEntry {
                        id: 27503,
                        name: "Certification Number".into(),
                        required: false,
                        multiple: false,
                        free_text: true,
                        max_length: Some(n),
                        values: vec![],
                        requires: vec![],
                    }],
                }],
            },
            category_ids: vec![leaf.id],
        })
        .collect();
    let file = ConditionsFile {
        tree_id: tree.meta.tree_id,
        marketplace_id: tree.meta.marketplace_id.clone(),
        version: tree.meta.version.clone(),
        tree_fingerprint: taxonomy_tree::expired::fingerprint(&tree),
        source: "written by tests/it/import.rs".into(),
        made_up: true,
        policies,
    };
    let path = conditions::path_beside(&us);
    std::fs::write(&path, conditions::to_string(&file)).unwrap();
    let out = snapshot_bin()
        .args(["verify", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{}: policy 0: distinct policies: 2001, above the bound of 2000",
            path.display()
        )),
        "{stderr}"
    );
}
