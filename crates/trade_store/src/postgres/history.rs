//! The PostgreSQL store's read side: history pages from a small pool of connections beside
//! the follower's (MVCC: a page is one statement, which sees one committed state and never
//! blocks the writer).
//!
//! A pooled connection found dead at its first use (the server restarted since) is replaced
//! and the read made again; reads change nothing.

use super::{describe, lost, Target};
use crate::history::{FillQuery, FillRow, History, OrderQuery, OrderRow, TradeQuery};
use crate::{parse_decimal, side_name, Position, StoreError, TradeRow, CLOSED_STATUSES};
use ::postgres::error::SqlState;
use ::postgres::{Client, Statement};
use std::sync::Mutex;

/// Connections kept for reuse at most (a page opens another when all are busy).
pub(super) const IDLE_MAX: usize = 4;

/// Reads the store in a PostgreSQL database; safe to share between threads.
pub struct PostgresHistory {
    target: Target,
    pub(super) idle: Mutex<Vec<Reader>>,
}

/// A connection and its prepared statements.
pub(super) struct Reader {
    client: Client,
    position: Statement,
    trades: Statement,
    trades_desc: Statement,
    fills: Statement,
    closed_orders: Statement,
}

const POSITION: &str = "SELECT seq, ts_ns FROM store_position WHERE id = 1";

const TRADES: &str = "SELECT trade_id, seq, ts_ns, price_units, qty, maker_order_id, \
     taker_order_id, maker_account, taker_account, taker_side FROM trades \
     WHERE instrument_id = $1 AND trade_id > $2 ORDER BY trade_id LIMIT $3";

/// `TRADES` newest first: below `$2` (0: no bound).
const TRADES_DESC: &str = "SELECT trade_id, seq, ts_ns, price_units, qty, maker_order_id, \
     taker_order_id, maker_account, taker_account, taker_side FROM trades \
     WHERE instrument_id = $1 AND ($2::BIGINT = 0 OR trade_id < $2::BIGINT) \
     ORDER BY trade_id DESC LIMIT $3";

const FILLS: &str = "SELECT e.seq, e.n, e.order_id, o.cl_ord_id, e.instrument_id, e.side, \
     e.price_units, e.qty, e.cum_qty, e.leaves_qty, e.trade_id, e.liquidity, e.ts_ns \
     FROM executions e JOIN orders o ON o.order_id = e.order_id \
     WHERE e.owner = $1 AND (e.seq, e.n) > ($2, $3) \
     AND ($4::bigint IS NULL OR e.instrument_id = $4::bigint) \
     ORDER BY e.seq, e.n LIMIT $5";

const CLOSED_ORDERS: &str = "SELECT o.order_id, o.instrument_id, o.account, o.side, o.ord_type, \
     o.tif, o.price_units, o.cl_ord_id, o.order_qty, o.cum_qty, o.leaves_qty, o.notional::text, \
     o.status, o.created_ts_ns, o.updated_ts_ns, i.price_decimals, \
     (SELECT e.reason FROM order_events e WHERE e.order_id = o.order_id \
      AND e.kind = 'canceled' ORDER BY e.seq DESC, e.n DESC LIMIT 1) \
     FROM orders o JOIN instruments i ON i.instrument_id = o.instrument_id \
     WHERE o.owner = $1 AND o.order_id > $2 AND o.status = ANY($3::text[]) \
     AND o.created_ts_ns >= $4 AND o.created_ts_ns < $5 \
     AND ($6::bigint IS NULL OR o.instrument_id = $6::bigint) \
     ORDER BY o.order_id LIMIT $7";

impl PostgresHistory {
    /// Reads the store in the database at `url` (which the follower creates; until it has,
    /// each read fails with a clear error). Connects at the first read; a URL that does not
    /// parse is refused here.
    pub fn new(url: &str) -> Result<PostgresHistory, StoreError> {
        Ok(PostgresHistory {
            target: Target::parse(url)?,
            idle: Mutex::new(Vec::new()),
        })
    }

    fn open(&self) -> Result<Reader, StoreError> {
        let mut client = self.target.connect()?;
        let mut prepare = |sql: &str| {
            client.prepare(sql).map_err(|e| {
                if e.code() == Some(&SqlState::UNDEFINED_TABLE) {
                    StoreError(format!(
                        "{}: the store is not created yet ({})",
                        self.target.label,
                        describe(&e)
                    ))
                } else {
                    self.target.err(&e)
                }
            })
        };
        let position = prepare(POSITION)?;
        let trades = prepare(TRADES)?;
        let trades_desc = prepare(TRADES_DESC)?;
        let fills = prepare(FILLS)?;
        let closed_orders = prepare(CLOSED_ORDERS)?;
        Ok(Reader {
            client,
            position,
            trades,
            trades_desc,
            fills,
            closed_orders,
        })
    }

