//! The trade-store follower: a journal follower thread that writes every order state change,
//! execution and trade to the trade store (`trade_store`: SQLite, `data_dir/rialto.db` by
//! default), exactly once.
//!
//! Role: glue. A replica (`Follower`, with `Outbox::collect_reports` on) applies the records
//! the event loop has committed and applied (`Counters::last_seq`); this module turns each
//! record's reports and trades into rows and hands them to the store in batches, each batch
//! with the journal position it reaches, in one transaction.
//!
//! Start: the store says the position it holds; the replica replays the journal from record 1
//! up to that position without writing (the rows before it are in the store already), then
//! writes from there. A store ahead of the journal is an error (the follower stops; trading
//! goes on).
//!
//! The database down, locked or full: the batch waits and is retried with backoff (100 ms
//! doubling to 5 s); the follower reads nothing more meanwhile (the journal is its buffer), the
//! error is logged once per [`LOG_EVERY`], and `/metrics` shows the lag
//! (`store_applied_seq`, `store_lag_records`, `store_lag_seconds`).
//!
//! Never: on the order path (its own thread at nice 10, its own replica, the journal files
//! only).

use crate::config::Config;
pub use crate::config::StoreTarget;
use crate::counters::{now_ns, Counters, Log2Histogram, Logger};
use crate::error::ServerError;
use crate::follower::Follower;
use crate::node::Node;
use exchange::{Backing, OwnedOutput, ReportKind};
use journal::JournalDir;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use trade_store::{
    Batch, EventKind, History, InstrumentRow, OrderEvent, OrderFields, Sqlite, Store, StoreError,
    Summary, TradeRow,
};
use types::{CancelReason, Event, OrdType, Side, TimeInForce};

/// Records a batch spans at most: one transaction each.
pub const BATCH_RECORDS: u64 = 4096;
/// The thread's nice value: on busy cores the order path and market data run first (the
/// journal is the store's buffer).
const NICE: i32 = 10;
/// How often the follower looks for new records when it has caught up.
const POLL: Duration = Duration::from_millis(20);
/// A failing store's error is logged at most this often.
pub const LOG_EVERY: Duration = Duration::from_secs(10);
/// How long a stopping server waits for the store to write what it lacks (the rest is written
/// at the next start).
const STOP_GRACE: Duration = Duration::from_secs(5);
/// How long a start waits for a PostgreSQL store to answer its schema check.
const START_CHECK: Duration = Duration::from_secs(2);
const BACKOFF_MIN: Duration = Duration::from_millis(100);
const BACKOFF_MAX: Duration = Duration::from_secs(5);

/// What `/metrics` shows of the store.
pub struct StoreCounters {
    /// The last journal record the store holds.
    pub applied_seq: AtomicU64,
    /// Its timestamp (ns since the epoch).
    pub applied_ts_ns: AtomicU64,
    /// Writes the database refused since start.
    pub failures: AtomicU64,
    /// Each record written, by the time from its journaling (its timestamp) to the commit of
    /// the batch that holds it: buckets of 128 µs doubling to 2.1 s.
    pub commit_lag: Log2Histogram,
}

impl Default for StoreCounters {
    fn default() -> StoreCounters {
        StoreCounters {
            applied_seq: AtomicU64::new(0),
            applied_ts_ns: AtomicU64::new(0),
            failures: AtomicU64::new(0),
            commit_lag: Log2Histogram::with_unit_shift(7),
        }
    }
}

impl StoreCounters {
    /// Records the loop has committed that the store does not hold yet.
    pub fn lag_records(&self, journal_last: u64) -> u64 {
        journal_last.saturating_sub(self.applied_seq.load(Ordering::Acquire))
    }

    /// How long ago the oldest record the store lacks was journaled, at most (0 when it is
    /// caught up): now less the timestamp of the last record it holds.
    pub fn lag_seconds(&self, journal_last: u64) -> f64 {
        if self.lag_records(journal_last) == 0 {
            return 0.0;
        }
        let ts = self.applied_ts_ns.load(Ordering::Acquire);
        if ts == 0 {
            return 0.0;
        }
        now_ns().saturating_sub(ts) as f64 / 1e9
    }
}

