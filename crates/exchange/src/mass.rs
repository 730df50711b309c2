//! Mass cancels applied in chunks: what is left of each one still pending.
//!
//! Role: a mass cancel of any size costs each input a bounded amount of work. Applying
//! `Input::MassCancel` lists the orders it covers (live, of the firm's accounts, on the symbol
//! and side asked, in order id order), cancels at most `Config::mass_cancel_chunk` of them and
//! keeps the rest here; each `Input::Continue` takes one more chunk of every pending mass
//! cancel, oldest request first. The last chunk ends with `Output::MassCanceled` and the total.
//!
//! Never: cancels an order entered after the request (the list is fixed when it is applied);
//! cancels an order that is no longer live (one filled, canceled or expired meanwhile is
//! skipped, and not counted); iterates a hash table into the list unsorted.
//!
//! Invariants: a pending mass cancel's `ids` is strictly increasing and `next < ids.len()`
//! (a finished one has given its list back, empty); the pending list is part
//! of the snapshot and the state hash, so a replay or a restore continues exactly where the
//! live run was.

use crate::orders::Orders;
use crate::snap::{SnapReader, SnapWriter};
use crate::{ClOrdId, OrderId, Principal};
use types::{AccountId, Side, SymbolId};

/// Finished requests' order lists kept for reuse at most, and the largest kept (a list of a
/// huge mass cancel is freed: it is allocated once per such request).
const SPARE_LISTS: usize = 4;
const SPARE_LIST_MAX: usize = 1 << 16;

/// What mass cancels reuse, so that one in steady state allocates nothing.
#[derive(Clone, Default)]
pub(crate) struct Scratch {
    /// The live order ids by slab slot (0: none).
    by_slot: Vec<OrderId>,
    spare: Vec<Vec<OrderId>>,
}

impl Scratch {
    /// An empty order list (a reused one if there is one).
    pub(crate) fn take_list(&mut self) -> Vec<OrderId> {
        self.spare.pop().unwrap_or_default()
    }

    /// A finished request's list, for reuse.
    pub(crate) fn give_list(&mut self, mut ids: Vec<OrderId>) {
        if self.spare.len() < SPARE_LISTS && ids.capacity() <= SPARE_LIST_MAX {
            ids.clear();
            self.spare.push(ids);
        }
    }

    /// Appends the live orders of `accounts` (on `symbol` and `side`, if given) to `ids`,
    /// ascending. The slab is read in slot order (streaming) rather than in the live table's
    /// (at random: a cache miss per order), and a long list is sorted by radix; the live
    /// table's order depends on its history, so sorted, the list is the same in every replica.
    pub(crate) fn collect(
        &mut self,
        orders: &Orders,
        accounts: &[AccountId],
        symbol: Option<SymbolId>,
        side: Option<Side>,
        ids: &mut Vec<OrderId>,
    ) {
        self.by_slot.clear();
        self.by_slot.resize(orders.slab.len(), 0);
        for (id, slot) in orders.live.iter() {
            self.by_slot[slot as usize] = id;
        }
        ids.extend(
            orders
                .slab
                .iter()
                .zip(&self.by_slot)
                .filter(|&(o, &id)| {
                    // Order ids start at 1: 0 is a slot no live order holds.
                    id != 0
                        && o.is_live()
                        && symbol.is_none_or(|s| s == o.symbol)
                        && side.is_none_or(|s| s == o.side)
                        && accounts.contains(&o.account)
                })
                .map(|(_, &id)| id),
        );
        sort_ids(ids);
    }
}

/// Sorts order ids ascending: a least-significant-digit radix sort of 11-bit digits over the
/// bits the largest id uses (three passes up to 8 billion ids), where a comparison sort of a
/// million ids took longer than collecting them. Short lists are sorted as usual.
pub(crate) fn sort_ids(v: &mut Vec<OrderId>) {
    const BITS: u32 = 11;
    const DIGITS: usize = 1 << BITS;
    if v.len() < 4 * DIGITS {
        v.sort_unstable();
        return;
    }
    let max = v.iter().copied().max().unwrap_or(0);
    let bits = u64::BITS - max.leading_zeros();
    let mut tmp: Vec<OrderId> = vec![0; v.len()];
    let mut shift = 0;
    while shift < bits {
        let digit = |x: OrderId| (x >> shift) as usize & (DIGITS - 1);
        let mut at = [0usize; DIGITS];
        for &x in v.iter() {
            at[digit(x)] += 1;
        }
        let mut sum = 0;
        for a in at.iter_mut() {
            let n = *a;
            *a = sum;
            sum += n;
        }
        for &x in v.iter() {
            let d = digit(x);
            tmp[at[d]] = x;
            at[d] += 1;
        }
        std::mem::swap(v, &mut tmp);
        shift += BITS;
    }
}

