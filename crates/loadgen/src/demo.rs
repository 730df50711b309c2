//! `rialto demo`'s traders: simulated market makers and takers trading over FIX on the exchange
//! they are given, with live statistics once a second and a summary at the end.
//!
//! Role: what a newcomer sees first (the `rialto` binary starts the exchange in its process and
//! hands its address here). Three market makers quote two levels on both sides of
//! every instrument around a mid that drifts (a random walk, moved once a second), refreshing
//! quotes with replaces (a quote filled 10,000 in all is canceled and sent afresh); three takers send market and IOC orders that cross the spread
//! (like the ZeroMQ exchange example's gateway generating random orders at a given rate). The
//! traders are `driver` bots (BOT1..BOT6), so they are real FIX sessions through the real
//! exchange: its sequencer, journal and engine.
//!
//! The traders send only requests the exchange accepts: they share a `Floor` (on the
//! driver's one thread) through which makers never cross one another and modify a quote only
//! when every fill of its instrument has reached them, so a replace asks for more than is
//! filled and a cancel names a live order. A demo without outside parties shows no reject;
//! one that it did show would be a bug of the traders or of the exchange.
//!
//! What the screen shows: orders in (requests/s sent by the traders), reports out (FIX
//! application messages/s received), trades/s (fills / 2: every trade has a demo trader on
//! both sides), ack latency P50/P99 of the last second (request -> first execution report),
//! the exchange's market-data subscribers and messages/s, and per instrument the top of book
//! (bid size @ price | ask price @ size) and the last trade, as the exchange's market-data
//! feed shows them to the demo's own subscriber, which reads it on a thread of its own at
//! `SCHED_IDLE` (`feed`: the traders' thread only sends and reads orders, as a client's
//! would); without market data: aggregated from the traders' own resting orders as reported
//! to them.
//!
//! At the end: orders by kind, reports, trades, the latency table, and the rejects counted by
//! what they were (new order, cancel, replace) and the exchange's reason (Text, tag 58).
//!
//! Given the exchange's REST address and API tokens, two traders also quote over the REST API
//! (`rest`: passive GTC orders away from the touch, moved and canceled, on a thread of their
//! own) at a small share of the rate (`REST_SHARE`); a line of the display and one of the
//! summary count their orders and rejects.
//!
//! Never: starts, stops or configures an exchange (it is only a FIX client of `addr`); binds
//! anything.

use crate::clordid::{KIND_CANCEL, KIND_NEW, KIND_REPLACE};
use crate::driver::{wall_ns, Driver, DriverConfig, Observer, View};
use crate::md::MdClient;
use crate::mix::{Action, Market, Strategy};
use crate::orders::{BotOrders, SlotState};
use crate::stats::{at, percentile_table, us, RunResult};
use feed::{FeedRows, FeedWatch};
use fix::scan::Report;
pub use floor::Floor;
use std::cell::RefCell;
use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};
use types::{OrdType, Side, SplitMix64, TimeInForce};

/// Quote levels per side per instrument of each market maker.
const LEVELS: u32 = 2;
const MAKERS: usize = 3;
const TAKERS: usize = 3;
/// The REST traders' share of the demo's rate: 1 in this many orders (at least 2/s, at most
/// 500/s).
const REST_SHARE: u64 = 20;
/// Half the quoted spread, in ticks.
const HALF_SPREAD_TICKS: i64 = 3;
/// Distance between a maker's quote levels, in ticks.
const LEVEL_STEP_TICKS: i64 = 2;

/// A maker's quote that has filled this much in all is canceled rather than replaced again
/// (the next turn at its position sends a fresh order).
const REQUOTE_FILLED: u64 = 10_000;

/// The traders' shared [`Floor`]: they all run on the driver's one thread.
pub type SharedFloor = Rc<RefCell<Floor>>;

/// A simulated trader of the demo. `index` counts makers and takers separately, from 0.
#[derive(Clone, Debug)]
pub enum Trader {
    Maker {
        rng: SplitMix64,
        cursor: u32,
        index: usize,
        floor: SharedFloor,
    },
    Taker {
        rng: SplitMix64,
        index: usize,
        floor: SharedFloor,
    },
}

