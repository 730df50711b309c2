//! The FIX market-data edge: market-data sessions, their subscriptions, and the feed's entries
//! as MarketDataSnapshotFullRefresh (W) and MarketDataIncrementalRefresh (X) messages.
//!
//! Role: sans-I/O, owned by the market-data thread (`server::market_data`), which gives it the
//! bytes of its connections, the feed's entries as the market-data replica makes them, the
//! time, and tells it when a connection is too slow. Each configured session that may see
//! market data (`MarketDataAccess::On` or `Only`) has a `fix::Session` here, separate from its
//! order-entry session: its own sequence numbers, kept in memory (never journaled: a client
//! logs on with ResetSeqNumFlag=Y after the server restarts) and its own bounded resend store.
//! Besides V it answers SecurityListRequest (x) and SecurityStatusRequest (e) (`status`),
//! and, in FIX 5.0SP2, publishes a call auction's indicative uncross to the subscriptions that
//! ask for MDEntryType Q ([`MdEdge::set_indicative`]).
//!
//! Never: reads the order path's memory (the feed it is given belongs to a replica), a socket,
//! a clock; sends an X entry of a subscription out of the feed's order; grows a subscriber's
//! output without bound (the owner measures what is unread and calls [`MdEdge::set_behind`]).
//!
//! Invariants: a subscription's first message for a symbol is a W at the instrument's current
//! RptSeq; after it, every feed entry of the symbol the subscription's view contains follows
//! in order (full depth: RptSeq without a gap), until the subscription ends or the session
//! falls behind, after which it gets a fresh W per symbol (conflation) before any X.

use crate::config::{FixConfig, InstrumentDef, MarketDataAccess};
use crate::edge::Outbox;
use crate::record::ConnId;
use fix::app::{AppMessage, BusinessMessageReject};
use fix::md::{
    EntryTypes, MarketDataIncremental, MarketDataRequest, MarketDataRequestReject,
    MarketDataSnapshot, MdEntry, MdEntryType, MdRefusal, MdRejectReason, SecurityListRequest,
    SecurityStatusRequest, SubscriptionType,
};
use fix::{
    BusinessRejectReason, Credentials, Decoder, FixVersion, Inbound, Logon, MemoryStore, RejectOf,
    Session, SessionConfig, SessionEvent, SessionHandler, LOGON_REFUSED,
};
use market_data::{depth_view, Action, Entry, EntryKind, Feed, LevelEntry, TradeEntry};
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Arc;
use types::{Side, SymbolId};

/// The market-data edge's limits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MdLimits {
    /// Subscriptions (MDReqIDs with updates) one session may hold at once.
    pub subscriptions_max: usize,
    /// The deepest MarketDepth served (0, the full book, is always served).
    pub depth_max: u32,
    /// Messages each session keeps for a ResendRequest (older ones are gap-filled).
    pub resend_store_max: usize,
}

impl Default for MdLimits {
    fn default() -> MdLimits {
        MdLimits {
            subscriptions_max: 64,
            depth_max: 100,
            resend_store_max: 4096,
        }
    }
}

/// Entries in one X at most (about 250 fields, 2 KB): within any client's default limits. A
/// flush with more sends several.
pub const X_ENTRIES_MAX: usize = 24;

/// What the edge has done since start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MdStats {
    pub snapshots: u64,
    pub incrementals: u64,
    pub entries: u64,
    pub rejects: u64,
    /// Times a session fell behind (its connection, or the whole feed) and was sent fresh
    /// snapshots instead of what it missed.
    pub conflations: u64,
    /// Sessions logged out for reading too slowly.
    pub slow_logouts: u64,
}

struct Subscription {
    md_req_id: Vec<u8>,
    symbols: Vec<SymbolId>,
    /// 0: every level.
    depth: usize,
    incremental: bool,
    types: EntryTypes,
    /// Entries to send at the next flush: (symbol, entry) as the view sees them.
    pending: Vec<(SymbolId, Pending)>,
    /// Symbols with a change since the last flush (full-refresh subscriptions).
    touched: Vec<SymbolId>,
}

#[derive(Clone, Copy)]
enum Pending {
    Level(LevelEntry, u64),
    Trade(TradeEntry, u64),
    /// An indicative uncross's change (MDEntryType Q): MDUpdateAction, price, size.
    Indicative {
        action: u8,
        price: i64,
        qty: u64,
    },
}

