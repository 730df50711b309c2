//! The event loop (`rialto` thread): all sockets, the sequencer, the journal's group commit,
//! the state machine, the writes, on one thread, one batch per iteration.
//!
//! Each iteration: `epoll_wait` (parks until a socket, the 1 s timer or the
//! stop waker fires; with `idle = "spin"` it polls with a zero timeout instead) -> accept new
//! connections -> read every readable connection (until the socket would block, at most 64 KiB
//! per connection per iteration) -> frame (`fix::frame`) + `FixAdapter::to_input` into the
//! connection's own queue -> fill the iteration's batch from the queues, round-robin; then five
//! named steps: **sequence** (next journal sequence number each,
//! one timestamp per batch) -> **prefetch** (the ClOrdID index slots the batch will look up)
//! -> **journal** (append all, ONE `commit`: group commit; `process` = after write(2)
//! returned, `fsync` = after fdatasync) -> **apply** (`Node::apply` each record, in journal
//! order) -> **publish** (the batch's `Outbox` is copied to the connections' write buffers
//! and each touched connection gets one write(2); what the socket does not take stays buffered
//! with WRITABLE interest). Why one thread: on a 2-core machine shared with the load
//! generator each thread hand-off costs a wake-up (15-20 µs), and nothing may leave before its
//! commit anyway; one thread pays one wake-up per batch and no queue.
//!
//! Measuring the loop (`watch`): every busy iteration is timed by step; a spinning loop also
//! times the gaps between iterations above 20 µs (time it did not have its CPU). Once a
//! second, if the slowest iteration or the longest gap of that second exceeded
//! `stall_log_us`, one log line says what it was (and the host's steal time on the loop's CPU
//! since the last such line); at stop, one line sums it all up.
//!
//! Fairness and overload: every message read waits in its connection's queue; the batch takes
//! at most `batch_budget` messages an iteration, which bounds
//! the work, hence the latency, of one iteration, served round-robin: each connection with
//! messages waiting gets an equal share of what is left, in turn, and one that had its share
//! goes to the back. A session's messages are first checked against its throttle
//! (`throttle`): over a limit, an application message is replaced by a small `Busy` input
//! (`FixAdapter::refuse`) answered "throttled" that never reaches the exchange; over the
//! logout limit the session is logged out (`Record::Evict`). At most `session_queue_max`
//! application messages of one session (`firm_queue_max` of one firm) wait; beyond that its
//! new ones are answered "exchange busy" (counted), so a session within its limits is never
//! shed because of others. A queue twice that long is not read until it drains (TCP
//! back-pressure). A connection whose unsent output passes `outbound_queue_bytes` is logged
//! out as a slow consumer, and closed if it does not read its Logout in time.
//!
//! Connections: past `max_connections` open, or past the connections not logged on that
//! leave room for every configured session, a new connection is closed at once; one that
//! has not logged on within `logon_timeout_secs` is closed.
//!
//! Never: allocates per message in steady state on its own path (batch, sequence, encoding,
//! read and output buffers are reused); blocks on anything but `epoll_wait` and the journal's
//! write/fdatasync.
//!
//! Invariants: no byte of a message caused by record `n` reaches a socket before record `n` is
//! durable in the configured sense (the outbox is written only after `commit` returned);
//! records are applied in journal order exactly once; a connection that closes (or is closed
//! as a slow consumer) yields exactly one `Disconnected` record after its last message.

