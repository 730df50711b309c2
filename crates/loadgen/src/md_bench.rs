//! `rialto bench md`: the order mix at a fixed rate with 0, 10, 50 ... market-data
//! subscribers, in one run: how long after an order's ExecutionReport its trade reaches each
//! subscriber, and what the subscribers cost order entry.
//!
//! Role: the market-data benchmark as a library call (the binary is a thin wrapper; a test
//! runs it with tiny parameters). The bots are `bench fix`'s; the subscribers run on one thread
//! of their own, all subscribed to every instrument before the bots start, over one of two
//! [`Transport`]s: FIX market data ([`MdClient`]s: full depth, trades), or the REST API's
//! WebSocket `/ws` ([`WsSubscriber`]s: `book` and `trades`). Both give one [`TradeStamp`] per
//! trade and subscriber; the rounds, the matching and the tables are the same.
//!
//! How a trade is matched to its ExecutionReport: Rialto's ExecID is `<journal record>.<n>`
//! and a trade's two fills (maker, then taker) are consecutive reports of its record, so the
//! bots' fills sorted by ExecID pair up as the trades in the engine's order, whose trade ids
//! are consecutive. The k-th pair is trade `first + k`, `first` the lowest trade id the
//! subscribers read (they were subscribed, with their snapshots, before the bots started).
//! Two latencies per trade and subscriber: *update*, the time the subscriber read the first
//! message that reflects the trade (FIX: the trade's entry; WebSocket: see `ws_md`) less the
//! time the bots read the taker's fill (the later of the two; both read in this process, on
//! one clock), what a reader on one thread sees; and *arrival*, the kernel's receive time of
//! that message at the subscriber's socket less that of the fill at the bot's (`rx`, one
//! kernel clock), what the exchange takes whatever the readers' backlog (a read's stamp is its
//! last segment's, so a message read together with later ones is stamped late).
//!
//! Never: prints to stdout (results are returned); binds anything.

use crate::bench::{on_placed_thread, run_fix_observed, FixBench, Progress};
use crate::driver::{Observer, View};
use crate::md::{MdClient, TradeStamp};
use crate::mix::Market;
use crate::stats::{at, us, RunResult};
use crate::ws_md::WsSubscriber;
use fix::scan::Report;
use hdrhistogram::Histogram;
use mio::{Events, Interest, Poll, Registry, Token};
use std::io::{self, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `rialto bench md` settings.
#[derive(Clone, Debug)]
pub struct MdBench {
    /// The bots (their count, rate, mix, duration, placement).
    pub fix: FixBench,
    /// Where and how the subscribers read the market.
    pub transport: Transport,
    /// Subscriber counts, each run once per round, in this order.
    pub subscribers: Vec<usize>,
    /// Rounds (the counts interleaved: 0, 10, 50, 0, 10, 50, ...).
    pub rounds: usize,
}

/// How the subscribers read the market.
#[derive(Clone, Debug)]
pub enum Transport {
    /// FIX market data at `addr` (the exchange's market-data port), logged on as
    /// `<sender_prefix>1..<sender_prefix>N` (default `MD`).
    Fix {
        addr: SocketAddr,
        sender_prefix: String,
    },
    /// The WebSocket `/ws` of the REST API at `addr`, channels `book` and `trades`.
    Ws { addr: SocketAddr },
}

impl Transport {
    /// `fix` or `ws`.
    pub fn name(&self) -> &'static str {
        match self {
            Transport::Fix { .. } => "fix",
            Transport::Ws { .. } => "ws",
        }
    }

    pub fn addr(&self) -> SocketAddr {
        match self {
            Transport::Fix { addr, .. } | Transport::Ws { addr } => *addr,
        }
    }
}

