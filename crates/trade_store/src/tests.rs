use super::*;

pub(crate) fn instruments() -> Vec<InstrumentRow> {
    vec![InstrumentRow {
        id: 0,
        symbol: "ACME".into(),
        tick: "0.01".into(),
        price_decimals: 2,
        lot: 1,
    }]
}

pub(crate) fn fields(status: &'static str, cum: u64, leaves: u64) -> OrderFields {
    OrderFields {
        instrument_id: 0,
        owner: 1,
        account: 7,
        side: "buy",
        ord_type: "limit",
        tif: "day",
        price: Some(10_025),
        cl_ord_id: "c1".into(),
        order_qty: 10,
        cum_qty: cum,
        leaves_qty: leaves,
        notional: 10_025 * cum as i128,
        status,
    }
}

pub(crate) fn batch() -> Batch {
    Batch {
        events: vec![
            OrderEvent {
                seq: 5,
                n: 0,
                ts_ns: 1_000,
                order_id: 1,
                kind: EventKind::New,
                order: fields("new", 0, 10),
            },
            OrderEvent {
                seq: 6,
                n: 1,
                ts_ns: 2_000,
                order_id: 1,
                kind: EventKind::Fill {
                    price: 10_025,
                    qty: 4,
                    trade_id: Some(1),
                    maker: Some(true),
                },
                order: fields("partially_filled", 4, 6),
            },
        ],
        trades: vec![TradeRow {
            trade_id: 1,
            seq: 6,
            ts_ns: 2_000,
            instrument_id: 0,
            price: 10_025,
            qty: 4,
            maker_order_id: 1,
            taker_order_id: 2,
            maker_account: 7,
            taker_account: 8,
            taker_side: "sell",
        }],
        upto_seq: 6,
        upto_ts_ns: 2_000,
    }
}

#[test]
fn decimals_are_exact_both_ways() {
    for (u, d, s) in [
        (12_345i128, 2, "123.45"),
        (-5, 3, "-0.005"),
        (7, 0, "7"),
        (100, 2, "1.00"),
        (1, 9, "0.000000001"),
    ] {
        assert_eq!(decimal(u, d), s);
        assert_eq!(parse_decimal(s, d), Some(u));
    }
    assert_eq!(parse_decimal("1.234", 2), None);
}

#[test]
fn a_batch_commits_its_rows_and_position_and_twice_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Sqlite::open(&dir.path().join(SQLITE_FILE)).unwrap();
    s.put_instruments(&instruments()).unwrap();
    assert_eq!(s.position().unwrap(), Position::default());
    s.write(&batch()).unwrap();
    let once = s.summary().unwrap();
    s.write(&batch()).unwrap();
    let twice = s.summary().unwrap();
    assert_eq!(once, twice);
    assert_eq!(s.position().unwrap().seq, 6);
    assert_eq!(
        (once.orders, once.order_events, once.executions, once.trades),
        (1, 2, 1, 1)
    );
    assert_eq!(once.volume, 4);
    let (price, status, created, updated): (String, String, i64, i64) = s
        .connection()
        .query_row(
            "SELECT o.price, o.status, o.created_seq, o.updated_seq FROM orders o",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(
        (price.as_str(), status.as_str(), created, updated),
        ("100.25", "partially_filled", 5, 6)
    );
    let exec: (String, i64, String) = s
        .connection()
        .query_row(
            "SELECT exec_id, trade_id, liquidity FROM executions",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(exec, ("6.1".to_string(), 1, "maker".to_string()));
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
    j.add_trade(&TradeRow {
        trade_id: 2,
        ..batch().trades[0].clone()
    });
    assert_eq!(
        once.compare(&j).unwrap(),
        "trades: the store has 1, the journal 2"
    );
}

#[test]
fn reopening_keeps_the_store_and_a_newer_schema_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(SQLITE_FILE);
    {
        let mut s = Sqlite::open(&path).unwrap();
        s.put_instruments(&instruments()).unwrap();
        s.write(&batch()).unwrap();
    }
    let mut s = Sqlite::open(&path).unwrap();
    assert_eq!(s.position().unwrap().seq, 6);
    assert_eq!(s.summary().unwrap().trades, 1);
    let mode: String = s
        .connection()
        .pragma_query_value(None, "journal_mode", |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    s.connection()
        .pragma_update(None, "user_version", SCHEMA_VERSION + 1)
        .unwrap();
    drop(s);
    let e = Sqlite::open(&path).err().expect("refused").to_string();
    assert!(e.contains("newer than this rialto's"), "{e}");
}

#[test]
fn a_store_of_the_first_schema_version_opens_under_the_current_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(SQLITE_FILE);
    {
        let c = rusqlite::Connection::open(&path).unwrap();
        c.execute_batch(MIGRATIONS[0]).unwrap();
        c.pragma_update(None, "user_version", 1).unwrap();
        c.execute_batch(
            "INSERT INTO instruments VALUES (0, 'ACME', '0.01', 2, 1); \
             INSERT INTO trades VALUES (1, 6, 0, '100.25', 10025, 4, 1, 2, 7, 8, 'sell', 2000); \
             UPDATE store_position SET seq = 6, ts_ns = 2000;",
        )
        .unwrap();
    }
    let mut s = Sqlite::open(&path).unwrap();
    let version: u32 = s
        .connection()
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
    let index: i64 = s
        .connection()
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND name = 'orders_by_owner_id'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(index, 1, "migration 2's index");
    // The rows of version 1 are still there, and the store takes the next batch.
    assert_eq!(s.position().unwrap().seq, 6);
    s.put_instruments(&instruments()).unwrap();
    s.write(&batch()).unwrap();
    let sum = s.summary().unwrap();
    assert_eq!((sum.trades, sum.orders, sum.volume), (1, 1, 4));
}

