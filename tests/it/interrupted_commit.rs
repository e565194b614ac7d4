//! A `snapshot refresh` or `snapshot import` killed (SIGKILL) at any rename of its commit
//! leaves a directory that builds: each site's tree and expired-category file agree, or the
//! file is out of step with the tree, which the build and `verify` pass over with a warning
//! and `refresh` reports as stale and repairs. The next run removes the killed run's
//! temporary files.
//!
//! The process is stopped by the commit's test hook (`TAXONOMY_TEST_STOP_AFTER_RENAMES=N`:
//! stop once N renames are done) and then killed with SIGKILL, for every N from 0 (before
//! the first rename) to the number of renames (after the last).
#![cfg(unix)]

use crate::common;

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use fake_marketplace::FakeMarketplace;
use marketplaces::Marketplace;
use taxonomy_codegen::build_script::generate_for;
use taxonomy_tree::encode::encode_response;
use taxonomy_tree::expired::{self, ExpiredMapping};
use taxonomy_tree::snapshot;
use taxonomy_tree::tree::CategoryTree;

/// The commit's test hook (see `taxonomy_tree::pipeline`).
const HOOK: &str = "TAXONOMY_TEST_STOP_AFTER_RENAMES";

/// An expired category of the committed US tree's version 134, mapped to 9355 ("Cell Phones
/// & Smartphones"), which the next version (135) removes: the mapping holds against 134 only.
const OLD_EXPIRED: u32 = 999_999;

fn snapshot_command(args: &[&str], dir: &Path) -> Command {
    let mut command = common::clean_command(env!("CARGO_BIN_EXE_snapshot"));
    command.args(args).arg("--dir").arg(dir);
    command
}

fn refresh_command(fake: &FakeMarketplace, args: &[&str], dir: &Path) -> Command {
    let mut all = vec!["refresh"];
    all.extend_from_slice(args);
    let mut command = snapshot_command(&all, dir);
    command
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret());
    command
}

fn run(mut command: Command) -> (String, String) {
    let out: Output = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    (stdout, stderr)
}

/// Runs `command` with the hook set to stop once `renames` renames are done, and kills it with
/// SIGKILL when it says it stopped. `false` when it finished without stopping (it had fewer
/// renames to do).
fn kill_after_renames(mut command: Command, renames: usize) -> bool {
    command
        .env(HOOK, renames.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let mut said = Vec::new();
    let mut stopped = false;
    for line in stderr.lines() {
        let line = line.unwrap();
        stopped = line.contains(HOOK);
        said.push(line);
        if stopped {
            break;
        }
    }
    if stopped {
        child.kill().unwrap(); // SIGKILL
    }
    let status = child.wait().unwrap();
    if stopped {
        assert_eq!(status.signal(), Some(9), "{said:?}");
    } else {
        assert!(status.success(), "{status:?}: {said:?}");
    }
    stopped
}

/// The files whose name starts with a dot: temporary and kept files of a commit.
fn leftovers(dir: &Path) -> Vec<String> {
    common::dir_bytes(dir)
        .into_iter()
        .map(|(name, _)| name)
        .filter(|name| name.starts_with('.'))
        .collect()
}

/// Checks that every file of `dir` but the commit's temporary ones (a dot first) is whole:
/// byte for byte its version in `old` or its version in `new` (each rename replaces a file
/// with all of its new bytes, or leaves all of its old ones), and that no other file is there.
fn assert_each_file_old_or_new(
    dir: &Path,
    old: &[(String, Vec<u8>)],
    new: &[(String, Vec<u8>)],
    what: &str,
) {
    let find = |files: &[(String, Vec<u8>)], name: &str| {
        files
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, bytes)| bytes.clone())
    };
    for (name, bytes) in common::dir_bytes(dir) {
        if name.starts_with('.') {
            continue;
        }
        let (was, will) = (find(old, &name), find(new, &name));
        assert!(
            was.is_some() || will.is_some(),
            "{what}: {name} is neither in the starting directory nor in what the run writes"
        );
        assert!(
            was.as_ref() == Some(&bytes) || will.as_ref() == Some(&bytes),
            "{what}: {name} is neither its old bytes nor its new ones (a torn file)"
        );
    }
}

/// Checks that `dir` builds: the build script's generator and `snapshot verify` accept it.
/// Returns whether verify warned of an expired-category file out of step with its tree.
fn assert_builds(dir: &Path, what: &str) -> bool {
    let sites = snapshot::sites_in(dir);
    if let Err(e) = generate_for(&sites, dir, Vec::new()) {
        panic!("{what}: the directory does not build: {e}");
    }
    let out = snapshot_command(&["verify"], dir).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{what}: verify fails: {stderr}");
    stderr.contains("out of step with the snapshot beside it")
}

