// A marketplace without a category tree here.
use taxonomy_macros::category;

fn main() {
    let _ = category!(EBAY_FR, "9355");
}
