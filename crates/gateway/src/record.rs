//! The journaled input of the exchange: every record the sequencer appends, and its binary
//! encoding (the payload of one journal record).
//!
//! Role: the complete, self-contained input of the deterministic `Exchange` state machine. An
//! `Input` is what the network thread made of one FIX message (already parsed and checked
//! against the instrument table) or one connection/timer event. Replaying the same `Input`s with
//! the same timestamps rebuilds the same engine, ClOrdID maps, session sequence numbers and
//! outbound message store, byte for byte.
//!
//! Never: carry raw socket bytes, pointers or anything that depends on the process (connection
//! ids are opaque numbers that only route output while the process lives).
//!
//! Encoding: one tag byte, then fixed-width little-endian integers and `u16`-length-prefixed
//! strings (ClOrdIDs at most `STR_LEN_MAX` bytes, decoded inline without allocating). Decoding
//! rejects unknown tags, short input, trailing bytes, non-UTF-8 strings and over-long ClOrdIDs.

use std::fmt;
use types::{OrdType, Side, TimeInForce};

/// A TCP connection, numbered by the network thread from 1 within one process run.
pub type ConnId = u64;

/// Longest ClOrdID, Text or CompID accepted from a client.
pub const STR_LEN_MAX: usize = 64;

/// A ClOrdID (or OrigClOrdID) of at most [`STR_LEN_MAX`] bytes of UTF-8, stored inline: an
/// `Input` that carries one owns no heap memory, so decoding a journal record or a FIX
/// message allocates nothing. Bytes after `len` are always zero, so the derived equality and
/// hash are those of the string.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClOrdId {
    len: u8,
    bytes: [u8; STR_LEN_MAX],
}

const _: () = assert!(STR_LEN_MAX <= u8::MAX as usize);

impl ClOrdId {
    /// The empty ClOrdID (an absent OrigClOrdID).
    pub const EMPTY: ClOrdId = ClOrdId {
        len: 0,
        bytes: [0; STR_LEN_MAX],
    };

    /// `s` if it fits, `None` if it is longer than [`STR_LEN_MAX`] bytes.
    pub fn new(s: &str) -> Option<ClOrdId> {
        (s.len() <= STR_LEN_MAX).then(|| {
            let mut c = ClOrdId::EMPTY;
            c.bytes[..s.len()].copy_from_slice(s.as_bytes());
            c.len = s.len() as u8;
            c
        })
    }

    /// `s`, cut at the last character boundary within [`STR_LEN_MAX`] bytes.
    pub fn truncated(s: &str) -> ClOrdId {
        let mut end = s.len().min(STR_LEN_MAX);
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        ClOrdId::new(&s[..end]).expect("cut to fit")
    }

    /// UTF-8 `b` if it fits. Copies 8 bytes at a time (no `memcpy` call for a short string)
    /// and runs the full UTF-8 check only when a byte is not ASCII (replay decodes one or
    /// two ClOrdIDs per record).
    #[inline]
    pub fn from_bytes(b: &[u8]) -> Option<ClOrdId> {
        let mut c = ClOrdId::EMPTY;
        c.set_from_bytes(b).then_some(c)
    }

    /// Sets `self` to UTF-8 `b` in place, as [`ClOrdId::from_bytes`] would make it, writing
    /// only the words `b` covers and zeroing those the old value used beyond them (replay
    /// decodes into recycled slots; no 64-byte construct-and-move). Returns false, and leaves
    /// `self` empty, if `b` does not fit or is not UTF-8.
    #[inline(always)]
    pub fn set_from_bytes(&mut self, b: &[u8]) -> bool {
        let n = b.len();
        if n > STR_LEN_MAX {
            *self = ClOrdId::EMPTY;
            return false;
        }
        let old_words = (self.len as usize).div_ceil(8);
        let full = n / 8;
        let mut any = 0u64;
        for k in 0..full {
            let w = u64::from_le_bytes(b[8 * k..8 * k + 8].try_into().expect("8 bytes"));
            any |= w;
            self.bytes[8 * k..8 * k + 8].copy_from_slice(&w.to_le_bytes());
        }
        let rem = n % 8;
        let mut words = full;
        if rem != 0 {
            let w = if n >= 8 {
                // The last 8 bytes, shifted down to the `rem` not copied yet.
                u64::from_le_bytes(b[n - 8..].try_into().expect("8 bytes")) >> (8 * (8 - rem))
            } else {
                let mut w = 0u64;
                for (i, &x) in b.iter().enumerate() {
                    w |= (x as u64) << (8 * i);
                }
                w
            };
            any |= w;
            self.bytes[8 * full..8 * full + 8].copy_from_slice(&w.to_le_bytes());
            words += 1;
        }
        for k in words..old_words {
            self.bytes[8 * k..8 * k + 8].copy_from_slice(&[0; 8]);
        }
        self.len = n as u8;
        if any & 0x8080_8080_8080_8080 != 0 && std::str::from_utf8(b).is_err() {
            *self = ClOrdId::EMPTY;
            return false;
        }
        true
    }

    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).expect("a ClOrdId holds UTF-8 by construction")
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Default for ClOrdId {
    fn default() -> ClOrdId {
        ClOrdId::EMPTY
    }
}

