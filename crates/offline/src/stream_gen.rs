//! Seeded generator of a realistic mixed command stream for `rialto bench engine`.
//!
//! Role: produces, before anything is timed, a `Vec<Command>` with about 58% new orders (some
//! IOC, FOK, market, post-only and DAY), 32% cancels of live orders and 10% replaces of live
//! orders, with limit prices spread around a per-symbol mid like a normal distribution, so that
//! several thousand orders rest on several books.
//!
//! To cancel and replace only orders that are really live, the generator runs every command
//! through a `Matcher` as it generates it and follows the events (accepted orders are live until
//! a cancel or a fill with zero leaves).
//!
//! Never: floats, clocks or OS randomness: the stream is a pure function of the config and of
//! the matcher's semantics, on every platform. The normal distribution is the Irwin-Hall sum of
//! twelve 16-bit uniforms (integer arithmetic only).

use crate::symbols::SymbolTable;
use std::collections::HashMap;
use types::{
    AccountId, Command, Event, Matcher, NewOrder, OrdType, OrderId, PriceTicks, QtyLots, Side,
    StpMode, Symbol, SymbolId, TimeInForce,
};

/// The seeded generator (shared with the load generator's bots; integer-only normal). The
/// published `rialto bench engine` hashes depend on its sequence.
pub use types::SplitMix64;

/// What to generate.
#[derive(Clone, Debug)]
pub struct GenConfig {
    pub seed: u64,
    /// Number of commands.
    pub ops: usize,
    /// Number of instruments (books), named `SYM0`, `SYM1`, ...
    pub symbols: u32,
    /// Number of accounts placing orders (ids 1..=accounts).
    pub accounts: u32,
    /// The live-order count the generator steers towards: above it, more new orders cross.
    pub resting_target: usize,
    /// Mid price of the first symbol (each next symbol's is 1000 higher).
    pub mid: PriceTicks,
    /// Standard deviation of limit prices around the mid, in ticks.
    pub sd_ticks: i64,
}

impl Default for GenConfig {
    fn default() -> Self {
        GenConfig {
            seed: 1,
            ops: 1_000_000,
            symbols: 8,
            accounts: 64,
            resting_target: 5_000,
            mid: 10_000,
            sd_ticks: 20,
        }
    }
}

/// Counts of what was generated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Mix {
    pub new: u64,
    pub new_ioc: u64,
    pub new_fok: u64,
    pub new_market: u64,
    pub new_post_only: u64,
    pub new_day: u64,
    pub cancel: u64,
    pub replace: u64,
    /// Orders resting after the whole stream.
    pub resting_at_end: u64,
    /// Largest number of resting orders seen.
    pub resting_max: u64,
    pub trades: u64,
}

/// The instruments of a generated stream: `symbols` books with tick 1 and lot 1.
pub fn symbol_table(cfg: &GenConfig) -> SymbolTable {
    let mut t = SymbolTable::new();
    for i in 0..cfg.symbols {
        let name = format!("SYM{i}");
        let symbol = Symbol::new(&name).expect("SYMn is a valid symbol");
        t.insert_with_grid(symbol, 1, 1)
            .expect("symbol count checked by the caller");
    }
    t
}

#[derive(Clone, Copy, Debug)]
struct Live {
    id: OrderId,
    account: AccountId,
    symbol: SymbolId,
    price: PriceTicks,
    qty: QtyLots,
}

/// The set of live orders, with O(1) insert, remove and uniform pick.
#[derive(Default)]
struct LiveSet {
    orders: Vec<Live>,
    index: HashMap<OrderId, usize>,
}

impl LiveSet {
    fn insert(&mut self, o: Live) {
        self.index.insert(o.id, self.orders.len());
        self.orders.push(o);
    }
    fn remove(&mut self, id: OrderId) {
        if let Some(i) = self.index.remove(&id) {
            self.orders.swap_remove(i);
            if let Some(moved) = self.orders.get(i) {
                self.index.insert(moved.id, i);
            }
        }
    }
    fn get_mut(&mut self, id: OrderId) -> Option<&mut Live> {
        let i = *self.index.get(&id)?;
        self.orders.get_mut(i)
    }
    fn follow(&mut self, event: &Event, mix: &mut Mix) {
        match *event {
            Event::Accepted {
                id,
                account,
                symbol,
                price,
                qty,
                ..
            } => self.insert(Live {
                id,
                account,
                symbol,
                price,
                qty,
            }),
            Event::Trade {
                maker_id,
                taker_id,
                maker_leaves,
                taker_leaves,
                ..
            } => {
                mix.trades += 1;
                for (id, leaves) in [(maker_id, maker_leaves), (taker_id, taker_leaves)] {
                    if leaves == 0 {
                        self.remove(id);
                    } else if let Some(o) = self.get_mut(id) {
                        o.qty = leaves;
                    }
                }
            }
            Event::Canceled { id, .. } => self.remove(id),
            Event::Replaced { id, price, qty, .. } => {
                if let Some(o) = self.get_mut(id) {
                    o.price = price;
                    o.qty = qty;
                }
            }
            Event::Rejected { .. }
            | Event::MassCanceled { .. }
            | Event::Level { .. }
            | Event::Triggered { .. }
            | Event::Uncrossed { .. } => {}
        }
    }
}

