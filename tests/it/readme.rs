//! The README's copy of the marketplace table is the table in `crates/marketplaces`, row for
//! row: a marketplace added there without the README (or the other way round) fails here. Its
//! table of crates names every package of the workspace, with its directory.

use crate::common;

use marketplaces::Marketplace;

#[test]
fn the_readmes_marketplace_table_is_the_code_s() {
    let readme = std::fs::read_to_string(common::root().join("README.md")).unwrap();
    let mut expected = String::from(
        "| marketplace | default tree | language | currency | `Site` | name |\n|---|---|---|---|---|---|\n",
    );
    for m in Marketplace::ALL {
        let tree = match m.other_tree() {
            Some((language, tree)) => format!("{} ({language}: {tree})", m.tree_id()),
            None => m.tree_id().to_string(),
        };
        expected.push_str(&format!(
            "| `{}` | {tree} | {} | {} | `Site::{}` | {} |\n",
            m.marketplace_id(),
            m.default_language(),
            m.currency(),
            m.variant(),
            m.name()
        ));
    }
    assert!(
        readme.contains(&expected),
        "README.md lacks this table (in \"Every marketplace, one table\"):\n{expected}"
    );
}

#[test]
fn the_readmes_crate_table_names_every_package_with_its_directory() {
    let root = common::root();
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let header = "| package (`-p`) | directory | for |\n|---|---|---|\n";
    let table =
        &readme[readme.find(header).expect("README.md: the table of crates") + header.len()..];
    let listed: Vec<(String, String)> = table
        .lines()
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            let cells: Vec<&str> = line.split(" | ").collect();
            let cell = |i: usize| {
                cells[i]
                    .trim_start_matches("| ")
                    .trim_matches('`')
                    .to_string()
            };
            (cell(0), cell(1))
        })
        .collect();
    let mut packages: Vec<(String, String)> = crate::module_cycles::packages(&root)
        .iter()
        .map(|dir| {
            let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
            let name = manifest
                .lines()
                .find_map(|l| l.strip_prefix("name = \""))
                .and_then(|l| l.strip_suffix('"'))
                .unwrap_or_else(|| panic!("{}: no package name", dir.display()))
                .to_string();
            let relative = dir.strip_prefix(&root).unwrap().display().to_string();
            let relative = if relative.is_empty() { "." } else { &relative };
            (name, format!("{relative}/"))
        })
        .collect();
    packages.sort();
    let mut listed = listed;
    listed.sort();
    assert_eq!(
        listed, packages,
        "README.md's table of crates (\"The crates\") against the workspace's packages"
    );
}
