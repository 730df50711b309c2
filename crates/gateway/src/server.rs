//! The running server: recovery at start, then three threads.
//!
//! - **network** (`net` thread): one mio event loop over the listener and every FIX
//!   connection, non-blocking. Reads are batched per wake-up (at most 64 KiB per connection per
//!   iteration, for fairness); each framed message becomes an `Input` (`FixAdapter`); the
//!   iteration's inputs go to the core as one batch. Writes are batched per connection and
//!   flushed when the socket accepts them. Parks in `epoll_wait`.
//! - **core** (`core` thread): the LMAX pipeline collapsed onto one thread for a 2-core machine:
//!   *sequencer* (drain up to `BATCH_MAX` inputs, stamp each with the next journal sequence
//!   number and one timestamp per batch), *journal* (append them all, one `commit` per batch:
//!   group commit; `process` = after write(2), `fsync` = after fdatasync), *engine* (apply
//!   each input to the `Exchange` only after the commit returned) and *publisher* (hand the
//!   batch's FIX messages to the network thread and wake it). Parks in the queue's `recv`.
//!   Why one thread and not a journal thread plus an engine thread: nothing may be released
//!   before its commit anyway, applying a batch costs far less than writing it, and on two
//!   cores (shared with the load generator) a third busy thread costs more than it overlaps.
//! - **snapshot** (`snapshot` thread): writes the bytes the core serialized (atomic rename,
//!   fsync) and prunes old snapshots; parked otherwise. The engine stalls only to serialize.
//!
//! Queues: network -> core is a bounded crossbeam channel of input batches. Application
//! messages in flight (queued, not yet taken by the core) are limited to half of
//! `inbound_queue_capacity`: beyond it a new order/cancel/replace is not queued as such but as
//! a small `Busy` input, answered with a reject "exchange busy" (and counted). If the channel
//! itself is full, the network thread keeps the batch in its own pending list (in order) and
//! stops reading sockets until the core drained some: TCP back-pressure, never a blocked
//! thread, never a dropped message. Core -> network is a bounded channel of `Outbox` batches
//! (plus a channel that returns spent batches for reuse).
//!
//! Invariants: no byte of a message caused by input `n` reaches a socket before input `n` is
//! durable in the configured sense; inputs are applied in journal order exactly once; no
//! thread spins.

use crate::adapter::{ConnIds, FixAdapter};
use crate::config::{Config, Durability};
use crate::exchange::{Exchange, Outbox};
use crate::record::{ConnId, Input, KIND_INPUT};
pub(crate) use crate::recovery::decode_input;
pub use crate::recovery::{recover, Recovered};
use crate::wire::{next_frame, Fields, Frame};
use crossbeam_channel::{bounded, Receiver, Sender, TryRecvError, TrySendError};
use journal::{JournalConfig, JournalWriter};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Most inputs the core takes per journal batch.
const BATCH_MAX: usize = 4096;
/// A connection whose unsent output exceeds this is closed (slow consumer).
const WRITE_BUF_MAX: usize = 64 << 20;
/// Bytes read per connection per wake-up before others get a turn.
const READ_CHUNK: usize = 64 << 10;
/// Largest unparsed input kept per connection.
const READ_BUF_MAX: usize = 1 << 20;
const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
const TICK: Duration = Duration::from_secs(1);

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

/// Counters shared between the threads, for the operator and the tests.
#[derive(Default)]
pub struct Counters {
    pub inputs: AtomicU64,
    pub batches: AtomicU64,
    pub busy_rejects: AtomicU64,
    pub connections: AtomicU64,
    pub snapshots: AtomicU64,
    /// Hash of the last snapshot (or of the state at start).
    pub state_hash: AtomicU64,
    pub last_seq: AtomicU64,
}

/// A started server. Drop does not stop it: call `shutdown`.
pub struct Server {
    pub addr: SocketAddr,
    pub recovered: Recovered,
    pub counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    net: Option<JoinHandle<Result<(), ServerError>>>,
    core: Option<JoinHandle<Result<u64, ServerError>>>,
}

/// How a server reports progress (start, snapshots, stop).
pub type Logger = Arc<dyn Fn(&str) + Send + Sync>;

