//! The PostgreSQL backend against a throwaway cluster (`test_postgres`): the SQLite tests'
//! cases, plus a restart of the server and a revoked grant. Each cluster costs a start, so the
//! cases share two: one database per case in the first, the restarts in the second.

use super::*;
use crate::tests::{
    assert_history_pages, batch, fields, history_batch, history_instruments, instruments,
};
use crate::{History, InstrumentRow, OrderEvent, Sqlite, SQLITE_FILE};
use test_postgres::{TestPostgres, PASSWORD};

fn count(s: &mut Postgres, sql: &str) -> i64 {
    s.client().unwrap().query_one(sql, &[]).unwrap().get(0)
}

#[test]
fn urls_are_redacted_and_a_bad_one_is_refused() {
    for (url, shown) in [
        (
            "postgres://rialto:s3cret@db:5432/rialto",
            "postgres://rialto:***@db:5432/rialto",
        ),
        (
            "postgresql://rialto:p%40ss@db/rialto?sslmode=disable",
            "postgresql://rialto:***@db/rialto?sslmode=disable",
        ),
        (
            "postgres://db/rialto?user=rialto&password=s3cret&application_name=x",
            "postgres://db/rialto?user=rialto&password=***&application_name=x",
        ),
        (
            "host=db user=rialto password='s3 cret' dbname=rialto",
            "host=db user=rialto password=*** dbname=rialto",
        ),
        ("postgres://rialto@db/rialto", "postgres://rialto@db/rialto"),
    ] {
        assert_eq!(redact_url(url), shown, "{url}");
    }
    let e = Postgres::connect("postgres://rialto:s3cret@127.0.0.1:notaport/rialto")
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("not a PostgreSQL URL"), "{e}");
    assert!(!e.contains("s3cret"), "{e}");
    let e = PostgresHistory::new("mysql://x")
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("not a PostgreSQL URL"), "{e}");
}

/// The SQLite tests' cases, and a revoked grant and two servers migrating at once, each in
/// its own database of one cluster.
#[test]
fn postgres_store_cases() {
    let pg = TestPostgres::start();
    a_batch_commits_its_rows_and_position_and_twice_changes_nothing(&pg);
    reopening_keeps_the_store_and_a_newer_schema_is_refused(&pg);
    a_store_of_the_first_schema_version_opens_under_the_current_one(&pg);
    history_pages_by_keyset(&pg);
    reset_empties_the_store_and_its_position(&pg);
    a_revoked_grant_fails_the_write_and_writes_nothing(&pg);
    texts_and_prices_arrive_exactly(&pg);
    two_servers_migrating_at_once_migrate_once(&pg);
}

