//! The journaled form of one FIX message: what the adapter read of it (`FixInput`), and its
//! binary encoding inside a journal record.
//!
//! Role: the complete, self-contained input of the FIX edge for one inbound message: the
//! connection it came on, what its header said (`fix::InHeader`), and the message, typed
//! (`fix::Inbound<AppMsg>`: the admin messages the session handles, or an application
//! message). Replaying the same records with the same timestamps rebuilds every session's
//! numbers, queue and resend store, and the exchange, byte for byte.
//!
//! Never: carries raw socket bytes, pointers or anything that depends on the process
//! (connection ids are opaque numbers that only route output while the process lives).
//!
//! A Logon is journaled with the verdict on its credentials (`fix::Credentials`), never its
//! Username or Password: replay reads the verdict and hashes nothing (`FixEdge` accepts a
//! Logon journaled `Unchecked` on replay even if its session has a password now).
//!
//! Encoding: `conn u64 | header | message tag u8 | fields` (`exchange::codec`). Decoding
//! rejects unknown tags, short input, trailing bytes, non-UTF-8 ClOrdIDs and over-long ones;
//! the order-entry messages replay is made of decode in place into a recycled slot.

use exchange::codec::{opt_side_code, opt_side_from, Dec, DecodeError, Enc};
use exchange::{ClOrdId, NewOrder, Reject, Replace};
use fix::app::Echo;
use fix::{
    Credentials, HeaderProblem, InHeader, Inbound, Logon, Malformed, Route, SessionRejectReason,
    Text,
};
use types::Side;

/// A TCP connection, numbered by the server from 1 within one process run.
pub type ConnId = u64;

/// One inbound FIX message as the edge applies it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FixInput {
    pub conn: ConnId,
    pub header: InHeader,
    pub msg: Inbound<AppMsg>,
}

/// An application message, as the adapter read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppMsg {
    New(NewOrder),
    Cancel {
        cl_ord_id: ClOrdId,
        orig_cl_ord_id: ClOrdId,
    },
    Replace(Replace),
    MassCancel {
        cl_ord_id: ClOrdId,
        /// MassCancelRequestType (530) as sent (0 to 9).
        request_type: u8,
        symbol: Option<u32>,
        side: Option<Side>,
    },
    Status {
        cl_ord_id: ClOrdId,
        /// The fields the answer echoes, as the client sent them.
        echo: Echo,
    },
    /// TradingSessionStatusRequest (g) for the day session: `subscription` 0 the status, 1
    /// the status and every change, 2 no more changes (SubscriptionRequestType 263).
    TradingStatus {
        req_id: Text,
        subscription: u8,
    },
    /// Refused by the adapter: answered with a reject of its kind.
    Invalid(Box<Invalid>),
    /// Shed because the exchange was over its inbound limit: answered "exchange busy".
    Busy(Box<Busy>),
}

/// How a refused application message is answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InvalidKind {
    /// BusinessMessageReject (35=j); `unsupported`: 380=3 (an unsupported MsgType), else 0.
    Business { unsupported: bool },
    /// ExecutionReport with ExecType=8 (a NewOrderSingle).
    Order,
    /// OrderCancelReject (35=9) for a cancel (434=1) or replace (434=2).
    CancelReject { replace: bool },
}

/// An application message the adapter refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    pub kind: InvalidKind,
    pub msg_type: Text,
    /// The exchange's name for the reason (its FIX codes follow from it).
    pub reject: Reject,
    pub reason: String,
    pub cl_ord_id: ClOrdId,
    pub orig_cl_ord_id: ClOrdId,
    /// The order fields the reject echoes.
    pub echo: Echo,
}

/// An application message shed over the inbound limit, or over its session's throttle.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Busy {
    /// `D`, `F`, `G`, `q` or `H`.
    pub msg_type: u8,
    pub cl_ord_id: ClOrdId,
    pub orig_cl_ord_id: ClOrdId,
    pub echo: Echo,
    pub why: BusyWhy,
}

