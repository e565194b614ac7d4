//! What `taxonomy-data`'s build script does, as a library so it can be tested: pick the sites,
//! obtain each site's tree, generate the tables, tell cargo when to run again.
//!
//! `obtain_trees` is the single place trees enter the build: from the live service when
//! credentials are set (and the `live` feature is on, and `TAXONOMY_OFFLINE` is not set),
//! else, or on any failure, from the committed snapshots. A live download is cached in the
//! target directory under a key of the settings, so the host and target builds of
//! `taxonomy-data` (the macro's and the program's) and later rebuilds use the same tree, and
//! the service is asked once.

use std::path::{Path, PathBuf};

use crate::codegen::{self, SiteData};
use crate::pinned;
use marketplaces::Marketplace;
use taxonomy_tree::conditions::{self, ConditionsError, ConditionsFile};
use taxonomy_tree::expired::{self, ExpiredError, ExpiredMapping};
use taxonomy_tree::snapshot;
use taxonomy_tree::structure::{self, StructureError, StructureFile};
use taxonomy_tree::tree::CategoryTree;

/// Environment variable: the sites to compile in, e.g. `EBAY_US,EBAY_DE` (default: all).
pub const SITES_ENV: &str = "TAXONOMY_SITES";
/// Environment variable: a snapshots directory to read instead of the committed one.
pub const SNAPSHOTS_DIR_ENV: &str = "TAXONOMY_SNAPSHOTS_DIR";
/// Environment variable: when set (to anything but `0` or `false`), never download.
pub const OFFLINE_ENV: &str = "TAXONOMY_OFFLINE";

/// Environment variable: how long a live tree's version check stays valid (default 24 h;
/// `30m`, `24h`, `2d` or a number of seconds). See [`parse_ttl`].
pub const TTL_ENV: &str = "TAXONOMY_LIVE_TTL";

/// The default of [`TTL_ENV`].
pub const DEFAULT_TTL: std::time::Duration = std::time::Duration::from_secs(24 * 60 * 60);

/// Every variable that decides whether and what the build downloads, except the secrets:
/// with the `live` feature, cargo watches these (`cargo:rerun-if-env-changed`); without it
/// the build reads none of them, so a change rebuilds nothing.
pub const LIVE_ENV: [&str; 10] = [
    OFFLINE_ENV,
    "DOCS_RS",
    "MARKETPLACE_ENV",
    "MARKETPLACE_BASE_URL",
    "MARKETPLACE_AUTH_URL",
    "MARKETPLACE_CLIENT_ID",
    "MARKETPLACE_CONFIG",
    "MARKETPLACE_SCOPE",
    "MARKETPLACE_TREE_PATH",
    TTL_ENV,
];

/// The secret variables the build reads. They are never named to cargo: cargo writes the value
/// of every variable named in `cargo:rerun-if-env-changed` into its fingerprint files under
/// `target/`, in plain text. A change of a secret alone therefore does not rerun the build
/// script; it takes effect at the next version check (see [`TTL_ENV`]) or when
/// `target/taxonomy-live` is deleted.
pub const SECRET_ENV: [&str; 2] = ["MARKETPLACE_CLIENT_SECRET", "MARKETPLACE_ACCESS_TOKEN"];

/// Parses a [`TTL_ENV`] value: a number of seconds (`3600`), or a number with a unit `s`, `m`,
/// `h` or `d` (`30m`, `24h`). `None` when it is not one.
///
/// ```
/// use std::time::Duration;
/// use taxonomy_codegen::build_script::parse_ttl;
/// assert_eq!(parse_ttl("3600"), Some(Duration::from_secs(3600)));
/// assert_eq!(parse_ttl("30m"), Some(Duration::from_secs(1800)));
/// assert_eq!(parse_ttl(" 24h "), Some(Duration::from_secs(86400)));
/// assert_eq!(parse_ttl("2d"), Some(Duration::from_secs(172800)));
/// assert_eq!(parse_ttl("soon"), None);
/// assert_eq!(parse_ttl("-5m"), None);
/// ```
pub fn parse_ttl(text: &str) -> Option<std::time::Duration> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().ok()?;
    let unit = match unit.trim() {
        "" | "s" => 1,
        "m" => 60,
        "h" => 60 * 60,
        "d" => 24 * 60 * 60,
        _ => return None,
    };
    Some(std::time::Duration::from_secs(number.checked_mul(unit)?))
}

/// Whether the build downloads the trees, decided from the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LiveDecision {
    /// Download with the credentials found.
    Live,
    /// Use the committed snapshots; `warn` is set when the user should hear why.
    Offline {
        /// Why not live.
        reason: String,
        /// Whether to say it as a `cargo:warning`.
        warn: bool,
    },
}

/// Decides, from the variables `lookup` gives, whether to download. `live_compiled` is
/// whether the `live` feature (the HTTP stack) is compiled in.
///
/// ```
/// use taxonomy_codegen::build_script::{live_decision, LiveDecision};
/// fn env(pairs: &'static [(&str, &str)]) -> impl Fn(&str) -> Option<String> {
///     move |name| pairs.iter().find(|p| p.0 == name).map(|p| p.1.to_string())
/// }
/// assert!(matches!(live_decision(env(&[]), true), LiveDecision::Offline { warn: false, .. }));
/// const CREDS: &[(&str, &str)] = &[("MARKETPLACE_CLIENT_ID", "id"), ("MARKETPLACE_CLIENT_SECRET", "s")];
/// assert_eq!(live_decision(env(CREDS), true), LiveDecision::Live);
/// // Credentials but no HTTP stack compiled in: offline, with a warning.
/// assert!(matches!(live_decision(env(CREDS), false), LiveDecision::Offline { warn: true, .. }));
/// const OFFLINE: &[(&str, &str)] = &[("MARKETPLACE_ACCESS_TOKEN", "t"), ("TAXONOMY_OFFLINE", "1")];
/// assert!(matches!(live_decision(env(OFFLINE), true), LiveDecision::Offline { .. }));
/// const DOCS_RS: &[(&str, &str)] = &[("MARKETPLACE_ACCESS_TOKEN", "t"), ("DOCS_RS", "1")];
/// assert!(matches!(live_decision(env(DOCS_RS), true), LiveDecision::Offline { .. }));
/// ```
pub fn live_decision(lookup: impl Fn(&str) -> Option<String>, live_compiled: bool) -> LiveDecision {
    let set = |name: &str| lookup(name).is_some_and(|v| !v.trim().is_empty());
    if let Some(v) = lookup(OFFLINE_ENV)
        && !matches!(
            v.trim().to_ascii_lowercase().as_str(),
            "" | "0" | "false" | "no"
        )
    {
        return LiveDecision::Offline {
            reason: format!("{OFFLINE_ENV} is set"),
            warn: false,
        };
    }
    if set("DOCS_RS") {
        return LiveDecision::Offline {
            reason: "building on docs.rs".into(),
            warn: false,
        };
    }
    let credentials = set("MARKETPLACE_ACCESS_TOKEN")
        || set("MARKETPLACE_CONFIG")
        || (set("MARKETPLACE_CLIENT_ID") && set("MARKETPLACE_CLIENT_SECRET"));
    if !credentials {
        return LiveDecision::Offline {
            reason: "no credentials in the environment".into(),
            warn: false,
        };
    }
    if !live_compiled {
        return LiveDecision::Offline {
            reason: "credentials are set but the `live` feature of taxonomy-data (and taxonomy-macros) is off, so the build cannot download".into(),
            warn: true,
        };
    }
    LiveDecision::Live
}