/// Generates `cfg.ops` commands, applying each to `matcher` (built on `symbol_table(cfg)`) to
/// follow which orders are live.
pub fn generate<M: Matcher>(cfg: &GenConfig, matcher: &mut M) -> (Vec<Command>, Mix) {
    let mut rng = SplitMix64::new(cfg.seed);
    let symbols = u64::from(cfg.symbols.max(1));
    let accounts = u64::from(cfg.accounts.max(1));
    let sd = cfg.sd_ticks.max(1);
    let mut mids: Vec<PriceTicks> = (0..symbols as i64).map(|i| cfg.mid + 1000 * i).collect();
    let mut live = LiveSet::default();
    let mut mix = Mix::default();
    let mut commands = Vec::with_capacity(cfg.ops);
    let mut events: Vec<Event> = Vec::with_capacity(64);
    let mut next_id: OrderId = 1;

    for _ in 0..cfg.ops {
        let roll = rng.below(100);
        let cmd = if roll < 58 || live.orders.is_empty() {
            mix.new += 1;
            let symbol = rng.below(symbols) as SymbolId;
            // The mid wanders by a tick now and then, so books drift like real ones.
            let mid = &mut mids[symbol as usize];
            match rng.below(64) {
                0 => *mid += 1,
                1 if *mid > 4 * sd + 1 => *mid -= 1,
                _ => {}
            }
            let mid = *mid;
            let side = if rng.below(2) == 0 {
                Side::Buy
            } else {
                Side::Sell
            };
            let toward_other_side = |p: i64| match side {
                Side::Buy => mid + p,
                Side::Sell => mid - p,
            };
            let kind = rng.below(100);
            // Resting orders sit at or behind the mid; while the books hold more than the
            // target, GTC orders spread around the mid instead, so about half of them cross
            // and the resting count stays near the target.
            let passive = toward_other_side(-rng.normal(sd).abs());
            let behind = toward_other_side(-1 - rng.normal(sd).abs());
            let aggressive = toward_other_side(rng.normal(sd / 2).abs());
            let gtc = if live.orders.len() > cfg.resting_target {
                toward_other_side(rng.normal(sd / 2))
            } else {
                passive
            };
            let (ord_type, tif, post_only, price) = match kind {
                0..=2 => (OrdType::Market, TimeInForce::Ioc, false, 0),
                3..=10 => (OrdType::Limit, TimeInForce::Ioc, false, aggressive),
                11..=12 => (OrdType::Limit, TimeInForce::Fok, false, aggressive),
                13..=17 => (OrdType::Limit, TimeInForce::Gtc, true, behind),
                18..=27 => (OrdType::Limit, TimeInForce::Day, false, passive),
                _ => (OrdType::Limit, TimeInForce::Gtc, false, gtc),
            };
            match (ord_type, tif, post_only) {
                (OrdType::Market, ..) => mix.new_market += 1,
                (_, TimeInForce::Ioc, _) => mix.new_ioc += 1,
                (_, TimeInForce::Fok, _) => mix.new_fok += 1,
                (_, _, true) => mix.new_post_only += 1,
                (_, TimeInForce::Day, _) => mix.new_day += 1,
                _ => {}
            }
            let id = next_id;
            next_id += 1;
            Command::New(NewOrder {
                id,
                account: (1 + rng.below(accounts)) as AccountId,
                symbol,
                side,
                ord_type,
                tif,
                price: if ord_type == OrdType::Market {
                    0
                } else {
                    price.max(1)
                },
                qty: 1 + rng.below(100),
                post_only,
                stp: StpMode::default(),
                ..Default::default()
            })
        } else {
            let pick = live.orders[rng.below(live.orders.len() as u64) as usize];
            if roll < 90 {
                mix.cancel += 1;
                Command::Cancel {
                    id: pick.id,
                    account: pick.account,
                    symbol: pick.symbol,
                }
            } else {
                mix.replace += 1;
                let (price, qty) = match rng.below(10) {
                    // Smaller quantity at the same price: keeps priority.
                    0..=4 => (pick.price, pick.qty - rng.below(pick.qty)),
                    // Price moves by up to three ticks either way: loses priority.
                    5..=7 => {
                        let step = 1 + rng.below(3) as i64;
                        let up = rng.below(2) == 0;
                        let p = if up {
                            pick.price + step
                        } else {
                            pick.price - step
                        };
                        (p.max(1), pick.qty)
                    }
                    // Larger quantity: loses priority.
                    _ => (pick.price, pick.qty + 1 + rng.below(50)),
                };
                Command::Replace {
                    id: pick.id,
                    account: pick.account,
                    symbol: pick.symbol,
                    price,
                    qty,
                }
            }
        };
        events.clear();
        matcher.apply(&cmd, &mut events);
        for e in &events {
            live.follow(e, &mut mix);
        }
        mix.resting_max = mix.resting_max.max(live.orders.len() as u64);
        commands.push(cmd);
    }
    mix.resting_at_end = live.orders.len() as u64;
    (commands, mix)
}

#[cfg(test)]
mod tests;