/// The running follower (started by `Server::start`).
pub struct StoreFollower {
    pub counters: Arc<StoreCounters>,
    /// Set after the event loop has stopped: the follower writes what is left, then ends.
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

/// The instruments' rows.
pub fn instrument_rows(cfg: &Config) -> Vec<InstrumentRow> {
    cfg.instruments
        .iter()
        .enumerate()
        .map(|(i, d)| InstrumentRow {
            id: i as u32,
            symbol: d.instrument.symbol.as_str().to_string(),
            tick: trade_store::decimal(d.instrument.tick as i128, d.price_decimals),
            price_decimals: d.price_decimals,
            lot: d.instrument.lot,
        })
        .collect()
}

/// Where the store of `cfg` is (`None`: `store = "off"`).
pub fn store_target(cfg: &Config) -> Option<StoreTarget> {
    cfg.store.as_ref().map(|s| s.target(&cfg.data_dir))
}

/// Opens the store at `target` for writing (migrating its schema; a newer one is refused).
pub fn open(target: &StoreTarget) -> Result<Box<dyn Store>, StoreError> {
    match target {
        StoreTarget::Sqlite(path) => Ok(Box::new(Sqlite::open(path)?)),
        StoreTarget::Postgres(url) => Ok(Box::new(trade_store::Postgres::connect(url)?)),
    }
}

/// The read side of the store at `target`, for the history routes (a PostgreSQL URL that does
/// not parse is refused).
pub fn history(target: &StoreTarget) -> Result<Arc<dyn History>, StoreError> {
    Ok(match target {
        StoreTarget::Sqlite(path) => Arc::new(trade_store::SqliteHistory::new(path)),
        StoreTarget::Postgres(url) => Arc::new(trade_store::PostgresHistory::new(url)?),
    })
}

/// Refuses a store this binary cannot use before trading starts: a database of a newer
/// schema. A PostgreSQL that cannot be reached now is left to the follower, which retries
/// (trading does not wait for it); one that answers is migrated here.
fn check(target: &StoreTarget, log: &Logger) -> Result<(), StoreError> {
    match target {
        StoreTarget::Sqlite(path) => trade_store::check_version(path),
        StoreTarget::Postgres(url) => {
            // At most START_CHECK: a database that does not answer is the follower's to wait
            // for, not the exchange's start.
            let (tx, rx) = std::sync::mpsc::channel();
            let url = url.clone();
            std::thread::spawn(move || {
                let _ = tx.send(trade_store::Postgres::connect(&url).map(drop));
            });
            match rx.recv_timeout(START_CHECK) {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) if e.0.contains("newer than this rialto's") => Err(e),
                Ok(Err(e)) => {
                    log(&format!(
                        "trade store: {e}; trading starts, the store follows once the \
                         database answers"
                    ));
                    Ok(())
                }
                Err(_) => {
                    log(&format!(
                        "trade store: {} did not answer within {} s; trading starts, the store \
                         follows once it answers",
                        target.describe(),
                        START_CHECK.as_secs()
                    ));
                    Ok(())
                }
            }
        }
    }
}

