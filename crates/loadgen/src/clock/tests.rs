use super::*;
use rustix::time::{clock_gettime, ClockId, Timespec};

fn ns(t: Timespec) -> u64 {
    t.tv_sec as u64 * NS_PER_S + t.tv_nsec as u64
}

/// Each clock is the kernel's: a read through rustix (its own vDSO lookup or system call)
/// falls between two of ours. How far apart the reads are is a figure of
/// `examples/clock_bench.rs`, not asserted.
#[test]
fn the_clocks_are_the_kernels_monotonic_and_process_cpu_clocks() {
    for _ in 0..1000 {
        let a = mono_ns();
        let r = ns(clock_gettime(ClockId::Monotonic));
        let b = mono_ns();
        assert!(a <= r && r <= b, "{a} {r} {b}");
        let a = process_cpu_ns();
        let r = ns(clock_gettime(ClockId::ProcessCPUTime));
        let b = process_cpu_ns();
        assert!(a <= r && r <= b, "{a} {r} {b}");
    }
}

#[test]
fn cpu_time_moves_with_work() {
    let c0 = process_cpu_ns();
    let mut x = 0u64;
    let mut rounds = 0;
    while process_cpu_ns() == c0 {
        for i in 0..100_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        rounds += 1;
        assert!(rounds < 100_000, "no CPU time counted for the work");
    }
    std::hint::black_box(x);
    assert!(process_cpu_ns() > c0);
}

#[test]
fn the_timer_wakes_at_its_time_not_before() {
    let rt = crate::http::runtime().unwrap();
    rt.block_on(async {
        let mut t = Timer::new().unwrap();
        for ms in [1u64, 3] {
            let due = mono_ns() + ms * 1_000_000;
            t.sleep_until(due).await.unwrap();
            assert!(mono_ns() >= due);
        }
        // A time that has passed returns at once.
        t.sleep_until(1).await.unwrap();
    });
}
