//! Snapshot files: `snapshot::parse` never panics, and every tree it accepts is valid and is
//! written back, then read again, unchanged.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use taxonomy_tree::snapshot;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.json");
    let Ok(tree) = snapshot::parse(text, path) else {
        return;
    };
    tree.validate().expect("an accepted tree is valid");
    let written = snapshot::to_string(&tree);
    let reread = snapshot::parse(&written, path).expect("what is written parses");
    assert_eq!(reread, tree, "the snapshot round trip changed the tree");
    assert_eq!(
        snapshot::to_string(&reread),
        written,
        "the snapshot is not deterministic"
    );
});
