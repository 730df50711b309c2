//! One side of one book: a dense price ladder of FIFO levels over a window of ticks.
//!
//! Role: O(1) level lookup by price, O(1) best price, and FIFO queues of resting orders linked
//! through the order slab (`Order::prev`/`next`). A hierarchical bitset of non-empty levels finds
//! the next best price after the best level empties.
//!
//! The window `[base, base + len * tick)` covers every resting price of the side. When a price to
//! rest falls outside, the window re-centres in place (O(width), no allocation) or, if the
//! resting prices span more than half of it, doubles (amortized, the only allocation here) up
//! to `levels_max` ticks wide; a price that would need more is refused by the engine beforehand
//! (`CapacityExceeded`). Aggressors never need a slot, so their limit price may lie anywhere.
//!
//! Never: matches, emits events, or reads anything but its arguments.
//!
//! Invariants: a level is in the bitset iff it holds at least one order; `qty` and `count` equal
//! the sum and number of its orders; `best` is the best set index; `base >= 0` and is a multiple
//! of the tick, so every window index maps to one exact price.

use crate::bitset::BitSet;
use types::{AccountId, OrderId, PriceTicks, QtyLots, Side, StpMode, SymbolId, TimeInForce};

/// "No slot" in the intrusive lists.
pub(crate) const NIL: u32 = u32::MAX;

/// A slab record: one resting order (or a free slot, linked through `next`). Aligned to a
/// cache line so that touching an order costs one line, not two.
#[derive(Clone, Copy, Debug)]
#[repr(align(64))]
pub(crate) struct Order {
    pub id: OrderId,
    pub price: PriceTicks,
    pub qty: QtyLots,
    pub orig_qty: QtyLots,
    /// Arrival sequence at this price (strictly increasing along a level's queue).
    pub seq: u64,
    pub prev: u32,
    pub next: u32,
    pub account: AccountId,
    pub symbol: SymbolId,
    pub side: Side,
    pub tif: TimeInForce,
    pub post_only: bool,
    pub stp: StpMode,
}

/// One price level: a FIFO queue of orders and its aggregates.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Level {
    pub qty: QtyLots,
    pub head: u32,
    pub tail: u32,
    pub count: u32,
}

impl Level {
    const EMPTY: Level = Level {
        qty: 0,
        head: NIL,
        tail: NIL,
        count: 0,
    };
}

#[derive(Clone, Debug)]
pub(crate) struct Ladder {
    pub side: Side,
    tick: PriceTicks,
    base: PriceTicks,
    pub levels: Vec<Level>,
    bits: BitSet,
    /// Best non-empty level index, or `usize::MAX`.
    best: usize,
    levels_max: usize,
}

const NONE: usize = usize::MAX;

impl Ladder {
    pub(crate) fn new(side: Side, tick: PriceTicks, len: usize, levels_max: usize) -> Ladder {
        let len = len.clamp(64, levels_max.max(64)).next_power_of_two();
        Ladder {
            side,
            tick,
            base: 0,
            levels: vec![Level::EMPTY; len],
            bits: BitSet::new(len),
            best: NONE,
            levels_max: levels_max.max(len).next_power_of_two(),
        }
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.best == NONE
    }

    #[inline]
    pub(crate) fn best_idx(&self) -> Option<usize> {
        if self.best == NONE {
            None
        } else {
            Some(self.best)
        }
    }

    #[inline]
    pub(crate) fn price_of(&self, idx: usize) -> PriceTicks {
        if self.tick == 1 {
            self.base + idx as PriceTicks
        } else {
            self.base + idx as PriceTicks * self.tick
        }
    }

    /// The window index of `price`, if the window covers it.
    #[inline]
    pub(crate) fn idx_of(&self, price: PriceTicks) -> Option<usize> {
        let d = price.checked_sub(self.base)?;
        if d < 0 {
            return None;
        }
        let i = if self.tick == 1 {
            d as u64
        } else {
            if d % self.tick != 0 {
                return None;
            }
            (d / self.tick) as u64
        };
        if i < self.levels.len() as u64 {
            Some(i as usize)
        } else {
            None
        }
    }

