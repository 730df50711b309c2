//! A market-data subscriber over the REST API's WebSocket (`/ws`), for `rialto bench md
//! --transport ws`: subscribes to `book` and `trades` of every instrument and stamps each
//! trade with the time the first message that reflects it was read.
//!
//! Role: the WebSocket counterpart of [`MdClient`](crate::md::MdClient) in `bench md`: one
//! [`TradeStamp`] per trade read, for the same matching to the bots' fills (`md_bench`). The
//! WebSocket protocol is tungstenite's (the version axum serves `/ws` with), over a
//! non-blocking socket that the owner's `mio::Poll` watches; reads carry the kernel's receive
//! time (`rx`).
//!
//! How a trade is matched to its update: the server publishes, per batch and instrument, one
//! `book` update whose `first_rpt_seq..rpt_seq` covers every feed entry of the batch, trades
//! included, then one `trade` per trade (`rpt_seq`, `trade_id`, price, quantity), and a
//! connection forwards them in that order (or a `book_snapshot` instead of an update it missed,
//! whose `rpt_seq` covers everything before). So the first message that reflects a trade is
//! the first book message of its instrument whose `rpt_seq` is at least the trade's, read
//! before the trade itself: the subscriber keeps each instrument's book messages (RptSeq, read
//! time, arrival stamp) until a trade passes them, and stamps a trade with the first one that
//! covers it (or, if none did, with the trade message's own times). The trade's id, price and
//! quantity are the trade message's.
//!
//! Never: binds anything; blocks on a read after the handshake; lets a book stream with a
//! gap pass (`first_rpt_seq` must follow the last `rpt_seq`: the connection ends with why).

use crate::md::TradeStamp;
use fix::md::VIEW_PRICE_DECIMALS;
use mio::unix::SourceFd;
use mio::{Interest, Registry, Token};
use serde::Deserialize;
use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};
use tungstenite::protocol::WebSocketConfig;
use tungstenite::{Message, WebSocket};

/// The most one read takes from the socket. tungstenite zero-fills this much before every
/// read, whether or not data came (snapview/tungstenite-rs#547): its 128 KiB default costs
/// microseconds a message at these rates; 16 KiB still holds about a hundred messages.
const READ_CHUNK: usize = 16 << 10;

/// The socket under the WebSocket: remembers when its last read returned and the kernel's
/// receive stamp of that read.
struct Stamped {
    tcp: TcpStream,
    /// Reads go through `rx::recv` (non-blocking, stamped); off during the handshake.
    stamp: bool,
    base: Instant,
    /// The last read: ns after `base`, and the kernel's stamp (ns since the epoch, 0: none).
    read_ns: u64,
    arrived_ns: u64,
}

impl Read for Stamped {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let (n, arrived) = if self.stamp {
            crate::rx::recv(self.tcp.as_raw_fd(), buf)?
        } else {
            (self.tcp.read(buf)?, None)
        };
        if n > 0 {
            self.read_ns = self.base.elapsed().as_nanos() as u64;
            self.arrived_ns = arrived.unwrap_or(0);
        }
        Ok(n)
    }
}

impl Write for Stamped {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.tcp.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.tcp.flush()
    }
}

/// A book message read: its RptSeq and when it was read and arrived.
#[derive(Clone, Copy, Debug)]
struct BookSeen {
    rpt_seq: u64,
    read_ns: u64,
    arrived_ns: u64,
}

/// The fields of the server's messages this subscriber reads (`http_gateway::ws`); the rest
/// (levels) are skipped.
#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    #[serde(default, borrow)]
    symbol: Option<&'a str>,
    #[serde(default)]
    first_rpt_seq: Option<u64>,
    #[serde(default)]
    rpt_seq: Option<u64>,
    #[serde(default)]
    trade_id: Option<u64>,
    #[serde(default, borrow)]
    price: Option<&'a str>,
    #[serde(default, borrow)]
    quantity: Option<&'a str>,
    #[serde(default, borrow)]
    message: Option<&'a str>,
}