impl StoreFollower {
    /// Checks the store at `target` can be used by this binary (a newer schema is refused
    /// here, before trading starts) and starts the thread; it follows `source` up to
    /// `watermark`.
    pub fn start(
        cfg: &Config,
        target: &StoreTarget,
        source: JournalDir,
        watermark: Arc<Counters>,
        log: Logger,
    ) -> Result<StoreFollower, ServerError> {
        check(target, &log).map_err(|e| ServerError(e.to_string()))?;
        let counters = Arc::new(StoreCounters::default());
        let stop = Arc::new(AtomicBool::new(false));
        let mut t = StoreThread {
            target: target.clone(),
            instruments: instrument_rows(cfg),
            follower: Follower::new(Node::new(cfg, Backing::Lazy), source),
            watermark,
            counters: counters.clone(),
            stop: stop.clone(),
            log,
            last_log: None,
            failures_unlogged: 0,
            lag_us: hdrhistogram::Histogram::new_with_max(3_600_000_000, 3)
                .map_err(|e| ServerError(e.to_string()))?,
            rows: 0,
        };
        let handle = std::thread::Builder::new()
            .name("trade-store".into())
            .spawn(move || {
                if let Err(e) = sched_idle::set_nice(NICE) {
                    (t.log)(&format!(
                        "trade store: cannot set the thread's nice value: {e}"
                    ));
                }
                if let Err(e) = t.run() {
                    (t.log)(&format!("trade store stops: {e}"));
                }
                t.log_summary();
            })
            .map_err(|e| ServerError(e.to_string()))?;
        Ok(StoreFollower {
            counters,
            stop,
            handle: Some(handle),
        })
    }

    /// After the event loop has stopped: the follower writes up to the last record (for at
    /// most `STOP_GRACE`; one attempt if the database refuses) and ends.
    pub fn join(mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(h) = self.handle.take() {
            h.thread().unpark();
            let _ = h.join();
        }
    }
}

struct StoreThread {
    target: StoreTarget,
    instruments: Vec<InstrumentRow>,
    follower: Follower,
    watermark: Arc<Counters>,
    counters: Arc<StoreCounters>,
    stop: Arc<AtomicBool>,
    log: Logger,
    last_log: Option<Instant>,
    failures_unlogged: u64,
    /// Each record written, µs from its journaling to its batch's commit (the stop's summary).
    lag_us: hdrhistogram::Histogram<u64>,
    rows: u64,
}

