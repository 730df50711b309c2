//! The order fields an answer about no order echoes ([`Echo`]): a refused NewOrderSingle's
//! ExecutionReport, a status answer for an order the session does not have.

use types::{OrdType, Side};

use super::{ord_type_code_of, side_code};
use crate::decode::Message;
use crate::tags;

/// Most bytes an [`Echo`] holds: six fields (`55`, `54`, `38`, `40`, `44`, `99`) of
/// `TAG=value<SOH>` with values of at most 32 bytes (longer ones are left out).
pub const ECHO_MAX: usize = 6 * (3 + 32 + 1);

/// The order fields an answer about no order echoes (Symbol, Side, OrderQty, OrdType, Price,
/// StopPx: `55=..<SOH>54=..<SOH>`), as the client sent them, inline: a message that carries
/// one owns no heap memory. Printable ASCII only; bytes after `len` are zero.
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

    /// The echoed fields of `msg`: each of 55, 54, 38, 40, 44 and 99 that is present,
    /// printable and at most 32 bytes long.
    pub fn of(msg: &Message<'_>) -> Echo {
        let mut out = Echo::EMPTY;
        for (tag, tag_eq) in [
            (tags::SYMBOL, &b"55="[..]),
            (tags::SIDE, b"54="),
            (tags::ORDER_QTY, b"38="),
            (tags::ORD_TYPE, b"40="),
            (tags::PRICE, b"44="),
            (tags::STOP_PX, b"99="),
        ] {
            if let Some(v) = msg.get(tag) {
                if v.len() <= 32 {
                    out.push_field(tag_eq, v);
                }
            }
        }
        out
    }

    /// The echo of an order as it was read (a new order the exchange refused): Symbol, Side,
    /// OrderQty, OrdType (3 or 4 for a stop: `stop_px > 0`), Price for a limit or stop-limit
    /// order and StopPx for a stop (prices in units of `10^-price_decimals`).
    pub fn of_order(
        symbol: &[u8],
        side: Side,
        order_qty: u64,
        ord_type: OrdType,
        (price, stop_px): (i64, i64),
        price_decimals: u32,
    ) -> Echo {
        let mut e = Echo::EMPTY;
        let mut v = Vec::with_capacity(24);
        e.push_field(b"55=", symbol);
        e.push_field(b"54=", &[side_code(side)]);
        crate::encode::write_u64(&mut v, order_qty);
        e.push_field(b"38=", &v);
        e.push_field(b"40=", &[ord_type_code_of(ord_type, stop_px != 0)]);
        if ord_type == OrdType::Limit {
            v.clear();
            crate::decimal::write_units(&mut v, price, price_decimals);
            e.push_field(b"44=", &v);
        }
        if stop_px != 0 {
            v.clear();
            crate::decimal::write_units(&mut v, stop_px, price_decimals);
            e.push_field(b"99=", &v);
        }
        e
    }

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
        self.bytes[end - 1] = crate::SOH;
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

impl std::fmt::Debug for Echo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}
