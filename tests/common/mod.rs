//! Shared helpers of the integration tests: the committed snapshots and the saved responses.

#![allow(dead_code)]

use std::io::Read;
use std::path::{Path, PathBuf};

use marketplaces::Marketplace;
use taxonomy_tree::decode::Provenance;
use taxonomy_tree::snapshot;
use taxonomy_tree::tree::CategoryTree;

/// A command for `program` that sees none of the caller's `MARKETPLACE_*` or `TAXONOMY_*`
/// settings (nor `RUSTFLAGS`): a test gives it exactly the environment it means to.
pub fn clean_command(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if text.starts_with("MARKETPLACE_") || text.starts_with("TAXONOMY_") || text == "RUSTFLAGS"
        {
            command.env_remove(&name);
        }
    }
    command
}

/// `cargo` (the one running the tests) as [`clean_command`] gives it, and without the
/// variables cargo sets for a test (`CARGO_MANIFEST_DIR`, `CARGO_PKG_*`, `OUT_DIR`…): a build
/// script that watches one (ring's `rerun-if-env-changed=CARGO_MANIFEST_DIR`) would see it
/// changed, and the whole graph above it would be built again, in that target directory, by
/// this build and by the next one without it (60 s in CI after the tests, when a build in the
/// workspace's own target directory kept the root package's `CARGO_MANIFEST_DIR`).
pub fn cargo_command() -> std::process::Command {
    let mut cargo = clean_command(env!("CARGO"));
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if text == "OUT_DIR"
            || text.starts_with("CARGO_PKG_")
            || text.starts_with("CARGO_BIN_")
            || [
                "CARGO_MANIFEST_DIR",
                "CARGO_MANIFEST_PATH",
                "CARGO_CRATE_NAME",
                "CARGO_PRIMARY_PACKAGE",
                "CARGO_TARGET_TMPDIR",
            ]
            .contains(&text.as_ref())
        {
            cargo.env_remove(&name);
        }
    }
    cargo
}

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The marketplaces with a committed snapshot.
pub fn snapshot_sites() -> Vec<Marketplace> {
    snapshot::sites_in(&snapshots_dir())
}

/// The committed snapshots directory.
pub fn snapshots_dir() -> PathBuf {
    root().join("snapshots")
}

/// A leaf the committed US snapshot lacks: "Foldable Phones", under Cell Phones & Accessories
/// (15032).
pub const NEW_LEAF: u32 = 999_001;

/// The committed US tree with [`NEW_LEAF`], at `version`: what the service serves once a
/// category was added since the snapshot.
pub fn us_with_new_leaf(version: &str) -> CategoryTree {
    let mut tree = committed(Marketplace::Us);
    tree.categories.push(taxonomy_tree::tree::Category {
        id: NEW_LEAF,
        name: "Foldable Phones".into(),
        parent: Some(15032),
        leaf: true,
        children: vec![],
    });
    tree.categories.sort_by_key(|c| c.id);
    for c in &mut tree.categories {
        if c.id == 15032 {
            c.children.push(NEW_LEAF);
        }
    }
    tree.meta.version = version.into();
    tree
}

/// Writes a binary crate outside the workspace at `dir` (a user's project): `Cargo.toml`
/// with `dependencies` (where `{data}` and `{macros}` stand for the paths of taxonomy-data
/// and taxonomy-macros) and an empty `[workspace]`, `src/main.rs`, and the workspace's lock
/// file, so it builds with `--offline`.
pub fn write_outside_crate(dir: &Path, name: &str, dependencies: &str, main_rs: &str) {
    let root = root();
    let dependencies = dependencies
        .replace(
            "{data}",
            &format!("{:?}", root.join("taxonomy-data").display().to_string()),
        )
        .replace(
            "{macros}",
            &format!("{:?}", root.join("taxonomy-macros").display().to_string()),
        );
    let manifest = format!(
        "[package]\nname = {name:?}\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n{dependencies}\n[workspace]\n"
    );
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(dir.join("src/main.rs"), main_rs).unwrap();
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
}

