// A marketplace of the table whose tree is not compiled in (no snapshot of France is
// committed): a valid site, with a message that says how to get its snapshot.
use taxonomy_macros::category;

fn main() {
    let _ = category!(EBAY_FR, "9355");
}
