//! The market-data publisher: a journal follower with its own replica, feed and sockets.
//!
//! Role: the `market-data` thread. It follows the journal with a replica `Node` whose engine
//! builds level events (`Follower::follow_market_to`), turns each record's trades and level
//! changes into feed entries (`market_data::Feed`: the book by level and RptSeq per
//! instrument), and serves them over FIX on its own port through `fix_gateway::md::MdEdge`.
//! With the REST API on, after each batch it writes the public view of the touched books
//! (`http_gateway::market::MarketView`), then publishes the batch's WebSocket updates and the
//! API keys' order events (`http_gateway::ws::WsPublisher`).
//! The event loop only publishes its watermark (`Counters::last_seq`) and, if this thread is
//! parked, wakes it after it has written its own output.
//!
//! Never: touches the order path's memory or sockets, reads past the watermark, lets one
//! subscriber's unread output grow without bound: past `conflate_bytes` unread the connection
//! gets no updates and, once it has read what was queued, fresh snapshots (conflation); past
//! `logout_bytes`, or behind for `behind_logout_ms`, it is logged out ("slow consumer"). Nor
//! competes with the order path for a core: it runs at nice `market_data.nice` (10), and when
//! it falls `conflate_records` behind the journal the whole feed conflates (records applied
//! without updates, then fresh snapshots).
//!
//! Invariants: the replica starts from record 1 and applies every record once, in order, so
//! an instrument's RptSeq is the number of its entries since the journal began; after a
//! restart it continues. A subscription's snapshot is taken at the replica's position, and
//! the entries after it follow.

use crate::config::{Config, MarketDataConfig};
use crate::counters::{now_ns, Counters, Logger};
use crate::error::ServerError;
use crate::follower::{Follower, FOLLOW_SLICE};
use crate::node::Node;
use crate::transport::write_until_blocked;
use exchange::Backing;
use fix_gateway::md::{MdEdge, MdLimits};
use fix_gateway::{ConnId, Outbox};
use http_gateway::ws::WsPublisher;
use journal::JournalDir;
use market_data::Feed;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use std::collections::HashMap;
use std::io::{self, Read};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

mod stages;
use stages::{BatchTimes, Stages};

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
/// Records applied between two looks at the sockets while catching up.
const CATCH_UP_SLICE: u64 = 4 * FOLLOW_SLICE;
/// Heartbeats and timeouts are checked this often.
const TICK: Duration = Duration::from_millis(100);
/// Reads of one connection per wake-up (64 KiB each) before the others and the feed go on.
const READS_PER_WAKE: usize = 4;
/// A closing connection whose peer does not read the rest is dropped after this long.
const CLOSING_GRACE: Duration = Duration::from_secs(5);

/// What the market-data thread reports.
#[derive(Default)]
pub struct MdCounters {
    /// The last record the market-data replica has applied.
    pub applied_seq: AtomicU64,
    pub sessions: AtomicU64,
    pub subscriptions: AtomicU64,
    /// FIX messages and entries sent (snapshots and incrementals).
    pub messages: AtomicU64,
    pub entries: AtomicU64,
    pub conflations: AtomicU64,
    pub slow_logouts: AtomicU64,
    /// True while the thread waits in `epoll_wait` for a wake-up.
    pub parked: AtomicBool,
    /// When the loop published its first batch since the publisher last looked (ns after
    /// `MdWake::base`, plus one; 0: none since), for the publisher's own timing (`stages`).
    pub published_ns: AtomicU64,
}

/// The event loop's side: publish the watermark, then wake the publisher if it sleeps.
#[derive(Clone)]
pub struct MdWake {
    pub counters: Arc<MdCounters>,
    pub waker: Arc<Waker>,
    /// The origin of `MdCounters::published_ns`.
    pub base: Instant,
}

