use super::*;
use crate::config::KeyDef;
use exchange::{Config, NoOutputs};
use serde_json::Value;
use types::{Instrument, OrdType, Side, Symbol, TimeInForce};

/// Two keys (firms 0 and 1, accounts 1 and 2) after one FIX originator (0).
fn edge() -> (ApiEdge, Exchange) {
    let inst = |s: &str| Instrument {
        symbol: Symbol::new(s).unwrap(),
        tick: 1,
        lot: 1,
    };
    let x = Exchange::new(Arc::new(Config::new(
        vec![inst("ACME"), inst("BOLT")],
        vec![vec![1], vec![2]],
        1 << 12,
    )));
    let key = |name: &str, account, firm| KeyDef {
        name: name.into(),
        sha256: [0; 32],
        account,
        firm,
        requests_per_sec: 100,
    };
    let def = |s: &str| InstrumentDef {
        symbol: Symbol::new(s).unwrap(),
        tick: 1,
        lot: 1,
        price_decimals: 2,
    };
    let cfg = ApiConfig {
        keys: vec![key("a", 1, 0), key("b", 2, 1)],
        instruments: vec![def("ACME"), def("BOLT")],
        originator_base: 1,
        idempotency_max: 3,
        idempotency_ttl_ns: 1_000,
        operators: Vec::new(),
        firms: Vec::new(),
    };
    let mut e = ApiEdge::new(Arc::new(cfg));
    e.answers_on = true;
    e.events_on = true;
    (e, x)
}

struct T {
    e: ApiEdge,
    x: Exchange,
    seq: u64,
}

impl T {
    fn new() -> T {
        let (e, x) = edge();
        T { e, x, seq: 0 }
    }

    /// Applies `op` for `key` (with Idempotency-Key `idem`, fingerprint `fp`); its answer.
    fn call(&mut self, key: u16, idem: Option<(&str, u64)>, op: ApiOp) -> (u16, Value) {
        self.seq += 1;
        let req = 1000 + self.seq;
        let input = ApiInput {
            req,
            key,
            idem: idem.map(|(k, fingerprint)| Idem {
                key: k.into(),
                fingerprint,
            }),
            op,
        };
        self.e
            .on_api(self.seq, self.seq * 10, &input, &mut self.x, &mut NoOutputs);
        let (r, a) = self.e.out.answers.pop().expect("an answer");
        assert_eq!(r, req);
        (a.status, serde_json::from_slice(&a.body).unwrap())
    }

    fn raw(&mut self, key: u16, idem: (&str, u64), op: ApiOp) -> Answer {
        self.seq += 1;
        let input = ApiInput {
            req: self.seq,
            key,
            idem: Some(Idem {
                key: idem.0.into(),
                fingerprint: idem.1,
            }),
            op,
        };
        self.e
            .on_api(self.seq, self.seq * 10, &input, &mut self.x, &mut NoOutputs);
        self.e.out.answers.pop().expect("an answer").1
    }
}

fn limit(cl: &str, side: Side, price: i64, qty: u64) -> ApiOp {
    ApiOp::New(NewOrder {
        cl_ord_id: if cl.is_empty() {
            ClOrdId::EMPTY
        } else {
            ClOrdId::new(cl).unwrap()
        },
        symbol: 0,
        side,
        ord_type: OrdType::Limit,
        tif: TimeInForce::Gtc,
        price,
        qty,
        account: None,
        post_only: false,
        ..Default::default()
    })
}

#[test]
fn a_new_order_answers_its_state_and_immediate_fills() {
    let mut t = T::new();
    let (s, v) = t.call(0, None, limit("s1", Side::Sell, 1025, 10));
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["status"], "new");
    assert_eq!(v["price"], "10.25");
    assert_eq!(v["client_order_id"], "s1");
    // Key b buys 4 of it: a taker fill in its answer; key a gets a maker fill event.
    t.e.out.events.clear();
    let (s, v) = t.call(1, None, limit("", Side::Buy, 1030, 4));
    assert_eq!(s, 201, "{v}");
    assert_eq!(v["status"], "filled");
    assert_eq!(v["client_order_id"], Value::Null);
    assert_eq!(v["fills"][0]["price"], "10.25");
    assert_eq!(v["fills"][0]["liquidity"], "taker");
    assert_eq!(v["average_price"], "10.25");
    let maker: Vec<Value> =
        t.e.out
            .events
            .iter()
            .filter(|(k, _)| *k == 0)
            .map(|(_, b)| serde_json::from_slice(b).unwrap())
            .collect();
    assert_eq!(maker.len(), 1, "{maker:?}");
    assert_eq!(maker[0]["event"], "fill");
    assert_eq!(maker[0]["order"]["fills"][0]["liquidity"], "maker");
    assert_eq!(maker[0]["order"]["remaining_quantity"], "6");
}

