//! Restart benchmark: writes N journal records of a realistic order flow into a fresh data
//! directory, then times what `rialto serve` does at start three times
//! (`server::recovery::recover_and_open`: one journal pass, whose scan thread verifies,
//! decodes and hands every record after the newest snapshot to the applying thread, then the
//! journal open for appending) and prints each run with its phases, the median, records/s and
//! the size and time of a snapshot of the final state (the engine stall a periodic snapshot
//! causes). `--two-pass` times the older start instead: `JournalWriter::open` (scan and verify
//! every segment) and then `server::recover` (newest snapshot + a second, replaying pass).
//! `--full` times `server::recover` from record 1 with snapshots ignored: a full replay of
//! any journal, read-only (no journal lock taken, nothing truncated), so it can time a foreign
//! data directory (e.g. a live server's, with its snapshots) as it is.
//!
//! Flow: 8 sessions (`CLIENT1`..`CLIENT8`) log on, then each step picks a session and sends a
//! NewOrderSingle (limit, price 990..1010 around a mid of 1000 on one of three symbols, so about
//! half cross and fill), an OrderCancelReplaceRequest or an OrderCancelRequest of one of its
//! recent orders; each session cancels its oldest order beyond 200 open ones, so the books stay
//! bounded. A timer Tick every 1000 records. The records are those the server journals
//! (`Record::encode` under `KIND_RECORD`: FIX messages as the adapter reads them); nothing is
//! replayed from a snapshot (full replay).
//!
//! `cargo run --release -p server --example replay_bench -- [N] [--dir DIR] [--reuse] [--runs R] [--two-pass | --full]`
//! (default N = 1,000,000; DIR defaults to a temporary directory that is removed at the end;
//! `--reuse` times the journal already in DIR instead of writing one, for A/B runs of two
//! builds on the same journal (`--full` implies it; writing into a DIR that already holds a
//! journal is refused); `--runs` times R starts instead of 3, e.g. 1 under callgrind).

use exchange::{ClOrdId, NewOrder, Replace};
use fix::{InHeader, Inbound};
use fix_gateway::{AppMsg, FixInput};
use journal::{Durability, JournalConfig, JournalWriter};
use server::record::KIND_RECORD;
use server::{recover, recover_and_open, Config, Record};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use types::{OrdType, Side, TimeInForce};

const SESSIONS: u64 = 8;
const OPEN_MAX: usize = 200;

/// The workspace's xorshift64*, with `below`.
struct Rng(types::XorShift64Star);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0.next_u64() % n
    }
}

