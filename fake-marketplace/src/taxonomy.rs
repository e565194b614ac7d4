//! The fake's taxonomy endpoints: getCategoryTree (eBay's path form, and the query form when
//! [`FakeConfig::tree_routes`](crate::FakeConfig::tree_routes) says so),
//! getCategorySuggestions, getCategorySubtree, getItemAspectsForCategory,
//! getDefaultCategoryTreeId, getExpiredCategories, fetchItemAspects and the parts
//! compatibility operations, with the service's error bodies.
//!
//! Trees come from [`FakeConfig::snapshots_dir`](crate::FakeConfig::snapshots_dir) (default:
//! the committed `<repo>/snapshots/EBAY_*.json`; `--trees DIR` for the binary), then
//! [`FakeConfig::defaults_dir`](crate::FakeConfig::defaults_dir) (default: this crate's
//! `defaults/`, eBay Motors), read once per process and file version, unless a test replaced
//! them with [`FakeMarketplace::set_tree`] or
//! [`FakeMarketplace::set_tree_body`](crate::FakeMarketplace::set_tree_body). One tree per
//! marketplace, answered under its own id and language (a file of EBAY_CA holds tree 2 or
//! 210); a tree the fake does not hold is an unknown tree id (400, errorId 62004; for
//! getDefaultCategoryTreeId, 204 No Content).
//!
//! Every endpoint checks `Authorization: Bearer …` ([`FakeState::check_bearer`]) and the
//! category tree id (400 with errorId 62004). Every answer is one eBay's OpenAPI description
//! of the Taxonomy API lists for the operation: its status codes, its error ids with their
//! domain and category, and `204 No Content` only where it is documented
//! (`tests/it/contract.rs` checks this).

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use marketplaces::Marketplace;
use serde_json::{Value, json};
use taxonomy_tree::tree::{CategoryTree, ROOT_ID};

use crate::http::{Request, Response};
use crate::{FakeMarketplace, FakeState, Route, TreeRoutes, lock};

/// The marketplace header the endpoints check.
pub use marketplaces::MARKETPLACE_HEADER;
/// The query form of the getCategoryTree path (the tree id is the `category_tree_id` query
/// parameter), answered only when [`FakeConfig::tree_routes`](crate::FakeConfig::tree_routes)
/// allows it.
pub const TREE_GET_PATH: &str = "/commerce/taxonomy/v1/category_tree/get";
/// The default-tree-id path (`marketplace_id` query parameter).
pub const DEFAULT_TREE_ID_PATH: &str = "/commerce/taxonomy/v1/get_default_category_tree_id";

// The error ids the service documents for the Taxonomy API (eBay's OpenAPI description,
// `x-response-codes`), with their HTTP status; every one is domain `API_TAXONOMY`.

/// errorId: an internal failure (HTTP 500, category `APPLICATION`).
pub const ERROR_INTERNAL: u32 = 62000;
/// errorId: `marketplace_id` is missing (HTTP 400).
pub const ERROR_MISSING_MARKETPLACE: u32 = 62002;
/// errorId: the `marketplace_id` is unknown (HTTP 400).
pub const ERROR_UNKNOWN_MARKETPLACE: u32 = 62003;
/// errorId: the category tree id is unknown (HTTP 400).
pub const ERROR_TREE_NOT_FOUND: u32 = 62004;
/// errorId: the category id is not in the tree (HTTP 400).
pub const ERROR_CATEGORY_NOT_IN_TREE: u32 = 62005;
/// errorId: `category_id` is missing or not a number (HTTP 400).
pub const ERROR_MISSING_CATEGORY_ID: u32 = 62006;
/// errorId: `q` is missing or empty (HTTP 400).
pub const ERROR_MISSING_KEYWORD: u32 = 62007;
/// errorId: the category is the root (HTTP 400).
pub const ERROR_ROOT_CATEGORY: u32 = 62008;
/// errorId: aspects were asked for a category that is not a leaf (HTTP 400).
pub const ERROR_NOT_LEAF: u32 = 62009;
/// errorId: the compatibility filter is malformed (HTTP 400).
pub const ERROR_BAD_FILTER: u32 = 62100;
/// errorId: the category is not enabled for parts compatibility (HTTP 400).
pub const ERROR_NOT_COMPATIBILITY_ENABLED: u32 = 62101;
/// errorId: the compatibility property is unknown (HTTP 400).
pub const ERROR_BAD_PROPERTY: u32 = 62102;
/// errorId: `compatibility_property` is missing (HTTP 400).
pub const ERROR_MISSING_PROPERTY: u32 = 62104;

/// The documented get-category-tree path of `tree_id`: `/commerce/taxonomy/v1/category_tree/N`.
pub fn tree_path(tree_id: u32) -> String {
    format!("/commerce/taxonomy/v1/category_tree/{tree_id}")
}

/// `/commerce/taxonomy/v1/category_tree/N/get_category_suggestions`.
pub fn suggestions_path(tree_id: u32) -> String {
    format!("{}/get_category_suggestions", tree_path(tree_id))
}

/// `/commerce/taxonomy/v1/category_tree/N/get_category_subtree`.
pub fn subtree_path(tree_id: u32) -> String {
    format!("{}/get_category_subtree", tree_path(tree_id))
}

/// `/commerce/taxonomy/v1/category_tree/N/get_item_aspects_for_category`.
pub fn aspects_path(tree_id: u32) -> String {
    format!("{}/get_item_aspects_for_category", tree_path(tree_id))
}

/// `/commerce/taxonomy/v1/category_tree/N/get_expired_categories` (getExpiredCategories).
pub fn expired_path(tree_id: u32) -> String {
    format!("{}/get_expired_categories", tree_path(tree_id))
}

/// `/commerce/taxonomy/v1/category_tree/N/fetch_item_aspects` (fetchItemAspects).
pub fn aspects_file_path(tree_id: u32) -> String {
    format!("{}/fetch_item_aspects", tree_path(tree_id))
}

/// `/commerce/taxonomy/v1/category_tree/N/get_compatibility_properties`.
pub fn compatibility_properties_path(tree_id: u32) -> String {
    format!("{}/get_compatibility_properties", tree_path(tree_id))
}

/// `/commerce/taxonomy/v1/category_tree/N/get_compatibility_property_values`.
pub fn compatibility_values_path(tree_id: u32) -> String {
    format!("{}/get_compatibility_property_values", tree_path(tree_id))
}

/// The committed snapshots of this repository.
pub fn default_snapshots_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../snapshots")
}

/// The fake's own trees and expired categories, served beside the snapshots by default
/// (`defaults/` of this crate: eBay Motors, tree 100; see its `PROVENANCE.md`).
pub fn defaults_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("defaults")
}

/// The default fake's expired-category files: made-up sets for `EBAY_US` (against the
/// committed snapshot) and `EBAY_MOTORS_US` (against the tree of [`defaults_dir`]).
pub fn default_expired_files() -> Vec<PathBuf> {
    let dir = defaults_dir();
    vec![
        dir.join("EBAY_US.expired.json"),
        dir.join("EBAY_MOTORS_US.expired.json"),
    ]
}

/// The expired-category files of a trees directory: `EBAY_*.expired.json` named after a
/// marketplace of the table, as `snapshot refresh` writes them beside the snapshots.
pub fn expired_files_in(dir: &Path) -> Vec<PathBuf> {
    Marketplace::ALL
        .iter()
        .map(|m| taxonomy_tree::expired::path_beside(&dir.join(tree_file_name(*m))))
        .filter(|p| p.is_file())
        .collect()
}

