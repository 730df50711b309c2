//! Rialto's exchange: the deterministic state machine behind every edge.
//!
//! Role: given the next journaled input (a protocol-neutral order request with its principal,
//! or a checkpoint), with its sequence number and timestamp, update the exchange's state and
//! say what happened as typed [`Output`]s: reports about orders to their owners, refusals with
//! a [`Reject`] reason, book changes for market data. It keeps client order id uniqueness per
//! originator (`ClIndex`), the order records reports are made of (`Orders`), the open orders
//! of each firm and account against their limits (`limits`), the pending mass cancels (and
//! cancels on disconnect) it applies a bounded step at a time (`mass`), and the matching
//! engine; it snapshots, restores and hashes all of it, and takes a full replay's ClOrdID
//! lookups answered ahead (`resolve`).
//!
//! Never: bytes of any protocol, a clock (time is the input's timestamp), a socket or a file;
//! iterates a hash table where the order could reach the output or a snapshot; allocates per
//! input in steady state.
//!
//! Invariants: an order can be canceled or replaced only by the originator that entered it
//! (others get `UnknownOrder` and nothing changes); a client order id is used at most once per
//! originator among live orders and the last `CL_ORD_IDS_MAX`; engine order ids are assigned
//! in input order from 1, so an edge cannot create a duplicate id; no firm or account rests
//! more orders than its limits; one input of a mass cancel looks at most
//! `Config::mass_cancel_scan` order ids and cancels at most `Config::mass_cancel_chunk`
//! orders, and only orders entered before it was requested; the same
//! inputs give the same outputs and the same state hash.
#![forbid(unsafe_code)]

mod clordid;
pub mod codec;
mod index;
mod io;
mod limits;
mod mass;
mod orders;
mod resolve;
pub mod snap;
mod state;

pub use clordid::{ClOrdId, CL_ORD_ID_LEN_MAX};
pub use index::{copy_short, eq_short, Backing, ClBytes, ClHasher, ClHashes};
pub use io::{
    Checkpoint, Input, NewOrder, NoOutputs, Output, Outputs, Principal, Reject, Replace, Report,
    ReportKind, TradingStatus, DESCRIBE_MAX,
};
pub use limits::FirmLimits;
pub use orders::{OrderRecord, OrderState, OrderStatus, SlotTable};
pub use resolve::{ClHint, ClResolver, Resolvable};

use engine::{Engine, EngineConfig};
use index::{ClIndex, CL_ORD_IDS_MAX, ROTATIONS_MAX};
use limits::OpenOrders;
use mass::PendingMass;
use orders::Orders;
use std::collections::VecDeque;
use std::sync::Arc;
use types::{
    AccountId, CancelReason, Command, Event, EventSink, Instrument, Matcher, OrdType, Side, StpMode,
};

pub use types::OrderId;

/// What the exchange is configured with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    /// The instruments, indexed by `SymbolId`.
    pub instruments: Vec<Instrument>,
    /// Each firm's accounts; the first is the firm's default.
    pub firms: Vec<Vec<AccountId>>,
    /// Live orders the engine holds at most.
    pub orders_max: usize,
    /// By originator: cancel its live orders when its session ends (`Input::Disconnected`).
    /// An originator past the end does not.
    pub cancel_on_disconnect: Vec<bool>,
    /// When the trading day ends, in ns after midnight UTC: DAY orders expire at the first
    /// input stamped at or after it. `None`: DAY orders rest until canceled.
    pub trading_day_end_ns: Option<u64>,
    /// When the next trading day starts, in ns after midnight UTC: from the end of the day
    /// until then the market is closed (new orders and replaces are refused with
    /// `Reject::MarketClosed`). `None`: the next day starts as the last one ends. Only with
    /// `trading_day_end_ns`.
    pub trading_day_start_ns: Option<u64>,
    /// By firm (as `firms`): its open-order limits; a firm past the end has none of its own.
    pub firm_limits: Vec<FirmLimits>,
    /// The most of `orders_max` one firm's open orders may take, in percent (1..=100; 100:
    /// no share, a firm is bounded by `orders_max` and its own limits only).
    pub firm_capacity_percent: u32,
    /// Orders one input of a mass cancel (or cancel on disconnect) cancels at most (its
    /// request, then each `Continue`); at least 1. With `mass_cancel_scan`, bounds the work,
    /// so the latency of everyone else, of one input.
    pub mass_cancel_chunk: usize,
    /// Order ids one input of a mass cancel (or cancel on disconnect) looks at most, live or
    /// not; at least 1.
    pub mass_cancel_scan: usize,
}

/// Default of `Config::mass_cancel_chunk`: a chunk of cancels takes well under a millisecond
/// to apply, and its ExecutionReports (about 250 bytes each) well under a socket buffer.
pub const MASS_CANCEL_CHUNK_DEFAULT: usize = 1_000;

/// Default of `Config::mass_cancel_scan`: looking at an order id is a lookup in the live
/// order table (prefetched ahead), so a step of this many takes about a millisecond even when
/// none of them is to be canceled.
pub const MASS_CANCEL_SCAN_DEFAULT: usize = 1 << 16;

impl Config {
    /// A configuration with these instruments, firms and capacity, no cancel on disconnect,
    /// no end of the trading day, no open-order limit but the capacity, and mass cancels in
    /// steps of `MASS_CANCEL_CHUNK_DEFAULT` cancels and `MASS_CANCEL_SCAN_DEFAULT` ids.
    pub fn new(
        instruments: Vec<Instrument>,
        firms: Vec<Vec<AccountId>>,
        orders_max: usize,
    ) -> Config {
        Config {
            instruments,
            firms,
            orders_max,
            cancel_on_disconnect: Vec::new(),
            trading_day_end_ns: None,
            trading_day_start_ns: None,
            firm_limits: Vec::new(),
            firm_capacity_percent: 100,
            mass_cancel_chunk: MASS_CANCEL_CHUNK_DEFAULT,
            mass_cancel_scan: MASS_CANCEL_SCAN_DEFAULT,
        }
    }
}

const NS_PER_DAY: u64 = 86_400 * 1_000_000_000;

/// The first instant strictly after `t` (ns since the epoch) at time of day `tod` (ns after
/// midnight UTC).
fn next_at(t: u64, tod: u64) -> u64 {
    let tod = tod % NS_PER_DAY;
    let today = t - t % NS_PER_DAY + tod;
    if today > t {
        today
    } else {
        today + NS_PER_DAY
    }
}

/// Counters the server reports (not part of the replicated state).
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub orders: u64,
    pub reports: u64,
    pub trades: u64,
}

/// Collects the engine events of one command. The engine builds a level update only for a
/// sink that keeps it (`O::MARKET_DATA`), so an order-entry exchange saves their work, not
/// only their copy. A trade also starts loading its maker's order record while the engine
/// goes on matching (a resting order's record is usually cold by the time it fills; its
/// report stalled on it).
struct OrderEvents<'a, O> {
    events: &'a mut Vec<Event>,
    orders: &'a Orders,
    _out: std::marker::PhantomData<O>,
}

impl<O: Outputs> EventSink for OrderEvents<'_, O> {
    const LEVELS: bool = O::MARKET_DATA;
    #[inline(always)]
    fn on_event(&mut self, event: &Event) {
        if let Event::Trade { maker_id, .. } = event {
            if let Some(s) = self.orders.live.get(*maker_id) {
                engine::hint::prefetch_all(&self.orders.slab[s as usize]);
            }
        }
        self.events.push(*event);
    }
}

/// The request whose events are being turned into outputs.
struct Ctx<'a> {
    who: Principal,
    exec_n: u32,
    /// The request's client order ids (borrowed from the input: not copied).
    cl_ord_id: &'a ClOrdId,
    orig_cl_ord_id: &'a ClOrdId,
    kind: CtxKind,
    order: Option<&'a NewOrder>,
    mass_count: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum CtxKind {
    New,
    Cancel,
    Replace,
    Mass,
    Status,
    /// Canceling a disconnected originator's orders.
    Disconnect,
    /// Expiring DAY orders at the end of the trading day.
    DayEnd,
}

