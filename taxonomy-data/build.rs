//! taxonomy-data's build script (the card's top-level `build.rs`; `taxonomy-data/build.rs`
//! links here): turns the committed snapshots into perfect-hash tables in
//! `OUT_DIR/taxonomy.rs`. All the work is in `taxonomy_codegen::build_script`, where it is
//! tested.

fn main() {
    if let Err(e) = taxonomy_codegen::build_script::run() {
        eprintln!("error: taxonomy-data cannot generate its tables: {e}");
        std::process::exit(1);
    }
}
