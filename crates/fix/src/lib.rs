//! Rialto's FIX engine: framing, codec, exact decimals, sans-I/O acceptor session,
//! order-entry messages, and a blocking test client.
//!
//! Role: every piece of FIX in Rialto; nothing FIX-specific lives anywhere else. `decode`
//! frames bytes and splits them into field views (a tag below 64 is found with one load);
//! `encode` writes messages with BodyLength and CheckSum; `decimal` converts prices exactly
//! (`parse_price`, the one price parser) and formats them; `session` is the acceptor state
//! machine (Logon, heartbeats, sequence numbers, gaps, resend, Logout) for one FIX session,
//! fed typed inputs so that its owner can journal and replay them; `app` reads the
//! order-entry messages Rialto accepts and builds every answer it sends, in FIX 4.2, 4.4 and
//! 5.0SP2; `dict` holds the dictionaries of those versions (static tables generated from
//! `dictionary/fix.dict`) and validates a message against one, naming the Reject it deserves;
//! `client` is a small blocking initiator for tests and tools.
//!
//! Never: threads, clock reads, floats, allocation per message in steady state, or a panic on
//! any input (see `fuzz_decode` and `fuzz_session`); sockets only in `client`. Business rules
//! (is this order valid, who owns it) belong to the exchange; this crate only says what the
//! wire said.
//!
//! Invariants: every outbound message is produced by `Encoder` with a correct BodyLength and
//! CheckSum; a session consumes inbound sequence numbers strictly in order and never delivers
//! an application message twice for the same MsgSeqNum (PossDup repeats of a consumed number
//! are dropped).
//!
//! How an owner drives a session (no socket here: bytes and time are plain inputs):
//!
//! ```
//! use fix::{FixVersion, MemoryStore, Session, SessionConfig, SessionEvent, SessionHandler};
//!
//! struct Conn { wire: Vec<u8>, closed: bool }
//! impl SessionHandler for Conn {
//!     fn send(&mut self, bytes: &[u8]) { self.wire.extend_from_slice(bytes) } // write(2) it
//!     fn on_event(&mut self, e: SessionEvent) {
//!         if let SessionEvent::Disconnect(_) = e { self.closed = true } // close the socket
//!     }
//! }
//!
//! let cfg = SessionConfig::new(FixVersion::Fix44, "RIALTO", "CLIENT1");
//! let mut session: Session<MemoryStore, Vec<u8>> = Session::new(cfg, MemoryStore::new(10_000));
//! session.set_next_in(1); // restored after a restart
//! session.set_next_out(1);
//! let mut conn = Conn { wire: Vec::new(), closed: false };
//! let now_ns = 1_700_000_000_000_000_000;
//! session.on_connected(now_ns);
//!
//! let mut logon = Vec::new();
//! fix::wrap_body(FixVersion::Fix44,
//!     b"35=A\x0149=CLIENT1\x0156=RIALTO\x0134=1\x0152=20231114-22:13:20\x0198=0\x01108=30\x01",
//!     &mut logon);
//! let mut orders = 0;
//! let consumed = session.on_bytes(&logon, now_ns, &mut conn, &mut |_msg| orders += 1);
//! assert_eq!(consumed, logon.len());
//! assert_eq!(session.state(), fix::SessionState::Active);
//! assert!(conn.wire.starts_with(b"8=FIX.4.4\x01")); // our Logon answer
//! session.on_tick(now_ns + 1_000_000_000, &mut conn); // call it periodically
//! assert_eq!((session.next_in(), session.next_out()), (2, 2));
//! ```
#![forbid(unsafe_code)]

pub mod app;
pub mod client;
/// The exact decimals of prices and quantities (`types::decimal`: FIX and JSON share them).
pub mod decimal {
    pub use types::decimal::*;
}
pub mod decode;
pub mod dict;
pub mod encode;
pub mod md;
pub mod scan;
pub mod session;
pub mod tags;
pub mod time;

