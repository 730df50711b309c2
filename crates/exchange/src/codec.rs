//! The binary encoding of journal records, shared by the exchange and its edges: one tag byte
//! per variant, fixed-width little-endian integers, `u16`-length-prefixed strings, client
//! order ids decoded inline without allocating.
//!
//! Never: panics on any input; accepts trailing bytes, a short record, a bad bool or a
//! string that is not UTF-8 where UTF-8 is required (each is a [`DecodeError`]).

use crate::{ClOrdId, CL_ORD_ID_LEN_MAX};
use std::fmt;
use types::{OrdType, Side, TimeInForce};

#[derive(Debug, PartialEq, Eq)]
pub struct DecodeError(pub &'static str);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad input record: {}", self.0)
    }
}
impl std::error::Error for DecodeError {}

/// Appends fields to a record.
pub struct Enc<'a>(pub &'a mut Vec<u8>);

impl Enc<'_> {
    #[inline]
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    #[inline]
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    #[inline]
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    #[inline]
    pub fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    #[inline]
    pub fn bool(&mut self, v: bool) {
        self.0.push(v as u8);
    }
    /// Bytes, `u16`-length-prefixed (cut to 65,535).
    #[inline]
    pub fn bytes(&mut self, b: &[u8]) {
        let b = &b[..b.len().min(u16::MAX as usize)];
        self.0.extend_from_slice(&(b.len() as u16).to_le_bytes());
        self.0.extend_from_slice(b);
    }
    #[inline]
    pub fn cl(&mut self, c: &ClOrdId) {
        self.bytes(c.as_bytes());
    }
    pub fn opt_u64(&mut self, v: Option<u64>) {
        self.bool(v.is_some());
        self.u64(v.unwrap_or(0));
    }
    pub fn opt_u32(&mut self, v: Option<u32>) {
        self.bool(v.is_some());
        self.u32(v.unwrap_or(0));
    }
}

/// Reads fields of a record.
pub struct Dec<'a>(pub &'a [u8]);

impl<'a> Dec<'a> {
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        if self.0.len() < n {
            return Err(DecodeError("short record"));
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    /// The next `N` bytes as an array: one length check for a run of fixed-width fields.
    #[inline]
    pub fn array<const N: usize>(&mut self) -> Result<&'a [u8; N], DecodeError> {
        let (a, rest) = self
            .0
            .split_first_chunk::<N>()
            .ok_or(DecodeError("short record"))?;
        self.0 = rest;
        Ok(a)
    }
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_le_bytes(*self.array::<4>()?))
    }
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        Ok(u64::from_le_bytes(*self.array::<8>()?))
    }
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_le_bytes(*self.array::<8>()?))
    }
    pub fn bool(&mut self) -> Result<bool, DecodeError> {
        bool_from(self.u8()?)
    }
    pub fn opt_u64(&mut self) -> Result<Option<u64>, DecodeError> {
        let has = self.bool()?;
        let v = self.u64()?;
        Ok(has.then_some(v))
    }
    pub fn opt_u32(&mut self) -> Result<Option<u32>, DecodeError> {
        let has = self.bool()?;
        let v = self.u32()?;
        Ok(has.then_some(v))
    }
    /// `u16`-length-prefixed bytes.
    pub fn bytes(&mut self) -> Result<&'a [u8], DecodeError> {
        let n = u16::from_le_bytes(*self.array::<2>()?) as usize;
        self.take(n)
    }
    /// `u16`-length-prefixed UTF-8.
    pub fn str(&mut self) -> Result<&'a str, DecodeError> {
        std::str::from_utf8(self.bytes()?).map_err(|_| DecodeError("string is not UTF-8"))
    }
    /// A client order id, without allocating.
    pub fn cl(&mut self) -> Result<ClOrdId, DecodeError> {
        let mut c = ClOrdId::EMPTY;
        self.cl_into(&mut c)?;
        Ok(c)
    }
    /// [`Dec::cl`] into an existing one (see [`ClOrdId::set_from_bytes`]).
    #[inline(always)]
    pub fn cl_into(&mut self, c: &mut ClOrdId) -> Result<(), DecodeError> {
        let n = u16::from_le_bytes(*self.array::<2>()?) as usize;
        if n > CL_ORD_ID_LEN_MAX {
            return Err(DecodeError("ClOrdID longer than 64 bytes"));
        }
        if c.set_from_bytes(self.take(n)?) {
            Ok(())
        } else {
            Err(DecodeError("string is not UTF-8"))
        }
    }
    /// Fails unless everything was read.
    pub fn end(&self) -> Result<(), DecodeError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(DecodeError("trailing bytes"))
        }
    }
}

