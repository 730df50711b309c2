//! Background threads that only use idle CPU (Linux's `SCHED_IDLE` scheduling class), and CPU
//! placement (affinity) of threads.
//!
//! Role: the one place Rialto changes a thread's scheduling policy or the CPUs it may run on.
//! [`enter`] moves the calling thread (only it, not the process) to `SCHED_IDLE`: the scheduler
//! runs it only when nothing of a normal class wants the CPU, a waking normal thread preempts
//! it at once (unlike a nice 19 thread, which on current kernels may keep the CPU for the rest
//! of its slice), and the wake-up balancer treats a CPU running only idle-class threads as
//! free. Used by the snapshot writer (`server`), whose work can wait but must never delay the
//! event loop; the placement functions by the server's config `cpu` (the loop on one CPU, the
//! server's other threads off it).
//!
//! A thread in `SCHED_IDLE` may get no CPU at all for many seconds on a saturated machine. A
//! caller that needs a minimum share can move it back to the normal class from another thread
//! with [`set_normal`] while it must make progress, then [`set_idle`] again: leaving
//! `SCHED_IDLE` needs `CAP_SYS_NICE` or an `RLIMIT_NICE` of at least 20 (root has it), so that
//! call can fail with `PermissionDenied`, which the caller must handle (e.g. by waiting).
//!
//! CPU placement: [`allowed_cpus`] reads the calling thread's affinity mask and [`pin`] sets it
//! (e.g. the event loop on one CPU, the server's other threads on the rest: [`others`]). A
//! thread inherits the mask of the thread that spawns it.
//!
//! CPU accounting: [`steal_ms`] reads how long the hypervisor ran something else while a vCPU
//! was ready (the time no scheduling of ours can win back), for the bench's and the event
//! loop's reports.
//!
//! Never: touches a thread other than the one named (by its kernel thread id).
//!
//! Invariant: the only unsafe code is the system calls below.
#![deny(unsafe_code)]

use std::io;

/// Steal time of CPU `cpu` (of every CPU together: `None`) since boot, ms: how long the
/// hypervisor ran something else while that vCPU was ready to run (`/proc/stat`). `None` where
/// the kernel does not report it.
pub fn steal_ms(cpu: Option<usize>) -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    parse_steal_ms(&stat, cpu)
}

/// `steal_ms` of a `/proc/stat` text.
fn parse_steal_ms(stat: &str, cpu: Option<usize>) -> Option<u64> {
    let name = match cpu {
        Some(c) => format!("cpu{c}"),
        None => "cpu".to_string(),
    };
    let line = stat
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name.as_str()))?;
    // cpuN user nice system idle iowait irq softirq steal ...: steal is the 8th number, in
    // USER_HZ ticks (100 a second on Linux, whatever the kernel's own HZ).
    let ticks: u64 = line.split_whitespace().nth(8)?.parse().ok()?;
    Some(ticks * 10)
}

/// Sets the calling thread's nice value (0-19: only ever lowered without privilege). On Linux
/// a nice value is per thread. Elsewhere: `Unsupported`.
pub fn set_nice(nice: i32) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: setpriority takes plain integers; `who` 0 is the calling thread.
        #[allow(unsafe_code)]
        let r = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, nice) };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = nice;
        Err(io::ErrorKind::Unsupported.into())
    }
}

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

/// The CPUs the calling thread may run on, in ascending order.
pub fn allowed_cpus() -> io::Result<Vec<usize>> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: `cpu_set_t` is plain data; all-zero is a valid (empty) set.
        #[allow(unsafe_code)]
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: the kernel writes at most `size_of::<cpu_set_t>()` bytes into `set`, which
        // lives for the call; pid 0 is the calling thread.
        #[allow(unsafe_code)]
        let r =
            unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: CPU_ISSET only reads the set, for indices below CPU_SETSIZE.
        #[allow(unsafe_code)]
        let cpus = (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
            .collect();
        Ok(cpus)
    }
    #[cfg(not(target_os = "linux"))]
    {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "CPU affinity is Linux-only here",
        ))
    }
}

/// Restricts the calling thread to `cpus` (threads it spawns afterwards inherit the mask).
/// An empty list, or a CPU at or above `CPU_SETSIZE`, is `InvalidInput`; a CPU that does not
/// exist or is not allowed to this process makes the kernel refuse (`InvalidInput` too).
pub fn pin(cpus: &[usize]) -> io::Result<()> {
    #[cfg(target_os = "linux")]
    {
        if cpus.is_empty() || cpus.iter().any(|&c| c >= libc::CPU_SETSIZE as usize) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("no usable CPU in {cpus:?}"),
            ));
        }
        // SAFETY: `cpu_set_t` is plain data; all-zero is a valid (empty) set.
        #[allow(unsafe_code)]
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        for &c in cpus {
            // SAFETY: `c` is below CPU_SETSIZE (checked above); CPU_SET writes inside `set`.
            #[allow(unsafe_code)]
            unsafe {
                libc::CPU_SET(c, &mut set)
            };
        }
        // SAFETY: the kernel reads `size_of::<cpu_set_t>()` bytes of `set`, valid for the call;
        // pid 0 is the calling thread.
        #[allow(unsafe_code)]
        let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = cpus;
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "CPU affinity is Linux-only here",
        ))
    }
}

/// `allowed` without `cpu`; all of `allowed` when that would leave nothing (one CPU).
pub fn others(allowed: &[usize], cpu: usize) -> Vec<usize> {
    let rest: Vec<usize> = allowed.iter().copied().filter(|&c| c != cpu).collect();
    if rest.is_empty() {
        allowed.to_vec()
    } else {
        rest
    }
}

#[cfg(test)]
mod tests;
