//! `rialto bench md`: the order mix at a fixed rate with 0, 10 and 50 market-data subscribers
//! in one run (the counts interleaved over `--rounds`): ExecutionReport -> market-data update
//! latency at the subscribers (P50, P99), and order-entry P50 with N subscribers over with 0.
//! The subscribers read FIX market data (`--transport fix`, the default) or the REST API's
//! WebSocket (`--transport ws`: channels `book` and `trades`). Prints one table row per run,
//! then one parseable line per count (medians over rounds): `subscribers=.. order_p50_us=..
//! ratio=.. update_p50_us=.. update_p99_us=.. arrival_p50_us=.. arrival_p99_us=..
//! messages=.. conflations=.. synced=..` (update: read to read; arrival: the kernel's receive
//! times, whatever the readers' backlog; counts summed over the rounds).
//!
//! Glue only: the work is `loadgen::md_bench::run_md`. With `--spawn-server` the run gets its
//! own `rialto serve` child (market data on a second free port, the REST API on a third).

use super::bench_fix::BotArgs;
use super::CmdResult;
use hdrhistogram::Histogram;
use loadgen::md_bench::{run_md, MdBench, MdRun, Transport};
use loadgen::spawn::SpawnedServer;
use loadgen::stats::at;
use std::net::SocketAddr;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    bots: BotArgs,
    /// Requests per second of each bot (open loop); 10 bots x 2,000 = the 20K/s of the goal.
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000))]
    rate: u64,
    /// Subscriber counts, each run once per round.
    #[arg(long, default_value = "0,10,50", value_delimiter = ',')]
    subscribers: Vec<usize>,
    /// Rounds: the counts interleaved (0,10,50,0,10,50,...); the summary takes medians.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100))]
    rounds: u64,
    /// The exchange's market-data port (default: --port + 1, as `rialto serve` listens).
    #[arg(long)]
    md_port: Option<u16>,
    /// Subscribers' SenderCompIDs are this prefix and 1..n (the default contract has MD1..MD64).
    #[arg(long, default_value = "MD")]
    md_prefix: String,
    /// How the subscribers read the market: `fix` (market data, full depth and trades) or `ws`
    /// (the REST API's WebSocket /ws, channels book and trades; an update is the first
    /// message that reflects the trade).
    #[arg(long, default_value = "fix", value_parser = ["fix", "ws"])]
    transport: String,
    /// The REST API's port, for `--transport ws` (default 8080, as `rialto serve` listens).
    #[arg(long, default_value_t = 8080)]
    http_port: u16,
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

pub fn run(args: Args) -> CmdResult {
    let ws = args.transport == "ws";
    let spec = match args.bots.spawn_spec()? {
        // `rialto serve` children: the REST API on a port of their own.
        Some(s) if ws && args.bots.spawn_server => Some(s.with_http_listen()),
        other => other,
    };
    let bots = args.bots.single_bots()?;
    if args.subscribers.iter().any(|&n| n > 10_000) {
        return Err("--subscribers: at most 10000 each".into());
    }
    let stop = loadgen::bench::stop_on_ctrl_c()?;
    // The subscribers' address: market data's, or the REST API's for `ws`.
    let bench = |addr: SocketAddr, sub_addr: SocketAddr| {
        let fix = args.bots.bench(addr, bots, args.rate, stop.clone())?;
        let transport = if ws {
            Transport::Ws { addr: sub_addr }
        } else {
            Transport::Fix {
                addr: sub_addr,
                sender_prefix: args.md_prefix.clone(),
            }
        };
        let b = MdBench {
            fix,
            transport,
            subscribers: args.subscribers.clone(),
            rounds: args.rounds as usize,
        };
        eprintln!(
            "bench md: {} bots x {} req/s = {} req/s to {addr}, subscribers {:?} over {} at {} ({} round(s)), warm-up {:?}, measured {:?}",
            b.fix.bots,
            b.fix.rate_per_bot,
            b.fix.bots as u64 * b.fix.rate_per_bot,
            b.subscribers,
            b.transport.name(),
            b.transport.addr(),
            b.rounds,
            b.fix.warmup,
            b.fix.duration
        );
        run_md(&b, &mut std::io::stderr())
    };
    let runs = match &spec {
        None if ws => {
            let addr = args.bots.addr();
            bench(addr, SocketAddr::new(addr.ip(), args.http_port))?
        }
        None => {
            let addr = args.bots.addr();
            let md_port = match args.md_port {
                Some(p) => p,
                None => addr
                    .port()
                    .checked_add(1)
                    .ok_or("no market-data port after 65535: give --md-port")?,
            };
            bench(addr, SocketAddr::new(addr.ip(), md_port))?
        }
        Some(spec) => {
            let server = SpawnedServer::start(spec)?;
            let sub_addr = if ws {
                server.http_addr.ok_or(
                    "the spawned server has no REST API port (put {http_port} in the command)",
                )?
            } else {
                server
                    .md_addr
                    .ok_or("the spawned server has no market-data port")?
            };
            eprintln!(
                "started {} on {} (subscribers to {sub_addr}, data in {})",
                spec.program.display(),
                server.addr,
                server.data_dir.path().display()
            );
            let r = bench(server.addr, sub_addr);
            let stopped = server.stop();
            let runs = r?;
            if let Err(e) = stopped {
                eprintln!("warning: {e}");
            }
            runs
        }
    };
    print_runs(&runs, &args.subscribers);
    Ok(())
}

