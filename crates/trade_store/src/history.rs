//! The history queries the REST API serves from the store: a symbol's trades, an owner's fills
//! and closed orders, each one page at a time by keyset (rows after a key, in key order, never
//! OFFSET), each on an index of the schema.
//!
//! Role: the read side of every backend ([`History`]); the HTTP edge turns the rows into JSON.
//! Reads run beside the follower's writes (SQLite in WAL mode, PostgreSQL's MVCC): a page sees
//! one committed state.

use crate::{Position, StoreError, TradeRow};

/// The most rows one page holds.
pub const PAGE_MAX: u32 = 1000;

/// A symbol's trades after trade `since`, in trade id order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TradeQuery {
    pub instrument_id: u32,
    /// Oldest first: trades with an id above this (0: from the first). Newest first: trades
    /// with an id below this (0: from the last).
    pub since: u64,
    /// 1 to [`PAGE_MAX`].
    pub limit: u32,
    /// Newest first (a chart's latest trades), else oldest first.
    pub newest_first: bool,
}

/// An owner's fills after execution `since` (record seq, report number), in execution order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FillQuery {
    pub owner: u16,
    /// Only this instrument's (`None`: every instrument).
    pub instrument_id: Option<u32>,
    /// Executions after this (seq, n) (`(0, 0)`: from the first).
    pub since: (u64, u32),
    pub limit: u32,
}

/// An owner's closed orders (filled, canceled or expired) created in `[from_ns, to_ns)`, after
/// order `since`, in order id order (which is creation order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderQuery {
    pub owner: u16,
    pub instrument_id: Option<u32>,
    /// Orders with an id above this (0: from the first).
    pub since: u64,
    /// Created at or after this (ns since the epoch; 0: no bound).
    pub from_ns: u64,
    /// Created before this (`u64::MAX`: no bound).
    pub to_ns: u64,
    pub limit: u32,
}

/// One fill of an owner's order: an execution row with its order's client id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FillRow {
    pub seq: u64,
    pub n: u32,
    pub order_id: u64,
    pub cl_ord_id: String,
    pub instrument_id: u32,
    /// `buy` or `sell`.
    pub side: String,
    /// Instrument units.
    pub price: i64,
    pub qty: u64,
    pub cum_qty: u64,
    pub leaves_qty: u64,
    pub trade_id: Option<u64>,
    /// `maker`, `taker` or `None` (unknown).
    pub liquidity: Option<String>,
    pub ts_ns: u64,
}

impl FillRow {
    /// Its execution id, as FIX's ExecID and the API say it: `seq.n`.
    pub fn exec_id(&self) -> String {
        format!("{}.{}", self.seq, self.n)
    }
}

/// An order's last state, as the `orders` table holds it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderRow {
    pub order_id: u64,
    pub instrument_id: u32,
    pub account: u32,
    pub side: String,
    pub ord_type: String,
    pub tif: String,
    /// Instrument units (`None`: a market order).
    pub price: Option<i64>,
    pub cl_ord_id: String,
    pub order_qty: u64,
    pub cum_qty: u64,
    pub leaves_qty: u64,
    /// Sum of price * qty over its fills, in instrument units.
    pub notional: i128,
    pub status: String,
    /// Why it left the book, for a canceled or expired order: the reason of its last
    /// `canceled` event (`user`, `ioc`, `fok`, `stp`, `no_liquidity`, `expired`, `disconnect`).
    pub cancel_reason: Option<String>,
    pub created_ts_ns: u64,
    pub updated_ts_ns: u64,
}

/// Parses an execution id `seq.n` (the API's `since` of fills).
pub fn parse_exec_id(s: &str) -> Option<(u64, u32)> {
    let (seq, n) = s.split_once('.')?;
    let all_digits = |t: &str| !t.is_empty() && t.bytes().all(|c| c.is_ascii_digit());
    if !all_digits(seq) || !all_digits(n) {
        return None;
    }
    Some((seq.parse().ok()?, n.parse().ok()?))
}

/// The read side of a store. Each call is one consistent read; callers run it off their
/// async threads (it blocks).
pub trait History: Send + Sync {
    /// The journal position the store holds now.
    fn position(&self) -> Result<Position, StoreError>;
    fn trades(&self, q: &TradeQuery) -> Result<Vec<TradeRow>, StoreError>;
    fn fills(&self, q: &FillQuery) -> Result<Vec<FillRow>, StoreError>;
    fn closed_orders(&self, q: &OrderQuery) -> Result<Vec<OrderRow>, StoreError>;
}
