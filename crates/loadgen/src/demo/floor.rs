//! What the demo's traders know of one another, so that none of them sends a request the
//! exchange has to reject.
//!
//! Role: the demo's makers and takers are FIX sessions driven from one thread, and each trade
//! is between two of them. A maker's replace is rejected when its order was filled meanwhile
//! (entirely: "unknown order"; up to the new quantity or beyond: "OrderQty at or below the
//! filled quantity"), and so is a cancel of an order filled meanwhile. A maker's view of its
//! fills is exact on an instrument when no taker order is on its way there (every taker order
//! sent has had its final report) and every fill the takers were told of has reached the
//! makers too (the other half of each trade): the instrument is *settled*, and makers modify
//! their quotes on it only then. For that every trade must have a taker on one side: makers
//! never cross one another nor themselves (a bid stays below every ask any maker may have in
//! the book, resting or on its way, and an ask above every bid).
//!
//! Trades with a party outside the demo (a user's own FIX client) unbalance the fills for
//! good; `once_a_second` takes an imbalance that stayed the same for a whole second with no
//! taker order on its way as such a trade and balances it.
//!
//! Never: I/O or clocks; allocates per request once the taker queues have grown.
//!
//! Invariants: a taker's orders are answered in the order sent (one FIX session, one
//! sequencer), so its queue of instruments pairs with its final reports; a maker's quotes
//! here are a superset of its orders in the book (they are recomputed from its slots at each
//! of its turns and extended by the quote it sends).

use crate::clordid::KIND_NEW;
use crate::orders::{BotOrders, SlotState};
use fix::scan::Report;
use std::collections::VecDeque;
use types::Side;

/// One instrument as the demo's traders share it.
#[derive(Clone, Debug, Default)]
struct Instrument {
    /// Taker orders sent and not finished.
    takers_in_flight: u64,
    /// Quantity filled as reported to the takers and to the makers.
    taker_filled: u64,
    maker_filled: u64,
    /// `taker_filled - maker_filled` at the last once-a-second look, when it was not zero
    /// and no taker order was on its way.
    stale_imbalance: Option<i64>,
    /// Per maker: the highest bid and the lowest ask it may have in the book.
    bid: Vec<Option<i64>>,
    ask: Vec<Option<i64>>,
}

/// One taker's orders on their way.
#[derive(Clone, Debug, Default)]
struct TakerFlight {
    /// Instruments of the orders sent and not finished, oldest first.
    symbols: VecDeque<u16>,
    /// ClOrdID of the last order finished: a second final report of it is not another order's.
    last_done: Vec<u8>,
}

/// The demo's shared view. Bots `0..makers` are the makers, the next `takers` the takers.
#[derive(Clone, Debug)]
pub struct Floor {
    instruments: Vec<Instrument>,
    takers: Vec<TakerFlight>,
    makers: usize,
    /// Imbalances taken for trades with parties outside the demo.
    pub outside_trades: u64,
}

impl Floor {
    pub fn new(symbols: usize, makers: usize, takers: usize) -> Floor {
        let instrument = Instrument {
            bid: vec![None; makers],
            ask: vec![None; makers],
            ..Instrument::default()
        };
        Floor {
            instruments: vec![instrument; symbols],
            takers: vec![TakerFlight::default(); takers],
            makers,
            outside_trades: 0,
        }
    }

    /// True when the makers' view of their fills on `symbol` is exact: a replace or cancel
    /// of a live quote there reaches an order as its maker knows it.
    pub fn settled(&self, symbol: u16) -> bool {
        self.instruments
            .get(symbol as usize)
            .is_some_and(|i| i.takers_in_flight == 0 && i.taker_filled == i.maker_filled)
    }

    /// Taker `t` sends an order on `symbol`.
    pub fn taker_sent(&mut self, t: usize, symbol: u16) {
        if let (Some(f), Some(i)) = (
            self.takers.get_mut(t),
            self.instruments.get_mut(symbol as usize),
        ) {
            f.symbols.push_back(symbol);
            i.takers_in_flight += 1;
        }
    }

