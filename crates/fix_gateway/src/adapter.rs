//! FixAdapter: one framed FIX message -> one `FixInput` for the sequencer.
//!
//! Role: read what the edge needs of a message with the `fix` crate's readers (the header as
//! the session needs it, the admin message, or the application message with its prices
//! converted exactly to the instrument's units), and turn anything malformed into an input
//! that asks for the right reject (session Reject, BusinessMessageReject, ExecutionReport
//! reject or OrderCancelReject) with a specific reason. Runs on the event loop, before the
//! journal.
//!
//! Never: keeps state beyond what the connection's Logon said (to check later headers), or
//! decides anything that depends on exchange or session state (sequence numbers, ClOrdIDs,
//! orders): those are decided after the message is journaled. Never panics on any input.

use crate::config::FixConfig;
use crate::record::{AppMsg, Busy, BusyWhy, ConnId, FixInput, Invalid, InvalidKind};
use exchange::{ClOrdId, NewOrder, Reject, Replace};
use fix::app::{
    Echo, InstrumentRef, Instruments, NewOrderSingle, OrderCancelReplaceRequest,
    OrderCancelRequest, OrderMassCancelRequest, OrderStatusRequest, Refusal,
    TradingSessionStatusRequest, TRADING_SESSION_DAY,
};
use fix::{
    malformed_input, read_inbound, tags, Decoder, FixVersion, HeaderProblem, Inbound, Malformed,
    Message, SessionRejectReason, Text,
};
use std::collections::HashMap;
use std::sync::Arc;

/// Static lookups built once from the config.
pub struct FixAdapter {
    cfg: Arc<FixConfig>,
    /// Symbol (its bytes packed in a word, `packed`) -> instrument index, looked up for every
    /// order (foldhash: the keys come from the config, so a client's strings cannot lengthen
    /// a chain).
    /// The value: the instrument's index and its symbol's length (equal words and lengths
    /// are equal bytes).
    symbols: HashMap<u128, (u32, usize), foldhash::fast::RandomState>,
}

/// What a connection's first Logon said, to check the headers of its later messages.
#[derive(Default, Clone, Debug)]
pub struct ConnIds {
    pub begin_string: Text,
    pub sender: Text,
    pub target: Text,
    /// The dictionary its messages are validated against: the version of a configured
    /// session with `validate` on.
    pub validate: Option<FixVersion>,
}

impl Instruments for FixAdapter {
    #[inline]
    fn find(&self, symbol: &[u8]) -> Option<InstrumentRef> {
        let &(id, len) = self.symbols.get(&packed(symbol)?)?;
        if len != symbol.len() {
            return None;
        }
        let d = &self.cfg.instruments[id as usize];
        Some(InstrumentRef {
            id,
            decimals: d.price_decimals,
            tick: d.tick,
        })
    }
}

const _: () = assert!(types::SYMBOL_LEN_MAX <= 16);

/// A symbol's bytes as one little-endian word (`None`: longer than any symbol).
#[inline]
fn packed(s: &[u8]) -> Option<u128> {
    let mut w = [0u8; 16];
    w.get_mut(..s.len())?.copy_from_slice(s);
    Some(u128::from_le_bytes(w))
}