/// A tree body, plain and gzip-compressed.
type Bodies = (Arc<Vec<u8>>, Arc<Vec<u8>>);

#[derive(Default)]
struct SiteData {
    tree: Option<Arc<CategoryTree>>,
    /// `(plain, gzip)` renderings of `tree`, made on first use.
    body: Option<Bodies>,
    /// A body served instead of the tree (see `set_tree_body`).
    raw: Option<Arc<Vec<u8>>>,
    /// The gzipped fetchItemAspects file of `tree`, made on first use.
    aspects_file: Option<Arc<Vec<u8>>>,
    /// A test replaced the tree or its body (`set_tree`, `set_tree_body`): the default
    /// expired categories, made for the default tree, no longer apply.
    replaced: bool,
}

/// The taxonomy part of the fake's state.
pub(crate) struct TaxonomyState {
    snapshots_dir: PathBuf,
    /// Where the trees `snapshots_dir` lacks are read.
    defaults_dir: Option<PathBuf>,
    delay: Mutex<Option<(Duration, Duration)>>,
    routes: Mutex<TreeRoutes>,
    /// The expired categories given for a site (files, settings, the setter).
    expired: Mutex<HashMap<Marketplace, Vec<(u32, u32)>>>,
    /// The fake's own made-up sets, served for a site with none given while its tree is the
    /// one they were made for (not replaced by a test).
    default_expired: Mutex<HashMap<Marketplace, Vec<(u32, u32)>>>,
    sites: Mutex<HashMap<Marketplace, SiteData>>,
    /// getItemAspectsForCategory answers set by a test (`set_item_aspects`), by category.
    item_aspects: Mutex<HashMap<u32, Value>>,
}

/// A tree file as last read: its path, size and modification time (a file rewritten between
/// two fakes of one process is read again).
type FileStamp = (PathBuf, u64, Option<std::time::SystemTime>);
type SnapshotCache = Mutex<HashMap<FileStamp, Arc<CategoryTree>>>;

/// The name of the tree file of `site` in a trees directory: the snapshot file name of the
/// marketplace table (`EBAY_FR.json`).
pub fn tree_file_name(site: Marketplace) -> &'static str {
    site.snapshot_file_name()
}

/// The file name of every marketplace of the table, in its order: what a trees directory
/// ([`FakeConfig::with_trees`](crate::FakeConfig::with_trees), `--trees DIR`) may hold.
pub fn tree_file_names() -> Vec<&'static str> {
    Marketplace::ALL
        .iter()
        .map(|m| tree_file_name(*m))
        .collect()
}

/// Why a site has no tree to serve.
#[derive(Debug, Clone)]
pub(crate) enum Unavailable {
    /// The directory has no tree of the site: eBay's answer for an unknown tree (400, errorId
    /// 62004; getDefaultCategoryTreeId: 204).
    Missing,
    /// The site's file cannot be read or is not a valid tree of the site (500, naming the file).
    Broken(String),
}

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unavailable::Missing => f.write_str("no tree in the trees directory"),
            Unavailable::Broken(e) => f.write_str(e),
        }
    }
}

/// Snapshots parsed once per process and file version (they are megabytes; many fakes start
/// per test run).
fn snapshot(dir: &Path, site: Marketplace) -> Result<Arc<CategoryTree>, Unavailable> {
    static CACHE: OnceLock<SnapshotCache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let path = dir.join(tree_file_name(site));
    let Ok(meta) = std::fs::metadata(&path).and_then(|m| {
        if m.is_file() {
            Ok(m)
        } else {
            Err(std::io::ErrorKind::NotFound.into())
        }
    }) else {
        return Err(Unavailable::Missing);
    };
    let key = (path, meta.len(), meta.modified().ok());
    if let Some(tree) = lock(cache).get(&key) {
        return Ok(tree.clone());
    }
    let tree = taxonomy_tree::snapshot::read_site(site, dir)
        .map(Arc::new)
        .map_err(|e| Unavailable::Broken(broken_tree_message(&key.0, &e.to_string())))?;
    lock(cache).insert(key, tree.clone());
    Ok(tree)
}

/// What is wrong with the tree file at `path` (`error`: why it is not a snapshot) and what to
/// do: a saved getCategoryTree response (eBay's shape, with `rootCategoryNode`) is named as
/// such, with the command that turns it into a tree file.
fn broken_tree_message(path: &Path, error: &str) -> String {
    let is_response = std::fs::read(path)
        .ok()
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .is_some_and(|v| v.get("rootCategoryNode").is_some());
    if is_response {
        format!(
            "{}: a getCategoryTree response, not a tree in the snapshot format the fake serves \
             (`snapshot import --dir DIR RESPONSE.json` turns a saved response into one)",
            path.display()
        )
    } else {
        format!("{error} (fix the file or remove it; `snapshot verify --dir` checks a directory)")
    }
}

/// Checks a trees directory before the fake serves it: every `EBAY_*.json` in it must be named
/// after a marketplace of the table and hold a valid tree of that marketplace. The error names
/// the directory or the file, and what to do.
pub(crate) fn check_trees_dir(dir: &Path) -> std::io::Result<()> {
    let invalid = |message: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, message);
    let entries = std::fs::read_dir(dir).map_err(|e| {
        invalid(format!(
            "trees directory {}: {e} (give a directory of EBAY_*.json trees in the snapshot format)",
            dir.display()
        ))
    })?;
    for entry in entries {
        let path = entry?.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(id) = name
            .strip_suffix(".json")
            .filter(|stem| stem.starts_with("EBAY_") && !stem.contains('.'))
        else {
            continue;
        };
        let Some(site) = Marketplace::from_marketplace_id(id) else {
            let known: Vec<&str> = Marketplace::ALL
                .iter()
                .map(|m| m.marketplace_id())
                .collect();
            return Err(invalid(format!(
                "{}: {id} is not a marketplace the fake knows; name the file after one of {}",
                path.display(),
                known.join(", ")
            )));
        };
        if let Err(Unavailable::Broken(e)) = snapshot(dir, site) {
            return Err(invalid(e));
        }
    }
    Ok(())
}

impl TaxonomyState {
    pub(crate) fn new(
        snapshots_dir: PathBuf,
        defaults_dir: Option<PathBuf>,
        delay: Option<(Duration, Duration)>,
        routes: TreeRoutes,
    ) -> Self {
        Self {
            snapshots_dir,
            defaults_dir,
            delay: Mutex::new(delay),
            routes: Mutex::new(routes),
            expired: Mutex::new(HashMap::new()),
            default_expired: Mutex::new(HashMap::new()),
            sites: Mutex::new(HashMap::new()),
            item_aspects: Mutex::new(HashMap::new()),
        }
    }