impl MdWake {
    /// After the loop published a batch: one atomic load when the publisher is busy, a wake-up
    /// (an eventfd write) when it is parked.
    #[inline]
    pub fn poke(&self) {
        // A clock read only for the first batch the publisher has not looked at.
        if self.counters.published_ns.load(Ordering::Relaxed) == 0 {
            let t = self.base.elapsed().as_nanos() as u64 + 1;
            self.counters.published_ns.store(t, Ordering::Relaxed);
        }
        // Pairs with the publisher's fence between its `parked` store and its watermark load:
        // one of the two sees the other's store, so no batch is left asleep.
        std::sync::atomic::fence(Ordering::SeqCst);
        if self.counters.parked.load(Ordering::Relaxed)
            && self.counters.parked.swap(false, Ordering::AcqRel)
        {
            let _ = self.waker.wake();
        }
    }
}

struct MdConn {
    stream: TcpStream,
    rbuf: Vec<u8>,
    wbuf: Vec<u8>,
    closing: bool,
    want_write: bool,
    /// Since when its unread output has been over `conflate_bytes`.
    behind_since: Option<Instant>,
    /// Readable data may be left (a read was cut at the per-wake budget).
    more: bool,
    /// Since when it has been closing (its peer may never read the rest).
    closing_since: Option<Instant>,
}

/// The running publisher (started by `Server::start`).
pub struct MdPublisher {
    pub addr: SocketAddr,
    pub counters: Arc<MdCounters>,
    pub(crate) wake: MdWake,
    handle: Option<JoinHandle<Result<(), ServerError>>>,
}

impl MdPublisher {
    /// Binds `cfg.market_data_listen()` and starts the thread; it follows `source` up to `watermark`.
    pub fn start(
        cfg: &Config,
        md: &MarketDataConfig,
        links: MdLinks,
    ) -> Result<MdPublisher, ServerError> {
        let MdLinks {
            auth,
            source,
            watermark,
            stop,
            log,
            market,
        } = links;
        let at = cfg.market_data_listen().expect("market data is configured");
        let listener = TcpListener::bind(at)
            .map_err(|e| ServerError(format!("cannot listen for market data on {at}: {e}")))?;
        let addr = listener
            .local_addr()
            .map_err(|e| ServerError(e.to_string()))?;
        let poll = Poll::new().map_err(|e| ServerError(e.to_string()))?;
        let waker =
            Arc::new(Waker::new(poll.registry(), WAKER).map_err(|e| ServerError(e.to_string()))?);
        let counters = Arc::new(MdCounters::default());
        let fcfg = Arc::new(cfg.fix_config());
        let mut edge = MdEdge::new(
            fcfg,
            MdLimits {
                subscriptions_max: md.subscriptions_max,
                depth_max: md.depth_max,
                resend_store_max: md.resend_store_max,
            },
        );
        // Verified on this thread (off the order path), throttled with the order-entry port.
        edge.set_logon_check(Box::new(move |peer, session, logon| {
            auth.check_now(peer, session, logon)
        }));
        let mut node = Node::new(cfg, Backing::Lazy);
        node.set_replaying(true);
        let ws = market
            .as_ref()
            .map(|m| WsPublisher::new(Arc::new(cfg.api_config()), m.clone()));
        let base = Instant::now();
        let t = MdThread {
            md: *md,
            follower: Follower::new(node, source),
            feed: Feed::new(cfg.instruments.len()),
            edge,
            poll,
            listener,
            conns: HashMap::new(),
            next_conn: 2,
            out: Outbox::default(),
            scratch: vec![0u8; 64 << 10].into_boxed_slice(),
            watermark,
            stop,
            counters: counters.clone(),
            log,
            base,
            stages: Stages::new(),
            batch: None,
            market,
            ws,
            touched: vec![None; cfg.instruments.len()],
            last_trades: vec![None; cfg.instruments.len()],
            statuses: vec![exchange::InstrumentStatus::Open; cfg.instruments.len()],
            status_changes: 0,
        };
        let handle = std::thread::Builder::new()
            .name("market-data".into())
            .spawn(move || t.run())
            .map_err(|e| ServerError(e.to_string()))?;
        Ok(MdPublisher {
            addr,
            wake: MdWake {
                counters: counters.clone(),
                waker: waker.clone(),
                base,
            },
            counters,
            handle: Some(handle),
        })
    }

