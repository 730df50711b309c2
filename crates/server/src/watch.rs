//! The event loop's self-measurement: where a busy iteration's time goes, the time a
//! spinning loop spends off its CPU, and the once-a-second line about a slow second.

use std::time::{Duration, Instant};

/// Phases of one busy iteration, ns.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct IterTimes {
    pub(crate) total: u64,
    /// Events, accepts, reads, framing and decoding (iteration start to the batch).
    pub(crate) read: u64,
    /// Encoding, appends and the commit.
    pub(crate) journal: u64,
    /// `Node::apply` of the batch.
    pub(crate) engine: u64,
    /// Output copied to the connections and written.
    pub(crate) write: u64,
    pub(crate) inputs: u32,
    /// The batch held the once-a-second timer input.
    pub(crate) tick: bool,
    /// What the batch's first inputs were (names, for a slow iteration's log line).
    pub(crate) what: [&'static str; 4],
}

impl std::fmt::Display for IterTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let us = |ns: u64| ns as f64 / 1e3;
        write!(
            f,
            "{:.0} us (read {:.0}, journal {:.0}, engine {:.0}, write {:.0}; {} inputs{}: {}{})",
            us(self.total),
            us(self.read),
            us(self.journal),
            us(self.engine),
            us(self.write),
            self.inputs,
            if self.tick { ", timer tick" } else { "" },
            self.what
                .iter()
                .filter(|w| !w.is_empty())
                .copied()
                .collect::<Vec<_>>()
                .join(" "),
            if self.inputs > 4 { " .." } else { "" }
        )
    }
}

/// Gaps above this between two spinning iterations count as time off the CPU (a poll with a
/// zero timeout takes about 1 µs).
const GAP_MIN_NS: u64 = 20_000;

/// Time a spinning loop spent off its CPU between iterations (preempted, an interrupt, or the
/// hypervisor running something else), in `bench noise`'s bands: <= 50 µs, <= 200 µs, <= 1 ms,
/// longer.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Gaps {
    bands: [u64; 4],
    lost_ns: u64,
    max_ns: u64,
}

impl Gaps {
    pub(crate) fn record(&mut self, g: u64) {
        if g <= GAP_MIN_NS {
            return;
        }
        let band = [50_000, 200_000, 1_000_000]
            .iter()
            .position(|&b| g <= b)
            .unwrap_or(3);
        self.bands[band] += 1;
        self.lost_ns += g;
        self.max_ns = self.max_ns.max(g);
    }

    fn count(&self) -> u64 {
        self.bands.iter().sum()
    }
}

impl std::fmt::Display for Gaps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [a, b, c, d] = self.bands;
        write!(
            f,
            "{} gaps > 20 us (20-50: {a}, 50-200: {b}, 0.2-1 ms: {c}, > 1 ms: {d}), longest {:.0} us, {:.1} ms lost",
            self.count(),
            self.max_ns as f64 / 1e3,
            self.lost_ns as f64 / 1e6
        )
    }
}

/// The loop's self-measurement (`event_loop`'s docs, "Measuring the loop").
#[derive(Debug, Default)]
pub(crate) struct LoopWatch {
    /// Sums over all busy iterations, for the stop-time summary.
    pub(crate) sum: IterTimes,
    /// The slowest busy iteration of the current second.
    worst: IterTimes,
    /// Busy iterations over `cfg.stall_log_us` in the current second.
    slow: u64,
    /// Spinning: off-CPU gaps, this second and since the start.
    pub(crate) gaps_second: Gaps,
    pub(crate) gaps: Gaps,
    /// Spinning: when the previous iteration ended (the next poll started).
    pub(crate) prev_end: Option<Instant>,
    seconds: u64,
}

impl LoopWatch {
    pub(crate) fn busy(&mut self, t: IterTimes, slow_ns: u64) {
        let s = &mut self.sum;
        s.total += t.total;
        s.read += t.read;
        s.journal += t.journal;
        s.engine += t.engine;
        s.write += t.write;
        s.inputs += t.inputs;
        if t.total > self.worst.total {
            self.worst = t;
        }
        self.slow += u64::from(slow_ns > 0 && t.total > slow_ns);
    }

    /// Once a second: a line if the second had a busy iteration or an off-CPU gap over
    /// `slow_ns` (0: never), then a new second.
    pub(crate) fn second(&mut self, slow_ns: u64) -> Option<String> {
        self.seconds += 1;
        let line = (slow_ns > 0
            && (self.worst.total > slow_ns || self.gaps_second.max_ns > slow_ns))
            .then(|| {
                let mut l = format!(
                    "event loop, second {}: slowest iteration {}, {} over {} us",
                    self.seconds,
                    self.worst,
                    self.slow,
                    slow_ns / 1000
                );
                if self.gaps_second.count() > 0 {
                    l.push_str(&format!(
                        "; off CPU between iterations: {}",
                        self.gaps_second
                    ));
                }
                l
            });
        self.worst = IterTimes::default();
        self.slow = 0;
        self.gaps_second = Gaps::default();
        line
    }
}

/// `; host steal on CPU 0: 15 ms in the last 3.0 s` (`on all CPUs` when the loop is not
/// pinned).
pub(crate) fn steal_note(cpu: Option<usize>, stolen_ms: u64, over: Duration) -> String {
    let on = match cpu {
        Some(c) => format!("CPU {c}"),
        None => "all CPUs".to_string(),
    };
    format!(
        "; host steal on {on}: {stolen_ms} ms in the last {:.1} s",
        over.as_secs_f64()
    )
}

#[cfg(test)]
mod tests;