    /// Reads the expired-category `files`, each checked against the tree served for its
    /// marketplace, then `explicit` over them. The fake's own defaults are read without a
    /// check (its tests check them against the default trees, and they are served only with
    /// those). The error names the file and what is wrong.
    pub(crate) fn load_expired(
        &self,
        files: &[PathBuf],
        explicit: &[(Marketplace, Vec<(u32, u32)>)],
    ) -> std::io::Result<()> {
        let invalid = |e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e);
        let defaults = default_expired_files();
        let mut expired = HashMap::new();
        let mut default_expired = HashMap::new();
        for path in files {
            if defaults.contains(path) {
                let (site, mappings) = read_expired_unchecked(path).map_err(invalid)?;
                default_expired.insert(site, mappings);
            } else {
                let (site, mappings) =
                    read_expired_file(path, |site| self.tree(site)).map_err(invalid)?;
                expired.insert(site, mappings);
            }
        }
        for (site, mappings) in explicit {
            expired.insert(*site, mappings.clone());
        }
        *lock(&self.expired) = expired;
        *lock(&self.default_expired) = default_expired;
        Ok(())
    }

    /// The expired categories served for `site`: the ones given, else the default set while
    /// the site's tree is the default one.
    fn expired_of(&self, site: Marketplace) -> Vec<(u32, u32)> {
        if let Some(given) = lock(&self.expired).get(&site) {
            return given.clone();
        }
        let replaced = lock(&self.sites).get(&site).is_some_and(|d| d.replaced);
        if replaced {
            return Vec::new();
        }
        lock(&self.default_expired)
            .get(&site)
            .cloned()
            .unwrap_or_default()
    }

    pub(crate) fn tree(&self, site: Marketplace) -> Result<Arc<CategoryTree>, Unavailable> {
        if let Some(tree) = lock(&self.sites).get(&site).and_then(|d| d.tree.clone()) {
            return Ok(tree);
        }
        let tree = match (snapshot(&self.snapshots_dir, site), &self.defaults_dir) {
            (Err(Unavailable::Missing), Some(defaults)) => snapshot(defaults, site)?,
            (found, _) => found?,
        };
        lock(&self.sites).entry(site).or_default().tree = Some(tree.clone());
        Ok(tree)
    }

    /// The id of the tree the fake holds for `site` (its default tree, or the other
    /// language's, e.g. 210 for EBAY_CA in French): a tree set by a test, a tree file, or
    /// a body set alone (taken as the default tree).
    fn held_tree_id(&self, site: Marketplace) -> Result<u32, Unavailable> {
        let raw_only = lock(&self.sites)
            .get(&site)
            .is_some_and(|d| d.tree.is_none() && d.raw.is_some());
        match self.tree(site) {
            Ok(tree) => Ok(tree.meta.tree_id),
            Err(Unavailable::Missing) if raw_only => Ok(site.tree_id()),
            Err(e) => Err(e),
        }
    }

    pub(crate) fn set_tree(&self, site: Marketplace, tree: CategoryTree) {
        let mut sites = lock(&self.sites);
        let data = sites.entry(site).or_default();
        data.tree = Some(Arc::new(tree));
        data.body = None;
        data.raw = None;
        data.aspects_file = None;
        data.replaced = true;
    }

    pub(crate) fn set_tree_body(&self, site: Marketplace, body: Vec<u8>) {
        let mut sites = lock(&self.sites);
        let data = sites.entry(site).or_default();
        data.raw = Some(Arc::new(body));
        data.replaced = true;
    }

    pub(crate) fn reset(&self, site: Marketplace) {
        lock(&self.sites).remove(&site);
    }

    pub(crate) fn set_delay(&self, delay: Option<(Duration, Duration)>) {
        *lock(&self.delay) = delay;
    }

    /// The tree body, plain or gzip-compressed.
    fn body(
        &self,
        site: Marketplace,
        base_url: &str,
        gzip: bool,
    ) -> Result<Arc<Vec<u8>>, Unavailable> {
        let raw = lock(&self.sites).get(&site).and_then(|d| d.raw.clone());
        if let Some(raw) = raw {
            return Ok(if gzip {
                Arc::new(gzip_bytes(&raw))
            } else {
                raw
            });
        }
        let cached = lock(&self.sites).get(&site).and_then(|d| d.body.clone());
        let (plain, gz) = match cached {
            Some(b) => b,
            None => {
                let tree = self.tree(site)?;
                let plain = taxonomy_tree::encode::encode_response(&tree, base_url);
                let gz = gzip_bytes(&plain);
                let b = (Arc::new(plain), Arc::new(gz));
                let mut sites = lock(&self.sites);
                let data = sites.entry(site).or_default();
                // Keep it only if the tree was not replaced meanwhile.
                if data.tree.as_ref().is_some_and(|t| Arc::ptr_eq(t, &tree)) {
                    data.body = Some(b.clone());
                }
                b
            }
        };
        Ok(if gzip { gz } else { plain })
    }
}

impl TaxonomyState {
    /// The fetchItemAspects file of `site`: every leaf with [`aspects_of`], gzipped.
    fn aspects_file(&self, site: Marketplace) -> Result<Arc<Vec<u8>>, Unavailable> {
        if let Some(file) = lock(&self.sites)
            .get(&site)
            .and_then(|d| d.aspects_file.clone())
        {
            return Ok(file);
        }
        let tree = self.tree(site)?;
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let head = json!({
            "categoryTreeId": tree.meta.tree_id.to_string(),
            "categoryTreeVersion": tree.meta.version,
        });
        // {"categoryTreeId":…,"categoryTreeVersion":…,"categoryAspects":[…]}, written entry
        // by entry.
        let head = head.to_string();
        let mut out = head[..head.len() - 1].to_owned();
        out.push_str(",\"categoryAspects\":[");
        let _ = encoder.write_all(out.as_bytes());
        for (i, c) in tree.listable().filter(|c| c.leaf).enumerate() {
            let entry = json!({
                "category": {"categoryId": c.id.to_string(), "categoryName": c.name},
                "aspects": aspects_of(c.id)["aspects"],
            });
            if i > 0 {
                let _ = encoder.write_all(b",");
            }
            let _ = encoder.write_all(entry.to_string().as_bytes());
        }
        let _ = encoder.write_all(b"]}");
        let file = Arc::new(encoder.finish().unwrap_or_default());
        let mut sites = lock(&self.sites);
        let data = sites.entry(site).or_default();
        if data.tree.as_ref().is_some_and(|t| Arc::ptr_eq(t, &tree)) {
            data.aspects_file = Some(file.clone());
        }
        Ok(file)
    }
}

fn gzip_bytes(bytes: &[u8]) -> Vec<u8> {
    crate::http::gzip(bytes)
}

impl FakeMarketplace {
    /// Serves `tree` as the category tree of `site` (replacing the snapshot, and any body set
    /// with [`set_tree_body`](Self::set_tree_body)); suggestions, subtrees, aspects and the
    /// default tree id follow it. The fake's default expired categories of `site` (made for
    /// the default tree) are no longer served; expired categories given in the configuration
    /// or with [`set_expired_categories`](Self::set_expired_categories) still are.
    pub fn set_tree(&self, site: Marketplace, tree: CategoryTree) {
        self.state().taxonomy.set_tree(site, tree);
    }

    /// Serves `body` as is for the full tree of `site` (for example JSON that is not a valid
    /// tree). The other endpoints keep using the tree.
    pub fn set_tree_body(&self, site: Marketplace, body: impl Into<Vec<u8>>) {
        self.state().taxonomy.set_tree_body(site, body.into());
    }

    /// Goes back to the committed snapshot of `site`.
    pub fn reset_tree(&self, site: Marketplace) {
        self.state().taxonomy.reset(site);
    }

    /// The tree served for `site`.
    ///
    /// # Panics
    ///
    /// When the snapshot of `site` cannot be read.
    pub fn tree(&self, site: Marketplace) -> CategoryTree {
        match self.state().taxonomy.tree(site) {
            Ok(tree) => (*tree).clone(),
            Err(e) => panic!("the fake has no tree for {site}: {e}"),
        }
    }

    /// Delays every full-tree answer by a random time in `[min, max]` (`None`: no delay).
    pub fn set_tree_delay(&self, delay: Option<(Duration, Duration)>) {
        self.state().taxonomy.set_delay(delay);
    }

