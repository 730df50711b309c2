//! `rialto bench sweep`: one `bench fix` run per offered rate, then the seeds' latency-vs-load
//! table (`Load (K rps) | P50 | P90 | P99 | P999 | P9999`, µs) with the knee marked (the first
//! run with P99 >= 1 ms, achieved < 95% of offered, > 1% shed, or errors), written also to
//! `DIR/sweep.csv` and `DIR/sweep.svg` (latency percentiles against load, log scale).
//!
//! `--rates` are totals over all bots (each bot gets rate / bots). `--bots 1,10,50` runs every
//! rate with each bots count (Ember's grid): one table and knee per count, a `bots` column in
//! the CSV, one line per count in the chart. `--repeat N` runs each point N times and reports
//! the median of each percentile (the table says so), so one noisy run does not move the knee.
//! With `--spawn-server` every run gets a fresh `rialto serve` (so a sweep is one command);
//! without it, the sweep drives whatever listens on --host/--port (e.g. the QuickFIX/J
//! reference exchange on 9877). Every run still prints its own parseable summary line.

use super::bench_fix::{with_server, BotArgs};
use super::CmdResult;
use loadgen::bench::run_fix;
use loadgen::sweep::{self, SweepRow};
use std::path::PathBuf;
use std::sync::atomic::Ordering;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    bots: BotArgs,
    /// Offered total rates, requests/s (`10000,20000,50k`).
    #[arg(long, default_value = "10k,20k,50k,100k,150k,200k")]
    rates: String,
    /// Runs per point (bots count x rate); the table shows the median of each percentile.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100))]
    repeat: u64,
    /// Output directory for sweep.csv and sweep.svg.
    #[arg(long, default_value = "sweep-out")]
    out: PathBuf,
    /// Stop a bots count's rates after this many overloaded points (0: run every rate).
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
    let repeat = args.repeat as usize;
    // One Ctrl-C flag for the sweep: the run in progress drains and reports, then the sweep
    // writes what it has and ends.
    let stop = loadgen::bench::stop_on_ctrl_c()?;
    let stopped = || stop.load(Ordering::Relaxed);
    let mut rows: Vec<SweepRow> = Vec::new();
    for &bots in &args.bots.bots {
        let mut overloads = 0;
        for &rate in &rates {
            let per_bot = rate.div_ceil(bots).max(1);
            let mut runs = Vec::with_capacity(repeat);
            for rep in 1..=repeat {
                let of = if repeat > 1 {
                    format!(", run {rep} of {repeat}")
                } else {
                    String::new()
                };
                eprintln!(
                    "== sweep: {} req/s offered ({bots} bots x {per_bot}/s){of}",
                    per_bot * bots
                );
                if spec.is_none() && !(runs.is_empty() && rows.is_empty()) {
                    // The same external exchange for every run: give it a moment to finish the
                    // previous run's sessions (a QuickFIX/J acceptor refuses a Logon while it
                    // still holds the old session).
                    std::thread::sleep(std::time::Duration::from_secs(2));
                }
                let result = with_server(spec.as_ref(), args.bots.addr(), |addr| {
                    let b = args.bots.bench(addr, bots, per_bot, stop.clone())?;
                    run_fix(&b, &mut std::io::stderr())
                })?;
                eprint!("{}", result.counters_text());
                println!("{}", result.summary_line());
                runs.push(SweepRow::from_result(&result));
                if stopped() {
                    break;
                }
            }
            let row = sweep::median(&runs).ok_or("no run finished")?;
            let overloaded = row.overload().is_some();
            rows.push(row);
            if stopped() {
                eprintln!("== interrupted: writing what was measured");
                return write(&args, &spec, rows);
            }
            if overloaded {
                overloads += 1;
                if args.stop_after_overloads > 0 && overloads >= args.stop_after_overloads {
                    eprintln!("== {overloads} overloaded points with {bots} bots: next count");
                    break;
                }
            }
        }
    }
    write(&args, &spec, rows)
}

fn write(args: &Args, spec: &Option<loadgen::spawn::SpawnSpec>, rows: Vec<SweepRow>) -> CmdResult {
    let target = match (spec, args.bots.spawn_server) {
        (Some(_), true) => format!("rialto serve ({})", args.bots.durability),
        (Some(s), false) => s.program.display().to_string(),
        (None, _) => args.bots.addr().to_string(),
    };
    let bots: Vec<String> = args.bots.bots.iter().map(u64::to_string).collect();
    let title = args.title.clone().unwrap_or_else(|| {
        format!(
            "Latency vs load: {target}, {} bots, NewOrderSingle/Cancel/Replace -> first report",
            bots.join("/")
        )
    });
    let csv_path = args.out.join("sweep.csv");
    let svg_path = args.out.join("sweep.svg");
    std::fs::write(&csv_path, sweep::csv(&rows))
        .map_err(|e| format!("{}: {e}", csv_path.display()))?;
    std::fs::write(&svg_path, sweep::grid_chart(&rows, &title))
        .map_err(|e| format!("{}: {e}", svg_path.display()))?;
    println!();
    print!("{}", sweep::tables(&rows));
    println!("wrote {} and {}", csv_path.display(), svg_path.display());
    Ok(())
}
