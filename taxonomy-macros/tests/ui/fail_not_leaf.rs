// A category with subcategories does not accept listings.
use taxonomy_macros::category;

fn main() {
    let _ = category!("15032");
}
