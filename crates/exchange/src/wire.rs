//! The exchange's inputs and outputs as bytes between processes (cluster mode): a gateway's
//! [`Command`] to an engine, and an engine's [`Outcome`] of one command back to every gateway.
//!
//! Role: the vocabulary of the command and event logs. A command is an owned `Input` with
//! the gateway's name for it (`Cause`: gateway, record, index) so that an engine applies it
//! at most once and a gateway knows which of its commands an outcome answers.
//!
//! Never: panics on any input; accepts trailing bytes or an unknown tag (a [`DecodeError`]).

use crate::codec::{opt_side_code, opt_side_from, side_code, side_from, Dec, DecodeError, Enc};
use crate::codec::{ord_type_code, ord_type_from, tif_code, tif_from};
use crate::{ClOrdId, Input, NewOrder, OrderRecord, OrderState, OwnedOutput, Principal, Reject};
use crate::{Replace, ReportKind, TradingStatus};
use types::{CancelReason, Event, Side, SymbolId};

/// An owned `Input` (every variant a gateway sends; checkpoints stay in each process).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Command {
    New {
        who: Principal,
        order: NewOrder,
    },
    Cancel {
        who: Principal,
        cl_ord_id: ClOrdId,
        orig_cl_ord_id: ClOrdId,
    },
    Replace {
        who: Principal,
        replace: Replace,
    },
    MassCancel {
        who: Principal,
        cl_ord_id: ClOrdId,
        symbol: Option<SymbolId>,
        side: Option<Side>,
        own: bool,
    },
    Status {
        who: Principal,
        cl_ord_id: ClOrdId,
    },
    Disconnected {
        who: Principal,
    },
    Tick,
    Continue,
}

impl Command {
    /// The owned copy of `i` (`None`: a checkpoint, or an operator's action, which is not
    /// routed to the engines yet).
    pub fn of(i: &Input<'_>) -> Option<Command> {
        Some(match *i {
            Input::New { who, order } => Command::New { who, order: *order },
            Input::Cancel {
                who,
                cl_ord_id,
                orig_cl_ord_id,
            } => Command::Cancel {
                who,
                cl_ord_id: *cl_ord_id,
                orig_cl_ord_id: *orig_cl_ord_id,
            },
            Input::Replace { who, replace } => Command::Replace {
                who,
                replace: *replace,
            },
            Input::MassCancel {
                who,
                cl_ord_id,
                symbol,
                side,
            } => Command::MassCancel {
                who,
                cl_ord_id: *cl_ord_id,
                symbol,
                side,
                own: false,
            },
            Input::CancelOwn {
                who,
                cl_ord_id,
                symbol,
                side,
            } => Command::MassCancel {
                who,
                cl_ord_id: *cl_ord_id,
                symbol,
                side,
                own: true,
            },
            Input::Status { who, cl_ord_id } => Command::Status {
                who,
                cl_ord_id: *cl_ord_id,
            },
            Input::Disconnected { who } => Command::Disconnected { who },
            Input::Tick => Command::Tick,
            Input::Continue => Command::Continue,
            Input::Checkpoint(_) | Input::Admin(_) => return None,
        })
    }

