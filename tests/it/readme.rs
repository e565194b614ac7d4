//! The README's copy of the marketplace table is the table in `crates/marketplaces`, row for
//! row: a marketplace added there without the README (or the other way round) fails here.

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