/// Why the build script cannot generate the tables.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// `TAXONOMY_SITES` names something that is not a site.
    #[error(
        "{SITES_ENV}={value:?}: {entry:?} is {problem}; the variable is a comma-separated list of sites, or unset to compile in every site with a snapshot"
    )]
    BadSiteFilter {
        /// The variable's value.
        value: String,
        /// The entry that is not a site.
        entry: String,
        /// Why, with the marketplace the entry most likely meant (`EBAY_UK`: EBAY_GB).
        problem: marketplaces::UnknownMarketplace,
    },
    /// `TAXONOMY_SNAPSHOTS_DIR` is not an absolute path to a directory.
    #[error("{SNAPSHOTS_DIR_ENV}={}: {problem}; {}", dir.display(), snapshots_dir_hint(dir))]
    SnapshotsDir {
        /// The variable's value.
        dir: PathBuf,
        /// What is wrong with it.
        problem: &'static str,
    },
    /// A snapshot is missing or invalid.
    #[error(
        "{0}\nSnapshots are regenerated with `snapshot refresh` (or `snapshot import`), run at your project's root (installing the command: README, \"Use it in your project\")."
    )]
    Snapshot(#[from] snapshot::SnapshotError),
    /// The expired-category file beside a snapshot is invalid or breaks the rule.
    #[error(
        "{0}\nThe expired-category files are written by `snapshot refresh` (getExpiredCategories), run at your project's root."
    )]
    Expired(#[from] ExpiredError),
    /// The tables could not be generated.
    #[error(transparent)]
    Generate(#[from] codegen::GenerateError),
    /// A pinned aspects file (`pinned/`) cannot be read.
    #[error(transparent)]
    Pinned(#[from] pinned::PinnedError),
    /// The condition-policy file beside a snapshot (`EBAY_US.conditions.json`) is unreadable
    /// or breaks a rule (the error names the file and the policy).
    #[error(
        "{0}\nThe condition-policy files are written by `snapshot refresh` (getItemConditionPolicies, with credentials), run at your project's root; delete the file to build without the site's condition policies."
    )]
    Conditions(#[from] ConditionsError),
    /// The listing-structure file beside a snapshot (`EBAY_US.structure.json`) is unreadable
    /// or breaks a rule (the error names the file and the category).
    #[error(
        "{0}\nThe listing-structure files are written by `snapshot refresh` (getListingStructurePolicies, with credentials), run at your project's root; delete the file to build without the site's listing-structure policies."
    )]
    Structure(#[from] StructureError),
}

/// What to do about a [`BuildError::SnapshotsDir`]: a relative path is made absolute by cargo's
/// `[env]`; an absolute one that does not exist yet is created by `snapshot refresh`.
fn snapshots_dir_hint(dir: &Path) -> String {
    if dir.is_relative() {
        format!(
            "set it to an absolute path, or let cargo make one: in your project's .cargo/config.toml, `[env] {SNAPSHOTS_DIR_ENV} = {{ value = \"snapshots\", relative = true }}`"
        )
    } else {
        format!(
            "run `snapshot refresh --sites …` (the sites you sell on, e.g. `--sites EBAY_US`) to create it: with `--dir {}`, or in the project's root, where it writes ./snapshots (installing the command: README, \"Use it in your project\")",
            dir.display()
        )
    }
}

/// Parses the value of `TAXONOMY_SITES`. An empty or blank value means every site.
///
/// ```
/// use taxonomy_codegen::build_script::parse_site_filter;
/// use marketplaces::Marketplace;
/// assert_eq!(parse_site_filter("EBAY_DE, us").unwrap(), vec![Marketplace::Us, Marketplace::De]);
/// assert_eq!(parse_site_filter("").unwrap(), Marketplace::ALL.to_vec());
/// assert_eq!(parse_site_filter("EBAY_FR").unwrap(), vec![Marketplace::Fr]);
/// assert!(parse_site_filter("EBAY_XX").is_err());
/// ```
pub fn parse_site_filter(value: &str) -> Result<Vec<Marketplace>, BuildError> {
    if value.trim().is_empty() {
        return Ok(Marketplace::ALL.to_vec());
    }
    let mut sites = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let site = Marketplace::parse(entry).map_err(|problem| BuildError::BadSiteFilter {
            value: value.to_string(),
            entry: entry.to_string(),
            problem,
        })?;
        sites.push(site);
    }
    sites.sort();
    sites.dedup();
    Ok(sites)
}

/// The tree of one site, from the committed snapshot in `snapshots_dir`, with every check
/// of [`snapshot::read_site`] (the same checks `snapshot verify` makes).
pub fn snapshot_tree(site: Marketplace, snapshots_dir: &Path) -> Result<CategoryTree, BuildError> {
    Ok(snapshot::read_site(site, snapshots_dir)?)
}

/// A site's tree and its expired-category mapping, as the generator takes them.
#[derive(Debug, Clone)]
pub struct SiteTree {
    /// The validated tree.
    pub tree: CategoryTree,
    /// The expired leaves and their replacements, checked against `tree`.
    pub expired: Vec<ExpiredMapping>,
    /// The leaves' condition policies (getItemConditionPolicies), checked against `tree`;
    /// `None`: the site's policies are not known (no file, or one out of step).
    pub conditions: Option<ConditionsFile>,
    /// The leaves' listing-structure policies (getListingStructurePolicies'
    /// `variationsSupported`), checked against `tree`; `None`: not known (no file, or one
    /// out of step).
    pub structure: Option<StructureFile>,
}

/// The tree of one site and the expired-category file beside it (none: no mapping), from
/// `snapshots_dir`. A file out of step with the tree (written for another tree, as a commit
/// killed between the two files leaves it) is passed over with a warning: the site compiles
/// in without expired categories until `snapshot refresh` rewrites it.
pub fn snapshot_site(site: Marketplace, snapshots_dir: &Path) -> Result<SiteTree, BuildError> {
    let tree = snapshot_tree(site, snapshots_dir)?;
    let path = snapshots_dir.join(site.snapshot_file_name());
    let expired = match expired::read_in_step(&path, &tree) {
        Ok(file) => file.map_or_else(Vec::new, |f| f.mappings),
        Err(stale @ ExpiredError::OutOfStep { .. }) => {
            warn(&stale.to_string());
            Vec::new()
        }
        Err(e) => return Err(e.into()),
    };
    let conditions = snapshot_conditions(&path, &tree)?;
    let structure = snapshot_structure(&path, &tree)?;
    Ok(SiteTree {
        tree,
        expired,
        conditions,
        structure,
    })
}

