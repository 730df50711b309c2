//! Outbound conformance: everything Rialto sends validates against its version's dictionary
//! (`fix::dict`). Per version, a real `Session` (standard configuration: no market-data
//! extensions) answers a Logon, a TestRequest, malformed messages (Reject), a gap
//! (ResendRequest), a ResendRequest (PossDup resends and SequenceReset gap fills), idleness
//! (Heartbeat, TestRequest), a Logout and a refused Logon, and sends every builder of
//! `fix::app` and `fix::md` in each of its variants, with every value of every reason and
//! state they carry (each reject reason, each ExecType with each OrdStatus, each market-data
//! value; the fields of stop, iceberg and GTD orders and a stop's trigger; a call auction's
//! SecurityStatus and, in FIX 5.0SP2, its indicative uncross). The client-side
//! `fix::app::NewOrder`
//! (load generator, tests) is checked on its own: it lacks two required fields.

mod common;
use common::{SEC, T0};

use fix::app::{
    BusinessMessageReject, CxlRejResponseTo, DropCopy, Echo, ExecType, ExecutionReport, NewOrder,
    OrdStatus, OrderCancelReject, OrderExt, OrderMassCancelReport, OrderlessReport, TradSesStatus,
    TradingSessionStatus,
};
use fix::dict::dictionary;
use fix::md::{
    ListedInstrument, MarketDataIncremental, MarketDataRequestReject, MarketDataSnapshot, MdEntry,
    MdEntryType, MdRejectReason, SecurityList, SecurityStatus,
};
use fix::{
    BusinessRejectReason, Decimal, Decoder, Encoder, FixVersion, Header, MemoryStore, RejectOf,
    Session, SessionConfig, SessionEvent, SessionHandler, SessionRejectReason, TimePrecision,
};
use types::{OrdType, Side, TimeInForce};

#[derive(Default)]
struct Rec {
    out: Vec<Vec<u8>>,
}

impl SessionHandler for Rec {
    fn send(&mut self, bytes: &[u8]) {
        self.out.push(bytes.to_vec());
    }
    fn on_event(&mut self, _e: SessionEvent) {}
}

type Sess = Session<MemoryStore, Vec<u8>>;

fn inbound(v: FixVersion, msg_type: &str, seq: u64, body: &str) -> Vec<u8> {
    let mut e = Encoder::default();
    e.begin(msg_type.as_bytes());
    e.header(&Header {
        sender_comp_id: b"CLIENT1",
        target_comp_id: b"RIALTO",
        msg_seq_num: seq,
        sending_time_ns: T0,
        poss_dup: false,
        orig_sending_time: None,
        time_precision: TimePrecision::Millis,
    });
    for kv in body.split('|').filter(|s| !s.is_empty()) {
        let (k, val) = kv.split_once('=').unwrap();
        e.field(k.parse().unwrap(), val.as_bytes());
    }
    e.finish(v).to_vec()
}

fn feed(s: &mut Sess, bytes: &[u8], now: u64, h: &mut Rec) {
    let used = s.on_bytes(bytes, now, h, &mut |_| {});
    assert_eq!(used, bytes.len());
}

fn logon_body(v: FixVersion) -> &'static str {
    match v {
        FixVersion::Fix50Sp2 => "98=0|108=30|1137=9|",
        _ => "98=0|108=30|",
    }
}

fn er<'a>(cl: &'a [u8], exec_type: ExecType, ord_status: OrdStatus) -> ExecutionReport<'a> {
    ExecutionReport {
        order_id: 7,
        cl_ord_id: cl,
        orig_cl_ord_id: None,
        exec_id: (7, 0),
        exec_type,
        ord_status,
        account: 3,
        symbol: b"ACME",
        side: Side::Buy,
        ord_type: OrdType::Limit,
        price: 1025,
        time_in_force: TimeInForce::Day,
        order_qty: 100,
        ext: Default::default(),
        last: None,
        leaves_qty: 100,
        cum_qty: 0,
        notional: 0,
        price_decimals: 2,
        text: None,
        transact_time_ns: T0,
    }
}