#[test]
fn another_keys_order_is_answered_as_an_unknown_one() {
    let mut t = T::new();
    let (_, v) = t.call(0, None, limit("s1", Side::Sell, 1025, 10));
    let id = v["order_id"].as_u64().unwrap();
    let unknown = id + 1000;
    for op in [
        |r| ApiOp::Get(r),
        |r| ApiOp::Cancel(r),
        |r| ApiOp::Replace {
            order: r,
            price: Some(1000),
            qty: None,
            cl_ord_id: None,
            stop_price: None,
        },
    ] {
        let theirs = t.call(1, None, op(OrderRef::Id(id)));
        let none = t.call(1, None, op(OrderRef::Id(unknown)));
        assert_eq!(theirs.0, 404);
        assert_eq!(theirs.1["code"], none.1["code"]);
        assert_eq!(
            theirs.1["message"]
                .as_str()
                .unwrap()
                .replace(&id.to_string(), "N"),
            none.1["message"]
                .as_str()
                .unwrap()
                .replace(&unknown.to_string(), "N")
        );
    }
    let by_client = t.call(
        1,
        None,
        ApiOp::Get(OrderRef::Client(ClOrdId::new("s1").unwrap())),
    );
    assert_eq!(by_client.0, 404);
    // The owner still has it, untouched.
    let (s, v) = t.call(0, None, ApiOp::Get(OrderRef::Id(id)));
    assert_eq!((s, v["status"].as_str()), (200, Some("new")));
}

#[test]
fn cancel_replace_and_list_keep_the_keys_client_order_id() {
    let mut t = T::new();
    let (_, v) = t.call(0, None, limit("mine", Side::Buy, 1000, 10));
    let id = v["order_id"].as_u64().unwrap();
    let (s, v) = t.call(
        0,
        None,
        ApiOp::Replace {
            order: OrderRef::Client(ClOrdId::new("mine").unwrap()),
            price: Some(990),
            qty: Some(12),
            cl_ord_id: None,
            stop_price: None,
        },
    );
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        (v["price"].as_str(), v["quantity"].as_str()),
        (Some("9.9"), Some("12"))
    );
    assert_eq!(v["client_order_id"], "mine");
    let (s, v) = t.call(0, None, ApiOp::ListOpen { symbol: None });
    assert_eq!(s, 200);
    assert_eq!(v["orders"].as_array().unwrap().len(), 1);
    let (s, v) = t.call(0, None, ApiOp::Cancel(OrderRef::Id(id)));
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        (v["status"].as_str(), v["client_order_id"].as_str()),
        (Some("canceled"), Some("mine"))
    );
    let (s, v) = t.call(0, None, ApiOp::Cancel(OrderRef::Id(id)));
    assert_eq!((s, v["code"].as_str()), (409, Some("order_not_open")));
    let (_, v) = t.call(0, None, ApiOp::ListOpen { symbol: None });
    assert!(v["orders"].as_array().unwrap().is_empty());
}

#[test]
fn refusals_carry_the_exchanges_code_and_words() {
    let mut t = T::new();
    t.call(0, None, limit("a1", Side::Sell, 1000, 5));
    let (s, v) = t.call(0, None, limit("a1", Side::Sell, 1001, 5));
    assert_eq!(
        (s, v["code"].as_str()),
        (409, Some("duplicate_client_order_id"))
    );
    let mut post = limit("p1", Side::Buy, 1000, 5);
    if let ApiOp::New(o) = &mut post {
        o.post_only = true;
    }
    let (s, v) = t.call(1, None, post);
    assert_eq!(
        (s, v["code"].as_str()),
        (422, Some("post_only_would_cross")),
        "{v}"
    );
}

#[test]
fn a_retry_gets_the_first_answer_and_changes_nothing() {
    let mut t = T::new();
    let first = t.raw(0, ("k1", 7), limit("", Side::Buy, 1000, 5));
    let again = t.raw(0, ("k1", 7), limit("", Side::Buy, 1000, 5));
    assert_eq!(first, again);
    let (_, v) = t.call(0, None, ApiOp::ListOpen { symbol: None });
    assert_eq!(v["orders"].as_array().unwrap().len(), 1);
    // The same key with another request: refused.
    let other = t.raw(0, ("k1", 8), limit("", Side::Buy, 1001, 5));
    assert_eq!(other.status, 422);
    // Keys are per API key: b may use k1.
    let b = t.raw(1, ("k1", 9), limit("", Side::Sell, 1100, 5));
    assert_eq!(b.status, 201);
}

