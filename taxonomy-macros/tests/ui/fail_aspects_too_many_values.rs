// Type takes one value.
use taxonomy_macros::aspects;

fn main() {
    let _ = aspects!("179", { "Brand": "Dell", "Type": ["Desktop", "Tower"] });
}
