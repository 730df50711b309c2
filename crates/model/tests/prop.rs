//! Property tests: the engine and the reference model, fed the same random command streams,
//! emit identical events, and after every command both books pass the auditor (rebuilt from the
//! commands and events alone) and their own invariant checks. Also: the engine is deterministic,
//! and a snapshot restored mid-stream continues exactly like the original.
//!
//! Streams are built to hit the edge cases: three instruments (one with tick 5 and lot 10),
//! three accounts (so self-trade prevention triggers), prices clustered around a mid (so orders
//! cross), every order type, time in force, STP mode and post-only, cancels and replaces of live,
//! dead and unknown ids (and of other accounts' orders), mass cancels, end of day, duplicate ids,
//! invalid fields and huge ids; and the order types of issue 40: stop and stop-limit orders with
//! stop prices a few ticks from the last trade (so they trigger, and their trades trigger more),
//! icebergs, GTD orders with `Expire` commands on a rising clock, and call auctions (`CallStart`,
//! then orders that cross without trading, then `Uncross`). `PROPTEST_CASES=N` raises the number
//! of streams.

mod common;

use std::collections::BTreeMap;

use common::Eng;
use model::{Inspect, Lockstep, Reference};
use proptest::prelude::*;
use types::{
    Command, Event, Instrument, Matcher, NewOrder, OrdType, OrderId, PriceTicks, Side, StpMode,
    Symbol, SymbolId, TimeInForce,
};

const MID: i64 = 100;
/// The journaled clock at the start of a stream (GTD expire times are a little after it).
const CLOCK_START: u64 = 1_000;

fn instruments() -> Vec<Instrument> {
    let inst = |s: &str, tick, lot| Instrument {
        symbol: Symbol::new(s).expect("valid symbol"),
        tick,
        lot,
    };
    vec![inst("ACME", 1, 1), inst("BETA", 1, 1), inst("GRID", 5, 10)]
}

/// Which id a command names.
#[derive(Clone, Copy, Debug)]
enum IdSel {
    /// The next unused small id.
    Fresh,
    /// A huge id (exercises sparse id storage).
    Huge(u8),
    /// One of the ids named so far (live or dead), picked by index.
    Seen(u16),
    /// One of the orders live now, resting or pending stops (falls back to `Seen` if none).
    Live(u16),
    /// An id never used.
    Unknown(u8),
}

/// Which account a cancel or replace names.
#[derive(Clone, Copy, Debug)]
enum AcctSel {
    Owner,
    Other(u8),
}

/// An abstract command; turned into a concrete one against the stream's history.
#[derive(Clone, Copy, Debug)]
enum Op {
    New {
        id: IdSel,
        account: u8,
        symbol: u8,
        side: Side,
        ord_type: OrdType,
        post_only: bool,
        tif: TimeInForce,
        stp: StpMode,
        price_off: i8,
        qty: u8,
        /// 0: valid; 1: zero qty; 2: off-lot qty; 3: non-positive price; 4: off-tick price;
        /// 5: bad stop price; 6: bad display quantity; 7: bad expire time.
        bad: u8,
        /// Order types II: see [`Extras`].
        extras: Extras,
    },
    Cancel {
        id: IdSel,
        account: AcctSel,
        wrong_symbol: bool,
    },
    Replace {
        id: IdSel,
        account: AcctSel,
        /// None keeps the price.
        price_off: Option<i8>,
        /// 0: same qty; 1: less; 2: more; 3: any; 4: zero; 5: off lot.
        qty_mode: u8,
        qty: u8,
        bad_price: bool,
    },
    MassCancel {
        account: u8,
        symbol: Option<u8>,
        side: Option<Side>,
    },
    ExpireDay {
        symbol: Option<u8>,
    },
    /// The clock advances by `step` and GTD orders due by then expire.
    Clock {
        step: u8,
    },
    CallStart {
        symbol: u8,
    },
    /// Uncross a book in a call (picked among those), else symbol `pick % 4`.
    Uncross {
        pick: u8,
        reference: Option<i8>,
    },
}