pub struct Exchange {
    cfg: Arc<Config>,
    engine: Engine,
    orders: Orders,
    /// Every remembered client order id in the order it was first used, indexed by
    /// (originator, ClOrdID); the snapshot stores the list (already in a deterministic order).
    cl: ClIndex,
    /// The pages of the large tables still to fault in (`Backing::Background`; empty
    /// otherwise), taken by [`Exchange::take_populate`].
    populate: engine::hint::Populate,
    next_order_id: OrderId,
    /// The next end of the trading day (ns since the epoch): `u64::MAX` if there is none, 0
    /// before the first input.
    next_day_end_ns: u64,
    /// While the market is closed: when it opens (ns since the epoch); 0 while it is open.
    closed_until_ns: u64,
    last_seq: u64,
    /// Reports numbered so far for input `last_seq` (several inputs may share a sequence
    /// number: an edge's record that delivers messages which waited behind a gap).
    exec_n: u32,
    events: Vec<Event>,
    pub stats: Stats,
    /// When set, every engine event is also appended here (for `journal dump`).
    pub event_log: Option<Vec<Event>>,
    /// ClOrdID hashes of the input being applied, computed ahead (`apply_prehashed`); zero
    /// (not computed) outside it.
    pre: ClHashes,
    /// Since `begin_resolving`: the input at which the exchange stopped taking answers from
    /// the resolver before the end (`cl_find`), if it did.
    resolve_fell_back: Option<u64>,
    /// The first checkpoint this exchange disagreed with (`Input::Checkpoint`).
    divergence: Option<String>,
    /// `CL_ORD_IDS_MAX` (smaller in tests).
    cl_max: usize,
    /// Open orders per firm and account, against their limits.
    open: OpenOrders,
    /// Mass cancels (and cancels on disconnect) with order ids left, oldest request first
    /// (`Input::Continue`).
    pending: VecDeque<PendingMass>,
}

fn engine_config(cfg: &Config) -> EngineConfig {
    let d = EngineConfig::default();
    EngineConfig {
        orders_max: cfg.orders_max,
        ids_direct: (cfg.orders_max * 4).min(d.ids_direct),
        ..d
    }
}

impl Exchange {
    /// An empty exchange, its large tables `Backing::Resident`.
    pub fn new(cfg: Arc<Config>) -> Exchange {
        Self::with_backing(cfg, Backing::Resident)
    }

    pub fn with_backing(cfg: Arc<Config>, backing: Backing) -> Exchange {
        let engine = Engine::new(&cfg.instruments, engine_config(&cfg));
        let mut populate = engine::hint::Populate::default();
        let cl = ClIndex::new(backing, &mut populate);
        let orders = Orders::new(backing, &mut populate);
        let open = OpenOrders::new(&cfg);
        Exchange {
            open,
            pending: VecDeque::new(),
            cfg,
            engine,
            orders,
            cl,
            populate,
            next_order_id: 1,
            next_day_end_ns: 0,
            closed_until_ns: 0,
            last_seq: 0,
            exec_n: 0,
            events: Vec::with_capacity(64),
            stats: Stats::default(),
            event_log: None,
            pre: ClHashes::default(),
            resolve_fell_back: None,
            divergence: None,
            cl_max: CL_ORD_IDS_MAX,
        }
    }

    /// The plan that faults in the pages of this exchange's large tables, for an exchange
    /// made with `Backing::Background` (empty otherwise, and on a second call). Run it while
    /// the exchange is alive, on another thread (recovery does, while it applies records).
    pub fn take_populate(&mut self) -> engine::hint::Populate {
        std::mem::take(&mut self.populate)
    }

    pub fn config(&self) -> &Arc<Config> {
        &self.cfg
    }

    /// Sequence number of the last applied input (0 = none).
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// When the trading day next ends (ns since the epoch; `u64::MAX`: never, 0: not known
    /// before the first input). An input stamped at or after it ends the day, so a server
    /// sends a `Tick` then even when nothing else happens.
    pub fn next_day_end_ns(&self) -> u64 {
        self.next_day_end_ns
    }

    /// Whether the market takes new orders now (as of the last input applied).
    pub fn trading_status(&self) -> TradingStatus {
        if self.closed_until_ns == 0 {
            TradingStatus::Open
        } else {
            TradingStatus::Closed
        }
    }

    /// While the market is closed: when it opens (ns since the epoch).
    pub fn closed_until_ns(&self) -> Option<u64> {
        (self.closed_until_ns != 0).then_some(self.closed_until_ns)
    }

    /// The next time (ns since the epoch) an input changes the trading day: its end, or the
    /// next day's start while the market is closed. A server journals a `Tick` once the clock
    /// reaches it, even when nothing else happens.
    pub fn next_day_change_ns(&self) -> u64 {
        match self.closed_until_ns {
            0 => self.next_day_end_ns,
            open => open.min(self.next_day_end_ns),
        }
    }

