//! Pre-trade risk: price bands around each instrument's reference price (and the collar that
//! keeps a market order inside its band), order quantity and notional limits per instrument
//! and firm, and each account's open notional and net position against its limits.
//!
//! Role: the checks behind `Reject::PriceBand` and `Reject::RiskLimit`, and the state they
//! need: each instrument's reference price (its last trade's, or the configured one before the
//! first), each account's filled net position per instrument, and what its resting orders
//! could add (open notional, open buy and sell quantity). The exchange calls `check_new` and
//! `check_replace` before the engine runs, and the `add_open`, `sub_open`, `fill` and
//! `traded` hooks as the engine's events come.
//!
//! Never: iterates a hash table; allocates after it is built; refuses a replace that lowers
//! what it checks (a trader over a limit lowered at run time may still reduce).
//!
//! Invariants: after each input, `open_notional`, `open_buy` and `open_sell` are the sums over
//! the live resting orders (limit, DAY or GTC) of each account (a restore recomputes them);
//! `position` is the sum of its fills (buys minus sells), which only the snapshot keeps.
//! Notionals are `price × qty` scaled to `Config::notional_decimals` decimals.

use crate::{Config, InstrumentStatus, NewOrder, OrderRecord, Reject};
use types::{OrdType, Side, SymbolId, TimeInForce};

/// Which pre-trade limit refused an order (`Reject::RiskLimit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RiskKind {
    /// The order's quantity (the instrument's and the firm's `max_order_qty`).
    OrderQty,
    /// The order's price × quantity (`max_order_notional`); a market order's at its collar or
    /// the reference price.
    OrderNotional,
    /// The account's resting orders' notional with this one (`max_open_notional_per_account`).
    OpenNotional,
    /// The account's net position in the instrument if this order and all its resting orders
    /// on the same side filled (`max_net_position_per_account`, on its absolute value).
    NetPosition,
}

impl RiskKind {
    pub const ALL: [RiskKind; 4] = [
        RiskKind::OrderQty,
        RiskKind::OrderNotional,
        RiskKind::OpenNotional,
        RiskKind::NetPosition,
    ];

    /// The refusal in words (`Reject::text`).
    pub fn text(self) -> &'static str {
        match self {
            RiskKind::OrderQty => "order quantity over its limit",
            RiskKind::OrderNotional => "order notional over its limit",
            RiskKind::OpenNotional => "account open notional over its limit",
            RiskKind::NetPosition => "account net position over its limit",
        }
    }

    /// What the value is (`Reject::describe`: "<noun> <value> over the limit <limit>").
    pub fn noun(self) -> &'static str {
        match self {
            RiskKind::OrderQty => "order quantity",
            RiskKind::OrderNotional => "order notional",
            RiskKind::OpenNotional => "account open notional",
            RiskKind::NetPosition => "account net position",
        }
    }

    /// A stable identifier (HTTP error codes, the journal's encoding).
    pub fn code(self) -> u8 {
        match self {
            RiskKind::OrderQty => 1,
            RiskKind::OrderNotional => 2,
            RiskKind::OpenNotional => 3,
            RiskKind::NetPosition => 4,
        }
    }

    pub fn from_code(c: u8) -> Option<RiskKind> {
        RiskKind::ALL.into_iter().find(|k| k.code() == c)
    }
}

/// An instrument's pre-trade limits (`Config::instrument_risk`); `None`: no limit of that
/// kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InstrumentRisk {
    /// Half the width of the price band, in basis points of the reference price: a limit
    /// order priced outside it is refused, a market order fills only inside it.
    pub band_bps: Option<u32>,
    /// The reference price before the instrument's first trade (its units); without one, no
    /// band applies until a trade sets it.
    pub reference_price: Option<i64>,
    pub max_order_qty: Option<u64>,
    /// In notional units (`Config::notional_decimals`).
    pub max_order_notional: Option<i128>,
    /// Halts the instrument for a while when its price moves too far too fast.
    pub breaker: Option<Breaker>,
}

