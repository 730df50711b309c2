//! A market-data subscriber: a FIX client of an exchange's market-data port that logs on,
//! subscribes, and rebuilds the market from W and X alone (`fix::md::MdView`).
//!
//! Role: the one subscriber of `rialto book` (the live ladder), `rialto demo` (its top of book
//! comes from the feed) and `rialto bench md` (many subscribers on one thread, each trade
//! entry stamped with when it was read). Non-blocking: the owner registers the socket with its
//! own `mio::Poll` (or calls [`MdClient::wait`]) and calls [`MdClient::pump`] when it is
//! readable.
//!
//! Never: binds anything; blocks on a read; keeps more than `trades_max` trades per symbol
//! (the benchmark's stamps excepted, which it asks for).

use fix::md::{MdView, SymbolView, VIEW_PRICE_DECIMALS};
use fix::{frame, resync, Decoder, Encoder, FixVersion, Header, Limits, TimePrecision};
use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// HeartBtInt the subscriber asks for, seconds.
const HEARTBEAT_S: u64 = 30;

/// A subscriber reads snapshots of deep books: messages up to 1 MiB and 64 K fields.
const LIMITS: Limits = Limits {
    msg_len_max: 1 << 20,
    fields_max: 1 << 16,
};

/// One trade entry as a benchmark's subscriber read it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TradeStamp {
    /// MDEntryID: the trade id.
    pub id: u64,
    /// When it was read, ns after the stamps' base.
    pub read_ns: u64,
    /// When it reached the socket: the kernel's receive time (ns since the Unix epoch) of the
    /// read that completed its message (`stamp_arrivals`; 0 without a stamp).
    pub arrived_ns: u64,
    /// MDEntryPx in units of 10^-9, and MDEntrySize.
    pub price: i64,
    pub size: u64,
}

/// One subscriber connection. See the module documentation.
pub struct MdClient {
    stream: TcpStream,
    sender: String,
    target: String,
    version: FixVersion,
    out_seq: u64,
    rbuf: Vec<u8>,
    decoder: Decoder,
    enc: Encoder,
    last_sent: Instant,
    /// The market as rebuilt so far.
    pub view: MdView,
    pub logged_on: bool,
    /// Why the exchange ended the session (a Logout's Text), once it did.
    pub ended: Option<String>,
    /// Texts of MarketDataRequestRejects, session Rejects and BusinessMessageRejects.
    pub rejects: Vec<String>,
    /// W messages after the first of each subscription: fresh snapshots of a subscriber that
    /// fell behind (conflation).
    pub snapshots_after_first: u64,
    first_snapshots: usize,
    snapshots_seen: usize,
    /// When set: each trade entry read, its time in ns after the `Instant`.
    pub trade_stamps: Option<(Instant, Vec<TradeStamp>)>,
    /// Messages that framed but did not decode (counted, never silently dropped).
    pub undecodable: u64,
    /// Messages read (any type).
    pub messages: u64,
    /// The lowest and highest MDEntryID of the trade entries stamped.
    pub trade_ids: Option<(u64, u64)>,
    /// Rebuild `view` from what arrives (default true; a benchmark's subscriber that only
    /// stamps trades turns it off).
    pub keep_view: bool,
    /// `wait`'s own poll (made on its first call).
    own_poll: Option<(Poll, Events)>,
    /// Reads carry the kernel's receive time (`stamp_arrivals`).
    stamped: bool,
}

