//! Call auctions: `CallStart` stops matching on one book, `Uncross` trades the crossed part at
//! one price and returns the book to continuous trading.
//!
//! The auction price is, among every price at which an order rests on either side, the one with
//! the largest executable volume (`min` of the buy quantity at or above it and the sell quantity
//! at or below it, hidden iceberg quantity included), then the smallest imbalance between the
//! two, then the nearest to the reference (0: none), then the lowest.

use std::collections::BTreeSet;

use types::{Event, EventSink, Field, PriceTicks, QtyLots, RejectReason, Side, SymbolId};

use super::Reference;

/// One candidate price with what it would execute, as an ordering key: smaller is better.
type Rank = (std::cmp::Reverse<u128>, u128, u128, PriceTicks);

impl Reference {
    /// True while `symbol` is in a call auction.
    pub fn in_call(&self, symbol: SymbolId) -> bool {
        self.books.get(symbol as usize).is_some_and(|b| b.in_call)
    }

    /// The price and volume an `Uncross` with `reference` would use now, `None` when the
    /// volume is 0 (always so outside a call: a continuous book is never crossed). A volume
    /// beyond `u64::MAX` is reported as `u64::MAX` (outside the engine contract).
    pub fn indicative(
        &self,
        symbol: SymbolId,
        reference: PriceTicks,
    ) -> Option<(PriceTicks, QtyLots)> {
        self.auction(symbol, reference)
            .map(|(p, v)| (p, QtyLots::try_from(v).unwrap_or(QtyLots::MAX)))
    }

    /// The auction price and its (unsaturated) volume, `None` when the volume is 0.
    fn auction(&self, symbol: SymbolId, reference: PriceTicks) -> Option<(PriceTicks, u128)> {
        let bids = self.resting(symbol, Side::Buy);
        let asks = self.resting(symbol, Side::Sell);
        let prices: BTreeSet<PriceTicks> = bids.iter().chain(asks).map(|o| o.price).collect();
        let rank = |p: PriceTicks| -> (Rank, u128) {
            let buy: u128 = bids
                .iter()
                .filter(|o| o.price >= p)
                .map(|o| u128::from(o.qty))
                .sum();
            let sell: u128 = asks
                .iter()
                .filter(|o| o.price <= p)
                .map(|o| u128::from(o.qty))
                .sum();
            let volume = buy.min(sell);
            let distance = if reference == 0 {
                0
            } else {
                (i128::from(p) - i128::from(reference)).unsigned_abs()
            };
            let key = (std::cmp::Reverse(volume), buy.abs_diff(sell), distance, p);
            (key, volume)
        };
        let (key, volume) = prices.iter().map(|&p| rank(p)).min()?;
        (volume > 0).then_some((key.3, volume))
    }

    pub(super) fn call_start<S: EventSink>(&mut self, symbol: SymbolId, sink: &mut S) {
        match self.books.get_mut(symbol as usize) {
            Some(book) => book.in_call = true,
            None => Self::reject(sink, 0, RejectReason::Invalid(Field::Symbol)),
        }
    }

    /// Ends the call: `Uncrossed`, then trades pairing the best buy (taker) with the best sell
    /// (maker) at the auction price, each followed by the sell's `Level` then the buy's; no
    /// self-trade prevention; icebergs refill and requeue as in matching. Then stops trigger.
    pub(super) fn uncross<S: EventSink>(
        &mut self,
        symbol: SymbolId,
        reference: PriceTicks,
        sink: &mut S,
    ) {
        let Some(book) = self.books.get_mut(symbol as usize) else {
            return Self::reject(sink, 0, RejectReason::Invalid(Field::Symbol));
        };
        if !std::mem::replace(&mut book.in_call, false) {
            return;
        }
        let Some((price, volume)) = self.auction(symbol, reference) else {
            return;
        };
        sink.on_event(&Event::Uncrossed {
            symbol,
            price,
            qty: QtyLots::try_from(volume).unwrap_or(QtyLots::MAX),
        });
        let mut left = volume;
        while left > 0 {
            let (Some(buy), Some(sell)) = (
                self.resting(symbol, Side::Buy).first().copied(),
                self.resting(symbol, Side::Sell).first().copied(),
            ) else {
                break;
            };
            let qty = buy
                .shown
                .min(sell.shown)
                .min(QtyLots::try_from(left).unwrap_or(QtyLots::MAX));
            left -= u128::from(qty);
            let maker_leaves = self.fill_resting(symbol, Side::Sell, sell.id, qty);
            let taker_leaves = self.fill_resting(symbol, Side::Buy, buy.id, qty);
            self.note_fill(sell.id, qty);
            self.note_fill(buy.id, qty);
            self.books[symbol as usize].note_trade(price);
            let trade_id = self.next_trade();
            sink.on_event(&Event::Trade {
                trade_id,
                symbol,
                price,
                qty,
                maker_id: sell.id,
                taker_id: buy.id,
                maker_account: sell.account,
                taker_account: buy.account,
                taker_side: Side::Buy,
                maker_leaves,
                taker_leaves,
            });
            self.emit_level(sink, symbol, Side::Sell, sell.price);
            self.emit_level(sink, symbol, Side::Buy, buy.price);
        }
        self.trigger_stops(symbol, sink);
    }
}
