// 27386's "Memory Type" is an aspect, not enabled for variations: refused on the axis, with
// the closest aspects that are.
use taxonomy_macros::variations;

fn main() {
    let _ = variations!(EBAY_US, "27386", { "Memory Type": ["DDR5", "DDR6"] });
}
