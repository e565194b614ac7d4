// A LeafCategory cannot be assembled by hand, bypassing the check.
use taxonomy_data::{LeafCategory, Site};

fn main() {
    let _ = LeafCategory { site: Site::Us, pos: 1 };
}
