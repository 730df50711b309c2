//! The order path in instructions: framed FIX bytes -> `fix::frame` -> `FixAdapter::to_input`
//! -> `Node::apply` with live connections (reports formatted), as the event loop runs it
//! without sockets or the journal. The same message stream as the baseline's `order_path`
//! (the gateway before the restructure), so the two compare instruction for instruction:
//!
//! `valgrind --tool=callgrind --toggle-collect='*stretch*' target/release/examples/order_path`
//! (`... order_path validate`: the sessions validate every message against the FIX 4.4
//! dictionary, as `validate = true` does; the difference is validation's share. `... order_path
//! risk`: every pre-trade check on, with limits no order of the stream reaches: a price band,
//! order quantity and notional limits on every instrument and firm, open notional and net
//! position limits on every account; the difference is the checks' share.)
//!
//! Stream: CLIENT1 and CLIENT2 log on; 30,000 NewOrderSingles (warm-up, not timed) and then
//! 35,000 more, buys and sells of 3 at one price so every second one trades; then 14,000
//! rounds on CLIENT1 of a resting buy, its status, a replace and a cancel of the replacement.
//! Prints the messages timed, the bytes sent back, ns per message, trades and the state hash.
//!
//! `cargo run --release -p server --example order_path`

use exchange::Backing;
use fix::{frame, resync, Decoder, Encoder, FixVersion, Limits};
use fix_gateway::{ConnIds, FixAdapter, Outbox};
use server::{Config, Node, Record};
use std::sync::Arc;

/// A FIX 4.4 message from `sender` to `RIALTO` with MsgSeqNum `seq`: `body[0]` is the MsgType,
/// the rest are body fields in order.
fn message(sender: &str, seq: u64, body: &[(u32, &str)]) -> Vec<u8> {
    let mut enc = Encoder::default();
    enc.begin(body[0].1.as_bytes());
    enc.field(49, sender.as_bytes());
    enc.field(56, b"RIALTO");
    enc.field_u64(34, seq);
    enc.field_timestamp(
        52,
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64,
        fix::TimePrecision::Millis,
    );
    for (t, v) in &body[1..] {
        enc.field(*t, v.as_bytes());
    }
    if matches!(body[0].1, "D" | "F" | "G") {
        enc.field(60, b"20270115-08:00:00.000");
    }
    enc.finish(FixVersion::Fix44).to_vec()
}

/// What the event loop holds for this path.
struct Harness {
    adapter: FixAdapter,
    x: Node,
    out: Outbox,
    decoder: Decoder,
    ids: [Option<ConnIds>; 2],
    seq: u64,
    bytes: u64,
}

/// The measured work: each buffer of `stream` (from connection index 0 or 1) framed, read
/// into a record and applied. Not inlined, so callgrind's `--toggle-collect='*stretch*'`
/// counts exactly this.
#[inline(never)]
fn stretch(h: &mut Harness, stream: &[(usize, Vec<u8>)]) {
    for (conn, buf) in stream {
        let mut pos = 0;
        while pos < buf.len() {
            let rest = &buf[pos..];
            match frame(rest, Limits::default().msg_len_max) {
                Ok(None) => break,
                Err(_) => pos += resync(rest).max(1),
                Ok(Some(len)) => {
                    let msg = &rest[..len];
                    pos += len;
                    let Some(input) = h.adapter.to_input(
                        *conn as u64 + 1,
                        &mut h.ids[*conn],
                        &mut h.decoder,
                        msg,
                    ) else {
                        continue;
                    };
                    h.seq += 1;
                    let ts = 1_800_000_000_000_000_000 + h.seq;
                    h.x.apply(h.seq, ts, &Record::Fix(input), &mut h.out);
                    h.bytes += h.out.buf.len() as u64;
                    h.out.clear();
                }
            }
        }
    }
}

