//! Sans-I/O FIX acceptor session: Logon, heartbeats and TestRequest, inbound sequence checking
//! with ResendRequest and a bounded out-of-order queue, SequenceReset (gap fill and reset),
//! serving the counterparty's ResendRequest from a `MessageStore`, Reject and Logout.
//!
//! Role: one `Session` per configured FIX session (a CompID pair). It outlives TCP connections:
//! the gateway calls `on_connected`, feeds bytes with `on_bytes` and time with `on_tick`, sends
//! application messages with `send_app`, and reacts to what the `SessionHandler` is told (send
//! these bytes, deliver this application message, close the connection).
//!
//! Never: reads a clock or a socket, spawns, blocks, or panics on any input. It never delivers
//! an application message out of MsgSeqNum order, and never delivers one MsgSeqNum twice.
//!
//! Invariants: `next_in` only moves forward except on an explicit reset (Logon with
//! ResetSeqNumFlag=Y, SequenceReset-Reset); every outbound message with a new sequence number
//! takes `next_out` and increments it; resent messages and gap fills reuse old numbers; only
//! application messages go to the store, so anything the store lacks is gap-filled on resend.

use std::collections::VecDeque;

use crate::decode::{frame, resync, scan_msg_seq_num, DecodeError, Decoder, FrameError, Limits};
use crate::encode::{Encoder, Header};
use crate::tags::{self, msg_type};
use crate::time::TimePrecision;
use crate::{app::AppMessage, FixVersion, Message, SessionRejectReason};

const NS_PER_SEC: u64 = 1_000_000_000;

/// Static configuration of one FIX session (acceptor side).
#[derive(Clone, Debug)]
pub struct SessionConfig {
    pub version: FixVersion,
    /// Our CompID: the counterparty's TargetCompID (56), our SenderCompID (49).
    pub sender_comp_id: String,
    /// The counterparty's CompID: its SenderCompID (49), our TargetCompID (56).
    pub target_comp_id: String,
    /// If set, Logon must carry this Password (554).
    pub password: Option<String>,
    /// Accepted HeartBtInt (108) range, in seconds. 0 means no heartbeats.
    pub heartbeat_min_s: u64,
    pub heartbeat_max_s: u64,
    /// Connection without a Logon for this long is dropped.
    pub logon_timeout_ns: u64,
    /// After our Logout, wait this long for the counterparty's before dropping the connection.
    pub logout_timeout_ns: u64,
    /// Reject (373=10) and log out when SendingTime is further than this from `now`.
    pub sending_time_tolerance_ns: Option<u64>,
    pub time_precision: TimePrecision,
    pub limits: Limits,
    /// Inbound messages held while a sequence gap is being filled (beyond that they are dropped
    /// and asked for again).
    pub queue_max: usize,
    /// DefaultApplVerID (1137) sent on Logon for FIXT.1.1 (`9` = FIX 5.0SP2).
    pub default_appl_ver_id: String,
}

impl SessionConfig {
    /// Defaults for a session between `sender_comp_id` (us) and `target_comp_id`.
    pub fn new(version: FixVersion, sender_comp_id: &str, target_comp_id: &str) -> SessionConfig {
        SessionConfig {
            version,
            sender_comp_id: sender_comp_id.to_string(),
            target_comp_id: target_comp_id.to_string(),
            password: None,
            heartbeat_min_s: 1,
            heartbeat_max_s: 300,
            logon_timeout_ns: 10 * NS_PER_SEC,
            logout_timeout_ns: 5 * NS_PER_SEC,
            sending_time_tolerance_ns: Some(120 * NS_PER_SEC),
            time_precision: TimePrecision::Millis,
            limits: Limits::default(),
            queue_max: 1024,
            default_appl_ver_id: "9".to_string(),
        }
    }
}

/// Where a session stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SessionState {
    /// No connection.
    Disconnected,
    /// Connected, waiting for the counterparty's Logon.
    AwaitingLogon,
    /// Logged on: application messages flow.
    Active,
    /// We sent Logout and wait for the counterparty's.
    LogoutSent,
}

/// Why the session asked the gateway to close the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DisconnectReason {
    FirstMessageNotLogon,
    /// Logon with a BeginString other than the session's.
    UnsupportedVersion,
    /// Logon whose SenderCompID/TargetCompID do not match this session.
    BadCompId,
    BadPassword,
    /// Logon without a valid HeartBtInt (or out of the accepted range), or a malformed Logon.
    BadLogon,
    LogonTimeout,
    /// No message from the counterparty, even after a TestRequest.
    HeartbeatTimeout,
    /// MsgSeqNum lower than expected without PossDupFlag=Y.
    SeqTooLow {
        expected: u64,
        received: u64,
    },
    /// A message without a MsgSeqNum.
    MissingMsgSeqNum,
    /// A message with another BeginString than the session's.
    BeginStringMismatch,
    /// A message with wrong CompIDs after Logon.
    CompIdProblem,
    /// SendingTime too far from now, or OrigSendingTime after SendingTime.
    SendingTimeAccuracy,
    /// Logout handshake completed (either side started it).
    LogoutComplete,
    /// We sent Logout and the counterparty did not answer in time.
    LogoutTimeout,
}

