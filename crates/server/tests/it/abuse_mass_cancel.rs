//! Abuse suite: a mass cancel of 100,000 resting orders over real sockets. It is applied in
//! chunks between other sessions' messages: the requester gets every cancel and then the
//! OrderMassCancelReport with the total, another session's order placed meanwhile is
//! acknowledged before the mass cancel ends, and a replay of the journal agrees.

use crate::abuse_common;

use abuse_common::*;
use std::collections::BTreeSet;
use std::time::Instant;

const ORDERS: u64 = 100_000;
/// Orders sent before their acknowledgements are read (well within the inbound queue: none is
/// shed as "exchange busy").
const BURST: u64 = 2_000;
const CHUNK: usize = 250;

#[test]
fn a_mass_cancel_of_100k_orders_goes_in_chunks_between_other_sessions_messages() {
    let dir = tempfile::tempdir().unwrap();
    let mut cfg = config(dir.path());
    unthrottled(&mut cfg);
    cfg.orders_max = 1 << 18;
    cfg.firm_capacity_percent = 50;
    cfg.mass_cancel_chunk = CHUNK;
    let server = start(cfg.clone());
    let mut a = logon(&server, "CLIENT1");
    let mut b = logon(&server, "CLIENT2");
    let t0 = Instant::now();
    for from in (0..ORDERS).step_by(BURST as usize) {
        let sym = if from % (2 * BURST) == 0 {
            "ACME"
        } else {
            "BOLT"
        };
        send_orders(&mut a, "a", sym, from, from + BURST);
        for m in reports(&mut a, BURST as usize) {
            assert_eq!(m.get(150), Some("0"), "{}", m.text());
        }
    }
    let entered = t0.elapsed();
    let max_ns = || {
        server
            .counters
            .max_iteration_ns
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    let max_entering = max_ns();
    // The mass cancel, and at once another firm's order.
    let t1 = Instant::now();
    a.send("q", &[(11, "mc"), (530, "7")]).unwrap();
    send_orders(&mut b, "b", "ACME", 0, 1);
    let ack = b.expect("8", T).unwrap().0;
    assert_eq!(ack.get(150), Some("0"), "{}", ack.text());
    let ack_record = record_of(&ack);
    let (report, skipped) = a.expect("r", T).unwrap();
    let took = t1.elapsed();
    let max_cancelling = max_ns();
    assert_eq!(skipped.len(), ORDERS as usize, "one report per order");
    let mut records = BTreeSet::new();
    for (i, m) in skipped.iter().enumerate() {
        assert_eq!(m.get(150), Some("4"), "{}", m.text());
        // In order id order: the order they were entered.
        assert_eq!(m.get(11), Some(format!("a{i}").as_str()), "{}", m.text());
        records.insert(record_of(m));
    }
    assert_eq!(report.get(11), Some("mc"));
    assert_eq!(report.get(531), Some("7"));
    assert_eq!(report.get(533), Some(ORDERS.to_string().as_str()));
    let request: u64 = report.get(37).unwrap().parse().unwrap();
    let first = *records.first().unwrap();
    let last = *records.last().unwrap();
    // The first chunk is the request's own record, each later one a record of its own.
    assert_eq!(first, request);
    assert_eq!(
        records.len(),
        ORDERS as usize / CHUNK,
        "one record per chunk"
    );
    assert!(
        request < ack_record && ack_record < last,
        "the other session's order (record {ack_record}) was applied between the mass \
         cancel's first chunk (record {request}) and its last (record {last})"
    );
    // The other firm's order was not canceled.
    b.send("H", &[(11, "b0"), (55, "ACME"), (54, "1")]).unwrap();
    let st = b.expect("8", T).unwrap().0;
    assert_eq!(st.get(39), Some("0"), "{}", st.text());
    eprintln!(
        "entered {ORDERS} orders in {entered:?} (longest iteration {} us); mass cancel in \
         chunks of {CHUNK}: {took:?} to its report, over {} records (longest iteration since: \
         {} us)",
        max_entering / 1000,
        records.len(),
        max_cancelling / 1000
    );
    let hash = server.shutdown().unwrap();
    let v = server::tools::verify(dir.path(), cfg).unwrap();
    assert_eq!(v.full_replay_hash, hash, "a replay gives the same state");
    assert!(v.hashes_agree());
}
