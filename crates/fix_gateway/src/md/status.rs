//! The market-data edge's answers about instruments rather than their books: SecurityList,
//! SecurityStatus (requested, and each change to the sessions that subscribed), and the
//! indicative uncross of a call auction (MDEntryType Q, FIX 5.0SP2) queued for the
//! subscriptions that asked for it.

use super::{version_of, MdEdge, Pending, Refused};
use crate::edge::Outbox;
use exchange::InstrumentStatus;
use fix::md::{
    ListedInstrument, SecurityList, SecurityListRequest, SecurityListScope, SecurityStatus,
    SecurityStatusRequest, SubscriptionType,
};
use fix::{BusinessRejectReason, FixVersion};

/// SecurityTradingStatus (326) of an open instrument.
pub const READY_TO_TRADE: u32 = 17;

/// SecurityTradingStatus (326) of an instrument's status in `version`: 17 ready to trade, 2
/// trading halt, 18 not available for trading (every version), 21 pre-open for a call
/// auction (opening or closing: TradingSessionSubID 625 tells which, [`trading_session_sub_id`])
/// in FIX 4.4 and 5.0SP2. FIX 4.2 stops at 20: a call is 14 there, "ITS pre-opening", the
/// nearest value 4.2 has to a call in which orders are taken and none trades.
pub fn security_trading_status(s: InstrumentStatus, version: FixVersion) -> u32 {
    match s {
        InstrumentStatus::Open => READY_TO_TRADE,
        InstrumentStatus::Halted => 2,
        InstrumentStatus::Closed => 18,
        InstrumentStatus::PreOpen | InstrumentStatus::PreClose => match version {
            FixVersion::Fix42 => 14,
            _ => 21,
        },
    }
}

/// TradingSessionSubID (625) of an instrument's status: 2 (opening or opening auction) in
/// pre-open, 4 (closing or closing auction) in pre-close; none otherwise. FIX 4.2 has no such
/// field ([`fix::md::SecurityStatus`] leaves it out there).
pub fn trading_session_sub_id(s: InstrumentStatus) -> Option<u8> {
    match s {
        InstrumentStatus::PreOpen => Some(2),
        InstrumentStatus::PreClose => Some(4),
        _ => None,
    }
}

impl MdEdge {
    pub(super) fn security_list(
        &mut self,
        ix: usize,
        r: &SecurityListRequest<'_>,
        now_ns: u64,
        out: &mut Outbox,
    ) {
        let cfg = self.cfg.clone();
        let all: Vec<ListedInstrument<'_>> = cfg
            .instruments
            .iter()
            .map(|i| ListedInstrument {
                symbol: i.symbol.as_str().as_bytes(),
                lot: i.lot,
                tick: i.tick,
                price_decimals: i.price_decimals,
            })
            .collect();
        let (result, list): (u8, Vec<ListedInstrument<'_>>) = match r.scope {
            Ok(SecurityListScope::All) => (b'0', all),
            Ok(SecurityListScope::Symbol(sym)) => {
                let l: Vec<_> = all.into_iter().filter(|i| i.symbol == sym).collect();
                (if l.is_empty() { b'2' } else { b'0' }, l)
            }
            Err(_) => (b'1', Vec::new()),
        };
        self.security_responses += 1;
        let s = self.sessions[ix].as_mut().expect("bound");
        s.send(
            &SecurityList {
                security_req_id: r.security_req_id,
                security_response_id: self.security_responses,
                result,
                instruments: &list,
            },
            now_ns,
            out,
        );
    }

