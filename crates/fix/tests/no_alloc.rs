//! The hot path allocates nothing in steady state: decoding, validating (`fix::dict`, a
//! violation included) and reading a NewOrderSingle,
//! encoding an ExecutionReport, a logged-on session fed typed inputs (`on_message`,
//! `next_queued`) taking an order and sending its report (`send_app`), and the same session
//! fed session-level traffic as bytes (`on_bytes`).
//!
//! Counted with a global allocator wrapper that only this test binary installs; the count is
//! per thread so the test harness's own threads do not disturb it.

mod common;
use common::T0;

use fix::app::{
    AppMessage, ExecType, ExecutionReport, InstrumentRef, Instruments, NewOrderSingle, OrdStatus,
};
use fix::{
    read_inbound, Decoder, Encoder, FixVersion, Header, Limits, MemoryStore, Session,
    SessionConfig, SessionEvent, SessionHandler, TimePrecision,
};

#[global_allocator]
static GLOBAL: alloc_count::Counting = alloc_count::Counting;

use alloc_count::allocs;

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

fn report(cl: &[u8], now: u64) -> ExecutionReport<'_> {
    ExecutionReport {
        order_id: 1,
        cl_ord_id: cl,
        orig_cl_ord_id: None,
        exec_id: (1, 0),
        exec_type: ExecType::Trade,
        ord_status: OrdStatus::PartiallyFilled,
        account: 0,
        symbol: b"ACME",
        side: types::Side::Buy,
        ord_type: types::OrdType::Limit,
        price: 1000,
        time_in_force: types::TimeInForce::Gtd,
        order_qty: 100,
        // A stop limit GTD iceberg: every field of order types II is written.
        ext: fix::app::OrderExt {
            stop_px: 995,
            max_floor: 10,
            expire_time_ns: now + 1_500,
        },
        last: Some((1001, 30)),
        leaves_qty: 40,
        cum_qty: 60,
        // Fills at two prices: AvgPx takes the rounded path.
        notional: 1000 * 30 + 1001 * 30,
        price_decimals: 2,
        text: None,
        transact_time_ns: now,
    }
}

fn client_message(enc: &mut Encoder, msg_type: &[u8], seq: u64, body: &[(u32, &[u8])]) -> Vec<u8> {
    enc.begin(msg_type);
    enc.header(&Header {
        sender_comp_id: b"CLIENT1",
        target_comp_id: b"RIALTO",
        msg_seq_num: seq,
        sending_time_ns: T0,
        poss_dup: false,
        orig_sending_time: None,
        time_precision: TimePrecision::Millis,
    });
    for (t, v) in body {
        enc.field(*t, v);
    }
    enc.finish(FixVersion::Fix44).to_vec()
}

/// Handler that counts without allocating.
#[derive(Default)]
struct Counter {
    bytes_out: u64,
    events: u64,
}

impl SessionHandler for Counter {
    fn send(&mut self, bytes: &[u8]) {
        self.bytes_out += bytes.len() as u64;
    }
    fn on_event(&mut self, _event: SessionEvent) {
        self.events += 1;
    }
}

const NOS: &[(u32, &[u8])] = &[
    (11, b"ORD-000001"),
    (1, b"7"),
    (55, b"ACME"),
    (54, b"1"),
    (38, b"100"),
    (40, b"4"),
    (44, b"10.00"),
    (99, b"9.95"),
    (111, b"10"),
    (59, b"6"),
    (126, b"20231115-22:13:20.000"),
    (60, b"20231114-22:13:20.000"),
];

/// The owner's application message: what it keeps of an order, inline (no heap).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Order {
    cl_ord_id: [u8; 16],
    cl_len: u8,
    qty: u64,
    price: i64,
}

/// What the session holds of an application message: the order, if it read.
#[derive(Clone, Copy, Debug)]
struct Held(Option<Order>);

impl fix::InboundApp for Held {
    fn msg_type(&self) -> &[u8] {
        b"D"
    }
}

fn order(m: &fix::Message<'_>) -> Option<Order> {
    let o = NewOrderSingle::read(m, &Table).ok()?;
    let mut cl_ord_id = [0u8; 16];
    let n = o.cl_ord_id.len().min(16);
    cl_ord_id[..n].copy_from_slice(&o.cl_ord_id[..n]);
    Some(Order {
        cl_ord_id,
        cl_len: n as u8,
        qty: o.order_qty,
        price: o.price,
    })
}