/// A circuit breaker: a trade more than `bps` basis points away from the first trade of its
/// `window_ns` window halts the instrument for `halt_ns` (the trade that tripped it stands),
/// after which it reopens: through a call auction of `auction_ns` (pre-open, then the uncross),
/// or at once with `auction_ns == 0`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Breaker {
    pub bps: u32,
    pub window_ns: u64,
    pub halt_ns: u64,
    pub auction_ns: u64,
}

/// Whether an order of this type rests, so counts against the open limits.
#[inline]
pub(crate) fn rests(ord_type: OrdType, tif: TimeInForce) -> bool {
    ord_type == OrdType::Limit
        && matches!(tif, TimeInForce::Day | TimeInForce::Gtc | TimeInForce::Gtd)
}

/// Whether a live order's record counts against the open limits.
#[inline]
pub(crate) fn counted(o: &OrderRecord) -> bool {
    rests(o.ord_type, o.tif)
}

/// The firm-wide per-order limits, by firm.
#[derive(Clone, Copy, Debug, Default)]
struct FirmOrderLimits {
    max_order_qty: Option<u64>,
    max_order_notional: Option<i128>,
}

#[derive(Clone)]
pub(crate) struct Risk {
    /// By symbol: the limits in force (the configuration's, or the operator's override).
    instruments: Vec<InstrumentRisk>,
    /// By symbol: the operator's limits in place of the configuration's (`AdminAction::SetRisk`).
    overrides: Vec<Option<InstrumentRisk>>,
    /// By symbol: its trading status.
    status: Vec<InstrumentStatus>,
    /// Status changes so far (a hint for followers: not state, not in the snapshot).
    status_changes: u64,
    /// By symbol: the first trade of the breaker's current window (price, time; price 0:
    /// none yet), and when a breaker's halt ends (0: not halted by its breaker).
    anchor: Vec<(i64, u64)>,
    halted_until: Vec<u64>,
    /// Per symbol: its breaker halt ended and it is in the reopening call until
    /// `halted_until`.
    reopening: Vec<bool>,
    /// The earliest of `halted_until` (`u64::MAX`: none).
    next_reopen: u64,
    /// The time of the input being applied.
    now_ns: u64,
    /// Symbols whose breaker the input being applied tripped (the exchange halts them after
    /// its command).
    tripped: Vec<SymbolId>,
    /// By firm, and by account (dense index): the operator's kill switch.
    firm_blocked: Vec<bool>,
    account_blocked: Vec<bool>,
    /// By symbol: the last trade's price, or the configured reference before the first; 0:
    /// none yet.
    reference: Vec<i64>,
    ticks: Vec<i64>,
    decimals: Vec<u8>,
    /// By symbol: 10^(notional decimals − its price decimals).
    scale: Vec<i128>,
    notional_decimals: u8,
    firms: Vec<FirmOrderLimits>,
    /// By account (`OpenOrders`' dense index).
    max_open_notional: Vec<Option<i128>>,
    max_net_position: Vec<Option<u64>>,
    open_notional: Vec<i128>,
    /// By account × symbol (`a * symbols + s`).
    position: Vec<i64>,
    open_buy: Vec<u64>,
    open_sell: Vec<u64>,
    symbols: usize,
}

