// Listing code that takes a LeafCategory cannot be handed a bare id.
use taxonomy_data::LeafCategory;

fn list(_category: LeafCategory) {}

fn main() {
    list(9355);
}
