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
//! Invariants: a session is bound to at most one connection; a Logon for a session bound to
//! another connection is refused without disturbing it; outbound MsgSeqNum increases by one
//! per message sent on a session (`fix::Session`).

use crate::config::FixConfig;
use crate::record::{AppMsg, ConnId, FixInput, InvalidKind};
use crate::store::{Body, CancelRejectRecipe, ExecRecipe, Store};
use exchange::snap::{SnapReader, SnapWriter};
use exchange::{
    ClHashes, ClHint, ClOrdId, Exchange, Input, OrderStatus, Output, Outputs, Principal, Reject,
    Report, ReportKind, SlotTable,
};
use fix::app::{
    self, AppMessage, BusinessMessageReject, ExecType, OrdStatus, OrderMassCancelReport,
    OrderlessReport,
};
use fix::{
    BusinessRejectReason, DisconnectReason, Encoder, FixVersion, Inbound, Session, SessionConfig,
    SessionEvent, SessionHandler, SessionVars,
};
use std::sync::Arc;
use types::CancelReason;

type FixSession = Session<Store, AppMsg>;

/// FIX messages to send, in order, after a batch of inputs was applied.
#[derive(Default)]
pub struct Outbox {
    pub buf: Vec<u8>,
    pub items: Vec<OutItem>,
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
    pub busy_rejects: u64,
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
    own: bool,
}

/// Where a session's output goes while it is being driven.
struct Wire<'a> {
    conn: Option<ConnId>,
    out: &'a mut Outbox,
    muted: bool,
    disconnected: bool,
    logged_on: bool,
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
    enc: Encoder,
}

