//! Segment-roll benchmark: how long one `append`s + `commit` iteration takes when it rolls the
//! segment, next to the ones that do not.
//!
//! ```text
//! cargo run --release -p journal --example roll_bench -- [--rate RECORDS_PER_S]
//!     [--seconds S] [--batch B] [--payload BYTES] [--segment-mib M] [--mode process|fsync]
//!     [--dir PATH]
//! ```
//! Paced like the server's journal thread: every `B / rate` seconds it appends `B` records of
//! `BYTES` payload and commits once (default 200,000 records/s, batches of 20, 80-byte
//! payloads: about 22 MB/s, the load of `rialto serve` at 200K orders/s). Each iteration's
//! append + commit time is measured; an iteration is a roll iteration if the active segment
//! changed in it. Prints the percentiles of all iterations, the roll iterations' median and
//! maximum, the largest non-roll iteration, and the writer's roll counters.
//! Default segments are 64 MiB (the server's); `--segment-mib 4` rolls 16 times as often.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use journal::{Durability, JournalConfig, JournalWriter};

struct Args {
    rate: f64,
    seconds: f64,
    batch: u64,
    payload: usize,
    segment_mib: u64,
    mode: Durability,
    dir: PathBuf,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        rate: 200_000.0,
        seconds: 10.0,
        batch: 20,
        payload: 80,
        segment_mib: 64,
        mode: Durability::Process,
        dir: std::env::temp_dir().join(format!("journal-roll-bench-{}", std::process::id())),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let value = it.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let num = |s: &str| -> Result<f64, String> {
            s.replace('_', "")
                .parse::<f64>()
                .map_err(|e| format!("bad number {s} for {flag}: {e}"))
        };
        match flag.as_str() {
            "--rate" => args.rate = num(&value)?,
            "--seconds" => args.seconds = num(&value)?,
            "--batch" => args.batch = num(&value)? as u64,
            "--payload" => args.payload = num(&value)? as usize,
            "--segment-mib" => args.segment_mib = num(&value)? as u64,
            "--mode" => {
                args.mode = match value.as_str() {
                    "process" => Durability::Process,
                    "fsync" => Durability::Fsync,
                    other => return Err(format!("--mode must be process or fsync, not {other}")),
                }
            }
            "--dir" => args.dir = PathBuf::from(value),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if args.rate.is_nan() || args.rate <= 0.0 || args.batch == 0 || args.segment_mib == 0 {
        return Err("--rate, --batch and --segment-mib must be positive".into());
    }
    Ok(args)
}

/// The `q` quantile (0..=1) of sorted `v`.
fn quantile(v: &[u32], q: f64) -> u32 {
    if v.is_empty() {
        return 0;
    }
    v[((v.len() - 1) as f64 * q).round() as usize]
}

fn run(args: &Args) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(&args.dir);
    let config = JournalConfig {
        segment_size_bytes: args.segment_mib << 20,
        ..JournalConfig::default()
    };
    let (mut w, _) = JournalWriter::open(&args.dir, config).map_err(|e| e.to_string())?;
    let interval = Duration::from_secs_f64(args.batch as f64 / args.rate);
    let iterations = (args.seconds * args.rate / args.batch as f64).ceil() as usize;
    let mut all_ns: Vec<u32> = Vec::with_capacity(iterations);
    let mut roll_ns: Vec<u32> = Vec::new();
    let mut other_max = 0u32;
    let payload = vec![0x5au8; args.payload];
    let mut segment = w.segment_path().to_path_buf();
    let start = Instant::now();
    let mut next = start;
    for _ in 0..iterations {
        next += interval;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
        let t0 = Instant::now();
        for _ in 0..args.batch {
            let seq = w.next_seq();
            w.append(1, seq, &payload).map_err(|e| e.to_string())?;
        }
        w.commit(args.mode).map_err(|e| e.to_string())?;
        let ns = t0.elapsed().as_nanos().min(u32::MAX as u128) as u32;
        all_ns.push(ns);
        if w.segment_path() != segment {
            segment = w.segment_path().to_path_buf();
            roll_ns.push(ns);
        } else {
            other_max = other_max.max(ns);
        }
    }
    let elapsed = start.elapsed();
    let stats = format!("{:?}", w.roll_stats());
    drop(w);
    let _ = std::fs::remove_dir_all(&args.dir);

    all_ns.sort_unstable();
    roll_ns.sort_unstable();
    let us = |ns: u32| ns as f64 / 1000.0;
    println!(
        "roll_bench: {} mode, {} records/s target ({:.0} achieved), batch {}, payload {} B, \
         segment {} MiB, {:.1} s",
        args.mode.as_str(),
        args.rate,
        (all_ns.len() as u64 * args.batch) as f64 / elapsed.as_secs_f64(),
        args.batch,
        args.payload,
        args.segment_mib,
        elapsed.as_secs_f64()
    );
    println!(
        "iterations {}: p50 {:.1} us  p99 {:.1} us  p99.9 {:.1} us  p99.99 {:.1} us  max {:.1} us",
        all_ns.len(),
        us(quantile(&all_ns, 0.5)),
        us(quantile(&all_ns, 0.99)),
        us(quantile(&all_ns, 0.999)),
        us(quantile(&all_ns, 0.9999)),
        us(all_ns.last().copied().unwrap_or(0))
    );
    println!(
        "roll iterations {}: median {:.1} us  max {:.1} us;  largest other iteration {:.1} us",
        roll_ns.len(),
        us(quantile(&roll_ns, 0.5)),
        us(roll_ns.last().copied().unwrap_or(0)),
        us(other_max)
    );
    println!("writer: {stats}");
    Ok(())
}

fn main() {
    if let Err(e) = parse_args().and_then(|a| run(&a)) {
        eprintln!("roll_bench: {e}");
        std::process::exit(2);
    }
}
