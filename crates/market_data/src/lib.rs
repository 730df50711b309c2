//! The market-data feed: per instrument, the book aggregated by price level and every trade,
//! as entries numbered by a per-instrument sequence number (RptSeq).
//!
//! Role: the protocol-neutral half of market data. A market-data replica (a journal follower,
//! `server::market_data`) hands [`Feed::on_event`] the trades and level changes the engine
//! reports for each record, in the engine's order; the feed keeps the book they imply and
//! turns each into one [`Entry`]. Edges (FIX today) turn entries into messages, and cut views
//! of the book (top N levels) with [`depth_view`].
//!
//! Never: reads the order path's memory, a clock or a socket; skips or reorders an event.
//!
//! Invariants: an instrument's RptSeq increases by exactly one per entry (it is the number of
//! entries published for it since the journal began, so a function of the journal); after
//! entry k, [`Feed::book`] equals the engine's aggregated book after the event that made
//! entry k, so a snapshot at RptSeq r plus the entries after r rebuilds the engine's book.

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use types::{Event, PriceTicks, QtyLots, Side, SymbolId, TradeId};

/// What a level entry does to the level at its price.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// A price that had no level now has one.
    New,
    /// The level's total quantity or order count changed.
    Change,
    /// The level is gone.
    Delete,
}

/// A price level's new state (MDUpdateAction, MDEntryPx, MDEntrySize = the level's new
/// total, NumberOfOrders).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LevelEntry {
    pub side: Side,
    pub action: Action,
    pub price: PriceTicks,
    /// The level's total resting quantity after the change (0 for `Delete`).
    pub qty: QtyLots,
    pub orders: u32,
}

/// One trade: a taker against one maker, at the maker's price.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TradeEntry {
    pub price: PriceTicks,
    pub qty: QtyLots,
    /// The taker's side.
    pub aggressor: Side,
    pub trade_id: TradeId,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EntryKind {
    Level(LevelEntry),
    Trade(TradeEntry),
}

/// One published entry of an instrument's feed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Entry {
    pub symbol: SymbolId,
    /// The instrument's sequence number of this entry (1 for its first).
    pub rpt_seq: u64,
    pub kind: EntryKind,
}

/// The aggregate of the orders resting at one price.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Level {
    pub qty: QtyLots,
    pub orders: u32,
}

/// One instrument's book by price level.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Book {
    bids: BTreeMap<PriceTicks, Level>,
    asks: BTreeMap<PriceTicks, Level>,
}

impl Book {
    /// The book of resting orders given as (side, price, quantity), in any order.
    pub fn from_orders(orders: impl IntoIterator<Item = (Side, PriceTicks, QtyLots)>) -> Book {
        let mut b = Book::default();
        for (side, price, qty) in orders {
            let l = b.side_mut(side).entry(price).or_default();
            l.qty += qty;
            l.orders += 1;
        }
        b
    }

    fn side_mut(&mut self, side: Side) -> &mut BTreeMap<PriceTicks, Level> {
        match side {
            Side::Buy => &mut self.bids,
            Side::Sell => &mut self.asks,
        }
    }

    /// The levels of one side, best first (bids from the highest price, asks from the lowest).
    pub fn levels(&self, side: Side) -> Box<dyn Iterator<Item = (PriceTicks, Level)> + '_> {
        match side {
            Side::Buy => Box::new(self.bids.iter().rev().map(|(p, l)| (*p, *l))),
            Side::Sell => Box::new(self.asks.iter().map(|(p, l)| (*p, *l))),
        }
    }

    /// Number of levels on `side`.
    pub fn len(&self, side: Side) -> usize {
        match side {
            Side::Buy => self.bids.len(),
            Side::Sell => self.asks.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.bids.is_empty() && self.asks.is_empty()
    }

    /// The best level of `side`.
    pub fn best(&self, side: Side) -> Option<(PriceTicks, Level)> {
        self.nth(side, 0)
    }

    /// The level at index `n` (0 = best) of `side`.
    pub fn nth(&self, side: Side, n: usize) -> Option<(PriceTicks, Level)> {
        self.levels(side).nth(n)
    }

    /// Number of levels of `side` strictly better than `price`, counting at most `cap`.
    pub fn rank(&self, side: Side, price: PriceTicks, cap: usize) -> usize {
        match side {
            Side::Buy => self.bids.range(price + 1..).take(cap).count(),
            Side::Sell => self.asks.range(..price).take(cap).count(),
        }
    }

    /// Sets the level at `price` to `qty` (0: removes it) and says what that was.
    pub fn set(&mut self, side: Side, price: PriceTicks, qty: QtyLots, orders: u32) -> Action {
        let levels = self.side_mut(side);
        if qty == 0 {
            levels.remove(&price);
            return Action::Delete;
        }
        match levels.insert(price, Level { qty, orders }) {
            Some(_) => Action::Change,
            None => Action::New,
        }
    }

    /// The level entries that rebuild this book from nothing, bids best first then asks
    /// best first, at most `depth` levels a side (0: all).
    pub fn entries(&self, depth: usize) -> impl Iterator<Item = LevelEntry> + '_ {
        let take = if depth == 0 { usize::MAX } else { depth };
        [Side::Buy, Side::Sell].into_iter().flat_map(move |side| {
            self.levels(side)
                .take(take)
                .map(move |(price, l)| LevelEntry {
                    side,
                    action: Action::New,
                    price,
                    qty: l.qty,
                    orders: l.orders,
                })
        })
    }

    /// Applies a level entry (as a subscriber rebuilding the book does). False if it does not
    /// fit the book (a New for an existing level, a Change or Delete for a missing one).
    pub fn apply(&mut self, e: &LevelEntry) -> bool {
        let levels = self.side_mut(e.side);
        let had = levels.contains_key(&e.price);
        match e.action {
            Action::New if had => false,
            Action::Change | Action::Delete if !had => false,
            Action::Delete => {
                levels.remove(&e.price);
                true
            }
            _ => {
                levels.insert(
                    e.price,
                    Level {
                        qty: e.qty,
                        orders: e.orders,
                    },
                );
                true
            }
        }
    }
}

