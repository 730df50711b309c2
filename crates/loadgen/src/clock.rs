//! The generator's clocks: CLOCK_MONOTONIC (send schedule, timer, latencies) and the process's
//! CPU time, through the C library's `clock_gettime` (a vDSO call, no system call).
//!
//! Role: rustix reads these through its own vDSO lookup, which crashes under valgrind; the C
//! library's works everywhere, so the generator can be profiled with callgrind for instruction
//! counts (`valgrind --tool=callgrind rialto bench fix ...`).
//!
//! `Timer` wakes a task of a tokio runtime at a monotonic instant with the kernel's precision (a
//! timerfd), where tokio's own timers round up to the next millisecond (`bench http`).
//!
//! Never: fails to read a clock (both clocks always exist on Linux; a failure would leave the
//! zeroed value).
//!
//! Invariants: the only unsafe code here is `clock_gettime` into a local `timespec` and the
//! registration of the timer's own fd with the runtime.
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

use std::os::fd::OwnedFd;
use tokio::io::unix::AsyncFd;

/// A one-shot timer on CLOCK_MONOTONIC with the kernel's precision (a timerfd registered with
/// the runtime).
pub struct Timer {
    fd: AsyncFd<OwnedFd>,
}

impl Timer {
    /// Must be called inside a runtime with I/O enabled.
    pub fn new() -> Result<Timer, String> {
        use rustix::time::{timerfd_create, TimerfdClockId, TimerfdFlags};
        let fd = timerfd_create(
            TimerfdClockId::Monotonic,
            TimerfdFlags::NONBLOCK | TimerfdFlags::CLOEXEC,
        )
        .map_err(|e| format!("timerfd: {e}"))?;
        // SAFETY: the AsyncFd owns the fd, so it stays open for as long as it is registered
        // and is deregistered (on drop) before it is closed.
        let fd = unsafe { AsyncFd::register(fd) }.map_err(|e| format!("timerfd: {e}"))?;
        Ok(Timer { fd })
    }

    /// Waits until `deadline_ns` on [`mono_ns`]'s clock; returns at once if it has passed.
    pub async fn sleep_until(&mut self, deadline_ns: u64) -> Result<(), String> {
        use rustix::time::{timerfd_settime, Itimerspec, TimerfdTimerFlags, Timespec};
        if mono_ns() >= deadline_ns {
            return Ok(());
        }
        let ts = |ns: u64| Timespec {
            tv_sec: (ns / 1_000_000_000) as _,
            tv_nsec: (ns % 1_000_000_000) as _,
        };
        let spec = Itimerspec {
            it_interval: ts(0),
            it_value: ts(deadline_ns.max(1)),
        };
        timerfd_settime(self.fd.get_ref(), TimerfdTimerFlags::ABSTIME, &spec)
            .map_err(|e| format!("timerfd: {e}"))?;
        loop {
            let mut guard = self
                .fd
                .readable()
                .await
                .map_err(|e| format!("timerfd: {e}"))?;
            let mut expirations = [0u8; 8];
            match rustix::io::read(self.fd.get_ref(), &mut expirations) {
                Ok(_) => return Ok(()),
                Err(rustix::io::Errno::AGAIN) => guard.clear_ready(),
                Err(e) => return Err(format!("timerfd: {e}")),
            }
        }
    }
}

#[cfg(test)]
mod tests;
