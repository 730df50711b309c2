//! `rialto bench engine`: drives the matching engine in process and reports throughput and
//! per-command latency.
//!
//! Method (also printed by every run):
//! 1. Build the stream before any timing: generate it (seeded, see `offline::stream_gen`) or
//!    preload `--orders FILE`.
//! 2. Warm-up: run the whole stream through a fresh engine, untimed.
//! 3. Throughput pass: a fresh engine runs the whole stream between two clock reads; the sink
//!    hashes every event (`offline::event_hash`), so the work cannot be skipped.
//! 4. Latency pass: a fresh engine runs the stream again, each command between two
//!    `std::time::Instant` reads recorded into an HdrHistogram (3 significant digits). Each
//!    sample includes the cost of one clock read (printed as `clock overhead`). Its event hash
//!    must equal the throughput pass's.
//!
//! The last line of output is the one scripts parse:
//! `ops=N ops_per_s=N p50_ns=N p99_ns=N p999_ns=N hash=HEX`.
//!
//! Never: times stream generation, parsing, or engine construction.

use super::{open, read_instruments, CmdResult};
use engine::{Engine, EngineConfig};
use hdrhistogram::Histogram;
use offline::event_hash::EventHasher;
use offline::stream_gen::{self, GenConfig};
use offline::symbols::SymbolTable;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use types::{Command, Matcher};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Preload this order stream CSV instead of generating one.
    #[arg(long, value_name = "FILE")]
    orders: Option<PathBuf>,
    /// Instruments CSV for `--orders` (header `symbol,tick,lot`).
    #[arg(long, value_name = "FILE", requires = "orders")]
    instruments: Option<PathBuf>,
    /// Seed of the generated stream.
    #[arg(long, default_value_t = 1, conflicts_with = "orders")]
    seed: u64,
    /// Number of commands to generate.
    #[arg(long, default_value_t = 1_000_000, conflicts_with = "orders")]
    ops: usize,
    /// Number of books (symbols) in the generated stream.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=1024), conflicts_with = "orders")]
    symbols: u32,
    /// Number of accounts in the generated stream.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..), conflicts_with = "orders")]
    accounts: u32,
    /// Number of resting orders the generator steers towards.
    #[arg(long, default_value_t = 5_000, conflicts_with = "orders")]
    resting: usize,
    /// Standard deviation of generated limit prices around the mid, in ticks.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(i64).range(1..=1_000), conflicts_with = "orders")]
    sd_ticks: i64,
    /// Also write the stream as an order CSV (replayable with `rialto match` or `--orders`).
    #[arg(long, value_name = "FILE")]
    save_orders: Option<PathBuf>,
    /// Untimed warm-up passes before the measured ones.
    #[arg(long, default_value_t = 1)]
    warmup: u32,
    /// Also run the stream through the naive reference model and require the same event hash.
    #[arg(long)]
    check: bool,
}

fn new_engine(symbols: &SymbolTable) -> Result<Engine, String> {
    Engine::try_new(symbols.instruments(), EngineConfig::default())
        .map_err(|e| format!("building the engine: {e}"))
}

/// Runs `commands` through `m`, returning the event hasher.
fn replay<M: Matcher>(m: &mut M, commands: &[Command]) -> EventHasher {
    let mut hasher = EventHasher::new();
    for cmd in commands {
        m.apply(cmd, &mut hasher);
    }
    hasher
}

/// Median cost of one `Instant::now()` in ns, from back-to-back reads.
fn clock_overhead_ns() -> u64 {
    let mut samples: Vec<u64> = (0..1001)
        .map(|_| {
            let t0 = Instant::now();
            let mut t1 = t0;
            for _ in 0..100 {
                t1 = Instant::now();
            }
            (t1 - t0).as_nanos() as u64 / 100
        })
        .collect();
    samples.sort_unstable();
    samples[samples.len() / 2]
}

