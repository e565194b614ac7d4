// A marketplace id that is not in the table.
use taxonomy_macros::category;

fn main() {
    let _ = category!(EBAY_XX, "9355");
}
