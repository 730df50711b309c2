//! Micro benchmark of the engine alone (no I/O, no threads): replays a command stream and prints
//! ns per command. Run with `--release`.
//!
//! ```text
//! cargo run --release -p engine --example bench -- mixed [commands] [seed]
//! cargo run --release -p engine --example bench -- flash1 FILE.bin [FILE.bin ...]
//! cargo run --release -p engine --example bench -- uncross [resting orders]
//! ```
//! `mixed` replays the seeded mixed stream of `tests/common/mixed.rs` (58% new incl. IOC and
//! market, 32% cancel, 10% replace, 4 books): once for throughput, once timing each command for
//! percentiles. `flash1` replays workload files written by the flash1 harness's generator
//! (16-byte header, 40-byte records) the way the flash1 adapter drives the engine (one account,
//! STP off, modify = `modify_requeue`), five runs each (`BENCH_RUNS=n` to change), and prints
//! the median rate. `uncross` fills a book in a call auction with crossing orders (half buys,
//! half sells over the same 200 ticks, one in ten an iceberg) and times the `Uncross` on fresh
//! copies of it, eleven times, printing the median. Each run ends with a hash of the event
//! stream, so a faster build must produce the same events.

use std::time::Instant;

use engine::{Engine, EngineConfig};
use types::{Command, Event, EventSink, Instrument, Matcher, NewOrder, OrdType, Side, StpMode};
use types::{Symbol, TimeInForce};

#[path = "../tests/common/mixed.rs"]
mod mixed;

/// Folds every event into a running hash (cheap; keeps the optimizer honest).
struct HashSink {
    h: u64,
    n: u64,
}

impl HashSink {
    fn new() -> HashSink {
        HashSink { h: 0, n: 0 }
    }
    #[inline]
    fn mix(&mut self, a: u64, b: u64) {
        self.h = (self.h ^ a.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ b).rotate_left(23);
        self.n += 1;
    }
}

impl EventSink for HashSink {
    #[inline]
    fn on_event(&mut self, e: &Event) {
        match *e {
            Event::Accepted { id, qty, .. } => self.mix(id, qty),
            Event::Rejected { id, .. } => self.mix(id, 1),
            Event::Trade {
                maker_id,
                taker_id,
                qty,
                price,
                ..
            } => self.mix(maker_id ^ taker_id << 20, qty ^ (price as u64) << 16),
            Event::Canceled { id, qty, .. } => self.mix(id, qty << 3),
            Event::Replaced { id, qty, price, .. } => self.mix(id, qty ^ (price as u64) << 8),
            Event::MassCanceled { count, .. } => self.mix(count, 5),
            Event::Level { price, qty, .. } => self.mix(price as u64, qty),
            Event::Triggered { id, qty, .. } => self.mix(id, qty << 5),
            Event::Uncrossed { price, qty, .. } => self.mix(price as u64, qty << 7),
        }
    }
}

/// Like `HashSink` but ignores `Level` events, as the flash1 adapter does.
struct ReportSink(HashSink);

impl EventSink for ReportSink {
    #[inline]
    fn on_event(&mut self, e: &Event) {
        if !matches!(e, Event::Level { .. }) {
            self.0.on_event(e);
        }
    }
}

/// Nanoseconds this thread has spent on a CPU (Linux `schedstat`), so runs on a busy machine
/// can be compared without the time spent descheduled. 0 where unavailable.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    sorted[((sorted.len() as f64 * p) as usize).min(sorted.len() - 1)]
}

/// Runs the mixed stream; returns the event hash.
fn run_mixed(n: usize, seed: u64) -> u64 {
    let mut gen = mixed::Mixed::new(seed);
    let cmds: Vec<Command> = (0..n).map(|_| gen.next_command()).collect();
    let mut e = Engine::new(&mixed::instruments(), EngineConfig::default());
    let mut sink = HashSink::new();
    let c0 = cpu_ns();
    let t0 = Instant::now();
    for c in &cmds {
        e.apply(c, &mut sink);
    }
    let dt = t0.elapsed();
    let cpu = cpu_ns() - c0;
    let rate = n as f64 / dt.as_secs_f64();
    // Second pass, fresh engine, each command timed.
    let mut e2 = Engine::new(&mixed::instruments(), EngineConfig::default());
    let mut sink2 = HashSink::new();
    let mut lat = Vec::with_capacity(n);
    for c in &cmds {
        let t = Instant::now();
        e2.apply(c, &mut sink2);
        lat.push(t.elapsed().as_nanos() as u64);
    }
    assert_eq!(sink.h, sink2.h, "deterministic");
    lat.sort_unstable();
    println!(
        "mixed: {n} commands, {:.1} ns/cmd wall, {:.1} ns/cmd on cpu, {:.2} M cmd/s, {} events, {} resting at end",
        dt.as_nanos() as f64 / n as f64,
        cpu as f64 / n as f64,
        rate / 1e6,
        sink.n,
        e.resting_count()
    );
    println!(
        "ops={n} ops_per_s={:.0} p50_ns={} p99_ns={} p999_ns={} hash={:016x}",
        rate,
        percentile(&lat, 0.50),
        percentile(&lat, 0.99),
        percentile(&lat, 0.999),
        sink.h ^ e.state_hash()
    );
    sink.h ^ e.state_hash()
}