impl MdClient {
    /// Connects to `addr` as `sender` (to `target`) and sends Logon with ResetSeqNumFlag=Y
    /// (market-data sessions start again at 1 on every logon). `trades_max`: trades kept per
    /// symbol in the view (0: all).
    pub fn connect(
        addr: SocketAddr,
        sender: &str,
        target: &str,
        trades_max: usize,
    ) -> io::Result<MdClient> {
        let std = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(5))?;
        std.set_nodelay(true)?;
        std.set_nonblocking(true)?;
        let mut c = MdClient {
            stream: TcpStream::from_std(std),
            sender: sender.to_string(),
            target: target.to_string(),
            version: FixVersion::Fix44,
            out_seq: 1,
            rbuf: Vec::with_capacity(1 << 16),
            decoder: Decoder::new(LIMITS),
            enc: Encoder::default(),
            last_sent: Instant::now(),
            view: MdView::new(trades_max),
            logged_on: false,
            ended: None,
            rejects: Vec::new(),
            snapshots_after_first: 0,
            first_snapshots: 0,
            snapshots_seen: 0,
            trade_stamps: None,
            undecodable: 0,
            messages: 0,
            trade_ids: None,
            keep_view: true,
            own_poll: None,
            stamped: false,
        };
        let hb = HEARTBEAT_S.to_string();
        c.send("A", &[(98, "0"), (108, &hb), (141, "Y")])?;
        Ok(c)
    }

    /// Has the kernel stamp what arrives (`rx`), so trade entries carry their arrival time as
    /// well as their read time: the first does not depend on how busy the reader is.
    pub fn stamp_arrivals(&mut self) -> io::Result<()> {
        crate::rx::enable(self.stream.as_raw_fd())?;
        self.stamped = true;
        Ok(())
    }

    /// The socket, to register with a `mio::Poll`.
    pub fn stream_mut(&mut self) -> &mut TcpStream {
        &mut self.stream
    }

    /// Subscribes to `symbols` (bids, offers and trades; `depth` 0: the full book), as
    /// MDReqID `id`. Expects one snapshot per symbol first.
    pub fn subscribe(&mut self, id: &str, symbols: &[&str], depth: u32) -> io::Result<()> {
        let depth = depth.to_string();
        let n = symbols.len().to_string();
        let mut body: Vec<(u32, &str)> = vec![
            (262, id),
            (263, "1"),
            (264, &depth),
            (265, "1"),
            (267, "3"),
            (269, "0"),
            (269, "1"),
            (269, "2"),
            (146, &n),
        ];
        for s in symbols {
            body.push((55, s));
        }
        self.first_snapshots += symbols.len();
        self.send("V", &body)
    }

    /// Sends one message with the standard header.
    pub fn send(&mut self, msg_type: &str, body: &[(u32, &str)]) -> io::Result<()> {
        let now = crate::driver::wall_ns();
        self.enc.begin(msg_type.as_bytes());
        self.enc.header(&Header {
            sender_comp_id: self.sender.as_bytes(),
            target_comp_id: self.target.as_bytes(),
            msg_seq_num: self.out_seq,
            sending_time_ns: now,
            poss_dup: false,
            orig_sending_time: None,
            time_precision: TimePrecision::Millis,
        });
        self.out_seq += 1;
        for (tag, value) in body {
            self.enc.field(*tag, value.as_bytes());
        }
        let bytes = self.enc.finish(self.version);
        let mut at = 0;
        let deadline = Instant::now() + Duration::from_secs(5);
        while at < bytes.len() {
            match self.stream.write(&bytes[at..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => at += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if Instant::now() > deadline {
                        return Err(io::ErrorKind::TimedOut.into());
                    }
                    std::thread::yield_now();
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.last_sent = Instant::now();
        Ok(())
    }

    /// True once every subscription's first snapshots arrived.
    pub fn synced(&self) -> bool {
        self.snapshots_seen >= self.first_snapshots
    }

    /// Reads what the socket has, handles every complete message, and sends a Heartbeat if
    /// nothing was sent for HeartBtInt. Returns the messages handled; `Err` when the
    /// connection is gone.
    pub fn pump(&mut self) -> io::Result<usize> {
        let mut tmp = [0u8; 1 << 16];
        let mut closed = false;
        let mut handled = 0;
        // Each read's messages are handled before the next read, with its stamps.
        loop {
            let got = if self.stamped {
                crate::rx::recv(self.stream.as_raw_fd(), &mut tmp)
            } else {
                self.stream.read(&mut tmp).map(|n| (n, None))
            };
            match got {
                Ok((0, _)) => {
                    closed = true;
                    break;
                }
                Ok((n, arrived)) => {
                    self.rbuf.extend_from_slice(&tmp[..n]);
                    handled += self.handle_buffered(arrived.unwrap_or(0))?;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        if self.last_sent.elapsed() >= Duration::from_secs(HEARTBEAT_S) {
            self.send("0", &[])?;
        }
        if closed {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                match &self.ended {
                    Some(t) => format!("the exchange ended the session: {t}"),
                    None => "connection closed by the exchange".to_string(),
                },
            ));
        }
        Ok(handled)
    }

    /// Handles every complete message in the read buffer; `arrived_ns` is the kernel's stamp
    /// of the read that brought the last bytes (0: none). Returns the messages handled.
    fn handle_buffered(&mut self, arrived_ns: u64) -> io::Result<usize> {
        let read_ns = self
            .trade_stamps
            .as_ref()
            .map(|(base, _)| (base.elapsed().as_nanos() as u64, arrived_ns));
        let mut handled = 0;
        let mut at = 0;
        // Messages are handled in place: the buffer is lent out meanwhile.
        let rbuf = std::mem::take(&mut self.rbuf);
        let mut result = Ok(());
        while at < rbuf.len() {
            let rest = &rbuf[at..];
            match frame(rest, LIMITS.msg_len_max) {
                Ok(None) => break,
                Err(_) => {
                    self.undecodable += 1;
                    at += resync(rest).max(1)
                }
                Ok(Some(len)) => {
                    at += len;
                    handled += 1;
                    result = self.on_message(&rest[..len], read_ns);
                    if result.is_err() {
                        break;
                    }
                }
            }
        }
        self.rbuf = rbuf;
        self.rbuf.drain(..at);
        result.map(|()| handled)
    }

    /// `read`: when the message was read (ns after the stamps' base) and when it arrived
    /// (kernel stamp, 0: none), if trades are stamped.
    fn on_message(&mut self, raw: &[u8], read: Option<(u64, u64)>) -> io::Result<()> {
        let msg = match self.decoder.decode_framed(raw) {
            Ok(m) => m,
            Err(_) => {
                self.undecodable += 1;
                return Ok(());
            }
        };
        self.messages += 1;
        let text = |tag| String::from_utf8_lossy(msg.get(tag).unwrap_or(b"")).into_owned();
        match msg.msg_type() {
            b"A" => self.logged_on = true,
            b"1" => {
                let id = text(112);
                self.send("0", &[(112, &id)])?;
            }
            b"5" => self.ended = Some(text(58)),
            b"3" | b"j" | b"Y" => self.rejects.push(text(58)),
            b"W" => {
                if self.snapshots_seen >= self.first_snapshots {
                    self.snapshots_after_first += 1;
                }
                self.snapshots_seen += 1;
                if self.keep_view {
                    self.view
                        .apply(&msg)
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                }
            }
            b"X" => {
                if let (Some((ns, arrived)), Some((_, stamps))) = (read, self.trade_stamps.as_mut())
                {
                    let ids = &mut self.trade_ids;
                    fix::md::read_entries(&msg, |_, e| {
                        if let (b'2', Some(id)) = (e.entry_type, e.id) {
                            let price = fix::parse_price(e.price, VIEW_PRICE_DECIMALS, 1)
                                .unwrap_or(i64::MIN);
                            stamps.push(TradeStamp {
                                id,
                                read_ns: ns,
                                arrived_ns: arrived,
                                price,
                                size: e.size,
                            });
                            *ids = Some(match *ids {
                                None => (id, id),
                                Some((lo, hi)) => (lo.min(id), hi.max(id)),
                            });
                        }
                    })
                    .map_err(|t| io::Error::new(io::ErrorKind::InvalidData, format!("tag {t}")))?;
                }
                if self.keep_view {
                    self.view
                        .apply(&msg)
                        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Waits (at most `timeout`) until the socket is readable, then pumps it. (A client
    /// registered with the owner's own poll does not call this.)
    pub fn wait(&mut self, timeout: Duration) -> io::Result<usize> {
        if self.own_poll.is_none() {
            let poll = Poll::new()?;
            poll.registry()
                .register(&mut self.stream, Token(0), Interest::READABLE)?;
            self.own_poll = Some((poll, Events::with_capacity(4)));
        }
        if let Some((poll, events)) = self.own_poll.as_mut() {
            match poll.poll(events, Some(timeout)) {
                Err(e) if e.kind() != io::ErrorKind::Interrupted => return Err(e),
                _ => {}
            }
        }
        self.pump()
    }
}

/// Text of a view price (units of 10^-9) without trailing zeros.
pub fn px(units: i64) -> String {
    let mut v = Vec::with_capacity(24);
    fix::write_units(&mut v, units, VIEW_PRICE_DECIMALS);
    String::from_utf8_lossy(&v).into_owned()
}

/// The ladder as lines: asks above (best lowest, nearest the middle), bids below.
pub fn ladder(symbol: &str, v: &SymbolView, levels: usize, header: &str) -> Vec<String> {
    let mut lines = vec![header.to_string()];
    lines.push(format!(
        "{symbol}  RptSeq {}   bids {} levels, asks {} levels",
        v.rpt_seq.map_or("-".to_string(), |r| r.to_string()),
        v.bids.len(),
        v.asks.len()
    ));
    let row = |bo: String, bs: String, p: String, a_s: String, ao: String| {
        format!("{bo:>7} {bs:>10} | {p:>12} | {a_s:<10} {ao:<7}")
    };
    let e = String::new;
    lines.push(row(
        "orders".into(),
        "bid size".into(),
        "price".into(),
        "ask size".into(),
        "orders".into(),
    ));
    let asks: Vec<_> = v.asks.iter().take(levels).collect();
    for (p, l) in asks.iter().rev() {
        lines.push(row(
            e(),
            e(),
            px(**p),
            l.size.to_string(),
            l.orders.to_string(),
        ));
    }
    lines.push(row(e(), e(), "--------".into(), e(), e()));
    for (p, l) in v.bids.iter().rev().take(levels) {
        lines.push(row(
            l.orders.to_string(),
            l.size.to_string(),
            px(*p),
            e(),
            e(),
        ));
    }
    lines.push("last trades (newest first):".to_string());
    if v.trades.is_empty() {
        lines.push("  -".to_string());
    }
    for t in v.trades.iter().rev().take(5) {
        let side = match t.aggressor {
            Some(b'1') => " buyer aggressed",
            Some(b'2') => " seller aggressed",
            _ => "",
        };
        lines.push(format!(
            "  {} x {}{}{side}",
            px(t.price),
            t.size,
            t.id.map_or(String::new(), |i| format!("  #{i}"))
        ));
    }
    lines
}