    /// Calls `f` with the input this is a copy of.
    pub fn with<R>(&self, f: impl FnOnce(&Input<'_>) -> R) -> R {
        match self {
            Command::New { who, order } => f(&Input::New { who: *who, order }),
            Command::Cancel {
                who,
                cl_ord_id,
                orig_cl_ord_id,
            } => f(&Input::Cancel {
                who: *who,
                cl_ord_id,
                orig_cl_ord_id,
            }),
            Command::Replace { who, replace } => f(&Input::Replace { who: *who, replace }),
            Command::MassCancel {
                who,
                cl_ord_id,
                symbol,
                side,
                own: false,
            } => f(&Input::MassCancel {
                who: *who,
                cl_ord_id,
                symbol: *symbol,
                side: *side,
            }),
            Command::MassCancel {
                who,
                cl_ord_id,
                symbol,
                side,
                own: true,
            } => f(&Input::CancelOwn {
                who: *who,
                cl_ord_id,
                symbol: *symbol,
                side: *side,
            }),
            Command::Status { who, cl_ord_id } => f(&Input::Status {
                who: *who,
                cl_ord_id,
            }),
            Command::Disconnected { who } => f(&Input::Disconnected { who: *who }),
            Command::Tick => f(&Input::Tick),
            Command::Continue => f(&Input::Continue),
        }
    }

    /// The principal it acts for (`None`: time and continuations).
    pub fn who(&self) -> Option<Principal> {
        match self {
            Command::New { who, .. }
            | Command::Cancel { who, .. }
            | Command::Replace { who, .. }
            | Command::MassCancel { who, .. }
            | Command::Status { who, .. }
            | Command::Disconnected { who } => Some(*who),
            Command::Tick | Command::Continue => None,
        }
    }

    /// The same command for another principal (a gateway's originators are numbered from its
    /// base in the cluster).
    pub fn with_who(mut self, p: Principal) -> Command {
        match &mut self {
            Command::New { who, .. }
            | Command::Cancel { who, .. }
            | Command::Replace { who, .. }
            | Command::MassCancel { who, .. }
            | Command::Status { who, .. }
            | Command::Disconnected { who } => *who = p,
            Command::Tick | Command::Continue => {}
        }
        self
    }

    pub fn encode(&self, e: &mut Enc<'_>) {
        let who = |e: &mut Enc<'_>, p: &Principal| {
            e.u32(p.originator as u32);
            e.u32(p.firm as u32);
        };
        match self {
            Command::New { who: w, order } => {
                e.u8(1);
                who(e, w);
                order.encode(e);
            }
            Command::Cancel {
                who: w,
                cl_ord_id,
                orig_cl_ord_id,
            } => {
                e.u8(2);
                who(e, w);
                e.cl(cl_ord_id);
                e.cl(orig_cl_ord_id);
            }
            Command::Replace { who: w, replace } => {
                // 9: a replace naming a stop price (kept last).
                e.u8(if replace.stop_price == 0 { 3 } else { 9 });
                who(e, w);
                replace.encode(e);
                if replace.stop_price != 0 {
                    replace.encode_stop(e);
                }
            }
            Command::MassCancel {
                who: w,
                cl_ord_id,
                symbol,
                side,
                own,
            } => {
                e.u8(4);
                who(e, w);
                e.cl(cl_ord_id);
                e.opt_u32(*symbol);
                e.u8(opt_side_code(*side));
                e.bool(*own);
            }
            Command::Status { who: w, cl_ord_id } => {
                e.u8(5);
                who(e, w);
                e.cl(cl_ord_id);
            }
            Command::Disconnected { who: w } => {
                e.u8(6);
                who(e, w);
            }
            Command::Tick => e.u8(7),
            Command::Continue => e.u8(8),
        }
    }

    pub fn decode(d: &mut Dec<'_>) -> Result<Command, DecodeError> {
        let tag = d.u8()?;
        let mut who = || -> Result<Principal, DecodeError> {
            let o = u16::try_from(d.u32()?).map_err(|_| DecodeError("bad originator"))?;
            let f = u16::try_from(d.u32()?).map_err(|_| DecodeError("bad firm"))?;
            Ok(Principal {
                originator: o,
                firm: f,
            })
        };
        Ok(match tag {
            1 => {
                let w = who()?;
                let mut order = NewOrder::BLANK;
                order.decode_into(d)?;
                Command::New { who: w, order }
            }
            2 => {
                let w = who()?;
                Command::Cancel {
                    who: w,
                    cl_ord_id: d.cl()?,
                    orig_cl_ord_id: d.cl()?,
                }
            }
            3 | 9 => {
                let w = who()?;
                let mut replace = Replace {
                    cl_ord_id: ClOrdId::EMPTY,
                    orig_cl_ord_id: ClOrdId::EMPTY,
                    symbol: 0,
                    price: 0,
                    qty: 0,
                    stop_price: 0,
                };
                replace.decode_into(d)?;
                if tag == 9 {
                    replace.decode_stop_into(d)?;
                }
                Command::Replace { who: w, replace }
            }
            4 => {
                let w = who()?;
                Command::MassCancel {
                    who: w,
                    cl_ord_id: d.cl()?,
                    symbol: d.opt_u32()?,
                    side: opt_side_from(d.u8()?)?,
                    own: d.bool()?,
                }
            }
            5 => {
                let w = who()?;
                Command::Status {
                    who: w,
                    cl_ord_id: d.cl()?,
                }
            }
            6 => Command::Disconnected { who: who()? },
            7 => Command::Tick,
            8 => Command::Continue,
            _ => return Err(DecodeError("bad command tag")),
        })
    }
}

