//! Drives the exported C ABI exactly as the flash1 harness does (engine_init with a transport
//! vtable, engine_on_*, engine_query_*) and checks the exact report sequences.
//!
//! The library keeps one global engine, so every test holds `LOCK` for its whole run.

use std::ffi::c_void;
use std::sync::Mutex;

use flash1::abi::{
    CancelMsg, MeMsg, ModifyMsg, MsgPayload, NewOrderMsg, Report, Transport, CANCEL_ACK,
    CANCEL_REJECT, MODIFY_ACK, MODIFY_REJECT, MSG_CANCEL, MSG_MODIFY, MSG_NEW, ORDER_ACK, TRADE,
};

static LOCK: Mutex<()> = Mutex::new(());
static REPORTS: Mutex<Vec<Report>> = Mutex::new(Vec::new());

/// The test transport's producer side: copies the report into `REPORTS`.
unsafe extern "C" fn test_push(_handle: *mut c_void, report: *const Report) -> i32 {
    // SAFETY: the library passes a pointer to a live report for the duration of the call.
    let r = unsafe { *report };
    REPORTS.lock().unwrap().push(r);
    1
}

static TRANSPORT: Transport = Transport {
    create: None,
    push: Some(test_push),
    drain: None,
    flush: None,
    destroy: None,
};

const BUY: u8 = 0;
const SELL: u8 = 1;

/// One flash1 message, as the harness would build it.
#[derive(Clone, Copy)]
enum Msg {
    New(u64, u8, u32, i64, bool),
    Cancel(u64),
    Modify(u64, u8, u32, i64),
}

/// A fresh engine for one test; dropping it shuts the engine down.
struct Session {
    seq: u64,
}

impl Session {
    fn start() -> Session {
        REPORTS.lock().unwrap().clear();
        // SAFETY: `TRANSPORT` is a valid vtable for the life of the test binary.
        unsafe { flash1::engine_init(42, &TRANSPORT, std::ptr::null_mut()) };
        Session { seq: 0 }
    }

    /// Sends one message through the per-message entry points; returns its reports.
    fn send(&mut self, m: Msg) -> Vec<Report> {
        REPORTS.lock().unwrap().clear();
        let seq = self.seq;
        self.seq += 1;
        // SAFETY: each pointer is to a live, initialized struct for the duration of the call.
        unsafe {
            match m {
                Msg::New(id, side, qty, px, ioc) => {
                    flash1::engine_on_new_order(&new(seq, id, side, qty, px, ioc))
                }
                Msg::Cancel(id) => flash1::engine_on_cancel(&CancelMsg {
                    order_id: id,
                    sequence_number: seq,
                }),
                Msg::Modify(id, side, qty, px) => flash1::engine_on_modify(&ModifyMsg {
                    order_id: id,
                    sequence_number: seq,
                    new_price_ticks: px,
                    new_quantity: qty,
                    side,
                    reserved: [0; 3],
                }),
            }
        }
        flash1::engine_flush();
        std::mem::take(&mut *REPORTS.lock().unwrap())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        flash1::engine_shutdown();
    }
}

fn new(seq: u64, id: u64, side: u8, qty: u32, px: i64, ioc: bool) -> NewOrderMsg {
    NewOrderMsg {
        order_id: id,
        sequence_number: seq,
        price_ticks: px,
        quantity: qty,
        side,
        ioc: u8::from(ioc),
        reserved: [0; 2],
    }
}

fn rep(t: u8, side: u8, seq: u64, id: u64, px: i64, qty: u32) -> Report {
    Report {
        report_type: t,
        side,
        sequence_number: seq,
        order_id: id,
        price_ticks: px,
        quantity: qty,
        ..Report::default()
    }
}

fn trade(seq: u64, taker_side: u8, px: i64, qty: u32, maker: u64, taker: u64) -> Report {
    Report {
        report_type: TRADE,
        side: taker_side,
        sequence_number: seq,
        price_ticks: px,
        quantity: qty,
        maker_order_id: maker,
        taker_order_id: taker,
        ..Report::default()
    }
}