impl Server {
    /// Recovers the state in `cfg.data_dir`, binds `cfg.listen` and starts the threads.
    pub fn start(cfg: Config, log: Logger) -> Result<Server, ServerError> {
        let cfg = Arc::new(cfg);
        let data_dir = cfg.data_dir.clone();
        std::fs::create_dir_all(&data_dir).map_err(|e| {
            ServerError(format!(
                "cannot create data dir {}: {e}",
                data_dir.display()
            ))
        })?;
        let (mut journal, report) = JournalWriter::open(
            &data_dir,
            JournalConfig {
                segment_size_bytes: cfg.journal_segment_bytes,
                ..JournalConfig::default()
            },
        )?;
        log(&report.to_string());
        let (mut x, recovered) = recover(&cfg, &data_dir, true, |m| log(m))?;
        log(&format!(
            "recovered: snapshot at seq {}, replayed {} records, last seq {}, {} live orders, {:.3}s; state hash {:016x}",
            recovered.snapshot_seq.unwrap_or(0),
            recovered.replayed,
            recovered.last_seq,
            x.live_orders(),
            recovered.elapsed.as_secs_f64(),
            recovered.state_hash
        ));
        if journal.next_seq() != x.last_seq() + 1 {
            return Err(ServerError(format!(
                "journal ends at {} but the recovered state is at {}",
                journal.next_seq() - 1,
                x.last_seq()
            )));
        }
        // A new run: every connection of the previous one is gone.
        let ts = now_ns();
        let seq = append(&mut journal, ts, &Input::Startup)?;
        journal.commit(jdur(cfg.durability))?;
        let mut out = Outbox::default();
        x.apply(seq, ts, &Input::Startup, &mut out);

        let listener = TcpListener::bind(cfg.listen)
            .map_err(|e| ServerError(format!("cannot listen on {}: {e}", cfg.listen)))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServerError(e.to_string()))?;
        let poll = Poll::new().map_err(|e| ServerError(e.to_string()))?;
        let waker =
            Arc::new(Waker::new(poll.registry(), WAKER).map_err(|e| ServerError(e.to_string()))?);
        // Batches of inputs, one per network loop iteration (one wake-up of the core per
        // iteration, not per message). Application messages in flight are bounded separately.
        let (in_tx, in_rx) = bounded::<Vec<Input>>((cfg.inbound_queue_capacity / 16).max(8));
        let (out_tx, out_rx) = bounded::<Outbox>(1024);
        let (recycle_tx, recycle_rx) = bounded::<Outbox>(1024);
        let app_inflight = Arc::new(AtomicUsize::new(0));
        let counters = Arc::new(Counters::default());
        counters
            .state_hash
            .store(recovered.state_hash, Ordering::Relaxed);
        counters.last_seq.store(seq, Ordering::Relaxed);
        let stop = Arc::new(AtomicBool::new(false));