fn main() {
    // Records are stamped with a synthetic clock: no SendingTime window.
    let mut cfg = Config::defaults().lenient();
    let mode = std::env::args().nth(1);
    let validate = mode.as_deref() == Some("validate");
    let risk = mode.as_deref() == Some("risk");
    for s in &mut cfg.sessions {
        s.validate = validate;
    }
    if risk {
        for i in &mut cfg.instruments {
            i.risk = exchange::InstrumentRisk {
                band_bps: Some(5_000),
                reference_price: Some(1_000),
                max_order_qty: Some(1_000_000),
                max_order_notional: Some(1_000_000_000),
                breaker: None,
            };
        }
        for f in &mut cfg.firms {
            f.limits.max_order_qty = Some(1_000_000);
            f.limits.max_order_notional = Some(1_000_000_000);
            f.limits.max_open_notional_per_account = Some(1 << 60);
            f.limits.max_net_position_per_account = Some(1 << 40);
        }
    }
    let mut h = Harness {
        adapter: FixAdapter::new(Arc::new(cfg.fix_config())),
        x: Node::new(&cfg, Backing::Resident),
        out: Outbox::default(),
        decoder: Decoder::default(),
        ids: [None, None],
        seq: 0,
        bytes: 0,
    };
    let senders = ["CLIENT1", "CLIENT2"];
    let mut in_seq = [1u64, 1];
    let mut logons = Vec::new();
    for (i, s) in senders.iter().enumerate() {
        logons.push((
            i,
            message(s, 1, &[(35, "A"), (98, "0"), (108, "30"), (141, "Y")]),
        ));
        in_seq[i] = 2;
    }
    stretch(&mut h, &logons);
    // Part 1: orders, every second one trades.
    let part = |n: u64, in_seq: &mut [u64; 2], tag: &str| -> Vec<(usize, Vec<u8>)> {
        (0..n)
            .map(|i| {
                let s = (i % 2) as usize;
                let cl = format!("{tag}{i}");
                let side = if s == 0 { "1" } else { "2" };
                let m = message(
                    senders[s],
                    in_seq[s],
                    &[
                        (35, "D"),
                        (11, &cl),
                        (55, "ACME"),
                        (54, side),
                        (38, "3"),
                        (40, "2"),
                        (44, "10.25"),
                    ],
                );
                in_seq[s] += 1;
                (s, m)
            })
            .collect()
    };
    let warm = part(30_000, &mut in_seq, "w");
    let measured = part(35_000, &mut in_seq, "o");
    // Part 2: new, status, replace, cancel rounds on CLIENT1.
    let mut rounds = Vec::new();
    for i in 0..14_000u64 {
        let (n, r) = (format!("n{i}"), format!("r{i}"));
        let px = format!("9.{:02}", i % 50);
        let c = format!("c{i}");
        let s = 0usize;
        for body in [
            &[
                (35, "D"),
                (11, n.as_str()),
                (55, "BOLT"),
                (54, "1"),
                (38, "5"),
                (40, "2"),
                (44, px.as_str()),
            ][..],
            &[(35, "H"), (11, n.as_str()), (55, "BOLT"), (54, "1")],
            &[
                (35, "G"),
                (11, r.as_str()),
                (41, n.as_str()),
                (55, "BOLT"),
                (54, "1"),
                (38, "7"),
                (40, "2"),
                (44, "8.75"),
            ],
            &[
                (35, "F"),
                (11, c.as_str()),
                (41, r.as_str()),
                (55, "BOLT"),
                (54, "1"),
            ],
        ] {
            rounds.push((s, message(senders[s], in_seq[s], body)));
            in_seq[s] += 1;
        }
    }
    stretch(&mut h, &warm);
    let t0 = std::time::Instant::now();
    stretch(&mut h, &measured);
    stretch(&mut h, &rounds);
    let el = t0.elapsed();
    let n = measured.len() + rounds.len();
    println!(
        "validate={validate} risk={risk} messages={n} out_bytes={} ns_per_msg={:.1} trades={} hash={:016x}",
        h.bytes,
        el.as_nanos() as f64 / n as f64,
        h.x.exchange.stats.trades,
        h.x.state_hash()
    );
}
