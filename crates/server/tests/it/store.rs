//! The trade store when its database refuses writes or is gone: another connection holds the
//! SQLite write lock (a locked database; a read-only file cannot be simulated as root, which
//! ignores file modes), a PostgreSQL grant is revoked, PostgreSQL is stopped for 30 s. Trading
//! goes on (every order is acknowledged), the refusal is logged once per interval, not per
//! attempt, `/metrics` shows the lag, and once the database takes writes again the store
//! catches up and holds exactly what the journal says, nothing lost or doubled.

use fix::client::FixClient;
use server::{Config, Server};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(20);

fn pg_config(dir: &std::path::Path, url: &str) -> Config {
    let mut c = config(dir);
    c.store = Some(server::config::StoreConfig::Postgres { url: url.into() });
    c
}

fn config(dir: &std::path::Path) -> Config {
    let mut c = Config::from_toml(
        "listen = \"127.0.0.1:0\"\nhttp_listen = \"127.0.0.1:0\"\norders_max = 65536\n\
         trading_day_end = \"off\"\n[market_data]\nenabled = false\n",
    )
    .expect("config");
    c.data_dir = dir.to_path_buf();
    c
}

fn now_fix() -> String {
    let ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let mut v = Vec::new();
    fix::write_utc_timestamp(&mut v, ns, fix::TimePrecision::Millis);
    String::from_utf8(v).unwrap()
}

/// Sends `n` crossing pairs of orders (CLIENT1 buys, CLIENT2 sells) and waits for each
/// acknowledgement.
fn trade(a: &mut FixClient, b: &mut FixClient, tag: &str, n: u32) {
    for i in 0..n {
        for (c, side) in [(&mut *a, "1"), (&mut *b, "2")] {
            let cl = format!("{tag}-{side}-{i}");
            c.send(
                "D",
                &[
                    (11, cl.as_str()),
                    (55, "ACME"),
                    (54, side),
                    (38, "3"),
                    (40, "2"),
                    (44, "10.00"),
                    (59, "1"),
                    (60, now_fix().as_str()),
                ],
            )
            .unwrap();
            loop {
                let (m, _) = c.expect("8", T).unwrap();
                if m.get(11) == Some(cl.as_str()) && m.get(150) == Some("0") {
                    break;
                }
            }
        }
    }
}

fn metric(agent: &ureq::Agent, base: &str, name: &str) -> u64 {
    let m = agent
        .get(format!("{base}/metrics"))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    m.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in /metrics:\n{m}"))
}

/// Waits (with a deadline) until `f` holds.
fn wait(what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + T;
    while !f() {
        assert!(Instant::now() < deadline, "{what}: not before the deadline");
        std::thread::park_timeout(Duration::from_millis(20));
    }
}

#[test]
fn a_store_of_a_newer_schema_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = trade_store::rusqlite::Connection::open(dir.path().join("rialto.db")).unwrap();
        db.pragma_update(None, "user_version", trade_store::SCHEMA_VERSION + 1)
            .unwrap();
    }
    let e = Server::start(config(dir.path()), Arc::new(|_: &str| {}))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("newer than this rialto's"), "{e}");
}

