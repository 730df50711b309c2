//! The running server: recovery at start, then one event-loop thread that does everything for
//! an order, plus a snapshot writer thread.
//!
//! - **event loop** (`rialto` thread): one mio loop over the listener and every FIX connection,
//!   non-blocking. Each iteration: `epoll_wait` (parks until a socket, the 1 s timer or the stop
//!   waker fires; with `idle = "spin"` it polls with a zero timeout instead) -> accept new
//!   connections -> read every readable connection (one read of at most 64 KiB per connection
//!   per iteration, for fairness) -> frame + `FixAdapter::to_input` into the iteration's batch
//!   -> *sequencer* (next journal sequence number each, one timestamp per batch) -> *journal*
//!   (append all, ONE `commit`: group commit; `process` = after write(2) returned, `fsync` =
//!   after fdatasync) -> *engine* (`Exchange::apply` each input, in journal order) -> *publisher*
//!   (the batch's `Outbox` is copied to the connections' write buffers and each touched
//!   connection gets one write(2); what the socket does not take stays buffered with WRITABLE
//!   interest). Why one thread: on a 2-core machine shared with the load generator, each
//!   thread hand-off costs a wake-up (15-20 µs here), and nothing may leave before its commit
//!   anyway; one thread pays one wake-up per batch and no queue.
//! - **snapshot** (`snapshot` thread): keeps a replica `Exchange` (restored from the state at
//!   start). When a snapshot falls due (by count or time) the loop only sends the journal
//!   sequence number it reached; the thread replays the journal up to it into the replica
//!   (deterministic, so it equals the live state there), serializes, writes (atomic rename,
//!   fsync) and prunes; parked otherwise. The loop never stalls for a periodic snapshot (at
//!   200K orders/s a 30 MB snapshot took 75-87 ms to serialize); only the final one at a clean
//!   stop is serialized by the loop (also every one, should the replica fail). The replay runs
//!   on a helper, **snapshot-idle**, in `SCHED_IDLE`, which follows the journal between
//!   snapshots (only when snapshots are periodic: otherwise nothing asks for the replica): it
//!   uses the CPU the loop and the generator leave idle (enough to keep up at 200K/s on 2
//!   cores) and yields to them at once; should it get less than a quarter of a core
//!   while it has work, the `snapshot` thread moves it to the normal class, paced to a quarter
//!   of a core (what the replica always had), until it has caught up (`SnapshotWriter`). The
//!   `snapshot` thread serializes.
//! - **journal-sync** (inside the journal writer): background write-back every 4 MiB in
//!   `process` mode (below the page being appended to), so a segment roll does not flush
//!   64 MiB on the loop.
//!
//! CPU placement (config `cpu`, `rialto serve --cpu N`): the loop pins itself to CPU N and
//! every other thread of the server (snapshot, snapshot-idle, journal-sync) is started with a
//! mask without N, so with `idle = "spin"` the loop owns that CPU. Unset: nothing is pinned.
//!
//! Measuring the loop: every busy iteration is timed by stage (read, journal, engine, write);
//! a spinning loop also times the gaps between iterations above 20 µs (time it did not have its
//! CPU: preemption, interrupts, the hypervisor). Once a second, if the slowest iteration or the
//! longest gap of that second exceeded `stall_log_us`, one log line says what it was (and the
//! host's steal time on the loop's CPU since the last such line: a stall the hypervisor made
//! shows as such); at stop, one line sums it all up (durations, mean stage times, gaps,
//! context switches).
//!
//! Overload: an iteration applies at most `min(batch_budget, inbound_queue_capacity / 2)`
//! application messages (orders, cancels, replaces, mass cancels, status requests), which
//! bounds the work, hence the latency, of one iteration. What it read beyond that waits, in
//! order, in a backlog for the next iterations (session messages of the same connections wait
//! behind it too, so nothing overtakes). At most `inbound_queue_capacity / 2` application
//! messages wait; beyond that, new ones are turned into small `Busy` inputs
//! (`adapter::shed`), journaled and answered "exchange busy" (counted in `busy_rejects`). So a
//! burst (a client asking the status of a thousand orders at once) is absorbed, sustained
//! overload is shed explicitly, and an accepted order waits behind at most that many others.
//! Reads are bounded per connection per iteration; what the loop has not read stays in the
//! kernel (TCP back-pressure). A connection whose unsent output exceeds 64 MiB is closed as a
//! slow consumer.
//!
//! Never: allocates per message in steady state on the loop's own path (batch, sequence,
//! encoding, read and output buffers are reused; the adapter's parsed strings are the
//! exception); blocks on anything but `epoll_wait` and the journal's write/fdatasync.
//!
//! Invariants: no byte of a message caused by input `n` reaches a socket before input `n` is
//! durable in the configured sense (the outbox is written only after `commit` returned); inputs
//! are applied in journal order exactly once; a connection that closes (or is closed as a slow
//! consumer) yields exactly one `Disconnected` input after its last message; at most one thread
//! spins (the loop, and only with `idle = "spin"`).
//!
//! Start-up (`Server::start`): `recover_and_open` reads the journal once (the writer's open
//! scan feeds the replay after the snapshot) and prints each phase's time.

use crate::adapter::{ConnIds, FixAdapter};
use crate::config::{Config, Durability, Idle};
use crate::exchange::{Backing, ClHashes, Exchange, Outbox};
use crate::record::{ConnId, Input, KIND_INPUT};
pub(crate) use crate::recovery::decode_input;
pub use crate::recovery::{recover, recover_and_open, Opened, Phases, Recovered};
use crate::wire::{next_frame, Fields, Frame};
use crossbeam_channel::{bounded, Receiver, Sender};
use journal::{JournalConfig, JournalReader, JournalWriter, ReadPosition};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// A connection whose unsent output exceeds this is closed (slow consumer).
const WRITE_BUF_MAX: usize = 64 << 20;
/// Bytes read per connection per iteration before others get a turn.
const READ_CHUNK: usize = 64 << 10;
/// Largest unparsed input kept per connection.
const READ_BUF_MAX: usize = 1 << 20;
const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
const TICK: Duration = Duration::from_secs(1);
/// Records the snapshot replica replays between two looks at the clock (about 0.3 ms).
const REPLICA_SLICE: u64 = 256;
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
/// How long a clean stop waits for the Logouts to leave before closing the sockets anyway.
const SHUTDOWN_FLUSH: Duration = Duration::from_secs(5);

#[derive(Debug)]
pub struct ServerError(pub String);

impl std::fmt::Display for ServerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}
impl std::error::Error for ServerError {}

impl From<journal::JournalError> for ServerError {
    fn from(e: journal::JournalError) -> Self {
        ServerError(e.to_string())
    }
}

fn jdur(d: Durability) -> journal::Durability {
    match d {
        Durability::Process => journal::Durability::Process,
        Durability::Fsync => journal::Durability::Fsync,
    }
}

/// Wall clock in ns since the Unix epoch (only the sequencer reads it).
fn now_ns() -> u64 {
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
    pub busy_rejects: AtomicU64,
    pub connections: AtomicU64,
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
}

/// A started server. Drop does not stop it: call `shutdown`.
pub struct Server {
    pub addr: SocketAddr,
    pub recovered: Recovered,
    pub counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    main: Option<JoinHandle<Result<u64, ServerError>>>,
}

