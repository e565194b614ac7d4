//! A seller's own project tests against the fake marketplace with trees of its own: the fake
//! binary, started with `--trees DIR`, serves the project's trees, a marketplace this
//! repository has no snapshot for (EBAY_FR) included, and `snapshot refresh` in the project
//! downloads it (fake-marketplace/README.md).

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

/// A project's own tree of EBAY_FR (tree 71), in the snapshot format: the sample of
/// fake-marketplace/README.md (the repository commits no EBAY_FR snapshot).
fn fr_tree() -> String {
    std::fs::read_to_string(common::root().join("fake-marketplace/trees/EBAY_FR.json")).unwrap()
}

/// The fake-marketplace binary, built as a user's test harness would (`cargo build -p
/// fake-marketplace`): a test of this package has no `CARGO_BIN_EXE_` for another package's
/// binary.
fn fake_binary() -> PathBuf {
    let out = Command::new(env!("CARGO"))
        .current_dir(common::root())
        .args([
            "build",
            "--offline",
            "-p",
            "fake-marketplace",
            "--bin",
            "fake-marketplace",
            "--message-format=json",
        ])
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo build -p fake-marketplace failed"
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "fake-marketplace")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("cargo reported the fake-marketplace executable")
}

/// The fake, a child process killed on drop, and the address it printed.
struct RunningFake {
    child: Child,
    base_url: String,
}

impl Drop for RunningFake {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `fake-marketplace 0 --no-delay ARGS…`.
fn fake_command(args: &[&str]) -> Command {
    let mut command = common::clean_command(fake_binary());
    command.args(["0", "--no-delay"]).args(args);
    command
}

/// `fake-marketplace 0 --no-delay ARGS…`: its first line on stdout is its address.
fn start_fake(args: &[&str]) -> RunningFake {
    let mut child = fake_command(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base_url = line.trim().to_owned();
    if !base_url.starts_with("http://127.0.0.1:") {
        let out = child.wait_with_output().unwrap();
        panic!(
            "the fake did not start (stdout {line:?}): {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    RunningFake { child, base_url }
}

/// `snapshot ARGS…` in `cwd` against the fake (the credentials its README gives).
fn snapshot(fake: &RunningFake, cwd: &Path, args: &[&str]) -> Output {
    common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
        .current_dir(cwd)
        .args(args)
        .env("MARKETPLACE_BASE_URL", &fake.base_url)
        .env("MARKETPLACE_AUTH_URL", &fake.base_url)
        .env("MARKETPLACE_CLIENT_ID", "FakeApp-PRD-0a1b2c3d4-5e6f7a8b")
        .env("MARKETPLACE_CLIENT_SECRET", "PRD-fake cert+id%42")
        .output()
        .unwrap()
}

#[test]
fn a_project_serves_its_own_trees_and_refreshes_a_site_the_repository_lacks() {
    let project = tempfile::tempdir().unwrap();
    let project = &project.path().canonicalize().unwrap();
    let trees = project.join("trees");
    std::fs::create_dir_all(&trees).unwrap();
    std::fs::write(trees.join("EBAY_FR.json"), fr_tree()).unwrap();
    assert!(
        !common::snapshots_dir().join("EBAY_FR.json").exists(),
        "the repository has no EBAY_FR snapshot"
    );

    let fake = start_fake(&["--trees", trees.to_str().unwrap()]);
    let out = snapshot(&fake, project, &["refresh", "--sites", "EBAY_FR"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("new snapshot"), "{stdout}");

    let written = taxonomy_tree::snapshot::read_site(
        marketplaces::Marketplace::Fr,
        &project.join("snapshots"),
    )
    .unwrap();
    assert_eq!(written.meta.version, "7");
    assert_eq!(written.len(), 3);
    assert_eq!(
        written.get(9355).map(|c| c.name.as_str()),
        Some("Téléphones mobiles et smartphones")
    );
}

#[test]
fn a_malformed_tree_file_stops_the_fake_naming_the_file() {
    let trees = tempfile::tempdir().unwrap();
    std::fs::write(trees.path().join("EBAY_FR.json"), fr_tree()).unwrap();
    // The French tree under Italy's name: not Italy's tree id.
    std::fs::write(trees.path().join("EBAY_IT.json"), fr_tree()).unwrap();
    let out = fake_command(&["--trees", trees.path().to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    let file = trees.path().join("EBAY_IT.json");
    assert!(
        stderr.contains(&format!("{}: holds categoryTreeId 71", file.display())),
        "{stderr}"
    );
    assert!(stderr.contains("fix the file or remove it"), "{stderr}");

    // A directory that does not exist: said so, with what to give instead.
    let missing = trees.path().join("nowhere");
    let out = fake_command(&["--trees", missing.to_str().unwrap()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("trees directory {}", missing.display())),
        "{stderr}"
    );
}
