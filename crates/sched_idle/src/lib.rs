//! Background threads that only use idle CPU: Linux's `SCHED_IDLE` scheduling class.
//!
//! Role: the one place Rialto changes a thread's scheduling policy. [`enter`] moves the calling
//! thread (only it, not the process) to `SCHED_IDLE`: the scheduler runs it only when nothing
//! of a normal class wants the CPU, a waking normal thread preempts it at once (unlike a nice
//! 19 thread, which on current kernels may keep the CPU for the rest of its slice), and the
//! wake-up balancer treats a CPU running only idle-class threads as free. Used by the snapshot
//! replica (`gateway`), whose work can wait but must never delay the event loop.
//!
//! Never: raises a priority (moving to `SCHED_IDLE` is always allowed; moving back would need
//! `CAP_SYS_NICE` or `RLIMIT_NICE`, so a caller that needs a guaranteed share keeps a
//! second thread of the normal class for that), or touches any other thread.
//!
//! Invariant: the only unsafe code is the one `sched_setscheduler` call below.
#![deny(unsafe_code)]

use std::io;

/// Moves the calling thread to `SCHED_IDLE` (Linux). Elsewhere: `Unsupported`.
pub fn enter() -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `sched_setscheduler` only reads `param`, a valid initialized struct that
        // outlives the call, and changes the scheduling policy of the calling thread (pid 0
        // means the caller; on Linux policies are per thread). No memory is shared or kept.
        #[allow(unsafe_code)]
        let r = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "SCHED_IDLE is Linux-only",
        ))
    }
}

/// True if the calling thread is in `SCHED_IDLE`.
pub fn is_idle() -> bool {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `sched_getscheduler(0)` reads the calling thread's policy; no pointers.
        #[allow(unsafe_code)]
        let policy = unsafe { libc::sched_getscheduler(0) };
        policy == libc::SCHED_IDLE
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_the_calling_thread_becomes_idle() {
        assert!(!super::is_idle());
        let t = std::thread::spawn(|| {
            super::enter().unwrap();
            super::is_idle()
        });
        assert!(t.join().unwrap(), "the spawned thread is in SCHED_IDLE");
        assert!(!super::is_idle(), "the test thread is not");
    }
}