/// A level as an entry of a W or X (`rpt_seq`: its RptSeq).
fn level_entry<'a>(def: &'a InstrumentDef, l: &LevelEntry, rpt_seq: u64) -> MdEntry<'a> {
    MdEntry {
        symbol: def.symbol.as_str().as_bytes(),
        price_decimals: def.price_decimals,
        action: match l.action {
            Action::New => b'0',
            Action::Change => b'1',
            Action::Delete => b'2',
        },
        entry_type: MdEntryType::of_side(l.side),
        price: l.price,
        size: l.qty,
        orders: Some(l.orders),
        trade_id: None,
        aggressor: None,
        rpt_seq,
    }
}

/// A trade as an entry of a W or X.
fn trade_entry<'a>(def: &'a InstrumentDef, t: &TradeEntry, rpt_seq: u64) -> MdEntry<'a> {
    MdEntry {
        symbol: def.symbol.as_str().as_bytes(),
        price_decimals: def.price_decimals,
        action: b'0',
        entry_type: MdEntryType::Trade,
        price: t.price,
        size: t.qty,
        orders: None,
        trade_id: Some(t.trade_id),
        aggressor: Some(t.aggressor),
        rpt_seq,
    }
}

/// An indicative uncross as an entry of a W or X (MDEntryType Q; no RptSeq).
fn indicative_entry(def: &InstrumentDef, action: u8, price: i64, qty: u64) -> MdEntry<'_> {
    MdEntry {
        symbol: def.symbol.as_str().as_bytes(),
        price_decimals: def.price_decimals,
        action,
        entry_type: MdEntryType::AuctionClearingPrice,
        price,
        size: qty,
        orders: None,
        trade_id: None,
        aggressor: None,
        rpt_seq: 0,
    }
}

struct MdSession {
    fix: Session<MemoryStore, Vec<u8>>,
    conn: Option<ConnId>,
    subs: Vec<Subscription>,
    /// The instruments whose status changes it asked to be told of (SecurityStatusRequest
    /// with 263=1), by symbol index, with the request's SecurityStatusReqID.
    status_subs: Vec<(u32, Vec<u8>)>,
    /// Its connection is too slow: no X until it catches up (then fresh snapshots).
    behind: bool,
    extensions: bool,
}

/// Where a session's output goes while it is driven.
struct Wire<'a> {
    conn: ConnId,
    out: &'a mut Outbox,
    disconnected: bool,
    logged_on: bool,
}

impl Wire<'_> {
    fn to(conn: ConnId, out: &mut Outbox) -> Wire<'_> {
        Wire {
            conn,
            out,
            disconnected: false,
            logged_on: false,
        }
    }
}

impl MdSession {
    /// Numbers, stores and (while connected) writes application message `msg`.
    fn send<M: AppMessage>(&mut self, msg: &M, now_ns: u64, out: &mut Outbox) {
        if let Some(conn) = self.conn {
            self.fix.send_app(msg, now_ns, &mut Wire::to(conn, out));
        }
    }
}

impl SessionHandler for Wire<'_> {
    fn send(&mut self, bytes: &[u8]) {
        self.out.push(self.conn, bytes);
    }
    fn on_event(&mut self, e: SessionEvent) {
        match e {
            SessionEvent::Disconnect(_) => self.disconnected = true,
            SessionEvent::LoggedOn { .. } => self.logged_on = true,
            _ => {}
        }
    }
}

/// The owner's check of a market-data Logon's credentials (the server's `auth`: salted hashes,
/// throttle): given the address the connection came from (if the owner told it,
/// [`MdEdge::on_accepted`]), the configured session the Logon names (`None`: unknown CompIDs)
/// and the Logon (Username, Password), the verdict. Called for every Logon at the market-data
/// port, before anything about the session is answered.
pub type LogonCheck = Box<dyn FnMut(Option<IpAddr>, Option<usize>, &Logon) -> Credentials + Send>;