/// One mass cancel with orders left to cancel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PendingMass {
    pub(crate) who: Principal,
    pub(crate) cl_ord_id: ClOrdId,
    pub(crate) symbol: Option<SymbolId>,
    pub(crate) side: Option<Side>,
    /// The sequence number of the request's input.
    pub(crate) request_seq: u64,
    /// The orders it covers, ascending; those before `next` are done.
    pub(crate) ids: Vec<OrderId>,
    pub(crate) next: usize,
    /// Orders canceled so far.
    pub(crate) count: u64,
}

impl PendingMass {
    /// The snapshot of what is left: the request, the count so far, and the remaining ids as
    /// differences (small numbers: few bytes each).
    pub(crate) fn snapshot(&self, e: &mut SnapWriter<'_>) {
        e.u64(u64::from(self.who.originator));
        e.u64(u64::from(self.who.firm));
        e.bytes(self.cl_ord_id.as_bytes());
        e.u64(self.symbol.map_or(0, |s| u64::from(s) + 1));
        e.u64(match self.side {
            None => 0,
            Some(Side::Buy) => 1,
            Some(Side::Sell) => 2,
        });
        e.u64(self.request_seq);
        e.u64(self.count);
        let rest = &self.ids[self.next..];
        e.u64(rest.len() as u64);
        let mut prev = 0;
        for &id in rest {
            e.u64(id - prev);
            prev = id;
        }
    }

    pub(crate) fn restore(r: &mut SnapReader<'_>) -> Result<PendingMass, String> {
        let bad = |what: &str| format!("snapshot: pending mass cancel: bad {what}");
        let originator = u16::try_from(r.u64()?).map_err(|_| bad("originator"))?;
        let firm = u16::try_from(r.u64()?).map_err(|_| bad("firm"))?;
        let cl_ord_id = ClOrdId::from_bytes(r.bytes()?).ok_or_else(|| bad("ClOrdID"))?;
        let symbol = match r.u64()? {
            0 => None,
            s => Some(SymbolId::try_from(s - 1).map_err(|_| bad("symbol"))?),
        };
        let side = match r.u64()? {
            0 => None,
            1 => Some(Side::Buy),
            2 => Some(Side::Sell),
            _ => return Err(bad("side")),
        };
        let request_seq = r.u64()?;
        let count = r.u64()?;
        let n = r.count()?;
        let mut ids = Vec::with_capacity(n as usize);
        let mut prev: u64 = 0;
        for _ in 0..n {
            let d = r.u64()?;
            if d == 0 {
                return Err(bad("order ids (not increasing)"));
            }
            prev = prev.checked_add(d).ok_or_else(|| bad("order id"))?;
            ids.push(prev);
        }
        if ids.is_empty() {
            return Err(bad("order list (empty)"));
        }
        Ok(PendingMass {
            who: Principal { originator, firm },
            cl_ord_id,
            symbol,
            side,
            request_seq,
            ids,
            next: 0,
            count,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use types::XorShift64;

    /// The radix sort agrees with the standard sort on short and long lists, small and large
    /// ids (one, two and several passes).
    #[test]
    fn ids_sort_as_the_standard_sort_does() {
        let mut rng = XorShift64::new(7);
        for (n, below) in [
            (10, 100),
            (20_000, 2_000),
            (20_000, 1 << 22),
            (50_000, u64::MAX),
        ] {
            let v: Vec<OrderId> = (0..n).map(|_| 1 + rng.below(below)).collect();
            let mut want = v.clone();
            want.sort_unstable();
            let mut got = v;
            sort_ids(&mut got);
            assert_eq!(got, want, "{n} ids below {below}");
        }
    }
}
