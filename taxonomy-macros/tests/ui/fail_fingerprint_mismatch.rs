// What `category!` expands to, with the fingerprint of another tree than the one compiled in
// (as when the macro's build of taxonomy-data and the program's saw different trees): the
// const check fails the build and says why.
use taxonomy_data::{LeafCategory, Site};

const PHONES: LeafCategory = LeafCategory::__checked_by_macro(Site::Us, 9355, 0xdead_beef);

fn main() {
    let _ = PHONES;
}
