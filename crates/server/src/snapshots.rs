//! Snapshots: the `snapshot` thread writes them (atomically, durably) and prunes old ones;
//! its replica, a journal [`Follower`] on the `snapshot-idle` thread, makes periodic ones cost
//! the event loop nothing.
//!
//! Never: stalls the loop for a periodic snapshot (the replica is serialized instead; only the
//! final snapshot of a clean stop, or every one if the replica failed, is the loop's own);
//! loses anything when a snapshot fails (the journal has it all: it is reported and the server
//! goes on).

use crate::config::Config;
use crate::counters::{Counters, Logger};
use crate::error::ServerError;
use crate::follower::{FollowEnd, Follower};
use crate::node::Node;
use crossbeam_channel::{bounded, Receiver, Sender};
use exchange::Backing;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Share of a core the idle-class replica helper must get while it has work (behind the loop,
/// or a job) before it is moved to the normal class (see `SnapshotWriter`).
const REPLICA_SHARE_MIN: f64 = 0.25;
/// How far the helper's CPU time in a window may fall behind that share before it is moved.
const REPLICA_STARVED_AFTER: Duration = Duration::from_millis(100);
/// How often the snapshot thread looks at the replica's progress.
const REPLICA_WATCH_EVERY: Duration = Duration::from_millis(100);
/// Longest window over which the helper's share is judged (a good past does not hide a
/// starved present for long).
const REPLICA_WINDOW: Duration = Duration::from_secs(2);
/// Records the replica may be behind the loop without counting as behind (a follow period's
/// worth at 200K/s, twice over).
const REPLICA_LAG_MAX: u64 = 20_000;
/// How often the snapshot replica, between jobs, replays what the loop committed meanwhile.
const REPLICA_FOLLOW_EVERY: Duration = Duration::from_millis(50);

/// Work for the snapshot thread.
pub(crate) enum SnapshotJob {
    /// Bring the replica forward to journal record `seq` (already committed), then serialize
    /// and write it. The loop does not stall at all.
    Upto { seq: u64 },
    /// A snapshot the loop serialized itself (the final one at a clean stop, or every one if
    /// the replica failed).
    Bytes {
        seq: u64,
        bytes: Vec<u8>,
        hash: u64,
        /// How long the engine stood still to serialize it.
        stall: Duration,
    },
}

/// The snapshot thread: writes snapshots (atomically, durably) and prunes old ones; parked
/// otherwise. Its replica is a `Node` restored from the state at start and brought
/// forward by replaying the journal (deterministic, so it equals the live state at the same
/// record); serializing the replica costs the event loop nothing. If the replica fails (a
/// journal read error), it says so and clears `replica_ok`: the loop then serializes inline.
///
/// Who does the replica's work: a helper thread, `snapshot-idle`, in
/// the `SCHED_IDLE` class (crate `sched_idle`), holds the replica and follows the journal:
/// every [`REPLICA_FOLLOW_EVERY`] it replays up to the last record the loop has committed and
/// applied (`Counters::last_seq`), so the replay is spread over the CPU the loop leaves idle
/// instead of coming in a burst when a snapshot falls due. An idle-class thread runs only on a
/// CPU nothing else wants and a waking normal thread preempts it at once (a nice-19 or paced
/// nice-0 thread may keep the CPU for the rest of its slice). A due snapshot then only needs
/// the last records: the helper replays to the record asked for (or stays where it is if it
/// is past it: a fixed target, since a moving one could stay out of reach), and hands the
/// replica to this thread, which serializes it (at nice 0: 100-300 ms for 50-90 MB), writes
/// it and hands it back.
///
/// Minimum share: on a saturated machine an idle-class thread can get no CPU for tens of
/// seconds (measured here: 21 s for a job). So this thread watches the helper every
/// [`REPLICA_WATCH_EVERY`]: while the replica is more than [`REPLICA_LAG_MAX`] records behind
/// the loop or a job waits, a helper whose CPU time in the current window falls more than
/// [`REPLICA_STARVED_AFTER`] behind [`REPLICA_SHARE_MIN`] of the window is moved to the normal
/// class (`sched_idle::set_normal`), where it paces itself to a quarter of a core, until it has
/// caught up and no job waits; then back to `SCHED_IDLE`. So the replica has the quarter core
/// it always had when the machine is busy, and more only from idle CPU. Leaving `SCHED_IDLE`
/// needs `CAP_SYS_NICE` or an `RLIMIT_NICE` of 20 (root, or e.g. systemd's `LimitNICE=-20`);
/// without it the server says so once and snapshots wait for idle CPU. The replica is always
/// in exactly one place: with the helper, in a channel, or with this thread for the
/// serialization and the write.
pub(crate) struct SnapshotWriter {
    pub(crate) cfg: Arc<Config>,
    pub(crate) data_dir: PathBuf,
    pub(crate) busy: Arc<AtomicBool>,
    pub(crate) replica_ok: Arc<AtomicBool>,
    /// The server is stopping: a replay under way gives up (the loop writes the final one).
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) counters: Arc<Counters>,
    pub(crate) log: Logger,
    /// What the helper publishes for this thread's watch.
    pub(crate) helper: HelperState,
}

