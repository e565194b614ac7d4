//! `snapshot aspects pin` and `snapshot aspects refresh --pinned`: categories' aspect rules
//! (getItemAspectsForCategory answers) kept in the snapshots directory's `pinned/`, one file a
//! category (`taxonomy_codegen::pinned`), which taxonomy-data's build compiles in and
//! `taxonomy_macros::aspects!` checks listings against.

use std::path::Path;
use std::process::ExitCode;

use marketplace_client::model::aspects::AspectsDiff;
use marketplace_client::model::{CategoryAspects, CategoryRef, ItemAspects, decode};
use marketplace_client::trees::item_aspects_answer;
use marketplaces::Marketplace;
use taxonomy_codegen::pinned::{self, PinnedAspects};
use taxonomy_data::Site;

/// The tree id and version the service has now for `site` (getDefaultCategoryTreeId).
fn current_tree(base_url: Option<&str>, site: Marketplace) -> Result<(u32, String), String> {
    let client = super::live::client(base_url, None)?;
    let current = client
        .default_tree_id(site.marketplace_id())
        .map_err(|e| format!("{site}: {e}"))?;
    Ok((current.tree_id, current.tree_version))
}

/// `snapshot aspects pin --site SITE --category C…`: refused when the snapshots directory
/// holds no tree of SITE (its pins would not be used); every category is checked against the
/// compiled-in tree first (a leaf, as `category!` requires), then every answer is fetched and
/// generated as the build will (refused, nothing written, if one cannot be compiled in), and
/// only then are the files written (each atomically).
pub fn pin(
    snapshots: &Path,
    site: &str,
    categories: &[String],
    base_url: Option<&str>,
) -> Result<ExitCode, String> {
    let data_site = Site::from_marketplace(super::parse_site("--site", site)?);
    let marketplace = data_site.marketplace();
    // The build and `listing --dir` read a directory's pins with its trees: a pin beside no
    // tree of its marketplace would never be used.
    if !snapshots.join(marketplace.snapshot_file_name()).is_file() {
        return Err(format!(
            "{} holds no {} tree ({}): pins beside no tree are not used (the build and `listing --dir` read the pinned rules of a directory's trees); get the tree first, `snapshot --dir {} refresh --sites {}`, then pin",
            snapshots.display(),
            marketplace.marketplace_id(),
            marketplace.snapshot_file_name(),
            snapshots.display(),
            marketplace.marketplace_id()
        ));
    }
    let mut leaves = Vec::new();
    for text in categories {
        let leaf = taxonomy_macros_core::leaf(data_site, text)
            .map_err(|message| format!("--category {text:?}: {message}"))?;
        if !leaves.contains(&leaf.id()) {
            leaves.push(leaf.id());
        }
    }
    let (tree_id, tree_version) = current_tree(base_url, marketplace)?;
    let api = super::live::api_client(base_url)?;
    let mut fetched = Vec::new();
    for &id in &leaves {
        let got = item_aspects_answer(&api, marketplace, tree_id, id)?;
        fetched.push((
            PinnedAspects {
                site: marketplace,
                tree_id,
                tree_version: tree_version.clone(),
                category_id: id,
                taken_at: taxonomy_tree::clock::today_utc(),
                source: "getItemAspectsForCategory".into(),
                fetched_from: Some(got.host),
                made_up: got.made_up,
                answer: got.answer,
            },
            got.decoded,
        ));
    }
    // Nothing is written unless the build can compile every answer in.
    for (file, _) in &fetched {
        compilable(file)?;
    }
    create_pinned_dir(snapshots)?;
    for (file, decoded) in &fetched {
        let path = pinned::path_of(snapshots, file.site, file.category_id);
        write(&path, file)?;
        let required = decoded.aspects.iter().filter(|a| a.required).count();
        outln!(
            "{}: pinned category {} ({} aspects, {required} required; tree version {}) in {}",
            file.site,
            file.category_id,
            decoded.aspects.len(),
            marketplace_client::trees::server_text(&file.tree_version),
            path.display()
        );
        if file.made_up {
            errln!("{}", made_up_warning(file, &path));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What `snapshot` says of a file pinned from a server that marked its answer as made up.
fn made_up_warning(file: &PinnedAspects, path: &Path) -> String {
    format!(
        "warning: {} came from a fake marketplace ({}), whose aspect rules are made up and the \
         same for every marketplace: they are not eBay's rules for {}. Do not commit it; pin \
         against eBay (MARKETPLACE_BASE_URL unset) instead",
        path.display(),
        file.fetched_from.as_deref().unwrap_or("unknown host"),
        file.site
    )
}

fn create_pinned_dir(snapshots: &Path) -> Result<(), String> {
    let dir = snapshots.join(pinned::PINNED_DIR);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))
}

/// `Ok` when taxonomy-data's build can compile `file` in (the build's own code generation
/// of it, whose error names the category and why).
fn compilable(file: &PinnedAspects) -> Result<(), String> {
    pinned::rules_source(file, "PINNED").map(drop)
}

fn write(path: &Path, file: &PinnedAspects) -> Result<(), String> {
    taxonomy_tree::atomic::write_atomic(path, file.to_text().as_bytes(), None)
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// A decoded answer as a category of a fetchItemAspects file, for [`AspectsDiff`].
fn as_entry(site: Marketplace, answer: ItemAspects) -> CategoryAspects {
    let name = Site::from_marketplace(site)
        .category(answer.category_id)
        .map(|c| c.name().to_owned())
        .unwrap_or_default();
    CategoryAspects {
        category: CategoryRef {
            id: answer.category_id,
            name,
        },
        aspects: answer.aspects,
    }
}

/// `snapshot aspects refresh --pinned [--check] [--force]`: each pinned category whose site's
/// tree version moved (every one with `--force`) is fetched again; what changed in its rules
/// is printed, one line a rule; the file is rewritten unless `--check`, which fails (exit 1)
/// when a rule changed. An answer the build could not compile in is refused, its file left
/// as it was.
pub fn refresh(
    snapshots: &Path,
    base_url: Option<&str>,
    check: bool,
    force: bool,
) -> Result<ExitCode, String> {
    let files = pinned::read_all(snapshots).map_err(|e| e.to_string())?;
    if files.is_empty() {
        return Err(format!(
            "{} holds no pinned category: pin one with `snapshot aspects pin --site EBAY_US --category 179`",
            snapshots.join(pinned::PINNED_DIR).display()
        ));
    }
    let mut sites: Vec<Marketplace> = files.iter().map(|f| f.site).collect();
    sites.dedup();
    let api = super::live::api_client(base_url)?;
    let mut changed_rules = false;
    for site in sites {
        let (tree_id, version) = current_tree(base_url, site)?;
        let shown_version = marketplace_client::trees::server_text(&version);
        for old in files.iter().filter(|f| f.site == site) {
            let at = format!("{site} category {}", old.category_id);
            if !force && old.tree_id == tree_id && old.tree_version == version {
                outln!("{at}: unchanged (tree version {shown_version})");
                continue;
            }
            let before = serde_json::to_vec(&old.answer).map_err(|e| e.to_string())?;
            let before = decode::item_aspects(old.category_id, &before).map_err(|e| {
                format!(
                    "{}: {e}",
                    pinned::path_of(snapshots, site, old.category_id).display()
                )
            })?;
            let got = item_aspects_answer(&api, site, tree_id, old.category_id)?;
            let (answer, after) = (got.answer, got.decoded);
            let diff =
                AspectsDiff::between_categories([as_entry(site, before)], [as_entry(site, after)]);
            if diff.is_empty() {
                outln!(
                    "{at}: tree version {} → {shown_version}, rules unchanged",
                    marketplace_client::trees::server_text(&old.tree_version)
                );
            } else {
                changed_rules = true;
                out!("{diff}");
            }
            if !check {
                let new = PinnedAspects {
                    tree_id,
                    tree_version: version.clone(),
                    taken_at: taxonomy_tree::clock::today_utc(),
                    fetched_from: Some(got.host.clone()),
                    made_up: got.made_up,
                    answer,
                    ..old.clone()
                };
                compilable(&new)?;
                write(&pinned::path_of(snapshots, site, old.category_id), &new)?;
            }
        }
    }
    if check && changed_rules {
        errln!(
            "error: the rules of pinned categories changed (above); run `snapshot aspects refresh --pinned` and rebuild"
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}
