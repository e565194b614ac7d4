// aspects! with literals only (an `Aspects`), and with expressions (a `Result`, checked at run
// time against the same pinned rules), in every site and category form category! takes.
use taxonomy_data::Site;
use taxonomy_data::typed::{Checked, EBAY_US, In};
use taxonomy_data::aspects::{Aspects, AspectsError, ListingAspects, Problem};
use taxonomy_macros::aspects;

fn main() {
    let plain: Checked<In<EBAY_US, 179>, Aspects> = aspects!(EBAY_US, "179", {
        "Brand": "Dell",
        "Type": "Desktop",
        "Features": ["Bluetooth", "Wi-Fi"],
        "Operating System": "Windows 11",
        "Operating System Edition": "Pro",
        "Release Year": "2023",
        // Not an aspect of 179: eBay accepts custom aspects.
        "Colour": "Black",
    });
    assert_eq!(plain.marketplace_id(), "EBAY_US");
    assert_eq!(plain.category_id(), 179);
    let listing: ListingAspects = plain.into();
    assert_eq!(listing.values("Type").unwrap(), ["Desktop"]);

    let by_path = aspects!(Site::Us, "Computers/Tablets & Networking > Desktops & All-In-Ones > PC Desktops & All-In-Ones", {
        "brand": "dell", "TYPE": "desktop", "Features": [],
    });
    assert_eq!(by_path.category_id(), 179);

    let model = String::from("OptiPlex 7010");
    let year = "2024";
    let ok: Result<Checked<In<EBAY_US, 179>, Aspects>, AspectsError> =
        aspects!("179", { "Brand": "Dell", "Type": "Desktop", "Model": model, "Release Year": year });
    assert!(ok.is_ok());
    let untyped: Aspects = ok.unwrap().into_inner();
    assert_eq!(untyped.category_id(), 179);

    let features = vec!["Bluetooth".to_string()];
    let edition = "Home";
    let refused = aspects!("179", {
        "Brand": "Dell",
        "Type": "Tower",
        "Features": features,
        "Operating System": "macOS",
        "Operating System Edition": edition,
    });
    let problems = refused.unwrap_err().problems;
    assert!(matches!(&problems[0], Problem::ConstraintNotMet { aspect, .. } if aspect == "Operating System Edition"));
}
