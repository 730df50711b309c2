//! The PostgreSQL store's write path: each batch one transaction, each table's rows in one
//! statement, never one statement per row.
//!
//! Every row of the store comes from a record at or before its position (they commit
//! together), so the rows of a batch that starts after the position cannot be there yet: they
//! go in by COPY (about a third less of the server's time than an INSERT of arrays, half less
//! than one that first looks for each row). A batch written before, in part or whole, goes in
//! by `INSERT ... SELECT FROM unnest(one array per column) ON CONFLICT DO NOTHING`, which
//! leaves the rows already there alone; so does a batch whose COPY meets a row already there
//! (one this store did not write with its position). Orders: an order created in the batch is
//! a new row; any other is upserted, the newest state (`updated_seq`) winning.

use super::Failure;
use crate::{decimal, Batch, EventKind, OrderFields, StoreError};
use ::postgres::error::SqlState;
use ::postgres::types::ToSql;
use ::postgres::{Client, Statement, Transaction};
use std::collections::HashMap;
use std::io::Write;

/// The write path's statements, prepared once per connection.
pub(super) struct Statements {
    copy: Copies,
    /// Rows of a batch written before (some or all): each one already there is left alone.
    again: Inserts,
    upsert_orders: Statement,
    lock_position: Statement,
    position: Statement,
}

struct Copies {
    events: Statement,
    executions: Statement,
    trades: Statement,
    orders: Statement,
}

struct Inserts {
    events: Statement,
    executions: Statement,
    trades: Statement,
}

const EVENT_COLUMNS: &str = "seq, n, order_id, kind, reason, status, price, price_units, \
     cl_ord_id, order_qty, cum_qty, leaves_qty, ts_ns";
const EXECUTION_COLUMNS: &str = "exec_id, seq, n, order_id, instrument_id, owner, account, \
     side, price, price_units, qty, cum_qty, leaves_qty, trade_id, liquidity, ts_ns";
const TRADE_COLUMNS: &str = "trade_id, seq, instrument_id, price, price_units, qty, \
     maker_order_id, taker_order_id, maker_account, taker_account, taker_side, ts_ns";
const ORDER_COLUMNS: &str = "order_id, instrument_id, owner, account, side, ord_type, tif, \
     price, price_units, cl_ord_id, order_qty, cum_qty, leaves_qty, notional, status, \
     created_seq, created_ts_ns, updated_seq, updated_ts_ns";

const INSERT_EVENTS: &str = "INSERT INTO order_events (seq, n, order_id, kind, reason, status, \
     price, price_units, cl_ord_id, order_qty, cum_qty, leaves_qty, ts_ns) \
     SELECT seq, n, order_id, kind, reason, status, price::numeric, price_units, cl_ord_id, \
     order_qty, cum_qty, leaves_qty, ts_ns \
     FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::text[], $6::text[], \
     $7::text[], $8::bigint[], $9::text[], $10::bigint[], $11::bigint[], $12::bigint[], \
     $13::bigint[]) AS r (seq, n, order_id, kind, reason, status, price, price_units, cl_ord_id, \
     order_qty, cum_qty, leaves_qty, ts_ns)";

const INSERT_EXECUTIONS: &str = "INSERT INTO executions (exec_id, seq, n, order_id, \
     instrument_id, owner, account, side, price, price_units, qty, cum_qty, leaves_qty, \
     trade_id, liquidity, ts_ns) \
     SELECT seq || '.' || n, seq, n, order_id, instrument_id, owner, account, side, \
     price::numeric, price_units, qty, cum_qty, leaves_qty, trade_id, liquidity, ts_ns \
     FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[], \
     $6::bigint[], $7::text[], $8::text[], $9::bigint[], $10::bigint[], $11::bigint[], \
     $12::bigint[], $13::bigint[], $14::text[], $15::bigint[]) AS r (seq, n, order_id, \
     instrument_id, owner, account, side, price, price_units, qty, cum_qty, leaves_qty, \
     trade_id, liquidity, ts_ns)";

