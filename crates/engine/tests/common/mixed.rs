//! A seeded generator of a realistic mixed command stream (shared by the allocation test and
//! the `bench` example): about 58% new orders (some IOC and market), 32% cancels, 10% replaces,
//! prices normally distributed around a slowly wandering mid, several books, several thousand
//! resting orders. Deterministic for a given seed; floats live only here, never in the engine.

use types::{
    Command, Instrument, NewOrder, OrdType, Side, StpMode, Symbol, TimeInForce, XorShift64Star,
};

pub const SYMBOLS: usize = 4;
/// At most this many ids are remembered for cancels and replaces (so at most this many orders
/// rest); when full, the generator cancels instead of adding.
const POOL_MAX: usize = 12_000;

pub fn instruments() -> Vec<Instrument> {
    ["ACME", "BOLT", "CRAN", "DYNE"]
        .iter()
        .map(|s| Instrument {
            symbol: Symbol::new(s).expect("valid symbol"),
            tick: 1,
            lot: 1,
        })
        .collect()
}

pub struct Mixed {
    rng: XorShift64Star,
    next_id: u64,
    mid: [i64; SYMBOLS],
    /// Ids of limit orders that may still rest (some were filled meanwhile), with their symbol.
    pool: Vec<(u64, u32, u32)>,
}

impl Mixed {
    pub fn new(seed: u64) -> Mixed {
        Mixed {
            rng: XorShift64Star::new(seed | 1),
            next_id: 1,
            mid: [10_000; SYMBOLS],
            pool: Vec::with_capacity(16_384),
        }
    }

    fn u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    fn below(&mut self, n: u64) -> u64 {
        ((self.u64() >> 32) * n) >> 32
    }

    fn normal(&mut self) -> f64 {
        let u1 = ((self.u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let u2 = (self.u64() >> 11) as f64 / (1u64 << 53) as f64;
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    fn price(&mut self, symbol: usize, side: Side) -> i64 {
        // Passive-leaning: most orders rest a few ticks behind the mid, some cross it.
        let off = (self.normal() * 12.0).round() as i64 + 3;
        let p = match side {
            Side::Buy => self.mid[symbol] - off,
            Side::Sell => self.mid[symbol] + off,
        };
        p.max(1)
    }

    pub fn next_command(&mut self) -> Command {
        let symbol = self.below(SYMBOLS as u64) as usize;
        if self.below(64) == 0 {
            // Slow bounded random walk of the mid.
            let step = if self.below(2) == 0 { -1 } else { 1 };
            self.mid[symbol] = (self.mid[symbol] + step).clamp(9_000, 11_000);
        }
        let account = 1 + self.below(50) as u32;
        let roll = self.below(100);
        let pool_full = self.pool.len() >= POOL_MAX;
        if (roll < 58 && !pool_full) || self.pool.is_empty() {
            let side = if self.below(2) == 0 {
                Side::Buy
            } else {
                Side::Sell
            };
            let kind = self.below(100);
            let (ord_type, tif) = match kind {
                0..=4 => (OrdType::Market, TimeInForce::Ioc),
                5..=14 => (OrdType::Limit, TimeInForce::Ioc),
                15..=16 => (OrdType::Limit, TimeInForce::Fok),
                17..=26 => (OrdType::Limit, TimeInForce::Day),
                _ => (OrdType::Limit, TimeInForce::Gtc),
            };
            let id = self.next_id;
            self.next_id += 1;
            let price = self.price(symbol, side);
            let qty = 1 + self.below(100);
            let stp = match self.below(10) {
                0 => StpMode::CancelOldest,
                1 => StpMode::CancelBoth,
                2 => StpMode::None,
                _ => StpMode::CancelNewest,
            };
            if ord_type == OrdType::Limit && matches!(tif, TimeInForce::Gtc | TimeInForce::Day) {
                self.pool.push((id, account, symbol as u32));
            }
            Command::New(NewOrder {
                id,
                account,
                symbol: symbol as u32,
                side,
                ord_type,
                tif,
                price: if ord_type == OrdType::Market {
                    0
                } else {
                    price
                },
                qty,
                post_only: self.below(20) == 0,
                stp,
                ..Default::default()
            })
        } else if roll < 90 || pool_full {
            let i = self.below(self.pool.len() as u64) as usize;
            let (id, account, symbol) = self.pool.swap_remove(i);
            Command::Cancel {
                id,
                account,
                symbol,
            }
        } else {
            let i = self.below(self.pool.len() as u64) as usize;
            let (id, account, symbol) = self.pool[i];
            let side = if self.below(2) == 0 {
                Side::Buy
            } else {
                Side::Sell
            };
            let price = self.price(symbol as usize, side);
            Command::Replace {
                id,
                account,
                symbol,
                price,
                qty: 1 + self.below(100),
            }
        }
    }
}
