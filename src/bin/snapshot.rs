//! `cargo run --bin snapshot`: make and refresh the committed category-tree snapshots.
fn main() {}
