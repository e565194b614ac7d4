// An id the site does not have: close ids are suggested.
use taxonomy_macros::category;

fn main() {
    let _ = category!("93555");
}