#[test]
fn a_locked_database_delays_the_store_not_trading_and_it_catches_up() {
    let dir = tempfile::tempdir().unwrap();
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let log = lines.clone();
    let s = Server::start(
        config(dir.path()),
        Arc::new(move |m: &str| log.lock().unwrap().push(m.to_string())),
    )
    .unwrap();
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(T))
        .build()
        .into();
    let base = format!("http://{}", s.http_addr().unwrap());
    let store = s.store_counters().expect("the store is on by default");
    let caught_up = || {
        store.applied_seq.load(std::sync::atomic::Ordering::Acquire)
            == s.counters
                .last_seq
                .load(std::sync::atomic::Ordering::Acquire)
    };
    let mut a = FixClient::connect(s.addr, "CLIENT1", "RIALTO", 1).unwrap();
    a.logon(30, true).unwrap();
    a.expect("A", T).unwrap();
    let mut b = FixClient::connect(s.addr, "CLIENT2", "RIALTO", 1).unwrap();
    b.logon(30, true).unwrap();
    b.expect("A", T).unwrap();
    trade(&mut a, &mut b, "before", 20);
    wait("the store catches up", caught_up);

    // Another connection takes the write lock and keeps it.
    let lock = trade_store::rusqlite::Connection::open(dir.path().join("rialto.db")).unwrap();
    lock.execute_batch("BEGIN IMMEDIATE").unwrap();
    trade(&mut a, &mut b, "locked", 20);
    wait("three refused writes", || {
        metric(&agent, &base, "rialto_store_write_failures_total") >= 3
    });
    assert!(metric(&agent, &base, "rialto_store_lag_records") > 0);
    assert!(metric(&agent, &base, "rialto_store_lag_milliseconds") > 0);
    // Trading went on meanwhile.
    trade(&mut a, &mut b, "still", 5);
    let refusals = |lines: &Mutex<Vec<String>>| {
        lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.starts_with("trade store: writing a batch failed"))
            .count()
    };
    // Logged once in the interval (10 s), not once per refused write.
    assert_eq!(refusals(&lines), 1, "{:?}", lines.lock().unwrap());

    lock.execute_batch("COMMIT").unwrap();
    drop(lock);
    wait("the store catches up after the lock", caught_up);
    assert_eq!(metric(&agent, &base, "rialto_store_lag_records"), 0);
    assert!(lines
        .lock()
        .unwrap()
        .iter()
        .any(|l| l == "trade store: writing a batch succeeds again"));
    drop((a, b));
    s.shutdown().unwrap();

    let cfg = config(dir.path());
    let journal = server::store::journal_summary(&cfg, dir.path()).unwrap();
    let mut db = trade_store::Sqlite::open_read_only(&dir.path().join("rialto.db")).unwrap();
    let stored = trade_store::Store::summary(&mut db).unwrap();
    assert_eq!(stored.compare(&journal), None);
    assert_eq!(stored.trades, 45);
}

/// A server trading over FIX with its log kept, a metrics reader and its store's progress.
struct Trading {
    s: Server,
    lines: Arc<Mutex<Vec<String>>>,
    agent: ureq::Agent,
    base: String,
    a: FixClient,
    b: FixClient,
}

impl Trading {
    fn start(cfg: Config) -> Trading {
        let lines = Arc::new(Mutex::new(Vec::<String>::new()));
        let log = lines.clone();
        let s = Server::start(
            cfg,
            Arc::new(move |m: &str| log.lock().unwrap().push(m.to_string())),
        )
        .unwrap();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(T))
            .build()
            .into();
        let base = format!("http://{}", s.http_addr().unwrap());
        let mut a = FixClient::connect(s.addr, "CLIENT1", "RIALTO", 1).unwrap();
        a.logon(30, true).unwrap();
        a.expect("A", T).unwrap();
        let mut b = FixClient::connect(s.addr, "CLIENT2", "RIALTO", 1).unwrap();
        b.logon(30, true).unwrap();
        b.expect("A", T).unwrap();
        Trading {
            s,
            lines,
            agent,
            base,
            a,
            b,
        }
    }

    fn trade(&mut self, tag: &str, n: u32) {
        trade(&mut self.a, &mut self.b, tag, n);
    }

    fn metric(&self, name: &str) -> u64 {
        metric(&self.agent, &self.base, name)
    }

    fn caught_up(&self) -> bool {
        let store = self.s.store_counters().expect("the store is on");
        store.applied_seq.load(std::sync::atomic::Ordering::Acquire)
            == self
                .s
                .counters
                .last_seq
                .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Log lines starting with `prefix`.
    fn logged(&self, prefix: &str) -> usize {
        self.lines
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.starts_with(prefix))
            .count()
    }

    /// Stops the server cleanly; the store then equals the journal, with `trades` trades.
    fn stop_and_verify(self, dir: &std::path::Path, url: &str, trades: u64) {
        drop((self.a, self.b));
        self.s.shutdown().unwrap();
        let journal = server::store::journal_summary(&pg_config(dir, url), dir).unwrap();
        let mut db = trade_store::Postgres::connect_read_only(url).unwrap();
        let stored = trade_store::Store::summary(&mut db).unwrap();
        assert_eq!(stored.compare(&journal), None, "{stored:?} {journal:?}");
        assert_eq!(stored.trades, trades);
    }
}