fn write_journal(dir: &Path, n: u64) -> Result<(), String> {
    let (mut j, _) =
        JournalWriter::open(dir, JournalConfig::default()).map_err(|e| e.to_string())?;
    let mut buf = Vec::with_capacity(256);
    let mut ts = 1_800_000_000_000_000_000u64;
    let mut written = 0u64;
    let mut put = |j: &mut JournalWriter, ts: u64, input: &Record| -> Result<(), String> {
        buf.clear();
        input.encode(&mut buf);
        j.append(KIND_RECORD, ts, &buf).map_err(|e| e.to_string())?;
        written += 1;
        if written.is_multiple_of(4096) {
            j.commit(Durability::Process).map_err(|e| e.to_string())?;
        }
        Ok(())
    };
    put(&mut j, ts, &Record::Startup)?;
    let mut msg_seq = vec![1u64; SESSIONS as usize];
    for s in 0..SESSIONS {
        ts += 1000;
        put(
            &mut j,
            ts,
            &Record::fix44_logon(s + 1, 1, &format!("CLIENT{}", s + 1), true),
        )?;
        msg_seq[s as usize] = 2;
    }
    let mut rng = Rng(types::XorShift64Star::new(0x9E37_79B9_7F4A_7C15));
    let mut open: Vec<VecDeque<(ClOrdId, u32)>> = vec![VecDeque::new(); SESSIONS as usize];
    let mut next_cl = 0u64;
    let mut i = 1 + SESSIONS;
    while i < n {
        ts += 1000;
        i += 1;
        if i.is_multiple_of(1000) {
            put(&mut j, ts, &Record::Tick)?;
            continue;
        }
        let s = rng.below(SESSIONS) as usize;
        let r = rng.below(100);
        next_cl += 1;
        let cl = ClOrdId::from(format!("S{s}-{next_cl}").as_str());
        let msg = if r < 15 && !open[s].is_empty() {
            let k = rng.below(open[s].len() as u64) as usize;
            let (orig, symbol) = open[s][k];
            open[s][k].0 = cl;
            AppMsg::Replace(Replace {
                cl_ord_id: cl,
                orig_cl_ord_id: orig,
                symbol,
                price: 990 + rng.below(21) as i64,
                qty: 1 + rng.below(20),
                stop_price: 0,
            })
        } else if (r < 25 && !open[s].is_empty()) || open[s].len() >= OPEN_MAX {
            let k = if open[s].len() >= OPEN_MAX {
                0
            } else {
                rng.below(open[s].len() as u64) as usize
            };
            let (orig, _) = open[s].remove(k).expect("k is in range");
            AppMsg::Cancel {
                cl_ord_id: cl,
                orig_cl_ord_id: orig,
            }
        } else {
            let symbol = rng.below(3) as u32;
            open[s].push_back((cl, symbol));
            AppMsg::New(NewOrder {
                cl_ord_id: cl,
                symbol,
                side: if rng.below(2) == 0 {
                    Side::Buy
                } else {
                    Side::Sell
                },
                ord_type: OrdType::Limit,
                tif: TimeInForce::Day,
                price: 990 + rng.below(21) as i64,
                qty: 1 + rng.below(20),
                account: None,
                post_only: false,
                ..Default::default()
            })
        };
        let seq = msg_seq[s];
        msg_seq[s] += 1;
        let record = Record::Fix(FixInput {
            conn: s as u64 + 1,
            header: InHeader {
                msg_seq_num: seq,
                sending_time_ns: ts,
                ..InHeader::default()
            },
            msg: Inbound::App(msg),
        });
        put(&mut j, ts, &record)?;
    }
    j.commit(Durability::Process).map_err(|e| e.to_string())?;
    Ok(())
}

/// Time this thread has spent on a CPU (Linux `/proc/thread-self/schedstat`), so figures on a
/// shared machine can be told apart from waiting for a core; `None` elsewhere.
fn cpu_time() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

