//! Proves the engine makes no heap allocation per command after warm-up, on a realistic mixed
//! stream (its own test binary: it installs a counting global allocator).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use engine::{Engine, EngineConfig};
use types::{Event, EventSink, Matcher};

#[path = "common/mixed.rs"]
mod mixed;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Counts events by kind without allocating.
#[derive(Default)]
struct Tally {
    n: [u64; 7],
}

impl EventSink for Tally {
    fn on_event(&mut self, e: &Event) {
        let k = match e {
            Event::Accepted { .. } => 0,
            Event::Rejected { .. } => 1,
            Event::Trade { .. } => 2,
            Event::Canceled { .. } => 3,
            Event::Replaced { .. } => 4,
            Event::MassCanceled { .. } => 5,
            Event::Level { .. } => 6,
        };
        self.n[k] += 1;
    }
}

#[test]
fn no_allocation_per_command_after_warm_up() {
    let mut engine = Engine::new(&mixed::instruments(), EngineConfig::default());
    let mut gen = mixed::Mixed::new(42);
    let warm: Vec<_> = (0..200_000).map(|_| gen.next_command()).collect();
    let steady: Vec<_> = (0..300_000).map(|_| gen.next_command()).collect();
    let mut tally = Tally::default();
    for c in &warm {
        engine.apply(c, &mut tally);
    }
    engine.check_invariants().unwrap();
    let before = ALLOCS.load(Ordering::Relaxed);
    for c in &steady {
        engine.apply(c, &mut tally);
    }
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    engine.check_invariants().unwrap();
    // The stream must be realistic for the proof to mean something.
    let [acc, rej, trades, canceled, replaced, _, levels] = tally.n;
    assert!(
        trades > 50_000 && canceled > 50_000 && replaced > 10_000,
        "{:?}",
        tally.n
    );
    assert!(
        acc > 100_000 && rej > 1_000 && levels > 100_000,
        "{:?}",
        tally.n
    );
    let resting = engine.resting_count();
    assert!((2_000..=20_000).contains(&resting), "resting {resting}");
    assert_eq!(
        allocs,
        0,
        "heap allocations during {} commands",
        steady.len()
    );
}
