//! The order path allocates nothing in steady state: `fix::frame` and
//! `FixAdapter::to_input` of a NewOrderSingle, and `Node::apply` of the record (the session,
//! ClOrdID check and index, engine, fills, ExecutionReports formatted for a live connection
//! and stored for ResendRequest).
//!
//! Counted with a global allocator wrapper that only this test binary installs; the count is
//! per thread so the test harness's own threads do not disturb it.

use exchange::Backing;
use fix::{frame, Decoder, Limits};
use fix_gateway::{ConnIds, FixAdapter, Outbox};
use server::{Config, Node, Record};

// The integration tests' helpers; this binary uses only `message`.
#[allow(dead_code)]
#[path = "it/common/mod.rs"]
mod common;
use common::message;
use std::sync::Arc;

#[global_allocator]
static GLOBAL: alloc_count::Counting = alloc_count::Counting;

use alloc_count::allocs;

/// The event loop's order path without sockets or the journal.
struct Path {
    adapter: FixAdapter,
    x: Node,
    decoder: Decoder,
}

impl Path {
    fn new() -> Path {
        let cfg = Config::defaults().lenient();
        Path {
            adapter: FixAdapter::new(Arc::new(cfg.fix_config())),
            x: Node::new(&cfg, Backing::Resident),
            decoder: Decoder::default(),
        }
    }

    /// What the event loop does with one message from connection `conn`: frames it, reads it
    /// into a record and applies that as record `seq`.
    fn feed(
        &mut self,
        conn: u64,
        ids: &mut Option<ConnIds>,
        msg: &[u8],
        seq: u64,
        ts: u64,
        out: &mut Outbox,
    ) {
        assert_eq!(
            frame(msg, Limits::default().msg_len_max),
            Ok(Some(msg.len()))
        );
        let input = self
            .adapter
            .to_input(conn, ids, &mut self.decoder, msg)
            .expect("a well-formed message is read");
        self.x.apply(seq, ts, &Record::Fix(input), out);
    }
}

#[test]
fn a_new_order_single_allocates_nothing_in_steady_state() {
    let mut p = Path::new();
    let mut out = Outbox::default();
    let mut ids: [Option<ConnIds>; 2] = [None, None];
    let senders = ["CLIENT1", "CLIENT2"];
    let mut seq = 0u64;
    let ts = 1_800_000_000_000_000_000u64;
    for (i, sender) in senders.iter().enumerate() {
        let logon = message(sender, 1, &[(35, "A"), (98, "0"), (108, "30"), (141, "Y")]);
        seq += 1;
        p.feed(i as u64 + 1, &mut ids[i], &logon, seq, ts, &mut out);
    }
    assert!(
        p.x.session_seqs("CLIENT2").is_some_and(|(inb, _)| inb == 2),
        "both sessions logged on"
    );
    // Warm-up long enough for every store to reach its steady size (resend_store_max
    // reports per session), then a measured stretch. Buys and sells of 3 at one price off the
    // whole number: every second order trades, so both sessions get acks and fills, and each
    // fill's AvgPx (notional / CumQty) is formatted from a fraction.
    const WARM: u64 = 30_000;
    const MEASURED: u64 = 5_000;
    let msgs: Vec<Vec<u8>> = (0..WARM + MEASURED)
        .map(|i| {
            let s = (i % 2) as usize;
            let cl = format!("o{i}");
            message(
                senders[s],
                2 + i / 2,
                &[
                    (35, "D"),
                    (11, &cl),
                    (55, "ACME"),
                    (54, if s == 0 { "1" } else { "2" }),
                    (38, "3"),
                    (40, "2"),
                    (44, "10.25"),
                ],
            )
        })
        .collect();
    let start = allocs();
    let mut measured_from = None;
    for (i, msg) in msgs.iter().enumerate() {
        if i as u64 == WARM {
            measured_from = Some(allocs());
        }
        let s = i % 2;
        seq += 1;
        p.feed(s as u64 + 1, &mut ids[s], msg, seq, ts + i as u64, &mut out);
        assert!(!out.is_empty(), "order {i} was answered");
        out.clear();
    }
    let measured_from = measured_from.expect("measured");
    assert!(
        measured_from > start,
        "the warm-up grows the stores: the counter counts"
    );
    let during = allocs() - measured_from;
    assert_eq!(during, 0, "allocations over {MEASURED} orders");
    assert_eq!(p.x.exchange.stats.trades, (WARM + MEASURED) / 2);
}