#[test]
fn new_order_acks_trades_at_maker_prices_and_cancels_the_ioc_remainder() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut s = Session::start();
    assert_eq!(
        s.send(Msg::New(1, SELL, 10, 100, false)),
        vec![rep(ORDER_ACK, SELL, 0, 1, 100, 10)]
    );
    assert_eq!(
        s.send(Msg::New(2, SELL, 10, 101, false)),
        vec![rep(ORDER_ACK, SELL, 1, 2, 101, 10)]
    );
    assert_eq!(
        s.send(Msg::New(5, SELL, 10, 101, false)),
        vec![rep(ORDER_ACK, SELL, 2, 5, 101, 10)]
    );
    // A buy IOC for 25 at 101 takes 100 first, then 101 in time order, and cancels 5.
    assert_eq!(
        s.send(Msg::New(3, BUY, 25, 101, true)),
        vec![
            rep(ORDER_ACK, BUY, 3, 3, 101, 25),
            trade(3, BUY, 100, 10, 1, 3),
            trade(3, BUY, 101, 10, 2, 3),
            trade(3, BUY, 101, 5, 5, 3),
        ]
    );
    // Order 5 has 5 left; an IOC for 8 fills 5 and cancels 3 at its own price.
    assert_eq!(
        s.send(Msg::New(4, BUY, 8, 105, true)),
        vec![
            rep(ORDER_ACK, BUY, 4, 4, 105, 8),
            trade(4, BUY, 101, 5, 5, 4),
            rep(CANCEL_ACK, BUY, 4, 4, 105, 3),
        ]
    );
    // An IOC into an empty side is acked and fully canceled; nothing rests.
    assert_eq!(
        s.send(Msg::New(6, SELL, 7, 90, true)),
        vec![
            rep(ORDER_ACK, SELL, 5, 6, 90, 7),
            rep(CANCEL_ACK, SELL, 5, 6, 90, 7)
        ]
    );
    assert_eq!(flash1::engine_query_best_bid(), i64::MIN);
    assert_eq!(flash1::engine_query_best_ask(), i64::MAX);
}

#[test]
fn cancel_acks_with_the_resting_side_and_price_and_rejects_otherwise() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut s = Session::start();
    s.send(Msg::New(1, BUY, 10, 100, false));
    // Partly filled: the remainder is still cancelable.
    assert_eq!(
        s.send(Msg::New(2, SELL, 4, 99, false)),
        vec![
            rep(ORDER_ACK, SELL, 1, 2, 99, 4),
            trade(1, SELL, 100, 4, 1, 2)
        ]
    );
    assert_eq!(
        s.send(Msg::Cancel(1)),
        vec![rep(CANCEL_ACK, BUY, 2, 1, 100, 0)]
    );
    assert_eq!(
        s.send(Msg::Cancel(1)),
        vec![rep(CANCEL_REJECT, 0, 3, 1, 0, 0)]
    );
    assert_eq!(
        s.send(Msg::Cancel(77)),
        vec![rep(CANCEL_REJECT, 0, 4, 77, 0, 0)]
    );
    // A fully filled order is not resting either.
    s.send(Msg::New(3, SELL, 5, 120, false));
    s.send(Msg::New(4, BUY, 5, 120, false));
    assert_eq!(
        s.send(Msg::Cancel(3)),
        vec![rep(CANCEL_REJECT, 0, 7, 3, 0, 0)]
    );
    assert_eq!(
        s.send(Msg::Cancel(4)),
        vec![rep(CANCEL_REJECT, 0, 8, 4, 0, 0)]
    );
    assert_eq!(flash1::engine_query_best_bid(), i64::MIN);
}

#[test]
fn modify_reinserts_crossing_at_the_makers_price_and_rejects_when_not_resting() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut s = Session::start();
    s.send(Msg::New(1, SELL, 10, 100, false));
    s.send(Msg::New(2, BUY, 10, 90, false));
    // Repriced through the ask: trades 6 at the maker's 100 (not its own 105), then the ack.
    assert_eq!(
        s.send(Msg::Modify(2, BUY, 6, 105)),
        vec![
            trade(2, BUY, 100, 6, 1, 2),
            rep(MODIFY_ACK, BUY, 2, 2, 105, 6)
        ]
    );
    assert_eq!(
        s.send(Msg::Modify(2, BUY, 6, 106)),
        vec![rep(MODIFY_REJECT, 0, 3, 2, 0, 0)]
    );
    assert_eq!(
        s.send(Msg::Modify(999, BUY, 1, 1)),
        vec![rep(MODIFY_REJECT, 0, 4, 999, 0, 0)]
    );
    assert_eq!(flash1::engine_query_depth_at(100, SELL), 4);
    // A modify always loses priority, even at the same price with less quantity.
    s.send(Msg::New(3, SELL, 5, 100, false));
    assert_eq!(
        s.send(Msg::Modify(1, SELL, 3, 100)),
        vec![rep(MODIFY_ACK, SELL, 6, 1, 100, 3)]
    );
    assert_eq!(
        s.send(Msg::New(4, BUY, 8, 100, true)),
        vec![
            rep(ORDER_ACK, BUY, 7, 4, 100, 8),
            trade(7, BUY, 100, 5, 3, 4),
            trade(7, BUY, 100, 3, 1, 4),
        ]
    );
    assert_eq!(flash1::engine_query_best_ask(), i64::MAX);
}