/// One run: `subscribers` subscribers during one `bench fix` run.
pub struct MdRun {
    pub subscribers: usize,
    pub round: usize,
    pub orders: RunResult,
    /// ExecutionReport -> market-data entry (ns), every subscriber's every matched trade:
    /// from the bots reading the taker's fill to a subscriber reading the entry.
    pub update_latency: Histogram<u64>,
    /// The same from arrival to arrival: the kernel's receive time of the fill at the bot's
    /// socket to that of the entry at the subscriber's (what the exchange takes, whatever the
    /// readers' backlog).
    pub arrival_latency: Histogram<u64>,
    /// Trades the bots saw (fill pairs).
    pub trades: u64,
    /// Trade entries the subscribers read, all together.
    pub entries_read: u64,
    /// Trade entries matched to a fill pair with the same price and quantity.
    pub matched: u64,
    /// Trade entries whose fill pair by position said another price or quantity (not timed).
    pub mismatched: u64,
    /// Messages the subscribers could not decode.
    pub undecodable: u64,
    /// Fresh snapshots the subscribers got after their first (conflation: they fell behind).
    pub conflations: u64,
    /// Messages the subscribers read, all together.
    pub md_messages: u64,
    /// Subscribers the exchange logged out or disconnected.
    pub dropped: usize,
    /// Why the first of them was dropped.
    pub dropped_why: Option<String>,
    /// Subscribers that got every instrument's first snapshot (all of them, or the run fails).
    pub synced: usize,
}

/// The bots' fills with the time they were read and arrived.
struct Fills {
    base: Instant,
    fills: Vec<Fill>,
}

/// One fill as the bots got it (sorted: by journal record, then report).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Fill {
    /// The journal record and the report's number in it (its ExecID).
    seq: u64,
    n: u32,
    /// Read, ns since `Fills::base`; arrived, the kernel's stamp (wall ns, 0: none).
    read_ns: u64,
    arrived_ns: u64,
    /// LastPx in units of 10^-9, LastQty.
    price: i64,
    qty: u64,
}

impl Observer for Fills {
    fn on_report_at(&mut self, _bot: usize, r: &Report<'_>, arrived: Option<u64>) {
        if !r.is_fill() {
            return;
        }
        let t = self.base.elapsed().as_nanos() as u64;
        let id = std::str::from_utf8(r.exec_id).unwrap_or("");
        let price = r
            .last_px
            .and_then(|p| p.to_units(fix::md::VIEW_PRICE_DECIMALS).ok())
            .unwrap_or(i64::MAX);
        if let Some((seq, n)) = id.split_once('.') {
            if let (Ok(seq), Ok(n)) = (seq.parse(), n.parse()) {
                self.fills.push(Fill {
                    seq,
                    n,
                    read_ns: t,
                    arrived_ns: arrived.unwrap_or(0),
                    price,
                    qty: r.last_qty.unwrap_or(0),
                });
            }
        }
    }
}

/// Progress lines and fills together.
struct Both<'a, 'w> {
    fills: &'a mut Fills,
    progress: Progress<'w>,
}

impl Observer for Both<'_, '_> {
    fn on_report_at(&mut self, bot: usize, r: &Report<'_>, arrived: Option<u64>) {
        self.fills.on_report_at(bot, r, arrived);
    }
    fn on_second(&mut self, v: &View<'_>, m: &mut Market) {
        self.progress.on_second(v, m);
    }
}

/// Runs every count of every round; progress to `progress`.
pub fn run_md(b: &MdBench, progress: &mut (dyn Write + Send)) -> Result<Vec<MdRun>, String> {
    b.fix.mix.validate()?;
    if b.rounds == 0 || b.subscribers.is_empty() {
        return Err("give at least one round and one subscriber count".into());
    }
    let mut runs = Vec::new();
    for round in 1..=b.rounds {
        for &n in &b.subscribers {
            if b.fix.stop.load(Ordering::Relaxed) {
                return Ok(runs);
            }
            let _ = writeln!(progress, "bench md: round {round}, {n} subscribers");
            runs.push(run_one(b, n, round, progress)?);
        }
    }
    Ok(runs)
}

