//! The outbound half of the state machine: serving ResendRequest, timers (heartbeat,
//! TestRequest, Logout), numbering and writing application messages, Reject and Logout.

use super::{
    inbound::msg_type_of, inbound::reason_text, inbound::Inbound, store::MessageStore,
    store::Stored, DisconnectReason, InboundApp, RejectOf, Session, SessionConfig, SessionEvent,
    SessionHandler, SessionState, NS_PER_SEC,
};
use crate::decode::FieldError;
use crate::encode::Encoder;
use crate::encode::Header;
use crate::tags;
use crate::tags::msg_type;
use crate::time::format_utc_timestamp;
use crate::time::UTC_TIMESTAMP_LEN_MAX;

impl<S: MessageStore, A: InboundApp> Session<S, A> {
    /// Serves the counterparty's ResendRequest: application messages again with PossDupFlag=Y
    /// and OrigSendingTime, admin messages (and anything not stored) as SequenceReset-GapFill.
    pub(super) fn serve_resend<H: SessionHandler>(
        &mut self,
        msg: &Inbound<A>,
        begin: Option<u64>,
        end: Option<u64>,
        seq: u64,
        now_ns: u64,
        h: &mut H,
    ) {
        let begin = match begin {
            Some(b) if b >= 1 => b,
            Some(_) => {
                let e = FieldError::bad_value(tags::BEGIN_SEQ_NO);
                return self.reject_field(msg, seq, e, now_ns, h);
            }
            None => return self.reject_missing(msg, seq, tags::BEGIN_SEQ_NO, now_ns, h),
        };
        let Some(end) = end else {
            return self.reject_missing(msg, seq, tags::END_SEQ_NO, now_ns, h);
        };
        if end != 0 && end < begin {
            let e = FieldError::bad_value(tags::END_SEQ_NO);
            return self.reject_field(msg, seq, e, now_ns, h);
        }
        let last = self.next_out - 1;
        let end = if end == 0 || end > last { last } else { end };
        if begin > end || h.muted() {
            // Muted (a replay): nothing is formatted, but the session counts as having sent,
            // as it did live, so that its heartbeat timer runs the same.
            if begin <= end {
                self.last_sent_ns = now_ns;
            }
            h.on_event(SessionEvent::ResendServed {
                begin,
                end,
                resent: 0,
            });
            return;
        }
        if h.defer_resend(begin, end) {
            // The owner writes it in pieces; the session counts as having sent, as it will.
            self.last_sent_ns = now_ns;
            h.on_event(SessionEvent::ResendServed {
                begin,
                end,
                resent: 0,
            });
            return;
        }
        let resent = self.resend_range(begin, end, true, now_ns, h);
        self.last_sent_ns = now_ns;
        h.on_event(SessionEvent::ResendServed { begin, end, resent });
    }

    /// One piece of a resend the owner took over ([`SessionHandler::defer_resend`]): the
    /// messages `from..=end` but no more than `span` sequence numbers, as a ResendRequest
    /// is served. Returns the next sequence number to serve (past `end`: done). Changes no
    /// state of the session: it formats from its store.
    pub fn resend_piece<H: SessionHandler>(
        &mut self,
        from: u64,
        end: u64,
        span: u64,
        now_ns: u64,
        h: &mut H,
    ) -> u64 {
        let to = end.min(from.saturating_add(span.max(1) - 1));
        self.resend_range(from, to, true, now_ns, h);
        to + 1
    }

