//! Where the market-data publisher's time goes, batch by batch, as it measures itself: the
//! wait from the event loop's publication of a batch to the publisher's look at it, applying
//! the records to its replica (journal read, engine, feed, entries queued per subscription),
//! encoding the updates, and writing them to the subscribers' sockets.
//!
//! Role: the breakdown behind `rialto bench md`'s update latency (BENCHMARKS.md), logged when
//! the publisher stops. A few clock reads per batch, none per message.
//!
//! Never: allocates after construction (the histograms have fixed bounds and saturate).

use hdrhistogram::Histogram;

/// One batch: the stages' durations, ns, and the records it applied.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct BatchTimes {
    /// From the loop's first publication after the publisher's last look to this look
    /// (0 when unknown).
    pub(crate) wait: u64,
    pub(crate) apply: u64,
    pub(crate) encode: u64,
    pub(crate) write: u64,
    pub(crate) records: u64,
}

pub(crate) struct Stages {
    wait: Histogram<u64>,
    apply: Histogram<u64>,
    encode: Histogram<u64>,
    write: Histogram<u64>,
    batches: u64,
    records: u64,
}

impl Stages {
    pub(crate) fn new() -> Stages {
        let h = || Histogram::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds");
        Stages {
            wait: h(),
            apply: h(),
            encode: h(),
            write: h(),
            batches: 0,
            records: 0,
        }
    }

    pub(crate) fn record(&mut self, b: &BatchTimes) {
        self.batches += 1;
        self.records += b.records;
        if b.wait > 0 {
            self.wait.saturating_record(b.wait);
        }
        self.apply.saturating_record(b.apply.max(1));
        self.encode.saturating_record(b.encode.max(1));
        self.write.saturating_record(b.write.max(1));
    }

    /// One line: batches, records per batch, and each stage's P50 / P99 in µs.
    pub(crate) fn summary(&self) -> String {
        let us = |h: &Histogram<u64>, q: f64| h.value_at_quantile(q) as f64 / 1e3;
        let stage = |name: &str, h: &Histogram<u64>| {
            format!("{name} {:.1} / {:.1}", us(h, 0.5), us(h, 0.99))
        };
        format!(
            "market data: {} batches, {:.2} records each; µs P50 / P99: {}, {}, {}, {}",
            self.batches,
            self.records as f64 / self.batches.max(1) as f64,
            stage("wait for the publisher", &self.wait),
            stage("apply", &self.apply),
            stage("encode", &self.encode),
            stage("write", &self.write),
        )
    }
}

#[cfg(test)]
mod tests;