/// Truncating (see [`ClOrdId::truncated`]): for tests and tools; the adapter checks lengths.
impl From<&str> for ClOrdId {
    fn from(s: &str) -> ClOrdId {
        ClOrdId::truncated(s)
    }
}

impl fmt::Debug for ClOrdId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for ClOrdId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Most bytes an [`Echo`] holds: five fields (`55`, `54`, `38`, `40`, `44`) of
/// `TAG=value<SOH>` with values of at most 32 bytes (the adapter leaves longer ones out).
pub const ECHO_MAX: usize = 5 * (3 + 32 + 1);

/// The fields an OrderStatusRequest's answer echoes (`55=..<SOH>54=..<SOH>`), as the client
/// sent them, inline like [`ClOrdId`]: the request owns no heap memory, so converting,
/// journaling and answering it allocates nothing. ASCII (the adapter keeps only printable
/// values); bytes after `len` are zero.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Echo {
    len: u8,
    bytes: [u8; ECHO_MAX],
}

const _: () = assert!(ECHO_MAX <= u8::MAX as usize);

impl Echo {
    pub const EMPTY: Echo = Echo {
        len: 0,
        bytes: [0; ECHO_MAX],
    };

    /// Appends `tag_eq` (the tag and its '=', e.g. `b"55="`), `value` and SOH; false (and no
    /// change) if it does not fit or `value` is empty or not printable ASCII.
    pub fn push_field(&mut self, tag_eq: &[u8], value: &[u8]) -> bool {
        if value.is_empty() || !value.iter().all(|b| b.is_ascii_graphic()) {
            return false;
        }
        let at = self.len as usize;
        let end = at + tag_eq.len() + value.len() + 1;
        if end > ECHO_MAX {
            return false;
        }
        let mid = at + tag_eq.len();
        self.bytes[at..mid].copy_from_slice(tag_eq);
        self.bytes[mid..end - 1].copy_from_slice(value);
        self.bytes[end - 1] = 1;
        self.len = end as u8;
        true
    }

    /// `b` if it fits and is ASCII (a journaled echo); `None` otherwise.
    pub fn from_bytes(b: &[u8]) -> Option<Echo> {
        (b.len() <= ECHO_MAX && b.is_ascii()).then(|| {
            let mut e = Echo::EMPTY;
            e.bytes[..b.len()].copy_from_slice(b);
            e.len = b.len() as u8;
            e
        })
    }

    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    pub fn as_str(&self) -> &str {
        std::str::from_utf8(self.as_bytes()).expect("an Echo holds ASCII by construction")
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Default for Echo {
    fn default() -> Echo {
        Echo::EMPTY
    }
}

/// For tests and tools: `s` cut to [`ECHO_MAX`] bytes; panics if it is not ASCII.
impl From<&str> for Echo {
    fn from(s: &str) -> Echo {
        Echo::from_bytes(&s.as_bytes()[..s.len().min(ECHO_MAX)]).expect("an ASCII echo")
    }
}

impl fmt::Debug for Echo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

/// Journal record kind of an `Input` (the journal's own kinds are separate).
pub const KIND_INPUT: u8 = 1;

/// Large by design: ClOrdIDs are inline so that no input owns heap memory on the hot path
/// (decoding or converting one allocates nothing); inputs are moved rarely and by reference.
#[derive(Clone, Debug, PartialEq, Eq)]
#[allow(clippy::large_enum_variant)]
pub enum Input {
    /// A new process run starts: every session is disconnected.
    Startup,
    /// Timer: heartbeats and test requests fall due on the record's timestamp.
    Tick,
    /// Clean stop: Logout to every logged-on session.
    Shutdown,
    /// The TCP connection closed.
    Disconnected { conn: ConnId },
    /// One framed FIX message from a connection.
    Fix {
        conn: ConnId,
        /// MsgSeqNum (34), 0 if missing.
        seq: u64,
        poss_dup: bool,
        msg: FixMsg,
    },
    /// The sessions' outbound sequence numbers as they stood before this record, journaled by
    /// the event loop every `Config::checkpoint_every_records` records. Applying it changes
    /// nothing; a replay checks it (a replay that numbers a session's messages differently has
    /// diverged and stops with an error) and recovery uses the first one of the last segment
    /// to skip storing messages the resend store will have forgotten by the end
    /// (`Exchange::bound_stores`).
    Checkpoint(Checkpoint),
}

/// See [`Input::Checkpoint`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checkpoint {
    /// `resend_store_max` of the exchange that wrote it.
    pub store_max: u64,
    /// Every session that has sent a message (`out_seq` > 1).
    pub sessions: Vec<SessionMark>,
}

/// One session in a [`Checkpoint`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SessionMark {
    /// The session's index in the configuration that wrote it.
    pub session: u32,
    /// `Exchange::comp_ids_hash` of its SenderCompID and TargetCompID (a configuration whose
    /// sessions moved still finds it).
    pub comp_ids: u64,
    /// MsgSeqNum of the session's next outbound message.
    pub out_seq: u64,
    /// MsgSeqNum of the oldest message in its resend store (0: the store is empty).
    pub oldest_stored: u64,
}

impl SessionMark {
    /// Encoded size.
    const LEN: usize = 4 + 8 + 8 + 8;
}