impl FixEdge {
    pub fn new(cfg: Arc<FixConfig>) -> FixEdge {
        let sessions = cfg
            .sessions
            .iter()
            .map(|d| {
                let mut sc = SessionConfig::new(d.version, &d.target_comp_id, &d.sender_comp_id);
                sc.password = d.password.clone();
                sc.heartbeat_min_s = cfg.heartbeat_min_s;
                sc.heartbeat_max_s = cfg.heartbeat_max_s;
                sc.sending_time_tolerance_ns = None;
                sc.require_default_appl_ver_id = false;
                Session::new(sc, Store::new(cfg.clone()))
            })
            .collect();
        let n = cfg.sessions.len();
        FixEdge {
            sessions,
            conn_of: vec![None; n],
            conns: SlotTable::with_capacity(n.max(16)),
            replaying: false,
            stats: EdgeStats::default(),
            bound_seq: 0,
            divergence: None,
            last_seq: 0,
            enc: Encoder::default(),
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
        Wire {
            conn: self.conn_of[ix],
            out,
            muted: self.replaying,
            disconnected: false,
            logged_on: false,
        }
    }

    fn unbind(&mut self, ix: usize) {
        if let Some(c) = self.conn_of[ix].take() {
            self.conns.remove(c);
        }
    }

    /// After driving session `ix` with `w`: a disconnect closes and unbinds its connection.
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

    /// A new process run: every session is disconnected.
    pub fn on_startup(&mut self, seq: u64) {
        self.enter(seq);
        for ix in 0..self.sessions.len() {
            self.sessions[ix].on_disconnected();
            self.unbind(ix);
        }
    }

    /// The TCP connection `conn` closed.
    pub fn on_disconnected(&mut self, seq: u64, conn: ConnId) {
        self.enter(seq);
        if let Some(ix) = self.session_of(conn) {
            self.sessions[ix as usize].on_disconnected();
            self.unbind(ix as usize);
        }
    }

    /// Timer: heartbeats, TestRequests and their timeouts fall due at `ts`.
    pub fn on_tick(&mut self, seq: u64, ts: u64, out: &mut Outbox) {
        self.enter(seq);
        for ix in 0..self.sessions.len() {
            if self.conn_of[ix].is_none() {
                continue;
            }
            let mut w = Wire {
                conn: self.conn_of[ix],
                out: &mut *out,
                muted: self.replaying,
                disconnected: false,
                logged_on: false,
            };
            self.sessions[ix].on_tick(ts, &mut w);
            let d = w.disconnected;
            self.after(ix, d, out);
        }
    }

    /// Clean stop: Logout to every session that is logged on.
    pub fn on_shutdown(&mut self, seq: u64, ts: u64, out: &mut Outbox) {
        self.enter(seq);
        for ix in 0..self.sessions.len() {
            if self.conn_of[ix].is_none() {
                continue;
            }
            let mut w = Wire {
                conn: self.conn_of[ix],
                out: &mut *out,
                muted: self.replaying,
                disconnected: false,
                logged_on: false,
            };
            self.sessions[ix].logout_and_disconnect(
                b"exchange shutting down",
                DisconnectReason::Shutdown,
                ts,
                &mut w,
            );
            self.after(ix, true, out);
        }
    }

    /// One FIX message (journal record `seq`, stamped `ts`).
    pub fn on_fix(
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
        let d = |msg_seq, own| Delivery {
            ix,
            seq,
            ts,
            msg_seq,
            own,
        };
        if let Some(app) = own {
            self.on_app(d(fi.header.msg_seq_num, true), app, &mut x, out);
        }
        loop {
            let mut w = self.wire(ix, out);
            let next = self.sessions[ix].next_queued(ts, &mut w);
            disconnected |= w.disconnected;
            let Some((msg_seq, app)) = next else {
                break;
            };
            self.on_app(d(msg_seq, false), &app, &mut x, out);
        }
        x.finish();
        self.after(ix, disconnected, out);
    }

    fn on_logon(&mut self, ts: u64, fi: &FixInput, l: &fix::Logon, out: &mut Outbox) {
        let conn = fi.conn;
        let refuse = |this: &mut FixEdge, text: &str, out: &mut Outbox| {
            if !this.replaying {
                let bytes = fix::refusal(&mut this.enc, l, ts, text.as_bytes());
                out.push(conn, &bytes);
            }
            out.close(conn);
        };
        let Some(ix) = self
            .cfg
            .find_session(l.sender_comp_id.as_bytes(), l.target_comp_id.as_bytes())
        else {
            return refuse(self, "unknown SenderCompID/TargetCompID", out);
        };
        if self.conn_of[ix].is_some() {
            // Bound to another connection: that one is not disturbed, and the answer says no
            // more than the session's own checks would.
            let text = match self.sessions[ix].logon_refusal(&fi.header, l) {
                Some((text, _)) => text,
                None => "session already logged on".to_string(),
            };
            return refuse(self, &text, out);
        }
        if self.sessions[ix].logon_refusal(&fi.header, l).is_none() && l.reset {
            // Numbers start again after a bounding checkpoint: store them all.
            if self.last_seq > self.bound_seq {
                self.sessions[ix].store_mut().skip_below = 0;
            }
        }
        self.sessions[ix].on_connected(ts);
        let mut w = Wire {
            conn: Some(conn),
            out: &mut *out,
            muted: self.replaying,
            disconnected: false,
            logged_on: false,
        };
        self.sessions[ix].on_message(&fi.header, &fi.msg, ts, &mut w);
        let (logged_on, disconnected) = (w.logged_on, w.disconnected);
        if logged_on && !disconnected {
            self.conn_of[ix] = Some(conn);
            self.conns.put(conn, ix as u32);
        } else {
            out.close(conn);
        }
    }

    /// An application message a session delivered (`d`).
    fn on_app(&mut self, d: Delivery, app: &AppMsg, x: &mut ToExchange<'_>, out: &mut Outbox) {
        let Delivery {
            ix,
            seq,
            ts,
            msg_seq,
            own,
        } = d;
        let who = self.principal(ix as u16);
        let mut e = EdgeOut {
            sessions: &mut self.sessions,
            conn_of: &self.conn_of,
            cfg: &self.cfg,
            out,
            seq,
            ts,
            muted: self.replaying,
            stats: &mut self.stats,
            echo: &[],
            mass_count: None,
        };
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
                let mut count = 0;
                if rejected.is_none() {
                    let symbol = if *request_type == 7 { None } else { *symbol };
                    let input = Input::MassCancel {
                        who,
                        symbol,
                        side: *side,
                    };
                    x.apply(seq, ts, &input, own, &mut e);
                    count = e.mass_count.unwrap_or(0);
                }
                let sym = symbol.map(|s| e.cfg.instruments[s as usize].symbol);
                let report = OrderMassCancelReport {
                    cl_ord_id: cl_ord_id.as_bytes(),
                    report_id: seq,
                    request_type: *request_type,
                    rejected: rejected.map(str::as_bytes),
                    total_affected_orders: count,
                    symbol: sym.as_ref().map(|s| s.as_str().as_bytes()),
                    side: *side,
                };
                e.send_body(ix as u16, b'r', |v, enc| report.encode_body(v, enc));
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
                    &inv.cl_ord_id,
                    &inv.orig_cl_ord_id,
                    replace,
                    cxl_rej_reason(inv.reject),
                    &inv.reason,
                ),
            },
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
        }
    }

    /// The checkpoint of the current state: each session that has sent anything, with its
    /// next outbound MsgSeqNum and the MsgSeqNum of the oldest message it still stores.
    pub fn checkpoint(&self) -> EdgeCheckpoint {
        EdgeCheckpoint {
            store_max: self.cfg.resend_store_max as u64,
            sessions: self
                .sessions
                .iter()
                .enumerate()
                .filter(|(_, s)| s.next_out() > 1)
                .map(|(ix, s)| {
                    let def = &self.cfg.sessions[ix];
                    SessionMark {
                        session: ix as u32,
                        comp_ids: FixConfig::comp_ids_hash(
                            &def.sender_comp_id,
                            &def.target_comp_id,
                        ),
                        out_seq: s.next_out(),
                        oldest_stored: s.store().live().next().map_or(0, |m| m.seq),
                    }
                })
                .collect(),
        }
    }

    /// The index of the session a checkpoint's mark names, if this configuration has it.
    fn marked_session(&self, m: &SessionMark) -> Option<usize> {
        let hash = |def: &crate::SessionDef| {
            FixConfig::comp_ids_hash(&def.sender_comp_id, &def.target_comp_id)
        };
        let at = m.session as usize;
        if self
            .cfg
            .sessions
            .get(at)
            .is_some_and(|d| hash(d) == m.comp_ids)
        {
            return Some(at);
        }
        self.cfg.sessions.iter().position(|d| hash(d) == m.comp_ids)
    }

    /// Checks checkpoint record `seq` against the state: every session it names must have the
    /// same next outbound MsgSeqNum.
    pub fn on_checkpoint(&mut self, seq: u64, cp: &EdgeCheckpoint) {
        self.enter(seq);
        if self.divergence.is_some() {
            return;
        }
        for m in &cp.sessions {
            let Some(ix) = self.marked_session(m) else {
                continue;
            };
            let now = self.sessions[ix].next_out();
            if now != m.out_seq {
                let def = &self.cfg.sessions[ix];
                self.divergence = Some(format!(
                    "journal record {seq}: session {}->{} would send its next message as \
                     MsgSeqNum {now}, but the run that wrote the journal sent it as {}: this \
                     replay diverged from that run (another version or configuration)",
                    def.sender_comp_id, def.target_comp_id, m.out_seq
                ));
                return;
            }
        }
    }

    /// The first checkpoint this edge's state disagreed with.
    pub fn divergence(&self) -> Option<&str> {
        self.divergence.as_deref()
    }

    /// Replay only: skip storing the application messages that checkpoint `cp` (journal
    /// record `seq`) shows the resend stores will have forgotten by the end of the journal.
    /// Each store keeps its session's newest `resend_store_max` messages, so a message older
    /// than the oldest one stored at the checkpoint can never be among them later, provided
    /// the store is no larger now than when the checkpoint was written (otherwise nothing is
    /// skipped). Until a session's numbers are reset after the checkpoint (Logon with
    /// ResetSeqNumFlag), its messages numbered below that oldest one are numbered and hashed
    /// as ever but not stored; the final state is the same as without bounds. The replay must
    /// apply record `seq`; `unbound_stores` at its end. Returns whether any bound was set.
    pub fn bound_stores(&mut self, seq: u64, cp: &EdgeCheckpoint) -> bool {
        if self.cfg.resend_store_max as u64 > cp.store_max {
            return false;
        }
        let mut any = false;
        for m in &cp.sessions {
            if let Some(ix) = self.marked_session(m) {
                self.sessions[ix].store_mut().skip_below = m.oldest_stored;
                any |= m.oldest_stored > 1;
            }
        }
        if any {
            self.bound_seq = seq;
        }
        any
    }

    /// Whether `bound_stores` set bounds (and `unbound_stores` has not cleared them).
    pub fn bounded(&self) -> bool {
        self.bound_seq != 0
    }

    /// Stores every message from now on (the end of a replay with `bound_stores`).
    pub fn unbound_stores(&mut self) {
        for s in &mut self.sessions {
            s.store_mut().skip_below = 0;
        }
        self.bound_seq = 0;
    }

    /// Appends the edge's state (every session's numbers, timers, queue and stored messages,
    /// and its connection) to `out`.
    pub fn snapshot(&self, out: &mut Vec<u8>) {
        let stored: usize = self.sessions.iter().map(|s| s.store().live_len()).sum();
        out.reserve(64 + stored * 96);
        let mut rec = Vec::new();
        let mut scratch = Encoder::default();
        let mut e = SnapWriter(out);
        e.u64(self.last_seq);
        e.u64(self.sessions.len() as u64);
        for (ix, s) in self.sessions.iter().enumerate() {
            let v = s.vars();
            for x in [
                v.state as u64,
                v.next_in,
                v.next_out,
                v.heart_bt_int_s,
                v.connected_at_ns,
                v.last_recv_ns,
                v.last_sent_ns,
                v.test_request_sent_ns,
                v.test_request_count,
                v.logout_sent_ns,
                v.resend_trigger,
            ] {
                e.u64(x);
            }
            e.u64(self.conn_of[ix].unwrap_or(0));
            e.u64(self.conn_of[ix].is_some() as u64);
            let queued: Vec<_> = s.queued().collect();
            e.u64(queued.len() as u64);
            for q in queued {
                rec.clear();
                FixInput {
                    conn: 0,
                    header: q.header,
                    msg: q.msg.clone(),
                }
                .encode(&mut exchange::codec::Enc(&mut rec));
                e.bytes(&rec);
            }
            let store = s.store();
            e.u64(store.live_len() as u64);
            for m in store.live() {
                e.u64(m.seq);
                e.u64(m.msg_type as u64);
                e.u64(m.sending_ts);
                match store.parts(m) {
                    (Body::Bytes, body, _) => {
                        e.u64(0);
                        e.bytes(body);
                    }
                    // Stored as the bytes it stands for (a reject's body is the same in
                    // every version).
                    (Body::CancelReject(_), _, _) => {
                        e.u64(0);
                        scratch.begin_body();
                        store.body_into(m, FixVersion::Fix44, &mut scratch);
                        e.bytes(scratch.body());
                    }
                    (Body::Exec(r), cl, orig) => {
                        e.u64(1);
                        write_exec_recipe(&mut e, r, cl, orig);
                    }
                }
            }
        }
    }

    /// Restores what `snapshot` wrote (with the same configuration); returns the bytes after
    /// its part.
    pub fn restore<'a>(&mut self, bytes: &'a [u8]) -> Result<&'a [u8], String> {
        let mut r = SnapReader(bytes);
        self.last_seq = r.u64()?;
        let n = r.u64()? as usize;
        if n != self.sessions.len() {
            return Err(format!(
                "snapshot: {n} sessions but the config has {}",
                self.sessions.len()
            ));
        }
        for ix in 0..n {
            let mut f = [0u64; 11];
            for x in &mut f {
                *x = r.u64()?;
            }
            let v = SessionVars {
                state: u8::try_from(f[0]).map_err(|_| "snapshot: bad session state")?,
                next_in: f[1],
                next_out: f[2],
                heart_bt_int_s: f[3],
                connected_at_ns: f[4],
                last_recv_ns: f[5],
                last_sent_ns: f[6],
                test_request_sent_ns: f[7],
                test_request_count: f[8],
                logout_sent_ns: f[9],
                resend_trigger: f[10],
            };
            let conn = r.u64()?;
            if r.u64()? == 1 {
                self.conn_of[ix] = Some(conn);
                self.conns.put(conn, ix as u32);
            }
            let mut queue = Vec::new();
            for _ in 0..r.count()? {
                let mut d = exchange::codec::Dec(r.bytes()?);
                let fi = FixInput::decode(&mut d).map_err(|e| format!("snapshot: {e}"))?;
                d.end().map_err(|e| format!("snapshot: {e}"))?;
                queue.push(fix::Queued {
                    header: fi.header,
                    msg: fi.msg,
                });
            }
            let s = &mut self.sessions[ix];
            s.restore(&v, queue).map_err(|e| format!("snapshot: {e}"))?;
            for _ in 0..r.count()? {
                let seq = r.u64()?;
                let msg_type = r.u64()? as u8;
                let sending_ts = r.u64()?;
                match r.u64()? {
                    0 => {
                        let body = r.bytes()?;
                        s.store_mut().restore_entry(
                            seq,
                            msg_type,
                            sending_ts,
                            Body::Bytes,
                            body,
                            None,
                        );
                    }
                    1 => {
                        let (recipe, cl, orig) =
                            read_exec_recipe(&mut r, self.cfg.instruments.len())?;
                        s.store_mut().restore_entry(
                            seq,
                            b'8',
                            sending_ts,
                            Body::Exec(recipe),
                            cl,
                            orig,
                        );
                    }
                    k => return Err(format!("snapshot: stored message kind {k}")),
                }
            }
        }
        Ok(r.0)
    }
}

