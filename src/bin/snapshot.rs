//! `cargo run --bin snapshot`: make, check and refresh the committed category-tree snapshots.
//!
//! ```text
//! snapshot refresh [--sites EBAY_US,…] [--language TAG] [--base-url URL]
//!                  [--tree-path path|query|auto] [--check] [--dry-run] [--force]
//! snapshot import FILE… [--taken-at DATE] [--source TEXT] [--note TEXT] [--language TAG]
//!                 [--partial]
//! snapshot verify
//! snapshot aspects refresh [--sites …] [--aspects-dir DIR] [--force]
//! snapshot aspects refresh --pinned [--check] [--force]
//! snapshot aspects pin --site EBAY_US --category ID [--category …]
//! snapshot aspects check --site EBAY_US --category ID [--offline] LISTING…
//! snapshot aspects diff OLD NEW [--json] [--category ID --listing FILE…]
//! snapshot search [--site EBAY_US] WORDS…
//! ```
//!
//! `-v` (debug) or `-vv` (trace) shows the HTTP attempts and token events on standard error, as
//! does `RUST_LOG` (e.g. `RUST_LOG=marketplace_client=debug`); no token is ever printed.
//!
//! `refresh` needs credentials: `MARKETPLACE_CLIENT_ID` and `MARKETPLACE_CLIENT_SECRET` (or
//! `MARKETPLACE_CONFIG`, or a ready `MARKETPLACE_ACCESS_TOKEN`), see the README.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

// Before the modules that print: `outln!` and `out!` (stdout, quiet on a closed pipe) and
// `errln!` (stderr, never a panic), all escaped for a terminal.
#[path = "shared/output.rs"]
#[macro_use]
mod output;
#[path = "snapshot/aspects.rs"]
mod aspects;
#[path = "snapshot/pinned.rs"]
mod pinned;
#[path = "shared/snapshots_dir.rs"]
#[allow(dead_code)] // `shown` and FROM_DEFAULT are `listing`'s
mod snapshots_dir;
#[path = "shared/verbosity.rs"]
mod verbosity;
use marketplace_toolkit::token_store;
use marketplaces::Marketplace;
use taxonomy_codegen::build_script::SNAPSHOTS_DIR_ENV;
use taxonomy_codegen::codegen::{self, SiteData};
use taxonomy_tree::clock::today_utc;
use taxonomy_tree::decode::{Provenance, decode_tree};
use taxonomy_tree::pipeline::{self, Prepared};
use taxonomy_tree::snapshot;

/// Make, check and refresh the committed category-tree snapshots.
#[derive(Parser)]
#[command(name = "snapshot", version)]
struct Cli {
    /// The snapshots directory (default: TAXONOMY_SNAPSHOTS_DIR, else ./snapshots).
    #[arg(long, global = true)]
    dir: Option<PathBuf>,
    /// Show the HTTP attempts and token events on standard error (-vv: more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, long_help = verbosity::VERBOSE_HELP)]
    verbose: u8,
    /// Share the application token through this store (a postgres:// URL; overrides
    /// MARKETPLACE_TOKEN_STORE).
    #[arg(long, global = true, long_help = token_store::TOKEN_STORE_HELP)]
    token_store: Option<String>,
    #[command(subcommand)]
    command: Command,
}

/// `--token-store`, set once by `main` for the live client.
static TOKEN_STORE: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

