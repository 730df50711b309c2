//! FIX round trip on loopback: NewOrderSingle to its first ExecutionReport, open loop at a
//! fixed rate, latency measured from each order's intended send time (no coordinated
//! omission). Starts the server in-process on a temp data dir unless `--addr` is given.
//!
//! `cargo run --release -p server --example fix_rtt -- [--durability process|fsync]
//!  [--rate 2000] [--count 20000] [--addr 127.0.0.1:9878]`
//!
//! Orders alternate buy (account 1) and sell (account 1000001, a second account of CLIENT1's
//! firm in the in-process config) at one price, so each pair trades and the book stays flat.
//! Against an external server (`--addr`) that firm must have both accounts.
//! Prints p50/p90/p99/p99.9/max in microseconds and a `rate=.. p50_us=..` summary line.

use fix::client::FixClient;
use server::{Config, Durability, Server};
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut durability = Durability::Process;
    let mut rate: u64 = 2000;
    let mut count: usize = 20_000;
    let mut addr: Option<std::net::SocketAddr> = None;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < args.len() {
        let v = args.get(i + 1).ok_or("missing value")?;
        match args[i].as_str() {
            "--durability" => {
                durability = match v.as_str() {
                    "fsync" => Durability::Fsync,
                    "process" => Durability::Process,
                    _ => return Err("--durability process|fsync".into()),
                }
            }
            "--rate" => rate = v.parse()?,
            "--count" => count = v.parse()?,
            "--addr" => addr = Some(v.parse()?),
            other => return Err(format!("unknown option {other}").into()),
        }
        i += 2;
    }
    let tmp = std::env::temp_dir().join(format!("rialto-rtt-{}", std::process::id()));
    let server = match addr {
        Some(_) => None,
        None => {
            // CLIENT1's firm gets a second account so its buys and sells trade with each
            // other instead of being stopped by self-trade prevention.
            let mut cfg = Config::defaults();
            cfg.firms[0].accounts = vec![1, 1_000_001];
            cfg.listen = "127.0.0.1:0".parse()?;
            cfg.data_dir = tmp.clone();
            cfg.durability = durability;
            Some(Server::start(cfg, Arc::new(|_: &str| {}))?)
        }
    };
    let addr = addr.unwrap_or_else(|| server.as_ref().map(|s| s.addr).expect("server"));
    let mut c = FixClient::connect(addr, "CLIENT1", "RIALTO", 1)?;
    c.logon(30, true)?;
    c.expect("A", Duration::from_secs(5))?;
    let first_seq = c.out_seq;
    let intended: Arc<Vec<AtomicU64>> = Arc::new((0..count).map(|_| AtomicU64::new(0)).collect());
    let mut tx = c.try_clone_stream()?;
    let t0 = Instant::now();
    let period_ns = 1_000_000_000 / rate.max(1);
    let sender = {
        let intended = intended.clone();
        std::thread::spawn(move || -> std::io::Result<()> {
            let mut enc = fix::Encoder::default();
            for i in 0..count {
                // Open loop without spinning (the machine has 2 cores): sleep until the next
                // order is due, then send every order that is due; each keeps its intended
                // time, so lateness of the sender counts against the latency.
                // At low rates (period >= 200 us) the last 100 us are waited by yielding, so
                // sleep overshoot does not count as exchange latency.
                let due = Duration::from_nanos(i as u64 * period_ns);
                let now = t0.elapsed();
                let margin = if period_ns >= 200_000 {
                    Duration::from_micros(100)
                } else {
                    Duration::ZERO
                };
                if due > now + margin {
                    std::thread::sleep(due - now - margin);
                }
                while t0.elapsed() < due {
                    std::thread::yield_now();
                }
                intended[i].store(due.as_nanos() as u64, Ordering::Release);
                enc.begin(b"D");
                enc.header(&fix::Header {
                    sender_comp_id: b"CLIENT1",
                    target_comp_id: b"RIALTO",
                    msg_seq_num: first_seq + i as u64,
                    sending_time_ns: 1_800_000_000_000_000_000,
                    poss_dup: false,
                    orig_sending_time: None,
                    time_precision: fix::TimePrecision::Millis,
                });
                let cl = format!("r{i}");
                let (side, account): (&[u8], &[u8]) = if i % 2 == 0 {
                    (b"1", b"1")
                } else {
                    (b"2", b"1000001")
                };
                enc.field(11, cl.as_bytes());
                enc.field(55, b"ACME");
                enc.field(54, side);
                enc.field(38, b"1");
                enc.field(40, b"2");
                enc.field(44, b"10.00");
                enc.field(59, b"1");
                enc.field(1, account);
                tx.write_all(enc.finish(fix::FixVersion::Fix44))?;
            }
            Ok(())
        })
    };
    let mut lat_ns: Vec<u64> = Vec::with_capacity(count);
    let mut seen = vec![false; count];
    let deadline =
        Instant::now() + Duration::from_secs(60) + Duration::from_nanos(period_ns * count as u64);
    while lat_ns.len() < count && Instant::now() < deadline {
        let Some(m) = c.recv(Duration::from_secs(1))? else {
            continue;
        };
        let now = t0.elapsed().as_nanos() as u64;
        if m.msg_type() != "8" {
            continue;
        }
        let Some(ix) = m
            .get(11)
            .and_then(|s| s.strip_prefix('r'))
            .and_then(|s| s.parse::<usize>().ok())
        else {
            continue;
        };
        if ix < count && !seen[ix] {
            seen[ix] = true;
            lat_ns.push(now.saturating_sub(intended[ix].load(Ordering::Acquire)));
        }
    }
    sender.join().map_err(|_| "sender panicked")??;
    let elapsed = t0.elapsed().as_secs_f64();
    lat_ns.sort_unstable();
    let pct = |p: f64| -> f64 {
        if lat_ns.is_empty() {
            return 0.0;
        }
        let i = ((p / 100.0) * (lat_ns.len() - 1) as f64).round() as usize;
        lat_ns[i] as f64 / 1000.0
    };
    println!(
        "FIX NewOrderSingle -> first ExecutionReport, loopback, durability {}, {} orders at {}/s",
        durability.as_str(),
        lat_ns.len(),
        rate
    );
    println!("Percentile : Microseconds");
    for p in [50.0, 90.0, 99.0, 99.9, 100.0] {
        println!("{p:>9}% : {:.1}", pct(p));
    }
    println!(
        "rate_offered={rate} rate_achieved={:.0} p50_us={:.1} p99_us={:.1} p999_us={:.1} max_us={:.1} missing={}",
        lat_ns.len() as f64 / elapsed,
        pct(50.0),
        pct(99.0),
        pct(99.9),
        pct(100.0),
        count - lat_ns.len()
    );
    drop(c);
    if let Some(s) = server {
        s.shutdown()?;
        let _ = std::fs::remove_dir_all(&tmp);
    }
    Ok(())
}