fn a_batch_commits_its_rows_and_position_and_twice_changes_nothing(pg: &TestPostgres) {
    let mut s = Postgres::connect(&pg.create_database("twice")).unwrap();
    s.put_instruments(&instruments()).unwrap();
    assert_eq!(s.position().unwrap(), Position::default());
    s.write(&batch()).unwrap();
    let once = s.summary().unwrap();
    s.write(&batch()).unwrap();
    let twice = s.summary().unwrap();
    assert_eq!(once, twice);
    assert_eq!(s.position().unwrap().seq, 6);
    // Rows after the position that this store did not write with it (the position set back
    // by hand): the batch is written again around them.
    s.client()
        .unwrap()
        .execute("UPDATE store_position SET seq = 0", &[])
        .unwrap();
    s.write(&batch()).unwrap();
    assert_eq!(s.summary().unwrap(), once);
    assert_eq!(
        (once.orders, once.order_events, once.executions, once.trades),
        (1, 2, 1, 1)
    );
    assert_eq!(once.volume, 4);
    let r = s
        .client()
        .unwrap()
        .query_one(
            "SELECT o.price::text, pg_typeof(o.price)::text, o.notional::text, o.status, \
             o.created_seq, o.updated_seq FROM orders o",
            &[],
        )
        .unwrap();
    let row: (String, String, String, String, i64, i64) =
        (r.get(0), r.get(1), r.get(2), r.get(3), r.get(4), r.get(5));
    assert_eq!(
        row,
        (
            "100.25".into(),
            "numeric".into(),
            "401.00".into(),
            "partially_filled".into(),
            5,
            6
        )
    );
    let r = s
        .client()
        .unwrap()
        .query_one(
            "SELECT exec_id, trade_id, liquidity, price::text FROM executions",
            &[],
        )
        .unwrap();
    let exec: (String, i64, String, String) = (r.get(0), r.get(1), r.get(2), r.get(3));
    assert_eq!(exec, ("6.1".into(), 1, "maker".into(), "100.25".into()));
    // The summary a journal side folds from the same rows is the same.
    let mut j = Summary {
        position: 6,
        order_events: 2,
        executions: 1,
        ..Summary::default()
    };
    j.add_trade(&batch().trades[0]);
    j.add_order(1, &fields("partially_filled", 4, 6));
    assert_eq!(once.compare(&j), None);
    // And so is SQLite's of the same batches: `rialto store verify` reads both alike.
    let dir = tempfile::tempdir().unwrap();
    let mut lite = Sqlite::open(&dir.path().join(SQLITE_FILE)).unwrap();
    lite.put_instruments(&history_instruments()).unwrap();
    s.put_instruments(&history_instruments()).unwrap();
    for store in [&mut lite as &mut dyn Store, &mut s] {
        store.write(&batch()).unwrap();
        store.write(&history_batch()).unwrap();
    }
    assert_eq!(s.summary().unwrap(), lite.summary().unwrap());
}

fn reopening_keeps_the_store_and_a_newer_schema_is_refused(pg: &TestPostgres) {
    let url = pg.create_database("reopen");
    {
        let mut s = Postgres::connect(&url).unwrap();
        s.put_instruments(&instruments()).unwrap();
        s.write(&batch()).unwrap();
    }
    let mut s = Postgres::connect(&url).unwrap();
    assert_eq!(s.position().unwrap().seq, 6);
    assert_eq!(s.summary().unwrap().trades, 1);
    // The same database through the server's Unix socket (docs/store.md's form).
    let socket = format!(
        "postgres://rialto@{}:{}/reopen",
        pg.dir().display().to_string().replace('/', "%2F"),
        pg.port()
    );
    let mut by_socket = Postgres::connect(&socket).unwrap();
    assert_eq!(by_socket.position().unwrap().seq, 6);
    drop(by_socket);
    let mut r = Postgres::connect_read_only(&url).unwrap();
    assert_eq!(r.summary().unwrap(), s.summary().unwrap());
    let e = r.write(&batch()).expect_err("read only").to_string();
    assert!(e.contains("read-only transaction"), "{e}");
    s.client()
        .unwrap()
        .execute(
            "UPDATE rialto_schema SET version = $1",
            &[&(SCHEMA_VERSION as i32 + 1)],
        )
        .unwrap();
    drop(s);
    let e = Postgres::connect(&url).err().expect("refused").to_string();
    assert!(e.contains("newer than this rialto's"), "{e}");
    assert!(!e.contains(PASSWORD), "{e}");
    let e = Postgres::connect_read_only(&url)
        .err()
        .expect("refused")
        .to_string();
    assert!(e.contains("this rialto reads version"), "{e}");
}