impl Risk {
    /// The limits of `cfg`; `accounts` are the firms' accounts in dense index order, each with
    /// its firm.
    pub(crate) fn new(cfg: &Config, accounts: &[(u16, u32)]) -> Risk {
        let symbols = cfg.instruments.len();
        let nd = cfg.notional_decimals();
        let decimals: Vec<u8> = (0..symbols)
            .map(|s| cfg.price_decimals.get(s).copied().unwrap_or(0))
            .collect();
        let instruments: Vec<InstrumentRisk> = (0..symbols)
            .map(|s| cfg.instrument_risk.get(s).copied().unwrap_or_default())
            .collect();
        let limits = |f: u16| cfg.firm_limits.get(f as usize).copied().unwrap_or_default();
        let n = accounts.len();
        Risk {
            reference: instruments
                .iter()
                .map(|i| i.reference_price.unwrap_or(0).max(0))
                .collect(),
            instruments,
            overrides: vec![None; symbols],
            status: vec![InstrumentStatus::Open; symbols],
            status_changes: 0,
            anchor: vec![(0, 0); symbols],
            halted_until: vec![0; symbols],
            reopening: vec![false; symbols],
            next_reopen: u64::MAX,
            now_ns: 0,
            tripped: Vec::with_capacity(symbols),
            firm_blocked: vec![false; cfg.firms.len()],
            account_blocked: vec![false; n],
            ticks: cfg.instruments.iter().map(|i| i.tick.max(1)).collect(),
            scale: decimals
                .iter()
                .map(|&d| 10i128.pow(u32::from(nd.saturating_sub(d))))
                .collect(),
            decimals,
            notional_decimals: nd,
            firms: (0..cfg.firms.len())
                .map(|f| {
                    let l = limits(f as u16);
                    FirmOrderLimits {
                        max_order_qty: l.max_order_qty,
                        max_order_notional: l.max_order_notional,
                    }
                })
                .collect(),
            max_open_notional: accounts
                .iter()
                .map(|&(f, _)| limits(f).max_open_notional_per_account)
                .collect(),
            max_net_position: accounts
                .iter()
                .map(|&(f, _)| limits(f).max_net_position_per_account)
                .collect(),
            open_notional: vec![0; n],
            position: vec![0; n * symbols],
            open_buy: vec![0; n * symbols],
            open_sell: vec![0; n * symbols],
            symbols,
        }
    }

    /// Why an order on symbol `s` of firm `firm`'s `account` (dense index `a`) is refused
    /// before any limit: its instrument is not open, or a kill switch blocks it.
    #[inline]
    pub(crate) fn barred(
        &self,
        s: SymbolId,
        firm: u16,
        account: u32,
        a: Option<usize>,
    ) -> Option<Reject> {
        let status = self.status[s as usize];
        if !status.takes_orders() {
            return Some(Reject::InstrumentNotOpen { status });
        }
        if self
            .firm_blocked
            .get(firm as usize)
            .copied()
            .unwrap_or(false)
        {
            return Some(Reject::Blocked { account: None });
        }
        match a {
            Some(a) if self.account_blocked[a] => Some(Reject::Blocked {
                account: Some(account),
            }),
            _ => None,
        }
    }

    /// Sets the kill switch of firm `firm` (`a`: only of that account) on or off.
    pub(crate) fn block(&mut self, firm: u16, a: Option<usize>, on: bool) {
        match a {
            Some(a) => self.account_blocked[a] = on,
            None => {
                if let Some(b) = self.firm_blocked.get_mut(firm as usize) {
                    *b = on;
                }
            }
        }
    }

    /// Whether firm `firm` (`a`: that account) is blocked by its own kill switch.
    pub(crate) fn blocked(&self, firm: u16, a: Option<usize>) -> bool {
        match a {
            Some(a) => self.account_blocked[a],
            None => self
                .firm_blocked
                .get(firm as usize)
                .copied()
                .unwrap_or(false),
        }
    }

    /// Symbol `s`'s status; the old one.
    pub(crate) fn set_status(&mut self, s: SymbolId, status: InstrumentStatus) -> InstrumentStatus {
        self.status_changes += 1;
        std::mem::replace(&mut self.status[s as usize], status)
    }

    pub(crate) fn status_changes(&self) -> u64 {
        self.status_changes
    }

    pub(crate) fn status(&self, s: SymbolId) -> InstrumentStatus {
        self.status[s as usize]
    }

    /// Symbol `s`'s limits from now on (the operator's); a reference price given is its
    /// reference at once.
    pub(crate) fn set_limits(&mut self, s: SymbolId, risk: InstrumentRisk) {
        let s = s as usize;
        self.instruments[s] = risk;
        self.overrides[s] = Some(risk);
        if let Some(r) = risk.reference_price.filter(|&r| r > 0) {
            self.reference[s] = r;
        }
    }