/// What a new order adds of issue 40's order types.
#[derive(Clone, Copy, Debug)]
struct Extras {
    /// A stop this many ticks beyond the last trade (above for a buy, below for a sell).
    stop: Option<u8>,
    /// An iceberg peak of this many lots (only on orders that may rest).
    display: Option<u8>,
    /// For a GTD order: expire this long after the stream's clock now.
    expire_in: u8,
}

fn side() -> impl Strategy<Value = Side> {
    prop_oneof![Just(Side::Buy), Just(Side::Sell)]
}

fn id_sel() -> impl Strategy<Value = IdSel> {
    prop_oneof![
        12 => any::<u16>().prop_map(IdSel::Live),
        4 => any::<u16>().prop_map(IdSel::Seen),
        1 => any::<u8>().prop_map(IdSel::Unknown),
        1 => any::<u8>().prop_map(IdSel::Huge),
    ]
}

fn acct_sel() -> impl Strategy<Value = AcctSel> {
    prop_oneof![9 => Just(AcctSel::Owner), 1 => (1u8..=3).prop_map(AcctSel::Other)]
}

fn op() -> impl Strategy<Value = Op> {
    let new = (
        prop_oneof![
            12 => Just(IdSel::Fresh),
            1 => any::<u8>().prop_map(IdSel::Huge),
            1 => any::<u16>().prop_map(IdSel::Seen),
        ],
        1u8..=3,
        prop_oneof![40 => 0u8..3, 1 => Just(3u8)],
        side(),
        prop_oneof![
            14 => Just((OrdType::Limit, false)),
            3 => Just((OrdType::Limit, true)),
            2 => Just((OrdType::Market, false)),
            1 => Just((OrdType::Market, true)),
        ],
        prop_oneof![
            6 => Just(TimeInForce::Gtc),
            3 => Just(TimeInForce::Day),
            2 => Just(TimeInForce::Ioc),
            2 => Just(TimeInForce::Fok),
            2 => Just(TimeInForce::Gtd),
        ],
        prop_oneof![
            Just(StpMode::CancelNewest),
            Just(StpMode::CancelOldest),
            Just(StpMode::CancelBoth),
            Just(StpMode::None),
        ],
        prop_oneof![30 => -4i8..=4, 1 => -90i8..=90],
        1u8..=8,
        prop_oneof![40 => Just(0u8), 1 => 1u8..=7],
        (
            prop::option::weighted(0.3, 0u8..=3),
            prop::option::weighted(0.25, 1u8..=3),
            1u8..=60,
        )
            .prop_map(|(stop, display, expire_in)| Extras {
                stop,
                display,
                expire_in,
            }),
    )
        .prop_map(
            |(
                id,
                account,
                symbol,
                side,
                (ord_type, post_only),
                tif,
                stp,
                price_off,
                qty,
                bad,
                extras,
            )| {
                Op::New {
                    id,
                    account,
                    symbol,
                    side,
                    ord_type,
                    post_only,
                    tif,
                    stp,
                    price_off,
                    qty,
                    bad,
                    extras,
                }
            },
        );
    let cancel = (id_sel(), acct_sel(), prop::bool::weighted(0.02)).prop_map(
        |(id, account, wrong_symbol)| Op::Cancel {
            id,
            account,
            wrong_symbol,
        },
    );
    let replace = (
        id_sel(),
        acct_sel(),
        prop::option::weighted(0.6, -4i8..=4),
        prop_oneof![3 => 0u8..=3, 1 => 4u8..=5],
        1u8..=8,
        prop::bool::weighted(0.05),
    )
        .prop_map(
            |(id, account, price_off, qty_mode, qty, bad_price)| Op::Replace {
                id,
                account,
                price_off,
                qty_mode,
                qty,
                bad_price,
            },
        );
    let mass = (
        1u8..=3,
        prop::option::weighted(0.5, prop_oneof![10 => 0u8..3, 1 => Just(3u8)]),
        prop::option::weighted(0.3, side()),
    )
        .prop_map(|(account, symbol, side)| Op::MassCancel {
            account,
            symbol,
            side,
        });
    let expire = prop::option::weighted(0.5, 0u8..=3).prop_map(|symbol| Op::ExpireDay { symbol });
    let clock = (1u8..=30).prop_map(|step| Op::Clock { step });
    let call =
        prop_oneof![20 => 0u8..3, 1 => Just(3u8)].prop_map(|symbol| Op::CallStart { symbol });
    let uncross = (any::<u8>(), prop::option::weighted(0.5, -4i8..=4))
        .prop_map(|(pick, reference)| Op::Uncross { pick, reference });
    prop_oneof![
        60 => new,
        18 => cancel,
        18 => replace,
        2 => mass,
        1 => expire,
        2 => clock,
        2 => call,
        2 => uncross,
    ]
}