/// Why an application message was not applied (its answer's text says which).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BusyWhy {
    /// Its session (or firm) had too many messages waiting: "exchange busy".
    #[default]
    Overload,
    /// Over its session's limit of new orders and replaces a second (the limit).
    Orders(u32),
    /// Over its session's limit of cancels and mass cancels a second.
    Cancels(u32),
    /// Over its session's limit of messages a second.
    Messages(u32),
}

impl BusyWhy {
    /// The answer's Text.
    pub fn text(self) -> String {
        match self {
            BusyWhy::Overload => "exchange busy".to_string(),
            BusyWhy::Orders(n) => {
                format!("throttled: over {n} new orders and replaces a second (session limit)")
            }
            BusyWhy::Cancels(n) => format!("throttled: over {n} cancels a second (session limit)"),
            BusyWhy::Messages(n) => {
                format!("throttled: over {n} messages a second (session limit)")
            }
        }
    }
}

impl fix::InboundApp for AppMsg {
    fn msg_type(&self) -> &[u8] {
        match self {
            AppMsg::New(_) => b"D",
            AppMsg::Cancel { .. } => b"F",
            AppMsg::Replace(_) => b"G",
            AppMsg::MassCancel { .. } => b"q",
            AppMsg::Status { .. } => b"H",
            AppMsg::TradingStatus { .. } => b"g",
            AppMsg::Invalid(i) => i.msg_type.as_bytes(),
            AppMsg::Busy(b) => std::slice::from_ref(&b.msg_type),
        }
    }
}

impl AppMsg {
    /// The ClOrdID and (for a cancel or replace) the OrigClOrdID of a NewOrderSingle,
    /// OrderCancelRequest or OrderCancelReplaceRequest: the messages whose ClOrdID may be
    /// remembered; `None` for any other message.
    #[inline]
    pub fn order_cl_ord_ids(&self) -> Option<(&ClOrdId, Option<&ClOrdId>)> {
        match self {
            AppMsg::New(n) => Some((&n.cl_ord_id, None)),
            AppMsg::Cancel {
                cl_ord_id,
                orig_cl_ord_id,
            } => Some((cl_ord_id, Some(orig_cl_ord_id))),
            AppMsg::Replace(r) => Some((&r.cl_ord_id, Some(&r.orig_cl_ord_id))),
            _ => None,
        }
    }
}

impl FixInput {
    /// A FIX 4.4 Logon on `conn` from `sender` to `RIALTO` (no password, 30 s heartbeats),
    /// as tests, tools and benchmarks journal one.
    pub fn fix44_logon(conn: ConnId, seq: u64, sender: &str, reset: bool) -> FixInput {
        FixInput {
            conn,
            header: InHeader {
                msg_seq_num: seq,
                sending_time_ns: 1,
                ..InHeader::default()
            },
            msg: Inbound::Logon(Box::new(Logon {
                begin_string: Text::from("FIX.4.4"),
                sender_comp_id: Text::from(sender),
                target_comp_id: Text::from("RIALTO"),
                heart_bt_int: Some(30),
                reset,
                username: None,
                password: None,
                credentials: fix::Credentials::Unchecked,
                has_default_appl_ver_id: false,
            })),
        }
    }

    /// True for messages that count against the application share of the inbound queue.
    #[inline]
    pub fn is_application(&self) -> bool {
        matches!(
            self.msg,
            Inbound::App(
                AppMsg::New(_)
                    | AppMsg::Cancel { .. }
                    | AppMsg::Replace(_)
                    | AppMsg::MassCancel { .. }
                    | AppMsg::Status { .. }
            )
        )
    }