/// How a server reports progress (start, snapshots, stop).
pub type Logger = Arc<dyn Fn(&str) + Send + Sync>;

impl Server {
    /// Recovers the state in `cfg.data_dir`, binds `cfg.listen` and starts the threads.
    pub fn start(cfg: Config, log: Logger) -> Result<Server, ServerError> {
        let cfg = Arc::new(cfg);
        // CPU placement: the threads started below (journal sync, snapshot, snapshot-idle)
        // inherit this thread's mask, so it moves off the loop's CPU until `start` returns; the
        // loop pins itself.
        let placement = cfg.cpu.map(Placement::enter).transpose()?;
        if let Some(p) = &placement {
            log(&format!(
                "event loop pinned to CPU {}; the server's other threads on CPUs {:?}",
                p.cpu, p.others
            ));
        }
        let data_dir = cfg.data_dir.clone();
        std::fs::create_dir_all(&data_dir).map_err(|e| {
            ServerError(format!(
                "cannot create data dir {}: {e}",
                data_dir.display()
            ))
        })?;
        // One pass over the journal: the writer's open scan (checksums, torn tail) feeds the
        // replay after the snapshot (recovery's module docs).
        let crate::recovery::Opened {
            exchange: mut x,
            mut journal,
            report,
            recovered,
            snapshot,
        } = recover_and_open(
            &cfg,
            &data_dir,
            JournalConfig {
                segment_size_bytes: cfg.journal_segment_bytes,
                ..JournalConfig::default()
            },
            |m| log(m),
        )?;
        log(&report.to_string());
        log(&format!(
            "recovered: snapshot at seq {}, replayed {} records, last seq {}, {} live orders, {:.3}s; state hash {:016x}",
            recovered.snapshot_seq.unwrap_or(0),
            recovered.replayed,
            recovered.last_seq,
            x.live_orders(),
            recovered.elapsed.as_secs_f64(),
            recovered.state_hash
        ));
        log(&format!("start-up phases: {}", recovered.phases));
        if journal.next_seq() != x.last_seq() + 1 {
            return Err(ServerError(format!(
                "journal ends at {} but the recovered state is at {}",
                journal.next_seq() - 1,
                x.last_seq()
            )));
        }
        // A new run: every connection of the previous one is gone.
        let ts = now_ns();
        let mut enc = Vec::with_capacity(256);
        Input::Startup.encode(&mut enc);
        let seq = journal.append(KIND_INPUT as u16, ts, &enc)?;
        journal.commit(jdur(cfg.durability))?;
        let mut out = Outbox::default();
        x.apply(seq, ts, &Input::Startup, &mut out);
        out.clear();

        let listener = TcpListener::bind(cfg.listen)
            .map_err(|e| ServerError(format!("cannot listen on {}: {e}", cfg.listen)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServerError(e.to_string()))?;
        let poll = Poll::new().map_err(|e| ServerError(e.to_string()))?;
        let waker =
            Arc::new(Waker::new(poll.registry(), WAKER).map_err(|e| ServerError(e.to_string()))?);
        let counters = Arc::new(Counters::default());
        counters
            .state_hash
            .store(recovered.state_hash, Ordering::Relaxed);
        counters.last_seq.store(seq, Ordering::Relaxed);
        let stop = Arc::new(AtomicBool::new(false));

        // The snapshot thread keeps a replica of the state, restored from the snapshot recovery
        // started from (or a serialization of the recovered state) and brought forward from
        // the journal, so periodic snapshots never stall the loop.
        let initial = match snapshot {
            Some(s) => s.bytes,
            None => {
                let mut b = Vec::with_capacity(1 << 20);
                x.snapshot_and_hash(&mut b);
                b
            }
        };
        let (snap_tx, snap_rx) = bounded::<SnapshotJob>(1);
        let snap_busy = Arc::new(AtomicBool::new(false));
        let replica_ok = Arc::new(AtomicBool::new(true));
        let snap_writer = {
            let w = SnapshotWriter {
                cfg: cfg.clone(),
                data_dir: cfg.data_dir.clone(),
                busy: snap_busy.clone(),
                replica_ok: replica_ok.clone(),
                stop: stop.clone(),
                counters: counters.clone(),
                log: log.clone(),
                helper: HelperState::default(),
            };
            std::thread::Builder::new()
                .name("snapshot".into())
                .spawn(move || w.run(snap_rx, initial))
                .map_err(|e| ServerError(e.to_string()))?
        };
        let budget = cfg.batch_budget.min(cfg.inbound_queue_capacity / 2).max(1);
        let backlog_max = cfg.inbound_queue_capacity / 2;
        let first_checkpoint = next_checkpoint(cfg.checkpoint_every_records, journal.next_seq());
        let mut ev = EventLoop {
            adapter: FixAdapter::new(cfg.clone()),
            durability: jdur(cfg.durability),
            idle: cfg.idle,
            cfg,
            poll,
            listener,
            conns: HashMap::default(),
            // Tokens 0 and 1 are the listener and the waker.
            next_conn: 2,
            journal,
            x,
            counters: counters.clone(),
            stop: stop.clone(),
            fields: Fields::new(),
            scratch: vec![0u8; READ_CHUNK].into_boxed_slice(),
            batch: Vec::with_capacity(4 * budget + 64),
            seqs: Vec::with_capacity(4 * budget + 64),
            hashes: Vec::with_capacity(4 * budget + 64),
            enc,
            out,
            last_ts: ts,
            ready: Vec::with_capacity(64),
            touched: Vec::with_capacity(64),
            budget,
            apps: 0,
            backlog: VecDeque::with_capacity(backlog_max + 1024),
            backlog_apps: 0,
            backlog_max,
            since_snapshot: 0,
            next_checkpoint: first_checkpoint,
            last_snapshot: Instant::now(),
            snap_tx,
            snap_busy,
            replica_ok,
            log: log.clone(),
            hist: [0; 16],
            commit_max_ns: 0,
            commits_slow: 0,
            watch: LoopWatch::default(),
            steal_cpu: placement.as_ref().map(|p| p.cpu),
            steal_mark: sched_idle::steal_ms(placement.as_ref().map(|p| p.cpu))
                .map(|ms| (ms, Instant::now())),
        };
        let main = {
            let guard = StopOnExit(stop.clone(), waker.clone());
            let loop_cpu = placement.as_ref().map(|p| p.cpu);
            std::thread::Builder::new()
                .name("rialto".into())
                .spawn(move || {
                    let _guard = guard;
                    if let Some(cpu) = loop_cpu {
                        if let Err(e) = sched_idle::pin(&[cpu]) {
                            (ev.log)(&format!("cannot pin the event loop to CPU {cpu}: {e}"));
                        }
                    }
                    let r = ev.run();
                    // Closing the snapshot channel lets the writer finish the final snapshot.
                    drop(ev);
                    let w = snap_writer.join();
                    match (r, w) {
                        (Err(e), _) => Err(e),
                        (Ok(_), Err(_)) => Err(ServerError("snapshot writer panicked".into())),
                        (Ok(_), Ok(Err(e))) => Err(e),
                        (Ok(h), Ok(Ok(()))) => Ok(h),
                    }
                })
                .map_err(|e| ServerError(e.to_string()))?
        };
        Ok(Server {
            addr,
            recovered,
            counters,
            stop,
            waker,
            main: Some(main),
        })
    }

    /// True once the server is stopping (a signal, `shutdown`, or a fatal journal error).
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Clean stop: a Shutdown input (Logout to every session), drain, final snapshot. Returns
    /// the final state hash.
    pub fn shutdown(mut self) -> Result<u64, ServerError> {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.waker.wake();
        match self.main.take().map(|h| h.join()) {
            Some(Ok(r)) => r,
            _ => Err(ServerError("event loop thread panicked".into())),
        }
    }
}

/// The start-up side of config `cpu`: the calling thread runs on the other CPUs while the
/// server starts its threads (they inherit its mask); dropping it gives the caller its own
/// mask back.
struct Placement {
    cpu: usize,
    others: Vec<usize>,
    restore: Vec<usize>,
}

impl Placement {
    fn enter(cpu: usize) -> Result<Placement, ServerError> {
        let allowed = sched_idle::allowed_cpus()
            .map_err(|e| ServerError(format!("cpu = {cpu}: cannot read the CPU affinity: {e}")))?;
        if !allowed.contains(&cpu) {
            return Err(ServerError(format!(
                "cpu = {cpu}: this process may only run on CPUs {allowed:?}"
            )));
        }
        let others = sched_idle::others(&allowed, cpu);
        sched_idle::pin(&others)
            .map_err(|e| ServerError(format!("cannot move threads to CPUs {others:?}: {e}")))?;
        Ok(Placement {
            cpu,
            others,
            restore: allowed,
        })
    }
}

impl Drop for Placement {
    fn drop(&mut self) {
        let _ = sched_idle::pin(&self.restore);
    }
}

/// Sets the stop flag when the loop ends, however it ends (return, error or panic), so
/// `serve_until_signal` notices and winds down instead of waiting forever.
struct StopOnExit(Arc<AtomicBool>, Arc<Waker>);

impl Drop for StopOnExit {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
        let _ = self.1.wake();
    }
}