#[test]
fn queries_read_the_book_with_the_header_sentinels() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut s = Session::start();
    assert_eq!(flash1::engine_query_best_bid(), i64::MIN);
    assert_eq!(flash1::engine_query_best_ask(), i64::MAX);
    assert_eq!(flash1::engine_query_depth_at(100, BUY), 0);
    s.send(Msg::New(1, BUY, 10, 100, false));
    s.send(Msg::New(2, BUY, 7, 100, false));
    s.send(Msg::New(3, BUY, 4, 98, false));
    s.send(Msg::New(4, SELL, 9, 103, false));
    s.send(Msg::New(5, SELL, 200_000, 200_000, false));
    assert_eq!(flash1::engine_query_best_bid(), 100);
    assert_eq!(flash1::engine_query_best_ask(), 103);
    assert_eq!(flash1::engine_query_depth_at(100, BUY), 17);
    assert_eq!(flash1::engine_query_depth_at(98, BUY), 4);
    assert_eq!(flash1::engine_query_depth_at(99, BUY), 0);
    assert_eq!(flash1::engine_query_depth_at(100, SELL), 0);
    assert_eq!(flash1::engine_query_depth_at(200_000, SELL), 200_000);
    assert_eq!(flash1::engine_query_depth_at(100, 7), 0);
    s.send(Msg::Cancel(1));
    s.send(Msg::Cancel(2));
    assert_eq!(flash1::engine_query_best_bid(), 98);
    assert_eq!(flash1::engine_query_depth_at(100, BUY), 0);
}

#[test]
fn a_reused_id_is_a_fresh_order_under_its_flash1_id() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let mut s = Session::start();
    s.send(Msg::New(1, BUY, 10, 100, false));
    s.send(Msg::Cancel(1));
    // Reused after a cancel: acked, rests, trades as maker 1, and can be modified and canceled.
    assert_eq!(
        s.send(Msg::New(1, SELL, 10, 200, false)),
        vec![rep(ORDER_ACK, SELL, 2, 1, 200, 10)]
    );
    assert_eq!(
        s.send(Msg::Modify(1, SELL, 8, 201)),
        vec![rep(MODIFY_ACK, SELL, 3, 1, 201, 8)]
    );
    assert_eq!(
        s.send(Msg::New(2, BUY, 3, 201, true)),
        vec![
            rep(ORDER_ACK, BUY, 4, 2, 201, 3),
            trade(4, BUY, 201, 3, 1, 2)
        ]
    );
    assert_eq!(
        s.send(Msg::Cancel(1)),
        vec![rep(CANCEL_ACK, SELL, 5, 1, 201, 0)]
    );
    // Reused again after a fill.
    s.send(Msg::New(1, BUY, 5, 150, false));
    assert_eq!(
        s.send(Msg::New(3, SELL, 5, 150, false)),
        vec![
            rep(ORDER_ACK, SELL, 7, 3, 150, 5),
            trade(7, SELL, 150, 5, 1, 3)
        ]
    );
    assert_eq!(
        s.send(Msg::Cancel(1)),
        vec![rep(CANCEL_REJECT, 0, 8, 1, 0, 0)]
    );
    assert_eq!(flash1::engine_query_best_bid(), i64::MIN);
    assert_eq!(flash1::engine_query_best_ask(), i64::MAX);
}

#[test]
fn a_batch_reports_exactly_what_single_messages_report() {
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let script = [
        Msg::New(1, SELL, 10, 100, false),
        Msg::New(2, SELL, 10, 101, false),
        Msg::New(3, BUY, 5, 99, false),
        Msg::Modify(3, BUY, 12, 100),
        Msg::Cancel(2),
        Msg::Cancel(2),
        Msg::New(4, SELL, 20, 99, true),
        Msg::Modify(9, SELL, 1, 1),
    ];
    let single: Vec<Report> = {
        let mut s = Session::start();
        script.iter().flat_map(|m| s.send(*m)).collect()
    };
    let batched: Vec<Report> = {
        let _s = Session::start();
        let msgs: Vec<MeMsg> = script
            .iter()
            .enumerate()
            .map(|(i, m)| {
                let seq = i as u64;
                let (msg_type, payload) = match *m {
                    Msg::New(id, side, qty, px, ioc) => (
                        MSG_NEW,
                        MsgPayload {
                            new_order: new(seq, id, side, qty, px, ioc),
                        },
                    ),
                    Msg::Cancel(id) => (
                        MSG_CANCEL,
                        MsgPayload {
                            cancel: CancelMsg {
                                order_id: id,
                                sequence_number: seq,
                            },
                        },
                    ),
                    Msg::Modify(id, side, qty, px) => (
                        MSG_MODIFY,
                        MsgPayload {
                            modify: ModifyMsg {
                                order_id: id,
                                sequence_number: seq,
                                new_price_ticks: px,
                                new_quantity: qty,
                                side,
                                reserved: [0; 3],
                            },
                        },
                    ),
                };
                MeMsg {
                    msg_type,
                    reserved: [0; 7],
                    payload,
                }
            })
            .collect();
        // SAFETY: `msgs` holds `len` initialized messages whose tags match their payloads.
        unsafe { flash1::engine_on_batch(msgs.as_ptr(), msgs.len() as u32) };
        flash1::engine_flush();
        std::mem::take(&mut *REPORTS.lock().unwrap())
    };
    assert_eq!(single.len(), 11);
    assert_eq!(batched, single);
    assert_eq!(
        single[3..6],
        [
            trade(3, BUY, 100, 10, 1, 3),
            rep(MODIFY_ACK, BUY, 3, 3, 100, 12),
            rep(CANCEL_ACK, SELL, 4, 2, 101, 0),
        ]
    );
}
