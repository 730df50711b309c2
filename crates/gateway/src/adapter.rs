//! FixAdapter: one framed FIX message -> one `Input` for the sequencer.
//!
//! Role: read the fields the exchange needs, convert prices and quantities exactly to integer
//! ticks and lots of the instrument, and turn anything malformed into an `Input` that asks for
//! the right reject (session Reject, BusinessMessageReject, ExecutionReport reject or
//! OrderCancelReject) with a specific reason. Runs on the network thread.
//!
//! Never: keeps state beyond the connection's CompIDs, decides anything that depends on
//! exchange state (sequence numbers, ClOrdIDs, orders): those are the `Exchange`'s, after the
//! message is journaled. Never panics on any input.

use crate::config::Config;
use crate::exchange::parse_price;
use crate::record::{ClOrdId, ConnId, Echo, FixMsg, Input, InvalidKind, NewOrderMsg, STR_LEN_MAX};
use crate::wire::Fields;
use std::collections::HashMap;
use types::{OrdType, Side, TimeInForce};

/// Static lookups built once from the config.
pub struct FixAdapter {
    cfg: std::sync::Arc<Config>,
    /// Symbol -> instrument index, looked up for every order (foldhash: the keys come from the
    /// config, so a client's strings cannot lengthen a chain; SipHash cost more than the rest
    /// of the lookup).
    symbols: HashMap<Box<[u8]>, u32, foldhash::fast::RandomState>,
}

/// What the network thread remembers of a connection's Logon, to check later headers.
#[derive(Default, Clone, Debug)]
pub struct ConnIds {
    pub sender: String,
    pub target: String,
}

enum Bad {
    Session(u32, String),
    Business(String),
    Order(String),
    Cancel(String),
}

impl FixAdapter {
    pub fn new(cfg: std::sync::Arc<Config>) -> FixAdapter {
        let symbols = cfg
            .instruments
            .iter()
            .enumerate()
            .map(|(i, d)| (d.instrument.symbol.as_str().as_bytes().into(), i as u32))
            .collect();
        FixAdapter { cfg, symbols }
    }

    /// Converts one message (`msg` framed, `f` its parsed fields).
    pub fn to_input(
        &self,
        conn: ConnId,
        ids: &mut Option<ConnIds>,
        msg: &[u8],
        f: &Fields,
    ) -> Input {
        let seq = f.get_u64(msg, 34).unwrap_or(0);
        let poss_dup = f.get(msg, 43) == Some(b"Y");
        let msg_type = f.get_str(msg, 35).unwrap_or("");
        let fix = |m: FixMsg| Input::Fix {
            conn,
            seq,
            poss_dup,
            msg: m,
        };
        let cl = |tag| text(f, msg, tag);
        if msg_type == "A" && ids.is_none() {
            let sender = cl(49);
            let target = cl(56);
            *ids = Some(ConnIds {
                sender: sender.clone(),
                target: target.clone(),
            });
            return fix(FixMsg::Logon {
                sender,
                target,
                begin_string: cl(8),
                heartbeat_secs: f.get_u64(msg, 108).unwrap_or(30).min(u32::MAX as u64) as u32,
                reset: f.get(msg, 141) == Some(b"Y"),
                password: cl(554),
            });
        }
        let result = match &*ids {
            Some(i)
                if f.get(msg, 49) != Some(i.sender.as_bytes())
                    || f.get(msg, 56) != Some(i.target.as_bytes()) =>
            {
                Err(Bad::Session(49, "CompID problem".into()))
            }
            _ => self.body(msg_type, msg, f),
        };
        match result {
            Ok(m) => fix(m),
            Err(bad) => {
                let (kind, ref_tag, reason) = match bad {
                    Bad::Session(tag, r) => (InvalidKind::Session, tag, r),
                    Bad::Business(r) => (InvalidKind::Business, 0, r),
                    Bad::Order(r) => (InvalidKind::Order, 0, r),
                    Bad::Cancel(r) => (
                        InvalidKind::CancelReject {
                            replace: msg_type == "G",
                        },
                        0,
                        r,
                    ),
                };
                fix(FixMsg::Invalid {
                    kind,
                    msg_type: truncate(msg_type),
                    ref_tag,
                    cl_ord_id: cl_text(f, msg, 11),
                    orig_cl_ord_id: cl_text(f, msg, 41),
                    reason,
                    echo: echo(f, msg),
                })
            }
        }
    }