/// What a FIX message asked for, after parsing and static checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FixMsg {
    Logon {
        sender: String,
        target: String,
        begin_string: String,
        heartbeat_secs: u32,
        reset: bool,
        password: String,
    },
    Heartbeat {
        test_req_id: String,
    },
    TestRequest {
        test_req_id: String,
    },
    ResendRequest {
        begin: u64,
        end: u64,
    },
    SequenceReset {
        new_seq: u64,
        gap_fill: bool,
    },
    Logout {
        text: String,
    },
    /// An inbound session-level Reject (35=3): only consumes its sequence number.
    SessionReject,
    New(NewOrderMsg),
    Cancel {
        cl_ord_id: ClOrdId,
        orig_cl_ord_id: ClOrdId,
    },
    Replace {
        cl_ord_id: ClOrdId,
        orig_cl_ord_id: ClOrdId,
        /// Price in ticks of the order's instrument unit (checked on tick by the network side
        /// against tag 55; the exchange checks it is the order's symbol).
        symbol: u32,
        price: i64,
        /// New total order quantity (OrderQty).
        qty: u64,
    },
    MassCancel {
        cl_ord_id: ClOrdId,
        /// MassCancelRequestType (530): 1 symbol, 7 all orders.
        request_type: u8,
        symbol: Option<u32>,
        side: Option<Side>,
    },
    Status {
        cl_ord_id: ClOrdId,
        /// Fields the answer echoes (`55=..<SOH>54=..<SOH>`), as the client sent them.
        echo: Echo,
    },
    /// A message that failed a static check; answered with a reject of `kind`.
    Invalid {
        kind: InvalidKind,
        msg_type: String,
        ref_tag: u32,
        cl_ord_id: ClOrdId,
        orig_cl_ord_id: ClOrdId,
        reason: String,
        /// Fields to echo in the reject (`55=..<SOH>54=..<SOH>38=..`), as the client sent them.
        echo: String,
    },
    /// An application message shed because the exchange was over its queue limit.
    Busy {
        msg_type: String,
        cl_ord_id: ClOrdId,
        orig_cl_ord_id: ClOrdId,
        /// Fields to echo in the reject (`55=..<SOH>54=..<SOH>38=..`), as the client sent them.
        echo: String,
    },
}

impl Input {
    /// A FIX 4.4 Logon on `conn` from `sender` to `RIALTO` (no password, 30 s heartbeats),
    /// as tests, tools and benchmarks journal one.
    pub fn fix44_logon(conn: ConnId, seq: u64, sender: &str, reset: bool) -> Input {
        Input::Fix {
            conn,
            seq,
            poss_dup: false,
            msg: FixMsg::fix44_logon(sender, reset),
        }
    }
}

impl FixMsg {
    /// A FIX 4.4 Logon from `sender` to `RIALTO` (no password, 30 s heartbeats).
    pub fn fix44_logon(sender: &str, reset: bool) -> FixMsg {
        FixMsg::Logon {
            sender: sender.into(),
            target: "RIALTO".into(),
            begin_string: "FIX.4.4".into(),
            heartbeat_secs: 30,
            reset,
            password: String::new(),
        }
    }

    /// The ClOrdID and (for a cancel or replace) the OrigClOrdID of a NewOrderSingle,
    /// OrderCancelRequest or OrderCancelReplaceRequest: the messages whose ClOrdID may be
    /// remembered; `None` for any other message.
    #[inline]
    pub fn order_cl_ord_ids(&self) -> Option<(&ClOrdId, Option<&ClOrdId>)> {
        match self {
            FixMsg::New(n) => Some((&n.cl_ord_id, None)),
            FixMsg::Cancel {
                cl_ord_id,
                orig_cl_ord_id,
            }
            | FixMsg::Replace {
                cl_ord_id,
                orig_cl_ord_id,
                ..
            } => Some((cl_ord_id, Some(orig_cl_ord_id))),
            _ => None,
        }
    }
}

/// How an invalid message is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvalidKind {
    /// Session-level Reject (35=3).
    Session,
    /// BusinessMessageReject (35=j).
    Business,
    /// ExecutionReport with ExecType=8 (a NewOrderSingle).
    Order,
    /// OrderCancelReject (35=9) for a cancel (434=1) or replace (434=2).
    CancelReject { replace: bool },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NewOrderMsg {
    pub cl_ord_id: ClOrdId,
    pub symbol: u32,
    pub side: Side,
    pub ord_type: OrdType,
    pub tif: TimeInForce,
    pub price: i64,
    pub qty: u64,
    /// Tag 1, if given (must be one of the firm's accounts).
    pub account: Option<u32>,
    pub post_only: bool,
}

#[derive(Debug, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad input record: {}", self.0)
    }
}
impl std::error::Error for DecodeError {}

struct Enc<'a>(&'a mut Vec<u8>);
impl Enc<'_> {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn cl(&mut self, c: &ClOrdId) {
        self.0.extend_from_slice(&(c.len() as u16).to_le_bytes());
        self.0.extend_from_slice(c.as_bytes());
    }
    fn str(&mut self, s: &str) {
        let b = &s.as_bytes()[..s.len().min(u16::MAX as usize)];
        self.0.extend_from_slice(&(b.len() as u16).to_le_bytes());
        self.0.extend_from_slice(b);
    }
}

