//! The WebSocket side of the API (`GET /ws`): public channels per symbol (`book`, `trades`,
//! `ticker`) and, after `auth` with an API key token, the key's private `orders` channel.
//!
//! Role: two halves joined by bounded broadcast channels (`WsHub`, inside `MarketView`). The
//! market-data replica's thread owns a [`WsPublisher`]: after each batch it applies, and after
//! it has written the `MarketView`, it publishes per touched instrument one `book` update with
//! the batch's level changes and the RptSeq range of the instrument's feed entries in it (the
//! FIX feed's RptSeq), one `trade` per trade, a `ticker` when the best bid, best ask or last
//! trade changed (and when the trading status or, in a call auction, the indicative uncross
//! changes); and each API key's order events (`ApiEdge::events_on`). The HTTP thread runs
//! one task per connection (`conn`): it parses the client's JSON messages, answers each with an
//! ack or a `{"type":"error",...}`, and forwards what the connection subscribed to.
//!
//! Never: served from the event loop (order entry never waits for a WebSocket); a message
//! dropped silently (a bad one gets an error; a gap in a book stream is repaired with a fresh
//! snapshot); memory that grows with a slow client: the broadcast rings hold `ws_buffer`
//! messages each, whoever reads; a connection's socket buffer is capped; a connection that
//! falls behind the ring gets fresh book snapshots and tickers (conflation) or, if it has
//! subscribed to trades or orders (which cannot be conflated), is closed with code 1008.
//!
//! Invariants: the view is written before the batch's messages are sent, and a connection
//! subscribes to the ring before it reads a snapshot; so a book snapshot at RptSeq s is
//! followed by exactly the updates from s + 1 on (`first_rpt_seq` = the last `rpt_seq` + 1).

use crate::config::{ApiConfig, InstrumentDef};
use crate::json;
#[cfg(feature = "server")]
use crate::market::BookView;
use crate::market::MarketView;
use market_data::{Entry, EntryKind, Feed, TradeEntry};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::broadcast;
use types::Side;

#[cfg(feature = "server")]
pub(crate) mod conn;

/// Messages each broadcast ring keeps (market updates; order events), by default.
pub const WS_BUFFER_DEFAULT: usize = 4096;

/// The channel of a public message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channel {
    Book,
    Trades,
    Ticker,
}

/// A message's JSON text, shared by every connection that sends it (always valid UTF-8:
/// serde_json's output; the connection hands it to the WebSocket as text without a copy).
pub type Text = bytes::Bytes;

/// One public message, its JSON made once for every connection.
#[derive(Clone, Debug)]
pub struct MarketMsg {
    pub symbol: u32,
    pub channel: Channel,
    /// The instrument's RptSeq range this message covers (a trade's and a ticker's: one).
    pub first_rpt_seq: u64,
    pub rpt_seq: u64,
    /// A ticker's `BookView::ticker_rev` when it was made (its status and indicative
    /// changes, which come without a feed entry); 0 for the other channels.
    pub ticker_rev: u64,
    pub text: Text,
}

/// One order event of API key `key` (`ApiEdge`'s JSON).
#[derive(Clone, Debug)]
pub struct OrderMsg {
    pub key: u16,
    pub text: Text,
}

/// What the WebSocket side counts.
#[derive(Debug, Default)]
pub struct WsStats {
    /// Open connections.
    pub connections: AtomicUsize,
    /// Upgrades accepted, and refused (`ws_connections_max` open already).
    pub accepted: AtomicU64,
    pub refused: AtomicU64,
    /// Fresh snapshots sent to connections that fell behind (or missed an update).
    pub conflations: AtomicU64,
    /// Connections closed as too slow (code 1008).
    pub slow_closes: AtomicU64,
    /// Public messages put on the ring (book, trades, ticker; none while no one listens).
    pub published: AtomicU64,
}

/// The broadcast rings between the market-data replica and the connections.
#[derive(Debug)]
pub struct WsHub {
    pub(crate) market: broadcast::Sender<MarketMsg>,
    pub(crate) orders: broadcast::Sender<OrderMsg>,
    pub stats: WsStats,
    /// The `stats` channel's samples.
    pub stats_hub: crate::stats::StatsHub,
}

