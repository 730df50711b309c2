//! An API request as the journal keeps it: what the HTTP side made of one request that the
//! event loop sequences, journals and applies (`ApiEdge::on_api`), and its binary encoding.
//!
//! Role: the complete input of the API edge. Prices and quantities are already in the
//! instrument's units, the symbol an index, the API key an index into the configured keys;
//! the Idempotency-Key travels with its request's fingerprint, so that a replay rebuilds the
//! edge's store of answers exactly.
//!
//! Never: holds anything a replay could not reproduce (the request id is the process's
//! handle on the waiting HTTP request; a replay's answers go nowhere).

use exchange::codec::{self, Dec, DecodeError, Enc};
use exchange::{ClOrdId, NewOrder};
use types::{Side, SymbolId};

/// The process's handle on a waiting HTTP request.
pub type ReqId = u64;

/// One request through the sequencer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiInput {
    pub req: ReqId,
    /// Index of the API key in `ApiConfig::keys`.
    pub key: u16,
    pub idem: Option<Idem>,
    pub op: ApiOp,
}

/// An Idempotency-Key and the fingerprint of the request it came with (method, path, body).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Idem {
    pub key: String,
    pub fingerprint: u64,
}

/// How a request names an order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OrderRef {
    /// The exchange's order id.
    Id(u64),
    /// The client order id the key gave it.
    Client(ClOrdId),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApiOp {
    /// A new order; an empty `cl_ord_id` gets one made from the record's sequence number, and
    /// the account is the key's.
    New(NewOrder),
    Cancel(OrderRef),
    /// A new price and/or total quantity; `cl_ord_id` the order's new client order id;
    /// `stop_price`, if given, must be the order's (a stop price is never changed).
    Replace {
        order: OrderRef,
        price: Option<i64>,
        qty: Option<u64>,
        cl_ord_id: Option<ClOrdId>,
        stop_price: Option<i64>,
    },
    /// Cancel every open order of the key, optionally of one symbol and/or side.
    CancelAll {
        symbol: Option<SymbolId>,
        side: Option<Side>,
    },
    Get(OrderRef),
    /// The key's open orders, optionally of one symbol.
    ListOpen {
        symbol: Option<SymbolId>,
    },
    /// An operator's action (`/admin/v1/...`), journaled with the operator's name; the
    /// request's key is unused.
    Admin {
        operator: String,
        action: exchange::AdminAction,
    },
    /// The operator's read of the instruments' statuses and limits and the kill switches.
    AdminState,
}

impl ApiOp {
    /// Whether the request may change something (and so takes an Idempotency-Key).
    pub fn mutates(&self) -> bool {
        !matches!(
            self,
            ApiOp::Get(_) | ApiOp::ListOpen { .. } | ApiOp::AdminState
        )
    }
}

fn enc_ref(e: &mut Enc<'_>, r: &OrderRef) {
    match r {
        OrderRef::Id(id) => {
            e.u8(1);
            e.u64(*id);
        }
        OrderRef::Client(c) => {
            e.u8(2);
            e.cl(c);
        }
    }
}

fn dec_ref(d: &mut Dec<'_>) -> Result<OrderRef, DecodeError> {
    match d.u8()? {
        1 => Ok(OrderRef::Id(d.u64()?)),
        2 => Ok(OrderRef::Client(d.cl()?)),
        _ => Err(DecodeError("bad order reference")),
    }
}