const INSERT_TRADES: &str = "INSERT INTO trades (trade_id, seq, instrument_id, price, \
     price_units, qty, maker_order_id, taker_order_id, maker_account, taker_account, taker_side, \
     ts_ns) \
     SELECT trade_id, seq, instrument_id, price::numeric, price_units, qty, maker_order_id, \
     taker_order_id, maker_account, taker_account, taker_side, ts_ns \
     FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[], \
     $6::bigint[], $7::bigint[], $8::bigint[], $9::bigint[], $10::bigint[], $11::text[], \
     $12::bigint[]) AS r (trade_id, seq, instrument_id, price, price_units, qty, maker_order_id, \
     taker_order_id, maker_account, taker_account, taker_side, ts_ns)";

/// The newest state wins: a batch written again leaves a later state alone.
const UPSERT_ORDERS: &str = "INSERT INTO orders (order_id, instrument_id, owner, account, side, \
     ord_type, tif, price, price_units, cl_ord_id, order_qty, cum_qty, leaves_qty, notional, \
     status, created_seq, created_ts_ns, updated_seq, updated_ts_ns) \
     SELECT order_id, instrument_id, owner, account, side, ord_type, tif, price::numeric, \
     price_units, cl_ord_id, order_qty, cum_qty, leaves_qty, notional::numeric, status, \
     created_seq, created_ts_ns, updated_seq, updated_ts_ns \
     FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], \
     $6::text[], $7::text[], $8::text[], $9::bigint[], $10::text[], $11::bigint[], \
     $12::bigint[], $13::bigint[], $14::text[], $15::text[], $16::bigint[], $17::bigint[], \
     $18::bigint[], $19::bigint[]) AS r (order_id, instrument_id, owner, account, side, \
     ord_type, tif, price, price_units, cl_ord_id, order_qty, cum_qty, leaves_qty, notional, \
     status, created_seq, created_ts_ns, updated_seq, updated_ts_ns) \
     ON CONFLICT (order_id) DO UPDATE SET price = excluded.price, \
     price_units = excluded.price_units, cl_ord_id = excluded.cl_ord_id, \
     order_qty = excluded.order_qty, cum_qty = excluded.cum_qty, \
     leaves_qty = excluded.leaves_qty, notional = excluded.notional, \
     status = excluded.status, updated_seq = excluded.updated_seq, \
     updated_ts_ns = excluded.updated_ts_ns \
     WHERE excluded.updated_seq > orders.updated_seq";

/// What [`Statements::again`] adds to each insert: a row already there is left alone.
const IGNORE_KNOWN: &str = " ON CONFLICT DO NOTHING";

const LOCK_POSITION: &str = "SELECT seq FROM store_position WHERE id = 1 FOR UPDATE";

const UPDATE_POSITION: &str =
    "UPDATE store_position SET seq = $1, ts_ns = $2 WHERE id = 1 AND seq < $1";

pub(super) fn prepare(c: &mut Client) -> Result<Statements, ::postgres::Error> {
    let mut copy =
        |table: &str, columns: &str| c.prepare(&format!("COPY {table} ({columns}) FROM STDIN"));
    let copy = Copies {
        events: copy("order_events", EVENT_COLUMNS)?,
        executions: copy("executions", EXECUTION_COLUMNS)?,
        trades: copy("trades", TRADE_COLUMNS)?,
        orders: copy("orders", ORDER_COLUMNS)?,
    };
    let again = Inserts {
        events: c.prepare(&format!("{INSERT_EVENTS}{IGNORE_KNOWN}"))?,
        executions: c.prepare(&format!("{INSERT_EXECUTIONS}{IGNORE_KNOWN}"))?,
        trades: c.prepare(&format!("{INSERT_TRADES}{IGNORE_KNOWN}"))?,
    };
    Ok(Statements {
        copy,
        again,
        upsert_orders: c.prepare(UPSERT_ORDERS)?,
        lock_position: c.prepare(LOCK_POSITION)?,
        position: c.prepare(UPDATE_POSITION)?,
    })
}

/// Writes `batch` in one transaction, then its position; a batch whose COPY meets a row
/// already there is written again leaving such rows alone.
pub(super) fn write(
    client: &mut Client,
    st: &Statements,
    buf: &mut Vec<u8>,
    decimals: &[u32],
    batch: &Batch,
) -> Result<(), Failure> {
    match write_once(client, st, buf, decimals, batch, false) {
        Err(Failure::Pg(e)) if e.code() == Some(&SqlState::UNIQUE_VIOLATION) => {
            write_once(client, st, buf, decimals, batch, true)
        }
        r => r,
    }
}