/// The market-data edge. See the module documentation.
pub struct MdEdge {
    cfg: Arc<FixConfig>,
    check: LogonCheck,
    limits: MdLimits,
    /// One per configured session (`None`: no market data for it).
    sessions: Vec<Option<MdSession>>,
    conns: HashMap<ConnId, usize>,
    /// Where each connection not yet bound came from (for the Logon check's throttle).
    peers: HashMap<ConnId, IpAddr>,
    decoder: Decoder,
    enc: fix::Encoder,
    security_responses: u64,
    /// Each instrument's status, as the replica's exchange last said.
    statuses: Vec<exchange::InstrumentStatus>,
    /// Each instrument's indicative uncross (price, volume), as last told
    /// (`set_indicative`; `(0, 0)`: none).
    indicatives: Vec<(i64, u64)>,
    /// The feed itself is behind the journal (its owner says so): no session gets updates;
    /// when it catches up, every subscription gets fresh snapshots.
    feed_behind: bool,
    pub stats: MdStats,
}

fn version_of(cfg: &FixConfig, ix: usize) -> FixVersion {
    cfg.sessions[ix].version
}

/// The inbound message a refusal answers (its RefSeqNum and RefMsgType), of session `ix`.
#[derive(Clone, Copy)]
struct Refused<'a> {
    ix: usize,
    msg_seq: u64,
    msg_type: &'a [u8],
}

impl MdEdge {
    pub fn new(cfg: Arc<FixConfig>, limits: MdLimits) -> MdEdge {
        let sessions = cfg
            .sessions
            .iter()
            .map(|d| {
                if d.market_data == MarketDataAccess::Off {
                    return None;
                }
                let mut sc = SessionConfig::new(d.version, &d.target_comp_id, &d.sender_comp_id);
                // Credentials are checked at bind, by the owner's `LogonCheck`.
                sc.authenticate = false;
                sc.heartbeat_min_s = cfg.heartbeat_min_s;
                sc.heartbeat_max_s = cfg.heartbeat_max_s;
                sc.sending_time_tolerance_ns = None;
                sc.require_default_appl_ver_id = false;
                Some(MdSession {
                    fix: Session::new(sc, MemoryStore::new(limits.resend_store_max)),
                    conn: None,
                    subs: Vec::new(),
                    status_subs: Vec::new(),
                    behind: false,
                    extensions: d.market_data_extensions,
                })
            })
            .collect();
        let statuses = vec![exchange::InstrumentStatus::Open; cfg.instruments.len()];
        let indicatives = vec![(0, 0); cfg.instruments.len()];
        MdEdge {
            cfg,
            check: Box::new(|_, _, _| Credentials::Unchecked),
            limits,
            sessions,
            conns: HashMap::new(),
            peers: HashMap::new(),
            decoder: Decoder::default(),
            enc: fix::Encoder::default(),
            security_responses: 0,
            statuses,
            indicatives,
            feed_behind: false,
            stats: MdStats::default(),
        }
    }

    /// A connection from `peer` was accepted (its Logon's check is told the address).
    pub fn on_accepted(&mut self, conn: ConnId, peer: IpAddr) {
        self.peers.insert(conn, peer);
    }

    /// Sets the check of Logons' credentials (until then every Logon is unchecked, and a
    /// session that authenticates refuses them all).
    pub fn set_logon_check(&mut self, check: LogonCheck) {
        self.check = check;
    }

    /// Number of subscriptions with updates, over every session.
    pub fn subscriptions(&self) -> usize {
        self.sessions.iter().flatten().map(|s| s.subs.len()).sum()
    }

    /// Number of sessions logged on.
    pub fn sessions_logged_on(&self) -> usize {
        self.sessions
            .iter()
            .flatten()
            .filter(|s| s.conn.is_some() && s.fix.is_active())
            .count()
    }

    /// The session `conn` is bound to.
    pub fn session_of(&self, conn: ConnId) -> Option<usize> {
        self.conns.get(&conn).copied()
    }

    /// Bytes arrived on `conn`; returns how many were consumed (the rest is an incomplete
    /// message: give it again with more). Answers go to `out`; `feed` is the market as the
    /// replica has it now (snapshots are cut from it).
    pub fn on_bytes(
        &mut self,
        conn: ConnId,
        bytes: &[u8],
        now_ns: u64,
        feed: &Feed,
        out: &mut Outbox,
    ) -> usize {
        let ix = match self.conns.get(&conn) {
            Some(&ix) => ix,
            None => match self.bind(conn, bytes, now_ns, out) {
                Ok(Some(ix)) => ix,
                Ok(None) => return 0,
                Err(consumed) => return consumed,
            },
        };
        let mut apps: Vec<Vec<u8>> = Vec::new();
        let s = self.sessions[ix].as_mut().expect("bound sessions exist");
        let mut w = Wire::to(conn, &mut *out);
        let consumed = s
            .fix
            .on_bytes(bytes, now_ns, &mut w, &mut |m| apps.push(m.to_vec()));
        let disconnected = w.disconnected;
        for m in apps {
            if self.sessions[ix]
                .as_ref()
                .is_some_and(|s| s.conn == Some(conn))
            {
                self.on_app(ix, &m, now_ns, feed, out);
            }
        }
        if disconnected {
            self.unbind(ix, out);
        }
        consumed
    }