impl ApiInput {
    pub fn encode(&self, e: &mut Enc<'_>) {
        e.u64(self.req);
        e.u32(u32::from(self.key));
        match &self.idem {
            None => e.u8(0),
            Some(i) => {
                e.u8(1);
                e.bytes(i.key.as_bytes());
                e.u64(i.fingerprint);
            }
        }
        match &self.op {
            ApiOp::New(o) => {
                e.u8(1);
                e.cl(&o.cl_ord_id);
                e.u32(o.symbol);
                e.u8(codec::side_code(o.side));
                e.u8(codec::ord_type_code(o.ord_type));
                e.u8(codec::tif_code(o.tif));
                e.i64(o.price);
                e.u64(o.qty);
                e.opt_u32(o.account);
                // Bit 0: post only; bit 1: the stop price, display quantity and expire time
                // follow (a plain order is encoded as before they existed).
                let ext = o.stop_price != 0 || o.display_qty != 0 || o.expire_ns != 0;
                e.u8(u8::from(o.post_only) | u8::from(ext) << 1);
                if ext {
                    e.i64(o.stop_price);
                    e.u64(o.display_qty);
                    e.u64(o.expire_ns);
                }
            }
            ApiOp::Cancel(r) => {
                e.u8(2);
                enc_ref(e, r);
            }
            ApiOp::Replace {
                order,
                price,
                qty,
                cl_ord_id,
                stop_price,
            } => {
                e.u8(3);
                enc_ref(e, order);
                // Bit 0: a price follows; bit 1: then a stop price.
                e.u8(u8::from(price.is_some()) | u8::from(stop_price.is_some()) << 1);
                for p in [price, stop_price].into_iter().flatten() {
                    e.i64(*p);
                }
                e.opt_u64(*qty);
                e.cl(cl_ord_id.as_ref().unwrap_or(&ClOrdId::EMPTY));
            }
            ApiOp::CancelAll { symbol, side } => {
                e.u8(4);
                e.opt_u32(*symbol);
                e.u8(codec::opt_side_code(*side));
            }
            ApiOp::Get(r) => {
                e.u8(5);
                enc_ref(e, r);
            }
            ApiOp::ListOpen { symbol } => {
                e.u8(6);
                e.opt_u32(*symbol);
            }
            ApiOp::Admin { operator, action } => {
                e.u8(7);
                e.bytes(operator.as_bytes());
                action.encode(e);
            }
            ApiOp::AdminState => e.u8(8),
        }
    }

    pub fn decode(d: &mut Dec<'_>) -> Result<ApiInput, DecodeError> {
        let req = d.u64()?;
        let key = u16::try_from(d.u32()?).map_err(|_| DecodeError("bad API key index"))?;
        let idem = match d.u8()? {
            0 => None,
            1 => Some(Idem {
                key: d.str()?.to_owned(),
                fingerprint: d.u64()?,
            }),
            _ => return Err(DecodeError("bad idempotency flag")),
        };
        let op = match d.u8()? {
            1 => {
                let mut o = NewOrder {
                    cl_ord_id: d.cl()?,
                    symbol: d.u32()?,
                    side: codec::side_from(d.u8()?)?,
                    ord_type: codec::ord_type_from(d.u8()?)?,
                    tif: codec::tif_from(d.u8()?)?,
                    price: d.i64()?,
                    qty: d.u64()?,
                    account: d.opt_u32()?,
                    ..Default::default()
                };
                let flags = d.u8()?;
                if flags > 3 {
                    return Err(DecodeError("bad order flags"));
                }
                o.post_only = flags & 1 != 0;
                if flags & 2 != 0 {
                    o.stop_price = d.i64()?;
                    o.display_qty = d.u64()?;
                    o.expire_ns = d.u64()?;
                }
                ApiOp::New(o)
            }
            2 => ApiOp::Cancel(dec_ref(d)?),
            3 => {
                let order = dec_ref(d)?;
                let flags = d.u8()?;
                if flags > 3 {
                    return Err(DecodeError("bad price flags"));
                }
                let price = (flags & 1 != 0).then(|| d.i64()).transpose()?;
                let stop_price = (flags & 2 != 0).then(|| d.i64()).transpose()?;
                let qty = d.opt_u64()?;
                let cl = d.cl()?;
                ApiOp::Replace {
                    order,
                    price,
                    qty,
                    cl_ord_id: (!cl.is_empty()).then_some(cl),
                    stop_price,
                }
            }
            4 => ApiOp::CancelAll {
                symbol: d.opt_u32()?,
                side: codec::opt_side_from(d.u8()?)?,
            },
            5 => ApiOp::Get(dec_ref(d)?),
            6 => ApiOp::ListOpen {
                symbol: d.opt_u32()?,
            },
            7 => ApiOp::Admin {
                operator: d.str()?.to_owned(),
                action: exchange::AdminAction::decode(d)?,
            },
            8 => ApiOp::AdminState,
            _ => return Err(DecodeError("unknown API request")),
        };
        Ok(ApiInput { req, key, idem, op })
    }
}

#[cfg(test)]
mod tests;
