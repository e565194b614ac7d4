// A path whose leaf is named nearly right ("Graphics Cards" for "Graphics/Video Cards"): the
// error suggests the leaves under the deepest category that matched, 27386 first.
use taxonomy_macros::category;

fn main() {
    let _ = category!(
        EBAY_GB,
        "Computers/Tablets & Networking > Computer Components & Parts > Graphics Cards"
    );
}
