//! Every command that takes a site reads it with the one parser of site names
//! (`marketplaces::Marketplace::parse`): the same forms everywhere (`EBAY_DE`, `de`, `77`), and
//! a name it refuses comes with the closest marketplace (`EBAY_UK`: did you mean EBAY_GB
//! (United Kingdom)?). The commands are run as built; a refused site stops each before it
//! reads credentials or asks the service, so no fake is needed.

use crate::common;

use std::process::Command;

fn snapshot(args: &[&str]) -> Command {
    let mut command = common::clean_command(env!("CARGO_BIN_EXE_snapshot"));
    command
        .arg("--dir")
        .arg(common::snapshots_dir())
        .args(args)
        .env("MARKETPLACE_BASE_URL", "http://127.0.0.1:9");
    command
}

/// The suggestion a refused `EBAY_UK` must carry.
const SUGGESTION: &str = "did you mean EBAY_GB (United Kingdom)?";

#[test]
fn ebay_uk_suggests_ebay_gb_in_every_command_that_takes_a_site() {
    let dir = tempfile::tempdir().unwrap();
    let listing = dir.path().join("listing.json");
    std::fs::write(&listing, "{}").unwrap();
    let listing = listing.to_str().unwrap();
    let aspects_dir = dir.path().to_str().unwrap();
    let commands: [&[&str]; 5] = [
        &["search", "--site", "EBAY_UK", "graphics card"],
        &["refresh", "--sites", "EBAY_US,EBAY_UK", "--dry-run"],
        &[
            "aspects",
            "refresh",
            "--sites",
            "EBAY_UK",
            "--aspects-dir",
            aspects_dir,
        ],
        &[
            "aspects",
            "check",
            "--site",
            "EBAY_UK",
            "--category",
            "9355",
            "--offline",
            "--aspects-dir",
            aspects_dir,
            listing,
        ],
        &["aspects", "pin", "--site", "EBAY_UK", "--category", "9355"],
    ];
    for args in commands {
        let output = snapshot(args).output().unwrap();
        let (_, stderr) = common::output_text(&output);
        assert!(
            !output.status.success(),
            "snapshot {args:?} accepted EBAY_UK"
        );
        assert!(
            stderr.contains("\"EBAY_UK\"") && stderr.contains(SUGGESTION),
            "snapshot {args:?} refuses EBAY_UK without suggesting EBAY_GB: {stderr}"
        );
    }
}

#[test]
fn every_command_takes_the_same_forms_of_a_site() {
    // `refresh --sites de` was accepted while `search --site de` was refused.
    for site in ["de", "EBAY_DE", "ebay_de", "77"] {
        let output = snapshot(&["search", "--site", site, "handy"])
            .output()
            .unwrap();
        let (stdout, stderr) = common::output_text(&output);
        assert!(
            output.status.success() && stderr.contains("EBAY_DE"),
            "search --site {site}: {stderr}"
        );
        assert!(stdout.contains("9355"), "search --site {site}: {stdout}");
    }
}

#[test]
fn search_does_not_name_a_snapshots_directory_it_does_not_read() {
    let output = snapshot(&["search", "--site", "EBAY_GB", "graphics card"])
        .output()
        .unwrap();
    let (_, stderr) = common::output_text(&output);
    assert!(output.status.success(), "{stderr}");
    let shown = common::snapshots_dir().display().to_string();
    assert!(
        !stderr.contains("snapshots:") && !stderr.contains(&shown),
        "search names the snapshots directory, which it does not read: {stderr}"
    );
    assert!(stderr.contains("compiled into this command"), "{stderr}");
}
