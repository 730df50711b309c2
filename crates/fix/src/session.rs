//! Sans-I/O FIX acceptor session: Logon, heartbeats and TestRequest, inbound sequence checking
//! with ResendRequest and a bounded out-of-order queue, SequenceReset (gap fill and reset),
//! serving the counterparty's ResendRequest from a `MessageStore`, Reject and Logout.
//!
//! Role: one `Session` per configured FIX session (a CompID pair). It outlives TCP connections:
//! the owner calls `on_connected`, feeds each inbound message as an [`InHeader`] and an
//! [`Inbound`] (typed: what the header and the admin fields said, the application payload as
//! the owner's own type `A`), calls `on_tick` with the time, numbers its application messages
//! with `next_app` and writes them with `write_app`, and reacts to what its `SessionHandler` is
//! told (send these bytes, close the connection). Inputs are typed rather than bytes so that
//! the owner can journal them and replay the session exactly: the exchange server feeds its
//! sessions from journal records, live and in recovery alike. `on_bytes` is the same state
//! machine fed with raw bytes (read with [`read_inbound`]), for clients and tests.
//!
//! Never: reads a clock or a socket, spawns, blocks, allocates per message in steady state, or
//! panics on any input. It never delivers an application message out of MsgSeqNum order, and
//! never delivers one MsgSeqNum twice.
//!
//! Invariants: `next_in` only moves forward except on an explicit reset (Logon with
//! ResetSeqNumFlag=Y); every outbound message with a new sequence number takes `next_out` and
//! increments it; resent messages and gap fills reuse old numbers; only application messages
//! go to the store, so anything the store lacks is gap-filled on resend. A refused Logon is
//! answered with an unnumbered Logout (MsgSeqNum 1) and changes no state of the session: an
//! impostor cannot move a session's numbers.

use std::collections::VecDeque;
use std::fmt;

use crate::decode::{
    frame, resync, scan_msg_seq_num, DecodeError, Decoder, FieldError, FrameError, Limits, Message,
};
use crate::encode::{Encoder, Header};
use crate::tags::{self, msg_type};
use crate::time::{format_utc_timestamp, TimePrecision, UTC_TIMESTAMP_LEN_MAX};
use crate::{FixVersion, SessionRejectReason};

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
    /// Accepted HeartBtInt (108) range, in seconds.
    pub heartbeat_min_s: u64,
    pub heartbeat_max_s: u64,
    /// Connection without a Logon for this long is dropped.
    pub logon_timeout_ns: u64,
    /// After our Logout, wait this long for the counterparty's before dropping the connection.
    pub logout_timeout_ns: u64,
    /// Reject (373=10) and log out when SendingTime is further than this from `now`.
    pub sending_time_tolerance_ns: Option<u64>,
    /// Reject (373=1) a message without SendingTime (52).
    pub require_sending_time: bool,
    pub time_precision: TimePrecision,
    /// Inbound messages held while a sequence gap is being filled (beyond that they are dropped
    /// and asked for again).
    pub queue_max: usize,
    /// DefaultApplVerID (1137) sent on Logon for FIXT.1.1 (`9` = FIX 5.0SP2).
    pub default_appl_ver_id: String,
    /// Require DefaultApplVerID (1137) on a FIXT.1.1 Logon.
    pub require_default_appl_ver_id: bool,
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
            require_sending_time: true,
            time_precision: TimePrecision::Millis,
            queue_max: 1024,
            default_appl_ver_id: "9".to_string(),
            require_default_appl_ver_id: true,
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

impl SessionState {
    /// A stable code (snapshots).
    pub fn code(self) -> u8 {
        match self {
            SessionState::Disconnected => 0,
            SessionState::AwaitingLogon => 1,
            SessionState::Active => 2,
            SessionState::LogoutSent => 3,
        }
    }
    pub fn from_code(c: u8) -> Option<SessionState> {
        Some(match c {
            0 => SessionState::Disconnected,
            1 => SessionState::AwaitingLogon,
            2 => SessionState::Active,
            3 => SessionState::LogoutSent,
            _ => return None,
        })
    }
}

/// Why the session asked the owner to close the connection.
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
    /// We ended the session (the exchange stops).
    Shutdown,
}