    /// The first message of a connection: a Logon naming a session that may see market data
    /// binds it. `Ok(None)`: not a whole message yet; `Err(n)`: refused (the connection is
    /// closed), `n` bytes consumed.
    fn bind(
        &mut self,
        conn: ConnId,
        bytes: &[u8],
        now_ns: u64,
        out: &mut Outbox,
    ) -> Result<Option<usize>, usize> {
        let len = match fix::frame(bytes, fix::Limits::default().msg_len_max) {
            Ok(None) => return Ok(None),
            Ok(Some(len)) => len,
            Err(_) => {
                out.close(conn);
                return Err(bytes.len());
            }
        };
        let read = match self.decoder.decode_framed(&bytes[..len]) {
            Ok(msg) => Some(fix::read_inbound(&msg, None, |m| Ok(m.as_bytes().to_vec()))),
            Err(_) => None,
        };
        let Some((header, Inbound::Logon(mut l))) = read else {
            out.close(conn);
            return Err(len);
        };
        let found = self
            .cfg
            .find_session(l.sender_comp_id.as_bytes(), l.target_comp_id.as_bytes());
        let verdict = (self.check)(self.peers.remove(&conn), found, &l);
        l.wipe_password();
        let refuse = |this: &mut MdEdge, text: &str, out: &mut Outbox| {
            let bytes = fix::refusal(&mut this.enc, &l, now_ns, text.as_bytes());
            out.push(conn, &bytes);
            out.close(conn);
            Err(len)
        };
        // Until the Logon is authenticated, the answer says nothing of the session.
        let Some(ix) = found else {
            return refuse(self, LOGON_REFUSED, out);
        };
        if self.cfg.sessions[ix].authenticates() && verdict != Credentials::Accepted {
            return refuse(self, LOGON_REFUSED, out);
        }
        let Some(s) = self.sessions[ix].as_mut() else {
            return refuse(self, "no market data for this session", out);
        };
        if s.conn.is_some() {
            let text = match s.fix.logon_refusal(&header, &l, now_ns) {
                Some((text, _)) => text,
                None => "session already logged on".to_string(),
            };
            return refuse(self, &text, out);
        }
        s.fix.on_connected(now_ns);
        s.conn = Some(conn);
        self.conns.insert(conn, ix);
        Ok(Some(ix))
    }

    fn unbind(&mut self, ix: usize, out: &mut Outbox) {
        let Some(s) = self.sessions[ix].as_mut() else {
            return;
        };
        if let Some(c) = s.conn.take() {
            self.conns.remove(&c);
            out.close(c);
        }
        s.fix.on_disconnected();
        s.subs.clear();
        s.behind = false;
    }

    /// The connection `conn` closed.
    pub fn on_closed(&mut self, conn: ConnId) {
        self.peers.remove(&conn);
        if let Some(ix) = self.conns.remove(&conn) {
            if let Some(s) = self.sessions[ix].as_mut() {
                s.conn = None;
                s.fix.on_disconnected();
                s.subs.clear();
                s.behind = false;
            }
        }
    }

    /// Timers: heartbeats, TestRequests, logon and logout timeouts.
    pub fn on_tick(&mut self, now_ns: u64, out: &mut Outbox) {
        for ix in 0..self.sessions.len() {
            let Some(s) = self.sessions[ix].as_mut() else {
                continue;
            };
            let Some(conn) = s.conn else {
                continue;
            };
            let mut w = Wire::to(conn, &mut *out);
            s.fix.on_tick(now_ns, &mut w);
            if w.disconnected {
                self.unbind(ix, out);
            }
        }
    }

