// Warnings, never errors: an aspect 179 does not know (eBay takes custom ones), a name given
// twice, and MPN, required from a date and missing; the error here is the missing Type.
use taxonomy_macros::aspects;

fn main() {
    let _ = aspects!("179", { "Brand": "Dell", "brand": "Dell", "Color": "Black" });
}