    /// Sets the expired categories of `site` (getExpiredCategories): `(from, to)` pairs, an
    /// expired leaf and the active leaf that replaced it; empty: none (`204 No Content`).
    pub fn set_expired_categories(&self, site: Marketplace, mappings: Vec<(u32, u32)>) {
        lock(&self.state().taxonomy.expired).insert(site, mappings);
    }

    /// Answers `answer` (a getItemAspectsForCategory body, `{"aspects": […]}`) for
    /// `category_id` from now on, instead of [`aspects_of`] (the fetchItemAspects file is
    /// unchanged). An empty list of aspects is answered `204 No Content`, as eBay answers a
    /// leaf without aspects.
    pub fn set_item_aspects(&self, category_id: u32, answer: Value) {
        lock(&self.state().taxonomy.item_aspects).insert(category_id, answer);
    }

    /// The fetchItemAspects file the fake serves for `site` (gzipped JSON; made from the
    /// site's leaves and [`aspects_of`]).
    ///
    /// # Panics
    ///
    /// When the snapshot of `site` cannot be read.
    pub fn item_aspects_file(&self, site: Marketplace) -> Vec<u8> {
        match self.state().taxonomy.aspects_file(site) {
            Ok(file) => file.to_vec(),
            Err(e) => panic!("the fake has no tree for {site}: {e}"),
        }
    }

    /// Changes the getCategoryTree path forms answered (see [`TreeRoutes`]).
    pub fn set_tree_routes(&self, routes: TreeRoutes) {
        *lock(&self.state().taxonomy.routes) = routes;
    }
}

pub(crate) fn routes() -> Vec<Route> {
    vec![
        Route::new("GET", "/commerce/taxonomy/v1/category_tree/{id}", tree),
        Route::new(
            "GET",
            "/commerce/taxonomy/v1/category_tree/{id}/get_category_suggestions",
            suggestions,
        ),
        Route::new(
            "GET",
            "/commerce/taxonomy/v1/category_tree/{id}/get_category_subtree",
            subtree,
        ),
        Route::new(
            "GET",
            "/commerce/taxonomy/v1/category_tree/{id}/get_item_aspects_for_category",
            aspects,
        ),
        Route::new("GET", DEFAULT_TREE_ID_PATH, default_tree_id),
        Route::new(
            "GET",
            "/commerce/taxonomy/v1/category_tree/{id}/get_expired_categories",
            expired_categories,
        ),
        Route::new(
            "GET",
            "/commerce/taxonomy/v1/category_tree/{id}/fetch_item_aspects",
            fetch_item_aspects,
        ),
        Route::new(
            "GET",
            "/commerce/taxonomy/v1/category_tree/{id}/get_compatibility_properties",
            compatibility_properties,
        ),
        Route::new(
            "GET",
            "/commerce/taxonomy/v1/category_tree/{id}/get_compatibility_property_values",
            compatibility_property_values,
        ),
    ]
}

/// The service's error body with one error.
pub fn error_response(
    status: u16,
    error_id: u32,
    message: &str,
    parameters: &[(&str, &str)],
) -> Response {
    let parameters: Vec<Value> = parameters
        .iter()
        .map(|(n, v)| json!({"name": n, "value": v}))
        .collect();
    let mut error = json!({
        "errorId": error_id,
        "domain": "API_TAXONOMY",
        "category": "REQUEST",
        "message": message,
        "longMessage": message,
    });
    if !parameters.is_empty() {
        error["parameters"] = Value::Array(parameters);
    }
    Response::json(status, &json!({"errors": [error]}))
}

/// Bearer and tree id; the site on success. The service documents no error for the
/// marketplace or language headers (a client's headers are checked by the contract test).
fn guard(
    request: &Request,
    state: &FakeState,
    tree_id: Option<&str>,
) -> Result<Marketplace, Response> {
    state.check_bearer(request)?;
    let tree_id = tree_id.unwrap_or_default();
    let asked = tree_id.parse::<u32>().ok();
    let site = asked
        .and_then(Marketplace::from_tree_id)
        .ok_or_else(|| tree_not_found(tree_id))?;
    // One tree per marketplace: the one held is answered under its own id; the marketplace's
    // other tree (210 when 2 is held) is a tree the fake does not hold, as eBay answers it.
    match state.taxonomy.held_tree_id(site) {
        Ok(held) if Some(held) == asked => Ok(site),
        Ok(_) | Err(Unavailable::Missing) => Err(tree_not_found(tree_id)),
        Err(e) => Err(unavailable(site, &e)),
    }
}

fn tree_not_found(tree_id: &str) -> Response {
    error_response(
        400,
        ERROR_TREE_NOT_FOUND,
        "The specified category tree ID was not found.",
        &[("categoryTreeId", tree_id)],
    )
}

/// eBay's answer when a site has no tree: the tree id is not found (a marketplace of the table
/// the fake was given no tree for), or an internal error naming the broken file.
fn unavailable(site: Marketplace, e: &Unavailable) -> Response {
    match e {
        Unavailable::Missing => tree_not_found(&site.tree_id().to_string()),
        Unavailable::Broken(e) => internal(e),
    }
}

fn internal(e: &str) -> Response {
    Response::json(
        500,
        &json!({"errors": [{"errorId": ERROR_INTERNAL, "domain": "API_TAXONOMY", "category": "APPLICATION",
            "message": "There was a problem with an eBay internal system or process. Contact eBay developer support for assistance.",
            "longMessage": e}]}),
    )
}

fn pseudo_random(min: Duration, max: Duration) -> Duration {
    let span = max.saturating_sub(min).as_millis() as u64;
    if span == 0 {
        return min;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos() as u64);
    min + Duration::from_millis(nanos.wrapping_mul(0x9E37_79B9_7F4A_7C15) % (span + 1))
}

fn tree(request: &Request, state: &FakeState) -> Response {
    let param = request.param("id").unwrap_or_default();
    let routes = *lock(&state.taxonomy.routes);
    let tree_id = if param == "get" && routes.query() {
        request.query_param("category_tree_id")
    } else if routes.path() {
        // eBay reads `get` of the query form as a tree id, and does not find it.
        Some(param.to_owned())
    } else {
        // A server that does not know the documented form: the documented 404, no body.
        return Response::new(404, Vec::new());
    };
    let site = match guard(request, state, tree_id.as_deref()) {
        Ok(site) => site,
        Err(denied) => return denied,
    };
    // Copy the setting out first: the guard must not be held while sleeping, or concurrent
    // tree requests would queue behind each other.
    let delay = *lock(&state.taxonomy.delay);
    if let Some((min, max)) = delay {
        std::thread::sleep(pseudo_random(min, max));
    }
    let gzip = request.accepts_gzip();
    let language = state.taxonomy.tree(site).map_or_else(
        |_| site.default_language().to_owned(),
        |t| t.meta.language.clone(),
    );
    match state.taxonomy.body(site, state.base_url(), gzip) {
        Ok(body) => {
            let mut r = Response::new(200, body.to_vec())
                .with_header("Content-Type", "application/json")
                .with_header("Content-Language", language);
            if gzip {
                r = r.with_header("Content-Encoding", "gzip");
            }
            r
        }
        Err(e) => unavailable(site, &e),
    }
}

fn site_tree(state: &FakeState, site: Marketplace) -> Result<Arc<CategoryTree>, Response> {
    state.taxonomy.tree(site).map_err(|e| unavailable(site, &e))
}