/// What the session reports besides bytes to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SessionEvent {
    /// Logon accepted and answered. `reset`: sequence numbers were reset to 1.
    LoggedOn { reset: bool },
    /// The owner must close the connection now. The session is `Disconnected`.
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

/// The owner's side of a session: where bytes and events go.
pub trait SessionHandler {
    /// A complete message to write to the connection, in order.
    fn send(&mut self, bytes: &[u8]);
    fn on_event(&mut self, event: SessionEvent);
    /// True while output is thrown away (a replay of the journal): the session numbers and
    /// stores its messages as ever but formats none of them.
    fn muted(&self) -> bool {
        false
    }
}

/// One stored application message, as a resend writes it again.
#[derive(Clone, Copy, Debug)]
pub struct Stored<'a> {
    pub seq: u64,
    pub msg_type: &'a [u8],
    /// Its original SendingTime (the resend's OrigSendingTime).
    pub sending_time_ns: u64,
    /// The fields after the standard header, as sent.
    pub body: &'a [u8],
}

/// Outbound application messages kept for resends. `MemoryStore` keeps bytes; the exchange
/// server keeps what its reports were made of and formats them again on demand.
pub trait MessageStore {
    /// Calls `each` for every stored message with `begin <= seq <= end`, oldest first.
    fn resend(
        &mut self,
        begin: u64,
        end: u64,
        version: FixVersion,
        each: &mut dyn FnMut(Stored<'_>),
    );
    /// Forgets every message (sequence numbers reset to 1).
    fn reset(&mut self);
}

/// In-memory `MessageStore` keeping the last `capacity` messages' bodies.
#[derive(Debug, Default)]
pub struct MemoryStore {
    messages: VecDeque<(u64, Vec<u8>, u64, Vec<u8>)>,
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
    /// Keeps application message `seq` (its type, SendingTime and body).
    pub fn put(&mut self, seq: u64, msg_type: &[u8], sending_time_ns: u64, body: &[u8]) {
        if self.capacity == 0 {
            return;
        }
        let (mut t, mut b) = if self.messages.len() == self.capacity {
            self.messages
                .pop_front()
                .map(|(_, t, _, b)| (t, b))
                .unwrap_or_default()
        } else {
            Default::default()
        };
        t.clear();
        t.extend_from_slice(msg_type);
        b.clear();
        b.extend_from_slice(body);
        while self.messages.back().is_some_and(|(s, ..)| *s >= seq) {
            self.messages.pop_back();
        }
        self.messages.push_back((seq, t, sending_time_ns, b));
    }
}

impl MessageStore for MemoryStore {
    fn resend(
        &mut self,
        begin: u64,
        end: u64,
        _version: FixVersion,
        each: &mut dyn FnMut(Stored<'_>),
    ) {
        for (seq, t, ts, body) in &self.messages {
            if (begin..=end).contains(seq) {
                each(Stored {
                    seq: *seq,
                    msg_type: t,
                    sending_time_ns: *ts,
                    body,
                });
            }
        }
    }
    fn reset(&mut self) {
        self.messages.clear();
    }
}

/// Longest [`Text`]: a TestReqID, a Logout's or Reject's Text, a CompID, a password.
pub const TEXT_LEN_MAX: usize = 64;

/// Up to [`TEXT_LEN_MAX`] bytes stored inline (an inbound message owns no heap memory, so
/// reading or journaling one allocates nothing). Longer values are cut. Bytes after `len`
/// are zero, so equality and hash are those of the bytes.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Text {
    len: u8,
    bytes: [u8; TEXT_LEN_MAX],
}

const _: () = assert!(TEXT_LEN_MAX <= u8::MAX as usize);

impl Text {
    pub const EMPTY: Text = Text {
        len: 0,
        bytes: [0; TEXT_LEN_MAX],
    };
    /// `b`, cut to [`TEXT_LEN_MAX`] bytes.
    pub fn new(b: &[u8]) -> Text {
        let n = b.len().min(TEXT_LEN_MAX);
        let mut t = Text::EMPTY;
        t.bytes[..n].copy_from_slice(&b[..n]);
        t.len = n as u8;
        t
    }
    /// `b` if it fits.
    pub fn exact(b: &[u8]) -> Option<Text> {
        (b.len() <= TEXT_LEN_MAX).then(|| Text::new(b))
    }
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
    /// As text (lossy: the bytes need not be UTF-8).
    pub fn to_str_lossy(&self) -> std::borrow::Cow<'_, str> {
        String::from_utf8_lossy(self.as_bytes())
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Default for Text {
    fn default() -> Text {
        Text::EMPTY
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Text {
        Text::new(s.as_bytes())
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_str_lossy(), f)
    }
}

/// What the header of an inbound message said, as the session needs it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InHeader {
    /// MsgSeqNum (34); 0 if missing or not a number.
    pub msg_seq_num: u64,
    /// PossDupFlag (43) = Y.
    pub poss_dup: bool,
    /// SendingTime (52) in ns since the epoch; 0 if missing.
    pub sending_time_ns: u64,
    /// OrigSendingTime (122); 0 if missing.
    pub orig_sending_time_ns: u64,
    pub problem: HeaderProblem,
}

/// A header the session must refuse (checked by whoever read it, against the session's
/// BeginString and CompIDs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum HeaderProblem {
    #[default]
    None,
    /// BeginString other than the session's: Logout and disconnect.
    BeginString,
    /// SenderCompID (49) or TargetCompID (56) other than the session's: Reject 373=9 with
    /// this RefTagID, then Logout and disconnect.
    CompId { tag: u32 },
    /// SendingTime (52) or OrigSendingTime (122) present but not a UTCTimestamp: Reject 373=6.
    BadTime { tag: u32 },
}

