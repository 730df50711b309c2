//! `rialto bench http`: the order mix of `bench fix` over the REST API, open loop over N
//! keep-alive connections (an API key each), latency from each request's intended send time
//! to its answer. Prints the seeds' percentile table, the counters and one parseable summary
//! line (`rate_offered=.. rate_achieved=.. p50_us=.. ... ok=.. rejects=.. shed=.. errors=..`).
//!
//! With `--spawn-server` each run gets its own `rialto serve` child with a configuration
//! holding an API key per connection (tokens made for the run); otherwise `--token-file`
//! names the keys of the server at `--host`/`--port`. `--with-fix` runs `bench fix` at the
//! same total rate on a fresh server after each REST run (over `--rounds`, interleaved) and
//! prints both side by side (medians), then one line:
//! `rate_offered=.. rounds=.. rest_p50_us=.. rest_p99_us=.. ... fix_p50_us=.. fix_p99_us=..`.
//!
//! Glue only: the work is `loadgen::http_bench::run_http` and `loadgen::bench::run_fix`.

use super::bench_fix::{with_server, BotArgs};
use super::CmdResult;
use loadgen::bench::run_fix;
use loadgen::http_bench::{api_keys_config, run_http, HttpBench, HttpResult};
use loadgen::spawn::{SpawnSpec, SpawnedServer};
use loadgen::stats::{at, us, RunResult};
use loadgen::MixConfig;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// REST API host (loopback only on shared machines).
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// REST API port.
    #[arg(long, default_value_t = 8080)]
    port: u16,
    /// API tokens, one a line (connection i uses line i mod n); not with --spawn-server,
    /// which makes its own.
    #[arg(long, conflicts_with = "spawn_server")]
    token_file: Option<PathBuf>,
    /// Keep-alive connections, one request in flight each.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1000))]
    connections: u64,
    /// Requests per second over all connections (open loop).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    rate: u64,
    /// Measured period, seconds.
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// Unmeasured warm-up before it, seconds.
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Active-orders window: resting orders each connection keeps at most.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    window: u64,
    /// Seed of the connections' order generators.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Standard deviation of limit prices around the mid, in ticks.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(i64).range(1..=100_000))]
    sd_ticks: i64,
    /// Start `rialto serve` for each run (fresh temporary data dir, free ports, a config with
    /// an API key per connection; --host/--port are ignored).
    #[arg(long)]
    spawn_server: bool,
    /// Durability of the spawned server: process or fsync.
    #[arg(long, default_value = "process", requires = "spawn_server")]
    durability: String,
    /// Idle mode of the spawned server: park or spin.
    #[arg(long, default_value = "park", requires = "spawn_server")]
    server_idle: String,
    /// Pin the spawned server's event loop to this CPU.
    #[arg(long, requires = "spawn_server")]
    server_cpu: Option<usize>,
    /// Append the spawned server's output to this file after each run.
    #[arg(long, requires = "spawn_server")]
    server_log: Option<PathBuf>,
    /// Pin the generator's thread to this CPU.
    #[arg(long)]
    cpu: Option<usize>,
    /// Run the generator at this nice value (0-19).
    #[arg(long, value_parser = clap::value_parser!(i32).range(0..=19))]
    nice: Option<i32>,
    /// Also run `bench fix` at the same total rate (min(connections, 64) bots) on a fresh
    /// server after each REST run, and print both side by side.
    #[arg(long, requires = "spawn_server")]
    with_fix: bool,
    /// Rounds: REST (then FIX with --with-fix) once per round; the comparison takes medians.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100))]
    rounds: u64,
}

fn seconds(name: &str, v: f64) -> Result<Duration, String> {
    if !(0.0..=86_400.0).contains(&v) {
        return Err(format!("--{name} {v}: give seconds between 0 and 86400"));
    }
    Ok(Duration::from_secs_f64(v))
}

impl Args {
    /// The `bench fix` options of the FIX run beside the REST one.
    fn fix_args(&self, bots: u64) -> BotArgs {
        BotArgs {
            host: self.host,
            port: 0,
            bots: vec![bots],
            duration: self.duration,
            warmup: self.warmup,
            window: self.window,
            seed: self.seed,
            sd_ticks: self.sd_ticks,
            symbols: Vec::new(),
            target_comp_id: "RIALTO".into(),
            sender_prefix: "BOT".into(),
            spawn_server: true,
            durability: self.durability.clone(),
            server_idle: self.server_idle.clone(),
            server_cpu: self.server_cpu,
            server_log: self.server_log.clone(),
            cpu: self.cpu,
            nice: self.nice,
            tick_us: 100,
            spin_us: 0,
            wake_quantile: 0.95,
            spawn_cmd: None,
        }
    }

