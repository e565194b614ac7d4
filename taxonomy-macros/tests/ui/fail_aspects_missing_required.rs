// 179 requires Brand and Type.
use taxonomy_macros::aspects;

fn main() {
    let _ = aspects!("179", { "Features": ["Bluetooth"] });
}