/// The entries a subscriber to the best `depth` levels (0: every level) sees for level entry
/// `e`, given the book after it: `e` itself if its price is within the view, and the level
/// it pushed out of the view (a Delete) or let into it (a New).
pub fn depth_view(book: &Book, e: &LevelEntry, depth: usize, mut emit: impl FnMut(LevelEntry)) {
    if depth == 0 {
        emit(*e);
        return;
    }
    if book.rank(e.side, e.price, depth) >= depth {
        return;
    }
    emit(*e);
    let level = |n: usize, action| {
        book.nth(e.side, n).map(|(price, l)| LevelEntry {
            side: e.side,
            action,
            price,
            qty: if action == Action::Delete { 0 } else { l.qty },
            orders: if action == Action::Delete {
                0
            } else {
                l.orders
            },
        })
    };
    let other = match e.action {
        Action::Change => None,
        // The level that was last in the view is now just past it.
        Action::New => level(depth, Action::Delete),
        // The level just past the view is now its last.
        Action::Delete => level(depth - 1, Action::New),
    };
    if let Some(o) = other {
        emit(o);
    }
}

/// Every instrument's book and RptSeq, and the entries of the events given since the last
/// `clear_entries`.
#[derive(Clone, Debug)]
pub struct Feed {
    books: Vec<Book>,
    rpt_seq: Vec<u64>,
    entries: Vec<Entry>,
    trades: u64,
}

impl Feed {
    /// An empty feed for `instruments` instruments (ids `0..instruments`).
    pub fn new(instruments: usize) -> Feed {
        Feed {
            books: vec![Book::default(); instruments],
            rpt_seq: vec![0; instruments],
            entries: Vec::with_capacity(1024),
            trades: 0,
        }
    }

    pub fn instruments(&self) -> usize {
        self.books.len()
    }

    /// Takes one engine event: a `Trade` or a `Level` becomes an entry; others are ignored.
    pub fn on_event(&mut self, e: &Event) {
        let (symbol, kind) = match *e {
            Event::Trade {
                trade_id,
                symbol,
                price,
                qty,
                taker_side,
                ..
            } => {
                self.trades += 1;
                (
                    symbol,
                    EntryKind::Trade(TradeEntry {
                        price,
                        qty,
                        aggressor: taker_side,
                        trade_id,
                    }),
                )
            }
            Event::Level {
                symbol,
                side,
                price,
                qty,
                orders,
            } => {
                let book = &mut self.books[symbol as usize];
                let action = book.set(side, price, qty, orders);
                (
                    symbol,
                    EntryKind::Level(LevelEntry {
                        side,
                        action,
                        price,
                        qty,
                        orders: if qty == 0 { 0 } else { orders },
                    }),
                )
            }
            _ => return,
        };
        let s = &mut self.rpt_seq[symbol as usize];
        *s += 1;
        self.entries.push(Entry {
            symbol,
            rpt_seq: *s,
            kind,
        });
    }

    /// The entries since the last `clear_entries`, in order.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    pub fn clear_entries(&mut self) {
        self.entries.clear();
    }

    /// The book of `symbol` after the last event given.
    pub fn book(&self, symbol: SymbolId) -> &Book {
        &self.books[symbol as usize]
    }

    /// The RptSeq of `symbol`'s last entry (0: none yet).
    pub fn rpt_seq(&self, symbol: SymbolId) -> u64 {
        self.rpt_seq[symbol as usize]
    }

    /// Trades seen since the journal began.
    pub fn trades(&self) -> u64 {
        self.trades
    }
}

#[cfg(test)]
mod tests;
