//! The FIX edge's state machine: every configured FIX session (`fix::Session`), which
//! connection each is bound to, and the translation both ways between FIX and the exchange.
//!
//! Role: apply one journaled FIX input (`FixInput`) or connection/timer event: the session
//! layer decides (sequence numbers, gaps, resend, heartbeats, logout), application messages
//! it delivers in order become `exchange::Input`s, and the exchange's `Output`s become FIX
//! messages on the sessions of the orders' owners. Deterministic in its inputs and their
//! timestamps, so replay rebuilds every session exactly: messages are regenerated, never
//! journaled, and recovery (`replaying`) formats none of them.
//!
//! Never: reads a clock (time is the record's timestamp), touches a socket or a file, or
//! decides a business rule (the exchange does: ownership, uniqueness, matching).
//!
//! Trading status: a session's TradingSessionStatusRequest (g) is answered with the
//! exchange's status (TradingSessionStatus h); with SubscriptionRequestType 1 the session is
//! told of every change (`Output::TradingStatus`) until it unsubscribes (263=2) or its
//! connection ends. The subscriptions are state (snapshot), rebuilt by replay like the rest.
//!
//! Invariants: a session is bound to at most one connection; a Logon for a session bound to
//! another connection is refused without disturbing it; outbound MsgSeqNum increases by one
//! per message sent on a session (`fix::Session`); only a bound session has a trading-status
//! subscription.

use crate::config::FixConfig;
use crate::record::{AppMsg, ConnId, FixInput, InvalidKind};
use crate::store::{CancelRejectRecipe, Store};
use exchange::{ClHashes, ClHint, Exchange, Input, Outputs, Principal, Reject, SlotTable};
use fix::app::{AppMessage, TradSesStatus, TradingSessionStatus};
use fix::{
    Credentials, DisconnectReason, Encoder, Inbound, Session, SessionConfig, SessionEvent,
    SessionHandler, Text,
};
use std::sync::Arc;

mod log;
mod out;
mod snapshot;

use log::{EdgeLog, Noted};

use out::CancelRejectText;
pub use out::{cxl_rej_reason, ord_rej_reason, ord_status};
use out::{EdgeOut, MassCancelOutcome};

type FixSession = Session<Store, AppMsg>;

/// FIX messages to send, in order, after a batch of inputs was applied.
#[derive(Default)]
pub struct Outbox {
    pub buf: Vec<u8>,
    pub items: Vec<OutItem>,
    /// The trades and level changes of the inputs applied, in the engine's order (filled only
    /// by a market-data replica: the edge's functions called with `MD = true`).
    pub market: Vec<types::Event>,
    /// ResendRequests the owner serves in pieces (`FixEdge::resend_piece`), each after the
    /// messages of `items` before it.
    pub resends: Vec<DeferredResend>,
    /// Set by a live server that serves ResendRequests in pieces; false (the default): they
    /// are written whole into `buf`.
    pub defer_resends: bool,
    /// The outputs for originators that are not FIX sessions (API keys), in order, for the
    /// edge that serves them.
    pub others: Vec<exchange::OwnedOutput>,
    /// Set by a trade-store replica (whose edge functions are called with `MD = true`): every
    /// report of the inputs applied, whoever it is for, is copied into `reports`, in order.
    /// Off (the default) and in the event loop (`MD = false`) it costs nothing.
    pub collect_reports: bool,
    pub reports: Vec<exchange::OwnedOutput>,
    /// Cluster mode: when the engine applied the command whose outcome the record holds (a
    /// trade's time is the engine's, the same in every gateway's trade store).
    pub engine_ts_ns: Option<u64>,
}

/// A ResendRequest of the session on `conn` for `begin..=end`, to be served in pieces after
/// `items[..at]`; whatever the connection is sent after it waits until it is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeferredResend {
    pub conn: ConnId,
    pub begin: u64,
    pub end: u64,
    pub at: usize,
}

/// One message for a connection: `buf[start..end]`, then close it if `close`.
#[derive(Clone, Copy, Debug)]
pub struct OutItem {
    pub conn: ConnId,
    pub start: usize,
    pub end: usize,
    pub close: bool,
}

impl Outbox {
    pub fn clear(&mut self) {
        self.buf.clear();
        self.items.clear();
        self.market.clear();
        self.resends.clear();
        self.others.clear();
        self.reports.clear();
        self.engine_ts_ns = None;
    }
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
    pub fn push(&mut self, conn: ConnId, bytes: &[u8]) {
        let start = self.buf.len();
        self.buf.extend_from_slice(bytes);
        self.items.push(OutItem {
            conn,
            start,
            end: self.buf.len(),
            close: false,
        });
    }
    pub fn close(&mut self, conn: ConnId) {
        let at = self.buf.len();
        self.items.push(OutItem {
            conn,
            start: at,
            end: at,
            close: true,
        });
    }
}