    fn body(&self, msg_type: &str, msg: &[u8], f: &Fields) -> Result<FixMsg, Bad> {
        // From the bytes: `ClOrdId::from_bytes` checks UTF-8 only past ASCII.
        let req_str = |tag: u32, bad: fn(String) -> Bad| -> Result<ClOrdId, Bad> {
            match f.get(msg, tag) {
                None | Some(b"") => Err(bad(format!("missing tag {tag}"))),
                Some(b) if b.len() > STR_LEN_MAX => {
                    Err(bad(format!("tag {tag} longer than {STR_LEN_MAX}")))
                }
                Some(b) => {
                    ClOrdId::from_bytes(b).ok_or_else(|| bad(format!("tag {tag} is not UTF-8")))
                }
            }
        };
        Ok(match msg_type {
            "" => return Err(Bad::Session(35, "MsgType(35) missing".into())),
            "A" => FixMsg::Logon {
                sender: text(f, msg, 49),
                target: text(f, msg, 56),
                begin_string: text(f, msg, 8),
                heartbeat_secs: 30,
                reset: false,
                password: String::new(),
            },
            "0" => FixMsg::Heartbeat {
                test_req_id: text(f, msg, 112),
            },
            "1" => FixMsg::TestRequest {
                test_req_id: text(f, msg, 112),
            },
            "2" => FixMsg::ResendRequest {
                begin: f
                    .get_u64(msg, 7)
                    .ok_or_else(|| Bad::Session(7, "BeginSeqNo(7) missing".into()))?,
                end: f
                    .get_u64(msg, 16)
                    .ok_or_else(|| Bad::Session(16, "EndSeqNo(16) missing".into()))?,
            },
            "4" => FixMsg::SequenceReset {
                new_seq: f
                    .get_u64(msg, 36)
                    .ok_or_else(|| Bad::Session(36, "NewSeqNo(36) missing".into()))?,
                gap_fill: f.get(msg, 123) == Some(b"Y"),
            },
            "5" => FixMsg::Logout {
                text: text(f, msg, 58),
            },
            "3" => FixMsg::SessionReject,
            "D" => {
                let cl_ord_id = req_str(11, Bad::Session11)?;
                let (symbol, inst) = self.symbol(msg, f).map_err(Bad::Order)?;
                let side = side(msg, f).map_err(Bad::Order)?;
                let ord_type = match f.get(msg, 40) {
                    Some(b"1") => OrdType::Market,
                    Some(b"2") => OrdType::Limit,
                    None => return Err(Bad::Order("missing OrdType(40)".into())),
                    Some(_) => {
                        return Err(Bad::Order("unsupported OrdType(40) (use 1 or 2)".into()))
                    }
                };
                let tif = match f.get(msg, 59) {
                    None | Some(b"0") => TimeInForce::Day,
                    Some(b"1") => TimeInForce::Gtc,
                    Some(b"3") => TimeInForce::Ioc,
                    Some(b"4") => TimeInForce::Fok,
                    Some(_) => {
                        return Err(Bad::Order(
                            "unsupported TimeInForce(59) (use 0, 1, 3 or 4)".into(),
                        ))
                    }
                };
                let price = match ord_type {
                    OrdType::Market => 0,
                    OrdType::Limit => match f.get(msg, 44) {
                        None => return Err(Bad::Order("limit order without Price(44)".into())),
                        Some(p) => parse_price(p, inst).map_err(|e| Bad::Order(e.into()))?,
                    },
                };
                let qty = qty(msg, f).map_err(Bad::Order)?;
                let account = match f.get(msg, 1) {
                    None => None,
                    Some(a) => Some(
                        crate::wire::parse_u64(a)
                            .filter(|&a| a <= u32::MAX as u64)
                            .ok_or_else(|| Bad::Order("Account(1) is not a number".into()))?
                            as u32,
                    ),
                };
                let post_only = f.get(msg, 18).is_some_and(|v| v.contains(&b'6'));
                FixMsg::New(NewOrderMsg {
                    cl_ord_id,
                    symbol,
                    side,
                    ord_type,
                    tif,
                    price,
                    qty,
                    account,
                    post_only,
                })
            }
            "F" => FixMsg::Cancel {
                cl_ord_id: req_str(11, Bad::Session11)?,
                orig_cl_ord_id: req_str(41, Bad::Cancel)?,
            },
            "G" => {
                let cl_ord_id = req_str(11, Bad::Session11)?;
                let orig_cl_ord_id = req_str(41, Bad::Cancel)?;
                let (symbol, inst) = self.symbol(msg, f).map_err(Bad::Cancel)?;
                if f.get(msg, 40).is_some_and(|t| t != b"2") {
                    return Err(Bad::Cancel("only limit orders can be replaced".into()));
                }
                let price = match f.get(msg, 44) {
                    None => return Err(Bad::Cancel("missing Price(44)".into())),
                    Some(p) => parse_price(p, inst).map_err(|e| Bad::Cancel(e.into()))?,
                };
                FixMsg::Replace {
                    cl_ord_id,
                    orig_cl_ord_id,
                    symbol,
                    price,
                    qty: qty(msg, f).map_err(Bad::Cancel)?,
                }
            }
            "q" if f.get(msg, 8) == Some(b"FIX.4.2") => {
                return Err(Bad::Business("unsupported message type q".into()))
            }
            "q" => {
                let cl_ord_id = req_str(11, Bad::Session11)?;
                let request_type = match f.get_u64(msg, 530) {
                    Some(t) if t <= 9 => t as u8,
                    _ => {
                        return Err(Bad::Business(
                            "MassCancelRequestType(530) missing or invalid".into(),
                        ))
                    }
                };
                let symbol = match f.get(msg, 55) {
                    None => None,
                    Some(_) => Some(self.symbol(msg, f).map_err(Bad::Business)?.0),
                };
                let side = match f.get(msg, 54) {
                    None => None,
                    Some(_) => Some(side(msg, f).map_err(Bad::Business)?),
                };
                FixMsg::MassCancel {
                    cl_ord_id,
                    request_type,
                    symbol,
                    side,
                }
            }
            "H" => FixMsg::Status {
                cl_ord_id: req_str(11, Bad::Session11)?,
                echo: echo_fields(f, msg),
            },
            other => {
                return Err(Bad::Business(format!(
                    "unsupported message type {}",
                    truncate(other)
                )))
            }
        })
    }

