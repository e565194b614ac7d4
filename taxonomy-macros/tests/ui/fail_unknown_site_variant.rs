// A `Site::` path whose variant is not a marketplace.
use taxonomy_data::Site;
use taxonomy_macros::category;

fn main() {
    let _ = Site::De;
    let _ = category!(Site::Xx, "9355");
}
