use super::*;
use crate::record::{Record, KIND_RECORD};
use fix::{Decoder, Encoder, FixVersion};
use fix_gateway::{ConnIds, FixAdapter};
use journal::{JournalConfig, JournalWriter, Log};
use market_data::Book;
use proptest::prelude::*;
use types::{Side, XorShift64};

/// One framed FIX 4.4 message from `sender`.
fn framed(sender: &str, seq: u64, msg_type: &str, fields: &[(u32, &str)]) -> Vec<u8> {
    let mut enc = Encoder::default();
    enc.begin(msg_type.as_bytes());
    enc.field(49, sender.as_bytes());
    enc.field(56, b"RIALTO");
    enc.field_u64(34, seq);
    enc.field(52, b"20260101-00:00:00.000");
    for (t, v) in fields {
        enc.field(*t, v.as_bytes());
    }
    enc.finish(FixVersion::Fix44).to_vec()
}

/// A journal of random order traffic from two sessions: logons, limit orders around one
/// price on two symbols, cancels of earlier ones, timer ticks.
fn journal_of(seed: u64, orders: usize, j: &mut JournalWriter, cfg: &Config) {
    let adapter = FixAdapter::new(Arc::new(cfg.fix_config()));
    let mut decoder = Decoder::default();
    let mut ids: [Option<ConnIds>; 2] = [None, None];
    let mut seqs = [1u64, 1];
    let mut append = |r: &Record| {
        let mut b = Vec::new();
        r.encode(&mut b);
        j.append(KIND_RECORD, j.next_seq(), &b).unwrap();
    };
    append(&Record::Startup);
    let names = ["CLIENT1", "CLIENT2"];
    let mut rng = XorShift64::new(seed);
    let mut live: Vec<(usize, String, &str)> = Vec::new();
    let mut send =
        |k: usize, msg_type: &str, fields: &[(u32, &str)], append: &mut dyn FnMut(&Record)| {
            let bytes = framed(names[k], seqs[k], msg_type, fields);
            seqs[k] += 1;
            let input = adapter
                .to_input(k as u64 + 1, &mut ids[k], &mut decoder, &bytes)
                .expect("a message");
            append(&Record::Fix(input));
        };
    for k in 0..2 {
        send(k, "A", &[(98, "0"), (108, "30"), (141, "Y")], &mut append);
    }
    for i in 0..orders {
        let r = rng.next_u64();
        let k = (r % 2) as usize;
        if r.is_multiple_of(9) {
            append(&Record::Tick);
            continue;
        }
        if r.is_multiple_of(5) && !live.is_empty() {
            let (k, orig, sym) = live.swap_remove((r / 5) as usize % live.len());
            let cl = format!("c{i}");
            send(
                k,
                "F",
                &[
                    (11, &cl),
                    (41, &orig),
                    (55, sym),
                    (54, "1"),
                    (60, "20260101-00:00:00"),
                ],
                &mut append,
            );
            continue;
        }
        let sym = if (r >> 8).is_multiple_of(2) {
            "ACME"
        } else {
            "BOLT"
        };
        let side = if (r >> 12).is_multiple_of(2) {
            "1"
        } else {
            "2"
        };
        let px = format!("10.{:02}", 40 + (r >> 16) % 12);
        let qty = (1 + (r >> 24) % 9).to_string();
        let cl = format!("o{i}");
        send(
            k,
            "D",
            &[
                (11, &cl),
                (55, sym),
                (54, side),
                (38, &qty),
                (40, "2"),
                (44, &px),
                (59, "1"),
                (60, "20260101-00:00:00"),
            ],
            &mut append,
        );
        live.push((k, cl, sym));
    }
    j.commit(journal::Durability::Process).unwrap();
}

/// The feed a market-data follower builds equals its replica's engine book after every
/// record (every prefix of the journal), and each instrument's RptSeq counts its entries.
fn check_every_prefix(seed: u64, orders: usize) {
    let dir = tempfile::tempdir().unwrap();
    let (mut j, _) = JournalWriter::open(dir.path(), JournalConfig::default()).unwrap();
    let mut cfg = Config::defaults().lenient();
    cfg.orders_max = 1 << 12;
    journal_of(seed, orders, &mut j, &cfg);
    let last = j.next_seq() - 1;
    let mut node = Node::new(&cfg, Backing::Lazy);
    node.set_replaying(true);
    let mut f = Follower::new(node, j.source());
    let mut feed = Feed::new(cfg.instruments.len());
    let mut entries = vec![0u64; cfg.instruments.len()];
    let mut trades = 0u64;
    // Followed in uneven stretches, as the thread does.
    let mut at = 0;
    let mut rng = XorShift64::new(seed ^ 0x55);
    while at < last {
        at = (at + 1 + rng.next_u64() % 40).min(last);
        f.follow_market_to(
            at,
            |_| true,
            |node, _, events| {
                for e in events {
                    feed.on_event(e);
                }
                for e in feed.entries() {
                    entries[e.symbol as usize] += 1;
                    if let market_data::EntryKind::Trade(_) = e.kind {
                        trades += 1;
                    }
                }
                feed.clear_entries();
                let engine = node.exchange.engine();
                for s in 0..cfg.instruments.len() as u32 {
                    let want =
                        Book::from_orders([Side::Buy, Side::Sell].into_iter().flat_map(|side| {
                            engine.resting(s, side).map(move |o| (side, o.price, o.qty))
                        }));
                    assert_eq!(*feed.book(s), want, "record {} symbol {s}", node.last_seq());
                    assert_eq!(feed.rpt_seq(s), entries[s as usize]);
                }
            },
        )
        .unwrap();
    }
    assert_eq!(f.last_seq(), last);
    assert_eq!(trades, feed.trades());
    assert!(
        entries.iter().sum::<u64>() > 0 && trades > 0,
        "the journal trades"
    );
}

#[test]
fn the_feed_equals_the_replicas_book_after_every_record() {
    check_every_prefix(3, 600);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn every_prefix_of_random_journals(seed in 1u64..u64::MAX) {
        check_every_prefix(seed, 250);
    }
}