/// An ancestor's link: its getCategorySubtree URL, or for the root, which getCategorySubtree
/// refuses (62008, "Please use {categoryTreeHref} to retrieve the entire tree"), the tree's
/// getCategoryTree URL in a form the fake answers, so that every ancestor link answers.
fn subtree_href(state: &FakeState, tree_id: u32, category_id: u32) -> String {
    if category_id == ROOT_ID {
        return if lock(&state.taxonomy.routes).path() {
            format!("{}{}", state.base_url(), tree_path(tree_id))
        } else {
            format!(
                "{}/commerce/taxonomy/v1/category_tree/get?category_tree_id={tree_id}",
                state.base_url()
            )
        };
    }
    format!(
        "{}{}?category_id={category_id}",
        state.base_url(),
        subtree_path(tree_id)
    )
}

/// The ancestors of `id`, from its parent up to the root, each with its level.
fn ancestors(tree: &CategoryTree, id: u32) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut at = tree.get(id).and_then(|c| c.parent);
    while let Some(p) = at {
        let Some(c) = tree.get(p) else { break };
        out.push((c.id, c.name.clone()));
        at = c.parent;
        if out.len() > 64 {
            break;
        }
    }
    out
}

/// Product names the fake knows, with the words of the categories they belong in (eBay's
/// matcher knows products; the fake knows these few, so that a query such as "iphone 15"
/// finds phones).
const PRODUCT_WORDS: &[(&str, &[&str])] = &[
    ("iphone", &["smartphone", "cell phone", "phone"]),
    ("galaxy", &["smartphone", "cell phone", "phone"]),
    ("pixel", &["smartphone", "cell phone", "phone"]),
    ("ipad", &["tablet"]),
    ("macbook", &["apple laptop", "laptop"]),
    ("airpods", &["headphone", "earbud"]),
];

/// Words that say nothing about a category.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "for", "in", "of", "on", "or", "the", "to", "with",
];

/// A name's words: lowercase, split at every character that is not a letter or a digit, a
/// plural `s` removed (`Phones` and `phone` match).
fn name_tokens(name: &str) -> Vec<String> {
    name.to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(|t| match t.strip_suffix('s') {
            Some(stem) if stem.chars().count() >= 3 && !stem.ends_with('s') => stem.to_owned(),
            _ => t.to_owned(),
        })
        .collect()
}

/// One word of a query (split at white space; `t-shirt` is one word, matched as consecutive
/// words of a name), with the category words it stands for.
struct QueryWord {
    /// The word's own tokens first, then those of each category word it stands for.
    forms: Vec<Vec<String>>,
    /// A number (a model number, a size): it ranks, but suggests nothing alone.
    numeric: bool,
}

fn query_words(query: &str) -> Vec<QueryWord> {
    let mut words: Vec<QueryWord> = Vec::new();
    for word in query.split_whitespace() {
        let tokens = name_tokens(word);
        if tokens.is_empty() || (tokens.len() == 1 && STOP_WORDS.contains(&tokens[0].as_str())) {
            continue;
        }
        if words.iter().any(|w| w.forms[0] == tokens) {
            continue;
        }
        let mut forms = vec![tokens.clone()];
        if let [single] = tokens.as_slice()
            && let Some((_, category_words)) = PRODUCT_WORDS.iter().find(|(p, _)| p == single)
        {
            forms.extend(category_words.iter().map(|w| name_tokens(w)));
        }
        let numeric = tokens.iter().all(|t| t.chars().all(|c| c.is_ascii_digit()));
        words.push(QueryWord { forms, numeric });
    }
    words
}

fn contains_run(haystack: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && haystack.windows(needle.len()).any(|w| w == needle)
}

/// How well a leaf matches a query; greater is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Rank {
    /// The query is the leaf's name.
    exact: bool,
    /// The query's words found in the leaf's name or an ancestor's.
    words: usize,
    /// The query's words found in the leaf's own name.
    in_name: usize,
    /// The forms (a word, the category words it stands for) found in the leaf's name.
    forms_in_name: usize,
    /// The query is a part of the leaf's name.
    substring: bool,
    /// Fewer words in the name: a closer match.
    shorter: std::cmp::Reverse<usize>,
    /// Every word of the query is in the leaf's name.
    all_in_name: bool,
}

/// The rank of a leaf named `name` below `ancestors` (their words, root excluded) for `query`
/// (lowercase) and its `words`; `None` when no word that is not a number matches.
fn rank(query: &str, words: &[QueryWord], leaf: &LeafWords) -> Option<Rank> {
    let (lower, tokens, ancestors) = (&leaf.lower, &leaf.tokens, &leaf.ancestors);
    let (mut matched, mut in_name, mut forms_in_name, mut text) = (0, 0, 0, false);
    for word in words {
        let here = word
            .forms
            .iter()
            .filter(|f| contains_run(tokens, f))
            .count();
        let above = word
            .forms
            .iter()
            .any(|f| ancestors.iter().any(|a| contains_run(a, f)));
        if here > 0 || above {
            matched += 1;
            text |= !word.numeric;
        }
        if here > 0 {
            in_name += 1;
        }
        forms_in_name += here;
    }
    let substring = lower.contains(query);
    if !(text || substring) {
        return None;
    }
    Some(Rank {
        exact: lower == query,
        words: matched,
        in_name,
        forms_in_name,
        substring,
        shorter: std::cmp::Reverse(tokens.len()),
        all_in_name: !words.is_empty() && in_name == words.len(),
    })
}

/// A leaf's words, as getCategorySuggestions compares them with a query.
struct LeafWords {
    id: u32,
    /// The name, lower-case.
    lower: String,
    /// The name's words ([`name_tokens`]).
    tokens: Vec<String>,
    /// The words of each ancestor's name, the root excluded.
    ancestors: Vec<Vec<String>>,
}

/// The words of every leaf of `tree`, made once per tree (a process's fakes share the
/// snapshots' trees): a query then costs a comparison per leaf, not a walk to the root.
fn leaf_words(tree: &Arc<CategoryTree>) -> Arc<Vec<LeafWords>> {
    type Cache = Mutex<Vec<(std::sync::Weak<CategoryTree>, Arc<Vec<LeafWords>>)>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let mut cache = lock(CACHE.get_or_init(Default::default));
    cache.retain(|(tree, _)| tree.strong_count() > 0);
    if let Some((_, words)) = cache
        .iter()
        .find(|(cached, _)| std::ptr::eq(cached.as_ptr(), Arc::as_ptr(tree)))
    {
        return words.clone();
    }
    let words: Arc<Vec<LeafWords>> = Arc::new(
        tree.listable()
            .filter(|c| c.leaf)
            .map(|c| LeafWords {
                id: c.id,
                lower: c.name.to_lowercase(),
                tokens: name_tokens(&c.name),
                ancestors: ancestors(tree, c.id)
                    .iter()
                    .filter(|(id, _)| *id != ROOT_ID)
                    .map(|(_, n)| name_tokens(n))
                    .collect(),
            })
            .collect(),
    );
    cache.push((Arc::downgrade(tree), words.clone()));
    words
}