impl FixAdapter {
    pub fn new(cfg: Arc<FixConfig>) -> FixAdapter {
        let symbols = cfg
            .instruments
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let s = d.symbol.as_bytes();
                let key = packed(s).expect("a symbol fits a word");
                (key, (i as u32, s.len()))
            })
            .collect();
        FixAdapter { cfg, symbols }
    }

    pub fn config(&self) -> &Arc<FixConfig> {
        &self.cfg
    }

    /// Converts one framed message (`frame`, as `fix::frame` delimited it) from connection
    /// `conn`. A message whose fields do not split (a malformed tag, an empty value) becomes
    /// `Inbound::Malformed` under its MsgSeqNum (0 if unreadable: the session logs out).
    /// `None`: garbled (its fields contradict the frame, e.g. a data field's length):
    /// ignored, no sequence number taken, as the FIX session layer requires.
    pub fn to_input(
        &self,
        conn: ConnId,
        ids: &mut Option<ConnIds>,
        decoder: &mut Decoder,
        frame: &[u8],
    ) -> Option<FixInput> {
        let m = match decoder.decode_framed(frame) {
            Ok(m) => m,
            Err(e) => {
                // Fields that do not split (a tag without '=', empty, not a number; an empty
                // value): a session Reject of its MsgSeqNum, or a Logout if it has none.
                let (header, m) = malformed_input(e, frame)?;
                return Some(FixInput {
                    conn,
                    header,
                    msg: Inbound::Malformed(m),
                });
            }
        };
        if m.msg_type() == b"A" && ids.is_none() {
            let sender = m.get(tags::SENDER_COMP_ID).unwrap_or(b"");
            let target = m.get(tags::TARGET_COMP_ID).unwrap_or(b"");
            let validate = self
                .cfg
                .find_session(sender, target)
                .filter(|&ix| self.cfg.sessions[ix].validate)
                .and_then(|_| FixVersion::from_begin_string(m.begin_string()));
            *ids = Some(ConnIds {
                begin_string: Text::new(m.begin_string()),
                sender: Text::new(sender),
                target: Text::new(target),
                validate,
            });
        }
        let expect = ids.as_ref().map(|i| {
            (
                i.begin_string.as_bytes(),
                i.sender.as_bytes(),
                i.target.as_bytes(),
            )
        });
        let (header, mut msg) = read_inbound(&m, expect, |m| self.app(m));
        // The header's own problems (CompIDs, BeginString, SendingTime) are the session's to
        // answer first; a Logon is checked by the session (CompIDs, HeartBtInt, password); a
        // MsgType the dictionary lacks is answered BusinessMessageReject. A session that does
        // not validate still rejects a repeated tag.
        if let Some(i) = ids.as_ref() {
            if header.problem == HeaderProblem::None && !matches!(msg, Inbound::Logon(_)) {
                let violation = match i.validate {
                    Some(v) => validate(v, &m),
                    None => FixVersion::from_begin_string(m.begin_string())
                        .and_then(|v| repeated(v, &m)),
                };
                if let Some(violation) = violation {
                    msg = Inbound::Malformed(violation);
                }
            }
        }
        Some(FixInput { conn, header, msg })
    }

    /// An application message: read, or refused with the reject it deserves.
    fn app(&self, m: &Message<'_>) -> Result<AppMsg, Box<Malformed>> {
        let msg_type = m.msg_type();
        let refused = |r: Refusal, kind: InvalidKind| refusal(m, r, kind);
        Ok(match msg_type {
            b"D" => match NewOrderSingle::read(m, self) {
                Ok(n) => AppMsg::New(NewOrder {
                    cl_ord_id: cl(n.cl_ord_id),
                    symbol: n.symbol.id,
                    side: n.side,
                    ord_type: n.ord_type,
                    tif: n.time_in_force,
                    price: n.price,
                    qty: n.order_qty,
                    account: n.account,
                    post_only: n.post_only,
                    stop_price: n.ext.stop_px,
                    display_qty: n.ext.max_floor,
                    expire_ns: n.ext.expire_time_ns,
                }),
                Err(r) => refused(r, InvalidKind::Order)?,
            },
            b"F" => match OrderCancelRequest::read(m) {
                Ok(c) => AppMsg::Cancel {
                    cl_ord_id: cl(c.cl_ord_id),
                    orig_cl_ord_id: cl(c.orig_cl_ord_id),
                },
                Err(r) => refused(r, InvalidKind::CancelReject { replace: false })?,
            },
            b"G" => match OrderCancelReplaceRequest::read(m, self) {
                Ok(r) => AppMsg::Replace(Replace {
                    cl_ord_id: cl(r.cl_ord_id),
                    orig_cl_ord_id: cl(r.orig_cl_ord_id),
                    symbol: r.symbol.id,
                    price: r.price,
                    qty: r.order_qty,
                    stop_price: r.stop_px.unwrap_or(0),
                }),
                Err(r) => refused(r, InvalidKind::CancelReject { replace: true })?,
            },
            b"q" if m.begin_string() == b"FIX.4.2" => unsupported(m),
            b"q" => match OrderMassCancelRequest::read(m, self) {
                Ok(q) => AppMsg::MassCancel {
                    cl_ord_id: cl(q.cl_ord_id),
                    request_type: q.request_type,
                    symbol: q.symbol,
                    side: q.side,
                },
                Err(r) => refused(r, InvalidKind::Business { unsupported: false })?,
            },
            b"H" => match OrderStatusRequest::read(m) {
                Ok(s) => AppMsg::Status {
                    cl_ord_id: cl(s.cl_ord_id),
                    echo: Echo::of(m),
                },
                Err(r) => refused(r, InvalidKind::Business { unsupported: false })?,
            },
            b"g" => trading_status_request(m),
            _ => match undefined_msg_type(m) {
                Some(invalid) => return Err(invalid),
                None => unsupported(m),
            },
        })
    }

    /// What the server queues instead of an application message it sheds (over its inbound
    /// limit): a small `Busy` input, answered "exchange busy" with the client's ClOrdID.
    /// Session-level messages are never shed.
    pub fn shed(&self, input: FixInput) -> FixInput {
        self.refuse(input, BusyWhy::Overload)
    }

    /// What the server queues instead of an application message `why` refuses (shed, or over
    /// its session's throttle): a small `Busy` input, answered with the reason and the
    /// client's ClOrdID; it never reaches the exchange. Session-level messages are returned
    /// as they are.
    pub fn refuse(&self, input: FixInput, why: BusyWhy) -> FixInput {
        let FixInput { conn, header, msg } = input;
        let busy = |msg_type, cl_ord_id, orig_cl_ord_id, echo| Busy {
            msg_type,
            cl_ord_id,
            orig_cl_ord_id,
            echo,
            why,
        };
        let b = match &msg {
            Inbound::App(AppMsg::New(n)) => busy(b'D', n.cl_ord_id, ClOrdId::EMPTY, self.echo(n)),
            Inbound::App(AppMsg::Cancel {
                cl_ord_id,
                orig_cl_ord_id,
            }) => busy(b'F', *cl_ord_id, *orig_cl_ord_id, Echo::EMPTY),
            Inbound::App(AppMsg::Replace(r)) => {
                busy(b'G', r.cl_ord_id, r.orig_cl_ord_id, Echo::EMPTY)
            }
            Inbound::App(AppMsg::MassCancel { cl_ord_id, .. }) => {
                busy(b'q', *cl_ord_id, ClOrdId::EMPTY, Echo::EMPTY)
            }
            Inbound::App(AppMsg::Status { cl_ord_id, .. }) => {
                busy(b'H', *cl_ord_id, ClOrdId::EMPTY, Echo::EMPTY)
            }
            _ => return FixInput { conn, header, msg },
        };
        FixInput {
            conn,
            header,
            msg: Inbound::App(AppMsg::Busy(Box::new(b))),
        }
    }

    /// The fields a reject of new order `n` echoes: Symbol, Side, OrderQty, OrdType (3 or 4
    /// for a stop), Price (a limit or stop limit order) and StopPx (a stop), from the order
    /// as read.
    pub fn echo(&self, n: &NewOrder) -> Echo {
        echo_of(&self.cfg, n)
    }
}