fn print_runs(runs: &[MdRun], counts: &[usize]) {
    println!("{}", MdRun::HEADER);
    for r in runs {
        // Each run against the zero-subscriber run of its round.
        let base = runs
            .iter()
            .find(|z| z.round == r.round && z.subscribers == 0)
            .map(|z| at(&z.orders.latency, 50.0));
        println!("{}", r.row(base));
        if let Some(why) = &r.dropped_why {
            eprintln!(
                "round {}, {} subscribers: {} dropped, the first: {why}",
                r.round, r.subscribers, r.dropped
            );
        }
    }
    let zero = median(
        runs.iter()
            .filter(|r| r.subscribers == 0)
            .map(|r| at(&r.orders.latency, 50.0))
            .collect(),
    );
    for &n in counts {
        let of: Vec<&MdRun> = runs.iter().filter(|r| r.subscribers == n).collect();
        if of.is_empty() {
            continue;
        }
        let p50 = median(of.iter().map(|r| at(&r.orders.latency, 50.0)).collect());
        let ratios: Vec<u64> = of
            .iter()
            .filter_map(|r| {
                let z = runs
                    .iter()
                    .find(|z| z.round == r.round && z.subscribers == 0)?;
                let zp = at(&z.orders.latency, 50.0);
                (zp > 0).then(|| at(&r.orders.latency, 50.0) * 1000 / zp)
            })
            .collect();
        let ratio = if ratios.is_empty() {
            "-".to_string()
        } else {
            format!("{:.3}", median(ratios) as f64 / 1000.0)
        };
        let upd = |q: f64| med(&of, q, |r| &r.update_latency);
        let arr = |q: f64| med(&of, q, |r| &r.arrival_latency);
        println!(
            "subscribers={n} order_p50_us={:.1} ratio={ratio} update_p50_us={} update_p99_us={} arrival_p50_us={} arrival_p99_us={} trades={} messages={} read={} matched={} mismatched={} undecodable={} conflations={} dropped={} synced={} zero_p50_us={:.1}",
            p50 as f64 / 1000.0,
            upd(50.0),
            upd(99.0),
            arr(50.0),
            arr(99.0),
            of.iter().map(|r| r.trades).sum::<u64>(),
            of.iter().map(|r| r.md_messages).sum::<u64>(),
            of.iter().map(|r| r.entries_read).sum::<u64>(),
            of.iter().map(|r| r.matched).sum::<u64>(),
            of.iter().map(|r| r.mismatched).sum::<u64>(),
            of.iter().map(|r| r.undecodable).sum::<u64>(),
            of.iter().map(|r| r.conflations).sum::<u64>(),
            of.iter().map(|r| r.dropped).sum::<usize>(),
            of.iter().map(|r| r.synced).sum::<usize>(),
            zero as f64 / 1000.0
        );
    }
}

/// The median over `runs` of quantile `q` of the histogram `h` picks (µs text; `-` if none).
fn med(runs: &[&MdRun], q: f64, h: impl Fn(&MdRun) -> &Histogram<u64>) -> String {
    let v: Vec<u64> = runs
        .iter()
        .map(|r| h(r))
        .filter(|h| !h.is_empty())
        .map(|h| at(h, q))
        .collect();
    if v.is_empty() {
        "-".to_string()
    } else {
        format!("{:.1}", median(v) as f64 / 1000.0)
    }
}
