//! `rialto bench chart`: draws several sweeps (their `sweep.csv`) on one latency-vs-load SVG,
//! e.g. Rialto in both durability modes beside the QuickFIX/J reference exchange.
//!
//! Glue only: `loadgen::sweep::{parse_csv, compare_chart}`.

use super::CmdResult;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// A sweep to draw, as LABEL=PATH/sweep.csv (repeat for each sweep).
    #[arg(long = "csv", value_name = "LABEL=FILE", required = true)]
    csvs: Vec<String>,
    /// Percentiles to draw: p50, p90, p99, p999, p9999 (comma separated).
    #[arg(long, default_value = "p50,p99")]
    percentiles: String,
    /// Chart title.
    #[arg(long, default_value = "Latency vs load")]
    title: String,
    /// Output SVG file.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: Args) -> CmdResult {
    let mut sets = Vec::new();
    for spec in &args.csvs {
        let (label, path) = spec
            .split_once('=')
            .ok_or_else(|| format!("--csv {spec:?}: give LABEL=FILE"))?;
        let text = std::fs::read_to_string(path).map_err(|e| format!("{path}: {e}"))?;
        let rows = loadgen::sweep::parse_csv(&text).map_err(|e| format!("{path}: {e}"))?;
        sets.push((label.to_string(), rows));
    }
    let percentiles: Vec<String> = args
        .percentiles
        .split(',')
        .map(|p| p.trim().to_lowercase())
        .filter(|p| !p.is_empty())
        .collect();
    let svg = loadgen::sweep::compare_chart(&sets, &percentiles, &args.title)?;
    std::fs::write(&args.out, svg).map_err(|e| format!("{}: {e}", args.out.display()))?;
    println!("wrote {}", args.out.display());
    Ok(())
}