impl StoreThread {
    /// At the end: what was written, and the journal-to-commit lag of its records.
    fn log_summary(&self) {
        let h = &self.lag_us;
        if h.is_empty() {
            return;
        }
        let ms = |q: f64| h.value_at_quantile(q) as f64 / 1e3;
        (self.log)(&format!(
            "trade store: wrote {} rows of {} journal records; journal-to-commit lag per record \
             P50 {:.1} ms, P99 {:.1} ms, P99.9 {:.1} ms, max {:.1} ms",
            self.rows,
            h.len(),
            ms(0.5),
            ms(0.99),
            ms(0.999),
            h.max() as f64 / 1e3
        ));
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Logs a refusal of the database at most once per `LOG_EVERY`, with how many were not.
    fn refused(&mut self, what: &str, e: &StoreError) {
        self.counters.failures.fetch_add(1, Ordering::Relaxed);
        self.failures_unlogged += 1;
        if self.last_log.is_some_and(|t| t.elapsed() < LOG_EVERY) {
            return;
        }
        let applied = self.counters.applied_seq.load(Ordering::Relaxed);
        let lag = self
            .counters
            .lag_records(self.watermark.last_seq.load(Ordering::Acquire));
        (self.log)(&format!(
            "trade store: {what} failed ({} times since the last message): {e}; trading goes \
             on, the store holds records up to {applied}, {lag} behind; retrying",
            self.failures_unlogged
        ));
        self.failures_unlogged = 0;
        self.last_log = Some(Instant::now());
    }

    /// Calls `f` until it succeeds, waiting longer after each failure; `None` if the server
    /// stops meanwhile (after one attempt once it is stopping).
    fn retry<T>(
        &mut self,
        what: &str,
        mut f: impl FnMut(&mut Self) -> Result<T, StoreError>,
    ) -> Option<T> {
        let mut backoff = BACKOFF_MIN;
        loop {
            match f(self) {
                Ok(v) => {
                    if self.last_log.is_some() {
                        (self.log)(&format!("trade store: {what} succeeds again"));
                        self.last_log = None;
                        self.failures_unlogged = 0;
                    }
                    return Some(v);
                }
                Err(e) => {
                    self.refused(what, &e);
                    if self.stopping() {
                        return None;
                    }
                    std::thread::park_timeout(backoff);
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                }
            }
        }
    }

    fn run(&mut self) -> Result<(), ServerError> {
        let target = self.target.clone();
        let instruments = std::mem::take(&mut self.instruments);
        let Some(mut store) = self.retry("opening the database", |_| {
            let mut s = open(&target)?;
            s.put_instruments(&instruments)?;
            Ok(s)
        }) else {
            return Ok(());
        };
        let Some(pos) = self.retry("reading the store's position", |_| store.position()) else {
            return Ok(());
        };
        // The replica is brought to the store's position without writing.
        let journal_last = self.watermark.last_seq.load(Ordering::Acquire);
        if pos.seq > journal_last {
            return Err(ServerError(format!(
                "the store holds records up to {} but the journal ends at {journal_last}: it \
                 is another journal's store (move {} away to start a new one)",
                pos.seq,
                target.describe()
            )));
        }
        let stop = self.stop.clone();
        self.follower
            .follow_to(pos.seq, |_| !stop.load(Ordering::Relaxed))?;
        if self.follower.last_seq() < pos.seq {
            return Ok(());
        }
        self.counters.applied_seq.store(pos.seq, Ordering::Release);
        self.counters
            .applied_ts_ns
            .store(pos.ts_ns, Ordering::Release);
        self.follower.set_collect_reports(true);
        let mut batch = Batch::default();
        // The timestamps of the batch's records (their lag is counted at its commit).
        let mut record_ts: Vec<u64> = Vec::with_capacity(BATCH_RECORDS as usize);
        let mut stopping_since: Option<Instant> = None;
        loop {
            // Read after the stop flag: once stopping, this is the loop's last record.
            let stopping = self.stopping();
            let upto = self.watermark.last_seq.load(Ordering::Acquire);
            let from = self.follower.last_seq();
            if stopping {
                let since = *stopping_since.get_or_insert_with(Instant::now);
                if from < upto && since.elapsed() >= STOP_GRACE {
                    (self.log)(&format!(
                        "trade store: stopping at record {from}, {} behind; the next start \
                         writes the rest",
                        upto - from
                    ));
                    return Ok(());
                }
            }
            if from >= upto {
                if stopping {
                    return Ok(());
                }
                std::thread::park_timeout(POLL);
                continue;
            }
            let to = upto.min(from + BATCH_RECORDS);
            batch.clear();
            record_ts.clear();
            let mut last_ts = 0;
            self.follower.follow_store_to(
                to,
                |_| true,
                |node, ts, out| {
                    last_ts = ts;
                    record_ts.push(ts);
                    rows_of(
                        node.last_seq(),
                        out.engine_ts_ns.unwrap_or(ts),
                        &out.reports,
                        &out.market,
                        &mut batch,
                    );
                },
            )?;
            batch.upto_seq = self.follower.last_seq();
            batch.upto_ts_ns = last_ts;
            if self
                .retry("writing a batch", |_| store.write(&batch))
                .is_none()
            {
                return Ok(());
            }
            let committed = now_ns();
            for ts in &record_ts {
                let lag = committed.saturating_sub(*ts);
                self.counters.commit_lag.record(lag);
                self.lag_us.saturating_record(lag / 1000);
            }
            self.rows += batch.rows() as u64;
            self.counters
                .applied_ts_ns
                .store(batch.upto_ts_ns, Ordering::Release);
            self.counters
                .applied_seq
                .store(batch.upto_seq, Ordering::Release);
        }
    }
}

fn side(s: Side) -> &'static str {
    match s {
        Side::Buy => "buy",
        Side::Sell => "sell",
    }
}

fn cancel_reason(r: CancelReason) -> &'static str {
    match r {
        CancelReason::User => "user",
        CancelReason::Ioc => "ioc",
        CancelReason::Fok => "fok",
        CancelReason::Stp => "stp",
        CancelReason::NoLiquidity => "no_liquidity",
        CancelReason::Expired => "expired",
        CancelReason::Disconnect => "disconnect",
        CancelReason::Collar => "price_band",
        CancelReason::Operator => "operator",
    }
}