/// Sends every application message the crate builds, in each variant.
fn send_every_builder(s: &mut Sess, h: &mut Rec, now: u64) {
    let fill = ExecutionReport {
        last: Some((1025, 40)),
        leaves_qty: 60,
        cum_qty: 40,
        notional: 1025 * 40,
        ..er(b"C1", ExecType::Trade, OrdStatus::PartiallyFilled)
    };
    let filled = ExecutionReport {
        last: Some((1025, 60)),
        leaves_qty: 0,
        cum_qty: 100,
        notional: 1025 * 100,
        ..er(b"C1", ExecType::Trade, OrdStatus::Filled)
    };
    let reports = [
        er(b"C1", ExecType::New, OrdStatus::New),
        ExecutionReport {
            ord_type: OrdType::Market,
            time_in_force: TimeInForce::Ioc,
            side: Side::Sell,
            ..er(b"C2", ExecType::New, OrdStatus::New)
        },
        fill,
        filled,
        ExecutionReport {
            orig_cl_ord_id: Some(b"C1"),
            leaves_qty: 0,
            ..er(b"C3", ExecType::Canceled, OrdStatus::Canceled)
        },
        ExecutionReport {
            orig_cl_ord_id: Some(b"C3"),
            time_in_force: TimeInForce::Gtc,
            ..er(b"C4", ExecType::Replaced, OrdStatus::New)
        },
        ExecutionReport {
            text: Some(b"price off the tick"),
            leaves_qty: 0,
            ..er(b"C5", ExecType::Rejected, OrdStatus::Rejected)
        },
        ExecutionReport {
            leaves_qty: 0,
            time_in_force: TimeInForce::Fok,
            ..er(b"C6", ExecType::Expired, OrdStatus::Expired)
        },
        ExecutionReport {
            exec_id: (9, 12),
            ..er(b"C7", ExecType::OrderStatus, OrdStatus::PartiallyFilled)
        },
    ];
    let reports: Vec<ExecutionReport<'_>> = reports.into_iter().chain(orders_ii()).collect();
    for r in &reports {
        s.send_app(r, now, h);
        // Its drop copy, as a drop-copy session of the owner's firm gets it.
        s.send_app(
            &DropCopy {
                deliver_to_comp_id: b"CLIENT1_42",
                report: r,
            },
            now,
            h,
        );
    }
    let echo = Echo::of_order(b"ACME", Side::Buy, 100, OrdType::Limit, (1025, 0), 2);
    // A refused stop and stop limit order echo OrdType 3 or 4 and StopPx.
    let stop_echoes = [
        Echo::of_order(b"ACME", Side::Sell, 100, OrdType::Market, (0, 1030), 2),
        Echo::of_order(b"ACME", Side::Sell, 100, OrdType::Limit, (1025, 1030), 2),
    ];
    for e in &stop_echoes {
        s.send_app(
            &OrderlessReport {
                cl_ord_id: b"C8",
                exec_id: (10, 1),
                status: false,
                echo: e.as_bytes(),
                ord_rej_reason: Some(fix::app::ord_rej_reason::OTHER),
                text: b"invalid stop price",
                transact_time_ns: Some(now),
            },
            now,
            h,
        );
    }
    for status in [false, true] {
        s.send_app(
            &OrderlessReport {
                cl_ord_id: b"C8",
                exec_id: (10, 0),
                status,
                echo: echo.as_bytes(),
                ord_rej_reason: (!status).then_some(fix::app::ord_rej_reason::UNKNOWN_SYMBOL),
                text: b"unknown symbol",
                transact_time_ns: (!status).then_some(now),
            },
            now,
            h,
        );
    }
    for (order_id, ord_status, response_to) in [
        (
            Some(7),
            Some(OrdStatus::New),
            CxlRejResponseTo::CancelRequest,
        ),
        (None, None, CxlRejResponseTo::CancelReplaceRequest),
    ] {
        s.send_app(
            &OrderCancelReject {
                order_id,
                cl_ord_id: b"C9",
                orig_cl_ord_id: b"C1",
                ord_status,
                response_to,
                reason: fix::app::cxl_rej_reason::UNKNOWN_ORDER,
                text: b"unknown order",
            },
            now,
            h,
        );
    }
    if s.config().version != FixVersion::Fix42 {
        for (rejected, symbol, side, request_type) in [
            (None, None, None, 7),
            (None, Some(&b"ACME"[..]), Some(Side::Sell), 1),
            (Some(&b"no such symbol"[..]), Some(&b"NOPE"[..]), None, 1),
        ] {
            s.send_app(
                &OrderMassCancelReport {
                    cl_ord_id: b"M1",
                    report_id: 11,
                    request_type,
                    rejected,
                    total_affected_orders: 2,
                    symbol,
                    side,
                },
                now,
                h,
            );
        }
    }
    // TradingSessionStatus: an answer, and a change sent to a subscriber.
    for (req_id, status, unsolicited) in [
        (Some(&b"T1"[..]), TradSesStatus::Open, false),
        (Some(&b"T1"[..]), TradSesStatus::Closed, true),
        (None, TradSesStatus::Open, true),
    ] {
        s.send_app(
            &TradingSessionStatus {
                req_id,
                status,
                unsolicited,
            },
            now,
            h,
        );
    }
    s.send_app(
        &BusinessMessageReject {
            ref_seq_num: 4,
            ref_msg_type: b"Z",
            business_reject_ref_id: Some(b"C1"),
            reason: BusinessRejectReason::UnsupportedMessageType,
            text: b"unsupported",
        },
        now,
        h,
    );
    // Market data.
    let level = |entry_type, price, size| -> MdEntry<'static> {
        MdEntry {
            symbol: b"ACME",
            price_decimals: 2,
            action: b'0',
            entry_type,
            price,
            size,
            orders: Some(2),
            trade_id: None,
            aggressor: None,
            rpt_seq: 5,
        }
    };
    let trade = MdEntry {
        orders: None,
        trade_id: Some(77),
        aggressor: Some(Side::Buy),
        ..level(MdEntryType::Trade, 1025, 10)
    };
    let book = [
        level(MdEntryType::Bid, 1020, 300),
        level(MdEntryType::Offer, 1030, 200),
        trade,
    ];
    for entries in [&book[..], &[]] {
        s.send_app(
            &MarketDataSnapshot {
                md_req_id: b"r1",
                symbol: b"ACME",
                extensions: false,
                entries,
                rpt_seq: 5,
            },
            now,
            h,
        );
    }
    let changes = [
        level(MdEntryType::Bid, 1020, 300),
        MdEntry {
            action: b'1',
            ..level(MdEntryType::Offer, 1030, 100)
        },
        MdEntry {
            action: b'2',
            orders: None,
            ..level(MdEntryType::Bid, 1010, 0)
        },
        trade,
    ];
    s.send_app(
        &MarketDataIncremental {
            md_req_id: b"r1",
            extensions: false,
            entries: &changes,
        },
        now,
        h,
    );
    for reason in [
        MdRejectReason::UnknownSymbol,
        MdRejectReason::UnsupportedMdEntryType,
    ] {
        s.send_app(
            &MarketDataRequestReject {
                md_req_id: b"r2",
                reason,
                text: b"refused",
            },
            now,
            h,
        );
    }
    let listed = [ListedInstrument {
        symbol: b"ACME",
        lot: 100,
        tick: 1,
        price_decimals: 2,
    }];
    if s.config().version != FixVersion::Fix42 {
        for (result, instruments) in [(b'0', &listed[..]), (b'2', &[][..])] {
            s.send_app(
                &SecurityList {
                    security_req_id: b"s1",
                    security_response_id: 3,
                    result,
                    instruments,
                },
                now,
                h,
            );
        }
    }
    // Every SecurityTradingStatus Rialto sends (ready, halted, not available, and a call
    // auction's: 21 pre-open, which FIX 4.2 lacks and gets 14 for), as an answer and as an
    // unsolicited change, with the call's TradingSessionSubID (2 opening, 4 closing; left out
    // in FIX 4.2).
    let call = match s.config().version {
        FixVersion::Fix42 => 14,
        _ => 21,
    };
    for (trading_status, sub, unsolicited) in [
        (17, None, false),
        (2, None, true),
        (18, None, true),
        (call, Some(2), false),
        (call, Some(4), true),
    ] {
        s.send_app(
            &SecurityStatus {
                security_status_req_id: b"s2",
                symbol: b"ACME",
                trading_status,
                trading_session_sub_id: sub,
                unsolicited,
            },
            now,
            h,
        );
    }
    if s.config().version == FixVersion::Fix50Sp2 {
        indicative_entries(s, h, now, &level);
    }
    send_every_value(s, h, now, &level);
}

