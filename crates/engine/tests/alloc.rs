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
    n: [u64; 9],
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
            Event::Triggered { .. } => 7,
            Event::Uncrossed { .. } => 8,
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
    let [acc, rej, trades, canceled, replaced, _, levels, _, _] = tally.n;
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
            ..Default::default()
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

/// An IOC order that finds no liquidity: accepted (its id becomes used), then canceled.
fn ioc(id: u64) -> types::Command {
    use types::{Command, NewOrder, OrdType, Side, StpMode, TimeInForce};
    Command::New(NewOrder {
        id,
        account: 1,
        symbol: 0,
        side: Side::Buy,
        ord_type: OrdType::Limit,
        tif: TimeInForce::Ioc,
        price: 100,
        qty: 1,
        post_only: false,
        stp: StpMode::CancelNewest,
        ..Default::default()
    })
}

#[test]
fn sequential_ids_beyond_ids_direct_allocate_a_chunk_per_million() {
    // The exchange's ids are sequential: beyond `ids_direct` they fill 2^20-id bitmap chunks,
    // one allocation each (plus the small vector of chunk pointers), never a rehash.
    let config = EngineConfig {
        ids_direct: 1 << 12,
        ..EngineConfig::default()
    };
    let mut engine = Engine::new(&mixed::instruments(), config);
    let mut tally = Tally::default();
    for id in 0..100_000 {
        engine.apply(&ioc(id), &mut tally);
    }
    let before = allocs();
    for id in 100_000..(2 << 20) + 5_000 {
        engine.apply(&ioc(id), &mut tally);
    }
    let allocs = allocs() - before;
    assert_eq!(tally.n[0], (2 << 20) + 5_000, "all accepted");
    // Chunks 1 and 2 (chunk 0 came in warm-up), and at most two growths of the pointer vector.
    assert!((2..=4).contains(&allocs), "{allocs} allocations");
    assert!(engine.id_used((2 << 20) + 4_999) && !engine.id_used((2 << 20) + 5_000));
}

#[test]
fn sparse_ids_allocate_a_segment_per_hundreds_of_ids() {
    // Random 64-bit ids: the sparse set grows by 32 KiB segments allocated on first write.
    let mut engine = Engine::new(&mixed::instruments(), EngineConfig::default());
    let mut tally = Tally::default();
    let mut rng = types::XorShift64::new(0x2545_f491_4f6c_dd1d);
    let mut next = || rng.next_u64() | 1 << 62;
    for _ in 0..10_000 {
        engine.apply(&ioc(next()), &mut tally);
    }
    let before = allocs();
    let n = 200_000;
    for _ in 0..n {
        engine.apply(&ioc(next()), &mut tally);
    }
    let allocs = allocs() - before;
    // 210 K ids at load <= 1/2 end in a table of 2^19 buckets: 128 segments, plus those of the
    // tables it grew through and their pointer vectors.
    assert!(allocs <= 300, "{allocs} allocations for {n} sparse ids");
    assert_eq!(tally.n[0], 210_000, "all accepted");
}
