// Every accepted form of `category!`, on every site, in const items and expressions.
use taxonomy_data::typed::{Checked, EBAY_DE, In};
use taxonomy_data::{LeafCategory, Site};
use taxonomy_macros::category;

const US_BY_ID: LeafCategory = category!("9355").leaf();
const US_EXPLICIT: LeafCategory = category!(EBAY_US, "9355").leaf();
const US_BY_PATH: LeafCategory = category!("Cell Phones & Accessories > Cell Phones & Smartphones").leaf();
const GB_BY_ID: LeafCategory = category!(EBAY_GB, "9355").leaf();
const DE_BY_PATH: LeafCategory = category!(EBAY_DE, "Handys & Kommunikation > Handys & Smartphones").leaf();
const AU_BY_ID: LeafCategory = category!(EBAY_AU, "9355",).leaf();
const DE_BY_VARIANT: LeafCategory = category!(Site::De, "9355").leaf();
const GB_BY_FULL_PATH: LeafCategory = category!(::taxonomy_data::Site::Gb, "9355").leaf();
// The site as the commands take it too: the marketplace id without `EBAY_`.
const GB_SHORT: LeafCategory = category!(GB, "9355").leaf();
static IN_A_STATIC: LeafCategory = category!("  9355 ").leaf();
// The value itself carries its marketplace and category in its type.
const TYPED: Checked<In<EBAY_DE, 9355>, LeafCategory> = category!(EBAY_DE, "9355");

fn main() {
    // Loose white space around `>` and inside names is accepted.
    let loose = category!("Cell Phones & Accessories>  Cell Phones &   Smartphones");
    assert_eq!(loose, US_BY_ID);
    assert_eq!(US_BY_ID, US_EXPLICIT);
    assert_eq!(US_BY_ID, US_BY_PATH);
    assert_eq!(IN_A_STATIC, US_BY_ID);
    assert_eq!((GB_BY_ID.site(), GB_BY_ID.name()), (Site::Gb, "Mobile & Smart Phones"));
    assert_eq!((DE_BY_PATH.site(), DE_BY_PATH.id()), (Site::De, 9355));
    assert_eq!((AU_BY_ID.site(), AU_BY_ID.name()), (Site::Au, "Mobile Phones"));
    assert_eq!((DE_BY_VARIANT.site(), DE_BY_VARIANT.id()), (Site::De, 9355));
    assert_eq!(GB_BY_FULL_PATH, GB_BY_ID);
    assert_eq!(GB_SHORT, GB_BY_ID);
    assert_eq!(TYPED, DE_BY_VARIANT);
    assert_eq!(TYPED.leaf(), category!(Site::De, "9355"));
    let untyped: LeafCategory = TYPED.into();
    assert_eq!(untyped.name(), "Handys & Smartphones");
    // A deep leaf by path.
    let deep = category!("Collectibles > Advertising > Soda > Fountain");
    assert_eq!(deep.id(), 852);
}