/// Turns abstract ops into concrete commands, remembering the ids it named and their owners.
/// It looks at the reference only to aim replaces at an order's current price and quantity.
struct Builder {
    insts: Vec<Instrument>,
    next_id: OrderId,
    /// id -> (account, symbol) as named by the new order that used it.
    seen: BTreeMap<OrderId, (u32, SymbolId)>,
    order: Vec<OrderId>,
    /// The journaled clock: rises with every `Clock` op.
    now: u64,
    /// The last trade price per symbol (stops are placed a few ticks from it).
    last_trade: Vec<Option<PriceTicks>>,
}

impl Builder {
    fn new() -> Builder {
        let insts = instruments();
        Builder {
            last_trade: vec![None; insts.len()],
            insts,
            next_id: 1,
            seen: BTreeMap::new(),
            order: Vec::new(),
            now: CLOCK_START,
        }
    }

    /// Remembers what the events of the last command say about the market.
    fn observe(&mut self, events: &[Event]) {
        for e in events {
            if let Event::Trade { symbol, price, .. } = e {
                if let Some(last) = self.last_trade.get_mut(*symbol as usize) {
                    *last = Some(*price);
                }
            }
        }
    }

    fn pick(&mut self, sel: IdSel, reference: &Reference) -> OrderId {
        match sel {
            IdSel::Live(k) => {
                let symbols = 0..self.insts.len() as SymbolId;
                let live: Vec<OrderId> = symbols
                    .clone()
                    .flat_map(|s| [Side::Buy, Side::Sell].map(|d| (s, d)))
                    .flat_map(|(s, d)| reference.resting(s, d).iter().map(|o| o.id))
                    .chain(
                        symbols.flat_map(|s| reference.pending_stops(s).into_iter().map(|o| o.id)),
                    )
                    .collect();
                match live.len() {
                    0 => self.pick(IdSel::Seen(k), reference),
                    n => live[k as usize % n],
                }
            }
            IdSel::Fresh => {
                self.next_id += 1;
                self.next_id - 1
            }
            IdSel::Huge(k) => u64::MAX - u64::from(k % 16),
            IdSel::Seen(k) if !self.order.is_empty() => self.order[k as usize % self.order.len()],
            IdSel::Seen(_) => 1,
            IdSel::Unknown(k) => 1_000_000 + u64::from(k),
        }
    }

    fn grid(&self, symbol: SymbolId) -> (i64, u64) {
        self.insts
            .get(symbol as usize)
            .map_or((1, 1), |i| (i.tick, i.lot))
    }

