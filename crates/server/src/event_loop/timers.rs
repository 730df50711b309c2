//! What the loop does once a second and at stop: the `Tick` record, overdue connections, the
//! log lines of the last second, snapshots, and the summary of the loop's iterations.
//!
//! Role: the timer step of an iteration (`tick`); the snapshot check after each batch (by
//! count and time; to the snapshot thread's replica when it works, else serialized inline);
//! the loop's self-measurement lines (`watch`).
//!
//! Never: reads `/proc` per iteration (only in a slow second's line and at stop); takes a
//! snapshot while the previous one is still being written, unless stopping.
//!
//! Invariants: time passing reaches the exchange only as a journaled `Tick`.

use super::EventLoop;
use crate::config::Idle;
use crate::counters::now_ns;
use crate::error::ServerError;
use crate::record::Record;
use crate::snapshots::SnapshotJob;
use crate::watch::steal_note;
use journal::Log;
use std::sync::atomic::Ordering;
use std::time::Instant;

impl<L: Log> EventLoop<L> {
    /// Once a second: sessions' timers and the trading day (a `Record::Tick`), overdue
    /// connections closed, the log lines of the last second, and the snapshot check.
    pub(super) fn tick(&mut self, t0: Instant) -> Result<(), ServerError> {
        // Sessions' timers, and the end (or start) of the trading day even with
        // no one connected: the journaled Tick is what expires DAY orders, so a
        // replay does the same at the same record.
        let day_changes = now_ns() >= self.node.exchange.next_day_change_ns();
        if !self.conns.is_empty() || day_changes {
            self.batch.push(Record::Tick);
        }
        self.close_overdue(t0);
        let open = self.conns.len();
        let c = &self.counters;
        c.fix_connections_open.store(open as u64, Ordering::Relaxed);
        c.fix_sessions_logged_on.store(
            open.saturating_sub(self.pending_logons) as u64,
            Ordering::Relaxed,
        );
        if self.throttled_unlogged > 0 {
            tracing::warn!(
                throttled = std::mem::take(&mut self.throttled_unlogged),
                "application messages answered \"throttled\" in the last second"
            );
        }
        if self.shed_unlogged > 0 {
            tracing::warn!(
                shed = std::mem::take(&mut self.shed_unlogged),
                "overload: application messages answered \"exchange busy\" in the last second"
            );
        }
        if let Some(mut line) = self.watch.second(self.cfg.stall_log_us * 1000) {
            line.push_str(&self.steal_note());
            (self.log)(&line);
        }
        self.maybe_snapshot(false)?;
        Ok(())
    }

    /// For a slow second's line: the host's steal time on the loop's CPU since the last such
    /// line (or the start), which says whether the loop was slow or was not running. Empty
    /// where the kernel does not report steal time.
    fn steal_note(&mut self) -> String {
        let now = sched_idle::steal_ms(self.steal_cpu);
        let at = Instant::now();
        let note = match (now, self.steal_mark) {
            (Some(ms), Some((before, then))) => steal_note(
                self.steal_cpu,
                ms.saturating_sub(before),
                at.duration_since(then),
            ),
            _ => String::new(),
        };
        self.steal_mark = now.map(|ms| (ms, at));
        note
    }

    /// One line: how long the loop's busy iterations took.
    pub(super) fn iteration_summary(&self) -> String {
        let hist = self.counters.iterations.counts();
        let total: u64 = hist.iter().sum();
        let mut s = format!("event loop: {total} busy iterations, by duration:");
        for (i, n) in hist.iter().enumerate() {
            if *n > 0 {
                match self.counters.iterations.upper_us(i) {
                    Some(us) => s.push_str(&format!(" <{us}us:{n}")),
                    None => s.push_str(&format!(" >={}us:{n}", 1u64 << (i - 1))),
                }
            }
        }
        s.push_str(&format!(
            "; longest {:.2} ms; journal appends+commit: longest {:.2} ms, {} over 1 ms",
            self.counters.max_iteration_ns.load(Ordering::Relaxed) as f64 / 1e6,
            self.commit_max_ns as f64 / 1e6,
            self.commits_slow
        ));
        let busy = total.max(1);
        let w = &self.watch.sum;
        s.push_str(&format!(
            "; mean busy iteration {:.1} us: read {:.1}, journal {:.1}, engine {:.1}, write {:.1} ({:.1} inputs)",
            w.total as f64 / 1e3 / busy as f64,
            w.read as f64 / 1e3 / busy as f64,
            w.journal as f64 / 1e3 / busy as f64,
            w.engine as f64 / 1e3 / busy as f64,
            w.write as f64 / 1e3 / busy as f64,
            w.inputs as f64 / busy as f64
        ));
        if self.idle == Idle::Spin {
            s.push_str(&format!(
                "; off CPU between spinning iterations: {}",
                self.watch.gaps
            ));
        }
        // Involuntary context switches of this thread: time the loop was preempted.
        if let Ok(st) = std::fs::read_to_string("/proc/thread-self/status") {
            for l in st.lines().filter(|l| l.contains("ctxt_switches")) {
                s.push_str(&format!(
                    "; {}",
                    l.split_whitespace().collect::<Vec<_>>().join(" ")
                ));
            }
        }
        s
    }

    pub(super) fn maybe_snapshot(&mut self, force: bool) -> Result<u64, ServerError> {
        // A gateway's state is not in an exchange snapshot: it replays its journal.
        if self.node.exchange.is_remote() {
            return Ok(self.counters.state_hash.load(Ordering::Relaxed));
        }
        let by_count = self.cfg.snapshot_every_commands > 0
            && self.since_snapshot >= self.cfg.snapshot_every_commands;
        let by_time = self.cfg.snapshot_every_secs > 0
            && self.since_snapshot > 0
            && self.last_snapshot.elapsed().as_secs() >= self.cfg.snapshot_every_secs;
        if !(force || by_count || by_time) {
            return Ok(self.counters.state_hash.load(Ordering::Relaxed));
        }
        if !force && self.snap_busy.load(Ordering::Acquire) {
            // The previous snapshot is still being written: take this one later.
            return Ok(self.counters.state_hash.load(Ordering::Relaxed));
        }
        self.since_snapshot = 0;
        self.last_snapshot = Instant::now();
        self.snap_busy.store(true, Ordering::Release);
        let seq = self.node.last_seq();
        if !force && self.replica_ok.load(Ordering::Acquire) {
            if self.snap_tx.send(SnapshotJob::Upto { seq }).is_err() {
                return Err(ServerError("snapshot writer thread is gone".into()));
            }
            return Ok(self.counters.state_hash.load(Ordering::Relaxed));
        }
        // Inline: the loop stalls for the serialization; the file write and its fsync happen
        // on the snapshot thread.
        let t0 = Instant::now();
        let mut buf = Vec::with_capacity(1 << 20);
        let hash = self.node.snapshot_and_hash(&mut buf);
        let stall = t0.elapsed();
        self.counters.state_hash.store(hash, Ordering::Relaxed);
        let job = SnapshotJob::Bytes {
            seq,
            bytes: buf,
            hash,
            stall,
        };
        if self.snap_tx.send(job).is_err() {
            return Err(ServerError("snapshot writer thread is gone".into()));
        }
        Ok(hash)
    }
}
