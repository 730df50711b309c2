use super::*;
use engine::{Engine, EngineConfig};
use proptest::prelude::*;
use types::{
    Command, Instrument, Matcher, NewOrder, OrdType, StpMode, Symbol, TimeInForce, XorShift64,
};

fn instruments() -> Vec<Instrument> {
    ["AAA", "BBB"]
        .iter()
        .map(|s| Instrument {
            symbol: Symbol::new(s).unwrap(),
            tick: 1,
            lot: 1,
        })
        .collect()
}

/// A random command over a narrow price band (so that orders cross, levels fill and empty).
fn command(rng: &mut XorShift64, next_id: &mut u64, live: &mut Vec<(u64, u32, u32)>) -> Command {
    let r = rng.next_u64();
    if r % 10 < 2 && !live.is_empty() {
        let (id, account, symbol) = live.swap_remove((r / 10) as usize % live.len());
        return Command::Cancel {
            id,
            account,
            symbol,
        };
    }
    if r % 10 == 2 && !live.is_empty() {
        let (id, account, symbol) = live[(r / 10) as usize % live.len()];
        return Command::Replace {
            id,
            account,
            symbol,
            price: 95 + (rng.next_u64() % 10) as i64,
            qty: 1 + rng.next_u64() % 20,
        };
    }
    *next_id += 1;
    let symbol = (rng.next_u64() % 2) as u32;
    let account = 1 + (rng.next_u64() % 3) as u32;
    let side = if rng.next_u64().is_multiple_of(2) {
        Side::Buy
    } else {
        Side::Sell
    };
    let market = rng.next_u64().is_multiple_of(12);
    live.push((*next_id, account, symbol));
    Command::New(NewOrder {
        id: *next_id,
        account,
        symbol,
        side,
        ord_type: if market {
            OrdType::Market
        } else {
            OrdType::Limit
        },
        tif: if market {
            TimeInForce::Ioc
        } else {
            TimeInForce::Gtc
        },
        price: 95 + (rng.next_u64() % 10) as i64,
        qty: 1 + rng.next_u64() % 20,
        post_only: false,
        stp: StpMode::None,
        ..Default::default()
    })
}

fn engine_book(e: &Engine, symbol: SymbolId) -> Book {
    Book::from_orders(
        [Side::Buy, Side::Sell]
            .into_iter()
            .flat_map(|s| e.resting(symbol, s).map(move |o| (s, o.price, o.qty))),
    )
}

/// A subscriber that took the snapshot of one instrument at some point and applies the
/// entries after it, seeing the best `depth` levels.
struct Subscriber {
    symbol: SymbolId,
    depth: usize,
    book: Book,
    rpt_seq: u64,
    /// The feed's full book as this subscriber's view is cut from (to cut depth views).
    full: Book,
}

impl Subscriber {
    fn join(feed: &Feed, symbol: SymbolId, depth: usize) -> Subscriber {
        let mut book = Book::default();
        for e in feed.book(symbol).entries(depth) {
            assert!(book.apply(&e));
        }
        Subscriber {
            symbol,
            depth,
            book,
            rpt_seq: feed.rpt_seq(symbol),
            full: feed.book(symbol).clone(),
        }
    }

    fn on_entry(&mut self, e: &Entry) {
        if e.symbol != self.symbol {
            return;
        }
        assert_eq!(e.rpt_seq, self.rpt_seq + 1, "RptSeq gap");
        self.rpt_seq = e.rpt_seq;
        if let EntryKind::Level(l) = e.kind {
            assert!(self.full.apply(&l), "{l:?} does not fit the full book");
            let mut seen = Vec::new();
            depth_view(&self.full, &l, self.depth, |v| seen.push(v));
            for v in seen {
                assert!(self.book.apply(&v), "{v:?} does not fit the view");
            }
        }
    }

    fn check(&self, feed: &Feed) {
        let want: Book = {
            let mut b = Book::default();
            for e in feed.book(self.symbol).entries(self.depth) {
                b.apply(&e);
            }
            b
        };
        assert_eq!(self.book, want, "depth {} view differs", self.depth);
    }
}

fn run(seed: u64, commands: usize) {
    let ins = instruments();
    let mut engine = Engine::new(&ins, EngineConfig::default());
    let mut feed = Feed::new(ins.len());
    let mut rng = XorShift64::new(seed);
    let (mut next_id, mut live) = (0, Vec::new());
    let mut events: Vec<Event> = Vec::new();
    let mut subs: Vec<Subscriber> = (0..ins.len() as u32)
        .flat_map(|s| [0, 1, 3].map(|d| Subscriber::join(&feed, s, d)))
        .collect();
    let mut trades = 0;
    for i in 0..commands {
        let cmd = command(&mut rng, &mut next_id, &mut live);
        events.clear();
        engine.apply(&cmd, &mut events);
        for e in &events {
            if matches!(e, Event::Trade { .. }) {
                trades += 1;
            }
            feed.on_event(e);
        }
        for e in feed.entries() {
            for s in subs.iter_mut() {
                s.on_entry(e);
            }
        }
        feed.clear_entries();
        for s in 0..ins.len() as u32 {
            assert_eq!(*feed.book(s), engine_book(&engine, s), "command {i}");
        }
        for s in &subs {
            s.check(&feed);
        }
        // Subscribers join along the way, from the snapshot of the moment.
        if i % 97 == 0 {
            subs.push(Subscriber::join(&feed, (i % 2) as u32, 1 + i % 4));
        }
    }
    assert_eq!(feed.trades(), trades);
}

#[test]
fn the_feed_book_is_the_engines_after_every_command() {
    run(1, 3000);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn snapshot_plus_entries_is_the_book(seed in 1u64..u64::MAX) {
        run(seed, 600);
    }
}

#[test]
fn depth_view_pushes_out_and_lets_in() {
    let mut b = Book::default();
    for p in [100, 99, 98] {
        b.set(Side::Buy, p, 5, 1);
    }
    // A better bid arrives: in a top-2 view it is new and 99 leaves.
    let a = b.set(Side::Buy, 101, 7, 1);
    assert_eq!(a, Action::New);
    let e = LevelEntry {
        side: Side::Buy,
        action: a,
        price: 101,
        qty: 7,
        orders: 1,
    };
    let mut seen = Vec::new();
    depth_view(&b, &e, 2, |v| seen.push((v.action, v.price)));
    assert_eq!(seen, vec![(Action::New, 101), (Action::Delete, 99)]);
    // It goes: 99 comes back.
    let a = b.set(Side::Buy, 101, 0, 0);
    let e = LevelEntry {
        action: a,
        qty: 0,
        orders: 0,
        ..e
    };
    seen.clear();
    depth_view(&b, &e, 2, |v| seen.push((v.action, v.price)));
    assert_eq!(seen, vec![(Action::Delete, 101), (Action::New, 99)]);
    // A change beyond the view is not seen.
    let e = LevelEntry {
        action: b.set(Side::Buy, 98, 9, 2),
        price: 98,
        qty: 9,
        orders: 2,
        ..e
    };
    seen.clear();
    depth_view(&b, &e, 2, |v| seen.push((v.action, v.price)));
    assert!(seen.is_empty());
}
