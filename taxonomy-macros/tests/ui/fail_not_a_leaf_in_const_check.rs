// The const check also refuses a non-leaf on its own (the program's tables disagree with the
// macro's).
use taxonomy_data::{LeafCategory, Site};

const PARENT: LeafCategory = LeafCategory::__checked_by_macro(Site::Us, 15032, Site::Us.fingerprint());

fn main() {
    let _ = PARENT;
}
