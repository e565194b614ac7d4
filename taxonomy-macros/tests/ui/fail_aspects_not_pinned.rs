// 9355 is a leaf, but its aspects are not pinned.
use taxonomy_macros::aspects;

fn main() {
    let _ = aspects!(EBAY_US, "9355", { "Brand": "Apple" });
}