    /// Symbol `s`'s limits in force.
    pub(crate) fn limits(&self, s: SymbolId) -> InstrumentRisk {
        self.instruments[s as usize]
    }

    /// The price band of symbol `s` (inclusive, on its tick grid), if it has one now.
    pub(crate) fn band(&self, s: SymbolId) -> Option<(i64, i64)> {
        let s = s as usize;
        let bps = self.instruments.get(s)?.band_bps?;
        let r = self.reference[s];
        if r <= 0 {
            return None;
        }
        let tick = self.ticks[s];
        let w = (i128::from(r) * i128::from(bps) / 10_000) as i64;
        let high = r.saturating_add(w).div_euclid(tick) * tick;
        let low = (r - w).saturating_add(tick - 1).div_euclid(tick) * tick;
        Some((low.max(tick), high.max(tick)))
    }

    /// The reference price of symbol `s` (0: none yet).
    pub fn reference(&self, s: SymbolId) -> i64 {
        self.reference.get(s as usize).copied().unwrap_or(0)
    }

    fn notional(&self, s: usize, price: i64, qty: u64) -> i128 {
        i128::from(price)
            .saturating_mul(i128::from(qty))
            .saturating_mul(self.scale[s])
    }

    fn limit(kind: RiskKind, value: i128, limit: i128, decimals: u8) -> Reject {
        Reject::RiskLimit {
            kind,
            value,
            limit,
            decimals,
        }
    }

    fn cell(&self, a: usize, s: usize) -> usize {
        a * self.symbols + s
    }

    /// Checks new order `n` of firm `firm`'s account `a` (dense index; `None`: an account no
    /// limit knows). Returns the price a market order is collared at, if its band applies.
    pub(crate) fn check_new(
        &self,
        firm: u16,
        a: Option<usize>,
        n: &NewOrder,
    ) -> Result<Option<i64>, Reject> {
        let s = n.symbol as usize;
        let ir = &self.instruments[s];
        let band = self.band(n.symbol);
        let mut collar = None;
        if let Some((low, high)) = band {
            match n.ord_type {
                OrdType::Limit if n.price < low || n.price > high => {
                    return Err(Reject::PriceBand {
                        price: n.price,
                        low,
                        high,
                        decimals: self.decimals[s],
                    })
                }
                OrdType::Limit => {}
                OrdType::Market => {
                    collar = Some(match n.side {
                        Side::Buy => high,
                        Side::Sell => low,
                    })
                }
            }
        }
        let fl = self.firms.get(firm as usize).copied().unwrap_or_default();
        if let Some(max) = min_opt(ir.max_order_qty, fl.max_order_qty) {
            if n.qty > max {
                return Err(Self::limit(
                    RiskKind::OrderQty,
                    i128::from(n.qty),
                    i128::from(max),
                    0,
                ));
            }
        }
        let price = match n.ord_type {
            OrdType::Limit => Some(n.price),
            OrdType::Market => collar.or((self.reference[s] > 0).then_some(self.reference[s])),
        };
        let notional = price.map(|p| self.notional(s, p, n.qty));
        if let (Some(v), Some(max)) = (
            notional,
            min_opt(ir.max_order_notional, fl.max_order_notional),
        ) {
            if v > max {
                return Err(Self::limit(
                    RiskKind::OrderNotional,
                    v,
                    max,
                    self.notional_decimals,
                ));
            }
        }
        let Some(a) = a else {
            return Ok(collar);
        };
        if rests(n.ord_type, n.tif) {
            if let (Some(max), Some(v)) = (self.max_open_notional[a], notional) {
                let total = self.open_notional[a].saturating_add(v);
                if total > max {
                    return Err(Self::limit(
                        RiskKind::OpenNotional,
                        total,
                        max,
                        self.notional_decimals,
                    ));
                }
            }
        }
        if let Some(max) = self.max_net_position[a] {
            let c = self.cell(a, s);
            let worst = self.worst_position(c, n.side, i128::from(n.qty));
            if worst.abs() > i128::from(max) {
                return Err(Self::limit(
                    RiskKind::NetPosition,
                    worst,
                    i128::from(max),
                    0,
                ));
            }
        }
        Ok(collar)
    }

