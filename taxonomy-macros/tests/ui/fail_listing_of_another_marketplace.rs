// A listing of EBAY_GB 179 given the aspects checked for EBAY_US 179 (the same id, another
// marketplace's tree and rules): a compile error naming both.
use marketplace_listing::ListingBuilder;
use taxonomy_macros::{aspects, category};

fn main() {
    let _ = ListingBuilder::new(
        "DESKTOP-GB-1",
        category!(EBAY_GB, "179"),
        aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "MPN": "7010" }),
    );
}