fn run_one(
    b: &MdBench,
    n: usize,
    round: usize,
    progress: &mut (dyn Write + Send),
) -> Result<MdRun, String> {
    let base = Instant::now();
    let stop_subs = Arc::new(AtomicBool::new(false));
    let symbols: Vec<String> = Market::default_contract()
        .symbols
        .iter()
        .map(|s| s.name.clone())
        .collect();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel::<Result<(), String>>();
    let subs = {
        let stop = stop_subs.clone();
        let set = Subscribers {
            transport: b.transport.clone(),
            target: b.fix.target_comp_id.clone(),
            n,
            symbols,
            base,
        };
        std::thread::Builder::new()
            .name("md-subscribers".into())
            .spawn(move || {
                let r = subscribe_and_read(&set, &stop, &ready_tx);
                if let Err(e) = &r {
                    // Unread once the run has started (the bots' side listens only until then).
                    let _ = ready_tx.send(Err(e.clone()));
                }
                r
            })
            .map_err(|e| format!("cannot start the subscribers' thread: {e}"))?
    };
    match ready_rx.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(e),
        Err(_) => return Err("the subscribers' thread ended".into()),
    }
    let mut fills = Fills {
        base,
        fills: Vec::with_capacity(1 << 20),
    };
    let orders = on_placed_thread(b.fix.cpu, b.fix.nice, || {
        run_bots(&b.fix, &mut fills, &mut *progress)
    });
    // The last trades' messages are on their way: the subscribers read until quiet.
    stop_subs.store(true, Ordering::Release);
    let reads = subs
        .join()
        .map_err(|_| "the subscribers' thread panicked".to_string())??;
    let orders = orders?;
    let mut f = fills.fills;
    f.sort_unstable();
    let trades = f.len() as u64 / 2;
    // Per trade in the engine's order: the later read and arrival times of its two fills (the
    // taker's), and the price and quantity both fills say.
    let pairs: Vec<(u64, u64, i64, u64)> = f
        .chunks_exact(2)
        .map(|p| {
            let arrived = if p[0].arrived_ns == 0 || p[1].arrived_ns == 0 {
                0
            } else {
                p[0].arrived_ns.max(p[1].arrived_ns)
            };
            (
                p[0].read_ns.max(p[1].read_ns),
                arrived,
                p[1].price,
                p[1].qty,
            )
        })
        .collect();
    // The subscribers had their snapshots before the bots started: the first trade any of
    // them read is the bots' first pair (checked: each match compares price and quantity).
    let first = reads.iter().filter_map(|r| r.first_trade).min();
    let hist = || Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds");
    let mut update_latency = hist();
    let mut arrival_latency = hist();
    let (mut entries_read, mut matched, mut mismatched) = (0u64, 0u64, 0u64);
    for s in reads.iter().flat_map(|r| &r.stamps) {
        entries_read += 1;
        let Some(k) = first.and_then(|f| s.id.checked_sub(f)) else {
            continue;
        };
        let Some(&(er, er_arrived, price, qty)) = pairs.get(k as usize) else {
            continue;
        };
        // A pairing shifted by a lost fill says so here instead of timing the wrong trade.
        if (price, qty) != (s.price, s.size) {
            mismatched += 1;
            continue;
        }
        matched += 1;
        let _ = update_latency.record(s.read_ns.saturating_sub(er).max(1));
        if er_arrived > 0 && s.arrived_ns > 0 {
            let _ = arrival_latency.record(s.arrived_ns.saturating_sub(er_arrived).max(1));
        }
    }
    Ok(MdRun {
        subscribers: n,
        round,
        orders,
        update_latency,
        arrival_latency,
        trades,
        entries_read,
        matched,
        mismatched,
        undecodable: reads.iter().map(|r| r.undecodable).sum(),
        conflations: reads.iter().map(|r| r.conflations).sum(),
        md_messages: reads.iter().map(|r| r.messages).sum(),
        dropped: reads.iter().filter(|r| r.dropped.is_some()).count(),
        dropped_why: reads.iter().find_map(|r| r.dropped.clone()),
        synced: reads.iter().filter(|r| r.synced).count(),
    })
}

fn run_bots(
    b: &FixBench,
    fills: &mut Fills,
    progress: &mut dyn Write,
) -> Result<RunResult, String> {
    let mut obs = Both {
        fills,
        progress: Progress { out: progress },
    };
    let (result, notes) = run_fix_observed(b, &mut obs)?;
    for note in notes {
        let _ = writeln!(obs.progress.out, "note: {note}");
    }
    Ok(result)
}

/// The subscribers of one run: who they are and what they subscribe to.
struct Subscribers {
    transport: Transport,
    /// The server's CompID (FIX market data).
    target: String,
    n: usize,
    /// Each subscribes to every one of these symbols.
    symbols: Vec<String>,
    /// The time their stamps' read times count from.
    base: Instant,
}