#[test]
fn postgresql_stopped_for_30_s_pauses_the_store_not_trading() {
    let mut pg = test_postgres::TestPostgres::start();
    let url = pg.url();
    let dir = tempfile::tempdir().unwrap();
    let mut t = Trading::start(pg_config(dir.path(), &url));
    t.trade("before", 20);
    wait("the store catches up", || t.caught_up());

    pg.stop();
    let stopped = Instant::now();
    // Trading goes on for the 30 s the database is away: a pair a second.
    let mut n = 0;
    while stopped.elapsed() < Duration::from_secs(30) {
        t.trade(&format!("away{n}"), 1);
        n += 1;
        if n == 3 {
            wait("a refused write", || {
                t.metric("rialto_store_write_failures_total") >= 1
            });
            assert!(t.metric("rialto_store_lag_records") > 0);
        }
        std::thread::park_timeout(Duration::from_millis(1000));
    }
    assert!(t.metric("rialto_store_lag_milliseconds") >= 20_000);
    // Once per 10 s at most, not once per retry.
    let refusals = t.logged("trade store: writing a batch failed");
    assert!((1..=4).contains(&refusals), "{:?}", t.lines.lock().unwrap());

    pg.start_again();
    wait("the store catches up after the outage", || t.caught_up());
    assert_eq!(t.metric("rialto_store_lag_records"), 0);
    assert_eq!(t.logged("trade store: writing a batch succeeds again"), 1);
    t.trade("after", 5);
    wait("the store catches up", || t.caught_up());
    t.stop_and_verify(dir.path(), &url, 20 + n + 5);
}

#[test]
fn a_revoked_postgresql_grant_delays_the_store_not_trading_and_a_newer_schema_stops_a_start() {
    let pg = test_postgres::TestPostgres::start();
    let url = pg.url();
    let dir = tempfile::tempdir().unwrap();
    let mut t = Trading::start(pg_config(dir.path(), &url));
    t.trade("before", 10);
    wait("the store catches up", || t.caught_up());

    pg.exec_in("rialto", "REVOKE INSERT ON trades FROM rialto");
    t.trade("revoked", 10);
    wait("three refused writes", || {
        t.metric("rialto_store_write_failures_total") >= 3
    });
    t.trade("still", 5);
    assert_eq!(t.logged("trade store: writing a batch failed"), 1);
    assert!(
        t.lines
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains("permission denied")),
        "{:?}",
        t.lines.lock().unwrap()
    );
    assert!(t.metric("rialto_store_lag_records") > 0);

    pg.exec_in("rialto", "GRANT INSERT ON trades TO rialto");
    wait("the store catches up after the grant", || t.caught_up());
    t.stop_and_verify(dir.path(), &url, 25);

    // A database of a newer schema stops the next start before trading.
    pg.exec_in(
        "rialto",
        &format!(
            "UPDATE rialto_schema SET version = {}",
            trade_store::SCHEMA_VERSION + 1
        ),
    );
    let e = Server::start(pg_config(dir.path(), &url), Arc::new(|_: &str| {}))
        .err()
        .expect("refused");
    assert!(e.to_string().contains("newer than this rialto's"), "{e}");
    assert!(!e.to_string().contains(test_postgres::PASSWORD), "{e}");
}
