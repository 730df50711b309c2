//! The SQLite backend: one file (`data_dir/rialto.db` by default), WAL mode, the migrations
//! applied at open in one transaction, each batch one transaction.

use crate::{
    decimal, Batch, EventKind, InstrumentRow, OrderFields, Position, Store, StoreError, Summary,
    TradeRow, MIGRATIONS, SCHEMA_VERSION,
};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod history;
pub use history::SqliteHistory;

/// How long a write waits for another connection's lock before it fails (and the follower
/// retries later).
const BUSY_TIMEOUT: Duration = Duration::from_millis(500);

pub struct Sqlite {
    conn: Connection,
    path: PathBuf,
    /// By instrument id: its price decimals (prices are written as exact decimal strings too).
    decimals: Vec<u32>,
}

impl Sqlite {
    /// Opens (or creates) the store at `path` and brings its schema to this binary's version.
    /// A database of a newer schema version is refused.
    pub fn open(path: &Path) -> Result<Sqlite, StoreError> {
        let ctx = |e: rusqlite::Error| StoreError(format!("{}: {e}", path.display()));
        let mut conn = Connection::open(path).map_err(ctx)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(ctx)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(ctx)?;
        // WAL + NORMAL: a commit survives a crash of the process (not of the machine, where
        // the journal is the record and the follower rewrites what the store lost).
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(ctx)?;
        migrate(&mut conn).map_err(|e| StoreError(format!("{}: {}", path.display(), e.0)))?;
        let mut s = Sqlite {
            conn,
            path: path.to_path_buf(),
            decimals: Vec::new(),
        };
        s.load_decimals()?;
        Ok(s)
    }

    /// Opens an existing store to read it (`rialto store verify`): no migration, no write of
    /// its own (opened read-write where it can: a WAL left by a killed process needs a
    /// writer to recover it before anyone reads it).
    pub fn open_read_only(path: &Path) -> Result<Sqlite, StoreError> {
        let ctx = |e: rusqlite::Error| StoreError(format!("{}: {e}", path.display()));
        if !path.exists() {
            return Err(StoreError(format!("{}: no such file", path.display())));
        }
        let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
            .or_else(|_| Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY))
            .map_err(ctx)?;
        let v = schema_version(&conn).map_err(ctx)?;
        if v != SCHEMA_VERSION {
            return Err(StoreError(format!(
                "{}: schema version {v}, this rialto reads version {SCHEMA_VERSION}",
                path.display()
            )));
        }
        let mut s = Sqlite {
            conn,
            path: path.to_path_buf(),
            decimals: Vec::new(),
        };
        s.load_decimals()?;
        Ok(s)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The connection, to query the store directly (tests, tools).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    fn load_decimals(&mut self) -> Result<(), StoreError> {
        let mut st = self.conn.prepare(
            "SELECT instrument_id, price_decimals FROM instruments ORDER BY instrument_id",
        )?;
        let rows = st.query_map([], |r| Ok((r.get::<_, u32>(0)?, r.get::<_, u32>(1)?)))?;
        let mut decimals = Vec::new();
        for r in rows {
            let (id, d) = r?;
            if decimals.len() <= id as usize {
                decimals.resize(id as usize + 1, 0);
            }
            decimals[id as usize] = d;
        }
        self.decimals = decimals;
        Ok(())
    }
}

/// A price of `instrument` as an exact decimal string.
fn price_text(decimals: &[u32], instrument: u32, units: i64) -> String {
    decimal(
        units as i128,
        decimals.get(instrument as usize).copied().unwrap_or(0),
    )
}

/// Refuses a store at `path` whose schema is newer than this binary's (nothing to check if
/// there is no file yet). Opens it without creating anything, read-write where it can (a
/// WAL left by a killed process needs a writer to recover it); a file it cannot read is left
/// to the follower, which retries.
pub fn check_version(path: &Path) -> Result<(), StoreError> {
    if !path.exists() {
        return Ok(());
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
        .or_else(|_| Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY));
    let Ok(conn) = conn else {
        return Ok(());
    };
    match schema_version(&conn) {
        Ok(v) if v > SCHEMA_VERSION => Err(StoreError(format!(
            "{}: {}",
            path.display(),
            newer_message(v)
        ))),
        _ => Ok(()),
    }
}

fn newer_message(v: u32) -> String {
    crate::newer_message(v, "move the file away to start a new store")
}

fn schema_version(conn: &Connection) -> rusqlite::Result<u32> {
    conn.pragma_query_value(None, "user_version", |r| r.get(0))
}

/// Applies the migrations the database lacks, all in one transaction (`PRAGMA user_version`
/// is the schema version).
fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let v = schema_version(&tx)?;
    if v > SCHEMA_VERSION {
        return Err(StoreError(newer_message(v)));
    }
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(v as usize) {
        tx.execute_batch(sql)
            .map_err(|e| StoreError(format!("migration {}: {e}", i + 1)))?;
    }
    if v < SCHEMA_VERSION {
        tx.pragma_update(None, "user_version", SCHEMA_VERSION)?;
    }
    tx.commit()?;
    Ok(())
}