/// The helper's side of the minimum-share watch.
#[derive(Default)]
pub(crate) struct HelperState {
    /// Kernel thread id of the helper (0 until it runs).
    tid: std::sync::atomic::AtomicI32,
    /// The helper's CPU time (ns), updated every `FOLLOW_SLICE` records while it works.
    cpu_ns: AtomicU64,
    /// The replica's last applied record, updated with `cpu_ns`.
    progress: AtomicU64,
    /// The helper runs in the normal class (it was starved): it paces itself.
    boosted: AtomicBool,
    /// Slices the helper paced itself after (it slept three times their length).
    paced: AtomicU64,
}

/// The snapshot thread's watch over the helper's share (see `SnapshotWriter`).
struct Watch {
    /// Start of the current window and the helper's CPU time (ns) then.
    since: Instant,
    cpu0: u64,
    /// In the normal class since this time.
    boosted: Option<Instant>,
    /// Leaving SCHED_IDLE was refused (no privilege): do not try again.
    refused: bool,
}

/// The replica and everything the two threads hand each other with it.
struct Leg {
    follower: Follower,
    /// Replay target of the current stretch (at most the last committed record).
    upto: u64,
    /// The record a snapshot was asked at, while a job is under way.
    job: Option<u64>,
    /// Serialization buffer (reused).
    bytes: Vec<u8>,
}

/// From the snapshot thread to the helper.
enum ToHelper {
    /// Replay to (at least) this record, then hand the replica over.
    Job(u64),
    /// The replica comes back.
    Leg(Box<Leg>),
}

/// From the helper to the snapshot thread.
enum FromHelper {
    /// The job's replica, at its target.
    Done(Box<Leg>),
    Stopped(Box<Leg>),
    /// The replica is lost (restore or journal read failed).
    Failed(ServerError),
}

impl SnapshotWriter {
    pub(crate) fn run(
        self,
        rx: Receiver<SnapshotJob>,
        initial: Vec<u8>,
    ) -> Result<(), ServerError> {
        let (to_tx, to_rx) = bounded::<ToHelper>(2);
        let (from_tx, from_rx) = bounded::<FromHelper>(2);
        std::thread::scope(|scope| {
            let spawned = {
                let this = &self;
                std::thread::Builder::new()
                    .name("snapshot-idle".into())
                    .spawn_scoped(scope, move || this.helper(initial, to_rx, from_tx))
            };
            if let Err(e) = spawned {
                self.replica_failed(&format!("cannot start the snapshot-idle thread: {e}"));
            }
            // Returning drops `to_tx` and `from_rx`, which ends the helper.
            self.serve_jobs(rx, to_tx, from_rx)
        })
    }