/// See [`FixAdapter::echo`].
pub fn echo_of(cfg: &FixConfig, n: &NewOrder) -> Echo {
    match cfg.instruments.get(n.symbol as usize) {
        Some(inst) => Echo::of_order(
            inst.symbol.as_bytes(),
            n.side,
            n.qty,
            n.ord_type,
            (n.price, n.stop_price),
            inst.price_decimals,
        ),
        None => Echo::EMPTY,
    }
}

/// A TradingSessionStatusRequest: for the day session (TradingSessionID 1 or none), or
/// refused with a BusinessMessageReject whose BusinessRejectRefID is its TradSesReqID.
fn trading_status_request(m: &Message<'_>) -> AppMsg {
    use fix::md::SubscriptionType as S;
    let reason = match TradingSessionStatusRequest::read(m) {
        Ok(g) => match g.trading_session_id {
            Some(t) if t != TRADING_SESSION_DAY => format!(
                "unknown TradingSessionID(336) {}: the one trading session is 1 (the day)",
                truncate(&String::from_utf8_lossy(t))
            ),
            _ => {
                return AppMsg::TradingStatus {
                    req_id: Text::new(g.req_id),
                    subscription: match g.subscription {
                        S::Snapshot => 0,
                        S::Subscribe => 1,
                        S::Unsubscribe => 2,
                    },
                }
            }
        },
        Err(r) => r.text,
    };
    AppMsg::Invalid(Box::new(Invalid {
        kind: InvalidKind::Business { unsupported: false },
        msg_type: Text::new(m.msg_type()),
        reject: Reject::InvalidField(types::Field::Id),
        reason,
        cl_ord_id: cl_text(m, tags::TRAD_SES_REQ_ID),
        orig_cl_ord_id: ClOrdId::EMPTY,
        echo: Echo::EMPTY,
    }))
}

/// `m` checked against version `v`'s dictionary: the Reject it deserves, if any (none for a
/// MsgType the dictionary lacks: that is answered BusinessMessageReject). A conforming order
/// takes the validator's fast path and no MsgType lookup.
#[inline]
fn validate(v: FixVersion, m: &Message<'_>) -> Option<Box<Malformed>> {
    let d = fix::dict::dictionary(v);
    let e = d.validate(m).err()?;
    d.message(m.msg_type())?;
    Some(Box::new(Malformed {
        reason: e.reason,
        ref_tag: e.ref_tag.map(i64::from),
        msg_type: Text::new(m.msg_type()),
        text: Text::new(e.text(m).as_bytes()),
    }))
}

/// A tag of `m` repeated outside a repeating group (version `v`'s groups), if any.
#[inline]
fn repeated(v: FixVersion, m: &Message<'_>) -> Option<Box<Malformed>> {
    let e = fix::dict::dictionary(v).check_repeats(m).err()?;
    Some(Box::new(Malformed {
        reason: e.reason,
        ref_tag: e.ref_tag.map(i64::from),
        msg_type: Text::new(m.msg_type()),
        text: Text::new(e.text(m).as_bytes()),
    }))
}