    fn tokens(&self) -> Result<Vec<String>, String> {
        if self.spawn_server {
            return (0..self.connections)
                .map(|_| loadgen::http::new_token().map(|(t, _)| t))
                .collect();
        }
        let path = self
            .token_file
            .as_ref()
            .ok_or("give --token-file FILE (the API tokens, one a line) or --spawn-server")?;
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let tokens: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        if tokens.is_empty() {
            return Err(format!("{}: no token in it", path.display()));
        }
        Ok(tokens)
    }
}

pub fn run(args: Args) -> CmdResult {
    let tokens = args.tokens()?;
    let spec = if args.spawn_server {
        // The FIX run's checks of these too (durability, idle mode).
        let s = args
            .fix_args(1)
            .spawn_spec()?
            .ok_or("no spawn spec for --spawn-server")?;
        Some(s.with_http(api_keys_config(&tokens)))
    } else {
        None
    };
    let stop = loadgen::bench::stop_on_ctrl_c()?;
    let mut b = HttpBench::new(SocketAddr::new(args.host, args.port), tokens);
    b.connections = args.connections as usize;
    b.rate = args.rate;
    b.warmup = seconds("warmup", args.warmup)?;
    b.duration = seconds("duration", args.duration)?;
    if b.duration.is_zero() {
        return Err("--duration must be more than 0".into());
    }
    b.window = args.window as usize;
    b.seed = args.seed;
    b.mix = MixConfig {
        sd_ticks: args.sd_ticks,
        ..MixConfig::default()
    };
    b.stop = stop.clone();
    b.cpu = args.cpu;
    b.nice = args.nice;
    let bots = args.connections.min(64);
    let rate_per_bot = (args.rate / bots).max(1);
    let mut rest_runs = Vec::new();
    let mut fix_runs = Vec::new();
    for round in 1..=args.rounds {
        if args.rounds > 1 || args.with_fix {
            println!("## round {round}: REST");
        }
        let r = http_run(&b, spec.as_ref())?;
        print!("{}", r.report());
        rest_runs.push(r);
        if args.with_fix && !stop.load(std::sync::atomic::Ordering::Relaxed) {
            println!("## round {round}: FIX");
            let fix = args.fix_args(bots);
            let f = with_server(spec.as_ref(), SocketAddr::new(args.host, 0), |addr| {
                let fb = fix.bench(addr, bots, rate_per_bot, stop.clone())?;
                eprintln!(
                    "bench fix: {bots} bots x {rate_per_bot} req/s = {} req/s offered to {addr}",
                    bots * rate_per_bot
                );
                run_fix(&fb, &mut std::io::stderr())
            })?;
            print!("{}", f.report());
            fix_runs.push(f);
        }
        if stop.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
    }
    if args.rounds > 1 || args.with_fix {
        print_comparison(args.rate, &rest_runs, &fix_runs);
    }
    cross_check_hint(&b);
    Ok(())
}

/// One REST run, against a spawned server when `spec` is given.
fn http_run(b: &HttpBench, spec: Option<&SpawnSpec>) -> Result<HttpResult, String> {
    let describe = |b: &HttpBench| {
        eprintln!(
            "bench http: {} connections, {} req/s offered to http://{}, warm-up {:?}, measured {:?}, window {}",
            b.connections, b.rate, b.addr, b.warmup, b.duration, b.window
        )
    };
    let Some(spec) = spec else {
        describe(b);
        return run_http(b, &mut std::io::stderr());
    };
    let server = SpawnedServer::start(spec)?;
    let addr = server
        .http_addr
        .ok_or("the spawned server serves no REST API")?;
    eprintln!(
        "started {} on {} (REST API on {addr}, data in {})",
        spec.program.display(),
        server.addr,
        server.data_dir.path().display()
    );
    let mut here = b.clone();
    here.addr = addr;
    describe(&here);
    let r = run_http(&here, &mut std::io::stderr());
    let stopped = server.stop();
    let r = r?;
    if let Err(e) = stopped {
        eprintln!("warning: {e}");
    }
    Ok(r)
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v.get(v.len() / 2).copied().unwrap_or(0)
}

