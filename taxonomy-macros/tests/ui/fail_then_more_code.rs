// A failed `category!` is one error and nothing else: the code after it still type-checks
// against a `LeafCategory`, no "unreachable statement" warning points at the user's next line
// (the placeholder of the failed expansion does not diverge), and in a `const` the placeholder
// is not evaluated (no second error).
use taxonomy_data::LeafCategory;
use taxonomy_macros::category;

const PARENT: LeafCategory = category!("15032").leaf();

fn main() {
    let phones = category!("15032");
    println!("{} {}", phones.name(), PARENT.id());
}
