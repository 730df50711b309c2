//! Cluster mode of the real binary on a real three-broker Kafka (replication factor 3,
//! `min.insync.replicas` 2), all on 127.0.0.1: two shards (ACME and BOLT; CRNK), each with two
//! engines, and two gateways. FIX traders on both gateways trade both shards while, in turn:
//! the active engine of shard 0 is killed (-9), its standby takes over, and it restarts from its
//! snapshot as the new standby; a broker is killed;
//! the active engine of shard 1 is paused (SIGSTOP) until its standby took over, then resumed;
//! a gateway is killed and restarted, and its clients log on again with their sequence
//! numbers. Then, from the topics themselves:
//! - every acknowledged order is in its shard's command log exactly once, accepted;
//! - two fresh replays of each command log give the same outcomes byte for byte and the same
//!   state hash, and the event log holds exactly those outcomes (each command offset once);
//!   the auditor of crate `model` finds the replay's engine events and book consistent;
//! - each trader saw exactly the fills the replay gives its orders;
//! - every two engines of a shard have equal state hashes wherever both took one;
//! - REST through a gateway: an order entered, read back and canceled; `rialto cluster status`
//!   names each shard's active engine;
//! - both gateways' market data show the same books and their trade stores the same trades;
//! - after its standby took over, the paused engine published nothing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use cluster::status::ShardStatus;
use exchange::wire::{Outcome, Sent};
use exchange::{OwnedOutput, ReportKind};
use fix::client::FixClient;

use crate::common::BIN;

const T: Duration = Duration::from_secs(30);
/// The API key of each gateway's configuration.
const TOKEN: &str = "rk_cluster_test";

/// A child process killed when dropped, its output in a file.
struct Proc {
    child: Child,
    name: String,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// On a failing test: the end of every process's log.
struct DumpLogs(PathBuf);

impl Drop for DumpLogs {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        let Ok(rd) = std::fs::read_dir(&self.0) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "log") {
                let text = std::fs::read_to_string(&p).unwrap_or_default();
                let lines: Vec<&str> = text.lines().collect();
                eprintln!("--- the end of {}:", p.display());
                for l in &lines[lines.len().saturating_sub(25)..] {
                    eprintln!("{l}");
                }
            }
        }
    }
}

fn log_file(dir: &Path, name: &str) -> std::fs::File {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(format!("{name}.log")))
        .unwrap()
}

fn engine(dir: &Path, cfg: &Path, shard: u16, id: &str) -> Proc {
    let name = format!("engine-{shard}-{id}");
    let out = log_file(dir, &name);
    let child = Command::new(BIN)
        .args(["engine", "--shard", &shard.to_string(), "--id", id])
        .arg("--config")
        .arg(cfg)
        .arg("--data-dir")
        .arg(dir.join("engines"))
        .stdout(out.try_clone().unwrap())
        .stderr(out)
        .spawn()
        .expect("spawn rialto engine");
    Proc { child, name }
}

/// Starts a gateway and waits until it listens for FIX and HTTP.
fn gateway(dir: &Path, cfg: &Path, n: u16) -> (Proc, SocketAddr, SocketAddr) {
    let name = format!("gateway-{n}");
    let mut child = Command::new(BIN)
        .args([
            "gateway",
            "--listen",
            "127.0.0.1:0",
            "--http-listen",
            "127.0.0.1:0",
        ])
        .arg("--config")
        .arg(cfg)
        .arg("--data-dir")
        .arg(dir.join(&name))
        .env_remove("RIALTO_LOG")
        .stdout(Stdio::piped())
        .stderr(log_file(dir, &name))
        .spawn()
        .expect("spawn rialto gateway");
    let stdout = child.stdout.take().unwrap();
    let proc = Proc {
        child,
        name: name.clone(),
    };
    let (tx, rx) = mpsc::channel::<String>();
    let mut file = log_file(dir, &name);
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = writeln!(file, "{line}");
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let after = |line: &str, what: &str| -> Option<SocketAddr> {
        line.split(what)
            .nth(1)?
            .split_whitespace()
            .next()?
            .parse()
            .ok()
    };
    let (mut fix, mut http) = (None, None);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let line = rx
            .recv_timeout(left)
            .unwrap_or_else(|_| panic!("{name} did not start (see {})", dir.display()));
        fix = fix.or(after(&line, "listening for FIX on "));
        http = http.or(after(&line, "listening for HTTP on "));
        if let (Some(f), Some(h)) = (fix, http) {
            return (proc, f, h);
        }
    }
}

