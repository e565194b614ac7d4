// A listing of US 179 given a condition checked for US 9355 (Cell Phones & Smartphones):
// a compile error naming both, although 179's policy also takes NEW.
use marketplace_listing::ListingBuilder;
use taxonomy_macros::{aspects, category, condition};

fn main() {
    let _ = ListingBuilder::new(
        "DESKTOP-1",
        category!(EBAY_US, "179"),
        aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "MPN": "7010" }),
    )
    .condition(condition!(EBAY_US, "9355", NEW));
}
