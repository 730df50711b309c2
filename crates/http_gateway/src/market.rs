//! The public market as the HTTP side serves it: each instrument's book by level, its RptSeq
//! and last trade, its trading status and, in a call auction, its indicative uncross, written
//! by the market-data replica after each batch it applies and read by
//! the HTTP handlers (book, ticker) and the WebSocket connections (snapshots), with the
//! broadcast rings of its changes (`WsHub`). Never the event loop's state.

use crate::ws::WsHub;
use market_data::{Book, TradeEntry};
use std::sync::Mutex;
use types::Side;

/// Levels kept per side (a request for more depth gets these).
pub const DEPTH_MAX: usize = 1000;

/// One price level: price units, total quantity, orders.
pub type LevelView = (i64, u64, u32);

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BookView {
    /// The instrument's feed sequence number of the last entry this view includes (the FIX
    /// feed's RptSeq).
    pub rpt_seq: u64,
    /// Best first.
    pub bids: Vec<LevelView>,
    pub asks: Vec<LevelView>,
    pub last_trade: Option<TradeEntry>,
    /// Record time of the last change, ns.
    pub updated_ns: u64,
    /// Its trading status (the operator's: `exchange::AdminAction::SetStatus`).
    pub status: exchange::InstrumentStatus,
    /// In a call auction, the price and quantity the uncross would trade now (`None`: not
    /// in a call, or nothing would trade).
    pub indicative: Option<(i64, u64)>,
    /// Changes of `status` and `indicative` so far: of two tickers, the later has the greater
    /// `(rpt_seq, ticker_rev)` (either may change without the other).
    pub ticker_rev: u64,
}

/// Every instrument's view, each behind its own lock (held for a copy), and the WebSocket
/// rings its writer publishes the changes on.
pub struct MarketView {
    books: Vec<Mutex<BookView>>,
    ws: WsHub,
}

impl MarketView {
    pub fn new(instruments: usize) -> MarketView {
        MarketView::with_ws_buffer(instruments, crate::ws::WS_BUFFER_DEFAULT)
    }

    /// A view whose WebSocket rings keep `ws_buffer` messages each.
    pub fn with_ws_buffer(instruments: usize, ws_buffer: usize) -> MarketView {
        MarketView {
            books: (0..instruments).map(|_| Mutex::default()).collect(),
            ws: WsHub::new(ws_buffer),
        }
    }

    /// The WebSocket rings.
    pub fn ws(&self) -> &WsHub {
        &self.ws
    }

    /// Sets instrument `symbol`'s view from the replica's book.
    pub fn update(
        &self,
        symbol: u32,
        book: &Book,
        rpt_seq: u64,
        last_trade: Option<TradeEntry>,
        ts: u64,
    ) {
        let Some(slot) = self.books.get(symbol as usize) else {
            return;
        };
        let side = |s: Side| -> Vec<LevelView> {
            book.levels(s)
                .take(DEPTH_MAX)
                .map(|(p, l)| (p, l.qty, l.orders))
                .collect()
        };
        let (bids, asks) = (side(Side::Buy), side(Side::Sell));
        let mut v = slot.lock().unwrap_or_else(|e| e.into_inner());
        v.rpt_seq = rpt_seq;
        v.bids = bids;
        v.asks = asks;
        if last_trade.is_some() {
            v.last_trade = last_trade;
        }
        v.updated_ns = ts;
    }

    /// Sets instrument `symbol`'s trading status.
    pub fn set_status(&self, symbol: u32, status: exchange::InstrumentStatus) {
        if let Some(slot) = self.books.get(symbol as usize) {
            let mut v = slot.lock().unwrap_or_else(|e| e.into_inner());
            if v.status != status {
                v.status = status;
                v.ticker_rev += 1;
            }
        }
    }

    /// Sets instrument `symbol`'s indicative uncross (`None`: none).
    pub fn set_indicative(&self, symbol: u32, indicative: Option<(i64, u64)>) {
        if let Some(slot) = self.books.get(symbol as usize) {
            let mut v = slot.lock().unwrap_or_else(|e| e.into_inner());
            if v.indicative != indicative {
                v.indicative = indicative;
                v.ticker_rev += 1;
            }
        }
    }

    /// Instrument `symbol`'s `(rpt_seq, ticker_rev)`: where its ticker stands.
    pub fn ticker_at(&self, symbol: u32) -> (u64, u64) {
        self.books.get(symbol as usize).map_or((0, 0), |slot| {
            let v = slot.lock().unwrap_or_else(|e| e.into_inner());
            (v.rpt_seq, v.ticker_rev)
        })
    }

    /// A copy of instrument `symbol`'s view, its sides cut to `depth` levels.
    pub fn book(&self, symbol: u32, depth: usize) -> Option<BookView> {
        let v = self
            .books
            .get(symbol as usize)?
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        Some(BookView {
            rpt_seq: v.rpt_seq,
            bids: v.bids.iter().take(depth).copied().collect(),
            asks: v.asks.iter().take(depth).copied().collect(),
            last_trade: v.last_trade,
            updated_ns: v.updated_ns,
            status: v.status,
            indicative: v.indicative,
            ticker_rev: v.ticker_rev,
        })
    }
}
