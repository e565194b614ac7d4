//! `cargo run --bin listing -- check FILE…` and `listing publish FILE… --account NAME`.
//!
//! A listing file is eBay's own JSON: `{"inventoryItem": <createOrReplaceInventoryItem's
//! body>, "offer": <createOffer's body, with sku, marketplaceId, categoryId, …>}`.
//!
//! `check` reads each file and runs marketplace-listing's offline check: every problem of
//! every file, each naming its file and its field; nothing is sent. Exit 1 when a file has a
//! problem or cannot be read as a listing.
//!
//! `publish` checks the same way, then publishes the listings that pass 25 at a time through
//! the Inventory API's bulk calls (marketplace-listing's `publish_many_with`: getOffers per
//! SKU, bulkCreateOrReplaceInventoryItem, bulkCreateOffer or updateOffer, bulkPublishOffer),
//! idempotent by SKU: rerun after a failure, it gives the same listing ids and never a second
//! offer of a (SKU, marketplace, format); a listing eBay holds live as it is costs no write. A
//! SKU live in the other format (an auction beside a fixed-price listing) is refused, naming
//! the live offer, unless `--other-format withdraw` (withdrawOffer it first) or `keep` (both
//! live). The seller's user token comes from the refresh token `consent` stored for
//! `--account` (the same store: a file or the PostgreSQL store). No token is ever printed.
//! When no file of a chunk was published and the failure concerns every file (the service
//! unreachable, HTTP 5xx, 429, a token refused, 401, 403), it is printed once and the run
//! stops, saying how to resume. `--report FILE`: a JSON line per file and a summary line.
//! `--dry-run`: reads only (marketplace-listing's `plan_many_with`), and per file what
//! publishing would do: create, revise (the fields), withdraw, publish, refused or left alone.
//!
//! Both stream: `check` reads, checks and reports a file before reading the next; `publish`
//! a chunk of 25, so that a run holds at most 25 listings, never every file's.
//!
//! The snapshots directory is found as `snapshot` finds it (`--dir`, else
//! `TAXONOMY_SNAPSHOTS_DIR`, else `./snapshots`) and printed the same way; its trees
//! (`EBAY_*.json`), expired categories, condition policies (`EBAY_*.conditions.json`) and
//! pinned aspect rules (`pinned/`) are checked against. When none is named and `./snapshots`
//! holds no snapshot, what taxonomy-data compiled in (what `category!`, `condition!` and
//! `aspects!` check against). A listing whose category has no known condition policy passes
//! with a note saying its condition was not checked.

// Before the modules that print: `errln!` (stderr: escaped, never a panic).
#[path = "shared/output.rs"]
#[macro_use]
#[allow(dead_code, unused_macros)] // `listing` writes no JSON
mod output;
#[path = "shared/seller.rs"]
mod seller;
#[path = "shared/snapshots_dir.rs"]
mod snapshots_dir;
#[path = "shared/verbosity.rs"]
mod verbosity;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use marketplace_client::api::{ApiClient, ApiRequest, ClientConfig};
use marketplace_client::model::aspects::AspectRules;
use marketplace_client::model::aspects::{ListingAspects, Problem as AspectProblem};
use marketplace_client::model::decode;
use marketplace_client::oauth::{OAuthConfig, RefreshTokenStore};
use marketplace_listing::aio::BULK_LIMIT;
use marketplace_listing::blocking::Inventory;
use marketplace_listing::{
    AxisRule, Catalog, CategoryStatus, CompiledIn, ConditionPolicy, GroupListing, Listing,
    ListingError, OtherFormat, Problem, ProblemKind, UNKNOWN_FIELDS_SHOWN, axis_rule, check,
    check_group,
};
use marketplace_toolkit::token_store;
use marketplaces::Marketplace;
use seller::Seller;
use taxonomy_tree::conditions::ConditionsFile;
use taxonomy_tree::tree::CategoryTree;

use serde_json::json;

use crate::output::escaped;

#[derive(Parser)]
#[command(
    name = "listing",
    about = "Check listing files offline, and publish them through eBay's Inventory API",
    long_about = "Check listing files offline, and publish them through eBay's Inventory API.\n\n\
        A listing file is eBay's own JSON: {\"inventoryItem\": <createOrReplaceInventoryItem's \
        body>, \"offer\": <createOffer's body, with sku, marketplaceId, categoryId, …>}.\n\n\
        `check` sends nothing: it names every problem of every file by its field, and exits 1 \
        when there is one. `publish` checks, then publishes each listing that passes, \
        idempotent by SKU (rerun it after a failure: the same listings, never a second offer), \
        with the seller's refresh token that `consent` stored for --account. A SKU live in the \
        other format (a file switched from FIXED_PRICE to AUCTION) is refused unless \
        --other-format withdraw (end that listing first) or keep (both live).\n\n\
        What a rerun does to a live listing: unchanged (eBay holds it live as the file has it), \
        nothing is written; a field changed, updateOffer (or createOrReplaceInventoryItem) \
        replaces the whole offer (or item), so a field dropped from the file is removed, and \
        publishOffer revises the live listing; a format switched, refused unless \
        --other-format. `publish --dry-run` shows it first: per file, create, revise (which \
        fields), withdraw, publish, refused or left alone, sending only reads.\n\n\
        Settings of `publish`: MARKETPLACE_CLIENT_ID, MARKETPLACE_CLIENT_SECRET, \
        MARKETPLACE_ENV (production|sandbox), MARKETPLACE_BASE_URL + MARKETPLACE_AUTH_URL, \
        MARKETPLACE_CONFIG (SDK file), MARKETPLACE_TOKEN_STORE; the flags override them."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// The snapshots directory whose trees, expired categories, condition policies and pinned
    /// aspect rules the listings are checked against, found as `snapshot` finds it: --dir,
    /// else TAXONOMY_SNAPSHOTS_DIR, else ./snapshots; when none of them is set and ./snapshots
    /// holds no snapshot, what taxonomy-data compiled in (what `category!` and `aspects!`
    /// check against). Which one is used is printed on standard error.
    #[arg(long, global = true)]
    dir: Option<PathBuf>,
    /// Show the HTTP attempts and token events on standard error (-vv: more).
    #[arg(short, long, global = true, action = clap::ArgAction::Count, long_help = verbosity::VERBOSE_HELP)]
    verbose: u8,
}

