//! `cargo run -p fake-marketplace -- [PORT] [--no-delay] [--trees DIR] [--expired FILE]…`:
//! starts the fake on 127.0.0.1 and prints its address and the environment a client needs,
//! then serves until killed.
//!
//! The full category tree is answered after a random 2 to 5 s, like the real service; pass
//! `--no-delay` to answer at once. `--trees DIR` serves the trees of `DIR` (`EBAY_FR.json`,
//! … in the snapshot format, any marketplace of the table: `--help` lists the file names)
//! instead of the repository's snapshots and the fake's own eBay Motors tree; a marketplace
//! without a file is answered as eBay answers an unknown tree. `--expired FILE` (repeatable)
//! serves the expired categories of a file in the format `snapshot refresh` writes beside a
//! snapshot (`EBAY_US.expired.json`), over the defaults (a made-up set for EBAY_US and
//! EBAY_MOTORS_US) or the files beside `--trees`.

use std::path::PathBuf;
use std::time::Duration;

use fake_marketplace::{FakeConfig, FakeMarketplace};

const USAGE: &str = "usage: fake-marketplace [PORT] [--no-delay] [--trees DIR] [--expired FILE]...";

fn usage_error(problem: &str) -> ! {
    eprintln!("{problem}\n{USAGE}");
    std::process::exit(2);
}

fn main() {
    let mut port = 0;
    let mut delay = Some((Duration::from_secs(2), Duration::from_secs(5)));
    let mut trees: Option<PathBuf> = None;
    let mut expired: Vec<PathBuf> = Vec::new();
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy();
        match text.as_ref() {
            "--no-delay" => delay = None,
            "--trees" => match args.next() {
                Some(dir) => trees = Some(dir.into()),
                None => usage_error("--trees needs a directory"),
            },
            "--expired" => match args.next() {
                Some(file) => expired.push(file.into()),
                None => usage_error("--expired needs a file"),
            },
            "-h" | "--help" => {
                use fake_marketplace::taxonomy::{
                    ERROR_TREE_NOT_FOUND, ERROR_UNKNOWN_MARKETPLACE, tree_file_names,
                };
                const INDENT: &str = "\n               ";
                let names: Vec<String> = tree_file_names()
                    .chunks(5)
                    .map(|line| line.join(" "))
                    .collect();
                println!("{USAGE}");
                println!(
                    "  PORT         the loopback port (default: any free one)\n  \
                     --no-delay   answer the full tree at once (default: after 2 to 5 s)\n  \
                     --trees DIR  serve the trees in DIR instead of the repository's snapshots:\
                     {INDENT}one file per marketplace in the snapshot format (what `snapshot\
                     {INDENT}refresh` writes), named one of:{INDENT}{}\
                     {INDENT}a marketplace without a file: 400 errorId {ERROR_TREE_NOT_FOUND} (tree not found),\
                     {INDENT}getDefaultCategoryTreeId 204; an unknown marketplace id: 400\
                     {INDENT}errorId {ERROR_UNKNOWN_MARKETPLACE}; with it, the EBAY_*.expired.json files\
                     {INDENT}beside the trees are served (getExpiredCategories)\n  \
                     --expired FILE  serve the expired categories of FILE (the format `snapshot\
                     {INDENT}refresh` writes beside a snapshot, e.g. EBAY_US.expired.json), checked\
                     {INDENT}against the tree served for its marketplace; repeatable. Default:\
                     {INDENT}a made-up set for EBAY_US and EBAY_MOTORS_US",
                    names.join(INDENT)
                );
                return;
            }
            p => match (
                p.strip_prefix("--trees="),
                p.strip_prefix("--expired="),
                p.parse::<u16>(),
            ) {
                (Some(dir), _, _) => trees = Some(dir.into()),
                (None, Some(file), _) => expired.push(file.into()),
                (None, None, Ok(p)) => port = p,
                (None, None, Err(_)) => usage_error(&format!("unknown argument {p:?}")),
            },
        }
    }
    let mut config = FakeConfig {
        tree_delay: delay,
        ..FakeConfig::default()
    };
    if let Some(dir) = &trees {
        config = config.with_trees(dir);
    }
    config.expired_files.extend(expired);
    let mut served = taxonomy_tree::snapshot::sites_in(&config.snapshots_dir);
    if let Some(defaults) = &config.defaults_dir {
        for site in taxonomy_tree::snapshot::sites_in(defaults) {
            if !served.contains(&site) {
                served.push(site);
            }
        }
    }
    let expired_files = config.expired_files.clone();
    let fake = match FakeMarketplace::start_on(port, config) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("cannot start the fake marketplace on port {port}: {e}");
            std::process::exit(1);
        }
    };
    println!("{}", fake.base_url());
    eprintln!("fake marketplace on {}", fake.base_url());
    let names: Vec<&str> = served.iter().map(|m| m.marketplace_id()).collect();
    eprintln!(
        "  trees: {} from {} (other marketplaces: tree not found, as eBay answers)",
        names.join(", "),
        match &trees {
            Some(dir) => dir.display().to_string(),
            None => "the repository's snapshots and the fake's eBay Motors tree (--trees DIR for your own)".into(),
        }
    );
    let expired_names: Vec<String> = expired_files
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    eprintln!(
        "  expired categories: {}",
        if expired_names.is_empty() {
            "none (getExpiredCategories: 204; --expired FILE)".to_owned()
        } else {
            expired_names.join(", ")
        }
    );
    eprintln!(
        "  taxonomy: getCategoryTree at {0}/commerce/taxonomy/v1/category_tree/0 (eBay's path \
         form), getDefaultCategoryTreeId, getCategorySuggestions, getCategorySubtree, \
         getItemAspectsForCategory, fetchItemAspects, getExpiredCategories, \
         getCompatibilityProperties and getCompatibilityPropertyValues; full tree delay: {1}",
        fake.base_url(),
        match delay {
            Some(_) => "2-5 s (--no-delay to turn off)",
            None => "none",
        }
    );
    eprintln!("point the snapshot tool (or any client) at it with:");
    eprintln!(
        "export MARKETPLACE_BASE_URL={0} MARKETPLACE_AUTH_URL={0} MARKETPLACE_CLIENT_ID={1} MARKETPLACE_CLIENT_SECRET={2}",
        fake.base_url(),
        fake.client_id(),
        fake.client_secret()
    );
    loop {
        std::thread::park();
    }
}
