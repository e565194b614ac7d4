//! `cargo run --bin snapshot -- refresh` against the fake marketplace over loopback: the
//! snapshots are rewritten with a change summary, a fault in one site leaves every file
//! untouched byte for byte, and `--check` tells stale from fresh. A tree is downloaded only when
//! getDefaultCategoryTreeId reports another version than the snapshot's (or the snapshot is
//! partial, or in another language); `--force` downloads every tree. A partial snapshot stays
//! partial until the service gives more than it holds, and `--check` only warns of it.

use crate::common;

use std::process::{Command, Output};

use fake_marketplace::taxonomy::{DEFAULT_TREE_ID_PATH, TREE_GET_PATH, tree_path};
use fake_marketplace::{FakeMarketplace, Fault, TreeRoutes};
use marketplaces::Marketplace;
use taxonomy_tree::snapshot;

fn fake() -> FakeMarketplace {
    FakeMarketplace::new()
}

/// Runs `snapshot refresh ARGS --dir DIR` with credentials pointing at the fake.
fn refresh(fake: &FakeMarketplace, dir: &std::path::Path, args: &[&str]) -> Output {
    common::snapshot_on_fake(fake, "refresh", args, dir)
}

use common::output_text as text;

/// The trees and expired-category files of `dir` (`common::dir_bytes` without the condition
/// and listing-structure policies, which a refresh against the fake adds beside every tree: see
/// `refresh_writes_each_sites_condition_policies_and_check_reports_changed_ones`).
fn trees_and_mappings(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut files = common::dir_bytes(dir);
    files.retain(|(name, _)| {
        !name.ends_with(".conditions.json") && !name.ends_with(".structure.json")
    });
    files
}

/// Runs `snapshot refresh ARGS` on a copy of the committed snapshots; it must fail and leave
/// every file of the directory byte for byte as it was. Returns what it printed.
fn refresh_fails_writing_nothing(fake: &FakeMarketplace, args: &[&str]) -> (String, String) {
    let dir = common::copy_of_snapshots();
    let before = common::dir_bytes(dir.path());
    let out = refresh(fake, dir.path(), args);
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(
        common::dir_bytes(dir.path()) == before,
        "a file changed or appeared"
    );
    (stdout, stderr)
}

/// The US tree without leaf 853 ("Canada Dry") and with 852 renamed.
fn changed_us_tree() -> taxonomy_tree::tree::CategoryTree {
    let mut tree = common::without(common::committed(Marketplace::Us), 853);
    for c in &mut tree.categories {
        if c.id == 852 {
            c.name = "Fountain Drinks".into();
        }
    }
    tree.meta.version = "135".into();
    tree
}