/// The same for OrderStatusRequest, OrderCancelReplaceRequest, OrderCancelRequest and
/// OrderMassCancelRequest: resting orders are asked about, replaced (price and quantity) and
/// then canceled, each answered with its ExecutionReport (an unknown order's status too), and
/// a mass cancel of everything follows each (its OrderMassCancelReport).
#[test]
fn status_replace_cancel_and_mass_cancel_allocate_nothing_in_steady_state() {
    let mut p = Path::new();
    let mut out = Outbox::default();
    let mut ids: Option<ConnIds> = None;
    let ts = 1_800_000_000_000_000_000u64;
    let mut seq = 0u64;
    let mut in_seq = 1u64;
    let mut feed = |msg: &[u8], p: &mut Path, out: &mut Outbox, ids: &mut Option<ConnIds>| {
        seq += 1;
        p.feed(1, ids, msg, seq, ts + seq, out);
    };
    let logon = message(
        "CLIENT1",
        in_seq,
        &[(35, "A"), (98, "0"), (108, "30"), (141, "Y")],
    );
    feed(&logon, &mut p, &mut out, &mut ids);
    out.clear();
    // Each round: a resting buy, two status requests (of it, and of an unknown ClOrdID), a
    // replace of the buy, a cancel of the replacement, a mass cancel. Built before counting;
    // the first rounds fill the stores to their steady size.
    const ROUND: u64 = 6;
    const WARM: u64 = 12_000;
    const MEASURED: u64 = 2_000;
    let mut msgs = Vec::new();
    for i in 0..WARM + MEASURED {
        let (n, r) = (format!("n{i}"), format!("r{i}"));
        let px = format!("9.{:02}", i % 50);
        in_seq += 1;
        msgs.push(message(
            "CLIENT1",
            in_seq,
            &[
                (35, "D"),
                (11, &n),
                (55, "BOLT"),
                (54, "1"),
                (38, "5"),
                (40, "2"),
                (44, &px),
            ],
        ));
        // The order's status, then that of an order the session never sent.
        in_seq += 1;
        msgs.push(message(
            "CLIENT1",
            in_seq,
            &[(35, "H"), (11, &n), (55, "BOLT"), (54, "1")],
        ));
        in_seq += 1;
        msgs.push(message(
            "CLIENT1",
            in_seq,
            &[(35, "H"), (11, &format!("x{i}")), (55, "BOLT"), (54, "1")],
        ));
        in_seq += 1;
        msgs.push(message(
            "CLIENT1",
            in_seq,
            &[
                (35, "G"),
                (11, &r),
                (41, &n),
                (55, "BOLT"),
                (54, "1"),
                (38, "7"),
                (40, "2"),
                (44, "8.75"),
            ],
        ));
        in_seq += 1;
        msgs.push(message(
            "CLIENT1",
            in_seq,
            &[
                (35, "F"),
                (11, &format!("c{i}")),
                (41, &r),
                (55, "BOLT"),
                (54, "1"),
            ],
        ));
        in_seq += 1;
        msgs.push(message(
            "CLIENT1",
            in_seq,
            &[(35, "q"), (11, &format!("m{i}")), (530, "7")],
        ));
    }
    // Allocations of the measured stretch by request kind (in round order), so a failure
    // says which answer allocates.
    let mut by_kind = [0u64; ROUND as usize];
    for (k, msg) in msgs.iter().enumerate() {
        let before = allocs();
        feed(msg, &mut p, &mut out, &mut ids);
        if (k as u64) >= WARM * ROUND {
            by_kind[k % ROUND as usize] += allocs() - before;
        }
        if (k as u64) < WARM * ROUND {
            // Checked before the count only: the check itself allocates.
            let report = String::from_utf8_lossy(&out.buf).into_owned();
            let want = [
                "\x01150=0\x01",
                "\x01150=I\x0139=0\x01",
                "\x01150=I\x0139=8\x01",
                "\x01150=5\x01",
                "\x01150=4\x01",
                "\x0135=r\x01",
            ][k % ROUND as usize];
            let msg_type = if k % ROUND as usize == 5 {
                "\x0135=r\x01"
            } else {
                "\x0135=8\x01"
            };
            assert!(
                report.contains(msg_type) && report.contains(want),
                "request {k}: {report}"
            );
        } else {
            assert!(!out.is_empty(), "request {k} was answered");
        }
        out.clear();
    }
    let during: u64 = by_kind.iter().sum();
    assert_eq!(
        during, 0,
        "allocations over {MEASURED} new/status/status of an unknown order/replace/cancel/\
         mass-cancel rounds, by request: {by_kind:?}"
    );
    assert_eq!(p.x.exchange.stats.trades, 0);
}