        let core = {
            let cfg = cfg.clone();
            let waker = waker.clone();
            let counters = counters.clone();
            let inflight = app_inflight.clone();
            let log = log.clone();
            let stop = stop.clone();
            let (snap_tx, snap_rx) = bounded::<SnapshotJob>(1);
            let snap_busy = Arc::new(AtomicBool::new(false));
            let snap_writer = {
                let (dir, busy, counters, log) = (
                    cfg.data_dir.clone(),
                    snap_busy.clone(),
                    counters.clone(),
                    log.clone(),
                );
                std::thread::Builder::new()
                    .name("snapshot".into())
                    .spawn(move || snapshot_writer(snap_rx, dir, busy, counters, log))
                    .map_err(|e| ServerError(e.to_string()))?
            };
            std::thread::Builder::new()
                .name("core".into())
                .spawn(move || {
                    let _guard = StopOnExit(stop.clone(), waker.clone());
                    let mut core = Core {
                        cfg,
                        journal,
                        x,
                        in_rx,
                        out_tx,
                        recycle_rx,
                        waker,
                        counters,
                        inflight,
                        since_snapshot: 0,
                        last_snapshot: Instant::now(),
                        snap_tx,
                        snap_busy,
                    };
                    let r = core.run();
                    // Closing the channel lets the writer finish the final snapshot and end.
                    drop(core);
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
        let net = {
            let mut net = Net {
                adapter: FixAdapter::new(cfg.clone()),
                poll,
                listener,
                conns: HashMap::new(),
                // Tokens 0 and 1 are the listener and the waker.
                next_conn: 2,
                in_tx,
                cur: Vec::new(),
                pending: VecDeque::new(),
                out_rx,
                recycle_tx,
                inflight: app_inflight,
                app_limit: cfg.inbound_queue_capacity / 2,
                counters: counters.clone(),
                stop: stop.clone(),
                fields: Fields::new(),
            };
            let guard = StopOnExit(stop.clone(), waker.clone());
            std::thread::Builder::new()
                .name("net".into())
                .spawn(move || {
                    let _guard = guard;
                    net.run()
                })
                .map_err(|e| ServerError(e.to_string()))?
        };
        Ok(Server {
            addr,
            recovered,
            counters,
            stop,
            waker,
            net: Some(net),
            core: Some(core),
        })
    }

    /// True once the server is stopping (a signal, `shutdown`, or a fatal journal error).
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Clean stop: queue a Shutdown (Logout to every session), drain, final snapshot. Returns
    /// the final state hash.
    pub fn shutdown(mut self) -> Result<u64, ServerError> {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.waker.wake();
        let net = self.net.take().map(|h| h.join());
        let core = self.core.take().map(|h| h.join());
        let hash = match core {
            Some(Ok(r)) => r?,
            _ => return Err(ServerError("core thread panicked".into())),
        };
        match net {
            Some(Ok(r)) => r?,
            _ => return Err(ServerError("network thread panicked".into())),
        }
        Ok(hash)
    }
}

/// Sets the stop flag when a thread ends, however it ends (return, error or panic), so the
/// other thread and `serve_until_signal` notice and wind down instead of waiting forever.
struct StopOnExit(Arc<AtomicBool>, Arc<Waker>);

impl Drop for StopOnExit {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
        let _ = self.1.wake();
    }
}

fn append(j: &mut JournalWriter, ts: u64, input: &Input) -> Result<u64, ServerError> {
    let mut buf = Vec::with_capacity(128);
    input.encode(&mut buf);
    Ok(j.append(KIND_INPUT as u16, ts, &buf)?)
}

struct Core {
    cfg: Arc<Config>,
    journal: JournalWriter,
    x: Exchange,
    in_rx: Receiver<Vec<Input>>,
    out_tx: Sender<Outbox>,
    recycle_rx: Receiver<Outbox>,
    waker: Arc<Waker>,
    counters: Arc<Counters>,
    inflight: Arc<AtomicUsize>,
    since_snapshot: u64,
    last_snapshot: Instant,
    snap_tx: Sender<SnapshotJob>,
    snap_busy: Arc<AtomicBool>,
}

/// A serialized snapshot on its way to disk.
struct SnapshotJob {
    seq: u64,
    bytes: Vec<u8>,
    hash: u64,
    /// How long the engine stood still to serialize it.
    stall: Duration,
}

/// The snapshot writer thread: writes (atomically, durably) and prunes; parks otherwise.
fn snapshot_writer(
    rx: Receiver<SnapshotJob>,
    data_dir: PathBuf,
    busy: Arc<AtomicBool>,
    counters: Arc<Counters>,
    log: Logger,
) -> Result<(), ServerError> {
    for job in rx {
        let t0 = Instant::now();
        let r = journal::snapshot::write(&data_dir, job.seq, &job.bytes).and_then(|path| {
            journal::snapshot::prune(&data_dir, journal::snapshot::SNAPSHOTS_KEPT_DEFAULT)?;
            Ok(path)
        });
        busy.store(false, Ordering::Release);
        match r {
            Ok(path) => {
                counters.snapshots.fetch_add(1, Ordering::Relaxed);
                log(&format!(
                    "snapshot at seq {}: {} bytes, engine stall {:.1} ms, written in {:.1} ms to {}; state hash {:016x}",
                    job.seq,
                    job.bytes.len(),
                    job.stall.as_secs_f64() * 1e3,
                    t0.elapsed().as_secs_f64() * 1e3,
                    path.display(),
                    job.hash
                ));
            }
            // A failed snapshot loses nothing (the journal has it all); say so and go on.
            Err(e) => log(&format!("snapshot at seq {} failed: {e}", job.seq)),
        }
    }
    Ok(())
}

impl Core {
    fn run(&mut self) -> Result<u64, ServerError> {
        let mut batch: Vec<Input> = Vec::with_capacity(BATCH_MAX);
        let mut seqs: Vec<u64> = Vec::with_capacity(BATCH_MAX);
        let mut enc: Vec<u8> = Vec::with_capacity(256);
        let mut last_ts = 0u64;
        let durability = jdur(self.cfg.durability);
        loop {
            batch.clear();
            seqs.clear();
            match self.in_rx.recv_timeout(TICK) {
                Ok(mut v) => batch.append(&mut v),
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    self.maybe_snapshot(false)?;
                    continue;
                }
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
            }
            while batch.len() < BATCH_MAX {
                match self.in_rx.try_recv() {
                    Ok(mut v) => batch.append(&mut v),
                    Err(_) => break,
                }
            }
            let apps = batch.iter().filter(|i| i.is_application()).count();
            if apps > 0 {
                self.inflight.fetch_sub(apps, Ordering::AcqRel);
            }
            // Sequencer: one timestamp per batch, never going backwards.
            let ts = now_ns().max(last_ts);
            last_ts = ts;
            for input in &batch {
                enc.clear();
                input.encode(&mut enc);
                seqs.push(self.journal.append(KIND_INPUT as u16, ts, &enc)?);
            }
            // Journal: group commit. Nothing of this batch is released before it returns.
            self.journal.commit(durability)?;
            // Engine + publisher.
            let mut out = self.recycle_rx.try_recv().unwrap_or_default();
            out.clear();
            let mut shutdown = false;
            for (input, &seq) in batch.iter().zip(&seqs) {
                self.x.apply(seq, ts, input, &mut out);
                shutdown |= matches!(input, Input::Shutdown);
            }
            let n = batch.len() as u64;
            // Timer ticks alone do not make a snapshot due.
            self.since_snapshot +=
                batch.iter().filter(|i| !matches!(i, Input::Tick)).count() as u64;
            self.counters.inputs.fetch_add(n, Ordering::Relaxed);
            self.counters.batches.fetch_add(1, Ordering::Relaxed);
            self.counters
                .last_seq
                .store(self.x.last_seq(), Ordering::Relaxed);
            self.counters
                .busy_rejects
                .store(self.x.stats.busy_rejects, Ordering::Relaxed);
            if !out.is_empty() {
                // Bounded: if the network thread is behind, wait for it (it never waits on us).
                if self.out_tx.send(out).is_err() {
                    break;
                }
                let _ = self.waker.wake();
            }
            if shutdown {
                break;
            }
            self.maybe_snapshot(false)?;
        }
        let hash = self.maybe_snapshot(true)?;
        Ok(hash)
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
        // The engine stalls only for the serialization; the file write and its fsync happen
        // on the snapshot writer thread.
        let t0 = Instant::now();
        let mut buf = Vec::with_capacity(1 << 20);
        let hash = self.x.snapshot_and_hash(&mut buf);
        let seq = self.x.last_seq();
        let stall = t0.elapsed();
        self.since_snapshot = 0;
        self.last_snapshot = Instant::now();
        self.counters.state_hash.store(hash, Ordering::Relaxed);
        self.snap_busy.store(true, Ordering::Release);
        let job = SnapshotJob {
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

struct Conn {
    stream: TcpStream,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    ids: Option<ConnIds>,
    /// The server asked to close it once `wbuf` is flushed.
    closing: bool,
    /// Readable data may be left in the socket (reading was paused or cut at READ_CHUNK).
    more: bool,
}

struct Net {
    adapter: FixAdapter,
    poll: Poll,
    listener: TcpListener,
    conns: HashMap<ConnId, Conn>,
    next_conn: ConnId,
    in_tx: Sender<Vec<Input>>,
    /// Inputs of this loop iteration, sent as one batch at its end.
    cur: Vec<Input>,
    /// Inputs the inbound queue had no room for, in order; while non-empty, no socket is read.
    pending: VecDeque<Vec<Input>>,
    out_rx: Receiver<Outbox>,
    recycle_tx: Sender<Outbox>,
    inflight: Arc<AtomicUsize>,
    app_limit: usize,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    fields: Fields,
}

impl Net {
    fn run(&mut self) -> Result<(), ServerError> {
        let e = |e: io::Error| ServerError(format!("network: {e}"));
        self.poll
            .registry()
            .register(&mut self.listener, LISTENER, Interest::READABLE)
            .map_err(e)?;
        let mut events = Events::with_capacity(1024);
        let mut next_tick = Instant::now() + TICK;
        let mut shutdown_sent = false;
        let mut shutdown_deadline = None;
        loop {
            let mut timeout = next_tick.saturating_duration_since(Instant::now());
            if !self.pending.is_empty() || self.conns.values().any(|c| c.more) {
                timeout = timeout.min(Duration::from_millis(1));
            }
            if self.stop.load(Ordering::SeqCst) {
                timeout = timeout.min(Duration::from_millis(10));
            }
            if let Err(err) = self.poll.poll(&mut events, Some(timeout)) {
                if err.kind() != io::ErrorKind::Interrupted {
                    return Err(e(err));
                }
            }
            let mut readable: Vec<ConnId> = Vec::new();
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => self.accept()?,
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
            // Output first: it frees the core's batches and the clients' windows.
            loop {
                match self.out_rx.try_recv() {
                    Ok(out) => self.deliver(out),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => {
                        // The core finished (after Shutdown or a fatal error).
                        self.close_all();
                        return Ok(());
                    }
                }
            }
            self.drain_pending();
            if self.stop.load(Ordering::SeqCst) {
                if !shutdown_sent {
                    self.submit(Input::Shutdown);
                    self.flush_inputs();
                    self.drain_pending();
                    shutdown_sent = true;
                    shutdown_deadline = Some(Instant::now() + Duration::from_secs(5));
                }
                if shutdown_deadline.is_some_and(|d| Instant::now() > d) {
                    self.close_all();
                    return Ok(());
                }
                continue;
            }
            if self.pending.is_empty() {
                readable.extend(self.conns.iter().filter(|(_, c)| c.more).map(|(id, _)| *id));
                readable.sort_unstable();
                for id in readable {
                    self.read(id);
                    if !self.pending.is_empty() {
                        break;
                    }
                }
            }
            if Instant::now() >= next_tick {
                next_tick = Instant::now() + TICK;
                if !self.conns.is_empty() {
                    self.submit(Input::Tick);
                }
            }
            self.flush_inputs();
        }
    }

    fn accept(&mut self) -> Result<(), ServerError> {
        loop {
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    let id = self.next_conn;
                    self.next_conn += 1;
                    let _ = stream.set_nodelay(true);
                    if self
                        .poll
                        .registry()
                        .register(
                            &mut stream,
                            Token(id as usize),
                            Interest::READABLE | Interest::WRITABLE,
                        )
                        .is_err()
                    {
                        continue;
                    }
                    self.counters.connections.fetch_add(1, Ordering::Relaxed);
                    self.conns.insert(
                        id,
                        Conn {
                            stream,
                            rbuf: Vec::with_capacity(8192),
                            wbuf: Vec::new(),
                            ids: None,
                            closing: false,
                            more: true,
                        },
                    );
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // Out of descriptors and the like: try again on the next event.
                Err(_) => return Ok(()),
            }
        }
    }

    /// Queues an input for the core (sent with this iteration's batch); never blocks, never
    /// drops.
    fn submit(&mut self, input: Input) {
        self.cur.push(input);
    }

    /// Hands this iteration's inputs to the core as one batch, or keeps them pending (in
    /// order) while the queue is full.
    fn flush_inputs(&mut self) {
        if self.cur.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.cur);
        if !self.pending.is_empty() {
            self.pending.push_back(batch);
            return;
        }
        match self.in_tx.try_send(batch) {
            Ok(()) => {}
            Err(TrySendError::Full(b)) => self.pending.push_back(b),
            Err(TrySendError::Disconnected(_)) => {}
        }
    }

