// An axis named twice, and a value given twice.
use taxonomy_macros::variations;

fn main() {
    let _ = variations!("27386", {
        "Memory Size": ["8 GB", "8 gb"],
        "MEMORY SIZE": ["16 GB"],
    });
}