fn a_store_of_the_first_schema_version_opens_under_the_current_one(pg: &TestPostgres) {
    let url = pg.create_database("v1");
    {
        let mut c = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
        c.batch_execute(VERSION_TABLE).unwrap();
        c.batch_execute(PG_MIGRATIONS[0]).unwrap();
        c.batch_execute(
            "UPDATE rialto_schema SET version = 1; \
             INSERT INTO instruments VALUES (0, 'ACME', 0.01, 2, 1); \
             INSERT INTO trades VALUES (1, 6, 0, 100.25, 10025, 4, 1, 2, 7, 8, 'sell', 2000); \
             UPDATE store_position SET seq = 6, ts_ns = 2000;",
        )
        .unwrap();
    }
    let mut s = Postgres::connect(&url).unwrap();
    assert_eq!(
        count(&mut s, "SELECT version::bigint FROM rialto_schema"),
        SCHEMA_VERSION as i64
    );
    assert_eq!(
        count(
            &mut s,
            "SELECT count(*) FROM pg_indexes WHERE indexname = 'orders_by_owner_id'"
        ),
        1,
        "migration 2's index"
    );
    // The rows of version 1 are still there, and the store takes the next batch.
    assert_eq!(s.position().unwrap().seq, 6);
    s.put_instruments(&instruments()).unwrap();
    s.write(&batch()).unwrap();
    let sum = s.summary().unwrap();
    assert_eq!((sum.trades, sum.orders, sum.volume), (1, 1, 4));
}

fn history_pages_by_keyset(pg: &TestPostgres) {
    let url = pg.create_database("history");
    let h = PostgresHistory::new(&url).unwrap();
    let e = h.position().expect_err("no store yet").to_string();
    assert!(e.contains("not created yet"), "{e}");
    let mut s = Postgres::connect(&url).unwrap();
    s.put_instruments(&history_instruments()).unwrap();
    s.write(&history_batch()).unwrap();
    assert_history_pages(&h);
    // Pages run beside each other on pooled connections.
    std::thread::scope(|sc| {
        for _ in 0..6 {
            sc.spawn(|| assert_history_pages(&h));
        }
    });
    let idle = h.idle.lock().unwrap().len();
    assert!((1..=history::IDLE_MAX).contains(&idle), "{idle} idle");
}

fn reset_empties_the_store_and_its_position(pg: &TestPostgres) {
    let mut s = Postgres::connect(&pg.create_database("reset")).unwrap();
    s.put_instruments(&instruments()).unwrap();
    s.write(&batch()).unwrap();
    s.reset().unwrap();
    let sum = s.summary().unwrap();
    assert_eq!(
        (
            sum.position,
            sum.orders,
            sum.order_events,
            sum.executions,
            sum.trades
        ),
        (0, 0, 0, 0, 0)
    );
    assert_eq!(count(&mut s, "SELECT count(*) FROM instruments"), 1);
    s.write(&batch()).unwrap();
    assert_eq!(s.summary().unwrap().trades, 1);
}

fn a_revoked_grant_fails_the_write_and_writes_nothing(pg: &TestPostgres) {
    let mut s = Postgres::connect(&pg.create_database("grant")).unwrap();
    s.put_instruments(&history_instruments()).unwrap();
    s.write(&batch()).unwrap();
    let before = s.summary().unwrap();
    pg.exec_in("grant", "REVOKE INSERT ON trades FROM rialto");
    // The order events and executions go before the trades in the transaction: they must
    // not stay when the trades fail.
    let e = s.write(&history_batch()).expect_err("refused").to_string();
    assert!(e.contains("permission denied for table trades"), "{e}");
    assert!(!e.contains(PASSWORD), "{e}");
    assert_eq!(s.summary().unwrap(), before, "nothing of the batch");
    assert_eq!(s.position().unwrap().seq, 6);
    pg.exec_in("grant", "GRANT INSERT ON trades TO rialto");
    s.write(&history_batch()).unwrap();
    let after = s.summary().unwrap();
    assert_eq!((after.position, after.trades, after.orders), (10, 3, 2));
}