#[derive(Subcommand)]
enum Command {
    /// Check listing files offline: every problem, by file and field; sends nothing.
    Check {
        /// The listing files; a directory stands for its `*.json` files, by name.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Check, then publish each listing that passes (idempotent by SKU) and print its
    /// listing id.
    ///
    /// What a rerun does to a live listing: one eBay holds live as the file has it is left
    /// alone (nothing written); a changed offer field is sent with updateOffer, which
    /// replaces the whole offer (a field dropped from the file is removed), a changed item
    /// field with createOrReplaceInventoryItem, which replaces the whole item, then
    /// publishOffer revises the live listing; a switched format (FIXED_PRICE to AUCTION, or
    /// back) is refused unless --other-format withdraw or keep. `--dry-run` shows it first,
    /// sending only reads.
    Publish {
        /// The listing files; a directory stands for its `*.json` files, by name.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Write a JSON line per file (file, sku, offerId, listingId, status: published,
        /// unchanged, refused, failed, unreadable or not_tried; problems by field; eBay's
        /// errors with their errorId; warnings: fields eBay does not define, each with the
        /// closest one), then a summary line, to this file (for cron). With
        /// --dry-run, status planned or unchanged and each line's plan.
        #[arg(long, value_name = "FILE")]
        report: Option<PathBuf>,
        #[command(flatten)]
        seller: Seller,
        /// When the SKU has a live listing on the marketplace in the other format (a file
        /// switched from FIXED_PRICE to AUCTION, or the reverse): `refuse` to publish, naming
        /// it; `withdraw` it first (withdrawOffer); or `keep` both live.
        #[arg(long, value_enum, default_value_t = OtherFormatArg::Refuse)]
        other_format: OtherFormatArg,
        /// Send only reads (bulkGetInventoryItem, getOffers, getInventoryItem) and print, per
        /// file, what publishing would do: create (a new inventory item or offer), revise
        /// (which fields differ), withdraw (the other format's live listing, under
        /// --other-format withdraw), publish, refused, or left alone (live as it is). With
        /// --report, each line carries the plan.
        #[arg(long)]
        dry_run: bool,
    },
    /// Set the quantity (and price) of published listings from a CSV file of
    /// `sku,quantity[,price]` lines (a first line `sku,…` is a header; a price in the
    /// currency of the SKU's offers: `2.49`): eBay's bulkUpdatePriceQuantity, 25 SKUs a call,
    /// only what differs from what eBay holds, the item's and every published offer's quantity
    /// together, no inventory item written. Each SKU refused is printed with eBay's error;
    /// exit 1 when one is.
    Stock {
        /// The CSV file.
        #[arg(long, value_name = "FILE")]
        file: PathBuf,
        #[command(flatten)]
        seller: Seller,
    },
}

/// `--other-format`: marketplace-listing's [`OtherFormat`].
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum OtherFormatArg {
    /// Refuse, naming the live offer.
    Refuse,
    /// withdrawOffer the live offer first.
    Withdraw,
    /// Keep both listings live.
    Keep,
}

impl From<OtherFormatArg> for OtherFormat {
    fn from(arg: OtherFormatArg) -> Self {
        match arg {
            OtherFormatArg::Refuse => OtherFormat::Refuse,
            OtherFormatArg::Withdraw => OtherFormat::Withdraw,
            OtherFormatArg::Keep => OtherFormat::Keep,
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    verbosity::init(cli.verbose);
    let (files, command) = match cli.command {
        Command::Stock { file, seller } => return stock_file(&file, &seller),
        Command::Check { files } => (files, None),
        Command::Publish {
            files,
            report,
            seller,
            other_format,
            dry_run,
        } => (files, Some((report, seller, other_format, dry_run))),
    };
    // After `stock`, which reads no snapshots directory (bulkUpdatePriceQuantity needs no tree
    // or rule).
    let (dir, from) = snapshots_dir::snapshots_dir(cli.dir);
    let source = match catalog_of(&dir, from) {
        Ok(source) => source,
        Err(e) => {
            errln!("error: {}", escaped(&e));
            return ExitCode::FAILURE;
        }
    };
    let files = match listing_files(files) {
        Ok(files) => files,
        Err(e) => {
            errln!("error: {}", escaped(&e));
            return ExitCode::FAILURE;
        }
    };
    let Some((report, seller, other_format, dry_run)) = command else {
        return check_files(&files, &source);
    };
    let report = match Report::create(report.as_deref(), dry_run) {
        Ok(report) => report,
        Err(e) => {
            errln!("error: {}", escaped(&e));
            return ExitCode::FAILURE;
        }
    };
    let account = &seller.account;
    match inventory(&seller) {
        Ok((inventory, reads)) => publish_files(
            &inventory.with_other_format(other_format.into()),
            &reads,
            account,
            &files,
            &source,
            report,
        ),
        Err(e) => {
            // Nothing was sent: an error that concerns every file (no consent, the scope
            // missing, the settings). The report still says so, a line a file and the summary.
            errln!("error: {e}");
            let mut report = report;
            for path in &files {
                report.file(path, None, "not_tried", &[], &[]);
            }
            errln!("{}", report.finish().summary());
            ExitCode::FAILURE
        }
    }
}

/// What the listings are checked against: a snapshots directory's trees and rules, or (no
/// directory was named and ./snapshots holds no snapshot) what taxonomy-data compiled in.
struct Source {
    /// The catalog.
    catalog: Box<dyn Catalog + Sync>,
    /// The snapshots directory read, absolute; or the one looked in when none was.
    dir: PathBuf,
    /// Whether `dir` was read (else the compiled-in trees and rules are used).
    read: bool,
}

/// The catalog of the snapshots directory `dir` (found as `snapshot` finds it, `from` saying
/// how), printed on standard error as `snapshot` prints it. The default ./snapshots without
/// a snapshot in it: the compiled-in trees and rules, said so; a directory named by --dir or
/// TAXONOMY_SNAPSHOTS_DIR that cannot be read is an error naming it.
fn catalog_of(dir: &Path, from: &str) -> Result<Source, String> {
    let shown = snapshots_dir::shown(dir);
    if from == snapshots_dir::FROM_DEFAULT && taxonomy_tree::snapshot::sites_in(dir).is_empty() {
        errln!(
            "snapshots: none in {} (from {from}): checking against the trees and rules compiled into this command",
            shown.display()
        );
        return Ok(Source {
            catalog: Box::new(CompiledIn),
            dir: shown,
            read: false,
        });
    }
    snapshots_dir::announce(dir, from);
    let catalog = DirCatalog::read(dir)
        .map_err(|e| format!("snapshots {} (from {from}): {e}", shown.display()))?;
    Ok(Source {
        catalog: Box::new(catalog),
        dir: shown,
        read: true,
    })
}

/// The listing files the arguments name: a file as given, a directory as its `*.json` files
/// sorted by name (not its subdirectories).
fn listing_files(args: Vec<PathBuf>) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for arg in args {
        if !arg.is_dir() {
            files.push(arg);
            continue;
        }
        let entries = std::fs::read_dir(&arg).map_err(|e| format!("{}: {e}", arg.display()))?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
            .collect();
        if found.is_empty() {
            return Err(format!(
                "{}: a directory without a *.json file",
                arg.display()
            ));
        }
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

/// A file of the run that would overwrite another file's listing on eBay (marketplace-listing's
/// `aio::conflicts`: one offer, SKU, marketplace and format, in two files; or one SKU with two
/// different inventory items): refused, like the others, before anything is sent.
struct RunConflict {
    /// The SKU.
    sku: String,
    /// The other files, as printed (the first `CONFLICTS_NAMED`).
    others: Vec<String>,
    /// How many more files clash with it than `others` names.
    more: usize,
    /// How they clash.
    what: &'static str,
}

impl RunConflict {
    /// The problem of `offer.sku`, as printed after the field.
    fn text(&self, sent: bool) -> String {
        let sent = if sent {
            "so none of them was sent"
        } else {
            "so none of them would be sent"
        };
        format!(
            "{:?} is also the SKU of {}{}, and they {}: they would overwrite each other on eBay, {sent}",
            self.sku,
            self.others.join(", "),
            more_files(self.more),
            self.what
        )
    }
}

/// The files of the whole run that would overwrite each other on eBay, by their position in
/// `files`. A run is a whole: two files of one offer 25 files apart would otherwise go in two
/// chunks, the second replacing the first's live listing. Only the SKUs are held while every
/// file is read; the files whose SKU repeats are read again and compared (the same rule as
/// `publish_many`'s within a call). A file that cannot be read is left to the run to report.
fn run_conflicts(files: &[PathBuf]) -> HashMap<usize, RunConflict> {
    scan_run(files, None).0
}

/// [`run_conflicts`], and the marketplaces of the files that pass the check against `catalog`
/// (what [`SellerFacts::ask`] asks about: nothing when no file would be sent).
fn scan_run(
    files: &[PathBuf],
    catalog: Option<&dyn Catalog>,
) -> (HashMap<usize, RunConflict>, BTreeSet<Marketplace>) {
    let mut by_sku: HashMap<String, Vec<usize>> = HashMap::new();
    let mut marketplaces = BTreeSet::new();
    for (i, path) in files.iter().enumerate() {
        if let (Some(catalog), Some(Ok(group))) = (catalog, read_group_file(path)) {
            // A group that passes the check: its variants' marketplaces.
            if check_group(&group, catalog, &HashSet::new()).is_empty() {
                marketplaces.extend(
                    group
                        .variants
                        .iter()
                        .filter_map(|v| Marketplace::from_marketplace_id(&v.offer.marketplace_id)),
                );
            }
            continue;
        }
        if let Ok(listing) = read_listing(path) {
            if catalog.is_some_and(|catalog| check(&listing, catalog).is_empty()) {
                marketplaces.extend(Marketplace::from_marketplace_id(
                    &listing.offer.marketplace_id,
                ));
            }
            by_sku.entry(listing.offer.sku).or_default().push(i);
        }
    }
    let mut repeated: Vec<usize> = by_sku
        .into_values()
        .filter(|files| files.len() > 1)
        .flatten()
        .collect();
    repeated.sort_unstable();
    let mut positions = Vec::new();
    let mut listings = Vec::new();
    for &i in &repeated {
        if let Ok(listing) = read_listing(&files[i]) {
            positions.push(i);
            listings.push(listing);
        }
    }
    let shown = |i: usize| escaped(&files[positions[i]].display().to_string()).into_owned();
    let conflicts = marketplace_listing::aio::conflicts(&listings)
        .into_iter()
        .filter_map(|(i, e)| match e {
            ListingError::Conflicting {
                sku,
                others,
                more,
                what,
            } => Some((
                positions[i],
                RunConflict {
                    sku,
                    others: others.into_iter().map(shown).collect(),
                    more,
                    what,
                },
            )),
            _ => None,
        })
        .collect();
    (conflicts, marketplaces)
}

/// How many of the seller's policies or locations a refusal names (a seller of 5,000
/// policies got each refused file's line naming all of them).
const NAMED: usize = 10;

/// The most location keys read (1,000 pages of getInventoryLocations).
const MAX_LOCATIONS: usize = 100_000;

/// `" and N more"` after the first [`NAMED`], when there are more.
fn and_more(more: usize) -> String {
    if more == 0 {
        String::new()
    } else {
        format!(" and {more} more")
    }
}

/// `" and N more files"` after the files a conflict names, when it names not all.
fn more_files(more: usize) -> String {
    if more == 0 {
        String::new()
    } else {
        format!(" and {more} more files")
    }
}

/// A problem as printed: the check's, except that "no aspect rules" names the snapshots
/// directory looked in and the command that pins the listing's category there.
fn problem_text(p: &Problem, listing: &Listing, source: &Source) -> String {
    if p.kind != ProblemKind::NoAspectRules {
        return p.to_string();
    }
    let site = &listing.offer.marketplace_id;
    let category = listing.offer.category_id.as_deref().unwrap_or("ID").trim();
    let dir = source.dir.display();
    let pin = format!("snapshot --dir {dir} aspects pin --site {site} --category {category}");
    if source.read {
        format!(
            "{}: no aspect rules of {site} {category} are pinned in {dir}/pinned (pin them: `{pin}`)",
            p.field
        )
    } else {
        format!(
            "{}: no aspect rules of {site} {category} are compiled in, and {dir} holds no snapshot (pin them: `{pin}` with that directory's trees, or name your snapshots directory with --dir or TAXONOMY_SNAPSHOTS_DIR)",
            p.field
        )
    }
}

/// The largest listing file read (eBay's own limits: a 500,000-character description, 24
/// image URLs, the aspects): 4 MiB.
const MAX_LISTING_FILE: u64 = 4 * 1024 * 1024;

/// A file as a listing, or why not (naming the field serde stopped at, with its line).
fn read_listing(path: &Path) -> Result<Listing, String> {
    read_listing_file(path).map(|(listing, _)| listing)
}

/// [`read_listing`], and the fields of the file eBay's Inventory API description does not
/// define (eBay ignores them: warnings, not problems).
fn read_listing_file(
    path: &Path,
) -> Result<(Listing, Vec<marketplace_listing::UnknownField>), String> {
    use std::io::Read as _;
    // A named pipe would block the read, a device or a huge file would fill memory: only a
    // regular file of at most MAX_LISTING_FILE bytes is read (its size checked as read, too).
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot be read: {e}"))?;
    if !meta.is_file() {
        return Err("is not a regular file".into());
    }
    if meta.len() > MAX_LISTING_FILE {
        return Err(format!(
            "is {} bytes, over the {MAX_LISTING_FILE} bytes a listing file may have",
            meta.len()
        ));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_LISTING_FILE + 1).read_to_end(&mut bytes))
        .map_err(|e| format!("cannot be read: {e}"))?;
    if bytes.len() as u64 > MAX_LISTING_FILE {
        return Err(format!(
            "grew over the {MAX_LISTING_FILE} bytes a listing file may have"
        ));
    }
    if is_group(&bytes) {
        return Err(
            "is a group of variations ({\"inventoryItemGroup\": …, \"variants\": […]}), not a single listing".into(),
        );
    }
    let listing = serde_json::from_slice(&bytes).map_err(|e| {
        format!("not a listing file ({{\"inventoryItem\": …, \"offer\": …}} in eBay's JSON): {e}")
    })?;
    let unknown = serde_json::from_slice(&bytes)
        .map(|file| marketplace_listing::unknown_fields(&file))
        .unwrap_or_default();
    Ok((listing, unknown))
}

/// A failed listing's errors as the report gives them: eBay's `errorId` and message of each,
/// else the error's own text.
fn report_errors(e: &ListingError) -> Vec<serde_json::Value> {
    let mut errors: Vec<serde_json::Value> = e
        .errors()
        .iter()
        .map(|x| json!({"errorId": x.error.error_id, "message": x.error.message}))
        .collect();
    if errors.is_empty() {
        errors.push(json!({"message": e.to_string()}));
    }
    errors
}

/// Whether a file's bytes are a group of variations: a JSON object with `inventoryItemGroup`.
fn is_group(bytes: &[u8]) -> bool {
    const KEY: &[u8] = b"\"inventoryItemGroup\"";
    bytes.windows(KEY.len()).any(|w| w == KEY)
        && serde_json::from_slice::<serde_json::Value>(bytes)
            .is_ok_and(|v| v.get("inventoryItemGroup").is_some())
}

/// A group file (`{"inventoryItemGroup": …, "variants": […]}`) as a [`GroupListing`]; `None`
/// when the file is not one (a single listing, or unreadable: left to [`read_listing_file`]).
fn read_group_file(path: &Path) -> Option<Result<GroupListing, String>> {
    use std::io::Read as _;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_LISTING_FILE {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_LISTING_FILE + 1).read_to_end(&mut bytes))
        .ok()?;
    if !is_group(&bytes) {
        return None;
    }
    Some(serde_json::from_slice(&bytes).map_err(|e| {
        format!(
            "not a group file ({{\"inventoryItemGroup\": …, \"variants\": [{{\"inventoryItem\": …, \"offer\": …}}, …]}} in eBay's JSON): {e}"
        )
    }))
}

/// The warning for the unknown fields of a file past the first [`UNKNOWN_FIELDS_SHOWN`]: how
/// many, not which (bounded output for a file of made-up fields).
fn more_unknown(unknown: &[marketplace_listing::UnknownField]) -> Option<String> {
    let more = unknown.len().checked_sub(UNKNOWN_FIELDS_SHOWN)?;
    (more > 0).then(|| {
        format!(
            "{more} more fields eBay's Inventory API description does not define, not listed (at most {UNKNOWN_FIELDS_SHOWN} are): eBay ignores them"
        )
    })
}

/// The warning for a deprecated `ConditionEnum` name in the file (`MANUFACTURER_REFURBISHED`,
/// read as CERTIFIED_REFURBISHED: `Condition::from_deprecated_name`), naming its
/// replacement. Only a listing read as CERTIFIED_REFURBISHED can hold one, so only then is the
/// file read again for the name written.
fn deprecated_condition(path: &Path, listing: &Listing) -> Option<String> {
    use std::io::Read as _;
    let condition = listing.inventory_item.condition?;
    if condition != marketplaces::Condition::CertifiedRefurbished {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_LISTING_FILE).read_to_end(&mut bytes))
        .ok()?;
    let file: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let written = file.get("inventoryItem")?.get("condition")?.as_str()?;
    let replacement = marketplaces::Condition::from_deprecated_name(written)?;
    Some(format!(
        "inventoryItem.condition: {written} is deprecated in eBay's ConditionEnum: createOrReplaceInventoryItem converts it to {replacement} (and may refuse it in the future); write {replacement}"
    ))
}

/// Why the listing's condition was checked against no policy: the catalog has none for its
/// category (the committed snapshots carry none).
fn unchecked_condition(listing: &Listing, catalog: &dyn Catalog) -> Option<String> {
    let site = Marketplace::from_inventory_marketplace_id(&listing.offer.marketplace_id)?;
    let id: u32 = listing.offer.category_id.as_deref()?.trim().parse().ok()?;
    let known = catalog.condition_policy(site, id, &mut |_| {});
    (!known).then(|| {
        format!(
            "condition not checked: no condition policy of {site} {id} is known; `snapshot refresh` with credentials writes {site}.conditions.json beside the tree"
        )
    })
}

/// `listing check FILE…`: each file read, checked and reported before the next one is read,
/// so that only one file's listing is ever held. Each problem is printed on standard output
/// as `FILE: FIELD: what is wrong`, a file without any as `FILE: ok`, in the order of the
/// files.
fn check_files(files: &[PathBuf], source: &Source) -> ExitCode {
    let catalog = &*source.catalog;
    let mut failed = 0;
    let conflicts = run_conflicts(files);
    // The run's single-SKU listings: a group's variant may not be one of them.
    let mut single_skus = HashSet::new();
    let mut groups = Vec::new();
    for (i, path) in files.iter().enumerate() {
        match read_group_file(path) {
            Some(_) => groups.push(i),
            None => {
                if let Ok(listing) = read_listing(path) {
                    single_skus.insert(listing.offer.sku);
                }
            }
        }
    }
    // The run's group files' variant SKUs: a SKU may be a variant of one group only.
    let group_skus = group_skus(files);
    for (i, path) in files.iter().enumerate() {
        let name = escaped(&path.display().to_string()).into_owned();
        if groups.binary_search(&i).is_ok() {
            let problems: Vec<String> = match read_group_file(path) {
                Some(Ok(group)) => check_group(&group, catalog, &single_skus)
                    .iter()
                    .map(ToString::to_string)
                    .chain(
                        other_group_problems(&group_skus, &group)
                            .into_iter()
                            .map(|(field, message)| format!("{field}: {message}")),
                    )
                    .collect(),
                Some(Err(e)) => vec![e],
                None => vec!["cannot be read again".to_owned()],
            };
            if problems.is_empty() {
                outln!("{name}: ok");
            } else {
                for p in &problems {
                    outln!("{name}: {}", escaped(p));
                }
                failed += 1;
            }
            continue;
        }
        let listing = match read_listing_file(path) {
            Ok((listing, unknown)) => {
                for field in unknown.iter().take(UNKNOWN_FIELDS_SHOWN) {
                    errln!("warning: {name}: {}", escaped(&field.to_string()));
                }
                if let Some(more) = more_unknown(&unknown) {
                    errln!("warning: {name}: {more}");
                }
                listing
            }
            Err(e) => {
                outln!("{name}: {}", escaped(&e));
                failed += 1;
                continue;
            }
        };
        if let Some(warning) = deprecated_condition(path, &listing) {
            errln!("warning: {name}: {}", escaped(&warning));
        }
        let problems = check(&listing, catalog);
        let conflict = conflicts.get(&i);
        if let Some(conflict) = conflict {
            outln!("{name}: offer.sku: {}", escaped(&conflict.text(false)));
        }
        if problems.is_empty() && conflict.is_none() {
            match unchecked_condition(&listing, catalog) {
                Some(note) => outln!("{name}: ok ({})", escaped(&note)),
                None => outln!("{name}: ok"),
            }
        } else {
            for p in &problems {
                outln!("{name}: {}", escaped(&problem_text(p, &listing, source)));
            }
            failed += 1;
        }
    }
    if failed == 0 {
        errln!("{} listing file(s) checked: no problem", files.len());
        ExitCode::SUCCESS
    } else {
        errln!(
            "{failed} of {} listing file(s) have problems (nothing was sent)",
            files.len()
        );
        ExitCode::FAILURE
    }
}

/// The Inventory API of the seller: its stored refresh token, as `consent` keeps it.
fn inventory(seller: &Seller) -> Result<(Inventory, ApiClient), Box<dyn std::error::Error>> {
    let (config, provider) = seller.provider(require_inventory_scope)?;
    let base = config.endpoints.base_url().as_str();
    let api = ApiClient::new(ClientConfig::for_base_url(base)?, provider.clone())?;
    // The seller's facts (getInventoryLocations, the Account API's policies) over the same
    // token.
    let reads = ApiClient::new(ClientConfig::for_base_url(base)?, provider)?;
    Ok((Inventory::new(api), reads))
}

/// Refuses, before anything is sent, an account whose stored consent does not grant
/// `https://api.ebay.com/oauth/api_scope/sell.inventory` (the scope eBay's Inventory API
/// reference gives createOrReplaceInventoryItem, createOffer and publishOffer; without it
/// every call is eBay's 403, errorId 1100), or that has no stored consent: the error names the
/// missing scope and the `consent` command that grants it.
fn require_inventory_scope(
    tokens: &dyn RefreshTokenStore,
    account: &str,
    config: &OAuthConfig,
) -> Result<(), String> {
    let grant = format!("consent --account {account:?} --for listing");
    match tokens.load(account) {
        Err(e) => Err(format!(
            "cannot read the stored consent of account {account:?}: {e}"
        )),
        Ok(None) => Err(format!(
            "no consent is stored for account {account:?}: publishing needs the seller's \
             consent to {} (run `{grant}`; nothing was sent)",
            token_store::INVENTORY_SCOPE
        )),
        Ok(Some(stored)) if token_store::grants_inventory(stored.scopes.iter(), config) => Ok(()),
        Ok(Some(stored)) => Err(format!(
            "the consent stored for account {account:?} does not grant {}, which publishing \
             needs (createOrReplaceInventoryItem, createOffer, publishOffer; eBay refuses them \
             without it: errorId 1100); it grants: {}. Run `{grant}` and publish again; \
             nothing was sent",
            token_store::INVENTORY_SCOPE,
            escaped(&stored.scopes.to_string())
        )),
    }
}

/// `listing publish FILE… --account NAME`: the files read in chunks of [`BULK_LIMIT`], each
/// chunk published through the bulk calls (marketplace-listing's `publish_many_with`:
/// getOffers per SKU, bulkCreateOrReplaceInventoryItem, bulkCreateOffer, bulkPublishOffer)
/// and reported before the next chunk is read (a run holds one chunk's listings, never every
/// file's). A listing eBay holds live as it is costs no write (bulkGetInventoryItem and getOffers
/// only). A file the check refuses has its problems printed on standard output, as `check`
/// prints them, and nothing is sent for it. When no file of a chunk was published and a
/// failure concerns every file ([`Outage`]: the service unreachable, 5xx, 429, no token, 401,
/// 403), the error is printed once and the run stops, saying how to resume. With `--report`,
/// a JSON line a file and a summary line; a summary on standard error always.
fn publish_files(
    inventory: &Inventory,
    reads: &ApiClient,
    account: &str,
    files: &[PathBuf],
    source: &Source,
    mut report: Report,
) -> ExitCode {
    let bar = (files.len() > 1).then(|| {
        let bar = indicatif::ProgressBar::new(files.len() as u64);
        if let Ok(style) = indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} files") {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    });
    let print = |line: &str, ok: bool| match &bar {
        Some(bar) => bar.suspend(|| print_line(line, ok)),
        None => print_line(line, ok),
    };
    // The files read since the last chunk was sent (one unreadable or refused for the whole
    // run reported in its place).
    let mut chunk: Vec<(&Path, Result<Listing, Skipped>)> = Vec::new();
    let mut stopped = None;
    let dry_run = report.counts.dry_run;
    let (mut conflicts, marketplaces) = scan_run(files, Some(&*source.catalog));
    // Before any write: what the seller has (policies, locations), asked once for the run
    // (nothing when no file passes the check: nothing would be sent).
    let facts = SellerFacts::ask(reads, account, &marketplaces, &print);
    // The run's single-SKU listings: a group's variant may not be one of them (check_group).
    let single_skus = single_skus(files);
    // The run's group files' variant SKUs: a SKU may be a variant of one group only.
    let group_skus = group_skus(files);
    for (done, path) in files.iter().enumerate() {
        if let Some(bar) = &bar {
            bar.inc(1);
        }
        if let Some(group) = read_group_file(path) {
            // The single listings read before it are published first: files are reported in
            // their order, and a group is a chunk of its own (its calls are the group's).
            if !chunk.is_empty() {
                let sent = std::mem::take(&mut chunk);
                if let Some(outage) =
                    publish_chunk(inventory, sent, source, dry_run, &mut report, &print)
                {
                    stopped = Some((outage, done));
                    break;
                }
            }
            let run = GroupRun {
                single_skus: &single_skus,
                group_skus: &group_skus,
                facts: &facts,
                source,
                dry_run,
            };
            if let Some(outage) = run.publish(inventory, path, group, &mut report, &print) {
                stopped = Some((outage, done + 1));
                break;
            }
            continue;
        }
        let read = match conflicts.remove(&done) {
            Some(conflict) => Err(Skipped::Refused {
                sku: conflict.sku.clone(),
                problems: vec![("offer.sku".into(), conflict.text(!dry_run))],
            }),
            None => read_listing_file(path)
                .map_err(Skipped::Unreadable)
                .and_then(|(listing, unknown)| {
                    let name = escaped(&path.display().to_string()).into_owned();
                    for field in unknown.iter().take(UNKNOWN_FIELDS_SHOWN) {
                        report.warn(path, field);
                        print(
                            &format!("warning: {name}: {}", escaped(&field.to_string())),
                            false,
                        );
                    }
                    if let Some(more) = more_unknown(&unknown) {
                        report.warn_more(path, &more);
                        print(&format!("warning: {name}: {more}"), false);
                    }
                    let problems = facts.problems(&listing);
                    if problems.is_empty() {
                        Ok(listing)
                    } else {
                        // Every problem of the file at once, as `check` names them: the
                        // offline check's too (a missing picture, a price's decimals), not
                        // only the seller's policies and location, so that one fix suffices.
                        let mut all: Vec<(String, String)> = check(&listing, &*source.catalog)
                            .iter()
                            .map(|p| {
                                let text = problem_text(p, &listing, source);
                                let message = text
                                    .strip_prefix(&format!("{}: ", p.field))
                                    .map_or_else(|| text.clone(), str::to_owned);
                                (p.field.clone(), message)
                            })
                            .collect();
                        all.extend(problems);
                        Err(Skipped::Refused {
                            sku: listing.offer.sku,
                            problems: all,
                        })
                    }
                }),
        };
        chunk.push((path, read));
        let listings = chunk.iter().filter(|(_, l)| l.is_ok()).count();
        if listings == BULK_LIMIT || done + 1 == files.len() {
            let sent = std::mem::take(&mut chunk);
            let outage = publish_chunk(inventory, sent, source, dry_run, &mut report, &print);
            if let Some(outage) = outage {
                stopped = Some((outage, done + 1));
                break;
            }
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let was_stopped = stopped.is_some();
    if let Some(((outage, account), tried)) = stopped {
        let rest = &files[tried..];
        for path in rest {
            report.file(path, None, "not_tried", &[], &[]);
        }
        if let Some(account) = account {
            errln!("the seller must consent: run `consent --account {account:?}`");
        }
        let from = rest
            .first()
            .map(|p| format!(", from {} on", escaped(&p.display().to_string())))
            .unwrap_or_default();
        errln!(
            "error: stopped: no file of the last chunk was published, failing with {} (above), which concerns every file; {} listing file(s) not tried{from}. Rerun the same command {}: publishing is idempotent by SKU, so a file already published gives the same listing again and never a second offer",
            outage.what(),
            rest.len(),
            outage.resume()
        );
    }
    let counts = report.finish();
    errln!("{}", counts.summary());
    let failed = counts.refused + counts.failed + counts.unreadable;
    if was_stopped {
        ExitCode::FAILURE
    } else if dry_run {
        if failed == 0 {
            ExitCode::SUCCESS
        } else {
            errln!(
                "{failed} of {} listing file(s) would not be published",
                files.len()
            );
            ExitCode::FAILURE
        }
    } else if failed == 0 {
        ExitCode::SUCCESS
    } else {
        // A rerun carries on after a failure (eBay's answer, the network); a refused or
        // unreadable file is refused again until it is fixed.
        let next = if counts.failed == 0 {
            "fix the files named above, then rerun"
        } else if counts.failed == failed {
            "rerun to carry on: it is idempotent"
        } else {
            "fix the refused and unreadable files named above, and rerun to carry on with the failed ones: it is idempotent"
        };
        errln!(
            "{failed} of {} listing file(s) not published ({next})",
            files.len()
        );
        ExitCode::FAILURE
    }
}

/// Publishes one chunk (at most [`BULK_LIMIT`] listings) and reports each file; the outage
/// (and the account that must consent, if so) when no file was published and a failure
/// concerns every file: the run stops.
fn publish_chunk(
    inventory: &Inventory,
    chunk: Vec<(&Path, Result<Listing, Skipped>)>,
    source: &Source,
    dry_run: bool,
    report: &mut Report,
    print: &dyn Fn(&str, bool),
) -> Option<(Outage, Option<String>)> {
    let mut paths = Vec::new();
    let mut listings = Vec::new();
    // The unreadable files (and those refused for the whole run), reported in their place
    // among the others: (before which listing).
    let mut unreadable: Vec<(usize, &Path, Skipped)> = Vec::new();
    for (path, read) in chunk {
        match read {
            Ok(listing) => {
                paths.push(path);
                listings.push(listing);
            }
            Err(e) => unreadable.push((listings.len(), path, e)),
        }
    }
    let mut unreadable = unreadable.into_iter().peekable();
    let mut report_unreadable = |report: &mut Report, before: usize| {
        while let Some((_, path, skipped)) = unreadable.next_if(|(at, _, _)| *at <= before) {
            let name = escaped(&path.display().to_string()).into_owned();
            match skipped {
                Skipped::Unreadable(e) => {
                    print(&format!("{name}: {}", escaped(&e)), true);
                    report.file(path, None, "unreadable", &[], &[json!({"message": e})]);
                }
                Skipped::Refused { sku, problems } => {
                    let mut listed = Vec::new();
                    for (field, text) in problems {
                        print(&format!("{name}: {field}: {}", escaped(&text)), true);
                        listed.push(json!({"field": field, "message": text}));
                    }
                    report.file(path, Some(&sku), "refused", &listed, &[]);
                }
            }
        }
    };
    if listings.is_empty() {
        report_unreadable(report, usize::MAX);
        return None;
    }
    // A dry run: the plan of each listing (reads only), which publish_many follows.
    let results: Vec<Result<Outcome, ListingError>> = if dry_run {
        let plans = inventory.plan_many_with(&listings, &*source.catalog);
        plans.into_iter().map(|r| r.map(Outcome::Planned)).collect()
    } else {
        let results = inventory.publish_many_with(&listings, &*source.catalog);
        results
            .into_iter()
            .map(|r| r.map(Outcome::Published))
            .collect()
    };
    let names: Vec<String> = paths
        .iter()
        .map(|p| escaped(&p.display().to_string()).into_owned())
        .collect();
    let published = results.iter().any(Result::is_ok);
    // The failure that concerns every file: printed once, the chunk's other failures of the
    // same call named after its file.
    let outage = (!published)
        .then(|| {
            results.iter().enumerate().find_map(|(i, r)| {
                let e = r.as_ref().err()?;
                Some((Outage::of(e)?, i, account_needing_consent(e)))
            })
        })
        .flatten();
    for (i, result) in results.iter().enumerate() {
        report_unreadable(report, i);
        let (name, path, listing) = (&names[i], paths[i], &listings[i]);
        let sku = Some(listing.sku());
        match result {
            Ok(Outcome::Planned(plan)) => {
                print(&format!("{name}: {}", escaped(&plan.to_string())), true);
                report.planned(path, listing.sku(), plan);
            }
            Ok(Outcome::Published(p)) => {
                // A rerun's unchanged listing says so: eBay holds it live as the file has it,
                // and nothing was written for it.
                print(
                    &format!(
                        "{name}: listing {} (offer {}, sku {}){}",
                        escaped(&p.listing_id),
                        escaped(&p.offer_id),
                        escaped(listing.sku()),
                        if p.unchanged {
                            ", unchanged: live as the file has it, nothing written"
                        } else {
                            ""
                        }
                    ),
                    true,
                );
                let status = if p.unchanged {
                    "unchanged"
                } else {
                    "published"
                };
                report.published(path, listing.sku(), p, status);
            }
            // The check refused it: its problems, as `check` prints them; nothing was sent.
            Err(ListingError::Refused(problems)) => {
                let mut listed = Vec::new();
                for p in &problems.0 {
                    let text = problem_text(p, listing, source);
                    print(&format!("{name}: {}", escaped(&text)), true);
                    let message = text
                        .strip_prefix(&format!("{}: ", p.field))
                        .unwrap_or(&text);
                    listed.push(json!({"field": p.field, "message": message}));
                }
                report.file(path, sku, "refused", &listed, &[]);
            }
            Err(ListingError::Conflicting {
                sku: same,
                others,
                more,
                what,
            }) => {
                let others: Vec<&str> = others
                    .iter()
                    .filter_map(|&j| names.get(j).map(String::as_str))
                    .collect();
                let text = format!(
                    "{same:?} is also the SKU of {}{}, and they {what}: they would overwrite each other on eBay, so none of them was sent",
                    others.join(", "),
                    more_files(*more)
                );
                print(&format!("{name}: offer.sku: {}", escaped(&text)), true);
                report.file(
                    path,
                    sku,
                    "refused",
                    &[json!({"field": "offer.sku", "message": text})],
                    &[],
                );
            }
            Err(e) => {
                let not = if dry_run {
                    "would not be published"
                } else {
                    "not published"
                };
                let line = match outage {
                    Some((_, first, _)) if first != i => {
                        format!("{name}: {not}: the same failure as {}", names[first])
                    }
                    _ if dry_run && matches!(e, ListingError::OtherFormatLive(_)) => {
                        format!("{name}: refused: {}", escaped(&e.to_string()))
                    }
                    _ => format!("{name}: {not}: {}", escaped(&e.to_string())),
                };
                print(&line, false);
                let errors = report_errors(e);
                report.file(path, sku, "failed", &[], &errors);
            }
        }
    }
    report_unreadable(report, usize::MAX);
    outage.map(|(outage, _, account)| (outage, account))
}

/// The SKUs of the run's single-SKU listing files (group files left out).
fn single_skus(files: &[PathBuf]) -> HashSet<String> {
    files
        .iter()
        .filter(|path| read_group_file(path).is_none())
        .filter_map(|path| read_listing(path).ok())
        .map(|listing| listing.offer.sku)
        .collect()
}

/// The variant SKUs of the run's group files, each with the groups that name it (their
/// `inventoryItemGroupKey` and file).
fn group_skus(files: &[PathBuf]) -> HashMap<String, Vec<(Option<String>, PathBuf)>> {
    let mut skus: HashMap<String, Vec<(Option<String>, PathBuf)>> = HashMap::new();
    for path in files {
        if let Some(Ok(group)) = read_group_file(path) {
            let key = group.inventory_item_group.inventory_item_group_key;
            for variant in group.variants {
                skus.entry(variant.offer.sku)
                    .or_default()
                    .push((key.clone(), path.clone()));
            }
        }
    }
    skus
}

/// The variants of `group` whose SKU is a variant of another group file of the run (another
/// `inventoryItemGroupKey`), each `(field, message)`: publishing both would rewrite the SKU's
/// item (bulkCreateOrReplaceInventoryItem) for the second group before eBay refuses its
/// createOrReplaceInventoryItemGroup (25703).
fn other_group_problems(
    group_skus: &HashMap<String, Vec<(Option<String>, PathBuf)>>,
    group: &GroupListing,
) -> Vec<(String, String)> {
    let key = &group.inventory_item_group.inventory_item_group_key;
    let mut problems = Vec::new();
    for (i, variant) in group.variants.iter().enumerate() {
        let sku = &variant.offer.sku;
        let others = group_skus.get(sku).into_iter().flatten();
        for (other_key, other_path) in others.filter(|(other, _)| other != key) {
            problems.push((
                format!("variants[{i}].offer.sku"),
                format!(
                    "SKU {sku} is also a variant of group {} in {} (a SKU is a variant of one group)",
                    other_key.as_deref().unwrap_or("without a key"),
                    other_path.display()
                ),
            ));
        }
    }
    problems
}

/// What `publish` needs to publish a group file: the run's single SKUs and group files'
/// variant SKUs, the seller's facts, the catalog, and whether the run is a dry run.
struct GroupRun<'a> {
    single_skus: &'a HashSet<String>,
    group_skus: &'a HashMap<String, Vec<(Option<String>, PathBuf)>>,
    facts: &'a SellerFacts,
    source: &'a Source,
    dry_run: bool,
}

impl GroupRun<'_> {
    /// Publishes one group file (`{"inventoryItemGroup": …, "variants": […]}`): check_group
    /// and the seller's facts of every variant first (a problem: printed as `check` prints
    /// it, nothing sent), then publish_group_with (getInventoryItemGroup, the variants' items
    /// and offers, createOrReplaceInventoryItemGroup, publishOfferByInventoryItemGroup),
    /// printing `FILE: listing ID (group KEY, N variants)`. A dry run sends nothing for a
    /// group and says what publishing would call. The outage (and the account that must
    /// consent) when the failure concerns every file: the run stops.
    fn publish(
        &self,
        inventory: &Inventory,
        path: &Path,
        read: Result<GroupListing, String>,
        report: &mut Report,
        print: &dyn Fn(&str, bool),
    ) -> Option<(Outage, Option<String>)> {
        let name = escaped(&path.display().to_string()).into_owned();
        let group = match read {
            Ok(group) => group,
            Err(e) => {
                print(&format!("{name}: {}", escaped(&e)), true);
                report.file(path, None, "unreadable", &[], &[json!({"message": e})]);
                return None;
            }
        };
        let key = group.inventory_item_group.inventory_item_group_key.clone();
        let catalog = &*self.source.catalog;
        let mut problems: Vec<(String, String)> = check_group(&group, catalog, self.single_skus)
            .iter()
            .map(|p| {
                let text = p.to_string();
                let message = text
                    .strip_prefix(&format!("{}: ", p.field))
                    .map_or_else(|| text.clone(), str::to_owned);
                (p.field.clone(), message)
            })
            .collect();
        problems.extend(other_group_problems(self.group_skus, &group));
        for (i, variant) in group.variants.iter().enumerate() {
            for (field, message) in self.facts.problems(variant) {
                problems.push((format!("variants[{i}].{field}"), message));
            }
        }
        if !problems.is_empty() {
            let mut listed = Vec::new();
            for (field, message) in problems {
                print(&format!("{name}: {field}: {}", escaped(&message)), true);
                listed.push(json!({"field": field, "message": message}));
            }
            report.file(path, key.as_deref(), "refused", &listed, &[]);
            return None;
        }
        let key = key.unwrap_or_default();
        let variants = group.variants.len();
        if self.dry_run {
            let line = format!(
                "{name}: group {key}: publish {variants} variants as one listing (a dry run of a group sends nothing: getInventoryItemGroup, the variants' items and offers, createOrReplaceInventoryItemGroup, publishOfferByInventoryItemGroup)"
            );
            print(&escaped(&line), true);
            report.file(path, Some(&key), "planned", &[], &[]);
            return None;
        }
        match inventory.publish_group_with(&group, catalog) {
            Ok(p) => {
                let removed = if p.removed.is_empty() {
                    String::new()
                } else {
                    format!(
                        "; removed from the listing: {}",
                        escaped(&p.removed.join(", "))
                    )
                };
                print(
                    &format!(
                        "{name}: listing {} (group {}, {variants} variants){removed}",
                        escaped(&p.listing_id),
                        escaped(&p.inventory_item_group_key),
                    ),
                    true,
                );
                let offers: Vec<_> = p
                    .offers
                    .iter()
                    .map(|(sku, id)| json!({"sku": sku, "offerId": id}))
                    .collect();
                report.line(
                    "published",
                    json!({
                        "file": path.display().to_string(), "sku": key, "offerId": null,
                        "listingId": p.listing_id, "status": "published",
                        "inventoryItemGroupKey": p.inventory_item_group_key,
                        "offers": offers, "removed": p.removed, "problems": [], "errors": [],
                    }),
                );
                None
            }
            Err(ListingError::Refused(problems)) => {
                let mut listed = Vec::new();
                for p in &problems.0 {
                    let text = p.to_string();
                    print(&format!("{name}: {}", escaped(&text)), true);
                    let message = text
                        .strip_prefix(&format!("{}: ", p.field))
                        .unwrap_or(&text);
                    listed.push(json!({"field": p.field, "message": message}));
                }
                report.file(path, Some(&key), "refused", &listed, &[]);
                None
            }
            Err(e) => {
                print(
                    &format!("{name}: not published: {}", escaped(&e.to_string())),
                    false,
                );
                let errors = report_errors(&e);
                report.file(path, Some(&key), "failed", &[], &errors);
                Outage::of(&e).map(|outage| (outage, account_needing_consent(&e)))
            }
        }
    }
}

/// A file of a chunk that is not sent.
enum Skipped {
    /// It cannot be read as a listing: why.
    Unreadable(String),
    /// Refused for what the run knows beyond the check, before anything is sent: it would
    /// overwrite another file's listing ([`run_conflicts`]), or names a policy or location
    /// the seller does not have ([`SellerFacts`]). Each problem: (field, what is wrong).
    Refused {
        /// The SKU.
        sku: String,
        /// The problems.
        problems: Vec<(String, String)>,
    },
}

/// What the seller has that a listing names, asked once per run before anything is written:
/// the business policies of each marketplace of the run (the Account API's
/// getFulfillmentPolicies, getPaymentPolicies, getReturnPolicies, `?marketplace_id=`) and the
/// inventory locations (the Inventory API's getInventoryLocations). A listing naming a policy
/// the seller has not got on its marketplace (a GB policy on a DE offer: createOffer takes
/// it, publishOffer refuses it with a misleading error) or a location the seller has not got
/// is refused before sending, naming the field, the id, the marketplace and the ids the seller
/// has.
///
/// When a read fails (the Account API needs `sell.account` or `sell.account.readonly`, which
/// an older consent may lack; a 5xx; the network), it is said once and that check is left
/// out: the run goes on. A nightly job must not lose a night's listings because a check that
/// eBay itself makes again at publishOffer (refusing only the listings concerned) could not
/// be made; an outage that concerns the writes too stops the run at its first chunk anyway.
struct SellerFacts {
    /// Per marketplace, per policy field, the seller's (id, name); `None`: not known.
    policies: Option<PoliciesByMarketplace>,
    /// The seller's location keys; `None`: not known.
    locations: Option<Vec<String>>,
}

/// Per marketplace, per policy field of `listingPolicies`, the seller's policies (id, name).
type PoliciesByMarketplace = HashMap<Marketplace, Vec<(&'static str, Vec<(String, String)>)>>;

/// The policy fields of an offer's `listingPolicies`, with the Account API call (its name, its
/// path and the answer's array) that lists the seller's policies of that kind.
const POLICY_CALLS: [(&str, &str, &str, &str); 3] = [
    (
        "fulfillmentPolicyId",
        "getFulfillmentPolicies",
        "fulfillment_policy",
        "fulfillmentPolicies",
    ),
    (
        "paymentPolicyId",
        "getPaymentPolicies",
        "payment_policy",
        "paymentPolicies",
    ),
    (
        "returnPolicyId",
        "getReturnPolicies",
        "return_policy",
        "returnPolicies",
    ),
];

impl SellerFacts {
    /// Asks eBay, each call once (per marketplace for the policies); a failed read is printed
    /// once as a warning, and its check left out.
    fn ask(
        api: &ApiClient,
        account: &str,
        marketplaces: &BTreeSet<Marketplace>,
        print: &dyn Fn(&str, bool),
    ) -> Self {
        if marketplaces.is_empty() {
            return Self {
                policies: None,
                locations: None,
            };
        }
        let mut policies = HashMap::new();
        let mut known = true;
        'markets: for &m in marketplaces {
            let mut kinds = Vec::new();
            for (field, call, path, array) in POLICY_CALLS {
                let request = ApiRequest::get_segments(["sell", "account", "v1", path])
                    .query("marketplace_id", m.marketplace_id())
                    .operation(call);
                let answer = api
                    .send(request)
                    .and_then(|a| a.json::<serde_json::Value>());
                match answer {
                    Ok(answer) => {
                        let ids = answer[array]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .filter_map(|p| {
                                let id = p[field].as_str()?.to_owned();
                                Some((id, p["name"].as_str().unwrap_or_default().to_owned()))
                            })
                            .collect();
                        kinds.push((field, ids));
                    }
                    Err(e) => {
                        // 403: the consent lacks the Account API's scope (an older consent).
                        let hint = if e.status() == Some(403) {
                            format!(
                                ". The Account API needs the scope sell.account.readonly: `consent --account {account:?} --for listing` grants it"
                            )
                        } else {
                            String::new()
                        };
                        print(
                            &format!(
                                "warning: the seller's business policies could not be read ({call} of {m}: {}), so the listings' policy ids are not checked before sending (publishOffer refuses a policy the seller has not got on the offer's marketplace){hint}",
                                escaped(&e.to_string())
                            ),
                            false,
                        );
                        known = false;
                        break 'markets;
                    }
                }
            }
            policies.insert(m, kinds);
        }
        let locations = Self::locations(api).map_err(|e| {
            print(
                &format!(
                    "warning: the seller's inventory locations could not be read (getInventoryLocations: {}), so the listings' merchantLocationKey is not checked before sending",
                    escaped(&e)
                ),
                false,
            );
        });
        Self {
            policies: known.then_some(policies),
            locations: locations.ok(),
        }
    }

    /// getInventoryLocations, page by page (100 a page): every location key of the seller.
    /// A page that adds no key not seen before ends the walk, and more than
    /// [`MAX_LOCATIONS`] keys is an error (a `total` of u64::MAX over the same page was asked
    /// for forever, the keys growing without end).
    fn locations(api: &ApiClient) -> Result<Vec<String>, String> {
        let mut keys = Vec::new();
        let mut seen = HashSet::new();
        loop {
            if keys.len() > MAX_LOCATIONS {
                return Err(format!(
                    "more than {MAX_LOCATIONS} locations answered, more than a seller has: the locations are left unchecked"
                ));
            }
            let request = ApiRequest::get_segments(["sell", "inventory", "v1", "location"])
                .query("limit", "100")
                .query("offset", keys.len().to_string())
                .operation("getInventoryLocations");
            let answer: serde_json::Value = api
                .send(request)
                .map_err(|e| e.to_string())?
                .json()
                .map_err(|e| e.to_string())?;
            let page: Vec<String> = answer["locations"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|l| l["merchantLocationKey"].as_str().map(str::to_owned))
                .collect();
            let total = answer["total"].as_u64().unwrap_or_default();
            let before = keys.len();
            keys.extend(page.into_iter().filter(|k| seen.insert(k.clone())));
            if keys.len() == before || keys.len() as u64 >= total {
                return Ok(keys);
            }
        }
    }

    /// The listing's policies and location the seller has not got: (field, what is wrong).
    fn problems(&self, listing: &Listing) -> Vec<(String, String)> {
        let offer = &listing.offer;
        let mut problems = Vec::new();
        let market = Marketplace::from_marketplace_id(&offer.marketplace_id);
        if let (Some(policies), Some(m), Some(given)) =
            (&self.policies, market, &offer.listing_policies)
            && let Some(kinds) = policies.get(&m)
        {
            for (field, ids) in kinds {
                let id = match *field {
                    "fulfillmentPolicyId" => &given.fulfillment_policy_id,
                    "paymentPolicyId" => &given.payment_policy_id,
                    _ => &given.return_policy_id,
                };
                let Some(id) = id.as_deref() else { continue };
                if ids.iter().any(|(has, _)| has == id) {
                    continue;
                }
                let has: Vec<String> = ids
                    .iter()
                    .take(NAMED)
                    .map(|(id, name)| format!("{id} ({name:?})"))
                    .collect();
                let call = POLICY_CALLS
                    .iter()
                    .find(|c| c.0 == *field)
                    .map_or("", |c| c.1);
                let has = if has.is_empty() {
                    "none".to_owned()
                } else {
                    format!("{}{}", has.join(", "), and_more(ids.len() - has.len()))
                };
                problems.push((
                    format!("offer.listingPolicies.{field}"),
                    format!(
                        "{id:?} is not one of the seller's policies on {m} ({call}: {has}); publishOffer would refuse it"
                    ),
                ));
            }
        }
        if let (Some(keys), Some(key)) = (&self.locations, &offer.merchant_location_key)
            && !keys.iter().any(|k| k == key)
        {
            // With no location at all there is none to name instead: only createInventoryLocation.
            let text = if keys.is_empty() {
                format!(
                    "{key:?} is not one of the seller's inventory locations (getInventoryLocations: none: the seller has no location yet); create it (createInventoryLocation)"
                )
            } else {
                let named = &keys[..keys.len().min(NAMED)];
                format!(
                    "{key:?} is not one of the seller's inventory locations (getInventoryLocations: {}{}); create it (createInventoryLocation) or name one of these",
                    named.join(", "),
                    and_more(keys.len() - named.len())
                )
            };
            problems.push(("offer.merchantLocationKey".into(), text));
        }
        problems
    }
}

/// One listing's result: published (or found live as it is), or, in a dry run, planned.
enum Outcome {
    /// publish_many's result.
    Published(marketplace_listing::aio::Published),
    /// plan_many's plan: what publishing would do.
    Planned(marketplace_listing::aio::Plan),
}

/// The `--report` file: a JSON line a listing file, then a summary line; and the counts
/// (kept without the file too, for the summary on standard error).
struct Report {
    out: Option<(PathBuf, std::io::BufWriter<std::fs::File>)>,
    counts: Counts,
    /// The warnings of a file not yet reported (its fields eBay does not define), by file.
    warnings: HashMap<PathBuf, Vec<serde_json::Value>>,
}

/// How many files ended each way.
#[derive(Debug, Default, Clone, Copy)]
struct Counts {
    /// A dry run: `planned` files would be published, nothing was written.
    dry_run: bool,
    planned: usize,
    published: usize,
    unchanged: usize,
    refused: usize,
    failed: usize,
    unreadable: usize,
    not_tried: usize,
}

impl Counts {
    /// How many files were counted.
    fn files(&self) -> usize {
        self.planned
            + self.published
            + self.unchanged
            + self.refused
            + self.failed
            + self.unreadable
            + self.not_tried
    }

    /// The summary line on standard error.
    fn summary(&self) -> String {
        if self.dry_run {
            return format!(
                "{} listing file(s), dry run (only reads sent, nothing written): {} to publish, {} left alone (live as it is), {} refused, {} failed, {} unreadable, {} not tried",
                self.files(),
                self.planned,
                self.unchanged,
                self.refused,
                self.failed,
                self.unreadable,
                self.not_tried
            );
        }
        let files = self.published
            + self.unchanged
            + self.refused
            + self.failed
            + self.unreadable
            + self.not_tried;
        format!(
            "{files} listing file(s): {} published, {} unchanged (nothing written), {} refused, {} failed, {} unreadable, {} not tried",
            self.published,
            self.unchanged,
            self.refused,
            self.failed,
            self.unreadable,
            self.not_tried
        )
    }
}

impl Report {
    /// The report written to `path` (created or truncated before anything is sent), or
    /// counts only.
    fn create(path: Option<&Path>, dry_run: bool) -> Result<Self, String> {
        let out = match path {
            None => None,
            Some(path) => {
                let file = std::fs::File::create(path)
                    .map_err(|e| format!("--report {}: {e}", path.display()))?;
                Some((path.to_path_buf(), std::io::BufWriter::new(file)))
            }
        };
        Ok(Self {
            out,
            counts: Counts {
                dry_run,
                ..Counts::default()
            },
            warnings: HashMap::new(),
        })
    }

    /// A dry run's line: what publishing would do (`plan`: the item and the offer created,
    /// revised with the fields named, or the same; the offers withdrawn; whether published).
    fn planned(&mut self, path: &Path, sku: &str, plan: &marketplace_listing::aio::Plan) {
        use marketplace_listing::aio::Change;
        let change = |c: &Change| match c {
            Change::Same => json!("same"),
            Change::Create => json!("create"),
            Change::Revise(fields) => json!({ "revise": fields }),
        };
        let status = if plan.publish { "planned" } else { "unchanged" };
        let withdraw: Vec<_> = plan
            .withdraw
            .iter()
            .map(|(id, format)| json!({"offerId": id, "format": format}))
            .collect();
        self.line(
            status,
            json!({
                "file": path.display().to_string(), "sku": sku, "offerId": plan.offer_id,
                "listingId": plan.listing_id, "status": status,
                "plan": {
                    "action": plan.to_string(), "inventoryItem": change(&plan.item),
                    "offer": change(&plan.offer), "withdraw": withdraw, "publish": plan.publish,
                },
                "problems": [], "errors": [],
            }),
        );
    }

    /// A published (or unchanged) file's line.
    fn published(
        &mut self,
        path: &Path,
        sku: &str,
        p: &marketplace_listing::aio::Published,
        status: &'static str,
    ) {
        self.line(
            status,
            json!({
                "file": path.display().to_string(), "sku": sku, "offerId": p.offer_id,
                "listingId": p.listing_id, "status": status, "problems": [], "errors": [],
            }),
        );
    }

    /// Any other file's line.
    fn file(
        &mut self,
        path: &Path,
        sku: Option<&str>,
        status: &'static str,
        problems: &[serde_json::Value],
        errors: &[serde_json::Value],
    ) {
        self.line(
            status,
            json!({
                "file": path.display().to_string(), "sku": sku, "offerId": null,
                "listingId": null, "status": status, "problems": problems, "errors": errors,
            }),
        );
    }

    /// A warning about the file at `path` (a field eBay does not define), written in its line:
    /// `{"field", "message", "closest"}`.
    fn warn(&mut self, path: &Path, field: &marketplace_listing::UnknownField) {
        self.warnings
            .entry(path.to_path_buf())
            .or_default()
            .push(json!({
                "field": field.path, "message": field.to_string(), "closest": field.closest,
            }));
    }

    /// The count of a file's unknown fields not listed, written in its line as a warning
    /// without a field: `{"field": null, "message", "closest": null}`.
    fn warn_more(&mut self, path: &Path, message: &str) {
        self.warnings
            .entry(path.to_path_buf())
            .or_default()
            .push(json!({"field": null, "message": message, "closest": null}));
    }

    fn line(&mut self, status: &'static str, mut line: serde_json::Value) {
        // Every file's line has its warnings (an empty list when none).
        let warnings = line["file"]
            .as_str()
            .and_then(|file| self.warnings.remove(Path::new(file)))
            .unwrap_or_default();
        line["warnings"] = json!(warnings);
        let c = &mut self.counts;
        *match status {
            "planned" => &mut c.planned,
            "published" => &mut c.published,
            "unchanged" => &mut c.unchanged,
            "refused" => &mut c.refused,
            "unreadable" => &mut c.unreadable,
            "not_tried" => &mut c.not_tried,
            _ => &mut c.failed,
        } += 1;
        self.write(&line);
    }

    /// Writes a line, and flushes it (cron reads the file while the run goes on); a failed
    /// write is said once and the file given up, the run carries on.
    fn write(&mut self, line: &serde_json::Value) {
        use std::io::Write as _;
        let Some((path, out)) = &mut self.out else {
            return;
        };
        if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
            errln!(
                "warning: --report {}: {e}; no more lines written",
                path.display()
            );
            self.out = None;
        }
    }

    /// The summary line written; the counts.
    fn finish(mut self) -> Counts {
        let c = self.counts;
        let mut summary = json!({
            "files": c.files(), "published": c.published, "unchanged": c.unchanged,
            "refused": c.refused, "failed": c.failed, "unreadable": c.unreadable,
            "notTried": c.not_tried,
        });
        // A dry run published nothing: how many it would publish instead.
        if c.dry_run {
            summary["dryRun"] = json!(true);
            summary["planned"] = json!(c.planned);
            summary.as_object_mut().map(|s| s.remove("published"));
        }
        self.write(&json!({ "summary": summary }));
        c
    }
}

/// A failure that is the service's, the network's or the seller's token's, not one file's:
/// while it lasts, every file fails the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outage {
    /// The service cannot be reached (a connection refused or broken, a time-out).
    Unreachable,
    /// The service answers a server error (HTTP 5xx), after the retries.
    ServerError,
    /// The service is rate limiting the application (HTTP 429).
    RateLimited,
    /// No access token could be had for the seller (the token endpoint refused or failed).
    Token,
    /// The seller's access token is refused (HTTP 401, after a renewed token).
    Unauthorized,
    /// Access denied (HTTP 403): the token lacks the sell.inventory scope, or the seller is
    /// not allowed the call.
    Forbidden,
}