impl Trader {
    pub fn maker(seed: u64, index: usize, floor: SharedFloor) -> Trader {
        Trader::Maker {
            rng: SplitMix64::new(seed),
            cursor: 0,
            index,
            floor,
        }
    }
    pub fn taker(seed: u64, index: usize, floor: SharedFloor) -> Trader {
        Trader::Taker {
            rng: SplitMix64::new(seed),
            index,
            floor,
        }
    }
    /// Slots a maker needs: two sides, `LEVELS` each, per instrument.
    pub fn maker_window(symbols: usize) -> usize {
        symbols * 2 * LEVELS as usize
    }
    /// The floor the demo's `MAKERS` makers and `TAKERS` takers share.
    pub fn floor(symbols: usize) -> SharedFloor {
        Rc::new(RefCell::new(Floor::new(symbols, MAKERS, TAKERS)))
    }
}

/// Quote position `p` (0-based) of a maker: (symbol, side, level).
fn quote_position(p: u32) -> (u16, Side, u32) {
    let level = p % LEVELS;
    let side = if (p / LEVELS).is_multiple_of(2) {
        Side::Buy
    } else {
        Side::Sell
    };
    ((p / LEVELS / 2) as u16, side, level)
}

fn quote_price(mid: i64, side: Side, level: u32, jitter: i64) -> i64 {
    let away = HALF_SPREAD_TICKS + i64::from(level) * LEVEL_STEP_TICKS + jitter;
    match side {
        Side::Buy => (mid - away).max(1),
        Side::Sell => mid + away,
    }
}

impl Strategy for Trader {
    fn next(&mut self, orders: &mut BotOrders, market: &Market) -> Action {
        let nsym = market.symbols.len().max(1);
        match self {
            Trader::Maker {
                rng,
                cursor,
                index,
                floor,
            } => {
                let mut floor = floor.borrow_mut();
                floor.maker_quotes(*index, orders);
                let positions = (nsym * 2 * LEVELS as usize) as u32;
                // Refresh the next quote position that has no request in flight, without
                // crossing any maker's quote, and modify a live quote only where the floor is
                // settled (its fills are all known, so the request reaches the order as it is).
                for _ in 0..positions {
                    let p = *cursor % positions;
                    *cursor = cursor.wrapping_add(1);
                    let (symbol, side, level) = quote_position(p);
                    let slot = p + 1;
                    let mid = market.symbols[symbol as usize % nsym].mid_ticks;
                    let want = quote_price(mid, side, level, rng.below(2) as i64);
                    let leaves = 50 + rng.below(451);
                    let Some(s) = orders.slot(slot).copied() else {
                        continue;
                    };
                    let live = match s.state {
                        SlotState::Free => false,
                        SlotState::Live if floor.settled(symbol) => true,
                        _ => continue,
                    };
                    if live && s.filled_qty() >= REQUOTE_FILLED {
                        return Action::Cancel { slot };
                    }
                    let Some(price) = floor.uncrossed(symbol, side, want) else {
                        continue;
                    };
                    if !live && !orders.alloc_at(slot) {
                        continue;
                    }
                    floor.add_quote(*index, symbol, side, price);
                    if live {
                        // OrderQty is the new total: what is filled plus the new remainder.
                        return Action::Replace {
                            slot,
                            price_ticks: price,
                            qty: s.filled_qty() + leaves,
                        };
                    }
                    return Action::New {
                        symbol,
                        side,
                        ord_type: OrdType::Limit,
                        tif: TimeInForce::Day,
                        price_ticks: price,
                        qty: leaves,
                        slot,
                    };
                }
                Action::Idle
            }
            Trader::Taker { rng, index, floor } => {
                let symbol = rng.below(nsym as u64) as u16;
                let mid = market.symbols[symbol as usize].mid_ticks;
                let side = if rng.below(2) == 0 {
                    Side::Buy
                } else {
                    Side::Sell
                };
                let qty = 1 + rng.below(40);
                floor.borrow_mut().taker_sent(*index, symbol);
                if rng.below(2) == 0 {
                    Action::New {
                        symbol,
                        side,
                        ord_type: OrdType::Market,
                        tif: TimeInForce::Day,
                        price_ticks: 0,
                        qty,
                        slot: 0,
                    }
                } else {
                    // Crosses the makers' first level.
                    let away = HALF_SPREAD_TICKS + 1;
                    let price = match side {
                        Side::Buy => mid + away,
                        Side::Sell => (mid - away).max(1),
                    };
                    Action::New {
                        symbol,
                        side,
                        ord_type: OrdType::Limit,
                        tif: TimeInForce::Ioc,
                        price_ticks: price,
                        qty,
                        slot: 0,
                    }
                }
            }
        }
    }
}

