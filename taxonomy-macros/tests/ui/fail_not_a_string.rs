// The id must be a string literal.
use taxonomy_macros::category;

fn main() {
    let _ = category!(9355);
}
