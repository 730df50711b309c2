//! The REST API end to end over real sockets on 127.0.0.1: API keys, orders through the one
//! sequencer beside FIX, answers with their fills, another key's orders unknown, precise 4xx
//! errors, Idempotency-Key retries (concurrent, and after a restart), the public book.

use crate::api_common;

use api_common::{start, Api, TOKEN_A, TOKEN_B};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// alice at the default 1,000 requests a second.
fn config(dir: &Path) -> server::Config {
    api_common::config(dir, 1000)
}

#[test]
fn orders_fills_errors_and_isolation_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(config(dir.path()));
    let api = Api::of(&s);
    let (st, v, _) = api.call("GET", "/api/v1/instruments", None, None, "");
    assert_eq!(st, 200);
    assert_eq!(v["instruments"][0]["symbol"], "ACME");
    assert_eq!(v["instruments"][0]["tick_size"], "0.01");

    let sell = r#"{"symbol":"ACME","side":"sell","type":"limit","price":"10.25","quantity":"10","client_order_id":"s-1"}"#;
    let (st, v, _) = api.call("POST", "/api/v1/orders", Some(TOKEN_A), None, sell);
    assert_eq!(st, 201, "{v}");
    assert_eq!(v["status"], "new");
    assert_eq!(v["price"], "10.25");
    let id = v["order_id"].as_u64().unwrap();

    let buy =
        r#"{"symbol":"ACME","side":"buy","price":"10.30","quantity":"4","time_in_force":"ioc"}"#;
    let (st, v, _) = api.call("POST", "/api/v1/orders", Some(TOKEN_B), None, buy);
    assert_eq!(st, 201, "{v}");
    assert_eq!(v["status"], "filled");
    assert_eq!(v["fills"][0]["price"], "10.25");
    assert_eq!(v["fills"][0]["quantity"], "4");

    // Bob cannot see or touch Alice's order: exactly as an unknown one.
    let (st_theirs, theirs, _) = api.call(
        "GET",
        &format!("/api/v1/orders/{id}"),
        Some(TOKEN_B),
        None,
        "",
    );
    let (st_none, none, _) = api.call("GET", "/api/v1/orders/999999", Some(TOKEN_B), None, "");
    assert_eq!((st_theirs, st_none), (404, 404));
    assert_eq!(theirs["code"], none["code"]);
    let (st, _, _) = api.call(
        "DELETE",
        &format!("/api/v1/orders/{id}"),
        Some(TOKEN_B),
        None,
        "",
    );
    assert_eq!(st, 404);
    let (st, v, _) = api.call(
        "GET",
        "/api/v1/orders?client_order_id=s-1",
        Some(TOKEN_A),
        None,
        "",
    );
    assert_eq!(
        (st, v["remaining_quantity"].as_str()),
        (200, Some("6")),
        "{v}"
    );

    // Errors: precise, 4xx, JSON.
    let cases: [(&str, Option<&str>, &str, u16, &str); 8] = [
        ("POST", None, sell, 401, "unauthenticated"),
        ("POST", Some("rk_nobody"), sell, 401, "unauthenticated"),
        ("POST", Some(TOKEN_A), "{not json", 400, "invalid_json"),
        (
            "POST",
            Some(TOKEN_A),
            r#"{"symbol":"ACME","side":"buy","price":"100.001","quantity":"1"}"#,
            400,
            "invalid_price",
        ),
        (
            "POST",
            Some(TOKEN_A),
            r#"{"symbol":"ACME","side":"buy","price":10.25,"quantity":"1"}"#,
            400,
            "invalid_field",
        ),
        (
            "POST",
            Some(TOKEN_A),
            r#"{"symbol":"ACME","side":"buy","price":"1e3","quantity":"1"}"#,
            400,
            "invalid_price",
        ),
        (
            "POST",
            Some(TOKEN_A),
            r#"{"symbol":"ACME","side":"buy","price":"10","quantity":"0"}"#,
            400,
            "invalid_quantity",
        ),
        (
            "POST",
            Some(TOKEN_A),
            r#"{"symbol":"ACME","side":"buy","price":"10","quantity":"1","colour":"red"}"#,
            400,
            "unknown_field",
        ),
    ];
    for (m, tok, body, want, code) in cases {
        let (st, v, _) = api.call(m, "/api/v1/orders", tok, None, body);
        assert_eq!((st, v["code"].as_str()), (want, Some(code)), "{body}: {v}");
        assert!(!v["message"].as_str().unwrap().is_empty());
    }
    let (_, v, _) = api.call("POST", "/api/v1/orders", Some(TOKEN_A), None, cases[3].2);
    assert_eq!(
        v["message"],
        "price 100.001 is not a multiple of ACME's tick 0.01"
    );
    let (st, v, _) = api.call("GET", "/api/v1/nothing", None, None, "");
    assert_eq!((st, v["code"].as_str()), (404, Some("not_found")));
    let big = format!(r#"{{"symbol":"{}"}}"#, "x".repeat(64 << 10));
    let url = format!("{}/api/v1/orders", api.base);
    let r = api
        .agent
        .post(&url)
        .header("Authorization", format!("Bearer {TOKEN_A}"))
        .send(big)
        .expect("an answer");
    assert_eq!(r.status().as_u16(), 413);

    // The public book follows from the market-data replica.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (st, v, _) = api.call("GET", "/api/v1/book/ACME?depth=5", None, None, "");
        assert_eq!(st, 200);
        if v["asks"][0] == serde_json::json!(["10.25", "6", 1]) {
            assert!(v["rpt_seq"].as_u64().unwrap() >= 3, "{v}");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the book never showed the rest: {v}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let (st, v, _) = api.call("GET", "/api/v1/ticker/ACME", None, None, "");
    assert_eq!(st, 200);
    assert_eq!(v["last_trade"]["price"], "10.25");
    assert_eq!(v["best_ask"]["quantity"], "6");

    // Replace and cancel keep the client order id; cancel-all answers its count.
    let (st, v, _) = api.call(
        "PATCH",
        &format!("/api/v1/orders/{id}"),
        Some(TOKEN_A),
        None,
        r#"{"symbol":"ACME","price":"10.40"}"#,
    );
    assert_eq!(
        (st, v["price"].as_str(), v["client_order_id"].as_str()),
        (200, Some("10.4"), Some("s-1")),
        "{v}"
    );
    let (st, v, _) = api.call("POST", "/api/v1/orders/cancel-all", Some(TOKEN_A), None, "");
    assert_eq!((st, v["canceled"].as_u64()), (200, Some(1)), "{v}");
    let (st, v, _) = api.call("GET", "/api/v1/orders?status=open", Some(TOKEN_A), None, "");
    assert_eq!(st, 200);
    assert!(v["orders"].as_array().unwrap().is_empty(), "{v}");
    s.shutdown().unwrap();
}

#[test]
fn an_idempotency_key_makes_one_order_concurrently_and_after_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let s = start(config(dir.path()));
    let api = Arc::new(Api::of(&s));
    let body = r#"{"symbol":"BOLT","side":"buy","price":"5","quantity":"3"}"#;
    let answers: Vec<(u16, String)> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..3)
            .map(|_| {
                let api = api.clone();
                sc.spawn(move || {
                    let (st, _, text) = api.call(
                        "POST",
                        "/api/v1/orders",
                        Some(TOKEN_A),
                        Some("once-1"),
                        body,
                    );
                    (st, text)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(answers[0].0, 201);
    assert!(answers.iter().all(|a| *a == answers[0]), "{answers:?}");
    let (_, v, _) = api.call("GET", "/api/v1/orders?status=open", Some(TOKEN_A), None, "");
    assert_eq!(v["orders"].as_array().unwrap().len(), 1);
    // Another body under the same key: refused, nothing made.
    let (st, v, _) = api.call(
        "POST",
        "/api/v1/orders",
        Some(TOKEN_A),
        Some("once-1"),
        r#"{"symbol":"BOLT","side":"buy","price":"6","quantity":"3"}"#,
    );
    assert_eq!(
        (st, v["code"].as_str()),
        (422, Some("idempotency_key_reused"))
    );
    s.shutdown().unwrap();

    // After a restart the retry still gets the first answer, byte for byte.
    let s = start(config(dir.path()));
    let api = Api::of(&s);
    let (st, _, text) = api.call(
        "POST",
        "/api/v1/orders",
        Some(TOKEN_A),
        Some("once-1"),
        body,
    );
    assert_eq!((st, text), answers[0]);
    let (_, v, _) = api.call("GET", "/api/v1/orders?status=open", Some(TOKEN_A), None, "");
    assert_eq!(v["orders"].as_array().unwrap().len(), 1);
    s.shutdown().unwrap();
}