/// A client order id the reader accepted (at most 64 bytes of UTF-8).
#[inline]
fn cl(b: &[u8]) -> ClOrdId {
    ClOrdId::from_bytes(b).unwrap_or(ClOrdId::EMPTY)
}

/// A ClOrdID field for a reject, as sent (lossy UTF-8), cut to 64 bytes.
fn cl_text(m: &Message<'_>, tag: u32) -> ClOrdId {
    ClOrdId::truncated(&String::from_utf8_lossy(m.get(tag).unwrap_or(b"")))
}

/// `s` cut to 64 bytes at a character boundary.
fn truncate(s: &str) -> String {
    let mut end = s.len().min(64);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// A MsgType its version does not define at all (`35=*`; neither one of MsgType's values nor
/// a user-defined `U...`): a session Reject 373=11 naming MsgType, where a defined MsgType
/// Rialto does not serve gets a BusinessMessageReject.
fn undefined_msg_type(m: &Message<'_>) -> Option<Box<Malformed>> {
    let v = FixVersion::from_begin_string(m.begin_string())?;
    let t = m.msg_type();
    let defined = fix::dict::dictionary(v)
        .field(tags::MSG_TYPE)
        .is_some_and(|f| f.allows(t));
    if defined || t.starts_with(b"U") {
        return None;
    }
    let reason = SessionRejectReason::InvalidMsgType;
    Some(Box::new(Malformed {
        reason,
        ref_tag: Some(tags::MSG_TYPE as i64),
        msg_type: Text::new(m.msg_type()),
        text: Text::new(fix::session::reason_text(reason)),
    }))
}

fn unsupported(m: &Message<'_>) -> AppMsg {
    let t = String::from_utf8_lossy(m.msg_type());
    AppMsg::Invalid(Box::new(Invalid {
        kind: InvalidKind::Business { unsupported: true },
        msg_type: Text::new(m.msg_type()),
        reject: Reject::InvalidField(types::Field::Id),
        reason: match m.msg_type() {
            // Market data has a port and a session of its own (`fix_gateway::md`).
            b"V" | b"x" | b"e" => format!(
                "message type {} is served on the market-data port (its own session; log on \
                 there with ResetSeqNumFlag=Y)",
                truncate(&t)
            ),
            _ => format!("unsupported message type {}", truncate(&t)),
        },
        cl_ord_id: cl_text(m, tags::CL_ORD_ID),
        orig_cl_ord_id: ClOrdId::EMPTY,
        echo: Echo::EMPTY,
    }))
}

/// A reader's refusal as the input that answers it: a session Reject when the ClOrdID is
/// unusable, else a reject of `kind`.
fn refusal(m: &Message<'_>, r: Refusal, kind: InvalidKind) -> Result<AppMsg, Box<Malformed>> {
    if r.is_session_level() {
        let reason = if r.text.starts_with("missing") {
            SessionRejectReason::RequiredTagMissing
        } else if r.text.contains("longer") {
            SessionRejectReason::ValueIncorrect
        } else {
            SessionRejectReason::IncorrectDataFormat
        };
        return Err(Box::new(Malformed {
            reason,
            ref_tag: Some(r.tag as i64),
            msg_type: Text::new(m.msg_type()),
            text: Text::new(r.text.as_bytes()),
        }));
    }
    let reject = match r.tag {
        tags::SYMBOL => Reject::UnknownSymbol,
        tags::PRICE => Reject::InvalidPrice,
        tags::ORDER_QTY => Reject::InvalidQty,
        tags::SIDE => Reject::InvalidField(types::Field::Side),
        tags::ORD_TYPE => Reject::InvalidField(types::Field::OrdType),
        tags::TIME_IN_FORCE => Reject::InvalidField(types::Field::Tif),
        tags::ACCOUNT => Reject::InvalidField(types::Field::Account),
        tags::STOP_PX => Reject::InvalidField(types::Field::StopPrice),
        tags::MAX_FLOOR => Reject::InvalidField(types::Field::DisplayQty),
        tags::EXPIRE_TIME | tags::EXPIRE_DATE => Reject::InvalidField(types::Field::ExpireTime),
        _ => Reject::InvalidField(types::Field::Id),
    };
    Ok(AppMsg::Invalid(Box::new(Invalid {
        kind,
        msg_type: Text::new(m.msg_type()),
        reject,
        reason: r.text,
        cl_ord_id: cl_text(m, tags::CL_ORD_ID),
        orig_cl_ord_id: cl_text(m, tags::ORIG_CL_ORD_ID),
        echo: Echo::of(m),
    })))
}