    /// Waits for the thread (after the server's stop flag is set).
    pub fn join(mut self) -> Result<(), ServerError> {
        let _ = self.wake.waker.wake();
        match self.handle.take().map(|h| h.join()) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(ServerError("market-data thread panicked".into())),
            None => Ok(()),
        }
    }
}

/// What the publisher shares with the rest of the server.
pub struct MdLinks {
    /// Checks Logons (with the order-entry port's throttle).
    pub auth: Arc<crate::auth::AuthCheck>,
    pub source: JournalDir,
    /// The loop's applied record: how far to follow.
    pub watermark: Arc<Counters>,
    pub stop: Arc<AtomicBool>,
    pub log: Logger,
    /// The REST API's public view of the books, written after each batch (`None`: no HTTP).
    pub market: Option<Arc<http_gateway::market::MarketView>>,
}

struct MdThread {
    md: MarketDataConfig,
    follower: Follower<JournalDir>,
    feed: Feed,
    edge: MdEdge,
    poll: Poll,
    listener: TcpListener,
    conns: HashMap<ConnId, MdConn>,
    next_conn: ConnId,
    out: Outbox,
    scratch: Box<[u8]>,
    watermark: Arc<Counters>,
    stop: Arc<AtomicBool>,
    counters: Arc<MdCounters>,
    log: Logger,
    /// The origin of `MdCounters::published_ns`.
    base: Instant,
    stages: Stages,
    /// The batch `follow` applied, until `publish` has written it.
    batch: Option<BatchTimes>,
    /// The REST API's view of the books (`MdLinks::market`).
    market: Option<Arc<http_gateway::market::MarketView>>,
    /// The WebSocket updates and order events, published after the view is written.
    ws: Option<WsPublisher>,
    /// By instrument: the journal time of its last change in the batch being applied (none:
    /// unchanged), and its last trade in it.
    touched: Vec<Option<u64>>,
    last_trades: Vec<Option<market_data::TradeEntry>>,
    /// By instrument: the trading status last published, and the exchange's count of status
    /// changes then (`follow_statuses`).
    statuses: Vec<exchange::InstrumentStatus>,
    status_changes: u64,
}

