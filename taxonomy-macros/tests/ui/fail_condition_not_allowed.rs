// A condition the category's policy does not allow names the ones it allows.
use taxonomy_macros::condition;

fn main() {
    // 9355 requires a condition, and USED_EXCELLENT is not one of its.
    let _ = condition!(EBAY_US, "9355", USED_EXCELLENT);
    // Gift Cards take no condition.
    let _ = condition!("Gift Cards & Coupons > Gift Cards", NEW);
}