/// Which gateway command an outcome answers: the gateway, its journal record, and the
/// command's number within the record (a record may send several).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Cause {
    /// 0: the engine's own command (time, a continuation).
    pub gateway: u16,
    pub record: u64,
    pub index: u16,
}

impl Cause {
    pub fn encode(&self, e: &mut Enc<'_>) {
        e.u32(self.gateway as u32);
        e.u64(self.record);
        e.u32(self.index as u32);
    }
    pub fn decode(d: &mut Dec<'_>) -> Result<Cause, DecodeError> {
        Ok(Cause {
            gateway: u16::try_from(d.u32()?).map_err(|_| DecodeError("bad gateway"))?,
            record: d.u64()?,
            index: u16::try_from(d.u32()?).map_err(|_| DecodeError("bad command index"))?,
        })
    }
}

/// One output as it crosses processes: an owned output, the market's status, or a trade or
/// a price level's change for market data (`Event::Trade` and `Event::Level` only).
// Most outputs are reports, the large variant: boxing it would allocate once more per report.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Sent {
    Owned(OwnedOutput),
    TradingStatus(TradingStatus),
    Market(Event),
}

fn cancel_reason_code(r: CancelReason) -> u8 {
    match r {
        CancelReason::User => 1,
        CancelReason::Ioc => 2,
        CancelReason::Fok => 3,
        CancelReason::Stp => 4,
        CancelReason::NoLiquidity => 5,
        CancelReason::Expired => 6,
        CancelReason::Disconnect => 7,
        CancelReason::Collar => 8,
        CancelReason::Operator => 9,
    }
}

fn cancel_reason_from(c: u8) -> Result<CancelReason, DecodeError> {
    Ok(match c {
        1 => CancelReason::User,
        2 => CancelReason::Ioc,
        3 => CancelReason::Fok,
        4 => CancelReason::Stp,
        5 => CancelReason::NoLiquidity,
        6 => CancelReason::Expired,
        7 => CancelReason::Disconnect,
        8 => CancelReason::Collar,
        9 => CancelReason::Operator,
        _ => return Err(DecodeError("bad cancel reason")),
    })
}

fn status_code(s: crate::OrderStatus) -> u8 {
    use crate::OrderStatus as S;
    match s {
        S::New => 1,
        S::PartiallyFilled => 2,
        S::Filled => 3,
        S::Canceled => 4,
        S::Expired => 5,
    }
}

fn status_from(c: u8) -> Result<crate::OrderStatus, DecodeError> {
    use crate::OrderStatus as S;
    Ok(match c {
        1 => S::New,
        2 => S::PartiallyFilled,
        3 => S::Filled,
        4 => S::Canceled,
        5 => S::Expired,
        _ => return Err(DecodeError("bad order status")),
    })
}

fn encode_order(o: &OrderRecord, e: &mut Enc<'_>) {
    e.u32(o.owner as u32);
    e.u32(o.account);
    e.u32(o.symbol);
    e.u8(side_code(o.side));
    e.u8(ord_type_code(o.ord_type));
    e.u8(tif_code(o.tif));
    e.i64(o.price);
    e.cl(&o.cl_ord_id);
    e.u64(o.order_qty);
    e.u64(o.cum_qty);
    e.u64(o.leaves_qty);
    e.bytes(&o.notional.to_le_bytes());
    e.u8(o.state as u8);
}

fn decode_order(d: &mut Dec<'_>) -> Result<OrderRecord, DecodeError> {
    Ok(OrderRecord {
        owner: u16::try_from(d.u32()?).map_err(|_| DecodeError("bad owner"))?,
        account: d.u32()?,
        symbol: d.u32()?,
        side: side_from(d.u8()?)?,
        ord_type: ord_type_from(d.u8()?)?,
        tif: tif_from(d.u8()?)?,
        price: d.i64()?,
        cl_ord_id: d.cl()?,
        order_qty: d.u64()?,
        cum_qty: d.u64()?,
        leaves_qty: d.u64()?,
        notional: i128::from_le_bytes(
            d.bytes()?
                .try_into()
                .map_err(|_| DecodeError("bad notional"))?,
        ),
        state: match d.u8()? {
            0 => OrderState::Live,
            1 => OrderState::Filled,
            2 => OrderState::Canceled,
            3 => OrderState::Expired,
            _ => return Err(DecodeError("bad order state")),
        },
    })
}

fn opt_cl(e: &mut Enc<'_>, c: &Option<ClOrdId>) {
    e.bool(c.is_some());
    if let Some(c) = c {
        e.cl(c);
    }
}

