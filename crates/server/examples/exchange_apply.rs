//! The core thread's business cost without sockets or the journal: apply N NewOrderSingle
//! records (two sessions, alternating buy/sell at one price, so every pair trades) to a
//! `Node` (the FIX sessions and the exchange; ExecutionReports formatted for the live
//! connections) and report ns per record, plus the time and size of a snapshot (with its
//! hash: one pass) at the end.
//!
//! `cargo run --release -p server --example exchange_apply -- [N]` (default 1,000,000).
//!
//! `-- --journal DIR [--prefetch FAR[,NEAR]]` instead decodes every record of the journal in
//! DIR (e.g. one written by `replay_bench`) into memory first, then times only their replay
//! on this one thread, as recovery applies them (outbox cleared, replaying set, ClOrdID
//! hashes computed ahead as recovery's decoding thread does, `Node::apply_prehashed`),
//! optionally calling `Node::prefetch` FAR records ahead and `Node::prefetch_entries` NEAR
//! records ahead. It prints the time the thread spent on a CPU (Linux schedstat), which a
//! busy machine disturbs less than wall time, and the final state hash.

use exchange::{Backing, ClHashes, NewOrder};
use fix::{InHeader, Inbound};
use fix_gateway::{AppMsg, FixInput, Outbox};
use journal::JournalReader;
use server::node::record_hashes;
use server::record::decode_record;
use server::{Config, Node, Record};
use std::path::Path;
use std::time::{Duration, Instant};
use types::{OrdType, Side, TimeInForce};

/// Time this thread has spent on a CPU (Linux `/proc/thread-self/schedstat`).
fn cpu_time() -> Option<Duration> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(Duration::from_nanos(ns))
}

/// The timed part of `replay_from_memory`: applies `recs` in order as recovery does. Not
/// inlined, so a profiler can count exactly this (e.g. `valgrind --tool=callgrind
/// --toggle-collect='*apply_all*'`).
#[inline(never)]
fn apply_all(x: &mut Node, recs: &[(u64, u64, Record, ClHashes)], far: usize, near: usize) {
    let mut out = Outbox::default();
    for (i, (seq, ts, input, hashes)) in recs.iter().enumerate() {
        if far > 0 {
            if let Some(r) = recs.get(i + far) {
                x.prefetch(&r.2, &r.3);
            }
        }
        if near > 0 {
            if let Some(r) = recs.get(i + near) {
                x.prefetch_entries(&r.2, &r.3);
            }
        }
        x.apply_prehashed(*seq, *ts, input, *hashes, &mut out);
        out.clear();
    }
}

/// Replays the journal in `dir` from memory; see the module comment.
fn replay_from_memory(dir: &Path, far: usize, near: usize) -> Result<(), String> {
    let mut x = Node::new(&Config::defaults(), Backing::Resident);
    let hasher = x.cl_hasher();
    let mut r = JournalReader::open(dir, 1).map_err(|e| e.to_string())?;
    let mut recs = Vec::new();
    while let Some(rec) = r.next_record().map_err(|e| e.to_string())? {
        let input = decode_record(&rec).map_err(|e| e.0)?;
        let hashes = record_hashes(&hasher, &input);
        recs.push((rec.seq, rec.timestamp_ns, input, hashes));
    }
    x.set_replaying(true);
    let (t0, c0) = (Instant::now(), cpu_time());
    apply_all(&mut x, &recs, far, near);
    let wall = t0.elapsed();
    let cpu = match (c0, cpu_time()) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => wall,
    };
    let n = recs.len() as f64;
    println!(
        "applied {} records: {:.3}s on CPU = {:.0} ns/record = {:.2} M records/s ({:.3}s wall); prefetch {far},{near}; hash {:016x}",
        recs.len(),
        cpu.as_secs_f64(),
        cpu.as_nanos() as f64 / n,
        n / cpu.as_secs_f64() / 1e6,
        wall.as_secs_f64(),
        x.state_hash()
    );
    Ok(())
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(k) = args.iter().position(|a| a == "--journal") {
        let dir = args.get(k + 1).ok_or("--journal needs a directory")?;
        let (mut far, mut near) = (0, 0);
        if let Some(p) = args.iter().position(|a| a == "--prefetch") {
            let v = args.get(p + 1).ok_or("--prefetch needs FAR[,NEAR]")?;
            let mut it = v.split(',').map(|x| x.parse::<usize>());
            far = it.next().and_then(|x| x.ok()).ok_or("bad --prefetch")?;
            near = it
                .next()
                .transpose()
                .map_err(|_| "bad --prefetch")?
                .unwrap_or(0);
        }
        return replay_from_memory(Path::new(dir), far, near);
    }
    let n: u64 = args
        .first()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let mut x = Node::new(&Config::defaults(), Backing::Resident);
    let mut out = Outbox::default();
    let mut seq = 0u64;
    let ts = 1_800_000_000_000_000_000u64;
    for (conn, name) in [(1u64, "CLIENT1"), (2, "CLIENT2")] {
        seq += 1;
        x.apply(seq, ts, &Record::fix44_logon(conn, 1, name, true), &mut out);
    }
    let inputs: Vec<Record> = (0..n)
        .map(|i| {
            Record::Fix(FixInput {
                conn: 1 + i % 2,
                header: InHeader {
                    msg_seq_num: 2 + i / 2,
                    sending_time_ns: ts,
                    ..InHeader::default()
                },
                msg: Inbound::App(AppMsg::New(NewOrder {
                    cl_ord_id: format!("o{i}").as_str().into(),
                    symbol: 0,
                    side: if i % 2 == 0 { Side::Buy } else { Side::Sell },
                    ord_type: OrdType::Limit,
                    tif: TimeInForce::Gtc,
                    price: 1000,
                    qty: 1,
                    account: None,
                    post_only: false,
                    ..Default::default()
                })),
            })
        })
        .collect();
    let t0 = Instant::now();
    let mut bytes = 0usize;
    for input in &inputs {
        seq += 1;
        x.apply(seq, ts, input, &mut out);
        if out.buf.len() > 1 << 20 {
            bytes += out.buf.len();
            out.clear();
        }
    }
    bytes += out.buf.len();
    let dt = t0.elapsed();
    println!(
        "{n} NewOrderSingle inputs in {:.3}s: {:.0} ns/input, {:.2} M inputs/s, {} MB of FIX out, {} trades",
        dt.as_secs_f64(),
        dt.as_nanos() as f64 / n as f64,
        n as f64 / dt.as_secs_f64() / 1e6,
        bytes >> 20,
        x.exchange.stats.trades
    );
    let t1 = Instant::now();
    let mut snap = Vec::new();
    let hash = x.snapshot_and_hash(&mut snap);
    println!(
        "snapshot {} MB in {:.1} ms (+ hash {:016x})",
        snap.len() >> 20,
        t1.elapsed().as_secs_f64() * 1e3,
        hash
    );
    Ok(())
}