    /// The `snapshot-idle` thread: restores the replica, then follows the journal and answers
    /// snapshot jobs until the snapshot thread hangs up.
    fn helper(&self, initial: Vec<u8>, rx: Receiver<ToHelper>, tx: Sender<FromHelper>) {
        use crossbeam_channel::RecvTimeoutError;
        self.helper
            .tid
            .store(sched_idle::current_tid(), Ordering::Release);
        // Lowering our own priority is always allowed.
        if let Err(e) = sched_idle::enter() {
            (self.log)(&format!(
                "snapshot replica: cannot enter SCHED_IDLE ({e}); it runs at normal priority"
            ));
        }
        // Lazy backing: faulting a resident replica's tables in here, while the loop already
        // serves, holds the memory-map lock so long that the loop's first heap growth (an
        // `mprotect`) waits for it, tens of milliseconds.
        let mut home = match Node::restore(&self.cfg, &initial, Backing::Lazy) {
            Ok(node) => Some(Box::new(Leg {
                follower: Follower::new(node, journal::JournalDir::new(&self.data_dir)),
                upto: 0,
                job: None,
                bytes: initial,
            })),
            Err(e) => {
                let why = format!("cannot restore the replica: {e}");
                let _ = tx.send(FromHelper::Failed(ServerError(why)));
                None
            }
        };
        // With no periodic snapshots nothing will ask for the replica (the final snapshot of a
        // clean stop is the loop's own): it stays where it started instead of following.
        let follow = self.cfg.periodic_snapshots();
        loop {
            let msg = match &home {
                // Following: look again after a while.
                Some(_) if follow => match rx.recv_timeout(REPLICA_FOLLOW_EVERY) {
                    Ok(m) => Some(m),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return,
                },
                // The replica is away (or lost), or does not follow: wait.
                _ => match rx.recv() {
                    Ok(m) => Some(m),
                    Err(_) => return,
                },
            };
            match msg {
                Some(ToHelper::Job(seq)) => match home.as_mut() {
                    Some(leg) => {
                        leg.upto = seq.max(leg.follower.last_seq());
                        leg.job = Some(seq);
                    }
                    None => {
                        let lost = ServerError("the replica is lost".into());
                        if tx.send(FromHelper::Failed(lost)).is_err() {
                            return;
                        }
                    }
                },
                Some(ToHelper::Leg(leg)) => home = Some(leg),
                None => {}
            }
            let Some(leg) = home.as_mut() else {
                continue;
            };
            if leg.job.is_none() {
                if !follow {
                    continue;
                }
                // Following: as far as the loop has committed.
                leg.upto = self.counters.last_seq.load(Ordering::Acquire);
                if leg.upto <= leg.follower.last_seq() {
                    continue;
                }
            }
            let forwarded = forward(leg, &self.stop, &self.helper);
            self.counters
                .replica_seq
                .store(leg.follower.last_seq(), Ordering::Relaxed);
            let answer = match forwarded {
                Ok(FollowEnd::Done) if leg.job.is_some() => home.take().map(FromHelper::Done),
                Ok(FollowEnd::Stopped) if leg.job.is_some() => home.take().map(FromHelper::Stopped),
                Ok(_) => None,
                Err(e) => {
                    home = None;
                    Some(FromHelper::Failed(e))
                }
            };
            if let Some(a) = answer {
                if tx.send(a).is_err() {
                    return;
                }
            }
        }
    }

    fn serve_jobs(
        &self,
        rx: Receiver<SnapshotJob>,
        helper: Sender<ToHelper>,
        back: Receiver<FromHelper>,
    ) -> Result<(), ServerError> {
        use crossbeam_channel::RecvTimeoutError;
        let mut watch = Watch {
            since: Instant::now(),
            cpu0: 0,
            boosted: None,
            refused: false,
        };
        loop {
            let job = match rx.recv_timeout(REPLICA_WATCH_EVERY) {
                Ok(job) => job,
                Err(RecvTimeoutError::Timeout) => {
                    self.watch(&mut watch, false);
                    continue;
                }
                Err(RecvTimeoutError::Disconnected) => break,
            };
            let t0 = Instant::now();
            match job {
                SnapshotJob::Bytes {
                    seq,
                    bytes,
                    hash,
                    stall,
                } => {
                    let how = format!("engine stall {:.1} ms", stall.as_secs_f64() * 1e3);
                    self.write(seq, &bytes, hash, &how, t0);
                }
                SnapshotJob::Upto { seq } => {
                    if self.replica_ok.load(Ordering::Acquire) {
                        self.replica_job(seq, t0, &helper, &back, &mut watch);
                    }
                }
            }
            self.busy.store(false, Ordering::Release);
        }
        if watch.boosted.is_some() {
            self.helper.boosted.store(false, Ordering::Release);
        }
        Ok(())
    }