/// The target directory of the projects outside the workspace (a user's listing code, the
/// README's backend, the live build's probe, a program calling the blocking API): the
/// workspace's own (where cargo built this test, whatever `CARGO_TARGET_DIR` or a config
/// says). Built with the workspace's profile ([`outside_probes_profile`]), they reuse every
/// dependency the workspace's build compiled with the same features (ring, rustls, syn,
/// serde, the ICU tables…: 184 of the 341 units they compile, in a cold CI run) and compile
/// the ones they share among themselves once (the live build's script, the backend and the
/// blocking program compile the same HTTP stack). Their builds take turns
/// ([`outside_probes_turn`]): a project with its own snapshots directory makes the next one's
/// build run taxonomy-data's build script again, and the live build's tests share its build
/// cache and its probe's executable (one test's build would reuse the tree another test's
/// fake served).
pub fn outside_probes_target() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is the target directory's tmp")
        .to_path_buf()
}

/// The turn of a test building a project outside the workspace in [`outside_probes_target`]
/// (within one test binary: every such test is in the root package's `tests/it`; the
/// workspace's own cargo runs there wait for cargo's lock, not for this turn).
pub fn outside_probes_turn() -> std::sync::MutexGuard<'static, ()> {
    static TURN: std::sync::Mutex<()> = std::sync::Mutex::new(());
    TURN.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The workspace's dev profile (the `[profile.dev…]` tables of its Cargo.toml) as `--config`
/// arguments, for a project outside the workspace, which does not read them: built with the
/// same profile, it reuses what the workspace built in the same target directory (the
/// dependencies without debug info, the optimized JSON parser…), and builds as fast.
pub fn workspace_dev_profile() -> Vec<String> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml")).unwrap();
    let mut args = Vec::new();
    let mut table = None;
    for line in manifest.lines().map(str::trim) {
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            table = header.starts_with("profile.dev").then_some(header);
        } else if let (Some(table), Some((key, value))) = (table, line.split_once('='))
            && !line.starts_with('#')
        {
            args.push("--config".to_owned());
            args.push(format!("{table}.{}={}", key.trim(), value.trim()));
        }
    }
    assert!(!args.is_empty(), "Cargo.toml has no [profile.dev…] setting");
    args
}

/// [`workspace_dev_profile`] for a build in [`outside_probes_target`], but taxonomy-data
/// unoptimized (`opt-level = 0`): nearly every build there compiles taxonomy-data's generated
/// tables again, twice (the macro's and the program's), because an input of its build script
/// changed since the previous one (`TAXONOMY_SITES`, `TAXONOMY_SNAPSHOTS_DIR`, the live
/// build's settings), and the probes only run a few lookups. The workspace's own builds keep
/// `opt-level = 2` (its quality test searches every leaf).
pub fn outside_probes_profile() -> Vec<String> {
    let workspace = workspace_dev_profile();
    let optimized = "profile.dev.package.taxonomy-data.opt-level=2";
    assert!(
        workspace.iter().any(|arg| arg == optimized),
        "Cargo.toml no longer sets {optimized}: {workspace:?}"
    );
    workspace
        .into_iter()
        .map(|arg| {
            if arg == optimized {
                "profile.dev.package.taxonomy-data.opt-level=0".to_owned()
            } else {
                arg
            }
        })
        .collect()
}