#[derive(Subcommand)]
enum Command {
    /// Download the trees from the live service and replace the snapshots that changed
    /// (all sites fetched concurrently; nothing is written unless every site succeeded).
    /// First asks each site's current version (getDefaultCategoryTreeId) and downloads only
    /// the trees whose version differs from the snapshot's (or whose snapshot is partial or in
    /// another language, or whose expired-category file does not go with it).
    #[command(after_help = refresh_settings_help())]
    Refresh {
        #[arg(long, value_delimiter = ',', help = sites_help())]
        sites: Vec<String>,
        /// The language of the names (`Accept-Language`; default: each site's language).
        #[arg(long)]
        language: Option<String>,
        /// The API host, e.g. a fake on loopback (default: MARKETPLACE_BASE_URL, or the
        /// production or sandbox host per MARKETPLACE_ENV).
        #[arg(long)]
        base_url: Option<String>,
        /// The getCategoryTree path form: `path` (`/category_tree/{id}`, eBay's documented
        /// form), `query` (`/category_tree/get?category_tree_id={id}`) or `auto` (the path
        /// form, then the query form on a 404). Default: MARKETPLACE_TREE_PATH, else `path`
        /// on eBay's hosts and `auto` on any other.
        #[arg(long, value_parser = parse_tree_path)]
        tree_path: Option<marketplace_client::taxonomy::TreePath>,
        /// Write nothing; exit 1 when a snapshot is stale (the service has a newer version, or
        /// the snapshot is missing, in another language or out of step with its expired
        /// categories), for CI. A partial snapshot of the current version is a warning: a
        /// complete copy would be better, but nothing is out of date.
        #[arg(long)]
        check: bool,
        /// With --check: exit 1 for a partial snapshot too.
        #[arg(long, requires = "check")]
        strict: bool,
        /// Show the changes but write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Download every tree, even those whose version is the snapshot's.
        #[arg(long)]
        force: bool,
    },
    /// Turn saved get-category-tree responses into snapshots (decode, validate, atomic write).
    Import {
        /// Saved response bodies of the get-category-tree call.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// When the data was taken (default: today, UTC).
        #[arg(long)]
        taken_at: Option<String>,
        /// Where the data came from (default: the file's name).
        #[arg(long)]
        source: Option<String>,
        /// What a user of the data should know (staleness, partial coverage).
        #[arg(long)]
        note: Option<String>,
        /// The language of the names (default: the site's language).
        #[arg(long)]
        language: Option<String>,
        /// The file is not a complete copy of its version (e.g. cut to a depth): the snapshot
        /// says so (`"complete": false`) and `refresh` always downloads it again.
        #[arg(long)]
        partial: bool,
        /// Validate and show the changes, but write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Load and check every committed snapshot as the build does: its structure, that it is
    /// the tree of the site it is named after, and that its tables can be generated.
    Verify,
    /// Item aspects: download each site's fetchItemAspects file, check listings' aspects
    /// before they go out, compare two versions.
    Aspects {
        #[command(subcommand)]
        command: aspects::AspectsCommand,
    },
    /// Find leaf categories by keyword, offline (`Site::search`): the ten best of the tree
    /// compiled into this command, with their ids and paths (getCategorySuggestions does the
    /// same online). It reads no snapshots directory.
    Search {
        /// The marketplace: its id (EBAY_DE), the same without `EBAY_` (de) or its tree id
        /// (77).
        #[arg(long, default_value = "EBAY_US")]
        site: String,
        /// The words to look for, e.g. "iphone case" or, on EBAY_DE, "handyhülle" (case,
        /// accents, plurals and order do not matter; a compound is cut into words the names
        /// have).
        #[arg(required = true)]
        words: Vec<String>,
    },
}

/// `snapshot search`: the ten best leaves of a compiled-in site; exit 1 when none matches,
/// naming the nearest words of the site's names (`Site::nearest_words`).
fn search(site: &str, query: &str) -> Result<ExitCode, String> {
    let site = taxonomy_data::Site::from_marketplace(parse_site("--site", site)?);
    if !site.is_compiled_in() {
        return Err(format!(
            "{site} is not compiled into this command (it had no snapshot when it was built)"
        ));
    }
    eprintln!(
        "{site}: searching the tree compiled into this command (version {}, taken {})",
        site.tree_version(),
        site.taken_at()
    );
    let mut found = 0;
    for leaf in site.search(query).take(10) {
        outln!("{:>7}  {}", leaf.id(), leaf.path());
        found += 1;
    }
    if found == 0 {
        let nearest = site.nearest_words(query);
        if nearest.len() == 0 {
            eprintln!(
                "no leaf category of {site} matches {query:?}, and no word of its names is near"
            );
        } else {
            eprintln!("no leaf category of {site} matches {query:?}; nearest words: {nearest}");
        }
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// `refresh --sites`' help: every marketplace and its default tree, from the marketplace table.
fn sites_help() -> String {
    let all: Vec<String> = Marketplace::ALL
        .iter()
        .map(|m| format!("{} ({})", m.marketplace_id(), m.tree_id()))
        .collect();
    format!(
        "The sites, comma-separated; any of: {} (an id also without `EBAY_`, e.g. de). Default: the sites with a snapshot in the directory",
        all.join(", ")
    )
}

/// The site of a flag (`--site`) that takes one: what [`Marketplace::parse`], the one parser
/// of site names, takes (a marketplace id, the same without `EBAY_`, a tree id), or a message
/// naming the flag and the marketplace the text most likely meant.
fn parse_site(flag: &str, text: &str) -> Result<Marketplace, String> {
    Marketplace::parse(text).map_err(|problem| format!("{flag} {text:?} is {problem}"))
}

/// The sites of a `--sites` flag (what [`parse_site`] takes, comma-separated, as
/// TAXONOMY_SITES takes them), or a message about the flag (not about the build's variable)
/// naming the entry that is not a marketplace and the one it most likely meant.
fn parse_sites_flag(names: &[String]) -> Result<Vec<Marketplace>, String> {
    use taxonomy_codegen::build_script::{BuildError, parse_site_filter};
    parse_site_filter(&names.join(",")).map_err(|e| match e {
        BuildError::BadSiteFilter { entry, problem, .. } => {
            format!("--sites {entry:?} is {problem}; --sites takes them comma-separated")
        }
        other => format!("--sites: {other}"),
    })
}

/// `refresh --help`'s closing section: the settings it reads from the environment.
fn refresh_settings_help() -> String {
    use marketplace_client::oauth::{Endpoints, OAuthConfig};
    use marketplace_client::taxonomy::ClientConfig;
    const ENV_ACCESS_TOKEN: &str = OAuthConfig::ENV_ACCESS_TOKEN;
    const ENV_BASE_URL: &str = OAuthConfig::ENV_BASE_URL;
    const ENV_CLIENT_ID: &str = OAuthConfig::ENV_CLIENT_ID;
    const ENV_CLIENT_SECRET: &str = OAuthConfig::ENV_CLIENT_SECRET;
    const ENV_CONFIG_FILE: &str = OAuthConfig::ENV_CONFIG_FILE;
    const ENV_ENVIRONMENT: &str = OAuthConfig::ENV_ENVIRONMENT;
    const ENV_SCOPE: &str = OAuthConfig::ENV_SCOPE;
    const PRODUCTION_SCOPE: &str = Endpoints::PRODUCTION_SCOPE;
    const ENV_TREE_PATH: &str = ClientConfig::ENV_TREE_PATH;
    format!(
        "Settings (environment variables):
  {ENV_CLIENT_ID}, {ENV_CLIENT_SECRET}
      the application's keys (eBay: App ID and Cert ID); or {ENV_CONFIG_FILE}, the SDKs'
      configuration file; or a ready {ENV_ACCESS_TOKEN}
  {ENV_ENVIRONMENT}
      production (default) or sandbox
  {ENV_BASE_URL}
      another API host (e.g. a fake on loopback), as --base-url
  {ENV_SCOPE}
      the application token's scopes, space-separated. Default: {PRODUCTION_SCOPE}
      on production and the sandbox alike; {{base_url}}/oauth/api_scope on another host
  {ENV_TREE_PATH}
      the getCategoryTree form, as --tree-path: path (default on eBay's hosts), query or
      auto (default on another host)
  {SNAPSHOTS_DIR_ENV}
      the snapshots directory, as --dir (default: ./snapshots)"
    )
}

fn parse_tree_path(text: &str) -> Result<marketplace_client::taxonomy::TreePath, String> {
    marketplace_client::taxonomy::TreePath::parse(text)
        .ok_or_else(|| format!("{text:?} is not a tree path form; use path, query or auto"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    verbosity::init(cli.verbose);
    TOKEN_STORE.get_or_init(|| cli.token_store.clone());
    let (dir, from) = snapshots_dir::snapshots_dir(cli.dir);
    // `search` reads the trees compiled into this command, never the directory: naming it
    // would say it does.
    if !matches!(cli.command, Command::Search { .. }) {
        snapshots_dir::announce(&dir, from);
    }
    match run(cli.command, &dir) {
        Ok(code) => code,
        Err(message) => {
            errln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(command: Command, dir: &Path) -> Result<ExitCode, String> {
    match command {
        Command::Refresh {
            sites,
            language,
            base_url,
            tree_path,
            check,
            strict,
            dry_run,
            force,
        } => live::refresh(
            dir,
            &sites,
            language.as_deref(),
            base_url.as_deref(),
            tree_path,
            live::Mode {
                check,
                strict,
                dry_run,
                force,
            },
        ),
        Command::Import {
            files,
            taken_at,
            source,
            note,
            language,
            partial,
            dry_run,
        } => {
            let mut prepared = Vec::new();
            for file in &files {
                let body = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
                let origin = file.display().to_string();
                let file_name = file
                    .file_name()
                    .map_or(origin.clone(), |n| n.to_string_lossy().into_owned());
                let provenance = Provenance {
                    language: language.clone().unwrap_or_default(),
                    taken_at: taken_at.clone().unwrap_or_else(today_utc),
                    source: source
                        .clone()
                        .unwrap_or_else(|| format!("imported from {file_name}")),
                    note: note.clone(),
                };
                let mut tree = decode_tree(&body, &provenance).map_err(|source| {
                    pipeline::PipelineError::Decode {
                        origin: origin.clone(),
                        source,
                    }
                    .to_string()
                })?;
                // The language defaults to the site's.
                if tree.meta.language.is_empty() {
                    tree.meta.language = Marketplace::from_tree_id(tree.meta.tree_id)
                        .map_or("en-US", Marketplace::default_language)
                        .to_string();
                }
                tree.meta.complete = !partial;
                let p = pipeline::prepare_tree(tree, &origin, dir).map_err(|e| e.to_string())?;
                if let Some(other) = prepared.iter().find(|q: &&Prepared| q.site == p.site) {
                    return Err(format!(
                        "{origin} and an earlier file are both trees of {}: import one per site",
                        other.site
                    ));
                }
                prepared.push(p);
            }
            // Every file decoded and validated: only now does anything touch the disk.
            for p in &prepared {
                report(p, pipeline::WriteWhen::AnyChange);
            }
            if !dry_run {
                create_dir(dir)?;
                pipeline::commit_all(dir, &prepared, pipeline::WriteWhen::AnyChange)
                    .map_err(|e| e.to_string())?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Aspects { command } => aspects::run(command, dir),
        Command::Search { site, words } => search(&site, &words.join(" ")),
        Command::Verify => {
            let sites = snapshot::sites_in(dir);
            if sites.is_empty() {
                return Err(format!(
                    "{} holds no snapshot (EBAY_*.json) to verify",
                    dir.display()
                ));
            }
            let mut failed = false;
            for site in sites {
                // The build's own checks: `snapshot::read_site` is what it loads snapshots
                // with, and `codegen::generate` what it turns them into tables with.
                let checked = snapshot::read_site(site, dir)
                    .map_err(|e| e.to_string())
                    .and_then(|tree| {
                        // The expired-category mapping beside it, checked against the tree;
                        // as in the build, one out of step with it is passed over.
                        use taxonomy_tree::expired::{ExpiredError, read_in_step};
                        let expired =
                            match read_in_step(&dir.join(site.snapshot_file_name()), &tree) {
                                Ok(file) => file.map_or_else(Vec::new, |f| f.mappings),
                                Err(stale @ ExpiredError::OutOfStep { .. }) => {
                                    errln!("warning: {stale}");
                                    Vec::new()
                                }
                                Err(e) => return Err(e.to_string()),
                            };
                        // The condition policies beside it likewise (getItemConditionPolicies).
                        use taxonomy_tree::conditions::{self, ConditionsError};
                        let policies = match conditions::read_in_step(
                            &dir.join(site.snapshot_file_name()),
                            &tree,
                        ) {
                            Ok(file) => file,
                            Err(stale @ ConditionsError::OutOfStep { .. }) => {
                                errln!("warning: {stale}");
                                None
                            }
                            Err(e) => return Err(e.to_string()),
                        };
                        let with_policies: Vec<_> =
                            policies.iter().map(|file| (site, file)).collect();
                        codegen::generate_all(
                            &[SiteData {
                                site,
                                tree: Some(&tree),
                                expired: &expired,
                            }],
                            &[],
                            &with_policies,
                        )
                        .map(|_| (tree, policies))
                        .map_err(|e| e.to_string())
                    });
                match checked {
                    Ok((tree, policies)) => {
                        outln!(
                            "{site}: {} categories, {} leaves, version {}, taken {}",
                            tree.len(),
                            tree.leaf_count(),
                            tree.meta.version,
                            tree.meta.taken_at
                        );
                        match policies {
                            Some(file) => outln!(
                                "  condition policies: {} distinct for {} leaves{}",
                                file.policies.len(),
                                file.category_count(),
                                if file.made_up {
                                    " (made up by a fake marketplace: never commit them)"
                                } else {
                                    ""
                                }
                            ),
                            None => outln!(
                                "  condition policies: none (`snapshot refresh` with credentials writes {}.conditions.json)",
                                site.marketplace_id()
                            ),
                        }
                    }
                    Err(e) => {
                        failed = true;
                        errln!("error: {e}");
                    }
                }
            }
            Ok(if failed {
                ExitCode::FAILURE
            } else {
                ExitCode::SUCCESS
            })
        }
    }
}

/// Creates the snapshots directory (and its parents) before the first write into it: a new
/// project's first `refresh --sites …` starts without one.
fn create_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// The change summary of one site. Everything in it that came from the service or a file is
/// printed through `escaped` (a validated tree holds no control character, but the summary
/// does not rely on it).
fn report(p: &Prepared, when: pipeline::WriteWhen) {
    use crate::output::escaped;
    outln!(
        "{}: {} categories, {} leaves, version {} → {}",
        p.site,
        p.tree.len(),
        p.tree.leaf_count(),
        escaped(&p.tree.meta.version),
        p.path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned())
    );
    if let Some(e) = &p.previous_error {
        outln!(
            "  the previous snapshot was unreadable ({}); it is replaced",
            escaped(e)
        );
    }
    let changed = match when {
        pipeline::WriteWhen::AnyChange => p.changed,
        pipeline::WriteWhen::TreeChanged => p.content_changed,
    };
    match (&p.diff, changed) {
        (_, false) if p.still_partial => outln!(
            "  unchanged, and still partial: the service gave back the same categories as the partial snapshot, so nothing says this copy is complete (a complete copy would be better)"
        ),
        (_, false) => outln!("  unchanged"),
        (Some(d), true) if d.is_empty() && p.now_complete => {
            outln!("  now complete, no category changed")
        }
        (Some(d), true) if d.is_empty() => outln!("  same tree; provenance updated"),
        (Some(d), true) if p.now_complete => {
            outln!("  now complete (the snapshot was partial)");
            for line in d.to_string().lines() {
                outln!("  {}", escaped(line));
            }
        }
        (Some(d), true) => {
            for line in d.to_string().lines() {
                outln!("  {}", escaped(line));
            }
        }
        (None, true) => outln!("  new snapshot"),
    }
    report_expired(p);
    report_conditions(p);
    report_structure(p);
}

/// What the site's listing-structure policies (getListingStructurePolicies) came to.
fn report_structure(p: &Prepared) {
    use crate::output::escaped;
    let Some(c) = &p.structure else {
        return;
    };
    let file = p
        .structure_path
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    if let Some(why) = &c.unavailable {
        errln!(
            "warning: {}: its listing-structure policies are unavailable: {}",
            p.site,
            escaped(why)
        );
        outln!(
            "  listing-structure policies: unavailable ({})",
            match c.previous {
                Some(_) => format!("the committed {file} is kept as it was"),
                None => format!("no {file} is written"),
            }
        );
        return;
    }
    let what = match (p.structure_text.is_some(), c.previous) {
        (false, _) => "unchanged".to_owned(),
        (true, None) => format!("new file {file}"),
        (true, Some(categories)) => format!("changed, were {categories} leaves"),
    };
    outln!(
        "  listing-structure policies: variations for {} and none for {} of {} leaves ({what})",
        c.supported,
        c.not_supported,
        c.leaves
    );
    let left = &c.left_out;
    if !left.not_in_tree.is_empty() || left.not_leaves > 0 {
        outln!(
            "  left out: {} categories not in the tree, {} not leaves",
            left.not_in_tree.len(),
            left.not_leaves
        );
    }
}

/// What the site's condition policies (getItemConditionPolicies) came to.
fn report_conditions(p: &Prepared) {
    use crate::output::escaped;
    let Some(c) = &p.conditions else {
        return;
    };
    let file = p
        .conditions_path
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    if let Some(why) = &c.unavailable {
        // Loud, as a refused answer: the tree is refreshed, its condition policies are not.
        errln!(
            "warning: {}: its condition policies are unavailable: {}",
            p.site,
            escaped(why)
        );
        outln!(
            "  condition policies: unavailable ({})",
            match c.previous {
                Some(_) => format!(
                    "the committed {file} is kept as it was; it is out of step, and left out of the build, if the tree changed"
                ),
                None => format!(
                    "no {file} is written; listings of {} are checked without condition policies",
                    p.site
                ),
            }
        );
        return;
    }
    if let Some(refused) = &c.refused {
        // Loud: on standard error, whatever else is printed, and named as a warning.
        errln!(
            "warning: {}: the getItemConditionPolicies answer is refused and not written: {}",
            p.site,
            escaped(refused)
        );
        errln!(
            "warning: {}: {}",
            p.site,
            match c.previous {
                Some(_) => format!(
                    "the committed {file} is kept as it was (it is out of step, and left out of the build, if the tree changed)"
                ),
                None => format!("no {file} is written: the site has no condition policies"),
            }
        );
    }
    let what = match (p.conditions_text.is_some(), c.previous) {
        _ if c.refused.is_some() => "kept: the answer was above a bound".to_owned(),
        (false, _) => "unchanged".to_owned(),
        (true, None) => format!("new file {file}"),
        (true, Some((policies, categories))) => {
            format!("changed, were {policies} distinct for {categories} leaves")
        }
    };
    outln!(
        "  condition policies: {} distinct for {} of {} leaves ({what})",
        c.policies,
        c.categories,
        c.leaves
    );
    let left = &c.left_out;
    if !left.not_in_tree.is_empty() || left.not_leaves > 0 {
        outln!(
            "  left out: {} categories not in the tree, {} not leaves",
            left.not_in_tree.len(),
            left.not_leaves
        );
    }
    for (id, category) in &left.unknown_conditions {
        outln!(
            "  left out: condition id {} (in category {category} and maybe others), which this toolkit does not know",
            escaped(id)
        );
    }
}

/// The leaves that expired since the last snapshot, with their replacements
/// (getExpiredCategories), or why the committed mapping no longer holds.
fn report_expired(p: &Prepared) {
    use crate::output::escaped;
    const SHOWN: usize = 20;
    if let Some(problem) = &p.expired_problem {
        outln!("  {}", escaped(&problem.to_string()));
        outln!("  (the expired-category mapping no longer fits the tree; `refresh` fetches it)");
    }
    let new: Vec<_> = p.newly_expired().collect();
    for m in new.iter().take(SHOWN) {
        outln!(
            "  expired: {} → {} ({})",
            m.from,
            m.to,
            escaped(&taxonomy_tree::expired::path_of(&p.tree, m.to))
        );
    }
    if new.len() > SHOWN {
        outln!(
            "  … and {} more expired categories in {}",
            new.len() - SHOWN,
            p.expired_path.display()
        );
    }
}

mod live {
    use std::path::Path;
    use std::process::ExitCode;
    use std::sync::Arc;
    use std::time::Duration;

    use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
    use marketplace_client::oauth::{AccessTokenSource, OAuthConfig};
    use marketplace_toolkit::token_store;

    use super::TOKEN_STORE;
    use marketplace_client::taxonomy::{ClientConfig, TaxonomyClient, TreePath};
    use marketplace_client::trees::{self, Progress, Staleness};
    use marketplaces::Marketplace;
    use taxonomy_tree::pipeline::{self, WriteWhen};
    use taxonomy_tree::snapshot;

    /// What `refresh` does with what it downloads.
    pub struct Mode {
        /// Write nothing; fail when a snapshot is stale.
        pub check: bool,
        /// With `check`: fail for a partial snapshot too.
        pub strict: bool,
        /// Write nothing.
        pub dry_run: bool,
        /// Download every tree, without asking the versions first.
        pub force: bool,
    }

    const CREDENTIALS_HINT: &str = "set MARKETPLACE_CLIENT_ID and MARKETPLACE_CLIENT_SECRET (the application id and certificate id), or MARKETPLACE_CONFIG (the SDKs' configuration file), or a ready MARKETPLACE_ACCESS_TOKEN; MARKETPLACE_ENV=sandbox for the sandbox. See the README, \"Refreshing the snapshots\"";

    /// A Taxonomy API client from the environment's credentials and settings; `base_url`
    /// (`--base-url`) stands in for MARKETPLACE_BASE_URL and `tree_path` for
    /// MARKETPLACE_TREE_PATH.
    pub fn client(
        base_url: Option<&str>,
        tree_path: Option<TreePath>,
    ) -> Result<TaxonomyClient, String> {
        let (mut config, tokens) = settings(base_url)?;
        if let Some(form) = tree_path {
            config = config.with_tree_path(form);
        }
        TaxonomyClient::new(config, tokens).map_err(|e| e.to_string())
    }

    /// The generic client of the same API host and tokens as [`client`]: for answers kept as
    /// the service sent them (`snapshot aspects pin`).
    pub fn api_client(
        base_url: Option<&str>,
    ) -> Result<marketplace_client::api::ApiClient, String> {
        let (config, tokens) = settings(base_url)?;
        marketplace_client::api::ApiClient::new(config, tokens).map_err(|e| e.to_string())
    }

    /// The clients' configuration and application tokens from the environment (and the token
    /// store); `base_url` (`--base-url`) stands in for MARKETPLACE_BASE_URL, and the consent
    /// host is not needed.
    fn settings(
        base_url: Option<&str>,
    ) -> Result<(ClientConfig, std::sync::Arc<dyn AccessTokenSource>), String> {
        let oauth = OAuthConfig::from_lookup(|name| match (name, base_url) {
            (n, Some(url)) if n == OAuthConfig::ENV_BASE_URL => Some(url.to_string()),
            _ => std::env::var(name).ok(),
        })
        .map_err(|e| format!("{e}\nTo use the live service, {CREDENTIALS_HINT}."))?;
        let store = token_store::from_setting(TOKEN_STORE.get().cloned().flatten())?;
        let tokens = token_store::application_token_source(&oauth, store.as_ref())
            .map_err(|e| format!("{e}\nTo use the live service, {CREDENTIALS_HINT}."))?;
        let config = ClientConfig::from_oauth_config(&oauth)
            .with_env(|name| std::env::var(name).ok())
            .map_err(|e| e.to_string())?;
        Ok((config, tokens))
    }

    pub fn refresh(
        dir: &Path,
        site_names: &[String],
        language: Option<&str>,
        base_url: Option<&str>,
        tree_path: Option<TreePath>,
        mode: Mode,
    ) -> Result<ExitCode, String> {
        let Mode {
            check,
            strict,
            dry_run,
            force,
        } = mode;
        // The sites named (any marketplace, as TAXONOMY_SITES takes them), else those with a
        // snapshot in the directory. Unlike an empty TAXONOMY_SITES (every marketplace), a
        // `--sites` that names no site is an error: it must not fetch and write all of them.
        let mut sites = if site_names.is_empty() {
            snapshot::sites_in(dir)
        } else if site_names.iter().all(|name| name.trim().is_empty()) {
            return Err(format!(
                "--sites names no site: name them (e.g. --sites EBAY_US,EBAY_DE), or leave --sites out to refresh the sites with a snapshot in {}",
                dir.display()
            ));
        } else {
            super::parse_sites_flag(site_names)?
        };
        if sites.is_empty() {
            return Err(format!(
                "{} holds no snapshot: name the sites to fetch with --sites (e.g. --sites EBAY_US)",
                dir.display()
            ));
        }
        let client = client(base_url, tree_path)?;

        // Ask the versions first (a few hundred bytes a site); download only what changed.
        // Under --check, a partial snapshot of the current version is not downloaded: it is
        // a warning (an error with --strict), not a stale snapshot.
        let mut partial = Vec::new();
        // The sites whose tree is not downloaded again: their condition policies
        // (getItemConditionPolicies) are fetched all the same, as they change without a new
        // tree version.
        let mut unchanged = Vec::new();
        if !force {
            let mut to_fetch = Vec::new();
            let mut failed = false;
            for result in trees::check_snapshots(&client, dir, &sites, language) {
                match result {
                    Ok(c) => match &c.stale {
                        None => {
                            outln!(
                                "{}: unchanged (version {})",
                                c.site,
                                trees::server_text(&c.current.tree_version)
                            );
                            unchanged.push(c.site);
                        }
                        Some(Staleness::Partial) if check => {
                            errln!(
                                "warning: {}: the snapshot is a partial copy of the current version ({}); a complete copy would be better: `snapshot refresh --sites {}` downloads it",
                                c.site,
                                trees::server_text(&c.current.tree_version),
                                c.site.marketplace_id()
                            );
                            partial.push(c.site);
                            unchanged.push(c.site);
                        }
                        Some(why) => {
                            outln!("{}: to download ({why})", c.site);
                            to_fetch.push(c.site);
                        }
                    },
                    Err(e) => {
                        failed = true;
                        errln!("error: {e}");
                    }
                }
            }
            if failed {
                errln!(
                    "error: nothing was written: every site's version must be known first (--force downloads without asking)"
                );
                return Ok(ExitCode::FAILURE);
            }
            sites = to_fetch;
        }

        let bars = MultiProgress::new();
        let style = ProgressStyle::with_template("{spinner} {prefix:8} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let by_site: Vec<(Marketplace, ProgressBar)> = sites
            .iter()
            .map(|&site| {
                let bar = bars.add(ProgressBar::new_spinner());
                bar.set_style(style.clone());
                bar.set_prefix(site.marketplace_id());
                bar.enable_steady_tick(Duration::from_millis(120));
                (site, bar)
            })
            .collect();
        let by_site = Arc::new(by_site);
        let on_progress = {
            let by_site = Arc::clone(&by_site);
            move |site: Marketplace, progress: Progress| {
                if let Some((_, bar)) = by_site.iter().find(|(s, _)| *s == site) {
                    match progress {
                        Progress::Fetching => bar.set_message("fetching the tree…"),
                        Progress::Decoding(bytes) => bar.set_message(format!(
                            "{:.1} MB received, decoding and validating…",
                            bytes as f64 / 1e6
                        )),
                        Progress::Done => bar.finish_with_message("ok"),
                        Progress::Failed(e) => bar.abandon_with_message(format!("failed: {e}")),
                    }
                }
            }
        };
        let results = trees::fetch_and_prepare(&client, &sites, language, dir, &on_progress);
        for (_, bar) in by_site.iter() {
            if !bar.is_finished() {
                bar.finish();
            }
        }
        // Each site's condition policies (getItemConditionPolicies), checked against its new
        // tree and committed with it.
        let mut results = trees::with_condition_policies_each(&client, results);
        if !unchanged.is_empty() {
            let bar = ProgressBar::new_spinner();
            bar.set_style(style.clone());
            bar.set_prefix("policies");
            bar.set_message(format!(
                "fetching the condition policies of {} unchanged site(s)…",
                unchanged.len()
            ));
            bar.enable_steady_tick(Duration::from_millis(120));
            results.extend(trees::condition_policies_of_committed(
                &client, &unchanged, dir,
            ));
            bar.finish_and_clear();
        }

        let mut prepared = Vec::new();
        let mut failed = false;
        for result in results {
            match result {
                Ok(p) => prepared.push(p),
                Err(e) => {
                    failed = true;
                    errln!("error: {e}");
                }
            }
        }
        if failed {
            errln!("error: nothing was written: every site must download and validate first");
            return Ok(ExitCode::FAILURE);
        }
        let mut stale = false;
        // The sites whose condition policies a fake marketplace made up: said once, below.
        let made_up: Vec<&str> = prepared
            .iter()
            .filter(|p| {
                p.conditions.as_ref().is_some_and(|c| c.made_up)
                    || p.structure.as_ref().is_some_and(|c| c.made_up)
            })
            .map(|p| p.site.marketplace_id())
            .collect();
        for p in &prepared {
            super::report(p, WriteWhen::TreeChanged);
            // New condition policies make a snapshot stale where some were committed; where
            // none were (the committed sites carry none), the summary says what a refresh
            // would add.
            stale |= p.content_changed
                || p.expired_text.is_some()
                || (p.conditions_text.is_some() && p.conditions_path.exists())
                || (p.structure_text.is_some() && p.structure_path.exists());
        }
        if !made_up.is_empty() {
            outln!(
                "the condition and listing-structure policies of {} are made up (the answers say so: a fake marketplace's); never commit them as eBay's rules",
                made_up.join(", ")
            );
        }
        if check {
            return Ok(if stale {
                errln!(
                    "error: the snapshots are stale: run `snapshot refresh` (the same command without --check) and commit the result"
                );
                ExitCode::FAILURE
            } else if !partial.is_empty() && strict {
                errln!(
                    "error: {} partial (--strict): run `snapshot refresh` (the same command without --check) where the service serves complete trees, and commit the result",
                    if partial.len() == 1 {
                        "a snapshot is"
                    } else {
                        "snapshots are"
                    }
                );
                ExitCode::FAILURE
            } else {
                outln!(
                    "the snapshots are up to date{}",
                    if partial.is_empty() {
                        ""
                    } else {
                        " (partial ones warned of above)"
                    }
                );
                ExitCode::SUCCESS
            });
        }
        if !dry_run {
            super::create_dir(dir)?;
            for path in pipeline::commit_all(dir, &prepared, WriteWhen::TreeChanged)
                .map_err(|e| e.to_string())?
            {
                outln!("wrote {}", path.display());
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}
