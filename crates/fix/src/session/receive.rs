//! The inbound half of the state machine: Logon, header checks, sequencing, gaps and the
//! out-of-order queue, SequenceReset, Logout.

use super::{
    inbound::malformed_input, inbound::msg_type_of, inbound::read_inbound, inbound::reason_text,
    inbound::refusal, inbound::seq_too_low_text, inbound::Credentials, inbound::HeaderProblem,
    inbound::InHeader, inbound::Inbound, inbound::Logon, inbound::LOGON_REFUSED,
    store::MessageStore, DisconnectReason, InboundApp, Queued, RejectOf, Session, SessionEvent,
    SessionHandler, SessionState,
};
use crate::decode::frame;
use crate::decode::resync;
use crate::decode::DecodeError;
use crate::decode::FieldError;
use crate::decode::Limits;
use crate::tags;
use crate::tags::msg_type;
use crate::FixVersion;
use crate::SessionRejectReason;

impl<S: MessageStore, A: InboundApp> Session<S, A> {
    /// One inbound message. Returns the application message to deliver now, if the message
    /// is one in sequence; the caller handles it, then calls [`Session::next_queued`] until
    /// it returns `None` (messages that waited behind a gap the message filled).
    #[inline]
    pub fn on_message<'m, H: SessionHandler>(
        &mut self,
        header: &InHeader,
        msg: &'m Inbound<A>,
        now_ns: u64,
        h: &mut H,
    ) -> Option<&'m A> {
        // Nearly every message: an application message in sequence on a logged-on session,
        // its header in order and not a possible duplicate. Exactly what the general path
        // does with it, without its checks.
        if let Inbound::App(a) = msg {
            if matches!(self.state, SessionState::Active | SessionState::LogoutSent)
                && header.problem == HeaderProblem::None
                && header.msg_seq_num == self.next_in
                && !header.poss_dup
                && (header.sending_time_ns != 0 || !self.cfg.require_sending_time)
                && self.cfg.sending_time_tolerance_ns.is_none()
            {
                self.last_recv_ns = now_ns;
                self.test_request_sent_ns = None;
                self.next_in += 1;
                return Some(a);
            }
        }
        self.on_message_general(header, msg, now_ns, h)
    }

    fn on_message_general<'m, H: SessionHandler>(
        &mut self,
        header: &InHeader,
        msg: &'m Inbound<A>,
        now_ns: u64,
        h: &mut H,
    ) -> Option<&'m A> {
        if header.route.is_none() {
            return self.on_message_checked(header, msg, now_ns, h);
        }
        self.reply_route = header.route.clone();
        let delivered = self.on_message_checked(header, msg, now_ns, h);
        self.reply_route = None;
        delivered
    }

    fn on_message_checked<'m, H: SessionHandler>(
        &mut self,
        header: &InHeader,
        msg: &'m Inbound<A>,
        now_ns: u64,
        h: &mut H,
    ) -> Option<&'m A> {
        match self.state {
            SessionState::Disconnected => None,
            SessionState::AwaitingLogon => {
                self.last_recv_ns = now_ns;
                match msg {
                    Inbound::Logon(l) => self.on_logon(header, l, now_ns, h),
                    _ => self.disconnect(DisconnectReason::FirstMessageNotLogon, h),
                }
                None
            }
            SessionState::Active | SessionState::LogoutSent => {
                self.last_recv_ns = now_ns;
                self.test_request_sent_ns = None;
                let seq = self.check_header(header, msg, now_ns, h)?;
                self.sequence(header, msg, seq, now_ns, h)
            }
        }
    }

    /// The next queued message whose turn has come, processed: an application message is
    /// returned (with its header: its MsgSeqNum, PossResend...) for the caller to handle (call
    /// again afterwards); admin messages are handled here. `None` when the next expected one is
    /// not queued.
    #[inline]
    pub fn next_queued<H: SessionHandler>(
        &mut self,
        now_ns: u64,
        h: &mut H,
    ) -> Option<(InHeader, A)> {
        if self.queue.is_empty() {
            return None;
        }
        self.next_queued_general(now_ns, h)
    }

    fn next_queued_general<H: SessionHandler>(
        &mut self,
        now_ns: u64,
        h: &mut H,
    ) -> Option<(InHeader, A)> {
        loop {
            if !matches!(self.state, SessionState::Active | SessionState::LogoutSent) {
                return None;
            }
            // Queued entries below the expected number were filled by a SequenceReset.
            while self
                .queue
                .front()
                .is_some_and(|q| q.header.msg_seq_num < self.next_in)
            {
                self.queue.pop_front();
            }
            match self.queue.front() {
                Some(q) if q.header.msg_seq_num == self.next_in => {}
                _ => return None,
            }
            let q = self.queue.pop_front()?;
            if self.resend_trigger.is_some_and(|t| self.next_in >= t) {
                self.resend_trigger = None;
            }
            // It passed the header checks when it arrived.
            let seq = q.header.msg_seq_num;
            self.reply_route = q.header.route.clone();
            let delivered = self.process(&q.header, &q.msg, seq, now_ns, h).cloned();
            self.reply_route = None;
            if let Some(a) = delivered {
                return Some((q.header, a));
            }
        }
    }

    /// Feeds raw bytes read from the connection (for clients and tests: the same state
    /// machine, the bytes read with [`read_inbound`], application messages delivered as their
    /// bytes). Returns how many bytes were consumed and calls `app` with each application
    /// message in order. Garbled frames are skipped. Bytes arriving while disconnected are
    /// discarded.
    pub fn on_bytes<H: SessionHandler>(
        &mut self,
        buf: &[u8],
        now_ns: u64,
        h: &mut H,
        app: &mut dyn FnMut(&[u8]),
    ) -> usize
    where
        A: From<Vec<u8>> + AsRef<[u8]>,
    {
        let mut consumed = 0;
        while consumed < buf.len() {
            if self.state == SessionState::Disconnected {
                return buf.len();
            }
            let rest = &buf[consumed..];
            match frame(rest, Limits::default().msg_len_max) {
                Ok(None) => break,
                Ok(Some(len)) => {
                    self.on_frame(&rest[..len], now_ns, h, app);
                    consumed += len;
                }
                Err(e) => {
                    h.on_event(SessionEvent::Garbled(e));
                    consumed += resync(rest).max(1);
                }
            }
        }
        consumed
    }

    /// One complete message (framed, BodyLength and CheckSum verified) as bytes; see
    /// `on_bytes`.
    pub fn on_frame<H: SessionHandler>(
        &mut self,
        bytes: &[u8],
        now_ns: u64,
        h: &mut H,
        app: &mut dyn FnMut(&[u8]),
    ) where
        A: From<Vec<u8>> + AsRef<[u8]>,
    {
        let expect = (self.state != SessionState::AwaitingLogon).then(|| {
            (
                self.cfg.version.begin_string(),
                self.cfg.target_comp_id.as_bytes(),
                self.cfg.sender_comp_id.as_bytes(),
            )
        });
        // The decoder is borrowed in place (taking it out would allocate a new one).
        let read = match self.decoder.decode_framed(bytes) {
            Ok(msg) => Ok(read_inbound(&msg, expect, |m| {
                Ok(A::from(m.as_bytes().to_vec()))
            })),
            Err(e) => Err(e),
        };
        let (header, msg) = match read {
            Ok(r) => r,
            Err(e) => match malformed_input(e, bytes) {
                None => {
                    if let DecodeError::Frame(f) = e {
                        h.on_event(SessionEvent::Garbled(f));
                    }
                    return;
                }
                Some((header, m)) => {
                    if self.state == SessionState::AwaitingLogon {
                        self.disconnect(DisconnectReason::BadLogon, h);
                        return;
                    }
                    (header, Inbound::Malformed(m))
                }
            },
        };
        if let Some(a) = self.on_message(&header, &msg, now_ns, h) {
            app(a.as_ref());
        }
        while let Some((_, a)) = self.next_queued(now_ns, h) {
            app(a.as_ref());
        }
    }

    /// Why this session would refuse Logon `l` (with header `header`), if it would: the
    /// Logout's text and the reason. Changes nothing; the owner asks it of a session that is
    /// logged on from another connection, so that an impostor learns no more than a wrong
    /// password tells. Until the Logon is authenticated (CompIDs, then credentials) the text is
    /// [`LOGON_REFUSED`], whatever the reason: nothing about the session (its version, its
    /// sequence numbers, whether it exists) leaks to who cannot log on to it.
    pub fn logon_refusal(
        &self,
        header: &InHeader,
        l: &Logon,
        now_ns: u64,
    ) -> Option<(String, DisconnectReason)> {
        let no = |text: &str, reason| Some((text.to_string(), reason));
        if l.sender_comp_id.as_bytes() != self.cfg.target_comp_id.as_bytes()
            || l.target_comp_id.as_bytes() != self.cfg.sender_comp_id.as_bytes()
        {
            return no(LOGON_REFUSED, DisconnectReason::BadCompId);
        }
        if self.cfg.authenticate && l.credentials != Credentials::Accepted {
            return no(LOGON_REFUSED, DisconnectReason::BadCredentials);
        }
        if l.begin_string.as_bytes() != self.cfg.version.begin_string() {
            return no("wrong BeginString", DisconnectReason::UnsupportedVersion);
        }
        let seq = header.msg_seq_num;
        if seq == 0 {
            return no("MsgSeqNum(34) missing", DisconnectReason::MissingMsgSeqNum);
        }
        if let Some(tol) = self.cfg.sending_time_tolerance_ns {
            if header.sending_time_ns != 0 && header.sending_time_ns.abs_diff(now_ns) > tol {
                return no(
                    "Invalid Logon message: SendingTime accuracy problem, field=52",
                    DisconnectReason::SendingTimeAccuracy,
                );
            }
        }
        let (lo, hi) = (self.cfg.heartbeat_min_s, self.cfg.heartbeat_max_s);
        if !l.heart_bt_int.is_some_and(|hb| (lo..=hi).contains(&hb)) {
            return no(
                &format!("HeartBtInt(108) must be {lo}..{hi}"),
                DisconnectReason::BadLogon,
            );
        }
        if self.cfg.version == FixVersion::Fix50Sp2
            && self.cfg.require_default_appl_ver_id
            && !l.has_default_appl_ver_id
        {
            return no(
                "DefaultApplVerID(1137) required",
                DisconnectReason::BadLogon,
            );
        }
        if l.reset && !self.cfg.allow_reset {
            return no(
                "ResetSeqNumFlag(141)=Y is not accepted on this session",
                DisconnectReason::BadLogon,
            );
        }
        if l.reset && seq != 1 {
            return no(
                "ResetSeqNumFlag(141)=Y requires MsgSeqNum(34)=1",
                DisconnectReason::BadLogon,
            );
        }
        if !l.reset && seq < self.next_in {
            let expected = self.next_in;
            let text = String::from_utf8_lossy(&seq_too_low_text(expected, seq)).into_owned();
            return Some((
                text,
                DisconnectReason::SeqTooLow {
                    expected,
                    received: seq,
                },
            ));
        }
        None
    }

    /// Logon while awaiting one: authenticate, negotiate, answer, then check the sequence.
    fn on_logon<H: SessionHandler>(
        &mut self,
        header: &InHeader,
        l: &Logon,
        now_ns: u64,
        h: &mut H,
    ) {
        if let Some((text, reason)) = self.logon_refusal(header, l, now_ns) {
            if !h.muted() {
                let bytes = refusal(&mut self.enc, l, now_ns, text.as_bytes());
                h.send(&bytes);
            }
            self.disconnect(reason, h);
            return;
        }
        let seq = header.msg_seq_num;
        let hb = l.heart_bt_int.unwrap_or(30);
        if l.reset {
            self.next_in = 1;
            self.next_out = 1;
            self.store.reset();
        }
        self.heart_bt_int_s = hb;
        self.state = SessionState::Active;
        self.test_request_sent_ns = None;
        let reset = l.reset;
        self.send_logon(hb, reset, now_ns, h);
        h.on_event(SessionEvent::LoggedOn { reset });
        if seq == self.next_in {
            self.next_in += 1;
        } else {
            self.request_resend(seq, now_ns, h);
        }
    }

    /// Our Logon: the answer to the counterparty's.
    fn send_logon<H: SessionHandler>(&mut self, hb: u64, reset: bool, now_ns: u64, h: &mut H) {
        let fixt = self.cfg.version == FixVersion::Fix50Sp2;
        let mut appl_ver = [0u8; 8];
        let av = self.cfg.default_appl_ver_id.as_bytes();
        let av_len = av.len().min(appl_ver.len());
        appl_ver[..av_len].copy_from_slice(&av[..av_len]);
        self.send_admin(msg_type::LOGON, now_ns, h, |e| {
            e.field(tags::ENCRYPT_METHOD, b"0");
            e.field_u64(tags::HEART_BT_INT, hb);
            if reset {
                e.field(tags::RESET_SEQ_NUM_FLAG, b"Y");
            }
            if fixt {
                e.field(tags::DEFAULT_APPL_VER_ID, &appl_ver[..av_len]);
            }
        });
    }

    /// The header checks of every message after Logon. Returns its MsgSeqNum if it goes on.
    fn check_header<H: SessionHandler>(
        &mut self,
        header: &InHeader,
        msg: &Inbound<A>,
        now_ns: u64,
        h: &mut H,
    ) -> Option<u64> {
        match header.problem {
            HeaderProblem::None | HeaderProblem::BadTime { .. } | HeaderProblem::Missing { .. } => {
            }
            HeaderProblem::BeginString => {
                self.logout_and_disconnect(
                    b"Incorrect BeginString",
                    DisconnectReason::BeginStringMismatch,
                    now_ns,
                    h,
                );
                return None;
            }
            // The Reject names no RefTagID (as FIX's session test 2k and QuickFIX/J's acceptance
            // suite expect); its Text says which CompID.
            HeaderProblem::CompId { tag } => {
                let r = SessionRejectReason::CompIdProblem;
                let mt = msg_type_of(msg);
                let text: &[u8] = if tag == tags::SENDER_COMP_ID {
                    b"CompID problem: SenderCompID(49) is not this session's"
                } else {
                    b"CompID problem: TargetCompID(56) is not this session's"
                };
                self.send_reject(
                    &RejectOf {
                        ref_seq_num: header.msg_seq_num,
                        ref_msg_type: mt,
                        ref_tag: None,
                        reason: r,
                        text,
                    },
                    now_ns,
                    h,
                );
                self.logout_and_disconnect(
                    b"CompID problem",
                    DisconnectReason::CompIdProblem,
                    now_ns,
                    h,
                );
                return None;
            }
        }
        // A SequenceReset-Reset's MsgSeqNum is ignored (it may be 0 or absent).
        let reset = matches!(
            msg,
            Inbound::SequenceReset {
                gap_fill: false,
                ..
            }
        );
        if header.msg_seq_num == 0 && !reset {
            self.logout_and_disconnect(
                b"MsgSeqNum(34) missing or not a number",
                DisconnectReason::MissingMsgSeqNum,
                now_ns,
                h,
            );
            return None;
        }
        Some(header.msg_seq_num)
    }

    /// Sequence-number handling of a checked message.
    fn sequence<'m, H: SessionHandler>(
        &mut self,
        header: &InHeader,
        msg: &'m Inbound<A>,
        seq: u64,
        now_ns: u64,
        h: &mut H,
    ) -> Option<&'m A> {
        if let Inbound::SequenceReset {
            new_seq,
            gap_fill: false,
        } = msg
        {
            self.sequence_reset_reset(*new_seq, seq, now_ns, h);
            return None;
        }
        if let Inbound::Logon(l) = msg {
            if l.reset && seq == 1 {
                self.reset_logon(l, now_ns, h);
                return None;
            }
        }
        if seq > self.next_in {
            match msg {
                Inbound::Logout { .. } => {
                    self.on_logout(now_ns, h);
                    return None;
                }
                // Served now (the counterparty may be waiting on it to fill our gap) and not
                // queued: its number comes back as a gap fill.
                Inbound::ResendRequest { begin, end } => {
                    self.serve_resend(msg, *begin, *end, seq, now_ns, h)
                }
                _ => self.enqueue(header, msg),
            }
            self.request_resend(seq, now_ns, h);
            return None;
        }
        if seq < self.next_in {
            if !header.poss_dup {
                self.too_low(seq, now_ns, h);
            } else if self.orig_sending_time_ok(header, msg, seq, now_ns, h) {
                h.on_event(SessionEvent::DuplicateIgnored { seq });
            }
            return None;
        }
        self.process(header, msg, seq, now_ns, h)
    }

    /// A possible duplicate (PossDupFlag=Y, not a SequenceReset) must carry OrigSendingTime
    /// (122), no later than its SendingTime: else Reject 373=1 (missing) or 373=10 and Logout
    /// (later), both naming 122. The caller decides whether the MsgSeqNum is consumed.
    fn orig_sending_time_ok<H: SessionHandler>(
        &mut self,
        header: &InHeader,
        msg: &Inbound<A>,
        seq: u64,
        now_ns: u64,
        h: &mut H,
    ) -> bool {
        let is_reset = matches!(msg, Inbound::SequenceReset { .. });
        if !header.poss_dup || is_reset || !self.cfg.require_sending_time {
            return true;
        }
        if header.orig_sending_time_ns == 0 {
            self.reject_missing(msg, seq, tags::ORIG_SENDING_TIME, now_ns, h);
            return false;
        }
        if header.orig_sending_time_ns > header.sending_time_ns {
            self.sending_time_problem(msg, seq, tags::ORIG_SENDING_TIME, now_ns, h);
            return false;
        }
        true
    }

    /// A Logon with ResetSeqNumFlag=Y and MsgSeqNum 1 on a logged-on session: both sides start
    /// again (our next message is 1, theirs 2), the store is emptied, and the Logon is answered
    /// with ResetSeqNumFlag=Y. A session that does not allow resets logs out instead.
    fn reset_logon<H: SessionHandler>(&mut self, l: &Logon, now_ns: u64, h: &mut H) {
        if !self.cfg.allow_reset {
            self.logout_and_disconnect(
                b"ResetSeqNumFlag(141)=Y is not accepted on this session",
                DisconnectReason::BadLogon,
                now_ns,
                h,
            );
            return;
        }
        let hb = match l.heart_bt_int {
            Some(hb) if (self.cfg.heartbeat_min_s..=self.cfg.heartbeat_max_s).contains(&hb) => hb,
            _ => self.heart_bt_int_s,
        };
        self.next_in = 2;
        self.next_out = 1;
        self.store.reset();
        self.queue.clear();
        self.resend_trigger = None;
        self.heart_bt_int_s = hb;
        self.send_logon(hb, true, now_ns, h);
        h.on_event(SessionEvent::LoggedOn { reset: true });
    }

    /// A message whose MsgSeqNum is the expected one: consumes it (every path below takes
    /// the number) and returns it if it is an application message.
    fn process<'m, H: SessionHandler>(
        &mut self,
        header: &InHeader,
        msg: &'m Inbound<A>,
        seq: u64,
        now_ns: u64,
        h: &mut H,
    ) -> Option<&'m A> {
        if let HeaderProblem::BadTime { tag } = header.problem {
            self.next_in += 1;
            self.reject_field(msg, seq, FieldError::bad_format(tag), now_ns, h);
            return None;
        }
        // A malformed message's SendingTime may be unreadable: its own Reject says why.
        let malformed = matches!(msg, Inbound::Malformed(_));
        if self.cfg.require_sending_time && header.sending_time_ns == 0 && !malformed {
            self.next_in += 1;
            self.reject_missing(msg, seq, tags::SENDING_TIME, now_ns, h);
            return None;
        }
        if let Some(tol) = self.cfg.sending_time_tolerance_ns {
            if header.sending_time_ns != 0 && header.sending_time_ns.abs_diff(now_ns) > tol {
                self.next_in += 1;
                self.sending_time_problem(msg, seq, tags::SENDING_TIME, now_ns, h);
                return None;
            }
        }
        if let HeaderProblem::Missing { tag } = header.problem {
            self.next_in += 1;
            self.reject_missing(msg, seq, tag, now_ns, h);
            return None;
        }
        if !self.orig_sending_time_ok(header, msg, seq, now_ns, h) {
            self.next_in += 1;
            return None;
        }
        match msg {
            Inbound::Heartbeat { .. } => self.next_in += 1,
            Inbound::TestRequest { test_req_id } => {
                self.next_in += 1;
                match test_req_id {
                    Some(id) => self.send_admin(msg_type::HEARTBEAT, now_ns, h, |e| {
                        e.field(tags::TEST_REQ_ID, id.as_bytes())
                    }),
                    None => self.reject_missing(msg, seq, tags::TEST_REQ_ID, now_ns, h),
                }
            }
            Inbound::ResendRequest { begin, end } => {
                self.next_in += 1;
                self.serve_resend(msg, *begin, *end, seq, now_ns, h);
            }
            Inbound::Reject { ref_seq_num } => {
                self.next_in += 1;
                h.on_event(SessionEvent::RejectReceived {
                    ref_seq_num: *ref_seq_num,
                });
            }
            Inbound::SequenceReset { new_seq, .. } => self.gap_fill(msg, *new_seq, seq, now_ns, h),
            Inbound::Logout { .. } => {
                self.next_in += 1;
                self.on_logout(now_ns, h);
            }
            // A second Logon on a logged-on session is a protocol error: nothing of it is
            // applied; the session is logged out.
            Inbound::Logon(_) => {
                self.next_in += 1;
                self.logout_and_disconnect(
                    b"Logon received while already logged on",
                    DisconnectReason::BadLogon,
                    now_ns,
                    h,
                );
            }
            Inbound::Malformed(m) => {
                self.next_in += 1;
                let mt = (!m.msg_type.is_empty()).then(|| m.msg_type.as_bytes());
                self.send_reject(
                    &RejectOf {
                        ref_seq_num: seq,
                        ref_msg_type: mt,
                        ref_tag: m.ref_tag,
                        reason: m.reason,
                        text: m.text.as_bytes(),
                    },
                    now_ns,
                    h,
                );
            }
            Inbound::App(a) => {
                self.next_in += 1;
                return Some(a);
            }
        }
        None
    }

    /// Reject 373=10 naming `tag` (SendingTime too far from now, or OrigSendingTime after
    /// SendingTime), then Logout.
    fn sending_time_problem<H: SessionHandler>(
        &mut self,
        msg: &Inbound<A>,
        seq: u64,
        tag: u32,
        now_ns: u64,
        h: &mut H,
    ) {
        let r = SessionRejectReason::SendingTimeAccuracyProblem;
        self.send_reject(
            &RejectOf {
                ref_seq_num: seq,
                ref_msg_type: msg_type_of(msg),
                ref_tag: Some(tag as i64),
                reason: r,
                text: reason_text(r),
            },
            now_ns,
            h,
        );
        let text = if tag == tags::ORIG_SENDING_TIME {
            &b"SendingTime accuracy problem, field=122"[..]
        } else {
            &b"SendingTime accuracy problem, field=52"[..]
        };
        self.logout_and_disconnect(text, DisconnectReason::SendingTimeAccuracy, now_ns, h);
    }

    /// SequenceReset with GapFillFlag=Y and the expected MsgSeqNum.
    fn gap_fill<H: SessionHandler>(
        &mut self,
        msg: &Inbound<A>,
        new_seq: Option<u64>,
        seq: u64,
        now_ns: u64,
        h: &mut H,
    ) {
        match new_seq {
            Some(new) if new > seq => {
                self.next_in = new;
                h.on_event(SessionEvent::SequenceReset {
                    next_in: new,
                    gap_fill: true,
                });
            }
            Some(_) => {
                self.next_in += 1;
                let e = FieldError::bad_value(tags::NEW_SEQ_NO);
                self.reject_field(msg, seq, e, now_ns, h);
            }
            None => {
                self.next_in += 1;
                self.reject_missing(msg, seq, tags::NEW_SEQ_NO, now_ns, h);
            }
        }
    }

    /// SequenceReset-Reset: MsgSeqNum is ignored; NewSeqNo may not move backwards.
    fn sequence_reset_reset<H: SessionHandler>(
        &mut self,
        new_seq: Option<u64>,
        seq: u64,
        now_ns: u64,
        h: &mut H,
    ) {
        let msg: Inbound<A> = Inbound::SequenceReset {
            new_seq,
            gap_fill: false,
        };
        match new_seq {
            Some(new) if new >= self.next_in => {
                self.next_in = new;
                if self.resend_trigger.is_some_and(|t| new > t) {
                    self.resend_trigger = None;
                }
                h.on_event(SessionEvent::SequenceReset {
                    next_in: new,
                    gap_fill: false,
                });
            }
            Some(_) => {
                let e = FieldError::bad_value(tags::NEW_SEQ_NO);
                self.reject_field(&msg, seq, e, now_ns, h);
            }
            None => self.reject_missing(&msg, seq, tags::NEW_SEQ_NO, now_ns, h),
        }
    }

    fn too_low<H: SessionHandler>(&mut self, received: u64, now_ns: u64, h: &mut H) {
        let expected = self.next_in;
        let text = seq_too_low_text(expected, received);
        self.logout_and_disconnect(
            &text,
            DisconnectReason::SeqTooLow { expected, received },
            now_ns,
            h,
        );
    }

    fn on_logout<H: SessionHandler>(&mut self, now_ns: u64, h: &mut H) {
        if self.state != SessionState::LogoutSent {
            self.send_admin(msg_type::LOGOUT, now_ns, h, |_| {});
        }
        self.disconnect(DisconnectReason::LogoutComplete, h);
    }

    /// Keeps a message that arrived ahead of a gap.
    fn enqueue(&mut self, header: &InHeader, msg: &Inbound<A>) {
        if self.queue.len() >= self.cfg.queue_max {
            // Dropped: it will come again, since our ResendRequest runs to infinity.
            return;
        }
        let seq = header.msg_seq_num;
        let i = match self
            .queue
            .binary_search_by_key(&seq, |q| q.header.msg_seq_num)
        {
            Ok(_) => return,
            Err(i) => i,
        };
        self.queue.insert(
            i,
            Queued {
                header: header.clone(),
                msg: msg.clone(),
            },
        );
    }

    /// Asks for everything from `next_in` on, unless a ResendRequest is already outstanding.
    fn request_resend<H: SessionHandler>(&mut self, received: u64, now_ns: u64, h: &mut H) {
        h.on_event(SessionEvent::GapDetected {
            expected: self.next_in,
            received,
        });
        if self.resend_trigger.is_some_and(|t| self.next_in <= t) {
            return;
        }
        self.resend_trigger = Some(received);
        let begin = self.next_in;
        self.send_admin(msg_type::RESEND_REQUEST, now_ns, h, |e| {
            e.field_u64(tags::BEGIN_SEQ_NO, begin);
            e.field_u64(tags::END_SEQ_NO, 0);
        });
    }
}
