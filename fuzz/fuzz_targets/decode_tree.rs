//! getCategoryTree answers: `decode_tree` never panics, and every tree it accepts is valid and
//! survives the snapshot format and the answer's own shape unchanged.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use taxonomy_tree::decode::{Provenance, decode_tree};
use taxonomy_tree::{encode, snapshot};

fuzz_target!(|data: &[u8]| {
    let provenance = Provenance {
        language: "en-US".into(),
        taken_at: "2026-01-02".into(),
        source: "fuzz".into(),
        note: None,
    };
    let Ok(tree) = decode_tree(data, &provenance) else {
        return;
    };
    tree.validate().expect("an accepted tree is valid");
    let text = snapshot::to_string(&tree);
    let reread = snapshot::parse(&text, Path::new("fuzz.json")).expect("its snapshot parses");
    assert_eq!(reread, tree, "the snapshot round trip changed the tree");
    assert_eq!(
        snapshot::to_string(&reread),
        text,
        "the snapshot is not deterministic"
    );
    let body = encode::encode_response(&tree, "https://api.example");
    let decoded = decode_tree(&body, &provenance).expect("its encoding decodes");
    assert_eq!(decoded, tree, "encode then decode changed the tree");
});
