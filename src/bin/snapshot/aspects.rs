//! `snapshot aspects refresh|check|diff`: each site's fetchItemAspects file kept beside the
//! snapshots, listings checked against a category's aspect rules (live or from that file),
//! and what changed between two files (with the listings a change breaks).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Subcommand;
use indicatif::{ProgressBar, ProgressStyle};
use marketplace_client::model::aspects::{AspectRules, AspectsDiff, ListingAspects, Problem};
use marketplaces::Marketplace;

/// `snapshot aspects …`.
#[derive(Subcommand)]
pub enum AspectsCommand {
    /// Download each site's fetchItemAspects file (the aspects of every leaf category, one
    /// gzipped file) into the aspects directory, only when the site's tree version changed
    /// since the last download (getDefaultCategoryTreeId).
    Refresh {
        /// The sites, comma-separated (default: the sites with a snapshot).
        #[arg(long, value_delimiter = ',')]
        sites: Vec<String>,
        /// Where the files go (default: the snapshots directory's `aspects/`).
        #[arg(long)]
        aspects_dir: Option<PathBuf>,
        /// The API host (default: MARKETPLACE_BASE_URL, or eBay's per MARKETPLACE_ENV).
        #[arg(long)]
        base_url: Option<String>,
        /// Download even when the tree version is the one already downloaded.
        #[arg(long)]
        force: bool,
        /// Refresh the pinned categories (`snapshot aspects pin`) instead: each one whose
        /// site's tree version moved is fetched again, and what changed in its rules printed.
        #[arg(long)]
        pinned: bool,
        /// With --pinned: write nothing, and fail (exit 1) when a pinned category's rules
        /// changed, naming each changed rule (for CI).
        #[arg(long, requires = "pinned")]
        check: bool,
    },
    /// Pin categories' aspect rules: save each category's getItemAspectsForCategory answer
    /// in the snapshots directory's `pinned/` (one file a category, normalised, with the tree
    /// version and the date), to be committed. taxonomy-data's build compiles them in, and
    /// `taxonomy_macros::aspects!` checks listings against them at compile time.
    Pin {
        /// The marketplace: its id (EBAY_US), the same without `EBAY_` (us) or its tree id.
        #[arg(long)]
        site: String,
        /// A leaf category of the compiled-in tree: an id or a full path, as `category!`
        /// takes it (repeatable).
        #[arg(long = "category", required = true)]
        categories: Vec<String>,
        /// The API host (default: MARKETPLACE_BASE_URL, or eBay's per MARKETPLACE_ENV).
        #[arg(long)]
        base_url: Option<String>,
    },
    /// Check listings' aspects against a leaf category's rules; one line per problem, exit 1
    /// when there is an error (0 with warnings only). The rules come from
    /// getItemAspectsForCategory (credentials as for `refresh`), or with `--offline` from the
    /// downloaded fetchItemAspects file.
    Check {
        /// The marketplace: its id (EBAY_US), the same without `EBAY_` (us) or its tree id.
        #[arg(long)]
        site: String,
        /// The leaf category the listings are in.
        #[arg(long)]
        category: u32,
        /// Read the rules from the downloaded file (`snapshot aspects refresh`), not the
        /// service.
        #[arg(long)]
        offline: bool,
        /// Where the downloaded files are (default: the snapshots directory's `aspects/`).
        #[arg(long)]
        aspects_dir: Option<PathBuf>,
        /// The API host (default: MARKETPLACE_BASE_URL, or eBay's per MARKETPLACE_ENV).
        #[arg(long)]
        base_url: Option<String>,
        /// Listing files: `{"Brand": ["Dell"], …}` or an inventory item (`product.aspects`);
        /// a `.jsonl` file holds one listing a line.
        #[arg(required = true)]
        listings: Vec<PathBuf>,
    },
    /// Compare two fetchItemAspects files (gzipped or plain JSON): categories added and
    /// removed, aspects added, removed, now required or optional, values added to or removed
    /// from their lists; with `--category` and listings, the listings the change breaks.
    Diff {
        /// The older file.
        old: PathBuf,
        /// The newer file.
        new: PathBuf,
        /// Print the differences as JSON, in the shape eBay's taxonomy-sdk writes them.
        #[arg(long)]
        json: bool,
        /// The category of the listings given with `--listing`.
        #[arg(long, requires = "listings")]
        category: Option<u32>,
        /// A listing file to check against both versions (repeatable; `.jsonl`: one a line).
        #[arg(long = "listing", requires = "category")]
        listings: Vec<PathBuf>,
    },
}

/// The file of `site`'s fetchItemAspects download, and the note of the tree version it
/// belongs to.
fn files_of(dir: &Path, site: Marketplace) -> (PathBuf, PathBuf) {
    (
        dir.join(format!("{}.json.gz", site.marketplace_id())),
        dir.join(format!("{}.version", site.marketplace_id())),
    )
}