/// The reports of stop, iceberg and GTD orders: OrdType 3 and 4 with StopPx, MaxFloor,
/// TimeInForce 6 with ExpireTime (millisecond and nanosecond precision), a stop's trigger
/// (ExecType L in FIX 5.0SP2, D in 4.2 and 4.4) and what follows it.
fn orders_ii() -> Vec<ExecutionReport<'static>> {
    let stop_limit = ExecutionReport {
        ext: OrderExt {
            stop_px: 1030,
            ..OrderExt::default()
        },
        ..er(b"S1", ExecType::New, OrdStatus::New)
    };
    let stop = ExecutionReport {
        ord_type: OrdType::Market,
        time_in_force: TimeInForce::Gtc,
        ..stop_limit
    };
    let iceberg = ExecutionReport {
        ext: OrderExt {
            max_floor: 10,
            ..OrderExt::default()
        },
        ..er(b"I1", ExecType::New, OrdStatus::New)
    };
    let gtd = ExecutionReport {
        time_in_force: TimeInForce::Gtd,
        ext: OrderExt {
            expire_time_ns: T0 + 3_600 * SEC,
            ..OrderExt::default()
        },
        ..er(b"G1", ExecType::New, OrdStatus::New)
    };
    let all_three = ExecutionReport {
        time_in_force: TimeInForce::Gtd,
        ext: OrderExt {
            stop_px: 1030,
            max_floor: 10,
            expire_time_ns: T0 + 123_456_789,
        },
        ..er(b"A1", ExecType::New, OrdStatus::New)
    };
    vec![
        stop_limit,
        ExecutionReport {
            exec_type: ExecType::Triggered,
            ..stop_limit
        },
        ExecutionReport {
            exec_type: ExecType::Trade,
            ord_status: OrdStatus::PartiallyFilled,
            last: Some((1025, 40)),
            leaves_qty: 60,
            cum_qty: 40,
            notional: 1025 * 40,
            ..stop_limit
        },
        stop,
        ExecutionReport {
            exec_type: ExecType::Triggered,
            ..stop
        },
        ExecutionReport {
            exec_type: ExecType::Canceled,
            ord_status: OrdStatus::Canceled,
            leaves_qty: 0,
            text: Some(b"no liquidity"),
            ..stop
        },
        iceberg,
        ExecutionReport {
            exec_type: ExecType::Replaced,
            orig_cl_ord_id: Some(b"I0"),
            ..iceberg
        },
        gtd,
        ExecutionReport {
            exec_type: ExecType::Expired,
            ord_status: OrdStatus::Expired,
            leaves_qty: 0,
            ..gtd
        },
        all_three,
        ExecutionReport {
            exec_type: ExecType::OrderStatus,
            ..all_three
        },
    ]
}