    /// The minimum-share watch, every `REPLICA_WATCH_EVERY`: while the replica is behind the
    /// loop (or a job waits), a helper that got less than `REPLICA_SHARE_MIN` of a core in the
    /// current window is moved to the normal class (paced); once it has caught up (and no job
    /// waits), back to `SCHED_IDLE`.
    fn watch(&self, w: &mut Watch, job_waits: bool) {
        let cpu = self.helper.cpu_ns.load(Ordering::Acquire);
        // A replica that does not follow (no periodic snapshots) is never behind.
        let behind = self.cfg.periodic_snapshots()
            && self
                .counters
                .last_seq
                .load(Ordering::Acquire)
                .saturating_sub(self.helper.progress.load(Ordering::Acquire))
                > REPLICA_LAG_MAX;
        let tid = self.helper.tid.load(Ordering::Acquire);
        if w.boosted.is_some() {
            if !behind && !job_waits {
                self.helper.boosted.store(false, Ordering::Release);
                let _ = sched_idle::set_idle(tid);
                w.boosted = None;
                (w.since, w.cpu0) = (Instant::now(), cpu);
            }
            return;
        }
        if !(behind || job_waits) || w.refused || tid == 0 {
            // Nothing to do: a new window starts.
            (w.since, w.cpu0) = (Instant::now(), cpu);
            return;
        }
        let got = Duration::from_nanos(cpu.saturating_sub(w.cpu0));
        if got + REPLICA_STARVED_AFTER >= w.since.elapsed().mul_f64(REPLICA_SHARE_MIN) {
            if w.since.elapsed() >= REPLICA_WINDOW {
                // It got its share over a whole window: judge the next one on its own.
                (w.since, w.cpu0) = (Instant::now(), cpu);
            }
            return;
        }
        self.helper.boosted.store(true, Ordering::Release);
        match sched_idle::set_normal(tid) {
            Ok(()) => w.boosted = Some(Instant::now()),
            Err(e) => {
                self.helper.boosted.store(false, Ordering::Release);
                w.refused = true;
                (self.log)(&format!(
                    "snapshot replica: starved, but cannot leave SCHED_IDLE ({e}; needs CAP_SYS_NICE or RLIMIT_NICE 20); snapshots wait for idle CPU"
                ));
            }
        }
    }