impl WsHub {
    /// Rings of `buffer` messages each.
    pub fn new(buffer: usize) -> WsHub {
        WsHub {
            market: broadcast::channel(buffer.max(1)).0,
            orders: broadcast::channel(buffer.max(1)).0,
            stats: WsStats::default(),
            stats_hub: crate::stats::StatsHub::default(),
        }
    }

    /// Messages the rings hold now (never more than their two capacities).
    pub fn buffered(&self) -> usize {
        self.market.len() + self.orders.len()
    }
}

/// A level as the API writes it: `[price, quantity, orders]`; quantity "0" deletes it.
type LevelJson = (String, String, u32);

fn level(def: &InstrumentDef, price: i64, qty: u64, orders: u32) -> LevelJson {
    (json::price(price, def), qty.to_string(), orders)
}

#[derive(Serialize)]
struct BookJson<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    symbol: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    first_rpt_seq: Option<u64>,
    rpt_seq: u64,
    bids: Vec<LevelJson>,
    asks: Vec<LevelJson>,
    /// The journal time of the last change included, ns since the epoch.
    time_ns: u64,
}

#[derive(Serialize)]
struct TradeJson<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    symbol: &'a str,
    rpt_seq: u64,
    trade_id: u64,
    price: String,
    quantity: String,
    aggressor_side: &'static str,
    time_ns: u64,
}

#[derive(Serialize)]
struct BestJson {
    price: String,
    quantity: String,
}

#[derive(Serialize)]
struct LastTradeJson {
    price: String,
    quantity: String,
    aggressor_side: &'static str,
    trade_id: u64,
}

#[derive(Serialize)]
struct TickerJson<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    symbol: &'a str,
    rpt_seq: u64,
    best_bid: Option<BestJson>,
    best_ask: Option<BestJson>,
    last_trade: Option<LastTradeJson>,
    /// open, halted, closed, preopen or preclose.
    status: &'static str,
    /// In a call auction: the uncross price and quantity now (null: none).
    indicative: Option<json::IndicativeJson>,
    time_ns: u64,
}

fn text(v: &impl Serialize) -> Text {
    Text::from(serde_json::to_vec(v).expect("plain data serializes"))
}

/// An instrument's ticker: best bid and ask (price, quantity), last trade, trading status and
/// indicative uncross (price, quantity).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ticker {
    bid: Option<(i64, u64)>,
    ask: Option<(i64, u64)>,
    last: Option<TradeEntry>,
    status: exchange::InstrumentStatus,
    indicative: Option<(i64, u64)>,
}

impl Ticker {
    #[cfg(feature = "server")]
    fn of_view(v: &BookView) -> Ticker {
        Ticker {
            bid: v.bids.first().map(|l| (l.0, l.1)),
            ask: v.asks.first().map(|l| (l.0, l.1)),
            last: v.last_trade,
            status: v.status,
            indicative: v.indicative,
        }
    }

    fn json(&self, def: &InstrumentDef, rpt_seq: u64, time_ns: u64) -> Text {
        let best = |b: Option<(i64, u64)>| {
            b.map(|(p, q)| BestJson {
                price: json::price(p, def),
                quantity: q.to_string(),
            })
        };
        text(&TickerJson {
            kind: "ticker",
            symbol: def.symbol.as_str(),
            rpt_seq,
            best_bid: best(self.bid),
            best_ask: best(self.ask),
            last_trade: self.last.map(|t| LastTradeJson {
                price: json::price(t.price, def),
                quantity: t.qty.to_string(),
                aggressor_side: json::side(t.aggressor),
                trade_id: t.trade_id,
            }),
            status: self.status.as_str(),
            indicative: self.indicative.map(|(p, q)| json::IndicativeJson {
                price: json::price(p, def),
                quantity: q.to_string(),
            }),
            time_ns,
        })
    }
}

