//! What bots send: the instruments they trade, the `Action`s a generator produces, and the
//! generators of `rialto bench fix` (Ember-like order mix) and `rialto bench echo`.
//!
//! Role: decide the next request of one bot from its seed, its live orders and the market
//! (mid prices). The driver turns an `Action` into FIX bytes.
//!
//! Never: I/O, clocks, floats; a generator's output is a pure function of its seed and of the
//! sequence of `BotOrders` states it is shown (tested: same seed, same stream).
//!
//! Invariants: cancels and replaces name only live slots of the bot itself; a resting order is
//! only sent with a slot (so the active-orders window bounds what a bot keeps in the book).

use crate::orders::{BotOrders, SlotState};
use types::{OrdType, Side, SplitMix64, TimeInForce};

/// One instrument as the bots see it: prices are integer ticks of 10^-`price_decimals`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SymbolSpec {
    pub name: String,
    pub price_decimals: u8,
    /// Price around which orders are generated, in ticks.
    pub mid_ticks: i64,
}

/// The instruments and their current mids (the demo moves them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Market {
    pub symbols: Vec<SymbolSpec>,
}

impl Market {
    /// The default contract of `rialto serve` and the reference exchange: ACME, BOLT, CRNK,
    /// tick 0.01, mids 100.00, 50.00 and 25.00.
    pub fn default_contract() -> Market {
        let s = |name: &str, mid| SymbolSpec {
            name: name.to_string(),
            price_decimals: 2,
            mid_ticks: mid,
        };
        Market {
            symbols: vec![s("ACME", 10_000), s("BOLT", 5_000), s("CRNK", 2_500)],
        }
    }

    /// The named instruments, tick 0.01: the default contract's keep their mids, others trade
    /// around 100.00. Names are 1 to 8 letters or digits, each given once.
    pub fn with_symbols(names: &[String]) -> Result<Market, String> {
        let defaults = Market::default_contract();
        let mut symbols: Vec<SymbolSpec> = Vec::with_capacity(names.len());
        for name in names {
            if name.is_empty() || name.len() > 8 || !name.bytes().all(|b| b.is_ascii_alphanumeric())
            {
                return Err(format!("symbol {name:?}: give 1 to 8 letters or digits"));
            }
            if symbols.iter().any(|s| &s.name == name) {
                return Err(format!("symbol {name:?} is given twice"));
            }
            let mid_ticks = defaults
                .symbols
                .iter()
                .find(|s| &s.name == name)
                .map_or(10_000, |s| s.mid_ticks);
            symbols.push(SymbolSpec {
                name: name.clone(),
                price_decimals: 2,
                mid_ticks,
            });
        }
        if symbols.is_empty() {
            return Err("give at least one symbol".into());
        }
        Ok(Market { symbols })
    }
}

/// The next request of a bot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// A NewOrderSingle. `slot` is 0 for orders that cannot rest (market, IOC).
    New {
        symbol: u16,
        side: Side,
        ord_type: OrdType,
        tif: TimeInForce,
        price_ticks: i64,
        qty: u64,
        slot: u32,
    },
    /// OrderCancelRequest of the live order in `slot`.
    Cancel { slot: u32 },
    /// OrderCancelReplaceRequest of the live order in `slot`.
    Replace {
        slot: u32,
        price_ticks: i64,
        qty: u64,
    },
    /// Nothing this time (the schedule slot passes unused).
    Idle,
}

impl Action {
    /// `N`, `C`, `R` or `-`, for tests and traces.
    pub fn letter(&self) -> char {
        match self {
            Action::New { .. } => 'N',
            Action::Cancel { .. } => 'C',
            Action::Replace { .. } => 'R',
            Action::Idle => '-',
        }
    }
}

/// A request generator for one bot. `orders` is the bot's own window: a generator that
/// returns a resting `New` has taken its slot with `alloc`/`alloc_at`.
pub trait Strategy {
    fn next(&mut self, orders: &mut BotOrders, market: &Market) -> Action;
}

/// Proportions of the bench order mix, in percent.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MixConfig {
    /// Share of requests that cancel a live order (when the bot has one).
    pub cancel_pct: u32,
    /// Share of requests that replace a live order (when the bot has one).
    pub replace_pct: u32,
    /// Share of new orders that are market orders.
    pub market_pct: u32,
    /// Share of new limit orders that are IOC (the rest are DAY and rest).
    pub ioc_pct: u32,
    /// Standard deviation of limit prices around the mid, in ticks.
    pub sd_ticks: i64,
    /// Buys are centred this many ticks below the mid, sells above it.
    pub offset_ticks: i64,
    /// Quantities are uniform in 1..=qty_max.
    pub qty_max: u64,
}

impl Default for MixConfig {
    fn default() -> MixConfig {
        MixConfig {
            cancel_pct: 20,
            replace_pct: 10,
            market_pct: 10,
            ioc_pct: 15,
            sd_ticks: 8,
            offset_ticks: 3,
            qty_max: 100,
        }
    }
}