/// One transaction: COPY if the batch starts after the store's position (and not `again`),
/// else the inserts that leave known rows alone.
fn write_once(
    client: &mut Client,
    st: &Statements,
    buf: &mut Vec<u8>,
    decimals: &[u32],
    batch: &Batch,
    again: bool,
) -> Result<(), Failure> {
    let mut tx = client.transaction()?;
    let position: i64 = tx
        .query_opt(&st.lock_position, &[])?
        .map_or(0, |r| r.get(0));
    let first = batch
        .events
        .iter()
        .map(|e| e.seq)
        .chain(batch.trades.iter().map(|t| t.seq))
        .min()
        .unwrap_or(u64::MAX);
    let orders = latest(batch);
    if again || first <= position as u64 {
        insert_known(&mut tx, &st.again, decimals, batch)?;
        let all: Vec<&Latest<'_>> = orders.iter().collect();
        upsert_orders(&mut tx, &st.upsert_orders, decimals, &all)?;
    } else {
        copy_rows(&mut tx, &st.copy, buf, decimals, batch)?;
        let (created, changed): (Vec<&Latest<'_>>, Vec<&Latest<'_>>) =
            orders.iter().partition(|l| l.created);
        if !created.is_empty() {
            let mut rows = CopyRows::new(buf);
            for l in &created {
                order_row(&mut rows, decimals, l);
            }
            copy(&mut tx, &st.copy.orders, buf)?;
        }
        upsert_orders(&mut tx, &st.upsert_orders, decimals, &changed)?;
    }
    tx.execute(
        &st.position,
        &[&(batch.upto_seq as i64), &(batch.upto_ts_ns as i64)],
    )?;
    tx.commit()?;
    Ok(())
}

/// A price of `instrument` as an exact decimal.
fn price_text(decimals: &[u32], instrument: u32, units: i64) -> String {
    decimal(
        units as i128,
        decimals.get(instrument as usize).copied().unwrap_or(0),
    )
}

/// An order's notional as an exact decimal in its instrument's scale.
fn notional_text(decimals: &[u32], o: &OrderFields) -> String {
    decimal(
        o.notional,
        decimals.get(o.instrument_id as usize).copied().unwrap_or(0),
    )
}

/// The latest state of each order a batch changes, with the record of its first change in the
/// batch (the order's creation, if it was created there).
struct Latest<'a> {
    id: u64,
    fields: &'a OrderFields,
    /// Its first change in the batch is its creation (`new`): its row is not there yet.
    created: bool,
    first_seq: u64,
    first_ts: u64,
    seq: u64,
    ts: u64,
}

/// The orders `batch` changes, each in its latest state, in order id order.
fn latest(batch: &Batch) -> Vec<Latest<'_>> {
    let mut at: HashMap<u64, usize> = HashMap::new();
    let mut v: Vec<Latest<'_>> = Vec::new();
    for e in &batch.events {
        match at.get(&e.order_id) {
            Some(&i) => {
                let l = &mut v[i];
                l.fields = &e.order;
                l.seq = e.seq;
                l.ts = e.ts_ns;
            }
            None => {
                at.insert(e.order_id, v.len());
                v.push(Latest {
                    id: e.order_id,
                    fields: &e.order,
                    created: e.kind == EventKind::New,
                    first_seq: e.seq,
                    first_ts: e.ts_ns,
                    seq: e.seq,
                    ts: e.ts_ns,
                });
            }
        }
    }
    v.sort_unstable_by_key(|l| l.id);
    v
}

/// One column of rows.
pub(super) fn col<'a, T, U>(rows: &'a [T], f: impl Fn(&'a T) -> U) -> Vec<U> {
    rows.iter().map(f).collect()
}

/// Rows in COPY's text format: tab-separated fields, one row a line, `\N` for NULL; a
/// backslash, tab, newline or carriage return in a text escaped.
struct CopyRows<'b> {
    buf: &'b mut Vec<u8>,
    row_start: bool,
}