/// A `book_snapshot` message of `v` (every level the view keeps).
#[cfg(feature = "server")]
pub(crate) fn snapshot_json(def: &InstrumentDef, v: &BookView) -> Text {
    let side = |ls: &[crate::market::LevelView]| -> Vec<LevelJson> {
        ls.iter().map(|l| level(def, l.0, l.1, l.2)).collect()
    };
    text(&BookJson {
        kind: "book_snapshot",
        symbol: def.symbol.as_str(),
        first_rpt_seq: None,
        rpt_seq: v.rpt_seq,
        bids: side(&v.bids),
        asks: side(&v.asks),
        time_ns: v.updated_ns,
    })
}

/// A `ticker` message of `v`.
#[cfg(feature = "server")]
pub(crate) fn ticker_json(def: &InstrumentDef, v: &BookView) -> Text {
    Ticker::of_view(v).json(def, v.rpt_seq, v.updated_ns)
}

/// The market-data replica's half: turns each batch's feed entries into messages.
pub struct WsPublisher {
    cfg: Arc<ApiConfig>,
    view: Arc<MarketView>,
    /// The batch's entries, in feed order, with their records' journal times.
    entries: Vec<(Entry, u64)>,
    /// By instrument: the ticker last seen (kept while nobody listens, so that "changed"
    /// stays true to what a subscriber's snapshot showed).
    tickers: Vec<Ticker>,
}

impl WsPublisher {
    pub fn new(cfg: Arc<ApiConfig>, view: Arc<MarketView>) -> WsPublisher {
        let tickers = vec![Ticker::default(); cfg.instruments.len()];
        WsPublisher {
            cfg,
            view,
            entries: Vec::with_capacity(1024),
            tickers,
        }
    }

    /// Whether any connection listens for order events (the replica makes them only then).
    pub fn orders_wanted(&self) -> bool {
        self.view.ws().orders.receiver_count() > 0
    }

    /// Takes one feed entry of the batch being applied, made by a record journaled at
    /// `time_ns`.
    #[inline]
    pub fn on_entry(&mut self, e: &Entry, time_ns: u64) {
        self.entries.push((*e, time_ns));
    }

    /// After the batch, once the view has been written: its messages, per instrument in
    /// instrument order (the book update, then its trades, then the ticker if it changed).
    pub fn publish(&mut self, feed: &Feed) {
        if self.entries.is_empty() {
            return;
        }
        let hub = self.view.ws();
        let live = hub.market.receiver_count() > 0;
        // Stable: each instrument's entries stay in RptSeq order.
        self.entries.sort_by_key(|e| e.0.symbol);
        let mut at = 0;
        while at < self.entries.len() {
            let sym = self.entries[at].0.symbol;
            let end = at
                + self.entries[at..]
                    .iter()
                    .take_while(|e| e.0.symbol == sym)
                    .count();
            let run = &self.entries[at..end];
            at = end;
            let (Some(def), Some(seen)) = (
                self.cfg.instruments.get(sym as usize),
                self.tickers.get_mut(sym as usize),
            ) else {
                continue;
            };
            let book = feed.book(sym);
            let now = Ticker {
                bid: book.best(Side::Buy).map(|(p, l)| (p, l.qty)),
                ask: book.best(Side::Sell).map(|(p, l)| (p, l.qty)),
                last: run
                    .iter()
                    .rev()
                    .find_map(|e| match e.0.kind {
                        EntryKind::Trade(t) => Some(t),
                        EntryKind::Level(_) => None,
                    })
                    .or(seen.last),
                status: seen.status,
                indicative: seen.indicative,
            };
            let changed = now != *seen;
            *seen = now;
            if !live {
                continue;
            }
            let (first, last) = (run[0].0.rpt_seq, run[run.len() - 1].0.rpt_seq);
            let time_ns = run[run.len() - 1].1;
            let (mut bids, mut asks) = (Vec::new(), Vec::new());
            for (e, _) in run {
                if let EntryKind::Level(l) = e.kind {
                    let side = if l.side == Side::Buy {
                        &mut bids
                    } else {
                        &mut asks
                    };
                    side.push(level(def, l.price, l.qty, l.orders));
                }
            }
            let symbol = def.symbol.as_str();
            let send = |channel, first_rpt_seq, rpt_seq, ticker_rev, text| {
                hub.stats.published.fetch_add(1, Ordering::Relaxed);
                // No receiver left: nothing to do.
                let _ = hub.market.send(MarketMsg {
                    symbol: sym,
                    channel,
                    first_rpt_seq,
                    rpt_seq,
                    ticker_rev,
                    text,
                });
            };
            let book = text(&BookJson {
                kind: "book",
                symbol,
                first_rpt_seq: Some(first),
                rpt_seq: last,
                bids,
                asks,
                time_ns,
            });
            send(Channel::Book, first, last, 0, book);
            for &(e, ts) in run {
                if let EntryKind::Trade(t) = e.kind {
                    let trade = text(&TradeJson {
                        kind: "trade",
                        symbol,
                        rpt_seq: e.rpt_seq,
                        trade_id: t.trade_id,
                        price: json::price(t.price, def),
                        quantity: t.qty.to_string(),
                        aggressor_side: json::side(t.aggressor),
                        time_ns: ts,
                    });
                    send(Channel::Trades, e.rpt_seq, e.rpt_seq, 0, trade);
                }
            }
            if changed {
                let rev = self.view.ticker_at(sym).1;
                send(
                    Channel::Ticker,
                    last,
                    last,
                    rev,
                    now.json(def, last, time_ns),
                );
            }
        }
        self.entries.clear();
    }

