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

/// The `p`th percentile (0..=100) of `v` (sorted here), in µs.
fn pct_us(v: &mut [Duration], p: usize) -> f64 {
    v.sort_unstable();
    v[((v.len() - 1) * p) / 100].as_nanos() as f64 / 1000.0
}

/// `ORDERS` orders of a REST trader and a FIX trader at 100 a second each, each waited for:
/// their round trips.
const ORDERS: usize = 200;

fn paced(mut one: impl FnMut(usize)) -> Vec<Duration> {
    let mut lat = Vec::with_capacity(ORDERS);
    let t0 = Instant::now();
    for i in 0..ORDERS {
        let due = t0 + Duration::from_millis(10) * i as u32;
        if let Some(d) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(d);
        }
        let sent = Instant::now();
        one(i);
        lat.push(sent.elapsed());
    }
    lat
}

/// Both traders' round trips, side by side: (REST, FIX).
fn traders(
    http: SocketAddr,
    fix: &mut fix::client::FixClient,
    run: &str,
) -> (Vec<Duration>, Vec<Duration>) {
    let a = agent();
    std::thread::scope(|s| {
        let rest = s.spawn(|| {
            paced(|i| assert_eq!(order(&a, http, i as u64), 201, "{run}: REST order {i}"))
        });
        let fixed = paced(|i| {
            let cl = format!("{run}-{i}");
            fix.send(
                "D",
                &[
                    (11, cl.as_str()),
                    (55, "BOLT"),
                    (54, "1"),
                    (38, "1"),
                    (40, "2"),
                    (44, "1.00"),
                    (59, "3"),
                ],
            )
            .unwrap();
            loop {
                let (m, _) = fix.expect("8", Duration::from_secs(10)).unwrap();
                if m.get(11) == Some(cl.as_str()) {
                    break;
                }
            }
        });
        (rest.join().unwrap(), fixed)
    })
}

/// A REST trader and a FIX trader at 100 orders a second each, alone and then under each
/// attack: every order answered; their P50 and P99 printed (`--nocapture`), for BENCHMARKS.md
/// (timings belong there, not in assertions).
#[test]
fn traders_are_served_under_each_attack() {
    let dir = tempfile::tempdir().unwrap();
    let s = Server::start(
        config(
            dir.path(),
            "header_timeout_secs = 5\nconnections_per_address_max = 2000\nconnections_max = 2000",
        ),
        Arc::new(|_: &str| {}),
    )
    .unwrap();
    let http = s.http_addr().unwrap();
    let mut fix = fix::client::FixClient::connect(s.addr, "CLIENT2", "RIALTO", 1).unwrap();
    fix.logon(30, true).unwrap();
    fix.expect("A", Duration::from_secs(10)).unwrap();
    let report = |what: &str,
                  (mut r, mut f): (Vec<Duration>, Vec<Duration>),
                  base: Option<(f64, f64)>| {
        let (r50, f50) = (pct_us(&mut r, 50), pct_us(&mut f, 50));
        let ratio = base.map_or(String::new(), |(b_r, b_f)| {
            format!("; P50 ratio REST {:.2}x, FIX {:.2}x", r50 / b_r, f50 / b_f)
        });
        println!(
            "http abuse: {what}: REST P50 {r50:.0} us P99 {:.0} us; FIX P50 {f50:.0} us P99 {:.0} us{ratio}",
            pct_us(&mut r, 99),
            pct_us(&mut f, 99)
        );
        (r50, f50)
    };
    let base = report("alone", traders(http, &mut fix, "alone"), None);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));

    // 1,000 slowloris connections, a byte a second each.
    let slow: Vec<TcpStream> = (0..1000)
        .map(|_| {
            let mut c = TcpStream::connect(http).unwrap();
            c.write_all(b"POST /api/v1/orders HTTP/1.1\r\n").unwrap();
            c
        })
        .collect();
    let trickle = {
        let (stop, mut slow) = (stop.clone(), slow);
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                for c in &mut slow {
                    let _ = c.write_all(b"X");
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        })
    };
    report(
        "1,000 slowloris connections",
        traders(http, &mut fix, "slow"),
        Some(base),
    );
    stop.store(true, Ordering::Relaxed);
    trickle.join().unwrap();

    // 100 MB bodies, one after another (up to a thousand a second), and random bodies, from a
    // thread each.
    for (what, huge) in [("100 MB bodies", true), ("random bodies", false)] {
        stop.store(false, Ordering::Relaxed);
        let attacker = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let a = agent();
                let mut rng = types::XorShift64::new(7);
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    if huge {
                        let mut c = TcpStream::connect(http).unwrap();
                        let _ = write!(
                            c,
                            "POST /api/v1/orders HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n\
                             Content-Length: 100000000\r\n\r\n"
                        );
                        let _ = c.write_all(&[b'x'; 1 << 16]);
                        // A thousand a second at most: the attacker shares the trader's address
                        // (127.0.0.1), whose share of connections and the listen backlog it
                        // would otherwise fill.
                        std::thread::sleep(Duration::from_millis(1));
                    } else {
                        let body: Vec<u8> =
                            (0..rng.below(128)).map(|_| rng.below(256) as u8).collect();
                        let st = a
                            .post(format!("http://{http}/api/v1/orders"))
                            .header("Authorization", format!("Bearer {TOKEN}"))
                            .send(&body[..])
                            .map(|r| r.status().as_u16())
                            .unwrap();
                        assert!((400..500).contains(&st), "{st}");
                    }
                    n += 1;
                }
                n
            })
        };
        report(what, traders(http, &mut fix, what), Some(base));
        stop.store(true, Ordering::Relaxed);
        let n = attacker.join().unwrap();
        println!("http abuse: {what}: {n} sent meanwhile");
    }
    s.shutdown().unwrap();
}