    /// Runs `f` on an idle connection or a new one. A connection that `f` finds lost is
    /// dropped, and if it came from the pool, `f` runs once more on a new one.
    fn with<T>(
        &self,
        f: impl Fn(&mut Reader) -> Result<T, ::postgres::Error>,
    ) -> Result<T, StoreError> {
        let pooled = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let (mut reader, mut fresh) = match pooled {
            Some(r) if !r.client.is_closed() => (r, false),
            _ => (self.open()?, true),
        };
        loop {
            match f(&mut reader) {
                Ok(v) => {
                    let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
                    if idle.len() < IDLE_MAX {
                        idle.push(reader);
                    }
                    return Ok(v);
                }
                Err(e) if !fresh && lost(&reader.client, &e) => {
                    reader = self.open()?;
                    fresh = true;
                }
                Err(e) => return Err(self.target.err(&e)),
            }
        }
    }
}

fn u(v: i64) -> u64 {
    v as u64
}

/// A bound given as u64 (ns, ids), clamped into BIGINT.
fn i(v: u64) -> i64 {
    v.min(i64::MAX as u64) as i64
}

impl History for PostgresHistory {
    fn position(&self) -> Result<Position, StoreError> {
        self.with(|r| {
            let row = r.client.query_opt(&r.position, &[])?;
            Ok(row.map_or(Position::default(), |row| Position {
                seq: u(row.get(0)),
                ts_ns: u(row.get(1)),
            }))
        })
    }

    fn trades(&self, q: &TradeQuery) -> Result<Vec<TradeRow>, StoreError> {
        self.with(|r| {
            let st = if q.newest_first {
                &r.trades_desc
            } else {
                &r.trades
            };
            let rows = r.client.query(
                st,
                &[&(q.instrument_id as i64), &i(q.since), &(q.limit as i64)],
            )?;
            Ok(rows
                .iter()
                .map(|row| TradeRow {
                    trade_id: u(row.get(0)),
                    seq: u(row.get(1)),
                    ts_ns: u(row.get(2)),
                    instrument_id: q.instrument_id,
                    price: row.get(3),
                    qty: u(row.get(4)),
                    maker_order_id: u(row.get(5)),
                    taker_order_id: u(row.get(6)),
                    maker_account: row.get::<_, i64>(7) as u32,
                    taker_account: row.get::<_, i64>(8) as u32,
                    taker_side: side_name(row.get(9)),
                })
                .collect())
        })
    }

    fn fills(&self, q: &FillQuery) -> Result<Vec<FillRow>, StoreError> {
        self.with(|r| {
            let rows = r.client.query(
                &r.fills,
                &[
                    &(q.owner as i64),
                    &i(q.since.0),
                    &(q.since.1 as i64),
                    &q.instrument_id.map(|v| v as i64),
                    &(q.limit as i64),
                ],
            )?;
            Ok(rows
                .iter()
                .map(|row| FillRow {
                    seq: u(row.get(0)),
                    n: row.get::<_, i64>(1) as u32,
                    order_id: u(row.get(2)),
                    cl_ord_id: row.get(3),
                    instrument_id: row.get::<_, i64>(4) as u32,
                    side: row.get(5),
                    price: row.get(6),
                    qty: u(row.get(7)),
                    cum_qty: u(row.get(8)),
                    leaves_qty: u(row.get(9)),
                    trade_id: row.get::<_, Option<i64>>(10).map(u),
                    liquidity: row.get(11),
                    ts_ns: u(row.get(12)),
                })
                .collect())
        })
    }

    fn closed_orders(&self, q: &OrderQuery) -> Result<Vec<OrderRow>, StoreError> {
        // The notional is read as text and parsed in the instrument's decimals (exact).
        let raw = self.with(|r| {
            let rows = r.client.query(
                &r.closed_orders,
                &[
                    &(q.owner as i64),
                    &i(q.since),
                    &&CLOSED_STATUSES[..],
                    &i(q.from_ns),
                    &i(q.to_ns),
                    &q.instrument_id.map(|v| v as i64),
                    &(q.limit as i64),
                ],
            )?;
            Ok(rows
                .iter()
                .map(|row| {
                    let order = OrderRow {
                        order_id: u(row.get(0)),
                        instrument_id: row.get::<_, i64>(1) as u32,
                        account: row.get::<_, i64>(2) as u32,
                        side: row.get(3),
                        ord_type: row.get(4),
                        tif: row.get(5),
                        price: row.get(6),
                        cl_ord_id: row.get(7),
                        order_qty: u(row.get(8)),
                        cum_qty: u(row.get(9)),
                        leaves_qty: u(row.get(10)),
                        notional: 0,
                        status: row.get(12),
                        cancel_reason: row.get(16),
                        created_ts_ns: u(row.get(13)),
                        updated_ts_ns: u(row.get(14)),
                    };
                    (
                        order,
                        row.get::<_, String>(11),
                        row.get::<_, i64>(15) as u32,
                    )
                })
                .collect::<Vec<_>>())
        })?;
        raw.into_iter()
            .map(|(mut row, notional, decimals)| {
                row.notional = parse_decimal(&notional, decimals).ok_or_else(|| {
                    StoreError(format!(
                        "{}: orders.notional {notional:?} of order {} is not a decimal",
                        self.target.label, row.order_id
                    ))
                })?;
                Ok(row)
            })
            .collect()
    }
}