impl MdThread {
    fn run(mut self) -> Result<(), ServerError> {
        if self.md.nice > 0 {
            if let Err(e) = sched_idle::set_nice(self.md.nice) {
                (self.log)(&format!(
                    "market data: cannot set the thread's nice value to {}: {e}",
                    self.md.nice
                ));
            }
        }
        self.poll
            .registry()
            .register(&mut self.listener, LISTENER, Interest::READABLE)
            .map_err(|e| ServerError(e.to_string()))?;
        let mut events = Events::with_capacity(256);
        let mut last_tick = Instant::now();
        let started = Instant::now();
        let mut caught_up_logged = false;
        loop {
            if self.stop.load(Ordering::Acquire) {
                self.edge.on_shutdown(now_ns(), &mut self.out);
                self.publish();
                (self.log)(&self.stages.summary());
                return Ok(());
            }
            let behind = match self.follow() {
                Ok(b) => b,
                Err(e) => {
                    (self.log)(&format!("market data stops: {e}"));
                    self.edge.on_shutdown(now_ns(), &mut self.out);
                    self.publish();
                    return Err(e);
                }
            };
            if !behind && !caught_up_logged {
                caught_up_logged = true;
                (self.log)(&format!(
                    "market data: replica at record {} after {:.3}s",
                    self.follower.last_seq(),
                    started.elapsed().as_secs_f64()
                ));
            }
            let written = Instant::now();
            self.publish();
            if let Some(mut b) = self.batch.take() {
                b.write = written.elapsed().as_nanos() as u64;
                self.stages.record(&b);
            }
            self.police();
            let timeout = if behind || self.conns.values().any(|c| c.more) {
                Some(Duration::ZERO)
            } else {
                self.counters.parked.store(true, Ordering::Relaxed);
                // A batch published between the follow and the store above: not asleep.
                std::sync::atomic::fence(Ordering::SeqCst);
                if self.watermark.last_seq.load(Ordering::Acquire) > self.follower.last_seq() {
                    self.counters.parked.store(false, Ordering::SeqCst);
                    Some(Duration::ZERO)
                } else {
                    Some(TICK)
                }
            };
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(ServerError(format!("market data: epoll: {e}")));
                }
            }
            self.counters.parked.store(false, Ordering::Relaxed);
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => self.accept(),
                    WAKER => {}
                    Token(t) => {
                        let id = t as ConnId;
                        if ev.is_readable() || ev.is_read_closed() || ev.is_error() {
                            self.read(id);
                        }
                        if ev.is_writable() {
                            self.flush(id);
                        }
                    }
                }
            }
            let more: Vec<ConnId> = self
                .conns
                .iter()
                .filter(|(_, c)| c.more)
                .map(|(id, _)| *id)
                .collect();
            for id in more {
                self.read(id);
            }
            if last_tick.elapsed() >= TICK {
                last_tick = Instant::now();
                self.edge.on_tick(now_ns(), &mut self.out);
                self.report();
            }
        }
    }

    /// Applies what the loop has committed (a slice of it while far behind). True if more
    /// is waiting.
    fn follow(&mut self) -> Result<bool, ServerError> {
        let looked = Instant::now();
        let published = self.counters.published_ns.swap(0, Ordering::Relaxed);
        let upto = self.watermark.last_seq.load(Ordering::Acquire);
        let from = self.follower.last_seq();
        if upto <= from {
            return Ok(false);
        }
        let to = upto.min(from + CATCH_UP_SLICE);
        // Far behind (start-up, or starved of CPU): conflate until caught up.
        let lag = upto - from;
        if lag >= self.md.conflate_records {
            self.edge
                .set_feed_behind(true, now_ns(), &self.feed, &mut self.out);
        }
        // Order events are made only while a WebSocket connection listens for them.
        let orders = self.ws.as_ref().is_some_and(WsPublisher::orders_wanted);
        self.follower.set_api_events(orders);
        let (feed, edge) = (&mut self.feed, &mut self.edge);
        let (touched, last_trades) = (&mut self.touched, &mut self.last_trades);
        let ws = &mut self.ws;
        self.follower.follow_market_to(
            to,
            |_| true,
            |_, ts, events| {
                for e in events {
                    feed.on_event(e);
                    if let Some(&entry) = feed.entries().first() {
                        feed.clear_entries();
                        edge.on_entry(feed, &entry);
                        if let Some(ws) = ws.as_mut() {
                            ws.on_entry(&entry, ts);
                        }
                        if let Some(t) = touched.get_mut(entry.symbol as usize) {
                            *t = Some(ts);
                            if let market_data::EntryKind::Trade(tr) = entry.kind {
                                last_trades[entry.symbol as usize] = Some(tr);
                            }
                        }
                    }
                }
            },
        )?;
        // The view first: a WebSocket subscriber reads its snapshot there after it has
        // subscribed to the updates, so it misses none.
        self.update_market_view();
        if let Some(ws) = self.ws.as_mut() {
            ws.publish(&self.feed);
            ws.publish_orders(self.follower.api_events());
        }
        self.follow_statuses();
        // The indicative uncross of the books in a call auction: into the FIX feed (MDEntryType
        // Q, unchanged values send nothing), the REST view and the WebSocket tickers.
        {
            let x = &self.follower.node().exchange;
            for s in 0..self.statuses.len() as u32 {
                let (price, qty) = x.indicative(s);
                self.edge.set_indicative(s, price, qty);
            }
            if let Some(ws) = self.ws.as_mut() {
                ws.on_indicatives(&self.feed, |s| x.indicative(s), now_ns());
            }
        }
        self.counters
            .applied_seq
            .store(self.follower.last_seq(), Ordering::Release);
        if self.edge.feed_behind() && upto - to < (self.md.conflate_records / 4).max(1) {
            self.edge
                .set_feed_behind(false, now_ns(), &self.feed, &mut self.out);
        }
        let applied = Instant::now();
        self.edge.flush(now_ns(), &self.feed, &mut self.out);
        let since_base = looked.duration_since(self.base).as_nanos() as u64 + 1;
        self.batch = Some(BatchTimes {
            wait: if published == 0 {
                0
            } else {
                since_base.saturating_sub(published)
            },
            apply: applied.duration_since(looked).as_nanos() as u64,
            encode: applied.elapsed().as_nanos() as u64,
            write: 0,
            records: to - from,
        });
        Ok(to < upto)
    }

    /// The instruments whose trading status the batch changed: told to the FIX sessions that
    /// asked (SecurityStatus), written into the REST view and the WebSocket tickers.
    fn follow_statuses(&mut self) {
        let x = &self.follower.node().exchange;
        let changes = x.status_changes();
        if changes == self.status_changes {
            return;
        }
        self.status_changes = changes;
        let now = now_ns();
        for (s, seen) in self.statuses.iter_mut().enumerate() {
            let status = x.instrument_status(s as u32);
            if status == *seen {
                continue;
            }
            *seen = status;
            self.edge
                .set_instrument_status(s as u32, status, now, &mut self.out);
            if let Some(view) = &self.market {
                view.set_status(s as u32, status);
            }
            if let Some(ws) = self.ws.as_mut() {
                ws.on_status(&self.feed, s as u32, status, now);
            }
        }
    }

    /// Writes the instruments the batch changed into the REST API's view.
    fn update_market_view(&mut self) {
        let Some(view) = &self.market else {
            return;
        };
        for (sym, t) in self.touched.iter_mut().enumerate() {
            if let Some(ts) = t.take() {
                view.update(
                    sym as u32,
                    self.feed.book(sym as u32),
                    self.feed.rpt_seq(sym as u32),
                    self.last_trades[sym].take(),
                    ts,
                );
            }
        }
    }

    /// Moves the edge's output to the connections and writes it.
    fn publish(&mut self) {
        if self.out.items.is_empty() {
            return;
        }
        let mut touched: Vec<ConnId> = Vec::new();
        for item in &self.out.items {
            if let Some(c) = self.conns.get_mut(&item.conn) {
                c.wbuf
                    .extend_from_slice(&self.out.buf[item.start..item.end]);
                if item.close {
                    c.closing = true;
                }
                if touched.last() != Some(&item.conn) {
                    touched.push(item.conn);
                }
            }
        }
        self.out.clear();
        touched.sort_unstable();
        touched.dedup();
        for id in touched {
            self.flush(id);
        }
    }

    /// Slow subscribers: behind past `conflate_bytes` (no updates, then fresh snapshots
    /// once drained); logged out past `logout_bytes` or after `behind_logout_ms` behind.
    fn police(&mut self) {
        let now = now_ns();
        let mut logouts = Vec::new();
        let mut changes = Vec::new();
        let mut stale = Vec::new();
        for (id, c) in &mut self.conns {
            if c.closing {
                let since = *c.closing_since.get_or_insert_with(Instant::now);
                if since.elapsed() >= CLOSING_GRACE {
                    stale.push(*id);
                }
                continue;
            }
            let unread = c.wbuf.len();
            match c.behind_since {
                None if unread > self.md.conflate_bytes => {
                    c.behind_since = Some(Instant::now());
                    changes.push((*id, true));
                }
                Some(since) => {
                    let late = since.elapsed() >= Duration::from_millis(self.md.behind_logout_ms);
                    if unread > self.md.logout_bytes || late {
                        logouts.push((*id, unread, since.elapsed()));
                    } else if unread == 0 {
                        c.behind_since = None;
                        changes.push((*id, false));
                    }
                }
                None => {}
            }
        }
        for id in stale {
            self.drop_conn(id);
        }
        for (id, behind) in changes {
            self.edge
                .set_behind(id, behind, now, &self.feed, &mut self.out);
        }
        for (id, unread, for_) in logouts {
            let text = format!(
                "slow consumer: {unread} bytes unread, behind for {} ms",
                for_.as_millis()
            );
            self.edge.slow_logout(id, &text, now, &mut self.out);
            // What it has not read is not worth waiting for.
            if let Some(c) = self.conns.get_mut(&id) {
                c.closing = true;
            }
            self.publish();
            self.drop_conn(id);
        }
        self.publish();
    }

    fn report(&self) {
        let s = &self.edge.stats;
        let c = &self.counters;
        c.sessions
            .store(self.edge.sessions_logged_on() as u64, Ordering::Relaxed);
        c.subscriptions
            .store(self.edge.subscriptions() as u64, Ordering::Relaxed);
        c.messages
            .store(s.snapshots + s.incrementals, Ordering::Relaxed);
        c.entries.store(s.entries, Ordering::Relaxed);
        c.conflations.store(s.conflations, Ordering::Relaxed);
        c.slow_logouts.store(s.slow_logouts, Ordering::Relaxed);
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((mut stream, peer)) => {
                    let id = self.next_conn;
                    self.next_conn += 1;
                    let _ = stream.set_nodelay(true);
                    if self
                        .poll
                        .registry()
                        .register(&mut stream, Token(id as usize), Interest::READABLE)
                        .is_err()
                    {
                        continue;
                    }
                    self.conns.insert(
                        id,
                        MdConn {
                            stream,
                            rbuf: Vec::new(),
                            wbuf: Vec::new(),
                            closing: false,
                            want_write: false,
                            behind_since: None,
                            more: false,
                            closing_since: None,
                        },
                    );
                    self.edge.on_accepted(id, peer.ip());
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            }
        }
    }

    fn read(&mut self, id: ConnId) {
        // A bounded amount per wake-up, so one busy connection cannot hold up the feed.
        for round in 0..READS_PER_WAKE {
            let Some(c) = self.conns.get_mut(&id) else {
                return;
            };
            c.more = round + 1 == READS_PER_WAKE;
            if c.closing {
                c.more = false;
                return;
            }
            let n = match c.stream.read(&mut self.scratch) {
                Ok(0) => {
                    self.edge.on_closed(id);
                    self.drop_conn(id);
                    return;
                }
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => {
                    self.edge.on_closed(id);
                    self.drop_conn(id);
                    return;
                }
            };
            c.rbuf.extend_from_slice(&self.scratch[..n]);
            // A peer that sends without end is cut off rather than buffered.
            if c.rbuf.len() > 1 << 20 {
                self.edge.on_closed(id);
                self.drop_conn(id);
                return;
            }
            let buf = std::mem::take(&mut c.rbuf);
            let used = self
                .edge
                .on_bytes(id, &buf, now_ns(), &self.feed, &mut self.out);
            if let Some(c) = self.conns.get_mut(&id) {
                c.rbuf = buf;
                c.rbuf.drain(..used.min(c.rbuf.len()));
            }
            self.publish();
            // Requests that pile up answers (snapshot after snapshot) meet the same bound as
            // a reader that is too slow.
            if self
                .conns
                .get(&id)
                .is_some_and(|c| c.wbuf.len() > self.md.logout_bytes)
            {
                let text = "slow consumer: answers unread past the market-data limit";
                self.edge.slow_logout(id, text, now_ns(), &mut self.out);
                self.publish();
                self.drop_conn(id);
                return;
            }
        }
    }

    fn flush(&mut self, id: ConnId) {
        let Some(c) = self.conns.get_mut(&id) else {
            return;
        };
        let (written, failed) = write_until_blocked(&mut c.stream, &c.wbuf);
        c.wbuf.drain(..written);
        if failed {
            self.edge.on_closed(id);
            self.drop_conn(id);
            return;
        }
        if c.closing && c.wbuf.is_empty() {
            self.drop_conn(id);
            return;
        }
        let want = !c.wbuf.is_empty();
        if want != c.want_write {
            let interest = if want {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            if self
                .poll
                .registry()
                .reregister(&mut c.stream, Token(id as usize), interest)
                .is_ok()
            {
                c.want_write = want;
            }
        }
    }

    fn drop_conn(&mut self, id: ConnId) {
        if let Some(mut c) = self.conns.remove(&id) {
            let _ = self.poll.registry().deregister(&mut c.stream);
        }
        self.edge.on_closed(id);
    }
}

