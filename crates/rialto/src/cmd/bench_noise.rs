//! `rialto bench noise [--seconds S]`: the machine's scheduling gaps, measured by one pinned
//! thread per CPU reading the clock in a loop (`loadgen::noise`). Run it before a latency
//! benchmark: a gap on the exchange's or the generator's core delays every request it
//! straddles, so the time lost in gaps > 200 µs bounds the P99 a benchmark can show here.

use super::CmdResult;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// How long to measure, seconds (every CPU is kept busy meanwhile).
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
}

pub fn run(args: Args) -> CmdResult {
    if !(0.01..=3_600.0).contains(&args.seconds) {
        return Err(format!(
            "--seconds {}: give seconds between 0.01 and 3600",
            args.seconds
        )
        .into());
    }
    let cpus = loadgen::noise::allowed_cpus()?;
    eprintln!(
        "measuring scheduling gaps on CPUs {cpus:?} for {} s (each CPU busy meanwhile)",
        args.seconds
    );
    let before = loadgen::noise::steal_ms();
    let rows = loadgen::noise::measure(&cpus, Duration::from_secs_f64(args.seconds))?;
    let steal = match (before, loadgen::noise::steal_ms()) {
        (Some(a), Some(b)) => Some(b.saturating_sub(a)),
        _ => None,
    };
    print!("{}", loadgen::noise::render(&rows, steal));
    Ok(())
}