    /// The exchange stops: Logout to every session.
    pub fn on_shutdown(&mut self, now_ns: u64, out: &mut Outbox) {
        for ix in 0..self.sessions.len() {
            let Some(s) = self.sessions[ix].as_mut() else {
                continue;
            };
            let Some(conn) = s.conn else {
                continue;
            };
            let mut w = Wire::to(conn, &mut *out);
            s.fix.logout_and_disconnect(
                b"exchange shutting down",
                fix::DisconnectReason::Shutdown,
                now_ns,
                &mut w,
            );
            self.unbind(ix, out);
        }
    }

    /// `conn` has more unread output than its owner allows (`true`), or has drained it
    /// (`false`). Behind, a session's subscriptions get no updates; when it drains, each gets
    /// a fresh snapshot of its symbols, then updates again.
    pub fn set_behind(
        &mut self,
        conn: ConnId,
        behind: bool,
        now_ns: u64,
        feed: &Feed,
        out: &mut Outbox,
    ) {
        let Some(&ix) = self.conns.get(&conn) else {
            return;
        };
        let Some(s) = self.sessions[ix].as_mut() else {
            return;
        };
        if s.behind == behind {
            return;
        }
        s.behind = behind;
        if behind {
            self.stats.conflations += 1;
            for sub in &mut s.subs {
                sub.pending.clear();
                sub.touched.clear();
            }
            return;
        }
        if self.feed_behind {
            // The feed's catching up sends the snapshots.
            return;
        }
        for k in 0..s.subs.len() {
            self.snapshot_all(ix, k, now_ns, feed, out);
        }
    }

    /// The feed is far behind the journal (`true`: its owner applies records without making
    /// updates), or has caught up (`false`: every subscription of every session that is not
    /// behind itself gets a fresh snapshot of its symbols, then updates again).
    pub fn set_feed_behind(&mut self, behind: bool, now_ns: u64, feed: &Feed, out: &mut Outbox) {
        if self.feed_behind == behind {
            return;
        }
        self.feed_behind = behind;
        for ix in 0..self.sessions.len() {
            let Some(s) = self.sessions[ix].as_mut() else {
                continue;
            };
            if s.behind || s.subs.is_empty() {
                continue;
            }
            if behind {
                self.stats.conflations += 1;
                for sub in &mut s.subs {
                    sub.pending.clear();
                    sub.touched.clear();
                }
            } else {
                for k in 0..s.subs.len() {
                    self.snapshot_all(ix, k, now_ns, feed, out);
                }
            }
        }
    }

    /// True while the feed is behind (`set_feed_behind`).
    pub fn feed_behind(&self) -> bool {
        self.feed_behind
    }

    /// `conn` stayed behind for too long or has too much unread: Logout with `text`, and the
    /// connection is closed.
    pub fn slow_logout(&mut self, conn: ConnId, text: &str, now_ns: u64, out: &mut Outbox) {
        let Some(&ix) = self.conns.get(&conn) else {
            return;
        };
        let Some(s) = self.sessions[ix].as_mut() else {
            return;
        };
        self.stats.slow_logouts += 1;
        let mut w = Wire::to(conn, &mut *out);
        s.fix.logout_and_disconnect(
            text.as_bytes(),
            fix::DisconnectReason::LogoutTimeout,
            now_ns,
            &mut w,
        );
        self.unbind(ix, out);
    }

    /// One entry the feed just made (`feed` is the state right after it): queued for every
    /// subscription whose view it changes, sent at the next `flush`.
    pub fn on_entry(&mut self, feed: &Feed, e: &Entry) {
        if self.feed_behind {
            return;
        }
        for s in self.sessions.iter_mut().flatten() {
            if s.behind || s.subs.is_empty() {
                continue;
            }
            for sub in &mut s.subs {
                if !sub.symbols.contains(&e.symbol) {
                    continue;
                }
                match e.kind {
                    EntryKind::Trade(t) => {
                        if sub.types.trades {
                            sub.pending.push((e.symbol, Pending::Trade(t, e.rpt_seq)));
                            if !sub.incremental && !sub.touched.contains(&e.symbol) {
                                sub.touched.push(e.symbol);
                            }
                        }
                    }
                    EntryKind::Level(l) => {
                        let wanted = match l.side {
                            Side::Buy => sub.types.bids,
                            Side::Sell => sub.types.offers,
                        };
                        if !wanted {
                            continue;
                        }
                        if !sub.incremental {
                            if !sub.touched.contains(&e.symbol) {
                                sub.touched.push(e.symbol);
                            }
                            continue;
                        }
                        let book = feed.book(e.symbol);
                        let (symbol, rpt) = (e.symbol, e.rpt_seq);
                        let pending = &mut sub.pending;
                        depth_view(book, &l, sub.depth, |v| {
                            pending.push((symbol, Pending::Level(v, rpt)))
                        });
                    }
                }
            }
        }
    }

