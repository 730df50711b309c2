//! GTD expiry: a min-heap of `(expire_ns, id)` over GTD orders, resting or pending stops.
//! Entries of orders that left since are skipped when they come due, and swept when they
//! outnumber the live orders (so the heap stays bounded by the live orders, amortized).

use std::cmp::Reverse;

use crate::{side_ix, Engine, F_STOP};
use types::{CancelReason, EventSink, OrderId, Side, TimeInForce};

impl Engine {
    /// The earliest expire time of a GTD order, or of one gone since (an `Expire` at that
    /// time then cancels nothing and moves this on).
    pub fn next_expiry(&self) -> Option<u64> {
        self.expiries.peek().map(|Reverse((t, _))| *t)
    }

    pub(crate) fn push_expiry(&mut self, expire_ns: u64, id: OrderId) {
        if self.expiries.len() >= 2 * self.live + 1024 {
            let (ids, orders) = (&self.ids, &self.orders);
            self.expiries.retain(|Reverse((_, id))| {
                ids.live_slot(*id)
                    .is_some_and(|s| orders[s as usize].tif == TimeInForce::Gtd)
            });
        }
        self.expiries.push(Reverse((expire_ns, id)));
    }

    /// Cancels every GTD order whose expiry is at or before `now_ns`, in the order of
    /// `ExpireDay`: symbol, resting buys then sells in priority order, then pending stops in
    /// acceptance order.
    pub(crate) fn expire<S: EventSink>(&mut self, now_ns: u64, sink: &mut S) {
        // (symbol, class: 0 buys, 1 sells, 2 stops, price in priority order, stamp, slot)
        let mut due: Vec<(u32, u8, i64, u64, u32)> = Vec::new();
        while let Some(&Reverse((t, id))) = self.expiries.peek() {
            if t > now_ns {
                break;
            }
            self.expiries.pop();
            let Some(slot) = self.ids.live_slot(id) else {
                continue;
            };
            let o = &self.orders[slot as usize];
            if o.tif != TimeInForce::Gtd || self.ext[slot as usize].expire_ns != t {
                continue;
            }
            let (class, key) = if o.flags & F_STOP != 0 {
                (2, 0)
            } else {
                match o.side {
                    Side::Buy => (side_ix(o.side) as u8, -o.price),
                    Side::Sell => (side_ix(o.side) as u8, o.price),
                }
            };
            due.push((o.symbol, class, key, o.seq, slot));
        }
        due.sort_unstable();
        for (_, _, _, _, slot) in due {
            self.cancel_slot(slot, CancelReason::Expired, None, sink);
        }
    }
}