    pub fn encode(&self, e: &mut Enc<'_>) {
        e.u64(self.conn);
        let h = &self.header;
        e.u64(h.msg_seq_num);
        // PossDupFlag in bit 0, PossResend in bit 1, routing fields after the header problem in
        // bit 2 (records written before the last two were kept read as 0 or 1).
        e.u8(h.poss_dup as u8 | (h.poss_resend as u8) << 1 | (h.route.is_some() as u8) << 2);
        e.u64(h.sending_time_ns);
        e.u64(h.orig_sending_time_ns);
        match h.problem {
            HeaderProblem::None => e.u8(0),
            HeaderProblem::BeginString => e.u8(1),
            HeaderProblem::CompId { tag } => {
                e.u8(2);
                e.u32(tag);
            }
            HeaderProblem::BadTime { tag } => {
                e.u8(3);
                e.u32(tag);
            }
            HeaderProblem::Missing { tag } => {
                e.u8(4);
                e.u32(tag);
            }
        }
        if let Some(r) = &h.route {
            for t in r.on_behalf_of.iter().chain(&r.deliver_to) {
                text(e, t);
            }
        }
        encode_msg(e, &self.msg);
    }

    /// Decodes into `self`, reusing its storage: a NewOrderSingle, cancel or replace decoded
    /// into a slot that already holds that kind of message only has its fields overwritten
    /// (no construction and move of a 200-byte value). The result equals a fresh decode. On
    /// error `self` holds some valid but unspecified input.
    pub fn decode_into(&mut self, d: &mut Dec<'_>) -> Result<(), DecodeError> {
        // conn u64 | seq u64 | poss_dup + poss_resend u8 | sending u64 | orig u64 | problem u8
        let f = d.array::<34>()?;
        self.conn = exchange::codec::u64_at(f, 0);
        self.header.msg_seq_num = exchange::codec::u64_at(f, 8);
        if f[16] > 7 {
            return Err(DecodeError("bad header flags"));
        }
        self.header.poss_dup = f[16] & 1 != 0;
        self.header.poss_resend = f[16] & 2 != 0;
        let routed = f[16] & 4 != 0;
        self.header.sending_time_ns = exchange::codec::u64_at(f, 17);
        self.header.orig_sending_time_ns = exchange::codec::u64_at(f, 25);
        self.header.problem = match f[33] {
            0 => HeaderProblem::None,
            1 => HeaderProblem::BeginString,
            2 => HeaderProblem::CompId { tag: d.u32()? },
            3 => HeaderProblem::BadTime { tag: d.u32()? },
            4 => HeaderProblem::Missing { tag: d.u32()? },
            _ => return Err(DecodeError("bad header problem")),
        };
        self.header.route = if routed {
            let mut r = Box::<Route>::default();
            for t in r.on_behalf_of.iter_mut().chain(&mut r.deliver_to) {
                *t = read_text(d)?;
            }
            Some(r)
        } else {
            None
        };
        decode_msg_into(d, &mut self.msg)
    }

    pub fn decode(d: &mut Dec<'_>) -> Result<FixInput, DecodeError> {
        let mut f = FixInput {
            conn: 0,
            header: InHeader::default(),
            msg: Inbound::Reject { ref_seq_num: 0 },
        };
        f.decode_into(d)?;
        Ok(f)
    }
}

fn text(e: &mut Enc<'_>, t: &Text) {
    e.bytes(t.as_bytes());
}

fn read_text(d: &mut Dec<'_>) -> Result<Text, DecodeError> {
    Text::exact(d.bytes()?).ok_or(DecodeError("text longer than 64 bytes"))
}

fn read_echo(d: &mut Dec<'_>) -> Result<Echo, DecodeError> {
    let b = d.bytes()?;
    const _: () = assert!(fix::app::ECHO_MAX == 216, "the error text says 216");
    if b.len() > fix::app::ECHO_MAX {
        return Err(DecodeError("echoed fields longer than 216 bytes"));
    }
    Echo::from_bytes(b).ok_or(DecodeError("echoed fields are not ASCII"))
}

