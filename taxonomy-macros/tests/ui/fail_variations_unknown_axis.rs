// A misspelt axis is no aspect of the category: the closest aspects enabled for variations
// are named.
use taxonomy_macros::variations;

fn main() {
    let _ = variations!("27386", { "Memory Sise": ["8 GB", "16 GB"] });
}
