// 179's Type is selection-only and, like every aspect of 179, not enabled for variations:
// both refused, the value with the closest allowed values.
use taxonomy_macros::variations;

fn main() {
    let _ = variations!("179", { "Type": ["Desktp", "Tower"] });
}
