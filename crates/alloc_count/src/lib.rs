//! A global allocator that counts allocations per thread, for the tests that prove a hot path
//! allocates nothing in steady state (engine, FIX codec and session, gateway order path, load
//! generator).
//!
//! Use: in the test binary, `#[global_allocator] static GLOBAL: alloc_count::Counting =
//! alloc_count::Counting;`, then compare `alloc_count::allocs()` before and after the measured
//! work. The count is per thread, so the test harness's own threads do not disturb it.
//!
//! Never: changes what it forwards; every call goes to `System` with the caller's arguments.
//! Deallocations are not counted (freeing is not what the tests are about).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

/// The counting allocator: install it with `#[global_allocator]`.
pub struct Counting;

thread_local! {
    // Const-initialized and without a destructor: using it never allocates.
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: during thread teardown the slot may be gone; then nothing is counted.
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

/// Allocations (alloc, alloc_zeroed, realloc) made by the calling thread so far.
pub fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

// SAFETY: every call forwards to `System` with the caller's arguments unchanged; the wrapper
// only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with this `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[cfg(test)]
mod tests;
