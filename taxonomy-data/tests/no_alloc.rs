//! Lookups never touch the heap: a counting allocator sees no allocation during them.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use taxonomy_data::{LeafCategory, Site};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: defers to the system allocator; only counts.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn lookups_do_not_allocate() {
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let mut checksum = 0_u64;
    for site in Site::ALL {
        for id in [9355_u32, 15032, 1, 463_773, 4_000_000] {
            if let Some(c) = site.category(id) {
                checksum += u64::from(c.id()) + c.name().len() as u64 + u64::from(c.level());
                checksum += c.children().map(|k| u64::from(k.id())).sum::<u64>();
                checksum += c.path().count() as u64;
                checksum += c.parent().map_or(0, |p| u64::from(p.id()));
            }
            checksum += u64::from(LeafCategory::new(site, id).is_ok());
        }
        checksum +=
            Site::from_marketplace_id(site.marketplace_id()).map_or(0, |s| s.tree_id()) as u64;
        // The keyword search works on the stack.
        for query in [
            "smartphones",
            "Handys & Smartphones",
            "other parts",
            "",
            "handyhülle grafikkarte",
            "qqqzzz",
        ] {
            checksum += site.search(query).map(|c| u64::from(c.id())).sum::<u64>();
            checksum += site.nearest_words(query).map(str::len).sum::<usize>() as u64;
        }
    }
    let after = ALLOCATIONS.load(Ordering::SeqCst);
    assert!(checksum > 0);
    assert_eq!(
        after - before,
        0,
        "lookups allocated {} times",
        after - before
    );
}