/// Writes the expired-category file of `tree` (the committed US tree) mapping [`OLD_EXPIRED`]
/// to 9355, as a refresh of version 134 would have.
fn write_old_mapping(dir: &Path, tree: &CategoryTree) {
    let snapshot = dir.join("EBAY_US.json");
    let file = expired::from_answer(
        [ExpiredMapping {
            from: OLD_EXPIRED,
            to: 9355,
        }],
        tree,
        "https://api.example/get_expired_categories",
        &expired::path_beside(&snapshot),
    )
    .unwrap();
    expired::write_beside(&snapshot, &file, tree).unwrap();
}

/// The committed snapshots and the US mapping of version 134.
fn starting_directory() -> tempfile::TempDir {
    let dir = common::copy_of_snapshots();
    write_old_mapping(dir.path(), &common::committed(Marketplace::Us));
    dir
}

/// Version 135 of the US tree: 9355 and 853 removed, both expired (to 852), and
/// [`OLD_EXPIRED`] now mapped to 852.
fn us_135() -> CategoryTree {
    let mut tree = common::without(
        common::without(common::committed(Marketplace::Us), 9355),
        853,
    );
    tree.meta.version = "135".into();
    tree
}

/// A fake serving [`us_135`] with its expired categories, and an expired category for
/// Australia, whose partial snapshot is downloaded again and completed at the same version.
fn fake_with_new_versions() -> FakeMarketplace {
    let fake = FakeMarketplace::new();
    fake.set_tree(Marketplace::Us, us_135());
    fake.set_expired_categories(
        Marketplace::Us,
        vec![(853, 852), (9355, 852), (OLD_EXPIRED, 852)],
    );
    let au = common::committed(Marketplace::Au);
    let leaf = au.listable().find(|c| c.leaf).unwrap().id;
    assert!(au.get(OLD_EXPIRED).is_none());
    fake.set_expired_categories(Marketplace::Au, vec![(OLD_EXPIRED, leaf)]);
    // More than the partial copy holds (a leaf below the cut), so that the refresh completes
    // it and renames its tree too.
    fake.set_tree(Marketplace::Au, common::au_completed());
    fake
}