    /// The checkpoint of the current state (`Input::Checkpoint` checks one).
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            next_order_id: self.next_order_id,
            next_trade_id: self.engine.next_trade_id(),
        }
    }

    /// The first checkpoint this exchange's state disagreed with when it was applied: the
    /// replay diverged from the run that wrote the journal (another build or configuration).
    pub fn divergence(&self) -> Option<&str> {
        self.divergence.as_deref()
    }

    /// Number of live orders.
    pub fn live_orders(&self) -> usize {
        self.orders.live_records().filter(|o| o.is_live()).count()
    }

    /// Open (live) orders of firm `firm`.
    pub fn open_orders_of_firm(&self, firm: u16) -> u64 {
        self.open.firm(firm)
    }

    /// Open (live) orders of `account`.
    pub fn open_orders_of_account(&self, account: AccountId) -> u64 {
        self.open.account(account)
    }

    /// Whether a mass cancel has orders left: a server applies `Input::Continue` until it
    /// has none.
    pub fn has_pending_work(&self) -> bool {
        !self.pending.is_empty()
    }

    /// The originator of the oldest pending mass cancel (whose reports the next `Continue`
    /// makes first): a server may pace continuations on its unsent output.
    pub fn pending_work_originator(&self) -> Option<u16> {
        self.pending.front().map(|p| p.who.originator)
    }

    /// Order ids the pending mass cancels have still to look at (live or not).
    pub fn pending_work_ids(&self) -> u64 {
        self.pending.iter().map(|p| p.end - p.next).sum()
    }

    /// The record of order `id`, if remembered (live, or among the last finished).
    pub fn order(&self, id: OrderId) -> Option<&OrderRecord> {
        self.orders.get(&id)
    }

    /// The order `originator` used client order id `cl` for, if remembered.
    pub fn order_of(&self, originator: u16, cl: &[u8]) -> Option<OrderId> {
        self.cl.get(originator, cl)
    }

    /// The hasher whose hashes `apply_prehashed` takes (this exchange's seed: another
    /// exchange's hashes would not match).
    pub fn cl_hasher(&self) -> ClHasher {
        self.cl.seed.clone()
    }

    /// A hint for a caller that knows the inputs ahead: starts loading the index slots of
    /// `originator`'s client order id `cl` (and `orig`, a cancel's or replace's), so the
    /// lookups in `apply` find them in the cache. Changes nothing; skipping it changes nothing.
    /// `hashes` are their `ClHasher` hashes (zeros: computed here).
    #[inline]
    pub fn prefetch(
        &self,
        originator: u16,
        cl: &ClOrdId,
        orig: Option<&ClOrdId>,
        hashes: &ClHashes,
    ) {
        if let Some(orig) = orig {
            self.cl.prefetch(originator, orig.as_bytes(), hashes.orig);
        }
        self.cl.prefetch(originator, cl.as_bytes(), hashes.cl);
    }

    /// The second step of `prefetch`, for the same input a little later (the event loop: after
    /// the journal commit, before applying the batch): the index slots are in the cache by then,
    /// so this follows them and starts loading the remembered ClOrdID a cancel or replace will
    /// compare (random in a ring of up to 1M entries). Changes nothing.
    #[inline]
    pub fn prefetch_entries(&self, originator: u16, orig: &ClOrdId, hashes: &ClHashes) {
        self.cl
            .prefetch_entries(originator, orig.as_bytes(), hashes.orig);
    }

    /// For a full replay into this exchange, while it is empty: the resolver that answers its
    /// ClOrdID lookups ahead, on the decoding thread (`resolve`'s module docs), fed every
    /// record in order; this exchange then takes its answers through `apply_resolved` until
    /// `end_resolving`. `None` if the exchange is not empty (a replay onto a snapshot keeps its
    /// index as the live loop does).
    pub fn begin_resolving(&mut self) -> Option<ClResolver> {
        self.begin_resolving_with(resolve::GEN_CANDIDATES)
    }

    /// `begin_resolving` with a resolver of `per_gen` candidates per generation (a power of
    /// two; tests use small ones).
    pub fn begin_resolving_with(&mut self, per_gen: u64) -> Option<ClResolver> {
        if self.last_seq != 0 || self.cl.len() != 0 || self.cl.resolved.is_some() {
            return None;
        }
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        self.cl.resolved = Some(Box::new(resolve::Resolved::new(stop.clone(), per_gen)));
        Some(ClResolver::new(self.cl.seed.clone(), stop, per_gen))
    }

    /// Stops taking ClOrdID answers from a resolver (`begin_resolving`) and builds the index
    /// from the ring. Returns what became of resolving, for the recovery log (`None`: it was
    /// not begun).
    pub fn end_resolving(&mut self) -> Option<String> {
        match (self.cl.stop_resolving(), self.resolve_fell_back.take()) {
            (Some(n), _) => Some(format!(
                "{n} ClOrdID lookups answered on the decoding thread"
            )),
            (None, Some(seq)) => Some(format!(
                "ClOrdID lookups answered on the decoding thread until record {seq}, then from the index"
            )),
            (None, None) => None,
        }
    }

    /// Starts loading what `apply_resolved` will read for `hint`'s record (a few ahead).
    #[inline]
    pub fn prefetch_hinted(&self, hint: &ClHint) {
        self.cl.prefetch_hinted(hint);
    }

    /// The next report number of record `seq` (for an answer an edge makes itself, so that
    /// execution ids stay unique within the record).
    pub fn next_exec_n(&mut self, seq: u64) -> u32 {
        self.enter(seq);
        let n = self.exec_n;
        self.exec_n += 1;
        n
    }

    /// Moves to record `seq` (equal: another input of the same record).
    #[inline]
    fn enter(&mut self, seq: u64) {
        assert!(
            seq >= self.last_seq,
            "input {seq} applied after {}",
            self.last_seq
        );
        if seq != self.last_seq {
            self.last_seq = seq;
            self.exec_n = 0;
        }
    }

    /// Applies input `seq` (stamped `ts_ns`), writing what it caused to `out`. Inputs must
    /// come in sequence order; gaps are allowed (an edge's records that are not exchange
    /// inputs), and so are several inputs of one record.
    pub fn apply<O: Outputs>(&mut self, seq: u64, ts_ns: u64, input: &Input<'_>, out: &mut O) {
        self.enter(seq);
        if ts_ns >= self.next_day_end_ns {
            self.end_trading_day(ts_ns, out);
        }
        if self.closed_until_ns != 0 && ts_ns >= self.closed_until_ns {
            self.closed_until_ns = 0;
            out.output(&Output::TradingStatus(TradingStatus::Open));
        }
        match *input {
            Input::New { who, order } => self.on_new(who, order, out),
            Input::Cancel {
                who,
                cl_ord_id,
                orig_cl_ord_id,
            } => self.on_cancel(who, cl_ord_id, orig_cl_ord_id, None, out),
            Input::Replace { who, replace } => self.on_cancel(
                who,
                &replace.cl_ord_id,
                &replace.orig_cl_ord_id,
                Some(replace),
                out,
            ),
            Input::MassCancel {
                who,
                cl_ord_id,
                symbol,
                side,
            } => self.on_mass_cancel(seq, who, cl_ord_id, symbol, side, out),
            Input::Status { who, cl_ord_id } => self.on_status(who, cl_ord_id, out),
            Input::Disconnected { who } => self.on_disconnected(seq, who, out),
            // Time passing: the end of the trading day, checked above.
            Input::Tick => {}
            Input::Continue => self.on_continue(out),
            Input::Checkpoint(cp) => self.on_checkpoint(seq, cp),
        }
    }

    /// The first input at or after `next_day_end_ns`: DAY orders expire and the market
    /// closes (it opens again at the next day's start, at once without one: `apply`). The
    /// first input of all only finds out when the day ends, and whether the market is closed.
    #[cold]
    fn end_trading_day<O: Outputs>(&mut self, ts_ns: u64, out: &mut O) {
        let first = self.next_day_end_ns == 0;
        let Some(end) = self.cfg.trading_day_end_ns else {
            self.next_day_end_ns = u64::MAX;
            return;
        };
        // The end of day that passed: the scheduled one, or for the first input the last one
        // at or before it.
        let ended = if first {
            next_at(ts_ns, end).saturating_sub(NS_PER_DAY)
        } else {
            self.next_day_end_ns
        };
        self.next_day_end_ns = next_at(ts_ns, end);
        self.closed_until_ns = match self.cfg.trading_day_start_ns {
            Some(start) => next_at(ended, start),
            None => ended,
        };
        if first {
            if self.closed_until_ns <= ts_ns {
                self.closed_until_ns = 0;
            }
            return;
        }
        let mut ctx = Ctx {
            who: Principal::default(),
            exec_n: self.exec_n,
            cl_ord_id: &ClOrdId::EMPTY,
            orig_cl_ord_id: &ClOrdId::EMPTY,
            kind: CtxKind::DayEnd,
            order: None,
            mass_count: 0,
        };
        self.run(&Command::ExpireDay { symbol: None }, &mut ctx, out);
        self.exec_n = ctx.exec_n;
        out.output(&Output::TradingStatus(TradingStatus::Closed));
    }

    /// Refused while the market is closed: the time it opens again.
    #[inline]
    fn closed(&self) -> Option<Reject> {
        if self.closed_until_ns == 0 {
            return None;
        }
        let opens_at_s = (self.closed_until_ns % NS_PER_DAY / 1_000_000_000) as u32;
        Some(Reject::MarketClosed { opens_at_s })
    }

    /// The originator's session ended: if it asked for it, each of its live orders is
    /// canceled, in order id order (the reports wait in its session for a resend), in steps
    /// as a mass cancel's (`mass`; its range starts at the firm's accounts' first live order:
    /// an originator's orders are on its firm's accounts), with no report at the end.
    fn on_disconnected<O: Outputs>(&mut self, seq: u64, who: Principal, out: &mut O) {
        let ix = who.originator;
        if !self
            .cfg
            .cancel_on_disconnect
            .get(ix as usize)
            .copied()
            .unwrap_or(false)
        {
            return;
        }
        let p = PendingMass {
            who,
            disconnect: true,
            cl_ord_id: ClOrdId::EMPTY,
            symbol: None,
            side: None,
            request_seq: seq,
            next: 0,
            end: 0,
            count: 0,
        };
        self.start_mass(p, out);
    }

    /// `apply` with the input's ClOrdID hashes computed ahead: each of `hashes` must be that
    /// of `self.cl_hasher()` for the input's ClOrdID and OrigClOrdID, or 0 (not computed; then
    /// computed here). The outcome is exactly that of `apply`.
    #[inline]
    pub fn apply_prehashed<O: Outputs>(
        &mut self,
        seq: u64,
        ts_ns: u64,
        input: &Input<'_>,
        hashes: ClHashes,
        out: &mut O,
    ) {
        #[cfg(debug_assertions)]
        self.check_hashes(seq, input, &hashes);
        self.pre = hashes;
        self.apply(seq, ts_ns, input, out);
        self.pre = ClHashes::default();
    }

    #[cfg(debug_assertions)]
    fn check_hashes(&self, seq: u64, input: &Input<'_>, hashes: &ClHashes) {
        let (cl, orig) = match *input {
            Input::New { order, .. } => (Some(&order.cl_ord_id), None),
            Input::Cancel {
                cl_ord_id,
                orig_cl_ord_id,
                ..
            } => (Some(cl_ord_id), Some(orig_cl_ord_id)),
            Input::Replace { replace, .. } => {
                (Some(&replace.cl_ord_id), Some(&replace.orig_cl_ord_id))
            }
            _ => (None, None),
        };
        let ok = |h: u64, c: Option<&ClOrdId>| {
            h == 0 || c.is_some_and(|c| self.cl.seed.hash(c.as_bytes()) == h)
        };
        assert!(
            ok(hashes.cl, cl) && ok(hashes.orig, orig),
            "input {seq}: ClOrdID hashes {hashes:?} are not this exchange's"
        );
    }

    /// `apply_prehashed` with the resolver's hint for this input (`begin_resolving`). The
    /// outcome is exactly that of `apply`.
    #[inline]
    pub fn apply_resolved<O: Outputs>(
        &mut self,
        seq: u64,
        ts_ns: u64,
        input: &Input<'_>,
        hashes: ClHashes,
        hint: &ClHint,
        out: &mut O,
    ) {
        self.cl.begin_hinted(hint);
        self.apply_prehashed(seq, ts_ns, input, hashes, out);
        self.cl.end_hinted();
    }

    /// A resolved input the edge did not pass on (its session refused it, or kept it behind a
    /// gap): the resolver's candidate for it is accounted for as not remembered. Call it
    /// instead of `apply_resolved` for a record whose hint says it is a candidate.
    pub fn skip_resolved(&mut self, hint: &ClHint) {
        self.cl.begin_hinted(hint);
        self.cl.end_hinted();
    }

    /// Stops taking a resolver's answers from here on (an edge applies a request outside its
    /// own record: one that waited behind a gap, which the resolver numbered where it was
    /// journaled). Lookups go to the index, built now from the ring; the outcome is the same.
    pub fn stop_resolving_here(&mut self) {
        if self.cl.resolved.is_some() {
            self.cl.stop_resolving();
            self.resolve_fell_back = Some(self.last_seq);
        }
    }

    /// The order `originator` used `cl` (whose `ClIndex::hash` is `h`) for, if remembered:
    /// from the input's hint while resolving (`orig`: the OrigClOrdID's answer), else (or if
    /// the hint cannot say) from the index.
    #[inline]
    fn cl_find(&mut self, orig: bool, h: u64, originator: u16, cl: &[u8]) -> Option<OrderId> {
        if self.cl.resolved.is_some() {
            match self.cl.resolve(orig, h, originator, cl) {
                Some(r) => return r,
                None => {
                    self.cl.stop_resolving();
                    self.resolve_fell_back = Some(self.last_seq);
                }
            }
        }
        self.cl.get_hashed(h, originator, cl)
    }

    /// Checks checkpoint input `seq` against the state.
    fn on_checkpoint(&mut self, seq: u64, cp: &Checkpoint) {
        if self.divergence.is_some() {
            return;
        }
        let now = self.checkpoint();
        if now != *cp {
            self.divergence = Some(format!(
                "journal record {seq}: the exchange would give the next order and trade ids \
                 {} and {}, but the run that wrote the journal gave {} and {}: this replay \
                 diverged from that run (another version or configuration)",
                now.next_order_id, now.next_trade_id, cp.next_order_id, cp.next_trade_id
            ));
        }
    }

    fn firm_account(&self, who: Principal, requested: Option<AccountId>) -> Option<AccountId> {
        let accounts = self.cfg.firms.get(who.firm as usize)?;
        match requested {
            None => accounts.first().copied(),
            Some(a) if accounts.contains(&a) => Some(a),
            Some(_) => None,
        }
    }

    fn on_new<O: Outputs>(&mut self, who: Principal, n: &NewOrder, out: &mut O) {
        self.stats.orders += 1;
        let reject = |this: &mut Exchange, reason: Reject, out: &mut O| {
            let n_ = this.exec_n;
            this.exec_n += 1;
            out.output(&Output::NewRejected {
                to: who.originator,
                order: n,
                reason,
                n: n_,
            })
        };
        if n.symbol as usize >= self.cfg.instruments.len() {
            // Only a journal written with a longer instrument list can say this.
            return reject(self, Reject::UnknownSymbol, out);
        }
        if let Some(closed) = self.closed() {
            return reject(self, closed, out);
        }
        let ix = who.originator;
        let cl_hash = self.cl.hash_pre(ix, n.cl_ord_id.as_bytes(), self.pre.cl);
        if self
            .cl_find(false, cl_hash, ix, n.cl_ord_id.as_bytes())
            .is_some()
        {
            return reject(self, Reject::DuplicateClOrdId, out);
        }
        let Some(account) = self.firm_account(who, n.account) else {
            return reject(self, Reject::UnknownAccount, out);
        };
        // Only an order that may rest counts against the open-order limits (IOC, FOK and
        // market orders never rest).
        let may_rest = n.ord_type == OrdType::Limit
            && matches!(n.tif, types::TimeInForce::Day | types::TimeInForce::Gtc);
        if may_rest {
            if let Some(limit) = self.open.check(account) {
                return reject(self, limit, out);
            }
        }
        let id = self.next_order_id;
        self.next_order_id += 1;
        let cl = &n.cl_ord_id;
        self.remember_cl_ord_id(cl_hash, ix, cl, id);
        let price = if n.ord_type == OrdType::Market {
            0
        } else {
            n.price
        };
        let cmd = Command::New(types::NewOrder {
            id,
            account,
            symbol: n.symbol,
            side: n.side,
            ord_type: n.ord_type,
            tif: n.tif,
            price,
            qty: n.qty,
            post_only: n.post_only,
            stp: StpMode::CancelNewest,
        });
        // Remember the order's static fields before the engine runs: its events refer to it.
        self.orders.insert_new_live(id, |o| {
            o.owner = ix;
            o.account = account;
            o.symbol = n.symbol;
            o.side = n.side;
            o.ord_type = n.ord_type;
            o.tif = n.tif;
            o.price = price;
            o.cl_ord_id = *cl;
            o.order_qty = n.qty;
            o.cum_qty = 0;
            o.leaves_qty = n.qty;
            o.notional = 0;
            o.state = OrderState::Live;
        });
        self.open.add(account, id);
        let mut ctx = Ctx {
            who,
            exec_n: self.exec_n,
            cl_ord_id: cl,
            orig_cl_ord_id: &ClOrdId::EMPTY,
            kind: CtxKind::New,
            order: Some(n),
            mass_count: 0,
        };
        self.run(&cmd, &mut ctx, out);
        self.exec_n = ctx.exec_n;
    }

    fn on_cancel<O: Outputs>(
        &mut self,
        who: Principal,
        cl_ord_id: &ClOrdId,
        orig_cl_ord_id: &ClOrdId,
        replace: Option<&Replace>,
        out: &mut O,
    ) {
        let ix = who.originator;
        let is_replace = replace.is_some();
        let reject = |reason: Reject, order: Option<(OrderId, OrderStatus)>, out: &mut O| {
            out.output(&Output::CancelRejected {
                to: ix,
                cl_ord_id,
                orig_cl_ord_id,
                replace: is_replace,
                reason,
                order,
            })
        };
        let orig_hash = self
            .cl
            .hash_pre(ix, orig_cl_ord_id.as_bytes(), self.pre.orig);
        let found = self.cl_find(true, orig_hash, ix, orig_cl_ord_id.as_bytes());
        let live = found
            .and_then(|id| self.orders.live(&id).map(|o| (id, o)))
            .filter(|(_, o)| o.is_live() && o.owner == ix)
            .map(|(id, o)| (id, o.status(), o.account, o.symbol, o.cum_qty, o.ord_type));
        let Some((id, status, account, symbol, cum, ord_type)) = live else {
            return reject(Reject::UnknownOrder, None, out);
        };
        let cl_hash = self.cl.hash_pre(ix, cl_ord_id.as_bytes(), self.pre.cl);
        if self
            .cl_find(false, cl_hash, ix, cl_ord_id.as_bytes())
            .is_some()
        {
            return reject(Reject::DuplicateClOrdId, Some((id, status)), out);
        }
        let cmd = match replace {
            None => Command::Cancel {
                id,
                account,
                symbol,
            },
            Some(r) => {
                let reason = if let Some(closed) = self.closed() {
                    Some(closed)
                } else if r.symbol != symbol {
                    Some(Reject::ReplaceSymbolDiffers)
                } else if r.qty <= cum {
                    Some(Reject::ReplaceQtyAtOrBelowFilled)
                } else if ord_type == OrdType::Market {
                    Some(Reject::ReplaceMarketOrder)
                } else {
                    None
                };
                if let Some(reason) = reason {
                    return reject(reason, Some((id, status)), out);
                }
                Command::Replace {
                    id,
                    account,
                    symbol,
                    price: r.price,
                    qty: r.qty - cum,
                }
            }
        };
        self.remember_cl_ord_id(cl_hash, ix, cl_ord_id, id);
        let mut ctx = Ctx {
            who,
            exec_n: self.exec_n,
            cl_ord_id,
            orig_cl_ord_id,
            kind: if is_replace {
                CtxKind::Replace
            } else {
                CtxKind::Cancel
            },
            order: None,
            mass_count: 0,
        };
        self.run(&cmd, &mut ctx, out);
        self.exec_n = ctx.exec_n;
    }

    /// A mass cancel: records what it covers (`mass` module), takes its first step and
    /// leaves the rest pending (or ends at once if it fits in a step).
    fn on_mass_cancel<O: Outputs>(
        &mut self,
        seq: u64,
        who: Principal,
        cl_ord_id: &ClOrdId,
        symbol: Option<u32>,
        side: Option<Side>,
        out: &mut O,
    ) {
        let p = PendingMass {
            who,
            disconnect: false,
            cl_ord_id: *cl_ord_id,
            symbol,
            side,
            request_seq: seq,
            next: 0,
            end: 0,
            count: 0,
        };
        self.start_mass(p, out);
    }

    /// Sets `p`'s range (from the lowest id a live order of its firm's accounts may have to
    /// the next order id), takes its first step and keeps it pending if it did not end.
    fn start_mass<O: Outputs>(&mut self, mut p: PendingMass, out: &mut O) {
        p.end = self.next_order_id;
        p.next = self
            .cfg
            .firms
            .get(p.who.firm as usize)
            .and_then(|accounts| self.open.first_live_of(accounts))
            .map_or(p.end, |first| first.min(p.end));
        if !self.mass_step(&mut p, out) {
            self.pending.push_back(p);
        }
    }

    /// One step of every pending mass cancel, oldest request first.
    fn on_continue<O: Outputs>(&mut self, out: &mut O) {
        let mut pending = std::mem::take(&mut self.pending);
        pending.retain_mut(|p| !self.mass_step(p, out));
        self.pending = pending;
    }

    /// Looks at the next `mass_cancel_scan` order ids of `p`, in order, and cancels the live
    /// orders among them that it covers, stopping before the one past `mass_cancel_chunk`;
    /// at the end of its range says the mass cancel finished. True if it did.
    fn mass_step<O: Outputs>(&mut self, p: &mut PendingMass, out: &mut O) -> bool {
        /// How many ids ahead the live table's buckets are prefetched (a lookup of an id
        /// that is not live would otherwise wait for memory every time).
        const AHEAD: u64 = 16;
        let chunk = self.cfg.mass_cancel_chunk.max(1) as u64;
        let scan_end = p
            .next
            .saturating_add(self.cfg.mass_cancel_scan.max(1) as u64)
            .min(p.end);
        // The config is shared: a reference count, not a copy of the account list.
        let cfg = self.cfg.clone();
        let accounts: &[AccountId] = cfg.firms.get(p.who.firm as usize).map_or(&[], |a| a);
        let mut ctx = Ctx {
            who: p.who,
            exec_n: self.exec_n,
            cl_ord_id: &ClOrdId::EMPTY,
            orig_cl_ord_id: &ClOrdId::EMPTY,
            kind: if p.disconnect {
                CtxKind::Disconnect
            } else {
                CtxKind::Mass
            },
            order: None,
            mass_count: 0,
        };
        let mut id = p.next;
        for ahead in id..(id + AHEAD).min(scan_end) {
            self.orders.live.prefetch(ahead);
        }
        while id < scan_end {
            if id + AHEAD < scan_end {
                self.orders.live.prefetch(id + AHEAD);
            }
            if let Some(slot) = self.orders.live.get(id) {
                let o = &self.orders.slab[slot as usize];
                let covered = o.is_live()
                    && if p.disconnect {
                        o.owner == p.who.originator
                    } else {
                        p.symbol.is_none_or(|s| s == o.symbol)
                            && p.side.is_none_or(|s| s == o.side)
                            && accounts.contains(&o.account)
                    };
                if covered {
                    if ctx.mass_count == chunk {
                        break;
                    }
                    let cmd = Command::Cancel {
                        id,
                        account: o.account,
                        symbol: o.symbol,
                    };
                    self.run(&cmd, &mut ctx, out);
                }
            }
            id += 1;
        }
        self.exec_n = ctx.exec_n;
        p.next = id;
        p.count += ctx.mass_count;
        if p.next < p.end {
            return false;
        }
        if !p.disconnect && p.symbol.is_none() && p.side.is_none() {
            // All its accounts' orders before `end` are gone: later requests start there.
            self.open.raise_first_live(accounts, p.end);
        }
        if !p.disconnect {
            out.output(&Output::MassCanceled {
                to: p.who.originator,
                cl_ord_id: &p.cl_ord_id,
                symbol: p.symbol,
                side: p.side,
                request_seq: p.request_seq,
                count: p.count,
            });
        }
        true
    }

    fn on_status<O: Outputs>(&mut self, who: Principal, cl_ord_id: &ClOrdId, out: &mut O) {
        let ix = who.originator;
        let h = self.cl.hash(ix, cl_ord_id.as_bytes());
        let id = self.cl_find(false, h, ix, cl_ord_id.as_bytes());
        let Some(id) = id.filter(|id| self.orders.get(id).is_some()) else {
            let n = self.exec_n;
            self.exec_n += 1;
            return out.output(&Output::StatusUnknown {
                to: ix,
                cl_ord_id,
                n,
            });
        };
        let mut ctx = Ctx {
            who,
            exec_n: self.exec_n,
            cl_ord_id,
            orig_cl_ord_id: &ClOrdId::EMPTY,
            kind: CtxKind::Status,
            order: None,
            mass_count: 0,
        };
        self.report(&mut ctx, id, ReportKind::Status, out);
        self.exec_n = ctx.exec_n;
    }

    /// Applies one engine command and turns its events into outputs.
    fn run<O: Outputs>(&mut self, cmd: &Command, ctx: &mut Ctx<'_>, out: &mut O) {
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        if let Some(log) = &mut self.event_log {
            self.engine.apply(cmd, &mut events);
            log.extend_from_slice(&events);
        } else {
            let mut sink = OrderEvents::<O> {
                events: &mut events,
                orders: &self.orders,
                _out: std::marker::PhantomData,
            };
            self.engine.apply(cmd, &mut sink);
        }
        for ev in &events {
            self.on_event(ev, ctx, out);
        }
        self.events = events;
    }

    fn on_event<O: Outputs>(&mut self, ev: &Event, ctx: &mut Ctx<'_>, out: &mut O) {
        match *ev {
            Event::Accepted { id, .. } => self.report(ctx, id, ReportKind::New, out),
            Event::Rejected { id, reason } => {
                let reason = Reject::from_engine(reason);
                match ctx.kind {
                    CtxKind::New => {
                        if let Some(o) = self.orders.remove_live(&id) {
                            self.open.remove(o.account);
                        }
                        if let Some(order) = ctx.order {
                            let n = ctx.exec_n;
                            ctx.exec_n += 1;
                            out.output(&Output::NewRejected {
                                to: ctx.who.originator,
                                order,
                                reason,
                                n,
                            });
                        }
                    }
                    CtxKind::Cancel | CtxKind::Replace => {
                        let status = self.orders.get(&id).map(|o| (id, o.status()));
                        out.output(&Output::CancelRejected {
                            to: ctx.who.originator,
                            cl_ord_id: ctx.cl_ord_id,
                            orig_cl_ord_id: ctx.orig_cl_ord_id,
                            replace: ctx.kind == CtxKind::Replace,
                            reason,
                            order: status,
                        });
                    }
                    CtxKind::Mass | CtxKind::Status | CtxKind::Disconnect | CtxKind::DayEnd => {}
                }
            }
            Event::Trade {
                price,
                qty,
                maker_id,
                taker_id,
                maker_leaves,
                taker_leaves,
                ..
            } => {
                self.stats.trades += 1;
                if O::MARKET_DATA {
                    out.output(&Output::Market(ev));
                }
                for (id, leaves) in [(maker_id, maker_leaves), (taker_id, taker_leaves)] {
                    // Both sides are live orders: one lookup serves the update, the report
                    // and the retirement.
                    let Some(slot) = self.orders.slot(id) else {
                        continue;
                    };
                    let o = &mut self.orders.slab[slot as usize];
                    o.cum_qty += qty;
                    o.leaves_qty = leaves;
                    o.notional += price as i128 * qty as i128;
                    if leaves == 0 {
                        o.state = OrderState::Filled;
                        let account = o.account;
                        self.open.remove(account);
                    }
                    self.report_at(ctx, id, slot, ReportKind::Fill { price, qty }, out);
                    if leaves == 0 {
                        self.orders.retire(id);
                    }
                }
            }
            Event::Canceled { id, reason, .. } => {
                if matches!(ctx.kind, CtxKind::Mass | CtxKind::Disconnect) {
                    ctx.mass_count += 1;
                }
                let Some(slot) = self.orders.slot(id) else {
                    return;
                };
                let o = &mut self.orders.slab[slot as usize];
                o.leaves_qty = 0;
                o.state = OrderState::Canceled;
                let account = o.account;
                self.open.remove(account);
                let reason = match ctx.kind {
                    CtxKind::Disconnect => CancelReason::Disconnect,
                    _ => reason,
                };
                self.report_at(ctx, id, slot, ReportKind::Canceled(reason), out);
                self.orders.retire(id);
            }
            Event::Replaced { id, price, qty, .. } => {
                let Some(slot) = self.orders.slot(id) else {
                    return;
                };
                let o = &mut self.orders.slab[slot as usize];
                o.price = price;
                o.leaves_qty = qty;
                o.order_qty = o.cum_qty + qty;
                o.cl_ord_id = *ctx.cl_ord_id;
                self.report_at(ctx, id, slot, ReportKind::Replaced, out);
            }
            Event::Level { .. } => {
                if O::MARKET_DATA {
                    out.output(&Output::Market(ev));
                }
            }
            Event::MassCanceled { .. } => {}
        }
    }

    /// Remembers that `ix` used `cl_ord_id` (whose `ClIndex::hash` is `hash`) for order `id`,
    /// forgetting finished orders' ClOrdIDs beyond `CL_ORD_IDS_MAX`.
    fn remember_cl_ord_id(&mut self, hash: u64, ix: u16, cl_ord_id: &ClOrdId, id: OrderId) {
        self.cl.push_hashed(hash, ix, cl_ord_id.as_bytes(), id);
        if self.cl.len() > self.cl_max {
            self.cl.prefetch_rotation();
        }
        // Forget the oldest ClOrdIDs but live orders' current ones, which go to the back (at
        // most `ROTATIONS_MAX` of them per call).
        let mut rotations = ROTATIONS_MAX;
        while self.cl.len() > self.cl_max && rotations > 0 {
            rotations -= 1;
            let orders = &self.orders;
            self.cl.rotate_or_forget(|oid, cl| {
                orders
                    .live(&oid)
                    .is_some_and(|o| o.is_live() && eq_short(o.cl_ord_id.as_bytes(), cl))
            });
        }
    }

    /// A report about order `id` to its owner (nothing if it is not remembered).
    #[inline]
    fn report<O: Outputs>(
        &mut self,
        ctx: &mut Ctx<'_>,
        id: OrderId,
        kind: ReportKind,
        out: &mut O,
    ) {
        if let Some(slot) = self.orders.slot(id) {
            self.report_at(ctx, id, slot, kind, out);
        }
    }

    /// `report` for order `id`, whose record is at `slot`. Whether the sink wants it is asked
    /// inline (a bounded replay wants few: no call at all for the rest); the report itself is
    /// built out of line.
    #[inline(always)]
    fn report_at<O: Outputs>(
        &mut self,
        ctx: &mut Ctx<'_>,
        id: OrderId,
        slot: u32,
        kind: ReportKind,
        out: &mut O,
    ) {
        let owner = self.orders.slab[slot as usize].owner;
        self.stats.reports += 1;
        if out.skip_report(owner) {
            ctx.exec_n += 1;
            return;
        }
        self.report_built(ctx, id, slot, kind, out);
    }

    #[inline(never)]
    fn report_built<O: Outputs>(
        &mut self,
        ctx: &mut Ctx<'_>,
        id: OrderId,
        slot: u32,
        kind: ReportKind,
        out: &mut O,
    ) {
        let o = &self.orders.slab[slot as usize];
        // The requester's ClOrdID on its own cancel/replace/status; the order's own otherwise.
        let own_request = o.owner == ctx.who.originator
            && matches!(
                ctx.kind,
                CtxKind::Cancel | CtxKind::Replace | CtxKind::Status
            )
            && matches!(
                kind,
                ReportKind::Canceled(_) | ReportKind::Replaced | ReportKind::Status
            );
        let (cl, orig): (&[u8], Option<&[u8]>) = if own_request {
            let orig = (!ctx.orig_cl_ord_id.is_empty()).then(|| ctx.orig_cl_ord_id.as_bytes());
            (ctx.cl_ord_id.as_bytes(), orig)
        } else {
            (o.cl_ord_id.as_bytes(), None)
        };
        let r = Report {
            id,
            order: o,
            n: ctx.exec_n,
            kind,
            cl_ord_id: cl,
            orig_cl_ord_id: orig,
        };
        ctx.exec_n += 1;
        out.report(&r);
    }

    /// A smaller window of remembered ClOrdIDs (tests exercise its turnover).
    #[doc(hidden)]
    pub fn set_cl_window(&mut self, n: usize) {
        self.cl_max = n;
    }

    /// How many client order ids the index holds (tests).
    #[doc(hidden)]
    pub fn cl_len(&self) -> usize {
        self.cl.len()
    }

    /// While resolving: note (ring position, candidate) every `n` remembered ClOrdIDs
    /// instead of every 1,024 (tests exercise the marks).
    #[doc(hidden)]
    pub fn set_resolve_mark_every(&mut self, n: u64) {
        if let Some(r) = self.cl.resolved.as_deref_mut() {
            r.mark_every = n;
        }
    }

    /// (originator, ClOrdID, order) of every remembered client order id, oldest first
    /// (tests compare two exchanges' indexes).
    #[doc(hidden)]
    pub fn cl_entries(&self) -> Vec<(u16, Vec<u8>, OrderId)> {
        self.cl
            .iter()
            .map(|(o, c, id)| (o, c.to_vec(), id))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Open-order limits and chunked mass cancels.
    mod protect;
    use index::CL_ORD_IDS_MAX;
    use orders::{DONE_INDEX_LAG, DONE_ORDERS_MAX};
    use types::{Symbol, TimeInForce};

    /// One output, owned: what a recording `Outputs` keeps.
    #[derive(Clone, Debug, PartialEq, Eq)]
    enum Seen {
        Report {
            id: OrderId,
            kind: ReportKind,
            status: OrderStatus,
            cl: String,
            orig: Option<String>,
            leaves: u64,
            cum: u64,
        },
        NewRejected {
            cl: String,
            reason: Reject,
        },
        CancelRejected {
            cl: String,
            orig: String,
            reason: Reject,
            order: Option<(OrderId, OrderStatus)>,
        },
        MassCanceled {
            count: u64,
        },
        StatusUnknown {
            cl: String,
        },
    }

    #[derive(Default)]
    struct Recorder(Vec<Seen>);

    impl Outputs for Recorder {
        fn output(&mut self, o: &Output<'_>) {
            let s = |b: &[u8]| String::from_utf8(b.to_vec()).expect("UTF-8");
            self.0.push(match *o {
                Output::Report(r) => Seen::Report {
                    id: r.id,
                    kind: r.kind,
                    status: r.order.status(),
                    cl: s(r.cl_ord_id),
                    orig: r.orig_cl_ord_id.map(s),
                    leaves: r.order.leaves_qty,
                    cum: r.order.cum_qty,
                },
                Output::NewRejected { order, reason, .. } => Seen::NewRejected {
                    cl: order.cl_ord_id.to_string(),
                    reason,
                },
                Output::CancelRejected {
                    cl_ord_id,
                    orig_cl_ord_id,
                    reason,
                    order,
                    ..
                } => Seen::CancelRejected {
                    cl: cl_ord_id.to_string(),
                    orig: orig_cl_ord_id.to_string(),
                    reason,
                    order,
                },
                Output::MassCanceled { count, .. } => Seen::MassCanceled { count },
                Output::StatusUnknown { cl_ord_id, .. } => Seen::StatusUnknown {
                    cl: cl_ord_id.to_string(),
                },
                Output::Market(_) | Output::TradingStatus(_) => return,
            });
        }
    }

    const WHO: Principal = Principal {
        originator: 0,
        firm: 0,
    };

    fn config() -> Arc<Config> {
        let inst = |s: &str| Instrument {
            symbol: Symbol::new(s).expect("a symbol"),
            tick: 1,
            lot: 1,
        };
        Arc::new(Config::new(
            vec![inst("ACME"), inst("BOLT")],
            vec![vec![1]],
            1 << 16,
        ))
    }

    /// One originator's requests, applied one input a record.
    struct Driver {
        x: Exchange,
        seq: u64,
    }

    impl Driver {
        fn new(x: Exchange) -> Driver {
            let seq = x.last_seq();
            Driver { x, seq }
        }

        fn apply(&mut self, input: &Input<'_>) -> Vec<Seen> {
            self.seq += 1;
            let mut r = Recorder::default();
            self.x.apply(
                self.seq,
                1_800_000_000_000_000_000 + self.seq,
                input,
                &mut r,
            );
            r.0
        }

        /// A limit order for 5 of instrument 0.
        fn limit(&mut self, cl: &str, side: Side, price: i64, tif: TimeInForce) -> Vec<Seen> {
            let order = NewOrder {
                cl_ord_id: ClOrdId::from(cl),
                side,
                tif,
                price,
                qty: 5,
                ..NewOrder::BLANK
            };
            self.apply(&Input::New {
                who: WHO,
                order: &order,
            })
        }

        fn replace(&mut self, cl: &str, orig: &str, price: i64) -> Vec<Seen> {
            let replace = Replace {
                cl_ord_id: ClOrdId::from(cl),
                orig_cl_ord_id: ClOrdId::from(orig),
                symbol: 0,
                price,
                qty: 5,
            };
            self.apply(&Input::Replace {
                who: WHO,
                replace: &replace,
            })
        }

        fn cancel(&mut self, cl: &str, orig: &str) -> Vec<Seen> {
            self.apply(&Input::Cancel {
                who: WHO,
                cl_ord_id: &ClOrdId::from(cl),
                orig_cl_ord_id: &ClOrdId::from(orig),
            })
        }

        fn status(&mut self, cl: &str) -> Vec<Seen> {
            self.apply(&Input::Status {
                who: WHO,
                cl_ord_id: &ClOrdId::from(cl),
            })
        }

        /// IOC sells far above any bid, `f{from}` on: each is finished (canceled) as soon as
        /// it arrives.
        fn iocs(&mut self, from: usize, n: usize) {
            for j in from..from + n {
                let seen = self.limit(&format!("f{j}"), Side::Sell, 5000, TimeInForce::Ioc);
                assert!(
                    matches!(
                        seen.last(),
                        Some(Seen::Report {
                            kind: ReportKind::Canceled(CancelReason::Ioc),
                            ..
                        })
                    ),
                    "f{j}: {seen:?}"
                );
            }
        }
    }

    fn kinds(seen: &[Seen]) -> Vec<ReportKind> {
        seen.iter()
            .filter_map(|s| match s {
                Seen::Report { kind, .. } => Some(*kind),
                _ => None,
            })
            .collect()
    }

    /// A resting order replaced many times keeps only its current ClOrdID once the others
    /// leave the window; the index stays within the window plus the live orders, each new
    /// ClOrdID moves at most `ROTATIONS_MAX` entries, and the order can still be canceled by
    /// its current ClOrdID (and not by a forgotten one).
    #[test]
    fn a_long_lived_order_replaced_many_times_keeps_one_clordid_beyond_the_window() {
        let mut x = Exchange::with_backing(config(), Backing::Lazy);
        x.set_cl_window(64);
        let mut d = Driver::new(x);
        // Ten resting bids, each replaced 100 times; between replaces, IOC sells far above
        // that never trade (finished at once).
        for i in 0..10 {
            let seen = d.limit(&format!("q{i}-0"), Side::Buy, 1000 + i, TimeInForce::Day);
            assert_eq!(kinds(&seen), [ReportKind::New], "{seen:?}");
        }
        let mut longest = 0;
        for r in 1..=100 {
            for i in 0..10 {
                let cl = format!("q{i}-{r}");
                let orig = format!("q{i}-{}", r - 1);
                let seen = d.replace(&cl, &orig, 1000 + i);
                assert_eq!(
                    seen,
                    [Seen::Report {
                        id: i as u64 + 1,
                        kind: ReportKind::Replaced,
                        status: OrderStatus::New,
                        cl,
                        orig: Some(orig),
                        leaves: 5,
                        cum: 0,
                    }],
                    "replace {i}/{r}"
                );
                let seen = d.limit(&format!("f{r}-{i}"), Side::Sell, 5000, TimeInForce::Ioc);
                assert_eq!(
                    kinds(&seen),
                    [ReportKind::New, ReportKind::Canceled(CancelReason::Ioc)]
                );
                longest = longest.max(d.x.cl_len());
            }
        }
        // 64 + the 10 current ClOrdIDs at most, plus what one call may leave over.
        assert!(longest <= 64 + 10 + 1, "the index held {longest} entries");
        for i in 0..10 {
            assert_eq!(
                d.x.order_of(0, format!("q{i}-100").as_bytes()),
                Some(i + 1),
                "q{i}-100"
            );
            assert_eq!(
                d.x.order_of(0, format!("q{i}-1").as_bytes()),
                None,
                "q{i}-1 is forgotten"
            );
        }
        let seen = d.cancel("x1", "q3-100");
        assert_eq!(
            kinds(&seen),
            [ReportKind::Canceled(CancelReason::User)],
            "canceled by its current ClOrdID: {seen:?}"
        );
        let seen = d.cancel("x2", "q4-2");
        assert_eq!(
            seen,
            [Seen::CancelRejected {
                cl: "x2".into(),
                orig: "q4-2".into(),
                reason: Reject::UnknownOrder,
                order: None,
            }],
            "a forgotten ClOrdID is unknown"
        );
        assert_eq!(d.x.live_orders(), 9);
    }

    /// A resting order finishes after more orders than the finished-order index has cells:
    /// a newer finished order holds its cell, so one of the two goes to the index's overflow;
    /// both still answer an OrderStatusRequest, also after a snapshot and restore; once
    /// `DONE_ORDERS_MAX` more orders have finished, both are forgotten ("unknown order") and
    /// the overflow is empty again.
    #[test]
    fn finished_orders_that_share_an_index_cell_answer_status_until_forgotten() {
        let cfg = config();
        let mut d = Driver::new(Exchange::with_backing(cfg.clone(), Backing::Lazy));
        let seen = d.limit("old", Side::Buy, 1000, TimeInForce::Day);
        assert_eq!(kinds(&seen), [ReportKind::New]);
        let cells = d.x.orders.done_ix.cells.len();
        assert!(cells > DONE_ORDERS_MAX && cells + 300 + DONE_ORDERS_MAX < CL_ORD_IDS_MAX);
        // The IOC numbered `cells - 1` has the id `cells` above the resting order's.
        d.iocs(0, cells + 100);
        let twin = format!("f{}", cells - 1);
        let (old_id, twin_id) = (1, cells as u64 + 1);
        assert_eq!(d.x.order_of(0, twin.as_bytes()), Some(twin_id));
        let seen = d.cancel("old-x", "old");
        assert_eq!(kinds(&seen), [ReportKind::Canceled(CancelReason::User)]);
        // Past the index's lag, so the canceled order is in the index itself.
        d.iocs(cells + 100, DONE_INDEX_LAG + 4);
        assert_eq!(
            d.x.orders.done_ix.overflow.len, 1,
            "one of the two overflowed"
        );
        let status = |cl: &str, id: OrderId| {
            vec![Seen::Report {
                id,
                kind: ReportKind::Status,
                status: OrderStatus::Canceled,
                cl: cl.to_string(),
                orig: None,
                leaves: 0,
                cum: 0,
            }]
        };
        for (cl, id) in [("old", old_id), (twin.as_str(), twin_id)] {
            assert_eq!(d.status(cl), status(cl, id), "status of {cl}");
        }
        // The same from a snapshot.
        let mut snap = Vec::new();
        let hash = d.x.snapshot_and_hash(&mut snap);
        let (y, rest) = Exchange::restore(cfg.clone(), &snap, Backing::Lazy).expect("restores");
        assert!(rest.is_empty());
        assert_eq!(y.state_hash(), hash);
        assert_eq!(y.orders.done_ix.overflow.len, 1);
        let mut e = Driver::new(y);
        for (cl, id) in [("old", old_id), (twin.as_str(), twin_id)] {
            assert_eq!(e.x.order_of(0, cl.as_bytes()), Some(id));
            let o = e.x.order(id).expect("a finished order is found");
            assert_eq!((o.state, o.leaves_qty), (OrderState::Canceled, 0), "{cl}");
            assert_eq!(
                e.status(cl),
                status(cl, id),
                "status of {cl} after a restore"
            );
        }
        // More finished orders than are remembered: both are forgotten.
        d.iocs(cells + 200, DONE_ORDERS_MAX + 1);
        for cl in ["old", twin.as_str()] {
            assert_eq!(
                d.status(cl),
                [Seen::StatusUnknown { cl: cl.to_string() }],
                "status of {cl}"
            );
        }
        assert_eq!(d.x.orders.done_ix.overflow.len, 0);
    }

    /// A limit order of originator `who` for 5 of ACME at `price`, stamped `ts`.
    fn order_at(
        x: &mut Exchange,
        seq: u64,
        ts: u64,
        who: u16,
        cl: &str,
        tif: TimeInForce,
    ) -> Vec<Seen> {
        let order = NewOrder {
            cl_ord_id: ClOrdId::from(cl),
            side: Side::Buy,
            tif,
            price: 100,
            qty: 5,
            ..NewOrder::BLANK
        };
        let who = Principal {
            originator: who,
            firm: 0,
        };
        let mut r = Recorder::default();
        x.apply(seq, ts, &Input::New { who, order: &order }, &mut r);
        r.0
    }

    fn canceled(seen: &[Seen]) -> Vec<(OrderId, ReportKind)> {
        seen.iter()
            .filter_map(|s| match s {
                Seen::Report {
                    id,
                    kind: k @ ReportKind::Canceled(_),
                    ..
                } => Some((*id, *k)),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn day_orders_expire_at_the_first_input_at_or_after_the_end_of_the_day() {
        const DAY: u64 = NS_PER_DAY;
        let end = 21 * 3600 * 1_000_000_000;
        let mut cfg = (*config()).clone();
        cfg.trading_day_end_ns = Some(end);
        let mut x = Exchange::new(Arc::new(cfg));
        let day0 = 20_000 * DAY;
        let tick = |x: &mut Exchange, seq, ts| {
            let mut r = Recorder::default();
            x.apply(seq, ts, &Input::Tick, &mut r);
            canceled(&r.0)
        };
        assert_eq!(x.next_day_end_ns(), 0, "unknown before the first input");
        order_at(&mut x, 1, day0 + 1, 0, "d1", TimeInForce::Day);
        order_at(&mut x, 2, day0 + 2, 0, "g1", TimeInForce::Gtc);
        assert_eq!(x.next_day_end_ns(), day0 + end);
        assert_eq!(tick(&mut x, 3, day0 + end - 1), vec![]);
        assert_eq!(
            tick(&mut x, 4, day0 + end),
            vec![(1, ReportKind::Canceled(CancelReason::Expired))]
        );
        assert_eq!(x.next_day_end_ns(), day0 + DAY + end);
        // An order after the end belongs to the next day; the next end comes a day later.
        order_at(&mut x, 5, day0 + end + 1, 0, "d2", TimeInForce::Day);
        assert_eq!(tick(&mut x, 6, day0 + DAY + end - 1), vec![]);
        // Any input ends the day, before it is applied: d2 expires, d3 rests.
        let seen = order_at(&mut x, 7, day0 + 3 * DAY, 0, "d3", TimeInForce::Day);
        assert_eq!(
            canceled(&seen),
            vec![(3, ReportKind::Canceled(CancelReason::Expired))]
        );
        assert_eq!(x.live_orders(), 2, "g1 and d3");
        // The next end survives a snapshot.
        let mut bytes = Vec::new();
        x.snapshot_and_hash(&mut bytes);
        let (y, _) = Exchange::restore(x.config().clone(), &bytes, Backing::Resident).unwrap();
        assert_eq!(y.next_day_end_ns(), x.next_day_end_ns());
        // Without an end of day, DAY orders rest.
        let mut z = Exchange::new(config());
        order_at(&mut z, 1, day0, 0, "d1", TimeInForce::Day);
        assert_eq!(z.next_day_end_ns(), u64::MAX);
        let mut r = Recorder::default();
        z.apply(2, day0 + 5 * DAY, &Input::Tick, &mut r);
        assert!(r.0.is_empty());
    }

    /// The status changes and expiries an input causes, in order (other outputs left out).
    #[derive(Default)]
    struct DayLog(Vec<String>);

    impl Outputs for DayLog {
        fn output(&mut self, o: &Output<'_>) {
            match *o {
                Output::TradingStatus(s) => self.0.push(format!("{s:?}")),
                Output::Report(r) if r.kind == ReportKind::Canceled(CancelReason::Expired) => {
                    self.0.push(format!("expired {}", r.id))
                }
                Output::NewRejected { reason, .. } | Output::CancelRejected { reason, .. } => {
                    let mut buf = [0u8; DESCRIBE_MAX];
                    self.0.push(reason.describe(&mut buf).to_string())
                }
                _ => {}
            }
        }
    }

    #[test]
    fn the_market_closes_at_the_end_of_the_day_and_opens_at_the_start_of_the_next() {
        const H: u64 = 3600 * 1_000_000_000;
        let day0 = 20_000 * NS_PER_DAY;
        let mut cfg = (*config()).clone();
        cfg.trading_day_end_ns = Some(21 * H);
        cfg.trading_day_start_ns = Some(8 * H);
        let cfg = Arc::new(cfg);
        let mut x = Exchange::new(cfg.clone());
        let mut seq = 0;
        let mut at = |x: &mut Exchange, ts: u64, input: &Input<'_>| {
            seq += 1;
            let mut log = DayLog::default();
            x.apply(seq, ts, input, &mut log);
            log.0
        };
        let d1 = NewOrder {
            cl_ord_id: ClOrdId::from("d1"),
            price: 100,
            qty: 5,
            ..NewOrder::BLANK
        };
        let new = |o| Input::New { who: WHO, order: o };
        // The first input, at 10:00, finds the market open: no change reported.
        assert!(at(&mut x, day0 + 10 * H, &new(&d1)).is_empty());
        assert_eq!(x.trading_status(), TradingStatus::Open);
        assert_eq!(x.next_day_change_ns(), day0 + 21 * H);
        // 21:00: d1 expires, then the market closes until 08:00.
        assert_eq!(
            at(&mut x, day0 + 21 * H, &Input::Tick),
            ["expired 1", "Closed"]
        );
        assert_eq!(x.closed_until_ns(), Some(day0 + NS_PER_DAY + 8 * H));
        assert_eq!(x.next_day_change_ns(), day0 + NS_PER_DAY + 8 * H);
        let d2 = NewOrder {
            cl_ord_id: ClOrdId::from("d2"),
            ..d1
        };
        assert_eq!(
            at(&mut x, day0 + 23 * H, &new(&d2)),
            ["market closed until 08:00:00 UTC"]
        );
        // The snapshot keeps the closed market.
        let mut bytes = Vec::new();
        let h = x.snapshot_and_hash(&mut bytes);
        let (mut y, _) = Exchange::restore(cfg.clone(), &bytes, Backing::Resident).unwrap();
        assert_eq!(y.state_hash(), h);
        assert_eq!(y.trading_status(), TradingStatus::Closed);
        // 08:00 the next day: open again, and d2 rests.
        for z in [&mut x, &mut y] {
            let t = day0 + NS_PER_DAY + 8 * H;
            assert_eq!(at(z, t, &new(&d2)), ["Open"]);
            assert_eq!(z.trading_status(), TradingStatus::Open);
            assert_eq!(z.live_orders(), 1);
        }
        // A gap over several days: the day ends (d2 expires) and, its start passed, the market
        // opens in the same input.
        assert_eq!(
            at(&mut x, day0 + 4 * NS_PER_DAY + 12 * H, &Input::Tick),
            ["expired 2", "Closed", "Open"]
        );
        // A first input inside the closed hours finds the market closed, says nothing and
        // refuses the order.
        let mut z = Exchange::new(cfg);
        let t = day0 + 2 * H;
        assert_eq!(
            at(&mut z, t, &new(&d1)),
            ["market closed until 08:00:00 UTC"]
        );
        assert_eq!(z.closed_until_ns(), Some(day0 + 8 * H));
        // Without a start the next day opens as the last one ends.
        let mut cfg = (*config()).clone();
        cfg.trading_day_end_ns = Some(21 * H);
        let mut w = Exchange::new(Arc::new(cfg));
        assert!(at(&mut w, day0 + 22 * H, &new(&d1)).is_empty());
        assert_eq!(
            at(&mut w, day0 + NS_PER_DAY + 21 * H, &Input::Tick),
            ["expired 1", "Closed", "Open"]
        );
        assert_eq!(w.trading_status(), TradingStatus::Open);
    }

    #[test]
    fn a_disconnected_originator_loses_its_orders_only_if_it_asked() {
        let mut cfg = (*config()).clone();
        cfg.cancel_on_disconnect = vec![false, true];
        let mut x = Exchange::new(Arc::new(cfg));
        order_at(&mut x, 1, 1, 1, "a", TimeInForce::Gtc);
        order_at(&mut x, 2, 2, 0, "b", TimeInForce::Gtc);
        order_at(&mut x, 3, 3, 1, "c", TimeInForce::Day);
        order_at(&mut x, 4, 4, 2, "d", TimeInForce::Gtc);
        let gone = |x: &mut Exchange, seq, originator| {
            let mut r = Recorder::default();
            let who = Principal {
                originator,
                firm: 0,
            };
            x.apply(seq, 5, &Input::Disconnected { who }, &mut r);
            canceled(&r.0)
        };
        assert_eq!(gone(&mut x, 5, 0), vec![], "originator 0 did not ask");
        assert_eq!(gone(&mut x, 6, 2), vec![], "originator 2 is past the list");
        let c = ReportKind::Canceled(CancelReason::Disconnect);
        assert_eq!(
            gone(&mut x, 7, 1),
            vec![(1, c), (3, c)],
            "in order id order"
        );
        assert_eq!(x.live_orders(), 2);
        assert_eq!(gone(&mut x, 8, 1), vec![], "nothing left");
    }
}