    /// Sends what `on_entry` queued: one X per subscription (a W per touched symbol for a
    /// full-refresh one).
    pub fn flush(&mut self, now_ns: u64, feed: &Feed, out: &mut Outbox) {
        for ix in 0..self.sessions.len() {
            let Some(s) = self.sessions[ix].as_mut() else {
                continue;
            };
            if s.subs.is_empty() || s.conn.is_none() {
                continue;
            }
            for k in 0..s.subs.len() {
                self.flush_sub(ix, k, now_ns, feed, out);
            }
        }
    }

    fn flush_sub(&mut self, ix: usize, k: usize, now_ns: u64, feed: &Feed, out: &mut Outbox) {
        let cfg = self.cfg.clone();
        let s = self.sessions[ix].as_mut().expect("checked");
        let Some(conn) = s.conn else {
            return;
        };
        let sub = &mut s.subs[k];
        if !sub.incremental {
            let touched = std::mem::take(&mut sub.touched);
            for &sym in &touched {
                self.snapshot(ix, k, sym, now_ns, feed, out);
            }
            let s = self.sessions[ix].as_mut().expect("checked");
            let sub = &mut s.subs[k];
            sub.pending.clear();
            sub.touched = touched;
            sub.touched.clear();
            return;
        }
        if sub.pending.is_empty() {
            return;
        }
        let mut list: Vec<MdEntry<'_>> = Vec::with_capacity(sub.pending.len());
        for (sym, p) in &sub.pending {
            let def = &cfg.instruments[*sym as usize];
            list.push(match p {
                Pending::Level(l, rpt_seq) => level_entry(def, l, *rpt_seq),
                Pending::Trade(t, rpt_seq) => trade_entry(def, t, *rpt_seq),
                Pending::Indicative { action, price, qty } => {
                    indicative_entry(def, *action, *price, *qty)
                }
            });
        }
        sub.pending.clear();
        for chunk in list.chunks(X_ENTRIES_MAX) {
            self.stats.incrementals += 1;
            self.stats.entries += chunk.len() as u64;
            let msg = MarketDataIncremental {
                md_req_id: &sub.md_req_id,
                extensions: s.extensions,
                entries: chunk,
            };
            let mut w = Wire::to(conn, &mut *out);
            s.fix.send_app(&msg, now_ns, &mut w);
        }
    }

    /// A W of subscription `k` of session `ix` for every one of its symbols.
    fn snapshot_all(&mut self, ix: usize, k: usize, now_ns: u64, feed: &Feed, out: &mut Outbox) {
        let symbols = self.sessions[ix].as_ref().expect("checked").subs[k]
            .symbols
            .clone();
        for sym in symbols {
            self.snapshot(ix, k, sym, now_ns, feed, out);
        }
    }

    /// A W of `sym` as subscription `k` of session `ix` sees it.
    fn snapshot(
        &mut self,
        ix: usize,
        k: usize,
        sym: SymbolId,
        now_ns: u64,
        feed: &Feed,
        out: &mut Outbox,
    ) {
        let cfg = self.cfg.clone();
        let s = self.sessions[ix].as_mut().expect("checked");
        let Some(conn) = s.conn else {
            return;
        };
        let sub = &s.subs[k];
        let def = &cfg.instruments[sym as usize];
        let symbol = def.symbol.as_str().as_bytes();
        let mut list: Vec<MdEntry<'_>> = Vec::new();
        for l in feed.book(sym).entries(sub.depth) {
            let wanted = match l.side {
                Side::Buy => sub.types.bids,
                Side::Sell => sub.types.offers,
            };
            if wanted {
                list.push(level_entry(def, &l, 0));
            }
        }
        let (price, qty) = self.indicatives[sym as usize];
        if sub.types.indicative && qty > 0 {
            list.push(indicative_entry(def, b'0', price, qty));
        }
        // A full-refresh subscription's W also carries the trades since the last one.
        for (psym, p) in &sub.pending {
            if let (true, Pending::Trade(t, rpt_seq)) = (*psym == sym, p) {
                list.push(trade_entry(def, t, *rpt_seq));
            }
        }
        self.stats.snapshots += 1;
        let msg = MarketDataSnapshot {
            md_req_id: &sub.md_req_id,
            symbol,
            extensions: s.extensions,
            entries: &list,
            rpt_seq: feed.rpt_seq(sym),
        };
        let mut w = Wire::to(conn, &mut *out);
        s.fix.send_app(&msg, now_ns, &mut w);
    }