    /// Writes `begin..=end` again: stored messages with PossDupFlag=Y and OrigSendingTime, a
    /// GapFill over anything not stored (up to `end` if `fill_end`). Returns how many stored
    /// messages it resent.
    fn resend_range<H: SessionHandler>(
        &mut self,
        begin: u64,
        end: u64,
        fill_end: bool,
        now_ns: u64,
        h: &mut H,
    ) -> u64 {
        let mut next = begin;
        let mut resent = 0;
        let Session {
            cfg, store, enc, ..
        } = self;
        let mut resend_one = |m: Stored<'_>| {
            if m.seq < next {
                return;
            }
            if m.seq > next {
                gap_fill_msg(enc, cfg, next, m.seq, now_ns, h);
            }
            let mut orig = [0u8; UTC_TIMESTAMP_LEN_MAX];
            let n = format_utc_timestamp(m.sending_time_ns, cfg.time_precision, &mut orig);
            enc.begin(m.msg_type);
            enc.header(&Header {
                sender_comp_id: cfg.sender_comp_id.as_bytes(),
                target_comp_id: cfg.target_comp_id.as_bytes(),
                msg_seq_num: m.seq,
                sending_time_ns: now_ns,
                poss_dup: true,
                orig_sending_time: Some(&orig[..n]),
                time_precision: cfg.time_precision,
            });
            enc.raw(m.body);
            h.send(enc.finish(cfg.version));
            resent += 1;
            next = m.seq + 1;
        };
        store.resend(begin, end, cfg.version, &mut resend_one);
        if next <= end && fill_end {
            gap_fill_msg(enc, cfg, next, end + 1, now_ns, h);
        }
        resent
    }

    /// Timers: heartbeats, TestRequest, and the logon, heartbeat and logout timeouts.
    pub fn on_tick<H: SessionHandler>(&mut self, now_ns: u64, h: &mut H) {
        match self.state {
            SessionState::Disconnected => {}
            SessionState::AwaitingLogon => {
                if now_ns.saturating_sub(self.connected_at_ns) >= self.cfg.logon_timeout_ns {
                    self.disconnect(DisconnectReason::LogonTimeout, h);
                }
            }
            SessionState::LogoutSent => {
                if now_ns.saturating_sub(self.logout_sent_ns) >= self.cfg.logout_timeout_ns {
                    self.disconnect(DisconnectReason::LogoutTimeout, h);
                }
            }
            SessionState::Active => {
                let hb_ns = self.heart_bt_int_s.max(1) * NS_PER_SEC;
                // "HeartBtInt plus a reasonable transmission time": 20 %.
                let grace_ns = hb_ns + hb_ns / 5;
                match self.test_request_sent_ns {
                    Some(sent) if now_ns.saturating_sub(sent) >= hb_ns => {
                        self.logout_and_disconnect(
                            b"heartbeat timeout",
                            DisconnectReason::HeartbeatTimeout,
                            now_ns,
                            h,
                        );
                        return;
                    }
                    Some(_) => {}
                    None => {
                        if now_ns.saturating_sub(self.last_recv_ns) >= grace_ns {
                            self.test_request_count += 1;
                            let n = self.test_request_count;
                            self.send_admin(msg_type::TEST_REQUEST, now_ns, h, |e| {
                                e.field_u64(tags::TEST_REQ_ID, n)
                            });
                            self.test_request_sent_ns = Some(now_ns);
                            return;
                        }
                    }
                }
                if now_ns.saturating_sub(self.last_sent_ns) >= hb_ns {
                    self.send_admin(msg_type::HEARTBEAT, now_ns, h, |_| {});
                }
            }
        }
    }

    /// Starts the Logout handshake. The session disconnects when the counterparty answers,
    /// or after `logout_timeout_ns`.
    pub fn logout<H: SessionHandler>(&mut self, text: &[u8], now_ns: u64, h: &mut H) {
        match self.state {
            SessionState::Active => {
                self.send_logout(text, now_ns, h);
                self.state = SessionState::LogoutSent;
                self.logout_sent_ns = now_ns;
            }
            SessionState::AwaitingLogon => self.disconnect(DisconnectReason::LogoutComplete, h),
            SessionState::LogoutSent | SessionState::Disconnected => {}
        }
    }

    /// Sends Logout with `text` and ends the session at once (`reason`): the exchange stops,
    /// or the owner found the session broken.
    pub fn logout_and_disconnect<H: SessionHandler>(
        &mut self,
        text: &[u8],
        reason: DisconnectReason,
        now_ns: u64,
        h: &mut H,
    ) {
        if matches!(self.state, SessionState::Active | SessionState::LogoutSent) {
            self.send_logout(text, now_ns, h);
        }
        self.disconnect(reason, h);
    }

    /// Numbers the next outbound application message: returns its MsgSeqNum. The owner stores
    /// it (its store) and, if [`Session::is_active`], writes it with [`Session::write_app`]
    /// (a message numbered while the counterparty is away is stored only: it gets it by
    /// ResendRequest after its next Logon).
    #[inline]
    pub fn next_app(&mut self, now_ns: u64) -> u64 {
        let seq = self.next_out;
        self.next_out += 1;
        self.last_sent_ns = now_ns;
        seq
    }

    /// Writes application message `seq` (numbered by `next_app`): the standard header, then
    /// `body` fills in the fields after it (it may read the store, e.g. the message just
    /// stored).
    #[inline]
    pub fn write_app<H: SessionHandler>(
        &mut self,
        seq: u64,
        msg_type: &[u8],
        now_ns: u64,
        h: &mut H,
        body: impl FnOnce(&mut Encoder, &S),
    ) {
        self.enc.begin(msg_type);
        self.enc.header(&Header {
            sender_comp_id: self.cfg.sender_comp_id.as_bytes(),
            target_comp_id: self.cfg.target_comp_id.as_bytes(),
            msg_seq_num: seq,
            sending_time_ns: now_ns,
            poss_dup: false,
            orig_sending_time: None,
            time_precision: self.cfg.time_precision,
        });
        body(&mut self.enc, &self.store);
        h.send(self.enc.finish(self.cfg.version));
    }

    /// Sends a session-level Reject (35=3) of an inbound message.
    pub fn send_reject<H: SessionHandler>(&mut self, r: &RejectOf<'_>, now_ns: u64, h: &mut H) {
        let RejectOf {
            ref_seq_num,
            ref_msg_type,
            ref_tag,
            reason,
            text,
        } = *r;
        let code = reason.code_in(self.cfg.version);
        let route = self.reply_route.take();
        self.send_admin(msg_type::REJECT, now_ns, h, |e| {
            if let Some(r) = &route {
                r.write_reversed(e);
            }
            e.field_u64(tags::REF_SEQ_NUM, ref_seq_num);
            if let Some(tag) = ref_tag {
                e.field_i64(tags::REF_TAG_ID, tag);
            }
            if let Some(t) = ref_msg_type {
                e.field(tags::REF_MSG_TYPE, t);
            }
            if let Some(code) = code {
                e.field_u64(tags::SESSION_REJECT_REASON, code);
            }
            if !text.is_empty() {
                e.field(tags::TEXT, text);
            }
        });
        self.reply_route = route;
        h.on_event(SessionEvent::Rejected {
            ref_seq_num,
            reason,
            ref_tag,
        });
    }

    pub(super) fn reject_field<H: SessionHandler>(
        &mut self,
        msg: &Inbound<A>,
        seq: u64,
        e: FieldError,
        now_ns: u64,
        h: &mut H,
    ) {
        let r = e.session_reject_reason();
        self.send_reject(
            &RejectOf {
                ref_seq_num: seq,
                ref_msg_type: msg_type_of(msg),
                ref_tag: Some(e.tag as i64),
                reason: r,
                text: reason_text(r),
            },
            now_ns,
            h,
        );
    }

    pub(super) fn reject_missing<H: SessionHandler>(
        &mut self,
        msg: &Inbound<A>,
        seq: u64,
        tag: u32,
        now_ns: u64,
        h: &mut H,
    ) {
        self.reject_field(msg, seq, FieldError::missing(tag), now_ns, h);
    }

    pub(super) fn send_logout<H: SessionHandler>(&mut self, text: &[u8], now_ns: u64, h: &mut H) {
        self.send_admin(msg_type::LOGOUT, now_ns, h, |e| {
            if !text.is_empty() {
                e.field(tags::TEXT, text);
            }
        });
    }

    pub(super) fn disconnect<H: SessionHandler>(&mut self, reason: DisconnectReason, h: &mut H) {
        self.on_disconnected();
        h.on_event(SessionEvent::Disconnect(reason));
    }

    /// Sends a session-level message with the next MsgSeqNum (not stored: resent as gap fill).
    pub(super) fn send_admin<H: SessionHandler, F: FnOnce(&mut Encoder)>(
        &mut self,
        msg_type: &[u8],
        now_ns: u64,
        h: &mut H,
        body: F,
    ) {
        let seq = self.next_out;
        self.next_out += 1;
        self.last_sent_ns = now_ns;
        if h.muted() {
            return;
        }
        self.write_app(seq, msg_type, now_ns, h, |e, _| body(e));
    }
}
/// SequenceReset-GapFill from `seq` to `new_seq` (PossDupFlag=Y, OrigSendingTime = now).
fn gap_fill_msg<H: SessionHandler>(
    enc: &mut Encoder,
    cfg: &SessionConfig,
    seq: u64,
    new_seq: u64,
    now_ns: u64,
    h: &mut H,
) {
    let mut now = [0u8; UTC_TIMESTAMP_LEN_MAX];
    let n = format_utc_timestamp(now_ns, cfg.time_precision, &mut now);
    enc.begin(msg_type::SEQUENCE_RESET);
    enc.header(&Header {
        sender_comp_id: cfg.sender_comp_id.as_bytes(),
        target_comp_id: cfg.target_comp_id.as_bytes(),
        msg_seq_num: seq,
        sending_time_ns: now_ns,
        poss_dup: true,
        orig_sending_time: Some(&now[..n]),
        time_precision: cfg.time_precision,
    });
    enc.field(tags::GAP_FILL_FLAG, b"Y");
    enc.field_u64(tags::NEW_SEQ_NO, new_seq);
    h.send(enc.finish(cfg.version));
}