impl<'b> CopyRows<'b> {
    fn new(buf: &'b mut Vec<u8>) -> CopyRows<'b> {
        buf.clear();
        CopyRows {
            buf,
            row_start: true,
        }
    }

    fn field(&mut self) -> &mut Vec<u8> {
        if !self.row_start {
            self.buf.push(b'\t');
        }
        self.row_start = false;
        self.buf
    }

    fn int(&mut self, v: i64) -> &mut Self {
        // Writing to a Vec cannot fail.
        let _ = write!(self.field(), "{v}");
        self
    }

    fn text(&mut self, s: &str) -> &mut Self {
        let buf = self.field();
        for b in s.bytes() {
            match b {
                b'\\' => buf.extend_from_slice(b"\\\\"),
                b'\t' => buf.extend_from_slice(b"\\t"),
                b'\n' => buf.extend_from_slice(b"\\n"),
                b'\r' => buf.extend_from_slice(b"\\r"),
                _ => buf.push(b),
            }
        }
        self
    }

    fn null(&mut self) -> &mut Self {
        self.field().extend_from_slice(b"\\N");
        self
    }

    fn opt_int(&mut self, v: Option<i64>) -> &mut Self {
        match v {
            Some(v) => self.int(v),
            None => self.null(),
        }
    }

    fn opt_text(&mut self, v: Option<&str>) -> &mut Self {
        match v {
            Some(v) => self.text(v),
            None => self.null(),
        }
    }

    fn end(&mut self) {
        self.buf.push(b'\n');
        self.row_start = true;
    }
}

/// Sends `rows` (COPY's text format) by `statement`, a COPY ... FROM STDIN.
fn copy(tx: &mut Transaction<'_>, statement: &Statement, rows: &[u8]) -> Result<(), Failure> {
    let mut w = tx.copy_in(statement)?;
    // One write: the writer keeps it and sends it whole at `finish`, where the server's
    // answer (an error too) comes from.
    w.write_all(rows)
        .map_err(|e| Failure::Store(StoreError(format!("COPY: {e}"))))?;
    w.finish()?;
    Ok(())
}

/// The order events, executions and trades of `batch` by COPY.
fn copy_rows(
    tx: &mut Transaction<'_>,
    st: &Copies,
    buf: &mut Vec<u8>,
    decimals: &[u32],
    batch: &Batch,
) -> Result<(), Failure> {
    if !batch.events.is_empty() {
        let mut rows = CopyRows::new(buf);
        for e in &batch.events {
            let o = &e.order;
            let reason = match e.kind {
                EventKind::Canceled(r) => Some(r),
                _ => None,
            };
            rows.int(e.seq as i64)
                .int(e.n as i64)
                .int(e.order_id as i64)
                .text(e.kind.name())
                .opt_text(reason)
                .text(o.status)
                .opt_text(
                    o.price
                        .map(|p| price_text(decimals, o.instrument_id, p))
                        .as_deref(),
                )
                .opt_int(o.price)
                .text(&o.cl_ord_id)
                .int(o.order_qty as i64)
                .int(o.cum_qty as i64)
                .int(o.leaves_qty as i64)
                .int(e.ts_ns as i64)
                .end();
        }
        copy(tx, &st.events, buf)?;
    }
    let mut rows = CopyRows::new(buf);
    let mut fills = 0;
    for e in &batch.events {
        let EventKind::Fill {
            price,
            qty,
            trade_id,
            maker,
        } = e.kind
        else {
            continue;
        };
        let o = &e.order;
        fills += 1;
        rows.text(&e.exec_id())
            .int(e.seq as i64)
            .int(e.n as i64)
            .int(e.order_id as i64)
            .int(o.instrument_id as i64)
            .int(o.owner as i64)
            .int(o.account as i64)
            .text(o.side)
            .text(&price_text(decimals, o.instrument_id, price))
            .int(price)
            .int(qty as i64)
            .int(o.cum_qty as i64)
            .int(o.leaves_qty as i64)
            .opt_int(trade_id.map(|t| t as i64))
            .opt_text(maker.map(|m| if m { "maker" } else { "taker" }))
            .int(e.ts_ns as i64)
            .end();
    }
    if fills > 0 {
        copy(tx, &st.executions, buf)?;
    }
    if !batch.trades.is_empty() {
        let mut rows = CopyRows::new(buf);
        for t in &batch.trades {
            rows.int(t.trade_id as i64)
                .int(t.seq as i64)
                .int(t.instrument_id as i64)
                .text(&price_text(decimals, t.instrument_id, t.price))
                .int(t.price)
                .int(t.qty as i64)
                .int(t.maker_order_id as i64)
                .int(t.taker_order_id as i64)
                .int(t.maker_account as i64)
                .int(t.taker_account as i64)
                .text(t.taker_side)
                .int(t.ts_ns as i64)
                .end();
        }
        copy(tx, &st.trades, buf)?;
    }
    Ok(())
}

/// An order's row (its latest state in the batch), in [`ORDER_COLUMNS`]' order.
fn order_row(rows: &mut CopyRows<'_>, decimals: &[u32], l: &Latest<'_>) {
    let o = l.fields;
    rows.int(l.id as i64)
        .int(o.instrument_id as i64)
        .int(o.owner as i64)
        .int(o.account as i64)
        .text(o.side)
        .text(o.ord_type)
        .text(o.tif)
        .opt_text(
            o.price
                .map(|p| price_text(decimals, o.instrument_id, p))
                .as_deref(),
        )
        .opt_int(o.price)
        .text(&o.cl_ord_id)
        .int(o.order_qty as i64)
        .int(o.cum_qty as i64)
        .int(o.leaves_qty as i64)
        .text(&notional_text(decimals, o))
        .text(o.status)
        .int(l.first_seq as i64)
        .int(l.first_ts as i64)
        .int(l.seq as i64)
        .int(l.ts as i64)
        .end();
}

/// The order events, executions and trades of `batch`, each table's in one INSERT of one
/// array per column, leaving the rows already there alone.
fn insert_known(
    tx: &mut Transaction<'_>,
    ins: &Inserts,
    decimals: &[u32],
    batch: &Batch,
) -> Result<(), ::postgres::Error> {
    let ev = &batch.events;
    if !ev.is_empty() {
        let seq = col(ev, |e| e.seq as i64);
        let n = col(ev, |e| e.n as i64);
        let order_id = col(ev, |e| e.order_id as i64);
        let kind = col(ev, |e| e.kind.name());
        let reason = col(ev, |e| match e.kind {
            EventKind::Canceled(r) => Some(r),
            _ => None,
        });
        let status = col(ev, |e| e.order.status);
        let price = col(ev, |e| {
            e.order
                .price
                .map(|p| price_text(decimals, e.order.instrument_id, p))
        });
        let price_units = col(ev, |e| e.order.price);
        let cl_ord_id = col(ev, |e| e.order.cl_ord_id.as_str());
        let order_qty = col(ev, |e| e.order.order_qty as i64);
        let cum_qty = col(ev, |e| e.order.cum_qty as i64);
        let leaves_qty = col(ev, |e| e.order.leaves_qty as i64);
        let ts = col(ev, |e| e.ts_ns as i64);
        let p: [&(dyn ToSql + Sync); 13] = [
            &seq,
            &n,
            &order_id,
            &kind,
            &reason,
            &status,
            &price,
            &price_units,
            &cl_ord_id,
            &order_qty,
            &cum_qty,
            &leaves_qty,
            &ts,
        ];
        tx.execute(&ins.events, &p)?;
    }
    let fills: Vec<_> = ev
        .iter()
        .filter_map(|e| match e.kind {
            EventKind::Fill {
                price,
                qty,
                trade_id,
                maker,
            } => Some((e, price, qty, trade_id, maker)),
            _ => None,
        })
        .collect();
    if !fills.is_empty() {
        let seq = col(&fills, |f| f.0.seq as i64);
        let n = col(&fills, |f| f.0.n as i64);
        let order_id = col(&fills, |f| f.0.order_id as i64);
        let instrument_id = col(&fills, |f| f.0.order.instrument_id as i64);
        let owner = col(&fills, |f| f.0.order.owner as i64);
        let account = col(&fills, |f| f.0.order.account as i64);
        let side = col(&fills, |f| f.0.order.side);
        let price = col(&fills, |f| {
            price_text(decimals, f.0.order.instrument_id, f.1)
        });
        let price_units = col(&fills, |f| f.1);
        let qty = col(&fills, |f| f.2 as i64);
        let cum_qty = col(&fills, |f| f.0.order.cum_qty as i64);
        let leaves_qty = col(&fills, |f| f.0.order.leaves_qty as i64);
        let trade_id = col(&fills, |f| f.3.map(|t| t as i64));
        let liquidity = col(&fills, |f| f.4.map(|m| if m { "maker" } else { "taker" }));
        let ts = col(&fills, |f| f.0.ts_ns as i64);
        let p: [&(dyn ToSql + Sync); 15] = [
            &seq,
            &n,
            &order_id,
            &instrument_id,
            &owner,
            &account,
            &side,
            &price,
            &price_units,
            &qty,
            &cum_qty,
            &leaves_qty,
            &trade_id,
            &liquidity,
            &ts,
        ];
        tx.execute(&ins.executions, &p)?;
    }
    let tr = &batch.trades;
    if !tr.is_empty() {
        let trade_id = col(tr, |t| t.trade_id as i64);
        let seq = col(tr, |t| t.seq as i64);
        let instrument_id = col(tr, |t| t.instrument_id as i64);
        let price = col(tr, |t| price_text(decimals, t.instrument_id, t.price));
        let price_units = col(tr, |t| t.price);
        let qty = col(tr, |t| t.qty as i64);
        let maker_order_id = col(tr, |t| t.maker_order_id as i64);
        let taker_order_id = col(tr, |t| t.taker_order_id as i64);
        let maker_account = col(tr, |t| t.maker_account as i64);
        let taker_account = col(tr, |t| t.taker_account as i64);
        let taker_side = col(tr, |t| t.taker_side);
        let ts = col(tr, |t| t.ts_ns as i64);
        let p: [&(dyn ToSql + Sync); 12] = [
            &trade_id,
            &seq,
            &instrument_id,
            &price,
            &price_units,
            &qty,
            &maker_order_id,
            &taker_order_id,
            &maker_account,
            &taker_account,
            &taker_side,
            &ts,
        ];
        tx.execute(&ins.trades, &p)?;
    }
    Ok(())
}

/// Orders `o` in one upsert of one array per column: the newest state wins.
fn upsert_orders(
    tx: &mut Transaction<'_>,
    upsert: &Statement,
    decimals: &[u32],
    o: &[&Latest<'_>],
) -> Result<(), ::postgres::Error> {
    if !o.is_empty() {
        let order_id = col(o, |l| l.id as i64);
        let instrument_id = col(o, |l| l.fields.instrument_id as i64);
        let owner = col(o, |l| l.fields.owner as i64);
        let account = col(o, |l| l.fields.account as i64);
        let side = col(o, |l| l.fields.side);
        let ord_type = col(o, |l| l.fields.ord_type);
        let tif = col(o, |l| l.fields.tif);
        let price = col(o, |l| {
            l.fields
                .price
                .map(|p| price_text(decimals, l.fields.instrument_id, p))
        });
        let price_units = col(o, |l| l.fields.price);
        let cl_ord_id = col(o, |l| l.fields.cl_ord_id.as_str());
        let order_qty = col(o, |l| l.fields.order_qty as i64);
        let cum_qty = col(o, |l| l.fields.cum_qty as i64);
        let leaves_qty = col(o, |l| l.fields.leaves_qty as i64);
        let notional = col(o, |l| notional_text(decimals, l.fields));
        let status = col(o, |l| l.fields.status);
        let created_seq = col(o, |l| l.first_seq as i64);
        let created_ts = col(o, |l| l.first_ts as i64);
        let updated_seq = col(o, |l| l.seq as i64);
        let updated_ts = col(o, |l| l.ts as i64);
        let p: [&(dyn ToSql + Sync); 19] = [
            &order_id,
            &instrument_id,
            &owner,
            &account,
            &side,
            &ord_type,
            &tif,
            &price,
            &price_units,
            &cl_ord_id,
            &order_qty,
            &cum_qty,
            &leaves_qty,
            &notional,
            &status,
            &created_seq,
            &created_ts,
            &updated_seq,
            &updated_ts,
        ];
        tx.execute(upsert, &p)?;
    }
    Ok(())
}
