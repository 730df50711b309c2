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
//! Layout, one module per part of an iteration: `connections` (the FIX connections: accept,
//! read, frame and admit, write, close), `queues` (records waiting, and the round-robin fill of
//! the batch), `sequence` (sequence, prefetch, journal: the batch made durable), `publish`
//! (apply, then the output to the connections; resends and mass cancel chunks paced on it),
//! `timers` (once a second, snapshots, the summary at stop). Another edge would add its I/O
//! beside `connections`, its waiting requests as a source `queues` fills the batch from, and
//! the delivery of its outputs to `publish`.
//!
//! Invariants: no byte of a message caused by record `n` reaches a socket before record `n` is
//! durable in the configured sense (the outbox is written only after `commit` returned);
//! records are applied in journal order exactly once; a connection that closes (or is closed
//! as a slow consumer) yields exactly one `Disconnected` record after its last message.

use crate::config::{Config, Idle};
use crate::counters::{now_ns, Counters, Logger};
use crate::error::ServerError;
use crate::node::Node;
use crate::record::Record;
use crate::snapshots::SnapshotJob;
use crate::throttle::Guard;
use crate::watch::{IterTimes, LoopWatch};
use crossbeam_channel::Sender;
use exchange::ClHashes;
use fix::{Decoder, Inbound};
use fix_gateway::{AppMsg, ConnId, FixAdapter, Outbox};
use journal::Log;
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};
use std::collections::{HashMap, VecDeque};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A write buffer (or a queue) this large is given back once it is empty.
const KEEP_BUF: usize = 1 << 20;
/// Bytes read per connection per iteration before others get a turn.
pub(crate) const READ_CHUNK: usize = 64 << 10;
pub(crate) const LISTENER: Token = Token(0);
pub(crate) const WAKER: Token = Token(1);
const TICK: Duration = Duration::from_secs(1);

mod api;
mod cluster;
mod connections;
mod publish;
mod queues;
mod sequence;
mod timers;

pub(crate) use api::ApiLink;
pub(crate) use cluster::ClusterLink;
pub use cluster::{GatewayPorts, Incoming, StartGateway};
pub(crate) use connections::raise_fd_limit;
use connections::Conn;
pub(crate) use queues::guards_of;
use queues::InQueue;
pub(crate) use sequence::next_checkpoint;

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
    /// The REST API's requests and the answers they wait for (`None`: no HTTP).
    pub(crate) api: Option<ApiLink>,
    /// Cluster mode, on a gateway: the link to the engines (`None`: single node).
    pub(crate) cluster: Option<ClusterLink>,
    /// The per-session message log (`None`: no session has one).
    pub(crate) msglog: Option<crate::message_log::MessageLogSink>,
    /// Application messages shed since the last tick's log line.
    pub(crate) shed_unlogged: u64,
    /// Application messages throttled since the last tick's log line.
    pub(crate) throttled_unlogged: u64,
}

impl<L: Log> EventLoop<L> {
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
                || self.api.as_ref().is_some_and(|a| !a.queue.is_empty())
                || self.cluster.as_ref().is_some_and(|c| c.more)
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
                    self.take_api(usize::MAX);
                    self.batch.push(Record::Shutdown);
                    shutdown_sent = true;
                }
            } else {
                self.now = now_ns();
                self.read_ready();
                if t0 >= next_tick {
                    next_tick = t0 + TICK;
                    self.tick(t0)?;
                }
                self.fill();
                self.take_api(self.budget);
                self.take_outcomes(self.budget);
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
            self.counters.iterations.record(took);
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
        self.counters.commits.record(commit_ns);
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
        let stats = self.node.exchange.stats;
        self.counters.orders.store(stats.orders, Ordering::Relaxed);
        self.counters
            .reports
            .store(stats.reports, Ordering::Relaxed);
        self.counters.trades.store(stats.trades, Ordering::Relaxed);
        self.counters
            .api_orders
            .store(self.node.api.orders, Ordering::Relaxed);
        self.publish();
        self.answer_api();
        self.send_commands();
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
}

/// A short name of a record's kind.
fn kind(r: &Record) -> &'static str {
    match r {
        Record::Startup => "startup",
        Record::Tick => "tick",
        Record::Shutdown => "shutdown",
        Record::Checkpoint(_) => "checkpoint",
        Record::Continue => "continue",
        Record::Outcome { .. } => "outcome",
        Record::Disconnected { .. } => "disconnect",
        Record::Evict { .. } => "evict",
        Record::Api(a) => match a.op {
            http_gateway::ApiOp::New(_) => "api-new",
            http_gateway::ApiOp::Cancel(_) => "api-cancel",
            http_gateway::ApiOp::Replace { .. } => "api-replace",
            http_gateway::ApiOp::CancelAll { .. } => "api-cancel-all",
            http_gateway::ApiOp::Get(_) | http_gateway::ApiOp::ListOpen { .. } => "api-query",
            http_gateway::ApiOp::Admin { .. } => "admin",
            http_gateway::ApiOp::AdminState => "admin-state",
        },
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
