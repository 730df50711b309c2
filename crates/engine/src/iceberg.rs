//! Icebergs' hidden quantity by price level, kept beside the ladders (whose aggregates count
//! only shown quantity, as market data does) so that an auction's volume at a price costs one
//! lookup per level, not a walk over its orders.
//!
//! Invariant (checked by `check_invariants`): an entry is the sum of the hidden quantity of the
//! resting icebergs at that symbol, side and price, and no entry is zero.

use std::collections::BTreeMap;

use types::{PriceTicks, QtyLots, Side, SymbolId};

#[derive(Clone, Debug, Default)]
pub(crate) struct HiddenLevels(BTreeMap<(SymbolId, u8, PriceTicks), QtyLots>);

fn key(symbol: SymbolId, side: Side, price: PriceTicks) -> (SymbolId, u8, PriceTicks) {
    (symbol, crate::side_ix(side) as u8, price)
}

impl HiddenLevels {
    pub(crate) fn add(&mut self, symbol: SymbolId, side: Side, price: PriceTicks, qty: QtyLots) {
        if qty > 0 {
            *self.0.entry(key(symbol, side, price)).or_insert(0) += qty;
        }
    }

    pub(crate) fn sub(&mut self, symbol: SymbolId, side: Side, price: PriceTicks, qty: QtyLots) {
        if qty == 0 {
            return;
        }
        let k = key(symbol, side, price);
        let left = self
            .0
            .get_mut(&k)
            .expect("engine: hidden quantity at its level");
        *left -= qty;
        if *left == 0 {
            self.0.remove(&k);
        }
    }

    pub(crate) fn get(&self, symbol: SymbolId, side: Side, price: PriceTicks) -> QtyLots {
        self.0.get(&key(symbol, side, price)).copied().unwrap_or(0)
    }

    /// Every entry: `((symbol, side index, price), hidden)`.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&(SymbolId, u8, PriceTicks), &QtyLots)> {
        self.0.iter()
    }
}
