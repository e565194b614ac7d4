//! getCategorySubtree answers: `decode_subtree` never panics, and what it accepts keeps the
//! rules it promises below the category asked for.
//!
//! Input: the category id asked for, in decimal, a newline, then the answer's body.
#![no_main]

use std::collections::HashSet;

use libfuzzer_sys::fuzz_target;
use taxonomy_tree::decode::decode_subtree;
use taxonomy_tree::tree::MAX_LEVEL;

fuzz_target!(|data: &[u8]| {
    let (asked, body) = match data.iter().position(|&b| b == b'\n') {
        Some(nl) => (&data[..nl], &data[nl + 1..]),
        None => (&b""[..], data),
    };
    let asked = std::str::from_utf8(asked)
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .unwrap_or(0);
    let Ok(subtree) = decode_subtree(body, asked) else {
        return;
    };
    assert_eq!(subtree.root().id, asked);
    assert!(subtree.level as usize <= MAX_LEVEL);
    let mut seen = HashSet::new();
    for c in &subtree.categories {
        assert!(c.id != 0 && c.id != u32::MAX, "{}", c.id);
        assert!(seen.insert(c.id), "duplicate {}", c.id);
        assert!(
            !c.name.trim().is_empty() && !c.name.contains('>'),
            "{:?}",
            c.name
        );
        assert_eq!(c.leaf, c.children.is_empty(), "leaf flag of {}", c.id);
        for child in &c.children {
            let k = subtree.get(*child).expect("every child is in the subtree");
            assert_eq!(k.parent, Some(c.id));
        }
    }
});
