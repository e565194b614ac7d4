// Brand is not allowed as a variation specific.
use taxonomy_macros::variations;

fn main() {
    let _ = variations!("27386", { "Brand": ["ASUS", "MSI"] });
}