pub use decimal::{
    avg_px, parse_price, write_ratio, write_units, Decimal, DecimalError, PriceError,
};
pub use decode::{
    find_soh, frame, parse_u64, resync, scan_msg_seq_num, scan_msg_type, DecodeError, Decoder,
    FieldError, FieldErrorKind, Fields, FrameError, Group, Limits, Message, TagProblem, SOH,
};
pub use encode::{write_u64, Encoder, Header};
pub use session::{
    identify, malformed_input, malformed_reason, read_header, read_inbound, refusal, Credentials,
    DisconnectReason, HeaderProblem, InHeader, Inbound, InboundApp, Logon, Malformed, MemoryStore,
    MessageStore, Queued, RejectOf, Route, Session, SessionConfig, SessionEvent, SessionHandler,
    SessionState, SessionVars, Stored, Text, LOGON_REFUSED,
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
    RepeatingGroupFieldsOutOfOrder = 15,
    IncorrectNumInGroupCount = 16,
    Other = 99,
}

impl SessionRejectReason {
    /// Every reason (tests drive each one through every version).
    pub const ALL: [SessionRejectReason; 15] = {
        use SessionRejectReason as R;
        [
            R::InvalidTagNumber,
            R::RequiredTagMissing,
            R::TagNotDefinedForMessageType,
            R::UndefinedTag,
            R::TagSpecifiedWithoutValue,
            R::ValueIncorrect,
            R::IncorrectDataFormat,
            R::CompIdProblem,
            R::SendingTimeAccuracyProblem,
            R::InvalidMsgType,
            R::TagAppearsMoreThanOnce,
            R::TagSpecifiedOutOfRequiredOrder,
            R::RepeatingGroupFieldsOutOfOrder,
            R::IncorrectNumInGroupCount,
            R::Other,
        ]
    };

    /// The reason's number (the journal's code, and 373's value where a version defines it).
    pub fn code(self) -> u64 {
        self as u64
    }

    /// The SessionRejectReason (373) to send in `version`: the code where the version's
    /// dictionary defines it, else none (FIX 4.2 defines only 0 to 11: a repeated tag, a field
    /// out of order, a group's count or order and "other" go without 373, and the Reject's Text
    /// says what is wrong).
    pub fn code_in(self, version: FixVersion) -> Option<u64> {
        defines(version, tags::SESSION_REJECT_REASON, self.code()).then_some(self.code())
    }
}

/// Whether `version`'s dictionary allows the number `value` in the enumerated field `tag`
/// (any value of a field that is not enumerated; none of a field it lacks). For the codes of
/// answers that some versions lack (a cold path: a lookup and a formatted number).
pub fn defines(version: FixVersion, tag: u32, value: u64) -> bool {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut v = value;
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    dict::dictionary(version)
        .field(tag)
        .is_some_and(|f| f.allows(&buf[i..]))
}