/// What one subscriber read in a run, whatever its transport.
pub(crate) struct SubscriberRead {
    /// One stamp per trade read: the first message that reflects it.
    pub stamps: Vec<TradeStamp>,
    /// The lowest trade id read.
    pub first_trade: Option<u64>,
    /// Messages that did not decode.
    pub undecodable: u64,
    /// Fresh snapshots after the first of each instrument (it fell behind).
    pub conflations: u64,
    /// Messages read (any type).
    pub messages: u64,
    /// It had every instrument's first snapshot.
    pub synced: bool,
    /// Why the exchange ended it, if it did.
    pub dropped: Option<String>,
}

/// One subscriber of a run on the subscribers' poll loop.
pub(crate) trait Subscriber {
    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()>;
    fn deregister(&mut self, registry: &Registry);
    /// Every instrument's first snapshot has arrived.
    fn synced(&self) -> bool;
    /// Trade stamps so far.
    fn stamped(&self) -> usize;
    /// Reads everything the socket has (it is edge-triggered); `Err`: the connection is gone,
    /// and why.
    fn pump(&mut self) -> Result<(), String>;
    /// What it read; `dropped` is why its connection ended (if it did).
    fn finish(self, dropped: Option<String>) -> SubscriberRead;
}

impl Subscriber for MdClient {
    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(self.stream_mut(), token, Interest::READABLE)
    }

    fn deregister(&mut self, registry: &Registry) {
        let _ = registry.deregister(self.stream_mut());
    }

    fn synced(&self) -> bool {
        MdClient::synced(self)
    }

    fn stamped(&self) -> usize {
        self.trade_stamps.as_ref().map_or(0, |(_, s)| s.len())
    }

    fn pump(&mut self) -> Result<(), String> {
        MdClient::pump(self).map(drop).map_err(|e| e.to_string())
    }

    fn finish(mut self, dropped: Option<String>) -> SubscriberRead {
        SubscriberRead {
            stamps: self.trade_stamps.take().map(|(_, s)| s).unwrap_or_default(),
            first_trade: self.trade_ids.map(|(lo, _)| lo),
            undecodable: self.undecodable,
            conflations: self.snapshots_after_first,
            messages: self.messages,
            synced: MdClient::synced(&self),
            dropped: self.ended.take().or(dropped),
        }
    }
}

impl Subscriber for WsSubscriber {
    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        WsSubscriber::register(self, registry, token)
    }

    fn deregister(&mut self, registry: &Registry) {
        WsSubscriber::deregister(self, registry);
    }

    fn synced(&self) -> bool {
        WsSubscriber::synced(self)
    }

    fn stamped(&self) -> usize {
        self.stamps.len()
    }

    fn pump(&mut self) -> Result<(), String> {
        WsSubscriber::pump(self)
    }

    fn finish(self, dropped: Option<String>) -> SubscriberRead {
        SubscriberRead {
            synced: WsSubscriber::synced(&self),
            conflations: self.conflations(),
            stamps: self.stamps,
            first_trade: self.first_trade,
            undecodable: self.undecodable,
            messages: self.messages,
            dropped: self.ended.or(dropped),
        }
    }
}

/// The subscribers' thread: connects the `n` subscribers of `set`, subscribes each to every
/// symbol, says on `ready` when all have their snapshots, then reads until `stop`.
fn subscribe_and_read(
    set: &Subscribers,
    stop: &AtomicBool,
    ready: &std::sync::mpsc::Sender<Result<(), String>>,
) -> Result<Vec<SubscriberRead>, String> {
    let names: Vec<&str> = set.symbols.iter().map(String::as_str).collect();
    match &set.transport {
        Transport::Fix {
            addr,
            sender_prefix,
        } => {
            let mut clients = Vec::with_capacity(set.n);
            for i in 0..set.n {
                let who = format!("{sender_prefix}{}", i + 1);
                let mut c = MdClient::connect(*addr, &who, &set.target, 16)
                    .map_err(|e| format!("market data at {addr} as {who}: {e}"))?;
                c.trade_stamps = Some((set.base, Vec::with_capacity(1 << 18)));
                c.keep_view = false;
                c.stamp_arrivals()
                    .map_err(|e| format!("{who}: receive timestamps (SO_TIMESTAMPNS): {e}"))?;
                c.subscribe("bench", &names, 0)
                    .map_err(|e| format!("{who}: subscribe: {e}"))?;
                clients.push(c);
            }
            read_until_stopped(clients, stop, ready)
        }
        Transport::Ws { addr } => {
            let mut clients = Vec::with_capacity(set.n);
            for i in 0..set.n {
                let c = WsSubscriber::connect(*addr, &names, set.base)
                    .map_err(|e| format!("WebSocket subscriber {} at {addr}: {e}", i + 1))?;
                clients.push(c);
            }
            read_until_stopped(clients, stop, ready)
        }
    }
}