/// The figures of one edge's runs: medians of the rates and percentiles, sums of the counts.
struct Row {
    achieved: u64,
    pcts: [u64; 5],
    ok: u64,
    rejects: u64,
    shed: u64,
    errors: u64,
}

const PCTS: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

fn row_of<'a>(
    runs: impl Iterator<Item = (f64, &'a hdrhistogram::Histogram<u64>, [u64; 4])> + Clone,
) -> Row {
    let mut pcts = [0u64; 5];
    for (i, q) in PCTS.iter().enumerate() {
        pcts[i] = median(runs.clone().map(|(_, h, _)| at(h, *q)).collect());
    }
    pcts[4] = median(
        runs.clone()
            .map(|(_, h, _)| if h.is_empty() { 0 } else { h.max() })
            .collect(),
    );
    let sum = |i: usize| runs.clone().map(|(_, _, c)| c[i]).sum::<u64>();
    Row {
        achieved: median(runs.clone().map(|(a, _, _)| a.round() as u64).collect()),
        pcts,
        ok: sum(0),
        rejects: sum(1),
        shed: sum(2),
        errors: sum(3),
    }
}

fn print_comparison(rate: u64, rest: &[HttpResult], fix: &[RunResult]) {
    let r = row_of(rest.iter().map(|r| {
        let c = &r.counters;
        (
            r.rate_achieved,
            &r.latency,
            [c.ok, c.rejects, c.shed, c.errors],
        )
    }));
    let f = (!fix.is_empty()).then(|| {
        row_of(fix.iter().map(|r| {
            let c = &r.counters;
            (
                r.rate_achieved,
                &r.latency,
                [c.acks, c.rejects, c.shed, c.errors],
            )
        }))
    });
    println!(
        "\nREST beside FIX at {rate} req/s offered, medians over {} round(s):",
        rest.len()
    );
    println!("| Edge | Achieved (req/s) | P50 (µs) | P90 (µs) | P99 (µs) | P99.9 (µs) | Max (µs) | OK | Rejects | Shed | Errors |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let line = |name: &str, x: &Row| {
        println!(
            "| {name} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            x.achieved,
            us(x.pcts[0]),
            us(x.pcts[1]),
            us(x.pcts[2]),
            us(x.pcts[3]),
            us(x.pcts[4]),
            x.ok,
            x.rejects,
            x.shed,
            x.errors
        )
    };
    line("REST", &r);
    if let Some(f) = &f {
        line("FIX", f);
    }
    let kv = |p: &str, x: &Row| {
        format!(
            " {p}_rate_achieved={} {p}_p50_us={} {p}_p90_us={} {p}_p99_us={} {p}_p999_us={} {p}_max_us={} {p}_ok={} {p}_rejects={} {p}_shed={} {p}_errors={}",
            x.achieved,
            us(x.pcts[0]),
            us(x.pcts[1]),
            us(x.pcts[2]),
            us(x.pcts[3]),
            us(x.pcts[4]),
            x.ok,
            x.rejects,
            x.shed,
            x.errors
        )
    };
    println!(
        "rate_offered={rate} rounds={}{}{}",
        rest.len(),
        kv("rest", &r),
        f.as_ref().map(|f| kv("fix", f)).unwrap_or_default()
    );
}

/// If `oha` or `wrk` is on PATH: the command that cross-checks one rate with it (IOC orders
/// far from the mid, which never rest), against a server that holds the key.
fn cross_check_hint(b: &HttpBench) {
    let on_path = |name: &str| {
        std::env::var_os("PATH")
            .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
    };
    let body = r#"{"symbol":"ACME","side":"buy","type":"limit","time_in_force":"ioc","price":"90.00","quantity":"1"}"#;
    if on_path("oha") {
        eprintln!(
            "cross-check with oha (against `rialto serve --config` holding the key TOKEN): oha -z {}s -q {} -c {} --latency-correction -m POST -H 'Authorization: Bearer TOKEN' -H 'Content-Type: application/json' -d '{body}' http://{}/api/v1/orders",
            b.duration.as_secs().max(1),
            b.rate,
            b.connections,
            b.addr
        );
    } else if on_path("wrk") {
        eprintln!(
            "cross-check with wrk (wrk2's -R for a fixed rate; plain wrk is closed loop): wrk -t1 -c{} -d{}s -s post.lua http://{}/api/v1/orders, post.lua setting wrk.method = \"POST\", wrk.body = '{body}' and the headers Authorization: Bearer TOKEN, Content-Type: application/json",
            b.connections,
            b.duration.as_secs().max(1),
            b.addr
        );
    }
}