/// Counters the server reports (not part of the replicated state).
#[derive(Clone, Copy, Debug, Default)]
pub struct EdgeStats {
    pub execution_reports: u64,
    /// Application messages answered "exchange busy" (shed).
    pub busy_rejects: u64,
    /// Application messages answered "throttled" (over their session's limit).
    pub throttled: u64,
    /// PossResend (97=Y) requests ignored: the exchange had their ClOrdID already.
    pub resends_ignored: u64,
}

/// One session in a checkpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionMark {
    /// The session's index in the configuration that wrote it.
    pub session: u32,
    /// `FixConfig::comp_ids_hash` of its SenderCompID and TargetCompID (a configuration
    /// whose sessions moved still finds it).
    pub comp_ids: u64,
    /// MsgSeqNum of the session's next outbound message.
    pub out_seq: u64,
    /// MsgSeqNum of the oldest message in its resend store (0: the store is empty).
    pub oldest_stored: u64,
}

/// The edge's part of a checkpoint: each session that has sent a message.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EdgeCheckpoint {
    /// `resend_store_max` of the edge that wrote it.
    pub store_max: u64,
    pub sessions: Vec<SessionMark>,
}

/// An application message a session delivered: of session `ix`, MsgSeqNum `msg_seq`, applied
/// under journal record `seq` (stamped `ts`); `own`: the record's own message (else one that
/// waited behind a gap).
#[derive(Clone, Copy)]
struct Delivery {
    ix: usize,
    seq: u64,
    ts: u64,
    msg_seq: u64,
    /// PossResend (97=Y): a request the exchange reports as a duplicate is ignored.
    poss_resend: bool,
    own: bool,
}

/// A message of a type the edge does not handle (answered as unsupported on any session).
fn is_unsupported(app: &AppMsg) -> bool {
    matches!(app, AppMsg::Invalid(inv) if matches!(inv.kind, InvalidKind::Business { unsupported: true }))
}

/// Where a session's output goes while it is being driven.
struct Wire<'a> {
    conn: Option<ConnId>,
    out: &'a mut Outbox,
    muted: bool,
    disconnected: bool,
    logged_on: bool,
    /// What the session reported, for the log (`FixEdge::log_events`).
    noted: Noted,
}

impl<'a> Wire<'a> {
    fn new(conn: Option<ConnId>, out: &'a mut Outbox, muted: bool) -> Wire<'a> {
        Wire {
            conn,
            out,
            muted,
            disconnected: false,
            logged_on: false,
            noted: Noted::default(),
        }
    }
}

impl SessionHandler for Wire<'_> {
    #[inline]
    fn send(&mut self, bytes: &[u8]) {
        if let Some(c) = self.conn {
            self.out.push(c, bytes);
        }
    }
    fn on_event(&mut self, e: SessionEvent) {
        match e {
            SessionEvent::Disconnect(_) => self.disconnected = true,
            SessionEvent::LoggedOn { .. } => self.logged_on = true,
            _ => {}
        }
        self.noted.push(e);
    }
    fn defer_resend(&mut self, begin: u64, end: u64) -> bool {
        let (Some(conn), true) = (self.conn, self.out.defer_resends) else {
            return false;
        };
        self.out.resends.push(DeferredResend {
            conn,
            begin,
            end,
            at: self.out.items.len(),
        });
        true
    }
    #[inline]
    fn muted(&self) -> bool {
        self.muted
    }
}

/// How the edge hands one record's application messages to the exchange: the record's own
/// message with the ClOrdID hashes and the resolver's hint computed ahead for it, any other
/// (one that waited behind a gap) without.
pub struct ToExchange<'a> {
    pub x: &'a mut Exchange,
    pub hashes: ClHashes,
    pub hint: Option<&'a ClHint>,
    used: bool,
}

impl<'a> ToExchange<'a> {
    pub fn new(x: &'a mut Exchange, hashes: ClHashes, hint: Option<&'a ClHint>) -> ToExchange<'a> {
        ToExchange {
            x,
            hashes,
            hint,
            used: false,
        }
    }

    #[inline(always)]
    fn apply<O: Outputs>(&mut self, seq: u64, ts: u64, input: &Input<'_>, own: bool, out: &mut O) {
        if own && !self.used {
            self.used = true;
            match self.hint {
                Some(h) => self.x.apply_resolved(seq, ts, input, self.hashes, h, out),
                None => self.x.apply_prehashed(seq, ts, input, self.hashes, out),
            }
        } else {
            self.x.stop_resolving_here();
            self.x.apply(seq, ts, input, out);
        }
    }

    /// After the record: a hint that was not used accounts for its candidate.
    #[inline]
    fn finish(self) {
        if let (Some(h), false) = (self.hint, self.used) {
            self.x.skip_resolved(h);
        }
    }
}

