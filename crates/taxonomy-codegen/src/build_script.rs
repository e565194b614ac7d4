//! What `taxonomy-data`'s build script does, as a library so it can be tested: pick the sites,
//! obtain each site's tree, generate the tables, tell cargo when to run again.
//!
//! [`obtain_trees`] is the single place trees enter the build: from the live service when
//! credentials are set (and the `live` feature is on, and `TAXONOMY_OFFLINE` is not set),
//! else, or on any failure, from the committed snapshots. A live download is cached in the
//! target directory under a key of the settings, so the host and target builds of
//! `taxonomy-data` (the macro's and the program's) and later rebuilds use the same tree, and
//! the service is asked once.

use std::path::{Path, PathBuf};

use crate::codegen::{self, SiteData};
use marketplaces::Marketplace;
use taxonomy_tree::expired::{self, ExpiredError, ExpiredMapping};
use taxonomy_tree::snapshot;
use taxonomy_tree::tree::CategoryTree;

/// Environment variable: the sites to compile in, e.g. `EBAY_US,EBAY_DE` (default: all).
pub const SITES_ENV: &str = "TAXONOMY_SITES";
/// Environment variable: a snapshots directory to read instead of the committed one.
pub const SNAPSHOTS_DIR_ENV: &str = "TAXONOMY_SNAPSHOTS_DIR";
/// Environment variable: when set (to anything but `0` or `false`), never download.
pub const OFFLINE_ENV: &str = "TAXONOMY_OFFLINE";