/// A Logon's fields.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Logon {
    pub begin_string: Text,
    pub sender_comp_id: Text,
    pub target_comp_id: Text,
    /// HeartBtInt (108); `None` if missing or not a number.
    pub heart_bt_int: Option<u64>,
    /// ResetSeqNumFlag (141) = Y.
    pub reset: bool,
    pub password: Option<Text>,
    pub has_default_appl_ver_id: bool,
}

/// A message whose fields the reader found wrong (the session answers it with a Reject).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Malformed {
    pub reason: SessionRejectReason,
    pub ref_tag: Option<u32>,
    pub msg_type: Text,
    pub text: Text,
}

/// An inbound message, typed: the admin messages the session handles, or an application
/// message `A` (the owner's type) that it delivers in MsgSeqNum order. Owns its data, so a
/// message that arrives ahead of a gap can wait in the session's queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Inbound<A> {
    Logon(Box<Logon>),
    Heartbeat {
        test_req_id: Text,
    },
    TestRequest {
        /// `None`: TestReqID (112) missing.
        test_req_id: Option<Text>,
    },
    ResendRequest {
        /// `None`: missing or not a number.
        begin: Option<u64>,
        end: Option<u64>,
    },
    SequenceReset {
        /// `None`: missing or not a number.
        new_seq: Option<u64>,
        gap_fill: bool,
    },
    Logout {
        text: Text,
    },
    Reject {
        ref_seq_num: u64,
    },
    Malformed(Box<Malformed>),
    App(A),
}

impl<A> Inbound<A> {
    pub fn is_app(&self) -> bool {
        matches!(self, Inbound::App(_))
    }
}