fn suggestions(request: &Request, state: &FakeState) -> Response {
    let site = match guard(request, state, request.param("id")) {
        Ok(site) => site,
        Err(denied) => return denied,
    };
    let q = request.query_param("q").unwrap_or_default();
    let needle = q.trim().to_lowercase();
    if needle.is_empty() {
        return error_response(
            400,
            ERROR_MISSING_KEYWORD,
            "Missing keyword 'q'. Please specify a valid set of keywords that best describes your item.",
            &[],
        );
    }
    let tree = match site_tree(state, site) {
        Ok(t) => t,
        Err(r) => return r,
    };
    let words = query_words(&needle);
    let mut hits: Vec<(Rank, u32)> = leaf_words(&tree)
        .iter()
        .filter_map(|leaf| rank(&needle, &words, leaf).map(|r| (r, leaf.id)))
        .collect();
    hits.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    hits.truncate(10);
    let tree_id = tree.meta.tree_id;
    let list: Vec<Value> = hits
        .iter()
        .filter_map(|(_, id)| {
            let id = *id;
            let c = tree.get(id)?;
            let anc = ancestors(&tree, id);
            let n = anc.len();
            let anc: Vec<Value> = anc
                .iter()
                .enumerate()
                .map(|(k, (aid, aname))| {
                    json!({
                        "categoryId": aid.to_string(),
                        "categoryName": aname,
                        "categoryTreeNodeLevel": n - 1 - k,
                        "categorySubtreeNodeHref": subtree_href(state, tree_id, *aid),
                    })
                })
                .collect();
            Some(json!({
                "category": {"categoryId": c.id.to_string(), "categoryName": c.name},
                "categoryTreeNodeAncestors": anc,
                "categoryTreeNodeLevel": n,
                // `relevancy` is reserved for future use (eBay's reference): not filled.
            }))
        })
        .collect();
    Response::json(
        200,
        &json!({
            "categorySuggestions": list,
            "categoryTreeId": tree_id.to_string(),
            "categoryTreeVersion": tree.meta.version,
        }),
    )
}

/// The category of a `category_id` query parameter: the error answers of the service.
fn category_param(request: &Request, tree: &CategoryTree) -> Result<u32, Response> {
    let raw = request.query_param("category_id").unwrap_or_default();
    let Ok(id) = raw.trim().parse::<u32>() else {
        return Err(error_response(
            400,
            ERROR_MISSING_CATEGORY_ID,
            "Missing category ID.",
            &[("category_id", &raw)],
        ));
    };
    if tree.get(id).is_none() {
        return Err(error_response(
            400,
            ERROR_CATEGORY_NOT_IN_TREE,
            "The specified category ID does not belong to the specified category tree.",
            &[("category_id", &raw)],
        ));
    }
    if id == ROOT_ID {
        return Err(error_response(
            400,
            ERROR_ROOT_CATEGORY,
            "The specified category ID is the root for the category tree. Please use the get-category-tree call to retrieve the entire tree.",
            &[("category_id", &raw)],
        ));
    }
    Ok(id)
}

/// The site, its tree and the `category_id` of a per-category call, or the service's error.
fn category_request(
    request: &Request,
    state: &FakeState,
) -> Result<(Marketplace, Arc<CategoryTree>, u32), Response> {
    let site = guard(request, state, request.param("id"))?;
    let tree = site_tree(state, site)?;
    let id = category_param(request, &tree)?;
    Ok((site, tree, id))
}

fn subtree(request: &Request, state: &FakeState) -> Response {
    let (_, tree, id) = match category_request(request, state) {
        Ok(found) => found,
        Err(r) => return r,
    };
    let level = ancestors(&tree, id).len();
    Response::json(
        200,
        &json!({
            "categorySubtreeNode": taxonomy_tree::encode::encode_node(&tree, id, level as u32, state.base_url())
                .unwrap_or(Value::Null),
            "categoryTreeId": tree.meta.tree_id.to_string(),
            "categoryTreeVersion": tree.meta.version,
        }),
    )
}

fn aspect(
    name: &str,
    data_type: &str,
    required: bool,
    mode: &str,
    cardinality: &str,
    values: &[&str],
) -> Value {
    let values: Vec<Value> = values
        .iter()
        .map(|v| json!({"localizedValue": v}))
        .collect();
    json!({
        "localizedAspectName": name,
        "aspectConstraint": {
            "aspectDataType": data_type,
            "itemToAspectCardinality": cardinality,
            "aspectMode": mode,
            "aspectRequired": required,
            "aspectUsage": if required { "RECOMMENDED" } else { "OPTIONAL" },
            "aspectEnabledForVariations": !required && mode == "SELECTION_ONLY",
            "aspectApplicableTo": ["PRODUCT"],
        },
        "aspectValues": values,
    })
}

/// Recorded answers of getItemAspectsForCategory, in the service's exact shape: category
/// 27386 (Graphics/Video Cards) as the production service answered it, category 852
/// (Fountain) from the fetchItemAspects sample of eBay's taxonomy-sdk, a made-up answer
/// for 179 (PC Desktops & All-In-Ones) that exercises every rule, and a made-up one for
/// 183454 (CCG Individual Cards), the trading card the listing builder is shown with (see
/// `tests/fixtures/aspects/PROVENANCE.md`).
fn recorded_aspects(category_id: u32) -> Option<Value> {
    static RECORDED: OnceLock<HashMap<u32, Value>> = OnceLock::new();
    let recorded = RECORDED.get_or_init(|| {
        let mut map = HashMap::new();
        let graphics: Value = serde_json::from_str(include_str!(
            "../../tests/fixtures/aspects/ebay-us-27386-graphics-cards.json"
        ))
        .unwrap_or(Value::Null);
        map.insert(27386, graphics);
        let desktops: Value = serde_json::from_str(include_str!(
            "../../tests/fixtures/aspects/ebay-us-179-desktops.json"
        ))
        .unwrap_or(Value::Null);
        map.insert(179, desktops);
        let cards: Value = serde_json::from_str(include_str!(
            "../../tests/fixtures/aspects/ebay-us-183454-ccg-cards.json"
        ))
        .unwrap_or(Value::Null);
        map.insert(183454, cards);
        let sample: Value = serde_json::from_str(include_str!(
            "../../tests/fixtures/aspects/taxonomy-sdk/fetch_item_aspects-current.json"
        ))
        .unwrap_or(Value::Null);
        for entry in sample["categoryAspects"].as_array().into_iter().flatten() {
            if let Some(id) = entry["category"]["categoryId"]
                .as_str()
                .and_then(|i| i.parse().ok())
            {
                map.insert(id, json!({ "aspects": entry["aspects"] }));
            }
        }
        map
    });
    recorded.get(&category_id).cloned()
}

/// The getItemAspectsForCategory answer the fake serves for `category_id`: a test's
/// (`set_item_aspects`), else [`aspects_of`]. The Inventory API's publishOffer checks against it.
pub(crate) fn item_aspects_of(state: &FakeState, category_id: u32) -> Value {
    let set = lock(&state.taxonomy.item_aspects)
        .get(&category_id)
        .cloned();
    set.unwrap_or_else(|| aspects_of(category_id))
}

/// The aspects of a leaf: a recorded real answer for 27386 and 852, a realistic set for Cell
/// Phones & Smartphones (9355), Brand and Condition for any other leaf.
pub fn aspects_of(category_id: u32) -> Value {
    if let Some(recorded) = recorded_aspects(category_id) {
        return recorded;
    }
    let aspects = if category_id == 9355 {
        vec![
            aspect(
                "Brand",
                "STRING",
                true,
                "SELECTION_ONLY",
                "SINGLE",
                &[
                    "Apple", "Samsung", "Google", "Motorola", "OnePlus", "Xiaomi",
                ],
            ),
            aspect(
                "Model",
                "STRING",
                true,
                "FREE_TEXT",
                "SINGLE",
                &["Apple iPhone 15", "Samsung Galaxy S24", "Google Pixel 8"],
            ),
            aspect(
                "Storage Capacity",
                "STRING",
                false,
                "SELECTION_ONLY",
                "SINGLE",
                &["64 GB", "128 GB", "256 GB", "512 GB", "1 TB"],
            ),
            aspect(
                "Colour",
                "STRING",
                false,
                "FREE_TEXT",
                "SINGLE",
                &["Black", "White", "Blue", "Green"],
            ),
            aspect(
                "Features",
                "STRING_ARRAY",
                false,
                "FREE_TEXT",
                "MULTI",
                &["5G", "Bluetooth", "Fingerprint Sensor"],
            ),
        ]
    } else {
        vec![
            aspect(
                "Brand",
                "STRING",
                true,
                "FREE_TEXT",
                "SINGLE",
                &["Unbranded"],
            ),
            aspect(
                "Condition",
                "STRING",
                false,
                "SELECTION_ONLY",
                "SINGLE",
                &["New", "Used"],
            ),
        ]
    };
    json!({ "aspects": aspects })
}

