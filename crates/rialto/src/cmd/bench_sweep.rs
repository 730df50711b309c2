//! `rialto bench sweep`: one `bench fix` run per offered rate, then the seeds' latency-vs-load
//! table (`Load (K rps) | P50 | P90 | P99 | P999 | P9999`, µs) with the knee marked (the first
//! run with P99 >= 1 ms, achieved < 95% of offered, > 1% shed, or errors), written also to
//! `DIR/sweep.csv` and `DIR/sweep.svg` (latency percentiles against load, log scale).
//!
//! `--rates` are totals over all bots (each bot gets rate / bots). With `--spawn-server` every
//! run gets a fresh `rialto serve` (so a sweep is one command); without it, the sweep drives
//! whatever listens on --host/--port (e.g. the QuickFIX/J reference exchange on 9879).

use super::bench_fix::{with_server, BotArgs};
use super::CmdResult;
use loadgen::bench::run_fix;
use loadgen::sweep::{self, SweepRow};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    bots: BotArgs,
    /// Offered total rates, requests/s (`10000,20000,50k`).
    #[arg(long, default_value = "10k,20k,50k,100k,150k,200k")]
    rates: String,
    /// Output directory for sweep.csv and sweep.svg.
    #[arg(long, default_value = "sweep-out")]
    out: PathBuf,
    /// Stop after this many overloaded runs (0: run every rate).
    #[arg(long, default_value_t = 2)]
    stop_after_overloads: usize,
    /// Title of the chart.
    #[arg(long)]
    title: Option<String>,
}

pub fn run(args: Args) -> CmdResult {
    let rates = sweep::parse_rates(&args.rates)?;
    let spec = args.bots.spawn_spec()?;
    std::fs::create_dir_all(&args.out).map_err(|e| format!("{}: {e}", args.out.display()))?;
    let bots = args.bots.bots;
    let mut rows: Vec<SweepRow> = Vec::new();
    let mut overloads = 0;
    for &rate in &rates {
        let per_bot = rate.div_ceil(bots).max(1);
        eprintln!(
            "== sweep: {} req/s offered ({bots} bots x {per_bot}/s)",
            per_bot * bots
        );
        let result = with_server(spec.as_ref(), args.bots.addr(), |addr| {
            let b = args.bots.bench(addr, per_bot)?;
            run_fix(&b, &mut std::io::stderr())
        })?;
        eprint!("{}", result.counters_text());
        println!("{}", result.summary_line());
        let row = SweepRow::from_result(&result);
        let overloaded = row.overload().is_some();
        rows.push(row);
        if overloaded {
            overloads += 1;
            if args.stop_after_overloads > 0 && overloads >= args.stop_after_overloads {
                eprintln!("== {overloads} overloaded runs: stopping the sweep");
                break;
            }
        }
    }
    let target = match (&spec, args.bots.spawn_server) {
        (Some(_), true) => format!("rialto serve ({})", args.bots.durability),
        (Some(s), false) => s.program.display().to_string(),
        (None, _) => args.bots.addr().to_string(),
    };
    let title = args.title.clone().unwrap_or_else(|| {
        format!(
            "Latency vs load: {target}, {bots} bots, NewOrderSingle/Cancel/Replace -> first report"
        )
    });
    let csv_path = args.out.join("sweep.csv");
    let svg_path = args.out.join("sweep.svg");
    std::fs::write(&csv_path, sweep::csv(&rows))
        .map_err(|e| format!("{}: {e}", csv_path.display()))?;
    std::fs::write(&svg_path, sweep::chart(&rows, &title))
        .map_err(|e| format!("{}: {e}", svg_path.display()))?;
    println!();
    print!("{}", sweep::table(&rows));
    println!("wrote {} and {}", csv_path.display(), svg_path.display());
    Ok(())
}