impl Outage {
    /// The outage `e` is, or `None` for a failure of the listing itself (an eBay error about
    /// one of its fields: another file may pass).
    fn of(e: &ListingError) -> Option<Self> {
        use marketplace_client::api::ApiError;
        let (ListingError::Inventory { source, .. } | ListingError::Api(source)) = e else {
            return None;
        };
        match source {
            ApiError::Transport { .. } | ApiError::Timeout { .. } | ApiError::Truncated { .. } => {
                Some(Outage::Unreachable)
            }
            ApiError::RateLimited { .. } => Some(Outage::RateLimited),
            ApiError::OAuth(_) => Some(Outage::Token),
            _ => match source.status()? {
                401 => Some(Outage::Unauthorized),
                403 => Some(Outage::Forbidden),
                429 => Some(Outage::RateLimited),
                500.. => Some(Outage::ServerError),
                _ => None,
            },
        }
    }

    /// What failed, as the stop message says it.
    fn what(self) -> &'static str {
        match self {
            Outage::Unreachable => "the service unreachable (a network error or a time-out)",
            Outage::ServerError => "a server error (HTTP 5xx)",
            Outage::RateLimited => "rate limiting (HTTP 429)",
            Outage::Token => "no access token for the seller",
            Outage::Unauthorized => "the seller's access token refused (HTTP 401)",
            Outage::Forbidden => "access denied (HTTP 403)",
        }
    }

    /// When to run again.
    fn resume(self) -> &'static str {
        match self {
            Outage::Unreachable => "once the network and the service are back",
            Outage::ServerError => "once eBay's service answers again",
            Outage::RateLimited => "once the application's call quota allows it",
            Outage::Token | Outage::Unauthorized => {
                "once the seller's consent is renewed (`consent --account NAME`) or the token endpoint answers"
            }
            Outage::Forbidden => {
                "once the seller's consent grants the sell.inventory scope (`consent --account NAME`)"
            }
        }
    }
}