#[inline]
pub fn u32_at<const N: usize>(a: &[u8; N], at: usize) -> u32 {
    u32::from_le_bytes(a[at..at + 4].try_into().expect("4 bytes"))
}
#[inline]
pub fn u64_at<const N: usize>(a: &[u8; N], at: usize) -> u64 {
    u64::from_le_bytes(a[at..at + 8].try_into().expect("8 bytes"))
}
#[inline]
pub fn bool_from(c: u8) -> Result<bool, DecodeError> {
    match c {
        0 => Ok(false),
        1 => Ok(true),
        _ => Err(DecodeError("bad bool")),
    }
}

pub fn side_code(s: Side) -> u8 {
    match s {
        Side::Buy => 1,
        Side::Sell => 2,
    }
}
pub fn side_from(c: u8) -> Result<Side, DecodeError> {
    match c {
        1 => Ok(Side::Buy),
        2 => Ok(Side::Sell),
        _ => Err(DecodeError("bad side")),
    }
}
pub fn opt_side_code(s: Option<Side>) -> u8 {
    s.map(side_code).unwrap_or(0)
}
pub fn opt_side_from(c: u8) -> Result<Option<Side>, DecodeError> {
    if c == 0 {
        Ok(None)
    } else {
        side_from(c).map(Some)
    }
}
pub fn ord_type_code(t: OrdType) -> u8 {
    match t {
        OrdType::Limit => 1,
        OrdType::Market => 2,
    }
}
pub fn ord_type_from(c: u8) -> Result<OrdType, DecodeError> {
    match c {
        1 => Ok(OrdType::Limit),
        2 => Ok(OrdType::Market),
        _ => Err(DecodeError("bad ord type")),
    }
}
pub fn tif_code(t: TimeInForce) -> u8 {
    match t {
        TimeInForce::Day => 0,
        TimeInForce::Gtc => 1,
        TimeInForce::Ioc => 3,
        TimeInForce::Fok => 4,
        TimeInForce::Gtd => 5,
    }
}
pub fn tif_from(c: u8) -> Result<TimeInForce, DecodeError> {
    match c {
        0 => Ok(TimeInForce::Day),
        1 => Ok(TimeInForce::Gtc),
        3 => Ok(TimeInForce::Ioc),
        4 => Ok(TimeInForce::Fok),
        5 => Ok(TimeInForce::Gtd),
        _ => Err(DecodeError("bad tif")),
    }
}

impl crate::NewOrder {
    /// Appends the order: ClOrdID, then symbol u32 | side u8 | ord type u8 | tif u8 | price
    /// i64 | qty u64 | has account u8 | account u32 | flags u8 (bit 0 post only, bit 1 order
    /// types II follow: stop price i64 | display qty u64 | expire ns u64).
    pub fn encode(&self, e: &mut Enc<'_>) {
        e.cl(&self.cl_ord_id);
        e.u32(self.symbol);
        e.u8(side_code(self.side));
        e.u8(ord_type_code(self.ord_type));
        e.u8(tif_code(self.tif));
        e.i64(self.price);
        e.u64(self.qty);
        e.u8(self.account.is_some() as u8);
        e.u32(self.account.unwrap_or(0));
        let ext = self.stop_price != 0 || self.display_qty != 0 || self.expire_ns != 0;
        e.u8(self.post_only as u8 | (ext as u8) << 1);
        if ext {
            e.i64(self.stop_price);
            e.u64(self.display_qty);
            e.u64(self.expire_ns);
        }
    }
    /// Decodes into `self`, field by field (replay decodes into recycled slots).
    #[inline(always)]
    pub fn decode_into(&mut self, d: &mut Dec<'_>) -> Result<(), DecodeError> {
        d.cl_into(&mut self.cl_ord_id)?;
        let f = d.array::<29>()?;
        self.symbol = u32_at(f, 0);
        self.side = side_from(f[4])?;
        self.ord_type = ord_type_from(f[5])?;
        self.tif = tif_from(f[6])?;
        self.price = u64_at(f, 7) as i64;
        self.qty = u64_at(f, 15);
        self.account = bool_from(f[23])?.then_some(u32_at(f, 24));
        let flags = f[28];
        if flags > 3 {
            return Err(DecodeError("bad order flags"));
        }
        self.post_only = flags & 1 != 0;
        if flags & 2 != 0 {
            let x = d.array::<24>()?;
            self.stop_price = u64_at(x, 0) as i64;
            self.display_qty = u64_at(x, 8);
            self.expire_ns = u64_at(x, 16);
        } else {
            self.stop_price = 0;
            self.display_qty = 0;
            self.expire_ns = 0;
        }
        Ok(())
    }
}