fn encode_msg(e: &mut Enc<'_>, m: &Inbound<AppMsg>) {
    match m {
        Inbound::Logon(l) => {
            e.u8(1);
            text(e, &l.begin_string);
            text(e, &l.sender_comp_id);
            text(e, &l.target_comp_id);
            e.opt_u64(l.heart_bt_int);
            e.bool(l.reset);
            // The verdict on the credentials, never the Username or Password.
            e.u8(l.credentials.code());
            e.bool(l.has_default_appl_ver_id);
        }
        Inbound::Heartbeat { test_req_id } => {
            e.u8(2);
            text(e, test_req_id);
        }
        Inbound::TestRequest { test_req_id } => {
            e.u8(3);
            e.bool(test_req_id.is_some());
            text(e, &test_req_id.unwrap_or_default());
        }
        Inbound::ResendRequest { begin, end } => {
            e.u8(4);
            e.opt_u64(*begin);
            e.opt_u64(*end);
        }
        Inbound::SequenceReset { new_seq, gap_fill } => {
            e.u8(5);
            e.opt_u64(*new_seq);
            e.bool(*gap_fill);
        }
        Inbound::Logout { text: t } => {
            e.u8(6);
            text(e, t);
        }
        Inbound::Reject { ref_seq_num } => {
            e.u8(7);
            e.u64(*ref_seq_num);
        }
        Inbound::App(AppMsg::New(n)) => {
            e.u8(8);
            n.encode(e);
        }
        Inbound::App(AppMsg::Cancel {
            cl_ord_id,
            orig_cl_ord_id,
        }) => {
            e.u8(9);
            e.cl(cl_ord_id);
            e.cl(orig_cl_ord_id);
        }
        // A replace naming a stop price has its own kind (18), so that records of kind 10,
        // written before stop orders existed, still read as they were.
        Inbound::App(AppMsg::Replace(r)) => {
            e.u8(if r.stop_price == 0 { 10 } else { 18 });
            r.encode(e);
            if r.stop_price != 0 {
                r.encode_stop(e);
            }
        }
        Inbound::App(AppMsg::MassCancel {
            cl_ord_id,
            request_type,
            symbol,
            side,
        }) => {
            e.u8(11);
            e.cl(cl_ord_id);
            e.u8(*request_type);
            e.opt_u32(*symbol);
            e.u8(opt_side_code(*side));
        }
        Inbound::App(AppMsg::Status { cl_ord_id, echo }) => {
            e.u8(12);
            e.cl(cl_ord_id);
            e.bytes(echo.as_bytes());
        }
        Inbound::App(AppMsg::TradingStatus {
            req_id,
            subscription,
        }) => {
            e.u8(16);
            text(e, req_id);
            e.u8(*subscription);
        }
        Inbound::App(AppMsg::Invalid(inv)) => {
            e.u8(13);
            match inv.kind {
                InvalidKind::Business { unsupported } => e.u8(1 + unsupported as u8),
                InvalidKind::Order => e.u8(3),
                InvalidKind::CancelReject { replace } => e.u8(4 + replace as u8),
            }
            text(e, &inv.msg_type);
            inv.reject.encode(e);
            e.bytes(inv.reason.as_bytes());
            e.cl(&inv.cl_ord_id);
            e.cl(&inv.orig_cl_ord_id);
            e.bytes(inv.echo.as_bytes());
        }
        Inbound::App(AppMsg::Busy(b)) => {
            // 14: shed (overload); 17: throttled, then the limit's kind and value.
            e.u8(if b.why == BusyWhy::Overload { 14 } else { 17 });
            e.u8(b.msg_type);
            e.cl(&b.cl_ord_id);
            e.cl(&b.orig_cl_ord_id);
            e.bytes(b.echo.as_bytes());
            match b.why {
                BusyWhy::Overload => {}
                BusyWhy::Orders(n) => {
                    e.u8(1);
                    e.u32(n)
                }
                BusyWhy::Cancels(n) => {
                    e.u8(2);
                    e.u32(n)
                }
                BusyWhy::Messages(n) => {
                    e.u8(3);
                    e.u32(n)
                }
            }
        }
        Inbound::Malformed(m) => {
            e.u8(15);
            e.u8(m.reason.code() as u8);
            // RefTagID as the 32 bits of an i32 (a tag has at most 9 digits, a sign included),
            // so records of non-negative tags read the same as before negative ones existed.
            e.opt_u32(m.ref_tag.map(|t| t as i32 as u32));
            text(e, &m.msg_type);
            text(e, &m.text);
        }
    }
}

