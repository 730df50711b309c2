//! Codec micro benchmark: ns per message to decode and to encode a NewOrderSingle and an
//! ExecutionReport, and for a logged-on session to take an order and send its report (fed
//! typed inputs, as the exchange feeds it: decode, `read_inbound`, `on_message`, `send_app`).
//!
//! Run: `cargo run --release -p fix --example codec_bench [-- --iters N] [--only NAME]`
//! (NAME: decode-nos, decode-er, encode-nos, encode-er, session).
//! Each figure is the median of 3 runs of N messages (default 1,000,000). The printed `hash`
//! sums values read back from every message so the work cannot be optimized away; it must not
//! change when the code gets faster.

use std::hint::black_box;
use std::time::Instant;

use fix::app::{
    AppMessage, ExecType, ExecutionReport, InstrumentRef, Instruments, NewOrder, NewOrderSingle,
    OrdStatus,
};
use fix::{
    read_inbound, Decimal, Decoder, Encoder, FixVersion, Header, Limits, MemoryStore, Session,
    SessionConfig, SessionEvent, SessionHandler, TimePrecision,
};
use types::{OrdType, Side, TimeInForce};

const T0: u64 = 1_700_000_000_000_000_000;

/// One instrument, ACME, with prices in cents.
struct Table;

impl Instruments for Table {
    fn find(&self, symbol: &[u8]) -> Option<InstrumentRef> {
        (symbol == b"ACME").then_some(InstrumentRef {
            id: 1,
            decimals: 2,
            tick: 1,
        })
    }
}

fn header(sender: &'static [u8], target: &'static [u8], seq: u64) -> Header<'static> {
    Header {
        sender_comp_id: sender,
        target_comp_id: target,
        msg_seq_num: seq,
        sending_time_ns: T0 + seq * 1000,
        poss_dup: false,
        orig_sending_time: None,
        time_precision: TimePrecision::Micros,
    }
}

fn order(cl: &[u8]) -> NewOrder<'_> {
    NewOrder {
        cl_ord_id: cl,
        symbol: b"ACME",
        side: Side::Buy,
        order_qty: 100,
        ord_type: OrdType::Limit,
        price: Some(Decimal::new(10125, 2)),
        time_in_force: TimeInForce::Day,
        post_only: false,
        transact_time_ns: 1_700_000_000_000_000_000,
    }
}

fn fill(cl: &[u8], i: u64) -> ExecutionReport<'_> {
    ExecutionReport {
        order_id: 1_000_000 + i,
        cl_ord_id: cl,
        orig_cl_ord_id: None,
        exec_id: (5_000_000 + i, 1),
        exec_type: ExecType::Trade,
        ord_status: OrdStatus::PartiallyFilled,
        account: 1,
        symbol: b"ACME",
        side: Side::Buy,
        ord_type: OrdType::Limit,
        price: 10125,
        time_in_force: TimeInForce::Day,
        order_qty: 300,
        ext: Default::default(),
        last: Some((10125, 100)),
        leaves_qty: 200,
        cum_qty: 100,
        notional: 10125 * 100,
        price_decimals: 2,
        text: None,
        transact_time_ns: T0 + i,
    }
}

fn encode(enc: &mut Encoder, msg: &impl AppMessage, h: &Header<'_>) -> u64 {
    enc.begin(msg.msg_type());
    enc.header(h);
    msg.encode_body(FixVersion::Fix44, enc);
    let b = enc.finish(FixVersion::Fix44);
    b[b.len() - 4] as u64 + b.len() as u64
}

/// Runs `f` `iters` times, 3 times over; returns (median ns/msg, hash).
fn measure(iters: u64, mut f: impl FnMut(u64) -> u64) -> (f64, u64) {
    let mut runs = [0f64; 3];
    let mut hash = 0u64;
    for r in &mut runs {
        hash = 0;
        let start = Instant::now();
        for i in 0..iters {
            hash = hash.wrapping_add(f(black_box(i)));
        }
        *r = start.elapsed().as_nanos() as f64 / iters as f64;
    }
    runs.sort_by(|a, b| a.total_cmp(b));
    (runs[1], hash)
}

