// An empty literal.
use taxonomy_macros::category;

fn main() {
    let _ = category!("");
}