pub fn run(command: AspectsCommand, snapshots: &Path) -> Result<ExitCode, String> {
    let default_dir = || snapshots.join("aspects");
    match command {
        AspectsCommand::Refresh {
            base_url,
            force,
            pinned: true,
            check,
            ..
        } => super::pinned::refresh(snapshots, base_url.as_deref(), check, force),
        AspectsCommand::Pin {
            site,
            categories,
            base_url,
        } => super::pinned::pin(snapshots, &site, &categories, base_url.as_deref()),
        AspectsCommand::Refresh {
            sites,
            aspects_dir,
            base_url,
            force,
            ..
        } => refresh(
            snapshots,
            &aspects_dir.unwrap_or_else(default_dir),
            &sites,
            base_url.as_deref(),
            force,
        ),
        AspectsCommand::Check {
            site,
            category,
            offline,
            aspects_dir,
            base_url,
            listings,
        } => {
            let site = super::parse_site("--site", &site)?;
            // A category the compiled-in tree knows is not a leaf has no aspects to check
            // against: say so here, as `category!` would, without asking the service.
            let compiled = taxonomy_data::Site::from_marketplace(site);
            if compiled.category(category).is_some_and(|c| !c.is_leaf()) {
                taxonomy_macros_core::leaf(compiled, &category.to_string())?;
            }
            let rules = if offline {
                let (file, _) = files_of(&aspects_dir.unwrap_or_else(default_dir), site);
                if !file.exists() {
                    return Err(format!(
                        "{} does not exist: run `snapshot aspects refresh --sites {}` first, or check online without --offline",
                        file.display(),
                        site.marketplace_id()
                    ));
                }
                let mut found = AspectRules::from_aspects_file(&file, &[category])
                    .map_err(|e| e.to_string())?;
                let rules = found.remove(&category).ok_or_else(|| {
                    format!(
                        "category {category} is not in {} (not a leaf of {}'s tree, or the file is older than the category)",
                        file.display(),
                        site.marketplace_id()
                    )
                })?;
                errln!("rules: category {category} from {}", file.display());
                rules
            } else {
                let client = super::live::client(base_url.as_deref(), None).map_err(|e| {
                    format!("{e}\nOr check against the downloaded file with --offline.")
                })?;
                let answer = client
                    .item_aspects((site, category))
                    .map_err(|e| e.to_string())?;
                errln!("rules: category {category} from getItemAspectsForCategory");
                AspectRules::from(&answer)
            };
            check(&rules, &listings)
        }
        AspectsCommand::Diff {
            old,
            new,
            json,
            category,
            listings,
        } => {
            let diff = AspectsDiff::between_files(&old, &new).map_err(|e| e.to_string())?;
            if json {
                let text =
                    serde_json::to_string_pretty(&diff.to_json()).map_err(|e| e.to_string())?;
                outln!("{}", crate::output::json_for_terminal(&text));
            } else if diff.is_empty() {
                outln!("no difference");
            } else {
                out!("{diff}");
            }
            if let Some(category) = category {
                broken_listings(&old, &new, category, &listings)?;
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// A listing, named for messages: a file, or `file:line` in a `.jsonl` file.
type Named = (String, ListingAspects);

/// Each listing of `paths`, and each file or line that could not be read or parsed (named,
/// with why): one bad file does not hide the others' problems.
fn read_listings(paths: &[PathBuf]) -> (Vec<Named>, Vec<String>) {
    let mut out = Vec::new();
    let mut unreadable = Vec::new();
    for path in paths {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(e) => {
                unreadable.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        let lines = matches!(
            path.extension().and_then(|e| e.to_str()),
            Some("jsonl" | "ndjson")
        );
        let mut parse = |name: String, json: &[u8]| match ListingAspects::from_json(json) {
            Ok(listing) => out.push((name, listing)),
            Err(e) => unreadable.push(format!("{name}: {e}")),
        };
        if lines {
            for (n, line) in bytes.split(|&b| b == b'\n').enumerate() {
                if !line.iter().all(u8::is_ascii_whitespace) {
                    parse(format!("{}:{}", path.display(), n + 1), line);
                }
            }
        } else {
            parse(path.display().to_string(), &bytes);
        }
    }
    (out, unreadable)
}

/// Checks every listing against `rules` (read once); prints one line a problem, and one a
/// file or line that could not be read (an error too). Exit 1 when there was an error.
fn check(rules: &AspectRules, paths: &[PathBuf]) -> Result<ExitCode, String> {
    let (listings, unreadable) = read_listings(paths);
    let mut errors = unreadable.len();
    let mut warnings = 0;
    for problem in &unreadable {
        outln!("{}", crate::output::escaped(problem));
    }
    for (name, listing) in &listings {
        for problem in rules.check(listing) {
            if problem.is_error() {
                errors += 1;
            } else {
                warnings += 1;
            }
            outln!(
                "{}: {}",
                crate::output::escaped(name),
                crate::output::escaped(&problem.to_string())
            );
        }
    }
    let unread = if unreadable.is_empty() {
        String::new()
    } else {
        format!(" ({} unreadable)", unreadable.len())
    };
    errln!(
        "{} listing(s) checked against category {}{unread}: {errors} error(s), {warnings} warning(s)",
        listings.len(),
        rules.category_id()
    );
    Ok(if errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The listings that follow the older file's rules of `category` and break the newer's.
fn broken_listings(old: &Path, new: &Path, category: u32, paths: &[PathBuf]) -> Result<(), String> {
    let rules = |path: &Path| {
        AspectRules::from_aspects_file(path, &[category])
            .map_err(|e| e.to_string())
            .map(|mut found| found.remove(&category))
    };
    let (before, after) = (rules(old)?, rules(new)?);
    let Some(after) = after else {
        outln!(
            "category {category} is not in {}: every listing in it breaks",
            new.display()
        );
        return Ok(());
    };
    let (listings, unreadable) = read_listings(paths);
    if !unreadable.is_empty() {
        return Err(unreadable.join("\n"));
    }
    for (name, listing) in listings {
        let errors_before = before.as_ref().map_or(0, |r| {
            r.check(&listing).iter().filter(|p| p.is_error()).count()
        });
        let now: Vec<Problem> = after
            .check(&listing)
            .into_iter()
            .filter(Problem::is_error)
            .collect();
        if errors_before == 0 && !now.is_empty() {
            outln!("breaks {}:", crate::output::escaped(&name));
            for p in now {
                outln!("  {}", crate::output::escaped(&p.to_string()));
            }
        }
    }
    Ok(())
}

/// `snapshot aspects refresh`.
fn refresh(
    snapshots: &Path,
    dir: &Path,
    site_names: &[String],
    base_url: Option<&str>,
    force: bool,
) -> Result<ExitCode, String> {
    let sites = if site_names.is_empty() {
        taxonomy_tree::snapshot::sites_in(snapshots)
    } else {
        super::parse_sites_flag(site_names)?
    };
    if sites.is_empty() {
        return Err(format!(
            "{} holds no snapshot: name the sites with --sites (e.g. --sites EBAY_US)",
            snapshots.display()
        ));
    }
    let client = super::live::client(base_url, None)?;
    create_aspects_dir(dir)?;
    let mut failed = false;
    for site in sites {
        let (file, note) = files_of(dir, site);
        let current = match client.default_tree_id(site.marketplace_id()) {
            Ok(answer) => answer,
            Err(e) => {
                failed = true;
                errln!("error: {site}: {e}");
                continue;
            }
        };
        let version = marketplace_client::trees::server_text(&current.tree_version);
        let held = std::fs::read_to_string(&note).ok();
        let note_text = format!("{} {}\n", current.tree_id, current.tree_version);
        if !force && file.exists() && held.as_deref() == Some(note_text.as_str()) {
            outln!("{site}: unchanged (tree version {version})");
            continue;
        }
        let bar = ProgressBar::new(0);
        bar.set_style(
            ProgressStyle::with_template("{prefix:8} {bar:30} {bytes}/{total_bytes} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_prefix(site.marketplace_id());
        bar.enable_steady_tick(Duration::from_millis(200));
        let downloaded = client.fetch_item_aspects(site, &file, &mut |received, total| {
            if let Some(total) = total {
                bar.set_length(total);
            }
            bar.set_position(received);
        });
        match downloaded {
            Ok(done) => {
                bar.finish_and_clear();
                // The note goes last: a download without it is downloaded again.
                taxonomy_tree::atomic::write_atomic(&note, note_text.as_bytes(), None)
                    .map_err(|e| format!("{}: {e}", note.display()))?;
                outln!(
                    "{site}: downloaded {} ({:.1} MB gzipped, tree version {version})",
                    done.path.display(),
                    done.compressed_bytes as f64 / 1e6
                );
            }
            Err(e) => {
                bar.abandon();
                failed = true;
                errln!("error: {site}: {e}");
            }
        }
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Creates the aspects directory with a `.gitignore` that keeps its files out of git (they
/// are large and re-downloaded on demand); delete it to commit them.
fn create_aspects_dir(dir: &Path) -> Result<(), String> {
    if dir.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let ignore = "# fetchItemAspects downloads (`snapshot aspects refresh`): large, and downloaded\n# again when the tree version changes. Delete this file to commit them.\n*\n";
    std::fs::write(dir.join(".gitignore"), ignore)
        .map_err(|e| format!("{}: {e}", dir.join(".gitignore").display()))
}