fn opt_cl_from(d: &mut Dec<'_>) -> Result<Option<ClOrdId>, DecodeError> {
    Ok(if d.bool()? { Some(d.cl()?) } else { None })
}

impl Sent {
    pub fn encode(&self, e: &mut Enc<'_>) {
        match self {
            Sent::Owned(OwnedOutput::Report {
                id,
                order,
                n,
                kind,
                cl_ord_id,
                orig_cl_ord_id,
                ext,
            }) => {
                e.u8(1);
                e.u64(*id);
                encode_order(order, e);
                e.u32(*n);
                match kind {
                    ReportKind::New => e.u8(1),
                    ReportKind::Fill { price, qty } => {
                        e.u8(2);
                        e.i64(*price);
                        e.u64(*qty);
                    }
                    ReportKind::Canceled(r) => {
                        e.u8(3);
                        e.u8(cancel_reason_code(*r));
                    }
                    ReportKind::Replaced => e.u8(4),
                    ReportKind::Status => e.u8(5),
                    ReportKind::Triggered => e.u8(6),
                }
                e.cl(cl_ord_id);
                opt_cl(e, orig_cl_ord_id);
                e.i64(ext.stop_price);
                e.u64(ext.display_qty);
                e.u64(ext.expire_ns);
                e.bool(ext.triggered);
            }
            Sent::Owned(OwnedOutput::NewRejected {
                to,
                order,
                reason,
                n,
            }) => {
                e.u8(2);
                e.u32(*to as u32);
                order.encode(e);
                reason.encode(e);
                e.u32(*n);
            }
            Sent::Owned(OwnedOutput::CancelRejected {
                to,
                cl_ord_id,
                orig_cl_ord_id,
                replace,
                reason,
                order,
            }) => {
                e.u8(3);
                e.u32(*to as u32);
                e.cl(cl_ord_id);
                e.cl(orig_cl_ord_id);
                e.bool(*replace);
                reason.encode(e);
                e.bool(order.is_some());
                if let Some((id, s)) = order {
                    e.u64(*id);
                    e.u8(status_code(*s));
                }
            }
            Sent::Owned(OwnedOutput::MassCanceled {
                to,
                cl_ord_id,
                symbol,
                side,
                request_seq,
                count,
            }) => {
                e.u8(4);
                e.u32(*to as u32);
                e.cl(cl_ord_id);
                e.opt_u32(*symbol);
                e.u8(opt_side_code(*side));
                e.u64(*request_seq);
                e.u64(*count);
            }
            Sent::Owned(OwnedOutput::StatusUnknown { to, cl_ord_id, n }) => {
                e.u8(5);
                e.u32(*to as u32);
                e.cl(cl_ord_id);
                e.u32(*n);
            }
            Sent::TradingStatus(s) => {
                e.u8(6);
                e.u8(match s {
                    TradingStatus::Open => 1,
                    TradingStatus::Closed => 2,
                });
            }
            Sent::Market(Event::Trade {
                trade_id,
                symbol,
                price,
                qty,
                maker_id,
                taker_id,
                maker_account,
                taker_account,
                taker_side,
                maker_leaves,
                taker_leaves,
            }) => {
                e.u8(7);
                e.u64(*trade_id);
                e.u32(*symbol);
                e.i64(*price);
                e.u64(*qty);
                e.u64(*maker_id);
                e.u64(*taker_id);
                e.u32(*maker_account);
                e.u32(*taker_account);
                e.u8(side_code(*taker_side));
                e.u64(*maker_leaves);
                e.u64(*taker_leaves);
            }
            Sent::Market(Event::Level {
                symbol,
                side,
                price,
                qty,
                orders,
            }) => {
                e.u8(8);
                e.u32(*symbol);
                e.u8(side_code(*side));
                e.i64(*price);
                e.u64(*qty);
                e.u32(*orders);
            }
            // Never made: only trades and levels are market data (`Output::Market`).
            Sent::Market(_) => e.u8(0),
        }
    }

