//! A seller's own project, not this repository (the README's "Use it in your project"): its
//! snapshots live in its own `snapshots/`, which its `.cargo/config.toml` names in `[env]`;
//! the `snapshot` command, run in the project without `--dir`, refreshes them from the
//! service; taxonomy-data's build script compiles them in, so a category the committed
//! snapshots lack is a valid `category!`. The dependencies are the README's own `Cargo.toml`
//! blocks (the listing code's, and the backend's, which builds the README's fleet example),
//! with paths to this workspace beside their versions.

use crate::common;

use std::path::Path;
use std::process::Output;

use fake_marketplace::FakeMarketplace;
use fake_marketplace::taxonomy::tree_path;
use marketplaces::Marketplace;

const MAIN_RS: &str = r#"
use taxonomy_data::Site;
use taxonomy_macros::category;

fn main() {
    let leaf = category!("999001");
    println!("{} {} | {}", leaf.id(), leaf.path(), Site::Us.tree_version());
    let sites: Vec<&str> = Site::compiled_in().map(Site::marketplace_id).collect();
    println!("compiled in: {}", sites.join(","));
}
"#;

const CONFIG_TOML: &str = r#"[env]
TAXONOMY_SNAPSHOTS_DIR = { value = "snapshots", relative = true }
"#;

/// Runs the `snapshot` command (what `cargo install` puts on the PATH) in `cwd`, with
/// credentials pointing at the fake and `env` besides.
fn snapshot(fake: &FakeMarketplace, cwd: &Path, args: &[&str], env: &[(&str, &Path)]) -> Output {
    let mut command = common::clean_command(env!("CARGO_BIN_EXE_snapshot"));
    command
        .current_dir(cwd)
        .args(args)
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret());
    for (name, value) in env {
        command.env(name, value);
    }
    command.output().unwrap()
}

/// The block of README.md that follows its `<!-- recipe: NAME -->` line (a Cargo.toml block
/// or an example), without its fences and indentation.
fn readme_recipe(name: &str) -> String {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let marker = format!("<!-- recipe: {name} -->");
    let after = readme
        .split_once(&marker)
        .unwrap_or_else(|| panic!("README.md has no {marker}"))
        .1;
    let mut lines = after
        .lines()
        .map(str::trim_start)
        .skip_while(|l| l.is_empty());
    let fence = lines.next().unwrap_or("");
    assert!(
        fence.starts_with("```"),
        "{marker} is not followed by a block"
    );
    let indent = after
        .lines()
        .find(|l| l.trim_start().starts_with("```"))
        .map_or(0, |l| l.len() - l.trim_start().len());
    after
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("```"))
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with("```"))
        .map(|l| l.get(indent..).unwrap_or(l.trim_start()))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// A README `Cargo.toml` block with this workspace's crates taken from their directories: a
/// `path` beside each version (the version must still match the crate's).
fn with_workspace_paths(block: &str) -> String {
    let ours = [
        ("taxonomy-data", "taxonomy-data"),
        ("taxonomy-macros", "taxonomy-macros"),
        ("marketplace-client", "crates/marketplace-client"),
        (
            "marketplace-client-postgres",
            "crates/marketplace-client-postgres",
        ),
    ];
    let mut rewritten = 0;
    let lines: Vec<String> = block
        .lines()
        .map(|line| {
            let Some((name, value)) = line.split_once(" = ") else {
                return line.to_owned();
            };
            let Some((_, dir)) = ours
                .iter()
                .find(|(crate_name, _)| *crate_name == name.trim())
            else {
                return line.to_owned();
            };
            rewritten += 1;
            let path = format!("{:?}", common::root().join(dir).display().to_string());
            let value = value.split(" #").next().unwrap().trim();
            match value.strip_prefix('{') {
                Some(table) => format!("{name} = {{ path = {path},{table}"),
                None => format!("{name} = {{ version = {value}, path = {path} }}"),
            }
        })
        .collect();
    assert!(rewritten > 0, "no crate of this workspace in:\n{block}");
    lines.join("\n") + "\n"
}

