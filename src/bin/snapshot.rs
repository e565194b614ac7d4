//! `cargo run --bin snapshot`: make, check and refresh the committed category-tree snapshots.
//!
//! ```text
//! snapshot import FILE… [--taken-at DATE] [--source TEXT] [--note TEXT] [--language TAG]
//! snapshot verify
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use marketplace_toolkit::clock::today_utc;
use marketplace_toolkit::decode::Provenance;
use marketplace_toolkit::pipeline::{self, Prepared};
use marketplace_toolkit::site::SiteId;
use marketplace_toolkit::snapshot;

/// Make, check and refresh the committed category-tree snapshots.
#[derive(Parser)]
#[command(name = "snapshot", version)]
struct Cli {
    /// The snapshots directory.
    #[arg(long, global = true, default_value = default_dir())]
    dir: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
        /// Validate and show the changes, but write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Load and validate every committed snapshot.
    Verify,
}

fn default_dir() -> &'static str {
    concat!(env!("CARGO_MANIFEST_DIR"), "/snapshots")
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode, String> {
    match cli.command {
        Command::Import {
            files,
            taken_at,
            source,
            note,
            language,
            dry_run,
        } => {
            let mut prepared = Vec::new();
            for file in &files {
                let body = std::fs::read(file).map_err(|e| format!("{}: {e}", file.display()))?;
                let origin = file.display().to_string();
                let file_name = file
                    .file_name()
                    .map_or(origin.clone(), |n| n.to_string_lossy().into_owned());
                // The language defaults to the site's; peek at the tree id to know the site.
                let site_language = peek_tree_id(&body)
                    .and_then(SiteId::from_tree_id)
                    .map(|s| s.language().to_string());
                let provenance = Provenance {
                    language: language
                        .clone()
                        .or(site_language)
                        .unwrap_or_else(|| "en-US".into()),
                    taken_at: taken_at.clone().unwrap_or_else(today_utc),
                    source: source
                        .clone()
                        .unwrap_or_else(|| format!("imported from {file_name}")),
                    note: note.clone(),
                };
                let p = pipeline::prepare(&body, &origin, &provenance, &cli.dir)
                    .map_err(|e| e.to_string())?;
                prepared.push(p);
            }
            // Every file decoded and validated: only now does anything touch the disk.
            for p in &prepared {
                report(p);
                if !dry_run {
                    pipeline::commit(p).map_err(|e| e.to_string())?;
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Verify => {
            let mut failed = false;
            for site in SiteId::ALL {
                let path = cli.dir.join(site.snapshot_file_name());
                match snapshot::read(&path) {
                    Ok(tree) => println!(
                        "{site}: {} categories, {} leaves, version {}, taken {}",
                        tree.len(),
                        tree.leaf_count(),
                        tree.meta.version,
                        tree.meta.taken_at
                    ),
                    Err(e) => {
                        failed = true;
                        eprintln!("error: {e}");
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

fn peek_tree_id(body: &[u8]) -> Option<u32> {
    #[derive(serde::Deserialize)]
    struct Peek {
        #[serde(rename = "categoryTreeId")]
        id: Option<serde_json::Value>,
    }
    let peek: Peek = serde_json::from_slice(body).ok()?;
    peek.id?.as_str()?.parse().ok()
}

fn report(p: &Prepared) {
    println!(
        "{}: {} categories, {} leaves, version {} → {}",
        p.site,
        p.tree.len(),
        p.tree.leaf_count(),
        p.tree.meta.version,
        p.path
            .file_name()
            .map_or(String::new(), |n| n.to_string_lossy().into_owned())
    );
    if let Some(e) = &p.previous_error {
        println!("  the previous snapshot was unreadable ({e}); it is replaced");
    }
    match (&p.diff, p.changed) {
        (_, false) => println!("  unchanged"),
        (Some(d), true) => {
            for line in d.to_string().lines() {
                println!("  {line}");
            }
        }
        (None, true) => println!("  new snapshot"),
    }
}
