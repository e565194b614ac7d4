//! What `taxonomy-data`'s build script does, as a library so it can be tested: pick the sites,
//! obtain each site's tree, generate the tables, tell cargo when to run again.
//!
//! [`obtain_tree`] is the single place a tree enters the build. Today it reads the committed
//! snapshot; a live download plugs in there and nowhere else.

use std::path::{Path, PathBuf};

use crate::codegen::{self, SiteData};
use crate::site::SiteId;
use crate::snapshot;
use crate::tree::CategoryTree;

/// Environment variable: the sites to compile in, e.g. `EBAY_US,EBAY_DE` (default: all).
pub const SITES_ENV: &str = "TAXONOMY_SITES";
/// Environment variable: a snapshots directory to read instead of the committed one.
pub const SNAPSHOTS_DIR_ENV: &str = "TAXONOMY_SNAPSHOTS_DIR";

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
    /// A snapshot holds another site's tree.
    #[error("{path}: holds category tree {found}, expected {expected} ({site})")]
    WrongTree {
        /// The snapshot file.
        path: PathBuf,
        /// The site the file is named after.
        site: SiteId,
        /// That site's tree id.
        expected: u32,
        /// The tree id in the file.
        found: u32,
    },
}

/// Parses the value of `TAXONOMY_SITES`. An empty or blank value means every site.
///
/// ```
/// use marketplace_toolkit::build_script::parse_site_filter;
/// use marketplace_toolkit::site::SiteId;
/// assert_eq!(parse_site_filter("EBAY_DE, us").unwrap(), vec![SiteId::Us, SiteId::De]);
/// assert_eq!(parse_site_filter("").unwrap(), SiteId::ALL.to_vec());
/// assert!(parse_site_filter("EBAY_FR").is_err());
/// ```
pub fn parse_site_filter(value: &str) -> Result<Vec<SiteId>, BuildError> {
    if value.trim().is_empty() {
        return Ok(SiteId::ALL.to_vec());
    }
    let mut sites = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let site = SiteId::parse(entry).ok_or_else(|| BuildError::BadSiteFilter {
            value: value.to_string(),
            entry: entry.to_string(),
        })?;
        sites.push(site);
    }
    sites.sort();
    sites.dedup();
    Ok(sites)
}

/// The tree of one site, from the committed snapshot in `snapshots_dir`.
pub fn obtain_tree(site: SiteId, snapshots_dir: &Path) -> Result<CategoryTree, BuildError> {
    let path = snapshots_dir.join(site.snapshot_file_name());
    let tree = snapshot::read(&path)?;
    if tree.meta.tree_id != site.tree_id() {
        return Err(BuildError::WrongTree {
            path,
            site,
            expected: site.tree_id(),
            found: tree.meta.tree_id,
        });
    }
    Ok(tree)
}

/// Generates the source of the tables for the selected sites (the others compile in empty).
pub fn generate_for(selected: &[SiteId], snapshots_dir: &Path) -> Result<String, BuildError> {
    let mut trees = Vec::new();
    for site in SiteId::ALL {
        let tree = if selected.contains(&site) {
            Some(obtain_tree(site, snapshots_dir)?)
        } else {
            None
        };
        trees.push((site, tree));
    }
    let data: Vec<SiteData<'_>> = trees
        .iter()
        .map(|(site, tree)| SiteData {
            site: *site,
            tree: tree.as_ref(),
        })
        .collect();
    Ok(codegen::generate(&data))
}

/// The whole build script: reads the environment cargo gives it, writes
/// `OUT_DIR/taxonomy.rs`, and prints the `cargo:` lines.
pub fn run() -> Result<(), BuildError> {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap_or_default());
    println!("cargo:rerun-if-env-changed={SITES_ENV}");
    println!("cargo:rerun-if-env-changed={SNAPSHOTS_DIR_ENV}");
    let snapshots_dir = match std::env::var_os(SNAPSHOTS_DIR_ENV) {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir),
        _ => manifest_dir.join("..").join("snapshots"),
    };
    println!("cargo:rerun-if-changed={}", snapshots_dir.display());
    for site in SiteId::ALL {
        println!(
            "cargo:rerun-if-changed={}",
            snapshots_dir.join(site.snapshot_file_name()).display()
        );
    }
    let filter = std::env::var(SITES_ENV).unwrap_or_default();
    let selected = parse_site_filter(&filter)?;
    let code = generate_for(&selected, &snapshots_dir)?;
    let out = out_dir.join("taxonomy.rs");
    crate::atomic::write_atomic(&out, code.as_bytes(), None).map_err(|source| {
        BuildError::Snapshot(snapshot::SnapshotError::Io { path: out, source })
    })?;
    Ok(())
}