    fn build(&mut self, op: Op, reference: &Reference) -> Command {
        match op {
            Op::New {
                id,
                account,
                symbol,
                side,
                ord_type,
                post_only,
                mut tif,
                stp,
                price_off,
                qty,
                bad,
                extras,
            } => {
                let id = self.pick(id, reference);
                let symbol = SymbolId::from(symbol);
                let (tick, lot) = self.grid(symbol);
                let mut price = (MID + i64::from(price_off)) * tick;
                let mut qty = u64::from(qty) * lot;
                let last = self
                    .last_trade
                    .get(symbol as usize)
                    .copied()
                    .flatten()
                    .unwrap_or(MID * tick);
                let mut stop_price = extras.stop.map_or(0, |off| {
                    let off = i64::from(off) * tick;
                    match side {
                        Side::Buy => last + off,
                        Side::Sell => (last - off).max(tick),
                    }
                });
                if stop_price > 0 {
                    // A stop-limit's limit lies beyond its stop (so that it trades when
                    // triggered, and moves the price on), and a stop is never post-only.
                    let beyond = i64::from(price_off.unsigned_abs()) * tick;
                    price = match side {
                        Side::Buy => stop_price + beyond,
                        Side::Sell => (stop_price - beyond).max(tick),
                    };
                }
                let post_only = post_only && stop_price == 0;
                let rests = ord_type == OrdType::Limit
                    && matches!(tif, TimeInForce::Gtc | TimeInForce::Day | TimeInForce::Gtd);
                let mut display_qty = match extras.display {
                    Some(d) if rests => u64::from(d) * lot,
                    _ => 0,
                };
                let mut expire_ns = if tif == TimeInForce::Gtd {
                    self.now + u64::from(extras.expire_in)
                } else {
                    0
                };
                match bad {
                    1 => qty = 0,
                    2 => qty += 1,
                    3 => price = -i64::from(price_off.unsigned_abs()),
                    4 => price += 1,
                    // A stop on a post-only order, or a stop price below 0 or off the tick.
                    5 if post_only => stop_price = last,
                    5 => stop_price = if tick == 1 { -1 } else { last + 1 },
                    6 if lot == 1 => {
                        display_qty = 1;
                        tif = TimeInForce::Ioc;
                    }
                    6 => display_qty = lot + 1,
                    7 if tif == TimeInForce::Gtd => expire_ns = 0,
                    7 => expire_ns = self.now + 5,
                    _ => {}
                }
                if lot == 1 && bad == 2 {
                    qty = 0;
                }
                if tick == 1 && bad == 4 {
                    price = 0;
                }
                if ord_type == OrdType::Market && bad == 0 {
                    price = 0;
                }
                let account = u32::from(account);
                if let std::collections::btree_map::Entry::Vacant(e) = self.seen.entry(id) {
                    e.insert((account, symbol));
                    self.order.push(id);
                }
                Command::New(NewOrder {
                    id,
                    account,
                    symbol,
                    side,
                    ord_type,
                    tif,
                    price,
                    qty,
                    post_only,
                    stp,
                    stop_price,
                    display_qty,
                    expire_ns,
                })
            }
            Op::Cancel {
                id,
                account,
                wrong_symbol,
            } => {
                let id = self.pick(id, reference);
                let (owner, symbol) = self.seen.get(&id).copied().unwrap_or((1, 0));
                Command::Cancel {
                    id,
                    account: match account {
                        AcctSel::Owner => owner,
                        AcctSel::Other(a) => u32::from(a),
                    },
                    symbol: if wrong_symbol {
                        (symbol + 1) % 4
                    } else {
                        symbol
                    },
                }
            }
            Op::Replace {
                id,
                account,
                price_off,
                qty_mode,
                qty,
                bad_price,
            } => {
                let id = self.pick(id, reference);
                let (owner, symbol) = self.seen.get(&id).copied().unwrap_or((1, 0));
                let (tick, lot) = self.grid(symbol);
                let (cur_price, cur_qty) = match (reference.find(id), reference.find_pending(id)) {
                    (Some((_, o)), _) => (o.price, o.qty),
                    // A pending stop market order's price is 0.
                    (None, Some(o)) => (o.price, o.qty),
                    (None, None) => (MID * tick, 4 * lot),
                };
                let mut price = match price_off {
                    None => cur_price,
                    Some(off) => (MID + i64::from(off)) * tick,
                };
                if bad_price {
                    price = if tick == 1 { 0 } else { price + 1 };
                }
                let q = u64::from(qty) * lot;
                let new_qty = match qty_mode {
                    0 => cur_qty,
                    1 => cur_qty.saturating_sub(q).max(lot),
                    2 => cur_qty + q,
                    3 => q,
                    4 => 0,
                    _ => q + if lot == 1 { 0 } else { 1 },
                };
                Command::Replace {
                    id,
                    account: match account {
                        AcctSel::Owner => owner,
                        AcctSel::Other(a) => u32::from(a),
                    },
                    symbol,
                    price,
                    qty: new_qty,
                }
            }
            Op::MassCancel {
                account,
                symbol,
                side,
            } => Command::MassCancel {
                account: u32::from(account),
                symbol: symbol.map(SymbolId::from),
                side,
            },
            Op::ExpireDay { symbol } => Command::ExpireDay {
                symbol: symbol.map(SymbolId::from),
            },
            Op::Clock { step } => {
                self.now += u64::from(step);
                Command::Expire { now_ns: self.now }
            }
            Op::CallStart { symbol } => Command::CallStart {
                symbol: SymbolId::from(symbol),
            },
            Op::Uncross {
                pick,
                reference: off,
            } => {
                let in_call: Vec<SymbolId> = (0..self.insts.len() as SymbolId)
                    .filter(|&s| reference.in_call(s))
                    .collect();
                let symbol = match in_call.len() {
                    0 => SymbolId::from(pick % 4),
                    n => in_call[pick as usize % n],
                };
                let (tick, _) = self.grid(symbol);
                Command::Uncross {
                    symbol,
                    reference: off.map_or(0, |o| (MID + i64::from(o)) * tick),
                }
            }
        }
    }
}