/// Reads the session's view of a decoded message: its header, and the admin message it is,
/// or `app(msg)` for any other MsgType. `begin_string` and the CompIDs are the session's
/// (`None`: not known yet, e.g. the first message of a connection): a mismatch is a
/// [`HeaderProblem`].
pub fn read_inbound<A>(
    msg: &Message<'_>,
    expect: Option<(&[u8], &[u8], &[u8])>,
    app: impl FnOnce(&Message<'_>) -> A,
) -> (InHeader, Inbound<A>) {
    let header = read_header(msg, expect);
    let t = msg.msg_type();
    let text = |tag| Text::new(msg.get(tag).unwrap_or(b""));
    let u64_of = |tag| msg.get_u64(tag).ok().flatten();
    let inbound = match t {
        msg_type::LOGON => Inbound::Logon(Box::new(Logon {
            begin_string: Text::new(msg.begin_string()),
            sender_comp_id: text(tags::SENDER_COMP_ID),
            target_comp_id: text(tags::TARGET_COMP_ID),
            heart_bt_int: u64_of(tags::HEART_BT_INT),
            reset: msg.get(tags::RESET_SEQ_NUM_FLAG) == Some(b"Y"),
            password: msg.get(tags::PASSWORD).map(Text::new),
            has_default_appl_ver_id: msg.get(tags::DEFAULT_APPL_VER_ID).is_some(),
        })),
        msg_type::HEARTBEAT => Inbound::Heartbeat {
            test_req_id: text(tags::TEST_REQ_ID),
        },
        msg_type::TEST_REQUEST => Inbound::TestRequest {
            test_req_id: msg.get(tags::TEST_REQ_ID).map(Text::new),
        },
        msg_type::RESEND_REQUEST => Inbound::ResendRequest {
            begin: u64_of(tags::BEGIN_SEQ_NO),
            end: u64_of(tags::END_SEQ_NO),
        },
        msg_type::SEQUENCE_RESET => Inbound::SequenceReset {
            new_seq: u64_of(tags::NEW_SEQ_NO),
            gap_fill: msg.get(tags::GAP_FILL_FLAG) == Some(b"Y"),
        },
        msg_type::LOGOUT => Inbound::Logout {
            text: text(tags::TEXT),
        },
        msg_type::REJECT => Inbound::Reject {
            ref_seq_num: u64_of(tags::REF_SEQ_NUM).unwrap_or(0),
        },
        _ => Inbound::App(app(msg)),
    };
    (header, inbound)
}

/// The header part of [`read_inbound`].
pub fn read_header(msg: &Message<'_>, expect: Option<(&[u8], &[u8], &[u8])>) -> InHeader {
    let mut problem = HeaderProblem::None;
    if let Some((begin_string, sender, target)) = expect {
        if msg.begin_string() != begin_string {
            problem = HeaderProblem::BeginString;
        } else if msg.get(tags::SENDER_COMP_ID) != Some(sender) {
            problem = HeaderProblem::CompId {
                tag: tags::SENDER_COMP_ID,
            };
        } else if msg.get(tags::TARGET_COMP_ID) != Some(target) {
            problem = HeaderProblem::CompId {
                tag: tags::TARGET_COMP_ID,
            };
        }
    }
    let mut time = |tag| match msg.get_timestamp(tag) {
        Ok(t) => t.unwrap_or(0),
        Err(_) => {
            if problem == HeaderProblem::None {
                problem = HeaderProblem::BadTime { tag };
            }
            0
        }
    };
    let sending_time_ns = time(tags::SENDING_TIME);
    let orig_sending_time_ns = time(tags::ORIG_SENDING_TIME);
    InHeader {
        msg_seq_num: msg.get_u64(tags::MSG_SEQ_NUM).ok().flatten().unwrap_or(0),
        poss_dup: msg.get(tags::POSS_DUP_FLAG) == Some(b"Y"),
        sending_time_ns,
        orig_sending_time_ns,
        problem,
    }
}

/// What to answer a message whose fields do not decode (`DecodeError` past framing): the
/// Reject reason and RefTagID, or `None` for a garbled frame (ignored).
pub fn malformed_reason(e: DecodeError) -> Option<(SessionRejectReason, Option<u32>)> {
    Some(match e {
        DecodeError::Incomplete | DecodeError::Frame(_) => return None,
        DecodeError::InvalidTag { .. } => (SessionRejectReason::InvalidTagNumber, None),
        DecodeError::EmptyValue { tag } => {
            (SessionRejectReason::TagSpecifiedWithoutValue, Some(tag))
        }
        DecodeError::TooManyFields { .. } => (SessionRejectReason::Other, None),
        DecodeError::HeaderOrder { tag } => (
            SessionRejectReason::TagSpecifiedOutOfRequiredOrder,
            Some(tag),
        ),
    })
}

/// The unnumbered Logout (MsgSeqNum 1) that refuses a Logon: to the Logon's sender, in its
/// BeginString, with `text`. It belongs to no session (an unknown CompID pair) or changes
/// nothing of the session it names. A CompID the Logon lacked is left out (an empty field
/// is not FIX).
pub fn refusal(enc: &mut Encoder, logon: &Logon, now_ns: u64, text: &[u8]) -> Vec<u8> {
    enc.begin(msg_type::LOGOUT);
    enc.field_u64(tags::MSG_SEQ_NUM, 1);
    for (tag, comp_id) in [
        (tags::SENDER_COMP_ID, &logon.target_comp_id),
        (tags::TARGET_COMP_ID, &logon.sender_comp_id),
    ] {
        if !comp_id.is_empty() {
            enc.field(tag, comp_id.as_bytes());
        }
    }
    enc.field_timestamp(tags::SENDING_TIME, now_ns, TimePrecision::Millis);
    enc.field(tags::TEXT, text);
    enc.finish_begin_string(logon.begin_string.as_bytes())
        .to_vec()
}

/// An inbound message held until the gap before it is filled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Queued<A> {
    pub header: InHeader,
    pub msg: Inbound<A>,
}