    /// The net position of cell `c` if every resting order on `side` and `extra` more filled.
    fn worst_position(&self, c: usize, side: Side, extra: i128) -> i128 {
        let pos = i128::from(self.position[c]);
        match side {
            Side::Buy => pos + i128::from(self.open_buy[c]) + extra,
            Side::Sell => pos - i128::from(self.open_sell[c]) - extra,
        }
    }

    /// Checks a replace of live order `o` (account `a`, firm `firm`) to `price` and a total
    /// quantity of `qty`. What the replace does not raise is not refused: a price it keeps is
    /// not checked against the band, nor an open notional or position it lowers.
    pub(crate) fn check_replace(
        &self,
        firm: u16,
        a: Option<usize>,
        o: &OrderRecord,
        price: i64,
        qty: u64,
    ) -> Result<(), Reject> {
        let s = o.symbol as usize;
        let ir = &self.instruments[s];
        if price != o.price {
            if let Some((low, high)) = self.band(o.symbol) {
                if price < low || price > high {
                    return Err(Reject::PriceBand {
                        price,
                        low,
                        high,
                        decimals: self.decimals[s],
                    });
                }
            }
        }
        let fl = self.firms.get(firm as usize).copied().unwrap_or_default();
        if let Some(max) = min_opt(ir.max_order_qty, fl.max_order_qty) {
            if qty > max && qty > o.order_qty {
                return Err(Self::limit(
                    RiskKind::OrderQty,
                    i128::from(qty),
                    i128::from(max),
                    0,
                ));
            }
        }
        let new = self.notional(s, price, qty);
        if let Some(max) = min_opt(ir.max_order_notional, fl.max_order_notional) {
            if new > max && new > self.notional(s, o.price, o.order_qty) {
                return Err(Self::limit(
                    RiskKind::OrderNotional,
                    new,
                    max,
                    self.notional_decimals,
                ));
            }
        }
        let (Some(a), true) = (a, counted(o)) else {
            return Ok(());
        };
        let leaves = qty.saturating_sub(o.cum_qty);
        let old_open = self.notional(s, o.price, o.leaves_qty);
        let new_open = self.notional(s, price, leaves);
        if let Some(max) = self.max_open_notional[a] {
            let total = self.open_notional[a] - old_open + new_open;
            if total > max && new_open > old_open {
                return Err(Self::limit(
                    RiskKind::OpenNotional,
                    total,
                    max,
                    self.notional_decimals,
                ));
            }
        }
        if let Some(max) = self.max_net_position[a] {
            let c = self.cell(a, s);
            let delta = i128::from(leaves) - i128::from(o.leaves_qty);
            let worst = self.worst_position(c, o.side, delta);
            if worst.abs() > i128::from(max) && delta > 0 {
                return Err(Self::limit(
                    RiskKind::NetPosition,
                    worst,
                    i128::from(max),
                    0,
                ));
            }
        }
        Ok(())
    }

    /// A resting order of account `a` now has `qty` more at `price` on `side`.
    #[inline]
    pub(crate) fn add_open(&mut self, a: usize, s: SymbolId, side: Side, price: i64, qty: u64) {
        let s = s as usize;
        let v = self.notional(s, price, qty);
        self.open_notional[a] = self.open_notional[a].saturating_add(v);
        let c = self.cell(a, s);
        match side {
            Side::Buy => self.open_buy[c] = self.open_buy[c].saturating_add(qty),
            Side::Sell => self.open_sell[c] = self.open_sell[c].saturating_add(qty),
        }
    }