/// The exchange's outputs of one application message, as FIX messages on the sessions of
/// their owners.
struct EdgeOut<'a> {
    sessions: &'a mut [FixSession],
    conn_of: &'a [Option<ConnId>],
    cfg: &'a FixConfig,
    out: &'a mut Outbox,
    seq: u64,
    ts: u64,
    muted: bool,
    stats: &'a mut EdgeStats,
    /// A status request's echoed fields.
    echo: &'a [u8],
    mass_count: Option<u64>,
}

impl Outputs for EdgeOut<'_> {
    /// A bounded replay that will have forgotten the report by its end numbers it and builds
    /// nothing of it.
    #[inline(always)]
    fn skip_report(&mut self, to: u16) -> bool {
        let s = &mut self.sessions[to as usize];
        if s.next_out() >= s.store().skip_below {
            return false;
        }
        s.next_app(self.ts);
        self.stats.execution_reports += 1;
        true
    }

    #[inline]
    fn output(&mut self, o: &Output<'_>) {
        match *o {
            Output::Report(r) => self.report(r),
            Output::NewRejected {
                to,
                order,
                reason,
                n,
            } => {
                let echo = crate::adapter::echo_of(self.cfg, order);
                self.order_reject(
                    to,
                    &order.cl_ord_id,
                    n,
                    reason,
                    reason.text(),
                    echo.as_bytes(),
                );
            }
            Output::CancelRejected {
                to,
                cl_ord_id,
                orig_cl_ord_id,
                replace,
                reason,
                order,
            } => self.cancel_reject(
                to,
                cl_ord_id,
                orig_cl_ord_id,
                CancelRejectRecipe {
                    order: order.map(|(id, s)| (id, ord_status(s))),
                    replace,
                    reason_code: cxl_rej_reason(reason),
                    text: reason.text(),
                },
            ),
            Output::MassCanceled { count, .. } => self.mass_count = Some(count),
            Output::StatusUnknown { to, cl_ord_id, n } => {
                let echo = self.echo;
                let seq = self.seq;
                self.send_body(to, b'8', |v, enc| {
                    OrderlessReport {
                        cl_ord_id: cl_ord_id.as_bytes(),
                        exec_id: (seq, n),
                        status: true,
                        echo,
                        ord_rej_reason: None,
                        text: Reject::UnknownOrder.text().as_bytes(),
                        transact_time_ns: None,
                    }
                    .encode_body(v, enc)
                });
            }
            Output::Market(_) => {}
        }
    }
}

