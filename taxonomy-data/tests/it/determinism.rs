//! The generated tables are a pure function of the snapshots: regenerating them gives the
//! bytes this build compiled, and two generations are identical.

use std::path::PathBuf;

use marketplaces::Marketplace;
use taxonomy_codegen::build_script::generate_for;
use taxonomy_codegen::codegen::HEADER;

const COMPILED: &str = include_str!(concat!(env!("OUT_DIR"), "/taxonomy.rs"));

#[test]
fn regenerating_gives_the_compiled_bytes() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("snapshots");
    let sites = match std::env::var("TAXONOMY_SITES") {
        Ok(v) => taxonomy_codegen::build_script::parse_site_filter(&v).unwrap(),
        Err(_) => Marketplace::ALL.to_vec(),
    };
    let first = generate_for(&sites, &dir, Vec::new()).unwrap();
    let second = generate_for(&sites, &dir, Vec::new()).unwrap();
    assert!(
        first == second,
        "two generations from the same snapshots differ"
    );
    assert!(
        first == COMPILED,
        "the compiled tables differ from a fresh generation"
    );
    assert!(COMPILED.starts_with(HEADER));
    assert!(HEADER.contains("snapshot refresh"));
}