    pub fn decode(d: &mut Dec<'_>) -> Result<Sent, DecodeError> {
        let to = |d: &mut Dec<'_>| u16::try_from(d.u32()?).map_err(|_| DecodeError("bad to"));
        Ok(match d.u8()? {
            1 => {
                let id = d.u64()?;
                let order = decode_order(d)?;
                let n = d.u32()?;
                let kind = match d.u8()? {
                    1 => ReportKind::New,
                    2 => ReportKind::Fill {
                        price: d.i64()?,
                        qty: d.u64()?,
                    },
                    3 => ReportKind::Canceled(cancel_reason_from(d.u8()?)?),
                    4 => ReportKind::Replaced,
                    5 => ReportKind::Status,
                    6 => ReportKind::Triggered,
                    _ => return Err(DecodeError("bad report kind")),
                };
                Sent::Owned(OwnedOutput::Report {
                    id,
                    order,
                    n,
                    kind,
                    cl_ord_id: d.cl()?,
                    orig_cl_ord_id: opt_cl_from(d)?,
                    ext: crate::OrderExt {
                        stop_price: d.i64()?,
                        display_qty: d.u64()?,
                        expire_ns: d.u64()?,
                        triggered: d.bool()?,
                    },
                })
            }
            2 => {
                let to = to(d)?;
                let mut order = NewOrder::BLANK;
                order.decode_into(d)?;
                Sent::Owned(OwnedOutput::NewRejected {
                    to,
                    order,
                    reason: Reject::decode(d)?,
                    n: d.u32()?,
                })
            }
            3 => {
                let to = to(d)?;
                let cl_ord_id = d.cl()?;
                let orig_cl_ord_id = d.cl()?;
                let replace = d.bool()?;
                let reason = Reject::decode(d)?;
                let order = if d.bool()? {
                    Some((d.u64()?, status_from(d.u8()?)?))
                } else {
                    None
                };
                Sent::Owned(OwnedOutput::CancelRejected {
                    to,
                    cl_ord_id,
                    orig_cl_ord_id,
                    replace,
                    reason,
                    order,
                })
            }
            4 => Sent::Owned(OwnedOutput::MassCanceled {
                to: to(d)?,
                cl_ord_id: d.cl()?,
                symbol: d.opt_u32()?,
                side: opt_side_from(d.u8()?)?,
                request_seq: d.u64()?,
                count: d.u64()?,
            }),
            5 => Sent::Owned(OwnedOutput::StatusUnknown {
                to: to(d)?,
                cl_ord_id: d.cl()?,
                n: d.u32()?,
            }),
            6 => Sent::TradingStatus(match d.u8()? {
                1 => TradingStatus::Open,
                2 => TradingStatus::Closed,
                _ => return Err(DecodeError("bad trading status")),
            }),
            7 => Sent::Market(Event::Trade {
                trade_id: d.u64()?,
                symbol: d.u32()?,
                price: d.i64()?,
                qty: d.u64()?,
                maker_id: d.u64()?,
                taker_id: d.u64()?,
                maker_account: d.u32()?,
                taker_account: d.u32()?,
                taker_side: side_from(d.u8()?)?,
                maker_leaves: d.u64()?,
                taker_leaves: d.u64()?,
            }),
            8 => Sent::Market(Event::Level {
                symbol: d.u32()?,
                side: side_from(d.u8()?)?,
                price: d.i64()?,
                qty: d.u64()?,
                orders: d.u32()?,
            }),
            _ => return Err(DecodeError("bad output tag")),
        })
    }
}

/// Everything one command caused on one shard, as the engine publishes it: the command's
/// offset in its shard's log, the leader epoch it was applied under, its cause, its outputs.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub epoch: u32,
    /// The command's offset in the shard's partition of the command log.
    pub offset: u64,
    /// The time the engine applied it at (ns since the epoch).
    pub ts_ns: u64,
    /// An outcome too large for one record is published in parts (`split`), numbered from 0;
    /// `last` marks the final one.
    pub part: u32,
    pub last: bool,
    pub cause: Cause,
    pub outputs: Vec<Sent>,
}

/// The most bytes of one published part: below the journal's record limit (64 KiB) with room
/// for a gateway's record header, and far below Kafka's message limit (1 MB).
pub const PART_BYTES_MAX: usize = 60_000;

impl Outcome {
    pub fn encode(&self, out: &mut Vec<u8>) {
        self.encode_part(self.part, self.last, &self.outputs, out);
    }

    /// This outcome's fields with `part`, `last` and `outputs` in their place.
    fn encode_part(&self, part: u32, last: bool, outputs: &[Sent], out: &mut Vec<u8>) {
        let mut e = Enc(out);
        e.u32(self.epoch);
        e.u64(self.offset);
        e.u64(self.ts_ns);
        e.u32(part);
        e.bool(last);
        self.cause.encode(&mut e);
        e.u32(outputs.len() as u32);
        for o in outputs {
            o.encode(&mut e);
        }
    }

