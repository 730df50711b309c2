//! Pre-trade risk and the operator's controls end to end over real sockets on 127.0.0.1: a
//! price band and order limits refused with the limit and the value over FIX (OrdRejReason 3,
//! Text) and REST (422 with the code), the operator's endpoint (its tokens apart from API
//! keys'), a halt seen by FIX order entry, the REST ticker and the FIX market-data feed
//! (SecurityStatus), a kill switch that cancels one firm's orders and blocks it, and every
//! action in the journal with the operator's name.

use crate::api_common::{self, start, Api, TOKEN_A, TOKEN_B};
use fix::client::FixClient;
use server::Server;
use std::time::Duration;

const T: Duration = Duration::from_secs(10);
const OPS: &str = "op_test_token";

fn logon(s: &Server, who: &str) -> FixClient {
    let mut c = FixClient::connect(s.addr, who, "RIALTO", 1).unwrap();
    c.logon(30, true).unwrap();
    c.expect("A", T).unwrap();
    c
}

/// The next ExecutionReport on `c`.
fn report(c: &mut FixClient) -> fix::client::Msg {
    c.expect("8", T).unwrap().0
}

#[test]
fn bands_limits_halts_and_kill_switches_over_fix_rest_and_the_operators_endpoint() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = api_common::config(dir.path(), 100_000);
    // ACME: a 10% band around 10.00, at most 100 a order; CLIENT3's firm: 50.00 of notional.
    cfg.instruments[0].risk = exchange::InstrumentRisk {
        band_bps: Some(1_000),
        reference_price: Some(1_000),
        max_order_qty: Some(100),
        max_order_notional: None,
        breaker: None,
    };
    cfg.firms[2].limits.max_order_notional = Some(5_000);
    cfg.operators = vec![http_gateway::OperatorDef {
        name: "ops-alice".into(),
        sha256: http_gateway::keys::sha256(OPS),
    }];
    let kept = cfg.clone();
    let s = start(cfg);
    let api = Api::of(&s);
    let order = |side: &str, px: &str, qty: &str| {
        format!(r#"{{"symbol":"ACME","side":"{side}","price":"{px}","quantity":"{qty}"}}"#)
    };

    // REST: the band and the quantity limit, each with its code and numbers.
    let (st, v, _) = api.call(
        "POST",
        "/api/v1/orders",
        Some(TOKEN_A),
        None,
        &order("buy", "11.01", "1"),
    );
    assert_eq!((st, v["code"].as_str()), (422, Some("price_band")), "{v}");
    assert_eq!(
        v["message"],
        "price 11.01 outside the price band 9.00 to 11.00"
    );
    let (st, v, _) = api.call(
        "POST",
        "/api/v1/orders",
        Some(TOKEN_A),
        None,
        &order("buy", "10.00", "101"),
    );
    assert_eq!(
        (st, v["code"].as_str()),
        (422, Some("order_quantity_limit")),
        "{v}"
    );
    assert_eq!(v["message"], "order quantity 101 over the limit 100");

    // FIX: CLIENT3's firm notional limit, then the band.
    let mut c3 = logon(&s, "CLIENT3");
    crate::common::new_order(&mut c3, "n1", "ACME", "1", "10.00", "6");
    let r = report(&mut c3);
    assert_eq!((r.get(39), r.get(103)), (Some("8"), Some("3")), "{r:?}");
    assert_eq!(r.get(58), Some("order notional 60.00 over the limit 50.00"));
    crate::common::new_order(&mut c3, "n2", "ACME", "1", "8.99", "1");
    let r = report(&mut c3);
    assert_eq!(
        r.get(58),
        Some("price 8.99 outside the price band 9.00 to 11.00")
    );

    // The operator's endpoint: no token, an API key's token, then the operator's.
    let (st, v, _) = api.call("GET", "/admin/v1/state", None, None, "");
    assert_eq!((st, v["code"].as_str()), (401, Some("unauthenticated")));
    let (st, _, _) = api.call("GET", "/admin/v1/state", Some(TOKEN_A), None, "");
    assert_eq!(st, 401, "an API key is not an operator");
    let (st, v, _) = api.call("GET", "/admin/v1/state", Some(OPS), None, "");
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["instruments"][0]["band"], serde_json::json!(["9", "11"]));
    assert_eq!(v["instruments"][0]["status"], "open");
    let (st, v, _) = api.call(
        "POST",
        "/admin/v1/instruments/ACME/status",
        Some(OPS),
        None,
        r#"{"status":"paused"}"#,
    );
    assert_eq!(
        (st, v["code"].as_str()),
        (400, Some("invalid_status")),
        "{v}"
    );

    // A halt: FIX and REST orders refused, the ticker and the feed say so.
    let mut md = FixClient::connect(
        s.market_data_addr().expect("market data"),
        "CLIENT4",
        "RIALTO",
        1,
    )
    .unwrap();
    md.logon(30, true).unwrap();
    md.expect("A", T).unwrap();
    md.send("e", &[(324, "st1"), (55, "ACME"), (263, "1")])
        .unwrap();
    let (m, _) = md.expect("f", T).unwrap();
    assert_eq!(m.get(326), Some("17"));
    let (st, v, _) = api.call(
        "POST",
        "/admin/v1/instruments/ACME/status",
        Some(OPS),
        None,
        r#"{"status":"halted"}"#,
    );
    assert_eq!(st, 200, "{v}");
    assert_eq!(
        (v["operator"].as_str(), v["action"].as_str()),
        (Some("ops-alice"), Some("status"))
    );
    assert_eq!(v["instrument"]["status"], "halted");
    let (m, _) = md.expect("f", T).unwrap();
    assert_eq!((m.get(324), m.get(326)), (Some("st1"), Some("2")), "{m:?}");
    crate::common::new_order(&mut c3, "n3", "ACME", "1", "10.00", "1");
    assert_eq!(report(&mut c3).get(58), Some("instrument halted"));
    let (st, v, _) = api.call(
        "POST",
        "/api/v1/orders",
        Some(TOKEN_A),
        None,
        &order("buy", "10.00", "1"),
    );
    assert_eq!(
        (st, v["code"].as_str()),
        (422, Some("instrument_not_open")),
        "{v}"
    );
    let deadline = std::time::Instant::now() + T;
    loop {
        let (_, t, _) = api.call("GET", "/api/v1/ticker/ACME", None, None, "");
        if t["status"] == "halted" {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the ticker never said halted: {t}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (st, _, _) = api.call(
        "POST",
        "/admin/v1/instruments/ACME/status",
        Some(OPS),
        None,
        r#"{"status":"open"}"#,
    );
    assert_eq!(st, 200);
    assert_eq!(md.expect("f", T).unwrap().0.get(326), Some("17"));

    // The kill switch of bob's firm (CLIENT2): its resting order canceled, its new ones
    // refused, alice's untouched; then unblocked.
    let (st, bob, _) = api.call(
        "POST",
        "/api/v1/orders",
        Some(TOKEN_B),
        None,
        &order("sell", "10.50", "5"),
    );
    assert_eq!(st, 201, "{bob}");
    let (st, alice, _) = api.call(
        "POST",
        "/api/v1/orders",
        Some(TOKEN_A),
        None,
        &order("buy", "9.50", "5"),
    );
    assert_eq!(st, 201, "{alice}");
    let (st, v, _) = api.call(
        "POST",
        "/admin/v1/kill",
        Some(OPS),
        None,
        r#"{"firm":"NOPE"}"#,
    );
    assert_eq!((st, v["code"].as_str()), (404, Some("unknown_firm")));
    let (st, v, _) = api.call(
        "POST",
        "/admin/v1/kill",
        Some(OPS),
        None,
        r#"{"firm":"CLIENT2"}"#,
    );
    assert_eq!(st, 200, "{v}");
    assert_eq!(v["canceling"], 1);
    let path = |o: &serde_json::Value| format!("/api/v1/orders/{}", o["order_id"]);
    let (_, b, _) = api.call("GET", &path(&bob), Some(TOKEN_B), None, "");
    assert_eq!(b["status"], "canceled", "{b}");
    let (_, a, _) = api.call("GET", &path(&alice), Some(TOKEN_A), None, "");
    assert_eq!(a["status"], "new", "{a}");
    let (st, v, _) = api.call(
        "POST",
        "/api/v1/orders",
        Some(TOKEN_B),
        None,
        &order("sell", "10.50", "5"),
    );
    assert_eq!((st, v["code"].as_str()), (422, Some("blocked")), "{v}");
    assert_eq!(v["message"], "firm blocked by the exchange operator");
    let (_, st8, _) = api.call("GET", "/admin/v1/state", Some(OPS), None, "");
    assert_eq!(
        st8["blocked"],
        serde_json::json!([{"firm": "CLIENT2", "account": null}])
    );
    let (st, _, _) = api.call(
        "POST",
        "/admin/v1/unblock",
        Some(OPS),
        None,
        r#"{"firm":"CLIENT2"}"#,
    );
    assert_eq!(st, 200);
    let (st, _, _) = api.call(
        "POST",
        "/api/v1/orders",
        Some(TOKEN_B),
        None,
        &order("sell", "10.50", "5"),
    );
    assert_eq!(st, 201);

    // Every action is journaled with the operator's name, and a restart replays them.
    s.shutdown().unwrap();
    let mut dump = Vec::new();
    server::tools::dump(&kept.data_dir, kept.clone(), 1, &mut dump).unwrap();
    let dump = String::from_utf8(dump).unwrap();
    for want in [
        r#"operator: "ops-alice", action: SetStatus { symbol: 0, status: Halted }"#,
        r#"operator: "ops-alice", action: Kill { firm: 1, account: None }"#,
        r#"operator: "ops-alice", action: Unblock { firm: 1, account: None }"#,
    ] {
        assert!(dump.contains(want), "{want} not in the dump");
    }
    let s = start(kept);
    let api = Api::of(&s);
    let (_, v, _) = api.call("GET", "/admin/v1/state", Some(OPS), None, "");
    assert_eq!(v["instruments"][0]["status"], "open");
    assert_eq!(v["blocked"], serde_json::json!([]));
    s.shutdown().unwrap();
}

/// A firm flooding orders over FIX: its kill switch takes effect at one point of the sequence
/// (every order after it refused, none before), its orders are all canceled, another firm
/// trades on, and a replay of the journal gives the same state.
#[test]
fn a_kill_switch_pulled_during_a_flood_stops_that_firm_at_once_and_no_one_else() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = api_common::config(dir.path(), 100_000);
    cfg.operators = vec![http_gateway::OperatorDef {
        name: "ops".into(),
        sha256: http_gateway::keys::sha256(OPS),
    }];
    // The flooder is refused by the kill switch only, never by its throttle or its share.
    cfg.firm_capacity_percent = 100;
    for session in cfg
        .sessions
        .iter_mut()
        .filter(|x| x.sender_comp_id == "CLIENT3")
    {
        session.throttle = server::config::Throttle {
            orders_per_sec: 1_000_000,
            cancels_per_sec: 1_000_000,
            messages_per_sec: 2_000_000,
            logout_messages_per_sec: 4_000_000,
        };
    }
    let kept = cfg.clone();
    let s = start(cfg);
    let api = Api::of(&s);
    let addr = s.addr;
    let flooder = std::thread::spawn(move || {
        let mut c = FixClient::connect(addr, "CLIENT3", "RIALTO", 1).unwrap();
        c.logon(30, true).unwrap();
        c.expect("A", T).unwrap();
        // Resting sells, at most 20 unanswered, until 200 in a row are refused; then the
        // kill switch's cancels of every order it accepted.
        let (mut sent, mut answered, mut accepted, mut cancels) = (0u32, 0u32, 0u32, 0u32);
        let (mut refused_in_a_row, mut answers) = (0u32, Vec::new());
        loop {
            if refused_in_a_row < 200 && sent - answered < 20 {
                for _ in 0..20 {
                    sent += 1;
                    let px = format!("{}.00", 20 + sent % 50);
                    crate::common::new_order(&mut c, &format!("f{sent}"), "ACME", "2", &px, "1");
                }
            }
            let m = c.recv(T).unwrap().expect("an answer in time");
            if m.msg_type() != "8" {
                continue;
            }
            match m.get(150) {
                Some("0") => {
                    (answered, accepted, refused_in_a_row) = (answered + 1, accepted + 1, 0);
                    answers.push(false);
                }
                Some("8") => {
                    assert_eq!(m.get(58), Some("firm blocked by the exchange operator"));
                    (answered, refused_in_a_row) = (answered + 1, refused_in_a_row + 1);
                    answers.push(true);
                }
                Some("4") => {
                    assert_eq!(m.get(58), Some(types::CancelReason::Operator.text()));
                    cancels += 1;
                }
                other => panic!("ExecType {other:?}: {m:?}"),
            }
            if refused_in_a_row >= 200 && answered == sent && cancels == accepted {
                return (answers, accepted);
            }
        }
    });
    std::thread::sleep(Duration::from_millis(300));
    let (st, v, _) = api.call(
        "POST",
        "/admin/v1/kill",
        Some(OPS),
        None,
        r#"{"firm":"CLIENT3"}"#,
    );
    assert_eq!(st, 200, "{v}");
    // Another firm trades while the flooder is stopped.
    let (st, v, _) = api.call(
        "POST",
        "/api/v1/orders",
        Some(TOKEN_A),
        None,
        r#"{"symbol":"ACME","side":"buy","price":"1.00","quantity":"1"}"#,
    );
    assert_eq!((st, v["status"].as_str()), (201, Some("new")), "{v}");
    let (answers, accepted) = flooder.join().unwrap();
    let first_refused = answers.iter().position(|r| *r).expect("a refusal");
    assert!(first_refused > 0, "the flood was accepted before the kill");
    assert!(
        answers[first_refused..].iter().all(|r| *r),
        "an order accepted after the kill switch's first refusal"
    );
    assert_eq!(
        accepted as usize, first_refused,
        "each accepted order canceled by the switch"
    );
    s.shutdown().unwrap();
    let v = server::tools::verify(&kept.data_dir, kept.clone()).unwrap();
    assert!(
        v.hashes_agree(),
        "a replay of the journal gives the same state"
    );
    let s = start(kept);
    let api = Api::of(&s);
    let (_, state, _) = api.call("GET", "/admin/v1/state", Some(OPS), None, "");
    assert_eq!(
        state["blocked"],
        serde_json::json!([{"firm": "CLIENT3", "account": null}])
    );
    s.shutdown().unwrap();
}