fn aspects(request: &Request, state: &FakeState) -> Response {
    let (_, tree, id) = match category_request(request, state) {
        Ok(found) => found,
        Err(r) => return r,
    };
    if !tree.get(id).is_some_and(|c| c.leaf) {
        return error_response(
            400,
            ERROR_NOT_LEAF,
            "The specified category ID must be a leaf category.",
            &[("category_id", &id.to_string())],
        );
    }
    let answer = lock(&state.taxonomy.item_aspects)
        .get(&id)
        .cloned()
        .unwrap_or_else(|| aspects_of(id));
    // A leaf without aspects: `204 No Content`, as eBay answers it.
    let response = if answer["aspects"].as_array().is_some_and(Vec::is_empty) {
        Response::new(204, Vec::new())
    } else {
        Response::json(200, &answer)
    };
    // The same (English) rules for every marketplace, some made up: marked, so that a pinned
    // file taken from the fake says so (`snapshot aspects pin`) and is never taken for eBay's.
    response.with_header(MADE_UP_HEADER, "made-up")
}

/// The header the fake marks its getItemAspectsForCategory answers with (`made-up`): what a
/// client pinning rules reads to tell the fake's answers from eBay's.
pub const MADE_UP_HEADER: &str = "X-Fake-Marketplace";

fn default_tree_id(request: &Request, state: &FakeState) -> Response {
    if let Err(denied) = state.check_bearer(request) {
        return denied;
    }
    let marketplace = request.query_param("marketplace_id").unwrap_or_default();
    if marketplace.trim().is_empty() {
        return error_response(
            400,
            ERROR_MISSING_MARKETPLACE,
            "Missing marketplace ID.",
            &[("marketplace_id", &marketplace)],
        );
    }
    let Some(site) = Marketplace::from_marketplace_id(&marketplace) else {
        return error_response(
            400,
            ERROR_UNKNOWN_MARKETPLACE,
            "The specified marketplace ID was not found.",
            &[("marketplace_id", &marketplace)],
        );
    };
    // The tree of the language asked for (`Accept-Language: fr-CA` on EBAY_CA: 210), else
    // the marketplace's default tree.
    let language = request
        .header("Accept-Language")
        .and_then(|v| v.split(',').next())
        .and_then(|v| v.split(';').next())
        .unwrap_or_default()
        .trim();
    let wanted = site.tree_for_language(language);
    // A tree the fake does not hold (no file, or the marketplace's other tree): no default
    // tree (documented 204).
    let tree = match state.taxonomy.tree(site) {
        Ok(t) if t.meta.tree_id == wanted => t,
        Ok(_) | Err(Unavailable::Missing) => return Response::new(204, Vec::new()),
        Err(e) => return unavailable(site, &e),
    };
    Response::json(
        200,
        &json!({
            "categoryTreeId": tree.meta.tree_id.to_string(),
            "categoryTreeVersion": tree.meta.version,
        }),
    )
}

/// Reads an expired-category file and checks it against the tree `tree_of` gives for the
/// marketplace it names: `(site, [(from, to)])`, or what is wrong, naming the file.
fn read_expired_file(
    path: &Path,
    tree_of: impl Fn(Marketplace) -> Result<Arc<CategoryTree>, Unavailable>,
) -> Result<(Marketplace, Vec<(u32, u32)>), String> {
    let (site, file) = read_expired_unchecked_file(path)?;
    let tree = tree_of(site).map_err(|e| {
        format!(
            "{}: expired categories of {site}, which the fake serves no tree of ({e})",
            path.display()
        )
    })?;
    if tree.meta.tree_id != file.tree_id {
        return Err(format!(
            "{}: expired categories of tree {}, but the fake serves tree {} for {site}",
            path.display(),
            file.tree_id,
            tree.meta.tree_id
        ));
    }
    if let Err((i, rule)) = taxonomy_tree::expired::check(&file.mappings, &tree) {
        let m = file.mappings[i];
        return Err(format!(
            "{}: mapping {} → {}: {rule} (against the {site} tree the fake serves)",
            path.display(),
            m.from,
            m.to
        ));
    }
    Ok((site, file.mappings.iter().map(|m| (m.from, m.to)).collect()))
}

/// An expired-category file read without a tree to check it against.
fn read_expired_unchecked(path: &Path) -> Result<(Marketplace, Vec<(u32, u32)>), String> {
    let (site, file) = read_expired_unchecked_file(path)?;
    Ok((site, file.mappings.iter().map(|m| (m.from, m.to)).collect()))
}

fn read_expired_unchecked_file(
    path: &Path,
) -> Result<(Marketplace, taxonomy_tree::expired::ExpiredFile), String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("expired categories {}: {e}", path.display()))?;
    let file = taxonomy_tree::expired::parse_unchecked(&text, path).map_err(|e| e.to_string())?;
    let site = Marketplace::from_marketplace_id(&file.marketplace_id).ok_or_else(|| {
        format!(
            "{}: marketplaceId {:?} is not a marketplace the fake knows",
            path.display(),
            file.marketplace_id
        )
    })?;
    Ok((site, file))
}

fn expired_categories(request: &Request, state: &FakeState) -> Response {
    let site = match guard(request, state, request.param("id")) {
        Ok(site) => site,
        Err(denied) => return denied,
    };
    let mappings = state.taxonomy.expired_of(site);
    if mappings.is_empty() {
        return Response::new(204, Vec::new());
    }
    let list: Vec<Value> = mappings
        .iter()
        .map(|(from, to)| json!({"fromCategoryId": from.to_string(), "toCategoryId": to.to_string()}))
        .collect();
    Response::json(200, &json!({ "expiredCategories": list }))
}

fn fetch_item_aspects(request: &Request, state: &FakeState) -> Response {
    let site = match guard(request, state, request.param("id")) {
        Ok(site) => site,
        Err(denied) => return denied,
    };
    match state.taxonomy.aspects_file(site) {
        // eBay sends the gzip file itself, as application/octet-stream (no Content-Encoding).
        Ok(file) => Response::new(200, file.to_vec())
            .with_header("Content-Type", "application/octet-stream"),
        Err(e) => unavailable(site, &e),
    }
}

/// eBay Motors' Car & Truck Parts & Accessories: parts compatibility is enabled for it and
/// every category below it (eBay's own getCompatibilityProperties sample asks 33559, Brakes &
/// Brake Parts, below it on tree 100).
pub const MOTORS_CAR_TRUCK_PARTS: u32 = 6030;