use crate::config::{Config, Idle};
use crate::counters::{now_ns, Counters, Logger};
use crate::error::ServerError;
use crate::node::{record_hashes, Node};
use crate::record::{Evict, Record, KIND_RECORD};
use crate::snapshots::SnapshotJob;
use crate::throttle::{Class, Guard, Verdict};
use crate::transport::Transport;
use crate::watch::{steal_note, IterTimes, LoopWatch};
use crossbeam_channel::Sender;
use exchange::ClHashes;
use fix::{frame, resync, Decoder, Inbound, Limits};
use fix_gateway::{AppMsg, BusyWhy, ConnId, ConnIds, FixAdapter, Outbox};
use journal::Log;
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};
use std::collections::{HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a connection the loop logged out (slow reader, logout throttle) has to read its
/// Logout before it is closed anyway.
const EVICT_GRACE: Duration = Duration::from_secs(2);
/// A resend's next piece is written once its connection has less than this unsent.
const RESEND_LOW: usize = 256 << 10;
/// A mass cancel's next chunk is applied once its requester has less than this unsent.
const CONTINUE_LOW: usize = 1 << 20;
/// Most sequence numbers of one resend piece.
const RESEND_PIECE: usize = 512;
/// A write buffer (or a queue) this large is given back once it is empty.
const KEEP_BUF: usize = 1 << 20;
/// Bytes read per connection per iteration before others get a turn.
pub(crate) const READ_CHUNK: usize = 64 << 10;
/// Largest unparsed input kept per connection.
const READ_BUF_MAX: usize = 1 << 20;
pub(crate) const LISTENER: Token = Token(0);
pub(crate) const WAKER: Token = Token(1);
const TICK: Duration = Duration::from_secs(1);
/// How long a clean stop waits for the Logouts to leave before closing the sockets anyway.
const SHUTDOWN_FLUSH: Duration = Duration::from_secs(5);

pub(crate) struct Conn {
    /// Plain TCP, or TLS with `[tls]` (`transport`): the same calls as a `TcpStream`.
    pub(crate) stream: Transport,
    /// Unparsed input (a partial message); empty in the common case, where a read ends on a
    /// message boundary and the messages are parsed straight from the loop's scratch buffer.
    pub(crate) rbuf: Vec<u8>,
    /// Output the socket has not taken yet.
    pub(crate) wbuf: Vec<u8>,
    pub(crate) ids: Option<ConnIds>,
    /// The edge asked to close it once `wbuf` is flushed.
    pub(crate) closing: bool,
    /// Readable data may be left in the socket (an event came, or a read was cut at
    /// READ_CHUNK).
    pub(crate) more: bool,
    /// Registered with WRITABLE interest (output is pending).
    pub(crate) want_write: bool,
    /// The session whose messages it carries, if that session's messages are logged
    /// (`message_log`); known from its first Logon.
    pub(crate) msglog: Option<u32>,
    /// Garbled input logged this second (rate limit).
    pub(crate) garbled: GarbledLog,
    /// When it was accepted (the logon timeout runs from then).
    pub(crate) accepted: Instant,
    /// The configured session its Logon named, and that session's firm.
    pub(crate) session: Option<(u32, u32)>,
    /// A record of it was queued: its close is journaled (`Disconnected`).
    pub(crate) journaled: bool,
    /// The loop logged it out (`Record::Evict`) at this time: nothing more is read from it,
    /// and it is closed `EVICT_GRACE` after.
    pub(crate) evicted: Option<Instant>,
    // -- auth (`crate::auth`) --
    /// The address it came from (the failed-logon throttle counts by it).
    pub(crate) peer: std::net::IpAddr,
    /// Its Logon is with the `auth` thread: nothing more is read until the verdict.
    pub(crate) auth_wait: bool,
    /// The verdict came: parse what waited in `rbuf` even if the socket has nothing new.
    pub(crate) auth_resume: bool,
    /// A ResendRequest being served in pieces: the next sequence number and the last.
    pub(crate) resend: Option<(u64, u64)>,
    /// Output that waits behind that resend (never interleaved with it).
    pub(crate) held: Vec<u8>,
}

/// Records read from one connection and not yet in a batch, in order.
#[derive(Default)]
pub(crate) struct InQueue {
    pub(crate) recs: VecDeque<Record>,
    /// Application messages among them.
    pub(crate) apps: usize,
    /// The firm they count against.
    pub(crate) firm: Option<u32>,
    /// Its connection is gone: the queue ends with its `Disconnected` record.
    pub(crate) closed: bool,
}

/// Every configured session's throttle.
pub(crate) fn guards_of(sessions: &[crate::config::SessionDef]) -> Vec<Guard> {
    sessions.iter().map(|s| Guard::new(&s.throttle)).collect()
}

/// Raises the process's open-file limit to what `max_connections` needs (plus journal,
/// snapshot and market-data descriptors), within the hard limit; logs if it cannot.
pub(crate) fn raise_fd_limit(max_connections: usize, log: &Logger) {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let want = max_connections as u64 + 256;
    let lim = getrlimit(Resource::Nofile);
    let cur = lim.current.unwrap_or(u64::MAX);
    if cur >= want {
        return;
    }
    let max = lim.maximum.unwrap_or(u64::MAX);
    let new = want.min(max);
    let set = rustix::process::Rlimit {
        current: Some(new),
        maximum: lim.maximum,
    };
    if setrlimit(Resource::Nofile, set).is_err() || new < want {
        log(&format!(
            "open-file limit {new} is below max_connections + 256 = {want}: connections past it are refused by the kernel"
        ));
    }
}

/// At most `GARBLED_PER_SECOND` garbled messages of a connection are logged a second; the
/// rest are counted and the count logged with the next one.
#[derive(Default)]
pub(crate) struct GarbledLog {
    second: u64,
    logged: u32,
    left_out: u64,
}

const GARBLED_PER_SECOND: u32 = 5;

impl GarbledLog {
    fn note(&mut self, conn: ConnId, ids: Option<&ConnIds>, reason: &str, len: usize) {
        let second = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        if second != self.second {
            self.second = second;
            self.logged = 0;
        }
        if self.logged == GARBLED_PER_SECOND {
            self.left_out += 1;
            return;
        }
        self.logged += 1;
        let left_out = std::mem::take(&mut self.left_out);
        let client = ids.map(|i| i.sender.to_str_lossy().into_owned());
        tracing::warn!(
            conn,
            client = client.as_deref().unwrap_or("-"),
            reason,
            bytes = len,
            left_out,
            "garbled input dropped"
        );
    }
}

pub(crate) struct EventLoop<L: Log> {
    pub(crate) cfg: Arc<Config>,
    pub(crate) adapter: FixAdapter,
    pub(crate) durability: journal::Durability,
    pub(crate) idle: Idle,
    pub(crate) poll: Poll,
    pub(crate) listener: TcpListener,
    /// `[tls]`: every accepted connection speaks TLS.
    pub(crate) tls: Option<Arc<rustls::ServerConfig>>,
    /// Keyed by ids the loop hands out itself (foldhash: no SipHash per socket event).
    pub(crate) conns: HashMap<ConnId, Conn, foldhash::fast::RandomState>,
    pub(crate) next_conn: ConnId,
    pub(crate) journal: L,
    pub(crate) node: Node,
    pub(crate) counters: Arc<Counters>,
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) decoder: Decoder,
    /// Read buffer shared by all connections.
    pub(crate) scratch: Box<[u8]>,
    /// Records of this iteration, in the order they will be journaled.
    pub(crate) batch: Vec<Record>,
    pub(crate) seqs: Vec<u64>,
    /// The ClOrdID hashes of each record of `batch` (`node::record_hashes`), computed once
    /// before the journal step to prefetch the index slots the apply step will read.
    pub(crate) hashes: Vec<ClHashes>,
    pub(crate) enc: Vec<u8>,
    pub(crate) out: Outbox,
    pub(crate) last_ts: u64,
    /// Connections to read this iteration.
    pub(crate) ready: Vec<ConnId>,
    /// Connections that got output this iteration.
    pub(crate) touched: Vec<ConnId>,
    /// Messages from connections applied per iteration; the rest wait in their queues.
    pub(crate) budget: usize,
    /// Messages from connections in this iteration's batch.
    pub(crate) apps: usize,
    /// Each connection's records read but not yet in a batch.
    pub(crate) inq: HashMap<ConnId, InQueue, foldhash::fast::RandomState>,
    /// The connections with records waiting, in round-robin order.
    pub(crate) rr: VecDeque<ConnId>,
    /// Application messages waiting, per firm.
    pub(crate) firm_waiting: Vec<usize>,
    /// Each configured session's throttle.
    pub(crate) guards: Vec<Guard>,
    /// The wall clock (ns) of this iteration's reads: the throttles' time.
    pub(crate) now: u64,
    /// Connections with a ResendRequest being served in pieces.
    pub(crate) resending: Vec<ConnId>,
    /// A resend piece's output.
    pub(crate) piece: Outbox,
    /// Checks Logons' credentials on the `auth` thread (`crate::auth`).
    pub(crate) auth: crate::auth::Auth,
    /// Refused connections not yet logged (the line is written at most once a second).
    pub(crate) refused_log: u64,
    /// Open connections that have not logged on.
    pub(crate) pending_logons: usize,
    pub(crate) since_snapshot: u64,
    /// The journal record number from which the next batch starts with a checkpoint
    /// (`Config::checkpoint_every_records`; `u64::MAX`: never).
    pub(crate) next_checkpoint: u64,
    pub(crate) last_snapshot: Instant,
    pub(crate) snap_tx: Sender<SnapshotJob>,
    pub(crate) snap_busy: Arc<AtomicBool>,
    /// The snapshot thread's replica works: periodic snapshots cost the loop nothing.
    pub(crate) replica_ok: Arc<AtomicBool>,
    pub(crate) log: Logger,
    /// Iterations with work by duration: bucket `i` counts those under `2^i` µs (the last
    /// bucket: everything longer). Logged at stop, to find stalls.
    pub(crate) hist: [u64; 16],
    /// Longest journal time of a batch (appends + commit, ns) and batches over 1 ms, logged at
    /// stop.
    pub(crate) commit_max_ns: u64,
    pub(crate) commits_slow: u64,
    /// Where the time of busy iterations goes, and (spinning) the time the loop was off its
    /// CPU between iterations: the loop's own share of a latency tail.
    pub(crate) watch: LoopWatch,
    /// The CPU whose steal time a slow second's line reports (the loop's; all: `None`).
    pub(crate) steal_cpu: Option<usize>,
    /// Its steal time (ms since boot) when last read, and when: read at start and at each slow
    /// second's line only (a `/proc` read, never per iteration).
    pub(crate) steal_mark: Option<(u64, Instant)>,
    /// Wakes the market-data publisher after a batch (`None`: no market data).
    pub(crate) md_wake: Option<crate::market_data::MdWake>,
    /// The per-session message log (`None`: no session has one).
    pub(crate) msglog: Option<crate::message_log::MessageLogSink>,
    /// Application messages shed since the last tick's log line.
    pub(crate) shed_unlogged: u64,
    /// Application messages throttled since the last tick's log line.
    pub(crate) throttled_unlogged: u64,
}