/// Every variable that decides whether and what the build downloads.
pub const LIVE_ENV: [&str; 11] = [
    OFFLINE_ENV,
    "DOCS_RS",
    "MARKETPLACE_ENV",
    "MARKETPLACE_BASE_URL",
    "MARKETPLACE_AUTH_URL",
    "MARKETPLACE_CLIENT_ID",
    "MARKETPLACE_CLIENT_SECRET",
    "MARKETPLACE_CONFIG",
    "MARKETPLACE_ACCESS_TOKEN",
    "MARKETPLACE_SCOPE",
    "MARKETPLACE_TREE_PATH",
];

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
        "{SITES_ENV}={value:?}: {entry:?} is not a known site. Accepted: a comma-separated list of EBAY_US, EBAY_GB, EBAY_DE, EBAY_AU (or us, gb, de, au, or the tree ids 0, 3, 77, 15); unset it to compile in every site"
    )]
    BadSiteFilter {
        /// The variable's value.
        value: String,
        /// The entry that is not a site.
        entry: String,
    },
    /// A snapshot is missing or invalid.
    #[error(
        "{0}\nThe committed snapshots are regenerated with `cargo run --bin snapshot -- refresh` (or `import`)."
    )]
    Snapshot(#[from] snapshot::SnapshotError),
    /// The expired-category file beside a snapshot is invalid or breaks the rule.
    #[error(
        "{0}\nThe expired-category files are written by `cargo run --bin snapshot -- refresh` (getExpiredCategories)."
    )]
    Expired(#[from] ExpiredError),
    /// The tables could not be generated.
    #[error(transparent)]
    Generate(#[from] codegen::GenerateError),
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
        let site = Marketplace::parse(entry).ok_or_else(|| BuildError::BadSiteFilter {
            value: value.to_string(),
            entry: entry.to_string(),
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
}

/// The tree of one site and the expired-category file beside it (none: no mapping), from
/// `snapshots_dir`.
pub fn snapshot_site(site: Marketplace, snapshots_dir: &Path) -> Result<SiteTree, BuildError> {
    let tree = snapshot_tree(site, snapshots_dir)?;
    let path = snapshots_dir.join(site.snapshot_file_name());
    let expired = expired::read_beside(&path, &tree)?.map_or_else(Vec::new, |f| f.mappings);
    Ok(SiteTree { tree, expired })
}

/// The trees of the selected sites: live ones where `live` has them, the committed snapshots
/// for the rest. Returns them in [`Marketplace::ALL`] order, `None` for sites not selected
/// and for sites without a snapshot (they compile in empty).
pub fn obtain_trees(
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

/// Generates the source of the tables for the selected sites (the others compile in empty),
/// from the committed snapshots.
pub fn generate_for(selected: &[Marketplace], snapshots_dir: &Path) -> Result<String, BuildError> {
    let trees = obtain_trees(selected, snapshots_dir, Vec::new())?;
    generate_trees(&trees)
}

/// Generates the source of the tables from trees in [`Marketplace::ALL`] order.
pub fn generate_trees(trees: &[(Marketplace, Option<SiteTree>)]) -> Result<String, BuildError> {
    let data: Vec<SiteData<'_>> = trees
        .iter()
        .map(|(site, tree)| SiteData {
            site: *site,
            tree: tree.as_ref().map(|t| &t.tree),
            expired: tree.as_ref().map_or(&[], |t| &t.expired),
        })
        .collect();
    Ok(codegen::generate(&data)?)
}

/// The whole build script: reads the environment cargo gives it, writes
/// `OUT_DIR/taxonomy.rs`, and prints the `cargo:` lines.
pub fn run() -> Result<(), BuildError> {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    println!("cargo:rerun-if-env-changed={SITES_ENV}");
    println!("cargo:rerun-if-env-changed={SNAPSHOTS_DIR_ENV}");
    for name in LIVE_ENV {
        println!("cargo:rerun-if-env-changed={name}");
    }
    if let Some(config) = std::env::var_os("MARKETPLACE_CONFIG").filter(|c| !c.is_empty()) {
        println!("cargo:rerun-if-changed={}", PathBuf::from(config).display());
    }
    let snapshots_dir = match std::env::var_os(SNAPSHOTS_DIR_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => manifest_dir.join("snapshots"),
    };
    println!("cargo:rerun-if-changed={}", snapshots_dir.display());
    for site in Marketplace::ALL {
        let snapshot = snapshots_dir.join(site.snapshot_file_name());
        println!("cargo:rerun-if-changed={}", snapshot.display());
        // Only an existing file: a missing one would rerun every build (the directory's line
        // above notices one being added).
        let expired = expired::path_beside(&snapshot);
        if expired.exists() {
            println!("cargo:rerun-if-changed={}", expired.display());
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
                "{SITES_ENV} names {site}, which has no snapshot in {}; it is not compiled in. `cargo run --bin snapshot -- refresh --sites {site}` makes one.",
                snapshots_dir.display()
            ));
        }
        has
    });
    let live = match live_decision(|name| std::env::var(name).ok(), cfg!(feature = "live")) {
        LiveDecision::Live => live_trees(&selected, &snapshots_dir, &out_dir),
        LiveDecision::Offline { reason, warn } => {
            if warn {
                self::warn(&format!("using the committed snapshots: {reason}"));
            }
            Vec::new()
        }
    };
    let trees = obtain_trees(&selected, &snapshots_dir, live)?;
    let code = generate_trees(&trees)?;
    let out = out_dir.join("taxonomy.rs");
    taxonomy_tree::atomic::write_atomic(&out, code.as_bytes(), None).map_err(|source| {
        BuildError::Snapshot(snapshot::SnapshotError::Io { path: out, source })
    })?;
    Ok(())
}

/// Downloads the selected sites' trees (or reads them from the build cache). A site that
/// fails is left out, with a `cargo:warning`, so the build falls back to its snapshot.
#[cfg(feature = "live")]
fn live_trees(
    selected: &[Marketplace],
    snapshots_dir: &Path,
    out_dir: &Path,
) -> Vec<(Marketplace, SiteTree)> {
    match live::fetch(selected, snapshots_dir, out_dir) {
        Ok(results) => results
            .into_iter()
            .filter_map(|(site, result)| match result {
                Ok(tree) => Some((site, tree)),
                Err(reason) => {
                    warn(&format!(
                        "{site}: the live tree could not be used ({reason}); using the committed snapshot"
                    ));
                    None
                }
            })
            .collect(),
        Err(reason) => {
            warn(&format!(
                "the live trees could not be downloaded ({reason}); using the committed snapshots"
            ));
            Vec::new()
        }
    }
}

#[cfg(not(feature = "live"))]
fn live_trees(_: &[Marketplace], _: &Path, _: &Path) -> Vec<(Marketplace, SiteTree)> {
    Vec::new()
}

#[cfg(feature = "live")]
mod live {
    //! The download, and its cache in the target directory.
    //!
    //! Both builds of taxonomy-data (the macro's and the program's) run this with the same
    //! settings, so they share one cache entry: the first takes an OS file lock, downloads,
    //! and records for every site either its tree or why it failed; the other waits for the
    //! lock and reads the record. So the two builds always use the same trees, even when the
    //! network fails half-way.

    use std::fs::File;
    use std::path::{Path, PathBuf};
    use std::time::Duration;

    use marketplace_client::oauth::OAuthConfig;
    use marketplace_client::refresh;
    use marketplace_client::taxonomy::{TaxonomyClient, TaxonomyConfig};
    use marketplaces::Marketplace;
    use taxonomy_tree::expired::{self, ExpiredFile};
    use taxonomy_tree::snapshot;

    use super::SiteTree;

    type Results = Vec<(Marketplace, Result<SiteTree, String>)>;

    /// How long a failed download is remembered: long enough for the other build of
    /// taxonomy-data to fall back the same way, short enough that a later build tries again.
    const FAILURE_MEMORY: Duration = Duration::from_secs(15 * 60);

    pub(super) fn fetch(
        selected: &[Marketplace],
        snapshots_dir: &Path,
        out_dir: &Path,
    ) -> Result<Results, String> {
        let oauth = OAuthConfig::from_env().map_err(|e| e.to_string())?;
        // A build must not hang on the network: short time-outs, one retry, short waits.
        // getCategoryTree's documented path on eBay's hosts; MARKETPLACE_TREE_PATH overrides.
        let config = TaxonomyConfig::from_oauth_config(&oauth)
            .with_env(|name| std::env::var(name).ok())
            .map_err(|e| e.to_string())?
            .with_connect_timeout(Duration::from_secs(10))
            .with_timeout(Duration::from_secs(60))
            .with_max_retries(1)
            .with_backoff(Duration::from_millis(500), Duration::from_secs(2))
            .with_max_retry_after(Duration::from_secs(10));
        let key = cache_key(config.base_url.as_ref());
        let cache = cache_dir(out_dir).join(format!("{key:016x}"));
        std::fs::create_dir_all(&cache).map_err(|e| format!("{}: {e}", cache.display()))?;
        // Held until the end of this function; the OS releases it if the build dies.
        let lock =
            File::create(cache.join("lock")).map_err(|e| format!("{}: {e}", cache.display()))?;
        lock.lock()
            .map_err(|e| format!("{}: {e}", cache.display()))?;

        let mut results = Vec::new();
        let mut missing = Vec::new();
        for &site in selected {
            let failed = cache.join(format!("{}.failed", site.marketplace_id()));
            let recent = std::fs::metadata(&failed)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age < FAILURE_MEMORY);
            if recent && let Ok(reason) = std::fs::read_to_string(&failed) {
                results.push((site, Err(reason)));
                continue;
            }
            let _ = std::fs::remove_file(&failed);
            match cached_tree(&cache, site) {
                Some(tree) => results.push((site, Ok(tree))),
                None => missing.push(site),
            }
        }
        if missing.is_empty() {
            return Ok(results);
        }
        let fetched = match oauth.application_token_source() {
            Ok(tokens) => match TaxonomyClient::new(config, tokens) {
                Ok(client) => {
                    refresh::fetch_and_prepare(&client, &missing, None, snapshots_dir, &|_, _| {})
                        .into_iter()
                        .map(|r| r.map_err(|e| e.to_string()))
                        .collect()
                }
                Err(e) => vec![Err(e.to_string()); missing.len()],
            },
            Err(e) => vec![Err(e.to_string()); missing.len()],
        };
        for (site, result) in missing.iter().copied().zip(fetched) {
            match result {
                Ok(prepared) => {
                    if prepared.content_changed
                        && let Some(diff) = &prepared.diff
                    {
                        super::warn(&format!(
                            "{site}: using the live tree, which differs from the committed snapshot ({}); refresh it with `cargo run --bin snapshot -- refresh`",
                            diff.to_string().trim()
                        ));
                    }
                    let path = cache.join(site.snapshot_file_name());
                    let _ = snapshot::write(&path, &prepared.tree);
                    // Written even when empty, so a cached tree always has its mapping.
                    let file = ExpiredFile {
                        tree_id: prepared.tree.meta.tree_id,
                        marketplace_id: prepared.tree.meta.marketplace_id.clone(),
                        version: prepared.tree.meta.version.clone(),
                        source: String::new(),
                        mappings: prepared.expired.clone(),
                    };
                    let _ = expired::write_beside(&path, &file, &prepared.tree);
                    results.push((
                        site,
                        Ok(SiteTree {
                            tree: prepared.tree,
                            expired: prepared.expired,
                        }),
                    ));
                }
                Err(reason) => {
                    // Recorded, so the other build of taxonomy-data falls back the same way.
                    let _ = taxonomy_tree::atomic::write_atomic(
                        &cache.join(format!("{}.failed", site.marketplace_id())),
                        reason.as_bytes(),
                        None,
                    );
                    results.push((site, Err(reason)));
                }
            }
        }
        drop(lock);
        Ok(results)
    }

    /// A cached tree of `site` with its expired mapping, if there is one and it is that
    /// site's.
    fn cached_tree(cache: &Path, site: Marketplace) -> Option<SiteTree> {
        let path = cache.join(site.snapshot_file_name());
        if !expired::path_beside(&path).exists() {
            return None;
        }
        super::snapshot_site(site, cache).ok()
    }

    /// FNV-1a over everything that selects what is downloaded (never the secret itself).
    fn cache_key(base_url: &str) -> u64 {
        let mut text = String::from(base_url);
        for name in super::LIVE_ENV {
            if name != "MARKETPLACE_CLIENT_SECRET" && name != "MARKETPLACE_ACCESS_TOKEN" {
                text.push('\0');
                text.push_str(&std::env::var(name).unwrap_or_default());
            }
        }
        text.push('\0');
        text.push_str(&std::env::var(super::SITES_ENV).unwrap_or_default());
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in text.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h
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

/// Prints a `cargo:warning`, on one line: text from a server must not end the warning and
/// start a `cargo:` directive of its own.
fn warn(message: &str) {
    let one_line: String = message
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(1000)
        .collect();
    println!("cargo:warning=taxonomy-data: {one_line}");
}
