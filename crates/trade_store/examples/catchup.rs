//! Catch-up into the trade store: writes batches of 4,096 journal records' rows (half resting
//! orders, half takers that fill one of them) as the follower does after an outage, and prints
//! the rows a second. Into a throwaway PostgreSQL cluster (`test_postgres`; its start is timed
//! too), a PostgreSQL at `--url`, or SQLite (`--sqlite`).
//!
//! `cargo run --release -p trade_store --example catchup -- [--batches N] [--url URL | --sqlite]`

use std::time::Instant;
use trade_store::{
    Batch, EventKind, InstrumentRow, OrderEvent, OrderFields, Postgres, Sqlite, Store, TradeRow,
};

const RECORDS: u64 = 4096;

fn order(status: &'static str, side: &'static str, cum: u64) -> OrderFields {
    OrderFields {
        instrument_id: 0,
        owner: 1,
        account: 7,
        side,
        ord_type: "limit",
        tif: "day",
        price: Some(10_025),
        cl_ord_id: "c1".into(),
        order_qty: 10,
        cum_qty: cum,
        leaves_qty: 10 - cum,
        notional: 10_025 * cum as i128,
        status,
    }
}

/// Batch `b`: records `b * RECORDS + 1 ..= (b + 1) * RECORDS`. An odd record rests a buy
/// order; the even one after it is a sell that fills it whole (one trade, two fills).
fn make_batch(b: u64) -> Batch {
    let mut batch = Batch::default();
    for seq in b * RECORDS + 1..=(b + 1) * RECORDS {
        let ts = seq * 1_000;
        let event = |n, order_id, kind, order| OrderEvent {
            seq,
            n,
            ts_ns: ts,
            order_id,
            kind,
            order,
        };
        if seq % 2 == 1 {
            batch
                .events
                .push(event(0, seq, EventKind::New, order("new", "buy", 0)));
            continue;
        }
        let fill = |maker| EventKind::Fill {
            price: 10_025,
            qty: 10,
            trade_id: Some(seq / 2),
            maker: Some(maker),
        };
        batch
            .events
            .push(event(0, seq, EventKind::New, order("new", "sell", 0)));
        batch
            .events
            .push(event(1, seq - 1, fill(true), order("filled", "buy", 10)));
        batch
            .events
            .push(event(2, seq, fill(false), order("filled", "sell", 10)));
        batch.trades.push(TradeRow {
            trade_id: seq / 2,
            seq,
            ts_ns: ts,
            instrument_id: 0,
            price: 10_025,
            qty: 10,
            maker_order_id: seq - 1,
            taker_order_id: seq,
            maker_account: 7,
            taker_account: 7,
            taker_side: "sell",
        });
    }
    batch.upto_seq = (b + 1) * RECORDS;
    batch.upto_ts_ns = batch.upto_seq * 1_000;
    batch
}

fn main() {
    let mut batches = 100;
    let mut url = None;
    let mut sqlite = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--batches" => batches = args.next().and_then(|v| v.parse().ok()).expect("a count"),
            "--url" => url = Some(args.next().expect("a URL")),
            "--sqlite" => sqlite = true,
            _ => panic!("usage: catchup [--batches N] [--url URL | --sqlite]"),
        }
    }
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut cluster = None;
    // The PostgreSQL backend's process, when it is on this machine: its CPU time is the
    // figure the machine's other load does not change much.
    let mut backend = None;
    let mut store: Box<dyn Store> = if sqlite {
        Box::new(Sqlite::open(&dir.path().join("rialto.db")).expect("SQLite"))
    } else {
        let url = url.unwrap_or_else(|| {
            let t = Instant::now();
            let pg = test_postgres::TestPostgres::start();
            println!(
                "throwaway cluster started in {} ms",
                t.elapsed().as_millis()
            );
            let url = pg.url();
            cluster = Some(pg);
            url
        });
        let mut pg = Postgres::connect(&url).expect("PostgreSQL");
        let pid: i32 = pg
            .client()
            .and_then(|c| {
                c.query_one("SELECT pg_backend_pid()", &[])
                    .map_err(|e| trade_store::StoreError(e.to_string()))
            })
            .expect("the backend's pid")
            .get(0);
        backend = Some(pid);
        Box::new(pg)
    };
    store
        .put_instruments(&[InstrumentRow {
            id: 0,
            symbol: "ACME".into(),
            tick: "0.01".into(),
            price_decimals: 2,
            lot: 1,
        }])
        .expect("instruments");
    let made: Vec<Batch> = (0..batches).map(make_batch).collect();
    let rows: usize = made.iter().map(Batch::rows).sum();
    let cpu_before = backend.and_then(cpu_seconds);
    let t = Instant::now();
    for b in &made {
        store.write(b).expect("write");
    }
    let s = t.elapsed().as_secs_f64();
    let sum = store.summary().expect("summary");
    // Table rows: order events, executions and trades inserted, orders upserted.
    let table_rows = sum.order_events + sum.executions + sum.trades + sum.orders;
    println!(
        "{} batches of {RECORDS} records in {:.2} s: {:.0} rows/s ({rows} events and trades), \
         {:.0} table rows/s ({table_rows} rows); trades hash {:016x}",
        batches,
        s,
        rows as f64 / s,
        table_rows as f64 / s,
        sum.trades_hash
    );
    if let (Some(a), Some(b)) = (cpu_before, backend.and_then(cpu_seconds)) {
        println!(
            "the PostgreSQL backend used {:.2} s of CPU: {:.0} table rows per CPU second",
            b - a,
            table_rows as f64 / (b - a)
        );
    }
    drop(cluster);
}

/// The user and system CPU time of process `pid` (Linux's /proc), in seconds.
fn cpu_seconds(pid: i32) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The fields after the command's closing parenthesis; utime and stime are the 12th and
    // 13th of them, in clock ticks.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split(' ').collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    let out = std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()?;
    let hz: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().ok()?;
    Some(ticks / hz)
}