impl<L: Log> EventLoop<L> {
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

    pub(crate) fn run(&mut self) -> Result<u64, ServerError> {
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
                || !self.rr.is_empty()
                || self.resend_ready()
                || self.conns.values().any(|c| c.more && !c.closing)
                // Protection hook (issue 30): pending mass-cancel chunks, see below.
                || self.continue_ready()
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
                    WAKER => self.take_verdicts(),
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
            if self.stop.load(Ordering::SeqCst) {
                if !shutdown_sent {
                    // Stop reading: what was read is applied, and the Shutdown input is the
                    // last one of this run.
                    self.drain_all();
                    self.batch.push(Record::Shutdown);
                    shutdown_sent = true;
                }
            } else {
                self.now = now_ns();
                self.read_ready();
                if t0 >= next_tick {
                    next_tick = t0 + TICK;
                    // Sessions' timers, and the end (or start) of the trading day even with
                    // no one connected: the journaled Tick is what expires DAY orders, so a
                    // replay does the same at the same record.
                    let day_changes = now_ns() >= self.node.exchange.next_day_change_ns();
                    if !self.conns.is_empty() || day_changes {
                        self.batch.push(Record::Tick);
                    }
                    self.close_overdue(t0);
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
                }
                self.fill();
            }
            self.serve_resends();
            // A mass cancel with chunks left: one `Record::Continue` an iteration, after what
            // it read, so other sessions' messages interleave with the chunks; paced on the
            // requester's unsent output, so that it gets every report.
            if !shutdown_sent
                && self.continue_ready()
                && !self.batch.iter().any(|r| matches!(r, Record::Continue))
            {
                self.batch.push(Record::Continue);
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

    /// The four steps for this iteration's batch: sequence, journal, apply, publish. Returns
    /// true if it held the Shutdown record, and the time of each step.
    fn process(&mut self) -> Result<(bool, IterTimes), ServerError> {
        let ts = self.sequence();
        let p0 = Instant::now();
        self.prefetch();
        let c0 = Instant::now();
        self.journal(ts)?;
        let e0 = Instant::now();
        let (shutdown, counted) = self.apply(ts);
        let w0 = Instant::now();
        let n = self.batch.len() as u64;
        let mut what = [""; 4];
        for (w, r) in what.iter_mut().zip(&self.batch) {
            *w = kind(r);
        }
        let commit_ns = e0.duration_since(c0).as_nanos() as u64;
        self.commit_max_ns = self.commit_max_ns.max(commit_ns);
        self.commits_slow += u64::from(commit_ns > 1_000_000);
        let times = IterTimes {
            what,
            journal: commit_ns,
            // The cache hints count as the apply step's.
            engine: (w0.duration_since(e0) + c0.duration_since(p0)).as_nanos() as u64,
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
            .store(self.node.last_seq(), Ordering::Release);
        self.counters
            .busy_rejects
            .store(self.node.fix.stats.busy_rejects, Ordering::Relaxed);
        self.counters
            .throttled
            .store(self.node.fix.stats.throttled, Ordering::Relaxed);
        self.publish();
        // After this batch's output is written: the market-data publisher follows it.
        if let Some(w) = &self.md_wake {
            w.poke();
        }
        Ok((
            shutdown,
            IterTimes {
                write: w0.elapsed().as_nanos() as u64,
                ..times
            },
        ))
    }

    /// Sequence: one timestamp for the batch, never going backwards (the records' numbers are
    /// the journal's, given as they are appended). Every `checkpoint_every_records` records the
    /// batch starts with a checkpoint of the state before it (rare: one `Vec` and one shift of
    /// the batch).
    fn sequence(&mut self) -> u64 {
        let ts = now_ns().max(self.last_ts);
        self.last_ts = ts;
        let next_seq = self.journal.next_seq();
        if next_seq >= self.next_checkpoint && !self.batch.is_empty() {
            self.batch
                .insert(0, Record::Checkpoint(self.node.checkpoint()));
            self.next_checkpoint = next_checkpoint(self.cfg.checkpoint_every_records, next_seq);
        }
        ts
    }

    /// Cache hints for the apply step: each record's ClOrdID index slots start loading now and
    /// arrive while the batch is journaled (the index is 8 MB: a lookup is a cache and TLB
    /// miss). They change nothing.
    fn prefetch(&mut self) {
        self.hashes.clear();
        let hasher = self.node.cl_hasher();
        for r in &self.batch {
            let h = record_hashes(&hasher, r);
            self.node.prefetch(r, &h);
            self.hashes.push(h);
        }
    }

    /// Journal: append the batch, then ONE commit (group commit). Nothing of this batch is
    /// released before it returns.
    fn journal(&mut self, ts: u64) -> Result<(), ServerError> {
        self.seqs.clear();
        for r in &self.batch {
            self.enc.clear();
            r.encode(&mut self.enc);
            self.seqs
                .push(self.journal.append(KIND_RECORD, ts, &self.enc)?);
        }
        self.journal.commit(self.durability)?;
        Ok(())
    }

    /// Apply: every record of the batch to the state machine, in journal order. Returns
    /// whether the batch held the Shutdown record, and how many records count towards a
    /// snapshot (timer ticks and checkpoints alone do not make one due).
    fn apply(&mut self, ts: u64) -> (bool, u64) {
        let mut shutdown = false;
        let mut counted = 0u64;
        // The index slots are loaded by now: follow them to the ring entries a cancel or
        // replace will compare.
        for (r, h) in self.batch.iter().zip(&self.hashes) {
            self.node.prefetch_entries(r, h);
        }
        for ((r, &seq), &h) in self.batch.iter().zip(&self.seqs).zip(&self.hashes) {
            self.node.apply_prehashed(seq, ts, r, h, &mut self.out);
            shutdown |= matches!(r, Record::Shutdown);
            counted += u64::from(!matches!(r, Record::Tick | Record::Checkpoint(_)));
        }
        (shutdown, counted)
    }

    /// Publish: the batch's output copied to the connections' buffers, then one write per
    /// connection.
    fn publish(&mut self) {
        self.touched.clear();
        let mut next_resend = 0;
        for (i, item) in self.out.items.iter().enumerate() {
            // ResendRequests applied before this message start being served first.
            while let Some(r) = self.out.resends.get(next_resend).filter(|r| r.at <= i) {
                next_resend += 1;
                Self::start_resend(&mut self.conns, &mut self.resending, r);
            }
            if let Some(c) = self.conns.get_mut(&item.conn) {
                let bytes = &self.out.buf[item.start..item.end];
                if let (Some(ix), Some(log), false) =
                    (c.msglog, self.msglog.as_mut(), bytes.is_empty())
                {
                    log.push(ix, false, self.last_ts, bytes);
                }
                if c.resend.is_some() {
                    c.held.extend_from_slice(bytes);
                } else {
                    c.wbuf.extend_from_slice(bytes);
                }
                if item.close {
                    // The session ended: what its resend had left is not sent.
                    c.closing = true;
                    if c.resend.take().is_some() {
                        c.wbuf.extend_from_slice(&c.held);
                        c.held.clear();
                    }
                }
                if self.touched.last() != Some(&item.conn) {
                    self.touched.push(item.conn);
                }
            }
        }
        for r in &self.out.resends[next_resend..] {
            Self::start_resend(&mut self.conns, &mut self.resending, r);
        }
        self.out.clear();
        if let Some(log) = self.msglog.as_mut() {
            log.flush();
        }
        self.touched.sort_unstable();
        self.touched.dedup();
        for i in 0..self.touched.len() {
            let id = self.touched[i];
            self.flush(id);
        }
    }

    /// A ResendRequest to serve in pieces (`serve_resends`): a newer one of the same
    /// connection replaces the one in progress, with a range that also covers what that one
    /// had left. The output held behind the old one was numbered before the new request:
    /// the messages the new range covers leave `held` (sent after the resend they would
    /// arrive below the sequence number the client then expects) and are resent with it, the
    /// range starting no later than the first of them, so no number is skipped.
    fn start_resend(
        conns: &mut HashMap<ConnId, Conn, foldhash::fast::RandomState>,
        resending: &mut Vec<ConnId>,
        r: &fix_gateway::DeferredResend,
    ) {
        if let Some(c) = conns.get_mut(&r.conn) {
            if c.closing {
                return;
            }
            let (mut begin, mut end) = (r.begin, r.end);
            match c.resend {
                None => resending.push(r.conn),
                Some((from, old_end)) => {
                    begin = begin.min(from);
                    end = end.max(old_end);
                    if let Some(first) = drop_held_through(&mut c.held, end) {
                        begin = begin.min(first);
                    }
                }
            }
            c.resend = Some((begin, end));
        }
    }

    /// Serves a piece of each ResendRequest in progress whose connection has taken what it
    /// was sent: at most `budget` sequence numbers in all this iteration, shared; a resend
    /// done releases the output that waited behind it.
    fn serve_resends(&mut self) {
        if self.resending.is_empty() {
            return;
        }
        let span = (self.budget / self.resending.len()).clamp(16, RESEND_PIECE) as u64;
        let mut i = 0;
        while i < self.resending.len() {
            let id = self.resending[i];
            let Some(c) = self.conns.get_mut(&id) else {
                self.resending.swap_remove(i);
                continue;
            };
            let Some((from, end)) = c.resend else {
                self.resending.swap_remove(i);
                continue;
            };
            if c.wbuf.len() >= RESEND_LOW {
                // It has not read the last piece yet.
                i += 1;
                continue;
            }
            self.piece.clear();
            let next =
                self.node
                    .fix
                    .resend_piece(id, from, end, span, self.last_ts, &mut self.piece);
            for item in &self.piece.items {
                c.wbuf
                    .extend_from_slice(&self.piece.buf[item.start..item.end]);
            }
            match next {
                Some(n) if n <= end => {
                    c.resend = Some((n, end));
                    i += 1;
                }
                _ => {
                    c.resend = None;
                    c.wbuf.extend_from_slice(&c.held);
                    c.held.clear();
                    if c.held.capacity() > KEEP_BUF {
                        c.held = Vec::new();
                    }
                    self.resending.swap_remove(i);
                }
            }
            self.flush(id);
        }
        if self.piece.buf.capacity() > KEEP_BUF {
            self.piece = Outbox::default();
        }
    }

    /// A mass cancel has chunks left and its requester has taken its last reports (or is
    /// gone).
    fn continue_ready(&self) -> bool {
        self.node.has_pending_work()
            && self
                .node
                .pending_work_conn()
                .and_then(|id| self.conns.get(&id))
                .is_none_or(|c| c.wbuf.len() < CONTINUE_LOW)
    }

    /// A resend waits for the connection to take its next piece.
    fn resend_ready(&self) -> bool {
        self.resending.iter().any(|id| {
            self.conns
                .get(id)
                .is_some_and(|c| c.wbuf.len() < RESEND_LOW)
        })
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((stream, peer)) => {
                    if let Some(why) = self.refusal() {
                        // Closed at once: the client sees the connection end, not a hang.
                        let _ = stream.shutdown(std::net::Shutdown::Both);
                        drop(stream);
                        self.counters
                            .refused_connections
                            .fetch_add(1, Ordering::Relaxed);
                        self.refused_log += 1;
                        if self.refused_log == 1 {
                            tracing::warn!(reason = why, "connection refused");
                        }
                        continue;
                    }
                    let id = self.next_conn;
                    self.next_conn += 1;
                    let _ = stream.set_nodelay(true);
                    let Ok(mut stream) = Transport::new(stream, self.tls.as_ref()) else {
                        continue;
                    };
                    if self
                        .poll
                        .registry()
                        .register(&mut stream, Token(id as usize), Interest::READABLE)
                        .is_err()
                    {
                        continue;
                    }
                    self.counters.connections.fetch_add(1, Ordering::Relaxed);
                    self.pending_logons += 1;
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
                            msglog: None,
                            garbled: GarbledLog::default(),
                            accepted: Instant::now(),
                            session: None,
                            journaled: false,
                            evicted: None,
                            resend: None,
                            held: Vec::new(),
                            peer: peer.ip(),
                            auth_wait: false,
                            auth_resume: false,
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

    /// Why a new connection is refused now, if it is: too many open, or too many that have
    /// not logged on (one connection per configured order-entry session is kept free for
    /// sessions to log on, up to half of `max_connections`).
    fn refusal(&self) -> Option<&'static str> {
        let max = self.cfg.max_connections;
        if self.conns.len() >= max {
            return Some("max_connections reached");
        }
        let headroom = self.order_sessions().min(max / 2);
        if self.pending_logons >= max - headroom {
            return Some("too many connections that have not logged on");
        }
        None
    }

    fn order_sessions(&self) -> usize {
        self.cfg
            .sessions
            .iter()
            .filter(|s| s.market_data != crate::config::MarketDataAccess::Only)
            .count()
    }

    /// Reads every connection with data waiting (in connection order), until its socket would
    /// block or `READ_CHUNK` bytes, and queues the complete messages.
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

    /// Moves every waiting record into the batch (a clean stop applies what was read).
    fn drain_all(&mut self) {
        while let Some(id) = self.rr.pop_front() {
            if let Some(q) = self.inq.get_mut(&id) {
                self.batch.extend(q.recs.drain(..));
                if let Some(f) = q.firm {
                    self.firm_waiting[f as usize] -= q.apps;
                }
                q.apps = 0;
            }
        }
        self.inq.retain(|_, q| !q.closed);
    }

    /// Fills this iteration's batch from the connections' queues, round-robin, up to the
    /// budget: each connection with records waiting gets an equal share of what is left, in
    /// turn; one that had its share moves to the back of the ring, so the next iteration
    /// starts with the others.
    fn fill(&mut self) {
        while self.apps < self.budget && !self.rr.is_empty() {
            let share = ((self.budget - self.apps) / self.rr.len()).max(1);
            for _ in 0..self.rr.len() {
                if self.apps >= self.budget {
                    return;
                }
                let Some(id) = self.rr.pop_front() else {
                    return;
                };
                let Some(q) = self.inq.get_mut(&id) else {
                    continue;
                };
                let mut took = 0;
                while took < share && self.apps < self.budget {
                    let Some(r) = q.recs.pop_front() else {
                        break;
                    };
                    if r.is_application() {
                        q.apps -= 1;
                        if let Some(f) = q.firm {
                            self.firm_waiting[f as usize] -= 1;
                        }
                    }
                    self.batch.push(r);
                    took += 1;
                    self.apps += 1;
                }
                if !q.recs.is_empty() {
                    self.rr.push_back(id);
                } else if q.closed {
                    self.inq.remove(&id);
                } else if q.recs.capacity() > 4096 {
                    q.recs.shrink_to(64);
                }
            }
        }
    }

    /// Queues record `r` of connection `id`, behind its earlier ones.
    #[inline]
    fn enqueue(
        inq: &mut HashMap<ConnId, InQueue, foldhash::fast::RandomState>,
        rr: &mut VecDeque<ConnId>,
        id: ConnId,
        r: Record,
    ) {
        let q = inq.entry(id).or_default();
        if q.recs.is_empty() {
            rr.push_back(id);
        }
        q.recs.push_back(r);
    }

    fn read(&mut self, id: ConnId) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        c.more = false;
        if c.closing || c.evicted.is_some() || c.auth_wait {
            return;
        }
        let resume = std::mem::take(&mut c.auth_resume) && !c.rbuf.is_empty();
        if resume && self.parse(id, 0) {
            // What waited behind the Logon is not FIX.
            self.drop_conn(id, true);
            return;
        }
        // A queue this long is not read until it drains: what is unread waits in the kernel.
        let hard = 2 * self.cfg.session_queue_max + 64;
        if self.inq.get(&id).is_some_and(|q| q.recs.len() >= hard) {
            if let Some(c) = self.conns.get_mut(&id) {
                c.more = true;
            }
            return;
        }
        let mut closed = false;
        let mut total = 0;
        // Until the socket would block, so that a FIN that came with the data is seen now;
        // at most READ_CHUNK bytes an iteration, so that others get their turn.
        while total < READ_CHUNK {
            let Some(c) = self.conns.get_mut(&id) else {
                return;
            };
            if c.evicted.is_some() || c.auth_wait {
                break;
            }
            let room = READ_CHUNK - total;
            let n = match c.stream.read(&mut self.scratch[..room]) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    closed = true;
                    break;
                }
            };
            total += n;
            if total == READ_CHUNK {
                // More may be waiting: come back next iteration.
                c.more = true;
            }
            if self.parse(id, n) {
                closed = true;
                break;
            }
        }
        if closed {
            self.drop_conn(id, true);
        }
    }

    /// Frames and queues the messages in `scratch[..n]` just read from connection `id`
    /// (after any partial message it had). True: the input is not FIX and the connection must
    /// be closed.
    fn parse(&mut self, id: ConnId, n: usize) -> bool {
        let Some(c) = self.conns.get_mut(&id) else {
            return false;
        };
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
        while pos < data.len() {
            let rest = &data[pos..];
            let len = match frame(rest, Limits::default().msg_len_max) {
                Ok(None) => break,
                // Garbled (not FIX, or a wrong BodyLength or CheckSum): skipped, as the
                // session layer requires.
                Err(e) => {
                    let skip = resync(rest).max(1);
                    c.garbled.note(id, c.ids.as_ref(), e.as_str(), skip);
                    pos += skip;
                    continue;
                }
                Ok(Some(len)) => len,
            };
            let msg = &rest[..len];
            pos += len;
            if c.evicted.is_some() {
                // Logged out: what follows is not read.
                continue;
            }
            let first = c.ids.is_none();
            let input = self
                .adapter
                .to_input(id, &mut c.ids, &mut self.decoder, msg);
            if let (true, Some(ids)) = (first, &c.ids) {
                // A Logon: with client certificates, its SenderCompID must be one the
                // connection's certificate names; if not, it is not journaled and the
                // connection closes without a Logout, as for a failed authentication.
                if let Err(why) =
                    c.stream
                        .authorize(&self.cfg, ids.sender.as_bytes(), ids.target.as_bytes())
                {
                    tracing::warn!(conn = id, reason = %why, "TLS: Logon refused, connection closed");
                    return true;
                }
            }
            if first {
                if let Some(ids) = &c.ids {
                    let ix = self
                        .adapter
                        .config()
                        .find_session(ids.sender.as_bytes(), ids.target.as_bytes());
                    if let Some(ix) = ix {
                        let firm = self.adapter.config().sessions[ix].firm;
                        c.session = Some((ix as u32, u32::from(firm)));
                    }
                    self.pending_logons = self.pending_logons.saturating_sub(1);
                    if let Some(log) = self.msglog.as_ref() {
                        c.msglog = ix.filter(|&ix| log.logs(ix)).map(|ix| ix as u32);
                    }
                }
            }
            if let (Some(log), Some(ix)) = (self.msglog.as_mut(), c.msglog) {
                log.push(ix, true, self.last_ts, &crate::auth::redacted(msg));
            }
            let Some(input) = input else {
                c.garbled
                    .note(id, c.ids.as_ref(), "fields do not decode", msg.len());
                continue;
            };
            c.journaled = true;
            // A Logon to check goes to the `auth` thread; the rest waits in `rbuf`.
            let Some(mut input) = self.auth.route(id, c.peer, input) else {
                c.auth_wait = true;
                break;
            };
            // The session's throttle (once it has named one: a Logon is never throttled).
            if let (Some((ix, firm)), false) = (c.session, first) {
                let why = match self.guards[ix as usize].check(class_of(&input.msg), self.now) {
                    Verdict::Pass => None,
                    Verdict::Orders(n) => Some(BusyWhy::Orders(n)),
                    Verdict::Cancels(n) => Some(BusyWhy::Cancels(n)),
                    Verdict::Messages(n) => Some(BusyWhy::Messages(n)),
                    Verdict::Logout(per_sec) => {
                        c.evicted = Some(Instant::now());
                        tracing::warn!(
                            conn = id,
                            client = %ids_name(c.ids.as_ref()),
                            per_sec,
                            "over the logout throttle: logged out"
                        );
                        let why = Evict::Throttle { per_sec };
                        let r = Record::Evict { conn: id, why };
                        Self::enqueue(&mut self.inq, &mut self.rr, id, r);
                        continue;
                    }
                };
                if let Some(why) = why {
                    if input.is_application() {
                        self.throttled_unlogged += 1;
                        input = self.adapter.refuse(input, why);
                    }
                } else if input.is_application() {
                    // Per-session and per-firm waiting bounds: beyond them, shed.
                    let q = self.inq.entry(id).or_default();
                    if q.apps >= self.cfg.session_queue_max
                        || self.firm_waiting[firm as usize] >= self.cfg.firm_queue_max
                    {
                        input = self.adapter.shed(input);
                        self.shed_unlogged += 1;
                    } else {
                        q.apps += 1;
                        q.firm = Some(firm);
                        self.firm_waiting[firm as usize] += 1;
                    }
                }
            }
            Self::enqueue(&mut self.inq, &mut self.rr, id, Record::Fix(input));
        }
        if from_rbuf {
            c.rbuf.drain(..pos);
        } else if pos < n {
            c.rbuf.extend_from_slice(&self.scratch[pos..n]);
        }
        if c.rbuf.is_empty() && c.rbuf.capacity() > KEEP_BUF {
            c.rbuf = Vec::new();
        }
        if c.rbuf.len() >= READ_BUF_MAX {
            // A "message" longer than any valid one: not FIX.
            tracing::warn!(
                conn = id,
                bytes = c.rbuf.len(),
                "input is not FIX: connection closed"
            );
            return true;
        }
        false
    }

    /// The `auth` thread's verdicts: each Logon joins its connection's queue, and the
    /// connection is read again.
    fn take_verdicts(&mut self) {
        while let Some((id, input)) = self.auth.take_verdict() {
            let Some(c) = self.conns.get_mut(&id) else {
                continue;
            };
            c.auth_wait = false;
            c.auth_resume = true;
            c.more = true;
            Self::enqueue(&mut self.inq, &mut self.rr, id, Record::Fix(input));
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
        // TLS: ciphertext of earlier writes (or the handshake) the socket did not take.
        if !failed {
            if let Err(e) = c.stream.flush() {
                failed = e.kind() != io::ErrorKind::WouldBlock;
            }
        }
        if written == c.wbuf.len() {
            c.wbuf.clear();
            if c.wbuf.capacity() > KEEP_BUF {
                // A burst is over: its memory goes back.
                c.wbuf = Vec::with_capacity(4096);
            }
        } else {
            c.wbuf.drain(..written);
        }
        let limit = self.cfg.outbound_queue_bytes;
        if c.wbuf.len() > limit && c.evicted.is_none() && !c.closing {
            // Logged out with a reason; closed if it does not read that in time.
            let unread = c.wbuf.len() as u64;
            tracing::warn!(conn = id, unread, "slow consumer: logged out");
            c.evicted = Some(Instant::now());
            Self::enqueue(
                &mut self.inq,
                &mut self.rr,
                id,
                Record::Evict {
                    conn: id,
                    why: Evict::SlowConsumer { unread },
                },
            );
        }
        // An evicted connection gets no output once its Evict is applied (the session is
        // unbound), and what comes before is bounded by its queue: it keeps its buffer until
        // it reads its Logout or `EVICT_GRACE` ends.
        if failed {
            self.drop_conn(id, true);
            return;
        }
        if c.closing && c.wbuf.is_empty() && !c.stream.wants_write() {
            // The edge already unbound it: no Disconnected record.
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

    /// Once a second: closes the connections that did not log on in time, and the ones
    /// logged out by the loop that did not read their Logout in time; logs refused
    /// connections.
    fn close_overdue(&mut self, now: Instant) {
        let timeout = Duration::from_secs(self.cfg.logon_timeout_secs);
        self.ready.clear();
        for (id, c) in &self.conns {
            let late_logon = c.ids.is_none() && now.duration_since(c.accepted) >= timeout;
            let late_evict = c
                .evicted
                .is_some_and(|t| now.duration_since(t) >= EVICT_GRACE);
            if late_logon || late_evict {
                self.ready.push(*id);
            }
        }
        let n = self.ready.len();
        for i in 0..n {
            let id = self.ready[i];
            let journaled = self.conns.get(&id).is_some_and(|c| c.journaled);
            self.drop_conn(id, journaled);
        }
        if n > 0 {
            tracing::info!(
                closed = n,
                "connections closed: no Logon in time, or output unread"
            );
        }
        if self.refused_log > 1 {
            tracing::warn!(
                refused = self.refused_log - 1,
                "more connections refused in the last second"
            );
        }
        self.refused_log = 0;
    }

    /// Closes a connection. With `notify` (the peer or the server's I/O ended it, not the
    /// edge), a `Disconnected` record follows the connection's last message.
    fn drop_conn(&mut self, id: ConnId, notify: bool) {
        if let Some(mut c) = self.conns.remove(&id) {
            let _ = self.poll.registry().deregister(&mut c.stream);
            let _ = c.stream.shutdown(std::net::Shutdown::Both);
            if c.ids.is_none() {
                self.pending_logons = self.pending_logons.saturating_sub(1);
            }
            let waiting = self.inq.get(&id).is_some_and(|q| !q.recs.is_empty());
            if notify && !c.closing {
                Self::enqueue(
                    &mut self.inq,
                    &mut self.rr,
                    id,
                    Record::Disconnected { conn: id },
                );
                if let Some(q) = self.inq.get_mut(&id) {
                    q.closed = true;
                }
            } else if waiting {
                if let Some(q) = self.inq.get_mut(&id) {
                    q.closed = true;
                }
            } else {
                self.inq.remove(&id);
            }
        }
    }

    /// After the Shutdown input: lets the Logouts leave (up to `SHUTDOWN_FLUSH`), then closes
    /// every connection.
    fn close_all(&mut self) {
        let deadline = Instant::now() + SHUTDOWN_FLUSH;
        let mut events = Events::with_capacity(256);
        while self
            .conns
            .values()
            .any(|c| !c.wbuf.is_empty() || c.stream.wants_write())
            && Instant::now() < deadline
        {
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

/// The first record number after `seq` at which a checkpoint is due, every `every` records
/// (0: never).
pub(crate) fn next_checkpoint(every: u64, seq: u64) -> u64 {
    seq.checked_div(every)
        .map_or(u64::MAX, |n| (n + 1).saturating_mul(every))
}

/// A connection's SenderCompID for a log line ("-" before its Logon).
fn ids_name(ids: Option<&ConnIds>) -> String {
    ids.map_or_else(|| "-".to_string(), |i| i.sender.to_str_lossy().into_owned())
}

/// What limit a message counts against besides its session's message limit.
#[inline]
fn class_of(m: &Inbound<AppMsg>) -> Class {
    match m {
        Inbound::App(AppMsg::New(_) | AppMsg::Replace(_)) => Class::Order,
        Inbound::App(AppMsg::Cancel { .. } | AppMsg::MassCancel { .. }) => Class::Cancel,
        Inbound::App(_) => Class::OtherApp,
        _ => Class::Session,
    }
}

/// A short name of a record's kind.
fn kind(r: &Record) -> &'static str {
    match r {
        Record::Startup => "startup",
        Record::Tick => "tick",
        Record::Shutdown => "shutdown",
        Record::Checkpoint(_) => "checkpoint",
        Record::Continue => "continue",
        Record::Disconnected { .. } => "disconnect",
        Record::Evict { .. } => "evict",
        Record::Fix(f) => match &f.msg {
            Inbound::Logon(_) => "logon",
            Inbound::Heartbeat { .. } => "heartbeat",
            Inbound::TestRequest { .. } => "test-request",
            Inbound::ResendRequest { .. } => "resend-request",
            Inbound::SequenceReset { .. } => "sequence-reset",
            Inbound::Logout { .. } => "logout",
            Inbound::Reject { .. } => "session-reject",
            Inbound::Malformed(_) => "malformed",
            Inbound::App(AppMsg::New(_)) => "new",
            Inbound::App(AppMsg::Cancel { .. }) => "cancel",
            Inbound::App(AppMsg::Replace(_)) => "replace",
            Inbound::App(AppMsg::MassCancel { .. }) => "mass-cancel",
            Inbound::App(AppMsg::Status { .. }) => "status",
            Inbound::App(AppMsg::TradingStatus { .. }) => "trading-status",
            Inbound::App(AppMsg::Busy(_)) => "busy",
            Inbound::App(AppMsg::Invalid(_)) => "invalid",
        },
    }
}

/// Takes the messages numbered up to `end` off the front of `held` (whole FIX messages in
/// sequence order); returns the MsgSeqNum of the first one taken, if any. Stops at anything
/// it cannot read, keeping it.
fn drop_held_through(held: &mut Vec<u8>, end: u64) -> Option<u64> {
    let mut at = 0;
    let mut first = None;
    while let Ok(Some(len)) = frame(&held[at..], usize::MAX) {
        match fix::scan_msg_seq_num(&held[at..at + len]) {
            Some(seq) if seq <= end => {
                first.get_or_insert(seq);
                at += len;
            }
            _ => break,
        }
    }
    held.drain(..at);
    first
}

#[cfg(test)]
mod tests {
    use super::*;

    fn heartbeat(seq: u64) -> Vec<u8> {
        let mut enc = fix::Encoder::default();
        enc.begin(b"0");
        enc.header(&fix::Header {
            sender_comp_id: b"RIALTO",
            target_comp_id: b"CLIENT1",
            msg_seq_num: seq,
            sending_time_ns: 0,
            poss_dup: false,
            orig_sending_time: None,
            time_precision: fix::TimePrecision::Millis,
        });
        enc.finish(fix::FixVersion::Fix44).to_vec()
    }

    #[test]
    fn held_messages_a_newer_resend_covers_are_taken_out() {
        let held_of =
            |seqs: &[u64]| -> Vec<u8> { seqs.iter().flat_map(|&s| heartbeat(s)).collect() };
        let mut held = held_of(&[7, 8, 9]);
        assert_eq!(drop_held_through(&mut held, 6), None);
        assert_eq!(held, held_of(&[7, 8, 9]));
        assert_eq!(drop_held_through(&mut held, 8), Some(7));
        assert_eq!(held, held_of(&[9]));
        assert_eq!(drop_held_through(&mut held, 100), Some(9));
        assert!(held.is_empty());
        assert_eq!(drop_held_through(&mut held, 100), None);
        // Anything unreadable stays, with what follows it.
        let mut odd = b"garbage".to_vec();
        odd.extend(heartbeat(3));
        assert_eq!(drop_held_through(&mut odd, 100), None);
        assert_eq!(odd.len(), 7 + heartbeat(3).len());
    }
}
