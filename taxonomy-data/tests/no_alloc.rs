//! Lookups never touch the heap: a counting allocator sees no allocation during them.
//!
//! Only the test's own thread is counted: the test harness's main thread, waiting for the
//! test, may allocate meanwhile (a blocking channel receive registers a waker, when the
//! machine is busy enough that it blocks), which says nothing about the lookups.
//!
//! A test binary of its own (not a module of tests/it/): its counting allocator is the
//! process's global allocator.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use taxonomy_data::{LeafCategory, Site};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread's allocations are counted (const-initialized: reading it never
    /// allocates).
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: defers to the system allocator; only counts.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTED.try_with(Cell::get).unwrap_or(false) {
            ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        }
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
    // The counter counts: a Vec made on this thread is seen.
    COUNTED.with(|c| c.set(true));
    let seen = ALLOCATIONS.load(Ordering::SeqCst);
    drop(std::hint::black_box(vec![1_u8]));
    assert_eq!(
        ALLOCATIONS.load(Ordering::SeqCst),
        seen + 1,
        "the counter counts"
    );
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
            // The condition policies (none in the committed snapshots: the lookup all the same).
            if let Ok(leaf) = LeafCategory::new(site, id) {
                checksum += leaf.conditions().map_or(0, |c| c.len() as u64);
                checksum += u64::from(leaf.condition_required().unwrap_or(false));
            }
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
    COUNTED.with(|c| c.set(false));
    assert!(checksum > 0);
    assert_eq!(
        after - before,
        0,
        "lookups allocated {} times",
        after - before
    );
}