#[test]
fn refresh_rewrites_the_changed_snapshot_and_reports_the_changes() {
    let fake = fake();
    fake.set_tree(Marketplace::Us, changed_us_tree());
    // The UK answers the real saved response, byte for byte, not one the fake rendered.
    fake.set_tree_body(Marketplace::Gb, common::saved_response(Marketplace::Gb));
    let dir = common::copy_of_snapshots();
    let before = common::dir_bytes(dir.path());
    let out = refresh(&fake, dir.path(), &["--force"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("version 134 → 135"), "{stdout}");
    assert!(stdout.contains("1 removed: 853"), "{stdout}");
    assert!(stdout.contains("1 renamed: 852"), "{stdout}");
    assert!(stdout.contains("wrote"), "{stdout}");
    let written = snapshot::read(&dir.path().join("EBAY_US.json")).unwrap();
    assert!(written.get(853).is_none());
    assert_eq!(written.meta.version, "135");
    assert!(
        written.meta.source.contains(&fake.base_url()),
        "{}",
        written.meta.source
    );
    // GB and DE did not change, so their files keep their bytes (and dates); nor did the
    // partial AU snapshot, which the fake serves as it is (it stays partial).
    let after = trees_and_mappings(dir.path());
    assert_eq!(after.len(), before.len());
    for ((name, old), (_, new)) in before.iter().zip(&after) {
        assert_eq!(old == new, name != "EBAY_US.json", "{name}");
    }
    // One application token for the whole refresh, one getCategoryTree request per site, in
    // eBay's documented path form; --force asks no version.
    assert_eq!(fake.token_requests().len(), 1);
    assert!(fake.requests_to(DEFAULT_TREE_ID_PATH).is_empty());
    for site in common::snapshot_sites() {
        assert_eq!(fake.requests_to(&tree_path(site.tree_id())).len(), 1);
    }
    assert!(fake.requests_to(TREE_GET_PATH).is_empty());
}

#[test]
fn tree_path_option_picks_the_form() {
    let fake = fake();
    fake.set_tree_routes(TreeRoutes::Query);
    let dir = common::copy_of_snapshots();
    // `path` against a server that only knows the query form: every site fails, nothing written.
    let before = common::dir_bytes(dir.path());
    let out = refresh(
        &fake,
        dir.path(),
        &["--tree-path", "path", "--sites", "EBAY_US", "--force"],
    );
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(stderr.contains("HTTP 404"), "{stderr}");
    assert!(common::dir_bytes(dir.path()) == before);
    // `query` asks for /category_tree/get?category_tree_id=N.
    let out = refresh(
        &fake,
        dir.path(),
        &["--tree-path", "query", "--dry-run", "--force"],
    );
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let queries: Vec<_> = fake
        .requests_to(TREE_GET_PATH)
        .into_iter()
        .filter_map(|r| r.query)
        .collect();
    assert_eq!(queries.len(), 4, "{queries:?}");
    assert!(queries.contains(&"category_tree_id=77".to_string()));
    // The default for the fake's custom host is `auto`: the path form, then the query form
    // once per client (one client serves all four sites).
    fake.clear_requests();
    let out = refresh(&fake, dir.path(), &["--dry-run", "--force"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(fake.requests_to(TREE_GET_PATH).len(), 4);
    // MARKETPLACE_TREE_PATH sets it too; an unknown form is refused with its name.
    let out = Command::new(env!("CARGO_BIN_EXE_snapshot"))
        .args(["refresh", "--check", "--dir"])
        .arg(dir.path())
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_AUTH_URL", fake.auth_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .env("MARKETPLACE_TREE_PATH", "documented")
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("MARKETPLACE_TREE_PATH"), "{stderr}");
    let out = refresh(&fake, dir.path(), &["--tree-path", "sideways"]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("path, query or auto"), "{stderr}");
}

#[test]
fn a_failed_site_leaves_every_snapshot_untouched() {
    let fake = fake();
    fake.set_tree(Marketplace::Us, changed_us_tree());
    // Germany answers a tree cut in the middle (decoding fails).
    let body =
        taxonomy_tree::encode::encode_response(&fake.tree(Marketplace::De), &fake.base_url());
    fake.set_tree_body(Marketplace::De, body[..body.len() / 2].to_vec());
    // --force: Germany's version did not change, so it would not be downloaded otherwise.
    let (_, stderr) = refresh_fails_writing_nothing(&fake, &["--force"]);
    assert!(stderr.contains("EBAY_DE"), "{stderr}");
    assert!(stderr.contains("nothing was written"), "{stderr}");
}

#[test]
fn a_server_error_on_one_site_leaves_every_snapshot_untouched() {
    let fake = fake();
    fake.set_tree(Marketplace::Us, changed_us_tree());
    // In the path form each site has its own path: fail Australia's every time.
    fake.fail_times(
        &tree_path(15),
        Fault::Status {
            status: 503,
            body: r#"{"errors":[{"errorId":2003,"domain":"ACCESS","category":"APPLICATION","message":"Internal error"}]}"#.into(),
            headers: vec![],
        },
        100,
    );
    let (_, stderr) = refresh_fails_writing_nothing(&fake, &["--tree-path", "path"]);
    assert!(stderr.contains("EBAY_AU: download failed"), "{stderr}");
    // The US tree was fetched with the path form.
    assert_eq!(fake.requests_to(&tree_path(0)).len(), 1);
}

#[test]
fn check_fails_on_a_stale_snapshot_and_passes_on_a_fresh_one() {
    let fake = fake();
    let dir = common::copy_of_snapshots();
    let committed = common::dir_bytes(dir.path());
    // The committed AU snapshot is partial but of the current version: --check warns of it,
    // downloads no tree, and passes; --strict fails on it.
    let out = refresh(&fake, dir.path(), &["--check"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "warning: EBAY_AU: the snapshot is a partial copy of the current version (122)"
        ),
        "{stderr}"
    );
    assert!(
        stdout.contains("up to date (partial ones warned of above)"),
        "{stdout}"
    );
    assert!(
        fake.requests_to(&tree_path(15)).is_empty(),
        "--check downloaded AU"
    );
    let out = refresh(&fake, dir.path(), &["--check", "--strict"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("a snapshot is partial (--strict)"),
        "{stderr}"
    );
    let out = refresh(&fake, dir.path(), &["--strict"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "--strict without --check: {:?}",
        text(&out)
    );

    // A refresh against a server that gives back the partial copy itself leaves it partial,
    // byte for byte (no "complete", no new date).
    let out = refresh(&fake, dir.path(), &["--sites", "EBAY_AU"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("unchanged, and still partial"), "{stdout}");
    assert!(
        trees_and_mappings(dir.path()) == committed,
        "the partial copy was rewritten"
    );

    // A server with more than the partial copy completes it; --strict then passes.
    fake.set_tree(Marketplace::Au, common::au_completed());
    let out = refresh(&fake, dir.path(), &["--sites", "EBAY_AU"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("now complete (the snapshot was partial)"),
        "{stdout}"
    );
    assert!(
        snapshot::read(&dir.path().join("EBAY_AU.json"))
            .unwrap()
            .meta
            .complete
    );
    let out = refresh(&fake, dir.path(), &["--check", "--strict"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("the snapshots are up to date\n"),
        "{stdout}"
    );
    assert!(!stderr.contains("warning"), "{stderr}");

    let before = common::dir_bytes(dir.path());
    fake.set_tree(Marketplace::Us, changed_us_tree());
    let out = refresh(&fake, dir.path(), &["--check", "--sites", "EBAY_US"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stderr.contains("stale"), "{stderr}");
    assert!(stdout.contains("1 removed: 853"), "{stdout}");
    assert!(common::dir_bytes(dir.path()) == before, "--check wrote");
}

#[test]
fn without_credentials_it_says_what_to_set() {
    let dir = common::copy_of_snapshots();
    let out = common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
        .args(["refresh", "--dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(stderr.contains("MARKETPLACE_CLIENT_ID"), "{stderr}");
    assert!(stderr.contains("MARKETPLACE_CLIENT_SECRET"), "{stderr}");
}

/// The committed files plus the expired-category file of `site`, if any.
fn expired_file(dir: &std::path::Path, site: Marketplace) -> std::path::PathBuf {
    taxonomy_tree::expired::path_beside(&dir.join(site.snapshot_file_name()))
}

// The expired-category tests download with `--force`: a refresh asks getExpiredCategories
// with each tree it downloads, and a category only expires in a new tree version, so a
// version check that finds a tree unchanged has no new mapping to ask for.

#[test]
fn refresh_commits_the_expired_categories_and_lists_the_new_ones() {
    let fake = fake();
    // 853 ("Canada Dry") is retired and mapped to 852 (getExpiredCategories).
    fake.set_tree(Marketplace::Us, changed_us_tree());
    fake.set_expired_categories(Marketplace::Us, vec![(853, 852)]);
    let dir = common::copy_of_snapshots();
    let before = common::dir_bytes(dir.path());
    let out = refresh(&fake, dir.path(), &["--force"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("expired: 853 → 852 (Collectibles > Advertising > Soda > Fountain Drinks)"),
        "{stdout}"
    );
    let path = expired_file(dir.path(), Marketplace::Us);
    assert!(
        stdout.contains(&format!("wrote {}", path.display())),
        "{stdout}"
    );
    // One line per mapping, reviewable as a diff, and valid against the written tree.
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(
        written.contains("\n    {\"from\":853,\"to\":852}\n"),
        "{written}"
    );
    let tree = snapshot::read(&dir.path().join("EBAY_US.json")).unwrap();
    let file = taxonomy_tree::expired::read_beside(&dir.path().join("EBAY_US.json"), &tree)
        .unwrap()
        .unwrap();
    assert_eq!(file.version, "135");
    assert_eq!(
        file.mappings,
        [taxonomy_tree::expired::ExpiredMapping { from: 853, to: 852 }]
    );
    // The sites without expired categories get no file; their snapshots keep their bytes.
    let after = trees_and_mappings(dir.path());
    let names: Vec<&str> = after.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "EBAY_AU.json",
            "EBAY_DE.json",
            "EBAY_GB.json",
            "EBAY_US.expired.json",
            "EBAY_US.json"
        ]
    );
    for (name, old) in &before {
        let new = &after.iter().find(|(n, _)| n == name).unwrap().1;
        // US changed; the partial AU snapshot, served as it is, stays as it was.
        assert_eq!(old == new, name != "EBAY_US.json", "{name}");
    }
    for site in common::snapshot_sites() {
        assert_eq!(
            fake.requests_to(&fake_marketplace::taxonomy::expired_path(site.tree_id()))
                .len(),
            1
        );
    }

    // Again, with one more expired leaf: only the new one is listed; the file is a one-line diff.
    fake.set_expired_categories(Marketplace::Us, vec![(853, 852), (700_001, 855)]);
    let out = refresh(&fake, dir.path(), &["--force", "--sites", "EBAY_US"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stdout.contains("expired: 853"), "{stdout}");
    assert!(
        stdout.contains("expired: 700001 → 855 (Collectibles > Advertising > Soda > "),
        "{stdout}"
    );
    let rewritten = std::fs::read_to_string(&path).unwrap();
    assert!(
        rewritten.contains("\n    {\"from\":853,\"to\":852},\n    {\"from\":700001,\"to\":855}\n"),
        "{rewritten}"
    );
    // Nothing new: nothing listed, nothing written.
    let before = common::dir_bytes(dir.path());
    let out = refresh(&fake, dir.path(), &["--force", "--check"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(!stdout.contains("expired:"), "{stdout}");
    assert!(common::dir_bytes(dir.path()) == before);
}

#[test]
fn a_new_expired_category_makes_check_fail() {
    let fake = fake();
    // The tree is unchanged; only the mapping is new (8 is not a US category, 852 a leaf).
    fake.set_expired_categories(Marketplace::Us, vec![(8, 852)]);
    let dir = common::copy_of_snapshots();
    let before = common::dir_bytes(dir.path());
    let out = refresh(&fake, dir.path(), &["--force", "--check"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(stdout.contains("expired: 8 → 852"), "{stdout}");
    assert!(stderr.contains("stale"), "{stderr}");
    assert!(common::dir_bytes(dir.path()) == before, "--check wrote");
}

#[test]
fn a_failed_expired_categories_call_leaves_every_file_untouched() {
    let fake = fake();
    fake.set_tree(Marketplace::Us, changed_us_tree());
    fake.set_expired_categories(Marketplace::Us, vec![(853, 852)]);
    fake.fail_times(
        &fake_marketplace::taxonomy::expired_path(77),
        Fault::Status {
            status: 503,
            body: r#"{"errors":[{"errorId":2003,"domain":"ACCESS","category":"APPLICATION","message":"Internal error"}]}"#.into(),
            headers: vec![],
        },
        100,
    );
    let (_, stderr) = refresh_fails_writing_nothing(&fake, &["--force"]);
    assert!(stderr.contains("EBAY_DE: download failed"), "{stderr}");
    assert!(stderr.contains("nothing was written"), "{stderr}");
}

#[test]
fn a_mapping_that_breaks_the_rule_is_refused_with_its_line() {
    let fake = fake();
    // 15032 ("Cell Phones & Accessories") has subcategories: not a replacement.
    fake.set_expired_categories(Marketplace::Us, vec![(8, 852), (9, 15032)]);
    let dir = common::copy_of_snapshots();
    let before = common::dir_bytes(dir.path());
    let out = refresh(&fake, dir.path(), &["--force"]);
    let (stdout, stderr) = text(&out);
    assert!(!out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "EBAY_US.expired.json:10: expired category 9 is mapped to 15032, which is not a leaf"
        ),
        "{stderr}"
    );
    assert!(common::dir_bytes(dir.path()) == before);
    // An expired id that is still a category of the tree.
    fake.set_expired_categories(Marketplace::Us, vec![(853, 852)]);
    let out = refresh(&fake, dir.path(), &["--force", "--sites", "EBAY_US"]);
    let (_, stderr) = text(&out);
    assert!(!out.status.success());
    assert!(
        stderr.contains("category 853 (mapped to 852) is still a category of the tree"),
        "{stderr}"
    );
    assert!(common::dir_bytes(dir.path()) == before);
}

#[test]
fn only_trees_whose_version_changed_are_downloaded() {
    let fake = fake();
    fake.set_tree(Marketplace::Us, changed_us_tree());
    let dir = common::copy_of_snapshots();
    let out = refresh(&fake, dir.path(), &[]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // One getDefaultCategoryTreeId a site, then a tree only where it is needed.
    assert_eq!(fake.requests_to(DEFAULT_TREE_ID_PATH).len(), 4);
    assert!(
        stdout.contains("EBAY_GB: unchanged (version 91)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("EBAY_DE: unchanged (version DE_New_Structure_Oct2019)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("EBAY_US: to download (version 134 → 135)"),
        "{stdout}"
    );
    assert_eq!(fake.requests_to(&tree_path(0)).len(), 1, "US changed");
    assert!(fake.requests_to(&tree_path(3)).is_empty(), "GB unchanged");
    assert!(fake.requests_to(&tree_path(77)).is_empty(), "DE unchanged");
    // The AU snapshot says it is partial ("complete": false): never current, even at the
    // same version.
    assert!(
        stdout.contains("EBAY_AU: to download (the held copy is partial)"),
        "{stdout}"
    );
    assert_eq!(fake.requests_to(&tree_path(15)).len(), 1);
    // The downloaded AU tree has the partial snapshot's categories: nothing says that it is
    // complete, so the snapshot stays partial.
    let au_line = stdout
        .lines()
        .skip_while(|l| !l.starts_with("EBAY_AU: 10123 categories"))
        .nth(1)
        .unwrap_or_default();
    assert!(
        au_line.starts_with("  unchanged, and still partial"),
        "{stdout}"
    );
    assert!(
        !snapshot::read(&dir.path().join("EBAY_AU.json"))
            .unwrap()
            .meta
            .complete
    );
    assert_eq!(
        snapshot::read(&dir.path().join("EBAY_US.json"))
            .unwrap()
            .meta
            .version,
        "135"
    );

    // Now everything is current: a second refresh downloads only the partial AU tree.
    fake.clear_requests();
    let out = refresh(&fake, dir.path(), &[]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("EBAY_US: unchanged (version 135)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("EBAY_AU: to download (the held copy is partial)"),
        "{stdout}"
    );
    let trees: Vec<usize> = common::snapshot_sites()
        .iter()
        .map(|s| fake.requests_to(&tree_path(s.tree_id())).len())
        .collect();
    let au = common::snapshot_sites()
        .iter()
        .position(|s| *s == Marketplace::Au)
        .unwrap();
    for (i, n) in trees.iter().enumerate() {
        assert_eq!(
            *n,
            usize::from(i == au),
            "{trees:?}: only AU, still partial"
        );
    }

    // A snapshot in another language than the one asked for is not current.
    fake.clear_requests();
    let out = refresh(
        &fake,
        dir.path(),
        &["--check", "--sites", "EBAY_GB", "--language", "de-DE"],
    );
    let (stdout, stderr) = text(&out);
    assert!(
        stdout.contains("EBAY_GB: to download (held in en-GB, asked for de-DE)"),
        "{stdout}\n{stderr}"
    );
    assert_eq!(fake.requests_to(&tree_path(3)).len(), 1);

    // --force downloads every tree and asks no version.
    fake.clear_requests();
    let out = refresh(&fake, dir.path(), &["--check", "--force"]);
    assert!(out.status.success(), "{:?}", text(&out));
    assert!(fake.requests_to(DEFAULT_TREE_ID_PATH).is_empty());
    for site in common::snapshot_sites() {
        assert_eq!(fake.requests_to(&tree_path(site.tree_id())).len(), 1);
    }
}

#[test]
fn a_failed_version_check_writes_nothing() {
    let fake = fake();
    fake.set_tree(Marketplace::Us, changed_us_tree());
    fake.fail_times(
        DEFAULT_TREE_ID_PATH,
        Fault::Status {
            status: 400,
            body: r#"{"errors":[{"errorId":62003,"domain":"API_TAXONOMY","category":"REQUEST","message":"The specified marketplace ID was not found."}]}"#.into(),
            headers: vec![],
        },
        100,
    );
    let (_, stderr) = refresh_fails_writing_nothing(&fake, &[]);
    assert!(stderr.contains("getDefaultCategoryTreeId"), "{stderr}");
    let trees: usize = common::snapshot_sites()
        .iter()
        .map(|s| fake.requests_to(&tree_path(s.tree_id())).len())
        .sum();
    assert_eq!(trees, 0);
}

/// `refresh --help` names every marketplace of the table (with its default tree) and the
/// settings that matter against the real service: credentials, scope, tree path, directory.
#[test]
fn refresh_help_lists_every_marketplace_and_the_settings() {
    let out = common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
        .args(["refresh", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{help}");
    for m in Marketplace::ALL {
        let entry = format!("{} ({})", m.marketplace_id(), m.tree_id());
        assert!(help.contains(&entry), "{entry} missing from {help}");
    }
    for setting in [
        "--tree-path",
        "MARKETPLACE_TREE_PATH",
        "MARKETPLACE_SCOPE",
        marketplace_client::oauth::Endpoints::PRODUCTION_SCOPE,
        "{base_url}/oauth/api_scope",
        "MARKETPLACE_CLIENT_ID",
        "MARKETPLACE_ENV",
        "TAXONOMY_SNAPSHOTS_DIR",
    ] {
        assert!(help.contains(setting), "{setting} missing from {help}");
    }
}

/// Any marketplace of the table can be fetched: `--sites EBAY_FR` writes `EBAY_FR.json`, which
/// passes the build's checks, and the generator compiles France in from it.
#[test]
fn a_marketplace_without_a_snapshot_gets_one() {
    let fake = fake();
    // France's tree: the UK's structure under France's tree id, marketplace and language.
    let mut france = common::committed(Marketplace::Gb);
    france.meta.tree_id = Marketplace::Fr.tree_id();
    france.meta.marketplace_id = "EBAY_FR".into();
    france.meta.language = "fr-FR".into();
    fake.set_tree(Marketplace::Fr, france);
    let dir = common::copy_of_snapshots();
    let out = refresh(&fake, dir.path(), &["--sites", "EBAY_FR"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert_eq!(fake.requests_to(&tree_path(71)).len(), 1);
    let tree = snapshot::read_site(Marketplace::Fr, dir.path()).unwrap();
    assert_eq!(
        (tree.meta.tree_id, tree.meta.language.as_str()),
        (71, "fr-FR")
    );
    assert_eq!(
        snapshot::sites_in(dir.path()),
        [
            Marketplace::Us,
            Marketplace::Gb,
            Marketplace::Au,
            Marketplace::Fr,
            Marketplace::De
        ]
    );
    // What taxonomy-data's build script generates from that directory compiles France in.
    let code =
        taxonomy_codegen::build_script::generate_for(&[Marketplace::Fr], dir.path(), Vec::new())
            .unwrap();
    let france_tables = &code[code.find("pub(crate) static FR: SiteTables").unwrap()..];
    assert!(
        france_tables.starts_with("pub(crate) static FR: SiteTables = SiteTables {\n    compiled_in: true,\n    tree_id: 71,"),
        "{}",
        &france_tables[..200]
    );
    assert!(code.contains("    /// France: marketplace `EBAY_FR`, category tree 71 (fr-FR). Compiled in: 12509 categories"));
}

/// `--sites` naming no site (`--sites ""`, `--sites ,`) is an error, not every marketplace:
/// on a directory of one site it asked all 20 marketplaces for their versions (and would have
/// written 16 new snapshots).
#[test]
fn an_empty_sites_list_is_an_error() {
    let fake = fake();
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        common::snapshots_dir().join("EBAY_US.json"),
        dir.path().join("EBAY_US.json"),
    )
    .unwrap();
    let before = common::dir_bytes(dir.path());
    for sites in ["", ",", " , "] {
        for mode in [&[][..], &["--check"], &["--dry-run"], &["--force"]] {
            let mut args = vec!["--sites", sites];
            args.extend_from_slice(mode);
            let out = refresh(&fake, dir.path(), &args);
            let (stdout, stderr) = text(&out);
            assert!(!out.status.success(), "{args:?}: {stdout}\n{stderr}");
            assert!(
                stderr.contains("--sites names no site"),
                "{args:?}: {stderr}"
            );
            assert!(
                fake.requests().is_empty(),
                "{args:?} asked the service: {:?}",
                fake.requests().iter().map(|r| &r.path).collect::<Vec<_>>()
            );
            assert!(common::dir_bytes(dir.path()) == before, "{args:?} wrote");
        }
    }
}

/// What a terminal must never receive from a server: escape sequences (ESC, BEL) and the
/// right-to-left override.
fn assert_no_terminal_control(what: &str, stdout: &str, stderr: &str) {
    for c in ['\u{1b}', '\u{7}', '\u{202e}'] {
        assert!(
            !stdout.contains(c) && !stderr.contains(c),
            "{what}: {c:?} reached the terminal:\n{stdout}\n{stderr}"
        );
    }
}

/// A hostile tree cannot drive the terminal or reach the tables: a version or a name holding
/// an escape sequence is refused when the tree is validated (nothing is written), and what is
/// printed of it, by `refresh` and `--dry-run` alike, is escaped.
#[test]
fn a_hostile_tree_is_refused_and_puts_no_escape_sequence_on_the_terminal() {
    let fake = fake();
    // A version that clears the screen and retitles the window.
    let mut tree = changed_us_tree();
    tree.meta.version = "135\u{1b}[2J\u{1b}]0;owned\u{7}".into();
    fake.set_tree(Marketplace::Us, tree);
    for mode in [&[][..], &["--dry-run"], &["--check"]] {
        let mut args = vec!["--sites", "EBAY_US"];
        args.extend_from_slice(mode);
        let (stdout, stderr) = refresh_fails_writing_nothing(&fake, &args);
        assert_no_terminal_control(&format!("version, {args:?}"), &stdout, &stderr);
        assert!(
            stderr.contains("categoryTreeVersion") && stderr.contains("\\u{1b}[2J"),
            "{stderr}"
        );
    }
    // A name in red, the replacement of an expired category (so the summary shows its path),
    // and a name reversed by the right-to-left override.
    for name in ["\u{1b}[31mFountain Drinks", "Fountain\u{202e}sknirD"] {
        let mut tree = changed_us_tree();
        for c in &mut tree.categories {
            if c.id == 852 {
                c.name = name.into();
            }
        }
        fake.set_tree(Marketplace::Us, tree);
        fake.set_expired_categories(Marketplace::Us, vec![(853, 852)]);
        for mode in [&[][..], &["--dry-run"]] {
            let mut args = vec!["--sites", "EBAY_US"];
            args.extend_from_slice(mode);
            let (stdout, stderr) = refresh_fails_writing_nothing(&fake, &args);
            assert_no_terminal_control(&format!("name {name:?}, {args:?}"), &stdout, &stderr);
            assert!(stderr.contains("category 852: name"), "{stderr}");
        }
    }
}

/// Application tokens never use the consent host, so the API host alone is enough: the same
/// rule as `--base-url`, and as `TaxonomyClient::from_env` (both read `OAuthConfig`).
#[test]
fn the_api_host_alone_is_enough_for_a_refresh() {
    let fake = fake();
    let dir = common::copy_of_snapshots();
    let out = common::clean_command(env!("CARGO_BIN_EXE_snapshot"))
        .args(["refresh", "--check", "--sites", "EBAY_US", "--dir"])
        .arg(dir.path())
        .env("MARKETPLACE_BASE_URL", fake.base_url())
        .env("MARKETPLACE_CLIENT_ID", fake.client_id())
        .env("MARKETPLACE_CLIENT_SECRET", fake.client_secret())
        .output()
        .unwrap();
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("EBAY_US: unchanged"), "{stdout}");
}

/// The condition-policy file of `site` in `dir`.
fn conditions_file(dir: &std::path::Path, site: Marketplace) -> std::path::PathBuf {
    taxonomy_tree::conditions::path_beside(&dir.join(site.snapshot_file_name()))
}

#[test]
fn refresh_writes_each_sites_condition_policies_and_check_reports_changed_ones() {
    let fake = fake();
    let dir = common::copy_of_snapshots();
    // The committed snapshots carry no condition policies.
    for site in common::snapshot_sites() {
        assert!(!conditions_file(dir.path(), site).exists(), "{site}");
    }
    // Every tree is unchanged: the policies are fetched all the same, and written.
    let out = refresh(&fake, dir.path(), &[]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for site in common::snapshot_sites() {
        let path = conditions_file(dir.path(), site);
        assert!(
            stdout.contains(&format!("wrote {}", path.display())),
            "{stdout}"
        );
        let tree = snapshot::read(&dir.path().join(site.snapshot_file_name())).unwrap();
        let file = taxonomy_tree::conditions::read_in_step(
            &dir.path().join(site.snapshot_file_name()),
            &tree,
        )
        .unwrap()
        .unwrap();
        // One policy for every leaf, the fake's marked as made up.
        assert_eq!(file.category_count(), tree.leaf_count(), "{site}");
        assert!(file.made_up, "{site}");
        assert!(file.policies.len() < 10, "{site}: {}", file.policies.len());
    }
    assert!(
        stdout.contains("are made up (the answers say so: a fake marketplace's)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("condition policies: ")
            && stdout.contains("(new file EBAY_US.conditions.json)"),
        "{stdout}"
    );

    // The same answers again: nothing to write, and --check passes.
    let out = refresh(&fake, dir.path(), &["--check"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("(unchanged)"), "{stdout}");

    // A policy changes at the service: --check says the snapshots are stale and writes nothing.
    fake.set_item_condition_policy(
        Marketplace::Us,
        9355,
        Some(serde_json::json!({
            "itemConditionRequired": true,
            "itemConditions": [{"conditionId": "1000", "conditionDescription": "New"}]
        })),
    );
    let before = common::dir_bytes(dir.path());
    let out = refresh(&fake, dir.path(), &["--check"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("EBAY_US") && stdout.contains("changed, were"),
        "{stdout}"
    );
    assert!(stderr.contains("stale"), "{stderr}");
    assert!(common::dir_bytes(dir.path()) == before, "--check wrote");
}

#[test]
fn a_failed_condition_policies_call_leaves_every_file_untouched() {
    let fake = fake();
    fake.fail_times(
        "/sell/metadata/v1/marketplace/EBAY_DE/get_item_condition_policies",
        Fault::Status {
            status: 500,
            body: r#"{"errors":[{"errorId":46000,"domain":"API_METADATA","category":"APPLICATION","message":"There was a problem with an eBay internal system or process."}]}"#.into(),
            headers: vec![],
        },
        100,
    );
    // The trees are unchanged: only the policies were to be written, and none is.
    let (_, stderr) = refresh_fails_writing_nothing(&fake, &[]);
    assert!(stderr.contains("EBAY_DE: download failed"), "{stderr}");
    assert!(stderr.contains("46000"), "{stderr}");
}

/// A getItemConditionPolicies answer holding more than eBay's data can (here 2,001 distinct
/// policies, above `taxonomy_tree::conditions::MAX_POLICIES`) is not written: `refresh` warns
/// on standard error naming the bound and the figure, keeps the committed file byte for byte,
/// and still refreshes the trees.
#[test]
fn a_condition_policies_answer_above_the_bound_keeps_the_previous_file() {
    let fake = fake();
    let dir = common::copy_of_snapshots();
    let out = refresh(&fake, dir.path(), &["--sites", "EBAY_US"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let path = conditions_file(dir.path(), Marketplace::Us);
    let before = std::fs::read(&path).unwrap();

    // 2,001 leaves, each its own policy: a free-text descriptor of its own maximum length.
    let tree = snapshot::read(&dir.path().join(Marketplace::Us.snapshot_file_name())).unwrap();
    for (leaf, n) in tree
        .categories
        .iter()
        .filter(|c| c.leaf)
        .take(2_001)
        .zip(1..)
    {
        fake.set_item_condition_policy(
            Marketplace::Us,
            leaf.id,
            Some(serde_json::json!({
                "itemConditionRequired": true,
                "itemConditions": [{
                    "conditionId": "1000",
                    "conditionDescription": "New",
                    "conditionDescriptors": [{
                        "conditionDescriptorId": "27503",
                        "conditionDescriptorName": "Certification Number",
                        "conditionDescriptorConstraint": {
                            "cardinality": "SINGLE", "mode": "FREE_TEXT", "maxLength": n,
                        },
                    }],
                }],
            })),
        );
    }
    let out = refresh(&fake, dir.path(), &["--sites", "EBAY_US"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains(
            "warning: EBAY_US: the getItemConditionPolicies answer is refused and not written"
        ) && stderr.contains("the committed EBAY_US.conditions.json is kept as it was"),
        "{stderr}"
    );
    // The figure: the 2,001 set, and the fake's made-up policies of the other leaves.
    let figure: usize = stderr
        .split("distinct policies: ")
        .nth(1)
        .and_then(|rest| rest.split(", above the bound of 2000 ").next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no figure and bound in {stderr}"));
    assert!(figure > 2_001, "{stderr}");
    assert!(
        !stdout.contains(&format!("wrote {}", path.display())),
        "{stdout}"
    );
    assert!(
        std::fs::read(&path).unwrap() == before,
        "the file was rewritten"
    );
}

/// eBay's Metadata API does not serve every marketplace its Taxonomy API does: when
/// getItemConditionPolicies refuses one (400, errorId 46001, "marketplace id not found"), the
/// refresh still writes that marketplace's new tree and the others' policies, and says on
/// standard error that its condition policies are unavailable (the whole refresh failed,
/// writing nothing).
#[test]
fn a_marketplace_the_metadata_api_refuses_still_gets_its_tree_and_its_policies_are_said_unavailable()
 {
    let fake = fake();
    fake.set_tree(Marketplace::Us, changed_us_tree());
    fake.fail_times(
        &fake_marketplace::metadata::condition_policies_path("EBAY_US"),
        Fault::Status {
            status: 400,
            body: r#"{"errors":[{"errorId":46001,"domain":"API_METADATA","category":"REQUEST","message":"The specified marketplace ID was not found."}]}"#.into(),
            headers: vec![],
        },
        100,
    );
    let dir = common::copy_of_snapshots();
    let out = refresh(&fake, dir.path(), &["--sites", "EBAY_US,EBAY_DE"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let written = snapshot::read(&dir.path().join("EBAY_US.json")).unwrap();
    assert_eq!(written.meta.version, "135");
    assert!(written.get(853).is_none());
    assert!(
        !conditions_file(dir.path(), Marketplace::Us).exists(),
        "{stdout}"
    );
    assert!(
        conditions_file(dir.path(), Marketplace::De).exists(),
        "{stdout}"
    );
    assert!(
        stderr.contains(
            "warning: EBAY_US: its condition policies are unavailable: getItemConditionPolicies refused EBAY_US (errorId 46001)"
        ),
        "{stderr}"
    );
    assert!(
        stdout.contains("condition policies: unavailable (no EBAY_US.conditions.json is written"),
        "{stdout}"
    );
}

/// The listing-structure file of `site` in `dir`.
fn structure_file(dir: &std::path::Path, site: Marketplace) -> std::path::PathBuf {
    taxonomy_tree::structure::path_beside(&dir.join(site.snapshot_file_name()))
}

#[test]
fn refresh_writes_each_sites_listing_structure_policies_and_check_reports_a_changed_one() {
    let fake = fake();
    let dir = common::copy_of_snapshots();
    for site in common::snapshot_sites() {
        assert!(!structure_file(dir.path(), site).exists(), "{site}");
    }
    let out = refresh(&fake, dir.path(), &[]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    for site in common::snapshot_sites() {
        let path = structure_file(dir.path(), site);
        assert!(
            stdout.contains(&format!("wrote {}", path.display())),
            "{stdout}"
        );
        let snapshot_path = dir.path().join(site.snapshot_file_name());
        let tree = snapshot::read(&snapshot_path).unwrap();
        let file = taxonomy_tree::structure::read_in_step(&snapshot_path, &tree)
            .unwrap()
            .unwrap();
        // A flag for every leaf, the fake's marked as made up; most take variations.
        assert_eq!(file.category_count(), tree.leaf_count(), "{site}");
        assert!(file.made_up, "{site}");
        assert!(
            file.supported.len() > file.not_supported.len() && !file.not_supported.is_empty(),
            "{site}"
        );
    }
    assert!(
        stdout.contains("listing-structure policies: variations for ")
            && stdout.contains("(new file EBAY_US.structure.json)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("are made up (the answers say so: a fake marketplace's)"),
        "{stdout}"
    );

    // The same answers again: --check passes.
    let out = refresh(&fake, dir.path(), &["--check"]);
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stdout}\n{stderr}");

    // T-Shirts stop taking variations at the service: --check says stale and writes nothing.
    fake.set_variations_supported(Marketplace::Us, 15687, Some(false));
    let before = common::dir_bytes(dir.path());
    let out = refresh(&fake, dir.path(), &["--check"]);
    let (stdout, stderr) = text(&out);
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("listing-structure policies: ") && stdout.contains("changed, were"),
        "{stdout}"
    );
    assert!(stderr.contains("stale"), "{stderr}");
    assert!(common::dir_bytes(dir.path()) == before, "--check wrote");

    // Written, the file says so.
    let out = refresh(&fake, dir.path(), &[]);
    assert!(out.status.success(), "{:?}", text(&out));
    let snapshot_path = dir.path().join("EBAY_US.json");
    let tree = snapshot::read(&snapshot_path).unwrap();
    let file = taxonomy_tree::structure::read_in_step(&snapshot_path, &tree)
        .unwrap()
        .unwrap();
    assert_eq!(file.variations_supported(15687), Some(false));
}

#[test]
fn a_failed_listing_structure_policies_call_leaves_every_file_untouched() {
    let fake = fake();
    fake.fail_times(
        &fake_marketplace::metadata::structure_policies_path("EBAY_DE"),
        Fault::Status {
            status: 500,
            body: r#"{"errors":[{"errorId":46000,"domain":"API_METADATA","category":"APPLICATION","message":"There was a problem with an eBay internal system or process."}]}"#.into(),
            headers: vec![],
        },
        100,
    );
    // The trees are unchanged: only the policies were to be written, and none is (not the
    // condition policies either, nor another site's).
    let (_, stderr) = refresh_fails_writing_nothing(&fake, &[]);
    assert!(stderr.contains("EBAY_DE: download failed"), "{stderr}");
    assert!(stderr.contains("46000"), "{stderr}");
}
