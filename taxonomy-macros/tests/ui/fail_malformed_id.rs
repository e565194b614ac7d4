// Neither an id nor a path.
use taxonomy_macros::category;

fn main() {
    let _ = category!("93a55");
}
