//! Recovery: the newest valid snapshot plus a replay of the journal after it.
//!
//! Role: rebuild the state (`Node`) exactly as it was after the last durable record, at start
//! ([`recover_and_open`], which also opens the journal for appending) and for `journal verify`
//! ([`recover`], read-only, or a full replay from record 1). Outbound messages are regenerated
//! by `Node::apply` and thrown away.
//!
//! Never: skips or guesses a record (a gap or a bad record stops recovery with the segment and
//! offset), or accepts a snapshot whose sequence number disagrees with its contents.
//!
//! Invariant: snapshot + tail gives the same state hash as a full replay from record 1.
//!
//! Threads: start-up has the machine to itself, so the journal is read, checksum-verified and
//! decoded on a second (scoped) thread, straight into the slots of recycled batches handed over
//! through a bounded queue, while the calling thread applies them in order. Both block (never
//! spin) when the other is behind; a decoder that is ahead waits until the queue is half
//! drained, so the applying thread rarely has to wake it. The outcome is exactly that of one
//! thread: the same records applied in the same order, and the first error (bad record, gap)
//! stops recovery. An exchange made for a replay from record 1 (`Backing::Background`) has its
//! tables faulted in by a third thread, `SCHED_IDLE`, once the decoder has made its batches
//! (`while_populating`); it changes no state and is joined before recovery returns.
//!
//! One journal pass at start ([`recover_and_open`]): the journal writer's open scan, which must
//! verify every record anyway (it decides where the torn tail is), is the replay's reader. The
//! scan starts at once on the second thread and verifies the records the newest snapshot file
//! already covers while the calling thread loads that snapshot; from the record after it on, it
//! also decodes and hands records to the applying thread. Only if that snapshot turns out
//! unusable (damaged, older format) does an older state (or record 1) need records the scan
//! has passed: the scan then just verifies to the end and a second pass replays from the
//! older state (rare; reported in the phases as 2 journal passes).

use crate::config::Config;
use crate::error::ServerError;
use crate::node::{record_hashes, resolvable, Node};
use crate::record::{decode_record_into, Checkpoint, Record, KIND_RECORD};
use crossbeam_channel::bounded;
use exchange::{Backing, ClHasher, ClHashes, ClHint, ClResolver};
use fix_gateway::{FixConfig, Outbox};
use journal::snapshot::Snapshot;
use journal::{JournalConfig, JournalError, JournalReader, JournalWriter, RecoveryReport};
use std::collections::VecDeque;
use std::fmt;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// What recovery found.
#[derive(Clone, Debug)]
pub struct Recovered {
    pub snapshot_seq: Option<u64>,
    pub replayed: u64,
    pub last_seq: u64,
    pub state_hash: u64,
    pub journal_report: String,
    pub elapsed: Duration,
    /// Where the start-up time went.
    pub phases: Phases,
}

/// Start-up phases. The journal scan and the snapshot load overlap (two threads), so the
/// phases add up to more than the total.
#[derive(Clone, Debug, Default)]
pub struct Phases {
    /// Journal scan (read, CRC and sequence check) up to the snapshot's record: from the start
    /// until the first record to replay was reached (the whole scan for an empty tail).
    pub journal_scan: Duration,
    /// Reading, verifying and restoring the snapshot.
    pub snapshot_load: Duration,
    /// From the moment both the snapshot and the scan were ready to the last record applied.
    pub replay: Duration,
    /// The journal open in all, torn tail truncated (overlaps the replay).
    pub journal_open: Duration,
    /// Times the journal was read: 1, or 2 if the newest snapshot file was unusable.
    pub journal_passes: u32,
    pub total: Duration,
    /// CPU time of the thread that read, verified and decoded the journal (Linux only:
    /// `/proc/thread-self/schedstat`; `None` elsewhere). With the records decoded, the
    /// decoder's cost per record.
    pub decoder_cpu: Option<Duration>,
    /// The checkpoint record whose bounds let the replay skip storing messages the resend
    /// stores forget anyway ([`store_bound`]), if one was found.
    pub store_bound: Option<u64>,
    /// How a full replay's ClOrdID lookups were answered (`Node::begin_resolving`), if
    /// the decoding thread answered them.
    pub resolved: Option<String>,
}

impl fmt::Display for Phases {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "journal scan to the snapshot {:.3}s, snapshot load {:.3}s (in parallel), replay {:.3}s, journal open {:.3}s in all ({} pass{}), total {:.3}s",
            self.journal_scan.as_secs_f64(),
            self.snapshot_load.as_secs_f64(),
            self.replay.as_secs_f64(),
            self.journal_open.as_secs_f64(),
            self.journal_passes,
            if self.journal_passes == 1 { "" } else { "es" },
            self.total.as_secs_f64()
        )?;
        if let Some(cpu) = self.decoder_cpu {
            write!(f, ", decoder thread {:.3}s on CPU", cpu.as_secs_f64())?;
        }
        if let Some(seq) = self.store_bound {
            write!(f, ", resend stores bounded by checkpoint {seq}")?;
        }
        if let Some(r) = &self.resolved {
            write!(f, ", {r}")?;
        }
        Ok(())
    }
}