    /// A periodic snapshot from the replica: asks the helper, watches its share (boosting it
    /// when starved), serializes and writes what it hands over, and hands the replica back.
    fn replica_job(
        &self,
        seq: u64,
        t0: Instant,
        helper: &Sender<ToHelper>,
        back: &Receiver<FromHelper>,
        watch: &mut Watch,
    ) {
        use crossbeam_channel::RecvTimeoutError;
        let cpu0 = self.helper.cpu_ns.load(Ordering::Acquire);
        let boosted_before = watch.boosted.is_some();
        if helper.send(ToHelper::Job(seq)).is_err() {
            return self.replica_failed("the snapshot-idle thread is gone");
        }
        let answer = loop {
            match back.recv_timeout(REPLICA_WATCH_EVERY) {
                Ok(a) => break a,
                Err(RecvTimeoutError::Disconnected) => {
                    break FromHelper::Failed(ServerError(
                        "the snapshot-idle thread is gone".into(),
                    ))
                }
                Err(RecvTimeoutError::Timeout) => self.watch(watch, true),
            }
        };
        let boosted_at = watch.boosted.map(|b| {
            if boosted_before {
                Duration::ZERO
            } else {
                b.duration_since(t0)
            }
        });
        let mut leg = match answer {
            FromHelper::Done(leg) => leg,
            FromHelper::Stopped(mut leg) => {
                // The loop writes the final snapshot; the replica goes home, idle.
                leg.job = None;
                let _ = helper.send(ToHelper::Leg(leg));
                return;
            }
            FromHelper::Failed(e) => return self.replica_failed(&e.0),
        };
        let caught_up = t0.elapsed();
        let cpu = Duration::from_nanos(
            self.helper
                .cpu_ns
                .load(Ordering::Acquire)
                .saturating_sub(cpu0),
        );
        // Serialized here, at nice 0 (in the helper it could stall for seconds on a busy
        // machine).
        leg.bytes.clear();
        let hash = leg.follower.node().snapshot_and_hash(&mut leg.bytes);
        let at = leg.follower.last_seq();
        let how = format!(
            "engine stall 0 ms (replica asked at seq {seq}, caught up in {:.1} ms with {:.1} ms of CPU{}, serialized in {:.1} ms)",
            caught_up.as_secs_f64() * 1e3,
            cpu.as_secs_f64() * 1e3,
            match boosted_at {
                Some(b) => format!(
                    "; starved, in the normal class from {:.1} ms on",
                    b.as_secs_f64() * 1e3
                ),
                None => String::new(),
            },
            (t0.elapsed() - caught_up).as_secs_f64() * 1e3
        );
        leg.job = None;
        self.write(at, &leg.bytes, hash, &how, t0);
        if helper.send(ToHelper::Leg(leg)).is_err() {
            self.replica_failed("the snapshot-idle thread is gone");
        }
    }

    /// Writes (atomically, durably) and prunes; logs the outcome. A failed snapshot loses
    /// nothing (the journal has it all): it is reported and the server goes on.
    fn write(&self, seq: u64, bytes: &[u8], hash: u64, how: &str, t0: Instant) {
        let prepared = t0.elapsed();
        let r = journal::snapshot::write(&self.data_dir, seq, bytes).and_then(|path| {
            journal::snapshot::prune(&self.data_dir, journal::snapshot::SNAPSHOTS_KEPT_DEFAULT)?;
            Ok(path)
        });
        let written = t0.elapsed() - prepared;
        match r {
            Ok(path) => {
                self.counters.snapshots.fetch_add(1, Ordering::Relaxed);
                self.counters.state_hash.store(hash, Ordering::Relaxed);
                (self.log)(&format!(
                    "snapshot at seq {seq}: {} bytes, {how}, written in {:.1} ms to {}; state hash {hash:016x}",
                    bytes.len(),
                    written.as_secs_f64() * 1e3,
                    path.display(),
                ));
            }
            Err(e) => (self.log)(&format!("snapshot at seq {seq} failed: {e}")),
        }
    }

    fn replica_failed(&self, why: &str) {
        self.replica_ok.store(false, Ordering::Release);
        (self.log)(&format!(
            "snapshot replica stopped ({why}); snapshots are now serialized by the event loop"
        ));
    }
}

/// CPU time of the calling thread.
pub(crate) fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Brings the replica to `leg.upto` (outbound messages are regenerated and dropped),
/// publishing its CPU time every slice for the snapshot thread's watch and, while
/// `state.boosted`, pacing itself to a quarter of a core. Returns `Stopped` if it gave up
/// because the server is stopping (the replica stays consistent, just behind).
fn forward(
    leg: &mut Leg,
    stop: &AtomicBool,
    state: &HelperState,
) -> Result<FollowEnd, ServerError> {
    let mut slice = Instant::now();
    let publish = |node: &Node| {
        state
            .cpu_ns
            .store(thread_cpu().as_nanos() as u64, Ordering::Release);
        state.progress.store(node.last_seq(), Ordering::Release);
    };
    leg.follower.follow_to(leg.upto, |node| {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        publish(node);
        if state.boosted.load(Ordering::Acquire) {
            // In the normal class: a quarter of a core, so the loop and the generator keep
            // theirs.
            state.paced.fetch_add(1, Ordering::Relaxed);
            std::thread::sleep(slice.elapsed() * 3);
        }
        slice = Instant::now();
        true
    })
}

#[cfg(test)]
mod tests;