/// Three trades of one order book and their fills, over two owners and two instruments.
pub(crate) fn history_batch() -> Batch {
    let mut b = batch();
    let mut t = b.trades[0].clone();
    for (id, inst) in [(2u64, 0u32), (3, 1)] {
        t.trade_id = id;
        t.seq = 6 + id;
        t.instrument_id = inst;
        b.trades.push(t.clone());
    }
    let mut closed = b.events[1].clone();
    closed.seq = 9;
    closed.n = 0;
    closed.kind = EventKind::Canceled("user");
    closed.order = fields("canceled", 4, 0);
    b.events.push(closed);
    let mut other = b.events[0].clone();
    other.seq = 10;
    other.order_id = 2;
    other.order.owner = 2;
    other.order.status = "filled";
    b.events.push(other);
    b.upto_seq = 10;
    b
}

/// The instruments of [`history_batch`]: ACME (0) and BOLT (1).
pub(crate) fn history_instruments() -> Vec<InstrumentRow> {
    let mut inst = instruments();
    inst.push(InstrumentRow {
        id: 1,
        symbol: "BOLT".into(),
        ..inst[0].clone()
    });
    inst
}

/// What every backend's history answers once [`history_batch`] is written.
pub(crate) fn assert_history_pages(h: &dyn History) {
    assert_eq!(h.position().unwrap().seq, 10);
    let q = |since, limit| TradeQuery {
        instrument_id: 0,
        since,
        limit,
        newest_first: false,
    };
    let desc = |since, limit| TradeQuery {
        newest_first: true,
        ..q(since, limit)
    };
    let ids = |v: Vec<TradeRow>| v.iter().map(|t| t.trade_id).collect::<Vec<_>>();
    assert_eq!(ids(h.trades(&q(0, 10)).unwrap()), [1, 2]);
    assert_eq!(ids(h.trades(&q(0, 1)).unwrap()), [1]);
    assert_eq!(ids(h.trades(&q(1, 10)).unwrap()), [2]);
    assert_eq!(ids(h.trades(&q(2, 10)).unwrap()), Vec::<u64>::new());
    assert_eq!(ids(h.trades(&desc(0, 10)).unwrap()), [2, 1]);
    assert_eq!(ids(h.trades(&desc(0, 1)).unwrap()), [2]);
    assert_eq!(ids(h.trades(&desc(2, 10)).unwrap()), [1]);
    assert_eq!(ids(h.trades(&desc(1, 10)).unwrap()), Vec::<u64>::new());
    let t = &h.trades(&q(0, 1)).unwrap()[0];
    assert_eq!(t, &batch().trades[0]);
    let fills = h
        .fills(&FillQuery {
            owner: 1,
            instrument_id: None,
            since: (0, 0),
            limit: 10,
        })
        .unwrap();
    assert_eq!(fills.len(), 1);
    let f = &fills[0];
    assert_eq!(
        (f.exec_id(), f.cl_ord_id.as_str(), f.price, f.qty),
        ("6.1".to_string(), "c1", 10_025, 4)
    );
    assert_eq!(
        (f.trade_id, f.liquidity.as_deref(), f.side.as_str()),
        (Some(1), Some("maker"), "buy")
    );
    let only = |instrument_id| FillQuery {
        owner: 1,
        instrument_id: Some(instrument_id),
        since: (0, 0),
        limit: 10,
    };
    assert_eq!(h.fills(&only(0)).unwrap().len(), 1);
    assert!(h.fills(&only(1)).unwrap().is_empty());
    let after = FillQuery {
        owner: 1,
        instrument_id: None,
        since: (6, 1),
        limit: 10,
    };
    assert!(h.fills(&after).unwrap().is_empty());
    let other = FillQuery { owner: 2, ..after };
    assert!(h
        .fills(&FillQuery {
            since: (0, 0),
            ..other
        })
        .unwrap()
        .is_empty());
    let orders = |owner, from_ns, to_ns| {
        h.closed_orders(&OrderQuery {
            owner,
            instrument_id: None,
            since: 0,
            from_ns,
            to_ns,
            limit: 10,
        })
        .unwrap()
        .iter()
        .map(|o| {
            (
                o.order_id,
                o.status.clone(),
                o.notional,
                o.cancel_reason.clone(),
            )
        })
        .collect::<Vec<_>>()
    };
    assert_eq!(
        orders(1, 0, u64::MAX),
        [(1, "canceled".to_string(), 40_100, Some("user".to_string()))]
    );
    assert_eq!(orders(2, 0, u64::MAX), [(2, "filled".to_string(), 0, None)]);
    // Created at 1,000 ns: in [1000, 1001), not in [1001, max).
    assert_eq!(orders(1, 1_000, 1_001).len(), 1);
    assert!(orders(1, 1_001, u64::MAX).is_empty());
    let closed = h
        .closed_orders(&OrderQuery {
            owner: 1,
            instrument_id: Some(0),
            since: 0,
            from_ns: 0,
            to_ns: u64::MAX,
            limit: 10,
        })
        .unwrap();
    assert_eq!(closed.len(), 1);
    let o = &closed[0];
    assert_eq!(
        (o.price, o.cl_ord_id.as_str(), o.cum_qty, o.leaves_qty),
        (Some(10_025), "c1", 4, 0)
    );
    assert_eq!(
        (
            o.created_ts_ns,
            o.updated_ts_ns,
            o.side.as_str(),
            o.tif.as_str()
        ),
        (1_000, 2_000, "buy", "day")
    );
}

#[test]
fn history_pages_by_keyset() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(SQLITE_FILE);
    let h = SqliteHistory::new(&path);
    let e = h.position().expect_err("no store yet").to_string();
    assert!(e.contains("not created yet"), "{e}");
    let mut s = Sqlite::open(&path).unwrap();
    s.put_instruments(&history_instruments()).unwrap();
    s.write(&history_batch()).unwrap();
    assert_history_pages(&h);
    assert_eq!(parse_exec_id("6.1"), Some((6, 1)));
    for bad in ["6", "6.", ".1", "6.1.2", "-6.1", "a.1"] {
        assert_eq!(parse_exec_id(bad), None, "{bad}");
    }
}

#[test]
fn reset_empties_the_store_and_its_position() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = Sqlite::open(&dir.path().join(SQLITE_FILE)).unwrap();
    s.put_instruments(&instruments()).unwrap();
    s.write(&batch()).unwrap();
    s.reset().unwrap();
    let sum = s.summary().unwrap();
    assert_eq!(
        (sum.position, sum.orders, sum.order_events, sum.trades),
        (0, 0, 0, 0)
    );
    s.write(&batch()).unwrap();
    assert_eq!(s.summary().unwrap().trades, 1);
}