/// The listing-structure file beside the snapshot at `snapshot_path`
/// (`EBAY_US.structure.json`, getListingStructurePolicies), checked against `tree` by
/// `taxonomy_tree::structure::read_in_step` (the refresh's reader): as
/// [`snapshot_conditions`], `None` when there is none or it is out of step (a warning), an
/// error naming the file and the category when it is invalid, a warning when it is made up.
pub fn snapshot_structure(
    snapshot_path: &Path,
    tree: &CategoryTree,
) -> Result<Option<StructureFile>, BuildError> {
    match structure::read_in_step(snapshot_path, tree) {
        Ok(file) => {
            if let Some(file) = &file
                && file.made_up
            {
                warn(&format!(
                    "{}: listing-structure policies made up by the fake marketplace (source {}); never commit them as the marketplace's rules",
                    structure::path_beside(snapshot_path).display(),
                    file.source
                ));
            }
            Ok(file)
        }
        Err(stale @ StructureError::OutOfStep { .. }) => {
            warn(&stale.to_string());
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// The condition-policy file beside the snapshot at `snapshot_path` (`EBAY_US.conditions.json`),
/// checked against `tree`: `None` when there is none (the site's policies are not known), or
/// when it is out of step with the tree (a `cargo:warning`, as for the expired-category file:
/// the site compiles in without policies until `snapshot refresh` rewrites it). An invalid
/// file is an error naming the file and the policy. A file the fake marketplace made up is
/// compiled in, with a warning.
pub fn snapshot_conditions(
    snapshot_path: &Path,
    tree: &CategoryTree,
) -> Result<Option<ConditionsFile>, BuildError> {
    match conditions::read_in_step(snapshot_path, tree) {
        Ok(file) => {
            if let Some(file) = &file
                && file.made_up
            {
                warn(&format!(
                    "{}: condition policies made up by the fake marketplace (source {}); never commit them as the marketplace's rules",
                    conditions::path_beside(snapshot_path).display(),
                    file.source
                ));
            }
            Ok(file)
        }
        Err(stale @ ConditionsError::OutOfStep { .. }) => {
            warn(&stale.to_string());
            Ok(None)
        }
        Err(e) => Err(e.into()),
    }
}

/// The trees of the selected sites: live ones where `live` has them, the committed snapshots
/// for the rest. Returns them in [`Marketplace::ALL`] order, `None` for sites not selected
/// and for sites without a snapshot (they compile in empty).
fn obtain_trees(
    selected: &[Marketplace],
    snapshots_dir: &Path,
    mut live: Vec<(Marketplace, SiteTree)>,
) -> Result<Vec<(Marketplace, Option<SiteTree>)>, BuildError> {
    let mut trees = Vec::new();
    for site in Marketplace::ALL {
        let tree = if !selected.contains(&site) {
            None
        } else if let Some(i) = live.iter().position(|(s, _)| *s == site) {
            Some(live.swap_remove(i).1)
        } else if !has_snapshot(site, snapshots_dir) {
            None
        } else {
            Some(snapshot_site(site, snapshots_dir)?)
        };
        trees.push((site, tree));
    }
    Ok(trees)
}

/// Whether `snapshots_dir` holds a snapshot of `site`.
pub fn has_snapshot(site: Marketplace, snapshots_dir: &Path) -> bool {
    snapshots_dir.join(site.snapshot_file_name()).is_file()
}

/// Generates the source of the tables for the selected sites (the others compile in empty):
/// the `live` trees where there are some, the snapshots in `snapshots_dir` for the rest. This
/// is what the build script writes to `OUT_DIR/taxonomy.rs` (tests pass no live trees).
pub fn generate_for(
    selected: &[Marketplace],
    snapshots_dir: &Path,
    live: Vec<(Marketplace, SiteTree)>,
) -> Result<String, BuildError> {
    generate(selected, snapshots_dir, live, Vec::new())
}

/// [`generate_for`], with the pinned categories' answers of the live trees (`live_pinned`)
/// in place of the committed pins of the same categories.
fn generate(
    selected: &[Marketplace],
    snapshots_dir: &Path,
    live: Vec<(Marketplace, SiteTree)>,
    live_pinned: Vec<pinned::PinnedAspects>,
) -> Result<String, BuildError> {
    let trees = obtain_trees(selected, snapshots_dir, live)?;
    let pinned = pinned_leaves(snapshots_dir, &trees, live_pinned)?;
    generate_trees(&trees, &pinned)
}

/// The pinned categories of `snapshots_dir` (`pinned/`) that are leaves of their site's tree
/// among `trees`; the others are passed over with a warning (a site not compiled in, or a
/// category the tree no longer has as a leaf: `snapshot aspects refresh --pinned` or pin it
/// again). A category of `live_pinned` stands in for its committed file.
fn pinned_leaves(
    snapshots_dir: &Path,
    trees: &[(Marketplace, Option<SiteTree>)],
    mut live_pinned: Vec<pinned::PinnedAspects>,
) -> Result<Vec<pinned::PinnedAspects>, BuildError> {
    let mut kept = Vec::new();
    for committed in pinned::read_all(snapshots_dir)? {
        let file = match live_pinned
            .iter()
            .position(|l| l.site == committed.site && l.category_id == committed.category_id)
        {
            Some(i) => live_pinned.swap_remove(i),
            None => committed,
        };
        let tree = trees
            .iter()
            .find(|(site, _)| *site == file.site)
            .and_then(|(_, t)| t.as_ref());
        let Some(tree) = tree else {
            continue; // the site is not compiled in: nothing to attach the rules to
        };
        if tree.tree.get(file.category_id).is_some_and(|c| c.leaf) {
            if file.made_up {
                warn(&format!(
                    "{} came from a fake marketplace ({}): its aspect rules for {} category {} are made up, not eBay's; pin it again against eBay before you rely on it or commit it",
                    pinned::path_of(snapshots_dir, file.site, file.category_id).display(),
                    file.fetched_from.as_deref().unwrap_or("unknown host"),
                    file.site,
                    file.category_id
                ));
            }
            kept.push(file);
        } else {
            warn(&format!(
                "{} category {} is pinned ({}) but is not a leaf of the compiled-in tree (version {}); its aspect rules are not compiled in. Pin a leaf instead, or remove the file",
                file.site,
                file.category_id,
                pinned::path_of(snapshots_dir, file.site, file.category_id).display(),
                tree.tree.meta.version
            ));
        }
    }
    Ok(kept)
}

/// Generates the source of the tables from trees in [`Marketplace::ALL`] order.
fn generate_trees(
    trees: &[(Marketplace, Option<SiteTree>)],
    pinned: &[pinned::PinnedAspects],
) -> Result<String, BuildError> {
    let data: Vec<SiteData<'_>> = trees
        .iter()
        .map(|(site, tree)| SiteData {
            site: *site,
            tree: tree.as_ref().map(|t| &t.tree),
            expired: tree.as_ref().map_or(&[], |t| &t.expired),
        })
        .collect();
    let conditions: Vec<(Marketplace, &ConditionsFile)> = trees
        .iter()
        .filter_map(|(site, tree)| Some((*site, tree.as_ref()?.conditions.as_ref()?)))
        .collect();
    let structures: Vec<(Marketplace, &StructureFile)> = trees
        .iter()
        .filter_map(|(site, tree)| Some((*site, tree.as_ref()?.structure.as_ref()?)))
        .collect();
    Ok(codegen::generate_with_structure(
        &data,
        pinned,
        &conditions,
        &structures,
    )?)
}

/// The snapshots directory the build reads: `TAXONOMY_SNAPSHOTS_DIR` (a project's own, which
/// must be an absolute path to a directory: a build script runs in taxonomy-data's directory,
/// so a relative path would silently name another place), else taxonomy-data's `snapshots/`.
fn snapshots_dir(
    value: Option<std::ffi::OsString>,
    manifest_dir: &Path,
) -> Result<PathBuf, BuildError> {
    let dir = match value {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => return Ok(manifest_dir.join("snapshots")),
    };
    let problem = if dir.is_relative() {
        "a relative path, which the build script would resolve against taxonomy-data's own directory"
    } else if !dir.is_dir() {
        "no such directory"
    } else {
        return Ok(dir);
    };
    Err(BuildError::SnapshotsDir { dir, problem })
}

/// The environment variables the build script names to cargo
/// (`cargo:rerun-if-env-changed`): the two the offline build reads ([`SITES_ENV`],
/// [`SNAPSHOTS_DIR_ENV`]), and the download's settings ([`LIVE_ENV`]) only when `live` (the
/// HTTP stack) is compiled in. Without `live` they change nothing the build makes, and
/// watching them rebuilt taxonomy-data, the macro and every crate using `category!` whenever a
/// backend's run-time setting (its base URL, its client id) changed. Never the secrets
/// ([`SECRET_ENV`]): cargo would store their values under `target/`.
///
/// ```
/// use taxonomy_codegen::build_script::watched_env;
/// assert_eq!(watched_env(false), ["TAXONOMY_SITES", "TAXONOMY_SNAPSHOTS_DIR"]);
/// assert!(watched_env(true).contains(&"MARKETPLACE_BASE_URL"));
/// assert!(!watched_env(true).contains(&"MARKETPLACE_CLIENT_SECRET"));
/// ```
pub fn watched_env(live: bool) -> Vec<&'static str> {
    let mut names = vec![SITES_ENV, SNAPSHOTS_DIR_ENV];
    if live {
        names.extend(LIVE_ENV);
    }
    names
}

/// The whole build script: reads the environment cargo gives it, writes
/// `OUT_DIR/taxonomy.rs`, and prints the `cargo:` lines.
pub fn run() -> Result<(), BuildError> {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    // The snapshots directory first: when it is wrong, the error is all the script says
    // (cargo shows a failed script's `cargo:` lines above its error).
    let snapshots_dir = snapshots_dir(std::env::var_os(SNAPSHOTS_DIR_ENV), &manifest_dir)?;
    for name in watched_env(cfg!(feature = "live")) {
        println!("cargo:rerun-if-env-changed={name}");
    }
    if cfg!(feature = "live")
        && let Some(config) = std::env::var_os("MARKETPLACE_CONFIG").filter(|c| !c.is_empty())
    {
        println!("cargo:rerun-if-changed={}", PathBuf::from(config).display());
    }
    println!("cargo:rerun-if-changed={}", snapshots_dir.display());
    // Only existing files: cargo reruns a build script on every build while a path it watches
    // is missing (which recompiled taxonomy-data on every build for each site without a
    // snapshot). The directory's line above notices a file being added.
    for site in Marketplace::ALL {
        let snapshot = snapshots_dir.join(site.snapshot_file_name());
        for path in [
            expired::path_beside(&snapshot),
            conditions::path_beside(&snapshot),
            structure::path_beside(&snapshot),
            snapshot,
        ] {
            if path.exists() {
                println!("cargo:rerun-if-changed={}", path.display());
            }
        }
    }
    // The pinned aspects: the directory (a file added or removed) and each file.
    let pinned_dir = snapshots_dir.join(pinned::PINNED_DIR);
    if pinned_dir.is_dir() {
        println!("cargo:rerun-if-changed={}", pinned_dir.display());
        for path in pinned::files_in(&snapshots_dir)? {
            println!("cargo:rerun-if-changed={}", path.display());
        }
    }
    let filter = std::env::var(SITES_ENV).unwrap_or_default();
    let mut selected = parse_site_filter(&filter)?;
    // Only sites with a snapshot are compiled in (and downloaded); a site named in the
    // filter without one is worth a word.
    selected.retain(|&site| {
        let has = has_snapshot(site, &snapshots_dir);
        if !has && !filter.trim().is_empty() {
            self::warn(&format!(
                "{SITES_ENV} names {site}, which has no snapshot in {}; it is not compiled in. `snapshot refresh --sites {site}`, run at your project's root, makes one (installing the command: README, \"Use it in your project\").",
                snapshots_dir.display()
            ));
        }
        has
    });
    let (live, live_pinned) =
        match live_decision(|name| std::env::var(name).ok(), cfg!(feature = "live")) {
            LiveDecision::Live => live_trees(&selected, &snapshots_dir, &out_dir),
            LiveDecision::Offline { reason, warn } => {
                if warn {
                    self::warn(&format!("using the committed snapshots: {reason}"));
                }
                (Vec::new(), Vec::new())
            }
        };
    let code = generate(&selected, &snapshots_dir, live, live_pinned)?;
    let out = out_dir.join("taxonomy.rs");
    taxonomy_tree::atomic::write_atomic(&out, code.as_bytes(), None).map_err(|source| {
        BuildError::Snapshot(snapshot::SnapshotError::Io { path: out, source })
    })?;
    Ok(())
}

/// The live trees and pinned categories' answers.
type Live = (Vec<(Marketplace, SiteTree)>, Vec<pinned::PinnedAspects>);

/// Downloads the selected sites' trees (or reads them from the build cache), and the pinned
/// categories' answers of those trees' versions. A site that fails is left out, with a
/// `cargo:warning`, so the build falls back to its snapshot (and a category, to its committed
/// pin). Every build that uses a live tree which differs from the committed snapshot says so.
#[cfg(feature = "live")]
fn live_trees(selected: &[Marketplace], snapshots_dir: &Path, out_dir: &Path) -> Live {
    use marketplace_client::trees::server_text;
    match live::fetch(selected, snapshots_dir, out_dir) {
        Ok(live::Fetched {
            trees: results,
            pinned,
            mut policies,
        }) => (results
            .into_iter()
            .filter_map(|(site, result)| match result {
                Ok(tree) => {
                    if let Ok(snapshot) = snapshot_tree(site, snapshots_dir) {
                        let diff = taxonomy_tree::diff::TreeDiff::between(&snapshot, &tree);
                        if !diff.is_empty() {
                            warn(&server_text(&format!(
                                "{site}: using the live tree, which differs from the committed snapshot ({}); refresh it with `snapshot refresh`, run at your project's root",
                                diff.to_string().trim().replace('\n', "; ")
                            )));
                        }
                    }
                    // The build-time download caches trees only: the expired-category
                    // mapping is the committed one, when it still fits the live tree.
                    let expired = expired::read_beside(
                        &snapshots_dir.join(site.snapshot_file_name()),
                        &tree,
                    )
                    .ok()
                    .flatten()
                    .map(|file| file.mappings)
                    .unwrap_or_default();
                    // The condition policies of the live tree (getItemConditionPolicies),
                    // cached beside it; failing those, the committed file when it fits.
                    let fetched = policies
                        .iter()
                        .position(|(s, _)| *s == site)
                        .map(|i| policies.swap_remove(i).1);
                    let conditions = live_conditions(site, snapshots_dir, &tree, fetched);
                    // The listing-structure policies: the committed file, when it fits
                    // the live tree (the build-time download does not ask for them).
                    let structure = snapshot_structure(
                        &snapshots_dir.join(site.snapshot_file_name()),
                        &tree,
                    )
                    .unwrap_or_else(|e| {
                        warn(&format!(
                            "{site}: the committed listing-structure policies do not fit the live tree, which is compiled in without them: {e}"
                        ));
                        None
                    });
                    Some((site, SiteTree { tree, expired, conditions, structure }))
                }
                Err(reason) => {
                    warn(&server_text(&format!(
                        "{site}: the live tree could not be used ({reason}); using the committed snapshot"
                    )));
                    None
                }
            })
            .collect(), pinned),
        Err(reason) => {
            warn(&server_text(&format!(
                "the live trees could not be downloaded ({reason}); using the committed snapshots"
            )));
            (Vec::new(), Vec::new())
        }
    }
}

/// The condition policies of a live tree: `fetched`, the live tree's own (getItemConditionPolicies,
/// from the build cache or the service; a warning when the server marked them made up); when
/// they could not be had (a warning naming why), the committed file beside the snapshot, when
/// it is in step with `tree` (the live tree in use) and valid; else none, with a warning when
/// there is a file.
#[cfg(feature = "live")]
fn live_conditions(
    site: Marketplace,
    snapshots_dir: &Path,
    tree: &CategoryTree,
    fetched: Option<Result<ConditionsFile, String>>,
) -> Option<ConditionsFile> {
    use marketplace_client::trees::server_text;
    match fetched {
        Some(Ok(file)) => {
            if file.made_up {
                warn(&server_text(&format!(
                    "{site}: condition policies of the live tree (version {}) made up by the fake marketplace (source {}); never commit them as the marketplace's rules",
                    tree.meta.version, file.source
                )));
            }
            return Some(file);
        }
        Some(Err(reason)) => warn(&server_text(&format!(
            "{site}: the condition policies of the live tree (version {}) could not be had (getItemConditionPolicies: {reason}); using the committed condition-policy file if it fits the live tree, else none",
            tree.meta.version
        ))),
        None => {}
    }
    let snapshot = snapshots_dir.join(site.snapshot_file_name());
    match snapshot_conditions(&snapshot, tree) {
        Ok(file) => file,
        Err(e) => {
            warn(&format!(
                "{site}: the committed condition policies do not fit the live tree, which is compiled in without them: {e}"
            ));
            None
        }
    }
}

#[cfg(not(feature = "live"))]
fn live_trees(_: &[Marketplace], _: &Path, _: &Path) -> Live {
    (Vec::new(), Vec::new())
}

#[cfg(feature = "live")]
mod live {
    //! The download, and its cache in the target directory.
    //!
    //! `target/taxonomy-live/<key>/` (0700; every file 0600) holds, per site, the tree
    //! (`EBAY_US.json`, in the snapshot format) and beside it `EBAY_US.check`: its version, the
    //! time of the last version check and the SHA-256 of the tree file. A tree whose checksum
    //! does not match (edited by hand, corrupted) is refused: the build falls back to the
    //! snapshot with a warning until the next check downloads it again.
    //!
    //! Both builds of taxonomy-data (the macro's and the program's) run this with the same
    //! settings, so they share one cache entry: the first takes an OS file lock, checks or
    //! downloads, and records for every site either its tree or why it failed; the other
    //! waits for the lock and reads the record. So the two builds use the same trees, even
    //! when the network fails half-way.
    //!
    //! When cargo reruns the script: it watches `stamp` and the cached tree files. The stamp
    //! is rewritten whenever a build changes what the cache holds, so every build of
    //! taxonomy-data sharing the target directory runs again and uses the same trees; a
    //! hand-edited tree reruns the script, which refuses it. Cargo has no timer: the versions
    //! are re-checked (getDefaultCategoryTreeId, at most once per `TAXONOMY_LIVE_TTL`) when the
    //! script runs. Deleting `stamp` makes the next build run it and re-check at once; deleting
    //! the whole directory downloads again. A path that never exists would make cargo run the
    //! script on every build, and then recompile taxonomy-data and everything that uses it
    //! (about 10 s a build): too dear for every build, so it is not done.
    //!
    //! The pinned categories (`snapshots/pinned/`) follow their site's live tree: a pin of
    //! another tree version than the live one is replaced by the live version's
    //! getItemAspectsForCategory answer, cached in `pinned/` (the pinned file's format) until
    //! the tree's version moves; a failed download is recorded like a tree's, and the
    //! category keeps its committed rules.
    //!
    //! Each live tree's condition policies (getItemConditionPolicies) are cached beside it
    //! (`EBAY_US.conditions.json`, the committed file's format), asked again when the tree is
    //! downloaded or its version checked, else read from the cache; a failure (an answer
    //! above a bound of `taxonomy_tree::conditions`, such as more than `MAX_POLICIES`
    //! distinct policies, is one, with a warning naming the bound) keeps the
    //! cached policies of the same tree (as a held tree is kept), else is recorded
    //! (`EBAY_US.conditions.failed`) like a tree's, and the site falls back to the committed
    //! file when it fits the live tree.

    use std::cell::OnceCell;
    use std::fs::{File, OpenOptions};
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use marketplace_client::api::ApiClient;
    use marketplace_client::oauth::{AccessTokenSource, ApplicationTokenProvider, OAuthConfig};
    use marketplace_client::taxonomy::{ClientConfig, TaxonomyClient};
    use marketplace_client::trees::{self, server_text};

    use crate::pinned::{self, PinnedAspects};
    use marketplaces::Marketplace;
    use taxonomy_tree::conditions::{self, ConditionsFile};
    use taxonomy_tree::snapshot;
    use taxonomy_tree::tree::CategoryTree;

    type Results = Vec<(Marketplace, Result<CategoryTree, String>)>;

    /// Each live tree's condition policies, or why they could not be had.
    pub(super) type Policies = Vec<(Marketplace, Result<ConditionsFile, String>)>;

    /// What [`fetch`] gives: the trees (or why not), the pinned categories' answers of the
    /// live versions, and the live trees' condition policies.
    pub(super) struct Fetched {
        /// Each selected site's live tree, or why it could not be had.
        pub(super) trees: Results,
        /// The pinned categories' answers of the live trees' versions.
        pub(super) pinned: Vec<PinnedAspects>,
        /// The condition policies of the live trees.
        pub(super) policies: Policies,
    }

    /// How long a failed download is remembered: long enough for the other build of
    /// taxonomy-data to fall back the same way, short enough that a later build tries again.
    const FAILURE_MEMORY: Duration = Duration::from_secs(15 * 60);

    /// The file cargo watches; rewritten when the cache changes, its absence asks for a check.
    const STAMP: &str = "stamp";

    /// A cached tree and what its sidecar says.
    struct Cached {
        tree: CategoryTree,
        checked: SystemTime,
    }

    pub(super) fn fetch(
        selected: &[Marketplace],
        snapshots_dir: &Path,
        out_dir: &Path,
    ) -> Result<Fetched, String> {
        let started = SystemTime::now();
        let ttl = ttl_from_env();
        let oauth = OAuthConfig::from_env().map_err(|e| e.to_string())?;
        // A build must not hang on the network: short time-outs, one retry, short waits.
        // getCategoryTree's documented path on eBay's hosts; MARKETPLACE_TREE_PATH overrides.
        let config = ClientConfig::from_oauth_config(&oauth)
            .with_env(|name| std::env::var(name).ok())
            .map_err(|e| e.to_string())?
            .with_connect_timeout(Duration::from_secs(10))
            .with_timeout(Duration::from_secs(60))
            .with_max_retries(1)
            .with_backoff(Duration::from_millis(500), Duration::from_secs(2))
            .with_max_retry_after(Duration::from_secs(10));
        // One token source for the trees and the pinned categories, made when first needed.
        let source: OnceCell<Result<Arc<dyn AccessTokenSource>, String>> = OnceCell::new();
        let tokens = || {
            source
                .get_or_init(|| ApplicationTokenProvider::source(&oauth).map_err(|e| e.to_string()))
                .clone()
        };
        let key = cache_key(config.base_url.as_ref());
        let root = cache_dir(out_dir);
        let cache = root.join(format!("{key:016x}"));
        private_dir(&root)?;
        private_dir(&cache)?;
        // Held until the end of this function; the OS releases it if the build dies.
        let lock = private_file(&cache.join("lock"), false)
            .map_err(|e| format!("{}: {e}", cache.display()))?;
        lock.lock()
            .map_err(|e| format!("{}: {e}", cache.display()))?;

        let stamp = cache.join(STAMP);
        // No stamp: first build, or the user deleted it to ask for a check now.
        let check_now = !stamp.exists();
        // A check made after this script started is the other build's, of this same cargo
        // run: reused, so both builds see the same trees.
        let due = |checked: SystemTime| {
            check_now
                || (checked < started
                    && SystemTime::now()
                        .duration_since(checked)
                        .is_ok_and(|age| age >= ttl))
        };

        let mut results = Vec::new();
        let mut to_check: Vec<(Marketplace, Cached)> = Vec::new();
        let mut missing = Vec::new();
        for &site in selected {
            let failed = cache.join(format!("{}.failed", site.marketplace_id()));
            if recently(&failed)
                && let Ok(reason) = std::fs::read_to_string(&failed)
            {
                results.push((site, Err(server_text(&reason))));
                continue;
            }
            let _ = std::fs::remove_file(&failed);
            match read_cached(&cache, site) {
                Ok(Some(cached)) if due(cached.checked) => to_check.push((site, cached)),
                Ok(Some(cached)) => results.push((site, Ok(cached.tree))),
                Ok(None) => missing.push(site),
                Err((reason, checked)) if checked.is_some_and(due) => {
                    super::warn(&format!("{site}: {reason}; downloading it again"));
                    missing.push(site);
                }
                Err((reason, _)) => results.push((
                    site,
                    Err(format!(
                        "{reason}; it is downloaded again at the next version check (delete {} to do it now)",
                        cache.join(STAMP).display()
                    )),
                )),
            }
        }

        // One Taxonomy API client for the trees and the condition policies, made when needed.
        let taxonomy = OnceCell::new();
        let client = || {
            taxonomy
                .get_or_init(|| {
                    tokens().and_then(|tokens| {
                        TaxonomyClient::new(config.clone(), tokens).map_err(|e| e.to_string())
                    })
                })
                .as_ref()
                .map_err(Clone::clone)
        };
        let mut cache_changed = false;
        // The sites whose condition policies are asked again: their tree was downloaded, or
        // its version checked.
        let mut refresh_policies: Vec<Marketplace> = Vec::new();
        if !to_check.is_empty() || !missing.is_empty() {
            // Trees held, kept when the check or the download fails.
            let mut held: Vec<(Marketplace, CategoryTree)> = Vec::new();
            match client() {
                Ok(client) => {
                    let metas: Vec<_> = to_check
                        .iter()
                        .map(|(site, c)| (*site, Some(c.tree.meta.clone())))
                        .collect();
                    let checks = trees::check_versions(client, &metas, None);
                    for ((site, cached), check) in to_check.into_iter().zip(checks) {
                        match check {
                            // Partial: the service gave back the committed partial copy (a
                            // server serving the snapshots, such as the fake); downloading it
                            // again at every check would give the same categories.
                            Ok(c)
                                if c.stale.is_none()
                                    || c.stale == Some(trees::Staleness::Partial) =>
                            {
                                write_check(&cache, site, &cached.tree);
                                refresh_policies.push(site);
                                results.push((site, Ok(cached.tree)));
                            }
                            Ok(c) => {
                                if let Some(why) = &c.stale {
                                    super::warn(&server_text(&format!(
                                        "{site}: the cached live tree is out of date ({why}); downloading it again"
                                    )));
                                }
                                held.push((site, cached.tree));
                                missing.push(site);
                            }
                            Err(e) => {
                                super::warn(&server_text(&format!(
                                    "{site}: {e}; using the cached live tree (version {}) until the next check",
                                    cached.tree.meta.version
                                )));
                                write_check(&cache, site, &cached.tree);
                                results.push((site, Ok(cached.tree)));
                            }
                        }
                    }
                }
                Err(e) => {
                    for (site, cached) in to_check {
                        super::warn(&server_text(&format!(
                            "{site}: the versions could not be checked ({e}); using the cached live tree until the next check"
                        )));
                        write_check(&cache, site, &cached.tree);
                        results.push((site, Ok(cached.tree)));
                    }
                }
            }
            let fetched: Vec<Result<_, String>> = match client() {
                Ok(client) if !missing.is_empty() => {
                    trees::fetch_and_prepare(client, &missing, None, snapshots_dir, &|_, _| {})
                        .into_iter()
                        .map(|r| r.map_err(|e| e.to_string()))
                        .collect()
                }
                Ok(_) => Vec::new(),
                Err(e) => vec![Err(e); missing.len()],
            };
            for (site, result) in missing.iter().copied().zip(fetched) {
                let kept = held
                    .iter()
                    .position(|(s, _)| *s == site)
                    .map(|i| held.swap_remove(i).1);
                match (result, kept) {
                    (Ok(prepared), _) => {
                        let path = cache.join(site.snapshot_file_name());
                        let text = snapshot::to_string(&prepared.tree);
                        match write_private(&path, text.as_bytes()) {
                            Ok(()) => write_check(&cache, site, &prepared.tree),
                            Err(e) => super::warn(&format!(
                                "{site}: the live tree could not be cached ({}: {e})",
                                path.display()
                            )),
                        }
                        cache_changed = true;
                        refresh_policies.push(site);
                        results.push((site, Ok(prepared.tree)));
                    }
                    (Err(reason), Some(tree)) => {
                        super::warn(&server_text(&format!(
                            "{site}: the new version could not be downloaded ({reason}); using the cached live tree (version {}) until the next check",
                            tree.meta.version
                        )));
                        write_check(&cache, site, &tree);
                        results.push((site, Ok(tree)));
                    }
                    (Err(reason), None) => {
                        let reason = server_text(&reason);
                        // Recorded, so the other build of taxonomy-data falls back the same way.
                        let _ = write_private(
                            &cache.join(format!("{}.failed", site.marketplace_id())),
                            reason.as_bytes(),
                        );
                        cache_changed = true;
                        results.push((site, Err(reason)));
                    }
                }
            }
        }
        let api = OnceCell::new();
        let api = || {
            api.get_or_init(|| {
                tokens().and_then(|t| ApiClient::new(config.clone(), t).map_err(|e| e.to_string()))
            })
            .as_ref()
            .map_err(Clone::clone)
        };
        let (live_pinned, pinned_changed) = pinned_answers(&cache, snapshots_dir, &results, api);
        cache_changed |= pinned_changed;
        let (policies, policies_changed) =
            condition_policies(&cache, &results, &refresh_policies, client);
        cache_changed |= policies_changed;
        if cache_changed || check_now {
            let _ = write_private(
                &stamp,
                format!("{}\n", unix_secs(SystemTime::now())).as_bytes(),
            );
        }
        // What cargo watches: the stamp, and each cached tree (a hand edit reruns the script).
        println!("cargo:rerun-if-changed={}", stamp.display());
        for &site in selected {
            let path = cache.join(site.snapshot_file_name());
            for path in [conditions::path_beside(&path), path] {
                if path.is_file() {
                    println!("cargo:rerun-if-changed={}", path.display());
                }
            }
        }
        drop(lock);
        results.sort_by_key(|(site, _)| *site);
        Ok(Fetched {
            trees: results,
            pinned: live_pinned,
            policies,
        })
    }

    /// The condition policies (getItemConditionPolicies) of each live tree of `results`:
    /// asked again for the sites of `refresh` (their tree was downloaded or its version
    /// checked), else read from the cache (`EBAY_US.conditions.json` beside the cached tree,
    /// used when it is valid and in step with the tree), else asked (none cached: a first
    /// build, or a cache an older toolkit left) unless a recent attempt failed. A fetched
    /// file is cached (0600) and replaces a failure record; a failed one keeps the cached file
    /// when it is of the same tree (asked again at a version check), else removes it and is
    /// recorded (`EBAY_US.conditions.failed`), so that the other build of taxonomy-data falls
    /// back the same way. Returns each site's policies or why they could
    /// not be had, and whether the cache changed.
    fn condition_policies<'a>(
        cache: &Path,
        results: &Results,
        refresh: &[Marketplace],
        client: impl Fn() -> Result<&'a TaxonomyClient, String>,
    ) -> (Policies, bool) {
        let file_of =
            |site: Marketplace| conditions::path_beside(&cache.join(site.snapshot_file_name()));
        let failed_of =
            |site: Marketplace| cache.join(format!("{}.conditions.failed", site.marketplace_id()));
        let mut policies: Policies = Vec::new();
        let mut to_fetch: Vec<(Marketplace, &CategoryTree)> = Vec::new();
        for (site, tree) in results {
            let Ok(tree) = tree else { continue };
            if !refresh.contains(site) {
                let tree_path = cache.join(site.snapshot_file_name());
                if let Ok(Some(file)) = conditions::read_in_step(&tree_path, tree) {
                    policies.push((*site, Ok(file)));
                    continue;
                }
                let failed = failed_of(*site);
                if recently(&failed) {
                    let reason = std::fs::read_to_string(&failed)
                        .unwrap_or_else(|_| "an earlier attempt failed".into());
                    policies.push((*site, Err(server_text(&reason))));
                    continue;
                }
            }
            to_fetch.push((*site, tree));
        }
        if to_fetch.is_empty() {
            return (policies, false);
        }
        let fetched: Vec<Result<ConditionsFile, String>> = match client() {
            Ok(client) => trees::condition_policies_of_trees(client, &to_fetch, cache)
                .into_iter()
                .map(|r| r.map_err(|e| e.to_string()))
                .collect(),
            Err(e) => vec![Err(e); to_fetch.len()],
        };
        for ((site, tree), result) in to_fetch.into_iter().zip(fetched) {
            let (path, failed) = (file_of(site), failed_of(site));
            match result {
                Ok(file) => {
                    let _ = std::fs::remove_file(&failed);
                    if let Err(e) = write_private(&path, conditions::to_string(&file).as_bytes()) {
                        super::warn(&format!(
                            "{site}: the condition policies could not be cached ({}: {e})",
                            path.display()
                        ));
                    }
                    policies.push((site, Ok(file)));
                }
                Err(reason) => {
                    let reason = server_text(&reason);
                    // Asked again at a version check that kept the tree: the cached policies
                    // of this very tree stay (as a held tree stays when its download fails),
                    // for this build and the other; a transient failure must not leave the
                    // site without policies.
                    let tree_path = cache.join(site.snapshot_file_name());
                    if let Ok(Some(file)) = conditions::read_in_step(&tree_path, tree) {
                        super::warn(&format!(
                            "{site}: the condition policies of the live tree (version {}) could not be had again (getItemConditionPolicies: {reason}); using the cached ones of the same tree",
                            tree.meta.version
                        ));
                        policies.push((site, Ok(file)));
                        continue;
                    }
                    let _ = std::fs::remove_file(&path);
                    let _ = write_private(&failed, reason.as_bytes());
                    policies.push((site, Err(reason)));
                }
            }
        }
        (policies, true)
    }

    /// The pinned categories' answers that go with the live trees of `results`: for each
    /// committed pin of a site whose live tree is of another version, the answer of the live
    /// version (from the cache, else getItemAspectsForCategory, then cached). A category that
    /// is no leaf of the live tree is left to the offline generation's warning; one whose
    /// answer cannot be had (or cannot be compiled in) keeps its committed rules, with a
    /// warning, and the failure is
    /// recorded so that the other build of taxonomy-data does the same. Returns the answers
    /// and whether the cache changed.
    fn pinned_answers<'a>(
        cache: &Path,
        snapshots_dir: &Path,
        results: &Results,
        api: impl Fn() -> Result<&'a ApiClient, String>,
    ) -> (Vec<PinnedAspects>, bool) {
        // An unreadable pin is the offline generation's error, reported there.
        let Ok(committed) = pinned::read_all(snapshots_dir) else {
            return (Vec::new(), false);
        };
        let dir = cache.join(pinned::PINNED_DIR);
        let mut answers = Vec::new();
        let mut changed = false;
        for pin in committed {
            let Some(tree) = results
                .iter()
                .find(|(site, _)| *site == pin.site)
                .and_then(|(_, r)| r.as_ref().ok())
            else {
                continue;
            };
            let (tree_id, version) = (tree.meta.tree_id, &tree.meta.version);
            if (pin.tree_id == tree_id && &pin.tree_version == version)
                || !tree.get(pin.category_id).is_some_and(|c| c.leaf)
            {
                continue;
            }
            let at = format!("{} category {}", pin.site, pin.category_id);
            let path = dir.join(pinned::file_name(pin.site, pin.category_id));
            let failed = path.with_extension("failed");
            let cached = PinnedAspects::read(&path).ok().filter(|c| {
                c.site == pin.site
                    && c.category_id == pin.category_id
                    && c.tree_id == tree_id
                    && &c.tree_version == version
            });
            let live = match cached {
                Some(cached) => Ok(cached),
                None if recently(&failed) => Err(std::fs::read_to_string(&failed)
                    .unwrap_or_else(|_| "an earlier attempt failed".into())),
                None => {
                    let _ = std::fs::remove_file(&failed);
                    changed = true;
                    let fetched = api()
                        .and_then(|api| {
                            trees::item_aspects_answer(api, pin.site, tree_id, pin.category_id)
                        })
                        .and_then(|got| {
                            let file = PinnedAspects {
                                tree_id,
                                tree_version: version.clone(),
                                taken_at: taxonomy_tree::clock::today_utc(),
                                fetched_from: Some(got.host),
                                made_up: got.made_up,
                                answer: got.answer,
                                ..pin.clone()
                            };
                            // An answer that cannot be compiled in (more aspects than a pinned
                            // category holds) is a failure: the committed pin stands.
                            pinned::rules_source(&file, "PINNED")?;
                            // Read back: the same normalised answer as the cache gives later.
                            let text = file.to_text();
                            private_dir(&dir)?;
                            write_private(&path, text.as_bytes())
                                .map_err(|e| format!("{}: {e}", path.display()))?;
                            PinnedAspects::parse(&text, &path).map_err(|e| e.to_string())
                        });
                    if let Err(reason) = &fetched {
                        let _ = write_private(&failed, server_text(reason).as_bytes());
                    }
                    fetched
                }
            };
            match live {
                Ok(live) => {
                    if live.answer != pin.answer {
                        super::warn(&server_text(&format!(
                            "{at}: using the aspects of the live tree (version {version}), which differ from the committed pin (version {}); refresh it with `snapshot aspects refresh --pinned`, run at your project's root",
                            pin.tree_version
                        )));
                    }
                    answers.push(live);
                }
                Err(reason) => super::warn(&server_text(&format!(
                    "{at}: the aspects of the live tree (version {version}) could not be had ({reason}); using the committed pin (version {})",
                    pin.tree_version
                ))),
            }
        }
        (answers, changed)
    }

    /// Whether `path` was written less than [`FAILURE_MEMORY`] ago.
    fn recently(path: &Path) -> bool {
        std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age < FAILURE_MEMORY)
    }

    /// `TAXONOMY_LIVE_TTL`, or the default with a warning naming a bad value.
    fn ttl_from_env() -> Duration {
        match std::env::var(super::TTL_ENV) {
            Ok(value) if !value.trim().is_empty() => match super::parse_ttl(&value) {
                Some(ttl) => ttl,
                None => {
                    super::warn(&format!(
                        "{}={:?} is not a duration (e.g. 30m, 24h, 2d or 3600 for seconds); using the default, 24h",
                        super::TTL_ENV,
                        value.chars().take(40).collect::<String>()
                    ));
                    super::DEFAULT_TTL
                }
            },
            _ => super::DEFAULT_TTL,
        }
    }

    /// The cached tree of `site`: `Ok(None)` when there is none (or no sidecar, as an older
    /// cache left), `Err((why, checked))` when it is refused.
    fn read_cached(
        cache: &Path,
        site: Marketplace,
    ) -> Result<Option<Cached>, (String, Option<SystemTime>)> {
        let path = cache.join(site.snapshot_file_name());
        let Ok(bytes) = std::fs::read(&path) else {
            return Ok(None);
        };
        let Ok(sidecar) = std::fs::read_to_string(check_path(cache, site)) else {
            return Ok(None);
        };
        let field = |name: &str| {
            sidecar
                .lines()
                .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
                .map(str::trim)
        };
        let checked = field("checked")
            .and_then(|t| t.parse::<u64>().ok())
            .map(|secs| UNIX_EPOCH + Duration::from_secs(secs));
        if field("sha256") != Some(sha256_hex(&bytes).as_str()) {
            return Err((
                format!(
                    "the cached live tree {} does not match its checksum (edited or corrupted); it is not used",
                    path.display()
                ),
                checked,
            ));
        }
        let tree = std::str::from_utf8(&bytes)
            .map_err(|e| e.to_string())
            .and_then(|text| snapshot::parse(text, &path).map_err(|e| e.to_string()))
            .map_err(|e| (format!("the cached live tree is unreadable: {e}"), checked))?;
        if tree.meta.tree_id != site.tree_id() {
            return Err((
                format!("{}: holds another site's tree", path.display()),
                checked,
            ));
        }
        Ok(Some(Cached {
            tree,
            checked: checked.unwrap_or(UNIX_EPOCH),
        }))
    }

    fn check_path(cache: &Path, site: Marketplace) -> PathBuf {
        cache.join(format!("{}.check", site.marketplace_id()))
    }

    /// Writes the sidecar of `site`'s cached tree: its version, the time of this check, and
    /// the SHA-256 of the tree file as it is on disk.
    fn write_check(cache: &Path, site: Marketplace, tree: &CategoryTree) {
        let path = cache.join(site.snapshot_file_name());
        let Ok(bytes) = std::fs::read(&path) else {
            return;
        };
        let text = format!(
            "version={}\nchecked={}\nsha256={}\n",
            server_text(&tree.meta.version),
            unix_secs(SystemTime::now()),
            sha256_hex(&bytes)
        );
        if let Err(e) = write_private(&check_path(cache, site), text.as_bytes()) {
            super::warn(&format!(
                "{site}: the version check could not be recorded: {e}"
            ));
        }
    }

    fn unix_secs(t: SystemTime) -> u64 {
        t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
    }

    /// SHA-256, against corruption and hand edits: not an authentication (whoever can edit the
    /// tree can edit its sidecar), but no edit goes unnoticed by chance. ring is already
    /// compiled in with `live` (the TLS stack's provider), so it costs no new crate.
    fn sha256_hex(bytes: &[u8]) -> String {
        let digest = ring::digest::digest(&ring::digest::SHA256, bytes);
        digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Creates `dir` (0700) if needed, and makes an existing one 0700.
    fn private_dir(dir: &Path) -> Result<(), String> {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
            builder.mode(0o700);
            builder
                .create(dir)
                .map_err(|e| format!("{}: {e}", dir.display()))?;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
                .map_err(|e| format!("{}: {e}", dir.display()))
        }
        #[cfg(not(unix))]
        builder
            .create(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))
    }

    /// Opens `path` for writing, created 0600 (an existing file is made 0600).
    fn private_file(path: &Path, truncate: bool) -> std::io::Result<File> {
        let mut options = OpenOptions::new();
        options.create(true).write(true).truncate(truncate);
        #[cfg(unix)]
        {
            use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
            options.mode(0o600);
            let file = options.open(path)?;
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
            Ok(file)
        }
        #[cfg(not(unix))]
        options.open(path)
    }

    /// Replaces `path` with `bytes` atomically, the file 0600.
    fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
        taxonomy_tree::atomic::write_atomic(path, bytes, Some(0o600))
    }

    /// FNV-1a over the settings that select what is downloaded: never a secret, so a changed
    /// secret keeps the cache (it takes effect at the next version check).
    fn cache_key(base_url: &str) -> u64 {
        let mut text = String::from(base_url);
        for name in super::LIVE_ENV {
            if name != super::TTL_ENV {
                text.push('\0');
                text.push_str(&std::env::var(name).unwrap_or_default());
            }
        }
        text.push('\0');
        text.push_str(&std::env::var(super::SITES_ENV).unwrap_or_default());
        taxonomy_tree::fnv1a(text.as_bytes())
    }

    /// `<target dir>/taxonomy-live`: the target directory is the nearest ancestor of `OUT_DIR`
    /// holding cargo's `CACHEDIR.TAG`, shared by the host and target builds.
    fn cache_dir(out_dir: &Path) -> PathBuf {
        let target = out_dir
            .ancestors()
            .find(|d| d.join("CACHEDIR.TAG").is_file())
            .unwrap_or(out_dir);
        target.join("taxonomy-live")
    }
}

