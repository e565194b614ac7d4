// A required aspect's name misspelt ("Tpye" for "Type"): the error that Type is missing says
// which name was meant, on that name, instead of a warning beside the error.
use taxonomy_macros::aspects;

fn main() {
    let _ = aspects!("179", { "Brand": "Dell", "Tpye": "Desktop" });
}