fn text(output: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn a_project_keeps_its_own_snapshots_and_compiles_them_in() {
    let _turn = common::outside_probes_turn();
    let fake = FakeMarketplace::new();
    fake.set_tree(Marketplace::Us, common::us_with_new_leaf("135"));
    let committed_before = common::dir_bytes(&common::snapshots_dir());

    let project = tempfile::tempdir().unwrap();
    // Resolved, as the command's working directory is (the temporary directory may be behind
    // a symbolic link, as on macOS).
    let project = &project.path().canonicalize().unwrap();
    // The README's own block, so that it cannot drift from what builds.
    common::write_outside_crate(
        project,
        "own-project",
        &with_workspace_paths(&readme_recipe("listing")),
        MAIN_RS,
    );
    std::fs::create_dir_all(project.join(".cargo")).unwrap();
    std::fs::write(project.join(".cargo/config.toml"), CONFIG_TOML).unwrap();

    // 1. `snapshot refresh --sites EBAY_US` in the project: ./snapshots, created.
    let out = snapshot(&fake, project, &["refresh", "--sites", "EBAY_US"], &[]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let own = project.join("snapshots");
    assert!(
        stderr.contains(&format!(
            "snapshots: {} (from the default, ./snapshots)",
            own.display()
        )),
        "{stderr}"
    );
    assert!(stdout.contains("EBAY_US: to download"), "{stdout}");
    assert!(stdout.contains("new snapshot"), "{stdout}");
    let names: Vec<String> = common::dir_bytes(&own)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    assert!(names.contains(&"EBAY_US.json".to_string()), "{names:?}");

    // 2. `snapshot refresh --check` (CI), from elsewhere, told the directory by the variable
    //    the project's builds read: current, so it succeeds and downloads nothing.
    let downloads = fake.requests_to(&tree_path(0)).len();
    let elsewhere = tempfile::tempdir().unwrap();
    let out = snapshot(
        &fake,
        elsewhere.path(),
        &["refresh", "--check"],
        &[("TAXONOMY_SNAPSHOTS_DIR", &own)],
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(&format!(
            "snapshots: {} (from TAXONOMY_SNAPSHOTS_DIR)",
            own.display()
        )),
        "{stderr}"
    );
    assert!(
        stdout.contains("EBAY_US: unchanged (version 135)"),
        "{stdout}"
    );
    assert_eq!(
        fake.requests_to(&tree_path(0)).len(),
        downloads,
        "--check of a current snapshot downloads no tree"
    );

    // 3. The project's build compiles its own snapshot in: the new leaf is a valid
    //    `category!`, and only the US is compiled in.
    let target = common::outside_probes_target();
    let out = common::build_outside_crate(project, &target, &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = std::process::Command::new(target.join("debug/own-project"))
        .output()
        .unwrap();
    assert!(run.status.success());
    assert_eq!(
        String::from_utf8_lossy(&run.stdout),
        "999001 Cell Phones & Accessories > Foldable Phones | 135\ncompiled in: EBAY_US\n"
    );

    // Built again with nothing changed, nothing is rebuilt: the build script watches only
    // snapshots that exist (cargo reruns a script while a path it watches is missing, and
    // this project has one snapshot of twenty sites).
    let again = common::build_outside_crate(project, &target, &[]);
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(again.status.success(), "{stderr}");
    assert!(stderr.contains("Fresh taxonomy-data"), "{stderr}");
    assert!(!stderr.contains("Compiling taxonomy-data"), "{stderr}");

    // This repository's snapshots were neither read for the project nor written.
    assert_eq!(
        common::dir_bytes(&common::snapshots_dir()),
        committed_before
    );
}

/// A project using the committed snapshots, built once (offline, no credentials), in the
/// listing probes' target directory (the caller holds its turn). Returns the project and the
/// target directory.
fn settings_probe() -> (tempfile::TempDir, std::path::PathBuf) {
    let project = tempfile::tempdir().unwrap();
    common::write_outside_crate(
        project.path(),
        "settings-probe",
        "[dependencies]\ntaxonomy-data = { path = {data} }\ntaxonomy-macros = { path = {macros} }\n",
        "use taxonomy_macros::category;\nfn main() { println!(\"{}\", category!(\"9355\").id()); }\n",
    );
    let target = common::outside_probes_target();
    let out = common::build_outside_crate(project.path(), &target, &[]);
    assert!(out.status.success(), "{}", text(&out).1);
    (project, target)
}

#[test]
fn runtime_settings_rebuild_nothing_without_live() {
    let _turn = common::outside_probes_turn();
    let (project, target) = settings_probe();
    // What a backend changes at run time: without `live` the build reads none of it.
    for env in [
        &[("MARKETPLACE_BASE_URL", "http://127.0.0.1:9/")][..],
        &[("MARKETPLACE_CLIENT_ID", "another-app")],
        &[
            ("MARKETPLACE_ENV", "sandbox"),
            ("MARKETPLACE_SCOPE", "https://api.ebay.com/oauth/api_scope"),
            ("MARKETPLACE_AUTH_URL", "http://127.0.0.1:9/"),
            ("TAXONOMY_LIVE_TTL", "1h"),
        ],
    ] {
        let out = common::build_outside_crate(project.path(), &target, env);
        let stderr = text(&out).1;
        assert!(out.status.success(), "{stderr}");
        assert!(stderr.contains("Fresh taxonomy-data"), "{env:?}: {stderr}");
        assert!(!stderr.contains("Compiling"), "{env:?}: {stderr}");
        assert!(!stderr.contains("build-script-build`"), "{env:?}: {stderr}");
    }
}

#[test]
fn a_missing_snapshots_directory_says_how_to_create_it() {
    let _turn = common::outside_probes_turn();
    let (project, target) = settings_probe();
    let missing = project.path().join("snapshots");
    let out = common::build_outside_crate(
        project.path(),
        &target,
        &[("TAXONOMY_SNAPSHOTS_DIR", missing.to_str().unwrap())],
    );
    let stderr = text(&out).1;
    assert!(!out.status.success(), "{stderr}");
    let hint = stderr
        .find("run `snapshot refresh --sites")
        .unwrap_or_else(|| panic!("no hint to create the directory: {stderr}"));
    assert!(stderr.contains("no such directory"), "{stderr}");
    // Not the `[env]` line the project already has, and not below the script's lines.
    assert!(!stderr.contains("relative = true"), "{stderr}");
    let first_rerun = stderr.find("cargo:rerun-if").unwrap_or(usize::MAX);
    assert!(hint < first_rerun, "{stderr}");
}

/// The README's backend block (blocking, async, PostgreSQL; sqlx 0.9) builds the README's
/// fleet example, outside this workspace; run without its settings, the example says what is
/// missing by the error's message, not its `Debug`.
#[test]
fn the_readme_backend_recipe_builds_the_fleet_example() {
    let dependencies = with_workspace_paths(&readme_recipe("backend"));
    assert!(
        dependencies.contains("sqlx = { version = \"0.9"),
        "{dependencies}"
    );
    let example = readme_recipe("fleet example");
    assert!(
        example.contains("PgRefreshTokenStore::from_config"),
        "{example}"
    );
    let project = tempfile::tempdir().unwrap();
    // Its dependencies build without debug information, as the workspace's do
    // (`common::workspace_dev_profile`): the same as the live build's script compiles.
    common::write_outside_crate(project.path(), "backend-probe", &dependencies, &example);
    let _turn = common::outside_probes_turn();
    let target = common::outside_probes_target();
    let out = common::build_outside_crate(project.path(), &target, &[]);
    assert!(out.status.success(), "{}", text(&out).1);
    let run = common::clean_command(target.join("debug/backend-probe"))
        .env_remove("DATABASE_URL")
        .output()
        .unwrap();
    let (_, stderr) = text(&run);
    assert_eq!(run.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr, "error: environment variable not found\n");
}