    /// A resting order of account `a` now has `qty` less at `price` on `side`.
    #[inline]
    pub(crate) fn sub_open(&mut self, a: usize, s: SymbolId, side: Side, price: i64, qty: u64) {
        let s = s as usize;
        let v = self.notional(s, price, qty);
        self.open_notional[a] = self.open_notional[a].saturating_sub(v);
        let c = self.cell(a, s);
        match side {
            Side::Buy => self.open_buy[c] = self.open_buy[c].saturating_sub(qty),
            Side::Sell => self.open_sell[c] = self.open_sell[c].saturating_sub(qty),
        }
    }

    /// Order `o` of account `a` (dense index, if a firm lists it) no longer has `leaves`
    /// resting (it left the book, or was refused).
    #[inline]
    pub(crate) fn unrest(&mut self, a: Option<usize>, o: &OrderRecord, leaves: u64) {
        if let (true, Some(a)) = (counted(o), a) {
            self.sub_open(a, o.symbol, o.side, o.price, leaves);
        }
    }

    /// Account `a` bought (or sold) `qty` of symbol `s`.
    #[inline]
    pub(crate) fn fill(&mut self, a: usize, s: SymbolId, side: Side, qty: u64) {
        let c = self.cell(a, s as usize);
        let q = i64::try_from(qty).unwrap_or(i64::MAX);
        self.position[c] = match side {
            Side::Buy => self.position[c].saturating_add(q),
            Side::Sell => self.position[c].saturating_sub(q),
        };
    }

    /// Symbol `s` traded at `price`: its new reference, and its breaker's check.
    #[inline]
    pub(crate) fn traded(&mut self, s: SymbolId, price: i64) {
        let i = s as usize;
        self.reference[i] = price;
        let Some(b) = self.instruments[i].breaker else {
            return;
        };
        let (first, at) = self.anchor[i];
        if first <= 0 || self.now_ns >= at.saturating_add(b.window_ns) {
            self.anchor[i] = (price, self.now_ns);
        } else if self.status[i] == InstrumentStatus::Open
            && i128::from((price - first).abs()) * 10_000 > i128::from(first) * i128::from(b.bps)
            && !self.tripped.contains(&s)
        {
            self.tripped.push(s);
        }
    }

    /// The time of the input about to be applied.
    #[inline]
    pub(crate) fn set_now(&mut self, ts_ns: u64) {
        self.now_ns = ts_ns;
    }

    /// The time of the input being applied.
    #[inline]
    pub(crate) fn now(&self) -> u64 {
        self.now_ns
    }

    /// Whether a breaker tripped in the command just run.
    #[inline]
    pub(crate) fn any_tripped(&self) -> bool {
        !self.tripped.is_empty()
    }

    /// The symbols whose breaker tripped in the input being applied, emptied.
    pub(crate) fn take_tripped(&mut self) -> Vec<SymbolId> {
        std::mem::take(&mut self.tripped)
    }

    /// Gives back `take_tripped`'s vector (its capacity kept).
    pub(crate) fn put_tripped(&mut self, mut v: Vec<SymbolId>) {
        v.clear();
        self.tripped = v;
    }

    /// Halts symbol `s` by its breaker until `now + halt_ns`.
    pub(crate) fn trip(&mut self, s: SymbolId) {
        let i = s as usize;
        let halt = self.instruments[i].breaker.map_or(0, |b| b.halt_ns);
        let until = self.now_ns.saturating_add(halt).max(1);
        self.halted_until[i] = until;
        self.next_reopen = self.next_reopen.min(until);
        self.set_status(s, InstrumentStatus::Halted);
    }

    /// When the earliest breaker halt ends (`u64::MAX`: none).
    pub(crate) fn next_reopen(&self) -> u64 {
        self.next_reopen
    }