/// What the session reports besides bytes to send and application messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SessionEvent {
    /// Logon accepted and answered. `reset`: sequence numbers were reset to 1.
    LoggedOn { reset: bool },
    /// The gateway must close the connection now. The session is `Disconnected`.
    Disconnect(DisconnectReason),
    /// A garbled frame was dropped (no sequence number consumed).
    Garbled(FrameError),
    /// We sent a Reject (35=3) for inbound message `ref_seq_num`.
    Rejected {
        ref_seq_num: u64,
        reason: SessionRejectReason,
        ref_tag: Option<u32>,
    },
    /// Inbound MsgSeqNum higher than expected: a ResendRequest was sent (or is outstanding).
    GapDetected { expected: u64, received: u64 },
    /// A message with PossDupFlag=Y and an already consumed MsgSeqNum was ignored.
    DuplicateIgnored { seq: u64 },
    /// The counterparty moved our inbound sequence (SequenceReset), now expecting `next_in`.
    SequenceReset { next_in: u64, gap_fill: bool },
    /// We served a ResendRequest: `resent` application messages, the rest gap-filled.
    ResendServed { begin: u64, end: u64, resent: u64 },
    /// The counterparty rejected one of our messages (35=3 received).
    RejectReceived { ref_seq_num: u64 },
}

/// The gateway's side of a session: where bytes, application messages and events go.
pub trait SessionHandler {
    /// Bytes to write to the connection, in order.
    fn send(&mut self, bytes: &[u8]);
    /// An inbound application message, in MsgSeqNum order (may be a PossDup resend).
    fn on_app_message(&mut self, msg: &Message<'_>);
    fn on_event(&mut self, event: SessionEvent);
}

/// Outbound application messages kept for resends. The gateway implements it (persisted);
/// `MemoryStore` is the in-memory version.
pub trait MessageStore {
    /// Keeps application message `seq`, exactly as sent.
    fn put(&mut self, seq: u64, message: &[u8]);
    /// Replaces `out` with message `seq`; false if it is not kept.
    fn get(&mut self, seq: u64, out: &mut Vec<u8>) -> bool;
    /// Forgets every message (sequence numbers reset to 1).
    fn reset(&mut self);
}

/// In-memory `MessageStore` keeping the last `capacity` messages.
#[derive(Debug, Default)]
pub struct MemoryStore {
    messages: VecDeque<(u64, Vec<u8>)>,
    capacity: usize,
}

impl MemoryStore {
    pub fn new(capacity: usize) -> MemoryStore {
        MemoryStore {
            messages: VecDeque::new(),
            capacity,
        }
    }
    pub fn len(&self) -> usize {
        self.messages.len()
    }
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
}

impl MessageStore for MemoryStore {
    fn put(&mut self, seq: u64, message: &[u8]) {
        if self.capacity == 0 {
            return;
        }
        let mut buf = if self.messages.len() == self.capacity {
            self.messages
                .pop_front()
                .map(|(_, b)| b)
                .unwrap_or_default()
        } else {
            Vec::new()
        };
        buf.clear();
        buf.extend_from_slice(message);
        // Sequence numbers only grow between resets; keep it sorted anyway.
        while self.messages.back().is_some_and(|(s, _)| *s >= seq) {
            self.messages.pop_back();
        }
        self.messages.push_back((seq, buf));
    }
    fn get(&mut self, seq: u64, out: &mut Vec<u8>) -> bool {
        match self.messages.binary_search_by_key(&seq, |(s, _)| *s) {
            Ok(i) => {
                out.clear();
                out.extend_from_slice(&self.messages[i].1);
                true
            }
            Err(_) => false,
        }
    }
    fn reset(&mut self) {
        self.messages.clear();
    }
}

/// An inbound message held until the gap before it is filled.
#[derive(Debug)]
struct Queued {
    seq: u64,
    bytes: Vec<u8>,
}

/// One FIX session, acceptor side. See the module documentation.
#[derive(Debug)]
pub struct Session<S: MessageStore> {
    cfg: SessionConfig,
    store: S,
    state: SessionState,
    next_in: u64,
    next_out: u64,
    heart_bt_int_s: u64,
    connected_at_ns: u64,
    last_recv_ns: u64,
    last_sent_ns: u64,
    test_request_sent_ns: Option<u64>,
    test_request_count: u64,
    logout_sent_ns: u64,
    /// An outstanding ResendRequest was triggered by this MsgSeqNum.
    resend_trigger: Option<u64>,
    decoder: Decoder,
    queue_decoder: Decoder,
    resend_decoder: Decoder,
    enc: Encoder,
    scratch: Vec<u8>,
    queue: Vec<Queued>,
    pool: Vec<Vec<u8>>,
}

/// Outcome of the header checks on a message after Logon.
enum Checked {
    Process(u64),
    Stop,
}

impl<S: MessageStore> Session<S> {
    pub fn new(cfg: SessionConfig, store: S) -> Session<S> {
        let limits = cfg.limits;
        Session {
            store,
            state: SessionState::Disconnected,
            next_in: 1,
            next_out: 1,
            heart_bt_int_s: 30,
            connected_at_ns: 0,
            last_recv_ns: 0,
            last_sent_ns: 0,
            test_request_sent_ns: None,
            test_request_count: 0,
            logout_sent_ns: 0,
            resend_trigger: None,
            decoder: Decoder::new(limits),
            queue_decoder: Decoder::new(limits),
            resend_decoder: Decoder::new(limits),
            enc: Encoder::with_capacity(limits.msg_len_max + 64),
            scratch: Vec::with_capacity(limits.msg_len_max),
            queue: Vec::new(),
            pool: Vec::new(),
            cfg,
        }
    }