    fn symbol<'c>(
        &'c self,
        msg: &[u8],
        f: &Fields,
    ) -> Result<(u32, &'c crate::config::InstrumentDef), String> {
        let s = f.get(msg, 55).ok_or("missing Symbol(55)")?;
        match self.symbols.get(s) {
            Some(&i) => Ok((i, &self.cfg.instruments[i as usize])),
            None => Err(format!(
                "unknown symbol {}",
                truncate(&String::from_utf8_lossy(s))
            )),
        }
    }
}

#[allow(non_snake_case)]
impl Bad {
    /// A missing or over-long ClOrdID: the message cannot be answered per order.
    fn Session11(r: String) -> Bad {
        Bad::Session(11, r)
    }
}

fn side(msg: &[u8], f: &Fields) -> Result<Side, String> {
    match f.get(msg, 54) {
        Some(b"1") => Ok(Side::Buy),
        Some(b"2") => Ok(Side::Sell),
        None => Err("missing Side(54)".into()),
        Some(_) => Err("unsupported Side(54) (use 1 or 2)".into()),
    }
}

fn qty(msg: &[u8], f: &Fields) -> Result<u64, String> {
    let q = f.get(msg, 38).ok_or("missing OrderQty(38)")?;
    let q = match q.iter().position(|&b| b == b'.') {
        Some(p) if q[p + 1..].iter().all(|&b| b == b'0') => &q[..p],
        Some(_) => return Err("OrderQty(38) must be a whole number".into()),
        None => q,
    };
    match crate::wire::parse_u64(q) {
        Some(0) => Err("OrderQty(38) must be positive".into()),
        Some(n) => Ok(n),
        None => Err("OrderQty(38) is not a number".into()),
    }
}

/// The order fields a reject echoes back (Symbol, Side, OrderQty, OrdType, Price), as sent,
/// when they are present and well-formed enough to repeat.
pub fn echo(f: &Fields, msg: &[u8]) -> String {
    echo_fields(f, msg).as_str().to_owned()
}

/// `echo` inline, without allocating (an OrderStatusRequest's).
pub fn echo_fields(f: &Fields, msg: &[u8]) -> Echo {
    let mut out = Echo::EMPTY;
    for (tag, tag_eq) in [
        (55u32, b"55="),
        (54, b"54="),
        (38, b"38="),
        (40, b"40="),
        (44, b"44="),
    ] {
        if let Some(v) = f.get(msg, tag) {
            if v.len() <= 32 {
                // Five fields of at most 32 bytes always fit; an unprintable value is left out.
                out.push_field(tag_eq, v);
            }
        }
    }
    out
}

/// A ClOrdID field for a reject, as sent (lossy UTF-8), cut to `STR_LEN_MAX` bytes.
fn cl_text(f: &Fields, msg: &[u8], tag: u32) -> ClOrdId {
    ClOrdId::truncated(&String::from_utf8_lossy(f.get(msg, tag).unwrap_or(b"")))
}

