//! taxonomy-data built from a snapshots directory with a listing-structure file (issue 50,
//! getListingStructurePolicies' `variationsSupported`): every leaf answers what its file says
//! (true, false, or `None` for a leaf the file leaves out and for a site without a file), in
//! one bit a category; the listing check refuses a group in a category that takes no
//! variations, offline; a malformed file fails the build naming it; the generated tables are
//! the same bytes for the same snapshots.

use std::path::Path;

use marketplaces::Marketplace;
use taxonomy_codegen::build_script::generate_for;
use taxonomy_tree::structure::{self, StructureFile};
use taxonomy_tree::tree::CategoryTree;

use crate::common;

/// Graphics/Video Cards: the listing fixtures' group category, made "no variations" here.
const NO_VARIATIONS: u32 = 27386;
/// Cell Phones & Smartphones, made "variations" here.
const VARIATIONS: u32 = 9355;

/// A snapshots directory with the committed US and GB trees.
fn us_and_gb(dir: &Path) {
    for site in [Marketplace::Us, Marketplace::Gb] {
        let name = site.snapshot_file_name();
        std::fs::copy(common::snapshots_dir().join(name), dir.join(name)).unwrap();
    }
}

/// Writes `EBAY_US.structure.json` beside the US tree of `dir` as the refresh does
/// (`structure::from_answer`, marked made up): in tree order, one leaf in three takes
/// variations, one does not, and one is left out of the answer (unless `every_leaf`: then
/// it does not either); [`NO_VARIATIONS`] does not and [`VARIATIONS`] does, whatever their
/// turn.
fn write_us_structure(dir: &Path, every_leaf: bool) -> (CategoryTree, StructureFile) {
    let snapshot = dir.join(Marketplace::Us.snapshot_file_name());
    let tree = taxonomy_tree::snapshot::read(&snapshot).unwrap();
    let answer: Vec<(u32, bool)> = tree
        .categories
        .iter()
        .filter(|c| c.leaf && c.id != 0)
        .enumerate()
        .filter_map(|(i, c)| match c.id {
            NO_VARIATIONS => Some((c.id, false)),
            VARIATIONS => Some((c.id, true)),
            _ => (every_leaf || i % 3 != 2).then_some((c.id, i % 3 == 0)),
        })
        .collect();
    let path = structure::path_beside(&snapshot);
    let (file, left_out) = structure::from_answer(
        answer,
        &tree,
        "made up by tests/it/compiled_structure.rs",
        true,
        &path,
    )
    .unwrap();
    assert_eq!(left_out, structure::LeftOut::default());
    std::fs::write(&path, structure::to_string(&file)).unwrap();
    (tree, file)
}

/// The probe: per compiled-in site a header line, per leaf its id and
/// `variations_supported` (`-`: `None`); then each group file named on its command line
/// through `check_group` over the compiled-in catalog, one line a problem.
const PROBE_MAIN: &str = r#"
use std::collections::HashSet;
use marketplace_listing::{CompiledIn, ListingFile, check_group};
use taxonomy_data::Site;

fn main() {
    for site in Site::compiled_in() {
        println!(
            "site {} {} {} {}",
            site,
            site.has_structure_policies(),
            site.category_count(),
            site.structure_table_bytes()
        );
        for leaf in site.leaves() {
            let v = match leaf.variations_supported() {
                Some(true) => "true",
                Some(false) => "false",
                None => "-",
            };
            println!("{}\t{v}", leaf.id());
        }
    }
    for path in std::env::args().skip(1) {
        let text = std::fs::read_to_string(&path).unwrap();
        let Ok(ListingFile::Group(group)) = ListingFile::from_json(&text) else {
            panic!("{path}: not a group file");
        };
        println!("group {path}");
        for p in check_group(&group, &CompiledIn, &HashSet::new()) {
            println!("problem {p}");
        }
    }
}
"#;

/// The listing fixtures' group (Graphics/Video Cards) with every variant in `category`.
fn group_in(category: u32, path: &Path) {
    let fixture = common::root().join("tests/fixtures/listings/graphics-cards-group.json");
    let mut group: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture).unwrap()).unwrap();
    for variant in group["variants"].as_array_mut().unwrap() {
        variant["offer"]["categoryId"] = serde_json::json!(category.to_string());
    }
    std::fs::write(path, group.to_string()).unwrap();
}