/// A public REST view of a gateway, as text.
fn get(http: SocketAddr, path: &str) -> String {
    ureq::get(&format!("http://{http}{path}"))
        .call()
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap()
}

/// `method path` with the API key: (status, body).
fn call(http: SocketAddr, method: &str, path: &str, body: &str) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(T))
        .build()
        .into();
    let req = ureq::http::Request::builder()
        .method(method)
        .uri(format!("http://{http}{path}"))
        .header("Authorization", format!("Bearer {TOKEN}"))
        .header("Content-Type", "application/json")
        .body(body.to_owned())
        .unwrap();
    let mut r = agent.run(req).unwrap();
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap())
}

/// A book without its feed position and time (each gateway's market data numbers its own).
fn levels(book: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(book).unwrap();
    let o = v.as_object_mut().unwrap();
    o.remove("rpt_seq");
    o.remove("updated_ns");
    v
}

fn signal(p: &Proc, sig: &str) {
    let ok = Command::new("kill")
        .args([sig, &p.child.id().to_string()])
        .status()
        .unwrap()
        .success();
    assert!(ok, "kill {sig} {}", p.name);
}

fn status(cfg: &server::Config) -> Vec<ShardStatus> {
    cluster::status::read(cfg.cluster.as_ref().unwrap(), 500).unwrap_or_default()
}

