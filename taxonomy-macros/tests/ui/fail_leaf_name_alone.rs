// A leaf name alone is not a path (leaf names repeat): the full paths are suggested.
use taxonomy_macros::category;

fn main() {
    let _ = category!("Cell Phones & Smartphones");
}