    fn drain_pending(&mut self) {
        while let Some(i) = self.pending.pop_front() {
            match self.in_tx.try_send(i) {
                Ok(()) => {}
                Err(TrySendError::Full(i)) => {
                    self.pending.push_front(i);
                    return;
                }
                Err(TrySendError::Disconnected(_)) => {
                    self.pending.clear();
                    return;
                }
            }
        }
    }

    fn read(&mut self, id: ConnId) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        if c.closing {
            c.more = false;
            return;
        }
        let mut got = 0;
        let mut closed = false;
        let mut tmp = [0u8; 16384];
        loop {
            if got >= READ_CHUNK || c.rbuf.len() >= READ_BUF_MAX {
                break;
            }
            match c.stream.read(&mut tmp) {
                Ok(0) => {
                    closed = true;
                    c.more = false;
                    break;
                }
                Ok(n) => {
                    c.rbuf.extend_from_slice(&tmp[..n]);
                    got += n;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    c.more = false;
                    break;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    closed = true;
                    c.more = false;
                    break;
                }
            }
        }
        // Frame and convert everything complete.
        let mut rbuf = std::mem::take(&mut c.rbuf);
        let mut ids = c.ids.take();
        let mut pos = 0;
        let mut inputs: Vec<Input> = Vec::new();
        while let Some(frame) = next_frame(&rbuf[pos..]) {
            match frame {
                Frame::Garbled { len, .. } => pos += len,
                Frame::Message { len } => {
                    let msg = &rbuf[pos..pos + len];
                    pos += len;
                    if self.fields.parse(msg).is_err() {
                        // Framed and checksummed but not tag=value: garbled, ignored.
                        continue;
                    }
                    let mut input = self.adapter.to_input(id, &mut ids, msg, &self.fields);
                    if input.is_application() {
                        if self.inflight.load(Ordering::Acquire) >= self.app_limit {
                            input = crate::adapter::shed(input, &self.fields, msg);
                        } else {
                            self.inflight.fetch_add(1, Ordering::AcqRel);
                        }
                    }
                    inputs.push(input);
                }
            }
        }
        rbuf.drain(..pos);
        let overflow = rbuf.len() >= READ_BUF_MAX;
        if let Some(c) = self.conns.get_mut(&id) {
            c.rbuf = rbuf;
            c.ids = ids;
        }
        for i in inputs {
            self.submit(i);
        }
        if closed || overflow {
            self.drop_conn(id, true);
        }
    }

