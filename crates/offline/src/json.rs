//! JSON-lines encoding of engine events and book snapshots for the offline matcher.
//!
//! Role: turns `types::Event`s into the one-object-per-line format of `rialto match`:
//! ```text
//! {"type":"accepted","id":1}
//! {"type":"rejected","id":1,"reason":"invalid","field":"price"}
//! {"type":"trade","symbol":"ACME","price":10000,"qty":5,"maker_id":3,"taker_id":9,"taker_side":"B"}
//! {"type":"canceled","id":9,"reason":"ioc","qty":12}
//! {"type":"replaced","id":4,"price":10001,"qty":20}
//! {"type":"mass_canceled","account":7,"count":3}
//! {"type":"level","symbol":"ACME","side":"B","price":10000,"qty":25,"orders":2}
//! {"type":"book","symbol":"ACME","bids":[[id,price,qty],...],"asks":[[id,price,qty],...]}
//! ```
//! `field` appears only on `invalid` rejections. `level` lines are written only when asked for.
//!
//! Never: floats, allocation per event (lines are appended to a caller's reusable buffer).
//! Invariant: every line is one complete JSON object ending in `\n`; strings are escaped.

use crate::symbols::SymbolTable;
use types::{Event, OrderId, PriceTicks, QtyLots, RejectReason, Side};

/// Appends the decimal digits of `v`.
pub fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

/// Appends the decimal digits of `v`, with a `-` if negative.
pub fn push_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    push_u64(out, v.unsigned_abs());
}

/// Appends `s` as a JSON string (quoted and escaped).
pub fn push_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            c if (c as u32) < 0x20 => {
                out.extend_from_slice(b"\\u00");
                let hex = b"0123456789abcdef";
                out.push(hex[(c as usize) >> 4]);
                out.push(hex[(c as usize) & 15]);
            }
            c => {
                let mut b = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
    out.push(b'"');
}

fn side_str(side: Side) -> &'static [u8] {
    match side {
        Side::Buy => b"\"B\"",
        Side::Sell => b"\"S\"",
    }
}

/// Appends the JSON line of `event`; returns false (and appends nothing) for a `Level` event
/// when `levels` is false.
pub fn push_event(out: &mut Vec<u8>, event: &Event, symbols: &SymbolTable, levels: bool) -> bool {
    match *event {
        Event::Accepted { id, .. } => {
            out.extend_from_slice(b"{\"type\":\"accepted\",\"id\":");
            push_u64(out, id);
        }
        Event::Rejected { id, reason } => {
            out.extend_from_slice(b"{\"type\":\"rejected\",\"id\":");
            push_u64(out, id);
            out.extend_from_slice(b",\"reason\":\"");
            out.extend_from_slice(reason.as_str().as_bytes());
            out.push(b'"');
            if let RejectReason::Invalid(field) = reason {
                out.extend_from_slice(b",\"field\":\"");
                out.extend_from_slice(field.as_str().as_bytes());
                out.push(b'"');
            }
        }
        Event::Trade {
            symbol,
            price,
            qty,
            maker_id,
            taker_id,
            taker_side,
            ..
        } => {
            out.extend_from_slice(b"{\"type\":\"trade\",\"symbol\":");
            push_str(out, symbols.name(symbol));
            out.extend_from_slice(b",\"price\":");
            push_i64(out, price);
            out.extend_from_slice(b",\"qty\":");
            push_u64(out, qty);
            out.extend_from_slice(b",\"maker_id\":");
            push_u64(out, maker_id);
            out.extend_from_slice(b",\"taker_id\":");
            push_u64(out, taker_id);
            out.extend_from_slice(b",\"taker_side\":");
            out.extend_from_slice(side_str(taker_side));
        }
        Event::Canceled {
            id, reason, qty, ..
        } => {
            out.extend_from_slice(b"{\"type\":\"canceled\",\"id\":");
            push_u64(out, id);
            out.extend_from_slice(b",\"reason\":\"");
            out.extend_from_slice(reason.as_str().as_bytes());
            out.extend_from_slice(b"\",\"qty\":");
            push_u64(out, qty);
        }
        Event::Replaced { id, price, qty, .. } => {
            out.extend_from_slice(b"{\"type\":\"replaced\",\"id\":");
            push_u64(out, id);
            out.extend_from_slice(b",\"price\":");
            push_i64(out, price);
            out.extend_from_slice(b",\"qty\":");
            push_u64(out, qty);
        }
        Event::Triggered { id, .. } => {
            out.extend_from_slice(b"{\"type\":\"triggered\",\"id\":");
            push_u64(out, id);
        }
        Event::Uncrossed { symbol, price, qty } => {
            out.extend_from_slice(b"{\"type\":\"uncrossed\",\"symbol\":");
            push_str(out, symbols.name(symbol));
            out.extend_from_slice(b",\"price\":");
            push_i64(out, price);
            out.extend_from_slice(b",\"qty\":");
            push_u64(out, qty);
        }
        Event::MassCanceled { account, count } => {
            out.extend_from_slice(b"{\"type\":\"mass_canceled\",\"account\":");
            push_u64(out, u64::from(account));
            out.extend_from_slice(b",\"count\":");
            push_u64(out, count);
        }
        Event::Level {
            symbol,
            side,
            price,
            qty,
            orders,
        } => {
            if !levels {
                return false;
            }
            out.extend_from_slice(b"{\"type\":\"level\",\"symbol\":");
            push_str(out, symbols.name(symbol));
            out.extend_from_slice(b",\"side\":");
            out.extend_from_slice(side_str(side));
            out.extend_from_slice(b",\"price\":");
            push_i64(out, price);
            out.extend_from_slice(b",\"qty\":");
            push_u64(out, qty);
            out.extend_from_slice(b",\"orders\":");
            push_u64(out, u64::from(orders));
        }
    }
    out.extend_from_slice(b"}\n");
    true
}

/// Appends the `book` line of one symbol; `bids` and `asks` yield `(id, price, qty)` in priority
/// order.
pub fn push_book(
    out: &mut Vec<u8>,
    symbol: &str,
    bids: impl IntoIterator<Item = (OrderId, PriceTicks, QtyLots)>,
    asks: impl IntoIterator<Item = (OrderId, PriceTicks, QtyLots)>,
) {
    fn push_orders(
        out: &mut Vec<u8>,
        orders: impl IntoIterator<Item = (OrderId, PriceTicks, QtyLots)>,
    ) {
        out.push(b'[');
        for (n, (id, price, qty)) in orders.into_iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            out.push(b'[');
            push_u64(out, id);
            out.push(b',');
            push_i64(out, price);
            out.push(b',');
            push_u64(out, qty);
            out.push(b']');
        }
        out.push(b']');
    }
    out.extend_from_slice(b"{\"type\":\"book\",\"symbol\":");
    push_str(out, symbol);
    out.extend_from_slice(b",\"bids\":");
    push_orders(out, bids);
    out.extend_from_slice(b",\"asks\":");
    push_orders(out, asks);
    out.extend_from_slice(b"}\n");
}

#[cfg(test)]
mod tests;