    /// Ends the breaker halts (and reopening calls) due at `now`: appends each symbol and the
    /// status it moves to (pre-open for a reopening call, then open; the caller sets it), in
    /// symbol order.
    pub(crate) fn reopen_due(&mut self, now: u64, due: &mut Vec<(SymbolId, InstrumentStatus)>) {
        if now < self.next_reopen {
            return;
        }
        let mut next = u64::MAX;
        for i in 0..self.halted_until.len() {
            let until = self.halted_until[i];
            if until == 0 {
                continue;
            }
            if until > now {
                next = next.min(until);
                continue;
            }
            let auction = self.instruments[i].breaker.map_or(0, |b| b.auction_ns);
            match self.status[i] {
                InstrumentStatus::Halted if auction > 0 && !self.reopening[i] => {
                    let end = now.saturating_add(auction);
                    self.halted_until[i] = end;
                    self.reopening[i] = true;
                    next = next.min(end);
                    due.push((i as SymbolId, InstrumentStatus::PreOpen));
                }
                InstrumentStatus::Halted | InstrumentStatus::PreOpen => {
                    self.halted_until[i] = 0;
                    self.reopening[i] = false;
                    self.anchor[i] = (0, 0);
                    due.push((i as SymbolId, InstrumentStatus::Open));
                }
                _ => {
                    self.halted_until[i] = 0;
                    self.reopening[i] = false;
                }
            }
        }
        self.next_reopen = next;
    }

    /// An operator's status for symbol `s` ends its breaker halt (or reopening call).
    pub(crate) fn clear_breaker_halt(&mut self, s: SymbolId) {
        self.halted_until[s as usize] = 0;
        self.reopening[s as usize] = false;
    }

    /// Account `a`'s net position in symbol `s`.
    pub(crate) fn position(&self, a: usize, s: SymbolId) -> i64 {
        self.position[self.cell(a, s as usize)]
    }

    /// Account `a`'s resting orders' notional.
    pub(crate) fn open_notional(&self, a: usize) -> i128 {
        self.open_notional[a]
    }