fn text(f: &Fields, msg: &[u8], tag: u32) -> String {
    truncate(&String::from_utf8_lossy(f.get(msg, tag).unwrap_or(b"")))
}

fn truncate(s: &str) -> String {
    let mut end = s.len().min(STR_LEN_MAX);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// What the server queues instead of an application message it sheds (over its inbound limit):
/// a small `Busy` input, answered "exchange busy" with the client's ClOrdID and echo fields.
/// Session-level messages are never shed.
pub fn shed(input: Input, f: &Fields, msg: &[u8]) -> Input {
    let echo = echo(f, msg);
    match input {
        Input::Fix {
            conn,
            seq,
            poss_dup,
            msg,
        } => {
            use crate::record::FixMsg;
            let (msg_type, cl, orig) = match msg {
                FixMsg::New(n) => ("D", n.cl_ord_id, ClOrdId::EMPTY),
                FixMsg::Cancel {
                    cl_ord_id,
                    orig_cl_ord_id,
                } => ("F", cl_ord_id, orig_cl_ord_id),
                FixMsg::Replace {
                    cl_ord_id,
                    orig_cl_ord_id,
                    ..
                } => ("G", cl_ord_id, orig_cl_ord_id),
                FixMsg::MassCancel { cl_ord_id, .. } => ("q", cl_ord_id, ClOrdId::EMPTY),
                FixMsg::Status { cl_ord_id, .. } => ("H", cl_ord_id, ClOrdId::EMPTY),
                other => {
                    return Input::Fix {
                        conn,
                        seq,
                        poss_dup,
                        msg: other,
                    }
                }
            };
            Input::Fix {
                conn,
                seq,
                poss_dup,
                msg: FixMsg::Busy {
                    msg_type: msg_type.into(),
                    cl_ord_id: cl,
                    orig_cl_ord_id: orig,
                    echo,
                },
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::MsgWriter;

    /// A NewOrderSingle from CLIENT1 with `fields` after the header, as `to_input` sees it.
    fn convert(fields: &[(u32, &[u8])]) -> Input {
        let a = FixAdapter::new(std::sync::Arc::new(Config::defaults()));
        let mut w = MsgWriter::new();
        w.field(35, b"D")
            .str(49, "CLIENT1")
            .str(56, "RIALTO")
            .u64(34, 2)
            .str(52, "20260101-00:00:00.000");
        for (t, v) in fields {
            w.field(*t, v);
        }
        let mut msg = Vec::new();
        w.finish("FIX.4.4", &mut msg);
        let mut f = Fields::new();
        f.parse(&msg).unwrap();
        let mut ids = Some(ConnIds {
            sender: "CLIENT1".into(),
            target: "RIALTO".into(),
        });
        a.to_input(1, &mut ids, &msg, &f)
    }

    fn reason(i: &Input) -> &str {
        match i {
            Input::Fix {
                msg: FixMsg::Invalid { reason, .. },
                ..
            } => reason,
            other => panic!("not rejected: {other:?}"),
        }
    }

    /// ClOrdID and Symbol are read from the bytes: a valid order converts, and each bad one
    /// gets its own reason.
    #[test]
    fn client_order_ids_and_symbols_are_checked_from_the_bytes() {
        let order = |cl: &[u8], sym: &[u8]| {
            convert(&[
                (11, cl),
                (55, sym),
                (54, b"1"),
                (38, b"5"),
                (40, b"2"),
                (44, b"10.25"),
            ])
        };
        match order("é-1".as_bytes(), b"BOLT") {
            Input::Fix {
                msg: FixMsg::New(n),
                ..
            } => {
                assert_eq!(n.cl_ord_id.as_str(), "é-1");
                assert_eq!(n.symbol, 1, "BOLT is the second instrument");
                assert_eq!((n.qty, n.price), (5, 1025));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(reason(&order(b"ab\xff", b"ACME")), "tag 11 is not UTF-8");
        assert_eq!(
            reason(&order(&[b'x'; STR_LEN_MAX + 1], b"ACME")),
            format!("tag 11 longer than {STR_LEN_MAX}")
        );
        assert_eq!(reason(&order(b"", b"ACME")), "missing tag 11");
        assert_eq!(reason(&order(b"a1", b"ZZZ")), "unknown symbol ZZZ");
        assert_eq!(
            reason(&order(b"a1", b"AC\xffME")),
            "unknown symbol AC\u{fffd}ME"
        );
        assert_eq!(reason(&order(b"a1", b"acme")), "unknown symbol acme");
    }
}
