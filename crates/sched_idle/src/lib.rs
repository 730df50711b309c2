//! Background threads that only use idle CPU: Linux's `SCHED_IDLE` scheduling class.
//!
//! Role: the one place Rialto changes a thread's scheduling policy. [`enter`] moves the calling
//! thread (only it, not the process) to `SCHED_IDLE`: the scheduler runs it only when nothing
//! of a normal class wants the CPU, a waking normal thread preempts it at once (unlike a nice
//! 19 thread, which on current kernels may keep the CPU for the rest of its slice), and the
//! wake-up balancer treats a CPU running only idle-class threads as free. Used by the snapshot
//! replica (`gateway`), whose work can wait but must never delay the event loop.
//!
//! A thread in `SCHED_IDLE` may get no CPU at all for many seconds on a saturated machine. A
//! caller that needs a minimum share can move it back to the normal class from another thread
//! with [`set_normal`] while it must make progress, then [`set_idle`] again: leaving
//! `SCHED_IDLE` needs `CAP_SYS_NICE` or an `RLIMIT_NICE` of at least 20 (root has it), so that
//! call can fail with `PermissionDenied`, which the caller must handle (e.g. by waiting).
//!
//! Never: touches a thread other than the one named (by its kernel thread id).
//!
//! Invariant: the only unsafe code is the three system calls below.
#![deny(unsafe_code)]

use std::io;

/// Moves the calling thread to `SCHED_IDLE` (Linux). Elsewhere: `Unsupported`.
pub fn enter() -> io::Result<()> {
    set_policy(0, true)
}

/// Moves thread `tid` (a kernel thread id, see [`current_tid`]) to `SCHED_IDLE`.
pub fn set_idle(tid: i32) -> io::Result<()> {
    set_policy(tid, true)
}

/// Moves thread `tid` back to the normal class (`SCHED_OTHER`, its nice value unchanged).
/// Needs `CAP_SYS_NICE` or `RLIMIT_NICE` >= 20 if it is in `SCHED_IDLE`.
pub fn set_normal(tid: i32) -> io::Result<()> {
    set_policy(tid, false)
}

/// The kernel thread id of the calling thread (for [`set_idle`] and [`set_normal`] from another
/// thread).
pub fn current_tid() -> i32 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: gettid has no arguments and cannot fail.
        #[allow(unsafe_code)]
        unsafe {
            libc::gettid()
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        0
    }
}

fn set_policy(tid: i32, idle: bool) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        let policy = if idle {
            libc::SCHED_IDLE
        } else {
            libc::SCHED_OTHER
        };
        // SAFETY: `sched_setscheduler` only reads `param`, a valid initialized struct that
        // outlives the call, and changes the scheduling policy of thread `tid` (0: the caller;
        // on Linux policies are per thread). No memory is shared or kept.
        #[allow(unsafe_code)]
        let r = unsafe { libc::sched_setscheduler(tid, policy, &param) };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (tid, idle);
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
    fn only_the_named_thread_changes_class() {
        assert!(!super::is_idle());
        let (tx, rx) = std::sync::mpsc::channel();
        let (back_tx, back_rx) = std::sync::mpsc::channel();
        let t = std::thread::spawn(move || {
            super::enter().unwrap();
            tx.send((super::current_tid(), super::is_idle())).unwrap();
            // Wait until the test thread tried to move us back.
            let lifted: bool = back_rx.recv().unwrap();
            (super::is_idle(), lifted)
        });
        let (tid, idle) = rx.recv().unwrap();
        assert!(idle, "the spawned thread entered SCHED_IDLE");
        assert!(!super::is_idle(), "the test thread did not");
        // Leaving SCHED_IDLE needs a privilege: either it works, or it says so.
        let lifted = match super::set_normal(tid) {
            Ok(()) => true,
            Err(e) => {
                assert_eq!(e.kind(), std::io::ErrorKind::PermissionDenied, "{e}");
                false
            }
        };
        back_tx.send(lifted).unwrap();
        let (still_idle, lifted) = t.join().unwrap();
        assert_eq!(still_idle, !lifted);
        assert!(super::set_normal(-5).is_err(), "no such thread");
    }
}
