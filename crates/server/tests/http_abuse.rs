//! Hostile HTTP clients against the REST API on 127.0.0.1, each bounded in count and time: a
//! slowloris (connections sending their request head a byte at a time), bodies far over the
//! limit, thousands of random bodies, more connections from one address than it may hold.
//! Each must leave a REST trader served, answer 4xx (never 5xx), and close what it should.

use server::{Config, Server};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

const TOKEN: &str = "rk_abuse_test";

fn config(dir: &Path, extra: &str) -> Config {
    let hex = http_gateway::keys::hex(&http_gateway::keys::sha256(TOKEN));
    let text = format!(
        "listen = \"127.0.0.1:0\"\norders_max = 65536\njournal_segment_bytes = 1048576\n\
         [http]\n{extra}\n\
         [[api_keys]]\nname = \"t\"\naccount = 1\nsha256 = \"{hex}\"\nrequests_per_sec = 1000000\n"
    );
    let mut c = Config::from_toml(&text).expect("config");
    c.data_dir = dir.to_path_buf();
    c
}

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

/// One order through REST: its status.
fn order(agent: &ureq::Agent, addr: SocketAddr, n: u64) -> u16 {
    let body = format!(
        r#"{{"symbol":"ACME","side":"buy","price":"{}.00","quantity":"1","time_in_force":"ioc"}}"#,
        1 + n % 50
    );
    agent
        .post(format!("http://{addr}/api/v1/orders"))
        .header("Authorization", format!("Bearer {TOKEN}"))
        .send(body)
        .map(|r| r.status().as_u16())
        .unwrap_or(0)
}

/// Waits until `cond` holds, up to `secs`.
fn wait_for(secs: u64, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(Instant::now() < deadline, "{what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_slowloris_is_timed_out_while_a_trader_is_served() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(
        config(
            dir.path(),
            "header_timeout_secs = 2\nconnections_per_address_max = 1000\nconnections_max = 1000",
        ),
        Arc::new(|_: &str| {}),
    )
    .unwrap();
    let addr = s.http_addr().unwrap();
    let conns = s.http_connections().unwrap();
    // 300 connections that each send the start of a request head and then a byte at a time.
    let mut slow: Vec<TcpStream> = (0..300)
        .map(|_| {
            let mut c = TcpStream::connect(addr).unwrap();
            c.write_all(b"POST /api/v1/orders HTTP/1.1\r\nHost: x\r\n")
                .unwrap();
            c
        })
        .collect();
    wait_for(10, "the slow connections are open", || {
        conns.open.load(Ordering::Relaxed) >= 300
    });
    // A trader is served meanwhile, while the slow ones trickle a byte every 200 ms.
    let a = agent();
    let started = Instant::now();
    let mut n = 0;
    while started.elapsed() < Duration::from_secs(3) {
        for c in &mut slow {
            let _ = c.write_all(b"X");
        }
        assert_eq!(order(&a, addr, n), 201, "order {n} under the slowloris");
        n += 1;
        std::thread::sleep(Duration::from_millis(200));
    }
    // Every slow connection is closed by the header timeout: its read ends.
    for c in &mut slow {
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 512];
        loop {
            match c.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break,
                Err(e) => panic!("a slow connection was not closed: {e}"),
            }
        }
    }
    wait_for(10, "the slow connections are released", || {
        conns.open.load(Ordering::Relaxed) <= 1
    });
    assert_eq!(order(&a, addr, n), 201);
    s.shutdown().unwrap();
}

#[test]
fn huge_and_random_bodies_get_4xx_and_the_process_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(config(dir.path(), ""), Arc::new(|_: &str| {})).unwrap();
    let addr = s.http_addr().unwrap();
    // A 100 MB body announced up front: refused before it is read.
    let mut c = TcpStream::connect(addr).unwrap();
    c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        c,
        "POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: 100000000\r\n\r\n"
    )
    .unwrap();
    let _ = c.write_all(&[b'{'; 1 << 16]);
    let mut head = [0u8; 12];
    c.read_exact(&mut head).unwrap();
    assert_eq!(
        &head,
        b"HTTP/1.1 413",
        "{:?}",
        String::from_utf8_lossy(&head)
    );
    // 10,000 random bodies, byte noise and JSON-shaped noise: 4xx each, never 5xx.
    let rss = || {
        std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            .unwrap()
    };
    let a = agent();
    let mut rng = types::XorShift64::new(0x5eed_1234);
    let pieces = [
        "{",
        "}",
        "[",
        "]",
        "\"symbol\"",
        "\"ACME\"",
        ":",
        ",",
        "\"price\"",
        "\"1e9\"",
        "NaN",
        "\"-0\"",
        "1.5",
        "null",
        "true",
        "\"quantity\"",
        "\"99999999999999999999\"",
        "\"side\"",
        "\"buy\"",
        "\u{0}",
        "\"type\"",
        "\"market\"",
    ];
    let before = rss();
    for i in 0..10_000u64 {
        let body: Vec<u8> = if i % 2 == 0 {
            (0..rng.below(64)).map(|_| rng.below(256) as u8).collect()
        } else {
            (0..rng.below(24))
                .map(|_| pieces[rng.below(pieces.len() as u64) as usize])
                .collect::<String>()
                .into_bytes()
        };
        let st = a
            .post(format!("http://{addr}/api/v1/orders"))
            .header("Authorization", format!("Bearer {TOKEN}"))
            .header("Content-Type", "application/json")
            .send(&body[..])
            .map(|r| r.status().as_u16())
            .unwrap();
        assert!(
            (400..500).contains(&st) || st == 201,
            "{st} for {:?}",
            String::from_utf8_lossy(&body)
        );
    }
    let after = rss();
    assert!(
        after < before + 200 * 1024,
        "RSS grew from {before} kB to {after} kB over 10,000 bad requests"
    );
    assert_eq!(order(&a, addr, 1), 201);
    s.shutdown().unwrap();
}

#[test]
fn one_address_cannot_hold_more_than_its_share_of_connections() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(
        config(dir.path(), "connections_per_address_max = 20"),
        Arc::new(|_: &str| {}),
    )
    .unwrap();
    let addr = s.http_addr().unwrap();
    let conns = s.http_connections().unwrap();
    let held: Vec<TcpStream> = (0..50).map(|_| TcpStream::connect(addr).unwrap()).collect();
    wait_for(10, "the connections are counted", || {
        conns.accepted.load(Ordering::Relaxed) >= 50
    });
    assert_eq!(conns.open.load(Ordering::Relaxed), 20);
    assert_eq!(conns.refused.load(Ordering::Relaxed), 30);
    drop(held);
    wait_for(10, "the connections are released", || {
        conns.open.load(Ordering::Relaxed) == 0
    });
    assert_eq!(order(&agent(), addr, 1), 201);
    s.shutdown().unwrap();
}
