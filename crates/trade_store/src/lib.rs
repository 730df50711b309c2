//! The trade store: every order state change, execution and trade of the exchange in a
//! database a user can query with SQL, written by a journal follower exactly once.
//!
//! Role: owns the schema (`migrations/`, SQLite's, and `migrations/postgres/`, the same tables
//! in PostgreSQL's types; applied at open: a database whose schema is newer than this binary's
//! is refused), the rows a follower hands it ([`Batch`]: protocol-neutral, in the instrument's
//! exact units) and the [`Store`] trait every backend implements ([`Sqlite`], [`Postgres`]).
//! The server's follower (`server::store`) turns the exchange's typed outputs into rows;
//! `rialto store verify` compares a [`Summary`] of the store with one of the journal.
//!
//! Exactly once: a batch's rows and the journal position it reaches (`store_position`) commit
//! in one transaction, and every row has a unique key derived from the journal (order id,
//! execution id = record seq + report number, trade id), written with "insert or ignore", so
//! a batch written twice changes nothing.
//!
//! Never: floating point for a price or quantity; a row without its journal sequence number.

mod history;
mod postgres;
mod sqlite;

pub use self::postgres::{redact_url, Postgres, PostgresHistory, PG_MIGRATIONS};
pub use history::{
    parse_exec_id, FillQuery, FillRow, History, OrderQuery, OrderRow, TradeQuery, PAGE_MAX,
};
pub use rusqlite;
pub use sqlite::{check_version, Sqlite, SqliteHistory};

use std::fmt;

/// The schema version this binary writes (the number of the newest migration).
pub const SCHEMA_VERSION: u32 = MIGRATIONS.len() as u32;

/// The migrations, in order: migration `i` takes a database from version `i` to `i + 1`
/// (SQLite's; PostgreSQL's are [`PG_MIGRATIONS`], as many, of the same tables).
pub const MIGRATIONS: &[&str] = &[
    include_str!("../migrations/0001_init.sql"),
    include_str!("../migrations/0002_history_indexes.sql"),
    include_str!("../migrations/0003_fewer_indexes.sql"),
];

/// The default file name of the SQLite store, in the server's data directory.
pub const SQLITE_FILE: &str = "rialto.db";

#[derive(Debug)]
pub struct StoreError(pub String);

/// Why a database of schema version `v` is refused, and `fresh`: where a new store would go.
fn newer_message(v: u32, fresh: &str) -> String {
    format!(
        "the database has schema version {v}, newer than this rialto's ({SCHEMA_VERSION}): it \
         was written by a newer rialto; run that one, or {fresh}"
    )
}

impl fmt::Display for StoreError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "trade store: {}", self.0)
    }
}

impl std::error::Error for StoreError {}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> StoreError {
        StoreError(e.to_string())
    }
}

/// An instrument, as configured (instruments are only ever appended to).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstrumentRow {
    /// Its index in the configuration: the exchange's symbol id.
    pub id: u32,
    pub symbol: String,
    /// The tick as configured (a decimal string).
    pub tick: String,
    /// Prices are in units of 10^-price_decimals.
    pub price_decimals: u32,
    pub lot: u64,
}

/// What happened to an order (one report of the exchange).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    New,
    /// `qty` traded at `price` (instrument units), in trade `trade_id` as its maker or taker
    /// (`None` where the record's fills and trades do not pair up one trade to two fills).
    Fill {
        price: i64,
        qty: u64,
        trade_id: Option<u64>,
        maker: Option<bool>,
    },
    /// The rest left the book; the reason (`user`, `ioc`, `fok`, `stp`, `no_liquidity`,
    /// `expired`, ...).
    Canceled(&'static str),
    Replaced,
    /// A stop order was triggered.
    Triggered,
}

impl EventKind {
    pub fn name(self) -> &'static str {
        match self {
            EventKind::New => "new",
            EventKind::Fill { .. } => "fill",
            EventKind::Canceled(_) => "canceled",
            EventKind::Replaced => "replaced",
            EventKind::Triggered => "triggered",
        }
    }
}

/// An order as it is after a change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderFields {
    pub instrument_id: u32,
    /// The originator that entered it (a FIX session's index, or an API key's after them).
    pub owner: u16,
    pub account: u32,
    /// `buy` or `sell`.
    pub side: &'static str,
    /// `limit` or `market`.
    pub ord_type: &'static str,
    /// `day`, `gtc`, `ioc`, `fok`.
    pub tif: &'static str,
    /// Limit price in instrument units (`None`: a market order).
    pub price: Option<i64>,
    pub cl_ord_id: String,
    pub order_qty: u64,
    pub cum_qty: u64,
    pub leaves_qty: u64,
    /// Sum of price * qty over its fills, in instrument units.
    pub notional: i128,
    /// `new`, `partially_filled`, `filled`, `canceled`, `expired`.
    pub status: &'static str,
}

