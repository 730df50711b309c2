//! The generator's clocks: CLOCK_MONOTONIC (send schedule, timer, latencies) and the process's
//! CPU time, through the C library's `clock_gettime` (a vDSO call, no system call).
//!
//! Role: rustix reads these through its own vDSO lookup, which crashes under valgrind; the C
//! library's works everywhere, so the generator can be profiled with callgrind for instruction
//! counts (`valgrind --tool=callgrind rialto bench fix ...`).
//!
//! Never: fails (both clocks always exist on Linux; a failure would leave the zeroed value).
//!
//! Invariants: the only unsafe code here is `clock_gettime` into a local `timespec`.
#![allow(unsafe_code)]

const NS_PER_S: u64 = 1_000_000_000;

fn read(clock: libc::clockid_t) -> u64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a live, writable timespec for the duration of the call.
    unsafe { libc::clock_gettime(clock, &mut t) };
    (t.tv_sec as u64)
        .saturating_mul(NS_PER_S)
        .saturating_add(t.tv_nsec as u64)
}

/// CLOCK_MONOTONIC in ns (the clock the tick timer is armed on).
pub fn mono_ns() -> u64 {
    read(libc::CLOCK_MONOTONIC)
}

/// CPU time this process has used, ns.
pub fn process_cpu_ns() -> u64 {
    read(libc::CLOCK_PROCESS_CPUTIME_ID)
}

#[cfg(test)]
mod tests;