fn order_fields(o: &exchange::OrderRecord) -> OrderFields {
    OrderFields {
        instrument_id: o.symbol,
        owner: o.owner,
        account: o.account,
        side: side(o.side),
        ord_type: match o.ord_type {
            OrdType::Limit => "limit",
            OrdType::Market => "market",
        },
        tif: match o.tif {
            TimeInForce::Gtc => "gtc",
            TimeInForce::Day => "day",
            TimeInForce::Ioc => "ioc",
            TimeInForce::Fok => "fok",
            TimeInForce::Gtd => "gtd",
        },
        price: (o.ord_type == OrdType::Limit).then_some(o.price),
        cl_ord_id: String::from_utf8_lossy(o.cl_ord_id.as_bytes()).into_owned(),
        order_qty: o.order_qty,
        cum_qty: o.cum_qty,
        leaves_qty: o.leaves_qty,
        notional: o.notional,
        status: match o.status() {
            exchange::OrderStatus::New => "new",
            exchange::OrderStatus::PartiallyFilled => "partially_filled",
            exchange::OrderStatus::Filled => "filled",
            exchange::OrderStatus::Canceled => "canceled",
            exchange::OrderStatus::Expired => "expired",
        },
    }
}

/// Appends the rows of record `seq` (stamped `ts`): its trades and its reports (but answers
/// to status requests, which change nothing). Each trade makes two fills, the maker's then the
/// taker's, in the trades' order: the k-th trade's are the record's fills 2k and 2k + 1 (if
/// the counts do not pair up so, the fills get no trade id).
pub fn rows_of(seq: u64, ts: u64, reports: &[OwnedOutput], market: &[Event], batch: &mut Batch) {
    let trades_at = batch.trades.len();
    for e in market {
        if let Event::Trade {
            trade_id,
            symbol,
            price,
            qty,
            maker_id,
            taker_id,
            maker_account,
            taker_account,
            taker_side,
            ..
        } = *e
        {
            batch.trades.push(TradeRow {
                trade_id,
                seq,
                ts_ns: ts,
                instrument_id: symbol,
                price,
                qty,
                maker_order_id: maker_id,
                taker_order_id: taker_id,
                maker_account,
                taker_account,
                taker_side: side(taker_side),
            });
        }
    }
    let trades = &batch.trades[trades_at..];
    let is_fill = |r: &&OwnedOutput| {
        matches!(
            r,
            OwnedOutput::Report {
                kind: ReportKind::Fill { .. },
                ..
            }
        )
    };
    let paired = reports.iter().filter(is_fill).count() == 2 * trades.len();
    let mut fills = 0usize;
    for r in reports {
        let OwnedOutput::Report {
            id, order, n, kind, ..
        } = r
        else {
            continue;
        };
        let kind = match *kind {
            ReportKind::New => EventKind::New,
            ReportKind::Fill { price, qty } => {
                let k = fills;
                fills += 1;
                let t = trades.get(k / 2).filter(|t| {
                    let maker = k.is_multiple_of(2);
                    paired
                        && *id
                            == if maker {
                                t.maker_order_id
                            } else {
                                t.taker_order_id
                            }
                });
                EventKind::Fill {
                    price,
                    qty,
                    trade_id: t.map(|t| t.trade_id),
                    maker: t.map(|_| k.is_multiple_of(2)),
                }
            }
            ReportKind::Canceled(c) => EventKind::Canceled(cancel_reason(c)),
            ReportKind::Replaced => EventKind::Replaced,
            ReportKind::Triggered => EventKind::Triggered,
            ReportKind::Status => continue,
        };
        batch.events.push(OrderEvent {
            seq,
            n: *n,
            ts_ns: ts,
            order_id: *id,
            kind,
            order: order_fields(order),
        });
    }
}