/// The value of the enumerated reason field `tag` to send in `version`: `code` where the
/// version defines it, else the first of `fallbacks` it defines (the catch-all reasons, e.g.
/// Other 99 where the version has it, else its "broker option"), else `code`.
pub fn defined_or(version: FixVersion, tag: u32, code: u64, fallbacks: &[u64]) -> u64 {
    std::iter::once(code)
        .chain(fallbacks.iter().copied())
        .find(|&c| defines(version, tag, c))
        .unwrap_or(code)
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
    /// Every reason (tests drive each one through every version).
    pub const ALL: [BusinessRejectReason; 9] = {
        use BusinessRejectReason as R;
        [
            R::Other,
            R::UnknownId,
            R::UnknownSecurity,
            R::UnsupportedMessageType,
            R::ApplicationNotAvailable,
            R::ConditionallyRequiredFieldMissing,
            R::NotAuthorized,
            R::DeliverToFirmNotAvailable,
            R::InvalidPriceIncrement,
        ]
    };

    pub fn code(self) -> u64 {
        self as u64
    }

    /// The BusinessRejectReason (380) to send in `version`: the code where the version defines
    /// it, else Other (0): FIX 4.2 defines 0 to 5, FIX 4.4 0 to 7, 5.0SP2 adds 18.
    pub fn code_in(self, version: FixVersion) -> u64 {
        defined_or(version, tags::BUSINESS_REJECT_REASON, self.code(), &[0])
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
    // Also as a body behind a valid header and trailer, to reach the field-level paths: a
    // message that does not split is a Malformed input (with a text), or garbled.
    let mut framed = Vec::with_capacity(bytes.len() + 32);
    wrap_body(FixVersion::Fix44, bytes, &mut framed);
    match decoder.decode(&framed) {
        Ok(msg) => exercise(&msg),
        Err(e) => match session::malformed_input(e, &framed) {
            Some((header, m)) => {
                assert!(!matches!(
                    e,
                    DecodeError::Frame(_) | DecodeError::Incomplete
                ));
                assert!(!m.text.is_empty(), "{e:?}");
                assert_eq!(header.msg_seq_num, scan_msg_seq_num(&framed).unwrap_or(0));
            }
            None => assert!(matches!(e, DecodeError::Frame(_))),
        },
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
            let _ = d.to_units(2);
        }
        if let Some(v) = msg.get(tag) {
            let _ = parse_price(v, 2, 5);
        }
    }
    let _ = msg.body().count();
    for (i, tag) in msg.repeated_tags() {
        assert!(msg.position(tag).is_some_and(|first| first < i));
    }
    if let Ok(g) = msg.group(453, &[448, 447, 452]) {
        for entry in g {
            let _ = entry.get(448);
        }
    }
    struct Any;
    impl app::Instruments for Any {
        fn find(&self, symbol: &[u8]) -> Option<app::InstrumentRef> {
            (symbol.len() < 8).then_some(app::InstrumentRef {
                id: symbol.len() as u32,
                decimals: 2,
                tick: 1,
            })
        }
    }
    let _ = app::NewOrderSingle::read(msg, &Any);
    let _ = app::OrderCancelRequest::read(msg);
    let _ = app::OrderCancelReplaceRequest::read(msg, &Any);
    let _ = app::OrderMassCancelRequest::read(msg, &Any);
    let _ = app::OrderStatusRequest::read(msg);
    let _ = app::Echo::of(msg);
    let _ = read_inbound(msg, Some((b"FIX.4.4", b"CLIENT1", b"RIALTO")), |_| Ok(()));
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
    let mut app = |m: &[u8]| {
        let mut d = Decoder::new(Limits::default());
        if let Ok(msg) = d.decode(m) {
            exercise(&msg);
        }
    };
    for feed in feeds {
        let mut s: Session<MemoryStore, Vec<u8>> = Session::new(cfg.clone(), MemoryStore::new(64));
        s.on_connected(T0);
        s.on_bytes(&logon, T0, &mut h, &mut app);
        let er = app::NewOrder {
            cl_ord_id: b"C1",
            symbol: b"ACME",
            side: types::Side::Buy,
            order_qty: 1,
            ord_type: types::OrdType::Limit,
            price: Some(Decimal::new(100, 2)),
            time_in_force: types::TimeInForce::Day,
            post_only: false,
            transact_time_ns: T0,
        };
        s.send_app(&er, T0, &mut h);
        let mut pending: Vec<u8> = Vec::new();
        for (i, chunk) in feed.iter().enumerate() {
            pending.extend_from_slice(chunk);
            let now = T0 + (i as u64) * 31_000_000_000;
            let used = s.on_bytes(&pending, now, &mut h, &mut app);
            pending.drain(..used);
            s.on_tick(now, &mut h);
        }
        s.on_tick(T0 + 200_000_000_000, &mut h);
        // The same bytes before Logon.
        let mut fresh: Session<MemoryStore, Vec<u8>> =
            Session::new(cfg.clone(), MemoryStore::new(4));
        fresh.on_connected(T0);
        fresh.on_bytes(bytes, T0, &mut h, &mut app);
        fresh.on_bytes(&framed, T0, &mut h, &mut app);
    }
}