impl MixConfig {
    pub fn validate(&self) -> Result<(), String> {
        if self.cancel_pct + self.replace_pct > 100 {
            return Err("cancel_pct + replace_pct must be at most 100".into());
        }
        if self.market_pct > 100 || self.ioc_pct > 100 {
            return Err("market_pct and ioc_pct must be at most 100".into());
        }
        if self.sd_ticks < 1 || self.qty_max < 1 {
            return Err("sd_ticks and qty_max must be >= 1".into());
        }
        Ok(())
    }
}

/// The `rialto bench fix` bot: BUY and SELL, MARKET and (mostly) LIMIT orders with prices
/// normally distributed around the mid, some IOC, plus cancels and replaces of its own live
/// orders. When its window is full it cancels instead of adding.
#[derive(Clone, Debug)]
pub struct MixGenerator {
    cfg: MixConfig,
    rng: SplitMix64,
}

impl MixGenerator {
    pub fn new(cfg: MixConfig, seed: u64) -> MixGenerator {
        MixGenerator {
            cfg,
            rng: SplitMix64::new(seed),
        }
    }

    /// A live slot with no request in flight, if any (a few random probes, then a scan).
    fn pick_live(&mut self, orders: &BotOrders) -> Option<u32> {
        let n = orders.live_count();
        if n == 0 {
            return None;
        }
        let start = self.rng.below(n as u64) as usize;
        (0..n)
            .map(|i| orders.live_at((start + i) % n))
            .find(|&s| orders.slot(s).map(|x| x.state) == Some(SlotState::Live))
    }

    fn limit_price(&mut self, mid: i64, side: Side) -> i64 {
        let centre = match side {
            Side::Buy => mid - self.cfg.offset_ticks,
            Side::Sell => mid + self.cfg.offset_ticks,
        };
        (centre + self.rng.normal(self.cfg.sd_ticks)).max(1)
    }
}

impl Strategy for MixGenerator {
    fn next(&mut self, orders: &mut BotOrders, market: &Market) -> Action {
        let roll = self.rng.below(100) as u32;
        let window_full = orders.free_count() == 0;
        if roll < self.cfg.cancel_pct || window_full {
            if let Some(slot) = self.pick_live(orders) {
                return Action::Cancel { slot };
            }
        } else if roll < self.cfg.cancel_pct + self.cfg.replace_pct {
            if let Some(slot) = self.pick_live(orders) {
                let s = *orders.slot(slot).expect("live slot exists");
                let price = (s.price_ticks + self.rng.normal(self.cfg.sd_ticks / 2 + 1)).max(1);
                let qty = 1 + self.rng.below(self.cfg.qty_max);
                return Action::Replace {
                    slot,
                    price_ticks: price,
                    qty,
                };
            }
        }
        let symbol = self.rng.below(market.symbols.len().max(1) as u64) as u16;
        let mid = market
            .symbols
            .get(symbol as usize)
            .map_or(10_000, |s| s.mid_ticks);
        let side = if self.rng.below(2) == 0 {
            Side::Buy
        } else {
            Side::Sell
        };
        let qty = 1 + self.rng.below(self.cfg.qty_max);
        if self.rng.percent(self.cfg.market_pct) {
            return Action::New {
                symbol,
                side,
                ord_type: OrdType::Market,
                tif: TimeInForce::Day,
                price_ticks: 0,
                qty,
                slot: 0,
            };
        }
        let price_ticks = self.limit_price(mid, side);
        // IOC by the mix, or because every slot is taken by orders still in flight.
        let slot = if self.rng.percent(self.cfg.ioc_pct) {
            None
        } else {
            orders.alloc()
        };
        Action::New {
            symbol,
            side,
            ord_type: OrdType::Limit,
            tif: if slot.is_some() {
                TimeInForce::Day
            } else {
                TimeInForce::Ioc
            },
            price_ticks,
            qty,
            slot: slot.unwrap_or(0),
        }
    }
}

/// The echo scenario's client (FIXEdge single-session round trip): only NewOrderSingle, IOC
/// limit orders far from the mid (alternating BUY below and SELL above) that never trade and
/// never rest, so each one is answered by its acknowledgement (then its IOC cancel) and the
/// book stays empty however long the run.
#[derive(Clone, Debug)]
pub struct EchoGenerator {
    rng: SplitMix64,
    n: u64,
    /// Distance from the mid, in ticks.
    pub away_ticks: i64,
}

impl EchoGenerator {
    pub fn new(seed: u64) -> EchoGenerator {
        EchoGenerator {
            rng: SplitMix64::new(seed),
            n: 0,
            away_ticks: 1_000,
        }
    }
}

impl Strategy for EchoGenerator {
    fn next(&mut self, _orders: &mut BotOrders, market: &Market) -> Action {
        self.n += 1;
        let symbol = (self.n % market.symbols.len().max(1) as u64) as u16;
        let mid = market
            .symbols
            .get(symbol as usize)
            .map_or(10_000, |s| s.mid_ticks);
        let (side, price_ticks) = if self.n.is_multiple_of(2) {
            (Side::Buy, (mid - self.away_ticks).max(1))
        } else {
            (Side::Sell, mid + self.away_ticks)
        };
        Action::New {
            symbol,
            side,
            ord_type: OrdType::Limit,
            tif: TimeInForce::Ioc,
            price_ticks,
            qty: 1 + self.rng.below(100),
            slot: 0,
        }
    }
}

#[cfg(test)]
mod tests;