    /// An application message session `ix` delivered.
    fn on_app(&mut self, ix: usize, bytes: &[u8], now_ns: u64, feed: &Feed, out: &mut Outbox) {
        let mut decoder = std::mem::take(&mut self.decoder);
        if let Ok(msg) = decoder.decode_framed(bytes) {
            let msg_seq = msg
                .get(fix::tags::MSG_SEQ_NUM)
                .and_then(fix::decode::parse_u64)
                .unwrap_or(0);
            let refused = Refused {
                ix,
                msg_seq,
                msg_type: msg.msg_type(),
            };
            match msg.msg_type() {
                b"V" => match MarketDataRequest::read(&msg) {
                    Ok(r) => self.on_request(ix, msg_seq, &r, now_ns, feed, out),
                    Err(e) => self.refuse(refused, &msg, e, now_ns, out),
                },
                b"x" if version_of(&self.cfg, ix) != FixVersion::Fix42 => {
                    match SecurityListRequest::read(&msg) {
                        Ok(r) => self.security_list(ix, &r, now_ns, out),
                        Err(e) => self.refuse(refused, &msg, e, now_ns, out),
                    }
                }
                b"e" => match SecurityStatusRequest::read(&msg) {
                    Ok(r) => self.security_status(ix, msg_seq, &r, now_ns, out),
                    Err(e) => self.refuse(refused, &msg, e, now_ns, out),
                },
                t => {
                    let text: &[u8] = match t {
                        b"D" | b"F" | b"G" | b"H" | b"q" => {
                            b"this is the market-data port: orders go to the order-entry port"
                        }
                        _ => b"unsupported message type",
                    };
                    let t = t.to_vec();
                    self.business_reject(
                        Refused {
                            ix,
                            msg_seq,
                            msg_type: &t,
                        },
                        BusinessRejectReason::UnsupportedMessageType,
                        text,
                        now_ns,
                        out,
                    );
                }
            }
        }
        self.decoder = decoder;
    }

    /// Answers message `to`, refused: a session Reject or a MarketDataRequestReject.
    fn refuse(
        &mut self,
        to: Refused<'_>,
        msg: &fix::Message<'_>,
        e: MdRefusal,
        now_ns: u64,
        out: &mut Outbox,
    ) {
        let Refused {
            ix,
            msg_seq,
            msg_type,
        } = to;
        self.stats.rejects += 1;
        let s = self.sessions[ix].as_mut().expect("bound");
        let Some(conn) = s.conn else {
            return;
        };
        let mut w = Wire::to(conn, &mut *out);
        match e {
            MdRefusal::Session { reason, tag, text } => s.fix.send_reject(
                &RejectOf {
                    ref_seq_num: msg_seq,
                    ref_msg_type: Some(msg_type),
                    ref_tag: Some(tag as i64),
                    reason,
                    text: text.as_bytes(),
                },
                now_ns,
                &mut w,
            ),
            MdRefusal::Reject { reason, text } => {
                let id = msg.get(fix::tags::MD_REQ_ID).unwrap_or(b"");
                s.fix.send_app(
                    &MarketDataRequestReject {
                        md_req_id: id,
                        reason,
                        text: text.as_bytes(),
                    },
                    now_ns,
                    &mut w,
                );
            }
        }
    }

    /// A BusinessMessageReject of message `to`.
    fn business_reject(
        &mut self,
        to: Refused<'_>,
        reason: BusinessRejectReason,
        text: &[u8],
        now_ns: u64,
        out: &mut Outbox,
    ) {
        let Refused {
            ix,
            msg_seq,
            msg_type,
        } = to;
        self.stats.rejects += 1;
        let s = self.sessions[ix].as_mut().expect("bound");
        s.send(
            &BusinessMessageReject {
                ref_seq_num: msg_seq,
                ref_msg_type: msg_type,
                business_reject_ref_id: None,
                reason,
                text,
            },
            now_ns,
            out,
        );
    }