/// Whether eBay enables parts compatibility for `id`: vehicle parts, which among the trees
/// the fake serves by default are eBay Motors' Car & Truck Parts & Accessories (tree 100) and
/// the categories below it. Vehicles, tools and every category of the other trees are not.
fn compatibility_enabled(tree: &CategoryTree, id: u32) -> bool {
    tree.meta.tree_id == Marketplace::MotorsUs.tree_id()
        && (id == MOTORS_CAR_TRUCK_PARTS
            || ancestors(tree, id)
                .iter()
                .any(|(a, _)| *a == MOTORS_CAR_TRUCK_PARTS))
}

/// The properties, then the vehicles the values come from.
const PROPERTIES: [(&str, &str); 5] = [
    ("Make", "Make"),
    ("Model", "Model"),
    ("Year", "Year"),
    ("Trim", "Trim"),
    ("Engine", "Engine"),
];
const VEHICLES: [[&str; 5]; 8] = [
    [
        "Toyota",
        "Camry",
        "2018",
        "LE Sedan 4-Door",
        "2.5L 2487CC l4 GAS DOHC Naturally Aspirated",
    ],
    [
        "Toyota",
        "Camry",
        "2018",
        "XSE Sedan 4-Door",
        "3.5L 3456CC V6 GAS DOHC Naturally Aspirated",
    ],
    [
        "Toyota",
        "Camry",
        "2019",
        "LE Sedan 4-Door",
        "2.5L 2487CC l4 GAS DOHC Naturally Aspirated",
    ],
    [
        "Toyota",
        "Corolla",
        "2018",
        "LE Sedan 4-Door",
        "1.8L 1798CC l4 GAS DOHC Naturally Aspirated",
    ],
    [
        "Honda",
        "Civic",
        "2018",
        "EX Sedan 4-Door",
        "2.0L 1996CC l4 GAS DOHC Naturally Aspirated",
    ],
    [
        "Honda",
        "Accord",
        "2019",
        "Sport Sedan 4-Door",
        "1.5L 1498CC l4 GAS DOHC Turbocharged",
    ],
    [
        "Ford",
        "F-150",
        "2018",
        "XLT Crew Cab Pickup 4-Door",
        "5.0L 4951CC V8 GAS DOHC Naturally Aspirated",
    ],
    [
        "Audi",
        "A4",
        "2018",
        "AWD B9 8W5,8WD",
        "2.0L 1984CC l4 GAS DOHC Turbocharged",
    ],
];

/// The site, tree and category of a compatibility call, or the service's error.
fn compatibility_request(request: &Request, state: &FakeState) -> Result<u32, Response> {
    let (_, tree, id) = category_request(request, state)?;
    if !compatibility_enabled(&tree, id) {
        return Err(error_response(
            400,
            ERROR_NOT_COMPATIBILITY_ENABLED,
            "This category ID is disabled for parts compatibility.",
            &[("category_id", &id.to_string())],
        ));
    }
    Ok(id)
}

fn compatibility_properties(request: &Request, state: &FakeState) -> Response {
    if let Err(r) = compatibility_request(request, state) {
        return r;
    }
    let list: Vec<Value> = PROPERTIES
        .iter()
        .map(|(name, localized)| json!({"name": name, "localizedName": localized}))
        .collect();
    Response::json(200, &json!({ "compatibilityProperties": list }))
}

/// `Year:2018,Make:Toyota`, a comma inside a value escaped as `\,`.
fn parse_filter(filter: &str) -> Option<Vec<(String, String)>> {
    let mut pairs = Vec::new();
    let mut current = String::new();
    let mut chars = filter.chars();
    let mut parts = Vec::new();
    while let Some(c) = chars.next() {
        match c {
            '\\' => current.push(chars.next()?),
            ',' => parts.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    parts.push(current);
    for part in parts {
        let (name, value) = part.split_once(':')?;
        if name.trim().is_empty() {
            return None;
        }
        pairs.push((name.trim().to_owned(), value.to_owned()));
    }
    Some(pairs)
}

fn compatibility_property_values(request: &Request, state: &FakeState) -> Response {
    if let Err(r) = compatibility_request(request, state) {
        return r;
    }
    let property = request
        .query_param("compatibility_property")
        .unwrap_or_default();
    if property.trim().is_empty() {
        return error_response(
            400,
            ERROR_MISSING_PROPERTY,
            "Missing compatibility property.",
            &[],
        );
    }
    let column = |name: &str| PROPERTIES.iter().position(|(n, _)| *n == name);
    let Some(wanted) = column(&property) else {
        return error_response(
            400,
            ERROR_BAD_PROPERTY,
            "The compatibility property is invalid.",
            &[("compatibility_property", &property)],
        );
    };
    let filter = match request.query_param("filter") {
        None => Vec::new(),
        Some(f) => match parse_filter(&f) {
            Some(pairs) => pairs,
            None => {
                return error_response(
                    400,
                    ERROR_BAD_FILTER,
                    "The filter format is invalid. For more information, see the API call reference documentation.",
                    &[("filter", &f)],
                );
            }
        },
    };
    let mut conditions = Vec::new();
    for (name, value) in &filter {
        let Some(k) = column(name) else {
            return error_response(
                400,
                ERROR_BAD_PROPERTY,
                "The compatibility property is invalid.",
                &[("filter", name)],
            );
        };
        conditions.push((k, value.as_str()));
    }
    let mut values: Vec<&str> = VEHICLES
        .iter()
        .filter(|v| conditions.iter().all(|(k, value)| v[*k] == *value))
        .map(|v| v[wanted])
        .collect();
    values.sort_unstable();
    values.dedup();
    if values.is_empty() {
        return Response::new(204, Vec::new());
    }
    let list: Vec<Value> = values.iter().map(|v| json!({ "value": v })).collect();
    Response::json(200, &json!({ "compatibilityPropertyValues": list }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The default fake's expired categories follow the rules against the trees it serves
    /// by default (no fallback: `load_expired` would serve them unchecked).
    #[test]
    fn the_default_expired_categories_follow_the_rules_against_their_trees() {
        let state = TaxonomyState::new(
            default_snapshots_dir(),
            Some(defaults_dir()),
            None,
            TreeRoutes::Path,
        );
        let files = default_expired_files();
        assert_eq!(files.len(), 2);
        for path in files {
            let (site, mappings) =
                read_expired_file(&path, |site| state.tree(site)).unwrap_or_else(|e| panic!("{e}"));
            assert!(!mappings.is_empty(), "{site}");
        }
    }

    /// A file that breaks a rule, names another tree or a marketplace without a tree stops
    /// the fake, naming the file and the rule.
    #[test]
    fn an_expired_file_that_breaks_a_rule_stops_the_fake_naming_it() {
        let dir = std::env::temp_dir().join(format!("fake-expired-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases = [
            ("live.json", 0, "EBAY_US", 9355, 852, "still a category"),
            ("branch.json", 0, "EBAY_US", 858, 15032, "15032"),
            ("tree.json", 3, "EBAY_US", 858, 852, "tree 3"),
            ("none.json", 101, "EBAY_IT", 1, 2, "no tree"),
        ];
        for (name, tree, site, from, to, says) in cases {
            let path = dir.join(name);
            std::fs::write(
                &path,
                format!(
                    r#"{{"format": 1, "categoryTreeId": {tree}, "marketplaceId": "{site}", "categoryTreeVersion": "1", "source": "test", "mappingCount": 1, "expired": [{{"from": {from}, "to": {to}}}]}}"#
                ),
            )
            .unwrap();
            let err = crate::FakeMarketplace::start(crate::FakeConfig {
                expired_files: vec![path.clone()],
                ..crate::FakeConfig::default()
            })
            .unwrap_err()
            .to_string();
            assert!(err.contains(name) && err.contains(says), "{name}: {err}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
