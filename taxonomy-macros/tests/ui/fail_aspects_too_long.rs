// Model is at most 65 characters.
use taxonomy_macros::aspects;

fn main() {
    let _ = aspects!("179", {
        "Brand": "Dell",
        "Type": "Desktop",
        "Model": "OptiPlex 7010 Micro Form Factor Intel Core i5-13500T 16 GB RAM 512 GB SSD",
    });
}