/// The latest state of each order a batch changes, with the record of its first change in the
/// batch (the order's creation, if it was created there).
struct Latest<'a> {
    fields: &'a OrderFields,
    first_seq: u64,
    first_ts: u64,
    seq: u64,
    ts: u64,
}

impl Store for Sqlite {
    fn position(&mut self) -> Result<Position, StoreError> {
        let p = self
            .conn
            .query_row(
                "SELECT seq, ts_ns FROM store_position WHERE id = 1",
                [],
                |r| {
                    Ok(Position {
                        seq: r.get::<_, i64>(0)? as u64,
                        ts_ns: r.get::<_, i64>(1)? as u64,
                    })
                },
            )
            .optional()?;
        Ok(p.unwrap_or_default())
    }

    fn put_instruments(&mut self, instruments: &[InstrumentRow]) -> Result<(), StoreError> {
        let tx = self.conn.transaction()?;
        {
            let mut st = tx.prepare_cached(
                "INSERT INTO instruments (instrument_id, symbol, tick, price_decimals, lot) \
                 VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (instrument_id) DO NOTHING",
            )?;
            for i in instruments {
                st.execute(params![
                    i.id,
                    i.symbol,
                    i.tick,
                    i.price_decimals,
                    i.lot as i64
                ])?;
            }
        }
        tx.commit()?;
        self.load_decimals()
    }

    fn write(&mut self, batch: &Batch) -> Result<(), StoreError> {
        let mut latest: HashMap<u64, Latest<'_>> = HashMap::new();
        for e in &batch.events {
            latest
                .entry(e.order_id)
                .and_modify(|l| {
                    l.fields = &e.order;
                    l.seq = e.seq;
                    l.ts = e.ts_ns;
                })
                .or_insert(Latest {
                    fields: &e.order,
                    first_seq: e.seq,
                    first_ts: e.ts_ns,
                    seq: e.seq,
                    ts: e.ts_ns,
                });
        }
        let decimals = &self.decimals;
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        {
            let mut ev = tx.prepare_cached(
                "INSERT OR IGNORE INTO order_events (seq, n, order_id, kind, reason, status, \
                 price, price_units, cl_ord_id, order_qty, cum_qty, leaves_qty, ts_ns) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
            )?;
            let mut ex = tx.prepare_cached(
                "INSERT OR IGNORE INTO executions (exec_id, seq, n, order_id, instrument_id, \
                 owner, account, side, price, price_units, qty, cum_qty, leaves_qty, trade_id, \
                 liquidity, ts_ns) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
            )?;
            for e in &batch.events {
                let o = &e.order;
                let reason = match e.kind {
                    EventKind::Canceled(r) => Some(r),
                    _ => None,
                };
                ev.execute(params![
                    e.seq as i64,
                    e.n,
                    e.order_id as i64,
                    e.kind.name(),
                    reason,
                    o.status,
                    o.price.map(|p| price_text(decimals, o.instrument_id, p)),
                    o.price,
                    o.cl_ord_id,
                    o.order_qty as i64,
                    o.cum_qty as i64,
                    o.leaves_qty as i64,
                    e.ts_ns as i64,
                ])?;
                if let EventKind::Fill {
                    price,
                    qty,
                    trade_id,
                    maker,
                } = e.kind
                {
                    ex.execute(params![
                        e.exec_id(),
                        e.seq as i64,
                        e.n,
                        e.order_id as i64,
                        o.instrument_id,
                        o.owner,
                        o.account,
                        o.side,
                        price_text(decimals, o.instrument_id, price),
                        price,
                        qty as i64,
                        o.cum_qty as i64,
                        o.leaves_qty as i64,
                        trade_id.map(|t| t as i64),
                        maker.map(|m| if m { "maker" } else { "taker" }),
                        e.ts_ns as i64,
                    ])?;
                }
            }
            let mut tr = tx.prepare_cached(
                "INSERT OR IGNORE INTO trades (trade_id, seq, instrument_id, price, price_units, \
                 qty, maker_order_id, taker_order_id, maker_account, taker_account, taker_side, \
                 ts_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            )?;
            for t in &batch.trades {
                tr.execute(params![
                    t.trade_id as i64,
                    t.seq as i64,
                    t.instrument_id,
                    price_text(decimals, t.instrument_id, t.price),
                    t.price,
                    t.qty as i64,
                    t.maker_order_id as i64,
                    t.taker_order_id as i64,
                    t.maker_account,
                    t.taker_account,
                    t.taker_side,
                    t.ts_ns as i64,
                ])?;
            }
            // The newest state wins: a batch written again leaves a later state alone.
            let mut or = tx.prepare_cached(
                "INSERT INTO orders (order_id, instrument_id, owner, account, side, ord_type, \
                 tif, price, price_units, cl_ord_id, order_qty, cum_qty, leaves_qty, notional, \
                 status, created_seq, created_ts_ns, updated_seq, updated_ts_ns) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
                 ?17, ?18, ?19) \
                 ON CONFLICT (order_id) DO UPDATE SET price = excluded.price, \
                 price_units = excluded.price_units, cl_ord_id = excluded.cl_ord_id, \
                 order_qty = excluded.order_qty, cum_qty = excluded.cum_qty, \
                 leaves_qty = excluded.leaves_qty, notional = excluded.notional, \
                 status = excluded.status, updated_seq = excluded.updated_seq, \
                 updated_ts_ns = excluded.updated_ts_ns \
                 WHERE excluded.updated_seq > orders.updated_seq",
            )?;
            for (id, l) in &latest {
                let o = l.fields;
                let d = decimals.get(o.instrument_id as usize).copied().unwrap_or(0);
                or.execute(params![
                    *id as i64,
                    o.instrument_id,
                    o.owner,
                    o.account,
                    o.side,
                    o.ord_type,
                    o.tif,
                    o.price.map(|p| price_text(decimals, o.instrument_id, p)),
                    o.price,
                    o.cl_ord_id,
                    o.order_qty as i64,
                    o.cum_qty as i64,
                    o.leaves_qty as i64,
                    decimal(o.notional, d),
                    o.status,
                    l.first_seq as i64,
                    l.first_ts as i64,
                    l.seq as i64,
                    l.ts as i64,
                ])?;
            }
            tx.execute(
                "UPDATE store_position SET seq = ?1, ts_ns = ?2 WHERE id = 1 AND seq < ?1",
                params![batch.upto_seq as i64, batch.upto_ts_ns as i64],
            )?;
        }
        tx.commit()?;
        Ok(())
    }