/// FIX 5.0SP2's indicative uncross entries (MDEntryType Q, no RptSeq): appearing, changing
/// and withdrawn in an X, beside a book and alone in a W.
fn indicative_entries(
    s: &mut Sess,
    h: &mut Rec,
    now: u64,
    level: &dyn Fn(MdEntryType, i64, u64) -> MdEntry<'static>,
) {
    let q = |action, price, size| MdEntry {
        action,
        orders: None,
        ..level(MdEntryType::AuctionClearingPrice, price, size)
    };
    let changes = [
        q(b'0', 1025, 300),
        level(MdEntryType::Bid, 1020, 300),
        q(b'1', 1020, 500),
        q(b'2', 1020, 0),
    ];
    s.send_app(
        &MarketDataIncremental {
            md_req_id: b"r1",
            extensions: false,
            entries: &changes,
        },
        now,
        h,
    );
    for entries in [&changes[..2], &changes[..1]] {
        s.send_app(
            &MarketDataSnapshot {
                md_req_id: b"r1",
                symbol: b"ACME",
                extensions: false,
                entries,
                rpt_seq: 5,
            },
            now,
            h,
        );
    }
}

/// Every value of every enumerated field Rialto fills from a reason or state: each
/// SessionRejectReason, BusinessRejectReason, OrdRejReason and CxlRejReason, each ExecType
/// with each OrdStatus, each market-data entry type, update action and request-reject reason,
/// each trading-session status: whatever the version lacks must be mapped to one it has.
fn send_every_value(
    s: &mut Sess,
    h: &mut Rec,
    now: u64,
    level: &dyn Fn(MdEntryType, i64, u64) -> MdEntry<'static>,
) {
    for reason in SessionRejectReason::ALL {
        s.send_reject(
            &RejectOf {
                ref_seq_num: 3,
                ref_msg_type: Some(b"D"),
                ref_tag: Some(55),
                reason,
                text: b"refused",
            },
            now,
            h,
        );
    }
    for reason in BusinessRejectReason::ALL {
        s.send_app(
            &BusinessMessageReject {
                ref_seq_num: 4,
                ref_msg_type: b"D",
                business_reject_ref_id: None,
                reason,
                text: b"refused",
            },
            now,
            h,
        );
    }
    let echo = Echo::of_order(b"ACME", Side::Buy, 100, OrdType::Limit, (1025, 0), 2);
    for reason in fix::app::ord_rej_reason::ALL {
        s.send_app(
            &OrderlessReport {
                cl_ord_id: b"C8",
                exec_id: (10, 0),
                status: false,
                echo: echo.as_bytes(),
                ord_rej_reason: Some(reason),
                text: b"refused",
                transact_time_ns: Some(now),
            },
            now,
            h,
        );
    }
    for reason in fix::app::cxl_rej_reason::ALL {
        s.send_app(
            &OrderCancelReject {
                order_id: Some(7),
                cl_ord_id: b"C9",
                orig_cl_ord_id: b"C1",
                ord_status: Some(OrdStatus::New),
                response_to: CxlRejResponseTo::CancelRequest,
                reason,
                text: b"refused",
            },
            now,
            h,
        );
    }
    let stop = OrderExt {
        stop_px: 1030,
        max_floor: 10,
        expire_time_ns: 0,
    };
    for exec_type in ExecType::ALL {
        for (ord_status, ext) in OrdStatus::ALL
            .into_iter()
            .flat_map(|st| [(st, OrderExt::default()), (st, stop)])
        {
            let r = ExecutionReport {
                ext,
                ..er(b"C1", exec_type, ord_status)
            };
            s.send_app(&r, now, h);
            s.send_app(
                &DropCopy {
                    deliver_to_comp_id: b"CLIENT1",
                    report: &r,
                },
                now,
                h,
            );
        }
    }
    for status in TradSesStatus::ALL {
        for unsolicited in [false, true] {
            s.send_app(
                &TradingSessionStatus {
                    req_id: Some(b"T1"),
                    status,
                    unsolicited,
                },
                now,
                h,
            );
        }
    }
    let mut entries = Vec::new();
    for entry_type in MdEntryType::ALL {
        for action in [b'0', b'1', b'2'] {
            entries.push(MdEntry {
                action,
                ..level(entry_type, 1020, 300)
            });
        }
    }
    s.send_app(
        &MarketDataSnapshot {
            md_req_id: b"r1",
            symbol: b"ACME",
            extensions: false,
            entries: &entries,
            rpt_seq: 5,
        },
        now,
        h,
    );
    s.send_app(
        &MarketDataIncremental {
            md_req_id: b"r1",
            extensions: false,
            entries: &entries,
        },
        now,
        h,
    );
    for reason in MdRejectReason::ALL {
        s.send_app(
            &MarketDataRequestReject {
                md_req_id: b"r2",
                reason,
                text: b"refused",
            },
            now,
            h,
        );
    }
}

