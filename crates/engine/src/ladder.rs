//! One side of one book: a price ladder of FIFO levels over a window of ticks.
//!
//! Role: O(1) level lookup by price, O(1) best price, and FIFO queues of resting orders linked
//! through the order slab (`Order::prev`/`next`). A hierarchical bitset of non-empty levels finds
//! the next best price after the best level empties.
//!
//! Layout: the window holds one `u32` per tick (the level's index in a compact slab of
//! non-empty levels, or `NIL`), so a wide, sparse book costs 4 bytes a tick and the levels in
//! use stay together in cache; emptied levels go to a free list and are reused.
//!
//! The window `[base, base + len * tick)` covers every resting price of the side. When a price to
//! rest falls outside, the window re-centres in place (O(width), no allocation) or, if the
//! resting prices span more than half of it, doubles (amortized) up to `levels_max` ticks wide;
//! a price that would need more is refused by the engine beforehand (`CapacityExceeded`). The
//! level slab grows (amortized) only past the previous peak of non-empty levels. Aggressors
//! never need a slot, so their limit price may lie anywhere.
//!
//! Never: matches, emits events, or reads anything but its arguments.
//!
//! Invariants: a window index has a level iff its bit is set iff that level holds at least one
//! order; each level slot is used by at most one window index, and every other slot is on the
//! free list; `qty` and `count` equal the sum and number of the level's orders; `best` is the
//! best set index; `base >= 0` and is a multiple of the tick, so every window index maps to one
//! exact price.

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
    /// `crate::F_*` bits: iceberg, pending stop, stop market.
    pub flags: u8,
}

/// One price level: a FIFO queue of orders and its aggregates. In the free list, `head` links
/// to the next free level.
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
    /// The window: per tick, the index of its level in `levels`, or `NIL`. Four bytes a tick,
    /// so a wide, sparse book stays cache-resident.
    slots: Vec<u32>,
    /// Non-empty levels, compact (a free list through `head` reuses emptied ones).
    levels: Vec<Level>,
    free_level: u32,
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
            slots: vec![NIL; len],
            levels: Vec::with_capacity(len),
            free_level: NIL,
            bits: BitSet::new(len),
            best: NONE,
            levels_max: levels_max.max(len).next_power_of_two(),
        }
    }

    /// The level at window index `idx` (an empty one if none rests there).
    #[inline]
    pub(crate) fn level(&self, idx: usize) -> Level {
        match self.slots[idx] {
            NIL => Level::EMPTY,
            l => self.levels[l as usize],
        }
    }

    /// First order of the level at `idx` (`NIL` if none).
    #[inline]
    pub(crate) fn head(&self, idx: usize) -> u32 {
        match self.slots[idx] {
            NIL => NIL,
            l => self.levels[l as usize].head,
        }
    }

    /// Takes `qty` off the aggregate of the (non-empty) level at `idx`.
    #[inline]
    pub(crate) fn sub_qty(&mut self, idx: usize, qty: QtyLots) {
        let l = self.slots[idx];
        self.levels[l as usize].qty -= qty;
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
        if i < self.slots.len() as u64 {
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
        let hi = self.bits.prev_le(self.slots.len() - 1)?;
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
        let mut len = self.slots.len();
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
            if len != self.slots.len() {
                self.slots = vec![NIL; len];
                self.bits = BitSet::new(len);
            }
            self.base = base;
        } else if len == self.slots.len() {
            // Same width: shift the window in place (no allocation), then rebuild the bitset.
            let shift = (base as i128 - self.base as i128) / tick;
            let n = len as i128;
            if shift > 0 {
                let k = shift.min(n) as usize;
                self.slots.copy_within(k.., 0);
                self.slots[len - k..].fill(NIL);
            } else {
                let k = (-shift).min(n) as usize;
                self.slots.copy_within(..len - k, k);
                self.slots[..k].fill(NIL);
            }
            self.bits.clear_all();
            for (i, l) in self.slots.iter().enumerate() {
                if *l != NIL {
                    self.bits.set(i);
                }
            }
            let best_price = self.price_of(self.best);
            self.base = base;
            self.best = ((best_price as i128 - base as i128) / tick) as usize;
        } else {
            let mut slots = vec![NIL; len];
            let mut bits = BitSet::new(len);
            let mut i = self.bits.next_ge(0);
            while let Some(old) = i {
                let p = self.price_of(old);
                let new = ((p as i128 - base as i128) / tick) as usize;
                slots[new] = self.slots[old];
                bits.set(new);
                i = self.bits.next_ge(old + 1);
            }
            let best_price = self.price_of(self.best);
            self.slots = slots;
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
        let mut l = self.slots[idx];
        if l == NIL {
            l = if self.free_level != NIL {
                let l = self.free_level;
                self.free_level = self.levels[l as usize].head;
                self.levels[l as usize] = Level::EMPTY;
                l
            } else {
                // Amortized growth past the previous peak of non-empty levels.
                self.levels.push(Level::EMPTY);
                (self.levels.len() - 1) as u32
            };
            self.slots[idx] = l;
            self.bits.set(idx);
            if self.best == NONE || self.better(idx, self.best) {
                self.best = idx;
            }
        }
        let lvl = &mut self.levels[l as usize];
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
        let l = self.slots[idx];
        let lvl = &mut self.levels[l as usize];
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
            lvl.head = self.free_level;
            self.free_level = l;
            self.slots[idx] = NIL;
            self.remove_level(idx);
        }
    }

    /// Marks the (now empty) level at `idx` gone and finds the next best if it was the best.
    #[inline]
    pub(crate) fn remove_level(&mut self, idx: usize) {
        debug_assert!(self.slots[idx] == NIL);
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

    /// Checks the bitset, best pointer, window and level slab against each other (tests,
    /// restore).
    pub(crate) fn check(&self) -> Result<(), String> {
        let mut best: Option<usize> = None;
        let mut used = vec![false; self.levels.len()];
        let mut n_used = 0usize;
        for (i, &slot) in self.slots.iter().enumerate() {
            let set = self.bits.get(i);
            if set != (slot != NIL) {
                return Err(format!(
                    "{:?} level {i}: bitset {set}, slot {slot}",
                    self.side
                ));
            }
            if slot == NIL {
                continue;
            }
            let Some(l) = self.levels.get(slot as usize) else {
                return Err(format!(
                    "{:?} level {i}: slot {slot} out of range",
                    self.side
                ));
            };
            if std::mem::replace(&mut used[slot as usize], true) {
                return Err(format!("{:?}: level slot {slot} used twice", self.side));
            }
            n_used += 1;
            if l.count == 0 || l.head == NIL || l.tail == NIL {
                return Err(format!("{:?} level {i}: empty but present", self.side));
            }
            if best.is_none_or(|b| self.better(i, b)) {
                best = Some(i);
            }
        }
        let mut free = 0usize;
        let mut f = self.free_level;
        while f != NIL {
            if used.get(f as usize).copied().unwrap_or(true) {
                return Err(format!(
                    "{:?}: free level {f} in use or out of range",
                    self.side
                ));
            }
            free += 1;
            if free > self.levels.len() {
                return Err(format!("{:?}: level free list has a cycle", self.side));
            }
            f = self.levels[f as usize].head;
        }
        if free + n_used != self.levels.len() {
            return Err(format!(
                "{:?}: {n_used} levels in use + {free} free != {}",
                self.side,
                self.levels.len()
            ));
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