/// The committed US and GB trees; a listing-structure file for US naming two leaves in three
/// (made up by the test, deterministically); GB without one. Built outside the workspace
/// against that directory: every US leaf answers `variations_supported()` as the file says
/// (`None` for the leaves it leaves out), every GB leaf `None`; the policies cost at most one
/// bit a category, plus four bytes a leaf left out; the build warns that they are made up;
/// and `check_group` over the compiled-in catalog refuses a group in a category that takes
/// no variations, and says nothing of it in one that does.
#[test]
fn compiled_structure_policies_answer_true_false_or_none_and_refuse_a_group_offline() {
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path().canonicalize().unwrap();
    us_and_gb(&dir);
    let (tree, file) = write_us_structure(&dir, false);
    let groups = tempfile::tempdir().unwrap();
    let refused = groups.path().join("no-variations.json");
    let accepted = groups.path().join("variations.json");
    group_in(NO_VARIATIONS, &refused);
    group_in(VARIATIONS, &accepted);

    let project = tempfile::tempdir().unwrap();
    let _turn = common::outside_probes_turn();
    let target = common::outside_probes_target();
    let listing = common::root().join("crates/marketplace-listing");
    common::write_outside_crate(
        project.path(),
        "structure-probe",
        &format!(
            "[dependencies]\ntaxonomy-data = {{ path = {{data}} }}\nmarketplace-listing = {{ path = {:?}, default-features = false }}\n",
            listing.display().to_string()
        ),
        PROBE_MAIN,
    );
    let snapshots = dir.display().to_string();
    let build = common::build_outside_crate(
        project.path(),
        &target,
        &[("TAXONOMY_SNAPSHOTS_DIR", &snapshots)],
    );
    let stderr = String::from_utf8_lossy(&build.stderr).into_owned();
    assert!(build.status.success(), "{stderr}");
    assert!(
        stderr.contains("EBAY_US.structure.json: listing-structure policies made up by the fake marketplace (source made up by tests/it/compiled_structure.rs); never commit them as the marketplace's rules"),
        "{stderr}"
    );
    let run = std::process::Command::new(target.join("debug/structure-probe"))
        .arg(&refused)
        .arg(&accepted)
        .output()
        .unwrap();
    let (stdout, stderr) = common::output_text(&run);
    assert!(run.status.success(), "{stderr}");

    let mut site = None;
    let (mut counts, mut header) = ([0_usize; 3], Vec::new());
    let mut problems: Vec<(String, String)> = Vec::new();
    let mut group = String::new();
    for line in stdout.lines() {
        if let Some(h) = line.strip_prefix("site ") {
            let f: Vec<&str> = h.split(' ').collect();
            site = Some(Marketplace::parse(f[0]).unwrap());
            header.push(f.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        } else if let Some(path) = line.strip_prefix("group ") {
            group = path.to_owned();
        } else if let Some(p) = line.strip_prefix("problem ") {
            problems.push((group.clone(), p.to_owned()));
        } else {
            let (id, v) = line.split_once('\t').unwrap();
            let id: u32 = id.parse().unwrap();
            let want = match site.unwrap() {
                Marketplace::Us => file.variations_supported(id),
                _ => None,
            };
            let got = match v {
                "true" => Some(true),
                "false" => Some(false),
                _ => None,
            };
            assert_eq!(got, want, "{:?} leaf {id}", site);
            if site == Some(Marketplace::Us) {
                counts[match got {
                    Some(true) => 0,
                    Some(false) => 1,
                    None => 2,
                }] += 1;
            }
        }
    }
    assert_eq!(header.len(), 2, "{stdout}");
    let us = header.iter().find(|h| h[0] == "EBAY_US").unwrap();
    let gb = header.iter().find(|h| h[0] == "EBAY_GB").unwrap();
    assert_eq!((us[1].as_str(), gb[1].as_str()), ("true", "false"));
    assert_eq!(gb[3], "0", "no file, no byte");
    assert!(counts.iter().all(|&n| n > 1000), "{counts:?}");
    assert_eq!(counts[0] + counts[1], file.category_count());
    assert_eq!(counts[0] + counts[1] + counts[2], tree.leaf_count());
    let categories: usize = us[2].parse().unwrap();
    let bytes: usize = us[3].parse().unwrap();
    let left_out = counts[2];
    println!(
        "EBAY_US: {categories} categories, {left_out} leaves left out: {bytes} bytes of listing-structure tables ({:.3} bits a category)",
        bytes as f64 * 8.0 / categories as f64
    );
    let words = (categories + 1).div_ceil(64) * 8;
    assert!(bytes <= words + (4 * left_out).min(words), "{bytes} bytes");

    let refused = refused.display().to_string();
    let said = "variants[0].offer.categoryId: the category does not take variations (getListingStructurePolicies: variationsSupported false)";
    assert!(
        problems.iter().any(|(g, p)| *g == refused && p == said),
        "{problems:?}"
    );
    assert!(
        !problems
            .iter()
            .any(|(g, p)| *g != refused && p.contains("does not take variations")),
        "{problems:?}"
    );
}

/// The US tables generated (in process, as the build script does) from a directory with a
/// listing-structure file naming every leaf: one bit a category (a `variations` word per 64
/// positions) and nothing more, the same bytes each time; without the file, no word at all.
#[test]
fn a_structure_file_is_generated_into_one_bit_a_category_identically_each_time() {
    let dir = tempfile::tempdir().unwrap();
    us_and_gb(dir.path());
    let without = generate_for(&[Marketplace::Us], dir.path(), Vec::new()).unwrap();
    let (tree, _) = write_us_structure(dir.path(), true);
    let first = generate_for(&[Marketplace::Us], dir.path(), Vec::new()).unwrap();
    let second = generate_for(&[Marketplace::Us], dir.path(), Vec::new()).unwrap();
    assert!(first == second, "two generations differ");

    let us = |code: &str| {
        let start = code.find("pub(crate) static US: SiteTables").unwrap();
        let end = start + code[start..].find("\n};\n").unwrap();
        code[start..end].to_owned()
    };
    let (with, without) = (us(&first), us(&without));
    assert!(
        with.contains("    structure_source: Some(\"made up by tests/it/compiled_structure.rs\"),"),
        "{}",
        &with[with.len().saturating_sub(500)..]
    );
    assert!(without.contains(
        "    structure_source: None,\n    variations: &[],\n    variations_unknown: crate::UnknownLeaves::Positions(&[]),"
    ));
    let words = with
        .split("    variations: &[")
        .nth(1)
        .unwrap()
        .split("],")
        .next()
        .unwrap()
        .matches("0x")
        .count();
    assert_eq!(words, tree.categories.len().div_ceil(64));
    // Every leaf named: nothing more than the one bit a category.
    assert!(
        with.contains("    variations_unknown: crate::UnknownLeaves::Positions(&[]),"),
        "{}",
        &with[with.len().saturating_sub(300)..]
    );
    println!(
        "EBAY_US, every leaf named: {} categories, {} bytes of listing-structure tables",
        tree.categories.len(),
        8 * words
    );
}

/// A listing-structure file naming a category that is not a leaf of the tree, or that is not
/// JSON, fails the build with an error naming the file (and the category).
#[test]
fn a_malformed_structure_file_fails_the_build_naming_the_file_and_the_category() {
    let dir = tempfile::tempdir().unwrap();
    us_and_gb(dir.path());
    let (tree, file) = write_us_structure(dir.path(), false);
    let path = structure::path_beside(&dir.path().join("EBAY_US.json"));
    let parent = tree
        .categories
        .iter()
        .find(|c| !c.leaf && c.id != 0)
        .unwrap()
        .id;
    let mut bad = file.clone();
    bad.not_supported.push(parent);
    bad.not_supported.sort_unstable();
    std::fs::write(&path, structure::to_string(&bad)).unwrap();
    let e = generate_for(&[Marketplace::Us], dir.path(), Vec::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "{}: category {parent} is not a leaf of the tree (rule: a policy is a leaf's)",
            path.display()
        )),
        "{e}"
    );
    assert!(e.contains("getListingStructurePolicies"), "{e}");

    std::fs::write(&path, "{\"format\": 1,").unwrap();
    let e = generate_for(&[Marketplace::Us], dir.path(), Vec::new())
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "{}: not a valid listing-structure file",
            path.display()
        )),
        "{e}"
    );
}
