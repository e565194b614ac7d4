// Operating System Edition "Pro" is allowed only with Operating System Windows 11 or 10.
use taxonomy_macros::aspects;

fn main() {
    let _ = aspects!("179", {
        "Brand": "Dell",
        "Type": "Desktop",
        "Operating System": "macOS",
        "Operating System Edition": "Pro",
    });
}
