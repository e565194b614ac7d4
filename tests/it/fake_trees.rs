//! A seller's own project tests against the fake marketplace with trees of its own: the fake
//! binary, started with `--trees DIR`, serves the project's trees, a marketplace this
//! repository has no snapshot for (EBAY_FR) included, and `snapshot refresh` in the project
//! downloads it (fake-marketplace/README.md).

use crate::common;
use crate::taxonomy_support as support;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use fake_marketplace::taxonomy::{
    DEFAULT_TREE_ID_PATH, ERROR_TREE_NOT_FOUND, ERROR_UNKNOWN_MARKETPLACE, MARKETPLACE_HEADER,
    suggestions_path, tree_file_name, tree_path,
};
use fake_marketplace::{FakeConfig, FakeMarketplace};
use marketplaces::Marketplace;
use taxonomy_tree::tree::{Category, CategoryTree, TreeMeta};

/// A project's own tree of EBAY_FR (tree 71), in the snapshot format: the sample of
/// fake-marketplace/README.md (the repository commits no EBAY_FR snapshot).
fn fr_tree() -> String {
    std::fs::read_to_string(common::root().join("fake-marketplace/trees/EBAY_FR.json")).unwrap()
}

/// The fake-marketplace binary: a test of this package has no `CARGO_BIN_EXE_` for another
/// package's binary. The test command builds it beside the test binaries, and it is taken
/// from there (this module run alone uses the fake the last test command built); else cargo
/// is asked for it. After the README's test command (its `scripts/test` builds with `cargo test
/// --workspace --features taxonomy-data/serde --no-run`, repeated here), which builds the
/// binary for fake-marketplace's own tests, it is fresh: nothing is compiled again.
/// (`cargo build -p fake-marketplace` would unify the dependencies' features differently
/// and compile dozens of crates again, 50 s in CI.)
fn fake_binary() -> PathBuf {
    // The test command built it beside this test binary (target/debug/deps/it-… →
    // target/debug/fake-marketplace, for fake-marketplace's own tests): no cargo run, which
    // would build and link again whatever it finds out of step while the tests run (the
    // running test binaries included).
    if let Some(beside) = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("fake-marketplace")))
        .filter(|path| path.is_file())
    {
        return beside;
    }
    // Without the variables cargo set for this test (see `common::cargo_command`).
    let mut cargo = common::cargo_command();
    let out = cargo
        .current_dir(common::root())
        .args([
            "test",
            "--offline",
            "--workspace",
            "--features",
            "taxonomy-data/serde",
            "--no-run",
            "--message-format=json",
        ])
        .stderr(Stdio::inherit())
        .output()
        .unwrap();
    assert!(out.status.success(), "cargo test --no-run failed");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|m| {
            m["reason"] == "compiler-artifact"
                && m["target"]["name"] == "fake-marketplace"
                && m["target"]["kind"][0] == "bin"
                && m["profile"]["test"] == false // not its unit tests' harness
        })
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
    snapshot_at(&fake.base_url, cwd, args)
}

