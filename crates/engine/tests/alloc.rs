//! Proves the engine makes no heap allocation per command after warm-up, on a realistic mixed
//! stream (its own test binary: it installs a counting global allocator).

use engine::{Engine, EngineConfig};
use types::{Event, EventSink, Matcher};

#[path = "common/mixed.rs"]
mod mixed;

#[global_allocator]
static GLOBAL: alloc_count::Counting = alloc_count::Counting;

use alloc_count::allocs;

/// Counts events by kind without allocating.
#[derive(Default)]
struct Tally {
    n: [u64; 7],
}

impl EventSink for Tally {
    fn on_event(&mut self, e: &Event) {
        let k = match e {
            Event::Accepted { .. } => 0,
            Event::Rejected { .. } => 1,
            Event::Trade { .. } => 2,
            Event::Canceled { .. } => 3,
            Event::Replaced { .. } => 4,
            Event::MassCanceled { .. } => 5,
            Event::Level { .. } => 6,
        };
        self.n[k] += 1;
    }
}

#[test]
fn no_allocation_per_command_after_warm_up() {
    let mut engine = Engine::new(&mixed::instruments(), EngineConfig::default());
    let mut gen = mixed::Mixed::new(42);
    let warm: Vec<_> = (0..200_000).map(|_| gen.next_command()).collect();
    let steady: Vec<_> = (0..300_000).map(|_| gen.next_command()).collect();
    let mut tally = Tally::default();
    for c in &warm {
        engine.apply(c, &mut tally);
    }
    engine.check_invariants().unwrap();
    let before = allocs();
    for c in &steady {
        engine.apply(c, &mut tally);
    }
    let allocs = allocs() - before;
    engine.check_invariants().unwrap();
    // The stream must be realistic for the proof to mean something.
    let [acc, rej, trades, canceled, replaced, _, levels] = tally.n;
    assert!(
        trades > 50_000 && canceled > 50_000 && replaced > 10_000,
        "{:?}",
        tally.n
    );
    assert!(
        acc > 100_000 && rej > 1_000 && levels > 100_000,
        "{:?}",
        tally.n
    );
    let resting = engine.resting_count();
    assert!((2_000..=20_000).contains(&resting), "resting {resting}");
    assert_eq!(
        allocs,
        0,
        "heap allocations during {} commands",
        steady.len()
    );
}

#[test]
fn no_allocation_when_the_market_trends_far() {
    // Prices climb without end while a few orders rest: each side's ladder window re-centres in
    // place again and again and never needs to grow.
    use types::{Command, NewOrder, OrdType, Side, StpMode, TimeInForce};
    let mut engine = Engine::new(&mixed::instruments(), EngineConfig::default());
    let mut tally = Tally::default();
    let order = |id: u64, side, price| {
        Command::New(NewOrder {
            id,
            account: (id % 7) as u32,
            symbol: 0,
            side,
            ord_type: OrdType::Limit,
            tif: TimeInForce::Gtc,
            price,
            qty: 5,
            post_only: false,
            stp: StpMode::CancelNewest,
        })
    };
    let step = |engine: &mut Engine, tally: &mut Tally, k: u64| {
        let p = 1_000 + k as i64 * 3;
        let id = 1 + k * 2;
        engine.apply(&order(id, Side::Buy, p), tally);
        engine.apply(&order(id + 1, Side::Sell, p + 100), tally);
        if k >= 20 {
            for old in [id - 40, id - 39] {
                engine.apply(
                    &Command::Cancel {
                        id: old,
                        account: (old % 7) as u32,
                        symbol: 0,
                    },
                    tally,
                );
            }
        }
    };
    for k in 0..100_000 {
        step(&mut engine, &mut tally, k);
    }
    let before = allocs();
    for k in 100_000..300_000 {
        step(&mut engine, &mut tally, k);
    }
    let allocs = allocs() - before;
    engine.check_invariants().unwrap();
    assert!(engine.resting_count() >= 20, "{}", engine.resting_count());
    // The price moved 600_000 ticks: far beyond any window.
    assert!(engine.best_bid(0).unwrap().0 > 800_000);
    assert_eq!(allocs, 0);
}
