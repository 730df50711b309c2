//! The hot path allocates nothing in steady state: decoding and parsing a NewOrderSingle,
//! encoding an ExecutionReport, and a logged-on session taking an order and sending a report.
//!
//! Counted with a global allocator wrapper that only this test binary installs; the count is
//! per thread so the test harness's own threads do not disturb it.

use fix::app::{ExecType, ExecutionReport, NewOrderSingle, OrdStatus};
use fix::{
    Decimal, Decoder, Encoder, FixVersion, Header, Limits, MemoryStore, Message, Session,
    SessionConfig, SessionEvent, SessionHandler, TimePrecision,
};

#[global_allocator]
static GLOBAL: alloc_count::Counting = alloc_count::Counting;

use alloc_count::allocs;

const T0: u64 = 1_700_000_000_000_000_000;

fn report(cl: &[u8], now: u64) -> ExecutionReport<'_> {
    ExecutionReport {
        order_id: Some(1),
        cl_ord_id: cl,
        orig_cl_ord_id: None,
        exec_id: 1,
        exec_type: ExecType::New,
        ord_status: OrdStatus::New,
        account: None,
        symbol: b"ACME",
        side: types::Side::Buy,
        ord_type: Some(types::OrdType::Limit),
        time_in_force: None,
        order_qty: 100,
        price: Some(Decimal::new(1000, 2)),
        last: None,
        leaves_qty: 100,
        cum_qty: 0,
        avg_px: Decimal::new(0, 2),
        ord_rej_reason: None,
        text: None,
        transact_time_ns: now,
        time_precision: TimePrecision::Micros,
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

/// Handler that parses orders and counts bytes without allocating.
#[derive(Default)]
struct Counter {
    orders: u64,
    bytes_out: u64,
}

impl SessionHandler for Counter {
    fn send(&mut self, bytes: &[u8]) {
        self.bytes_out += bytes.len() as u64;
    }
    fn on_app_message(&mut self, msg: &Message<'_>) {
        if NewOrderSingle::parse(msg).is_ok() {
            self.orders += 1;
        }
    }
    fn on_event(&mut self, _event: SessionEvent) {}
}

const NOS: &[(u32, &[u8])] = &[
    (11, b"ORD-000001"),
    (1, b"ACC"),
    (55, b"ACME"),
    (54, b"1"),
    (38, b"100"),
    (40, b"2"),
    (44, b"10.00"),
    (59, b"0"),
    (60, b"20231114-22:13:20.000"),
];

#[test]
fn steady_state_allocates_nothing() {
    // Codec alone.
    let mut enc = Encoder::default();
    let nos = client_message(&mut enc, b"D", 2, NOS);
    let mut dec = Decoder::new(Limits::default());
    let before = allocs();
    let mut ticks = 0;
    for _ in 0..1000 {
        let m = dec.decode(&nos).unwrap();
        let o = NewOrderSingle::parse(&m).unwrap();
        ticks += o.price.unwrap().to_ticks(Decimal::new(1, 2)).unwrap();
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
        fix::app::AppMessage::encode_body(&report(o.cl_ord_id, T0), FixVersion::Fix44, &mut enc);
        enc.finish(FixVersion::Fix44);
    }
    assert_eq!(allocs() - before, 0, "codec allocated");
    assert_eq!(ticks, 1000 * 1000);

    // A logged-on session: order in, report out, heartbeat timers.
    let mut cfg = SessionConfig::new(FixVersion::Fix44, "RIALTO", "CLIENT1");
    cfg.time_precision = TimePrecision::Micros;
    let mut s = Session::new(cfg, MemoryStore::new(64));
    let mut h = Counter::default();
    s.on_connected(T0);
    let logon = client_message(&mut enc, b"A", 1, &[(98, b"0"), (108, b"30")]);
    s.on_bytes(&logon, T0, &mut h);
    let frames: Vec<Vec<u8>> = (2..2000)
        .map(|seq| client_message(&mut enc, b"D", seq, NOS))
        .collect();
    // Warm up: the store fills its ring and the buffers reach their size.
    for f in &frames[..200] {
        s.on_bytes(f, T0, &mut h);
        s.send_app(&report(b"ORD-000001", T0), T0, &mut h);
    }
    let before = allocs();
    for f in &frames[200..] {
        s.on_bytes(f, T0, &mut h);
        s.send_app(&report(b"ORD-000001", T0), T0, &mut h);
        s.on_tick(T0, &mut h);
    }
    assert_eq!(allocs() - before, 0, "session allocated");
    assert_eq!(h.orders, 1998);
}
