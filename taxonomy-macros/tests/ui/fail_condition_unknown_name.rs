// A name that is no ConditionEnum name suggests the closest ones.
use taxonomy_macros::condition;

fn main() {
    let _ = condition!("9355", USED_EXCELENT);
    let _ = condition!("9355", UsedGood);
    let _ = condition!("9355", BROKEN);
}