#[test]
fn kept_answers_are_bounded_in_count_and_time() {
    let mut t = T::new();
    for i in 0..5 {
        t.raw(0, (&format!("k{i}"), 1), ApiOp::ListOpen { symbol: None });
        t.raw(
            0,
            (&format!("c{i}"), 1),
            ApiOp::CancelAll {
                symbol: None,
                side: None,
            },
        );
    }
    let store = &t.e.stores[0];
    assert!(store.order.len() <= 3, "{}", store.order.len());
    assert_eq!(store.order.len(), store.kept.len());
    // Past the time, a key is free again.
    t.seq += 1000;
    let a = t.raw(
        0,
        ("c4", 2),
        ApiOp::CancelAll {
            symbol: None,
            side: None,
        },
    );
    assert_eq!(a.status, 200);
}

#[test]
fn cancel_all_touches_only_the_keys_own_orders() {
    let mut t = T::new();
    t.call(0, None, limit("", Side::Buy, 900, 1));
    t.call(0, None, limit("", Side::Buy, 901, 1));
    t.call(1, None, limit("", Side::Buy, 902, 1));
    let (s, v) = t.call(
        0,
        None,
        ApiOp::CancelAll {
            symbol: None,
            side: None,
        },
    );
    assert_eq!((s, v["canceled"].as_u64()), (200, Some(2)));
    let (_, v) = t.call(1, None, ApiOp::ListOpen { symbol: None });
    assert_eq!(v["orders"].as_array().unwrap().len(), 1);
}

#[test]
fn the_store_survives_a_snapshot() {
    let mut t = T::new();
    let first = t.raw(0, ("k1", 7), limit("", Side::Buy, 1000, 5));
    let mut snap = Vec::new();
    t.e.snapshot(&mut snap);
    snap.extend_from_slice(b"rest");
    let (mut e2, _) = edge();
    let rest = e2.restore(&snap).unwrap();
    assert_eq!(rest, b"rest");
    assert_eq!(e2.stores, t.e.stores);
    e2.answers_on = true;
    t.e = e2;
    let again = t.raw(0, ("k1", 7), limit("", Side::Buy, 1000, 5));
    assert_eq!(first, again);
    assert!(ApiEdge::new(t.e.cfg.clone())
        .restore(&snap[..snap.len() - 9])
        .is_err());
}

/// `op` (a new order) with a stop price, display quantity and expire time.
fn with(op: ApiOp, stop_price: i64, display_qty: u64, expire_ns: u64) -> ApiOp {
    let ApiOp::New(mut o) = op else {
        panic!("a new order");
    };
    o.stop_price = stop_price;
    o.display_qty = display_qty;
    o.expire_ns = expire_ns;
    if expire_ns != 0 {
        o.tif = TimeInForce::Gtd;
    }
    ApiOp::New(o)
}

/// Key `key`'s order events so far (taken), as JSON.
fn events_of(t: &mut T, key: u16) -> Vec<Value> {
    let all = std::mem::take(&mut t.e.out.events);
    all.iter()
        .filter(|(k, _)| *k == key)
        .map(|(_, b)| serde_json::from_slice(b).unwrap())
        .collect()
}

#[test]
fn a_stop_limit_order_shows_its_stop_price_until_and_when_it_triggers() {
    let mut t = T::new();
    let (s, v) = t.call(0, None, with(limit("st", Side::Buy, 1015, 5), 1010, 0, 0));
    assert_eq!(s, 201, "{v}");
    assert_eq!(
        (v["type"].as_str(), v["price"].as_str()),
        (Some("stop_limit"), Some("10.15"))
    );
    assert_eq!(
        (v["stop_price"].as_str(), v["triggered"].as_bool()),
        (Some("10.1"), Some(false))
    );
    assert!(v.get("display_quantity").is_none() && v.get("expire_time").is_none());
    let id = v["order_id"].as_u64().unwrap();
    let (s, got) = t.call(0, None, ApiOp::Get(OrderRef::Id(id)));
    assert_eq!(s, 200);
    assert_eq!(
        (got["type"].as_str(), got["stop_price"].as_str()),
        (Some("stop_limit"), Some("10.1"))
    );

    // The stop price cannot change; the same one goes with a new quantity.
    let replace = |stop_price, qty| ApiOp::Replace {
        order: OrderRef::Id(id),
        price: None,
        qty: Some(qty),
        cl_ord_id: None,
        stop_price,
    };
    let (s, v) = t.call(0, None, replace(Some(1020), 6));
    assert_eq!(
        (s, v["code"].as_str(), v["message"].as_str()),
        (
            422,
            Some("stop_price_not_replaceable"),
            Some(format!("stop_price cannot be changed: order {id}'s is 10.1").as_str())
        )
    );
    let (s, v) = t.call(0, None, replace(Some(1010), 6));
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        (v["quantity"].as_str(), v["stop_price"].as_str()),
        (Some("6"), Some("10.1"))
    );

    // A trade at 10.10 triggers it: a `triggered` event, then it buys what is left at 10.10.
    t.call(1, None, limit("", Side::Sell, 1010, 3));
    t.e.out.events.clear();
    let (s, v) = t.call(0, None, limit("", Side::Buy, 1010, 1));
    assert_eq!((s, v["status"].as_str()), (201, Some("filled")), "{v}");
    let events = events_of(&mut t, 0);
    let mine: Vec<&Value> = events
        .iter()
        .filter(|e| e["order"]["order_id"] == id)
        .collect();
    assert_eq!(mine[0]["event"], "triggered", "{events:?}");
    assert_eq!(mine[0]["order"]["triggered"], true);
    assert_eq!(mine[0]["order"]["type"], "stop_limit");
    assert_eq!(mine[1]["event"], "fill");
    assert_eq!(mine[1]["order"]["fills"][0]["price"], "10.1");
    assert_eq!(mine[1]["order"]["fills"][0]["quantity"], "2");
    assert_eq!(mine[1]["order"]["remaining_quantity"], "4");
    // A query shows it triggered; its stop price still cannot change.
    let (_, v) = t.call(0, None, ApiOp::Get(OrderRef::Id(id)));
    assert_eq!(
        (
            v["type"].as_str(),
            v["stop_price"].as_str(),
            v["triggered"].as_bool()
        ),
        (Some("stop_limit"), Some("10.1"), Some(true)),
        "{v}"
    );
    let (s, v) = t.call(0, None, replace(Some(1010), 7));
    assert_eq!((s, v["triggered"].as_bool()), (200, Some(true)), "{v}");
    let (s, _) = t.call(0, None, replace(Some(1000), 8));
    assert_eq!(s, 422);
}

