// Release Year is a NUMBER of format int32.
use taxonomy_macros::aspects;

fn main() {
    let _ = aspects!("179", { "Brand": "Dell", "Type": "Desktop", "Release Year": "2023.5" });
}
