// `condition!` in every form `category!` takes, checked against the condition policies that
// tests/ui.rs writes beside the US tree (EBAY_US.conditions.json).
use taxonomy_data::typed::{Checked, EBAY_US, In};
use taxonomy_data::{Condition, Site};
use taxonomy_macros::{category, condition};

const USED: Condition = condition!(EBAY_US, "9355", USED_GOOD).condition();
const BY_DEFAULT_SITE: Condition = condition!("9355", NEW).condition();
const BY_PATH: Condition = condition!("Cell Phones & Accessories > Cell Phones & Smartphones", FOR_PARTS_OR_NOT_WORKING).condition();
const BY_VARIANT: Condition = condition!(Site::Us, "179", USED_GOOD,).condition();
const GRADED_CARD: Condition = condition!(US, "261328", LIKE_NEW).condition();

// The value itself carries its marketplace and category in its type.
const TYPED: Checked<In<EBAY_US, 179>, Condition> = condition!(EBAY_US, "179", NEW);

fn main() {
    assert_eq!(TYPED, Condition::New);
    assert_eq!(USED, Condition::UsedGood);
    assert_eq!(BY_DEFAULT_SITE, Condition::New);
    assert_eq!(BY_PATH.id(), 7000);
    assert_eq!(BY_VARIANT, Condition::UsedGood);
    assert_eq!(GRADED_CARD, Condition::LikeNew);
    assert_eq!(condition!("261328", USED_VERY_GOOD).condition().name(), "USED_VERY_GOOD");

    // The policies the macro checked against are compiled into the program.
    assert!(Site::Us.has_condition_policies() && !Site::Us.condition_policies_made_up());
    let phones = category!("9355");
    assert_eq!(phones.condition_required(), Some(true));
    assert_eq!(phones.condition_policy().unwrap().names().to_string(), "NEW, NEW_OTHER, EXCELLENT_REFURBISHED, USED_GOOD, FOR_PARTS_OR_NOT_WORKING");
    let cards = category!("261328").conditions().unwrap();
    assert_eq!(cards[0].descriptors.iter().map(|d| d.name).collect::<Vec<_>>(), ["Professional Grader", "Grade", "Certification Number"]);
    assert_eq!(cards[0].descriptors[0].value(275010).unwrap().name, "PSA");
    assert_eq!(cards[0].descriptors[2].max_length, Some(30));
    assert_eq!(category!("172009").conditions(), Some(&[][..]));
    assert_eq!(category!("111418").condition_policy(), None);
    assert!(!Site::Gb.has_condition_policies());
}