/// Builds the concrete stream for `ops`.
fn commands(ops: &[Op]) -> Vec<Command> {
    let mut b = Builder::new();
    let mut r = Reference::new(&b.insts);
    ops.iter()
        .map(|op| {
            let cmd = b.build(*op, &r);
            let mut events = Vec::new();
            r.apply(&cmd, &mut events);
            b.observe(&events);
            cmd
        })
        .collect()
}

/// Feeds `cmds` to both matchers; the error describes the first divergence or broken invariant.
fn compare(cmds: &[Command]) -> Result<(), String> {
    let insts = instruments();
    let mut both = Lockstep::new(&insts, Eng::small(&insts));
    for cmd in cmds {
        both.apply(cmd).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn run<M: Matcher>(m: &mut M, cmds: &[Command]) -> Vec<Vec<Event>> {
    cmds.iter()
        .map(|c| {
            let mut ev = Vec::new();
            m.apply(c, &mut ev);
            ev
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(96),
        max_shrink_iters: 4096,
        ..ProptestConfig::default()
    })]

    #[test]
    fn engine_matches_reference(ops in prop::collection::vec(op(), 1..300)) {
        let cmds = commands(&ops);
        if let Err(e) = compare(&cmds) {
            return Err(TestCaseError::fail(e));
        }
    }

    #[test]
    fn same_stream_same_events(ops in prop::collection::vec(op(), 1..200)) {
        let cmds = commands(&ops);
        let insts = instruments();
        let (mut a, mut b) = (Eng::small(&insts), Eng::small(&insts));
        prop_assert_eq!(run(&mut a, &cmds), run(&mut b, &cmds));
        prop_assert_eq!(a.0.state_hash(), b.0.state_hash());
        let (mut c, mut d) = (Reference::new(&insts), Reference::new(&insts));
        prop_assert_eq!(run(&mut c, &cmds), run(&mut d, &cmds));
        prop_assert_eq!(c, d);
    }

    #[test]
    fn snapshot_restore_mid_stream_continues_identically(
        ops in prop::collection::vec(op(), 1..200),
        cut in any::<prop::sample::Index>(),
    ) {
        let cmds = commands(&ops);
        let cut = cut.index(cmds.len() + 1);
        let insts = instruments();
        let mut original = Eng::small(&insts);
        run(&mut original, &cmds[..cut]);
        let mut bytes = Vec::new();
        original.0.snapshot(&mut bytes);
        let restored = engine::Engine::restore(&bytes).map_err(|e| TestCaseError::fail(format!("restore: {e:?}")))?;
        prop_assert_eq!(restored.state_hash(), original.0.state_hash());
        let mut restored = Eng(restored);
        prop_assert!(restored.check().is_ok(), "{:?}", restored.check());
        prop_assert_eq!(run(&mut original, &cmds[cut..]), run(&mut restored, &cmds[cut..]));
        prop_assert_eq!(restored.0.state_hash(), original.0.state_hash());
    }
}

/// What one command did of issue 40's rules, as notes for `streams_reach_every_rule`: `before`
/// is the reference before `cmd`, `after` after it, `events` what it emitted.
fn order_types_ii_notes(
    cmd: &Command,
    before: &Reference,
    after: &Reference,
    events: &[Event],
) -> Vec<&'static str> {
    let mut notes = Vec::new();
    let pending = |id: OrderId| before.find_pending(id);
    let triggered: Vec<OrderId> = events
        .iter()
        .filter_map(|e| match e {
            Event::Triggered { id, .. } => Some(*id),
            _ => None,
        })
        .collect();
    // The command's own trades: those before the first trigger round.
    let own: Vec<PriceTicks> = events
        .iter()
        .take_while(|e| !matches!(e, Event::Triggered { .. }))
        .filter_map(|e| match e {
            Event::Trade { price, .. } => Some(*price),
            _ => None,
        })
        .collect();
    let (hi, lo) = (own.iter().max().copied(), own.iter().min().copied());
    for id in &triggered {
        notes.push("stop triggered");
        let Some(stop) = pending(*id) else { continue };
        let by_own_trades = match stop.side {
            Side::Buy => hi.is_some_and(|hi| hi >= stop.stop_price),
            Side::Sell => lo.is_some_and(|lo| lo <= stop.stop_price),
        };
        if !by_own_trades {
            // Only a triggered order's trades can have triggered it: a later round.
            notes.push("stop cascade");
        }
        if after.find(*id).is_some() {
            notes.push("triggered stop rests");
        }
    }
    if events.len() > 1 && triggered.len() > 1 {
        notes.push("several stops triggered by one command");
    }
    let uncross = events.iter().any(|e| matches!(e, Event::Uncrossed { .. }));
    let mut makers: BTreeMap<OrderId, usize> = BTreeMap::new();
    for e in events {
        if let Event::Trade { maker_id, .. } = e {
            *makers.entry(*maker_id).or_default() += 1;
        }
    }
    for (id, n) in &makers {
        let Some((_, was)) = before.find(*id) else {
            continue;
        };
        if was.display_qty == 0 {
            continue;
        }
        let requeued = after.find(*id).is_some_and(|(_, now)| now.seq != was.seq);
        if requeued || (*n > 1 && !uncross) {
            notes.push(if uncross {
                "iceberg refill in an uncross"
            } else {
                "iceberg refill"
            });
        }
    }
    let has = |want: fn(&Event) -> bool| events.iter().any(want);
    match *cmd {
        Command::Cancel { id, .. }
            if pending(id).is_some() && has(|e| matches!(e, Event::Canceled { .. })) =>
        {
            notes.push("stop canceled");
        }
        Command::Replace { id, symbol, .. } => {
            let replaced = has(|e| matches!(e, Event::Replaced { .. }));
            if replaced && pending(id).is_some() {
                notes.push("stop replaced");
            }
            let lost = has(|e| {
                matches!(
                    e,
                    Event::Replaced {
                        lost_priority: true,
                        ..
                    }
                )
            });
            if lost && before.in_call(symbol) {
                notes.push("replace loses priority in a call");
            }
        }
        Command::MassCancel { .. } | Command::ExpireDay { .. } | Command::Expire { .. } => {
            let stop_gone = events
                .iter()
                .any(|e| matches!(e, Event::Canceled { id, .. } if pending(*id).is_some()));
            if stop_gone {
                notes.push("stop canceled by a mass cancel or expiry");
            }
            if matches!(cmd, Command::Expire { .. }) && has(|e| matches!(e, Event::Canceled { .. }))
            {
                notes.push("gtd expired");
            }
        }
        Command::Uncross { .. } if uncross => {
            notes.push("uncross with volume");
            if !triggered.is_empty() {
                notes.push("uncross triggers stops");
            }
        }
        Command::New(o) if before.in_call(o.symbol) => {
            let crosses = after.resting(o.symbol, o.side).iter().any(|m| m.id == o.id)
                && after
                    .resting(o.symbol, o.side.opposite())
                    .first()
                    .is_some_and(|m| match o.side {
                        Side::Buy => m.price <= o.price,
                        Side::Sell => m.price >= o.price,
                    });
            if crosses {
                notes.push("crossing order rests in a call");
            }
        }
        _ => {}
    }
    notes
}

