//! What the running server's threads share: its counters, its log, the sequencer's clock.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// How a server reports progress (start, snapshots, stop).
pub type Logger = Arc<dyn Fn(&str) + Send + Sync>;

/// Wall clock in ns since the Unix epoch (only the sequencer reads it).
pub(crate) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// Counters of the running server, for the operator and the tests.
#[derive(Default)]
pub struct Counters {
    pub inputs: AtomicU64,
    /// Journal batches (group commits), one per busy loop iteration.
    pub batches: AtomicU64,
    /// Application messages answered "exchange busy" (their session or firm had too many
    /// waiting).
    pub busy_rejects: AtomicU64,
    /// Application messages answered "throttled" (over their session's limits).
    pub throttled: AtomicU64,
    /// Connections accepted.
    pub connections: AtomicU64,
    /// Connections closed at once: over `max_connections`, or too many not logged on.
    pub refused_connections: AtomicU64,
    pub snapshots: AtomicU64,
    /// Hash of the last snapshot (or of the state at start).
    pub state_hash: AtomicU64,
    pub last_seq: AtomicU64,
    /// Longest loop iteration that had work (ns): read + journal + apply + write.
    pub max_iteration_ns: AtomicU64,
    /// Iterations with work that took longer than 1 ms.
    pub slow_iterations: AtomicU64,
    /// The last record the snapshot replica has applied since start (0: none). It follows
    /// the journal only when snapshots are periodic (`Config::periodic_snapshots`).
    pub replica_seq: AtomicU64,
    /// New orders the exchange has taken in since start (recovery's replay included), from
    /// every edge; `api_orders` of them from API keys. Copied after each batch.
    pub orders: AtomicU64,
    pub api_orders: AtomicU64,
    /// Execution reports and trades the exchange has made since start (replay included).
    pub reports: AtomicU64,
    pub trades: AtomicU64,
    /// Open FIX order-entry connections, and those of them logged on (updated each second).
    pub fix_connections_open: AtomicU64,
    pub fix_sessions_logged_on: AtomicU64,
    /// Busy event-loop iterations (read, journal, apply, write: the exchange's part of an
    /// order's round trip) and their journal steps (appends and commit), by duration.
    pub iterations: Log2Histogram,
    pub commits: Log2Histogram,
}

/// Durations counted by power of two of a unit (a microsecond by default), written by one
/// thread with relaxed atomics (no lock, no allocation) and read by any: bucket 0 holds those
/// under one unit, bucket `i` those under `2^i` units, the last one the rest.
#[derive(Default)]
pub struct Log2Histogram {
    buckets: [AtomicU64; LOG2_BUCKETS],
    sum_ns: AtomicU64,
    /// The unit is `2^unit_shift` µs.
    unit_shift: u32,
}

/// Buckets of a [`Log2Histogram`]: the last counts from 2^14 units (16 ms at 1 µs) up.
pub const LOG2_BUCKETS: usize = 16;

impl Log2Histogram {
    /// Buckets of `2^i * 2^unit_shift` µs: a shift of 7 counts up to 2.1 s.
    pub fn with_unit_shift(unit_shift: u32) -> Log2Histogram {
        Log2Histogram {
            unit_shift,
            ..Log2Histogram::default()
        }
    }

    pub fn record(&self, ns: u64) {
        let units = (ns / 1000) >> self.unit_shift;
        let b = (64 - units.leading_zeros() as usize).min(LOG2_BUCKETS - 1);
        self.buckets[b].fetch_add(1, Ordering::Relaxed);
        self.sum_ns.fetch_add(ns, Ordering::Relaxed);
    }

    /// The count of each bucket.
    pub fn counts(&self) -> [u64; LOG2_BUCKETS] {
        std::array::from_fn(|i| self.buckets[i].load(Ordering::Relaxed))
    }

    pub fn sum_ns(&self) -> u64 {
        self.sum_ns.load(Ordering::Relaxed)
    }

    /// Bucket `i`'s upper bound in µs (`None`: the last, unbounded).
    pub fn upper_us(&self, i: usize) -> Option<u64> {
        (i + 1 < LOG2_BUCKETS).then(|| 1u64 << (i as u32 + self.unit_shift))
    }
}
