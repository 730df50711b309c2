//! `rialto bench noise`: how often, and for how long, this machine takes the CPU away from a
//! thread that wants it all the time: the latency floor under every other benchmark.
//!
//! Role: one thread per CPU, pinned, reads the monotonic clock in a tight loop for the given
//! time and records every gap between two consecutive reads above `MIN_GAP_NS` (an interrupt,
//! the scheduler running something else, or the hypervisor running another guest: on a VM the
//! last one dominates). A request whose handling straddles such a gap on the exchange's core or
//! the generator's is late by the gap, whatever the exchange does, so the share of time lost
//! in gaps bounds what P99 and P99.9 can show on the machine.
//!
//! Never: runs anything but the clock loop while measuring (no allocation, no system call
//! besides the vDSO clock read); leaves a thread running (all are joined).
//!
//! The counters are exact: every gap above `MIN_GAP_NS` is counted in its band, its length
//! added to `lost_ns`, and the longest kept.

use std::time::{Duration, Instant};

/// Gaps shorter than this are the loop itself (a clock read takes ~20-40 ns), cache misses and
/// short interrupts; they are not counted.
pub const MIN_GAP_NS: u64 = 20_000;
/// Upper bounds of the reported bands, ns: (20 µs, 50 µs], (50, 200], (200 µs, 1 ms], above.
pub const BANDS_NS: [u64; 3] = [50_000, 200_000, 1_000_000];

/// What one CPU's thread saw.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuNoise {
    pub cpu: usize,
    /// Time measured, ns.
    pub measured_ns: u64,
    /// Gaps per band: <= 50 µs, <= 200 µs, <= 1 ms, > 1 ms (all above `MIN_GAP_NS`).
    pub gaps: [u64; 4],
    /// Sum of the counted gaps, ns.
    pub lost_ns: u64,
    pub max_gap_ns: u64,
}

impl CpuNoise {
    /// Share of the measured time lost in counted gaps, percent.
    pub fn lost_pct(&self) -> f64 {
        if self.measured_ns == 0 {
            return 0.0;
        }
        self.lost_ns as f64 * 100.0 / self.measured_ns as f64
    }

    /// Counts one gap of `g` ns (ignored when not above `MIN_GAP_NS`).
    pub fn record(&mut self, g: u64) {
        if g <= MIN_GAP_NS {
            return;
        }
        let band = BANDS_NS.iter().position(|&b| g <= b).unwrap_or(3);
        self.gaps[band] += 1;
        self.lost_ns += g;
        self.max_gap_ns = self.max_gap_ns.max(g);
    }
}

/// The CPUs this process may run on.
pub fn allowed_cpus() -> Result<Vec<usize>, String> {
    let set = rustix::thread::sched_getaffinity(None)
        .map_err(|e| format!("cannot read the CPU affinity: {e}"))?;
    let cpus: Vec<usize> = (0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|&c| set.is_set(c))
        .collect();
    if cpus.is_empty() {
        return Err("no CPU in this process's affinity mask".into());
    }
    Ok(cpus)
}

/// Spins one pinned thread on each of `cpus` for `dur` and returns what each saw, in the
/// order of `cpus`.
pub fn measure(cpus: &[usize], dur: Duration) -> Result<Vec<CpuNoise>, String> {
    let threads: Vec<_> = cpus
        .iter()
        .map(|&cpu| {
            std::thread::Builder::new()
                .name(format!("noise-{cpu}"))
                .spawn(move || spin_on(cpu, dur))
                .map_err(|e| format!("cannot start a thread for CPU {cpu}: {e}"))
        })
        .collect::<Result<_, _>>()?;
    threads
        .into_iter()
        .map(|t| {
            t.join()
                .map_err(|_| "a noise thread panicked".to_string())?
        })
        .collect()
}

fn spin_on(cpu: usize, dur: Duration) -> Result<CpuNoise, String> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(None, &set)
        .map_err(|e| format!("cannot pin a thread to CPU {cpu}: {e}"))?;
    let mut n = CpuNoise {
        cpu,
        ..CpuNoise::default()
    };
    let start = Instant::now();
    let end = start + dur;
    let mut last = start;
    loop {
        let now = Instant::now();
        n.record(now.duration_since(last).as_nanos() as u64);
        last = now;
        if now >= end {
            break;
        }
    }
    n.measured_ns = last.duration_since(start).as_nanos() as u64;
    Ok(n)
}

/// Steal time (the hypervisor running someone else while a vCPU was ready) of every CPU, ms,
/// from /proc/stat; `None` where the kernel does not report it.
pub fn steal_ms() -> Option<u64> {
    sched_idle::steal_ms(None)
}

/// The report table and the one-line summary (`noise_cpus=.. ...`).
pub fn render(rows: &[CpuNoise], steal_ms: Option<u64>) -> String {
    let mut s = String::from(
        "| CPU | gaps 20-50 µs | 50-200 µs | 0.2-1 ms | > 1 ms | longest (µs) | time lost |\n|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {:.2}% |\n",
            r.cpu,
            r.gaps[0],
            r.gaps[1],
            r.gaps[2],
            r.gaps[3],
            r.max_gap_ns / 1000,
            r.lost_pct()
        ));
    }
    let secs = rows.iter().map(|r| r.measured_ns).max().unwrap_or(0).max(1) as f64 / 1e9;
    let over_1ms: u64 = rows.iter().map(|r| r.gaps[3]).sum();
    let over_200us: u64 = rows.iter().map(|r| r.gaps[2] + r.gaps[3]).sum();
    let max = rows.iter().map(|r| r.max_gap_ns).max().unwrap_or(0);
    let lost = rows.iter().map(|r| r.lost_pct()).fold(0.0, f64::max);
    if let Some(st) = steal_ms {
        s.push_str(&format!("steal time reported by the kernel: {st} ms\n"));
    }
    s.push_str(&format!(
        "noise_cpus={} secs={:.1} gaps_over_200us_per_s={:.1} gaps_over_1ms_per_s={:.1} max_gap_us={} lost_pct_max={:.2}",
        rows.len(),
        secs,
        over_200us as f64 / secs,
        over_1ms as f64 / secs,
        max / 1000,
        lost
    ));
    if let Some(st) = steal_ms {
        s.push_str(&format!(" steal_ms={st}"));
    }
    s.push('\n');
    s
}

#[cfg(test)]
mod tests;