#[derive(Default)]
struct Sink {
    orders: u64,
    bytes: u64,
}

impl SessionHandler for Sink {
    fn send(&mut self, bytes: &[u8]) {
        self.bytes += bytes.len() as u64;
    }
    fn on_event(&mut self, _event: SessionEvent) {}
}

/// What the exchange keeps of an order it was sent (its quantity, here).
#[derive(Clone, Copy)]
struct Qty(u64);

impl fix::InboundApp for Qty {
    fn msg_type(&self) -> &[u8] {
        b"D"
    }
}

type Bench = Session<MemoryStore, Qty>;

/// One inbound frame through a session as the exchange drives it; each order delivered is
/// answered with a fill.
fn feed(s: &mut Bench, dec: &mut Decoder, frame: &[u8], i: u64, sink: &mut Sink) {
    let expect = Some((&b"FIX.4.4"[..], &b"CLIENT1"[..], &b"RIALTO"[..]));
    let (header, msg) = {
        let m = dec.decode(frame).expect("a valid frame");
        read_inbound(&m, expect, |m| {
            Ok(Qty(
                NewOrderSingle::read(m, &Table).map_or(0, |o| o.order_qty)
            ))
        })
    };
    if let Some(&Qty(qty)) = s.on_message(&header, &msg, T0, sink) {
        sink.orders += qty;
        s.send_app(&fill(b"ORD-0000001", i), T0, sink);
    }
    while let Some((_, Qty(qty))) = s.next_queued(T0, sink) {
        sink.orders += qty;
        s.send_app(&fill(b"ORD-0000001", i), T0, sink);
    }
}

/// Benchmark names, in order, for `--only`.
const NAMES: [&str; 5] = [
    "decode-nos",
    "decode-er",
    "encode-nos",
    "encode-er",
    "session",
];