    fn md_reject(
        &mut self,
        ix: usize,
        md_req_id: &[u8],
        reason: MdRejectReason,
        text: &str,
        now_ns: u64,
        out: &mut Outbox,
    ) {
        self.stats.rejects += 1;
        let s = self.sessions[ix].as_mut().expect("bound");
        s.send(
            &MarketDataRequestReject {
                md_req_id,
                reason,
                text: text.as_bytes(),
            },
            now_ns,
            out,
        );
    }

    fn on_request(
        &mut self,
        ix: usize,
        msg_seq: u64,
        r: &MarketDataRequest<'_>,
        now_ns: u64,
        feed: &Feed,
        out: &mut Outbox,
    ) {
        let s = self.sessions[ix].as_mut().expect("bound");
        let existing = s.subs.iter().position(|x| x.md_req_id == r.md_req_id);
        if r.subscription == SubscriptionType::Unsubscribe {
            match existing {
                Some(k) => {
                    s.subs.remove(k);
                }
                None => {
                    let text = format!(
                        "no subscription with MDReqID {}",
                        String::from_utf8_lossy(r.md_req_id)
                    );
                    self.business_reject(
                        Refused {
                            ix,
                            msg_seq,
                            msg_type: b"V",
                        },
                        BusinessRejectReason::UnknownId,
                        text.as_bytes(),
                        now_ns,
                        out,
                    );
                }
            }
            return;
        }
        if existing.is_some() {
            return self.md_reject(
                ix,
                r.md_req_id,
                MdRejectReason::DuplicateMdReqId,
                "duplicate MDReqID: a subscription of this session has it",
                now_ns,
                out,
            );
        }
        if r.entry_types.indicative && version_of(&self.cfg, ix) != FixVersion::Fix50Sp2 {
            return self.md_reject(
                ix,
                r.md_req_id,
                MdRejectReason::UnsupportedMdEntryType,
                "MDEntryType(269) Q (auction clearing price) is published in FIX 5.0SP2 only",
                now_ns,
                out,
            );
        }
        if r.depth > self.limits.depth_max {
            let text = format!(
                "MarketDepth {} above {}: ask 0 for the full book",
                r.depth, self.limits.depth_max
            );
            return self.md_reject(
                ix,
                r.md_req_id,
                MdRejectReason::UnsupportedMarketDepth,
                &text,
                now_ns,
                out,
            );
        }
        let mut symbols = Vec::with_capacity(r.symbols.len());
        for sym in &r.symbols {
            match self
                .cfg
                .instruments
                .iter()
                .position(|i| i.symbol.as_str().as_bytes() == *sym)
            {
                Some(i) if !symbols.contains(&(i as SymbolId)) => symbols.push(i as SymbolId),
                Some(_) => {}
                None => {
                    let text = format!("unknown symbol {}", String::from_utf8_lossy(sym));
                    return self.md_reject(
                        ix,
                        r.md_req_id,
                        MdRejectReason::UnknownSymbol,
                        &text,
                        now_ns,
                        out,
                    );
                }
            }
        }
        let s = self.sessions[ix].as_mut().expect("bound");
        if r.subscription == SubscriptionType::Subscribe
            && s.subs.len() >= self.limits.subscriptions_max
        {
            let text = format!(
                "subscription limit reached: {} per session",
                self.limits.subscriptions_max
            );
            return self.md_reject(
                ix,
                r.md_req_id,
                MdRejectReason::InsufficientBandwidth,
                &text,
                now_ns,
                out,
            );
        }
        s.subs.push(Subscription {
            md_req_id: r.md_req_id.to_vec(),
            symbols,
            depth: r.depth as usize,
            incremental: r.incremental,
            types: r.entry_types,
            pending: Vec::new(),
            touched: Vec::new(),
        });
        let k = s.subs.len() - 1;
        self.snapshot_all(ix, k, now_ns, feed, out);
        if r.subscription == SubscriptionType::Snapshot {
            self.sessions[ix].as_mut().expect("bound").subs.pop();
        }
    }
}

mod status;
pub use status::{security_trading_status, trading_session_sub_id, READY_TO_TRADE};
#[cfg(test)]
mod tests;