    pub fn config(&self) -> &SessionConfig {
        &self.cfg
    }
    pub fn state(&self) -> SessionState {
        self.state
    }
    /// The MsgSeqNum expected on the next inbound message (persist it).
    pub fn next_in(&self) -> u64 {
        self.next_in
    }
    /// The MsgSeqNum of our next outbound message (persist it).
    pub fn next_out(&self) -> u64 {
        self.next_out
    }
    /// Restores persisted sequence numbers (before `on_connected`).
    pub fn set_next_in(&mut self, seq: u64) {
        self.next_in = seq.max(1);
    }
    pub fn set_next_out(&mut self, seq: u64) {
        self.next_out = seq.max(1);
    }
    /// The negotiated HeartBtInt in seconds.
    pub fn heart_bt_int_s(&self) -> u64 {
        self.heart_bt_int_s
    }
    pub fn store(&self) -> &S {
        &self.store
    }
    pub fn store_mut(&mut self) -> &mut S {
        &mut self.store
    }
    /// Inbound messages waiting for a gap to be filled.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// A new TCP connection is attached to this session: wait for its Logon.
    pub fn on_connected(&mut self, now_ns: u64) {
        self.state = SessionState::AwaitingLogon;
        self.connected_at_ns = now_ns;
        self.last_recv_ns = now_ns;
        self.last_sent_ns = now_ns;
        self.test_request_sent_ns = None;
        self.resend_trigger = None;
        self.clear_queue();
    }

    /// The connection is gone (closed by either side). Sequence numbers are kept.
    pub fn on_disconnected(&mut self) {
        self.state = SessionState::Disconnected;
        self.clear_queue();
        self.resend_trigger = None;
    }

    fn clear_queue(&mut self) {
        for q in self.queue.drain(..) {
            self.pool.push(q.bytes);
        }
    }