/// The generator is worth something only if its streams reach every rule: count what the
/// reference does on a fixed sample of streams and require each outcome to occur.
#[test]
fn streams_reach_every_rule() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    use types::{CancelReason as C, Field, RejectReason as R};

    let mut runner = TestRunner::deterministic();
    let strategy = prop::collection::vec(op(), 200..300);
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let insts = instruments();
    for _ in 0..40 {
        let ops = strategy
            .new_tree(&mut runner)
            .expect("strategy makes a value")
            .current();
        let cmds = commands(&ops);
        let mut r = Reference::new(&insts);
        for cmd in &cmds {
            let before = r.clone();
            let mut ev = Vec::new();
            r.apply(cmd, &mut ev);
            let mut note = |k: String| *seen.entry(k).or_default() += 1;
            for e in &ev {
                note(match e {
                    Event::Rejected { reason, .. } => format!("rejected {reason:?}"),
                    Event::Canceled { reason, .. } => format!("canceled {reason:?}"),
                    Event::Replaced { lost_priority, .. } => {
                        format!("replaced lost={lost_priority}")
                    }
                    Event::MassCanceled { count, .. } => format!("mass_canceled >0={}", *count > 0),
                    Event::Level { qty: 0, .. } => "level gone".into(),
                    Event::Trade {
                        maker_account,
                        taker_account,
                        ..
                    } if maker_account == taker_account => "self trade".into(),
                    other => format!("{:?}", std::mem::discriminant(other)),
                });
            }
            // A FOK that traded in full, and an STP cancel of a resting order.
            if let Command::New(o) = cmd {
                if o.tif == TimeInForce::Fok && ev.iter().any(|e| matches!(e, Event::Trade { .. }))
                {
                    note("fok filled".into());
                }
                if ev
                    .iter()
                    .any(|e| matches!(e, Event::Canceled { id, reason: C::Stp, .. } if *id != o.id))
                {
                    note("stp canceled maker".into());
                }
            }
            for k in order_types_ii_notes(cmd, &before, &r, &ev) {
                note(k.into());
            }
            let count = |m: &Reference| -> Vec<usize> {
                (0..3)
                    .flat_map(|s| [Side::Buy, Side::Sell].map(|d| m.resting(s, d).len()))
                    .collect()
            };
            if count(&before) != count(&r) {
                note("book changed".into());
            }
        }
    }
    let need = [
        format!("rejected {:?}", R::DuplicateId),
        format!("rejected {:?}", R::UnknownOrder),
        format!("rejected {:?}", R::PostOnlyWouldCross),
        format!("rejected {:?}", R::AuctionCall),
        format!("rejected {:?}", R::Invalid(Field::Qty)),
        format!("rejected {:?}", R::Invalid(Field::Price)),
        format!("rejected {:?}", R::Invalid(Field::Symbol)),
        format!("rejected {:?}", R::Invalid(Field::StopPrice)),
        format!("rejected {:?}", R::Invalid(Field::DisplayQty)),
        format!("rejected {:?}", R::Invalid(Field::ExpireTime)),
        format!("canceled {:?}", C::User),
        format!("canceled {:?}", C::Ioc),
        format!("canceled {:?}", C::Fok),
        format!("canceled {:?}", C::Stp),
        format!("canceled {:?}", C::NoLiquidity),
        format!("canceled {:?}", C::Expired),
        "replaced lost=true".into(),
        "replaced lost=false".into(),
        "mass_canceled >0=true".into(),
        "level gone".into(),
        "self trade".into(),
        "fok filled".into(),
        "stp canceled maker".into(),
        "stop triggered".into(),
        "stop cascade".into(),
        "several stops triggered by one command".into(),
        "triggered stop rests".into(),
        "stop canceled".into(),
        "stop replaced".into(),
        "stop canceled by a mass cancel or expiry".into(),
        "iceberg refill".into(),
        "iceberg refill in an uncross".into(),
        "gtd expired".into(),
        "crossing order rests in a call".into(),
        "replace loses priority in a call".into(),
        "uncross with volume".into(),
        "uncross triggers stops".into(),
    ];
    let missing: Vec<_> = need.iter().filter(|k| !seen.contains_key(*k)).collect();
    assert!(
        missing.is_empty(),
        "never reached: {missing:?}\nseen: {seen:#?}"
    );
}