/// `snapshot ARGS…` in `cwd` against the fake at `base_url`.
fn snapshot_at(base_url: &str, cwd: &Path, args: &[&str]) -> Output {
    common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
        .current_dir(cwd)
        .args(args)
        .env("MARKETPLACE_BASE_URL", base_url)
        .env("MARKETPLACE_AUTH_URL", base_url)
        .env("MARKETPLACE_CLIENT_ID", "FakeApp-PRD-0a1b2c3d4-5e6f7a8b")
        .env(
            "MARKETPLACE_CLIENT_SECRET",
            "PRD-fa4e0c1d2b3a-9f8e-4d7c-b6a5-0f1e",
        )
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

/// The marketplace the project's own tree is written for: one of the table the repository
/// commits no snapshot for (and not the README's EBAY_FR sample).
const OWN_SITE: Marketplace = Marketplace::It;

/// A small tree of [`OWN_SITE`] written by a project's test, its facts (tree id, marketplace
/// id, language) from the marketplace table: Root > Telefonia fissa e mobile > {Cellulari e
/// smartphone, Custodie e cover}, and Libri; `extra` adds a top-level leaf, Fotocamere digitali.
fn own_tree(version: &str, extra: bool) -> CategoryTree {
    let cat = |id, name: &str, parent, children: Vec<u32>| Category {
        id,
        name: name.into(),
        parent,
        leaf: parent.is_some() && children.is_empty(),
        children,
    };
    let mut categories = vec![
        cat(0, "Root", None, vec![267, 15032]),
        cat(267, "Libri", Some(0), vec![]),
        cat(9355, "Cellulari e smartphone", Some(15032), vec![]),
        cat(
            15032,
            "Telefonia fissa e mobile",
            Some(0),
            vec![9355, 20349],
        ),
        cat(20349, "Custodie e cover", Some(15032), vec![]),
    ];
    if extra {
        categories[0].children.insert(1, 625);
        categories.insert(2, cat(625, "Fotocamere digitali", Some(0), vec![]));
    }
    CategoryTree {
        meta: TreeMeta {
            tree_id: OWN_SITE.tree_id(),
            marketplace_id: OWN_SITE.marketplace_id().into(),
            language: OWN_SITE.default_language().into(),
            version: version.into(),
            taken_at: "2026-11-01".into(),
            source: "written by the project's test".into(),
            note: None,
            complete: true,
        },
        categories,
    }
}

/// A project's test writes a tree of a marketplace the repository has no snapshot for,
/// starts the fake from the library on that directory (`FakeConfig::with_trees`), and
/// `snapshot refresh` writes that tree; suggestions for the README's query come from it; a
/// tree rewritten for the next fake is the one that fake serves.
#[test]
fn a_project_tree_written_by_its_test_is_served_by_the_library_and_refreshed() {
    assert!(
        !common::snapshots_dir()
            .join(tree_file_name(OWN_SITE))
            .exists(),
        "the repository has no snapshot of {OWN_SITE}"
    );
    let project = tempfile::tempdir().unwrap();
    let project = &project.path().canonicalize().unwrap();
    let trees = project.join("tests/trees");
    std::fs::create_dir_all(&trees).unwrap();
    let file = trees.join(tree_file_name(OWN_SITE));
    taxonomy_tree::snapshot::write(&file, &own_tree("41", false)).unwrap();

    let fake = FakeMarketplace::start(FakeConfig::default().with_trees(&trees)).unwrap();
    let site = OWN_SITE.marketplace_id();
    let out = snapshot_at(&fake.base_url(), project, &["refresh", "--sites", site]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let written = taxonomy_tree::snapshot::read_site(OWN_SITE, &project.join("snapshots")).unwrap();
    assert_eq!(written.meta.version, "41");
    assert_eq!(written.meta.language, OWN_SITE.default_language());
    assert_eq!(written.len(), 4, "the categories but the root");
    assert_eq!(
        written.get(9355).map(|c| c.name.as_str()),
        Some("Cellulari e smartphone")
    );

    // getCategorySuggestions on the project's tree: "iphone" is a smartphone, "15" alone
    // suggests nothing.
    let (client, _) = support::client(&fake);
    let got = client.category_suggestions(OWN_SITE, "iphone 15").unwrap();
    let ids: Vec<u32> = got.suggestions.iter().map(|s| s.category.id).collect();
    assert_eq!(ids, [9355]);
    assert_eq!(
        got.suggestions[0].path(),
        "Telefonia fissa e mobile > Cellulari e smartphone"
    );
    drop(fake);

    // The project's test writes a newer tree; the next fake serves it, and refresh takes it.
    taxonomy_tree::snapshot::write(&file, &own_tree("42", true)).unwrap();
    let fake = FakeMarketplace::start(FakeConfig::default().with_trees(&trees)).unwrap();
    assert_eq!(fake.tree(OWN_SITE).meta.version, "42");
    let out = snapshot_at(&fake.base_url(), project, &["refresh", "--sites", site]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = taxonomy_tree::snapshot::read_site(OWN_SITE, &project.join("snapshots")).unwrap();
    assert_eq!(written.meta.version, "42");
    assert_eq!(written.len(), 5);
    assert_eq!(
        written.get(625).map(|c| c.name.as_str()),
        Some("Fotocamere digitali")
    );
}

/// A GET of the fake's `path` with a token it issued and the marketplace header; the status
/// and the body as JSON (`null` when empty).
fn get(fake: &FakeMarketplace, path: &str, site: &str) -> (u16, serde_json::Value) {
    let token = support::tokens(fake).access_token().unwrap();
    let r = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap()
        .get(format!("{}{path}", fake.base_url()))
        .bearer_auth(token.secret())
        .header(MARKETPLACE_HEADER, site)
        .send()
        .unwrap();
    let status = r.status().as_u16();
    let body = r.bytes().unwrap();
    let json = if body.is_empty() {
        serde_json::Value::Null
    } else {
        serde_json::from_slice(&body).unwrap()
    };
    (status, json)
}

/// The errors of a fake serving a project's trees (EBAY_FR alone): an unknown marketplace id
/// and a marketplace of the table without a tree are answered as eBay documents them
/// (getDefaultCategoryTreeId: 400 errorId 62003, 204; every call on a tree: 400 errorId
/// 62004), never 500; and `snapshot refresh` says what is wrong, not "retry later".
#[test]
fn unknown_marketplaces_and_missing_trees_get_ebays_errors_and_refresh_says_so() {
    let project = tempfile::tempdir().unwrap();
    let trees = project.path().join("trees");
    std::fs::create_dir_all(&trees).unwrap();
    std::fs::write(trees.join(tree_file_name(Marketplace::Fr)), fr_tree()).unwrap();
    let fake = FakeMarketplace::start(FakeConfig::default().with_trees(&trees)).unwrap();

    let (status, body) = get(
        &fake,
        &format!("{DEFAULT_TREE_ID_PATH}?marketplace_id=EBAY_XX"),
        "EBAY_US",
    );
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["errors"][0]["errorId"], ERROR_UNKNOWN_MARKETPLACE);
    assert_eq!(
        body["errors"][0]["message"],
        "The specified marketplace ID was not found."
    );
    assert_eq!(body["errors"][0]["parameters"][0]["value"], "EBAY_XX");

    // EBAY_FR has a tree, EBAY_IT (of the table) has none.
    let (status, body) = get(
        &fake,
        &format!("{DEFAULT_TREE_ID_PATH}?marketplace_id=EBAY_FR"),
        "EBAY_FR",
    );
    assert_eq!((status, &body["categoryTreeVersion"]), (200, &"7".into()));
    let it = Marketplace::It;
    let (status, body) = get(
        &fake,
        &format!(
            "{DEFAULT_TREE_ID_PATH}?marketplace_id={}",
            it.marketplace_id()
        ),
        it.marketplace_id(),
    );
    assert_eq!((status, body), (204, serde_json::Value::Null));
    for path in [
        tree_path(it.tree_id()),
        format!("{}?q=phone", suggestions_path(it.tree_id())),
        // A tree id no marketplace has.
        tree_path(9),
    ] {
        let (status, body) = get(&fake, &path, it.marketplace_id());
        assert_eq!(status, 400, "{path}: {body}");
        assert_eq!(body["errors"][0]["errorId"], ERROR_TREE_NOT_FOUND, "{path}");
        assert_eq!(
            body["errors"][0]["message"],
            "The specified category tree ID was not found."
        );
    }

    // `snapshot refresh` of the site without a tree: the version check finds no default
    // tree; forced, the download names the tree not found. Neither is "retry later".
    let base_url = fake.base_url();
    let site = it.marketplace_id();
    let out = snapshot_at(&base_url, project.path(), &["refresh", "--sites", site]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("no default category tree for {site}")),
        "{stderr}"
    );
    let out = snapshot_at(
        &base_url,
        project.path(),
        &["refresh", "--sites", site, "--force"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("HTTP 400"), "{stderr}");
    assert!(stderr.contains("errorId 62004"), "{stderr}");
    assert!(
        stderr.contains("this server has no category tree with that id"),
        "{stderr}"
    );
    assert!(!stderr.contains("retry later"), "{stderr}");
    assert!(!project.path().join("snapshots").exists());

    // A marketplace id the table does not know is refused before any request, naming the flag.
    let requests = fake.requests().len();
    let out = snapshot_at(
        &base_url,
        project.path(),
        &["refresh", "--sites", "EBAY_XX"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("--sites \"EBAY_XX\" is not a marketplace. A site is"),
        "{stderr}"
    );
    assert!(stderr.contains("EBAY_IT"), "{stderr}");
    assert!(!stderr.contains("TAXONOMY_SITES"), "{stderr}");
    assert_eq!(fake.requests().len(), requests);
}

/// A tree file that is not in the snapshot format stops the library's fake with an error
/// naming the file: malformed JSON says why; a saved getCategoryTree response (eBay's shape)
/// is named as one, with the command that converts it, and once converted by `snapshot
/// import` into the same directory it is served.
#[test]
fn a_tree_file_in_another_shape_is_named_and_a_saved_response_imported() {
    let project = tempfile::tempdir().unwrap();
    let trees = project.path().join("trees");
    std::fs::create_dir_all(&trees).unwrap();
    let file = trees.join(tree_file_name(OWN_SITE));

    std::fs::write(&file, "{\"format\": 1, \"categoryTreeId\": ").unwrap();
    let e = FakeMarketplace::start(FakeConfig::default().with_trees(&trees)).unwrap_err();
    let message = e.to_string();
    assert!(
        message.starts_with(&format!("{}: not a valid snapshot", file.display())),
        "{message}"
    );
    assert!(message.contains("fix the file or remove it"), "{message}");

    // What eBay's getCategoryTree answered, saved as is under the marketplace's name.
    let response =
        taxonomy_tree::encode::encode_response(&own_tree("41", false), "https://api.ebay.com");
    std::fs::write(&file, &response).unwrap();
    let e = FakeMarketplace::start(FakeConfig::default().with_trees(&trees)).unwrap_err();
    let message = e.to_string();
    assert!(
        message.starts_with(&format!(
            "{}: a getCategoryTree response, not a tree in the snapshot format",
            file.display()
        )),
        "{message}"
    );
    assert!(message.contains("snapshot import --dir"), "{message}");

    let out = common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
        .args(["import", "--dir", trees.to_str().unwrap()])
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let fake = FakeMarketplace::start(FakeConfig::default().with_trees(&trees)).unwrap();
    let tree = fake.tree(OWN_SITE);
    assert_eq!(tree.meta.version, "41");
    assert_eq!(
        tree.get(9355).map(|c| c.name.as_str()),
        Some("Cellulari e smartphone")
    );
}

/// An application token from the fake at `base_url`, asked as eBay documents it (its default
/// credentials in `Basic base64(client_id:client_secret)`).
fn raw_token(http: &reqwest::blocking::Client, base_url: &str) -> String {
    use base64::Engine as _;
    let basic = base64::engine::general_purpose::STANDARD
        .encode("FakeApp-PRD-0a1b2c3d4-5e6f7a8b:PRD-fa4e0c1d2b3a-9f8e-4d7c-b6a5-0f1e");
    let body: serde_json::Value = http
        .post(format!("{base_url}{}", fake_marketplace::TOKEN_PATH))
        .header("Authorization", format!("Basic {basic}"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("grant_type=client_credentials&scope=https%3A%2F%2Fapi.ebay.com%2Foauth%2Fapi_scope")
        .send()
        .unwrap()
        .json()
        .unwrap();
    body["access_token"].as_str().expect("a token").to_owned()
}

/// The binary answers 200 where eBay does: by default it serves eBay Motors
/// (getDefaultCategoryTreeId for EBAY_MOTORS_US is tree 100) and a made-up set of expired
/// categories (getExpiredCategories); with `--expired FILE` it serves a project's own, which
/// `snapshot refresh` writes beside the tree; a file that breaks the rules stops it, named.
#[test]
fn the_binary_serves_motors_and_expired_categories_by_default_and_from_expired_files() {
    // The fake runs as a child process here: this test's client needs rustls's provider.
    fake_marketplace::install_crypto_provider();
    let http = reqwest::blocking::Client::builder()
        .no_proxy()
        .build()
        .unwrap();
    let fake = start_fake(&[]);
    let token = raw_token(&http, &fake.base_url);
    let get = |path: &str| {
        let r = http
            .get(format!("{}{path}", fake.base_url))
            .bearer_auth(&token)
            .send()
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json::<serde_json::Value>().unwrap_or_default())
    };
    let (status, body) = get(&format!(
        "{DEFAULT_TREE_ID_PATH}?marketplace_id=EBAY_MOTORS_US"
    ));
    assert_eq!(
        (status, body["categoryTreeId"].as_str()),
        (200, Some("100"))
    );
    for tree in [0, 100] {
        let (status, body) = get(&format!("{}/get_expired_categories", tree_path(tree)));
        assert_eq!(status, 200, "tree {tree}: {body}");
        assert!(!body["expiredCategories"].as_array().unwrap().is_empty());
    }
    drop(fake);

    let project = tempfile::tempdir().unwrap();
    let trees = project.path().join("trees");
    std::fs::create_dir(&trees).unwrap();
    std::fs::write(trees.join(tree_file_name(Marketplace::Fr)), fr_tree()).unwrap();
    let expired = |name: &str, to: u32| {
        let path = project.path().join(name);
        std::fs::write(
            &path,
            format!(
                r#"{{"format": 1, "categoryTreeId": 71, "marketplaceId": "EBAY_FR", "categoryTreeVersion": "7", "source": "test", "mappingCount": 1, "expired": [{{"from": 9354, "to": {to}}}]}}"#
            ),
        )
        .unwrap();
        path
    };
    let good = expired("fr.expired.json", 9355);
    let fake = start_fake(&[
        "--trees",
        trees.to_str().unwrap(),
        "--expired",
        good.to_str().unwrap(),
    ]);
    let out = snapshot(
        &fake,
        project.path(),
        &["refresh", "--sites", "EBAY_FR", "--dir", "snapshots"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("expired: 9354 → 9355"), "{stdout}");
    let written =
        std::fs::read_to_string(project.path().join("snapshots/EBAY_FR.expired.json")).unwrap();
    assert!(written.contains(r#"{"from":9354,"to":9355}"#), "{written}");
    drop(fake);

    // 15032 is a branch of the tree: not a replacement.
    let bad = expired("bad.expired.json", 15032);
    let out = fake_command(&[
        "--trees",
        trees.to_str().unwrap(),
        "--expired",
        bad.to_str().unwrap(),
    ])
    .output()
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("bad.expired.json"), "{stderr}");
}
