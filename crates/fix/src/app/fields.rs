//! The order fields a reader converts (quantities, prices, expire times), each refused with a
//! Text that names the field, the value and the rule.

use super::{InstrumentRef, Refusal};
use crate::decimal::{parse_price, PriceError};
use crate::decode::{parse_u64, Message};
use crate::tags;

/// A client's value as a reject's Text quotes it: lossy UTF-8, at most 32 bytes.
fn quoted(v: &[u8]) -> String {
    let mut s = String::from_utf8_lossy(&v[..v.len().min(32)]).into_owned();
    if v.len() > 32 {
        s.push_str("...");
    }
    s
}

/// A whole, positive quantity (`100` or `100.00`).
pub(super) fn order_qty(msg: &Message<'_>) -> Result<u64, Refusal> {
    const T: u32 = tags::ORDER_QTY;
    let raw = msg
        .get(T)
        .ok_or_else(|| Refusal::new(T, "missing OrderQty(38)"))?;
    let say = |what: &str| Refusal::new(T, format!("OrderQty(38) {what}, got {}", quoted(raw)));
    if raw.first() == Some(&b'-') {
        return Err(say("must be positive"));
    }
    let q = match raw.iter().position(|&b| b == b'.') {
        Some(p) if raw[p + 1..].iter().all(|&b| b == b'0') => &raw[..p],
        Some(_) => return Err(say("must be a whole number")),
        None => raw,
    };
    match parse_u64(q) {
        Some(0) => Err(say("must be positive")),
        Some(n) => Ok(n),
        None => Err(say("is not a number")),
    }
}

/// A price field (Price 44, StopPx 99) in the instrument's units, or a refusal that names
/// the field, the value and the rule.
fn price_of(
    msg: &Message<'_>,
    (tag, name): (u32, &str),
    text: &[u8],
    inst: InstrumentRef,
) -> Result<i64, Refusal> {
    parse_price(text, inst.decimals, inst.tick).map_err(|e| {
        let v = quoted(text);
        let t = match e {
            PriceError::OffTick => {
                let mut tick = Vec::new();
                crate::decimal::write_units(&mut tick, inst.tick, inst.decimals);
                let what = if tag == tags::PRICE { "Price" } else { name };
                format!(
                    "{what} {v} is not a multiple of {}'s tick {}",
                    quoted(msg.get(tags::SYMBOL).unwrap_or(b"")),
                    String::from_utf8_lossy(&tick)
                )
            }
            PriceError::NotPositive => format!("{name}({tag}) must be positive, got {v}"),
            PriceError::NotDecimal => format!("{name}({tag}) is not a decimal number, got {v}"),
            PriceError::OutOfRange => format!("{name}({tag}) is out of range, got {v}"),
        };
        Refusal::new(tag, t)
    })
}

/// A limit price (Price 44) in the instrument's units.
pub(super) fn price(msg: &Message<'_>, text: &[u8], inst: InstrumentRef) -> Result<i64, Refusal> {
    price_of(msg, (tags::PRICE, "Price"), text, inst)
}

/// A stop price (StopPx 99) in the instrument's units: parsed and checked as Price is.
pub(super) fn stop_px(msg: &Message<'_>, text: &[u8], inst: InstrumentRef) -> Result<i64, Refusal> {
    price_of(msg, (tags::STOP_PX, "StopPx"), text, inst)
}

/// MaxFloor (111): a whole number, 0 when absent (`100` or `100.00`).
pub(super) fn max_floor(msg: &Message<'_>) -> Result<u64, Refusal> {
    const T: u32 = tags::MAX_FLOOR;
    let Some(raw) = msg.get(T) else {
        return Ok(0);
    };
    let say = |what: &str| Refusal::new(T, format!("MaxFloor(111) {what}, got {}", quoted(raw)));
    if raw.first() == Some(&b'-') {
        return Err(say("must not be negative"));
    }
    let q = match raw.iter().position(|&b| b == b'.') {
        Some(p) if raw[p + 1..].iter().all(|&b| b == b'0') => &raw[..p],
        Some(_) => return Err(say("must be a whole number")),
        None => raw,
    };
    parse_u64(q).ok_or_else(|| say("is not a number"))
}

/// ExpireTime (126) of a GTD order, ns since the epoch: required with TimeInForce 6 and
/// refused without it; ExpireDate (432) is refused (the one expiry field Rialto reads is
/// ExpireTime).
pub(super) fn expire_time(msg: &Message<'_>, gtd: bool) -> Result<u64, Refusal> {
    if msg.get(tags::EXPIRE_DATE).is_some() {
        return Err(Refusal::new(
            tags::EXPIRE_DATE,
            "ExpireDate(432) is not supported: a GTD order (TimeInForce 6) gives ExpireTime(126), \
             a UTCTimestamp",
        ));
    }
    match (msg.get(tags::EXPIRE_TIME), gtd) {
        (None, false) => Ok(0),
        (None, true) => Err(Refusal::new(
            tags::EXPIRE_TIME,
            "GTD order (TimeInForce 6) without ExpireTime(126)",
        )),
        (Some(_), false) => Err(Refusal::new(
            tags::EXPIRE_TIME,
            "ExpireTime(126) is only for a GTD order (TimeInForce 6)",
        )),
        (Some(t), true) => crate::time::parse_utc_timestamp(t).ok_or_else(|| {
            Refusal::new(
                tags::EXPIRE_TIME,
                format!(
                    "ExpireTime(126) is not a UTCTimestamp (YYYYMMDD-HH:MM:SS[.sss]), got {}",
                    quoted(t)
                ),
            )
        }),
    }
}
