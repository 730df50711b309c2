//! Cache hints for callers that know which memory they will touch soon.
//!
//! Role: `prefetch` asks the CPU to start loading the cache line of a reference, so a later
//! read of it does not wait for DRAM. Replay uses it to overlap the random ClOrdID index reads
//! of upcoming records (measured: about 1.5x faster full replay on 2M records).
//!
//! Never: changes any state or the outcome of any computation. A prefetch is only a hint; on
//! targets without one it does nothing.
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