/// A published listing on standard output, a failure on standard error.
fn print_line(line: &str, ok: bool) {
    if ok {
        outln!("{line}");
    } else {
        errln!("{line}");
    }
}

/// The account of an error that says the seller must consent (again).
fn account_needing_consent(e: &ListingError) -> Option<String> {
    use marketplace_client::api::ApiError;
    match e {
        ListingError::Api(ApiError::OAuth(o)) => o.account_needing_consent().map(str::to_owned),
        _ => None,
    }
}

/// The trees, expired categories, condition policies and pinned aspect rules of a snapshots
/// directory.
struct DirCatalog {
    trees: HashMap<Marketplace, CategoryTree>,
    replacements: HashMap<(Marketplace, u32), u32>,
    conditions: HashMap<Marketplace, ConditionsFile>,
    rules: HashMap<(Marketplace, u32), AspectRules>,
}

impl DirCatalog {
    /// Reads every tree of `dir` (with the expired categories and condition policies beside
    /// it) and its `pinned/` files; a file that cannot be read is an error naming it. A
    /// condition-policy file out of step with its tree is left out with a warning, as the
    /// build leaves it out.
    fn read(dir: &Path) -> Result<Self, String> {
        let sites = taxonomy_tree::snapshot::sites_in(dir);
        if sites.is_empty() {
            return Err("no snapshot (EBAY_*.json) in this directory".into());
        }
        let mut trees = HashMap::new();
        let mut replacements = HashMap::new();
        let mut conditions = HashMap::new();
        // The condition-policy files a fake marketplace made up: one warning for them all.
        let mut made_up: Vec<(String, String)> = Vec::new();
        for site in sites {
            let tree = taxonomy_tree::snapshot::read_site(site, dir).map_err(|e| e.to_string())?;
            let path = dir.join(site.snapshot_file_name());
            if let Some(expired) =
                taxonomy_tree::expired::read_beside(&path, &tree).map_err(|e| e.to_string())?
            {
                for m in expired.mappings {
                    replacements.insert((site, m.from), m.to);
                }
            }
            match taxonomy_tree::conditions::read_in_step(&path, &tree) {
                Ok(Some(file)) => {
                    if file.made_up {
                        made_up.push((
                            taxonomy_tree::conditions::path_beside(&path)
                                .display()
                                .to_string(),
                            file.source.clone(),
                        ));
                    }
                    conditions.insert(site, file);
                }
                Ok(None) => {}
                Err(e @ taxonomy_tree::conditions::ConditionsError::OutOfStep { .. }) => {
                    errln!("warning: {}", escaped(&e.to_string()));
                }
                Err(e) => return Err(e.to_string()),
            }
            trees.insert(site, tree);
        }
        if let Some((_, source)) = made_up.first() {
            let files: Vec<&str> = made_up.iter().map(|(f, _)| f.as_str()).collect();
            errln!(
                "warning: condition policies made up by a fake marketplace (source {}) in {}: the listings are checked against rules that are not eBay's",
                escaped(source),
                escaped(&files.join(", "))
            );
        }
        let mut rules = HashMap::new();
        for pinned in taxonomy_codegen::pinned::read_all(dir).map_err(|e| e.to_string())? {
            let bytes = serde_json::to_vec(&pinned.answer).map_err(|e| e.to_string())?;
            let answer = decode::item_aspects(pinned.category_id, &bytes).map_err(|e| {
                format!(
                    "{}: {e}",
                    taxonomy_codegen::pinned::path_of(dir, pinned.site, pinned.category_id)
                        .display()
                )
            })?;
            rules.insert(
                (pinned.site, pinned.category_id),
                AspectRules::from(&answer),
            );
        }
        Ok(Self {
            trees,
            replacements,
            conditions,
            rules,
        })
    }
}