/// One state change of an order: report `n` of journal record `seq`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OrderEvent {
    pub seq: u64,
    pub n: u32,
    pub ts_ns: u64,
    pub order_id: u64,
    pub kind: EventKind,
    pub order: OrderFields,
}

impl OrderEvent {
    /// The execution id of a fill, as FIX's ExecID says it: `seq.n`.
    pub fn exec_id(&self) -> String {
        format!("{}.{}", self.seq, self.n)
    }
}

/// One match between a taker and a resting maker, at the maker's price.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TradeRow {
    pub trade_id: u64,
    pub seq: u64,
    pub ts_ns: u64,
    pub instrument_id: u32,
    /// Instrument units.
    pub price: i64,
    pub qty: u64,
    pub maker_order_id: u64,
    pub taker_order_id: u64,
    pub maker_account: u32,
    pub taker_account: u32,
    /// `buy` or `sell`.
    pub taker_side: &'static str,
}

/// The rows of a stretch of journal records, and the position they reach: everything up to
/// record `upto_seq` (stamped `upto_ts_ns`) is in the store once it is written.
#[derive(Clone, Debug, Default)]
pub struct Batch {
    pub events: Vec<OrderEvent>,
    pub trades: Vec<TradeRow>,
    pub upto_seq: u64,
    pub upto_ts_ns: u64,
}

impl Batch {
    pub fn clear(&mut self) {
        self.events.clear();
        self.trades.clear();
    }

    /// The rows the batch writes: one per order event, per execution (a fill event) and per
    /// trade, and one per order it changes (inserted or updated).
    pub fn rows(&self) -> usize {
        let fills = self
            .events
            .iter()
            .filter(|e| matches!(e.kind, EventKind::Fill { .. }))
            .count();
        let mut orders: Vec<u64> = self.events.iter().map(|e| e.order_id).collect();
        orders.sort_unstable();
        orders.dedup();
        self.events.len() + fills + self.trades.len() + orders.len()
    }
}

/// Where the store is in the journal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    /// Every record up to this one is in the store (0: none).
    pub seq: u64,
    pub ts_ns: u64,
}

/// A database the follower writes. Each call is one transaction.
pub trait Store: Send {
    /// The journal position the store holds.
    fn position(&mut self) -> Result<Position, StoreError>;
    /// Writes the instruments (new ones added, known ones left as they are).
    fn put_instruments(&mut self, instruments: &[InstrumentRow]) -> Result<(), StoreError>;
    /// Writes `batch`'s rows and its position, all or nothing.
    fn write(&mut self, batch: &Batch) -> Result<(), StoreError>;
    /// What `rialto store verify` compares with the journal.
    fn summary(&mut self) -> Result<Summary, StoreError>;
    /// Removes every order, execution and trade and sets the position to 0, in one transaction
    /// (`rialto store rebuild`; the instruments stay).
    fn reset(&mut self) -> Result<(), StoreError>;
}

/// The static name of a side read back (`""` for anything else).
pub fn side_name(s: &str) -> &'static str {
    match s {
        "buy" => "buy",
        "sell" => "sell",
        _ => "",
    }
}

/// The static name of a status read back (hashes compare the text).
pub fn status_name(s: &str) -> &'static str {
    match s {
        "new" => "new",
        "partially_filled" => "partially_filled",
        "filled" => "filled",
        "canceled" => "canceled",
        "expired" => "expired",
        _ => "unknown",
    }
}

/// The statuses of a closed order (`orders?status=closed`).
pub const CLOSED_STATUSES: [&str; 3] = ["filled", "canceled", "expired"];

/// Counts, volumes and hashes of a store's contents (or of what the journal says it should
/// hold: the same fold over the same rows in the same order gives the same summary).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    pub position: u64,
    pub orders: u64,
    pub order_events: u64,
    pub executions: u64,
    pub trades: u64,
    /// Sum of the trades' quantities.
    pub volume: u128,
    /// Sum of the trades' price * qty, in instrument units.
    pub notional: i128,
    /// FNV-1a of the trades in trade id order ([`trade_hash_step`]).
    pub trades_hash: u64,
    /// FNV-1a of the orders' final states in order id order ([`order_hash_step`]).
    pub orders_hash: u64,
    /// The ids of the first [`SUMMARY_TRADES_KEPT`] trades, in id order: what names the first
    /// missing or extra trade ([`Summary::compare`]).
    pub trade_ids: Vec<u64>,
}

/// How many trade ids a summary keeps to name the first missing or extra trade.
pub const SUMMARY_TRADES_KEPT: usize = 1 << 20;

/// The FNV-1a offset basis: the hash of nothing.
pub const HASH_START: u64 = 0xcbf2_9ce4_8422_2325;

