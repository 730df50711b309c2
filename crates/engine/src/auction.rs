//! Call auctions: a book in a call collects orders without matching; `Uncross` trades them
//! at one price (see `types::Command::Uncross` for the rule) and returns it to continuous
//! trading.
//!
//! Never: applies self-trade prevention to the uncross; leaves a book crossed outside a call
//! (the volume-maximizing price leaves no buy at or above a remaining sell).

use crate::{level_event, side_ix, Engine, F_ICEBERG};
use types::{Event, EventSink, Field, PriceTicks, QtyLots, RejectReason, Side, SymbolId};

impl Engine {
    /// Whether `symbol`'s book is in a call auction.
    pub fn in_call(&self, symbol: SymbolId) -> bool {
        self.call.get(symbol as usize).copied().unwrap_or(false)
    }

    pub(crate) fn call_start<S: EventSink>(&mut self, symbol: SymbolId, sink: &mut S) {
        match self.call.get_mut(symbol as usize) {
            Some(c) => *c = true,
            None => Self::reject(sink, 0, RejectReason::Invalid(Field::Symbol)),
        }
    }

    /// A level's whole quantity, hidden iceberg parts included.
    fn level_total(&self, symbol: SymbolId, side: Side, idx: usize) -> u128 {
        let lad = &self.books[symbol as usize][side_ix(side)];
        let shown = lad.level(idx).qty as u128;
        if self.icebergs[symbol as usize][side_ix(side)] == 0 {
            return shown;
        }
        shown + self.hidden.get(symbol, side, lad.price_of(idx)) as u128
    }

    /// The price and volume an `Uncross` of `symbol` would trade now (`None`: no volume).
    pub fn indicative(
        &self,
        symbol: SymbolId,
        reference: PriceTicks,
    ) -> Option<(PriceTicks, QtyLots)> {
        let book = self.books.get(symbol as usize)?;
        let (bid, ask) = (&book[0], &book[1]);
        let (bi, ai) = (bid.best_idx()?, ask.best_idx()?);
        let (best_bid, best_ask) = (bid.price_of(bi), ask.price_of(ai));
        if best_bid < best_ask {
            return None;
        }
        // Only prices in [best ask, best bid] can trade; outside, one side has nothing.
        let mut bids: Vec<(PriceTicks, u128)> = Vec::new(); // descending
        let mut level = Some(bi);
        while let Some(i) = level {
            let p = bid.price_of(i);
            if p < best_ask {
                break;
            }
            bids.push((p, self.level_total(symbol, Side::Buy, i)));
            level = bid.next_worse(i);
        }
        let mut asks: Vec<(PriceTicks, u128)> = Vec::new(); // ascending
        let mut level = Some(ai);
        while let Some(i) = level {
            let p = ask.price_of(i);
            if p > best_bid {
                break;
            }
            asks.push((p, self.level_total(symbol, Side::Sell, i)));
            level = ask.next_worse(i);
        }
        let mut prices: Vec<PriceTicks> = bids.iter().chain(asks.iter()).map(|l| l.0).collect();
        prices.sort_unstable();
        prices.dedup();
        let bid_total: u128 = bids.iter().map(|l| l.1).sum();
        // Ascending candidates: buys below `p` leave the buy volume, sells at or below join.
        let (mut below, mut bi, mut sell, mut ai) = (0u128, bids.len(), 0u128, 0usize);
        // Best so far: (volume, imbalance, distance, price).
        let mut best: Option<(u128, u128, u128, PriceTicks)> = None;
        for p in prices {
            while bi > 0 && bids[bi - 1].0 < p {
                bi -= 1;
                below += bids[bi].1;
            }
            while ai < asks.len() && asks[ai].0 <= p {
                sell += asks[ai].1;
                ai += 1;
            }
            let buy = bid_total - below;
            let volume = buy.min(sell);
            let imbalance = buy.abs_diff(sell);
            let distance = if reference > 0 {
                p.abs_diff(reference) as u128
            } else {
                0
            };
            let better = match best {
                None => true,
                Some((v, i, d, _)) => {
                    volume > v
                        || (volume == v && (imbalance < i || (imbalance == i && distance < d)))
                }
            };
            if better {
                best = Some((volume, imbalance, distance, p));
            }
        }
        let (volume, _, _, price) = best?;
        if volume == 0 {
            return None;
        }
        Some((price, QtyLots::try_from(volume).unwrap_or(QtyLots::MAX)))
    }

