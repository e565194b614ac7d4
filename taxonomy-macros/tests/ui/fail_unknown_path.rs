// A path with a typo: close paths are suggested.
use taxonomy_macros::category;

fn main() {
    let _ = category!("Cell Phones & Accessories > Cell Phone & Smartphones");
}
