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
//!
//! How the gateway drives a session (no socket here: bytes and time are plain inputs):
//!
//! ```
//! use fix::{FixVersion, MemoryStore, Message, Session, SessionConfig, SessionEvent, SessionHandler};
//!
//! struct Conn { wire: Vec<u8>, orders: usize, closed: bool }
//! impl SessionHandler for Conn {
//!     fn send(&mut self, bytes: &[u8]) { self.wire.extend_from_slice(bytes) } // write(2) it
//!     fn on_app_message(&mut self, msg: &Message<'_>) {
//!         if let Ok(_order) = fix::app::NewOrderSingle::parse(msg) { self.orders += 1 }
//!     }
//!     fn on_event(&mut self, e: SessionEvent) {
//!         if let SessionEvent::Disconnect(_) = e { self.closed = true } // close the socket
//!     }
//! }
//!
//! let cfg = SessionConfig::new(FixVersion::Fix44, "RIALTO", "CLIENT1");
//! let mut session = Session::new(cfg, MemoryStore::new(10_000));
//! session.set_next_in(1); // restored from disk after a restart
//! session.set_next_out(1);
//! let mut conn = Conn { wire: Vec::new(), orders: 0, closed: false };
//! let now_ns = 1_700_000_000_000_000_000;
//! session.on_connected(now_ns);
//!
//! let mut logon = Vec::new();
//! fix::wrap_body(FixVersion::Fix44,
//!     b"35=A\x0149=CLIENT1\x0156=RIALTO\x0134=1\x0152=20231114-22:13:20\x0198=0\x01108=30\x01",
//!     &mut logon);
//! let consumed = session.on_bytes(&logon, now_ns, &mut conn); // keep the unconsumed tail
//! assert_eq!(consumed, logon.len());
//! assert_eq!(session.state(), fix::SessionState::Active);
//! assert!(conn.wire.starts_with(b"8=FIX.4.4\x01")); // our Logon answer
//! session.on_tick(now_ns + 1_000_000_000, &mut conn); // call it periodically
//! assert_eq!((session.next_in(), session.next_out()), (2, 2)); // persist these
//! ```
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
    find_soh, frame, resync, DecodeError, Decoder, FieldError, FieldErrorKind, Fields, FrameError,
    Group, Limits, Message, SOH,
};
pub use encode::{Encoder, Header};
pub use session::{
    identify, DisconnectReason, MemoryStore, MessageStore, Session, SessionConfig, SessionEvent,
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

/// Fuzz entry: frames and decodes `bytes` message by message (resyncing after garbage) and
/// runs every typed getter and application-message parser on what decodes. Never panics.
pub fn fuzz_decode(bytes: &[u8]) {
    let mut decoder = Decoder::new(Limits::default());
    let mut rest = bytes;
    while !rest.is_empty() {
        match frame(rest, decoder.limits().msg_len_max) {
            Ok(None) => break,
            Ok(Some(len)) => {
                if let Ok(msg) = decoder.decode(rest) {
                    exercise(&msg);
                }
                rest = &rest[len..];
            }
            Err(_) => rest = &rest[resync(rest).max(1)..],
        }
    }
    // Also as a body behind a valid header and trailer, to reach the field-level paths.
    let mut framed = Vec::with_capacity(bytes.len() + 32);
    wrap_body(FixVersion::Fix44, bytes, &mut framed);
    if let Ok(msg) = decoder.decode(&framed) {
        exercise(&msg);
    }
}

fn exercise(msg: &Message<'_>) {
    for (tag, _) in msg.fields() {
        let _ = msg.get_u64(tag);
        let _ = msg.get_decimal(tag);
        let _ = msg.get_timestamp(tag);
        let _ = msg.get_bool(tag);
        let _ = msg.get_char(tag);
        if let Ok(Some(d)) = msg.get_decimal(tag) {
            let _ = d.to_ticks(Decimal::new(1, 2));
            let _ = d.to_ticks(Decimal::new(5, 0));
        }
    }
    let _ = msg.body().count();
    if let Ok(g) = msg.group(453, &[448, 447, 452]) {
        for entry in g {
            let _ = entry.get(448);
        }
    }
    let _ = app::NewOrderSingle::parse(msg);
    let _ = app::OrderCancelRequest::parse(msg);
    let _ = app::OrderCancelReplaceRequest::parse(msg);
    let _ = app::OrderMassCancelRequest::parse(msg);
    let _ = app::OrderStatusRequest::parse(msg);
}

/// Writes `8=<BeginString>|9=<len>|<body>10=<sum>|` into `out` (cleared first).
pub fn wrap_body(version: FixVersion, body: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(b"8=");
    out.extend_from_slice(version.begin_string());
    out.extend_from_slice(b"\x019=");
    encode::write_u64(out, body.len() as u64);
    out.push(SOH);
    out.extend_from_slice(body);
    let sum = decode::checksum(out);
    out.extend_from_slice(b"10=");
    out.extend_from_slice(&[b'0' + sum / 100, b'0' + sum / 10 % 10, b'0' + sum % 10, SOH]);
}

/// Fuzz entry: feeds `bytes` to a logged-on FIX 4.4 session (raw, then cut in two at an
/// arbitrary point, then as the body of one correctly framed message) with ticks in between,
/// and to a session awaiting Logon. Never panics.
pub fn fuzz_session(bytes: &[u8]) {
    struct Sink;
    impl SessionHandler for Sink {
        fn send(&mut self, bytes: &[u8]) {
            let mut d = Decoder::new(Limits::default());
            // Everything the session sends must decode.
            assert!(
                d.decode(bytes).is_ok(),
                "session sent an undecodable message"
            );
        }
        fn on_app_message(&mut self, msg: &Message<'_>) {
            exercise(msg);
        }
        fn on_event(&mut self, _event: SessionEvent) {}
    }
    const T0: u64 = 1_700_000_000_000_000_000;
    let mut cfg = SessionConfig::new(FixVersion::Fix44, "RIALTO", "CLIENT1");
    cfg.sending_time_tolerance_ns = None;
    cfg.queue_max = 8;
    let mut h = Sink;
    let mut logon = Vec::new();
    wrap_body(
        FixVersion::Fix44,
        b"35=A\x0149=CLIENT1\x0156=RIALTO\x0134=1\x0152=20231114-22:13:20\x0198=0\x01108=30\x01",
        &mut logon,
    );
    let mut framed = Vec::new();
    wrap_body(FixVersion::Fix44, bytes, &mut framed);
    let cut = bytes.first().map_or(0, |&b| b as usize % (bytes.len() + 1));
    let feeds: [&[&[u8]]; 3] = [&[bytes], &[&bytes[..cut], &bytes[cut..]], &[&framed]];
    for feed in feeds {
        let mut s = Session::new(cfg.clone(), MemoryStore::new(64));
        s.on_connected(T0);
        s.on_bytes(&logon, T0, &mut h);
        let er = app::ExecutionReport {
            order_id: Some(1),
            cl_ord_id: b"C1",
            orig_cl_ord_id: None,
            exec_id: 1,
            exec_type: app::ExecType::New,
            ord_status: app::OrdStatus::New,
            account: None,
            symbol: b"ACME",
            side: types::Side::Buy,
            ord_type: None,
            time_in_force: None,
            order_qty: 1,
            price: None,
            last: None,
            leaves_qty: 1,
            cum_qty: 0,
            avg_px: Decimal::ZERO,
            ord_rej_reason: None,
            text: None,
            transact_time_ns: T0,
            time_precision: TimePrecision::Millis,
        };
        s.send_app(&er, T0, &mut h);
        let mut pending: Vec<u8> = Vec::new();
        for (i, chunk) in feed.iter().enumerate() {
            pending.extend_from_slice(chunk);
            let now = T0 + (i as u64) * 31_000_000_000;
            let used = s.on_bytes(&pending, now, &mut h);
            pending.drain(..used);
            s.on_tick(now, &mut h);
        }
        s.on_tick(T0 + 200_000_000_000, &mut h);
        // The same bytes before Logon.
        let mut fresh = Session::new(cfg.clone(), MemoryStore::new(4));
        fresh.on_connected(T0);
        fresh.on_bytes(bytes, T0, &mut h);
        fresh.on_bytes(&framed, T0, &mut h);
    }
}
