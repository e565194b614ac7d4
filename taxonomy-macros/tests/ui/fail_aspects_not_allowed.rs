// Type is selection-only: "Desktops" is not one of its values.
use taxonomy_macros::aspects;

fn main() {
    let _ = aspects!("179", { "Brand": "Dell", "Type": "Desktops" });
}