/// How to run the demo's traders.
#[derive(Clone, Debug)]
pub struct DemoConfig {
    /// The exchange: FIX 4.4, TargetCompID `RIALTO`, sessions `BOT1..BOT6` (the default
    /// contract of `rialto serve`).
    pub addr: SocketAddr,
    /// Requests per second over all traders.
    pub rate: u64,
    /// Stop after this long (tests); otherwise run until `stop` is set.
    pub duration: Option<Duration>,
    /// Set (e.g. by a Ctrl-C handler) to end the run.
    pub stop: Arc<AtomicBool>,
    pub seed: u64,
    /// What the live display's first line names after "Rialto demo" (e.g. the exchange's
    /// address and durability).
    pub label: String,
    /// Redraw in place (ANSI) instead of printing a new block each second. Default: when
    /// stdout is a terminal.
    pub redraw: Option<bool>,
    /// The exchange's market-data port: the top of book and last trades shown come from its
    /// feed (a subscriber of its own, `MD64`). `None`: from the traders' own orders.
    pub market_data: Option<SocketAddr>,
    /// The exchange's market-data figures, when it runs in this process.
    pub md_figures: Option<MdFiguresFn>,
    /// The exchange's REST API and the REST traders' API tokens (one each): `None`, no REST
    /// traders.
    pub rest: Option<(SocketAddr, Vec<String>)>,
}

/// What the exchange's market-data publisher says of itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MdFigures {
    /// Market-data sessions logged on, and their subscriptions.
    pub sessions: u64,
    pub subscriptions: u64,
    /// FIX messages (snapshots and incrementals) sent since start.
    pub messages: u64,
    /// Times a subscriber (or the whole feed) fell behind and got fresh snapshots.
    pub conflations: u64,
}

/// Reads [`MdFigures`] (a closure over the server's counters: `loadgen` knows no server).
#[derive(Clone)]
pub struct MdFiguresFn(pub Arc<dyn Fn() -> MdFigures + Send + Sync>);

impl std::fmt::Debug for MdFiguresFn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MdFiguresFn")
    }
}

impl DemoConfig {
    /// Defaults for trading on the exchange at `addr`: 2,000 orders/s until `stop`, seed 1.
    pub fn new(addr: SocketAddr) -> DemoConfig {
        DemoConfig {
            addr,
            rate: 2_000,
            duration: None,
            stop: Arc::new(AtomicBool::new(false)),
            seed: 1,
            label: addr.to_string(),
            redraw: None,
            market_data: None,
            md_figures: None,
            rest: None,
        }
    }
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn decimal_text(d: fix::Decimal) -> String {
    let mut v = Vec::with_capacity(24);
    d.write(&mut v);
    String::from_utf8_lossy(&v).into_owned()
}

/// What the live display keeps between seconds.
struct Display<'w> {
    out: &'w mut dyn Write,
    redraw: bool,
    drawn_lines: usize,
    header: String,
    reports_second: u64,
    reports_total: u64,
    /// Last trade per symbol: (price in ticks, qty).
    last: Vec<Option<(i64, u64)>>,
    rng: SplitMix64,
    failed: Option<std::io::Error>,
    /// Why the demo's subscriber stopped, if it did.
    md_error: Option<String>,
    /// The demo's own subscriber, when the exchange has market data.
    feed: Option<FeedWatch>,
    md_figures: Option<MdFiguresFn>,
    /// `md_figures().messages` a second ago.
    md_messages: u64,
    /// The REST traders' counts, and their order requests a second ago.
    rest: Option<Arc<rest::RestCounts>>,
    rest_orders: u64,
}