    /// The next level after `idx` going away from the best price.
    #[inline]
    pub(crate) fn next_worse(&self, idx: usize) -> Option<usize> {
        match self.side {
            Side::Buy => {
                if idx == 0 {
                    None
                } else {
                    self.bits.prev_le(idx - 1)
                }
            }
            Side::Sell => self.bits.next_ge(idx + 1),
        }
    }

    /// True if `a` is a better price index than `b` for this side.
    #[inline]
    fn better(&self, a: usize, b: usize) -> bool {
        match self.side {
            Side::Buy => a > b,
            Side::Sell => a < b,
        }
    }

    /// Lowest and highest non-empty price, if any.
    fn price_range(&self) -> Option<(PriceTicks, PriceTicks)> {
        let lo = self.bits.next_ge(0)?;
        let hi = self.bits.prev_le(self.levels.len() - 1)?;
        Some((self.price_of(lo), self.price_of(hi)))
    }

    /// Whether `price` (positive, on the tick grid) can rest on this side without the window
    /// exceeding `levels_max` ticks.
    pub(crate) fn can_hold(&self, price: PriceTicks) -> bool {
        if self.idx_of(price).is_some() {
            return true;
        }
        match self.price_range() {
            None => true,
            Some((lo, hi)) => {
                let lo = lo.min(price) as i128;
                let hi = hi.max(price) as i128;
                (hi - lo) / (self.tick as i128) < self.levels_max as i128
            }
        }
    }

    /// Makes the window cover `price` (the caller checked `can_hold`); returns its index.
    pub(crate) fn ensure(&mut self, price: PriceTicks) -> usize {
        if let Some(i) = self.idx_of(price) {
            return i;
        }
        let tick = self.tick as i128;
        let (lo, hi) = match self.price_range() {
            None => (price, price),
            Some((lo, hi)) => (lo.min(price), hi.max(price)),
        };
        let span = ((hi as i128 - lo as i128) / tick + 1) as usize;
        let mut len = self.levels.len();
        while len < span.saturating_mul(2) && len < self.levels_max {
            len *= 2;
        }
        assert!(
            len >= span,
            "ladder: price outside capacity (caller must check can_hold)"
        );
        // Centre the occupied span in the new window, keeping base >= 0 and on the grid.
        let slack = (len - span) as i128 / 2;
        let base = (lo as i128 - slack * tick).max(0);
        let base = base - base % tick;
        let base = base as PriceTicks;
        if self.is_empty() {
            if len != self.levels.len() {
                self.levels = vec![Level::EMPTY; len];
                self.bits = BitSet::new(len);
            }
            self.base = base;
        } else if len == self.levels.len() {
            // Same width: shift the levels in place (no allocation), then rebuild the bitset.
            let shift = (base as i128 - self.base as i128) / tick;
            let n = len as i128;
            if shift > 0 {
                let k = shift.min(n) as usize;
                self.levels.copy_within(k.., 0);
                self.levels[len - k..].fill(Level::EMPTY);
            } else {
                let k = (-shift).min(n) as usize;
                self.levels.copy_within(..len - k, k);
                self.levels[..k].fill(Level::EMPTY);
            }
            self.bits.clear_all();
            for (i, l) in self.levels.iter().enumerate() {
                if l.count > 0 {
                    self.bits.set(i);
                }
            }
            let best_price = self.price_of(self.best);
            self.base = base;
            self.best = ((best_price as i128 - base as i128) / tick) as usize;
        } else {
            let mut levels = vec![Level::EMPTY; len];
            let mut bits = BitSet::new(len);
            let mut i = self.bits.next_ge(0);
            while let Some(old) = i {
                let p = self.price_of(old);
                let new = ((p as i128 - base as i128) / tick) as usize;
                levels[new] = self.levels[old];
                bits.set(new);
                i = self.bits.next_ge(old + 1);
            }
            let best_price = self.price_of(self.best);
            self.levels = levels;
            self.bits = bits;
            self.base = base;
            self.best = ((best_price as i128 - base as i128) / tick) as usize;
        }
        self.idx_of(price)
            .expect("ladder: window covers the price after ensure")
    }

