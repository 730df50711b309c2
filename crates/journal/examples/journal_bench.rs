//! Journal benchmark: append throughput per durability mode and batch size, recovery scan and
//! replay speed.
//!
//! ```text
//! cargo run --release -p journal --example journal_bench -- [--append-records N]
//!     [--append-seconds S] [--replay-records N] [--runs R] [--dir PATH]
//! ```
//! Each append configuration writes 64-byte payloads into a fresh journal, committing after
//! every `batch` appends, until `N` records or `S` seconds (whichever first), `R` times; the
//! median run is printed. Replay writes `--replay-records` records, then times recovery
//! (`JournalWriter::open`, which verifies every record) and a full `JournalReader` pass.
//! Every line ends with a hash of what was written or read, so a change that skips work shows.
//! Reads come from the page cache (the file was just written): the figure is CPU cost, not disk.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use journal::{Durability, JournalConfig, JournalReader, JournalWriter};

const PAYLOAD_LEN: usize = 64;

struct Args {
    append_records: u64,
    append_seconds: f64,
    replay_records: u64,
    runs: usize,
    dir: PathBuf,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        append_records: 2_000_000,
        append_seconds: 2.0,
        replay_records: 10_000_000,
        runs: 3,
        dir: std::env::temp_dir().join(format!("journal-bench-{}", std::process::id())),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--append-records" => args.append_records = num(&value()?)?,
            "--append-seconds" => {
                args.append_seconds = value()?.parse().map_err(|e| format!("{e}"))?
            }
            "--replay-records" => args.replay_records = num(&value()?)?,
            "--runs" => args.runs = num(&value()?)? as usize,
            "--dir" => args.dir = PathBuf::from(value()?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if args.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    Ok(args)
}

fn num(s: &str) -> Result<u64, String> {
    s.replace('_', "")
        .parse()
        .map_err(|e| format!("bad number {s}: {e}"))
}

/// Payload for `seq`: deterministic, so the hash of a run is reproducible.
fn fill_payload(seq: u64, dst: &mut [u8]) {
    let x = seq.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    for (i, b) in dst.iter_mut().enumerate() {
        *b = (x >> ((i % 8) * 8)) as u8 ^ i as u8;
    }
}

struct AppendResult {
    records: u64,
    elapsed: Duration,
    hash: u32,
}

/// Appends into a fresh journal in `dir` until `max_records` or `max_time`.
fn append_run(
    dir: &Path,
    mode: Durability,
    batch: u64,
    max_records: u64,
    max_time: Duration,
) -> AppendResult {
    let _ = std::fs::remove_dir_all(dir);
    let (mut w, _) = JournalWriter::open(dir, JournalConfig::default()).expect("open journal");
    let mut hash = 0u32;
    let start = Instant::now();
    let mut records = 0;
    let mut payload = [0u8; PAYLOAD_LEN];
    'outer: loop {
        for _ in 0..batch {
            let seq = w.next_seq();
            fill_payload(seq, &mut payload);
            w.append(1, seq, &payload).expect("append");
            records += 1;
        }
        let durable = w.commit(mode).expect("commit");
        hash = crc32c::crc32c_append(hash, &durable.to_le_bytes());
        if records >= max_records || start.elapsed() >= max_time {
            break 'outer;
        }
    }
    let elapsed = start.elapsed();
    AppendResult {
        records,
        elapsed,
        hash,
    }
}

fn median_by<T, K: PartialOrd>(mut v: Vec<T>, key: impl Fn(&T) -> K) -> T {
    v.sort_by(|a, b| key(a).partial_cmp(&key(b)).expect("comparable"));
    let mid = v.len() / 2;
    v.swap_remove(mid)
}

fn run(args: &Args) {
    let record_bytes = (journal::format::RECORD_HEADER_LEN + PAYLOAD_LEN) as f64;
    println!(
        "journal_bench: payload {PAYLOAD_LEN} B (record {record_bytes} B), median of {} runs, dir {}",
        args.runs,
        args.dir.display()
    );
    println!(
        "{:<8} {:>6} {:>10} {:>14} {:>10} {:>12}  hash",
        "mode", "batch", "records", "records/s", "MB/s", "commit_us"
    );
    let max_time = Duration::from_secs_f64(args.append_seconds);
    for mode in [Durability::Process, Durability::Fsync] {
        for batch in [1u64, 64, 1024] {
            let runs: Vec<AppendResult> = (0..args.runs)
                .map(|_| append_run(&args.dir, mode, batch, args.append_records, max_time))
                .collect();
            let r = median_by(runs, |r| r.records as f64 / r.elapsed.as_secs_f64());
            let secs = r.elapsed.as_secs_f64();
            let rate = r.records as f64 / secs;
            let commits = r.records.div_ceil(batch) as f64;
            println!(
                "{:<8} {:>6} {:>10} {:>14.0} {:>10.1} {:>12.2}  {:08x}",
                mode.as_str(),
                batch,
                r.records,
                rate,
                rate * record_bytes / 1e6,
                secs * 1e6 / commits,
                r.hash
            );
        }
    }

    // Replay: one journal of `replay_records`, recovered and read R times.
    let _ = std::fs::remove_dir_all(&args.dir);
    let w = append_run(
        &args.dir,
        Durability::Process,
        1024,
        args.replay_records,
        Duration::MAX,
    );
    let bytes_total = w.records as f64 * record_bytes;
    println!(
        "replay: {} records, {:.0} MB journal written at {:.0} records/s",
        w.records,
        bytes_total / 1e6,
        w.records as f64 / w.elapsed.as_secs_f64()
    );
    let mut recover = Vec::new();
    let mut replay = Vec::new();
    for _ in 0..args.runs {
        let start = Instant::now();
        let (writer, report) =
            JournalWriter::open(&args.dir, JournalConfig::default()).expect("recover journal");
        recover.push(start.elapsed());
        assert_eq!(report.records, w.records);
        drop(writer);

        let start = Instant::now();
        let mut reader = JournalReader::open(&args.dir, 1).expect("open reader");
        let mut hash = 0u32;
        let mut n = 0u64;
        while let Some(rec) = reader.next_record().expect("read record") {
            hash = crc32c::crc32c_append(hash, rec.payload);
            n += 1;
        }
        replay.push((start.elapsed(), n, hash));
    }
    let rec = median_by(recover, |d| *d);
    let (elapsed, n, hash) = median_by(replay, |r| r.0);
    assert_eq!(n, w.records);
    println!(
        "recover (open, verify all): {:.3} s = {:.0} records/s",
        rec.as_secs_f64(),
        w.records as f64 / rec.as_secs_f64()
    );
    println!(
        "replay (reader, all records): {:.3} s = {:.0} records/s, {:.0} MB/s  hash {hash:08x}",
        elapsed.as_secs_f64(),
        n as f64 / elapsed.as_secs_f64(),
        bytes_total / 1e6 / elapsed.as_secs_f64()
    );
    let _ = std::fs::remove_dir_all(&args.dir);
}

fn main() {
    match parse_args() {
        Ok(args) => run(&args),
        Err(e) => {
            eprintln!("journal_bench: {e}");
            std::process::exit(2);
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn bench_runs_with_tiny_parameters() {
        let dir = tempfile::tempdir().unwrap();
        super::run(&super::Args {
            append_records: 2_000,
            append_seconds: 0.05,
            replay_records: 5_000,
            runs: 1,
            dir: dir.path().join("bench"),
        });
        assert!(!dir.path().join("bench").exists(), "bench cleans up");
    }
}
