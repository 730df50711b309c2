//! The SQLite store's read side: history pages from read-only connections beside the writer
//! (WAL mode: a reader sees the last committed batch and never blocks the follower).

use crate::history::{FillQuery, FillRow, History, OrderQuery, OrderRow, TradeQuery};
use crate::{parse_decimal, side_name, Position, StoreError, TradeRow, CLOSED_STATUSES};
use rusqlite::{params, Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Connections kept for reuse at most (a page opens another when all are busy).
const IDLE_MAX: usize = 4;

/// Reads the store at a path; safe to share between threads.
pub struct SqliteHistory {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl SqliteHistory {
    /// Reads the store at `path` (which the follower creates; until it exists, each read
    /// fails with a clear error).
    pub fn new(path: &Path) -> SqliteHistory {
        SqliteHistory {
            path: path.to_path_buf(),
            idle: Mutex::new(Vec::new()),
        }
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, StoreError> {
        let conn = self.idle.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let conn = match conn {
            Some(c) => c,
            None => self.open()?,
        };
        let r = f(&conn).map_err(|e| StoreError(format!("{}: {e}", self.path.display())));
        if r.is_ok() {
            let mut idle = self.idle.lock().unwrap_or_else(|e| e.into_inner());
            if idle.len() < IDLE_MAX {
                idle.push(conn);
            }
        }
        r
    }

    fn open(&self) -> Result<Connection, StoreError> {
        if !self.path.exists() {
            return Err(StoreError(format!(
                "{}: the store is not created yet",
                self.path.display()
            )));
        }
        let c = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(|e| StoreError(format!("{}: {e}", self.path.display())))?;
        c.busy_timeout(std::time::Duration::from_millis(500))
            .map_err(|e| StoreError(e.to_string()))?;
        Ok(c)
    }
}

fn u(v: i64) -> u64 {
    v as u64
}

/// A bound given as u64 (ns, ids), clamped into SQLite's integers.
fn i(v: u64) -> i64 {
    v.min(i64::MAX as u64) as i64
}

impl History for SqliteHistory {
    fn position(&self) -> Result<Position, StoreError> {
        self.with(|c| {
            c.query_row(
                "SELECT seq, ts_ns FROM store_position WHERE id = 1",
                [],
                |r| {
                    Ok(Position {
                        seq: u(r.get(0)?),
                        ts_ns: u(r.get(1)?),
                    })
                },
            )
        })
    }

    fn trades(&self, q: &TradeQuery) -> Result<Vec<TradeRow>, StoreError> {
        self.with(|c| {
            let mut st = c.prepare_cached(if q.newest_first {
                "SELECT trade_id, seq, ts_ns, price_units, qty, maker_order_id, taker_order_id, \
                 maker_account, taker_account, taker_side FROM trades \
                 WHERE instrument_id = ?1 AND (?2 = 0 OR trade_id < ?2) \
                 ORDER BY trade_id DESC LIMIT ?3"
            } else {
                "SELECT trade_id, seq, ts_ns, price_units, qty, maker_order_id, taker_order_id, \
                 maker_account, taker_account, taker_side FROM trades \
                 WHERE instrument_id = ?1 AND trade_id > ?2 ORDER BY trade_id LIMIT ?3"
            })?;
            let rows = st.query_map(params![q.instrument_id, i(q.since), q.limit], |r| {
                Ok(TradeRow {
                    trade_id: u(r.get(0)?),
                    seq: u(r.get(1)?),
                    ts_ns: u(r.get(2)?),
                    instrument_id: q.instrument_id,
                    price: r.get(3)?,
                    qty: u(r.get(4)?),
                    maker_order_id: u(r.get(5)?),
                    taker_order_id: u(r.get(6)?),
                    maker_account: r.get(7)?,
                    taker_account: r.get(8)?,
                    taker_side: side_name(&r.get::<_, String>(9)?),
                })
            })?;
            rows.collect()
        })
    }

    fn fills(&self, q: &FillQuery) -> Result<Vec<FillRow>, StoreError> {
        self.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT e.seq, e.n, e.order_id, o.cl_ord_id, e.instrument_id, e.side, \
                 e.price_units, e.qty, e.cum_qty, e.leaves_qty, e.trade_id, e.liquidity, e.ts_ns \
                 FROM executions e INDEXED BY executions_by_owner \
                 JOIN orders o ON o.order_id = e.order_id \
                 WHERE e.owner = ?1 AND (e.seq, e.n) > (?2, ?3) \
                 AND (?4 IS NULL OR e.instrument_id = ?4) \
                 ORDER BY e.seq, e.n LIMIT ?5",
            )?;
            let rows = st.query_map(
                params![q.owner, i(q.since.0), q.since.1, q.instrument_id, q.limit],
                |r| {
                    Ok(FillRow {
                        seq: u(r.get(0)?),
                        n: r.get(1)?,
                        order_id: u(r.get(2)?),
                        cl_ord_id: r.get(3)?,
                        instrument_id: r.get(4)?,
                        side: r.get(5)?,
                        price: r.get(6)?,
                        qty: u(r.get(7)?),
                        cum_qty: u(r.get(8)?),
                        leaves_qty: u(r.get(9)?),
                        trade_id: r.get::<_, Option<i64>>(10)?.map(u),
                        liquidity: r.get(11)?,
                        ts_ns: u(r.get(12)?),
                    })
                },
            )?;
            rows.collect()
        })
    }

    fn closed_orders(&self, q: &OrderQuery) -> Result<Vec<OrderRow>, StoreError> {
        // The notional is read as text and parsed in the instrument's decimals.
        let raw = self.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT o.order_id, o.instrument_id, o.account, o.side, o.ord_type, o.tif, \
                 o.price_units, o.cl_ord_id, o.order_qty, o.cum_qty, o.leaves_qty, o.notional, \
                 o.status, o.created_ts_ns, o.updated_ts_ns, i.price_decimals, \
                 (SELECT e.reason FROM order_events e WHERE e.order_id = o.order_id \
                  AND e.kind = 'canceled' ORDER BY e.seq DESC, e.n DESC LIMIT 1) \
                 FROM orders o INDEXED BY orders_by_owner_id \
                 JOIN instruments i ON i.instrument_id = o.instrument_id \
                 WHERE o.owner = ?1 AND o.order_id > ?2 AND o.status IN (?3, ?4, ?5) \
                 AND o.created_ts_ns >= ?6 AND o.created_ts_ns < ?7 \
                 AND (?8 IS NULL OR o.instrument_id = ?8) \
                 ORDER BY o.order_id LIMIT ?9",
            )?;
            let rows = st.query_map(
                params![
                    q.owner,
                    i(q.since),
                    CLOSED_STATUSES[0],
                    CLOSED_STATUSES[1],
                    CLOSED_STATUSES[2],
                    i(q.from_ns),
                    i(q.to_ns),
                    q.instrument_id,
                    q.limit
                ],
                |r| {
                    let row = OrderRow {
                        order_id: u(r.get(0)?),
                        instrument_id: r.get(1)?,
                        account: r.get(2)?,
                        side: r.get(3)?,
                        ord_type: r.get(4)?,
                        tif: r.get(5)?,
                        price: r.get(6)?,
                        cl_ord_id: r.get(7)?,
                        order_qty: u(r.get(8)?),
                        cum_qty: u(r.get(9)?),
                        leaves_qty: u(r.get(10)?),
                        notional: 0,
                        status: r.get(12)?,
                        cancel_reason: r.get(16)?,
                        created_ts_ns: u(r.get(13)?),
                        updated_ts_ns: u(r.get(14)?),
                    };
                    Ok((row, r.get::<_, String>(11)?, r.get::<_, u32>(15)?))
                },
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?;
        raw.into_iter()
            .map(|(mut row, notional, decimals)| {
                row.notional = parse_decimal(&notional, decimals).ok_or_else(|| {
                    StoreError(format!(
                        "orders.notional {notional:?} of order {} is not a decimal",
                        row.order_id
                    ))
                })?;
                Ok(row)
            })
            .collect()
    }
}