pub fn run(args: Args) -> CmdResult {
    let (symbols, commands, source) = match &args.orders {
        Some(path) => {
            let mut symbols = read_instruments(args.instruments.as_deref())?;
            let commands = offline::orders_csv::read_all(open(path)?, &mut symbols)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            (symbols, commands, format!("preloaded {}", path.display()))
        }
        None => {
            let cfg = GenConfig {
                seed: args.seed,
                ops: args.ops,
                symbols: args.symbols,
                accounts: args.accounts,
                resting_target: args.resting,
                sd_ticks: args.sd_ticks,
                ..GenConfig::default()
            };
            let symbols = stream_gen::symbol_table(&cfg);
            let mut gen_engine = new_engine(&symbols)?;
            let (commands, mix) = stream_gen::generate(&cfg, &mut gen_engine);
            drop(gen_engine);
            let pct = |n: u64| 100.0 * n as f64 / commands.len().max(1) as f64;
            let source = format!(
                "generated seed={} symbols={} accounts={}: new {:.1}% (ioc {:.1}%, fok {:.1}%, \
                 market {:.1}%, post-only {:.1}%, day {:.1}%), cancel {:.1}%, replace {:.1}%; \
                 {} trades; resting max {} / at end {}",
                cfg.seed,
                cfg.symbols,
                cfg.accounts,
                pct(mix.new),
                pct(mix.new_ioc),
                pct(mix.new_fok),
                pct(mix.new_market),
                pct(mix.new_post_only),
                pct(mix.new_day),
                pct(mix.cancel),
                pct(mix.replace),
                mix.trades,
                mix.resting_max,
                mix.resting_at_end,
            );
            (symbols, commands, source)
        }
    };
    let ops = commands.len() as u64;
    println!("rialto bench engine: {ops} commands, {source}");
    if let Some(path) = &args.save_orders {
        save_orders(path, &commands, &symbols).map_err(|e| format!("{}: {e}", path.display()))?;
        println!("stream written to {}", path.display());
    }

    for _ in 0..args.warmup {
        let mut e = new_engine(&symbols)?;
        std::hint::black_box(replay(&mut e, &commands).finish());
    }

    // Throughput pass.
    let mut e = new_engine(&symbols)?;
    let start = Instant::now();
    let hasher = replay(&mut e, &commands);
    let elapsed = start.elapsed();
    let hash = hasher.finish();
    let state_hash = e.state_hash();
    let resting = e.resting_count();
    e.check_invariants()
        .map_err(|m| format!("engine invariant broken after the stream: {m}"))?;
    drop(e);

    // Latency pass.
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000_000, 3)
        .map_err(|e| format!("histogram: {e}"))?;
    let mut e = new_engine(&symbols)?;
    let mut lat_hasher = EventHasher::new();
    for cmd in &commands {
        let t0 = Instant::now();
        e.apply(cmd, &mut lat_hasher);
        let dt = t0.elapsed();
        hist.saturating_record(dt.as_nanos().max(1) as u64);
    }
    drop(e);
    if lat_hasher.finish() != hash {
        return Err("the latency pass produced different events than the throughput pass".into());
    }

    if args.check {
        let mut r = model::Reference::new(symbols.instruments());
        let ref_hash = replay(&mut r, &commands).finish();
        r.check_invariants()
            .map_err(|m| format!("reference invariant broken: {m}"))?;
        if ref_hash != hash {
            return Err(format!(
                "check failed: engine hash {hash:016x} != reference hash {ref_hash:016x}"
            )
            .into());
        }
        println!(
            "check: the reference model produced the same {} events (hash {ref_hash:016x})",
            hasher.events()
        );
    }

    let secs = elapsed.as_secs_f64().max(1e-9);
    let ops_per_s = (ops as f64 / secs) as u64;
    println!(
        "method: {} untimed warm-up pass(es); throughput = whole stream between two clock reads, \
         events hashed in the loop; latency = every command between two Instant reads into an \
         HdrHistogram (clock overhead ~{} ns per sample, included)",
        args.warmup,
        clock_overhead_ns()
    );
    println!(
        "throughput: {:.2} M commands/s ({} commands in {:.1} ms); {} events; {} orders resting \
         at end; engine state hash {:016x}",
        ops_per_s as f64 / 1e6,
        ops,
        duration_ms(elapsed),
        hasher.events(),
        resting,
        state_hash
    );
    println!("latency per command (ns):");
    for (label, q) in [
        ("p50", 0.5),
        ("p90", 0.9),
        ("p99", 0.99),
        ("p99.9", 0.999),
        ("p99.99", 0.9999),
    ] {
        println!("  {label:<7} {:>9}", hist.value_at_quantile(q));
    }
    println!("  {:<7} {:>9}", "max", hist.max());
    println!("  {:<7} {:>9.1}", "mean", hist.mean());
    println!(
        "ops={ops} ops_per_s={ops_per_s} p50_ns={} p99_ns={} p999_ns={} hash={hash:016x}",
        hist.value_at_quantile(0.5),
        hist.value_at_quantile(0.99),
        hist.value_at_quantile(0.999)
    );
    Ok(())
}

fn save_orders(
    path: &std::path::Path,
    commands: &[Command],
    symbols: &SymbolTable,
) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(out, "{}", offline::orders_csv::HEADER_WITH_STP)?;
    let mut line = Vec::with_capacity(128);
    for cmd in commands {
        line.clear();
        offline::orders_csv::push_command(&mut line, cmd, symbols);
        out.write_all(&line)?;
    }
    out.flush()
}

fn duration_ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
