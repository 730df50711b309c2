//! Rialto's exchange: the deterministic state machine behind every edge.
//!
//! Role: given the next journaled input (a protocol-neutral order request with its principal,
//! or a checkpoint), with its sequence number and timestamp, update the exchange's state and
//! say what happened as typed [`Output`]s: reports about orders to their owners, refusals with
//! a [`Reject`] reason, book changes for market data. It keeps client order id uniqueness per
//! originator (`ClIndex`), the order records reports are made of (`Orders`), the open orders
//! of each firm and account against their limits (`limits`), the pending mass cancels (and
//! cancels on disconnect) it applies a bounded step at a time (`mass`), the trading day
//! (`day`), and the matching engine: requests are checked and turned into engine commands
//! (`request`), and engine events into outputs (`events`); it snapshots, restores and hashes
//! all of it, and takes a full replay's ClOrdID lookups answered ahead (`resolve`).
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

mod admin;
mod auction;
mod clordid;
pub mod codec;
mod day;
mod events;
mod index;
mod io;
mod limits;
mod mass;
mod orders;
mod remote;
mod request;
mod resolve;
mod risk;
pub mod snap;
mod state;
pub mod wire;

pub use clordid::{ClOrdId, CL_ORD_ID_LEN_MAX};
pub use index::{copy_short, eq_short, Backing, ClBytes, ClHasher, ClHashes};
pub use io::{
    AdminAction, Checkpoint, Input, InstrumentStatus, NewOrder, NoOutputs, OrderExt, Output,
    Outputs, OwnedOutput, Principal, Reject, Replace, Report, ReportKind, TradingStatus,
    DESCRIBE_MAX,
};
pub use limits::FirmLimits;
pub use orders::{OrderRecord, OrderState, OrderStatus, SlotTable};
pub use remote::{RemoteConfig, Routed, ORDER_ID_STRIDE};
pub use resolve::{ClHint, ClResolver, Resolvable};
pub use risk::{Breaker, InstrumentRisk, RiskKind};

