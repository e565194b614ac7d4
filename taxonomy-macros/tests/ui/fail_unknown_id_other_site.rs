// An id that only another site has: the error names that site.
use taxonomy_macros::category;

fn main() {
    let _ = category!(EBAY_AU, "157119");
}
