//! The engine's self-checks: structural invariants and the state hash.

use crate::{side_ix, snapshot, Engine, F_ICEBERG, F_STOP, NIL};
use types::{PriceTicks, Side, SymbolId, TimeInForce};

impl Engine {
    /// Checks every structural invariant; the error names the first one broken.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut resting = 0usize;
        let mut hidden_levels = 0usize;
        for (sym, book) in self.books.iter().enumerate() {
            let mut icebergs = [0u32; 2];
            for lad in book.iter() {
                lad.check().map_err(|e| format!("symbol {sym}: {e}"))?;
                let mut last_price: Option<PriceTicks> = None;
                for idx in lad.iter_levels() {
                    let price = lad.price_of(idx);
                    if let Some(lp) = last_price {
                        let ok = match lad.side {
                            Side::Buy => price < lp,
                            Side::Sell => price > lp,
                        };
                        if !ok {
                            return Err(format!("symbol {sym}: levels out of order at {price}"));
                        }
                    }
                    last_price = Some(price);
                    let lvl = lad.level(idx);
                    let (mut q, mut n, mut prev, mut s) = (0u64, 0u32, NIL, lvl.head);
                    let mut hidden = 0u64;
                    let mut last_seq = 0u64;
                    while s != NIL {
                        let o = &self.orders[s as usize];
                        if o.prev != prev {
                            return Err(format!("order {}: broken prev link", o.id));
                        }
                        if o.qty == 0 {
                            return Err(format!("order {}: zero quantity at rest", o.id));
                        }
                        if o.price != price || o.side != lad.side || o.symbol as usize != sym {
                            return Err(format!("order {}: on the wrong level", o.id));
                        }
                        if o.seq <= last_seq {
                            return Err(format!("order {}: out of time priority", o.id));
                        }
                        if o.flags & F_STOP != 0 {
                            return Err(format!("order {}: a pending stop in a level", o.id));
                        }
                        if o.flags & F_ICEBERG != 0 {
                            let x = self.ext[s as usize];
                            if o.qty > x.display {
                                return Err(format!("iceberg {}: shows more than its peak", o.id));
                            }
                            icebergs[crate::side_ix(lad.side)] += 1;
                            hidden += x.hidden;
                        }
                        if !matches!(
                            o.tif,
                            TimeInForce::Gtc | TimeInForce::Day | TimeInForce::Gtd
                        ) {
                            return Err(format!("order {}: {:?} at rest", o.id, o.tif));
                        }
                        if self.ids.live_slot(o.id) != Some(s) {
                            return Err(format!("order {}: id index does not point at it", o.id));
                        }
                        last_seq = o.seq;
                        q = q
                            .checked_add(o.qty)
                            .ok_or_else(|| format!("level {price}: aggregate overflows u64"))?;
                        n += 1;
                        prev = s;
                        s = o.next;
                    }
                    if hidden != self.hidden.get(sym as SymbolId, lad.side, price) {
                        return Err(format!(
                            "symbol {sym} {:?} {price}: {hidden} hidden, {} counted",
                            lad.side,
                            self.hidden.get(sym as SymbolId, lad.side, price)
                        ));
                    }
                    hidden_levels += usize::from(hidden > 0);
                    if prev != lvl.tail || q != lvl.qty || n != lvl.count {
                        return Err(format!(
                            "symbol {sym} {:?} {price}: level says qty {} orders {}, has {q} {n}",
                            lad.side, lvl.qty, lvl.count
                        ));
                    }
                    resting += n as usize;
                }
            }
            if icebergs != self.icebergs[sym] {
                return Err(format!(
                    "symbol {sym}: {icebergs:?} icebergs rest, {:?} counted",
                    self.icebergs[sym]
                ));
            }
            resting += self.stops[sym]
                .check(sym as SymbolId, &self.orders, &self.ext, |id| {
                    self.ids.live_slot(id)
                })
                .map_err(|e| format!("symbol {sym}: {e}"))?;
            if let (Some((b, _)), Some((a, _)), false) = (
                self.best_bid(sym as SymbolId),
                self.best_ask(sym as SymbolId),
                self.call[sym],
            ) {
                if b >= a {
                    return Err(format!("symbol {sym}: crossed at rest, bid {b} >= ask {a}"));
                }
            }
        }
        let pending: usize = self.stops.iter().map(|b| b.len()).sum();
        if pending != self.pending_stops {
            return Err(format!(
                "{pending} pending stops, {} counted",
                self.pending_stops
            ));
        }
        if hidden_levels != self.hidden.iter().count() {
            return Err(format!(
                "{hidden_levels} levels hold hidden quantity, {} counted",
                self.hidden.iter().count()
            ));
        }
        if resting != self.live || resting != self.ids.live_len() {
            return Err(format!(
                "{resting} orders in books, {} counted live, {} in the id index",
                self.live,
                self.ids.live_len()
            ));
        }
        let mut free = 0usize;
        let mut s = self.free_head;
        while s != NIL {
            free += 1;
            if free > self.orders.len() {
                return Err("free list has a cycle".into());
            }
            s = self.orders[s as usize].next;
        }
        if free + self.live != self.orders.len() {
            return Err(format!(
                "slab: {free} free + {} live != {} slots",
                self.live,
                self.orders.len()
            ));
        }
        Ok(())
    }

    /// A deterministic hash of the whole matching state: every book's orders in priority order
    /// with all their fields, the trade-id counter and the set of used ids. Equal states give
    /// equal hashes whatever their history or memory layout (a restored engine included).
    pub fn state_hash(&self) -> u64 {
        let mut h = snapshot::Hasher::new();
        h.u64(self.instruments.len() as u64);
        for (sym, inst) in self.instruments.iter().enumerate() {
            h.bytes(inst.symbol.as_str().as_bytes());
            h.u64(inst.tick as u64);
            h.u64(inst.lot);
            for side in [Side::Buy, Side::Sell] {
                h.u64(0x5157_0000 + side_ix(side) as u64);
                for o in self.resting(sym as SymbolId, side) {
                    snapshot::hash_order(&mut h, &o);
                }
            }
            for o in self.pending_stops(sym as SymbolId) {
                snapshot::hash_order(&mut h, &o);
            }
            if self.call[sym] {
                h.u64(0xCA11_0000 + sym as u64);
            }
        }
        h.u64(self.next_trade_id);
        let (used_count, used_digest) = self.ids.used_digest();
        h.u64(used_count);
        h.u64(used_digest);
        h.finish()
    }
}
