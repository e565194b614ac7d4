// A leaf whose condition policy is not known is an error that says how to get it.
use taxonomy_macros::condition;

fn main() {
    // The US file does not name 111418.
    let _ = condition!(EBAY_US, "111418", NEW);
    // EBAY_GB has no condition-policy file at all.
    let _ = condition!(EBAY_GB, "9355", NEW);
}