/// CPU time the calling thread has used (Linux `/proc/thread-self/schedstat`), `None` where
/// that is not available.
fn thread_cpu_time() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// One decoded journal record, with its ClOrdIDs' hashes (`node::record_hashes`, computed on
/// the decoding thread, which has time to spare, for `Node::apply_prehashed`).
struct Decoded {
    seq: u64,
    ts: u64,
    input: Record,
    hashes: ClHashes,
    /// The resolver's answers (`BatchSender::resolver`), if any.
    hint: ClHint,
}

/// How long `while_populating`'s thread waits for the decoder to have made its batches before
/// it faults pages in anyway (`BatchReceiver::pool_made`); the decoder runs ahead of the
/// applying thread and has made them within the first tens of milliseconds.
const POPULATE_WAIT: Duration = Duration::from_millis(200);
/// Records per batch handed from the decoder thread to the applying thread.
const BATCH_RECORDS: usize = 1024;
/// Full batches queued between the threads at most (about 8 MB of decoded records).
const BATCHES_IN_FLIGHT: usize = 32;
/// A decoder that found the queue full sleeps until the applying side has drained it to this
/// many batches: one wake-up per `BATCHES_IN_FLIGHT - RESUME_AT` batches, not one per batch.
/// The rest is the margin a waking decoder has before the applying side runs dry: 24 batches
/// are about 5 ms of applying. With 4 (about 1 ms) the applying thread waited 6-170 ms per
/// 10 M-record replay, whenever the decoder's vCPU woke late; with 24, 2-11 ms.
const RESUME_AT: usize = BATCHES_IN_FLIGHT - 8;
/// How many records ahead of the one it applies the applying thread calls `Node::prefetch`
/// (the ClOrdID index slots). The live loop's second step, `Node::prefetch_entries`, is not
/// taken here: in replay it cost 3.5% of the applying thread's instructions and gained
/// nothing measurable.
const PREFETCH_FAR: usize = 16;
/// How many records ahead the applying thread prefetches the decoded record (before
/// `Node::prefetch` reads it).
const PREFETCH_RECORD: usize = 32;

/// A batch of decoded records: `slots[..len]`. Its slots are allocated once and recycled
/// between the threads; each record is decoded straight into a slot, over the record the slot
/// held before ([`Record::decode_into`]), so nothing is constructed and moved per record.
struct Batch {
    slots: Vec<Decoded>,
    len: usize,
}

impl Batch {
    fn new() -> Batch {
        Batch {
            slots: (0..BATCH_RECORDS)
                .map(|_| Decoded {
                    seq: 0,
                    ts: 0,
                    input: Record::Tick,
                    hashes: ClHashes::default(),
                    hint: ClHint::default(),
                })
                .collect(),
            len: 0,
        }
    }

    fn records(&self) -> &[Decoded] {
        &self.slots[..self.len]
    }
}

/// The hand-over between the decoder and the applying thread: a queue of full batches, a pool
/// of applied ones to reuse, and who is asleep. One lock per batch on each side; a thread is
/// woken only if it sleeps, and a decoder ahead of the applier only once the queue is down to
/// [`RESUME_AT`] (hysteresis), so the applying thread almost never pays for a wake-up.
#[derive(Default)]
struct Handoff {
    state: Mutex<HandoffState>,
    /// A full batch is queued, or the decoder is done.
    to_applier: Condvar,
    /// The queue is down to `RESUME_AT`, or the applying side is gone.
    to_decoder: Condvar,
}

#[derive(Default)]
struct HandoffState {
    full: VecDeque<Batch>,
    empty: Vec<Batch>,
    /// Batches the decoder has made so far (it makes one only when the pool is empty): once
    /// it has made more than `BATCHES_IN_FLIGHT`, it makes no more, and no longer allocates.
    made: usize,
    decoder_done: bool,
    applier_gone: bool,
    applier_waits: bool,
    decoder_waits: bool,
}

impl HandoffState {
    /// The decoder will make no more batches: it has made every one it will (a full queue
    /// and the two the applying side holds), or it is done, or the applying side is gone.
    fn pool_made(&self) -> bool {
        self.made > BATCHES_IN_FLIGHT || self.decoder_done || self.applier_gone
    }
}

impl Handoff {
    /// The state; a panic elsewhere never leaves it half-updated (no code that can panic runs
    /// under the lock), so a poisoned lock is still usable.
    fn lock(&self) -> MutexGuard<'_, HandoffState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The decoding side of the hand-over: decodes records into batches and queues full ones,
/// reusing the batches the applying side has finished with. Dropping it (also in a panic)
/// tells the applying side that no more batches come.
struct BatchSender {
    batch: Batch,
    handoff: Arc<Handoff>,
    /// The applying exchange's ClOrdID hasher, once known (`None`: no hashes computed ahead;
    /// the exchange computes them).
    hasher: Option<ClHasher>,
    /// Answers the ClOrdID lookups of a full replay ahead (`Node::begin_resolving`): run
    /// over each full batch before it is queued.
    resolver: Option<ClResolver>,
    /// The FIX edge's configuration (which session a Logon names, for the resolver).
    fix_cfg: Arc<FixConfig>,
}

impl BatchSender {
    /// Decodes and queues one record. `Ok(false)`: the applying side hung up (it stopped with
    /// an error of its own).
    #[inline]
    fn push(&mut self, rec: &journal::Record<'_>) -> Result<bool, ServerError> {
        let b = &mut self.batch;
        let slot = &mut b.slots[b.len];
        slot.seq = rec.seq;
        slot.ts = rec.timestamp_ns;
        decode_record_into(rec, &mut slot.input)?;
        slot.hashes = match &self.hasher {
            Some(h) => record_hashes(h, &slot.input),
            None => ClHashes::default(),
        };
        b.len += 1;
        if b.len < BATCH_RECORDS {
            return Ok(true);
        }
        Ok(self.send())
    }