impl EdgeOut<'_> {
    /// Writes session `to`'s newest stored message if it is logged on (and this is not a
    /// replay): recipes are formatted only here and on resend.
    #[inline(always)]
    fn write_last(&mut self, to: u16, seq: u64, msg_type: u8) {
        let s = &mut self.sessions[to as usize];
        let Some(conn) = self.conn_of[to as usize] else {
            return;
        };
        if self.muted || !s.is_active() {
            return;
        }
        let version = s.config().version;
        let mut w = Wire {
            conn: Some(conn),
            out: &mut *self.out,
            muted: false,
            disconnected: false,
            logged_on: false,
        };
        s.write_app(seq, &[msg_type], self.ts, &mut w, |enc, store| {
            store.body_into(store.last(), version, enc)
        });
    }

    /// An application message given as its body: numbered, stored as bytes, written.
    fn send_body(&mut self, to: u16, msg_type: u8, body: impl FnOnce(FixVersion, &mut Encoder)) {
        let ts = self.ts;
        let s = &mut self.sessions[to as usize];
        let version = s.config().version;
        let seq = s.next_app(ts);
        let mut enc = Encoder::default();
        enc.begin_body();
        body(version, &mut enc);
        s.store_mut().push_body(seq, msg_type, ts, enc.body());
        if msg_type == b'8' {
            self.stats.execution_reports += 1;
        }
        self.write_last(to, seq, msg_type);
    }

    #[inline(never)]
    fn report(&mut self, r: &Report<'_>) {
        let o = r.order;
        let to = o.owner;
        let ts = self.ts;
        let s = &mut self.sessions[to as usize];
        let seq = s.next_app(ts);
        let (exec_type, last, text) = match r.kind {
            ReportKind::New => (ExecType::New, None, None),
            ReportKind::Fill { price, qty } => (ExecType::Trade, Some((price, qty)), None),
            ReportKind::Canceled(reason) => (
                ExecType::Canceled,
                None,
                (reason != CancelReason::User).then_some(reason),
            ),
            ReportKind::Replaced => (ExecType::Replaced, None, None),
            ReportKind::Status => (ExecType::OrderStatus, None, None),
        };
        let m = s
            .store_mut()
            .slot(seq, b'8', ts, r.cl_ord_id, r.orig_cl_ord_id);
        m.body = Body::Exec(ExecRecipe {
            order_id: r.id,
            exec_seq: self.seq,
            exec_n: r.n,
            exec_type,
            ord_status: ord_status(o.status()),
            side: o.side,
            ord_type: o.ord_type,
            tif: o.tif,
            account: o.account,
            symbol: o.symbol,
            price: o.price,
            order_qty: o.order_qty,
            last,
            leaves_qty: o.leaves_qty,
            cum_qty: o.cum_qty,
            notional: o.notional,
            text,
        });
        self.stats.execution_reports += 1;
        self.write_last(to, seq, b'8');
    }

    /// ExecutionReport ExecType=8 for a NewOrderSingle refused.
    fn order_reject(
        &mut self,
        to: u16,
        cl_ord_id: &ClOrdId,
        n: u32,
        reason: Reject,
        text: &str,
        echo: &[u8],
    ) {
        let seq = self.seq;
        let ts = self.ts;
        self.send_body(to, b'8', |v, enc| {
            OrderlessReport {
                cl_ord_id: cl_ord_id.as_bytes(),
                exec_id: (seq, n),
                status: false,
                echo,
                ord_rej_reason: Some(ord_rej_reason(reason, v)),
                text: text.as_bytes(),
                transact_time_ns: Some(ts),
            }
            .encode_body(v, enc)
        });
    }

    /// OrderCancelReject `r` with a fixed text: stored as a recipe, formatted only when
    /// written to a live connection or resent (never in replay).
    fn cancel_reject(
        &mut self,
        to: u16,
        cl_ord_id: &ClOrdId,
        orig_cl_ord_id: &ClOrdId,
        r: CancelRejectRecipe,
    ) {
        let ts = self.ts;
        let s = &mut self.sessions[to as usize];
        let seq = s.next_app(ts);
        let m = s.store_mut().slot(
            seq,
            b'9',
            ts,
            cl_ord_id.as_bytes(),
            Some(orig_cl_ord_id.as_bytes()),
        );
        m.body = Body::CancelReject(r);
        self.write_last(to, seq, b'9');
    }

    /// OrderCancelReject with a text of the adapter's (stored as bytes).
    fn cancel_reject_text(
        &mut self,
        to: u16,
        cl_ord_id: &ClOrdId,
        orig_cl_ord_id: &ClOrdId,
        replace: bool,
        reason_code: u32,
        text: &str,
    ) {
        self.send_body(to, b'9', |v, enc| {
            app::OrderCancelReject {
                order_id: None,
                cl_ord_id: cl_ord_id.as_bytes(),
                orig_cl_ord_id: orig_cl_ord_id.as_bytes(),
                ord_status: None,
                response_to: if replace {
                    app::CxlRejResponseTo::CancelReplaceRequest
                } else {
                    app::CxlRejResponseTo::CancelRequest
                },
                reason: reason_code,
                text: text.as_bytes(),
            }
            .encode_body(v, enc)
        });
    }

    fn business_reject(
        &mut self,
        to: u16,
        ref_seq: u64,
        msg_type: &[u8],
        cl_ord_id: &ClOrdId,
        unsupported: bool,
        text: &str,
    ) {
        self.send_body(to, b'j', |v, enc| {
            BusinessMessageReject {
                ref_seq_num: ref_seq,
                ref_msg_type: msg_type,
                business_reject_ref_id: (!cl_ord_id.is_empty()).then(|| cl_ord_id.as_bytes()),
                reason: if unsupported {
                    BusinessRejectReason::UnsupportedMessageType
                } else {
                    BusinessRejectReason::Other
                },
                text: text.as_bytes(),
            }
            .encode_body(v, enc)
        });
    }
}

