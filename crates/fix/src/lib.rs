//! Rialto's FIX engine: codec, sans-I/O acceptor session, order-entry messages.
//!
//! Role: everything FIX that is not a socket. `decode`/`encode` turn bytes into field views and
//! back; `session` is the acceptor state machine (Logon, heartbeats, sequence numbers, resend,
//! Logout) for one FIX session, surviving reconnects; `app` reads the order-entry messages Rialto
//! accepts and builds the reports it sends. The gateway owns the sockets, the clock and
//! persistence, feeds bytes and time in and takes bytes and actions out.
//!
//! Never: sockets, threads, clock reads, floats, allocation per message in steady state, or a
//! panic on any input (see `fuzz_decode` and `fuzz_session`). Business rules (is this order
//! valid, who owns it) belong to the engine; this crate only says what the wire said.
//!
//! Invariants: every outbound message is produced by `Encoder` with a correct BodyLength and
//! CheckSum; a session consumes inbound sequence numbers strictly in order and never delivers
//! an application message twice for the same MsgSeqNum (PossDup repeats of a consumed number
//! are dropped).
#![forbid(unsafe_code)]

pub mod app;
pub mod decimal;
pub mod decode;
pub mod encode;
pub mod session;
pub mod tags;
pub mod time;

pub use decimal::{avg_px, Decimal, DecimalError};
pub use decode::{
    frame, resync, DecodeError, Decoder, FieldError, FieldErrorKind, Fields, FrameError, Group,
    Limits, Message, SOH,
};
pub use encode::{Encoder, Header};
pub use session::{
    DisconnectReason, MemoryStore, MessageStore, Session, SessionConfig, SessionEvent,
    SessionHandler, SessionState,
};
pub use time::{parse_utc_timestamp, write_utc_timestamp, TimePrecision};

/// The FIX versions Rialto speaks. FIX 5.0SP2 runs over the FIXT.1.1 session layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum FixVersion {
    Fix42,
    #[default]
    Fix44,
    /// FIXT.1.1 transport with FIX 5.0SP2 application messages (DefaultApplVerID 1137=9).
    Fix50Sp2,
}

impl FixVersion {
    /// The BeginString(8) value.
    pub fn begin_string(self) -> &'static [u8] {
        match self {
            FixVersion::Fix42 => b"FIX.4.2",
            FixVersion::Fix44 => b"FIX.4.4",
            FixVersion::Fix50Sp2 => b"FIXT.1.1",
        }
    }
    pub fn from_begin_string(b: &[u8]) -> Option<FixVersion> {
        match b {
            b"FIX.4.2" => Some(FixVersion::Fix42),
            b"FIX.4.4" => Some(FixVersion::Fix44),
            b"FIXT.1.1" => Some(FixVersion::Fix50Sp2),
            _ => None,
        }
    }
}

/// SessionRejectReason (373) values, as sent in a session-level Reject (35=3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SessionRejectReason {
    InvalidTagNumber = 0,
    RequiredTagMissing = 1,
    TagNotDefinedForMessageType = 2,
    UndefinedTag = 3,
    TagSpecifiedWithoutValue = 4,
    ValueIncorrect = 5,
    IncorrectDataFormat = 6,
    CompIdProblem = 9,
    SendingTimeAccuracyProblem = 10,
    InvalidMsgType = 11,
    TagAppearsMoreThanOnce = 13,
    TagSpecifiedOutOfRequiredOrder = 14,
    IncorrectNumInGroupCount = 16,
    Other = 99,
}

impl SessionRejectReason {
    pub fn code(self) -> u64 {
        self as u64
    }
}

/// BusinessRejectReason (380) values, as sent in a BusinessMessageReject (35=j).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BusinessRejectReason {
    Other = 0,
    UnknownId = 1,
    UnknownSecurity = 2,
    UnsupportedMessageType = 3,
    ApplicationNotAvailable = 4,
    ConditionallyRequiredFieldMissing = 5,
    NotAuthorized = 6,
    DeliverToFirmNotAvailable = 7,
    InvalidPriceIncrement = 18,
}

impl BusinessRejectReason {
    pub fn code(self) -> u64 {
        self as u64
    }
}
