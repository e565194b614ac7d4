// A listing of US 177 (PC Laptops & Netbooks) given the aspects checked for US 179 (PC
// Desktops & All-In-Ones): a compile error naming both, not a problem found at run time.
use marketplace_listing::ListingBuilder;
use taxonomy_macros::{aspects, category};

fn main() {
    let _ = ListingBuilder::new(
        "LAPTOP-1",
        category!(EBAY_US, "177"),
        aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "MPN": "7010" }),
    );
}