/// OrdStatus (39) of an order's status.
pub fn ord_status(s: OrderStatus) -> OrdStatus {
    match s {
        OrderStatus::New => OrdStatus::New,
        OrderStatus::PartiallyFilled => OrdStatus::PartiallyFilled,
        OrderStatus::Filled => OrdStatus::Filled,
        OrderStatus::Canceled => OrdStatus::Canceled,
    }
}

/// OrdRejReason (103) of a refused new order, in `version`'s codes.
pub fn ord_rej_reason(r: Reject, version: FixVersion) -> u32 {
    use app::ord_rej_reason as c;
    match r {
        Reject::UnknownSymbol => c::UNKNOWN_SYMBOL,
        Reject::DuplicateClOrdId | Reject::DuplicateOrderId => c::DUPLICATE_ORDER,
        _ if version == FixVersion::Fix42 => c::BROKER_OPTION,
        _ => c::OTHER,
    }
}

/// CxlRejReason (102) of a refused cancel or replace.
pub fn cxl_rej_reason(r: Reject) -> u32 {
    use app::cxl_rej_reason as c;
    match r {
        Reject::UnknownOrder => c::UNKNOWN_ORDER,
        Reject::DuplicateClOrdId => c::DUPLICATE_CL_ORD_ID,
        Reject::ExchangeBusy => c::ALREADY_PENDING,
        _ => c::OTHER,
    }
}

