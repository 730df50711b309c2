use super::*;

fn instruments() -> Vec<InstrumentRow> {
    vec![InstrumentRow {
        id: 0,
        symbol: "ACME".into(),
        tick: "0.01".into(),
        price_decimals: 2,
        lot: 1,
    }]
}

fn fields(status: &'static str, cum: u64, leaves: u64) -> OrderFields {
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

fn batch() -> Batch {
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
    }
    let mut s = Sqlite::open(&path).unwrap();
    s.put_instruments(&instruments()).unwrap();
    s.write(&batch()).unwrap();
    assert_eq!(s.summary().unwrap().trades, 1);
}