#[test]
fn stop_market_iceberg_and_gtd_orders_show_their_fields() {
    let mut t = T::new();
    let mut stop = with(limit("sm", Side::Sell, 0, 4), 900, 0, 0);
    if let ApiOp::New(o) = &mut stop {
        o.ord_type = OrdType::Market;
    }
    let (s, v) = t.call(0, None, stop);
    assert_eq!(s, 201, "{v}");
    assert_eq!(
        (
            v["type"].as_str(),
            v["price"].clone(),
            v["stop_price"].as_str()
        ),
        (Some("stop"), Value::Null, Some("9"))
    );

    let (s, v) = t.call(1, None, with(limit("ice", Side::Sell, 1100, 10), 0, 2, 0));
    assert_eq!(s, 201, "{v}");
    assert_eq!(
        (v["display_quantity"].as_str(), v["type"].as_str()),
        (Some("2"), Some("limit"))
    );
    assert!(v.get("stop_price").is_none() && v.get("triggered").is_none());
    let ice = v["order_id"].as_u64().unwrap();
    let (_, v) = t.call(1, None, ApiOp::Get(OrderRef::Id(ice)));
    assert_eq!(v["display_quantity"], "2");

    // 1,795,918,961.5 s: 2026-11-29T02:22:41.5Z.
    let at = 1_795_918_961_500_000_000;
    let (s, v) = t.call(0, None, with(limit("gtd", Side::Buy, 900, 1), 0, 0, at));
    assert_eq!(s, 201, "{v}");
    assert_eq!(
        (v["time_in_force"].as_str(), v["expire_time"].as_str()),
        (Some("gtd"), Some("2026-11-29T02:22:41.5Z"))
    );
    let (_, v) = t.call(0, None, ApiOp::ListOpen { symbol: None });
    let listed = &v["orders"].as_array().unwrap();
    assert!(
        listed
            .iter()
            .any(|o| o["expire_time"] == "2026-11-29T02:22:41.5Z"),
        "{v}"
    );

    // Refusals name the field: an expire time already past (the records' clock), a peak
    // on an IOC order, a stop price off the tick.
    let (s, v) = t.call(0, None, with(limit("", Side::Buy, 900, 1), 0, 0, 1));
    assert_eq!((s, v["code"].as_str()), (422, Some("expire_time_passed")));
    let mut ioc = with(limit("", Side::Buy, 900, 4), 0, 2, 0);
    if let ApiOp::New(o) = &mut ioc {
        o.tif = TimeInForce::Ioc;
    }
    let (s, v) = t.call(0, None, ioc);
    assert_eq!(
        (s, v["code"].as_str()),
        (400, Some("invalid_display_quantity"))
    );
    assert!(v["message"].as_str().unwrap().contains("display quantity"));
    let (s, v) = t.call(0, None, with(limit("", Side::Buy, 900, 1), -5, 0, 0));
    assert_eq!((s, v["code"].as_str()), (400, Some("invalid_stop_price")));
    assert!(v["message"].as_str().unwrap().contains("stop price"));
}
