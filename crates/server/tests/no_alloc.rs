//! The order path allocates nothing in steady state: `FixAdapter::to_input` of a framed
//! NewOrderSingle and `Exchange::apply` of the result (ClOrdID check and index, engine, fills,
//! ExecutionReports formatted for a live connection and stored for ResendRequest).
//!
//! Counted with a global allocator wrapper that only this test binary installs; the count is
//! per thread so the test harness's own threads do not disturb it.

use server::adapter::{ConnIds, FixAdapter};
use server::exchange::{Exchange, Outbox};
use server::wire::Fields;
use server::Config;

mod common;
use common::message;
use std::sync::Arc;

#[global_allocator]
static GLOBAL: alloc_count::Counting = alloc_count::Counting;

use alloc_count::allocs;

#[test]
fn a_new_order_single_allocates_nothing_in_steady_state() {
    let cfg = Arc::new(Config::defaults());
    let adapter = FixAdapter::new(cfg.clone());
    let mut x = Exchange::new(cfg);
    let mut out = Outbox::default();
    let mut fields = Fields::new();
    let mut ids: [Option<ConnIds>; 2] = [None, None];
    let senders = ["CLIENT1", "CLIENT2"];
    let mut seq = 0u64;
    let ts = 1_800_000_000_000_000_000u64;
    for (i, sender) in senders.iter().enumerate() {
        let logon = message(sender, 1, &[(35, "A"), (98, "0"), (108, "30"), (141, "Y")]);
        fields.parse(&logon).unwrap();
        let input = adapter.to_input(i as u64 + 1, &mut ids[i], &logon, &fields);
        seq += 1;
        x.apply(seq, ts, &input, &mut out);
    }
    assert!(
        x.session_seqs("CLIENT2").is_some_and(|(inb, _)| inb == 2),
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
        fields.parse(msg).unwrap();
        let input = adapter.to_input(s as u64 + 1, &mut ids[s], msg, &fields);
        seq += 1;
        x.apply(seq, ts + i as u64, &input, &mut out);
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
    assert_eq!(x.stats.trades, (WARM + MEASURED) / 2);
}

/// The same for OrderStatusRequest, OrderCancelReplaceRequest, OrderCancelRequest and
/// OrderMassCancelRequest: resting orders are asked about, replaced (price and quantity) and
/// then canceled, each answered with its ExecutionReport (an unknown order's status too), and
/// a mass cancel of everything follows each (its OrderMassCancelReport).
#[test]
fn status_replace_cancel_and_mass_cancel_allocate_nothing_in_steady_state() {
    let cfg = Arc::new(Config::defaults());
    let adapter = FixAdapter::new(cfg.clone());
    let mut x = Exchange::new(cfg);
    let mut out = Outbox::default();
    let mut fields = Fields::new();
    let mut ids: Option<ConnIds> = None;
    let ts = 1_800_000_000_000_000_000u64;
    let mut seq = 0u64;
    let mut in_seq = 1u64;
    let mut feed = |msg: &[u8],
                    x: &mut Exchange,
                    out: &mut Outbox,
                    fields: &mut Fields,
                    ids: &mut Option<ConnIds>| {
        fields.parse(msg).unwrap();
        let input = adapter.to_input(1, ids, msg, fields);
        seq += 1;
        x.apply(seq, ts + seq, &input, out);
    };
    let logon = message(
        "CLIENT1",
        in_seq,
        &[(35, "A"), (98, "0"), (108, "30"), (141, "Y")],
    );
    feed(&logon, &mut x, &mut out, &mut fields, &mut ids);
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
    let mut measured_from = None;
    for (k, msg) in msgs.iter().enumerate() {
        if k as u64 == WARM * ROUND {
            measured_from = Some(allocs());
        }
        feed(msg, &mut x, &mut out, &mut fields, &mut ids);
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
    let during = allocs() - measured_from.expect("measured");
    assert_eq!(
        during, 0,
        "allocations over {MEASURED} new/status/replace/cancel/mass-cancel rounds"
    );
    assert_eq!(x.stats.trades, 0);
}
