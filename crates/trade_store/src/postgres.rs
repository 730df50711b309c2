//! The PostgreSQL backend: a database at a URL (`store.url`), the migrations
//! (`migrations/postgres/`, the tables and columns of SQLite's with PostgreSQL's types: BIGINT
//! integers, NUMERIC prices and notionals) applied at connect in one transaction under an
//! advisory lock, each batch one transaction of a statement or two per table (COPY, or an
//! INSERT of one array per column: `write`), never one statement per row.
//!
//! Reconnects: a call on a closed connection (the server restarted, the network cut) connects
//! again; a call that finds its connection lost fails, and the next one connects again (the
//! follower retries). A connection found dead at its first use is replaced at once and the
//! call made again on the new one: every call is one transaction, and a batch written twice
//! changes nothing.
//!
//! Never: TLS (the client has none: a loopback address, a local socket or a tunnel); the
//! password in an error or a log line ([`redact_url`]); floating point for a price.

use crate::{
    Batch, InstrumentRow, OrderFields, Position, Store, StoreError, Summary, TradeRow, MIGRATIONS,
    SCHEMA_VERSION,
};
use ::postgres::error::SqlState;
use ::postgres::fallible_iterator::FallibleIterator;
use ::postgres::{Client, Config, IsolationLevel, NoTls};
use std::time::Duration;

mod history;
mod write;
pub use history::PostgresHistory;
use write::col;

/// The migrations of the PostgreSQL schema, version for version those of SQLite's
/// ([`MIGRATIONS`]): migration `i` takes a database from version `i` to `i + 1`.
pub const PG_MIGRATIONS: &[&str] = &[
    include_str!("../migrations/postgres/0001_init.sql"),
    include_str!("../migrations/postgres/0002_history_indexes.sql"),
    include_str!("../migrations/postgres/0003_fewer_indexes.sql"),
];

// One schema version means the same tables in both databases.
const _: () = assert!(PG_MIGRATIONS.len() == MIGRATIONS.len());

/// The table holding the schema version (one row), made before migration 1.
pub(crate) const VERSION_TABLE: &str = "CREATE TABLE rialto_schema (\
     id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL); \
     INSERT INTO rialto_schema (id, version) VALUES (1, 0);";

/// The advisory lock migrations hold (per database): two servers starting at once migrate one
/// after the other. The bytes of "rialto1".
const MIGRATION_LOCK: i64 = 0x0072_6961_6c74_6f31;

/// Defaults where the URL says nothing: a server that does not answer is given up on within
/// about a minute, so the follower's retry connects again.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const TCP_USER_TIMEOUT: Duration = Duration::from_secs(30);
const KEEPALIVES_IDLE: Duration = Duration::from_secs(30);
const KEEPALIVES_INTERVAL: Duration = Duration::from_secs(10);
const KEEPALIVES_RETRIES: u32 = 3;

/// `url` with its password replaced by `***` (the URL form's `user:password@` and a
/// `password=` parameter of either form): what errors and logs show.
pub fn redact_url(url: &str) -> String {
    let mut s = url.to_string();
    if let Some(start) = s.find("://").map(|i| i + 3) {
        let authority_end = s[start..].find(['/', '?']).map_or(s.len(), |i| start + i);
        if let Some(at) = s[start..authority_end].rfind('@').map(|i| start + i) {
            if let Some(colon) = s[start..at].find(':').map(|i| start + i) {
                s.replace_range(colon + 1..at, "***");
            }
        }
    }
    let mut from = 0;
    while let Some(i) = s[from..].to_ascii_lowercase().find("password=") {
        let v = from + i + "password=".len();
        let quoted = s[v..].starts_with('\'');
        let end = if quoted {
            s[v + 1..].find('\'').map_or(s.len(), |j| v + j + 2)
        } else {
            s[v..].find(['&', ' ']).map_or(s.len(), |j| v + j)
        };
        s.replace_range(v..end, "***");
        from = v + 3;
    }
    s
}

/// A parsed URL and how messages name it.
pub(crate) struct Target {
    config: Config,
    /// The URL without its password.
    label: String,
}