enum Flash1Msg {
    New(NewOrder),
    Cancel(u64),
    Modify(u64, i64, u64),
}

fn load_flash1(path: &str) -> Vec<Flash1Msg> {
    let b = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    parse_flash1(&b).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// Parses a flash1 workload file: 16-byte header (magic, version, count), 40-byte records.
fn parse_flash1(b: &[u8]) -> Result<Vec<Flash1Msg>, String> {
    if b.len() < 16 {
        return Err("shorter than the header".into());
    }
    let count = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    if b.len() != 16 + count * 40 {
        return Err(format!("{} bytes for {count} records", b.len()));
    }
    let rd = |r: &[u8], o: usize| u64::from_le_bytes(r[o..o + 8].try_into().unwrap());
    let msgs = b[16..]
        .chunks_exact(40)
        .map(|r| {
            let qty = u32::from_le_bytes(r[4..8].try_into().unwrap()) as u64;
            let id = rd(r, 16);
            let price = rd(r, 24) as i64;
            match r[0] {
                0 => Flash1Msg::New(NewOrder {
                    id,
                    account: 1,
                    symbol: 0,
                    side: if r[1] == 0 { Side::Buy } else { Side::Sell },
                    ord_type: OrdType::Limit,
                    tif: if r[2] != 0 {
                        TimeInForce::Ioc
                    } else {
                        TimeInForce::Gtc
                    },
                    price,
                    qty,
                    post_only: false,
                    stp: StpMode::None,
                    ..Default::default()
                }),
                1 => Flash1Msg::Cancel(id),
                _ => Flash1Msg::Modify(id, price, qty),
            }
        })
        .collect();
    Ok(msgs)
}

/// Replays flash1 messages (named `name` in the output); returns the report-stream hash.
fn run_flash1(name: &str, msgs: &[Flash1Msg]) -> u64 {
    let inst = [Instrument {
        symbol: Symbol::new("X").unwrap(),
        tick: 1,
        lot: 1,
    }];
    let runs: usize = std::env::var("BENCH_RUNS").map_or(5, |v| v.parse().expect("BENCH_RUNS"));
    let mut rates = Vec::new();
    let mut cpu_rates = Vec::new();
    let mut hash = 0;
    for _ in 0..runs.max(1) {
        let mut e = Engine::new(&inst, EngineConfig::default());
        let mut sink = ReportSink(HashSink::new());
        let c0 = cpu_ns();
        let t0 = Instant::now();
        for m in msgs {
            match *m {
                Flash1Msg::New(ref o) => e.apply(&Command::New(*o), &mut sink),
                Flash1Msg::Cancel(id) => e.apply(
                    &Command::Cancel {
                        id,
                        account: 1,
                        symbol: 0,
                    },
                    &mut sink,
                ),
                Flash1Msg::Modify(id, p, q) => e.modify_requeue(id, 1, 0, p, q, &mut sink),
            }
        }
        let dt = t0.elapsed();
        let cpu = cpu_ns() - c0;
        rates.push(msgs.len() as f64 / dt.as_secs_f64());
        cpu_rates.push(msgs.len() as f64 * 1e9 / cpu.max(1) as f64);
        hash = sink.0.h;
    }
    if std::env::var_os("BENCH_STATS").is_some() {
        let mut e = Engine::new(&inst, EngineConfig::default());
        let (mut max, mut sum) = (0usize, 0usize);
        for m in msgs {
            let mut sink = types::NullSink;
            match *m {
                Flash1Msg::New(ref o) => e.apply(&Command::New(*o), &mut sink),
                Flash1Msg::Cancel(id) => e.apply(
                    &Command::Cancel {
                        id,
                        account: 1,
                        symbol: 0,
                    },
                    &mut sink,
                ),
                Flash1Msg::Modify(id, p, q) => e.modify_requeue(id, 1, 0, p, q, &mut sink),
            }
            max = max.max(e.resting_count());
            sum += e.resting_count();
        }
        println!(
            "  resting: max {max}, mean {}, end {}; bid {:?} ask {:?}",
            sum / msgs.len(),
            e.resting_count(),
            e.best_bid(0),
            e.best_ask(0)
        );
    }
    rates.sort_by(|a, b| a.total_cmp(b));
    cpu_rates.sort_by(|a, b| a.total_cmp(b));
    println!(
        "flash1 {}: {} msgs, median {:.2} M msgs/s ({:.1} ns/msg), min {:.2}, max {:.2}; on cpu: median {:.2} M/s ({:.1} ns/msg) hash={hash:016x}",
        name,
        msgs.len(),
        rates[rates.len() / 2] / 1e6,
        1e9 / rates[rates.len() / 2],
        rates[0] / 1e6,
        rates[rates.len() - 1] / 1e6,
        cpu_rates[cpu_rates.len() / 2] / 1e6,
        1e9 / cpu_rates[cpu_rates.len() / 2]
    );
    hash
}

/// Times the uncross of `n` resting orders in a call (see the module docs).
fn run_uncross(n: usize) {
    let sym = Symbol::new("AUCT").expect("symbol");
    let config = EngineConfig {
        orders_max: n + 1024,
        ..EngineConfig::default()
    };
    let mut e = Engine::new(
        &[Instrument {
            symbol: sym,
            tick: 1,
            lot: 1,
        }],
        config,
    );
    e.apply(&Command::CallStart { symbol: 0 }, &mut HashSink::new());
    let mut r = types::XorShift64::new(0x5eed);
    for id in 1..=n as u64 {
        let side = if id % 2 == 0 { Side::Buy } else { Side::Sell };
        let qty = 1 + r.below(10);
        let o = NewOrder {
            id,
            account: 1 + r.below(64) as u32,
            symbol: 0,
            side,
            ord_type: OrdType::Limit,
            tif: TimeInForce::Gtc,
            price: 9_900 + r.below(201) as i64,
            qty,
            post_only: false,
            stp: StpMode::CancelNewest,
            display_qty: if r.below(10) == 0 { 1 + qty / 3 } else { 0 },
            ..NewOrder::default()
        };
        e.apply(&Command::New(o), &mut HashSink::new());
    }
    let (price, volume) = e.indicative(0, 10_000).expect("a crossed book");
    let mut ms = Vec::new();
    let mut hash = 0;
    let mut events = 0;
    for _ in 0..11 {
        let mut copy = e.clone();
        let mut sink = HashSink::new();
        let t = Instant::now();
        copy.apply(
            &Command::Uncross {
                symbol: 0,
                reference: 10_000,
            },
            &mut sink,
        );
        ms.push(t.elapsed().as_secs_f64() * 1e3);
        assert!(!copy.in_call(0));
        (hash, events) = (sink.h, sink.n);
    }
    ms.sort_by(f64::total_cmp);
    println!(
        "uncross of {n} resting orders: {volume} lots at {price}, {events} events; \
         {:.2} ms median (min {:.2}, max {:.2}) of 11; hash {hash:016x}",
        ms[5], ms[0], ms[10]
    );
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("uncross") => run_uncross(args.get(1).map_or(100_000, |s| s.parse().expect("orders"))),
        Some("flash1") if args.len() > 1 => {
            for p in &args[1..] {
                run_flash1(p.rsplit('/').next().unwrap_or(p), &load_flash1(p));
            }
        }
        Some("mixed") | None => {
            let n = args
                .get(1)
                .map_or(2_000_000, |s| s.parse().expect("commands"));
            let seed = args.get(2).map_or(7, |s| s.parse().expect("seed"));
            run_mixed(n, seed);
        }
        _ => {
            eprintln!(
                "usage: bench mixed [commands] [seed] | bench flash1 FILE.bin... | bench uncross [orders]"
            );
            std::process::exit(2);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: u8, side: u8, ioc: u8, qty: u32, id: u64, price: i64) -> Vec<u8> {
        let mut r = vec![kind, side, ioc, 0];
        r.extend_from_slice(&qty.to_le_bytes());
        r.extend_from_slice(&0u64.to_le_bytes());
        r.extend_from_slice(&id.to_le_bytes());
        r.extend_from_slice(&price.to_le_bytes());
        r.extend_from_slice(&0i64.to_le_bytes());
        r
    }

    #[test]
    fn mixed_runs_deterministically_with_tiny_parameters() {
        assert_eq!(run_mixed(3_000, 5), run_mixed(3_000, 5));
        assert_ne!(run_mixed(3_000, 5), run_mixed(3_000, 6));
    }

    #[test]
    fn uncross_runs_with_tiny_parameters() {
        run_uncross(2_000);
    }

    #[test]
    fn flash1_records_parse_and_replay() {
        let records = [
            record(0, 0, 0, 10, 1, 100), // buy 10 @ 100
            record(0, 1, 1, 4, 2, 99),   // IOC sell 4 @ 99: trades
            record(2, 0, 0, 8, 1, 101),  // modify the buy
            record(1, 0, 0, 0, 1, 0),    // cancel it
            record(1, 0, 0, 0, 1, 0),    // cancel again: rejected
        ];
        let mut b = Vec::new();
        b.extend_from_slice(&0x4D45_4257_5F30_3031u64.to_le_bytes());
        b.extend_from_slice(&1u32.to_le_bytes());
        b.extend_from_slice(&(records.len() as u32).to_le_bytes());
        for r in &records {
            b.extend_from_slice(r);
        }
        let msgs = parse_flash1(&b).unwrap();
        assert_eq!(msgs.len(), 5);
        assert!(
            matches!(msgs[1], Flash1Msg::New(o) if o.tif == TimeInForce::Ioc && o.side == Side::Sell)
        );
        assert!(matches!(msgs[2], Flash1Msg::Modify(1, 101, 8)));
        assert!(matches!(msgs[3], Flash1Msg::Cancel(1)));
        assert_eq!(run_flash1("tiny", &msgs), run_flash1("tiny", &msgs));
        assert!(parse_flash1(&b[..b.len() - 1]).is_err());
        assert!(parse_flash1(&b[..10]).is_err());
    }
}
