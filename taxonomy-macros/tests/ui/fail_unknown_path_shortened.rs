// A path whose middle name is shortened ("Action Figures" for "Action Figures & Accessories")
// and whose last name does not exist: the walk finds the longest prefix that exists, completes
// the shortened name among its children and suggests where the path leads.
use taxonomy_macros::category;

fn main() {
    let _ = category!("Toys & Hobbies > Action Figures > Fantasy Figure");
}
