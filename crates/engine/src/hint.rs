//! Cache hints for callers that know which memory they will touch soon.
//!
//! Role: `prefetch` asks the CPU to start loading the cache line of a reference, so a later
//! read of it does not wait for DRAM. Replay uses it to overlap the random ClOrdID index reads
//! of upcoming records (measured: about 1.5x faster full replay on 2M records).
//!
//! Never: changes any state or the outcome of any computation. Both are only hints; on
//! targets without them they do nothing.
//!
//! `huge_and_populated` asks the kernel to back a large table with 2 MiB pages (fewer TLB
//! misses on random access) and faults all of it in at once, when the table is made. Never the
//! hint alone: it makes replay about 4% faster, but then each new 2 MiB page is zeroed in one
//! fault wherever it is first touched, which on the live event loop put P99 at 100 K req/s at
//! 1,994 µs instead of 146 µs; populated up front, no page of the table faults later.
//! `huge_prefix` and `Populate` are its two halves, for a table whose pages another thread
//! faults in while the table is already in use: a full replay's tables, so that clearing their
//! pages (10-215 ms when the host is busy) stays off the applying thread.
//!
//! This is the crate's only `unsafe` code: the prefetch intrinsic is an `unsafe fn` because of
//! its raw pointer and target feature, though it reads nothing the program can observe, and
//! `madvise` is a system call on memory the caller's `Vec` owns.

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
        // A constant count (unrolled): one address a line apart from the start, then the
        // last byte's, which is in the line after them if `*r` straddles one more.
        for k in 0..size.div_ceil(64) {
            // SAFETY: as in `prefetch`: PREFETCHT0 never faults and changes nothing visible;
            // each address is a byte of `*r` (`64 * k < size`).
            unsafe { _mm_prefetch::<_MM_HINT_T0>((start + 64 * k) as *const i8) };
        }
        // SAFETY: as above; the last byte of `*r`.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((start + size - 1) as *const i8) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = r;
}

/// Asks the kernel to back the whole allocation of `v` (its capacity, used or not) with
/// transparent huge pages where it can (`MADV_HUGEPAGE` on the 2 MiB-aligned part), then
/// faults every page of it in (`MADV_POPULATE_WRITE`), so touching it later takes no page
/// fault: for large tables read at random and built before a latency-sensitive loop runs.
/// Linux only, a hint only (errors, e.g. an older kernel, are ignored); never changes what
/// `v` holds. The memory is resident from then on.
pub fn huge_and_populated<T>(v: &Vec<T>) {
    huge_and_populated_prefix(v, v.capacity());
}

/// [`huge_and_populated`] for the first `n` elements of `v`'s allocation only (at most its
/// capacity): for a buffer reserved larger than it is expected to be used, whose expected
/// front should take no page fault.
pub fn huge_and_populated_prefix<T>(v: &Vec<T>, n: usize) {
    huge_prefix(v, n);
    let mut now = Populate::default();
    now.add_prefix(v, n);
    now.run();
}

/// The first `n` elements of `v`'s allocation (at most its capacity) as a byte range.
fn prefix_range<T>(v: &Vec<T>, n: usize) -> (usize, usize) {
    let start = v.as_ptr() as usize;
    (
        start,
        start + n.min(v.capacity()) * std::mem::size_of::<T>(),
    )
}

/// The huge-page half of [`huge_and_populated_prefix`]: `MADV_HUGEPAGE` on the 2 MiB-aligned
/// part of the first `n` elements of `v`'s allocation, so the pages faulted in there later
/// (by a first write, or by a [`Populate`]) are 2 MiB ones. A hint only.
#[allow(unsafe_code)]
pub fn huge_prefix<T>(v: &Vec<T>, n: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        let (start, end) = prefix_range(v, n);
        let (lo, hi) = ((start + HUGE - 1) & !(HUGE - 1), end & !(HUGE - 1));
        if hi > lo {
            // SAFETY: the range lies inside the allocation `v` owns (its first `n` elements,
            // at most its capacity, rounded inwards to 2 MiB); MADV_HUGEPAGE changes only how
            // the kernel backs those pages, never their contents or mapping rights. The
            // result is ignored: a hint.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (v, n);
}

/// Page ranges to fault in (`MADV_POPULATE_WRITE`), gathered when tables are made and faulted
/// in by [`Populate::run`], on whichever thread runs it: replay runs it on a thread of its own
/// while it applies records, so the applying thread does not start by faulting in the tables
/// itself (on the Intel host 10-215 ms for a replay's 76-106 MB, by the minute).
///
/// It holds addresses only, as integers. Its owner runs it while the allocations it was given
/// are alive and not moved (`recovery` joins the thread before the tables can be dropped or
/// grown). It is a hint either way: faulting in changes no byte of memory, a page already
/// present is left as it is, and a range no longer mapped only makes the system call fail.
#[derive(Clone, Debug, Default)]
pub struct Populate {
    ranges: Vec<(usize, usize)>,
}

impl Populate {
    /// Pages are faulted in this many bytes per system call, one chunk of each range in turn
    /// (the first chunk of every range, then the second ones, ...), since a table's user
    /// touches the front of each range first: a thread touching a page meanwhile waits for one
    /// 2 MiB page at most, not for a whole range.
    const CHUNK: usize = 2 << 20;

    /// Adds the whole pages of the first `n` elements of `v`'s allocation (at most its
    /// capacity).
    pub fn add_prefix<T>(&mut self, v: &Vec<T>, n: usize) {
        const PAGE: usize = 4096;
        let (start, end) = prefix_range(v, n);
        let (lo, hi) = ((start + PAGE - 1) & !(PAGE - 1), end & !(PAGE - 1));
        if hi > lo {
            self.ranges.push((lo, hi));
        }
    }

    /// Bytes it would fault in.
    pub fn bytes(&self) -> usize {
        self.ranges.iter().map(|(lo, hi)| hi - lo).sum()
    }

    /// Faults every page of every range in, one chunk per system call, the ranges' chunks in
    /// turn. Errors are ignored (a hint).
    #[allow(unsafe_code)]
    pub fn run(mut self) {
        #[cfg(target_os = "linux")]
        while !self.ranges.is_empty() {
            for (at, hi) in self.ranges.iter_mut() {
                let end = (*hi).min((*at + Self::CHUNK) & !(Self::CHUNK - 1));
                // SAFETY: MADV_POPULATE_WRITE faults the pages of `at..end` in as a write
                // would, without writing: it changes no byte of memory and no mapping. The
                // range is page-aligned and was inside a live allocation when added (see the
                // type's docs for why running it later is still only a hint).
                unsafe {
                    libc::madvise(
                        *at as *mut libc::c_void,
                        end - *at,
                        libc::MADV_POPULATE_WRITE,
                    );
                }
                *at = end;
            }
            self.ranges.retain(|(at, hi)| at < hi);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = &mut self;
    }
}

#[cfg(test)]
mod tests;