fn session_reject_reason(c: u8) -> Result<SessionRejectReason, DecodeError> {
    use SessionRejectReason as R;
    Ok(match c {
        0 => R::InvalidTagNumber,
        1 => R::RequiredTagMissing,
        2 => R::TagNotDefinedForMessageType,
        3 => R::UndefinedTag,
        4 => R::TagSpecifiedWithoutValue,
        5 => R::ValueIncorrect,
        6 => R::IncorrectDataFormat,
        9 => R::CompIdProblem,
        10 => R::SendingTimeAccuracyProblem,
        11 => R::InvalidMsgType,
        13 => R::TagAppearsMoreThanOnce,
        14 => R::TagSpecifiedOutOfRequiredOrder,
        15 => R::RepeatingGroupFieldsOutOfOrder,
        16 => R::IncorrectNumInGroupCount,
        99 => R::Other,
        _ => return Err(DecodeError("bad session reject reason")),
    })
}

/// Decodes the message at `d` into `msg`: the order-entry messages replay is made of
/// (NewOrderSingle, cancel, replace) field by field into the message `msg` already is if it is
/// of that kind, the rest as new values.
#[inline(always)]
fn decode_msg_into(d: &mut Dec<'_>, msg: &mut Inbound<AppMsg>) -> Result<(), DecodeError> {
    let tag = d.u8()?;
    match tag {
        8 => {
            if !matches!(msg, Inbound::App(AppMsg::New(_))) {
                *msg = Inbound::App(AppMsg::New(NewOrder::BLANK));
            }
            let Inbound::App(AppMsg::New(n)) = msg else {
                unreachable!("set to a NewOrderSingle above")
            };
            n.decode_into(d)
        }
        9 => {
            if !matches!(msg, Inbound::App(AppMsg::Cancel { .. })) {
                *msg = Inbound::App(AppMsg::Cancel {
                    cl_ord_id: ClOrdId::EMPTY,
                    orig_cl_ord_id: ClOrdId::EMPTY,
                });
            }
            let Inbound::App(AppMsg::Cancel {
                cl_ord_id,
                orig_cl_ord_id,
            }) = msg
            else {
                unreachable!("set to a cancel above")
            };
            d.cl_into(cl_ord_id)?;
            d.cl_into(orig_cl_ord_id)
        }
        10 | 18 => {
            if !matches!(msg, Inbound::App(AppMsg::Replace(_))) {
                *msg = Inbound::App(AppMsg::Replace(Replace {
                    cl_ord_id: ClOrdId::EMPTY,
                    orig_cl_ord_id: ClOrdId::EMPTY,
                    symbol: 0,
                    price: 0,
                    qty: 0,
                    stop_price: 0,
                }));
            }
            let Inbound::App(AppMsg::Replace(r)) = msg else {
                unreachable!("set to a replace above")
            };
            r.decode_into(d)?;
            if tag == 18 {
                r.decode_stop_into(d)?;
            }
            Ok(())
        }
        _ => {
            *msg = decode_other(tag, d)?;
            Ok(())
        }
    }
}