/// Every byte of a client's order id (COPY's escapes) and exact decimals of another scale,
/// negative too.
fn texts_and_prices_arrive_exactly(pg: &TestPostgres) {
    let mut s = Postgres::connect(&pg.create_database("texts")).unwrap();
    let odd = InstrumentRow {
        id: 0,
        symbol: "ODD".into(),
        tick: "0.001".into(),
        price_decimals: 3,
        lot: 1,
    };
    s.put_instruments(std::slice::from_ref(&odd)).unwrap();
    let id = "a\\b\tc\nd\re \\N \\\\ é";
    let mut b = batch();
    for e in &mut b.events {
        e.order.cl_ord_id = id.into();
        e.order.price = Some(-5);
    }
    b.trades[0].price = -5;
    s.write(&b).unwrap();
    let c = s.client().unwrap();
    let texts = |c: &mut ::postgres::Client, sql: &str| -> Vec<(String, String)> {
        c.query(sql, &[])
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1)))
            .collect()
    };
    let e = texts(
        c,
        "SELECT cl_ord_id, price::text FROM order_events ORDER BY seq",
    );
    assert_eq!(e, vec![(id.to_string(), "-0.005".to_string()); 2]);
    let o = texts(c, "SELECT cl_ord_id, notional::text FROM orders");
    assert_eq!(o, [(id.to_string(), "40.100".to_string())]);
    let x = texts(c, "SELECT exec_id, price::text FROM executions");
    assert_eq!(x, [("6.1".to_string(), "10.025".to_string())]);
    let t = texts(c, "SELECT taker_side, price::text FROM trades");
    assert_eq!(t, [("sell".to_string(), "-0.005".to_string())]);
    let dir = tempfile::tempdir().unwrap();
    let mut lite = Sqlite::open(&dir.path().join(SQLITE_FILE)).unwrap();
    lite.put_instruments(&[odd]).unwrap();
    lite.write(&b).unwrap();
    assert_eq!(s.summary().unwrap(), lite.summary().unwrap());
}

fn two_servers_migrating_at_once_migrate_once(pg: &TestPostgres) {
    let url = pg.create_database("race");
    let stores: Vec<Postgres> = std::thread::scope(|sc| {
        let h: Vec<_> = (0..3)
            .map(|_| sc.spawn(|| Postgres::connect(&url).unwrap()))
            .collect();
        h.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for mut s in stores {
        assert_eq!(
            count(&mut s, "SELECT version::bigint FROM rialto_schema"),
            SCHEMA_VERSION as i64
        );
        assert_eq!(count(&mut s, "SELECT count(*) FROM store_position"), 1);
    }
}

/// The server stopped and started again under a `Postgres` and a `PostgresHistory`: calls
/// fail while it is down (saying so without the password), and the same values work again
/// once it is back, whether a call failed meanwhile or not.
#[test]
fn postgres_reconnects_after_a_restart() {
    let mut pg = TestPostgres::start();
    let url = pg.url();
    let mut s = Postgres::connect(&url).unwrap();
    let h = PostgresHistory::new(&url).unwrap();
    s.put_instruments(&history_instruments()).unwrap();
    s.write(&batch()).unwrap();
    assert_eq!(h.position().unwrap().seq, 6);

    pg.stop();
    let e = s.write(&history_batch()).expect_err("down").to_string();
    assert!(!e.contains(PASSWORD), "{e}");
    assert!(
        e.contains(&format!("rialto:***@127.0.0.1:{}", pg.port())),
        "{e}"
    );
    assert!(h.position().is_err());
    pg.start_again();
    // The first call after the restart connects again.
    s.write(&history_batch()).unwrap();
    assert_eq!(h.position().unwrap().seq, 10);

    // Down and up with no call between: the old connections are found dead at their first
    // use and replaced within the call.
    pg.stop();
    pg.start_again();
    assert_eq!(s.position().unwrap().seq, 10);
    assert_history_pages(&h);
    let mut more = history_batch();
    more.events.push(OrderEvent {
        seq: 11,
        order_id: 3,
        ..more.events[0].clone()
    });
    more.upto_seq = 11;
    pg.stop();
    pg.start_again();
    s.write(&more).unwrap();
    let sum = s.summary().unwrap();
    assert_eq!(
        (
            sum.position,
            sum.trades,
            sum.orders,
            sum.order_events,
            sum.executions
        ),
        (11, 3, 3, 5, 1),
        "nothing lost, nothing doubled"
    );
}