    /// Runs the resolver (if any) over the current batch, with its index slots loaded
    /// `PREFETCH_FAR` records ahead.
    fn resolve_batch(&mut self) {
        let Some(r) = self.resolver.as_mut() else {
            return;
        };
        r.check_stop();
        let b = &mut self.batch;
        let cfg = &self.fix_cfg;
        for i in 0..b.len {
            if let Some(f) = b.slots[..b.len].get(i + PREFETCH_FAR) {
                r.prefetch(resolvable(cfg, &f.input), &f.hashes);
            }
            let d = &mut b.slots[i];
            d.hint = r.resolve(resolvable(cfg, &d.input), &d.hashes);
        }
    }

    /// Queues the current batch (waiting while the queue is full) and takes an empty one.
    /// False if the applying side is gone.
    fn send(&mut self) -> bool {
        self.resolve_batch();
        let mut s = self.handoff.lock();
        if s.full.len() >= BATCHES_IN_FLIGHT && !s.applier_gone {
            s.decoder_waits = true;
            while s.decoder_waits && !s.applier_gone {
                s = self
                    .handoff
                    .to_decoder
                    .wait(s)
                    .unwrap_or_else(|e| e.into_inner());
            }
            s.decoder_waits = false;
        }
        if s.applier_gone {
            return false;
        }
        let next = s.empty.pop();
        if next.is_none() {
            s.made += 1;
        }
        let full = std::mem::replace(
            &mut self.batch,
            Batch {
                slots: Vec::new(),
                len: 0,
            },
        );
        s.full.push_back(full);
        let wake = s.applier_waits;
        drop(s);
        if wake {
            self.handoff.to_applier.notify_one();
        }
        self.batch = next.unwrap_or_else(Batch::new);
        true
    }