impl crate::Replace {
    /// ClOrdID, OrigClOrdID, then symbol u32 | price i64 | qty u64.
    pub fn encode(&self, e: &mut Enc<'_>) {
        e.cl(&self.cl_ord_id);
        e.cl(&self.orig_cl_ord_id);
        e.u32(self.symbol);
        e.i64(self.price);
        e.u64(self.qty);
    }
    /// Decodes into `self` (its stop price set to none: a record that has one carries it
    /// after, `decode_stop_into`).
    #[inline(always)]
    pub fn decode_into(&mut self, d: &mut Dec<'_>) -> Result<(), DecodeError> {
        d.cl_into(&mut self.cl_ord_id)?;
        d.cl_into(&mut self.orig_cl_ord_id)?;
        let f = d.array::<20>()?;
        self.symbol = u32_at(f, 0);
        self.price = u64_at(f, 4) as i64;
        self.qty = u64_at(f, 12);
        self.stop_price = 0;
        Ok(())
    }

    /// The stop price, after `encode` in records of a replace that names one (their own
    /// record kind, so records without one are those written before it existed).
    pub fn encode_stop(&self, e: &mut Enc<'_>) {
        e.i64(self.stop_price);
    }

    pub fn decode_stop_into(&mut self, d: &mut Dec<'_>) -> Result<(), DecodeError> {
        self.stop_price = d.i64()?;
        if self.stop_price <= 0 {
            return Err(DecodeError("bad stop price"));
        }
        Ok(())
    }
}

impl crate::Checkpoint {
    pub fn encode(&self, e: &mut Enc<'_>) {
        e.u64(self.next_order_id);
        e.u64(self.next_trade_id);
    }
    pub fn decode(d: &mut Dec<'_>) -> Result<crate::Checkpoint, DecodeError> {
        Ok(crate::Checkpoint {
            next_order_id: d.u64()?,
            next_trade_id: d.u64()?,
        })
    }
}

impl crate::AdminAction {
    /// One byte for the action, then its fields.
    pub fn encode(&self, e: &mut Enc<'_>) {
        use crate::AdminAction as A;
        match *self {
            A::Kill { firm, account } | A::Unblock { firm, account } => {
                e.u8(if matches!(self, A::Kill { .. }) { 1 } else { 2 });
                e.u32(u32::from(firm));
                e.opt_u32(account);
            }
            A::SetStatus { symbol, status } => {
                e.u8(3);
                e.u32(symbol);
                e.u8(status_code(status));
            }
            A::SetRisk { symbol, risk } => {
                e.u8(4);
                e.u32(symbol);
                e.opt_u32(risk.band_bps);
                e.bool(risk.reference_price.is_some());
                e.i64(risk.reference_price.unwrap_or(0));
                e.opt_u64(risk.max_order_qty);
                e.bool(risk.max_order_notional.is_some());
                e.0.extend_from_slice(&risk.max_order_notional.unwrap_or(0).to_le_bytes());
                // 0: no breaker, 1: one, 2: one with a reopening auction (its length last).
                let b = risk.breaker.unwrap_or_default();
                e.u8(match risk.breaker {
                    None => 0,
                    Some(b) if b.auction_ns == 0 => 1,
                    Some(_) => 2,
                });
                e.u32(b.bps);
                e.u64(b.window_ns);
                e.u64(b.halt_ns);
                if b.auction_ns != 0 {
                    e.u64(b.auction_ns);
                }
            }
        }
    }

