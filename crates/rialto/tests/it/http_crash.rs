//! kill -9 of the real binary while REST clients trade: every order that got a 2xx answer is
//! there after the restart (its journal record was committed before the answer left), and an
//! Idempotency-Key retry after the restart gets the answer its first request got, byte for
//! byte, without making a second order.

use std::collections::HashSet;
use std::ffi::OsStr;
use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common;
use common::serve_http;

const TOKEN: &str = "rk_crash_test";
const CLIENTS: usize = 4;

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into()
}

fn start(dir: &Path, config: &Path) -> common::Served {
    let args: [&OsStr; 8] = [
        "--config".as_ref(),
        config.as_os_str(),
        "--data-dir".as_ref(),
        dir.as_os_str(),
        "--listen".as_ref(),
        "127.0.0.1:0".as_ref(),
        "--market-data-listen=off".as_ref(),
        "--http-listen=127.0.0.1:0".as_ref(),
    ];
    serve_http(&args, Stdio::inherit())
}

/// `method path` with the key and `idem`: (status, body).
fn call(
    a: &ureq::Agent,
    http: SocketAddr,
    method: &str,
    path: &str,
    idem: Option<&str>,
    body: &str,
) -> Option<(u16, String)> {
    let mut req = ureq::http::Request::builder()
        .method(method)
        .uri(format!("http://{http}{path}"))
        .header("Authorization", format!("Bearer {TOKEN}"))
        .header("Content-Type", "application/json");
    if let Some(k) = idem {
        req = req.header("Idempotency-Key", k);
    }
    let mut r = a.run(req.body(body.to_owned()).unwrap()).ok()?;
    let st = r.status().as_u16();
    Some((st, r.body_mut().read_to_string().ok()?))
}

#[test]
fn kill_9_under_rest_load_loses_no_answered_order() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("rialto.toml");
    let hex = http_gateway::keys::hex(&http_gateway::keys::sha256(TOKEN));
    std::fs::write(
        &config,
        format!(
            "orders_max = 65536\njournal_segment_bytes = 1048576\n\
             [[api_keys]]\nname = \"crash\"\naccount = 1\nsha256 = \"{hex}\"\nrequests_per_sec = 1000000\n"
        ),
    )
    .unwrap();
    let data = dir.path().join("data");
    let mut s = start(&data, &config);
    let http = s.http.unwrap();
    // One idempotent order answered before the crash.
    let first_body = r#"{"symbol":"BOLT","side":"buy","price":"1.00","quantity":"7"}"#;
    let first = call(
        &agent(),
        http,
        "POST",
        "/api/v1/orders",
        Some("before-crash"),
        first_body,
    )
    .unwrap();
    assert_eq!(first.0, 201, "{}", first.1);
    // Clients post non-crossing GTC orders until the kill; each keeps the ids answered 201.
    let acked = Arc::new(Mutex::new(HashSet::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..CLIENTS)
        .map(|c| {
            let (acked, stop) = (acked.clone(), stop.clone());
            std::thread::spawn(move || {
                let a = agent();
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let cl = format!("c{c}-{n}");
                    n += 1;
                    let body = format!(
                        r#"{{"symbol":"ACME","side":"buy","price":"{}.00","quantity":"1","client_order_id":"{cl}"}}"#,
                        1 + n % 40
                    );
                    match call(&a, http, "POST", "/api/v1/orders", None, &body) {
                        Some((201, _)) => {
                            acked.lock().unwrap().insert(cl);
                        }
                        Some((st, b)) => panic!("{st} {b}"),
                        // The server is gone: the answer never came.
                        None => break,
                    }
                }
            })
        })
        .collect();
    // Let them trade, then kill -9 mid-flight.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while acked.lock().unwrap().len() < 1000 {
        assert!(
            std::time::Instant::now() < deadline,
            "too few orders answered"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    s.child.kill().unwrap();
    s.child.wait().unwrap();
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    let acked = acked.lock().unwrap().clone();

    let mut s = start(&data, &config);
    let http = s.http.unwrap();
    let a = agent();
    let (st, open) = call(&a, http, "GET", "/api/v1/orders?status=open", None, "").unwrap();
    assert_eq!(st, 200);
    let open: serde_json::Value = serde_json::from_str(&open).unwrap();
    let ids: HashSet<String> = open["orders"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["client_order_id"].as_str().map(str::to_owned))
        .collect();
    let lost: Vec<&String> = acked.iter().filter(|c| !ids.contains(*c)).collect();
    assert!(
        lost.is_empty(),
        "{} answered orders lost, e.g. {:?}",
        lost.len(),
        &lost[..lost.len().min(5)]
    );
    // The retry of the first request: the same answer, byte for byte, and still one order.
    let again = call(
        &a,
        http,
        "POST",
        "/api/v1/orders",
        Some("before-crash"),
        first_body,
    )
    .unwrap();
    assert_eq!(again, first);
    let bolt = open["orders"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["symbol"] == "BOLT")
        .count();
    assert_eq!(bolt, 1);
    s.stop();
}
