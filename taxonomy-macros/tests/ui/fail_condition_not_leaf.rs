// The category takes what `category!` takes, with its errors.
use taxonomy_macros::condition;

fn main() {
    let _ = condition!(EBAY_US, "15032", NEW);
}
