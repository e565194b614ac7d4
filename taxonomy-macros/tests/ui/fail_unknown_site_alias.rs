// A common alias of a marketplace (the United Kingdom is EBAY_GB, not EBAY_UK), as a
// marketplace id and as a `Site` variant: the error names the site it meant.
use taxonomy_data::Site;
use taxonomy_macros::{aspects, category};

fn main() {
    let _ = Site::Gb;
    let _ = category!(EBAY_UK, "9355");
    let _ = category!(Site::Uk, "9355");
    let _ = aspects!(EBAY_UK, "179", { "Brand": "Dell" });
}
