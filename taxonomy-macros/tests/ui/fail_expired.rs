// An id the service retired and mapped to a replacement (getExpiredCategories): the error
// names the replacement and its path. (tests/ui.rs builds these cases against snapshots with
// the mapping 700001 → 9355 on EBAY_US.)
use taxonomy_macros::category;

fn main() {
    let _ = category!("700001");
}

fn _with_the_site() {
    let _ = category!(EBAY_US, "700001");
}