    pub fn decode(d: &mut Dec<'_>) -> Result<crate::AdminAction, DecodeError> {
        use crate::AdminAction as A;
        let firm = |d: &mut Dec<'_>| u16::try_from(d.u32()?).map_err(|_| DecodeError("bad firm"));
        Ok(match d.u8()? {
            1 => A::Kill {
                firm: firm(d)?,
                account: d.opt_u32()?,
            },
            2 => A::Unblock {
                firm: firm(d)?,
                account: d.opt_u32()?,
            },
            3 => A::SetStatus {
                symbol: d.u32()?,
                status: status_from(d.u8()?)?,
            },
            4 => {
                let symbol = d.u32()?;
                let band_bps = d.opt_u32()?;
                let has_ref = d.bool()?;
                let reference = d.i64()?;
                let max_order_qty = d.opt_u64()?;
                let has_notional = d.bool()?;
                let notional = i128_le(d)?;
                let breaker_tag = d.u8()?;
                if breaker_tag > 2 {
                    return Err(DecodeError("bad breaker"));
                }
                let has_breaker = breaker_tag != 0;
                let breaker = crate::Breaker {
                    bps: d.u32()?,
                    window_ns: d.u64()?,
                    halt_ns: d.u64()?,
                    auction_ns: if breaker_tag == 2 { d.u64()? } else { 0 },
                };
                A::SetRisk {
                    symbol,
                    risk: crate::InstrumentRisk {
                        band_bps,
                        reference_price: has_ref.then_some(reference),
                        max_order_qty,
                        max_order_notional: has_notional.then_some(notional),
                        breaker: has_breaker.then_some(breaker),
                    },
                }
            }
            _ => return Err(DecodeError("bad admin action")),
        })
    }
}

fn status_code(s: crate::InstrumentStatus) -> u8 {
    match s {
        crate::InstrumentStatus::Open => 0,
        crate::InstrumentStatus::Halted => 1,
        crate::InstrumentStatus::Closed => 2,
        crate::InstrumentStatus::PreOpen => 3,
        crate::InstrumentStatus::PreClose => 4,
    }
}

fn status_from(c: u8) -> Result<crate::InstrumentStatus, DecodeError> {
    Ok(match c {
        0 => crate::InstrumentStatus::Open,
        1 => crate::InstrumentStatus::Halted,
        2 => crate::InstrumentStatus::Closed,
        3 => crate::InstrumentStatus::PreOpen,
        4 => crate::InstrumentStatus::PreClose,
        _ => return Err(DecodeError("bad instrument status")),
    })
}

/// A count of decimals a price or notional may have (at most 18, as a tick's).
fn decimals(v: u8) -> Result<u8, DecodeError> {
    if v <= 18 {
        Ok(v)
    } else {
        Err(DecodeError("bad decimals"))
    }
}

fn i128_le(d: &mut Dec<'_>) -> Result<i128, DecodeError> {
    let b = d.take(16)?;
    Ok(i128::from_le_bytes(b.try_into().expect("16 bytes")))
}

const FIELDS: [types::Field; 12] = [
    types::Field::Id,
    types::Field::Account,
    types::Field::Symbol,
    types::Field::Side,
    types::Field::OrdType,
    types::Field::Tif,
    types::Field::Price,
    types::Field::Qty,
    types::Field::Stp,
    types::Field::StopPrice,
    types::Field::DisplayQty,
    types::Field::ExpireTime,
];

