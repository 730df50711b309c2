//! When requests are due and when to wake for them: the open-loop schedule and the timer's
//! learnt lead.
//!
//! Role: `Schedule` turns a total rate into `batch` requests every `tick_ns` (one request per
//! tick up to one per `tick_min`; above that, small batches, each batch to one bot, bots in
//! turn), so the offered rate is exact and the generator wakes at most once per tick.
//! `WakeEarly` learns how late the generator is ready to send after a timer expiry, so the
//! driver can arm the timer that much early and spin on the clock for the rest.
//!
//! Never: reads a clock or does I/O (the driver feeds it times); lets an intended time go
//! backwards as the request index grows.

const NS_PER_S: u64 = 1_000_000_000;

/// When requests are due: `batch` requests at each multiple of `tick_ns` after the start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Schedule {
    pub batch: u64,
    pub tick_ns: u64,
}

impl Schedule {
    /// The schedule for `total_rate` requests/s with ticks no shorter than `tick_min_ns`.
    pub fn new(total_rate: u64, tick_min_ns: u64) -> Schedule {
        let rate = u128::from(total_rate.max(1));
        let ns = u128::from(NS_PER_S);
        let batch = (rate * u128::from(tick_min_ns.max(1))).div_ceil(ns).max(1);
        let tick_ns = ((batch * ns + rate / 2) / rate).max(1);
        Schedule {
            batch: batch as u64,
            tick_ns: tick_ns as u64,
        }
    }

    /// Intended send time of request `k`, ns after the start.
    pub fn intended_ns(&self, k: u64) -> u64 {
        (k / self.batch).saturating_mul(self.tick_ns)
    }

    /// Index of the first request due at or after `t_ns`.
    pub fn first_at_or_after(&self, t_ns: u64) -> u64 {
        t_ns.div_ceil(self.tick_ns).saturating_mul(self.batch)
    }

    /// The bot that sends request `k`.
    pub fn bot(&self, k: u64, bots: u64) -> usize {
        ((k / self.batch) % bots.max(1)) as usize
    }

    /// Offered requests per second.
    pub fn rate(&self) -> f64 {
        self.batch as f64 * 1e9 / self.tick_ns as f64
    }
}

/// How early to arm the tick timer so the generator is awake at the due time.
///
/// On a VM a timer wake-up arrives tens of µs after its expiry (about 40 µs here), and every
/// request of the tick would carry that lag into its latency. This tracks a quantile of how
/// late the generator is ready to send after each expiry (the wake-up plus the look at the
/// sockets that precedes the sends; a streaming estimate: up by `step * q` when a sample is
/// above it, down by `step * (1 - q)` otherwise, so it settles where a share `q` of samples is
/// below) and the driver arms the timer that much before each tick, then spins on the clock
/// (no system calls) for the rest. With `q` = 0.95 (the default) the generator is late by the
/// upper 5% of that spread and spins a few µs more per tick than with 0.7 (on this VM
/// 2-5% more of a core from 5K to 100K req/s; at 100K req/s, P99 119 µs instead of 205, medians
/// of 3); `DriverConfig::wake_quantile`.
#[derive(Clone, Copy, Debug)]
pub struct WakeEarly {
    est_ns: u64,
    /// The lead the timer is armed with now.
    pub armed_ns: u64,
    max_ns: u64,
    step_up_ns: u64,
    step_down_ns: u64,
}

impl WakeEarly {
    /// The two steps together (up `STEP_NS * q`, down `STEP_NS * (1 - q)`).
    const STEP_NS: f64 = 500.0;
    /// The default quantile.
    pub const QUANTILE: f64 = 0.95;
    /// Re-arm (a system call and a timer reprogramming) only when the estimate has moved this
    /// far from the armed lead.
    const REARM_NS: u64 = 2_000;

    /// An estimator of the default quantile whose lead never exceeds `max_ns` (e.g. half a
    /// tick).
    pub fn new(max_ns: u64) -> WakeEarly {
        WakeEarly::with_quantile(max_ns, Self::QUANTILE)
    }

    /// An estimator of quantile `q` (clamped to 0.5..=0.999).
    pub fn with_quantile(max_ns: u64, q: f64) -> WakeEarly {
        let q = q.clamp(0.5, 0.999);
        WakeEarly {
            est_ns: 0,
            armed_ns: 0,
            max_ns,
            step_up_ns: (Self::STEP_NS * q).round() as u64,
            step_down_ns: ((Self::STEP_NS * (1.0 - q)).round() as u64).max(1),
        }
    }

    /// One wake-up `lateness_ns` after the timer's expiry. True when the timer should be
    /// re-armed with the new `armed_ns`.
    pub fn sample(&mut self, lateness_ns: u64) -> bool {
        if lateness_ns > self.est_ns {
            self.est_ns = (self.est_ns + self.step_up_ns).min(self.max_ns);
        } else {
            self.est_ns = self.est_ns.saturating_sub(self.step_down_ns);
        }
        if self.est_ns.abs_diff(self.armed_ns) >= Self::REARM_NS {
            self.armed_ns = self.est_ns;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests;