    /// Feeds bytes read from the connection. Returns how many were consumed; the caller keeps
    /// the rest (an incomplete message) and passes it again with more bytes. Garbled frames are
    /// skipped. Bytes arriving while disconnected are discarded.
    pub fn on_bytes<H: SessionHandler>(&mut self, buf: &[u8], now_ns: u64, h: &mut H) -> usize {
        let mut consumed = 0;
        while consumed < buf.len() {
            if self.state == SessionState::Disconnected {
                return buf.len();
            }
            let rest = &buf[consumed..];
            match frame(rest, self.cfg.limits.msg_len_max) {
                Ok(None) => break,
                Ok(Some(len)) => {
                    self.on_framed(&rest[..len], now_ns, h);
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

    /// One complete message (e.g. delimited by the gateway with `frame`); BodyLength and
    /// CheckSum are verified again.
    pub fn on_frame<H: SessionHandler>(&mut self, bytes: &[u8], now_ns: u64, h: &mut H) {
        match frame(bytes, self.cfg.limits.msg_len_max) {
            Ok(Some(len)) if len == bytes.len() => self.on_framed(bytes, now_ns, h),
            Ok(_) => h.on_event(SessionEvent::Garbled(FrameError::BodyLengthMismatch)),
            Err(e) => h.on_event(SessionEvent::Garbled(e)),
        }
    }

    /// A message that `frame` accepted.
    fn on_framed<H: SessionHandler>(&mut self, bytes: &[u8], now_ns: u64, h: &mut H) {
        if self.state == SessionState::Disconnected {
            return;
        }
        self.last_recv_ns = now_ns;
        self.test_request_sent_ns = None;
        let mut decoder = std::mem::take(&mut self.decoder);
        match decoder.decode_framed(bytes) {
            Ok(msg) => self.on_message(&msg, now_ns, h),
            Err(e) => self.on_malformed(bytes, e, now_ns, h),
        }
        self.decoder = decoder;
    }

    /// A frame that passed BodyLength and CheckSum but does not split into valid fields.
    fn on_malformed<H: SessionHandler>(
        &mut self,
        bytes: &[u8],
        e: DecodeError,
        now_ns: u64,
        h: &mut H,
    ) {
        let (reason, tag) = match e {
            DecodeError::Incomplete => return,
            DecodeError::Frame(f) => {
                h.on_event(SessionEvent::Garbled(f));
                return;
            }
            DecodeError::InvalidTag { .. } => (SessionRejectReason::InvalidTagNumber, None),
            DecodeError::EmptyValue { tag } => {
                (SessionRejectReason::TagSpecifiedWithoutValue, Some(tag))
            }
            DecodeError::TooManyFields { .. } => (SessionRejectReason::Other, None),
            DecodeError::HeaderOrder { tag } => (
                SessionRejectReason::TagSpecifiedOutOfRequiredOrder,
                Some(tag),
            ),
        };
        if self.state == SessionState::AwaitingLogon {
            self.disconnect(DisconnectReason::BadLogon, h);
            return;
        }
        match scan_msg_seq_num(bytes) {
            Some(seq) if seq == self.next_in => {
                self.next_in += 1;
                self.send_reject(seq, None, tag, reason, reason_text(reason), now_ns, h);
            }
            Some(seq) if seq > self.next_in => self.request_resend(seq, now_ns, h),
            // Already consumed or unnumbered: nothing can be accounted for.
            _ => h.on_event(SessionEvent::Garbled(FrameError::BodyLengthMismatch)),
        }
    }

    fn on_message<H: SessionHandler>(&mut self, msg: &Message<'_>, now_ns: u64, h: &mut H) {
        match self.state {
            SessionState::Disconnected => {}
            SessionState::AwaitingLogon => {
                if msg.msg_type() == msg_type::LOGON {
                    self.on_logon(msg, now_ns, h);
                } else {
                    self.disconnect(DisconnectReason::FirstMessageNotLogon, h);
                }
            }
            SessionState::Active | SessionState::LogoutSent => {
                if let Checked::Process(seq) = self.check_header(msg, now_ns, h) {
                    self.sequence(msg, seq, now_ns, h);
                }
            }
        }
    }

    /// Logon while awaiting one: authenticate, negotiate, answer, then check the sequence.
    fn on_logon<H: SessionHandler>(&mut self, msg: &Message<'_>, now_ns: u64, h: &mut H) {
        if msg.begin_string() != self.cfg.version.begin_string() {
            self.disconnect(DisconnectReason::UnsupportedVersion, h);
            return;
        }
        if msg.get(tags::SENDER_COMP_ID) != Some(self.cfg.target_comp_id.as_bytes())
            || msg.get(tags::TARGET_COMP_ID) != Some(self.cfg.sender_comp_id.as_bytes())
        {
            self.disconnect(DisconnectReason::BadCompId, h);
            return;
        }
        let Ok(Some(seq)) = msg.get_u64(tags::MSG_SEQ_NUM) else {
            self.disconnect(DisconnectReason::MissingMsgSeqNum, h);
            return;
        };
        if let Some(pw) = &self.cfg.password {
            if msg.get(tags::PASSWORD) != Some(pw.as_bytes()) {
                self.logout_and_disconnect(
                    b"Invalid password",
                    DisconnectReason::BadPassword,
                    now_ns,
                    h,
                );
                return;
            }
        }
        let hb = match msg.get_u64(tags::HEART_BT_INT) {
            Ok(Some(hb)) if (self.cfg.heartbeat_min_s..=self.cfg.heartbeat_max_s).contains(&hb) => {
                hb
            }
            _ => {
                self.logout_and_disconnect(
                    b"HeartBtInt(108) missing or out of the accepted range",
                    DisconnectReason::BadLogon,
                    now_ns,
                    h,
                );
                return;
            }
        };
        if self.cfg.version == FixVersion::Fix50Sp2 && msg.get(tags::DEFAULT_APPL_VER_ID).is_none()
        {
            self.logout_and_disconnect(
                b"DefaultApplVerID(1137) required",
                DisconnectReason::BadLogon,
                now_ns,
                h,
            );
            return;
        }
        let reset = msg.get_bool(tags::RESET_SEQ_NUM_FLAG) == Ok(Some(true));
        if reset {
            if seq != 1 {
                self.logout_and_disconnect(
                    b"ResetSeqNumFlag(141)=Y requires MsgSeqNum(34)=1",
                    DisconnectReason::BadLogon,
                    now_ns,
                    h,
                );
                return;
            }
            self.next_in = 1;
            self.next_out = 1;
            self.store.reset();
        }
        if seq < self.next_in {
            self.too_low(seq, now_ns, h);
            return;
        }
        self.heart_bt_int_s = hb;
        self.state = SessionState::Active;
        let appl_ver = self.cfg.default_appl_ver_id.clone();
        let fixt = self.cfg.version == FixVersion::Fix50Sp2;
        self.send_admin(msg_type::LOGON, now_ns, h, |e| {
            e.field(tags::ENCRYPT_METHOD, b"0");
            e.field_u64(tags::HEART_BT_INT, hb);
            if reset {
                e.field(tags::RESET_SEQ_NUM_FLAG, b"Y");
            }
            if fixt {
                e.field(tags::DEFAULT_APPL_VER_ID, appl_ver.as_bytes());
            }
        });
        h.on_event(SessionEvent::LoggedOn { reset });
        if seq == self.next_in {
            self.next_in += 1;
        } else {
            self.request_resend(seq, now_ns, h);
        }
    }

    /// Checks every message after Logon: BeginString, CompIDs, MsgSeqNum, SendingTime.
    fn check_header<H: SessionHandler>(
        &mut self,
        msg: &Message<'_>,
        now_ns: u64,
        h: &mut H,
    ) -> Checked {
        if msg.begin_string() != self.cfg.version.begin_string() {
            self.logout_and_disconnect(
                b"Incorrect BeginString",
                DisconnectReason::BeginStringMismatch,
                now_ns,
                h,
            );
            return Checked::Stop;
        }
        let seq = match msg.get_u64(tags::MSG_SEQ_NUM) {
            Ok(Some(seq)) => seq,
            _ => {
                self.logout_and_disconnect(
                    b"MsgSeqNum(34) missing or invalid",
                    DisconnectReason::MissingMsgSeqNum,
                    now_ns,
                    h,
                );
                return Checked::Stop;
            }
        };
        let comp_tag = if msg.get(tags::SENDER_COMP_ID) != Some(self.cfg.target_comp_id.as_bytes())
        {
            Some(tags::SENDER_COMP_ID)
        } else if msg.get(tags::TARGET_COMP_ID) != Some(self.cfg.sender_comp_id.as_bytes()) {
            Some(tags::TARGET_COMP_ID)
        } else {
            None
        };
        if let Some(tag) = comp_tag {
            let r = SessionRejectReason::CompIdProblem;
            self.send_reject(
                seq,
                Some(msg.msg_type()),
                Some(tag),
                r,
                reason_text(r),
                now_ns,
                h,
            );
            self.logout_and_disconnect(
                b"CompID problem",
                DisconnectReason::CompIdProblem,
                now_ns,
                h,
            );
            return Checked::Stop;
        }
        Checked::Process(seq)
    }

    /// Sequence-number handling of a checked message.
    fn sequence<H: SessionHandler>(&mut self, msg: &Message<'_>, seq: u64, now_ns: u64, h: &mut H) {
        let t = msg.msg_type();
        let poss_dup = msg.get_bool(tags::POSS_DUP_FLAG) == Ok(Some(true));
        if t == msg_type::SEQUENCE_RESET && msg.get_bool(tags::GAP_FILL_FLAG) != Ok(Some(true)) {
            self.sequence_reset_reset(msg, seq, now_ns, h);
            return;
        }
        if seq > self.next_in {
            if t == msg_type::LOGOUT {
                self.on_logout(now_ns, h);
                return;
            }
            if t == msg_type::RESEND_REQUEST {
                // Serve it now (the counterparty may be waiting on it to fill our gap) and do
                // not queue it: its number comes back as a gap fill.
                self.serve_resend(msg, seq, now_ns, h);
            } else {
                self.enqueue(msg, seq);
            }
            self.request_resend(seq, now_ns, h);
            return;
        }
        if seq < self.next_in {
            if poss_dup {
                h.on_event(SessionEvent::DuplicateIgnored { seq });
            } else {
                self.too_low(seq, now_ns, h);
            }
            return;
        }
        self.process(msg, seq, now_ns, h);
        self.drain_queue(now_ns, h);
    }

    /// A message whose MsgSeqNum is the expected one.
    fn process<H: SessionHandler>(&mut self, msg: &Message<'_>, seq: u64, now_ns: u64, h: &mut H) {
        // SendingTime checks (they consume the sequence number like any rejected message).
        let t = msg.msg_type();
        let sending = match msg.get_timestamp(tags::SENDING_TIME) {
            Ok(Some(ts)) => ts,
            Ok(None) => {
                self.next_in += 1;
                self.reject_field(
                    msg,
                    seq,
                    crate::FieldError::missing(tags::SENDING_TIME),
                    now_ns,
                    h,
                );
                return;
            }
            Err(e) => {
                self.next_in += 1;
                self.reject_field(msg, seq, e, now_ns, h);
                return;
            }
        };
        if let Some(tol) = self.cfg.sending_time_tolerance_ns {
            if sending.abs_diff(now_ns) > tol {
                self.next_in += 1;
                self.sending_time_problem(msg, seq, now_ns, h);
                return;
            }
        }
        if msg.get_bool(tags::POSS_DUP_FLAG) == Ok(Some(true)) && t != msg_type::SEQUENCE_RESET {
            match msg.get_timestamp(tags::ORIG_SENDING_TIME) {
                Ok(Some(orig)) if orig <= sending => {}
                Ok(Some(_)) => {
                    self.next_in += 1;
                    self.sending_time_problem(msg, seq, now_ns, h);
                    return;
                }
                Ok(None) => {
                    self.next_in += 1;
                    let e = crate::FieldError::missing(tags::ORIG_SENDING_TIME);
                    self.reject_field(msg, seq, e, now_ns, h);
                    return;
                }
                Err(e) => {
                    self.next_in += 1;
                    self.reject_field(msg, seq, e, now_ns, h);
                    return;
                }
            }
        }
        match t {
            msg_type::HEARTBEAT => self.next_in += 1,
            msg_type::TEST_REQUEST => {
                self.next_in += 1;
                match msg.get(tags::TEST_REQ_ID) {
                    Some(id) => self.send_admin(msg_type::HEARTBEAT, now_ns, h, |e| {
                        e.field(tags::TEST_REQ_ID, id)
                    }),
                    None => {
                        let e = crate::FieldError::missing(tags::TEST_REQ_ID);
                        self.reject_field(msg, seq, e, now_ns, h);
                    }
                }
            }
            msg_type::RESEND_REQUEST => {
                self.next_in += 1;
                self.serve_resend(msg, seq, now_ns, h);
            }
            msg_type::REJECT => {
                self.next_in += 1;
                let ref_seq_num = msg.get_u64(tags::REF_SEQ_NUM).ok().flatten().unwrap_or(0);
                h.on_event(SessionEvent::RejectReceived { ref_seq_num });
            }
            msg_type::SEQUENCE_RESET => self.gap_fill(msg, seq, now_ns, h),
            msg_type::LOGOUT => {
                self.next_in += 1;
                self.on_logout(now_ns, h);
            }
            msg_type::LOGON => {
                self.next_in += 1;
                let r = SessionRejectReason::Other;
                self.send_reject(seq, Some(t), None, r, b"Already logged on", now_ns, h);
            }
            _ => {
                self.next_in += 1;
                h.on_app_message(msg);
            }
        }
    }

    fn sending_time_problem<H: SessionHandler>(
        &mut self,
        msg: &Message<'_>,
        seq: u64,
        now_ns: u64,
        h: &mut H,
    ) {
        let r = SessionRejectReason::SendingTimeAccuracyProblem;
        self.send_reject(
            seq,
            Some(msg.msg_type()),
            Some(tags::SENDING_TIME),
            r,
            reason_text(r),
            now_ns,
            h,
        );
        self.logout_and_disconnect(
            b"SendingTime accuracy problem",
            DisconnectReason::SendingTimeAccuracy,
            now_ns,
            h,
        );
    }

    /// SequenceReset with GapFillFlag=Y and the expected MsgSeqNum.
    fn gap_fill<H: SessionHandler>(&mut self, msg: &Message<'_>, seq: u64, now_ns: u64, h: &mut H) {
        match msg.get_u64(tags::NEW_SEQ_NO) {
            Ok(Some(new)) if new > seq => {
                self.next_in = new;
                h.on_event(SessionEvent::SequenceReset {
                    next_in: new,
                    gap_fill: true,
                });
            }
            Ok(Some(_)) => {
                self.next_in += 1;
                self.reject_field(
                    msg,
                    seq,
                    crate::FieldError::bad_value(tags::NEW_SEQ_NO),
                    now_ns,
                    h,
                );
            }
            Ok(None) => {
                self.next_in += 1;
                self.reject_field(
                    msg,
                    seq,
                    crate::FieldError::missing(tags::NEW_SEQ_NO),
                    now_ns,
                    h,
                );
            }
            Err(e) => {
                self.next_in += 1;
                self.reject_field(msg, seq, e, now_ns, h);
            }
        }
    }

    /// SequenceReset-Reset: MsgSeqNum is ignored; NewSeqNo may not move backwards.
    fn sequence_reset_reset<H: SessionHandler>(
        &mut self,
        msg: &Message<'_>,
        seq: u64,
        now_ns: u64,
        h: &mut H,
    ) {
        match msg.get_u64(tags::NEW_SEQ_NO) {
            Ok(Some(new)) if new >= self.next_in => {
                self.next_in = new;
                if self.resend_trigger.is_some_and(|t| new > t) {
                    self.resend_trigger = None;
                }
                h.on_event(SessionEvent::SequenceReset {
                    next_in: new,
                    gap_fill: false,
                });
                self.drain_queue(now_ns, h);
            }
            Ok(Some(_)) => self.reject_field(
                msg,
                seq,
                crate::FieldError::bad_value(tags::NEW_SEQ_NO),
                now_ns,
                h,
            ),
            Ok(None) => self.reject_field(
                msg,
                seq,
                crate::FieldError::missing(tags::NEW_SEQ_NO),
                now_ns,
                h,
            ),
            Err(e) => self.reject_field(msg, seq, e, now_ns, h),
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
    fn enqueue(&mut self, msg: &Message<'_>, seq: u64) {
        if self.queue.len() >= self.cfg.queue_max {
            // Dropped: it will come again, since our ResendRequest runs to infinity.
            return;
        }
        let i = match self.queue.binary_search_by_key(&seq, |q| q.seq) {
            Ok(_) => return,
            Err(i) => i,
        };
        let mut bytes = self.pool.pop().unwrap_or_default();
        bytes.clear();
        bytes.extend_from_slice(msg.as_bytes());
        self.queue.insert(i, Queued { seq, bytes });
    }

    /// Processes queued messages that are now in sequence.
    fn drain_queue<H: SessionHandler>(&mut self, now_ns: u64, h: &mut H) {
        if self.resend_trigger.is_some_and(|t| self.next_in > t) {
            self.resend_trigger = None;
        }
        loop {
            while self.queue.first().is_some_and(|q| q.seq < self.next_in) {
                let q = self.queue.remove(0);
                self.pool.push(q.bytes);
            }
            if !matches!(self.state, SessionState::Active | SessionState::LogoutSent) {
                return;
            }
            match self.queue.first() {
                Some(q) if q.seq == self.next_in => {}
                _ => return,
            }
            let q = self.queue.remove(0);
            let mut decoder = std::mem::take(&mut self.queue_decoder);
            if let Ok(msg) = decoder.decode_framed(&q.bytes) {
                // It passed the header checks when it arrived.
                self.process(&msg, q.seq, now_ns, h);
            }
            self.queue_decoder = decoder;
            self.pool.push(q.bytes);
            if self.resend_trigger.is_some_and(|t| self.next_in > t) {
                self.resend_trigger = None;
            }
        }
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

    /// Serves the counterparty's ResendRequest: application messages again with PossDupFlag=Y
    /// and OrigSendingTime, admin messages (and anything not stored) as SequenceReset-GapFill.
    fn serve_resend<H: SessionHandler>(
        &mut self,
        msg: &Message<'_>,
        seq: u64,
        now_ns: u64,
        h: &mut H,
    ) {
        let begin = match msg.get_u64(tags::BEGIN_SEQ_NO) {
            Ok(Some(b)) if b >= 1 => b,
            Ok(Some(_)) => {
                return self.reject_field(
                    msg,
                    seq,
                    crate::FieldError::bad_value(tags::BEGIN_SEQ_NO),
                    now_ns,
                    h,
                )
            }
            Ok(None) => {
                return self.reject_field(
                    msg,
                    seq,
                    crate::FieldError::missing(tags::BEGIN_SEQ_NO),
                    now_ns,
                    h,
                )
            }
            Err(e) => return self.reject_field(msg, seq, e, now_ns, h),
        };
        let end = match msg.get_u64(tags::END_SEQ_NO) {
            Ok(Some(e)) => e,
            Ok(None) => {
                return self.reject_field(
                    msg,
                    seq,
                    crate::FieldError::missing(tags::END_SEQ_NO),
                    now_ns,
                    h,
                )
            }
            Err(e) => return self.reject_field(msg, seq, e, now_ns, h),
        };
        let last = self.next_out - 1;
        let end = if end == 0 || end > last { last } else { end };
        if begin > end {
            h.on_event(SessionEvent::ResendServed {
                begin,
                end,
                resent: 0,
            });
            return;
        }
        let mut gap_start: Option<u64> = None;
        let mut resent = 0;
        let mut decoder = std::mem::take(&mut self.resend_decoder);
        let mut stored = std::mem::take(&mut self.scratch);
        for s in begin..=end {
            let app = self.store.get(s, &mut stored)
                && match decoder.decode(&stored) {
                    Ok(m) => {
                        if msg_type::is_admin(m.msg_type()) {
                            false
                        } else {
                            if let Some(g) = gap_start.take() {
                                self.send_gap_fill(g, s, now_ns, h);
                            }
                            self.resend_one(&m, s, now_ns, h);
                            resent += 1;
                            true
                        }
                    }
                    Err(_) => false,
                };
            if !app && gap_start.is_none() {
                gap_start = Some(s);
            }
        }
        if let Some(g) = gap_start {
            self.send_gap_fill(g, end + 1, now_ns, h);
        }
        self.resend_decoder = decoder;
        self.scratch = stored;
        h.on_event(SessionEvent::ResendServed { begin, end, resent });
    }

    fn resend_one<H: SessionHandler>(&mut self, m: &Message<'_>, seq: u64, now_ns: u64, h: &mut H) {
        let orig = m.get(tags::SENDING_TIME);
        self.enc.begin(m.msg_type());
        self.enc.header(&Header {
            sender_comp_id: self.cfg.sender_comp_id.as_bytes(),
            target_comp_id: self.cfg.target_comp_id.as_bytes(),
            msg_seq_num: seq,
            sending_time_ns: now_ns,
            poss_dup: true,
            orig_sending_time: orig,
            time_precision: self.cfg.time_precision,
        });
        for (tag, value) in m.body() {
            self.enc.field(tag, value);
        }
        h.send(self.enc.finish(self.cfg.version));
        self.last_sent_ns = now_ns;
    }

    fn send_gap_fill<H: SessionHandler>(&mut self, seq: u64, new_seq: u64, now_ns: u64, h: &mut H) {
        self.enc.begin(msg_type::SEQUENCE_RESET);
        self.enc.header(&Header {
            sender_comp_id: self.cfg.sender_comp_id.as_bytes(),
            target_comp_id: self.cfg.target_comp_id.as_bytes(),
            msg_seq_num: seq,
            sending_time_ns: now_ns,
            poss_dup: true,
            orig_sending_time: None,
            time_precision: self.cfg.time_precision,
        });
        // OrigSendingTime right after SendingTime, still in the header.
        self.enc
            .field_timestamp(tags::ORIG_SENDING_TIME, now_ns, self.cfg.time_precision);
        self.enc.field(tags::GAP_FILL_FLAG, b"Y");
        self.enc.field_u64(tags::NEW_SEQ_NO, new_seq);
        h.send(self.enc.finish(self.cfg.version));
        self.last_sent_ns = now_ns;
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
                if self.heart_bt_int_s == 0 {
                    return;
                }
                let hb_ns = self.heart_bt_int_s * NS_PER_SEC;
                // "HeartBtInt plus a reasonable transmission time": 20 %.
                let grace_ns = hb_ns + hb_ns / 5;
                match self.test_request_sent_ns {
                    Some(sent) if now_ns.saturating_sub(sent) >= grace_ns => {
                        self.disconnect(DisconnectReason::HeartbeatTimeout, h);
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
                        }
                    }
                }
                if now_ns.saturating_sub(self.last_sent_ns) >= hb_ns {
                    self.send_admin(msg_type::HEARTBEAT, now_ns, h, |_| {});
                }
            }
        }
    }

    /// Starts the Logout handshake (e.g. on shutdown). The session disconnects when the
    /// counterparty answers, or after `logout_timeout_ns`.
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

    /// Sends (and stores for resend) an application message; returns its MsgSeqNum. While the
    /// session is not logged on the message is only stored and sequenced: the counterparty gets
    /// it by ResendRequest after its next Logon.
    pub fn send_app<M: AppMessage, H: SessionHandler>(
        &mut self,
        msg: &M,
        now_ns: u64,
        h: &mut H,
    ) -> u64 {
        let seq = self.next_out;
        self.next_out += 1;
        self.enc.begin(msg.msg_type());
        self.enc.header(&Header {
            sender_comp_id: self.cfg.sender_comp_id.as_bytes(),
            target_comp_id: self.cfg.target_comp_id.as_bytes(),
            msg_seq_num: seq,
            sending_time_ns: now_ns,
            poss_dup: false,
            orig_sending_time: None,
            time_precision: self.cfg.time_precision,
        });
        msg.encode_body(self.cfg.version, &mut self.enc);
        let bytes = self.enc.finish(self.cfg.version);
        self.store.put(seq, bytes);
        if self.state == SessionState::Active {
            h.send(bytes);
            self.last_sent_ns = now_ns;
        }
        seq
    }

    /// Sends a session-level Reject (35=3) for inbound message `ref_seq_num`, e.g. an
    /// application message the gateway found malformed.
    #[allow(clippy::too_many_arguments)]
    pub fn send_reject<H: SessionHandler>(
        &mut self,
        ref_seq_num: u64,
        ref_msg_type: Option<&[u8]>,
        ref_tag: Option<u32>,
        reason: SessionRejectReason,
        text: &[u8],
        now_ns: u64,
        h: &mut H,
    ) {
        self.send_admin(msg_type::REJECT, now_ns, h, |e| {
            e.field_u64(tags::REF_SEQ_NUM, ref_seq_num);
            if let Some(tag) = ref_tag {
                e.field_u64(tags::REF_TAG_ID, tag as u64);
            }
            if let Some(t) = ref_msg_type {
                e.field(tags::REF_MSG_TYPE, t);
            }
            e.field_u64(tags::SESSION_REJECT_REASON, reason.code());
            if !text.is_empty() {
                e.field(tags::TEXT, text);
            }
        });
        h.on_event(SessionEvent::Rejected {
            ref_seq_num,
            reason,
            ref_tag,
        });
    }

    /// Reject for a field problem in inbound message `seq`.
    pub fn reject_field<H: SessionHandler>(
        &mut self,
        msg: &Message<'_>,
        seq: u64,
        e: crate::FieldError,
        now_ns: u64,
        h: &mut H,
    ) {
        let r = e.session_reject_reason();
        self.send_reject(
            seq,
            Some(msg.msg_type()),
            Some(e.tag),
            r,
            reason_text(r),
            now_ns,
            h,
        );
    }

    fn send_logout<H: SessionHandler>(&mut self, text: &[u8], now_ns: u64, h: &mut H) {
        self.send_admin(msg_type::LOGOUT, now_ns, h, |e| {
            if !text.is_empty() {
                e.field(tags::TEXT, text);
            }
        });
    }

    fn logout_and_disconnect<H: SessionHandler>(
        &mut self,
        text: &[u8],
        reason: DisconnectReason,
        now_ns: u64,
        h: &mut H,
    ) {
        self.send_logout(text, now_ns, h);
        self.disconnect(reason, h);
    }

    fn disconnect<H: SessionHandler>(&mut self, reason: DisconnectReason, h: &mut H) {
        self.on_disconnected();
        h.on_event(SessionEvent::Disconnect(reason));
    }

    /// Sends a session-level message with the next MsgSeqNum (not stored: resent as gap fill).
    fn send_admin<H: SessionHandler, F: FnOnce(&mut Encoder)>(
        &mut self,
        msg_type: &[u8],
        now_ns: u64,
        h: &mut H,
        body: F,
    ) {
        let seq = self.next_out;
        self.next_out += 1;
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
        body(&mut self.enc);
        h.send(self.enc.finish(self.cfg.version));
        self.last_sent_ns = now_ns;
    }
}

/// Text (58) sent with a Reject of this reason.
pub fn reason_text(r: SessionRejectReason) -> &'static [u8] {
    use SessionRejectReason as R;
    match r {
        R::InvalidTagNumber => b"Invalid tag number",
        R::RequiredTagMissing => b"Required tag missing",
        R::TagNotDefinedForMessageType => b"Tag not defined for this message type",
        R::UndefinedTag => b"Undefined tag",
        R::TagSpecifiedWithoutValue => b"Tag specified without a value",
        R::ValueIncorrect => b"Value is incorrect (out of range) for this tag",
        R::IncorrectDataFormat => b"Incorrect data format for value",
        R::CompIdProblem => b"CompID problem",
        R::SendingTimeAccuracyProblem => b"SendingTime accuracy problem",
        R::InvalidMsgType => b"Invalid MsgType",
        R::TagAppearsMoreThanOnce => b"Tag appears more than once",
        R::TagSpecifiedOutOfRequiredOrder => b"Tag specified out of required order",
        R::IncorrectNumInGroupCount => b"Incorrect NumInGroup count for repeating group",
        R::Other => b"Other",
    }
}

/// "MsgSeqNum too low, expecting X but received Y" (the session ends after it; not hot).
pub fn seq_too_low_text(expected: u64, received: u64) -> Vec<u8> {
    let mut v: Vec<u8> = Vec::with_capacity(64);
    v.extend_from_slice(b"MsgSeqNum too low, expecting ");
    crate::encode::write_u64(&mut v, expected);
    v.extend_from_slice(b" but received ");
    crate::encode::write_u64(&mut v, received);
    v
}

/// The BeginString, SenderCompID and TargetCompID of a message (a Logon on a new
/// connection), so the gateway can pick the `Session` it belongs to.
pub fn identify<'a>(msg: &Message<'a>) -> Option<(&'a [u8], &'a [u8], &'a [u8])> {
    Some((
        msg.begin_string(),
        msg.get(tags::SENDER_COMP_ID)?,
        msg.get(tags::TARGET_COMP_ID)?,
    ))
}
