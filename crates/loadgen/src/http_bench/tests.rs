use super::*;

#[test]
fn answers_are_classed_by_status() {
    assert_eq!(class(200), Class::Ok);
    assert_eq!(class(201), Class::Ok);
    assert_eq!(class(404), Class::Reject);
    assert_eq!(class(409), Class::Reject);
    assert_eq!(class(422), Class::Reject);
    assert_eq!(class(429), Class::Shed);
    assert_eq!(class(503), Class::Shed);
    assert_eq!(class(500), Class::Error);
    assert_eq!(class(302), Class::Error);
}

#[test]
fn request_j_is_due_at_j_over_the_rate_on_connection_j_mod_n() {
    let s = Span {
        start: 1_000,
        measure_from: 0,
        end: 1_000 + 1_000_000_000,
        send_until: 0,
        drain_until: 0,
        rate: 4_000,
        connections: 4,
    };
    // 4,000/s: one every 250 µs, in turn over the 4 connections.
    assert_eq!(s.intended(0, 0), 1_000);
    assert_eq!(s.intended(1, 0), 1_000 + 250_000);
    assert_eq!(s.intended(3, 0), 1_000 + 750_000);
    assert_eq!(s.intended(0, 1), 1_000 + 1_000_000);
    assert_eq!(s.intended(2, 10), 1_000 + 42 * 250_000);
    // A second: 4,000 requests, 1,000 on each connection.
    assert_eq!((0..4).map(|c| s.due(c)).collect::<Vec<_>>(), [1_000; 4]);
}

fn answer(status: u16, body: &str) -> Result<Answer, String> {
    Ok(Answer {
        status,
        body: Bytes::from(body.to_string()),
    })
}

#[test]
fn the_mix_becomes_rest_requests_and_the_answers_keep_the_window() {
    let market = Market::default_contract();
    let mut orders = BotOrders::new(4);
    let mut ids = vec![0u64; 5];
    let new = Action::New {
        symbol: 1,
        side: Side::Sell,
        ord_type: OrdType::Limit,
        tif: TimeInForce::Day,
        price_ticks: 5_003,
        qty: 7,
        slot: 2,
    };
    let (m, path, body) = request_of(&new, &market, &orders, &ids).unwrap();
    assert_eq!((m, path.as_str()), (Method::POST, "/api/v1/orders"));
    assert_eq!(
        body.unwrap(),
        r#"{"symbol":"BOLT","side":"sell","type":"limit","time_in_force":"day","price":"50.03","quantity":"7"}"#
    );
    assert!(orders.alloc_at(2));
    orders.on_new_sent(2, 0, 1, Side::Sell, 5_003, 7);
    let created = answer(
        201,
        r#"{"order_id":42,"status":"partially_filled","remaining_quantity":"4","fills":[{"fill_id":"1-0"}]}"#,
    );
    assert_eq!(settle(&new, 0, &created, &mut orders, &mut ids), (1, false));
    assert_eq!(ids[2], 42);
    assert_eq!(orders.live_count(), 1);
    assert_eq!(orders.slot(2).unwrap().leaves_qty, 4);

    // A replace names the order by its id, in its instrument.
    let replace = Action::Replace {
        slot: 2,
        price_ticks: 5_010,
        qty: 9,
    };
    let (m, path, body) = request_of(&replace, &market, &orders, &ids).unwrap();
    assert_eq!((m, path.as_str()), (Method::PATCH, "/api/v1/orders/42"));
    assert_eq!(
        body.unwrap(),
        r#"{"symbol":"BOLT","price":"50.1","quantity":"9"}"#
    );
    orders.on_request_sent(2, 1, Some((5_010, 9)));
    // Too little left to replace: refused, the order stays as it was.
    let refused = answer(
        422,
        r#"{"code":"quantity_at_or_below_filled","message":"x"}"#,
    );
    settle(&replace, 1, &refused, &mut orders, &mut ids);
    assert_eq!(orders.live_count(), 1);
    assert_eq!(orders.slot(2).unwrap().price_ticks, 5_003);

    // A cancel of an order that filled meanwhile (409) frees the slot.
    let cancel = Action::Cancel { slot: 2 };
    let (m, path, body) = request_of(&cancel, &market, &orders, &ids).unwrap();
    assert_eq!(
        (m, path.as_str(), body),
        (Method::DELETE, "/api/v1/orders/42", None)
    );
    orders.on_request_sent(2, 2, None);
    settle(
        &cancel,
        2,
        &answer(409, r#"{"code":"order_not_open"}"#),
        &mut orders,
        &mut ids,
    );
    assert_eq!(orders.live_count(), 0);

    // A market order has no price and no time in force (the API's default, IOC); an IOC
    // remainder canceled at once is counted.
    let market_order = Action::New {
        symbol: 0,
        side: Side::Buy,
        ord_type: OrdType::Market,
        tif: TimeInForce::Day,
        price_ticks: 0,
        qty: 3,
        slot: 0,
    };
    let (_, _, body) = request_of(&market_order, &market, &orders, &ids).unwrap();
    assert_eq!(
        body.unwrap(),
        r#"{"symbol":"ACME","side":"buy","type":"market","quantity":"3"}"#
    );
    let canceled = answer(
        201,
        r#"{"order_id":43,"status":"canceled","remaining_quantity":"0"}"#,
    );
    assert_eq!(
        settle(&market_order, 3, &canceled, &mut orders, &mut ids),
        (0, true)
    );
}

#[test]
fn the_tally_times_accepted_answers_and_counts_the_rest_apart() {
    let mut t = Tally {
        measure_from: 100,
        totals: HttpCounters::default(),
        second: HttpCounters::default(),
        latency: new_histogram(),
        shed_latency: new_histogram(),
        second_latency: new_histogram(),
        send_lag: new_histogram(),
        after_send: new_histogram(),
        reject_codes: Vec::new(),
        notes: Vec::new(),
    };
    // Before the measured period: only the second's counters.
    t.answered(50, 50, 60, &answer(201, "{}"));
    assert_eq!((t.second.ok, t.totals.ok), (1, 0));
    t.answered(100, 300, 1_100, &answer(201, "{}"));
    t.answered(200, 200, 700, &answer(409, r#"{"code":"order_not_open"}"#));
    t.answered(300, 300, 400, &answer(429, "{}"));
    t.answered(400, 400, 500, &answer(500, "oops"));
    t.answered(500, 500, 600, &Err("connection lost".into()));
    assert_eq!(
        (
            t.totals.ok,
            t.totals.rejects,
            t.totals.shed,
            t.totals.errors
        ),
        (1, 1, 1, 2)
    );
    // Latency from the intended time (1,000 ns for the first, though sent 200 ns late).
    assert_eq!(t.latency.len(), 2);
    assert_eq!(t.latency.max(), 1_000);
    assert_eq!(t.send_lag.max(), 200);
    assert_eq!(t.shed_latency.len(), 1);
    assert_eq!(t.reject_codes, vec![(409, "order_not_open".to_string(), 1)]);
    assert_eq!(t.notes.len(), 2);
}

#[test]
fn the_keys_config_gives_each_connection_an_account_of_its_own() {
    let tokens: Vec<String> = (0..66).map(|i| format!("rk_{i}")).collect();
    let c = api_keys_config(&tokens);
    assert_eq!(c.matches("[[api_keys]]").count(), 66);
    assert!(c.contains("name = \"bench1\"\naccount = 101\n"));
    assert!(c.contains("name = \"bench64\"\naccount = 164\n"));
    // Past the 64 BOT accounts, the accounts are shared again.
    assert!(c.contains("name = \"bench65\"\naccount = 101\n"));
}
