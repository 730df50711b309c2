//! `rialto bench md`: the order mix at a fixed rate with 0, 10, 50 ... market-data
//! subscribers, in one run: how long after an order's ExecutionReport its trade reaches each
//! subscriber, and what the subscribers cost order entry.
//!
//! Role: the market-data benchmark as a library call (the binary is a thin wrapper; a test
//! runs it with tiny parameters). The bots are `bench fix`'s; the subscribers are
//! [`MdClient`]s on one thread of their own, all subscribed to every instrument (full depth,
//! trades) before the bots start.
//!
//! How a trade is matched to its ExecutionReport: Rialto's ExecID is `<journal record>.<n>`
//! and a trade's two fills (maker, then taker) are consecutive reports of its record, so the
//! bots' fills sorted by ExecID pair up as the trades in the engine's order, whose trade ids
//! are consecutive. The k-th pair is trade `first + k`, `first` the lowest trade id the
//! subscribers read (they were subscribed, with their snapshots, before the bots started).
//! Two latencies per trade and subscriber: *update*, the time the subscriber read the trade's
//! entry less the time the bots read the taker's fill (the later of the two; both read in this
//! process, on one clock), what a reader on one thread sees; and *arrival*, the kernel's
//! receive time of the entry at the subscriber's socket less that of the fill at the bot's
//! (`rx`, one kernel clock), what the exchange takes whatever the readers' backlog (a read's
//! stamp is its last segment's, so an entry read together with later ones is stamped late).
//!
//! Never: prints to stdout (results are returned); binds anything.

use crate::bench::{on_placed_thread, run_fix_observed, FixBench, Progress};
use crate::driver::{Observer, View};
use crate::md::MdClient;
use crate::mix::Market;
use crate::stats::{at, us, RunResult};
use fix::scan::Report;
use hdrhistogram::Histogram;
use mio::{Events, Interest, Poll, Token};
use std::io::Write;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `rialto bench md` settings.
#[derive(Clone, Debug)]
pub struct MdBench {
    /// The bots (their count, rate, mix, duration, placement).
    pub fix: FixBench,
    /// The exchange's market-data port.
    pub md_addr: SocketAddr,
    /// Subscriber counts, each run once per round, in this order.
    pub subscribers: Vec<usize>,
    /// Rounds (the counts interleaved: 0, 10, 50, 0, 10, 50, ...).
    pub rounds: usize,
    /// Subscribers log on as `<prefix>1..<prefix>N` (default `MD`).
    pub sender_prefix: String,
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
            addr: b.md_addr,
            prefix: b.sender_prefix.clone(),
            target: b.fix.target_comp_id.clone(),
            n,
            symbols,
            base,
        };
        std::thread::Builder::new()
            .name("md-subscribers".into())
            .spawn(move || subscribe_and_read(&set, stop, ready_tx))
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
    // The last trades' entries are on their way: the subscribers read until quiet.
    stop_subs.store(true, Ordering::Release);
    let clients = subs
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
    // The subscribers had their snapshots before the bots started: the first trade entry any
    // of them read is the bots' first pair (checked: each match compares price and quantity).
    let first = clients
        .iter()
        .filter_map(|c| c.trade_ids)
        .map(|(lo, _)| lo)
        .min();
    let hist = || Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3).expect("valid bounds");
    let mut update_latency = hist();
    let mut arrival_latency = hist();
    let (mut entries_read, mut matched, mut mismatched) = (0u64, 0u64, 0u64);
    for c in &clients {
        let Some((_, stamps)) = &c.trade_stamps else {
            continue;
        };
        for s in stamps {
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
        undecodable: clients.iter().map(|c| c.undecodable).sum(),
        conflations: clients.iter().map(|c| c.snapshots_after_first).sum(),
        md_messages: clients.iter().map(|c| c.messages).sum(),
        dropped: clients.iter().filter(|c| c.ended.is_some()).count(),
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

/// The market-data subscribers of one run: who they are and what they subscribe to.
struct Subscribers {
    /// The market-data address they connect to.
    addr: SocketAddr,
    /// Their SenderCompIDs are this prefix and 1 to `n`.
    prefix: String,
    /// The server's CompID.
    target: String,
    n: usize,
    /// Each subscribes to every one of these symbols.
    symbols: Vec<String>,
    /// The time their trade entries' read times count from.
    base: Instant,
}

/// The subscribers' thread: connects the `n` clients of `set`, subscribes each to every
/// symbol, says when all have their snapshots, then reads until `stop`.
fn subscribe_and_read(
    set: &Subscribers,
    stop: Arc<AtomicBool>,
    ready: std::sync::mpsc::Sender<Result<(), String>>,
) -> Result<Vec<MdClient>, String> {
    let &Subscribers {
        addr,
        ref prefix,
        ref target,
        n,
        ref symbols,
        base,
    } = set;
    let fail = |e: String| {
        let _ = ready.send(Err(e.clone()));
        e
    };
    let mut poll = Poll::new().map_err(|e| fail(e.to_string()))?;
    let mut clients = Vec::with_capacity(n);
    let names: Vec<&str> = symbols.iter().map(String::as_str).collect();
    for i in 0..n {
        let who = format!("{prefix}{}", i + 1);
        let mut c = MdClient::connect(addr, &who, target, 16)
            .map_err(|e| fail(format!("market data at {addr} as {who}: {e}")))?;
        c.trade_stamps = Some((base, Vec::with_capacity(1 << 18)));
        c.keep_view = false;
        c.stamp_arrivals()
            .map_err(|e| fail(format!("{who}: receive timestamps (SO_TIMESTAMPNS): {e}")))?;
        c.subscribe("bench", &names, 0)
            .map_err(|e| fail(format!("{who}: subscribe: {e}")))?;
        poll.registry()
            .register(c.stream_mut(), Token(i), Interest::READABLE)
            .map_err(|e| fail(e.to_string()))?;
        clients.push(c);
    }
    let mut events = Events::with_capacity(256);
    let mut alive = vec![true; n];
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut announced = false;
    // While draining: (no new stamp since, stamps then, give up at).
    let mut drain: Option<(Instant, usize, Instant)> = None;
    loop {
        if !announced && clients.iter().all(MdClient::synced) {
            announced = true;
            let _ = ready.send(Ok(()));
        }
        if !announced && Instant::now() > deadline {
            return Err(fail("subscribers got no snapshot within 20 s".into()));
        }
        if announced && stop.load(Ordering::Acquire) {
            // The bots are done: read until no trade entry came for a while (bounded).
            let now = Instant::now();
            let stamped: usize = clients
                .iter()
                .filter_map(|c| c.trade_stamps.as_ref())
                .map(|(_, s)| s.len())
                .sum();
            let (quiet_since, last_count, until) =
                drain.get_or_insert((now, stamped, now + Duration::from_secs(3)));
            if stamped != *last_count {
                *quiet_since = now;
                *last_count = stamped;
            }
            if now.duration_since(*quiet_since) >= Duration::from_millis(300) || now > *until {
                return Ok(clients);
            }
        }
        poll.poll(&mut events, Some(Duration::from_millis(20)))
            .map_err(|e| fail(e.to_string()))?;
        for ev in events.iter() {
            let i = ev.token().0;
            if !alive[i] {
                continue;
            }
            if let Err(e) = clients[i].pump() {
                alive[i] = false;
                let _ = poll.registry().deregister(clients[i].stream_mut());
                if clients[i].ended.is_none() {
                    clients[i].ended = Some(e.to_string());
                }
            }
        }
    }
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
