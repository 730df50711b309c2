//! `rialto bench echo`: FIXEdge's single-session scenario. One session sends NewOrderSingle at
//! a fixed rate (default 2,000/s, 200,000 measured); each is timed from its intended send time
//! to its ExecutionReport. The orders are IOC limit orders far from the mid, so they never trade
//! and never rest and the book stays empty however long the run. Prints the percentile table and
//! the summary line.
//!
//! `--scenario convert`: FIXEdge's two-session scenario with conversion. The same orders go in
//! over a FIX 4.2 session (`CLIENT1_42`) and each is timed to its FIX 4.4 drop copy
//! (ExecType 0) read on another session, the drop copy of the same firm (`DROPCOPY1`);
//! `loadgen::convert`.

use super::bench_fix::with_server;
use super::CmdResult;
use loadgen::bench::{run_echo, EchoBench};
use loadgen::convert::{run_convert, ConvertBench};
use loadgen::spawn::SpawnSpec;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Exchange FIX port (Rialto 9878, the QuickFIX/J reference exchange 9877).
    #[arg(long, default_value_t = 9878)]
    port: u16,
    /// NewOrderSingle per second.
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000))]
    rate: u64,
    /// Measured round trips.
    #[arg(long, default_value_t = 200_000, value_parser = clap::value_parser!(u64).range(1..))]
    count: u64,
    /// Unmeasured warm-up before them, seconds.
    #[arg(long, default_value_t = 0.0)]
    warmup: f64,
    /// `single`: one session, order -> its ExecutionReport; `convert`: FIX 4.2 orders on one
    /// session -> their FIX 4.4 drop copies on another.
    #[arg(long, value_enum, default_value_t = Scenario::Single)]
    scenario: Scenario,
    /// The ordering session's SenderCompID (default CLIENT1; with `--scenario convert`,
    /// CLIENT1_42, a FIX 4.2 session).
    #[arg(long)]
    sender_comp_id: Option<String>,
    /// `--scenario convert`: the drop-copy session (FIX 4.4) of the ordering session's firm.
    #[arg(long, default_value = "DROPCOPY1")]
    copy_sender_comp_id: String,
    #[arg(long, default_value = "RIALTO")]
    target_comp_id: String,
    /// Shortest timer tick, µs (see `rialto bench fix --help`).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    tick_us: u64,
    /// Busy-poll (instead of parking) when the next request is due within this many µs. The
    /// default 0 arms the timer early by its learnt wake-up latency (about 40 µs on this VM)
    /// and spins on the clock for the rest: sends within a few µs of their due time, for
    /// about 6% of a core at 2,000/s (a fixed 100 took 16%).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    spin_us: u64,
    /// The share of timer wake-ups the generator arms early enough for, 0.5-0.999 (see
    /// `rialto bench fix --help`).
    #[arg(long, default_value_t = 0.95)]
    wake_quantile: f64,
    /// Start `rialto serve` for the run (fresh temporary data dir, free port).
    #[arg(long)]
    spawn_server: bool,
    /// Durability of the spawned server: process or fsync.
    #[arg(long, default_value = "process", requires = "spawn_server")]
    durability: String,
    /// Idle mode of the spawned server: park or spin (see `rialto bench fix --help`).
    #[arg(long, default_value = "park", requires = "spawn_server")]
    server_idle: String,
    /// Pin the spawned server's event loop to this CPU (see `rialto bench fix --help`).
    #[arg(long, requires = "spawn_server")]
    server_cpu: Option<usize>,
    /// Append the spawned server's output to this file after the run.
    #[arg(long, requires = "spawn_server")]
    server_log: Option<std::path::PathBuf>,
    /// Pin the generator to this CPU.
    #[arg(long)]
    cpu: Option<usize>,
    /// Run the generator at this nice value, 0-19 (see `rialto bench fix --help`).
    #[arg(long, value_parser = clap::value_parser!(i32).range(0..=19))]
    nice: Option<i32>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scenario {
    Single,
    Convert,
}

pub fn run(args: Args) -> CmdResult {
    if !(0.0..=86_400.0).contains(&args.warmup) {
        return Err(format!("--warmup {}: give seconds between 0 and 86400", args.warmup).into());
    }
    let spec = if args.spawn_server {
        if !matches!(args.durability.as_str(), "process" | "fsync") {
            return Err(format!("--durability {:?}: use process or fsync", args.durability).into());
        }
        if !matches!(args.server_idle.as_str(), "park" | "spin") {
            return Err(format!("--server-idle {:?}: use park or spin", args.server_idle).into());
        }
        let mut spec = SpawnSpec::rialto(
            std::env::current_exe()?,
            &args.durability,
            &args.server_idle,
            args.server_cpu,
        );
        spec.keep_log = args.server_log.clone();
        Some(spec)
    } else {
        None
    };
    let stop = loadgen::bench::stop_on_ctrl_c()?;
    let result = with_server(
        spec.as_ref(),
        SocketAddr::new(args.host, args.port),
        |addr| {
            if args.scenario == Scenario::Convert {
                let mut b = ConvertBench::new(addr);
                b.rate = args.rate;
                b.count = args.count;
                b.warmup = Duration::from_secs_f64(args.warmup);
                if let Some(s) = &args.sender_comp_id {
                    b.order_sender = s.clone();
                }
                b.copy_sender = args.copy_sender_comp_id.clone();
                b.target_comp_id = args.target_comp_id.clone();
                b.stop = stop.clone();
                b.cpu = args.cpu;
                b.nice = args.nice;
                if args.spin_us > 0 {
                    b.spin = Duration::from_micros(args.spin_us);
                }
                eprintln!(
                    "bench echo --scenario convert: {} FIX 4.2 NewOrderSingle at {}/s on {}, FIX 4.4 drop copies on {} from {addr} ({:.1} s)",
                    b.count,
                    b.rate,
                    b.order_sender,
                    b.copy_sender,
                    b.count as f64 / b.rate as f64
                );
                return run_convert(&b, &mut std::io::stderr());
            }
            let mut b = EchoBench::new(addr);
            b.rate = args.rate;
            b.count = args.count;
            b.warmup = Duration::from_secs_f64(args.warmup);
            b.sender_comp_id = args
                .sender_comp_id
                .clone()
                .unwrap_or_else(|| "CLIENT1".into());
            b.target_comp_id = args.target_comp_id.clone();
            b.stop = stop;
            b.tick_min = Duration::from_micros(args.tick_us);
            b.spin = Duration::from_micros(args.spin_us);
            b.cpu = args.cpu;
            b.nice = args.nice;
            b.wake_quantile = args.wake_quantile;
            eprintln!(
                "bench echo: {} NewOrderSingle at {}/s on {} to {addr} ({:.1} s)",
                b.count,
                b.rate,
                b.sender_comp_id,
                b.count as f64 / b.rate as f64
            );
            run_echo(&b, &mut std::io::stderr())
        },
    )?;
    print!("{}", result.report());
    Ok(())
}