/// Work for the snapshot thread.
enum SnapshotJob {
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
/// otherwise. Its replica is an `Exchange` restored from the state at start and brought
/// forward by replaying the journal (deterministic, so it equals the live state at the same
/// record); serializing the replica costs the event loop nothing. If the replica fails (a
/// journal read error), it says so and clears `replica_ok`: the loop then serializes inline.
///
/// Who does the replica's work (module docs, "snapshot"): a helper thread, `snapshot-idle`, in
/// the `SCHED_IDLE` class (crate `sched_idle`), holds the replica and follows the journal:
/// every [`REPLICA_FOLLOW_EVERY`] it replays up to the last record the loop has committed and
/// applied (`Counters::last_seq`), so the replay is spread over the CPU the loop leaves idle
/// instead of coming in a burst when a snapshot falls due. An idle-class thread runs only on a
/// CPU nothing else wants and a waking normal thread preempts it at once (a nice-19 or paced
/// nice-0 thread may keep the CPU for the rest of its slice). A due snapshot then only needs
/// the last records: the helper replays to the record asked for (or stays where it is if it
/// is past it: a fixed target, since a moving one could stay out of reach), and hands the
/// replica to this thread, which serializes it (at nice 0: 100-300 ms for 50-90 MB, bounded,
/// as before the helper existed), writes it and hands it back.
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
struct SnapshotWriter {
    cfg: Arc<Config>,
    data_dir: PathBuf,
    busy: Arc<AtomicBool>,
    replica_ok: Arc<AtomicBool>,
    /// The server is stopping: a replay under way gives up (the loop writes the final one).
    stop: Arc<AtomicBool>,
    counters: Arc<Counters>,
    log: Logger,
    /// What the helper publishes for this thread's watch.
    helper: HelperState,
}

/// The helper's side of the minimum-share watch.
#[derive(Default)]
struct HelperState {
    /// Kernel thread id of the helper (0 until it runs).
    tid: std::sync::atomic::AtomicI32,
    /// The helper's CPU time (ns), updated every `REPLICA_SLICE` records while it works.
    cpu_ns: AtomicU64,
    /// The replica's last applied record, updated with `cpu_ns`.
    progress: AtomicU64,
    /// The helper runs in the normal class (it was starved): it paces itself.
    boosted: AtomicBool,
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
    x: Box<Exchange>,
    out: Outbox,
    /// Where the replica's next record is. Each stretch of work opens a reader there, so a
    /// reader never holds bytes read before they were written.
    at: Option<ReadPosition>,
    /// Replay target of the current stretch (at most the last committed record).
    upto: u64,
    /// The record a snapshot was asked at, while a job is under way.
    job: Option<u64>,
    /// Serialization buffer (reused).
    bytes: Vec<u8>,
}

/// How a stretch of replica work ended.
#[derive(Debug, PartialEq, Eq)]
enum LegEnd {
    /// The replica is at `upto`.
    Done,
    /// The server is stopping.
    Stopped,
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
    fn run(self, rx: Receiver<SnapshotJob>, initial: Vec<u8>) -> Result<(), ServerError> {
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
        // Lazy backing: faulting a resident replica's 40 MB (72 since the fifteenth session)
        // in here, while the loop already serves, held the memory-map lock so long that the
        // loop's first heap growth (an `mprotect`) waited 6.5-64 ms, in the first second of 7
        // of 19 runs at 150 K/s.
        let mut home = match Exchange::restore_with(self.cfg.clone(), &initial, Backing::Lazy) {
            Ok(mut x) => {
                // Outbound messages are thrown away: do not format them.
                x.replaying = true;
                Some(Box::new(Leg {
                    x: Box::new(x),
                    out: Outbox::default(),
                    at: None,
                    upto: 0,
                    job: None,
                    bytes: initial,
                }))
            }
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
                        leg.upto = seq.max(leg.x.last_seq());
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
                if leg.upto <= leg.x.last_seq() {
                    continue;
                }
            }
            let forwarded = forward(leg, &self.data_dir, &self.stop, &self.helper);
            self.counters
                .replica_seq
                .store(leg.x.last_seq(), Ordering::Relaxed);
            let answer = match forwarded {
                Ok(LegEnd::Done) if leg.job.is_some() => home.take().map(FromHelper::Done),
                Ok(LegEnd::Stopped) if leg.job.is_some() => home.take().map(FromHelper::Stopped),
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
        let hash = leg.x.snapshot_and_hash(&mut leg.bytes);
        let at = leg.x.last_seq();
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
fn thread_cpu() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Applies journal records `x.last_seq() + 1 ..= leg.upto` to the replica (outbound messages
/// are regenerated and dropped), publishing its CPU time every slice for the snapshot thread's
/// watch and, while `state.boosted`, pacing itself to a quarter of a core. Returns `Done`, or
/// `Stopped` if it gave up because the server is stopping (the replica stays consistent, just
/// behind).
fn forward(
    leg: &mut Leg,
    data_dir: &Path,
    stop: &AtomicBool,
    state: &HelperState,
) -> Result<LegEnd, ServerError> {
    let next = leg.x.last_seq() + 1;
    let mut reader = match leg.at.take() {
        Some(p) if p.next_seq == next => JournalReader::resume(data_dir, &p)?,
        _ => JournalReader::open(data_dir, next)?,
    };
    let mut slice = Instant::now();
    let mut n = 0u64;
    let upto = leg.upto;
    let mut end = LegEnd::Done;
    while leg.x.last_seq() < upto {
        n += 1;
        if n.is_multiple_of(REPLICA_SLICE) {
            if stop.load(Ordering::Relaxed) {
                end = LegEnd::Stopped;
                break;
            }
            state
                .cpu_ns
                .store(thread_cpu().as_nanos() as u64, Ordering::Release);
            state.progress.store(leg.x.last_seq(), Ordering::Release);
            if state.boosted.load(Ordering::Acquire) {
                // In the normal class: a quarter of a core, so the loop and the generator keep
                // theirs.
                std::thread::sleep(slice.elapsed() * 3);
            }
            slice = Instant::now();
        }
        let next = leg.x.last_seq() + 1;
        let Some(rec) = reader.next_record()? else {
            return Err(ServerError(format!(
                "the journal ends before record {upto} (at {next})"
            )));
        };
        if rec.seq != next {
            return Err(ServerError(format!(
                "journal record {} where {next} was expected",
                rec.seq
            )));
        }
        let input = decode_input(&rec)?;
        leg.x.apply(rec.seq, rec.timestamp_ns, &input, &mut leg.out);
        leg.out.clear();
    }
    leg.at = reader.position();
    state
        .cpu_ns
        .store(thread_cpu().as_nanos() as u64, Ordering::Release);
    state.progress.store(leg.x.last_seq(), Ordering::Release);
    Ok(end)
}

struct Conn {
    stream: TcpStream,
    /// Unparsed input (a partial message); empty in the common case, where a read ends on a
    /// message boundary and the messages are parsed straight from the loop's scratch buffer.
    rbuf: Vec<u8>,
    /// Output the socket has not taken yet.
    wbuf: Vec<u8>,
    ids: Option<ConnIds>,
    /// The exchange asked to close it once `wbuf` is flushed.
    closing: bool,
    /// Readable data may be left in the socket (an event came, or a read was cut at
    /// READ_CHUNK).
    more: bool,
    /// Registered with WRITABLE interest (output is pending).
    want_write: bool,
}

struct EventLoop {
    cfg: Arc<Config>,
    adapter: FixAdapter,
    durability: journal::Durability,
    idle: Idle,
    poll: Poll,
    listener: TcpListener,
    /// Keyed by ids the loop hands out itself (foldhash: no SipHash per socket event).
    conns: HashMap<ConnId, Conn, foldhash::fast::RandomState>,
    next_conn: ConnId,
    journal: JournalWriter,
    x: Exchange,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    fields: Fields,
    /// Read buffer shared by all connections.
    scratch: Box<[u8]>,
    /// Inputs of this iteration, in the order they will be journaled.
    batch: Vec<Input>,
    seqs: Vec<u64>,
    /// The ClOrdID hashes of each input of `batch` (`Exchange::input_hashes`), computed once
    /// before the journal stage to prefetch the index slots the engine stage will read.
    hashes: Vec<ClHashes>,
    enc: Vec<u8>,
    out: Outbox,
    last_ts: u64,
    /// Connections to read this iteration.
    ready: Vec<ConnId>,
    /// Connections that got output this iteration.
    touched: Vec<ConnId>,
    /// Application messages applied per iteration; the rest wait in `backlog`.
    budget: usize,
    /// Application messages in this iteration's batch.
    apps: usize,
    /// Inputs read but not yet in a batch (in order), because an earlier one had to wait.
    backlog: VecDeque<Input>,
    /// Application messages in `backlog`; at `backlog_max`, new ones are shed.
    backlog_apps: usize,
    backlog_max: usize,
    since_snapshot: u64,
    /// The journal record number from which the next batch starts with a checkpoint
    /// (`Config::checkpoint_every_records`; `u64::MAX`: never).
    next_checkpoint: u64,
    last_snapshot: Instant,
    snap_tx: Sender<SnapshotJob>,
    snap_busy: Arc<AtomicBool>,
    /// The snapshot thread's replica works: periodic snapshots cost the loop nothing.
    replica_ok: Arc<AtomicBool>,
    log: Logger,
    /// Iterations with work by duration: bucket `i` counts those under `2^i` µs (the last
    /// bucket: everything longer). Logged at stop, to find stalls.
    hist: [u64; 16],
    /// Longest journal time of a batch (appends + commit, ns) and batches over 1 ms, logged at
    /// stop.
    commit_max_ns: u64,
    commits_slow: u64,
    /// Where the time of busy iterations goes, and (spinning) the time the loop was off its
    /// CPU between iterations: the loop's own share of a latency tail.
    watch: LoopWatch,
    /// The CPU whose steal time a slow second's line reports (the loop's; all: `None`).
    steal_cpu: Option<usize>,
    /// Its steal time (ms since boot) when last read, and when: read at start and at each slow
    /// second's line only (a `/proc` read, never per iteration).
    steal_mark: Option<(u64, Instant)>,
}

/// Phases of one busy iteration, ns.
#[derive(Clone, Copy, Debug, Default)]
struct IterTimes {
    total: u64,
    /// Events, accepts, reads, framing and decoding (iteration start to the batch).
    read: u64,
    /// Encoding, appends and the commit.
    journal: u64,
    /// `Exchange::apply` of the batch.
    engine: u64,
    /// Output copied to the connections and written.
    write: u64,
    inputs: u32,
    /// The batch held the once-a-second timer input.
    tick: bool,
    /// What the batch's first inputs were (names, for a slow iteration's log line).
    what: [&'static str; 4],
}

/// The first record number after `seq` at which a checkpoint is due, every `every` records
/// (0: never).
fn next_checkpoint(every: u64, seq: u64) -> u64 {
    seq.checked_div(every)
        .map_or(u64::MAX, |n| (n + 1).saturating_mul(every))
}

/// A short name of an input's kind.
fn kind(input: &Input) -> &'static str {
    use crate::record::FixMsg as M;
    match input {
        Input::Startup => "startup",
        Input::Tick => "tick",
        Input::Shutdown => "shutdown",
        Input::Checkpoint(_) => "checkpoint",
        Input::Disconnected { .. } => "disconnect",
        Input::Fix { msg, .. } => match msg {
            M::Logon { .. } => "logon",
            M::Heartbeat { .. } => "heartbeat",
            M::TestRequest { .. } => "test-request",
            M::ResendRequest { .. } => "resend-request",
            M::SequenceReset { .. } => "sequence-reset",
            M::Logout { .. } => "logout",
            M::SessionReject => "session-reject",
            M::New(_) => "new",
            M::Cancel { .. } => "cancel",
            M::Replace { .. } => "replace",
            M::MassCancel { .. } => "mass-cancel",
            M::Status { .. } => "status",
            M::Busy { .. } => "busy",
            M::Invalid { .. } => "invalid",
        },
    }
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
struct Gaps {
    bands: [u64; 4],
    lost_ns: u64,
    max_ns: u64,
}

impl Gaps {
    fn record(&mut self, g: u64) {
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

/// The loop's self-measurement (module docs, "Measuring the loop").
#[derive(Debug, Default)]
struct LoopWatch {
    /// Sums over all busy iterations, for the stop-time summary.
    sum: IterTimes,
    /// The slowest busy iteration of the current second.
    worst: IterTimes,
    /// Busy iterations over `cfg.stall_log_us` in the current second.
    slow: u64,
    /// Spinning: off-CPU gaps, this second and since the start.
    gaps_second: Gaps,
    gaps: Gaps,
    /// Spinning: when the previous iteration ended (the next poll started).
    prev_end: Option<Instant>,
    seconds: u64,
}

impl LoopWatch {
    fn busy(&mut self, t: IterTimes, slow_ns: u64) {
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
    fn second(&mut self, slow_ns: u64) -> Option<String> {
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
fn steal_note(cpu: Option<usize>, stolen_ms: u64, over: Duration) -> String {
    let on = match cpu {
        Some(c) => format!("CPU {c}"),
        None => "all CPUs".to_string(),
    };
    format!(
        "; host steal on {on}: {stolen_ms} ms in the last {:.1} s",
        over.as_secs_f64()
    )
}

impl EventLoop {
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
    fn iteration_summary(&self) -> String {
        let total: u64 = self.hist.iter().sum();
        let mut s = format!("event loop: {total} busy iterations, by duration:");
        for (i, n) in self.hist.iter().enumerate() {
            if *n > 0 {
                if i + 1 == self.hist.len() {
                    s.push_str(&format!(" >={}us:{n}", 1u64 << (i - 1)));
                } else {
                    s.push_str(&format!(" <{}us:{n}", 1u64 << i));
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

    fn run(&mut self) -> Result<u64, ServerError> {
        let e = |e: io::Error| ServerError(format!("network: {e}"));
        self.poll
            .registry()
            .register(&mut self.listener, LISTENER, Interest::READABLE)
            .map_err(e)?;
        let mut events = Events::with_capacity(1024);
        let mut next_tick = Instant::now() + TICK;
        let mut shutdown_sent = false;
        loop {
            let timeout = if self.idle == Idle::Spin
                || !self.batch.is_empty()
                || !self.backlog.is_empty()
                || self.conns.values().any(|c| c.more && !c.closing)
            {
                Duration::ZERO
            } else {
                next_tick.saturating_duration_since(Instant::now())
            };
            if let Err(err) = self.poll.poll(&mut events, Some(timeout)) {
                if err.kind() != io::ErrorKind::Interrupted {
                    return Err(e(err));
                }
            }
            let t0 = Instant::now();
            if let Some(prev) = self.watch.prev_end.take() {
                // Spinning: the poll itself takes about 1 µs; anything much longer is time the
                // thread did not have its CPU.
                let g = t0.duration_since(prev).as_nanos() as u64;
                self.watch.gaps.record(g);
                self.watch.gaps_second.record(g);
            }
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => self.accept(),
                    WAKER => {}
                    Token(t) => {
                        let id = t as ConnId;
                        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                            if let Some(c) = self.conns.get_mut(&id) {
                                c.more = true;
                            }
                        }
                        if ev.is_writable() {
                            self.flush(id);
                        }
                    }
                }
            }
            self.refill();
            if self.stop.load(Ordering::SeqCst) {
                if !shutdown_sent {
                    // Stop reading: the Shutdown input is the last one of this run.
                    self.submit(Input::Shutdown);
                    shutdown_sent = true;
                }
            } else {
                self.read_ready();
                if t0 >= next_tick {
                    next_tick = t0 + TICK;
                    if !self.conns.is_empty() {
                        self.submit(Input::Tick);
                    }
                    if let Some(mut line) = self.watch.second(self.cfg.stall_log_us * 1000) {
                        line.push_str(&self.steal_note());
                        (self.log)(&line);
                    }
                    self.maybe_snapshot(false)?;
                }
            }
            if self.batch.is_empty() {
                if self.idle == Idle::Spin {
                    self.watch.prev_end = Some(Instant::now());
                }
                continue;
            }
            let read_ns = t0.elapsed().as_nanos() as u64;
            let (shutdown, mut times) = self.process()?;
            let end = Instant::now();
            let took = end.duration_since(t0).as_nanos() as u64;
            times.read = read_ns;
            times.total = took;
            self.watch.busy(times, self.cfg.stall_log_us * 1000);
            if self.idle == Idle::Spin {
                self.watch.prev_end = Some(end);
            }
            self.counters
                .max_iteration_ns
                .fetch_max(took, Ordering::Relaxed);
            if took > 1_000_000 {
                self.counters
                    .slow_iterations
                    .fetch_add(1, Ordering::Relaxed);
            }
            let us = took / 1000;
            let bucket = (64 - us.leading_zeros() as usize).min(self.hist.len() - 1);
            self.hist[bucket] += 1;
            if shutdown {
                (self.log)(&self.iteration_summary());
                self.close_all();
                return self.maybe_snapshot(true);
            }
            self.maybe_snapshot(false)?;
        }
    }

    /// Sequencer, journal, engine and publisher for this iteration's batch. Returns true if it
    /// held the Shutdown input, and the time of each stage.
    fn process(&mut self) -> Result<(bool, IterTimes), ServerError> {
        // Sequencer: one timestamp per batch, never going backwards.
        let ts = now_ns().max(self.last_ts);
        self.last_ts = ts;
        self.seqs.clear();
        // Every `checkpoint_every_records` records, the batch starts with a checkpoint of the
        // state before it (rare: one `Vec` and one shift of the batch).
        let next_seq = self.journal.next_seq();
        if next_seq >= self.next_checkpoint && !self.batch.is_empty() {
            self.batch.insert(0, Input::Checkpoint(self.x.checkpoint()));
            self.next_checkpoint = next_checkpoint(self.cfg.checkpoint_every_records, next_seq);
        }
        // Cache hints for the engine stage: each input's ClOrdID index slots start loading now
        // and arrive while the batch is journaled (the index is 8 MB: a lookup was a cache
        // and TLB miss). They change nothing; their time counts as the engine stage's.
        let p0 = Instant::now();
        self.hashes.clear();
        for input in &self.batch {
            let h = self.x.input_hashes(input);
            self.x.prefetch(input, &h);
            self.hashes.push(h);
        }
        // Journal time (appends, a segment roll, the commit), for the stop-time summary.
        let c0 = Instant::now();
        let hint_ns = c0.duration_since(p0).as_nanos() as u64;
        for input in &self.batch {
            self.enc.clear();
            input.encode(&mut self.enc);
            self.seqs
                .push(self.journal.append(KIND_INPUT as u16, ts, &self.enc)?);
        }
        // Journal: group commit. Nothing of this batch is released before it returns.
        self.journal.commit(self.durability)?;
        let commit_ns = c0.elapsed().as_nanos() as u64;
        self.commit_max_ns = self.commit_max_ns.max(commit_ns);
        self.commits_slow += u64::from(commit_ns > 1_000_000);
        // Engine.
        let e0 = Instant::now();
        let mut shutdown = false;
        let mut counted = 0u64;
        // The index slots are loaded by now: follow them to the ring entries a cancel or
        // replace will compare.
        for (input, h) in self.batch.iter().zip(&self.hashes) {
            self.x.prefetch_entries(input, h);
        }
        for ((input, &seq), &h) in self.batch.iter().zip(&self.seqs).zip(&self.hashes) {
            self.x.apply_prehashed(seq, ts, input, h, &mut self.out);
            shutdown |= matches!(input, Input::Shutdown);
            // Timer ticks and checkpoints alone do not make a snapshot due.
            counted += u64::from(!matches!(input, Input::Tick | Input::Checkpoint(_)));
        }
        let w0 = Instant::now();
        let n = self.batch.len() as u64;
        let mut what = [""; 4];
        for (w, input) in what.iter_mut().zip(&self.batch) {
            *w = kind(input);
        }
        let times = IterTimes {
            what,
            journal: commit_ns,
            engine: w0.duration_since(e0).as_nanos() as u64 + hint_ns,
            inputs: n as u32,
            tick: counted < n,
            ..IterTimes::default()
        };
        self.since_snapshot += counted;
        self.batch.clear();
        self.apps = 0;
        self.counters.inputs.fetch_add(n, Ordering::Relaxed);
        self.counters.batches.fetch_add(1, Ordering::Relaxed);
        self.counters
            .last_seq
            .store(self.x.last_seq(), Ordering::Relaxed);
        self.counters
            .busy_rejects
            .store(self.x.stats.busy_rejects, Ordering::Relaxed);
        // Publisher: copy to the connections' buffers, then one write per connection.
        self.touched.clear();
        for item in &self.out.items {
            if let Some(c) = self.conns.get_mut(&item.conn) {
                c.wbuf
                    .extend_from_slice(&self.out.buf[item.start..item.end]);
                if item.close {
                    c.closing = true;
                }
                if self.touched.last() != Some(&item.conn) {
                    self.touched.push(item.conn);
                }
            }
        }
        self.out.clear();
        self.touched.sort_unstable();
        self.touched.dedup();
        for i in 0..self.touched.len() {
            let id = self.touched[i];
            self.flush(id);
        }
        Ok((
            shutdown,
            IterTimes {
                write: w0.elapsed().as_nanos() as u64,
                ..times
            },
        ))
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    let id = self.next_conn;
                    self.next_conn += 1;
                    let _ = stream.set_nodelay(true);
                    if self
                        .poll
                        .registry()
                        .register(&mut stream, Token(id as usize), Interest::READABLE)
                        .is_err()
                    {
                        continue;
                    }
                    self.counters.connections.fetch_add(1, Ordering::Relaxed);
                    self.conns.insert(
                        id,
                        Conn {
                            stream,
                            rbuf: Vec::new(),
                            wbuf: Vec::with_capacity(4096),
                            ids: None,
                            closing: false,
                            more: true,
                            want_write: false,
                        },
                    );
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // Out of descriptors and the like: try again on the next event.
                Err(_) => return,
            }
        }
    }

    /// Reads every connection with data waiting (in connection order), at most one read of
    /// `READ_CHUNK` each, and turns the complete messages into inputs.
    fn read_ready(&mut self) {
        self.ready.clear();
        self.ready
            .extend(self.conns.iter().filter(|(_, c)| c.more).map(|(id, _)| *id));
        if self.ready.is_empty() {
            return;
        }
        self.ready.sort_unstable();
        for i in 0..self.ready.len() {
            let id = self.ready[i];
            self.read(id);
        }
    }

    /// Queues an input that is not an application message: in this batch, or behind the
    /// backlog (order is kept).
    fn submit(&mut self, input: Input) {
        if self.backlog.is_empty() {
            self.batch.push(input);
        } else {
            self.backlog.push_back(input);
        }
    }

    /// Moves waiting inputs into this iteration's batch, in order, up to the budget.
    fn refill(&mut self) {
        while let Some(front) = self.backlog.front() {
            if front.is_application() {
                if self.apps >= self.budget {
                    return;
                }
                self.apps += 1;
                self.backlog_apps -= 1;
            }
            if let Some(input) = self.backlog.pop_front() {
                self.batch.push(input);
            }
        }
    }

    fn read(&mut self, id: ConnId) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        c.more = false;
        if c.closing {
            return;
        }
        let mut closed = false;
        let n = loop {
            match c.stream.read(&mut self.scratch) {
                Ok(0) => {
                    closed = true;
                    break 0;
                }
                Ok(n) => {
                    // A full buffer may have left more in the socket: come back next iteration.
                    c.more = n == self.scratch.len();
                    break n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break 0,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    closed = true;
                    break 0;
                }
            }
        };
        if n > 0 {
            // Parse from the scratch buffer unless a partial message is pending.
            let from_rbuf = !c.rbuf.is_empty();
            if from_rbuf {
                c.rbuf.extend_from_slice(&self.scratch[..n]);
            }
            let data: &[u8] = if from_rbuf {
                &c.rbuf
            } else {
                &self.scratch[..n]
            };
            let mut pos = 0;
            while let Some(frame) = next_frame(&data[pos..]) {
                match frame {
                    Frame::Garbled { len, .. } => pos += len,
                    Frame::Message { len } => {
                        let msg = &data[pos..pos + len];
                        pos += len;
                        if self.fields.parse(msg).is_err() {
                            // Framed and checksummed but not tag=value: garbled, ignored.
                            continue;
                        }
                        let input = self.adapter.to_input(id, &mut c.ids, msg, &self.fields);
                        // Route: this batch while it has room and nothing waits; else the
                        // backlog; an application message over the backlog limit is shed.
                        let wait = !self.backlog.is_empty();
                        if !input.is_application() {
                            if wait {
                                self.backlog.push_back(input);
                            } else {
                                self.batch.push(input);
                            }
                        } else if !wait && self.apps < self.budget {
                            self.apps += 1;
                            self.batch.push(input);
                        } else if self.backlog_apps < self.backlog_max {
                            self.backlog_apps += 1;
                            self.backlog.push_back(input);
                        } else {
                            let busy = crate::adapter::shed(input, &self.fields, msg);
                            self.backlog.push_back(busy);
                        }
                    }
                }
            }
            if from_rbuf {
                c.rbuf.drain(..pos);
            } else if pos < n {
                c.rbuf.extend_from_slice(&self.scratch[pos..n]);
            }
            if c.rbuf.len() >= READ_BUF_MAX {
                // A "message" longer than any valid one: not FIX.
                closed = true;
            }
        }
        if closed {
            self.drop_conn(id, true);
        }
    }

    /// Writes as much of a connection's pending output as the socket takes (one write in the
    /// common case); keeps the rest with WRITABLE interest.
    fn flush(&mut self, id: ConnId) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        let mut written = 0;
        let mut failed = false;
        while written < c.wbuf.len() {
            match c.stream.write(&c.wbuf[written..]) {
                Ok(0) => {
                    failed = true;
                    break;
                }
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    failed = true;
                    break;
                }
            }
        }
        if written == c.wbuf.len() {
            c.wbuf.clear();
        } else {
            c.wbuf.drain(..written);
        }
        if failed || c.wbuf.len() > WRITE_BUF_MAX {
            self.drop_conn(id, true);
            return;
        }
        if c.closing && c.wbuf.is_empty() {
            // The exchange already unbound it: no Disconnected input.
            self.drop_conn(id, false);
            return;
        }
        let want = !c.wbuf.is_empty();
        if want != c.want_write {
            let interest = if want {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            if self
                .poll
                .registry()
                .reregister(&mut c.stream, Token(id as usize), interest)
                .is_ok()
            {
                c.want_write = want;
            } else {
                self.drop_conn(id, true);
            }
        }
    }

    /// Closes a connection. With `notify` (the peer or the server's I/O ended it, not the
    /// exchange), a `Disconnected` input joins the batch after the connection's last message.
    fn drop_conn(&mut self, id: ConnId, notify: bool) {
        if let Some(mut c) = self.conns.remove(&id) {
            let _ = self.poll.registry().deregister(&mut c.stream);
            let _ = c.stream.shutdown(std::net::Shutdown::Both);
            if notify && !c.closing {
                self.submit(Input::Disconnected { conn: id });
            }
        }
    }

    /// After the Shutdown input: lets the Logouts leave (up to `SHUTDOWN_FLUSH`), then closes
    /// every connection.
    fn close_all(&mut self) {
        let deadline = Instant::now() + SHUTDOWN_FLUSH;
        let mut events = Events::with_capacity(256);
        while self.conns.values().any(|c| !c.wbuf.is_empty()) && Instant::now() < deadline {
            let _ = self.poll.poll(&mut events, Some(Duration::from_millis(10)));
            let ids: Vec<ConnId> = self.conns.keys().copied().collect();
            for id in ids {
                self.flush(id);
            }
        }
        let ids: Vec<ConnId> = self.conns.keys().copied().collect();
        for id in ids {
            self.drop_conn(id, false);
        }
        self.batch.clear();
    }

    fn maybe_snapshot(&mut self, force: bool) -> Result<u64, ServerError> {
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
        let seq = self.x.last_seq();
        if !force && self.replica_ok.load(Ordering::Acquire) {
            if self.snap_tx.send(SnapshotJob::Upto { seq }).is_err() {
                return Err(ServerError("snapshot writer thread is gone".into()));
            }
            return Ok(self.counters.state_hash.load(Ordering::Relaxed));
        }
        // Inline: the engine stalls for the serialization; the file write and its fsync happen
        // on the snapshot thread.
        let t0 = Instant::now();
        let mut buf = Vec::with_capacity(1 << 20);
        let hash = self.x.snapshot_and_hash(&mut buf);
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

/// Where `rialto serve` keeps the configuration text a data directory was last served with,
/// so `journal verify`/`dump` replay with the same instruments and sessions.
pub fn config_copy_path(data_dir: &Path) -> PathBuf {
    data_dir.join("rialto.toml")
}

/// `rialto serve`: starts the server, prints where it listens, runs until SIGINT or SIGTERM,
/// then stops cleanly (Logout to every session, drain, final snapshot). `config_text` is the
/// TOML the config was read from (kept next to the journal for `journal verify`/`dump`).
pub fn serve_until_signal(cfg: Config, config_text: Option<&str>) -> Result<u64, ServerError> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let signalled = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        signal_hook::flag::register(sig, signalled.clone())
            .map_err(|e| ServerError(format!("cannot install signal handler: {e}")))?;
    }
    std::fs::create_dir_all(&cfg.data_dir).map_err(|e| {
        ServerError(format!(
            "cannot create data dir {}: {e}",
            cfg.data_dir.display()
        ))
    })?;
    let copy = config_copy_path(&cfg.data_dir);
    match config_text {
        Some(text) => std::fs::write(&copy, text)
            .map_err(|e| ServerError(format!("{}: {e}", copy.display())))?,
        None => {
            let _ = std::fs::remove_file(&copy);
        }
    }
    // Never panic on a closed stdout (a parent that stopped reading): the log is advisory.
    let log: Logger = Arc::new(|m: &str| {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "rialto: {m}");
        let _ = out.flush();
    });
    let summary = describe(&cfg);
    let durability = cfg.durability;
    let data_dir = cfg.data_dir.clone();
    let loop_cpu = cfg.cpu;
    let server = Server::start(cfg, log.clone())?;
    if let Some(cpu) = loop_cpu {
        // This thread only waits for the signal; it too stays off the loop's CPU.
        if let Ok(allowed) = sched_idle::allowed_cpus() {
            let _ = sched_idle::pin(&sched_idle::others(&allowed, cpu));
        }
    }
    log(&format!(
        "listening for FIX on {} ({summary}); data in {}, durability {}; Ctrl-C to stop",
        server.addr,
        data_dir.display(),
        durability.as_str()
    ));
    while !signalled.load(Ordering::SeqCst) && !server.stopping() {
        std::thread::park_timeout(Duration::from_millis(100));
    }
    log("stopping: Logout to sessions, draining, final snapshot");
    let hash = server.shutdown()?;
    log(&format!(
        "stopped; state hash {hash:016x}; journal in {}",
        data_dir.join("journal").display()
    ));
    Ok(hash)
}

/// One line naming the CompIDs and instruments of a config.
pub fn describe(cfg: &Config) -> String {
    let targets: std::collections::BTreeSet<&str> = cfg
        .sessions
        .iter()
        .map(|s| s.target_comp_id.as_str())
        .collect();
    let names: Vec<&str> = cfg
        .sessions
        .iter()
        .map(|s| s.sender_comp_id.as_str())
        .collect();
    let shown = if names.len() > 12 {
        format!(
            "{} .. {} ({} sessions)",
            names[..9].join(" "),
            names[names.len() - 1],
            names.len()
        )
    } else {
        names.join(" ")
    };
    let symbols: Vec<&str> = cfg
        .instruments
        .iter()
        .map(|i| i.instrument.symbol.as_str())
        .collect();
    format!(
        "TargetCompID {}; SenderCompIDs {shown}; instruments {}",
        targets.into_iter().collect::<Vec<_>>().join(","),
        symbols.join(" ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A journal of `n` timer ticks in `dir`, and a replica job over it.
    fn job(dir: &Path, n: u64) -> Leg {
        let (mut j, _) = JournalWriter::open(dir, JournalConfig::default()).unwrap();
        let mut enc = Vec::new();
        Input::Tick.encode(&mut enc);
        for seq in 1..=n {
            assert_eq!(j.append(KIND_INPUT as u16, seq, &enc).unwrap(), seq);
        }
        j.commit(journal::Durability::Process).unwrap();
        let mut x = Exchange::new(Arc::new(Config::defaults()));
        x.replaying = true;
        Leg {
            x: Box::new(x),
            out: Outbox::default(),
            at: None,
            upto: n,
            job: Some(n),
            bytes: Vec::new(),
        }
    }

    #[test]
    fn the_replica_follows_in_stretches_publishes_its_cpu_and_paces_itself_when_boosted() {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(false);
        let state = HelperState::default();
        let mut leg = job(dir.path(), 3000);
        // Stretches of a growing target, each resuming where the last one stopped.
        for upto in [1000, 1001, 2500] {
            leg.upto = upto;
            assert_eq!(
                forward(&mut leg, dir.path(), &stop, &state).unwrap(),
                LegEnd::Done
            );
            assert_eq!(leg.x.last_seq(), upto);
            assert_eq!(leg.at.as_ref().unwrap().next_seq, upto + 1);
        }
        assert!(
            state.cpu_ns.load(Ordering::Relaxed) > 0,
            "CPU time published"
        );
        // Boosted: paced (it sleeps three times as long as it works), and still gets there.
        state.boosted.store(true, Ordering::Relaxed);
        leg.upto = 3000;
        let t = Instant::now();
        let cpu = thread_cpu();
        assert_eq!(
            forward(&mut leg, dir.path(), &stop, &state).unwrap(),
            LegEnd::Done
        );
        assert_eq!(leg.x.last_seq(), 3000);
        // Paced slices take 4x their CPU, but opening the reader and the records after the
        // last full slice are not paced, so the whole leg takes somewhat less: 1.5x still
        // tells pacing (an unpaced leg takes about 1x) without failing on a busy machine.
        assert!(t.elapsed() >= (thread_cpu() - cpu).mul_f64(1.5), "paced");
        // Nothing left to do.
        assert_eq!(
            forward(&mut leg, dir.path(), &stop, &state).unwrap(),
            LegEnd::Done
        );
    }

    #[test]
    fn the_loop_watch_bands_gaps_and_reports_only_slow_seconds() {
        let mut g = Gaps::default();
        for ns in [1_000, 20_000, 30_000, 60_000, 500_000, 2_000_000] {
            g.record(ns);
        }
        assert_eq!(g.bands, [1, 1, 1, 1]);
        assert_eq!((g.lost_ns, g.max_ns), (2_590_000, 2_000_000));
        let mut w = LoopWatch::default();
        let quick = IterTimes {
            total: 30_000,
            read: 5_000,
            journal: 5_000,
            engine: 10_000,
            write: 10_000,
            inputs: 3,
            tick: false,
            what: ["new", "cancel", "new", ""],
        };
        w.busy(quick, 100_000);
        assert_eq!(w.second(100_000), None, "nothing over 100 us");
        w.busy(
            IterTimes {
                total: 250_000,
                journal: 200_000,
                tick: true,
                ..quick
            },
            100_000,
        );
        w.busy(quick, 100_000);
        let line = w.second(100_000).expect("a slow second is reported");
        assert!(
            line.contains("second 2: slowest iteration 250 us"),
            "{line}"
        );
        assert!(
            line.contains("journal 200") && line.contains("timer tick"),
            "{line}"
        );
        assert!(line.contains("1 over 100 us"), "{line}");
        assert!(
            line.contains("3 inputs, timer tick: new cancel new)"),
            "{line}"
        );
        assert!(!line.contains("off CPU"), "{line}");
        w.gaps_second.record(300_000);
        let line = w.second(100_000).expect("a long gap is reported");
        assert!(
            line.contains("off CPU between iterations: 1 gaps"),
            "{line}"
        );
        assert_eq!(w.second(100_000), None, "each second starts afresh");
        w.busy(
            IterTimes {
                total: 5_000_000,
                ..quick
            },
            0,
        );
        assert_eq!(w.second(0), None, "0: never");
        assert_eq!(w.sum.inputs, 12);
    }

    #[test]
    fn a_slow_second_says_how_much_the_host_stole() {
        assert_eq!(
            steal_note(Some(0), 15, Duration::from_millis(3_000)),
            "; host steal on CPU 0: 15 ms in the last 3.0 s"
        );
        assert_eq!(
            steal_note(None, 0, Duration::from_millis(1_040)),
            "; host steal on all CPUs: 0 ms in the last 1.0 s"
        );
    }

    /// CPUs in a `Cpus_allowed_list` line ("0-2,5").
    fn cpu_list(s: &str) -> Vec<usize> {
        s.split(',')
            .flat_map(|r| match r.split_once('-') {
                Some((a, b)) => (a.trim().parse().unwrap()..=b.trim().parse().unwrap()).collect(),
                None => vec![r.trim().parse::<usize>().unwrap()],
            })
            .collect()
    }

    /// (thread name, allowed CPUs) of every thread of this process.
    fn thread_masks() -> Vec<(String, Vec<usize>)> {
        let mut out = Vec::new();
        for t in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
            let (Ok(comm), Ok(status)) = (
                std::fs::read_to_string(t.path().join("comm")),
                std::fs::read_to_string(t.path().join("status")),
            ) else {
                continue;
            };
            if let Some(l) = status.lines().find(|l| l.starts_with("Cpus_allowed_list:")) {
                let list = l.trim_start_matches("Cpus_allowed_list:").trim();
                out.push((comm.trim().to_string(), cpu_list(list)));
            }
        }
        out
    }

    #[test]
    fn a_pinned_loop_owns_its_cpu_and_the_caller_gets_its_mask_back() {
        let allowed = sched_idle::allowed_cpus().unwrap();
        let cpu = *allowed.last().unwrap();
        let others = sched_idle::others(&allowed, cpu);
        let dir = tempfile::tempdir().unwrap();
        let mut cfg = Config::defaults();
        cfg.data_dir = dir.path().to_path_buf();
        cfg.listen = "127.0.0.1:0".parse().unwrap();
        cfg.cpu = Some(cpu);
        let lines = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let l2 = lines.clone();
        let log: Logger = Arc::new(move |m: &str| l2.lock().unwrap().push(m.to_string()));
        let server = Server::start(cfg.clone(), log).unwrap();
        assert_eq!(
            sched_idle::allowed_cpus().unwrap(),
            allowed,
            "caller restored"
        );
        // The loop pins itself as it starts, and the helper threads start on their own time
        // (other tests' servers in this process have threads of the same names): wait until
        // every one is there with its mask, or the deadline.
        let placed = |m: &[(String, Vec<usize>)]| {
            m.iter().any(|(n, c)| n == "rialto" && *c == [cpu])
                && ["snapshot", "snapshot-idle", "journal-sync"]
                    .iter()
                    .all(|name| m.iter().any(|(n, c)| n == name && *c == others))
        };
        let deadline = Instant::now() + Duration::from_secs(10);
        let masks = loop {
            let m = thread_masks();
            if placed(&m) || Instant::now() > deadline {
                break m;
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        assert!(
            masks.iter().any(|(n, c)| n == "rialto" && *c == [cpu]),
            "the loop on CPU {cpu}: {masks:?}"
        );
        for name in ["snapshot", "snapshot-idle", "journal-sync"] {
            assert!(
                masks.iter().any(|(n, c)| n == name && *c == others),
                "{name} on {others:?}: {masks:?}"
            );
        }
        server.shutdown().unwrap();
        let lines = lines.lock().unwrap();
        assert!(
            lines
                .iter()
                .any(|l| l.contains(&format!("event loop pinned to CPU {cpu}"))),
            "{lines:?}"
        );
        assert!(
            lines.iter().any(|l| l.contains("mean busy iteration")),
            "{lines:?}"
        );
        // A CPU this process may not use is refused with a reason.
        cfg.cpu = Some(1023);
        let e = Server::start(cfg, Arc::new(|_: &str| {})).err().unwrap();
        assert!(e.0.contains("may only run on CPUs"), "{e}");
        assert_eq!(sched_idle::allowed_cpus().unwrap(), allowed);
    }

    #[test]
    fn a_stop_interrupts_the_replay_and_the_replica_stays_consistent() {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(true);
        let mut leg = job(dir.path(), 2000);
        let end = forward(&mut leg, dir.path(), &stop, &HelperState::default()).unwrap();
        assert_eq!(end, LegEnd::Stopped);
        assert_eq!(leg.x.last_seq(), REPLICA_SLICE - 1);
        stop.store(false, Ordering::Relaxed);
        let end = forward(&mut leg, dir.path(), &stop, &HelperState::default()).unwrap();
        assert_eq!((end, leg.x.last_seq()), (LegEnd::Done, 2000));
    }
}