    /// Queues the last, partial batch.
    fn finish(mut self) {
        if self.batch.len > 0 {
            self.send();
        }
    }
}

impl Drop for BatchSender {
    fn drop(&mut self) {
        let mut s = self.handoff.lock();
        s.decoder_done = true;
        let wake = s.applier_waits;
        drop(s);
        if wake {
            self.handoff.to_applier.notify_one();
        }
    }
}

/// The applying side of the hand-over. Dropping it (also in a panic) stops the decoder at its
/// next send.
struct BatchReceiver {
    handoff: Arc<Handoff>,
}

impl BatchReceiver {
    /// Waits (polling every millisecond, at most `POPULATE_WAIT`) until the decoder has made
    /// all the batches it will make, or is done, or the applying side is gone: what
    /// `while_populating`'s thread waits for before it faults pages in. While that thread
    /// faults pages in, an allocation of another thread that maps memory waited for it (a
    /// batch of the decoder's, the pool made up front: 15-190 ms, the whole population), so
    /// it starts once the decoder has its pool.
    fn pool_made(&self) -> impl FnOnce() + Send + 'static {
        let handoff = self.handoff.clone();
        move || {
            let t = Instant::now();
            loop {
                if handoff.lock().pool_made() || t.elapsed() >= POPULATE_WAIT {
                    return;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    /// Returns `done` (applied) to the pool and takes the next full batch, waiting for one;
    /// `None` once the decoder is done and everything it queued was taken.
    fn next(&mut self, done: Option<Batch>) -> Option<Batch> {
        let mut s = self.handoff.lock();
        if let Some(mut b) = done {
            b.len = 0;
            s.empty.push(b);
        }
        loop {
            if let Some(b) = s.full.pop_front() {
                let wake = s.decoder_waits && s.full.len() <= RESUME_AT;
                if wake {
                    s.decoder_waits = false;
                }
                drop(s);
                if wake {
                    self.handoff.to_decoder.notify_one();
                }
                return Some(b);
            }
            if s.decoder_done {
                return None;
            }
            s.applier_waits = true;
            s = self
                .handoff
                .to_applier
                .wait(s)
                .unwrap_or_else(|e| e.into_inner());
            s.applier_waits = false;
        }
    }
}

impl Drop for BatchReceiver {
    fn drop(&mut self) {
        let mut s = self.handoff.lock();
        s.applier_gone = true;
        let wake = s.decoder_waits;
        drop(s);
        if wake {
            self.handoff.to_decoder.notify_one();
        }
    }
}

/// Applies batches in order until the decoding side is done. Returns the records applied, or
/// the gap that stopped it (dropping `rx` then stops the decoder at its next send).
fn apply_batches(x: &mut Node, rx: BatchReceiver) -> Result<(u64, Option<String>), ServerError> {
    let applied = apply_hinted(x, rx);
    // Whatever happened, the index is whole again.
    let t0 = std::time::Instant::now();
    let resolved = x.end_resolving().map(|r| {
        format!(
            "{r} (index built in {:.1} ms)",
            t0.elapsed().as_secs_f64() * 1e3
        )
    });
    applied.map(|n| (n, resolved))
}

fn apply_hinted(x: &mut Node, mut rx: BatchReceiver) -> Result<u64, ServerError> {
    let mut out = Outbox::default();
    let mut replayed = 0;
    // The batch after the one being applied is taken first, so the hints below reach across
    // the end of a batch: without it the first records of each batch found nothing prefetched.
    let mut cur = rx.next(None);
    let mut next = if cur.is_some() { rx.next(None) } else { None };
    while let Some(batch) = cur {
        let recs = batch.records();
        let after = next.as_ref().map_or(&[][..], |b| b.records());
        let ahead = |j: usize| match recs.get(j) {
            Some(r) => Some(r),
            None => after.get(j - recs.len()),
        };
        for (i, d) in recs.iter().enumerate() {
            // Cache hints a few records ahead (`Node::prefetch`): the ClOrdID index slots;
            // further ahead, the decoded record itself (written by the decoding thread's core).
            // They change nothing.
            if let Some(r) = ahead(i + PREFETCH_RECORD) {
                engine::hint::prefetch_all(r);
            }
            if let Some(far) = ahead(i + PREFETCH_FAR) {
                x.prefetch(&far.input, &far.hashes);
                x.prefetch_hinted(&far.hint);
            }
            if d.seq != x.last_seq() + 1 {
                return Err(ServerError(format!(
                    "journal record {} follows state at {}: records are missing",
                    d.seq,
                    x.last_seq()
                )));
            }
            x.apply_resolved(d.seq, d.ts, &d.input, d.hashes, &d.hint, &mut out);
            out.clear();
        }
        replayed += recs.len() as u64;
        cur = next;
        next = if cur.is_some() {
            rx.next(Some(batch))
        } else {
            None
        };
    }
    Ok(replayed)
}

/// Runs `f` on `x` while a thread of its own faults in the pages of `x`'s tables that are
/// not resident yet (`Backing::Background`: an exchange made for a replay from record 1),
/// after `gate` returns, and joins that thread before it returns, so the exchange is resident
/// whatever `f` did. The applying thread then does not spend the first 0.02-0.2 s of a replay
/// faulting 106 MB in (on the Intel host; it touches the pages it needs first itself, the rest
/// are ready before it gets to them). Nothing to fault in (an exchange restored from a
/// snapshot): `f` alone.
fn while_populating<R>(
    x: &mut Node,
    gate: impl FnOnce() + Send,
    f: impl FnOnce(&mut Node) -> R,
) -> R {
    let plan = x.take_populate();
    if plan.bytes() == 0 {
        return f(x);
    }
    std::thread::scope(|scope| {
        let inline = plan.clone();
        if std::thread::Builder::new()
            .name("replay-populate".into())
            .spawn_scoped(scope, move || {
                // Only on CPU time nobody else wants: it must not slow the decoder, which
                // shares the second CPU with it. Starved, it still ends: once `f` returns, the
                // join below leaves it a CPU; and the applying thread faults in whatever it
                // reaches first itself.
                let _ = sched_idle::enter();
                gate();
                plan.run()
            })
            .is_err()
        {
            // No thread to spare: fault the pages in here, as a resident exchange would have.
            inline.run();
        }
        f(x)
    })
}

/// The two ends of a hand-over; `hasher`: the applying exchange's, if known yet.
fn batch_channels(
    hasher: Option<ClHasher>,
    fix_cfg: Arc<FixConfig>,
) -> (BatchSender, BatchReceiver) {
    let handoff = Arc::new(Handoff::default());
    (
        BatchSender {
            batch: Batch::new(),
            handoff: handoff.clone(),
            hasher,
            resolver: None,
            fix_cfg,
        },
        BatchReceiver { handoff },
    )
}

/// The decoder thread of [`replay_journal`]: reads and verifies records from `from` on,
/// decodes them and sends them in batches. Returns the torn-tail report, or the first error
/// (after sending every record before it). Stops quietly when the applying side hangs up.
fn decode_records(
    reader: &mut JournalReader,
    from: u64,
    mut tx: BatchSender,
) -> Result<String, ServerError> {
    loop {
        let rec = match reader.next_record() {
            Ok(Some(rec)) => rec,
            Ok(None) => break,
            Err(e) => {
                tx.finish();
                return Err(ServerError::from(e));
            }
        };
        if rec.seq < from {
            continue;
        }
        match tx.push(&rec) {
            Ok(true) => {}
            Ok(false) => return Ok(String::new()),
            Err(e) => {
                tx.finish();
                return Err(e);
            }
        }
    }
    tx.finish();
    Ok(reader
        .torn_tail()
        .map(|t| t.to_string())
        .unwrap_or_default())
}

/// Replays the journal after `x.last_seq()` into `x` with a read-only reader (decoding on a
/// second thread, which also answers the ClOrdID lookups of a replay into an empty node:
/// `Node::begin_resolving`). Returns the records applied, the torn-tail report, the decoder
/// thread's CPU time and how the ClOrdID lookups were answered.
fn replay_journal(
    x: &mut Node,
    data_dir: &Path,
) -> Result<(u64, String, Option<Duration>, Option<String>), ServerError> {
    let from = x.last_seq() + 1;
    let mut reader = JournalReader::open(data_dir, from)?;
    let (mut tx, rx) = batch_channels(Some(x.cl_hasher()), x.fix.config().clone());
    tx.resolver = x.begin_resolving();
    std::thread::scope(|scope| {
        let decoder = std::thread::Builder::new()
            .name("replay-decode".into())
            .spawn_scoped(scope, move || {
                let decoded = decode_records(&mut reader, from, tx);
                (decoded, thread_cpu_time())
            })
            .map_err(|e| ServerError(format!("cannot start the replay decoder thread: {e}")))?;
        // Returning drops the receiver, which stops the decoder at its next send.
        let gate = rx.pool_made();
        let applied = while_populating(x, gate, |x| apply_batches(x, rx));
        let (decoded, cpu) = decoder
            .join()
            .map_err(|_| ServerError("the replay decoder thread panicked".into()))?;
        let (replayed, resolved) = applied?;
        Ok((replayed, decoded?, cpu, resolved))
    })
}

/// How many records into a segment [`store_bound`] looks for a checkpoint (twice the default
/// interval, `Config::checkpoint_every_records`).
const CHECKPOINT_SCAN_MAX: u64 = 1 << 17;

/// The first checkpoint (`Record::Checkpoint`) in the last segment of the journal, or else in
/// the one before, with its record number: what a replay may bound the resend stores with
/// (`Node::bound_stores`). Reads (and verifies) at most `CHECKPOINT_SCAN_MAX` records of
/// each, a few milliseconds. `None` when there is none there or the journal cannot be read
/// that far (the replay itself then reports why); a bound is an optimization only.
pub fn store_bound(data_dir: &Path) -> Option<(u64, Checkpoint)> {
    let (segments, _) = journal::list_segments(data_dir).ok()?;
    for seg in segments.iter().rev().take(2) {
        let Ok(mut reader) = JournalReader::open(data_dir, seg.first_seq) else {
            return None;
        };
        let end = seg.first_seq.saturating_add(CHECKPOINT_SCAN_MAX);
        while let Ok(Some(rec)) = reader.next_record() {
            if rec.seq >= end {
                break;
            }
            // Only a checkpoint's payload starts with its tag (6); decode just those.
            if rec.kind == KIND_RECORD && rec.payload.first() == Some(&6) {
                if let Ok(Record::Checkpoint(cp)) = Record::decode(rec.payload) {
                    return Some((rec.seq, cp));
                }
            }
        }
    }
    None
}

/// Sets the resend-store bounds of `bound` (from [`store_bound`]) on `x` before a replay;
/// returns the checkpoint's record number if any bound was set.
fn apply_bound(x: &mut Node, bound: &Option<(u64, Checkpoint)>) -> Option<u64> {
    let (seq, cp) = bound.as_ref()?;
    x.bound_stores(*seq, cp).then_some(*seq)
}

/// The end of a replay: the stores take every message again, and a checkpoint the replay
/// disagreed with, or a bounding checkpoint it never reached, is an error.
fn end_replay(x: &mut Node, bounded: Option<u64>) -> Result<(), ServerError> {
    x.unbound_stores();
    x.set_replaying(false);
    if let Some(d) = x.divergence() {
        return Err(ServerError(d.to_string()));
    }
    if let Some(seq) = bounded.filter(|&s| s > x.last_seq()) {
        return Err(ServerError(format!(
            "the replay ended at record {} before checkpoint {seq}, which bounded its resend \
             stores",
            x.last_seq()
        )));
    }
    Ok(())
}

/// The newest usable snapshot restored, and the snapshot (`None`: start from record 1).
/// Damaged and older-format snapshots are reported through `on_note` and skipped.
fn load_snapshot(
    cfg: &Arc<Config>,
    data_dir: &Path,
    on_note: &mut impl FnMut(&str),
) -> Result<(Node, Option<Snapshot>), ServerError> {
    let load = journal::snapshot::load_latest(data_dir)?;
    for s in &load.skipped {
        on_note(&format!(
            "skipped damaged snapshot {}: {}",
            s.path.display(),
            s.reason
        ));
    }
    let latest = load.latest.filter(|s| {
        // A snapshot written by an older version (another layout) is not damage: the
        // journal holds every input, so start from record 1 instead.
        let current = Node::snapshot_format_matches(&s.bytes);
        if !current {
            on_note(&format!(
                "snapshot {} has an older format; replaying the journal from the start",
                s.path.display()
            ));
        }
        current
    });
    let Some(s) = latest else {
        // Its tables are faulted in while the journal is replayed (`while_populating`).
        return Ok((Node::new(cfg, Backing::Background), None));
    };
    let x = Node::restore(cfg, &s.bytes, Backing::Resident)
        .map_err(|e| ServerError(format!("{}: {e}", s.path.display())))?;
    if x.last_seq() != s.seq {
        return Err(ServerError(format!(
            "{}: holds state after record {} but is named {}",
            s.path.display(),
            x.last_seq(),
            s.seq
        )));
    }
    Ok((x, Some(s)))
}

/// Loads the newest valid snapshot and replays the journal after it (outbound messages are
/// regenerated and dropped), read-only: for `journal verify` and tools, next to a live server
/// or not. With `use_snapshot` false: a full replay from the first record.
pub fn recover(
    cfg: &Arc<Config>,
    data_dir: &Path,
    use_snapshot: bool,
    mut on_skip: impl FnMut(&str),
) -> Result<(Node, Recovered), ServerError> {
    let t0 = Instant::now();
    let (mut x, snapshot_seq) = if use_snapshot {
        let (x, s) = load_snapshot(cfg, data_dir, &mut on_skip)?;
        (x, s.map(|s| s.seq))
    } else {
        (Node::new(cfg, Backing::Background), None)
    };
    let snapshot_load = t0.elapsed();
    x.set_replaying(true);
    let store_bound = apply_bound(&mut x, &store_bound(data_dir));
    let (replayed, torn, decoder_cpu, resolved) = replay_journal(&mut x, data_dir)?;
    end_replay(&mut x, store_bound)?;
    let total = t0.elapsed();
    let state_hash = x.state_hash();
    let last_seq = x.last_seq();
    Ok((
        x,
        Recovered {
            snapshot_seq,
            replayed,
            last_seq,
            state_hash,
            journal_report: torn,
            elapsed: total,
            phases: Phases {
                journal_scan: Duration::ZERO,
                snapshot_load,
                replay: total - snapshot_load,
                journal_open: Duration::ZERO,
                journal_passes: 1,
                total,
                decoder_cpu,
                store_bound,
                resolved,
            },
        },
    ))
}

/// What the applying side of `recover_and_open` made: the state, the snapshot it started
/// from, when that was loaded, the records replayed and how ClOrdIDs were resolved.
type Applied = (Node, Option<Snapshot>, Duration, u64, Option<String>);

/// Why the start-up scan stopped before the end of the journal.
enum ScanStop {
    /// A bad record (corrupt, undecodable): recovery fails with this error.
    Failed(ServerError),
    /// The applying side stopped with an error of its own.
    ApplierGone,
}

impl From<JournalError> for ScanStop {
    fn from(e: JournalError) -> Self {
        ScanStop::Failed(e.into())
    }
}

/// What the start-up scan thread reports.
struct Scan {
    result: Result<(JournalWriter, RecoveryReport), ScanStop>,
    /// Since the start: when the first record after the newest snapshot file was reached (or
    /// the scan ended, if it never was).
    reached_snapshot: Duration,
    /// Since the start: when the journal was open (scan done, torn tail truncated).
    done: Duration,
    /// The scan thread's CPU time.
    cpu: Option<Duration>,
}

/// What start-up recovered and opened ([`recover_and_open`]).
pub struct Opened {
    /// The state after the last valid record.
    pub node: Node,
    /// The journal, positioned after that record.
    pub journal: JournalWriter,
    /// What the journal's open found (segments, torn tail truncated, leftovers removed).
    pub report: RecoveryReport,
    pub recovered: Recovered,
    /// The snapshot the state was restored from, if any: the snapshot replica starts from its
    /// bytes instead of a serialization of the recovered state.
    pub snapshot: Option<Snapshot>,
}

/// Start-up: recovers the state in `data_dir` and opens its journal for appending, reading the
/// journal once (module docs). A torn tail is truncated (and named in the returned
/// [`RecoveryReport`]); corruption before it stops start-up with an error naming segment and
/// offset, and then nothing in the journal is modified.
pub fn recover_and_open(
    cfg: &Arc<Config>,
    data_dir: &Path,
    jconfig: JournalConfig,
    mut on_note: impl FnMut(&str),
) -> Result<Opened, ServerError> {
    let t0 = Instant::now();
    // The newest snapshot file: the scan verifies the records it covers without decoding them.
    let newest = journal::snapshot::list(data_dir)?
        .last()
        .map_or(0, |(seq, _)| *seq);
    // The snapshot's seq (`None`: none) and the restored exchange's ClOrdID hasher.
    // With no snapshot, the resolver for the empty state (`Node::begin_resolving`).
    let (seq_tx, seq_rx) = bounded::<(Option<u64>, ClHasher, Option<ClResolver>)>(1);
    let (mut tx, rx) = batch_channels(None, Arc::new(cfg.fix_config()));
    let bound = store_bound(data_dir);
    let bound = &bound;
    let (applied, scan) = std::thread::scope(|scope| {
        let scanner = std::thread::Builder::new()
            .name("journal-scan".into())
            .spawn_scoped(scope, move || {
                let mut reached = None;
                // Decode and deliver only onto the state of the newest snapshot file; if that
                // one was unusable, just verify (a second pass replays).
                let mut deliver = false;
                let result = JournalWriter::open_replaying::<ScanStop>(
                    data_dir,
                    jconfig,
                    newest + 1,
                    |rec| {
                        if reached.is_none() {
                            reached = Some(t0.elapsed());
                            deliver = match seq_rx.recv() {
                                Ok((s, hasher, resolver)) => {
                                    tx.hasher = Some(hasher);
                                    tx.resolver = resolver;
                                    s.unwrap_or(0) == newest
                                }
                                Err(_) => return Err(ScanStop::ApplierGone),
                            };
                        }
                        if !deliver {
                            return Ok(());
                        }
                        match tx.push(rec) {
                            Ok(true) => Ok(()),
                            Ok(false) => Err(ScanStop::ApplierGone),
                            Err(e) => Err(ScanStop::Failed(e)),
                        }
                    },
                );
                // Every record delivered before an error reaches the applier first.
                tx.finish();
                let done = t0.elapsed();
                Scan {
                    result,
                    reached_snapshot: reached.unwrap_or(done),
                    done,
                    cpu: thread_cpu_time(),
                }
            })
            .map_err(|e| ServerError(format!("cannot start the journal scan thread: {e}")))?;
        // The closure owns `seq_tx` and `rx`: when it returns early (an error), dropping
        // them stops the scan, which then leaves the journal unmodified.
        let applied = (move || -> Result<Applied, ServerError> {
            let (mut x, snapshot) = load_snapshot(cfg, data_dir, &mut on_note)?;
            let loaded = t0.elapsed();
            // The scan may have ended without asking (the journal ends at the snapshot).
            let resolver = if snapshot.is_none() {
                x.begin_resolving()
            } else {
                None
            };
            let _ = seq_tx.send((snapshot.as_ref().map(|s| s.seq), x.cl_hasher(), resolver));
            drop(seq_tx);
            x.set_replaying(true);
            apply_bound(&mut x, bound);
            let gate = rx.pool_made();
            let (replayed, resolved) = while_populating(&mut x, gate, |x| apply_batches(x, rx))?;
            Ok((x, snapshot, loaded, replayed, resolved))
        })();
        let scan = scanner
            .join()
            .map_err(|_| ServerError("the journal scan thread panicked".into()))?;
        Ok::<_, ServerError>((applied, scan))
    })?;
    let (journal, report) = match scan.result {
        Ok(opened) => opened,
        Err(ScanStop::Failed(e)) => return Err(e),
        Err(ScanStop::ApplierGone) => {
            return Err(applied
                .err()
                .unwrap_or_else(|| ServerError("the journal scan stopped early".into())))
        }
    };
    let (mut x, snapshot, snapshot_load, mut replayed, mut resolved) = applied?;
    let snapshot_seq = snapshot.as_ref().map(|s| s.seq);
    let replay_from = snapshot_load.max(scan.reached_snapshot);
    let mut journal_passes = 1;
    let mut decoder_cpu = scan.cpu;
    if x.last_seq() + 1 < journal.next_seq() {
        // The newest snapshot file was unusable: the records after the older state were only
        // verified. Read them again.
        journal_passes = 2;
        let (n, _, cpu, r) = replay_journal(&mut x, data_dir)?;
        replayed += n;
        resolved = resolved.or(r);
        decoder_cpu = decoder_cpu.zip(cpu).map(|(a, b)| a + b);
    }
    let store_bound = bound.as_ref().map(|(seq, _)| *seq).filter(|_| x.bounded());
    end_replay(&mut x, store_bound)?;
    let total = t0.elapsed();
    let state_hash = x.state_hash();
    let last_seq = x.last_seq();
    let journal_report = report
        .truncated
        .as_ref()
        .map(|t| t.to_string())
        .unwrap_or_default();
    let recovered = Recovered {
        snapshot_seq,
        replayed,
        last_seq,
        state_hash,
        journal_report,
        elapsed: total,
        phases: Phases {
            journal_scan: scan.reached_snapshot,
            snapshot_load,
            replay: total.saturating_sub(replay_from),
            journal_open: scan.done,
            journal_passes,
            total,
            decoder_cpu,
            store_bound,
            resolved,
        },
    };
    Ok(Opened {
        node: x,
        journal,
        report,
        recovered,
        snapshot,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn channels() -> (BatchSender, BatchReceiver) {
        batch_channels(None, Arc::new(Config::defaults().fix_config()))
    }

    /// A journal record holding `input`, as the reader would return it.
    fn record<'a>(seq: u64, payload: &'a [u8]) -> journal::Record<'a> {
        journal::Record {
            seq,
            timestamp_ns: seq * 10,
            kind: KIND_RECORD,
            payload,
            segment: Path::new("test.seg"),
            offset: seq,
        }
    }

    fn encoded(input: &Record) -> Vec<u8> {
        let mut b = Vec::new();
        input.encode(&mut b);
        b
    }

    /// A decoder that queues Tick records `from`, `from + 1`, ... until the applying side
    /// hangs up; returns the record it was refused at.
    fn push_ticks_until_the_applier_goes(mut tx: BatchSender, tick: &[u8], from: u64) -> u64 {
        let mut seq = from - 1;
        loop {
            seq += 1;
            if !tx.push(&record(seq, tick)).unwrap() {
                return seq;
            }
        }
    }

    /// Polls until the decoder has filled the queue and sleeps (at most 30 s).
    fn wait_until_the_decoder_waits(rx: &BatchReceiver) {
        let t = std::time::Instant::now();
        while !rx.handoff.lock().decoder_waits {
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "the decoder never waited"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn batches_arrive_in_order_past_a_full_queue_and_a_partial_last_batch() {
        let n = (BATCHES_IN_FLIGHT as u64 + 3) * BATCH_RECORDS as u64 + 17;
        let inputs = [
            encoded(&Record::Tick),
            encoded(&Record::Disconnected { conn: 7 }),
        ];
        let (mut tx, mut rx) = channels();
        std::thread::scope(|scope| {
            let decoder = scope.spawn(move || {
                for seq in 1..=n {
                    assert!(tx.push(&record(seq, &inputs[(seq % 2) as usize])).unwrap());
                }
                tx.finish();
            });
            // A slow start: the decoder fills the queue and waits for it to drain.
            wait_until_the_decoder_waits(&rx);
            let mut next = 1;
            let mut done = None;
            while let Some(batch) = rx.next(done.take()) {
                for d in batch.records() {
                    assert_eq!((d.seq, d.ts), (next, next * 10));
                    let want = if next % 2 == 0 {
                        Record::Tick
                    } else {
                        Record::Disconnected { conn: 7 }
                    };
                    assert_eq!(d.input, want);
                    next += 1;
                }
                done = Some(batch);
            }
            assert_eq!(next, n + 1);
            decoder.join().unwrap();
        });
    }

    /// The populating thread's gate opens once the decoder has made every batch it will make
    /// (a full queue, the applying side holding two), or once it is done; from then on the
    /// decoder makes no batch.
    #[test]
    fn the_populate_gate_opens_once_the_decoder_has_its_batches_or_is_done() {
        let tick = encoded(&Record::Tick);
        let (mut tx, mut rx) = channels();
        let (taken_tx, taken_rx) = std::sync::mpsc::channel::<()>();
        std::thread::scope(|scope| {
            // Two batches, then the rest once the applying side has taken them (as
            // `apply_batches` takes two first): the order a replay has, made certain.
            let decoder = scope.spawn(move || {
                for seq in 1..=2 * BATCH_RECORDS as u64 {
                    assert!(tx.push(&record(seq, &tick)).unwrap());
                }
                taken_rx.recv().unwrap();
                push_ticks_until_the_applier_goes(tx, &tick, 2 * BATCH_RECORDS as u64 + 1)
            });
            let cur = rx.next(None);
            let mut next = rx.next(None);
            taken_tx.send(()).unwrap();
            wait_until_the_decoder_waits(&rx);
            assert!(rx.handoff.lock().pool_made());
            rx.pool_made()();
            let made = rx.handoff.lock().made;
            assert!(made > BATCHES_IN_FLIGHT, "{made} batches made");
            // Taking and returning batches from then on makes no new ones.
            let mut done = cur;
            for _ in 0..3 * BATCHES_IN_FLIGHT {
                let taken = rx.next(done.take());
                assert!(taken.is_some());
                done = next;
                next = taken;
            }
            assert_eq!(rx.handoff.lock().made, made);
            drop((done, next));
            drop(rx);
            decoder.join().unwrap();
        });

        let (tx, rx) = channels();
        assert!(
            !rx.handoff.lock().pool_made(),
            "a decoder that has made none"
        );
        drop(tx);
        assert!(rx.handoff.lock().pool_made(), "a decoder that is done");
        rx.pool_made()();
    }

    #[test]
    fn a_gone_applier_stops_a_waiting_decoder_and_a_gone_decoder_ends_the_applier() {
        let tick = encoded(&Record::Tick);
        let (tx, rx) = channels();
        std::thread::scope(|scope| {
            let decoder = scope.spawn(move || push_ticks_until_the_applier_goes(tx, &tick, 1));
            // The decoder fills the queue and sleeps; dropping the receiver must wake it.
            wait_until_the_decoder_waits(&rx);
            drop(rx);
            let stopped_at = decoder.join().unwrap();
            assert!(stopped_at > (BATCHES_IN_FLIGHT * BATCH_RECORDS) as u64);
        });

        // A decoder dropped without `finish` (a panic): the applier gets what was queued, then
        // the end, not a hang.
        let tick = encoded(&Record::Tick);
        let (mut tx, mut rx) = channels();
        std::thread::scope(|scope| {
            let applier = scope.spawn(move || {
                let mut got = 0;
                let mut done = None;
                while let Some(b) = rx.next(done.take()) {
                    got += b.len;
                    done = Some(b);
                }
                got
            });
            // Once the applier waits for a batch: the end must wake it.
            let t = std::time::Instant::now();
            while !tx.handoff.lock().applier_waits {
                assert!(
                    t.elapsed() < Duration::from_secs(30),
                    "the applier never waited"
                );
                std::thread::sleep(Duration::from_millis(1));
            }
            for seq in 1..=BATCH_RECORDS as u64 + 5 {
                assert!(tx.push(&record(seq, &tick)).unwrap());
            }
            drop(tx);
            assert_eq!(applier.join().unwrap(), BATCH_RECORDS);
        });
    }

    #[test]
    fn a_bad_record_is_an_error_naming_segment_offset_and_seq() {
        let (mut tx, _rx) = channels();
        let e = tx.push(&record(5, &[99])).unwrap_err();
        assert_eq!(
            e.0,
            "test.seg offset 5: record 5: bad input record: unknown record tag"
        );
        let mut rec = record(6, &[2]);
        rec.kind = 9;
        let e = tx.push(&rec).unwrap_err();
        assert_eq!(e.0, "test.seg offset 6: record 6 has unknown kind 9");
        // A journal of the earlier record format is named as such, with both versions.
        for (kind, name) in [
            (crate::record::KIND_RECORD_V1, "1"),
            (crate::record::KIND_RECORD_V2, "2"),
        ] {
            rec.kind = kind;
            let e = tx.push(&rec).unwrap_err();
            assert!(
                e.0.contains(&format!(
                    "record format {name}, written by an earlier Rialto; this version reads format 3"
                )),
                "{e}"
            );
        }
    }
}