/// Reads `clients` on one poll; says on `ready` when all are synced (within 20 s), then reads
/// until `stop` and no trade came for a while.
fn read_until_stopped<S: Subscriber>(
    mut clients: Vec<S>,
    stop: &AtomicBool,
    ready: &std::sync::mpsc::Sender<Result<(), String>>,
) -> Result<Vec<SubscriberRead>, String> {
    let n = clients.len();
    let mut poll = Poll::new().map_err(|e| e.to_string())?;
    for (i, c) in clients.iter_mut().enumerate() {
        c.register(poll.registry(), Token(i))
            .map_err(|e| e.to_string())?;
    }
    let mut events = Events::with_capacity(256);
    let mut dropped: Vec<Option<String>> = vec![None; n];
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut announced = false;
    // While draining: (no new stamp since, stamps then, give up at).
    let mut drain: Option<(Instant, usize, Instant)> = None;
    // Whatever arrived before the first poll (edge-triggered: no event for it).
    let mut pending: Vec<usize> = (0..n).collect();
    loop {
        for i in pending.drain(..) {
            if dropped[i].is_some() {
                continue;
            }
            if let Err(e) = clients[i].pump() {
                clients[i].deregister(poll.registry());
                dropped[i] = Some(e);
            }
        }
        if !announced {
            if let Some((i, why)) = dropped
                .iter()
                .enumerate()
                .find_map(|(i, d)| Some((i, d.as_ref()?)))
            {
                return Err(format!(
                    "subscriber {} ended before its snapshots: {why}",
                    i + 1
                ));
            }
            if clients.iter().all(S::synced) {
                announced = true;
                let _ = ready.send(Ok(()));
            } else if Instant::now() > deadline {
                return Err("subscribers got no snapshot within 20 s".into());
            }
        }
        if announced && stop.load(Ordering::Acquire) {
            // The bots are done: read until no trade came for a while (bounded).
            let now = Instant::now();
            let stamped: usize = clients.iter().map(S::stamped).sum();
            let (quiet_since, last_count, until) =
                drain.get_or_insert((now, stamped, now + Duration::from_secs(3)));
            if stamped != *last_count {
                *quiet_since = now;
                *last_count = stamped;
            }
            if now.duration_since(*quiet_since) >= Duration::from_millis(300) || now > *until {
                break;
            }
        }
        poll.poll(&mut events, Some(Duration::from_millis(20)))
            .map_err(|e| e.to_string())?;
        pending.extend(events.iter().map(|ev| ev.token().0));
    }
    Ok(clients
        .into_iter()
        .zip(dropped)
        .map(|(c, d)| c.finish(d))
        .collect())
}

impl MdRun {
    /// One table row: subscribers, order entry P50/P99, MD update P50/P99, counts.
    pub fn row(&self, base_p50_ns: Option<u64>) -> String {
        let p50 = at(&self.orders.latency, 50.0);
        let ratio = match base_p50_ns {
            Some(b) if b > 0 => format!("{:.2}", p50 as f64 / b as f64),
            _ => "-".into(),
        };
        let q = |h: &Histogram<u64>, p: f64| {
            if h.is_empty() {
                "-".to_string()
            } else {
                us(at(h, p))
            }
        };
        format!(
            "{:>5} {:>11} {:>9} {:>9} {:>6} {:>10} {:>10} {:>10} {:>10} {:>8} {:>9} {:>11} {:>7}",
            self.round,
            self.subscribers,
            us(p50),
            us(at(&self.orders.latency, 99.0)),
            ratio,
            q(&self.update_latency, 50.0),
            q(&self.update_latency, 99.0),
            q(&self.arrival_latency, 50.0),
            q(&self.arrival_latency, 99.0),
            self.trades,
            self.matched,
            self.conflations,
            self.dropped
        )
    }

    pub const HEADER: &'static str = "round subscribers order_p50 order_p99  ratio update_p50 update_p99 arrive_p50 arrive_p99   trades   matched conflations dropped";
}