struct Dec<'a>(&'a [u8]);
impl<'a> Dec<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.0.len() < n {
            return Err(DecodeError("short record"));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    /// The next `N` bytes as an array: one length check for a run of fixed-width fields.
    #[inline]
    fn array<const N: usize>(&mut self) -> Result<&'a [u8; N], DecodeError> {
        let (a, rest) = self
            .0
            .split_first_chunk::<N>()
            .ok_or(DecodeError("short record"))?;
        self.0 = rest;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn bool(&mut self) -> Result<bool, DecodeError> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(DecodeError("bad bool")),
        }
    }
    /// A ClOrdID: the same encoding as a string, at most [`STR_LEN_MAX`] bytes, no allocation.
    fn cl(&mut self) -> Result<ClOrdId, DecodeError> {
        let mut c = ClOrdId::EMPTY;
        self.cl_into(&mut c)?;
        Ok(c)
    }
    /// [`Dec::cl`] into an existing ClOrdID (see [`ClOrdId::set_from_bytes`]).
    #[inline(always)]
    fn cl_into(&mut self, c: &mut ClOrdId) -> Result<(), DecodeError> {
        let n = u16::from_le_bytes(*self.array::<2>()?) as usize;
        if n > STR_LEN_MAX {
            return Err(DecodeError("ClOrdID longer than 64 bytes"));
        }
        if c.set_from_bytes(self.take(n)?) {
            Ok(())
        } else {
            Err(DecodeError("string is not UTF-8"))
        }
    }
    /// An [`Echo`], journaled as a string (the same bytes `str` reads), without allocating.
    fn echo(&mut self) -> Result<Echo, DecodeError> {
        let n = u16::from_le_bytes(*self.array::<2>()?) as usize;
        if n > ECHO_MAX {
            return Err(DecodeError("echoed fields longer than 180 bytes"));
        }
        Echo::from_bytes(self.take(n)?).ok_or(DecodeError("echoed fields are not ASCII"))
    }
    fn str(&mut self) -> Result<String, DecodeError> {
        let n = u16::from_le_bytes(self.take(2)?.try_into().expect("2 bytes")) as usize;
        String::from_utf8(self.take(n)?.to_vec()).map_err(|_| DecodeError("string is not UTF-8"))
    }
}

#[inline]
fn u32_at<const N: usize>(a: &[u8; N], at: usize) -> u32 {
    u32::from_le_bytes(a[at..at + 4].try_into().expect("4 bytes"))
}
#[inline]
fn u64_at<const N: usize>(a: &[u8; N], at: usize) -> u64 {
    u64::from_le_bytes(a[at..at + 8].try_into().expect("8 bytes"))
}
#[inline]
fn bool_from(c: u8) -> Result<bool, DecodeError> {
    match c {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(DecodeError("bad bool")),
    }
}

fn side_code(s: Side) -> u8 {
    match s {
        Side::Buy => 1,
        Side::Sell => 2,
    }
}
fn side_from(c: u8) -> Result<Side, DecodeError> {
    match c {
        1 => Ok(Side::Buy),
        2 => Ok(Side::Sell),
        _ => Err(DecodeError("bad side")),
    }
}
fn opt_side_code(s: Option<Side>) -> u8 {
    s.map(side_code).unwrap_or(0)
}
fn opt_side_from(c: u8) -> Result<Option<Side>, DecodeError> {
    if c == 0 {
        Ok(None)
    } else {
        side_from(c).map(Some)
    }
}

impl Input {
    /// Appends the binary encoding of `self` to `out`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut e = Enc(out);
        match self {
            Input::Startup => e.u8(1),
            Input::Tick => e.u8(2),
            Input::Shutdown => e.u8(3),
            Input::Disconnected { conn } => {
                e.u8(4);
                e.u64(*conn);
            }
            Input::Fix {
                conn,
                seq,
                poss_dup,
                msg,
            } => {
                e.u8(5);
                e.u64(*conn);
                e.u64(*seq);
                e.u8(*poss_dup as u8);
                encode_msg(&mut e, msg);
            }
            Input::Checkpoint(c) => {
                e.u8(6);
                e.u64(c.store_max);
                e.u32(c.sessions.len() as u32);
                for m in &c.sessions {
                    e.u32(m.session);
                    e.u64(m.comp_ids);
                    e.u64(m.out_seq);
                    e.u64(m.oldest_stored);
                }
            }
        }
    }

    pub fn decode(b: &[u8]) -> Result<Input, DecodeError> {
        let mut input = Input::Tick;
        input.decode_into(b)?;
        Ok(input)
    }

    /// Decodes `b` into `self`, reusing its storage: replay decodes every record into a
    /// recycled batch slot, and a NewOrderSingle, cancel or replace decoded into a slot that
    /// already holds that kind of message only has its fields overwritten (no construction
    /// and move of a 200+ byte value). The result equals `Input::decode(b)`. On error `self`
    /// holds some valid but unspecified input.
    pub fn decode_into(&mut self, b: &[u8]) -> Result<(), DecodeError> {
        let mut d = Dec(b);
        match d.u8()? {
            1 => *self = Input::Startup,
            2 => *self = Input::Tick,
            3 => *self = Input::Shutdown,
            4 => *self = Input::Disconnected { conn: d.u64()? },
            5 => {
                // conn u64 | seq u64 | poss_dup u8 | message tag u8
                let h = d.array::<18>()?;
                let conn = u64_at(h, 0);
                let seq = u64_at(h, 8);
                let poss_dup = bool_from(h[16])?;
                match self {
                    Input::Fix {
                        conn: c,
                        seq: s,
                        poss_dup: p,
                        msg,
                    } => {
                        *c = conn;
                        *s = seq;
                        *p = poss_dup;
                        decode_msg_into(h[17], &mut d, msg)?;
                    }
                    other => {
                        let mut msg = FixMsg::SessionReject;
                        decode_msg_into(h[17], &mut d, &mut msg)?;
                        *other = Input::Fix {
                            conn,
                            seq,
                            poss_dup,
                            msg,
                        };
                    }
                }
            }
            6 => {
                let store_max = d.u64()?;
                let n = d.u32()? as usize;
                if n > d.0.len() / SessionMark::LEN {
                    return Err(DecodeError("checkpoint longer than its record"));
                }
                let mut sessions = Vec::with_capacity(n);
                for _ in 0..n {
                    sessions.push(SessionMark {
                        session: d.u32()?,
                        comp_ids: d.u64()?,
                        out_seq: d.u64()?,
                        oldest_stored: d.u64()?,
                    });
                }
                *self = Input::Checkpoint(Checkpoint {
                    store_max,
                    sessions,
                });
            }
            _ => return Err(DecodeError("unknown input tag")),
        }
        if !d.0.is_empty() {
            return Err(DecodeError("trailing bytes"));
        }
        Ok(())
    }

    /// True for messages that count against the application share of the inbound queue.
    pub fn is_application(&self) -> bool {
        matches!(
            self,
            Input::Fix {
                msg: FixMsg::New(_)
                    | FixMsg::Cancel { .. }
                    | FixMsg::Replace { .. }
                    | FixMsg::MassCancel { .. }
                    | FixMsg::Status { .. },
                ..
            }
        )
    }
}