pub struct FixEdge {
    cfg: Arc<FixConfig>,
    sessions: Vec<FixSession>,
    /// The connection each session is bound to.
    conn_of: Vec<Option<ConnId>>,
    /// Connection -> session index (one multiply and a probe or two).
    conns: SlotTable,
    /// Recovery: messages are numbered and stored exactly as live, but not formatted for the
    /// (long gone) connections. Output only; never part of the state.
    pub replaying: bool,
    pub stats: EdgeStats,
    /// The journal record of the checkpoint `bound_stores` took its bounds from (0: none).
    bound_seq: u64,
    /// The first checkpoint this edge disagreed with.
    divergence: Option<String>,
    /// The last record applied.
    last_seq: u64,
    /// Sessions whose connection went away during the current record, in the order they
    /// did: the exchange hears of each (`Input::Disconnected`) before the record ends.
    ended: Vec<u16>,
    /// By session: the TradSesReqID of its trading-status subscription (TradingSessionStatus
    /// on every change), if it has one.
    trading_subs: Vec<Option<Text>>,
    /// By session: the drop-copy sessions of its firm, which get a copy of every
    /// ExecutionReport about the orders it enters (empty for most; fixed by the config).
    copies: Vec<Vec<u16>>,
    enc: Encoder,
    log: EdgeLog,
}

/// TradSesStatus (340) of the exchange's status.
pub fn trad_ses_status(s: exchange::TradingStatus) -> TradSesStatus {
    match s {
        exchange::TradingStatus::Open => TradSesStatus::Open,
        exchange::TradingStatus::Closed => TradSesStatus::Closed,
    }
}

impl FixEdge {
    pub fn new(cfg: Arc<FixConfig>) -> FixEdge {
        let sessions = cfg
            .sessions
            .iter()
            .map(|d| {
                let mut sc = SessionConfig::new(d.version, &d.target_comp_id, &d.sender_comp_id);
                sc.authenticate = d.authenticates();
                sc.heartbeat_min_s = cfg.heartbeat_min_s;
                sc.heartbeat_max_s = cfg.heartbeat_max_s;
                sc.sending_time_tolerance_ns = cfg.sending_time_window_ns;
                sc.require_default_appl_ver_id = false;
                sc.allow_reset = d.allow_reset_seq_num;
                Session::new(sc, Store::new(cfg.clone()))
            })
            .collect();
        let n = cfg.sessions.len();
        let copies = cfg
            .sessions
            .iter()
            .map(|d| {
                if d.drop_copy {
                    return Vec::new();
                }
                (0..n as u16)
                    .filter(|&c| {
                        let dc = &cfg.sessions[c as usize];
                        dc.drop_copy && dc.firm == d.firm
                    })
                    .collect()
            })
            .collect();
        FixEdge {
            copies,
            sessions,
            conn_of: vec![None; n],
            conns: SlotTable::with_capacity(n.max(16)),
            replaying: false,
            stats: EdgeStats::default(),
            bound_seq: 0,
            divergence: None,
            last_seq: 0,
            ended: Vec::with_capacity(n),
            trading_subs: vec![None; n],
            enc: Encoder::default(),
            log: EdgeLog::new(n),
            cfg,
        }
    }

    pub fn config(&self) -> &Arc<FixConfig> {
        &self.cfg
    }

    /// The session connection `conn` is bound to, if any.
    #[inline]
    pub fn session_of(&self, conn: ConnId) -> Option<u16> {
        self.conns.get(conn).map(|s| s as u16)
    }

    /// The principal of session `ix`'s requests.
    #[inline]
    fn principal(&self, ix: u16) -> Principal {
        Principal {
            originator: ix,
            firm: self.cfg.sessions[ix as usize].firm,
        }
    }

    /// (inbound expected, outbound next) MsgSeqNum of the session whose counterparty is
    /// `sender_comp_id`.
    pub fn session_seqs(&self, sender_comp_id: &str) -> Option<(u64, u64)> {
        let ix = self
            .cfg
            .sessions
            .iter()
            .position(|s| s.sender_comp_id == sender_comp_id)?;
        let s = &self.sessions[ix];
        Some((s.next_in(), s.next_out()))
    }