    /// Appends `slot` to the back of the level at `idx`.
    #[inline]
    pub(crate) fn push_back(&mut self, orders: &mut [Order], idx: usize, slot: u32) {
        if self.levels[idx].tail == NIL {
            self.bits.set(idx);
            if self.best == NONE || self.better(idx, self.best) {
                self.best = idx;
            }
        }
        let lvl = &mut self.levels[idx];
        let qty = orders[slot as usize].qty;
        {
            let o = &mut orders[slot as usize];
            o.prev = lvl.tail;
            o.next = NIL;
        }
        if lvl.tail == NIL {
            lvl.head = slot;
        } else {
            orders[lvl.tail as usize].next = slot;
        }
        lvl.tail = slot;
        lvl.count += 1;
        lvl.qty += qty;
    }

    /// Unlinks `slot` (with remaining `qty` still counted in the level) from the level at
    /// `idx`; removes the level when it empties.
    #[inline]
    pub(crate) fn unlink(&mut self, orders: &mut [Order], idx: usize, slot: u32) {
        let (prev, next, qty) = {
            let o = &orders[slot as usize];
            (o.prev, o.next, o.qty)
        };
        let lvl = &mut self.levels[idx];
        if prev == NIL {
            lvl.head = next;
        } else {
            orders[prev as usize].next = next;
        }
        if next == NIL {
            lvl.tail = prev;
        } else {
            orders[next as usize].prev = prev;
        }
        lvl.count -= 1;
        lvl.qty -= qty;
        if lvl.count == 0 {
            self.remove_level(idx);
        }
    }

    /// Marks the (now empty) level at `idx` gone and finds the next best if it was the best.
    #[inline]
    pub(crate) fn remove_level(&mut self, idx: usize) {
        debug_assert!(self.levels[idx].count == 0 && self.levels[idx].head == NIL);
        self.levels[idx].qty = 0;
        self.bits.clear(idx);
        if idx == self.best {
            self.best = match self.next_worse(idx) {
                Some(i) => i,
                None => NONE,
            };
        }
    }

    /// Non-empty level indices from best to worst.
    pub(crate) fn iter_levels(&self) -> impl Iterator<Item = usize> + '_ {
        let mut cur = self.best_idx();
        std::iter::from_fn(move || {
            let i = cur?;
            cur = self.next_worse(i);
            Some(i)
        })
    }

    /// Checks the bitset, best pointer and window against the levels (tests, restore).
    pub(crate) fn check(&self) -> Result<(), String> {
        let mut best: Option<usize> = None;
        for (i, l) in self.levels.iter().enumerate() {
            let set = self.bits.get(i);
            if set != (l.count > 0) {
                return Err(format!(
                    "{:?} level {i}: bitset {set} count {}",
                    self.side, l.count
                ));
            }
            if (l.count == 0) != (l.head == NIL) || (l.head == NIL) != (l.tail == NIL) {
                return Err(format!(
                    "{:?} level {i}: head/tail/count disagree",
                    self.side
                ));
            }
            if l.count > 0 && best.map_or(true, |b| self.better(i, b)) {
                best = Some(i);
            }
        }
        if best != self.best_idx() {
            return Err(format!(
                "{:?}: best {:?} != {:?}",
                self.side,
                self.best_idx(),
                best
            ));
        }
        if self.base < 0 || self.base % self.tick != 0 {
            return Err(format!("{:?}: base {} off grid", self.side, self.base));
        }
        Ok(())
    }
}