    fn deliver(&mut self, mut out: Outbox) {
        let mut touched: Vec<ConnId> = Vec::new();
        for item in &out.items {
            if let Some(c) = self.conns.get_mut(&item.conn) {
                c.wbuf.extend_from_slice(&out.buf[item.start..item.end]);
                if item.close {
                    c.closing = true;
                }
                if touched.last() != Some(&item.conn) {
                    touched.push(item.conn);
                }
            }
        }
        touched.sort_unstable();
        touched.dedup();
        for id in touched {
            self.flush(id);
        }
        out.clear();
        let _ = self.recycle_tx.try_send(out);
    }

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
        c.wbuf.drain(..written);
        if failed || c.wbuf.len() > WRITE_BUF_MAX {
            self.drop_conn(id, true);
        } else if c.closing && c.wbuf.is_empty() {
            // The exchange already unbound it: no Disconnected input.
            self.drop_conn(id, false);
        }
    }

    fn drop_conn(&mut self, id: ConnId, notify: bool) {
        if let Some(mut c) = self.conns.remove(&id) {
            let _ = self.poll.registry().deregister(&mut c.stream);
            let _ = c.stream.shutdown(std::net::Shutdown::Both);
            if notify && !c.closing {
                self.submit(Input::Disconnected { conn: id });
            }
        }
    }

    fn close_all(&mut self) {
        let ids: Vec<ConnId> = self.conns.keys().copied().collect();
        for id in ids {
            self.flush(id);
            self.drop_conn(id, false);
        }
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
    let server = Server::start(cfg, log.clone())?;
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