/// The first leaves under `category` (as many as the check names, depth first in the tree's
/// order), each with its path, and how many leaves it has: what `category!` lists for a
/// category that is not a leaf.
fn leaves_under(
    tree: &taxonomy_tree::tree::CategoryTree,
    category: &taxonomy_tree::tree::Category,
) -> (Vec<(u32, String)>, usize) {
    let mut shown = Vec::new();
    let mut count = 0;
    let mut stack: Vec<u32> = category.children.iter().rev().copied().collect();
    while let Some(id) = stack.pop() {
        let Some(c) = tree.get(id) else { continue };
        if c.leaf {
            count += 1;
            if shown.len() < marketplace_listing::limits::SHOWN_LEAVES {
                shown.push((c.id, taxonomy_tree::expired::path_of(tree, c.id)));
            }
        } else {
            stack.extend(c.children.iter().rev());
        }
    }
    (shown, count)
}

impl Catalog for DirCatalog {
    fn category(&self, marketplace: Marketplace, id: u32) -> CategoryStatus {
        let Some(tree) = self.trees.get(&marketplace) else {
            return CategoryStatus::NoTree;
        };
        match tree.get(id) {
            Some(c) if c.leaf => CategoryStatus::Leaf,
            Some(c) => {
                let (leaves, leaf_count) = leaves_under(tree, c);
                CategoryStatus::NotLeaf {
                    name: c.name.clone(),
                    leaves,
                    leaf_count,
                }
            }
            None => match self.replacements.get(&(marketplace, id)) {
                Some(&replacement) => CategoryStatus::Expired {
                    replacement,
                    replacement_path: taxonomy_tree::expired::path_of(tree, replacement),
                },
                None => CategoryStatus::Unknown {
                    tree_id: tree.meta.tree_id,
                    tree_version: tree.meta.version.clone(),
                },
            },
        }
    }