fn fnv(mut h: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Folds a trade into a trades hash.
pub fn trade_hash_step(h: u64, t: &TradeRow) -> u64 {
    let mut h = fnv(h, &t.trade_id.to_le_bytes());
    h = fnv(h, &t.seq.to_le_bytes());
    h = fnv(h, &t.instrument_id.to_le_bytes());
    h = fnv(h, &t.price.to_le_bytes());
    h = fnv(h, &t.qty.to_le_bytes());
    h = fnv(h, &t.maker_order_id.to_le_bytes());
    fnv(h, &t.taker_order_id.to_le_bytes())
}

/// Folds an order's final state into an orders hash.
pub fn order_hash_step(h: u64, order_id: u64, o: &OrderFields) -> u64 {
    let mut h = fnv(h, &order_id.to_le_bytes());
    h = fnv(h, o.status.as_bytes());
    h = fnv(h, &o.order_qty.to_le_bytes());
    h = fnv(h, &o.cum_qty.to_le_bytes());
    h = fnv(h, &o.leaves_qty.to_le_bytes());
    fnv(h, &o.notional.to_le_bytes())
}

impl Summary {
    /// Adds a trade (in trade id order).
    pub fn add_trade(&mut self, t: &TradeRow) {
        if self.trades == 0 {
            self.trades_hash = HASH_START;
        }
        self.trades += 1;
        self.volume += t.qty as u128;
        self.notional += t.price as i128 * t.qty as i128;
        self.trades_hash = trade_hash_step(self.trades_hash, t);
        if self.trade_ids.len() < SUMMARY_TRADES_KEPT {
            self.trade_ids.push(t.trade_id);
        }
    }

    /// Adds an order's final state (in order id order).
    pub fn add_order(&mut self, order_id: u64, o: &OrderFields) {
        if self.orders == 0 {
            self.orders_hash = HASH_START;
        }
        self.orders += 1;
        self.orders_hash = order_hash_step(self.orders_hash, order_id, o);
    }

    /// The first difference between this store summary and `journal`'s, said in words
    /// (`None`: they agree).
    pub fn compare(&self, journal: &Summary) -> Option<String> {
        if self.position != journal.position {
            return Some(format!(
                "the store is at journal record {}, the journal at {}",
                self.position, journal.position
            ));
        }
        let counts = [
            ("orders", self.orders, journal.orders),
            ("order events", self.order_events, journal.order_events),
            ("executions", self.executions, journal.executions),
            ("trades", self.trades, journal.trades),
        ];
        for (what, s, j) in counts {
            if s != j {
                return Some(format!("{what}: the store has {s}, the journal {j}"));
            }
        }
        if let Some(i) = (0..self.trade_ids.len().min(journal.trade_ids.len()))
            .find(|&i| self.trade_ids[i] != journal.trade_ids[i])
        {
            return Some(format!(
                "trades: the {}th in id order is trade {} in the store, {} in the journal",
                i + 1,
                self.trade_ids[i],
                journal.trade_ids[i]
            ));
        }
        if self.volume != journal.volume {
            return Some(format!(
                "traded volume: the store has {}, the journal {}",
                self.volume, journal.volume
            ));
        }
        if self.notional != journal.notional {
            return Some(format!(
                "traded notional: the store has {}, the journal {}",
                self.notional, journal.notional
            ));
        }
        if self.trades_hash != journal.trades_hash {
            return Some(format!(
                "the hash of the trades: the store's {:016x}, the journal's {:016x}",
                self.trades_hash, journal.trades_hash
            ));
        }
        if self.orders_hash != journal.orders_hash {
            return Some(format!(
                "the hash of the orders' final states: the store's {:016x}, the journal's {:016x}",
                self.orders_hash, journal.orders_hash
            ));
        }
        None
    }
}

/// `units` * 10^-decimals as an exact decimal string: (12345, 2) -> "123.45", (-5, 3) ->
/// "-0.005", (7, 0) -> "7".
pub fn decimal(units: i128, decimals: u32) -> String {
    if decimals == 0 {
        return units.to_string();
    }
    let neg = units < 0;
    let digits = units.unsigned_abs().to_string();
    let d = decimals as usize;
    let padded = if digits.len() <= d {
        format!("{}{digits}", "0".repeat(d + 1 - digits.len()))
    } else {
        digits
    };
    let (int, frac) = padded.split_at(padded.len() - d);
    format!("{}{int}.{frac}", if neg { "-" } else { "" })
}

/// Parses `decimal`'s output back into units of 10^-decimals (exact; `None` if it does not
/// fit that scale).
pub fn parse_decimal(s: &str, decimals: u32) -> Option<i128> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if frac.len() > decimals as usize || int.is_empty() {
        return None;
    }
    let mut v: i128 = int.parse().ok()?;
    for i in 0..decimals as usize {
        let d = frac.as_bytes().get(i).map_or(0, |b| (b - b'0') as i128);
        v = v * 10 + d;
    }
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests;