/// Waits until shard `shard` has an active engine (fresh report, lease held) of at least
/// `epoch` other than `not`; returns its id and epoch (the latest, if reports disagree). A
/// broker's loss may stall heartbeats past `takeover_ms` and make a standby take over: a later
/// epoch than the test caused is fine.
fn wait_active(cfg: &server::Config, shard: u16, epoch: u32, not: &str) -> (String, u32) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let now = cluster::now_ns();
        let s = status(cfg);
        if let Some(e) = s.get(shard as usize).and_then(|s| {
            s.engines
                .iter()
                .filter(|e| {
                    e.role == "active"
                        && e.epoch >= epoch
                        && e.engine != not
                        && now.saturating_sub(e.ts_ns) < 2_000_000_000
                })
                .max_by_key(|e| e.epoch)
        }) {
            return (e.engine.clone(), e.epoch);
        }
        assert!(
            Instant::now() < deadline,
            "shard {shard}: no active engine with epoch {epoch} within 60 s: {s:?}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// What one trader saw.
#[derive(Default)]
struct Seen {
    /// ClOrdID -> acknowledged (an ExecutionReport other than a reject).
    acked: HashSet<String>,
    /// ClOrdID -> quantity filled, from its ExecutionReports.
    filled: HashMap<String, u64>,
    /// When each shard's orders were acknowledged (for the failover gap).
    ack_times: Vec<(u16, Instant)>,
    /// The next MsgSeqNum to send.
    next_seq: u64,
}

fn now_text() -> String {
    let mut v = Vec::new();
    fix::write_utc_timestamp(&mut v, cluster::now_ns(), fix::TimePrecision::Millis);
    String::from_utf8(v).unwrap()
}

/// Reads until the ExecutionReport that answers `cl` (recording every report on the way), or
/// for `T`; a ClOrdID never sent reads until 2 s pass without a message.
fn answer(c: &mut FixClient, cl: &str, seen: &Mutex<Seen>, shard: u16) -> bool {
    let deadline = Instant::now() + T;
    let mut quiet = Instant::now();
    while Instant::now() < deadline {
        let Ok(Some(m)) = c.recv(Duration::from_millis(500)) else {
            if cl.starts_with("none") && quiet.elapsed() > Duration::from_secs(2) {
                return false;
            }
            continue;
        };
        quiet = Instant::now();
        if m.msg_type() != "8" {
            continue;
        }
        let id = m.get(11).unwrap_or("").to_string();
        let mut s = seen.lock().unwrap();
        match m.get(150) {
            Some("F") => *s.filled.entry(id.clone()).or_default() += m.u64(32).unwrap_or(0),
            Some("0") => {
                s.acked.insert(id.clone());
                s.ack_times.push((shard, Instant::now()));
            }
            _ => {}
        }
        if m.get(150) == Some("F") && !s.acked.contains(&id) {
            // An order that traded on arrival: its first report is a fill.
            s.acked.insert(id.clone());
            s.ack_times.push((shard, Instant::now()));
        }
        if id == cl {
            return true;
        }
    }
    false
}

/// A trader on `addr` as `sender`: alternately ACME (shard 0) and CRNK (shard 1), buying or
/// selling at one price so that traders cross, each order after the previous one's answer.
fn trader(
    addr: SocketAddr,
    sender: &'static str,
    buy: bool,
    stop: Arc<AtomicBool>,
    seen: Arc<Mutex<Seen>>,
) -> JoinHandle<FixClient> {
    std::thread::spawn(move || {
        let mut c = FixClient::connect(addr, sender, "RIALTO", 1).unwrap();
        c.logon(30, true).unwrap();
        c.expect("A", T).unwrap();
        let mut n = 0u64;
        seen.lock().unwrap().next_seq = 2;
        while !stop.load(Ordering::Relaxed) {
            let (symbol, shard) = if n.is_multiple_of(2) {
                ("ACME", 0)
            } else {
                ("CRNK", 1)
            };
            let cl = format!("{sender}-{n}");
            let qty = (1 + n % 3).to_string();
            let now = now_text();
            c.send(
                "D",
                &[
                    (11, cl.as_str()),
                    (55, symbol),
                    (54, if buy { "1" } else { "2" }),
                    (38, qty.as_str()),
                    (40, "2"),
                    (44, "10.00"),
                    (59, "1"),
                    (60, now.as_str()),
                ],
            )
            .unwrap();
            seen.lock().unwrap().next_seq += 1;
            assert!(
                answer(&mut c, &cl, &seen, shard),
                "{sender}: no answer to {cl}"
            );
            n += 1;
        }
        c
    })
}

/// The cluster's files. `takeover_ms` is 3 s, not the default 1.5 s: the test shares two cores
/// with the others, and a starved active would be deposed (safely, but the test would have to
/// follow more takeovers than it caused).
fn write_configs(dir: &Path, brokers: &str) -> (PathBuf, PathBuf, PathBuf) {
    let cluster = format!(
        "[cluster]\nbrokers = \"{brokers}\"\ntopic_prefix = \"it\"\nreplication_factor = 3\n\
         min_insync_replicas = 2\nshards = [[\"ACME\", \"BOLT\"], [\"CRNK\"]]\n\
         snapshot_every_commands = 200\nheartbeat_ms = 100\ntakeover_ms = 3000\n"
    );
    let engines = dir.join("cluster.toml");
    std::fs::write(&engines, &cluster).unwrap();
    let hex = http_gateway::keys::hex(&http_gateway::keys::sha256(TOKEN));
    let gw = |n: u16| {
        let p = dir.join(format!("gateway-{n}.toml"));
        let text = cluster.replace("[cluster]\n", &format!("[cluster]\ngateway = {n}\n"));
        std::fs::write(
            &p,
            format!(
                "sending_time_window_secs = 0\n{text}\n[[api_keys]]\nname = \"rest\"\n\
                 account = 1\nsha256 = \"{hex}\"\n"
            ),
        )
        .unwrap();
        p
    };
    (engines, gw(1), gw(2))
}

#[test]
fn failover_broker_loss_pause_and_gateway_restart_lose_nothing() {
    let mut kafka = test_kafka::TestKafka::start(3);
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let _logs = DumpLogs(d.to_path_buf());
    let (ecfg, g1cfg, g2cfg) = write_configs(d, &kafka.bootstrap());
    let cfg = server::Config::from_toml(&std::fs::read_to_string(&ecfg).unwrap()).unwrap();
    let cc = cfg.cluster.clone().unwrap();
    let mut engines: BTreeMap<(u16, &str), Proc> = BTreeMap::new();
    for s in 0..2 {
        for id in ["a", "b"] {
            engines.insert((s, id), engine(d, &ecfg, s, id));
        }
    }
    wait_active(&cfg, 0, 1, "");
    wait_active(&cfg, 1, 1, "");
    let (g1, a1, h1) = gateway(d, &g1cfg, 1);
    let (g2, a2, _) = gateway(d, &g2cfg, 2);

    let stop = Arc::new(AtomicBool::new(false));
    let stop2 = Arc::new(AtomicBool::new(false));
    let seen: Vec<Arc<Mutex<Seen>>> = (0..4).map(|_| Arc::default()).collect();
    let t1 = trader(a1, "BOT1", true, stop.clone(), seen[0].clone());
    let t2 = trader(a1, "BOT2", false, stop.clone(), seen[1].clone());
    let t3 = trader(a2, "BOT3", true, stop2.clone(), seen[2].clone());
    let t4 = trader(a2, "BOT4", false, stop2.clone(), seen[3].clone());
    let acks = |s: &[Arc<Mutex<Seen>>]| {
        s.iter()
            .map(|x| x.lock().unwrap().acked.len())
            .sum::<usize>()
    };
    let wait_acks = |more: usize| {
        let target = acks(&seen) + more;
        let deadline = Instant::now() + Duration::from_secs(60);
        while acks(&seen) < target {
            assert!(
                Instant::now() < deadline,
                "trading stalled at {} acks",
                acks(&seen)
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    };
    wait_acks(200);

    // 1. kill -9 the active engine of shard 0: its standby takes over.
    let (active0, epoch0) = wait_active(&cfg, 0, 1, "");
    let killed_at = Instant::now();
    drop(engines.remove(&(0, active0.as_str())));
    wait_active(&cfg, 0, epoch0 + 1, &active0);
    wait_acks(200);
    // Failover time: the longest pause between two acknowledgements of shard 0's orders
    // around the kill (the last before it to the first after the standby took over).
    let mut times: Vec<Instant> = seen
        .iter()
        .flat_map(|s| s.lock().unwrap().ack_times.clone())
        .filter(|(shard, t)| *shard == 0 && *t + Duration::from_secs(1) >= killed_at)
        .map(|(_, t)| t)
        .collect();
    times.sort();
    let gap = times.windows(2).map(|w| w[1] - w[0]).max().unwrap();
    eprintln!("shard 0: acknowledgements paused {gap:?} around the kill of its active engine");
    // The killed engine restarts from its snapshot and follows as the standby (its state
    // hashes join the comparison below).
    let id0: &str = if active0 == "a" { "a" } else { "b" };
    engines.insert((0, id0), engine(d, &ecfg, 0, id0));
    let deadline = Instant::now() + Duration::from_secs(60);
    while !status(&cfg).first().is_some_and(|s| {
        s.engines.iter().any(|e| {
            e.engine == id0
                && e.role == "standby"
                && cluster::now_ns().saturating_sub(e.ts_ns) < 1_000_000_000
        })
    }) {
        assert!(
            Instant::now() < deadline,
            "the restarted engine does not report"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // 2. kill one broker: trading goes on.
    kafka.kill(2);
    wait_acks(200);

    // 3. pause the active engine of shard 1 until its standby took over, then resume it.
    let (active1, epoch1) = wait_active(&cfg, 1, 1, "");
    let paused = engines.get(&(1, active1.as_str())).unwrap();
    signal(paused, "-STOP");
    let (_, deposed_at) = wait_active(&cfg, 1, epoch1 + 1, &active1);
    signal(paused, "-CONT");
    wait_acks(200);

    // 4. kill -9 gateway 2 (its traders stopped first, every order answered), restart it:
    // its sessions log on again with their sequence numbers and trade on.
    stop2.store(true, Ordering::Relaxed);
    let c3 = t3.join().unwrap();
    let c4 = t4.join().unwrap();
    drop((c3, c4, g2));
    let (g2, a2, h2) = gateway(d, &g2cfg, 2);
    for (k, sender) in [(2, "BOT3"), (3, "BOT4")] {
        let next = seen[k].lock().unwrap().next_seq;
        let mut c = FixClient::connect(a2, sender, "RIALTO", next).unwrap();
        c.logon(30, false).unwrap();
        let (logon, _) = c.expect("A", T).unwrap();
        assert!(logon.seq() > 1, "{sender}: the gateway's numbers restarted");
        let cl = format!("{sender}-after-restart");
        let now = now_text();
        c.send(
            "D",
            &[
                (11, cl.as_str()),
                (55, "CRNK"),
                (54, "1"),
                (38, "1"),
                (40, "2"),
                (44, "9.00"),
                (59, "1"),
                (60, now.as_str()),
            ],
        )
        .unwrap();
        assert!(
            answer(&mut c, &cl, &seen[k], 1),
            "{sender}: no answer after the restart"
        );
    }
    // REST through a gateway: an order rests on shard 1, is read back and canceled.
    let (st, body) = call(
        h1,
        "POST",
        "/api/v1/orders",
        r#"{"symbol":"CRNK","side":"sell","price":"50.00","quantity":"3","client_order_id":"rest-1"}"#,
    );
    assert_eq!(st, 201, "{body}");
    let order: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(order["status"], "new", "{body}");
    let id = order["order_id"].as_u64().unwrap();
    assert_eq!(id % 1000, 1, "an order id of shard 1: {id}");
    let (st, body) = call(h1, "GET", "/api/v1/orders?client_order_id=rest-1", "");
    assert!(
        st == 200 && body.contains(r#""remaining_quantity":"3""#),
        "{st} {body}"
    );
    let (st, body) = call(h1, "DELETE", &format!("/api/v1/orders/{id}"), "");
    assert!(
        st == 200 && body.contains(r#""status":"canceled""#),
        "{st} {body}"
    );
    let (st, body) = call(h1, "DELETE", &format!("/api/v1/orders/{id}"), "");
    assert_eq!(st, 404, "a second cancel: {body}");
    // `rialto cluster status` names each shard's active engine (after a takeover) and its
    // standby.
    let out = Command::new(BIN)
        .args(["cluster", "status", "--config"])
        .arg(&ecfg)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    for shard in ["shard 0 (ACME,BOLT)", "shard 1 (CRNK)"] {
        let part = text.split(shard).nth(1).unwrap_or_else(|| panic!("{text}"));
        let part = part.split("\nshard ").next().unwrap();
        assert!(
            part.contains("active ") && part.contains("standby") && !part.contains("epoch 1 "),
            "{text}"
        );
    }
    stop.store(true, Ordering::Relaxed);
    // Gateway 1's traders read what is left for them (fills of their resting orders).
    for (k, mut c) in [(0, t1.join().unwrap()), (1, t2.join().unwrap())] {
        answer(&mut c, "none: read to the end", &seen[k], 0);
    }
    // Both gateways' market data (each a replica of its own journal) show the same books,
    // with trades at the traders' price.
    for symbol in ["ACME", "CRNK"] {
        let path = format!("/api/v1/book/{symbol}?depth=1000");
        let deadline = Instant::now() + T;
        while levels(&get(h1, &path)) != levels(&get(h2, &path)) {
            assert!(
                Instant::now() < deadline,
                "{symbol}: the gateways' books differ: {} vs {}",
                get(h1, &path),
                get(h2, &path)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        // Each gateway's trade store holds every shard's trades.
        let path = format!("/api/v1/trades/{symbol}?order=desc&limit=100");
        let trades = |h| {
            let v: serde_json::Value = serde_json::from_str(&get(h, &path)).unwrap();
            v["trades"].clone()
        };
        let deadline = Instant::now() + T;
        while trades(h1) != trades(h2) || trades(h1).as_array().is_none_or(|t| t.is_empty()) {
            assert!(
                Instant::now() < deadline,
                "{symbol}: the gateways' trade stores differ: {} vs {}",
                get(h1, &path),
                get(h2, &path)
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        let ticker = get(h1, &format!("/api/v1/ticker/{symbol}"));
        assert!(ticker.contains(r#""last_trade":{"price":"10""#), "{ticker}");
    }
    // Let the engines report their last hashes, then stop everything.
    std::thread::sleep(Duration::from_secs(1));
    drop((g1, g2));
    drop(engines);

    let restarted = std::fs::read_to_string(d.join(format!("engine-0-{id0}.log"))).unwrap();
    assert!(
        restarted.contains("snapshot at offset"),
        "the restarted engine did not load its snapshot: {restarted}"
    );

    // The topics, read back.
    let mut applied_new: HashMap<String, usize> = HashMap::new();
    let mut replay_filled: HashMap<String, u64> = HashMap::new();
    for s in 0..2i32 {
        let log = cluster::kafka::read_partition(&cc, &cc.commands_topic(), s).unwrap();
        let (a, ha) = cluster::engine::replay(&cfg, &log);
        let (b, hb) = cluster::engine::replay(&cfg, &log);
        assert!(a == b && ha == hb, "shard {s}: two replays differ");
        // The auditor (crate `model`), an independent witness, follows every engine event of
        // the replay (each order's quantity, every trade, price-time priority) and checks the
        // book it ends with.
        let mut shard = cluster::engine::Shard::new(&cfg);
        shard.exchange.event_log = Some(Vec::new());
        let mut auditor = model::Auditor::new();
        for (offset, bytes) in &log {
            shard.apply(*offset, &cluster::LogRecord::decode(bytes).unwrap());
            let events = shard.exchange.event_log.replace(Vec::new()).unwrap();
            auditor
                .on_events(&events)
                .unwrap_or_else(|e| panic!("shard {s} at offset {offset}: {e}"));
        }
        auditor
            .check_book(cfg.instruments.len() as u32, |symbol, side| {
                shard
                    .exchange
                    .engine()
                    .resting(symbol, side)
                    .map(|o| (o.id, o.price, o.qty))
                    .collect()
            })
            .unwrap_or_else(|e| panic!("shard {s}: {e}"));
        let events = cluster::kafka::read_partition(&cc, &cc.events_topic(), s).unwrap();
        // By (command offset, part): an outcome too large for one record comes in parts.
        let mut published: BTreeMap<(u64, u32), Vec<u8>> = BTreeMap::new();
        // The highest command offset published before the first outcome of the epoch that
        // deposed the paused engine: after that outcome, one of an older epoch may only be a
        // late copy of what was in flight when it was paused (identical, checked below),
        // never an outcome of a command it applied after.
        let mut before_takeover: Option<u64> = None;
        let mut highest = 0;
        for (_, bytes) in &events {
            let o = Outcome::decode(bytes).unwrap();
            if s == 1 {
                if o.epoch >= deposed_at && before_takeover.is_none() {
                    before_takeover = Some(highest);
                }
                if let Some(b) = before_takeover {
                    assert!(
                        o.epoch >= deposed_at || o.offset <= b,
                        "shard 1: the paused engine published offset {} (epoch {}) after its \
                         standby took over at {b}",
                        o.offset,
                        o.epoch
                    );
                }
                highest = highest.max(o.offset);
            }
            let first = published
                .entry((o.offset, o.part))
                .or_insert_with(|| bytes.clone());
            assert_eq!(
                first, bytes,
                "shard {s}: two outcomes of offset {} differ",
                o.offset
            );
        }
        let last = *published.keys().last().unwrap();
        let replayed: BTreeMap<(u64, u32), Vec<u8>> = a
            .into_iter()
            .map(|(o, b)| ((o, Outcome::position(&b).unwrap().2), b))
            .filter(|(k, _)| *k <= last)
            .collect();
        assert_eq!(
            replayed.len(),
            published.len(),
            "shard {s}: outcomes published vs replayed"
        );
        assert!(
            replayed == published,
            "shard {s}: the event log is not the replay's"
        );
        for bytes in replayed.values() {
            for out in Outcome::decode(bytes).unwrap().outputs {
                if let Sent::Owned(OwnedOutput::Report {
                    kind, cl_ord_id, ..
                }) = out
                {
                    let cl = cl_ord_id.as_str().to_string();
                    match kind {
                        ReportKind::New => *applied_new.entry(cl).or_default() += 1,
                        ReportKind::Fill { qty, .. } => {
                            *replay_filled.entry(cl.clone()).or_default() += qty;
                            applied_new.entry(cl).or_default();
                        }
                        _ => {}
                    }
                }
            }
        }
        // Equal hashes wherever two engines of the shard took one.
        let mut by_offset: HashMap<u64, HashSet<String>> = HashMap::new();
        for id in ["a", "b"] {
            let p = d.join(format!("engines/shard-{s}-{id}/hashes.txt"));
            for line in std::fs::read_to_string(&p).unwrap_or_default().lines() {
                let (o, h) = line.split_once(' ').unwrap();
                by_offset
                    .entry(o.parse().unwrap())
                    .or_default()
                    .insert(h.into());
            }
        }
        assert!(by_offset.values().filter(|h| !h.is_empty()).count() > 2);
        for (o, h) in &by_offset {
            assert_eq!(
                h.len(),
                1,
                "shard {s}: engines' hashes differ at offset {o}: {h:?}"
            );
        }
    }
    let mut total = 0;
    for (k, s) in seen.iter().enumerate() {
        let s = s.lock().unwrap();
        for cl in &s.acked {
            let n = applied_new.get(cl).copied();
            assert!(
                matches!(n, Some(0 | 1)),
                "trader {k}: acknowledged {cl} accepted {n:?} times in the command logs"
            );
            total += 1;
        }
        for (cl, q) in &s.filled {
            let r = replay_filled.get(cl).copied().unwrap_or(0);
            // Gateway 1's traders read their sessions to the end; gateway 2's missed what
            // came while their gateway was down (a resend would bring it).
            if k < 2 {
                assert_eq!(r, *q, "trader {k}: fills of {cl}");
            } else {
                assert!(*q <= r, "trader {k}: fills of {cl}: {q} seen, {r} made");
            }
        }
    }
    assert!(total > 800, "{total} acknowledged orders");
}