/// One WebSocket subscriber. See the module documentation.
pub struct WsSubscriber {
    ws: WebSocket<Stamped>,
    symbols: Vec<String>,
    /// By instrument: the last book RptSeq (None before the snapshot), the snapshots read.
    book_at: Vec<Option<u64>>,
    snapshots: Vec<u64>,
    /// By instrument: book messages no trade read since has passed, oldest first.
    books: Vec<VecDeque<BookSeen>>,
    /// One per trade read.
    pub stamps: Vec<TradeStamp>,
    /// The lowest trade id read.
    pub first_trade: Option<u64>,
    /// Messages that did not decode (not JSON text, or a field missing).
    pub undecodable: u64,
    /// Messages read (any type).
    pub messages: u64,
    /// Why the server ended the connection (an error message or a close frame's reason).
    pub ended: Option<String>,
}

impl WsSubscriber {
    /// Connects to `ws://<addr>/ws` and subscribes to `trades` and `book` of every one of
    /// `symbols` (blocking, 5 s at most per step); then the socket is non-blocking and its reads
    /// stamped, and stamps count from `base`.
    pub fn connect(addr: SocketAddr, symbols: &[&str], base: Instant) -> Result<Self, String> {
        let tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(5))
            .map_err(|e| format!("connect: {e}"))?;
        let step = Some(Duration::from_secs(5));
        let set = tcp
            .set_nodelay(true)
            .and_then(|()| tcp.set_read_timeout(step))
            .and_then(|()| tcp.set_write_timeout(step));
        set.map_err(|e| e.to_string())?;
        let stream = Stamped {
            tcp,
            stamp: false,
            base,
            read_ns: 0,
            arrived_ns: 0,
        };
        let config = WebSocketConfig::default().read_buffer_size(READ_CHUNK);
        let (mut ws, _) = tungstenite::client::client_with_config(
            format!("ws://{addr}/ws"),
            stream,
            Some(config),
        )
        .map_err(|e| format!("WebSocket handshake: {e}"))?;
        for s in symbols {
            // Trades first: a trade is never missed while its book is already streaming.
            for channel in ["trades", "book"] {
                let text = serde_json::json!({"op": "subscribe", "channel": channel, "symbol": s});
                ws.send(Message::text(text.to_string()))
                    .map_err(|e| format!("subscribe to {channel} {s}: {e}"))?;
            }
        }
        let tcp = &ws.get_ref().tcp;
        tcp.set_nonblocking(true).map_err(|e| e.to_string())?;
        crate::rx::enable(tcp.as_raw_fd())
            .map_err(|e| format!("receive timestamps (SO_TIMESTAMPNS): {e}"))?;
        ws.get_mut().stamp = true;
        let n = symbols.len();
        Ok(WsSubscriber {
            ws,
            symbols: symbols.iter().map(|s| s.to_string()).collect(),
            book_at: vec![None; n],
            snapshots: vec![0; n],
            books: (0..n).map(|_| VecDeque::with_capacity(256)).collect(),
            stamps: Vec::with_capacity(1 << 18),
            first_trade: None,
            undecodable: 0,
            messages: 0,
            ended: None,
        })
    }

    /// Watches the socket for reads on `registry` (edge-triggered: [`Self::pump`] reads all).
    pub fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        let fd = self.ws.get_ref().tcp.as_raw_fd();
        registry.register(&mut SourceFd(&fd), token, Interest::READABLE)
    }

    pub fn deregister(&mut self, registry: &Registry) {
        let fd = self.ws.get_ref().tcp.as_raw_fd();
        let _ = registry.deregister(&mut SourceFd(&fd));
    }

    /// Every instrument's first snapshot has arrived.
    pub fn synced(&self) -> bool {
        self.snapshots.iter().all(|&n| n > 0)
    }

    /// Snapshots after each instrument's first: it fell behind and was conflated.
    pub fn conflations(&self) -> u64 {
        self.snapshots.iter().map(|n| n.saturating_sub(1)).sum()
    }

    /// Reads and handles every message that has arrived. `Err`: the connection is over (the
    /// server closed it, or its stream broke), and why.
    pub fn pump(&mut self) -> Result<(), String> {
        loop {
            match self.ws.read() {
                Ok(Message::Text(t)) => {
                    self.messages += 1;
                    self.on_text(t.as_bytes())?;
                }
                Ok(Message::Close(frame)) => {
                    self.messages += 1;
                    let why = frame.map_or_else(
                        || "closed without a reason".to_string(),
                        |f| format!("closed ({}): {}", u16::from(f.code), f.reason),
                    );
                    self.ended.get_or_insert(why);
                }
                Ok(Message::Binary(_)) => {
                    self.messages += 1;
                    self.undecodable += 1;
                }
                // Pings are answered by tungstenite.
                Ok(_) => self.messages += 1,
                Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Ok(())
                }
                Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed) => {
                    let why = self.ended.clone();
                    return Err(why.unwrap_or_else(|| "connection closed".into()));
                }
                Err(e) => {
                    let why = self.ended.clone();
                    return Err(why.unwrap_or_else(|| e.to_string()));
                }
            }
        }
    }

    /// One JSON message; `Err` ends the connection (the server refused a subscription, or a
    /// book stream has a gap).
    fn on_text(&mut self, text: &[u8]) -> Result<(), String> {
        let Ok(m) = serde_json::from_slice::<Msg<'_>>(text) else {
            self.undecodable += 1;
            return Ok(());
        };
        let (read_ns, arrived_ns) = {
            let s = self.ws.get_ref();
            (s.read_ns, s.arrived_ns)
        };
        let sym = m
            .symbol
            .and_then(|s| self.symbols.iter().position(|x| x == s));
        match (m.kind, sym, m.rpt_seq) {
            ("book_snapshot", Some(i), Some(r)) => {
                self.snapshots[i] += 1;
                self.book_at[i] = Some(r);
                self.books[i].push_back(BookSeen {
                    rpt_seq: r,
                    read_ns,
                    arrived_ns,
                });
            }
            ("book", Some(i), Some(r)) => {
                let first = m.first_rpt_seq.unwrap_or(0);
                match self.book_at[i] {
                    Some(at) if first == at + 1 && r >= first => {}
                    at => {
                        let why = format!(
                            "book {}: an update of RptSeq {first}..{r} after {at:?}",
                            self.symbols[i]
                        );
                        self.ended = Some(why.clone());
                        return Err(why);
                    }
                }
                self.book_at[i] = Some(r);
                self.books[i].push_back(BookSeen {
                    rpt_seq: r,
                    read_ns,
                    arrived_ns,
                });
            }
            ("trade", Some(i), Some(r)) => {
                let (Some(id), Some(price), Some(size)) = (
                    m.trade_id,
                    m.price
                        .and_then(|p| fix::parse_price(p.as_bytes(), VIEW_PRICE_DECIMALS, 1).ok()),
                    m.quantity.and_then(|q| q.parse::<u64>().ok()),
                ) else {
                    self.undecodable += 1;
                    return Ok(());
                };
                let books = &mut self.books[i];
                while books.front().is_some_and(|b| b.rpt_seq < r) {
                    books.pop_front();
                }
                let seen = books.front().copied().unwrap_or(BookSeen {
                    rpt_seq: r,
                    read_ns,
                    arrived_ns,
                });
                self.stamps.push(TradeStamp {
                    id,
                    read_ns: seen.read_ns,
                    arrived_ns: seen.arrived_ns,
                    price,
                    size,
                });
                self.first_trade = Some(self.first_trade.map_or(id, |f| f.min(id)));
            }
            ("error", _, _) => {
                let why = format!("the server said: {}", m.message.unwrap_or("an error"));
                self.ended = Some(why.clone());
                return Err(why);
            }
            ("book_snapshot" | "book" | "trade", _, _) => self.undecodable += 1,
            // Acks.
            _ => {}
        }
        Ok(())
    }
}