    fn wire<'a>(&self, ix: usize, out: &'a mut Outbox) -> Wire<'a> {
        Wire::new(self.conn_of[ix], out, self.replaying)
    }

    fn unbind(&mut self, ix: usize) {
        self.trading_subs[ix] = None;
        if let Some(c) = self.conn_of[ix].take() {
            self.conns.remove(c);
            self.ended.push(ix as u16);
        }
    }

    /// Tells the exchange of each session that ended in this record (it may cancel their
    /// orders: the reports wait in the sessions' stores for a resend).
    #[inline]
    fn end_sessions<const MD: bool>(
        &mut self,
        seq: u64,
        ts: u64,
        x: &mut Exchange,
        out: &mut Outbox,
    ) {
        if !self.ended.is_empty() {
            self.tell_ended::<MD>(seq, ts, x, out);
        }
    }

    #[cold]
    fn tell_ended<const MD: bool>(
        &mut self,
        seq: u64,
        ts: u64,
        x: &mut Exchange,
        out: &mut Outbox,
    ) {
        for i in 0..self.ended.len() {
            let who = self.principal(self.ended[i]);
            let mut e = self.edge_out::<MD>(seq, ts, out);
            x.apply(seq, ts, &Input::Disconnected { who }, &mut e);
        }
        self.ended.clear();
    }

    /// The sink that turns outputs into FIX for the sessions they are for, when another edge
    /// applies an input (an API request that fills a FIX session's order): outputs for other
    /// originators go to `out.others`, market data to `out.market` (with `MD`).
    pub fn outputs<'a, const MD: bool>(
        &'a mut self,
        seq: u64,
        ts: u64,
        out: &'a mut Outbox,
    ) -> impl Outputs + 'a {
        self.edge_out::<MD>(seq, ts, out)
    }

    fn edge_out<'a, const MD: bool>(
        &'a mut self,
        seq: u64,
        ts: u64,
        out: &'a mut Outbox,
    ) -> EdgeOut<'a, MD> {
        EdgeOut {
            sessions: &mut self.sessions,
            copies: &self.copies,
            conn_of: &self.conn_of,
            cfg: &self.cfg,
            out,
            seq,
            ts,
            muted: self.replaying,
            stats: &mut self.stats,
            echo: &[],
            ignore_duplicate: false,
            route: None,
            trading_subs: &self.trading_subs,
            body: &mut self.enc,
        }
    }

    /// The TradSesReqID of session `ix`'s trading-status subscription, if it has one.
    pub fn trading_subscription(&self, ix: u16) -> Option<&[u8]> {
        self.trading_subs
            .get(ix as usize)?
            .as_ref()
            .map(|t| t.as_bytes())
    }

    /// A TradingSessionStatusRequest of session `ix` (`subscription` 0, 1 or 2): the
    /// exchange first hears that time passed (the day may have ended), then the session is
    /// answered with the status (0, 1) and subscribed (1) or unsubscribed (2).
    fn on_trading_status_request<const MD: bool>(
        &mut self,
        d: Delivery,
        route: Option<&fix::Route>,
        req_id: &Text,
        subscription: u8,
        x: &mut ToExchange<'_>,
        out: &mut Outbox,
    ) {
        let ix = d.ix;
        let mut e = self.edge_out::<MD>(d.seq, d.ts, out);
        x.x.apply(d.seq, d.ts, &Input::Tick, &mut e);
        if subscription == 2 {
            if self.trading_subs[ix].as_ref() == Some(req_id) {
                self.trading_subs[ix] = None;
                return;
            }
            let req_id = String::from_utf8_lossy(req_id.as_bytes());
            let text = format!("no trading-status subscription with TradSesReqID(335) {req_id}");
            let id = exchange::ClOrdId::truncated(&req_id);
            let mut e = self.edge_out::<MD>(d.seq, d.ts, out);
            e.route = route.map(|r| (r, ix as u16));
            e.business_reject(ix as u16, d.msg_seq, b"g", &id, false, &text);
            return;
        }
        if subscription == 1 {
            self.trading_subs[ix] = Some(*req_id);
        }
        let status = trad_ses_status(x.x.trading_status());
        let mut e = self.edge_out::<MD>(d.seq, d.ts, out);
        e.route = route.map(|r| (r, ix as u16));
        e.send_body(ix as u16, b'h', |v, enc| {
            TradingSessionStatus {
                req_id: Some(req_id.as_bytes()),
                status,
                unsolicited: false,
            }
            .encode_body(v, enc)
        });
    }

    /// After driving session `ix` with `w`: a disconnect closes and unbinds its connection.
    #[inline]
    fn after(&mut self, ix: usize, disconnected: bool, out: &mut Outbox) {
        if disconnected {
            if let Some(c) = self.conn_of[ix] {
                out.close(c);
            }
            self.unbind(ix);
        }
    }

    fn enter(&mut self, seq: u64) {
        assert!(
            seq > self.last_seq,
            "journal record {seq} applied after {}",
            self.last_seq
        );
        self.last_seq = seq;
    }

    /// A new process run: every session is disconnected (the ones the last run left
    /// connected end now).
    pub fn on_startup<const MD: bool>(
        &mut self,
        seq: u64,
        ts: u64,
        x: &mut Exchange,
        out: &mut Outbox,
    ) {
        self.enter(seq);
        for ix in 0..self.sessions.len() {
            self.sessions[ix].on_disconnected();
            self.unbind(ix);
        }
        self.end_sessions::<MD>(seq, ts, x, out);
    }

    /// One piece of a ResendRequest deferred to the owner (`Outbox::resends`): the session
    /// bound to `conn` writes `from..=end`, at most `span` sequence numbers of it, into `out`.
    /// Returns the next sequence number to serve (past `end`: done), or `None` if no session
    /// is bound to `conn` any more. Live only: it changes no state.
    pub fn resend_piece(
        &mut self,
        conn: ConnId,
        from: u64,
        end: u64,
        span: u64,
        now_ns: u64,
        out: &mut Outbox,
    ) -> Option<u64> {
        let ix = self.session_of(conn)? as usize;
        let mut w = Wire::new(Some(conn), out, false);
        Some(self.sessions[ix].resend_piece(from, end, span, now_ns, &mut w))
    }

    /// The TCP connection `conn` closed.
    pub fn on_disconnected<const MD: bool>(
        &mut self,
        seq: u64,
        ts: u64,
        conn: ConnId,
        x: &mut Exchange,
        out: &mut Outbox,
    ) {
        self.enter(seq);
        if let Some(ix) = self.session_of(conn) {
            self.sessions[ix as usize].on_disconnected();
            self.unbind(ix as usize);
            self.log
                .connection_lost(&self.cfg, ix as usize, conn, self.replaying);
        }
        self.end_sessions::<MD>(seq, ts, x, out);
    }

    /// The server logs out the session on `conn` for its conduct (over its logout throttle,
    /// or a reader too slow): Logout with `text`, and the connection closes after it. Nothing
    /// happens if no session is bound to `conn` any more.
    pub fn on_evict<const MD: bool>(
        &mut self,
        seq: u64,
        ts: u64,
        conn: ConnId,
        text: &[u8],
        x: &mut Exchange,
        out: &mut Outbox,
    ) {
        self.enter(seq);
        if let Some(ix) = self.session_of(conn) {
            let ix = ix as usize;
            let mut w = Wire::new(self.conn_of[ix], &mut *out, self.replaying);
            self.sessions[ix].logout_and_disconnect(text, DisconnectReason::Evicted, ts, &mut w);
            let noted = w.noted;
            self.log.events(&self.cfg, ix, ts, noted, self.replaying);
            self.after(ix, true, out);
        }
        self.end_sessions::<MD>(seq, ts, x, out);
    }

    /// Timer: heartbeats, TestRequests and their timeouts fall due at `ts`, and the exchange
    /// hears that time passed (the trading day may end).
    pub fn on_tick<const MD: bool>(
        &mut self,
        seq: u64,
        ts: u64,
        x: &mut Exchange,
        out: &mut Outbox,
    ) {
        self.enter(seq);
        let mut e = self.edge_out::<MD>(seq, ts, out);
        x.apply(seq, ts, &Input::Tick, &mut e);
        for ix in 0..self.sessions.len() {
            if self.conn_of[ix].is_none() {
                continue;
            }
            let mut w = Wire::new(self.conn_of[ix], &mut *out, self.replaying);
            self.sessions[ix].on_tick(ts, &mut w);
            let (d, noted) = (w.disconnected, w.noted);
            self.log.events(&self.cfg, ix, ts, noted, self.replaying);
            self.after(ix, d, out);
        }
        self.end_sessions::<MD>(seq, ts, x, out);
    }

    /// The exchange's pending work goes on (`exchange::Input::Continue`: the next chunk of
    /// each pending mass cancel); the reports go to the orders' owners as any others.
    pub fn on_continue<const MD: bool>(
        &mut self,
        seq: u64,
        ts: u64,
        x: &mut Exchange,
        out: &mut Outbox,
    ) {
        self.enter(seq);
        let mut e = self.edge_out::<MD>(seq, ts, out);
        x.apply(seq, ts, &Input::Continue, &mut e);
    }

    /// The connection session `ix` is bound to, if any.
    #[inline]
    pub fn conn_of_session(&self, ix: u16) -> Option<ConnId> {
        self.conn_of.get(ix as usize).copied().flatten()
    }

    /// Clean stop: Logout to every session that is logged on.
    pub fn on_shutdown<const MD: bool>(
        &mut self,
        seq: u64,
        ts: u64,
        x: &mut Exchange,
        out: &mut Outbox,
    ) {
        self.enter(seq);
        for ix in 0..self.sessions.len() {
            if self.conn_of[ix].is_none() {
                continue;
            }
            let mut w = Wire::new(self.conn_of[ix], &mut *out, self.replaying);
            self.sessions[ix].logout_and_disconnect(
                b"exchange shutting down",
                DisconnectReason::Shutdown,
                ts,
                &mut w,
            );
            self.after(ix, true, out);
        }
        self.end_sessions::<MD>(seq, ts, x, out);
    }

    /// One FIX message (journal record `seq`, stamped `ts`).
    pub fn on_fix<const MD: bool>(
        &mut self,
        seq: u64,
        ts: u64,
        fi: &FixInput,
        mut x: ToExchange<'_>,
        out: &mut Outbox,
    ) {
        self.enter(seq);
        let Some(ix) = self.session_of(fi.conn) else {
            match &fi.msg {
                Inbound::Logon(l) => self.on_logon(ts, fi, l, out),
                // Nothing but a Logon may come first: the connection is closed.
                _ => out.close(fi.conn),
            }
            x.finish();
            return;
        };
        let ix = ix as usize;
        let mut w = self.wire(ix, out);
        let own = self.sessions[ix].on_message(&fi.header, &fi.msg, ts, &mut w);
        let mut disconnected = w.disconnected;
        // A Logon with ResetSeqNumFlag=Y inside the session: as at a Logon on a connection,
        // numbers start again, and after a bounding checkpoint every one is stored.
        if w.logged_on && self.last_seq > self.bound_seq {
            self.sessions[ix].store_mut().skip_below = 0;
        }
        if !w.noted.is_empty() {
            let noted = w.noted;
            self.log.events(&self.cfg, ix, ts, noted, self.replaying);
        }
        let d = |h: &fix::InHeader, own| Delivery {
            ix,
            seq,
            ts,
            msg_seq: h.msg_seq_num,
            poss_resend: h.poss_resend,
            own,
        };
        if let Some(app) = own {
            self.on_app::<MD>(
                d(&fi.header, true),
                fi.header.route.as_deref(),
                app,
                &mut x,
                out,
            );
        }
        loop {
            let mut w = self.wire(ix, out);
            let next = self.sessions[ix].next_queued(ts, &mut w);
            disconnected |= w.disconnected;
            if !w.noted.is_empty() {
                let noted = w.noted;
                self.log.events(&self.cfg, ix, ts, noted, self.replaying);
            }
            let Some((header, app)) = next else {
                break;
            };
            self.on_app::<MD>(
                d(&header, false),
                header.route.as_deref(),
                &app,
                &mut x,
                out,
            );
        }
        self.after(ix, disconnected, out);
        self.end_sessions::<MD>(seq, ts, &mut *x.x, out);
        x.finish();
    }

    fn on_logon(&mut self, ts: u64, fi: &FixInput, l: &fix::Logon, out: &mut Outbox) {
        let conn = fi.conn;
        // `text` goes to the client, `reason` to the operator's log.
        let refuse = |this: &mut FixEdge, text: &str, reason: &str, out: &mut Outbox| {
            if !this.replaying {
                let bytes = fix::refusal(&mut this.enc, l, ts, text.as_bytes());
                out.push(conn, &bytes);
                this.log.logon_refused(conn, l, ts, reason);
            }
            out.close(conn);
        };
        let Some(ix) = self
            .cfg
            .find_session(l.sender_comp_id.as_bytes(), l.target_comp_id.as_bytes())
        else {
            return refuse(
                self,
                fix::LOGON_REFUSED,
                "unknown SenderCompID/TargetCompID",
                out,
            );
        };
        // Replay follows the journal: a Logon journaled while its session needed no password
        // (`Unchecked`) was accepted then, and is now, whatever the configuration says today.
        let then = (self.replaying
            && l.credentials == Credentials::Unchecked
            && self.cfg.sessions[ix].authenticates())
        .then(|| {
            Inbound::Logon(Box::new(fix::Logon {
                credentials: Credentials::Accepted,
                ..l.clone()
            }))
        });
        let (l, msg) = match &then {
            Some(m @ Inbound::Logon(accepted)) => (&**accepted, m),
            _ => (l, &fi.msg),
        };
        // Before anything that depends on the session: a Logon that is not authenticated
        // learns nothing of it.
        if let Some((text, DisconnectReason::BadCredentials)) =
            self.sessions[ix].logon_refusal(&fi.header, l, ts)
        {
            return refuse(self, &text, "credentials not accepted", out);
        }
        if self.cfg.sessions[ix].market_data == crate::MarketDataAccess::Only {
            let text = "market-data only session: log on at the market-data port";
            return refuse(self, text, text, out);
        }
        if self.conn_of[ix].is_some() {
            // Bound to another connection: that one is not disturbed, and the answer says no
            // more than the session's own checks would.
            let text = match self.sessions[ix].logon_refusal(&fi.header, l, ts) {
                Some((text, _)) => text,
                None => "session already logged on".to_string(),
            };
            return refuse(self, &text, &text, out);
        }
        if self.sessions[ix].logon_refusal(&fi.header, l, ts).is_none() && l.reset {
            // Numbers start again after a bounding checkpoint: store them all.
            if self.last_seq > self.bound_seq {
                self.sessions[ix].store_mut().skip_below = 0;
            }
        }
        self.sessions[ix].on_connected(ts);
        let mut w = Wire::new(Some(conn), &mut *out, self.replaying);
        self.sessions[ix].on_message(&fi.header, msg, ts, &mut w);
        let (logged_on, disconnected, noted) = (w.logged_on, w.disconnected, w.noted);
        self.log.events(&self.cfg, ix, ts, noted, self.replaying);
        if logged_on && !disconnected {
            self.conn_of[ix] = Some(conn);
            self.conns.put(conn, ix as u32);
        } else {
            out.close(conn);
        }
    }

    /// Any application message of a drop-copy session: it may not enter orders (nor ask for
    /// their status), so nothing reaches the exchange and it gets a BusinessMessageReject.
    #[cold]
    fn refuse_drop_copy<const MD: bool>(
        &mut self,
        d: Delivery,
        route: Option<&fix::Route>,
        app: &AppMsg,
        out: &mut Outbox,
    ) {
        let (msg_type, cl_ord_id) = match app {
            AppMsg::New(n) => (&b"D"[..], &n.cl_ord_id),
            AppMsg::Cancel { cl_ord_id, .. } => (&b"F"[..], cl_ord_id),
            AppMsg::Replace(r) => (&b"G"[..], &r.cl_ord_id),
            AppMsg::Status { cl_ord_id, .. } => (&b"H"[..], cl_ord_id),
            AppMsg::MassCancel { cl_ord_id, .. } => (&b"q"[..], cl_ord_id),
            AppMsg::Invalid(inv) => (inv.msg_type.as_bytes(), &inv.cl_ord_id),
            AppMsg::Busy(b) => (std::slice::from_ref(&b.msg_type), &b.cl_ord_id),
            // Answered before this is reached: the trading status is anyone's to ask.
            AppMsg::TradingStatus { .. } => (&b"g"[..], &exchange::ClOrdId::EMPTY),
        };
        let mut e = self.edge_out::<MD>(d.seq, d.ts, out);
        e.route = route.map(|r| (r, d.ix as u16));
        e.business_reject(
            d.ix as u16,
            d.msg_seq,
            msg_type,
            cl_ord_id,
            false,
            "drop-copy session: it receives copies and may not enter orders",
        );
    }

    /// An application message a session delivered (`d`).
    /// `route`: the message's routing fields, which every answer to it carries reversed.
    fn on_app<const MD: bool>(
        &mut self,
        d: Delivery,
        route: Option<&fix::Route>,
        app: &AppMsg,
        x: &mut ToExchange<'_>,
        out: &mut Outbox,
    ) {
        let Delivery {
            ix,
            seq,
            ts,
            msg_seq,
            poss_resend,
            own,
        } = d;
        if let AppMsg::TradingStatus {
            req_id,
            subscription,
        } = app
        {
            return self.on_trading_status_request::<MD>(d, route, req_id, *subscription, x, out);
        }
        let who = self.principal(ix as u16);
        if self.cfg.sessions[ix].drop_copy && !is_unsupported(app) {
            return self.refuse_drop_copy::<MD>(d, route, app, out);
        }
        let mut e = self.edge_out::<MD>(seq, ts, out);
        e.ignore_duplicate = poss_resend;
        e.route = route.map(|r| (r, ix as u16));
        match app {
            AppMsg::New(n) => x.apply(seq, ts, &Input::New { who, order: n }, own, &mut e),
            AppMsg::Cancel {
                cl_ord_id,
                orig_cl_ord_id,
            } => x.apply(
                seq,
                ts,
                &Input::Cancel {
                    who,
                    cl_ord_id,
                    orig_cl_ord_id,
                },
                own,
                &mut e,
            ),
            AppMsg::Replace(r) => {
                x.apply(seq, ts, &Input::Replace { who, replace: r }, own, &mut e)
            }
            AppMsg::Status { cl_ord_id, echo } => {
                e.echo = echo.as_bytes();
                x.apply(seq, ts, &Input::Status { who, cl_ord_id }, own, &mut e);
            }
            AppMsg::MassCancel {
                cl_ord_id,
                request_type,
                symbol,
                side,
            } => {
                let rejected = match request_type {
                    7 => None,
                    1 if symbol.is_some() => None,
                    1 => Some("MassCancelRequestType 1 needs Symbol(55)"),
                    _ => Some("unsupported MassCancelRequestType (use 1 or 7)"),
                };
                match rejected {
                    // The report follows the last chunk of cancels (`Output::MassCanceled`):
                    // in this record, or in a later `on_continue`.
                    None => {
                        let input = Input::MassCancel {
                            who,
                            cl_ord_id,
                            symbol: if *request_type == 7 { None } else { *symbol },
                            side: *side,
                        };
                        x.apply(seq, ts, &input, own, &mut e);
                    }
                    Some(text) => e.mass_cancel_report(
                        ix as u16,
                        MassCancelOutcome {
                            cl_ord_id,
                            request_seq: seq,
                            request_type: *request_type,
                            rejected: Some(text),
                            count: 0,
                            symbol: *symbol,
                            side: *side,
                        },
                    ),
                }
            }
            AppMsg::Invalid(inv) => match inv.kind {
                InvalidKind::Business { unsupported } => e.business_reject(
                    ix as u16,
                    msg_seq,
                    inv.msg_type.as_bytes(),
                    &inv.cl_ord_id,
                    unsupported,
                    &inv.reason,
                ),
                InvalidKind::Order => {
                    let n = x.x.next_exec_n(seq);
                    e.order_reject(
                        ix as u16,
                        &inv.cl_ord_id,
                        n,
                        inv.reject,
                        &inv.reason,
                        inv.echo.as_bytes(),
                    )
                }
                InvalidKind::CancelReject { replace } => e.cancel_reject_text(
                    ix as u16,
                    CancelRejectText {
                        cl_ord_id: &inv.cl_ord_id,
                        orig_cl_ord_id: &inv.orig_cl_ord_id,
                        order: None,
                        replace,
                        reason_code: cxl_rej_reason(inv.reject),
                        text: &inv.reason,
                    },
                ),
            },
            AppMsg::Busy(b) if b.why != crate::BusyWhy::Overload => {
                e.stats.throttled += 1;
                let text = b.why.text();
                match b.msg_type {
                    b'D' => {
                        let n = x.x.next_exec_n(seq);
                        e.order_reject(
                            ix as u16,
                            &b.cl_ord_id,
                            n,
                            Reject::ExchangeBusy,
                            &text,
                            b.echo.as_bytes(),
                        )
                    }
                    b'F' | b'G' => e.cancel_reject_text(
                        ix as u16,
                        CancelRejectText {
                            cl_ord_id: &b.cl_ord_id,
                            orig_cl_ord_id: &b.orig_cl_ord_id,
                            order: None,
                            replace: b.msg_type == b'G',
                            reason_code: cxl_rej_reason(Reject::ExchangeBusy),
                            text: &text,
                        },
                    ),
                    t => e.business_reject(ix as u16, msg_seq, &[t], &b.cl_ord_id, false, &text),
                }
            }
            AppMsg::Busy(b) => {
                e.stats.busy_rejects += 1;
                let text = Reject::ExchangeBusy.text();
                match b.msg_type {
                    b'D' => {
                        let n = x.x.next_exec_n(seq);
                        e.order_reject(
                            ix as u16,
                            &b.cl_ord_id,
                            n,
                            Reject::ExchangeBusy,
                            text,
                            b.echo.as_bytes(),
                        )
                    }
                    b'F' | b'G' => e.cancel_reject(
                        ix as u16,
                        &b.cl_ord_id,
                        &b.orig_cl_ord_id,
                        CancelRejectRecipe {
                            order: None,
                            replace: b.msg_type == b'G',
                            reason_code: cxl_rej_reason(Reject::ExchangeBusy),
                            text,
                        },
                    ),
                    t => e.business_reject(ix as u16, msg_seq, &[t], &b.cl_ord_id, false, text),
                }
            }
            AppMsg::TradingStatus { .. } => unreachable!("handled above"),
        }
    }
}