/// Returns one line per figure: `name ns_per_msg hash`.
fn run(iters: u64, only: Option<usize>) -> Vec<(&'static str, f64, u64)> {
    let want = |k: usize| only.is_none() || only == Some(k);
    let mut enc = Encoder::default();
    let mut dec = Decoder::new(Limits::default());
    let mut out = Vec::new();

    encode(
        &mut enc,
        &order(b"ORD-0000001"),
        &header(b"CLIENT1", b"RIALTO", 2),
    );
    let nos = enc.bytes().to_vec();
    encode(
        &mut enc,
        &fill(b"ORD-0000001", 1),
        &header(b"RIALTO", b"CLIENT1", 2),
    );
    let er = enc.bytes().to_vec();

    if want(0) {
        let (ns, hash) = measure(iters, |_| {
            let m = dec.decode(black_box(&nos)).expect("valid NewOrderSingle");
            let o = NewOrderSingle::read(&m, &Table).expect("valid NewOrderSingle");
            o.order_qty + o.price as u64 + o.cl_ord_id.len() as u64
        });
        out.push(("decode+parse NewOrderSingle", ns, hash));
    }

    if want(1) {
        let (ns, hash) = measure(iters, |_| {
            let m = dec.decode(black_box(&er)).expect("valid ExecutionReport");
            m.get_u64(14).ok().flatten().unwrap_or(0) + m.field_count() as u64
        });
        out.push(("decode ExecutionReport", ns, hash));
    }

    if want(2) {
        let (ns, hash) = measure(iters, |i| {
            encode(
                &mut enc,
                &order(b"ORD-0000001"),
                &header(b"CLIENT1", b"RIALTO", i + 2),
            )
        });
        out.push(("encode NewOrderSingle", ns, hash));
    }

    if want(3) {
        let (ns, hash) = measure(iters, |i| {
            encode(
                &mut enc,
                &fill(b"ORD-0000001", i),
                &header(b"RIALTO", b"CLIENT1", i + 2),
            )
        });
        out.push(("encode ExecutionReport", ns, hash));
    }

    if want(4) {
        // Session: one NewOrderSingle in (sequence, header and SendingTime checks, delivery and
        // parse) and one ExecutionReport out (encode, store, send), per message pair.
        let frames: Vec<Vec<u8>> = (0..1024u64)
            .map(|i| {
                encode(
                    &mut enc,
                    &order(b"ORD-0000001"),
                    &header(b"CLIENT1", b"RIALTO", i),
                );
                enc.bytes().to_vec()
            })
            .collect();
        let (ns, hash) = {
            let mut runs = [0f64; 3];
            let mut hash = 0;
            for r in &mut runs {
                let mut cfg = SessionConfig::new(FixVersion::Fix44, "RIALTO", "CLIENT1");
                cfg.sending_time_tolerance_ns = None;
                let mut s: Bench = Session::new(cfg, MemoryStore::new(1024));
                let mut sink = Sink::default();
                let mut dec = Decoder::new(Limits::default());
                let mut elapsed = 0u128;
                let mut done = 0u64;
                let mut seq_base = 0u64;
                while done < iters {
                    // Re-log-on every 1022 orders so the prebuilt frames' numbers line up.
                    s.on_disconnected();
                    s.set_next_in(1);
                    s.on_connected(T0);
                    feed(&mut s, &mut dec, &logon(&mut enc), seq_base, &mut sink);
                    let batch = (iters - done).min(1022);
                    let start = Instant::now();
                    for (i, f) in frames[2..2 + batch as usize].iter().enumerate() {
                        feed(&mut s, &mut dec, f, seq_base + i as u64, &mut sink);
                    }
                    elapsed += start.elapsed().as_nanos();
                    done += batch;
                    seq_base += batch;
                }
                *r = elapsed as f64 / iters as f64;
                hash = sink.orders;
            }
            runs.sort_by(|a, b| a.total_cmp(b));
            (runs[1], hash)
        };
        out.push(("session NewOrderSingle in + ExecutionReport out", ns, hash));
    }
    out
}

fn logon(enc: &mut Encoder) -> Vec<u8> {
    enc.begin(b"A");
    enc.header(&header(b"CLIENT1", b"RIALTO", 1));
    enc.field(98, b"0");
    enc.field(108, b"30");
    enc.finish(FixVersion::Fix44).to_vec()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let only = match args.iter().position(|a| a == "--only") {
        Some(i) => match args
            .get(i + 1)
            .and_then(|v| NAMES.iter().position(|n| n == v))
        {
            Some(k) => Some(k),
            None => {
                eprintln!("--only takes one of {NAMES:?}");
                std::process::exit(2);
            }
        },
        None => None,
    };
    let iters = match args.iter().position(|a| a == "--iters") {
        Some(i) => match args.get(i + 1).and_then(|v| v.parse::<u64>().ok()) {
            Some(n) if n > 0 => n,
            _ => {
                eprintln!("usage: codec_bench [--iters N] [--only NAME]  (N > 0)");
                std::process::exit(2);
            }
        },
        None => 1_000_000,
    };
    println!("fix codec bench: {iters} messages per run, median of 3 runs");
    for (name, ns, hash) in run(iters, only) {
        println!("{name:<50} {ns:>8.1} ns/msg   hash={hash}");
    }
}

#[test]
fn bench_runs_with_tiny_parameters() {
    let lines = run(2000, None);
    assert_eq!(lines.len(), 5);
    // Hashes are fixed by the inputs: 2000 orders of 100 at 101.25 (10125 price units),
    // ClOrdID of 11 bytes; the session bench takes 2000 orders of 100.
    assert_eq!(lines[0].2, 2000 * (100 + 10125 + 11));
    assert_eq!(lines[4].2, 2000 * 100);
}
