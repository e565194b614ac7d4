// A path with an empty name.
use taxonomy_macros::category;

fn main() {
    let _ = category!("Cell Phones & Accessories > > Cell Phones & Smartphones");
}