    fn check_aspects(
        &self,
        marketplace: Marketplace,
        id: u32,
        aspects: &ListingAspects,
    ) -> Option<Vec<AspectProblem>> {
        Some(self.rules.get(&(marketplace, id))?.check(aspects))
    }

    fn knows_aspect(&self, marketplace: Marketplace, id: u32, name: &str) -> bool {
        self.rules
            .get(&(marketplace, id))
            .is_none_or(|rules| rules.aspect_names().any(|n| n.eq_ignore_ascii_case(name)))
    }

    fn condition_policy(
        &self,
        marketplace: Marketplace,
        id: u32,
        f: &mut dyn FnMut(ConditionPolicy<'_>),
    ) -> bool {
        let rule = self
            .conditions
            .get(&marketplace)
            .and_then(|file| file.rule_of(id));
        rule.map(|rule| rule.with_policy(f)).is_some()
    }

    fn variation_axis(
        &self,
        marketplace: Marketplace,
        id: u32,
        name: &str,
        values: &[String],
    ) -> Option<AxisRule> {
        let rules = self.rules.get(&(marketplace, id))?;
        Some(axis_rule(rules, name, values))
    }
}

/// A line of `listing stock`'s CSV file: the SKU, its quantity, and its price when given.
fn stock_line(line: &str) -> Result<(String, u32, Option<String>), String> {
    let fields: Vec<&str> = line.split(',').map(str::trim).collect();
    let (sku, quantity, price) = match fields[..] {
        [sku, quantity] => (sku, quantity, None),
        [sku, quantity, price] => (sku, quantity, Some(price)),
        _ => return Err("not sku,quantity[,price]".into()),
    };
    if sku.is_empty() || sku.len() > 50 {
        return Err(format!(
            "the SKU {:?} is not 1 to 50 characters",
            escaped(sku)
        ));
    }
    // bulkUpdatePriceQuantity sets the quantity this line gives: a line changing only a
    // price still names the SKU's quantity, so an empty one is refused rather than guessed.
    let quantity = quantity.parse::<u32>().map_err(|_| {
        format!(
            "SKU {}: the quantity {:?} is not a whole number of 0 or more (every line sets \
             the quantity, a line changing only the price too: give the SKU's current one)",
            escaped(sku),
            escaped(quantity)
        )
    })?;
    let price = match price {
        None | Some("") => None,
        Some(p) if is_price(p) => Some(p.to_owned()),
        Some(p) => {
            return Err(format!(
                "SKU {}: the price {:?} is not an amount above 0 of at most 2 decimals \
                 (4.50; no sign, exponent, inf or NaN)",
                escaped(sku),
                escaped(p)
            ));
        }
    };
    Ok((sku.to_owned(), quantity, price))
}

/// Whether `value` is a price bulkUpdatePriceQuantity's `Amount.value` takes: digits, at most
/// two decimals after a point, above 0 (`4.50`, `12`); not `inf`, `NaN`, `1e3`, `-2` or
/// `4.505`, which a float parse would let through.
fn is_price(value: &str) -> bool {
    let (whole, fraction) = value.split_once('.').unwrap_or((value, ""));
    !whole.is_empty()
        && fraction.len() <= 2
        && (value.len() == whole.len() || !fraction.is_empty())
        && whole
            .bytes()
            .chain(fraction.bytes())
            .all(|b| b.is_ascii_digit())
        && whole.bytes().chain(fraction.bytes()).any(|b| b != b'0')
}

/// The currency of `sku`'s published offers' prices (getOffers, read before the update),
/// or why a price of it cannot be sent: none read (no published offer with a price, or the
/// read failed), offers priced in more than one currency (one on EBAY_US, one on EBAY_GB),
/// or a code that is not the currency of one of eBay's marketplaces.
fn stock_currency(
    state: &marketplace_listing::stock::StockState,
    sku: &str,
) -> Result<String, String> {
    // Every currency its offers are priced in: one price line sets every offer's price
    // (bulkUpdatePriceQuantity's offers of the SKU), so offers on marketplaces of other
    // currencies (EBAY_US in USD, EBAY_GB in GBP) cannot take one amount.
    let currencies: BTreeSet<String> = state
        .get(sku)
        .map(|s| {
            s.offers
                .iter()
                .filter_map(|o| o.price.as_ref())
                .map(|p| p.currency.trim().to_owned())
                .collect()
        })
        .unwrap_or_default();
    if currencies.len() > 1 {
        let listed: Vec<String> = currencies.iter().map(|c| escaped(c).into_owned()).collect();
        return Err(format!(
            "its offers are priced in {}: one price cannot be each of them",
            listed.join(" and ")
        ));
    }
    let currency = currencies.into_iter().next().unwrap_or_default();
    if currency.is_empty() {
        return Err(
            "no currency for its price: getOffers gave no published offer of it with a price"
                .to_owned(),
        );
    }
    if !Marketplace::ALL.iter().any(|m| m.currency() == currency) {
        return Err(format!(
            "its offers' currency {:?} is not one of eBay's marketplaces' currencies",
            escaped(&currency)
        ));
    }
    Ok(currency)
}

/// `listing stock --file FILE --account NAME`: the file read whole (a bad line: nothing sent,
/// each named by its line number), then marketplace-listing's `update_stock`; a price is
/// given in the currency of the SKU's published offers, as eBay holds them.
fn stock_file(file: &Path, seller: &Seller) -> ExitCode {
    use marketplace_listing::stock::{MemoryRevisions, StockState, StockUpdate};
    let text = match std::fs::read_to_string(file) {
        Ok(text) => text,
        Err(e) => {
            errln!("error: {}: {e}", escaped(&file.display().to_string()));
            return ExitCode::FAILURE;
        }
    };
    // A byte order mark (a spreadsheet's "CSV UTF-8" export writes one) is not the header's.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let mut lines = Vec::new();
    // Each SKU's index in `lines`.
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut bad = 0;
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || (n == 0 && line.to_ascii_lowercase().starts_with("sku,")) {
            continue;
        }
        match stock_line(line) {
            Ok(parsed) => {
                // A SKU on two lines with other values: which one the seller means is not
                // known (one bulkUpdatePriceQuantity request a SKU would keep the last).
                // Found by an index of the lines read: a file of many lines stays linear.
                let earlier = seen.get(&parsed.0).map(|&i| &lines[i]);
                match earlier {
                    Some((at, given)) if *given != parsed => {
                        bad += 1;
                        errln!(
                            "{}:{}: SKU {} is on line {at} too, with another quantity or price",
                            escaped(&file.display().to_string()),
                            n + 1,
                            escaped(&parsed.0)
                        );
                    }
                    Some(_) => {}
                    None => {
                        seen.insert(parsed.0.clone(), lines.len());
                        lines.push((n + 1, parsed));
                    }
                }
            }
            Err(e) => {
                bad += 1;
                errln!("{}:{}: {e}", escaped(&file.display().to_string()), n + 1);
            }
        }
    }
    if bad > 0 {
        errln!("{bad} line(s) refused; nothing was sent");
        return ExitCode::FAILURE;
    }
    let inventory = match inventory(seller) {
        Ok((inventory, _)) => inventory,
        Err(e) => {
            errln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut state = StockState::default();
    let skus: Vec<&str> = lines.iter().map(|(_, (s, _, _))| s.as_str()).collect();
    // Read first for the offers' currency; a SKU without a price that does not read is read
    // again, and reported, by update_stock. A price without a known currency is never sent
    // (not as ""): the file is refused, nothing sent.
    let _ = inventory.read_stock(&skus, &mut state);
    let mut update = StockUpdate::new();
    for (n, (sku, quantity, price)) in &lines {
        update.set_quantity(sku, *quantity);
        if let Some(price) = price {
            match stock_currency(&state, sku) {
                Ok(currency) => {
                    update.set_price(sku, price, &currency);
                }
                Err(why) => {
                    bad += 1;
                    errln!(
                        "{}:{n}: SKU {}: the price {:?} not sent: {why}",
                        escaped(&file.display().to_string()),
                        escaped(sku),
                        escaped(price)
                    );
                }
            }
        }
    }
    if bad > 0 {
        errln!("{bad} line(s) refused; nothing was sent");
        return ExitCode::FAILURE;
    }
    let report = inventory.update_stock(&update, &mut state, &MemoryRevisions::default());
    let failed = report.failed;
    for sku in &report.applied {
        outln!("{}: updated", escaped(sku));
    }
    for sku in &report.unchanged {
        outln!("{}: unchanged, eBay holds it so", escaped(sku));
    }
    for (_, why) in &failed {
        outln!("{}", escaped(&why.to_string()));
    }
    errln!(
        "{} updated, {} unchanged, {} refused, in {} bulkUpdatePriceQuantity call(s)",
        report.applied.len(),
        report.unchanged.len(),
        failed.len(),
        report.calls
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