impl Target {
    pub(crate) fn parse(url: &str) -> Result<Target, StoreError> {
        let label = redact_url(url);
        let mut config: Config = url
            .parse()
            .map_err(|e| StoreError(format!("{label}: not a PostgreSQL URL: {}", chain(&e))))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(CONNECT_TIMEOUT);
        }
        if config.get_tcp_user_timeout().is_none() {
            config.tcp_user_timeout(TCP_USER_TIMEOUT);
        }
        if !url.contains("keepalives_idle") {
            config.keepalives_idle(KEEPALIVES_IDLE);
        }
        if config.get_keepalives_interval().is_none() {
            config.keepalives_interval(KEEPALIVES_INTERVAL);
        }
        if config.get_keepalives_retries().is_none() {
            config.keepalives_retries(KEEPALIVES_RETRIES);
        }
        if config.get_application_name().is_none() {
            config.application_name("rialto");
        }
        Ok(Target { config, label })
    }

    pub(crate) fn connect(&self) -> Result<Client, StoreError> {
        self.config.connect(NoTls).map_err(|e| self.err(&e))
    }

    /// `e`, said with the database it comes from.
    pub(crate) fn err(&self, e: &::postgres::Error) -> StoreError {
        StoreError(format!("{}: {}", self.label, describe(e)))
    }
}

/// An error with its cause (tokio-postgres's own Display says only its kind) and, from the
/// server, its SQLSTATE.
pub(crate) fn describe(e: &::postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut s = format!(
                "{}: {} (SQLSTATE {})",
                db.severity(),
                db.message(),
                db.code().code()
            );
            if let Some(d) = db.detail() {
                s.push_str(&format!("; {d}"));
            }
            s
        }
        None => chain(e),
    }
}

fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

/// Whether `e` left `client`'s connection unusable (closed, broken, or ended by the server),
/// so that the next call connects again.
pub(crate) fn lost(client: &Client, e: &::postgres::Error) -> bool {
    if client.is_closed() || e.is_closed() {
        return true;
    }
    match e.as_db_error() {
        // FATAL ends the session; class 08 is a connection exception, 57P01-57P05 the
        // server shutting down or restarting.
        Some(db) => {
            let code = db.code().code();
            matches!(db.severity(), "FATAL" | "PANIC")
                || code.starts_with("08")
                || code.starts_with("57P")
        }
        None => {
            let mut cause = std::error::Error::source(e);
            while let Some(c) = cause {
                if c.is::<std::io::Error>() {
                    return true;
                }
                cause = c.source();
            }
            false
        }
    }
}

/// The words of a refused newer schema: SQLite's, with where a new store would go.
fn newer_message(v: u32) -> String {
    crate::newer_message(v, "use another database to start a new store")
}

/// Brings the database's schema to this binary's version, in one transaction under the
/// migration lock; a newer version is refused.
fn migrate(client: &mut Client) -> Result<(), Failure> {
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    let exists: bool = tx
        .query_one("SELECT to_regclass('rialto_schema') IS NOT NULL", &[])?
        .get(0);
    if !exists {
        tx.batch_execute(VERSION_TABLE)?;
    }
    let v = version(&mut tx)?;
    if v > SCHEMA_VERSION {
        return Err(Failure::Store(StoreError(newer_message(v))));
    }
    for (i, sql) in PG_MIGRATIONS.iter().enumerate().skip(v as usize) {
        tx.batch_execute(sql).map_err(|e| {
            Failure::Store(StoreError(format!("migration {}: {}", i + 1, describe(&e))))
        })?;
    }
    if v < SCHEMA_VERSION {
        tx.execute(
            "UPDATE rialto_schema SET version = $1",
            &[&(SCHEMA_VERSION as i32)],
        )?;
    }
    tx.commit()?;
    Ok(())
}

fn version(c: &mut impl ::postgres::GenericClient) -> Result<u32, ::postgres::Error> {
    let v: i32 = c
        .query_one("SELECT version FROM rialto_schema", &[])?
        .get(0);
    Ok(v.max(0) as u32)
}

/// Why a call failed: the database's error (said with the target by the caller), or the
/// store's own.
pub(crate) enum Failure {
    Pg(::postgres::Error),
    Store(StoreError),
}

impl From<::postgres::Error> for Failure {
    fn from(e: ::postgres::Error) -> Failure {
        Failure::Pg(e)
    }
}

/// What the connection was opened for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// The follower: migrates, writes.
    Write,
    /// `rialto store verify`: no migration, the current version only, read-only sessions.
    Read,
}

/// A connection and its prepared statements.
struct Conn {
    client: Client,
    st: write::Statements,
    /// The rows being sent, kept between batches.
    buf: Vec<u8>,
}

/// The trade store in a PostgreSQL database. One connection, opened again when lost.
pub struct Postgres {
    target: Target,
    mode: Mode,
    conn: Option<Conn>,
    /// By instrument id: its price decimals (prices are written as exact decimals).
    decimals: Vec<u32>,
}