fn encode_msg(e: &mut Enc, m: &FixMsg) {
    match m {
        FixMsg::Logon {
            sender,
            target,
            begin_string,
            heartbeat_secs,
            reset,
            password,
        } => {
            e.u8(1);
            e.str(sender);
            e.str(target);
            e.str(begin_string);
            e.u32(*heartbeat_secs);
            e.u8(*reset as u8);
            e.str(password);
        }
        FixMsg::Heartbeat { test_req_id } => {
            e.u8(2);
            e.str(test_req_id);
        }
        FixMsg::TestRequest { test_req_id } => {
            e.u8(3);
            e.str(test_req_id);
        }
        FixMsg::ResendRequest { begin, end } => {
            e.u8(4);
            e.u64(*begin);
            e.u64(*end);
        }
        FixMsg::SequenceReset { new_seq, gap_fill } => {
            e.u8(5);
            e.u64(*new_seq);
            e.u8(*gap_fill as u8);
        }
        FixMsg::Logout { text } => {
            e.u8(6);
            e.str(text);
        }
        FixMsg::SessionReject => e.u8(7),
        FixMsg::New(n) => {
            e.u8(8);
            e.cl(&n.cl_ord_id);
            e.u32(n.symbol);
            e.u8(side_code(n.side));
            e.u8(match n.ord_type {
                OrdType::Limit => 1,
                OrdType::Market => 2,
            });
            e.u8(match n.tif {
                TimeInForce::Day => 0,
                TimeInForce::Gtc => 1,
                TimeInForce::Ioc => 3,
                TimeInForce::Fok => 4,
            });
            e.i64(n.price);
            e.u64(n.qty);
            e.u8(n.account.is_some() as u8);
            e.u32(n.account.unwrap_or(0));
            e.u8(n.post_only as u8);
        }
        FixMsg::Cancel {
            cl_ord_id,
            orig_cl_ord_id,
        } => {
            e.u8(9);
            e.cl(cl_ord_id);
            e.cl(orig_cl_ord_id);
        }
        FixMsg::Replace {
            cl_ord_id,
            orig_cl_ord_id,
            symbol,
            price,
            qty,
        } => {
            e.u8(10);
            e.cl(cl_ord_id);
            e.cl(orig_cl_ord_id);
            e.u32(*symbol);
            e.i64(*price);
            e.u64(*qty);
        }
        FixMsg::MassCancel {
            cl_ord_id,
            request_type,
            symbol,
            side,
        } => {
            e.u8(11);
            e.cl(cl_ord_id);
            e.u8(*request_type);
            e.u8(symbol.is_some() as u8);
            e.u32(symbol.unwrap_or(0));
            e.u8(opt_side_code(*side));
        }
        FixMsg::Status { cl_ord_id, echo } => {
            e.u8(12);
            e.cl(cl_ord_id);
            e.str(echo.as_str());
        }
        FixMsg::Invalid {
            kind,
            msg_type,
            ref_tag,
            cl_ord_id,
            orig_cl_ord_id,
            reason,
            echo,
        } => {
            e.u8(13);
            e.u8(match kind {
                InvalidKind::Session => 1,
                InvalidKind::Business => 2,
                InvalidKind::Order => 3,
                InvalidKind::CancelReject { replace: false } => 4,
                InvalidKind::CancelReject { replace: true } => 5,
            });
            e.str(msg_type);
            e.u32(*ref_tag);
            e.cl(cl_ord_id);
            e.cl(orig_cl_ord_id);
            e.str(reason);
            e.str(echo);
        }
        FixMsg::Busy {
            msg_type,
            cl_ord_id,
            orig_cl_ord_id,
            echo,
        } => {
            e.u8(14);
            e.str(msg_type);
            e.cl(cl_ord_id);
            e.cl(orig_cl_ord_id);
            e.str(echo);
        }
    }
}