    /// Instrument `sym`'s trading status changed (at journal time `time_ns`): its ticker says
    /// so, after the batch's book and trades (`publish` first).
    pub fn on_status(
        &mut self,
        feed: &Feed,
        sym: u32,
        status: exchange::InstrumentStatus,
        time_ns: u64,
    ) {
        let (Some(def), Some(seen)) = (
            self.cfg.instruments.get(sym as usize),
            self.tickers.get_mut(sym as usize),
        ) else {
            return;
        };
        if seen.status == status {
            return;
        }
        seen.status = status;
        let t = *seen;
        self.send_ticker(feed, sym, def, t, time_ns);
    }

    /// After the batch (and `on_status`): each instrument's indicative uncross as
    /// `indicative(symbol)` gives it now (`(price, qty)`, qty 0: none, as
    /// `exchange::Exchange::indicative`); one that changed is written into the view and its
    /// ticker says so.
    pub fn on_indicatives(
        &mut self,
        feed: &Feed,
        indicative: impl Fn(u32) -> (i64, u64),
        time_ns: u64,
    ) {
        for sym in 0..self.tickers.len() as u32 {
            let now = Some(indicative(sym)).filter(|&(_, q)| q != 0);
            let seen = &mut self.tickers[sym as usize];
            if seen.indicative == now {
                continue;
            }
            seen.indicative = now;
            let t = *seen;
            self.view.set_indicative(sym, now);
            let def = self.cfg.instruments[sym as usize];
            self.send_ticker(feed, sym, &def, t, time_ns);
        }
    }

    /// Sends ticker `t` of instrument `sym` (changed without a feed entry: its view's
    /// `ticker_rev` orders it after the ticker of the same RptSeq).
    fn send_ticker(&self, feed: &Feed, sym: u32, def: &InstrumentDef, t: Ticker, time_ns: u64) {
        let hub = self.view.ws();
        if hub.market.receiver_count() == 0 {
            return;
        }
        let rpt_seq = feed.rpt_seq(sym);
        let ticker_rev = self.view.ticker_at(sym).1;
        hub.stats.published.fetch_add(1, Ordering::Relaxed);
        let _ = hub.market.send(MarketMsg {
            symbol: sym,
            channel: Channel::Ticker,
            first_rpt_seq: rpt_seq,
            rpt_seq,
            ticker_rev,
            text: t.json(def, rpt_seq, time_ns),
        });
    }

    /// Moves the replica's order events (`ApiOutbox::events`) to the connections; `events`
    /// is left empty.
    pub fn publish_orders(&mut self, events: &mut Vec<(u16, Vec<u8>)>) {
        let hub = self.view.ws();
        for (key, body) in events.drain(..) {
            if std::str::from_utf8(&body).is_ok() {
                let text = Text::from(body);
                let _ = hub.orders.send(OrderMsg { key, text });
            }
        }
    }
}

#[cfg(test)]
mod tests;