    /// The state only the snapshot can give back: by symbol its reference, status and the
    /// operator's limits; the kill switches; then the non-zero positions.
    pub(crate) fn snapshot(&self, e: &mut crate::snap::SnapWriter<'_>) {
        e.u64(self.reference.len() as u64);
        for s in 0..self.reference.len() {
            e.u64(self.reference[s] as u64);
            e.u64(status_code(self.status[s]) | u64::from(self.reopening[s]) << 8);
            e.u64(self.anchor[s].0 as u64);
            e.u64(self.anchor[s].1);
            e.u64(self.halted_until[s]);
            match &self.overrides[s] {
                None => e.u64(0),
                Some(r) => {
                    e.u64(1);
                    let opt = |e: &mut crate::snap::SnapWriter<'_>, v: Option<u64>| {
                        e.u64(v.map_or(0, |v| v.saturating_add(1)))
                    };
                    opt(e, r.band_bps.map(u64::from));
                    opt(e, r.reference_price.map(|p| p as u64));
                    opt(e, r.max_order_qty);
                    match r.max_order_notional {
                        None => e.u64(0),
                        Some(n) => {
                            e.u64(1);
                            e.bytes(&n.to_le_bytes());
                        }
                    }
                    match r.breaker {
                        None => e.u64(0),
                        Some(b) => {
                            e.u64(if b.auction_ns == 0 { 1 } else { 2 });
                            e.u64(u64::from(b.bps));
                            e.u64(b.window_ns);
                            e.u64(b.halt_ns);
                            if b.auction_ns != 0 {
                                e.u64(b.auction_ns);
                            }
                        }
                    }
                }
            }
        }
        for blocked in [&self.firm_blocked, &self.account_blocked] {
            e.u64(blocked.len() as u64);
            for &b in blocked {
                e.u64(u64::from(b));
            }
        }
        let held = self.position.iter().filter(|&&p| p != 0).count();
        e.u64(held as u64);
        for (c, &p) in self.position.iter().enumerate() {
            if p != 0 {
                e.u64(c as u64);
                e.u64(p as u64);
            }
        }
    }

    /// Reads what `snapshot` wrote.
    pub(crate) fn restore(&mut self, r: &mut crate::snap::SnapReader<'_>) -> Result<(), String> {
        if r.count()? != self.reference.len() as u64 {
            return Err("snapshot: reference prices of another set of instruments".into());
        }
        for s in 0..self.reference.len() {
            self.reference[s] = r.u64()? as i64;
            let code = r.u64()?;
            self.reopening[s] = match code >> 8 {
                0 => false,
                1 => true,
                _ => return Err("snapshot: bad instrument status".into()),
            };
            self.status[s] = match code & 0xff {
                0 => InstrumentStatus::Open,
                1 => InstrumentStatus::Halted,
                2 => InstrumentStatus::Closed,
                3 => InstrumentStatus::PreOpen,
                4 => InstrumentStatus::PreClose,
                _ => return Err("snapshot: bad instrument status".into()),
            };
            self.anchor[s] = (r.u64()? as i64, r.u64()?);
            self.halted_until[s] = r.u64()?;
            if self.halted_until[s] != 0 {
                self.next_reopen = self.next_reopen.min(self.halted_until[s]);
            }
            match r.u64()? {
                0 => {}
                1 => {
                    let mut opt = || -> Result<Option<u64>, String> {
                        Ok(match r.u64()? {
                            0 => None,
                            v => Some(v - 1),
                        })
                    };
                    let band_bps = opt()?
                        .map(|b| u32::try_from(b).map_err(|_| "snapshot: bad band".to_string()))
                        .transpose()?;
                    let reference_price = opt()?.map(|p| p as i64);
                    let max_order_qty = opt()?;
                    let max_order_notional = match r.u64()? {
                        0 => None,
                        1 => Some(i128::from_le_bytes(
                            r.bytes()?
                                .try_into()
                                .map_err(|_| "snapshot: bad notional limit".to_string())?,
                        )),
                        _ => return Err("snapshot: bad notional limit".into()),
                    };
                    let breaker = match r.u64()? {
                        0 => None,
                        tag @ (1 | 2) => Some(Breaker {
                            bps: u32::try_from(r.u64()?)
                                .map_err(|_| "snapshot: bad breaker".to_string())?,
                            window_ns: r.u64()?,
                            halt_ns: r.u64()?,
                            auction_ns: if tag == 2 { r.u64()? } else { 0 },
                        }),
                        _ => return Err("snapshot: bad breaker".into()),
                    };
                    let o = InstrumentRisk {
                        band_bps,
                        reference_price,
                        max_order_qty,
                        max_order_notional,
                        breaker,
                    };
                    self.instruments[s] = o;
                    self.overrides[s] = Some(o);
                }
                _ => return Err("snapshot: bad instrument limits".into()),
            }
        }
        for blocked in [&mut self.firm_blocked, &mut self.account_blocked] {
            if r.count()? != blocked.len() as u64 {
                return Err("snapshot: kill switches of another set of firms".into());
            }
            for b in blocked.iter_mut() {
                *b = match r.u64()? {
                    0 => false,
                    1 => true,
                    _ => return Err("snapshot: bad kill switch".into()),
                };
            }
        }
        for _ in 0..r.count()? {
            let c = r.u64()? as usize;
            let p = r.u64()? as i64;
            match self.position.get_mut(c) {
                Some(x) if *x == 0 && p != 0 => *x = p,
                _ => return Err("snapshot: bad position".into()),
            }
        }
        Ok(())
    }

    /// Sums the open values again from the live orders (a restore): (account, order).
    pub(crate) fn recount<'a>(&mut self, live: impl Iterator<Item = (usize, &'a OrderRecord)>) {
        self.open_notional.fill(0);
        self.open_buy.fill(0);
        self.open_sell.fill(0);
        for (a, o) in live {
            if counted(o) {
                self.add_open(a, o.symbol, o.side, o.price, o.leaves_qty);
            }
        }
    }
}

fn status_code(s: InstrumentStatus) -> u64 {
    match s {
        InstrumentStatus::Open => 0,
        InstrumentStatus::Halted => 1,
        InstrumentStatus::Closed => 2,
        InstrumentStatus::PreOpen => 3,
        InstrumentStatus::PreClose => 4,
    }
}

fn min_opt<T: Ord>(a: Option<T>, b: Option<T>) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, None) => a,
        (None, b) => b,
    }
}
