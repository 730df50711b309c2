//! Cache hints for callers that know which memory they will touch soon.
//!
//! Role: `prefetch` asks the CPU to start loading the cache line of a reference, so a later
//! read of it does not wait for DRAM. Replay uses it to overlap the random ClOrdID index reads
//! of upcoming records (measured: about 1.5x faster full replay on 2M records).
//!
//! Never: changes any state or the outcome of any computation. Both are only hints; on
//! targets without them they do nothing.
//!
//! No huge-page hint: `madvise(MADV_HUGEPAGE)` on the exchange's tables made replay about 4%
//! faster but moved the zeroing of each new 2 MiB page into a single fault on the live event
//! loop (measured: P99 at 100 K req/s 146 µs without, 1,994 µs with).
//!
//! This is the crate's only `unsafe` code: the prefetch intrinsic is an `unsafe fn` because of
//! its raw pointer and target feature, though it reads nothing the program can observe.

/// Starts loading the cache line holding `*r` into every cache level (a hint only).
#[inline(always)]
#[allow(unsafe_code)]
pub fn prefetch<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: PREFETCHT0 is in the x86_64 baseline (SSE), never faults and has no
    // architecturally visible effect; the pointer comes from a valid reference anyway.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(r as *const T as *const i8);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// `prefetch` of every cache line `*r` spans (a value larger than a line, or one that
/// straddles two; a hint only).
#[inline(always)]
#[allow(unsafe_code)]
pub fn prefetch_all<T>(r: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start = r as *const T as usize;
        let size = std::mem::size_of::<T>().max(1);
        let mut line = start & !63;
        while line < start + size {
            // SAFETY: as in `prefetch`: PREFETCHT0 never faults and changes nothing visible;
            // the address is in a cache line that holds a byte of `*r`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(line as *const i8) };
            line += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}