#[test]
fn everything_rialto_sends_validates() {
    for v in [FixVersion::Fix42, FixVersion::Fix44, FixVersion::Fix50Sp2] {
        let mut h = Rec::default();
        let mut s: Sess = Session::new(
            SessionConfig::new(v, "RIALTO", "CLIENT1"),
            MemoryStore::new(1000),
        );
        s.on_connected(T0);
        feed(&mut s, &inbound(v, "A", 1, logon_body(v)), T0, &mut h);
        assert!(s.is_active(), "{v:?}: not logged on");
        feed(&mut s, &inbound(v, "1", 2, "112=T1|"), T0, &mut h);
        // An empty value (decoder) and a missing required field (session): Rejects.
        let good = inbound(v, "D", 3, "11=A|55=X|");
        let body = String::from_utf8(good.clone())
            .unwrap()
            .replace("55=X\x01", "55=\x01");
        let start = body.find("35=").unwrap();
        let end = body.rfind("10=").unwrap();
        let mut bad = Vec::new();
        fix::wrap_body(v, &body.as_bytes()[start..end], &mut bad);
        feed(&mut s, &bad, T0, &mut h);
        feed(&mut s, &inbound(v, "1", 4, ""), T0, &mut h);
        send_every_builder(&mut s, &mut h, T0 + SEC);
        // A gap: seq 6 while 5 is expected -> ResendRequest.
        feed(&mut s, &inbound(v, "0", 6, ""), T0 + SEC, &mut h);
        // The client fills it and asks for everything: resends and gap fills.
        feed(&mut s, &inbound(v, "4", 5, "123=Y|36=7|"), T0 + SEC, &mut h);
        feed(
            &mut s,
            &inbound(v, "2", 7, "7=1|16=0|"),
            T0 + 2 * SEC,
            &mut h,
        );
        // Idle: Heartbeat, then TestRequest.
        s.on_tick(T0 + 40 * SEC, &mut h);
        s.on_tick(T0 + 75 * SEC, &mut h);
        s.logout(b"end of day", T0 + 80 * SEC, &mut h);
        // A Logon refused (credentials not accepted): Logout.
        let mut cfg = SessionConfig::new(v, "RIALTO", "CLIENT1");
        cfg.authenticate = true;
        let mut refused: Sess = Session::new(cfg, MemoryStore::new(10));
        refused.on_connected(T0);
        let body = format!("{}554=wrong|", logon_body(v));
        let logon = inbound(v, "A", 1, &body);
        refused.on_bytes(&logon, T0, &mut h, &mut |_| {});

        let dict = dictionary(v);
        let mut kinds = std::collections::BTreeMap::new();
        let mut failures = Vec::new();
        for bytes in &h.out {
            let mut d = Decoder::default();
            let msg = d.decode(bytes).expect("what Rialto sends decodes");
            let t = String::from_utf8_lossy(msg.msg_type()).into_owned();
            *kinds.entry(t.clone()).or_insert(0) += 1;
            if let Err(e) = dict.validate(&msg) {
                failures.push(format!(
                    "35={t}: {:?} {:?} {}\n    {}",
                    e.reason,
                    e.ref_tag,
                    e.text(&msg),
                    String::from_utf8_lossy(bytes).replace('\x01', "|")
                ));
            }
        }
        assert!(failures.is_empty(), "{v:?}:\n{}", failures.join("\n"));
        let mut want = vec![
            "0", "1", "2", "3", "4", "5", "8", "9", "A", "W", "X", "Y", "f", "h", "j",
        ];
        if v != FixVersion::Fix42 {
            want.extend(["r", "y"]);
        }
        for t in want {
            assert!(
                kinds.contains_key(t),
                "{v:?}: nothing of 35={t} sent: {kinds:?}"
            );
        }
    }
}

