// A typed listing whose category, aspects and condition were each checked at compile time
// for the same marketplace and category (US 179, whose policy tests/ui.rs writes: NEW,
// USED_GOOD), and a plain `Condition` (checked by `build`) still taken.
use marketplace_listing::{Condition, ListingBuilder};
use taxonomy_macros::{aspects, category, condition};

fn main() {
    let listing = ListingBuilder::new(
        "DESKTOP-1",
        category!(EBAY_US, "179"),
        aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "MPN": "7010" }),
    )
    .title("Dell OptiPlex 7010")
    .condition(condition!(EBAY_US, "179", USED_GOOD))
    .quantity(3)
    .price("149.00")
    .policies("f", "p", "r")
    .merchant_location_key("warehouse-1")
    .image("https://example.com/1.jpg")
    .description("A desktop.")
    .build()
    .unwrap();
    assert_eq!(listing.inventory_item.condition, Some(Condition::UsedGood));
    assert_eq!(listing.offer.category_id.as_deref(), Some("179"));

    // The same category written by path: the same type.
    let by_path = ListingBuilder::new(
        "DESKTOP-2",
        category!("Computers/Tablets & Networking > Desktops & All-In-Ones > PC Desktops & All-In-Ones"),
        aspects!(EBAY_US, "179", { "Brand": "Dell", "Type": "Desktop", "MPN": "7010" }),
    )
    .condition(Condition::New);
    let _ = by_path;
}