impl Postgres {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`, or libpq's
    /// `key=value` form) and brings its schema to this binary's version. A database of a
    /// newer schema version is refused.
    pub fn connect(url: &str) -> Result<Postgres, StoreError> {
        Postgres::open(url, Mode::Write)
    }

    /// Connects to read an existing store (`rialto store verify`): no migration (a database
    /// of another schema version is refused), sessions read-only.
    pub fn connect_read_only(url: &str) -> Result<Postgres, StoreError> {
        Postgres::open(url, Mode::Read)
    }

    fn open(url: &str, mode: Mode) -> Result<Postgres, StoreError> {
        let mut s = Postgres {
            target: Target::parse(url)?,
            mode,
            conn: None,
            decimals: Vec::new(),
        };
        s.reconnect()?;
        Ok(s)
    }

    /// The URL without its password.
    pub fn label(&self) -> &str {
        &self.target.label
    }

    /// The connection, to query the store directly (tests, tools); connected again if lost.
    pub fn client(&mut self) -> Result<&mut Client, StoreError> {
        if self.conn.as_ref().is_none_or(|c| c.client.is_closed()) {
            self.reconnect()?;
        }
        match self.conn.as_mut() {
            Some(c) => Ok(&mut c.client),
            None => Err(StoreError(format!("{}: not connected", self.target.label))),
        }
    }

    /// Opens a new connection: the schema checked (and migrated, for the follower), the
    /// statements prepared, the instruments' decimals read.
    fn reconnect(&mut self) -> Result<(), StoreError> {
        self.conn = None;
        let mut client = self.target.connect()?;
        let t = &self.target;
        let fail = |f: Failure| match f {
            Failure::Pg(e) => t.err(&e),
            Failure::Store(e) => StoreError(format!("{}: {}", t.label, e.0)),
        };
        match self.mode {
            Mode::Write => migrate(&mut client).map_err(fail)?,
            Mode::Read => {
                client
                    .batch_execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                    .map_err(|e| t.err(&e))?;
                let v = version(&mut client).map_err(|e| {
                    if e.code() == Some(&SqlState::UNDEFINED_TABLE) {
                        StoreError(format!("{}: no trade store in this database", t.label))
                    } else {
                        t.err(&e)
                    }
                })?;
                if v != SCHEMA_VERSION {
                    return Err(StoreError(format!(
                        "{}: schema version {v}, this rialto reads version {SCHEMA_VERSION}",
                        t.label
                    )));
                }
            }
        }
        let st = write::prepare(&mut client).map_err(|e| t.err(&e))?;
        self.decimals = load_decimals(&mut client).map_err(|e| t.err(&e))?;
        self.conn = Some(Conn {
            client,
            st,
            buf: Vec::new(),
        });
        Ok(())
    }

    /// Runs `f` on the connection (opened first if there is none). A connection `f` finds
    /// lost is dropped; if it was an old one (the server restarted since its last use), `f`
    /// runs once more on a new one.
    fn with<T>(
        &mut self,
        mut f: impl FnMut(&mut Conn, &[u32]) -> Result<T, Failure>,
    ) -> Result<T, StoreError> {
        let mut fresh = false;
        loop {
            if self.conn.as_ref().is_none_or(|c| c.client.is_closed()) {
                self.reconnect()?;
                fresh = true;
            }
            let Some(conn) = self.conn.as_mut() else {
                return Err(StoreError(format!("{}: not connected", self.target.label)));
            };
            match f(conn, &self.decimals) {
                Ok(v) => return Ok(v),
                Err(Failure::Store(e)) => {
                    return Err(StoreError(format!("{}: {}", self.target.label, e.0)))
                }
                Err(Failure::Pg(e)) => {
                    let gone = lost(&conn.client, &e);
                    if gone {
                        self.conn = None;
                    }
                    if gone && !fresh {
                        fresh = true;
                        continue;
                    }
                    return Err(self.target.err(&e));
                }
            }
        }
    }
}

fn load_decimals(c: &mut Client) -> Result<Vec<u32>, ::postgres::Error> {
    let mut decimals = Vec::new();
    for r in c.query(
        "SELECT instrument_id, price_decimals FROM instruments ORDER BY instrument_id",
        &[],
    )? {
        let (id, d): (i64, i64) = (r.get(0), r.get(1));
        let id = id as usize;
        if decimals.len() <= id {
            decimals.resize(id + 1, 0);
        }
        decimals[id] = d as u32;
    }
    Ok(decimals)
}

impl Store for Postgres {
    fn position(&mut self) -> Result<Position, StoreError> {
        self.with(|c, _| {
            let r = c
                .client
                .query_opt("SELECT seq, ts_ns FROM store_position WHERE id = 1", &[])?;
            Ok(r.map_or(Position::default(), |r| Position {
                seq: r.get::<_, i64>(0) as u64,
                ts_ns: r.get::<_, i64>(1) as u64,
            }))
        })
    }

    fn put_instruments(&mut self, instruments: &[InstrumentRow]) -> Result<(), StoreError> {
        let i = instruments;
        let id = col(i, |r| r.id as i64);
        let symbol = col(i, |r| r.symbol.as_str());
        let tick = col(i, |r| r.tick.as_str());
        let price_decimals = col(i, |r| r.price_decimals as i64);
        let lot = col(i, |r| r.lot as i64);
        let decimals = self.with(|c, _| {
            let mut tx = c.client.transaction()?;
            tx.execute(
                "INSERT INTO instruments (instrument_id, symbol, tick, price_decimals, lot) \
                 SELECT id, symbol, tick::numeric, price_decimals, lot FROM unnest($1::bigint[], \
                 $2::text[], $3::text[], $4::bigint[], $5::bigint[]) \
                 AS r (id, symbol, tick, price_decimals, lot) \
                 ON CONFLICT (instrument_id) DO NOTHING",
                &[&id, &symbol, &tick, &price_decimals, &lot],
            )?;
            tx.commit()?;
            Ok(load_decimals(&mut c.client)?)
        })?;
        self.decimals = decimals;
        Ok(())
    }

    fn write(&mut self, batch: &Batch) -> Result<(), StoreError> {
        self.with(|c, decimals| write::write(&mut c.client, &c.st, &mut c.buf, decimals, batch))
    }

    fn summary(&mut self) -> Result<Summary, StoreError> {
        self.with(|c, decimals| {
            // One snapshot for every count and fold.
            let mut tx = c
                .client
                .build_transaction()
                .isolation_level(IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()?;
            let position: i64 = tx
                .query_opt("SELECT seq FROM store_position WHERE id = 1", &[])?
                .map_or(0, |r| r.get(0));
            let mut s = Summary {
                position: position as u64,
                ..Summary::default()
            };
            let count = |tx: &mut ::postgres::Transaction<'_>, sql: &str| {
                tx.query_one(sql, &[]).map(|r| r.get::<_, i64>(0) as u64)
            };
            s.order_events = count(&mut tx, "SELECT count(*) FROM order_events")?;
            s.executions = count(&mut tx, "SELECT count(*) FROM executions")?;
            let none: [i64; 0] = [];
            let mut rows = tx.query_raw(
                "SELECT trade_id, seq, instrument_id, price_units, qty, maker_order_id, \
                 taker_order_id, ts_ns FROM trades ORDER BY trade_id",
                none,
            )?;
            while let Some(r) = rows.next()? {
                s.add_trade(&TradeRow {
                    trade_id: r.get::<_, i64>(0) as u64,
                    seq: r.get::<_, i64>(1) as u64,
                    instrument_id: r.get::<_, i64>(2) as u32,
                    price: r.get(3),
                    qty: r.get::<_, i64>(4) as u64,
                    maker_order_id: r.get::<_, i64>(5) as u64,
                    taker_order_id: r.get::<_, i64>(6) as u64,
                    ts_ns: r.get::<_, i64>(7) as u64,
                    maker_account: 0,
                    taker_account: 0,
                    taker_side: "",
                });
            }
            drop(rows);
            let mut rows = tx.query_raw(
                "SELECT order_id, instrument_id, status, order_qty, cum_qty, leaves_qty, \
                 notional::text FROM orders ORDER BY order_id",
                none,
            )?;
            while let Some(r) = rows.next()? {
                let instrument_id = r.get::<_, i64>(1) as u32;
                let d = decimals.get(instrument_id as usize).copied().unwrap_or(0);
                let notional_text: &str = r.get(6);
                let notional = crate::parse_decimal(notional_text, d).ok_or_else(|| {
                    Failure::Store(StoreError(format!(
                        "orders.notional {notional_text:?} is not a decimal"
                    )))
                })?;
                let fields = OrderFields {
                    instrument_id,
                    owner: 0,
                    account: 0,
                    side: "",
                    ord_type: "",
                    tif: "",
                    price: None,
                    cl_ord_id: String::new(),
                    order_qty: r.get::<_, i64>(3) as u64,
                    cum_qty: r.get::<_, i64>(4) as u64,
                    leaves_qty: r.get::<_, i64>(5) as u64,
                    notional,
                    status: crate::status_name(r.get(2)),
                };
                s.add_order(r.get::<_, i64>(0) as u64, &fields);
            }
            drop(rows);
            tx.commit()?;
            Ok(s)
        })
    }

    fn reset(&mut self) -> Result<(), StoreError> {
        self.with(|c, _| {
            let mut tx = c.client.transaction()?;
            tx.batch_execute(
                "DELETE FROM order_events; DELETE FROM executions; DELETE FROM trades; \
                 DELETE FROM orders; UPDATE store_position SET seq = 0, ts_ns = 0 WHERE id = 1;",
            )?;
            tx.commit()?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests;