/// A blank NewOrderSingle, the starting point of one decoded in place.
const NEW_BLANK: NewOrderMsg = NewOrderMsg {
    cl_ord_id: ClOrdId::EMPTY,
    symbol: 0,
    side: Side::Buy,
    ord_type: OrdType::Limit,
    tif: TimeInForce::Day,
    price: 0,
    qty: 0,
    account: None,
    post_only: false,
};

/// Decodes the message with tag `tag` into `msg`: the order-entry messages replay is made of
/// (NewOrderSingle, cancel, replace) field by field into the message `msg` already is if it is
/// of that kind, the rest by [`decode_msg`].
#[inline(always)]
fn decode_msg_into(tag: u8, d: &mut Dec, msg: &mut FixMsg) -> Result<(), DecodeError> {
    match tag {
        8 => {
            if !matches!(msg, FixMsg::New(_)) {
                *msg = FixMsg::New(NEW_BLANK);
            }
            let FixMsg::New(n) = msg else {
                unreachable!("set to a NewOrderSingle above")
            };
            d.cl_into(&mut n.cl_ord_id)?;
            // symbol u32 | side u8 | ord type u8 | tif u8 | price i64 | qty u64 |
            // has account u8 | account u32 | post only u8
            let f = d.array::<29>()?;
            n.symbol = u32_at(f, 0);
            n.side = side_from(f[4])?;
            n.ord_type = ord_type_from(f[5])?;
            n.tif = tif_from(f[6])?;
            n.price = u64_at(f, 7) as i64;
            n.qty = u64_at(f, 15);
            n.account = bool_from(f[23])?.then_some(u32_at(f, 24));
            n.post_only = bool_from(f[28])?;
        }
        9 => {
            if !matches!(msg, FixMsg::Cancel { .. }) {
                *msg = FixMsg::Cancel {
                    cl_ord_id: ClOrdId::EMPTY,
                    orig_cl_ord_id: ClOrdId::EMPTY,
                };
            }
            let FixMsg::Cancel {
                cl_ord_id,
                orig_cl_ord_id,
            } = msg
            else {
                unreachable!("set to a cancel above")
            };
            d.cl_into(cl_ord_id)?;
            d.cl_into(orig_cl_ord_id)?;
        }
        10 => {
            if !matches!(msg, FixMsg::Replace { .. }) {
                *msg = FixMsg::Replace {
                    cl_ord_id: ClOrdId::EMPTY,
                    orig_cl_ord_id: ClOrdId::EMPTY,
                    symbol: 0,
                    price: 0,
                    qty: 0,
                };
            }
            let FixMsg::Replace {
                cl_ord_id,
                orig_cl_ord_id,
                symbol,
                price,
                qty,
            } = msg
            else {
                unreachable!("set to a replace above")
            };
            d.cl_into(cl_ord_id)?;
            d.cl_into(orig_cl_ord_id)?;
            // symbol u32 | price i64 | qty u64
            let f = d.array::<20>()?;
            *symbol = u32_at(f, 0);
            *price = u64_at(f, 4) as i64;
            *qty = u64_at(f, 12);
        }
        _ => *msg = decode_msg(tag, d)?,
    }
    Ok(())
}

fn ord_type_from(c: u8) -> Result<OrdType, DecodeError> {
    match c {
        1 => Ok(OrdType::Limit),
        2 => Ok(OrdType::Market),
        _ => Err(DecodeError("bad ord type")),
    }
}

fn tif_from(c: u8) -> Result<TimeInForce, DecodeError> {
    match c {
        0 => Ok(TimeInForce::Day),
        1 => Ok(TimeInForce::Gtc),
        3 => Ok(TimeInForce::Ioc),
        4 => Ok(TimeInForce::Fok),
        _ => Err(DecodeError("bad tif")),
    }
}

