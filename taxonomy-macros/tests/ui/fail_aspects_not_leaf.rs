// The category is checked as category! checks it.
use taxonomy_macros::aspects;

fn main() {
    let _ = aspects!("15032", { "Brand": "Apple" });
}
