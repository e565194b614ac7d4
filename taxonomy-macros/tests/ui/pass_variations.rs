// The axes of a listing with variations of EBAY_US 27386 (Graphics/Video Cards), checked
// against eBay's answer pinned by tests/ui.rs, as the group's variesBy.
use marketplace_listing::VariesBy;
use taxonomy_data::aspects::Variations;
use taxonomy_data::typed::{Checked, EBAY_US, In};
use taxonomy_macros::variations;

// In a const item too.
const CARDS: Checked<In<EBAY_US, 27386>, Variations> = variations!(EBAY_US, "27386", {
    // The category's spelling is kept: "memory size" is its "Memory Size".
    "memory size": ["8 GB", "16 GB", "24 GB"],
    "Cooling Component Included": ["Fan with Heatsink", "Water Cooler"],
});

fn main() {
    let cards: Variations = CARDS.into_inner();
    assert_eq!(cards.category_id(), 27386);
    assert_eq!(cards.marketplace_id(), "EBAY_US");
    assert_eq!(cards.values_of("Memory Size"), Some(&["8 GB", "16 GB", "24 GB"][..]));
    // A free-text axis takes values beyond its suggested ones; the site defaults to EBAY_US.
    let custom = variations!("27386", { "Chipset/GPU Model": ["NVIDIA GeForce RTX 5090 (custom)"] });
    assert_eq!(custom.into_inner().axes()[0].0, "Chipset/GPU Model");

    let varies_by = VariesBy::from(CARDS.into_inner());
    assert_eq!(varies_by.specifications.len(), 2);
    assert_eq!(varies_by.specifications[0].name, "Memory Size");
    assert_eq!(varies_by.specifications[0].values, ["8 GB", "16 GB", "24 GB"]);
    assert_eq!(varies_by.specifications[1].name, "Cooling Component Included");
    assert_eq!(varies_by.specifications[1].values, ["Fan with Heatsink", "Water Cooler"]);
}