/// Prints a `cargo:warning`, on one line: a control character (a newline from a server's
/// text) is escaped, so it can neither end the warning and start a `cargo:` directive of its
/// own nor drive the terminal. In a live build, text from the server has already been through
/// the clients' sanitizer (`marketplace_client::trees::server_text`).
fn warn(message: &str) {
    let cut: String = message.chars().take(1000).collect();
    let one_line = taxonomy_tree::tree::escaped(&cut);
    println!("cargo:warning=taxonomy-data: {one_line}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snapshots_directory_is_taxonomy_datas_or_an_absolute_existing_one() {
        let data = Path::new("/src/taxonomy-data");
        assert_eq!(snapshots_dir(None, data).unwrap(), data.join("snapshots"));
        assert_eq!(
            snapshots_dir(Some("".into()), data).unwrap(),
            data.join("snapshots")
        );
        let own = std::env::temp_dir();
        assert_eq!(snapshots_dir(Some(own.clone().into()), data).unwrap(), own);

        let relative = snapshots_dir(Some("snapshots".into()), data)
            .unwrap_err()
            .to_string();
        assert!(
            relative.contains("TAXONOMY_SNAPSHOTS_DIR=snapshots: a relative path"),
            "{relative}"
        );
        assert!(relative.contains("relative = true"), "{relative}");
        let missing = snapshots_dir(Some(own.join("no-such-dir-4242").into()), data)
            .unwrap_err()
            .to_string();
        assert!(missing.contains("no such directory"), "{missing}");
        // The way out, not the `[env]` line the project already has: the command that
        // creates the directory, as a user runs it in their own project (where the toolkit's
        // repository and its `cargo run --bin snapshot` are not at hand).
        assert!(
            missing.contains("run `snapshot refresh --sites …`"),
            "{missing}"
        );
        assert!(!missing.contains("toolkit's repository"), "{missing}");
        assert!(!missing.contains("relative = true"), "{missing}");
    }

    /// Without `live`, a backend's run-time settings are not watched: changing them reruns
    /// nothing. With it, every setting of the download is, and never a secret.
    #[test]
    fn runtime_settings_are_watched_only_with_live() {
        let offline = watched_env(false);
        assert_eq!(offline, [SITES_ENV, SNAPSHOTS_DIR_ENV]);
        for name in [
            "MARKETPLACE_BASE_URL",
            "MARKETPLACE_CLIENT_ID",
            "MARKETPLACE_ENV",
            "MARKETPLACE_SCOPE",
            "MARKETPLACE_AUTH_URL",
            "MARKETPLACE_CONFIG",
            TTL_ENV,
        ] {
            assert!(!offline.contains(&name), "{name}");
            assert!(watched_env(true).contains(&name), "{name}");
        }
        for secret in SECRET_ENV {
            assert!(!watched_env(true).contains(&secret), "{secret}");
        }
    }
}