/// Cancel reasons by snapshot code (code = index + 1; 0 = no text).
const CANCEL_REASONS: [CancelReason; 6] = [
    CancelReason::User,
    CancelReason::Ioc,
    CancelReason::Fok,
    CancelReason::Stp,
    CancelReason::NoLiquidity,
    CancelReason::Expired,
];

const EXEC_TYPES: [ExecType; 7] = [
    ExecType::New,
    ExecType::Trade,
    ExecType::Canceled,
    ExecType::Replaced,
    ExecType::Rejected,
    ExecType::Expired,
    ExecType::OrderStatus,
];

const ORD_STATUSES: [OrdStatus; 6] = [
    OrdStatus::New,
    OrdStatus::PartiallyFilled,
    OrdStatus::Filled,
    OrdStatus::Canceled,
    OrdStatus::Rejected,
    OrdStatus::Expired,
];

fn code_of<T: PartialEq>(all: &[T], x: &T) -> u64 {
    all.iter().position(|a| a == x).unwrap_or(0) as u64
}

fn write_exec_recipe(e: &mut SnapWriter<'_>, r: &ExecRecipe, cl: &[u8], orig: Option<&[u8]>) {
    e.u64(r.order_id);
    e.bytes(cl);
    match orig {
        Some(o) => {
            e.u64(1);
            e.bytes(o);
        }
        None => e.u64(0),
    }
    e.u64(r.exec_seq);
    e.u64(r.exec_n as u64);
    e.u64(code_of(&EXEC_TYPES, &r.exec_type));
    e.u64(code_of(&ORD_STATUSES, &r.ord_status));
    e.u64(exchange::codec::side_code(r.side) as u64);
    e.u64(exchange::codec::ord_type_code(r.ord_type) as u64);
    e.u64(exchange::codec::tif_code(r.tif) as u64);
    e.u64(r.account as u64);
    e.u64(r.symbol as u64);
    e.u64(r.price as u64);
    e.u64(r.order_qty);
    match r.last {
        Some((px, qty)) => {
            e.u64(1);
            e.u64(px as u64);
            e.u64(qty);
        }
        None => e.u64(0),
    }
    e.u64(r.leaves_qty);
    e.u64(r.cum_qty);
    e.bytes(&r.notional.to_le_bytes());
    e.u64(r.text.map_or(0, |t| code_of(&CANCEL_REASONS, &t) + 1));
}