impl Display<'_> {
    /// Top of book and last trade per instrument as the feed shows them (the demo's own
    /// subscriber), or `None` before its snapshots.
    fn top_of_book_from_feed(&mut self) -> Option<Vec<String>> {
        match self.feed.as_ref()?.rows() {
            FeedRows::Waiting => None,
            FeedRows::Rows(rows) => Some(rows),
            FeedRows::Lost(e) => {
                self.feed = None;
                self.md_error = Some(e);
                None
            }
        }
    }

    fn top_of_book(view: &View<'_>, market: &Market) -> Vec<String> {
        let n = market.symbols.len();
        // Per symbol: best bid (price, qty), best ask (price, qty).
        let mut bid: Vec<Option<(i64, u64)>> = vec![None; n];
        let mut ask: Vec<Option<(i64, u64)>> = vec![None; n];
        for b in 0..view.bot_count() {
            let orders = view.orders(b);
            for i in 0..orders.live_count() {
                let Some(s) = orders.slot(orders.live_at(i)) else {
                    continue;
                };
                let sym = s.symbol as usize;
                if sym >= n {
                    continue;
                }
                let (p, q) = (s.price_ticks, s.leaves_qty);
                let (best, sign) = match s.side {
                    Side::Buy => (&mut bid[sym], 1),
                    Side::Sell => (&mut ask[sym], -1),
                };
                *best = match *best {
                    None => Some((p, q)),
                    Some((bp, bq)) if bp == p => Some((p, bq + q)),
                    Some((bp, _)) if (p - bp) * sign > 0 => Some((p, q)),
                    keep => keep,
                };
            }
        }
        let px = |ticks: i64, d: u8| decimal_text(fix::Decimal::new(ticks, d));
        (0..n)
            .map(|i| {
                let d = market.symbols[i].price_decimals;
                let b = bid[i].map_or("-".to_string(), |(p, q)| format!("{q} @ {}", px(p, d)));
                let a = ask[i].map_or("-".to_string(), |(p, q)| format!("{} @ {q}", px(p, d)));
                format!("{:<6} {:>16} | {:<16}", market.symbols[i].name, b, a)
            })
            .collect()
    }
}

impl Observer for Display<'_> {
    fn on_report(&mut self, _bot: usize, r: &Report<'_>) {
        let _ = r;
        self.reports_second += 1;
        self.reports_total += 1;
    }

    fn on_second(&mut self, view: &View<'_>, market: &mut Market) {
        let s = view.last_second;
        let t = view.totals;
        let mut lines = vec![format!("{} · {} s", self.header, view.elapsed_s)];
        lines.push(format!(
            "orders in {:>7}/s   reports out {:>7}/s   trades {:>6}/s   messages {:>7}/s",
            thousands(s.sent),
            thousands(self.reports_second),
            thousands(s.fills / 2),
            thousands(s.sent + self.reports_second)
        ));
        lines.push(format!(
            "ack latency P50 {} µs   P99 {} µs",
            us(at(view.last_second_latency, 50.0)),
            us(at(view.last_second_latency, 99.0)),
        ));
        lines.push(format!(
            "totals: orders {}, reports {}, trades {}, rejects {}, shed {}, errors {}",
            thousands(t.sent),
            thousands(self.reports_total),
            thousands(t.fills / 2),
            thousands(t.rejects),
            thousands(t.shed),
            t.errors
        ));
        if let Some(f) = &self.md_figures {
            let f = (f.0)();
            lines.push(format!(
                "market data: {} subscribers ({} subscriptions), {:>7} messages/s, conflated {}",
                f.sessions,
                f.subscriptions,
                thousands(f.messages.saturating_sub(self.md_messages)),
                f.conflations
            ));
            self.md_messages = f.messages;
        }
        if let Some(r) = &self.rest {
            let orders = r.orders();
            lines.push(format!(
                "REST traders: orders {:>6}/s   totals: orders {}, rejects {}, shed {}, errors {}",
                thousands(orders.saturating_sub(self.rest_orders)),
                thousands(orders),
                thousands(r.rejects.load(std::sync::atomic::Ordering::Relaxed)),
                thousands(r.shed.load(std::sync::atomic::Ordering::Relaxed)),
                r.errors.load(std::sync::atomic::Ordering::Relaxed)
            ));
            self.rest_orders = orders;
        }
        let feed = self.top_of_book_from_feed();
        lines.push(format!(
            "{:<6} {:>16} | {:<16} {}   ({})",
            "SYMBOL",
            "BID size @ px",
            "ASK px @ size",
            "LAST",
            match (&feed, &self.md_error) {
                (Some(_), _) => "from the market-data feed",
                (None, Some(_)) => "market data lost: from the traders' own orders",
                (None, None) => "from the traders' own orders",
            }
        ));
        match feed {
            Some(rows) => lines.extend(rows),
            None => {
                let book = Display::top_of_book(view, market);
                for (i, row) in book.into_iter().enumerate() {
                    let last = match self.last.get(i).copied().flatten() {
                        Some((p, q)) => format!(
                            "{} x {q}",
                            decimal_text(fix::Decimal::new(p, market.symbols[i].price_decimals))
                        ),
                        None => "-".to_string(),
                    };
                    lines.push(format!("{row} {last}"));
                }
            }
        }
        self.reports_second = 0;
        if self.failed.is_none() {
            let mut text = String::new();
            if self.redraw && self.drawn_lines > 0 {
                text.push_str(&format!("\x1b[{}A\x1b[J", self.drawn_lines));
            }
            for l in &lines {
                text.push_str(l);
                text.push('\n');
            }
            if !self.redraw {
                text.push('\n');
            }
            if let Err(e) = self
                .out
                .write_all(text.as_bytes())
                .and_then(|_| self.out.flush())
            {
                self.failed = Some(e);
            }
            self.drawn_lines = lines.len();
        }
        // The market moves: each mid takes a small random step.
        for sym in &mut market.symbols {
            sym.mid_ticks = (sym.mid_ticks + self.rng.normal(2)).max(100);
        }
    }
}