    pub(crate) fn uncross<S: EventSink>(
        &mut self,
        symbol: SymbolId,
        reference: PriceTicks,
        sink: &mut S,
    ) {
        let sym = symbol as usize;
        if sym >= self.books.len() {
            return Self::reject(sink, 0, RejectReason::Invalid(Field::Symbol));
        }
        self.call[sym] = false;
        let Some((price, volume)) = self.indicative(symbol, reference) else {
            return;
        };
        sink.on_event(&Event::Uncrossed {
            symbol,
            price,
            qty: volume,
        });
        let mut left = volume;
        while left > 0 {
            let bi = self.books[sym][0]
                .best_idx()
                .expect("engine: uncross volume on the buys");
            let ai = self.books[sym][1]
                .best_idx()
                .expect("engine: uncross volume on the sells");
            let (b, a) = (self.books[sym][0].head(bi), self.books[sym][1].head(ai));
            // Memory-bound: the next orders of each queue and where they are indexed.
            // Orders up to three ahead (each loaded by then if requested two trades earlier),
            // the index bucket of the one two ahead.
            for s in [b, a] {
                let mut next = self.orders[s as usize].next;
                for ahead in 1..=3 {
                    if next == crate::NIL {
                        break;
                    }
                    let n = &self.orders[next as usize];
                    if ahead < 3 {
                        self.ids.prefetch_live(n.id);
                        next = n.next;
                    } else {
                        crate::hint::prefetch(n);
                    }
                }
            }
            let q = left
                .min(self.orders[b as usize].qty)
                .min(self.orders[a as usize].qty);
            left -= q;
            self.orders[b as usize].qty -= q;
            self.orders[a as usize].qty -= q;
            self.books[sym][0].sub_qty(bi, q);
            self.books[sym][1].sub_qty(ai, q);
            let (bo, ao) = (self.orders[b as usize], self.orders[a as usize]);
            let trade_id = self.next_trade_id;
            self.next_trade_id += 1;
            sink.on_event(&Event::Trade {
                trade_id,
                symbol,
                price,
                qty: q,
                maker_id: ao.id,
                taker_id: bo.id,
                maker_account: ao.account,
                taker_account: bo.account,
                taker_side: Side::Buy,
                maker_leaves: ao.qty + Self::hidden_of(&self.orders, &self.ext, a),
                taker_leaves: bo.qty + Self::hidden_of(&self.orders, &self.ext, b),
            });
            self.settle(symbol, Side::Sell, ai, a, sink);
            self.settle(symbol, Side::Buy, bi, b, sink);
        }
        if self.pending_stops != 0 {
            self.run_stops(symbol, price, price, sink);
        }
    }

    /// After an uncross trade: a used-up order leaves its level (an iceberg with some hidden
    /// refills at the back instead); then the level's `Level`.
    fn settle<S: EventSink>(
        &mut self,
        symbol: SymbolId,
        side: Side,
        idx: usize,
        slot: u32,
        sink: &mut S,
    ) {
        let (sym, si) = (symbol as usize, side_ix(side));
        let o = self.orders[slot as usize];
        if o.qty == 0 {
            let hidden = Self::hidden_of(&self.orders, &self.ext, slot);
            self.books[sym][si].unlink(&mut self.orders, idx, slot);
            if hidden > 0 {
                Self::refill(
                    &mut self.orders,
                    &mut self.ext,
                    &mut self.hidden,
                    &mut self.next_seq,
                    slot,
                );
                self.books[sym][si].push_back(&mut self.orders, idx, slot);
            } else {
                if o.flags & F_ICEBERG != 0 {
                    self.icebergs[sym][si] -= 1;
                }
                self.ids.set_gone(o.id);
                Self::free_slot(&mut self.orders, &mut self.free_head, &mut self.live, slot);
            }
        }
        level_event(sink, symbol, &self.books[sym][si], idx);
    }
}