/// Decodes the message with tag `tag` (the rest of the record after the tag) as a new value.
fn decode_msg(tag: u8, d: &mut Dec) -> Result<FixMsg, DecodeError> {
    Ok(match tag {
        1 => FixMsg::Logon {
            sender: d.str()?,
            target: d.str()?,
            begin_string: d.str()?,
            heartbeat_secs: d.u32()?,
            reset: d.bool()?,
            password: d.str()?,
        },
        2 => FixMsg::Heartbeat {
            test_req_id: d.str()?,
        },
        3 => FixMsg::TestRequest {
            test_req_id: d.str()?,
        },
        4 => FixMsg::ResendRequest {
            begin: d.u64()?,
            end: d.u64()?,
        },
        5 => FixMsg::SequenceReset {
            new_seq: d.u64()?,
            gap_fill: d.bool()?,
        },
        6 => FixMsg::Logout { text: d.str()? },
        7 => FixMsg::SessionReject,
        8..=10 => {
            let mut msg = FixMsg::SessionReject;
            decode_msg_into(tag, d, &mut msg)?;
            msg
        }
        11 => {
            let cl_ord_id = d.cl()?;
            let request_type = d.u8()?;
            let has_symbol = d.bool()?;
            let symbol = d.u32()?;
            let side = opt_side_from(d.u8()?)?;
            FixMsg::MassCancel {
                cl_ord_id,
                request_type,
                symbol: has_symbol.then_some(symbol),
                side,
            }
        }
        12 => FixMsg::Status {
            cl_ord_id: d.cl()?,
            echo: d.echo()?,
        },
        13 => {
            let kind = match d.u8()? {
                1 => InvalidKind::Session,
                2 => InvalidKind::Business,
                3 => InvalidKind::Order,
                4 => InvalidKind::CancelReject { replace: false },
                5 => InvalidKind::CancelReject { replace: true },
                _ => return Err(DecodeError("bad invalid kind")),
            };
            FixMsg::Invalid {
                kind,
                msg_type: d.str()?,
                ref_tag: d.u32()?,
                cl_ord_id: d.cl()?,
                orig_cl_ord_id: d.cl()?,
                reason: d.str()?,
                echo: d.str()?,
            }
        }
        14 => FixMsg::Busy {
            msg_type: d.str()?,
            cl_ord_id: d.cl()?,
            orig_cl_ord_id: d.cl()?,
            echo: d.str()?,
        },
        _ => return Err(DecodeError("unknown message tag")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_builds_fields_inline_and_refuses_what_does_not_fit() {
        let mut e = Echo::EMPTY;
        assert!(e.is_empty());
        assert!(e.push_field(b"55=", b"ACME"));
        assert!(e.push_field(b"54=", b"1"));
        assert_eq!(e.as_str(), "55=ACME\x0154=1\x01");
        // Empty, unprintable or non-ASCII values are left out, and change nothing.
        assert!(!e.push_field(b"38=", b""));
        assert!(!e.push_field(b"38=", b"1 0"));
        assert!(!e.push_field(b"38=", b"1\x010"));
        assert!(!e.push_field(b"38=", "é".as_bytes()));
        assert_eq!(e.as_str(), "55=ACME\x0154=1\x01");
        // The five widest fields fit exactly; a sixth byte does not.
        let mut full = Echo::EMPTY;
        for tag in [b"55=", b"54=", b"38=", b"40=", b"44="] {
            assert!(full.push_field(tag, &[b'9'; 32]));
        }
        assert_eq!(full.as_bytes().len(), ECHO_MAX);
        assert!(!full.push_field(b"1=", b"x"));
        assert_eq!(full.as_bytes().len(), ECHO_MAX);
        assert_eq!(Echo::from_bytes(full.as_bytes()), Some(full));
        assert_eq!(Echo::from_bytes(&[b'x'; ECHO_MAX + 1]), None);
        assert_eq!(Echo::from_bytes("é".as_bytes()), None);
        assert_eq!(Echo::from("55=X\x01").as_str(), "55=X\x01");
        assert_eq!(format!("{:?}", Echo::from("54=2\x01")), "\"54=2\\u{1}\"");
    }

    #[test]
    fn every_variant_roundtrips_and_garbage_is_refused() {
        let msgs = vec![
            FixMsg::Logon {
                sender: "C".into(),
                target: "R".into(),
                begin_string: "FIX.4.4".into(),
                heartbeat_secs: 30,
                reset: true,
                password: "p".into(),
            },
            FixMsg::Heartbeat {
                test_req_id: "x".into(),
            },
            FixMsg::TestRequest {
                test_req_id: "y".into(),
            },
            FixMsg::ResendRequest { begin: 3, end: 0 },
            FixMsg::SequenceReset {
                new_seq: 9,
                gap_fill: true,
            },
            FixMsg::Logout { text: "bye".into() },
            FixMsg::SessionReject,
            FixMsg::New(NewOrderMsg {
                cl_ord_id: "a".into(),
                symbol: 2,
                side: Side::Sell,
                ord_type: OrdType::Market,
                tif: TimeInForce::Ioc,
                price: -5,
                qty: 7,
                account: Some(3),
                post_only: true,
            }),
            FixMsg::Cancel {
                cl_ord_id: "b".into(),
                orig_cl_ord_id: "a".into(),
            },
            FixMsg::Replace {
                cl_ord_id: "c".into(),
                orig_cl_ord_id: "b".into(),
                symbol: 1,
                price: 100,
                qty: 5,
            },
            FixMsg::MassCancel {
                cl_ord_id: "m".into(),
                request_type: 1,
                symbol: Some(0),
                side: Some(Side::Buy),
            },
            FixMsg::Status {
                cl_ord_id: "a".into(),
                echo: "55=X\x01".into(),
            },
            FixMsg::Invalid {
                kind: InvalidKind::CancelReject { replace: true },
                msg_type: "G".into(),
                ref_tag: 44,
                cl_ord_id: "c".into(),
                orig_cl_ord_id: "d".into(),
                reason: "off tick".into(),
                echo: String::new(),
            },
            FixMsg::Busy {
                msg_type: "D".into(),
                cl_ord_id: "z".into(),
                orig_cl_ord_id: ClOrdId::EMPTY,
                echo: "54=1\x01".into(),
            },
        ];
        let mut inputs = vec![
            Input::Startup,
            Input::Tick,
            Input::Shutdown,
            Input::Disconnected { conn: 4 },
            Input::Checkpoint(Checkpoint::default()),
            Input::Checkpoint(Checkpoint {
                store_max: 5000,
                sessions: vec![
                    SessionMark {
                        session: 0,
                        comp_ids: 0xDEAD_BEEF_0123_4567,
                        out_seq: 12_345,
                        oldest_stored: 7_346,
                    },
                    SessionMark {
                        session: 8,
                        comp_ids: 1,
                        out_seq: 2,
                        oldest_stored: 0,
                    },
                ],
            }),
        ];
        for (i, m) in msgs.into_iter().enumerate() {
            inputs.push(Input::Fix {
                conn: 1,
                seq: i as u64,
                poss_dup: i % 2 == 0,
                msg: m,
            });
        }
        // Inputs with ClOrdIDs of other lengths, so that decoding in place overwrites longer
        // and shorter ones.
        for (k, len) in [64usize, 17, 9, 8, 1, 0].into_iter().enumerate() {
            let a = ClOrdId::from("x".repeat(len).as_str());
            let b = ClOrdId::from("é".repeat(len / 2).as_str());
            inputs.push(Input::Fix {
                conn: 2,
                seq: k as u64,
                poss_dup: false,
                msg: if k % 2 == 0 {
                    FixMsg::Replace {
                        cl_ord_id: a,
                        orig_cl_ord_id: b,
                        symbol: 1,
                        price: 1,
                        qty: 1,
                    }
                } else {
                    FixMsg::Cancel {
                        cl_ord_id: b,
                        orig_cl_ord_id: a,
                    }
                },
            });
            inputs.push(Input::Fix {
                conn: 3,
                seq: k as u64,
                poss_dup: true,
                msg: FixMsg::New(NewOrderMsg {
                    cl_ord_id: a,
                    account: None,
                    ..NEW_BLANK
                }),
            });
        }
        // Decoding into a slot that held any other input gives the same as a fresh decode.
        let encoded: Vec<Vec<u8>> = inputs
            .iter()
            .map(|i| {
                let mut b = Vec::new();
                i.encode(&mut b);
                b
            })
            .collect();
        for prev in &encoded {
            for (next, want) in encoded.iter().zip(&inputs) {
                let mut slot = Input::decode(prev).unwrap();
                slot.decode_into(next).unwrap();
                assert_eq!(&slot, want);
                if let Input::Fix {
                    msg: FixMsg::Cancel { cl_ord_id, .. },
                    ..
                } = &slot
                {
                    assert_eq!(*cl_ord_id, ClOrdId::new(cl_ord_id.as_str()).unwrap());
                }
            }
        }
        for i in inputs {
            let mut b = Vec::new();
            i.encode(&mut b);
            assert_eq!(Input::decode(&b).unwrap(), i);
            if b.len() > 1 {
                assert!(Input::decode(&b[..b.len() - 1]).is_err());
            }
            b.push(0);
            assert!(Input::decode(&b).is_err());
        }
        // A ClOrdID longer than 64 bytes is refused (the adapter never produces one).
        let mut b = vec![5];
        b.extend_from_slice(&[0; 17]);
        b.push(9);
        b.extend_from_slice(&65u16.to_le_bytes());
        b.extend_from_slice(&[b'x'; 65]);
        b.extend_from_slice(&0u16.to_le_bytes());
        assert_eq!(
            Input::decode(&b),
            Err(DecodeError("ClOrdID longer than 64 bytes"))
        );
        assert!(ClOrdId::new(&"y".repeat(65)).is_none());
        // An OrderStatusRequest's echo: at most ECHO_MAX bytes of ASCII, else refused.
        let status = |echo: &[u8]| {
            let mut b = vec![5];
            b.extend_from_slice(&[0; 17]);
            b.push(12);
            b.extend_from_slice(&1u16.to_le_bytes());
            b.push(b'c');
            b.extend_from_slice(&(echo.len() as u16).to_le_bytes());
            b.extend_from_slice(echo);
            Input::decode(&b)
        };
        let longest = [b'7'; ECHO_MAX];
        assert!(matches!(
            status(&longest),
            Ok(Input::Fix { msg: FixMsg::Status { echo, .. }, .. }) if echo.as_bytes() == longest
        ));
        assert_eq!(
            status(&[b'7'; ECHO_MAX + 1]),
            Err(DecodeError("echoed fields longer than 180 bytes"))
        );
        assert_eq!(
            status("55=Ä\x01".as_bytes()),
            Err(DecodeError("echoed fields are not ASCII"))
        );
        // from_bytes: every length up to 64 (ASCII and not), bad UTF-8 and overlong input.
        let text = "héllo wörld, ClOrdID-0123456789-abcdefghijklmnopqrstuvwxyzABCDEF";
        for end in (0..=text.len()).filter(|&e| text.is_char_boundary(e)) {
            let s = &text[..end];
            let c = ClOrdId::from_bytes(s.as_bytes());
            assert_eq!(c, ClOrdId::new(s), "{s:?}");
            if let Some(c) = c {
                assert_eq!(c.as_str(), s);
            }
        }
        assert_eq!(ClOrdId::from_bytes(&[b'a', 0xC3]), None);
        assert_eq!(ClOrdId::from_bytes(&[0xFF; 9]), None);
        assert_eq!(ClOrdId::from_bytes(&[b'z'; 65]), None);
        assert_eq!(ClOrdId::truncated(&"é".repeat(40)).len(), 64);
        assert!(Input::decode(&[]).is_err());
        assert!(Input::decode(&[99]).is_err());
    }
}