use engine::{Engine, EngineConfig};
use index::{ClIndex, CL_ORD_IDS_MAX};
use limits::OpenOrders;
use mass::PendingMass;
use orders::Orders;
use std::collections::VecDeque;
use std::sync::Arc;
use types::{AccountId, Event, Instrument};

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
    /// By instrument (as `instruments`): the decimals of its prices (a price unit is
    /// 10^-decimals), for rejects' texts and notionals; missing: 0.
    pub price_decimals: Vec<u8>,
    /// By instrument: its price band and order limits (`risk`); missing: none.
    pub instrument_risk: Vec<InstrumentRisk>,
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
            price_decimals: Vec::new(),
            instrument_risk: Vec::new(),
        }
    }

    /// The decimals of notionals (price × quantity, summed over instruments): the most any
    /// instrument's prices have.
    pub fn notional_decimals(&self) -> u8 {
        self.price_decimals.iter().copied().max().unwrap_or(0)
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub orders: u64,
    pub reports: u64,
    pub trades: u64,
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
    /// Price bands, reference prices, positions and open notionals, against their limits.
    risk: risk::Risk,
    /// Mass cancels (and cancels on disconnect) with order ids left, oldest request first
    /// (`Input::Continue`).
    pending: VecDeque<PendingMass>,
    /// Cluster mode, on a gateway: the engines are elsewhere (`remote`).
    remote: Option<Box<remote::Remote>>,
    /// Per symbol: the indicative uncross last published (`(0, 0)`: none).
    indicative: Vec<(i64, u64)>,
    /// Some book may be in a call, or has an indicative to withdraw: look after each input.
    calls_seen: bool,
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
        let risk = risk::Risk::new(&cfg, &open.account_firms());
        let cfg_len = cfg.instruments.len();
        Exchange {
            open,
            risk,
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
            remote: None,
            indicative: vec![(0, 0); cfg_len],
            calls_seen: false,
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
        if let Some(s) = self.remote_status() {
            return s;
        }
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
        let day = match self.closed_until_ns {
            0 => self.next_day_end_ns,
            open => open.min(self.next_day_end_ns),
        };
        day.min(self.risk.next_reopen())
            .min(self.engine.next_expiry().unwrap_or(u64::MAX))
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

    /// `account`'s net position in `symbol`: its buys minus its sells (0 for an account no
    /// firm lists).
    pub fn position(&self, account: AccountId, symbol: types::SymbolId) -> i64 {
        match self.open.account_ix(account) {
            Some(a) if (symbol as usize) < self.cfg.instruments.len() => {
                self.risk.position(a, symbol)
            }
            _ => 0,
        }
    }

    /// The notional of `account`'s resting orders (`Config::notional_decimals` decimals).
    pub fn open_notional(&self, account: AccountId) -> i128 {
        self.open
            .account_ix(account)
            .map_or(0, |a| self.risk.open_notional(a))
    }

    /// `symbol`'s reference price: its last trade's, or the configured one before the first
    /// (0: none).
    pub fn reference_price(&self, symbol: types::SymbolId) -> i64 {
        self.risk.reference(symbol)
    }

    /// `symbol`'s price band now (inclusive), if it has one.
    pub fn price_band(&self, symbol: types::SymbolId) -> Option<(i64, i64)> {
        if (symbol as usize) < self.cfg.instruments.len() {
            self.risk.band(symbol)
        } else {
            None
        }
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
        if self.remote.is_some() {
            return self.remote_order(id);
        }
        self.orders.get(&id)
    }

    /// The stop, iceberg and GTD attributes of remembered order `id` (all 0 for a plain or
    /// unknown order), as its reports carry them: for queries (a REST order's JSON). None on a
    /// cluster's gateway, whose reports carry them.
    pub fn order_ext(&self, id: OrderId) -> OrderExt {
        if self.remote.is_some() {
            return OrderExt::default();
        }
        self.orders.ext_of(id)
    }

    /// The live orders `originator` entered, in order id order (a scan of the live orders:
    /// for queries, never the order path).
    pub fn live_orders_of(&self, originator: u16) -> Vec<(OrderId, &OrderRecord)> {
        if self.remote.is_some() {
            return self.remote_live_orders_of(originator);
        }
        let mut v: Vec<(OrderId, &OrderRecord)> = self
            .orders
            .live
            .iter()
            .map(|(id, slot)| (id, &self.orders.slab[slot as usize]))
            .filter(|(_, o)| o.owner == originator && o.is_live())
            .collect();
        v.sort_unstable_by_key(|&(id, _)| id);
        v
    }

    /// The order `originator` used client order id `cl` for, if remembered.
    pub fn order_of(&self, originator: u16, cl: &[u8]) -> Option<OrderId> {
        if self.remote.is_some() {
            return self.remote_order_of(originator, cl);
        }
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
        if self.last_seq != 0
            || self.cl.len() != 0
            || self.cl.resolved.is_some()
            || self.remote.is_some()
        {
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
        if self.remote.is_some() {
            return self.capture(seq, input, out);
        }
        if ts_ns >= self.next_day_end_ns {
            self.end_trading_day(ts_ns, out);
        }
        if self.closed_until_ns != 0 && ts_ns >= self.closed_until_ns {
            self.closed_until_ns = 0;
            out.output(&Output::TradingStatus(TradingStatus::Open));
        }
        self.risk.set_now(ts_ns);
        self.on_clock(ts_ns, out);
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
            } => self.on_mass_cancel(seq, who, cl_ord_id, (symbol, side), false, out),
            Input::CancelOwn {
                who,
                cl_ord_id,
                symbol,
                side,
            } => self.on_mass_cancel(seq, who, cl_ord_id, (symbol, side), true, out),
            Input::Status { who, cl_ord_id } => self.on_status(who, cl_ord_id, out),
            Input::Disconnected { who } => self.on_disconnected(seq, who, out),
            // Time passing: the end of the trading day, checked above.
            Input::Tick => {}
            Input::Continue => self.on_continue(out),
            Input::Checkpoint(cp) => self.on_checkpoint(seq, cp),
            Input::Admin(a) => self.on_admin(seq, a, out),
        }
        if self.calls_seen {
            self.publish_indicatives(out);
        }
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
mod tests;
