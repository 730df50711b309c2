//! The history routes over real sockets: trades, a key's fills and closed orders served from the
//! trade store (SQLite here; `http_model.rs` checks them against the reference model), the
//! store's lag in each answer, precise 4xx errors for every bad parameter, and 404 `store_off`
//! on a server without a store.

use crate::api_common;

use api_common::{start, Api, TOKEN_A, TOKEN_B};
use std::time::{Duration, Instant};

/// `GET path` until the store holds every journaled record (`store.behind_records` 0). Until
/// the follower has made the store's schema, a read is 503 `store_unavailable`.
fn caught_up(api: &Api, path: &str, token: Option<&str>) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (st, v, _) = api.call("GET", path, token, None, "");
        if st == 503 && v["code"] == "store_unavailable" && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        assert_eq!(st, 200, "{path}: {v}");
        if v["store"]["behind_records"] == 0 {
            assert_eq!(v["store"]["position"], v["store"]["journal"], "{v}");
            return v;
        }
        assert!(Instant::now() < deadline, "the store stays behind: {v}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn trades_fills_and_closed_orders_come_from_the_store_paged() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(api_common::config(dir.path(), 100_000));
    let api = Api::of(&s);
    let t0 = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    // Alice rests 3 sells; bob lifts them in one IOC buy of 5 (3 trades, 2 left canceled).
    for (i, p) in ["10.25", "10.26", "10.27"].iter().enumerate() {
        let body = format!(
            r#"{{"symbol":"ACME","side":"sell","price":"{p}","quantity":"1","client_order_id":"s{i}"}}"#
        );
        let (st, v, _) = api.call("POST", "/api/v1/orders", Some(TOKEN_A), None, &body);
        assert_eq!(st, 201, "{v}");
    }
    let buy = r#"{"symbol":"ACME","side":"buy","price":"10.30","quantity":"5","time_in_force":"ioc","client_order_id":"b1"}"#;
    let (st, v, _) = api.call("POST", "/api/v1/orders", Some(TOKEN_B), None, buy);
    assert_eq!(st, 201, "{v}");
    let bob_order = v["order_id"].as_u64().unwrap();

    // Public trades, two pages of 2: ids in order, prices and the aggressor.
    let p1 = caught_up(&api, "/api/v1/trades/ACME?limit=2", None);
    let trades = p1["trades"].as_array().unwrap();
    assert_eq!(trades.len(), 2, "{p1}");
    assert_eq!(trades[0]["price"], "10.25");
    assert_eq!(trades[0]["quantity"], "1");
    assert_eq!(trades[0]["aggressor_side"], "buy");
    assert!(trades[0]["time_ns"].as_u64().unwrap() >= t0);
    let next = p1["next_since"].as_u64().expect("a second page");
    assert_eq!(next, trades[1]["trade_id"].as_u64().unwrap());
    let (st, p2, _) = api.call(
        "GET",
        &format!("/api/v1/trades/ACME?limit=2&since={next}"),
        None,
        None,
        "",
    );
    assert_eq!(st, 200, "{p2}");
    assert_eq!(p2["trades"].as_array().unwrap().len(), 1, "{p2}");
    assert_eq!(p2["trades"][0]["price"], "10.27");
    assert!(p2["next_since"].is_null(), "{p2}");
    // Newest first (a chart's latest trades), paged down by `since`.
    let d1 = caught_up(&api, "/api/v1/trades/ACME?order=desc&limit=2", None);
    let prices: Vec<_> = d1["trades"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["price"].clone())
        .collect();
    assert_eq!(prices, ["10.27", "10.26"], "{d1}");
    let below = d1["next_since"].as_u64().expect("an older page");
    let (st, d2, _) = api.call(
        "GET",
        &format!("/api/v1/trades/ACME?order=desc&limit=2&since={below}"),
        None,
        None,
        "",
    );
    assert_eq!(st, 200, "{d2}");
    assert_eq!(d2["trades"].as_array().unwrap().len(), 1, "{d2}");
    assert_eq!(d2["trades"][0]["price"], "10.25");
    assert!(d2["next_since"].is_null(), "{d2}");
    let (st, bad, _) = api.call("GET", "/api/v1/trades/ACME?order=up", None, None, "");
    assert_eq!(
        (st, bad["code"].as_str()),
        (400, Some("invalid_order")),
        "{bad}"
    );
    let (_, other, _) = api.call("GET", "/api/v1/trades/BOLT", None, None, "");
    assert_eq!(other["trades"].as_array().unwrap().len(), 0, "{other}");

    // Bob's fills: three, with his order and trade ids; alice's are her side of them.
    let f = caught_up(&api, "/api/v1/fills", Some(TOKEN_B));
    let fills = f["fills"].as_array().unwrap();
    assert_eq!(fills.len(), 3, "{f}");
    assert!(fills.iter().all(|x| x["order_id"] == bob_order
        && x["liquidity"] == "taker"
        && x["client_order_id"] == "b1"
        && x["side"] == "buy"));
    assert_eq!(fills[2]["filled_quantity"], "3");
    let trade_ids: Vec<_> = fills.iter().map(|x| x["trade_id"].clone()).collect();
    let (_, fa, _) = api.call("GET", "/api/v1/fills?symbol=ACME", Some(TOKEN_A), None, "");
    let alice: Vec<_> = fa["fills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            assert_eq!(x["liquidity"], "maker", "{x}");
            x["trade_id"].clone()
        })
        .collect();
    assert_eq!(alice, trade_ids);
    let since = fills[0]["fill_id"].as_str().unwrap();
    let (_, rest, _) = api.call(
        "GET",
        &format!("/api/v1/fills?since={since}&limit=1"),
        Some(TOKEN_B),
        None,
        "",
    );
    assert_eq!(rest["fills"][0]["fill_id"], fills[1]["fill_id"], "{rest}");
    assert_eq!(rest["next_since"], fills[1]["fill_id"], "{rest}");

    // Closed orders: bob's IOC (filled 3 of 5, the rest canceled), alice's three sells.
    let c = caught_up(&api, "/api/v1/orders?status=closed", Some(TOKEN_B));
    let orders = c["orders"].as_array().unwrap();
    assert_eq!(orders.len(), 1, "{c}");
    assert_eq!(orders[0]["order_id"], bob_order);
    assert_eq!(orders[0]["status"], "canceled");
    assert_eq!(orders[0]["filled_quantity"], "3");
    assert_eq!(orders[0]["average_price"], "10.26");
    assert_eq!(
        orders[0]["cancel_reason"],
        "immediate or cancel: remainder canceled"
    );
    let (_, ca, _) = api.call(
        "GET",
        "/api/v1/orders?status=closed&symbol=ACME&limit=2",
        Some(TOKEN_A),
        None,
        "",
    );
    assert_eq!(ca["orders"].as_array().unwrap().len(), 2, "{ca}");
    assert!(ca["orders"][0]["status"] == "filled" && ca["orders"][0]["cancel_reason"].is_null());
    // A time range: everything was created after t0 and before now + 1 h.
    let in_range = format!("/api/v1/orders?status=closed&start={t0}&end=2100-01-01T00:00:00Z");
    let (_, r, _) = api.call("GET", &in_range, Some(TOKEN_A), None, "");
    assert_eq!(r["orders"].as_array().unwrap().len(), 3, "{r}");
    let (_, r, _) = api.call(
        "GET",
        "/api/v1/orders?status=closed&end=2001-01-01T00:00:00%2B01:00",
        Some(TOKEN_A),
        None,
        "",
    );
    assert_eq!(r["orders"].as_array().unwrap().len(), 0, "{r}");
    // Open orders still come from the exchange.
    let (st, open, _) = api.call("GET", "/api/v1/orders?status=open", Some(TOKEN_A), None, "");
    assert_eq!((st, open["orders"].as_array().unwrap().len()), (200, 0));

    // Every bad parameter is a 400 with its code; no key is a 401; no symbol a 404.
    for (path, token, status, code) in [
        ("/api/v1/trades/ACME?limit=0", None, 400, "invalid_limit"),
        ("/api/v1/trades/ACME?limit=1001", None, 400, "invalid_limit"),
        ("/api/v1/trades/ACME?limit=x", None, 400, "invalid_limit"),
        ("/api/v1/trades/ACME?since=-1", None, 400, "invalid_since"),
        (
            "/api/v1/trades/ACME?offset=5",
            None,
            400,
            "unknown_parameter",
        ),
        ("/api/v1/trades/NOPE", None, 404, "unknown_symbol"),
        ("/api/v1/fills", None, 401, "unauthenticated"),
        ("/api/v1/fills?since=7", Some(TOKEN_A), 400, "invalid_since"),
        (
            "/api/v1/fills?symbol=NOPE",
            Some(TOKEN_A),
            400,
            "unknown_symbol",
        ),
        ("/api/v1/orders?status=closed", None, 401, "unauthenticated"),
        (
            "/api/v1/orders?status=closed&start=yesterday",
            Some(TOKEN_A),
            400,
            "invalid_time",
        ),
        (
            "/api/v1/orders?status=closed&start=5&end=5",
            Some(TOKEN_A),
            400,
            "invalid_time",
        ),
        (
            "/api/v1/orders?status=closed&since=x",
            Some(TOKEN_A),
            400,
            "invalid_since",
        ),
        (
            "/api/v1/orders?status=open&limit=5",
            Some(TOKEN_A),
            400,
            "unknown_parameter",
        ),
        (
            "/api/v1/orders?status=gone",
            Some(TOKEN_A),
            400,
            "invalid_status",
        ),
    ] {
        let (st, v, _) = api.call("GET", path, token, None, "");
        assert_eq!(
            (st, v["code"].as_str().unwrap()),
            (status, code),
            "{path}: {v}"
        );
        assert!(!v["message"].as_str().unwrap().is_empty());
    }
    drop(api);
    s.shutdown().unwrap();
}

#[test]
fn without_a_store_the_history_routes_say_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = api_common::config(dir.path(), 1000);
    cfg.store = None;
    let s = start(cfg);
    let api = Api::of(&s);
    for (path, token) in [
        ("/api/v1/trades/ACME", None),
        ("/api/v1/fills", Some(TOKEN_A)),
        ("/api/v1/orders?status=closed", Some(TOKEN_B)),
    ] {
        let (st, v, _) = api.call("GET", path, token, None, "");
        assert_eq!(
            (st, v["code"].as_str().unwrap()),
            (404, "store_off"),
            "{path}: {v}"
        );
    }
    drop(api);
    s.shutdown().unwrap();
}