/// One ExecutionReport recipe of a snapshot (see `write_exec_recipe` for the layout).
#[allow(clippy::type_complexity)]
fn read_exec_recipe<'a>(
    r: &mut SnapReader<'a>,
    instruments: usize,
) -> Result<(ExecRecipe, &'a [u8], Option<&'a [u8]>), String> {
    let id = |b: &'a [u8]| -> Result<&'a [u8], String> {
        if b.len() > exchange::CL_ORD_ID_LEN_MAX {
            return Err("snapshot: stored ClOrdID too long".into());
        }
        std::str::from_utf8(b)
            .map(|_| b)
            .map_err(|_| "snapshot: stored ClOrdID not UTF-8".to_string())
    };
    let order_id = r.u64()?;
    let cl_ord_id = id(r.bytes()?)?;
    let orig_cl_ord_id = match r.u64()? {
        0 => None,
        1 => Some(id(r.bytes()?)?),
        _ => return Err("snapshot: bad OrigClOrdID flag".into()),
    };
    let exec_seq = r.u64()?;
    let exec_n = u32::try_from(r.u64()?).map_err(|_| "snapshot: bad exec number")?;
    let exec_type = *EXEC_TYPES
        .get(r.u64()? as usize)
        .ok_or("snapshot: bad ExecType")?;
    let ord_status = *ORD_STATUSES
        .get(r.u64()? as usize)
        .ok_or("snapshot: bad OrdStatus")?;
    let code = |v: u64| u8::try_from(v).map_err(|_| "snapshot: bad code".to_string());
    let side = exchange::codec::side_from(code(r.u64()?)?).map_err(|e| e.0.to_string())?;
    let ord_type = exchange::codec::ord_type_from(code(r.u64()?)?).map_err(|e| e.0.to_string())?;
    let tif = exchange::codec::tif_from(code(r.u64()?)?).map_err(|e| e.0.to_string())?;
    let account = u32::try_from(r.u64()?).map_err(|_| "snapshot: bad account")?;
    let symbol = u32::try_from(r.u64()?).map_err(|_| "snapshot: bad symbol")?;
    if symbol as usize >= instruments {
        return Err("snapshot: stored report for an unknown symbol".into());
    }
    let price = r.u64()? as i64;
    let order_qty = r.u64()?;
    let last = match r.u64()? {
        0 => None,
        1 => Some((r.u64()? as i64, r.u64()?)),
        _ => return Err("snapshot: bad last fill flag".into()),
    };
    let leaves_qty = r.u64()?;
    let cum_qty = r.u64()?;
    let notional = i128::from_le_bytes(
        r.bytes()?
            .try_into()
            .map_err(|_| "snapshot: bad notional".to_string())?,
    );
    let text = match r.u64()? {
        0 => None,
        k => Some(
            *CANCEL_REASONS
                .get(k as usize - 1)
                .ok_or("snapshot: bad cancel reason")?,
        ),
    };
    let recipe = ExecRecipe {
        order_id,
        exec_seq,
        exec_n,
        exec_type,
        ord_status,
        side,
        ord_type,
        tif,
        account,
        symbol,
        price,
        order_qty,
        last,
        leaves_qty,
        cum_qty,
        notional,
        text,
    };
    Ok((recipe, cl_ord_id, orig_cl_ord_id))
}
