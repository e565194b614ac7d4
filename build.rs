//! taxonomy-data's build script (the card's top-level `build.rs`): turns the committed
//! snapshots into perfect-hash tables in `OUT_DIR/taxonomy.rs`. All the work is in
//! `marketplace_toolkit::build_script`, where it is tested.

fn main() {
    if let Err(e) = marketplace_toolkit::build_script::run() {
        eprintln!("error: taxonomy-data cannot generate its tables: {e}");
        std::process::exit(1);
    }
}