/// Rejects counted by what was rejected and the exchange's Text (58).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RejectReasons {
    /// (request kind: `KIND_NEW`, `KIND_CANCEL`, `KIND_REPLACE`, or 0 if the ClOrdID says none;
    /// Text; count), in order of first appearance.
    counts: Vec<(u8, Vec<u8>, u64)>,
    /// Rejects beyond `REASONS_MAX` distinct reasons.
    other: u64,
}

impl RejectReasons {
    /// Distinct reasons kept; more are counted together (the exchange has a handful).
    const REASONS_MAX: usize = 32;

    /// Counts `r` if it rejects a request for a business reason: an ExecutionReport with
    /// ExecType Rejected, or an OrderCancelReject (load shedding, "exchange busy", is not a
    /// reject: it is counted as shed).
    pub fn on_report(&mut self, r: &Report<'_>) {
        let rejected = (r.msg_type == b'8' && r.exec_type == b'8') || r.msg_type == b'9';
        if !rejected || r.is_busy() {
            return;
        }
        let kind = match r.cl_ord_id.first() {
            Some(&k) if matches!(k, KIND_NEW | KIND_CANCEL | KIND_REPLACE) => k,
            _ => 0,
        };
        let text = r.text.unwrap_or(b"");
        if let Some(c) = self
            .counts
            .iter_mut()
            .find(|(k, t, _)| *k == kind && t.as_slice() == text)
        {
            c.2 += 1;
        } else if self.counts.len() < Self::REASONS_MAX {
            self.counts.push((kind, text.to_vec(), 1));
        } else {
            self.other += 1;
        }
    }

    pub fn total(&self) -> u64 {
        self.counts.iter().map(|c| c.2).sum::<u64>() + self.other
    }

    /// A cancel or replace of an order that finished (filled, or canceled by the exchange)
    /// while the request was on its way: a race with the market no client can avoid, not a
    /// mistake of the traders.
    fn is_race(kind: u8, text: &[u8]) -> bool {
        matches!(kind, KIND_CANCEL | KIND_REPLACE) && text == b"unknown order"
    }

    /// The rejects that were races with a fill ([`Self::is_race`]).
    pub fn raced(&self) -> u64 {
        self.counts
            .iter()
            .filter(|(k, t, _)| Self::is_race(*k, t))
            .map(|c| c.2)
            .sum()
    }

    /// One line per reason but races, most frequent first: what was rejected, why, how many.
    pub fn lines(&self) -> Vec<String> {
        let mut sorted: Vec<&(u8, Vec<u8>, u64)> = self
            .counts
            .iter()
            .filter(|(k, t, _)| !Self::is_race(*k, t))
            .collect();
        sorted.sort_by_key(|c| std::cmp::Reverse(c.2));
        let mut lines: Vec<String> = sorted
            .into_iter()
            .map(|(kind, text, n)| format!("{}: {}", Self::describe(*kind, text), thousands(*n)))
            .collect();
        if self.other > 0 {
            lines.push(format!("other reasons: {}", thousands(self.other)));
        }
        lines
    }

    fn describe(kind: u8, text: &[u8]) -> String {
        let text = String::from_utf8_lossy(text);
        let what = match kind {
            KIND_NEW => "new order",
            KIND_CANCEL => "cancel",
            KIND_REPLACE => "replace",
            _ => "request",
        };
        if text.is_empty() {
            return format!("{what} (no reason given)");
        }
        format!("{what}: {text}")
    }
}