/// The numbers and timers of a session: everything but its store and queue (snapshots).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionVars {
    pub state: u8,
    pub next_in: u64,
    pub next_out: u64,
    pub heart_bt_int_s: u64,
    pub connected_at_ns: u64,
    pub last_recv_ns: u64,
    pub last_sent_ns: u64,
    /// 0: none outstanding.
    pub test_request_sent_ns: u64,
    pub test_request_count: u64,
    pub logout_sent_ns: u64,
    /// The MsgSeqNum that triggered the outstanding ResendRequest (0: none).
    pub resend_trigger: u64,
}

/// One FIX session, acceptor side. See the module documentation.
#[derive(Debug)]
pub struct Session<S: MessageStore, A> {
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
    enc: Encoder,
    /// Messages that arrived ahead of a gap, by MsgSeqNum.
    queue: VecDeque<Queued<A>>,
    /// `on_bytes`' decoder.
    decoder: Decoder,
    /// `send_app`'s body.
    body_enc: Encoder,
}

impl<S: MessageStore, A: Clone> Session<S, A> {
    pub fn new(cfg: SessionConfig, store: S) -> Session<S, A> {
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
            enc: Encoder::with_capacity(Limits::default().msg_len_max + 64),
            queue: VecDeque::new(),
            decoder: Decoder::default(),
            body_enc: Encoder::default(),
            cfg,
        }
    }

    pub fn config(&self) -> &SessionConfig {
        &self.cfg
    }
    pub fn state(&self) -> SessionState {
        self.state
    }
    /// Logged on (application messages are written as they are numbered).
    #[inline]
    pub fn is_active(&self) -> bool {
        self.state == SessionState::Active
    }
    /// The MsgSeqNum expected on the next inbound message.
    pub fn next_in(&self) -> u64 {
        self.next_in
    }
    /// The MsgSeqNum of our next outbound message.
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
    pub fn queued(&self) -> impl Iterator<Item = &Queued<A>> {
        self.queue.iter()
    }

    /// Everything but the store and the queue, for a snapshot.
    pub fn vars(&self) -> SessionVars {
        SessionVars {
            state: self.state.code(),
            next_in: self.next_in,
            next_out: self.next_out,
            heart_bt_int_s: self.heart_bt_int_s,
            connected_at_ns: self.connected_at_ns,
            last_recv_ns: self.last_recv_ns,
            last_sent_ns: self.last_sent_ns,
            test_request_sent_ns: self.test_request_sent_ns.unwrap_or(0),
            test_request_count: self.test_request_count,
            logout_sent_ns: self.logout_sent_ns,
            resend_trigger: self.resend_trigger.unwrap_or(0),
        }
    }

    /// Restores what [`Session::vars`] and [`Session::queued`] returned.
    pub fn restore(&mut self, v: &SessionVars, queue: Vec<Queued<A>>) -> Result<(), String> {
        self.state = SessionState::from_code(v.state).ok_or("bad session state")?;
        self.next_in = v.next_in;
        self.next_out = v.next_out;
        self.heart_bt_int_s = v.heart_bt_int_s;
        self.connected_at_ns = v.connected_at_ns;
        self.last_recv_ns = v.last_recv_ns;
        self.last_sent_ns = v.last_sent_ns;
        self.test_request_sent_ns = (v.test_request_sent_ns != 0).then_some(v.test_request_sent_ns);
        self.test_request_count = v.test_request_count;
        self.logout_sent_ns = v.logout_sent_ns;
        self.resend_trigger = (v.resend_trigger != 0).then_some(v.resend_trigger);
        self.queue = queue.into();
        Ok(())
    }

    /// A new TCP connection is attached to this session: wait for its Logon.
    pub fn on_connected(&mut self, now_ns: u64) {
        self.state = SessionState::AwaitingLogon;
        self.connected_at_ns = now_ns;
        self.last_recv_ns = now_ns;
        self.last_sent_ns = now_ns;
        self.test_request_sent_ns = None;
        self.resend_trigger = None;
        self.queue.clear();
    }

    /// The connection is gone (closed by either side). Sequence numbers are kept.
    pub fn on_disconnected(&mut self) {
        self.state = SessionState::Disconnected;
        self.queue.clear();
        self.resend_trigger = None;
    }

    /// One inbound message. Returns the application message to deliver now, if the message
    /// is one in sequence; the caller handles it, then calls [`Session::next_queued`] until
    /// it returns `None` (messages that waited behind a gap the message filled).
    pub fn on_message<'m, H: SessionHandler>(
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
    /// returned (with its MsgSeqNum) for the caller to handle (call again afterwards); admin
    /// messages are handled here. `None` when the next expected one is not queued.
    pub fn next_queued<H: SessionHandler>(&mut self, now_ns: u64, h: &mut H) -> Option<(u64, A)> {
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
            if let Some(a) = self.process(&q.header, &q.msg, seq, now_ns, h) {
                return Some((seq, a.clone()));
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
                A::from(m.as_bytes().to_vec())
            })),
            Err(e) => Err(e),
        };
        let (header, msg) = match read {
            Ok(r) => r,
            Err(e) => match malformed_reason(e) {
                None => {
                    if let DecodeError::Frame(f) = e {
                        h.on_event(SessionEvent::Garbled(f));
                    }
                    return;
                }
                Some((reason, ref_tag)) => {
                    if self.state == SessionState::AwaitingLogon {
                        self.disconnect(DisconnectReason::BadLogon, h);
                        return;
                    }
                    let header = InHeader {
                        msg_seq_num: scan_msg_seq_num(bytes).unwrap_or(0),
                        ..InHeader::default()
                    };
                    let m = Malformed {
                        reason,
                        ref_tag,
                        msg_type: Text::EMPTY,
                        text: Text::new(reason_text(reason)),
                    };
                    if header.msg_seq_num == 0 {
                        h.on_event(SessionEvent::Garbled(FrameError::BodyLengthMismatch));
                        return;
                    }
                    (header, Inbound::Malformed(Box::new(m)))
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
    /// password tells.
    pub fn logon_refusal(
        &self,
        header: &InHeader,
        l: &Logon,
    ) -> Option<(String, DisconnectReason)> {
        let no = |text: &str, reason| Some((text.to_string(), reason));
        if l.begin_string.as_bytes() != self.cfg.version.begin_string() {
            return no("wrong BeginString", DisconnectReason::UnsupportedVersion);
        }
        if l.sender_comp_id.as_bytes() != self.cfg.target_comp_id.as_bytes()
            || l.target_comp_id.as_bytes() != self.cfg.sender_comp_id.as_bytes()
        {
            return no(
                "unknown SenderCompID/TargetCompID",
                DisconnectReason::BadCompId,
            );
        }
        if let Some(pw) = &self.cfg.password {
            if l.password.as_ref().map(Text::as_bytes) != Some(pw.as_bytes()) {
                return no("bad password", DisconnectReason::BadPassword);
            }
        }
        let seq = header.msg_seq_num;
        if seq == 0 {
            return no("MsgSeqNum(34) missing", DisconnectReason::MissingMsgSeqNum);
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
        if let Some((text, reason)) = self.logon_refusal(header, l) {
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
        h.on_event(SessionEvent::LoggedOn { reset });
        if seq == self.next_in {
            self.next_in += 1;
        } else {
            self.request_resend(seq, now_ns, h);
        }
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
            HeaderProblem::None | HeaderProblem::BadTime { .. } => {}
            HeaderProblem::BeginString => {
                self.logout_and_disconnect(
                    b"Incorrect BeginString",
                    DisconnectReason::BeginStringMismatch,
                    now_ns,
                    h,
                );
                return None;
            }
            HeaderProblem::CompId { tag } => {
                let r = SessionRejectReason::CompIdProblem;
                let mt = msg_type_of(msg);
                self.send_reject(
                    header.msg_seq_num,
                    mt,
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
                return None;
            }
        }
        if header.msg_seq_num == 0 {
            self.logout_and_disconnect(
                b"MsgSeqNum(34) missing",
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
            if header.poss_dup {
                h.on_event(SessionEvent::DuplicateIgnored { seq });
            } else {
                self.too_low(seq, now_ns, h);
            }
            return None;
        }
        self.process(header, msg, seq, now_ns, h)
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
        let is_reset = matches!(msg, Inbound::SequenceReset { .. });
        if let HeaderProblem::BadTime { tag } = header.problem {
            self.next_in += 1;
            let r = SessionRejectReason::IncorrectDataFormat;
            self.send_reject(
                seq,
                msg_type_of(msg),
                Some(tag),
                r,
                reason_text(r),
                now_ns,
                h,
            );
            return None;
        }
        // A malformed message's SendingTime may be unreadable: its own Reject says why.
        let malformed = matches!(msg, Inbound::Malformed(_));
        if self.cfg.require_sending_time && header.sending_time_ns == 0 && !malformed {
            self.next_in += 1;
            let r = SessionRejectReason::RequiredTagMissing;
            let tag = Some(tags::SENDING_TIME);
            self.send_reject(seq, msg_type_of(msg), tag, r, reason_text(r), now_ns, h);
            return None;
        }
        if let Some(tol) = self.cfg.sending_time_tolerance_ns {
            if header.sending_time_ns != 0 && header.sending_time_ns.abs_diff(now_ns) > tol {
                self.next_in += 1;
                self.sending_time_problem(msg, seq, now_ns, h);
                return None;
            }
        }
        if header.poss_dup && !is_reset && self.cfg.require_sending_time {
            if header.orig_sending_time_ns == 0 {
                self.next_in += 1;
                let r = SessionRejectReason::RequiredTagMissing;
                let tag = Some(tags::ORIG_SENDING_TIME);
                self.send_reject(seq, msg_type_of(msg), tag, r, reason_text(r), now_ns, h);
                return None;
            }
            if header.orig_sending_time_ns > header.sending_time_ns {
                self.next_in += 1;
                self.sending_time_problem(msg, seq, now_ns, h);
                return None;
            }
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
            Inbound::Logon(_) => {
                self.next_in += 1;
                let r = SessionRejectReason::Other;
                self.send_reject(
                    seq,
                    Some(msg_type::LOGON),
                    None,
                    r,
                    b"already logged on",
                    now_ns,
                    h,
                );
            }
            Inbound::Malformed(m) => {
                self.next_in += 1;
                let mt = (!m.msg_type.is_empty()).then(|| m.msg_type.as_bytes());
                self.send_reject(seq, mt, m.ref_tag, m.reason, m.text.as_bytes(), now_ns, h);
            }
            Inbound::App(a) => {
                self.next_in += 1;
                return Some(a);
            }
        }
        None
    }

    fn sending_time_problem<H: SessionHandler>(
        &mut self,
        msg: &Inbound<A>,
        seq: u64,
        now_ns: u64,
        h: &mut H,
    ) {
        let r = SessionRejectReason::SendingTimeAccuracyProblem;
        self.send_reject(
            seq,
            msg_type_of(msg),
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
                header: *header,
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

    /// Serves the counterparty's ResendRequest: application messages again with PossDupFlag=Y
    /// and OrigSendingTime, admin messages (and anything not stored) as SequenceReset-GapFill.
    fn serve_resend<H: SessionHandler>(
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
        let last = self.next_out - 1;
        let end = if end == 0 || end > last { last } else { end };
        if begin > end || h.muted() {
            h.on_event(SessionEvent::ResendServed {
                begin,
                end,
                resent: 0,
            });
            return;
        }
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
        if next <= end {
            gap_fill_msg(enc, cfg, next, end + 1, now_ns, h);
        }
        self.last_sent_ns = now_ns;
        h.on_event(SessionEvent::ResendServed { begin, end, resent });
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

    /// Sends a session-level Reject (35=3) for inbound message `ref_seq_num`.
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

    fn reject_field<H: SessionHandler>(
        &mut self,
        msg: &Inbound<A>,
        seq: u64,
        e: FieldError,
        now_ns: u64,
        h: &mut H,
    ) {
        let r = e.session_reject_reason();
        self.send_reject(
            seq,
            msg_type_of(msg),
            Some(e.tag),
            r,
            reason_text(r),
            now_ns,
            h,
        );
    }

    fn reject_missing<H: SessionHandler>(
        &mut self,
        msg: &Inbound<A>,
        seq: u64,
        tag: u32,
        now_ns: u64,
        h: &mut H,
    ) {
        self.reject_field(msg, seq, FieldError::missing(tag), now_ns, h);
    }

    fn send_logout<H: SessionHandler>(&mut self, text: &[u8], now_ns: u64, h: &mut H) {
        self.send_admin(msg_type::LOGOUT, now_ns, h, |e| {
            if !text.is_empty() {
                e.field(tags::TEXT, text);
            }
        });
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
        self.last_sent_ns = now_ns;
        if h.muted() {
            return;
        }
        self.write_app(seq, msg_type, now_ns, h, |e, _| body(e));
    }
}

impl<A: Clone> Session<MemoryStore, A> {
    /// Numbers, stores and (when logged on) sends an application message: `next_app`,
    /// `MemoryStore::put` and `write_app` in one. Returns its MsgSeqNum.
    pub fn send_app<M: crate::app::AppMessage, H: SessionHandler>(
        &mut self,
        msg: &M,
        now_ns: u64,
        h: &mut H,
    ) -> u64 {
        let seq = self.next_app(now_ns);
        let active = self.is_active();
        // Fields borrowed apart: taking `body_enc` out would allocate a new encoder.
        let Session {
            cfg,
            store,
            enc,
            body_enc: body,
            ..
        } = self;
        body.begin_body();
        msg.encode_body(cfg.version, body);
        store.put(seq, msg.msg_type(), now_ns, body.body());
        if active && !h.muted() {
            enc.begin(msg.msg_type());
            enc.header(&Header {
                sender_comp_id: cfg.sender_comp_id.as_bytes(),
                target_comp_id: cfg.target_comp_id.as_bytes(),
                msg_seq_num: seq,
                sending_time_ns: now_ns,
                poss_dup: false,
                orig_sending_time: None,
                time_precision: cfg.time_precision,
            });
            enc.raw(body.body());
            h.send(enc.finish(cfg.version));
        }
        seq
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

/// MsgType of an inbound message for a Reject's RefMsgType (372).
fn msg_type_of<A>(msg: &Inbound<A>) -> Option<&'static [u8]> {
    Some(match msg {
        Inbound::Logon(_) => msg_type::LOGON,
        Inbound::Heartbeat { .. } => msg_type::HEARTBEAT,
        Inbound::TestRequest { .. } => msg_type::TEST_REQUEST,
        Inbound::ResendRequest { .. } => msg_type::RESEND_REQUEST,
        Inbound::SequenceReset { .. } => msg_type::SEQUENCE_RESET,
        Inbound::Logout { .. } => msg_type::LOGOUT,
        Inbound::Reject { .. } => msg_type::REJECT,
        Inbound::Malformed(_) | Inbound::App(_) => return None,
    })
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
    format!("MsgSeqNum too low, expecting {expected} but received {received}").into_bytes()
}

/// The BeginString, SenderCompID and TargetCompID of a message (a Logon on a new
/// connection), so the owner can pick the `Session` it belongs to.
pub fn identify<'a>(msg: &Message<'a>) -> Option<(&'a [u8], &'a [u8], &'a [u8])> {
    Some((
        msg.begin_string(),
        msg.get(tags::SENDER_COMP_ID)?,
        msg.get(tags::TARGET_COMP_ID)?,
    ))
}