    /// An application message bot `bot` received; `symbol` is its instrument, if known.
    pub fn on_report(&mut self, bot: usize, symbol: Option<u16>, r: &Report<'_>) {
        let taker = bot.checked_sub(self.makers);
        if r.is_fill() {
            if let (Some(i), Some(q)) = (symbol.and_then(|s| self.instrument(s)), r.last_qty) {
                match taker {
                    Some(_) => i.taker_filled += q,
                    None => i.maker_filled += q,
                }
            }
        }
        let Some(f) = taker.and_then(|t| self.takers.get_mut(t)) else {
            return;
        };
        if !is_final(r) || r.cl_ord_id == f.last_done.as_slice() {
            return;
        }
        f.last_done.clear();
        f.last_done.extend_from_slice(r.cl_ord_id);
        if let Some(s) = f.symbols.pop_front() {
            if let Some(i) = self.instruments.get_mut(s as usize) {
                i.takers_in_flight = i.takers_in_flight.saturating_sub(1);
            }
        }
    }

    fn instrument(&mut self, symbol: u16) -> Option<&mut Instrument> {
        self.instruments.get_mut(symbol as usize)
    }

    /// Once a second: an imbalance of fills that has not moved for a second while no taker
    /// order was on its way is a trade with someone outside the demo; balance it.
    pub fn once_a_second(&mut self) {
        for i in &mut self.instruments {
            let imbalance = i.taker_filled as i64 - i.maker_filled as i64;
            if i.takers_in_flight > 0 || imbalance == 0 {
                i.stale_imbalance = None;
            } else if i.stale_imbalance == Some(imbalance) {
                i.maker_filled = i.taker_filled;
                i.stale_imbalance = None;
                self.outside_trades += 1;
            } else {
                i.stale_imbalance = Some(imbalance);
            }
        }
    }

    /// Recomputes maker `m`'s quotes from its slots: every order it has in the book or on its
    /// way, at its price and, while a replace is on its way, at the new price too.
    pub fn maker_quotes(&mut self, m: usize, orders: &BotOrders) {
        for i in &mut self.instruments {
            if let (Some(b), Some(a)) = (i.bid.get_mut(m), i.ask.get_mut(m)) {
                *b = None;
                *a = None;
            }
        }
        for n in 1..=orders.window() as u32 {
            let Some(s) = orders.slot(n).copied() else {
                continue;
            };
            if s.state == SlotState::Free {
                continue;
            }
            self.add_quote(m, s.symbol, s.side, s.price_ticks);
            if s.state == SlotState::PendingReplace {
                self.add_quote(m, s.symbol, s.side, s.pending_price_ticks);
            }
        }
    }

    /// Maker `m` may have a quote at `price` on `symbol`'s `side`.
    pub fn add_quote(&mut self, m: usize, symbol: u16, side: Side, price: i64) {
        let Some(i) = self.instrument(symbol) else {
            return;
        };
        let quotes = match side {
            Side::Buy => i.bid.get_mut(m),
            Side::Sell => i.ask.get_mut(m),
        };
        if let Some(q) = quotes {
            *q = Some(match (*q, side) {
                (None, _) => price,
                (Some(p), Side::Buy) => p.max(price),
                (Some(p), Side::Sell) => p.min(price),
            });
        }
    }

    /// The best price a maker may quote on `side` of `symbol` without crossing any maker's
    /// quote, given the price it wants (`None`: no valid price, the asks start at one tick).
    pub fn uncrossed(&self, symbol: u16, side: Side, want: i64) -> Option<i64> {
        let i = self.instruments.get(symbol as usize)?;
        let price = match side {
            Side::Buy => match i.ask.iter().flatten().min() {
                Some(&a) => want.min(a - 1),
                None => want,
            },
            Side::Sell => match i.bid.iter().flatten().max() {
                Some(&b) => want.max(b + 1),
                None => want,
            },
        };
        (price >= 1).then_some(price)
    }
}

/// True for a taker order's last report: rejected or shed, canceled (an IOC's remainder, a
/// market order without liquidity), expired, or filled to the end.
fn is_final(r: &Report<'_>) -> bool {
    if r.cl_ord_id.first() != Some(&KIND_NEW) {
        return false;
    }
    match r.msg_type {
        b'8' => matches!(r.exec_type, b'8' | b'4' | b'C') || r.leaves_qty == Some(0),
        b'j' => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests;
