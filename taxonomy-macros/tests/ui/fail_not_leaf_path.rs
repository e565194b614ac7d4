// The same rule by path, on another site.
use taxonomy_macros::category;

fn main() {
    let _ = category!(EBAY_DE, "Handys & Kommunikation");
}