    fn summary(&mut self) -> Result<Summary, StoreError> {
        let mut s = Summary {
            position: self.position()?.seq,
            ..Summary::default()
        };
        let count = |sql: &str| -> Result<u64, StoreError> {
            Ok(self.conn.query_row(sql, [], |r| r.get::<_, i64>(0))? as u64)
        };
        s.order_events = count("SELECT count(*) FROM order_events")?;
        s.executions = count("SELECT count(*) FROM executions")?;
        {
            let mut st = self.conn.prepare(
                "SELECT trade_id, seq, instrument_id, price_units, qty, maker_order_id, \
                 taker_order_id, ts_ns FROM trades ORDER BY trade_id",
            )?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                s.add_trade(&TradeRow {
                    trade_id: r.get::<_, i64>(0)? as u64,
                    seq: r.get::<_, i64>(1)? as u64,
                    instrument_id: r.get(2)?,
                    price: r.get(3)?,
                    qty: r.get::<_, i64>(4)? as u64,
                    maker_order_id: r.get::<_, i64>(5)? as u64,
                    taker_order_id: r.get::<_, i64>(6)? as u64,
                    ts_ns: r.get::<_, i64>(7)? as u64,
                    maker_account: 0,
                    taker_account: 0,
                    taker_side: "",
                });
            }
        }
        let mut st = self.conn.prepare(
            "SELECT order_id, instrument_id, status, order_qty, cum_qty, leaves_qty, notional \
             FROM orders ORDER BY order_id",
        )?;
        let mut rows = st.query([])?;
        while let Some(r) = rows.next()? {
            let instrument_id: u32 = r.get(1)?;
            let d = self
                .decimals
                .get(instrument_id as usize)
                .copied()
                .unwrap_or(0);
            let notional_text: String = r.get(6)?;
            let status: String = r.get(2)?;
            let fields = OrderFields {
                instrument_id,
                owner: 0,
                account: 0,
                side: "",
                ord_type: "",
                tif: "",
                price: None,
                cl_ord_id: String::new(),
                order_qty: r.get::<_, i64>(3)? as u64,
                cum_qty: r.get::<_, i64>(4)? as u64,
                leaves_qty: r.get::<_, i64>(5)? as u64,
                notional: crate::parse_decimal(&notional_text, d).ok_or_else(|| {
                    StoreError(format!(
                        "orders.notional {notional_text:?} is not a decimal"
                    ))
                })?,
                status: crate::status_name(&status),
            };
            s.add_order(r.get::<_, i64>(0)? as u64, &fields);
        }
        Ok(s)
    }

    fn reset(&mut self) -> Result<(), StoreError> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        tx.execute_batch(
            "DELETE FROM order_events; DELETE FROM executions; DELETE FROM trades; \
             DELETE FROM orders; UPDATE store_position SET seq = 0, ts_ns = 0 WHERE id = 1;",
        )?;
        tx.commit()?;
        Ok(())
    }
}