/// Fuzz entry for the market-data port's parsing path (`fuzz/fuzz_targets/md_edge.rs`): a
/// connection logs on as `MD1` (default contract), then `bytes` arrive, raw and as the body of
/// one framed FIX 4.4 message, with a feed that has a book and trades. Never panics; everything
/// sent back is one well-framed message (or a bare close).
pub fn fuzz_md_edge(bytes: &[u8]) {
    use fix::{frame, FixVersion, Limits};
    use std::sync::OnceLock;
    static CFG: OnceLock<Config> = OnceLock::new();
    let cfg = CFG.get_or_init(Config::defaults);
    let mut edge = MdEdge::new(Arc::new(cfg.fix_config()), MdLimits::default());
    let mut feed = Feed::new(cfg.instruments.len());
    let mut out = Outbox::default();
    let check = |out: &mut Outbox| {
        for item in &out.items {
            let sent = &out.buf[item.start..item.end];
            match frame(sent, Limits::default().msg_len_max) {
                _ if sent.is_empty() && item.close => {}
                Ok(Some(len)) if len == sent.len() => {}
                other => panic!("the market-data edge sent a bad frame ({other:?}): {sent:?}"),
            }
        }
        out.clear();
    };
    let mut msg = Vec::new();
    let body = |seq: u64, rest: &[u8]| {
        let mut b = format!("35=A\x0149=MD1\x0156=RIALTO\x0134={seq}\x0152=20260101-00:00:00\x01")
            .into_bytes();
        b.extend_from_slice(rest);
        b
    };
    fix::wrap_body(
        FixVersion::Fix44,
        &body(1, b"98=0\x01108=30\x01141=Y\x01"),
        &mut msg,
    );
    edge.on_bytes(7, &msg, 1, &feed, &mut out);
    check(&mut out);
    for e in [
        types::Event::Level {
            symbol: 0,
            side: types::Side::Buy,
            price: 100,
            qty: 5,
            orders: 1,
        },
        types::Event::Level {
            symbol: 0,
            side: types::Side::Sell,
            price: 101,
            qty: 5,
            orders: 1,
        },
    ] {
        feed.on_event(&e);
        if let Some(&entry) = feed.entries().first() {
            feed.clear_entries();
            edge.on_entry(&feed, &entry);
        }
    }
    edge.flush(2, &feed, &mut out);
    check(&mut out);
    let mut used = 0;
    while used < bytes.len() {
        let n = edge.on_bytes(7, &bytes[used..], 3, &feed, &mut out);
        check(&mut out);
        if n == 0 {
            break;
        }
        used += n;
    }
    // The same bytes as the fields of one V after the header.
    let mut v = body(2, bytes);
    v[3] = b'V';
    fix::wrap_body(FixVersion::Fix44, &v, &mut msg);
    edge.on_bytes(7, &msg, 4, &feed, &mut out);
    check(&mut out);
    edge.on_tick(60_000_000_000, &mut out);
    check(&mut out);
}

#[cfg(test)]
mod tests;