/// A `Display` wrapper that also records the last trade per symbol (needs the market's names)
/// and counts the rejects by reason.
struct DemoObserver<'w> {
    display: Display<'w>,
    names: Vec<Vec<u8>>,
    decimals: Vec<u8>,
    rejects: RejectReasons,
    floor: SharedFloor,
}

impl Observer for DemoObserver<'_> {
    fn on_report(&mut self, bot: usize, r: &Report<'_>) {
        self.display.on_report(bot, r);
        self.rejects.on_report(r);
        let symbol = self.names.iter().position(|n| n.as_slice() == r.symbol);
        self.floor
            .borrow_mut()
            .on_report(bot, symbol.map(|i| i as u16), r);
        if r.is_fill() {
            if let (Some(i), Some(px), Some(qty)) = (symbol, r.last_px, r.last_qty) {
                if let Ok(ticks) = px.to_ticks(fix::Decimal::new(1, self.decimals[i])) {
                    self.display.last[i] = Some((ticks, qty));
                }
            }
        }
    }
    fn on_second(&mut self, view: &View<'_>, market: &mut Market) {
        self.floor.borrow_mut().once_a_second();
        self.display.on_second(view, market);
    }
}

/// The demo's own subscriber: top of book and trades of every instrument, as `MD64`.
fn subscribe_demo_feed(addr: SocketAddr, market: &Market) -> Result<MdClient, String> {
    let mut c = MdClient::connect(addr, "MD64", "RIALTO", 1)
        .map_err(|e| format!("market data at {addr}: {e}"))?;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !c.logged_on {
        if let Some(t) = &c.ended {
            return Err(format!("market data: logon refused: {t}"));
        }
        if Instant::now() > deadline {
            return Err("market data: no Logon answer within 10 s".into());
        }
        c.wait(Duration::from_millis(100))
            .map_err(|e| format!("market data: {e}"))?;
    }
    let names: Vec<&str> = market.symbols.iter().map(|s| s.name.as_str()).collect();
    c.subscribe("demo", &names, 1)
        .map_err(|e| format!("market data: {e}"))?;
    Ok(c)
}

/// What a finished demo reports.
pub struct DemoSummary {
    pub result: RunResult,
    pub elapsed: Duration,
    pub reports: u64,
    pub rejects: RejectReasons,
    /// From the end of the run (mass cancel, logout).
    pub notes: Vec<String>,
    /// What the REST traders did, if there were any.
    pub rest: Option<Arc<rest::RestCounts>>,
}