    /// Instrument `symbol` (index) has status `status` now: sessions that asked to be told
    /// get a SecurityStatus if it changed, in their version's values.
    pub fn set_instrument_status(
        &mut self,
        symbol: u32,
        status: InstrumentStatus,
        now_ns: u64,
        out: &mut Outbox,
    ) {
        let Some(def) = self.cfg.instruments.get(symbol as usize) else {
            return;
        };
        if std::mem::replace(&mut self.statuses[symbol as usize], status) == status {
            return;
        }
        let name = def.symbol;
        for (ix, s) in self.sessions.iter_mut().enumerate() {
            let Some(s) = s else {
                continue;
            };
            let Some((_, req_id)) = s.status_subs.iter().find(|(sym, _)| *sym == symbol) else {
                continue;
            };
            let req_id = req_id.clone();
            let version = version_of(&self.cfg, ix);
            s.send(
                &SecurityStatus {
                    security_status_req_id: &req_id,
                    symbol: name.as_str().as_bytes(),
                    trading_status: security_trading_status(status, version),
                    trading_session_sub_id: trading_session_sub_id(status),
                    unsolicited: true,
                },
                now_ns,
                out,
            );
        }
    }

    pub(super) fn security_status(
        &mut self,
        ix: usize,
        msg_seq: u64,
        r: &SecurityStatusRequest<'_>,
        now_ns: u64,
        out: &mut Outbox,
    ) {
        let symbol = self
            .cfg
            .instruments
            .iter()
            .position(|i| i.symbol.as_str().as_bytes() == r.symbol);
        if r.subscription == SubscriptionType::Unsubscribe {
            if let (Some(sym), Some(s)) = (symbol, self.sessions[ix].as_mut()) {
                s.status_subs.retain(|(x, _)| *x != sym as u32);
            }
            return;
        }
        let Some(symbol) = symbol else {
            let text = format!("unknown symbol {}", String::from_utf8_lossy(r.symbol));
            return self.business_reject(
                Refused {
                    ix,
                    msg_seq,
                    msg_type: b"e",
                },
                BusinessRejectReason::UnknownSecurity,
                text.as_bytes(),
                now_ns,
                out,
            );
        };
        let status = self.statuses[symbol];
        let version = version_of(&self.cfg, ix);
        let s = self.sessions[ix].as_mut().expect("bound");
        if r.subscription == SubscriptionType::Subscribe {
            // Bounded by the instruments: one entry each, the latest request's id.
            s.status_subs.retain(|(x, _)| *x != symbol as u32);
            s.status_subs
                .push((symbol as u32, r.security_status_req_id.to_vec()));
        }
        s.send(
            &SecurityStatus {
                security_status_req_id: r.security_status_req_id,
                symbol: r.symbol,
                trading_status: security_trading_status(status, version),
                trading_session_sub_id: trading_session_sub_id(status),
                unsolicited: false,
            },
            now_ns,
            out,
        );
    }

    /// Instrument `symbol` (index) in a call auction would uncross `qty` at `price` now
    /// (`Exchange::indicative`, or an `Output::Indicative`; `qty` 0: no uncross, or no call).
    /// A change is queued for every subscription of the symbol that asked for MDEntryType Q:
    /// MDUpdateAction 0 when one appears, 1 when it changes, 2 when it is withdrawn; sent at
    /// the next `flush`. Snapshots carry the current one.
    pub fn set_indicative(&mut self, symbol: u32, price: i64, qty: u64) {
        let Some(cur) = self.indicatives.get_mut(symbol as usize) else {
            return;
        };
        let now = if qty == 0 { (0, 0) } else { (price, qty) };
        let before = std::mem::replace(cur, now);
        if before == now {
            return;
        }
        let (action, price, qty) = match (before.1, now.1) {
            (0, _) => (b'0', price, qty),
            (_, 0) => (b'2', before.0, 0),
            _ => (b'1', price, qty),
        };
        if self.feed_behind {
            return;
        }
        for s in self.sessions.iter_mut().flatten() {
            if s.behind {
                continue;
            }
            for sub in &mut s.subs {
                if !sub.types.indicative || !sub.symbols.contains(&symbol) {
                    continue;
                }
                if sub.incremental {
                    let p = Pending::Indicative { action, price, qty };
                    sub.pending.push((symbol, p));
                } else if !sub.touched.contains(&symbol) {
                    sub.touched.push(symbol);
                }
            }
        }
    }

    /// The indicative uncross of `symbol` the edge last heard of (`(0, 0)`: none).
    pub fn indicative(&self, symbol: u32) -> (i64, u64) {
        self.indicatives
            .get(symbol as usize)
            .copied()
            .unwrap_or((0, 0))
    }
}
