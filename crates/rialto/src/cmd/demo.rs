//! `rialto demo`: the exchange with embedded defaults in this process plus simulated market
//! makers and takers over loopback FIX, with live statistics once a second (orders in, reports
//! out, trades, messages/s, ack latency P50/P99, top of book and last trade per instrument).
//! Runs until Ctrl-C, then prints a summary and where the journal is. Glue over
//! `loadgen::demo`.

use super::CmdResult;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Orders (requests) per second over all simulated traders.
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    rate: u64,
    /// Journal and snapshots go here (default: a new temporary directory).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Listen address (default 127.0.0.1:9878, or a free port if it is taken).
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// `process` (default) or `fsync`.
    #[arg(long, default_value = "process")]
    durability: String,
    /// Stop after this many seconds instead of waiting for Ctrl-C.
    #[arg(long)]
    duration: Option<f64>,
    /// Seed of the simulated traders.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

pub fn run(args: Args) -> CmdResult {
    let durability = match args.durability.as_str() {
        "process" => gateway::Durability::Process,
        "fsync" => gateway::Durability::Fsync,
        d => return Err(format!("--durability {d:?}: use process or fsync").into()),
    };
    let duration = match args.duration {
        Some(s) if (0.0..=31_536_000.0).contains(&s) => Some(Duration::from_secs_f64(s)),
        Some(s) => return Err(format!("--duration {s}: give seconds (0 or more)").into()),
        None => None,
    };
    let cfg = loadgen::demo::DemoConfig {
        rate: args.rate,
        data_dir: args.data_dir,
        listen: args.listen,
        duration,
        durability,
        seed: args.seed,
        redraw: None,
    };
    loadgen::demo::run(&cfg, &mut std::io::stdout())?;
    Ok(())
}