#[test]
fn codec_allocates_nothing() {
    let mut enc = Encoder::default();
    let nos = client_message(&mut enc, b"D", 2, NOS);
    let mut dec = Decoder::new(Limits::default());
    let dict = fix::dict::dictionary(FixVersion::Fix44);
    let fix42 = fix::dict::dictionary(FixVersion::Fix42); // 4.2 requires HandlInst (21)
    let before = allocs();
    let mut units = 0;
    for _ in 0..1000 {
        let m = dec.decode(&nos).unwrap();
        assert!(dict.validate(&m).is_ok());
        // A violation is found without allocating too (its text is built only on demand).
        assert!(fix42.validate(&m).is_err());
        let o = NewOrderSingle::read(&m, &Table).unwrap();
        units += o.price;
        enc.begin(b"8");
        enc.header(&Header {
            sender_comp_id: b"RIALTO",
            target_comp_id: b"CLIENT1",
            msg_seq_num: 9,
            sending_time_ns: T0,
            poss_dup: false,
            orig_sending_time: None,
            time_precision: TimePrecision::Micros,
        });
        report(o.cl_ord_id, T0).encode_body(FixVersion::Fix44, &mut enc);
        enc.finish(FixVersion::Fix44);
    }
    assert_eq!(allocs() - before, 0, "codec allocated");
    assert_eq!(units, 1000 * 1000);
    let avg_px = b"\x016=10.005\x01";
    assert!(enc.bytes().windows(avg_px.len()).any(|w| w == avg_px));
}

/// A logged-on session driven as the exchange drives it: each frame decoded and read into the
/// owner's type, `on_message` then `next_queued`, an ExecutionReport numbered, stored and sent
/// with `send_app`, and the timers ticked.
#[test]
fn typed_session_allocates_nothing() {
    let mut cfg = SessionConfig::new(FixVersion::Fix44, "RIALTO", "CLIENT1");
    cfg.time_precision = TimePrecision::Micros;
    let mut s: Session<MemoryStore, Held> = Session::new(cfg, MemoryStore::new(64));
    let mut h = Counter::default();
    let mut enc = Encoder::default();
    let mut dec = Decoder::new(Limits::default());
    s.on_connected(T0);
    let frames: Vec<Vec<u8>> = std::iter::once(client_message(
        &mut enc,
        b"A",
        1,
        &[(98, b"0"), (108, b"30")],
    ))
    .chain((2..2000).map(|seq| client_message(&mut enc, b"D", seq, NOS)))
    .collect();
    let expect = Some((&b"FIX.4.4"[..], &b"CLIENT1"[..], &b"RIALTO"[..]));
    let mut orders = 0u64;
    type S = Session<MemoryStore, Held>;
    // The exchange's part: take the order, answer it.
    fn handle(s: &mut S, o: Option<Order>, h: &mut Counter) -> u64 {
        let o = o.expect("a valid order");
        let cl = &o.cl_ord_id[..o.cl_len as usize];
        s.send_app(&report(cl, T0), T0, h);
        o.qty
    }
    let mut step = |s: &mut S, frame: &[u8], h: &mut Counter| {
        let (header, msg) = {
            let m = dec.decode(frame).unwrap();
            read_inbound(&m, expect, |m| Ok(Held(order(m))))
        };
        if let Some(&Held(o)) = s.on_message(&header, &msg, T0, h) {
            orders += handle(s, o, h);
        }
        while let Some((_, Held(o))) = s.next_queued(T0, h) {
            orders += handle(s, o, h);
        }
        s.on_tick(T0, h);
    };
    // Warm up: the store fills its ring and the buffers reach their size.
    for f in &frames[..200] {
        step(&mut s, f, &mut h);
    }
    let before = allocs();
    for f in &frames[200..] {
        step(&mut s, f, &mut h);
    }
    assert_eq!(allocs() - before, 0, "session allocated");
    assert_eq!(orders, 1998 * 100);
    assert_eq!((s.next_in(), s.next_out()), (2000, 2000));
}

/// Session-level traffic fed as bytes (`on_bytes`): TestRequests answered, Heartbeats taken,
/// time passing. (An application message fed as bytes is delivered as a `Vec<u8>`.)
#[test]
fn session_traffic_as_bytes_allocates_nothing() {
    let cfg = SessionConfig::new(FixVersion::Fix44, "RIALTO", "CLIENT1");
    let mut s: Session<MemoryStore, Vec<u8>> = Session::new(cfg, MemoryStore::new(64));
    let mut h = Counter::default();
    let mut enc = Encoder::default();
    s.on_connected(T0);
    let logon = client_message(&mut enc, b"A", 1, &[(98, b"0"), (108, b"30")]);
    s.on_bytes(&logon, T0, &mut h, &mut |_| unreachable!());
    let frames: Vec<Vec<u8>> = (2..2000)
        .map(|seq| match seq % 2 {
            0 => client_message(&mut enc, b"1", seq, &[(112, b"PING")]),
            _ => client_message(&mut enc, b"0", seq, &[(112, b"PING")]),
        })
        .collect();
    let mut now = T0;
    for f in &frames[..200] {
        s.on_bytes(f, now, &mut h, &mut |_| unreachable!());
        s.on_tick(now, &mut h);
    }
    let before = allocs();
    for f in &frames[200..] {
        now += 1_000_000;
        assert_eq!(s.on_bytes(f, now, &mut h, &mut |_| unreachable!()), f.len());
        s.on_tick(now, &mut h);
    }
    assert_eq!(allocs() - before, 0, "session allocated");
    assert_eq!((s.next_in(), s.next_out()), (2000, 1001));
}