    pub fn decode(bytes: &[u8]) -> Result<Outcome, DecodeError> {
        let mut d = Dec(bytes);
        let epoch = d.u32()?;
        let offset = d.u64()?;
        let ts_ns = d.u64()?;
        let part = d.u32()?;
        let last = d.bool()?;
        let cause = Cause::decode(&mut d)?;
        let n = d.u32()? as usize;
        // Each output takes at least two bytes: a count beyond that is a bad record, not an
        // allocation.
        if n > bytes.len() / 2 {
            return Err(DecodeError("bad output count"));
        }
        let mut outputs = Vec::with_capacity(n);
        for _ in 0..n {
            outputs.push(Sent::decode(&mut d)?);
        }
        d.end()?;
        Ok(Outcome {
            epoch,
            offset,
            ts_ns,
            part,
            last,
            cause,
            outputs,
        })
    }

    /// (epoch, command offset, part, last) of an encoded outcome, without decoding the rest.
    pub fn position(bytes: &[u8]) -> Option<(u32, u64, u32, bool)> {
        let mut d = Dec(bytes);
        let epoch = d.u32().ok()?;
        let offset = d.u64().ok()?;
        let _ts = d.u64().ok()?;
        Some((epoch, offset, d.u32().ok()?, d.bool().ok()?))
    }

    /// Its encoding in parts of at most `max` bytes each (one part if it fits; an output
    /// larger than `max` alone gets a part of its own). The same outcome always splits the
    /// same way, so a part published twice (by a new active) is the same bytes.
    pub fn encode_parts(&self, max: usize) -> Vec<Vec<u8>> {
        let mut whole = Vec::new();
        self.encode(&mut whole);
        if whole.len() <= max {
            return vec![whole];
        }
        let mut header = Vec::new();
        self.encode_part(self.part, self.last, &[], &mut header);
        // Where each part's outputs end.
        let mut ends = Vec::new();
        let (mut start, mut size) = (0, header.len());
        let mut one = Vec::new();
        for (i, o) in self.outputs.iter().enumerate() {
            one.clear();
            o.encode(&mut Enc(&mut one));
            if i > start && size + one.len() > max {
                ends.push(i);
                (start, size) = (i, header.len());
            }
            size += one.len();
        }
        ends.push(self.outputs.len());
        let n = ends.len();
        let mut start = 0;
        ends.iter()
            .enumerate()
            .map(|(k, &end)| {
                let mut b = Vec::new();
                self.encode_part(k as u32, k + 1 == n, &self.outputs[start..end], &mut b);
                start = end;
                b
            })
            .collect()
    }
}

/// The body of the `cluster_wire` fuzz target: `data` as an outcome and as a command never
/// panics, and what decodes encodes to bytes that decode to the same value and encode to the
/// same bytes again (the encoding of a decoded value is canonical; the input's need not be:
/// an absent symbol's bytes are read and dropped).
#[doc(hidden)]
pub fn fuzz_decode(data: &[u8]) {
    if let Ok(o) = Outcome::decode(data) {
        let mut b = Vec::new();
        o.encode(&mut b);
        let back = Outcome::decode(&b).expect("an encoded outcome decodes");
        assert_eq!(format!("{back:?}"), format!("{o:?}"));
        let mut again = Vec::new();
        back.encode(&mut again);
        assert_eq!(again, b);
    }
    let mut d = Dec(data);
    if let Ok(c) = Command::decode(&mut d) {
        let mut b = Vec::new();
        c.encode(&mut Enc(&mut b));
        let mut d2 = Dec(&b);
        assert_eq!(Command::decode(&mut d2), Ok(c));
        assert!(
            d2.end().is_ok(),
            "{c:?}: trailing bytes in its own encoding"
        );
        assert_eq!(c.with(Command::of), Some(c));
    }
    let mut d = Dec(data);
    if let Ok(s) = Sent::decode(&mut d) {
        let mut b = Vec::new();
        s.encode(&mut Enc(&mut b));
        let mut d2 = Dec(&b);
        let back = Sent::decode(&mut d2).expect("an encoded output decodes");
        assert!(
            d2.end().is_ok(),
            "{s:?}: trailing bytes in its own encoding"
        );
        assert_eq!(format!("{back:?}"), format!("{s:?}"));
    }
}

#[cfg(test)]
mod tests;