/// `fix::app::NewOrder`, the client-side builder (load generator, tools, tests), writes every
/// field each version requires (HandlInst in FIX 4.2, TransactTime in all).
#[test]
fn client_new_order_validates_in_every_version() {
    for v in [FixVersion::Fix42, FixVersion::Fix44, FixVersion::Fix50Sp2] {
        let order = NewOrder {
            cl_ord_id: b"N1",
            symbol: b"ACME",
            side: Side::Buy,
            order_qty: 5,
            ord_type: OrdType::Limit,
            price: Some(Decimal::new(1025, 2)),
            time_in_force: TimeInForce::Day,
            post_only: true,
            transact_time_ns: T0,
        };
        let mut e = Encoder::default();
        e.begin(b"D");
        e.header(&Header {
            sender_comp_id: b"CLIENT1",
            target_comp_id: b"RIALTO",
            msg_seq_num: 2,
            sending_time_ns: T0,
            poss_dup: false,
            orig_sending_time: None,
            time_precision: TimePrecision::Millis,
        });
        fix::app::AppMessage::encode_body(&order, v, &mut e);
        let built = e.finish(v).to_vec();
        let mut d = Decoder::default();
        let msg = d.decode(&built).unwrap();
        assert_eq!(
            dictionary(v).validate(&msg).map_err(|e| e.text(&msg)),
            Ok(()),
            "{v:?}"
        );
    }
}