#[test]
fn a_refresh_killed_at_any_rename_leaves_a_directory_that_builds_and_the_next_refresh_repairs() {
    let fake = fake_with_new_versions();
    // What an uninterrupted refresh writes.
    let reference = starting_directory();
    run(refresh_command(&fake, &[], reference.path()));
    let expected = common::dir_bytes(reference.path());
    assert!(leftovers(reference.path()).is_empty());
    // What the refresh wrote is up to date; a directory repaired to the same bytes below is
    // therefore up to date too (`refresh --check` reads nothing but the directory's files and
    // the service's answers, which do not change).
    let (stdout, _) = run(refresh_command(&fake, &["--check"], reference.path()));
    assert!(stdout.contains("up to date"), "{stdout}");
    let started = common::dir_bytes(starting_directory().path());

    // One kill point: a refresh killed after `renames` renames, checked, then repaired.
    // `None` when that refresh finished before stopping (it has fewer renames to do); else
    // whether the killed run's directory was out of step.
    let kill_at = |renames: usize| -> Option<bool> {
        let dir = starting_directory();
        if !kill_after_renames(refresh_command(&fake, &[], dir.path()), renames) {
            return None;
        }
        let what = format!("killed after {renames} renames");
        assert!(
            !leftovers(dir.path()).is_empty(),
            "{what}: the kill left no temporary file"
        );
        assert_each_file_old_or_new(dir.path(), &started, &expected, &what);
        let out_of_step = assert_builds(dir.path(), &what);
        // The next refresh sees what is stale, downloads it again and finishes the commit.
        let (stdout, _) = run(refresh_command(&fake, &[], dir.path()));
        assert!(
            common::dir_bytes(dir.path()) == expected,
            "{what}: the next refresh did not repair the directory: {stdout}"
        );
        assert_eq!(leftovers(dir.path()), Vec::<String>::new(), "{what}");
        Some(out_of_step)
    };
    // The kill points are independent (a directory each; the fake answers each the same):
    // two workers take them in turn, so that this test (the slowest of the suite, CPU-bound
    // in the commands it runs) does not keep one core idle while it runs alone at the end.
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| {
                loop {
                    let renames = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let result = kill_at(renames);
                    results.lock().unwrap().push((renames, result));
                    if result.is_none() {
                        break;
                    }
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort();
    // The first kill point the refresh finished before: the number of its renames. Each
    // point below it was killed; each at or after it finished.
    let renames = results
        .iter()
        .position(|(_, result)| result.is_none())
        .expect("a refresh finished");
    assert!(
        results[..renames]
            .iter()
            .all(|(_, result)| result.is_some())
            && results[renames..]
                .iter()
                .all(|(_, result)| result.is_none()),
        "killed and finished runs interleave: {results:?}"
    );
    let out_of_step: Vec<usize> = results
        .iter()
        .filter(|(_, result)| *result == Some(true))
        .map(|(renames, _)| *renames)
        .collect();
    // US: mapping, condition policies, listing-structure policies and tree; AU: the same; GB
    // and DE (unchanged trees): their condition and listing-structure policies (the fake
    // serves policies for every site): 12 renames, killed after 0 to 12, then one run that
    // finishes.
    // Between each site's mapping and its tree, the old tree is beside the new mapping (and,
    // after the next renames, the new policies): US's 134 beside files written for 135, AU's
    // partial copy beside files written for the completed tree (same version, other
    // categories: their fingerprint tells them apart). GB's and DE's policies (renames 9 to
    // 12) go with their unchanged trees.
    assert_eq!(
        (renames, out_of_step),
        (13, vec![1, 2, 3, 5, 6, 7]),
        "(runs killed, runs whose directory was out of step)"
    );
}

#[test]
fn an_import_killed_at_any_rename_leaves_a_directory_that_builds_and_importing_again_repairs() {
    // US 135 without 853 (the version-134 mapping still holds, so it is kept, now checked
    // against 135) and GB without 9355.
    let mut us = common::without(common::committed(Marketplace::Us), 853);
    us.meta.version = "135".into();
    let gb = common::without(common::committed(Marketplace::Gb), 9355);
    let responses = tempfile::tempdir().unwrap();
    let mut args = vec![
        "import".to_string(),
        "--taken-at".into(),
        "2026-11-25".into(),
    ];
    for (name, tree) in [("us.json", &us), ("gb.json", &gb)] {
        let path = responses.path().join(name);
        std::fs::write(&path, encode_response(tree, "http://127.0.0.1:1")).unwrap();
        args.push(path.display().to_string());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();

    let reference = starting_directory();
    run(snapshot_command(&args, reference.path()));
    let expected = common::dir_bytes(reference.path());
    let started = common::dir_bytes(starting_directory().path());
    let written = snapshot::read(&reference.path().join("EBAY_US.json")).unwrap();
    let mapping = expired::read_beside(&reference.path().join("EBAY_US.json"), &written)
        .unwrap()
        .unwrap();
    assert_eq!(
        mapping.version, "135",
        "the mapping is carried to the new version"
    );

    let mut renames = 0;
    loop {
        let dir = starting_directory();
        if !kill_after_renames(snapshot_command(&args, dir.path()), renames) {
            break;
        }
        let what = format!("killed after {renames} renames");
        assert_each_file_old_or_new(dir.path(), &started, &expected, &what);
        let out_of_step = assert_builds(dir.path(), &what);
        // The US mapping, carried to 135, is beside the tree of 134.
        assert_eq!(out_of_step, renames == 1, "{what}");
        run(snapshot_command(&args, dir.path()));
        assert!(
            common::dir_bytes(dir.path()) == expected,
            "{what}: importing again did not repair the directory"
        );
        assert_eq!(leftovers(dir.path()), Vec::<String>::new(), "{what}");
        renames += 1;
    }
    // US: mapping and tree; GB: tree.
    assert_eq!(renames, 4);
}

/// The state main's commit order left when killed between a site's two renames: the new tree
/// beside the mapping of the previous version, which breaks the rule against it. The build
/// failed ("expired category 999999 is mapped to 9355, which is not a category of the tree")
/// while `refresh` said "unchanged" and exited 0.
#[test]
fn a_mapping_out_of_step_with_its_tree_builds_and_refresh_repairs_it() {
    let fake = fake_with_new_versions();
    let dir = starting_directory();
    let us_path = dir.path().join("EBAY_US.json");
    snapshot::write(&us_path, &us_135()).unwrap();
    // A killed run's temporary file, fresh.
    std::fs::write(dir.path().join(".EBAY_US.json.tmp.K1lledRun0000"), b"torn").unwrap();

    // The build and verify pass over the stale mapping, with a warning that says what to do.
    let code = generate_for(&[Marketplace::Us], dir.path(), Vec::new())
        .unwrap_or_else(|e| panic!("the directory does not build: {e}"));
    assert!(code.contains("pub(crate) static US: SiteTables"));
    let out = snapshot_command(&["verify"], dir.path()).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("EBAY_US.expired.json") && stderr.contains("snapshot refresh"),
        "{stderr}"
    );

    // --check reports it stale; refresh downloads the tree again and rewrites the mapping.
    let out = refresh_command(&fake, &["--check", "--sites", "EBAY_US"], dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("EBAY_US: to download (the expired-category file"),
        "{stdout}"
    );
    let (stdout, _) = run(refresh_command(&fake, &["--sites", "EBAY_US"], dir.path()));
    assert!(!stdout.contains("EBAY_US: unchanged"), "{stdout}");
    let tree = snapshot::read(&us_path).unwrap();
    let mapping = expired::read_beside(&us_path, &tree).unwrap().unwrap();
    assert_eq!(mapping.version, "135");
    assert_eq!(mapping.mappings.len(), 3);
    assert_eq!(leftovers(dir.path()), Vec::<String>::new());
    let (stdout, _) = run(refresh_command(
        &fake,
        &["--check", "--sites", "EBAY_US"],
        dir.path(),
    ));
    assert!(stdout.contains("up to date"), "{stdout}");
}