/// What `rialto store rebuild` did.
pub struct Rebuilt {
    /// The journal records replayed.
    pub records: u64,
    /// The rows written.
    pub rows: u64,
    pub seconds: f64,
}

/// Empties the store at `target` and refills it from the journal in `data_dir` (a stopped
/// server's: the journal's lock is held meanwhile), in batches of [`BATCH_RECORDS`] records,
/// each one transaction with its position, as the follower writes them.
pub fn rebuild(
    cfg: &Config,
    data_dir: &Path,
    target: &StoreTarget,
) -> Result<Rebuilt, ServerError> {
    let _lock = journal::lock_offline(data_dir).map_err(|e| {
        ServerError(format!(
            "{e}: is a server running on {}? Stop it first",
            data_dir.display()
        ))
    })?;
    let err = |e: StoreError| ServerError(format!("{}: {}", target.describe(), e.0));
    let t0 = Instant::now();
    let mut store = open(target).map_err(err)?;
    store.reset().map_err(err)?;
    store.put_instruments(&instrument_rows(cfg)).map_err(err)?;
    let mut follower = Follower::new(Node::new(cfg, Backing::Lazy), JournalDir::new(data_dir));
    follower.set_collect_reports(true);
    let mut batch = Batch::default();
    let mut rows = 0u64;
    let mut records = 0u64;
    let mut failed: Option<StoreError> = None;
    // Every BATCH_RECORDS records, their rows and position in one transaction.
    let mut flush = |batch: &mut Batch, seq: u64, ts: u64, failed: &mut Option<StoreError>| {
        if failed.is_some() || batch.upto_seq == seq {
            return;
        }
        batch.upto_seq = seq;
        batch.upto_ts_ns = ts;
        match store.write(batch) {
            Ok(()) => rows += batch.rows() as u64,
            Err(e) => *failed = Some(e),
        }
        batch.clear();
    };
    let mut last_ts = 0;
    follower.follow_store_to(
        crate::follower::TO_END,
        |_| true,
        |node, ts, out| {
            last_ts = ts;
            rows_of(
                node.last_seq(),
                out.engine_ts_ns.unwrap_or(ts),
                &out.reports,
                &out.market,
                &mut batch,
            );
            records += 1;
            if records.is_multiple_of(BATCH_RECORDS) {
                flush(&mut batch, node.last_seq(), ts, &mut failed);
            }
        },
    )?;
    flush(&mut batch, follower.last_seq(), last_ts, &mut failed);
    if let Some(e) = failed {
        return Err(err(e));
    }
    Ok(Rebuilt {
        records: follower.last_seq(),
        rows,
        seconds: t0.elapsed().as_secs_f64(),
    })
}

/// What the store should hold after the journal in `data_dir` (read from record 1 with a
/// replica of `cfg`): the summary `rialto store verify` compares with the store's.
pub fn journal_summary(cfg: &Config, data_dir: &Path) -> Result<Summary, ServerError> {
    let mut follower = Follower::new(Node::new(cfg, Backing::Lazy), JournalDir::new(data_dir));
    follower.set_collect_reports(true);
    let mut s = Summary::default();
    let mut orders: std::collections::BTreeMap<u64, OrderFields> = Default::default();
    let mut batch = Batch::default();
    follower.follow_store_to(
        crate::follower::TO_END,
        |_| true,
        |node, ts, out| {
            batch.clear();
            rows_of(
                node.last_seq(),
                out.engine_ts_ns.unwrap_or(ts),
                &out.reports,
                &out.market,
                &mut batch,
            );
            for e in &batch.events {
                s.order_events += 1;
                if matches!(e.kind, EventKind::Fill { .. }) {
                    s.executions += 1;
                }
                orders.insert(e.order_id, e.order.clone());
            }
            for t in &batch.trades {
                s.add_trade(t);
            }
        },
    )?;
    s.position = follower.last_seq();
    for (id, o) in &orders {
        s.add_order(*id, o);
    }
    Ok(s)
}