fn decode_other(tag: u8, d: &mut Dec<'_>) -> Result<Inbound<AppMsg>, DecodeError> {
    Ok(match tag {
        1 => {
            let begin_string = read_text(d)?;
            let sender_comp_id = read_text(d)?;
            let target_comp_id = read_text(d)?;
            let heart_bt_int = d.opt_u64()?;
            let reset = d.bool()?;
            let credentials = Credentials::from_code(d.u8()?)
                .ok_or(DecodeError("unknown Logon credentials code"))?;
            Inbound::Logon(Box::new(Logon {
                begin_string,
                sender_comp_id,
                target_comp_id,
                heart_bt_int,
                reset,
                username: None,
                password: None,
                credentials,
                has_default_appl_ver_id: d.bool()?,
            }))
        }
        2 => Inbound::Heartbeat {
            test_req_id: read_text(d)?,
        },
        3 => {
            let has = d.bool()?;
            let t = read_text(d)?;
            Inbound::TestRequest {
                test_req_id: has.then_some(t),
            }
        }
        4 => Inbound::ResendRequest {
            begin: d.opt_u64()?,
            end: d.opt_u64()?,
        },
        5 => Inbound::SequenceReset {
            new_seq: d.opt_u64()?,
            gap_fill: d.bool()?,
        },
        6 => Inbound::Logout {
            text: read_text(d)?,
        },
        7 => Inbound::Reject {
            ref_seq_num: d.u64()?,
        },
        11 => {
            let cl_ord_id = d.cl()?;
            let request_type = d.u8()?;
            let symbol = d.opt_u32()?;
            let side = opt_side_from(d.u8()?)?;
            Inbound::App(AppMsg::MassCancel {
                cl_ord_id,
                request_type,
                symbol,
                side,
            })
        }
        12 => Inbound::App(AppMsg::Status {
            cl_ord_id: d.cl()?,
            echo: read_echo(d)?,
        }),
        13 => {
            let kind = match d.u8()? {
                1 => InvalidKind::Business { unsupported: false },
                2 => InvalidKind::Business { unsupported: true },
                3 => InvalidKind::Order,
                4 => InvalidKind::CancelReject { replace: false },
                5 => InvalidKind::CancelReject { replace: true },
                _ => return Err(DecodeError("bad invalid kind")),
            };
            Inbound::App(AppMsg::Invalid(Box::new(Invalid {
                kind,
                msg_type: read_text(d)?,
                reject: Reject::decode(d)?,
                reason: d.str()?.to_string(),
                cl_ord_id: d.cl()?,
                orig_cl_ord_id: d.cl()?,
                echo: read_echo(d)?,
            })))
        }
        t @ (14 | 17) => {
            let msg_type = d.u8()?;
            if !matches!(msg_type, b'D' | b'F' | b'G' | b'q' | b'H') {
                return Err(DecodeError("bad shed message type"));
            }
            let cl_ord_id = d.cl()?;
            let orig_cl_ord_id = d.cl()?;
            let echo = read_echo(d)?;
            let why = if t == 14 {
                BusyWhy::Overload
            } else {
                match (d.u8()?, d.u32()?) {
                    (1, n) => BusyWhy::Orders(n),
                    (2, n) => BusyWhy::Cancels(n),
                    (3, n) => BusyWhy::Messages(n),
                    _ => return Err(DecodeError("bad throttle kind")),
                }
            };
            Inbound::App(AppMsg::Busy(Box::new(Busy {
                msg_type,
                cl_ord_id,
                orig_cl_ord_id,
                echo,
                why,
            })))
        }
        16 => {
            let req_id = read_text(d)?;
            let subscription = d.u8()?;
            if subscription > 2 {
                return Err(DecodeError("bad SubscriptionRequestType"));
            }
            Inbound::App(AppMsg::TradingStatus {
                req_id,
                subscription,
            })
        }
        15 => Inbound::Malformed(Box::new(Malformed {
            reason: session_reject_reason(d.u8()?)?,
            ref_tag: d.opt_u32()?.map(|t| t as i32 as i64),
            msg_type: read_text(d)?,
            text: read_text(d)?,
        })),
        _ => return Err(DecodeError("unknown message tag")),
    })
}

#[cfg(test)]
mod tests;