impl crate::Reject {
    /// One byte for the reason, one for the field of `InvalidField`.
    pub fn encode(self, e: &mut Enc<'_>) {
        use crate::Reject as R;
        let (code, field) = match self {
            R::UnknownSymbol => (1, 0),
            R::UnknownAccount => (2, 0),
            R::DuplicateClOrdId => (3, 0),
            R::UnknownOrder => (4, 0),
            R::InvalidPrice => (5, 0),
            R::InvalidQty => (6, 0),
            R::InvalidField(f) => (7, FIELDS.iter().position(|x| *x == f).unwrap_or(0) as u8),
            R::DuplicateOrderId => (8, 0),
            R::PostOnlyWouldCross => (9, 0),
            R::CapacityExceeded => (10, 0),
            R::ReplaceSymbolDiffers => (11, 0),
            R::ReplaceQtyAtOrBelowFilled => (12, 0),
            R::ReplaceMarketOrder => (13, 0),
            R::ExchangeBusy => (14, 0),
            R::MarketClosed { .. } => (15, 0),
            R::FirmOpenOrderLimit { .. } => (16, 0),
            R::AccountOpenOrderLimit { .. } => (17, 0),
            R::PriceBand { .. } => (18, 0),
            R::RiskLimit { kind, .. } => (19, kind.code()),
            R::Blocked { .. } => (20, 0),
            R::InstrumentNotOpen { status } => (21, status_code(status)),
            R::AuctionCall => (22, 0),
            R::ExpireTimePast => (23, 0),
            R::StopPriceChange => (24, 0),
        };
        e.u8(code);
        e.u8(field);
        match self {
            R::MarketClosed { opens_at_s } => e.u32(opens_at_s),
            R::FirmOpenOrderLimit { limit } => e.u64(limit),
            R::AccountOpenOrderLimit { account, limit } => {
                e.u32(account);
                e.u64(limit);
            }
            R::PriceBand {
                price,
                low,
                high,
                decimals,
            } => {
                e.i64(price);
                e.i64(low);
                e.i64(high);
                e.u8(decimals);
            }
            R::RiskLimit {
                value,
                limit,
                decimals,
                ..
            } => {
                e.0.extend_from_slice(&value.to_le_bytes());
                e.0.extend_from_slice(&limit.to_le_bytes());
                e.u8(decimals);
            }
            R::Blocked { account } => e.opt_u32(account),
            _ => {}
        }
    }

    pub fn decode(d: &mut Dec<'_>) -> Result<crate::Reject, DecodeError> {
        use crate::Reject as R;
        let (code, field) = (d.u8()?, d.u8()?);
        if !matches!(code, 7 | 19 | 21) && field != 0 {
            return Err(DecodeError("bad reject field"));
        }
        Ok(match code {
            1 => R::UnknownSymbol,
            2 => R::UnknownAccount,
            3 => R::DuplicateClOrdId,
            4 => R::UnknownOrder,
            5 => R::InvalidPrice,
            6 => R::InvalidQty,
            7 => R::InvalidField(
                *FIELDS
                    .get(field as usize)
                    .ok_or(DecodeError("bad reject field"))?,
            ),
            8 => R::DuplicateOrderId,
            9 => R::PostOnlyWouldCross,
            10 => R::CapacityExceeded,
            11 => R::ReplaceSymbolDiffers,
            12 => R::ReplaceQtyAtOrBelowFilled,
            13 => R::ReplaceMarketOrder,
            14 => R::ExchangeBusy,
            15 => R::MarketClosed {
                opens_at_s: match d.u32()? {
                    s if s < 86_400 => s,
                    _ => return Err(DecodeError("bad market opening time")),
                },
            },
            16 => R::FirmOpenOrderLimit { limit: d.u64()? },
            17 => R::AccountOpenOrderLimit {
                account: d.u32()?,
                limit: d.u64()?,
            },
            18 => R::PriceBand {
                price: d.i64()?,
                low: d.i64()?,
                high: d.i64()?,
                decimals: decimals(d.u8()?)?,
            },
            19 => R::RiskLimit {
                kind: crate::RiskKind::from_code(field)
                    .ok_or(DecodeError("bad risk limit kind"))?,
                value: i128_le(d)?,
                limit: i128_le(d)?,
                decimals: decimals(d.u8()?)?,
            },
            20 => R::Blocked {
                account: d.opt_u32()?,
            },
            21 => R::InstrumentNotOpen {
                status: status_from(field)?,
            },
            22 => R::AuctionCall,
            23 => R::ExpireTimePast,
            24 => R::StopPriceChange,
            _ => return Err(DecodeError("bad reject reason")),
        })
    }
}

#[cfg(test)]
mod tests;