fn main() -> Result<(), String> {
    let mut n: u64 = 1_000_000;
    let mut dir_arg = None;
    let mut reuse = false;
    let mut runs: usize = 3;
    let mut two_pass = false;
    let mut full = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--reuse" {
            reuse = true;
        } else if a == "--two-pass" {
            two_pass = true;
        } else if a == "--full" {
            full = true;
        } else if a == "--runs" {
            runs = args
                .next()
                .and_then(|r| r.parse().ok())
                .filter(|&r| r >= 1)
                .ok_or("--runs needs a count of at least 1")?;
        } else if a == "--dir" {
            dir_arg = Some(args.next().ok_or("--dir needs a path")?);
        } else {
            n = a.parse().map_err(|_| format!("not a record count: {a}"))?;
        }
    }
    if two_pass && full {
        return Err("give one of --two-pass and --full".into());
    }
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let dir = match &dir_arg {
        Some(d) => std::path::PathBuf::from(d),
        None => tmp.path().to_path_buf(),
    };
    if full && dir_arg.is_none() {
        return Err("--full times an existing journal: it needs --dir".into());
    }
    if reuse || full {
        if dir_arg.is_none() {
            return Err("--reuse needs --dir".into());
        }
        println!("timing the journal in {}", dir.display());
    } else {
        // Never append a synthetic flow to somebody's journal (e.g. a live server's data
        // directory given with --full but without --reuse would have been extended).
        if dir.join(journal::format::JOURNAL_SUBDIR).exists() {
            return Err(format!(
                "{} already holds a journal: give --reuse (or --full) to time it, or a new directory",
                dir.display()
            ));
        }
        let t = Instant::now();
        write_journal(&dir, n)?;
        println!(
            "wrote {n} records to {} in {:.2}s",
            dir.display(),
            t.elapsed().as_secs_f64()
        );
    }
    let cfg = Arc::new(Config::defaults());
    let mut totals: Vec<Duration> = Vec::new();
    let mut cpus: Vec<Duration> = Vec::new();
    let mut last = None;
    for run in 1..=runs {
        let t0 = Instant::now();
        let c0 = cpu_time();
        let steal0 = sched_idle::steal_ms(None);
        let (x, rec, phases) = if full {
            let (x, rec) = recover(&cfg, &dir, false, |m| eprintln!("{m}")).map_err(|e| e.0)?;
            let phases = format!(
                "full replay from record 1 (read-only, snapshots ignored{});",
                rec.phases
                    .resolved
                    .as_ref()
                    .map(|r| format!("; {r}"))
                    .unwrap_or_default()
            );
            (x, rec, phases)
        } else if two_pass {
            let (_writer, _report) =
                JournalWriter::open(&dir, JournalConfig::default()).map_err(|e| e.to_string())?;
            let open = t0.elapsed();
            let (x, rec) = recover(&cfg, &dir, true, |m| eprintln!("{m}")).map_err(|e| e.0)?;
            let phases = format!("open+scan {:.3}s, then", open.as_secs_f64());
            (x, rec, phases)
        } else {
            let opened =
                recover_and_open(&cfg, &dir, JournalConfig::default(), |m| eprintln!("{m}"))
                    .map_err(|e| e.0)?;
            let phases = format!("{};", opened.recovered.phases);
            (opened.node, opened.recovered, phases)
        };
        let total = t0.elapsed();
        let cpu = match (c0, cpu_time()) {
            (Some(a), Some(b)) => b.saturating_sub(a),
            _ => total,
        };
        let decoder = match rec.phases.decoder_cpu {
            Some(c) if rec.replayed > 0 => format!(
                ", decoder thread {:.0} ns/record",
                c.as_nanos() as f64 / rec.replayed as f64
            ),
            _ => String::new(),
        };
        // The hypervisor's share of the machine meanwhile: a slow start in a noisy minute says so.
        let steal = match (steal0, sched_idle::steal_ms(None)) {
            (Some(a), Some(b)) => format!(", host steal {} ms", b.saturating_sub(a)),
            _ => String::new(),
        };
        println!(
            "run {run}: {phases} replay {} records {:.3}s ({:.2} M records/s), start total {:.3}s wall, {:.3}s on CPU (this thread){decoder}{steal}, hash {:016x}",
            rec.replayed,
            rec.elapsed.as_secs_f64(),
            rec.replayed as f64 / rec.elapsed.as_secs_f64() / 1e6,
            total.as_secs_f64(),
            cpu.as_secs_f64(),
            rec.state_hash
        );
        totals.push(total);
        cpus.push(cpu);
        last = Some((x, rec));
    }
    totals.sort();
    cpus.sort();
    let (x, rec) = last.ok_or("no run")?;
    let median = totals[totals.len() / 2];
    println!(
        "median start for {} records: {:.3}s wall = {:.2} M records/s end to end; {:.3}s on CPU = {:.2} M records/s per CPU-second; {} live orders, {} trades",
        rec.replayed,
        median.as_secs_f64(),
        rec.replayed as f64 / median.as_secs_f64() / 1e6,
        cpus[cpus.len() / 2].as_secs_f64(),
        rec.replayed as f64 / cpus[cpus.len() / 2].as_secs_f64() / 1e6,
        x.live_orders(),
        x.exchange.stats.trades
    );
    let t1 = Instant::now();
    let mut snap = Vec::new();
    let hash = x.snapshot_and_hash(&mut snap);
    println!(
        "snapshot of the final state: {:.1} MB in {:.1} ms (hash {hash:016x})",
        snap.len() as f64 / 1e6,
        t1.elapsed().as_secs_f64() * 1e3
    );
    Ok(())
}