/// Runs the traders against `cfg.addr`, writing the live display and the summary to `out`.
/// Stops when `cfg.stop` is set or after `cfg.duration`.
pub fn run(cfg: &DemoConfig, out: &mut dyn Write) -> Result<DemoSummary, String> {
    if cfg.rate == 0 {
        return Err("--rate must be at least 1 order/s".into());
    }
    let w = |out: &mut dyn Write, s: String| out.write_all(s.as_bytes()).map_err(|e| e.to_string());
    let rest_rate = match &cfg.rest {
        Some(_) => (cfg.rate / REST_SHARE).clamp(2, 500),
        None => 0,
    };
    let fix_rate = cfg.rate.saturating_sub(rest_rate).max(1);
    let rest_text = match &cfg.rest {
        Some((_, tokens)) => format!(
            ";\n{} REST traders quote far from the touch over the REST API ({rest_rate} orders/s)",
            tokens.len()
        ),
        None => String::new(),
    };
    w(
        out,
        format!(
            "{MAKERS} market makers quote ACME BOLT CRNK around a drifting mid, {TAKERS} takers send\n\
             market and IOC orders{rest_text}: {} orders/s in all. Ctrl-C to stop.\n\n",
            cfg.rate
        ),
    )?;
    let market0 = crate::mix::Market::default_contract();
    let nbots = MAKERS + TAKERS;
    let mut dcfg = DriverConfig::new(cfg.addr, nbots, fix_rate.div_ceil(nbots as u64).max(1));
    dcfg.warmup = Duration::ZERO;
    dcfg.duration = cfg.duration;
    dcfg.window = Trader::maker_window(market0.symbols.len());
    dcfg.stop = cfg.stop.clone();
    dcfg.drain_timeout = Duration::from_secs(5);
    dcfg.run_seed = wall_ns() / 1_000_000;
    let started = Instant::now();
    let mut driver = Driver::connect(dcfg)?;
    let rest = match &cfg.rest {
        Some((addr, tokens)) => Some(rest::RestTraders::start(
            rest::RestConfig {
                addr: *addr,
                tokens: tokens.clone(),
                rate: rest_rate,
                seed: cfg.seed,
            },
            market0.clone(),
        )?),
        None => None,
    };
    let floor = Trader::floor(market0.symbols.len());
    let mut traders: Vec<Trader> = (0..nbots)
        .map(|i| {
            let seed = cfg.seed.wrapping_mul(1000).wrapping_add(i as u64);
            if i < MAKERS {
                Trader::maker(seed, i, floor.clone())
            } else {
                Trader::taker(seed, i - MAKERS, floor.clone())
            }
        })
        .collect();
    let mut market = market0.clone();
    let redraw = cfg
        .redraw
        .unwrap_or_else(|| std::io::stdout().is_terminal());
    let mut obs = DemoObserver {
        display: Display {
            out: &mut *out,
            redraw,
            drawn_lines: 0,
            header: format!("Rialto demo · {}", cfg.label),
            reports_second: 0,
            reports_total: 0,
            last: vec![None; market.symbols.len()],
            rng: SplitMix64::new(cfg.seed ^ 0x5eed),
            failed: None,
            md_error: None,
            feed: match cfg.market_data {
                Some(a) => Some(FeedWatch::start(
                    subscribe_demo_feed(a, &market0)?,
                    market0.symbols.iter().map(|s| s.name.clone()).collect(),
                )?),
                None => None,
            },
            md_figures: cfg.md_figures.clone(),
            md_messages: 0,
            rest: rest.as_ref().map(|r| r.counts.clone()),
            rest_orders: 0,
        },
        names: market
            .symbols
            .iter()
            .map(|s| s.name.as_bytes().to_vec())
            .collect(),
        decimals: market.symbols.iter().map(|s| s.price_decimals).collect(),
        rejects: RejectReasons::default(),
        floor: floor.clone(),
    };
    let result = driver.run(&mut traders, &mut market, &mut obs);
    let rest_keys = rest.as_ref().map_or(0, |r| r.keys);
    let rest = rest.map(rest::RestTraders::stop);
    let result = result?;
    let reports = obs.display.reports_total;
    let rejects = obs.rejects;
    let mut notes = driver.finish();
    let outside = floor.borrow().outside_trades;
    if outside > 0 {
        notes.push(format!(
            "{outside} times the traders' fills were unbalanced by trades with a party outside \
             the demo (your own FIX client?): a replace or cancel could be rejected there"
        ));
    }
    let elapsed = started.elapsed();
    let c = &result.counters;
    let mut s = String::new();
    s.push_str(&format!(
        "\nRialto demo stopped after {:.1} s\n\
         orders sent {} (new {}, cancel {}, replace {}), reports received {}, trades {}, rejects {}, shed {}, errors {}\n",
        elapsed.as_secs_f64(),
        c.sent,
        c.sent_new,
        c.sent_cancel,
        c.sent_replace,
        reports,
        c.fills / 2,
        c.rejects.saturating_sub(rejects.raced()),
        c.shed,
        c.errors,
    ));
    let lines = rejects.lines();
    if !lines.is_empty() {
        s.push_str("rejects by reason (the exchange's Text, tag 58):\n");
        for line in lines {
            s.push_str(&format!("  {line}\n"));
        }
    }
    if rejects.raced() > 0 {
        s.push_str(&format!(
            "races with the market, not rejects: {} cancels or replaces arrived after their order \
             had filled (\"unknown order\")\n",
            rejects.raced()
        ));
    }
    if let Some(r) = &rest {
        s.push_str(&r.summary(rest_keys));
        s.push('\n');
        for p in r.problems() {
            s.push_str(&format!("  REST: {p}\n"));
        }
    }
    s.push_str(&format!(
        "ack latency, order request -> first execution report, whole run:\n{}",
        percentile_table(&result.latency)
    ));
    for n in result.error_notes.iter().chain(notes.iter()) {
        s.push_str(&format!("note: {n}\n"));
    }
    w(out, s)?;
    let _ = out.flush();
    Ok(DemoSummary {
        result,
        elapsed,
        reports,
        rejects,
        notes,
        rest,
    })
}

mod feed;
mod floor;
pub mod rest;
#[cfg(test)]
mod tests;