/// `cargo build --offline --verbose` of a crate written by [`write_outside_crate`] into
/// `target`, with none of the caller's `MARKETPLACE_*`/`TAXONOMY_*` settings but `env`; in
/// [`outside_probes_target`] with [`outside_probes_profile`], elsewhere with
/// [`workspace_dev_profile`].
pub fn build_outside_crate(
    project: &Path,
    target: &Path,
    env: &[(&str, &str)],
) -> std::process::Output {
    let profile = if target == outside_probes_target() {
        outside_probes_profile()
    } else {
        workspace_dev_profile()
    };
    let mut command = cargo_command();
    command
        .current_dir(project)
        .args(["build", "--offline", "--verbose"])
        .args(profile)
        .env("CARGO_TARGET_DIR", target);
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// The committed snapshot of a site.
pub fn committed(site: Marketplace) -> CategoryTree {
    snapshot::read(&snapshots_dir().join(site.snapshot_file_name())).unwrap()
}

/// The saved get-category-tree response of a site (`tests/fixtures/trees/N.json.gz`).
pub fn saved_response(site: Marketplace) -> Vec<u8> {
    let path = root().join(format!("tests/fixtures/trees/{}.json.gz", site.tree_id()));
    let file = std::fs::File::open(&path).unwrap();
    let mut body = Vec::new();
    flate2::read::GzDecoder::new(file)
        .read_to_end(&mut body)
        .unwrap();
    body
}

/// The provenance recorded in a committed snapshot.
pub fn provenance_of(tree: &CategoryTree) -> Provenance {
    Provenance {
        language: tree.meta.language.clone(),
        taken_at: tree.meta.taken_at.clone(),
        source: tree.meta.source.clone(),
        note: tree.meta.note.clone(),
    }
}

/// Runs `snapshot SUBCOMMAND ARGS --dir DIR` against `fake`: its hosts and credentials, in an
/// environment cleared of the caller's settings.
pub fn snapshot_on_fake(
    fake: &fake_marketplace::FakeMarketplace,
    subcommand: &str,
    args: &[&str],
    dir: &Path,
) -> std::process::Output {
    clean_command(env!("CARGO_BIN_EXE_snapshot"))
        .arg(subcommand)
        .args(args)
        .arg("--dir")
        .arg(dir)
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .output()
        .unwrap()
}

/// A command's standard output and standard error, as text.
pub fn output_text(output: &std::process::Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A fresh temporary directory holding a copy of the committed snapshots.
pub fn copy_of_snapshots() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for site in snapshot_sites() {
        let name = site.snapshot_file_name();
        std::fs::copy(snapshots_dir().join(name), dir.path().join(name)).unwrap();
    }
    dir
}

/// Every file's bytes in a directory and its subdirectories (`pinned/EBAY_US-179.json`),
/// sorted by name.
pub fn dir_bytes(dir: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &Path, prefix: &str, files: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let e = e.unwrap();
            let name = format!("{prefix}{}", e.file_name().to_string_lossy());
            if e.file_type().unwrap().is_dir() {
                walk(&e.path(), &format!("{name}/"), files);
            } else {
                files.push((name, std::fs::read(e.path()).unwrap()));
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, "", &mut files);
    files.sort();
    files
}

/// The committed AU snapshot (a partial copy, cut to four levels) completed: with
/// [`NEW_LEAF`] below the cut, and `"complete"`. What a service holding the whole tree serves.
pub fn au_completed() -> CategoryTree {
    let mut tree = committed(Marketplace::Au);
    let parent = tree
        .categories
        .iter()
        .find(|c| c.id != 0 && !c.leaf)
        .unwrap()
        .id;
    tree.categories.push(taxonomy_tree::tree::Category {
        id: NEW_LEAF,
        name: "A category below the cut".into(),
        parent: Some(parent),
        leaf: true,
        children: vec![],
    });
    tree.categories.sort_by_key(|c| c.id);
    for c in &mut tree.categories {
        if c.id == parent {
            c.children.push(NEW_LEAF);
        }
    }
    tree.meta.complete = true;
    tree
}

/// `tree` without leaf `id` (removed from its parent's children too).
pub fn without(mut tree: CategoryTree, id: u32) -> CategoryTree {
    tree.categories.retain(|c| c.id != id);
    for c in &mut tree.categories {
        c.children.retain(|&k| k != id);
    }
    tree
}

/// Kills `child` (SIGKILL) while the fake answers its first `method path` request sent after
/// the fake's first `since` requests (the caller delays that answer, e.g. with a
/// `Fault::Delay` rule), checks that SIGKILL ended it, then waits until the fake has answered
/// every such request, as eBay finishes a call whose client died. `what` names the step in
/// the failure messages.
#[cfg(unix)]
pub fn kill_during_call(
    fake: &fake_marketplace::FakeMarketplace,
    mut child: std::process::Child,
    (method, path): (&str, &str),
    since: usize,
    what: &str,
) {
    use std::os::unix::process::ExitStatusExt;
    use std::time::{Duration, Instant};
    let sent = |from: usize| {
        fake.requests()[from..]
            .iter()
            .filter(|r| r.method == method && r.path == path)
            .count()
    };
    let started = Instant::now();
    while sent(since) == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{what}: {method} {path} never sent"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap(); // SIGKILL, while the call is under way
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(9),
        "{what}: {method} {path}: {status:?}"
    );
    let started = Instant::now();
    while fake
        .answers()
        .iter()
        .filter(|a| a.method == method && a.path == path)
        .count()
        < sent(0)
    {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{what}: {method} {path} never answered"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
