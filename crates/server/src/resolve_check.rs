//! Differential check of a full replay's ClOrdID answers (`exchange::resolve`): a flow of
//! records replayed into a plain node and into one that takes its ClOrdID lookups from a
//! resolver running ahead, as recovery's decoding thread does; every record's output and the
//! final state must be the same. Used by the tests below and the `exchange_resolve` fuzz target.

use crate::config::Config;
use crate::node::{record_hashes, resolvable, Node};
use crate::record::Record;
use exchange::{Backing, ClOrdId, NewOrder, Replace};
use fix::app::Echo;
use fix::Inbound;
use fix_gateway::{AppMsg, FixInput, Outbox};
use std::sync::OnceLock;
use types::{OrdType, Side, TimeInForce};

/// Replays `records` into a plain node and into one that takes its ClOrdID answers from a
/// resolver running up to `lag` records ahead (checking for a stop once per run ahead, as per
/// batch); every record's output and the final state must be the same. Returns how resolving
/// ended.
pub fn compare(
    records: &[Record],
    cl_max: usize,
    mark_every: u64,
    per_gen: u64,
    lag: usize,
) -> String {
    static CFG: OnceLock<Config> = OnceLock::new();
    let cfg = CFG.get_or_init(Config::defaults);
    // Lazy: the tables fault in as used (a fuzzer makes two nodes per input).
    let mut plain = Node::new(cfg, Backing::Lazy);
    plain.exchange.set_cl_window(cl_max);
    let mut x = Node::new(cfg, Backing::Lazy);
    x.exchange.set_cl_window(cl_max);
    let mut r = x
        .exchange
        .begin_resolving_with(per_gen)
        .expect("an empty node resolves");
    x.exchange.set_resolve_mark_every(mark_every);
    let hasher = x.cl_hasher();
    let fix_cfg = x.fix.config().clone();
    let (mut a, mut b) = (Outbox::default(), Outbox::default());
    let mut at = 0;
    while at < records.len() {
        let end = (at + lag).min(records.len());
        r.check_stop();
        let hints: Vec<_> = records[at..end]
            .iter()
            .map(|i| r.resolve(resolvable(&fix_cfg, i), &record_hashes(&hasher, i)))
            .collect();
        for (k, (rec, hint)) in records[at..end].iter().zip(&hints).enumerate() {
            let seq = (at + k + 1) as u64;
            let ts = 1_800_000_000_000_000_000 + seq * 1000;
            a.clear();
            b.clear();
            plain.apply(seq, ts, rec, &mut a);
            x.apply_resolved(seq, ts, rec, record_hashes(&hasher, rec), hint, &mut b);
            assert_eq!(
                String::from_utf8_lossy(&a.buf),
                String::from_utf8_lossy(&b.buf),
                "record {seq}: {rec:?}"
            );
        }
        at = end;
    }
    let how = x.end_resolving().expect("resolving was begun");
    assert_eq!(plain.state_hash(), x.state_hash(), "{how}");
    let (pe, xe) = (plain.exchange.cl_entries(), x.exchange.cl_entries());
    assert_eq!(pe, xe);
    // The index built at the end answers as the one kept all along.
    for (s, cl, o) in pe {
        assert_eq!(x.exchange.order_of(s, &cl), Some(o));
    }
    how
}

/// A record of `conn` with MsgSeqNum `seq` and application message `msg`.
fn app(conn: u64, seq: u64, msg: AppMsg) -> Record {
    let mut f = FixInput::fix44_logon(conn, seq, "X", false);
    f.msg = Inbound::App(msg);
    Record::Fix(f)
}

/// Fuzz body (`fuzz/fuzz_targets/exchange_resolve.rs`): arbitrary bytes as a flow of records
/// (six bytes each: logons, disconnects, restarts, orders, cancels, replaces and status
/// requests on four connections and three sessions, ClOrdIDs from a pool of 24), a window of
/// 8-71 ClOrdIDs and resolver generations of 32-256 candidates; `compare` must find every
/// record's output and the final state the same with and without resolving.
pub fn fuzz(data: &[u8]) {
    let Some((&head, data)) = data.split_first() else {
        return;
    };
    let mut seqs = [0u64; 8];
    let mut records = vec![Record::Startup];
    for c in data.chunks_exact(6) {
        let (k, a, b, cc, d, e) = (c[0], c[1], c[2], c[3], c[4], c[5]);
        let conn = 2 + (a % 4) as u64;
        let mut next_seq = |reset: bool| {
            let s = &mut seqs[conn as usize];
            *s = if reset { 1 } else { *s + 1 };
            *s
        };
        let cl = |x: u8| ClOrdId::from(format!("c{}", x % 24).as_str());
        let r = match k % 16 {
            0 => Record::Startup,
            1 => Record::Disconnected { conn },
            2 => {
                let reset = cc & 1 == 1;
                let sender = if b % 7 == 6 {
                    "NOBODY".to_string()
                } else {
                    format!("CLIENT{}", b % 3 + 1)
                };
                Record::fix44_logon(conn, next_seq(reset), &sender, reset)
            }
            15 => Record::Tick,
            k => {
                let price = 995 + (e % 11) as i64;
                let msg = match k {
                    3..=8 => AppMsg::New(NewOrder {
                        cl_ord_id: cl(b),
                        symbol: (cc % 2) as u32,
                        side: if d & 1 == 0 { Side::Buy } else { Side::Sell },
                        ord_type: if d & 8 == 0 {
                            OrdType::Limit
                        } else {
                            OrdType::Market
                        },
                        tif: match (d >> 1) % 4 {
                            0 => TimeInForce::Day,
                            1 => TimeInForce::Gtc,
                            2 => TimeInForce::Ioc,
                            _ => TimeInForce::Fok,
                        },
                        price,
                        qty: 1 + (e >> 4) as u64,
                        account: None,
                        post_only: d & 16 != 0,
                        ..Default::default()
                    }),
                    9..=11 => AppMsg::Cancel {
                        cl_ord_id: cl(b),
                        orig_cl_ord_id: cl(cc),
                    },
                    12..=13 => AppMsg::Replace(Replace {
                        cl_ord_id: cl(b),
                        orig_cl_ord_id: cl(cc),
                        symbol: (d % 2) as u32,
                        price,
                        qty: 1 + (e >> 4) as u64,
                        stop_price: 0,
                    }),
                    _ => AppMsg::Status {
                        cl_ord_id: cl(b),
                        echo: Echo::EMPTY,
                    },
                };
                app(conn, next_seq(false), msg)
            }
        };
        records.push(r);
    }
    let cl_max = 8 + (head % 64) as usize;
    let per_gen = 32 << (head >> 6 & 3);
    let mark_every = 1 + (head >> 3 & 7) as u64;
    compare(
        &records,
        cl_max,
        mark_every,
        per_gen,
        1 + (head % 29) as usize,
    );
}

#[cfg(test)]
mod tests;
