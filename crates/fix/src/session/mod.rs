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

use crate::decode::{Decoder, FrameError, Limits};
use crate::encode::Encoder;
use crate::time::TimePrecision;
use crate::{FixVersion, SessionRejectReason};

mod inbound;
mod receive;
mod script;
mod send;
mod store;

pub use inbound::{
    identify, malformed_input, malformed_reason, read_header, read_inbound, reason_text, refusal,
    seq_too_low_text, Credentials, HeaderProblem, InHeader, Inbound, Logon, Malformed, Route, Text,
    LOGON_REFUSED, TEXT_LEN_MAX,
};
pub use script::fuzz_session_script;
pub use store::{MemoryStore, MessageStore, Stored};

const NS_PER_SEC: u64 = 1_000_000_000;

/// Static configuration of one FIX session (acceptor side).
#[derive(Clone, Debug)]
pub struct SessionConfig {
    pub version: FixVersion,
    /// Our CompID: the counterparty's TargetCompID (56), our SenderCompID (49).
    pub sender_comp_id: String,
    /// The counterparty's CompID: its SenderCompID (49), our TargetCompID (56).
    pub target_comp_id: String,
    /// A Logon must carry credentials its owner accepted (`Logon::credentials`); the owner
    /// verifies Username (553) and Password (554), the session only reads the verdict.
    pub authenticate: bool,
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
    /// A Logon with ResetSeqNumFlag (141=Y) may reset both sequence numbers to 1; if false
    /// such a Logon is refused.
    pub allow_reset: bool,
}

impl SessionConfig {
    /// Defaults for a session between `sender_comp_id` (us) and `target_comp_id`.
    pub fn new(version: FixVersion, sender_comp_id: &str, target_comp_id: &str) -> SessionConfig {
        SessionConfig {
            version,
            sender_comp_id: sender_comp_id.to_string(),
            target_comp_id: target_comp_id.to_string(),
            authenticate: false,
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
            allow_reset: true,
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
    /// Logon of a session that requires authentication whose Username or Password its owner
    /// did not accept (or did not check).
    BadCredentials,
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
    /// We logged the session out for its conduct: over its logout throttle, or reading its
    /// messages too slowly.
    Evicted,
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
        /// RefTagID (371) as sent: a tag, or what the client wrote for one (0, -1).
        ref_tag: Option<i64>,
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
    /// A ResendRequest asks for `begin..=end`: true if the owner serves it itself, in bounded
    /// pieces ([`Session::resend_piece`]) after this message's output and ahead of anything
    /// sent later; false (the default): the session writes it all now.
    fn defer_resend(&mut self, _begin: u64, _end: u64) -> bool {
        false
    }
}

/// An application message as a session holds it (the owner's type `A` of [`Inbound::App`]):
/// the session names its MsgType in a Reject's RefMsgType (372).
pub trait InboundApp: Clone {
    /// Its MsgType (35); empty if unknown.
    fn msg_type(&self) -> &[u8];
}

/// A message's bytes (clients and tests: `Session::on_bytes`).
impl InboundApp for Vec<u8> {
    fn msg_type(&self) -> &[u8] {
        crate::decode::scan_msg_type(self).unwrap_or(b"")
    }
}

/// What a session-level Reject (35=3) says of the inbound message it refuses.
#[derive(Clone, Copy, Debug)]
pub struct RejectOf<'a> {
    /// RefSeqNum (45).
    pub ref_seq_num: u64,
    /// RefMsgType (372).
    pub ref_msg_type: Option<&'a [u8]>,
    /// RefTagID (371): a tag, or what the client wrote for one (0, -1).
    pub ref_tag: Option<i64>,
    /// SessionRejectReason (373).
    pub reason: SessionRejectReason,
    /// Text (58); empty: none.
    pub text: &'a [u8],
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
    /// The routing fields of the message being processed: its Rejects carry them reversed.
    reply_route: Option<Box<Route>>,
}

impl<S: MessageStore, A: InboundApp> Session<S, A> {
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
            reply_route: None,
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
}
