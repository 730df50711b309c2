//! Mass cancels (and cancels on disconnect) applied in steps: what is left of each one still
//! pending.
//!
//! Role: a mass cancel of any size costs each input a bounded amount of work. Applying
//! `Input::MassCancel` (or an `Input::Disconnected` of a session that cancels on disconnect)
//! records what it covers: its filter (the firm's accounts, symbol and side; or the
//! disconnected session's orders) and the order ids from the lowest one that may match (the
//! smallest of its accounts' `OpenOrders::first_live` hints) up to the exchange's next order
//! id at the request (excluded). Each input of it, the request and then each
//! `Input::Continue`, looks at most `Config::mass_cancel_scan` of those ids, in order, and
//! cancels at most `Config::mass_cancel_chunk` of the orders they name, resuming at the id
//! where the previous one stopped; a `Continue` takes one step of every pending one, oldest
//! request first. The step that reaches the end of the range ends a mass cancel with
//! `Output::MassCanceled` and the total (a cancel on disconnect ends silently).
//!
//! Never: cancels an order entered after the request (its id is at or past the range's end);
//! cancels an order that is no longer live (one filled, canceled or expired meanwhile is
//! skipped, and not counted); depends on where records sit in the slab or the live table
//! (those differ between a live run and a restored one: the work is by order id only).
//!
//! Invariants: a pending mass cancel has `next < end` (a finished one is dropped); the
//! pending list is part of the snapshot and the state hash, so a replay or a restore
//! continues exactly where the live run was.

use crate::snap::{SnapReader, SnapWriter};
use crate::{ClOrdId, OrderId, Principal};
use types::{Side, SymbolId};

/// One mass cancel with order ids left to look at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PendingMass {
    pub(crate) who: Principal,
    /// A cancel on disconnect of `who`'s session: its orders (any account, symbol, side),
    /// canceled with `CancelReason::Disconnect` and no `MassCanceled` at the end.
    pub(crate) disconnect: bool,
    pub(crate) cl_ord_id: ClOrdId,
    pub(crate) symbol: Option<SymbolId>,
    pub(crate) side: Option<Side>,
    /// The sequence number of the request's input.
    pub(crate) request_seq: u64,
    /// The next order id to look at, and the end of the range (the exchange's next order
    /// id at the request: excluded).
    pub(crate) next: OrderId,
    pub(crate) end: OrderId,
    /// Orders canceled so far.
    pub(crate) count: u64,
}

impl PendingMass {
    /// The snapshot of what is left: the request, its range and the count so far.
    pub(crate) fn snapshot(&self, e: &mut SnapWriter<'_>) {
        e.u64(u64::from(self.who.originator));
        e.u64(u64::from(self.who.firm));
        e.u64(u64::from(self.disconnect));
        e.bytes(self.cl_ord_id.as_bytes());
        e.u64(self.symbol.map_or(0, |s| u64::from(s) + 1));
        e.u64(match self.side {
            None => 0,
            Some(Side::Buy) => 1,
            Some(Side::Sell) => 2,
        });
        e.u64(self.request_seq);
        e.u64(self.count);
        e.u64(self.next);
        e.u64(self.end - self.next);
    }

    pub(crate) fn restore(r: &mut SnapReader<'_>) -> Result<PendingMass, String> {
        let bad = |what: &str| format!("snapshot: pending mass cancel: bad {what}");
        let originator = u16::try_from(r.u64()?).map_err(|_| bad("originator"))?;
        let firm = u16::try_from(r.u64()?).map_err(|_| bad("firm"))?;
        let disconnect = match r.u64()? {
            0 => false,
            1 => true,
            _ => return Err(bad("kind")),
        };
        let cl_ord_id = ClOrdId::from_bytes(r.bytes()?).ok_or_else(|| bad("ClOrdID"))?;
        let symbol = match r.u64()? {
            0 => None,
            s => Some(SymbolId::try_from(s - 1).map_err(|_| bad("symbol"))?),
        };
        let side = match r.u64()? {
            0 => None,
            1 => Some(Side::Buy),
            2 => Some(Side::Sell),
            _ => return Err(bad("side")),
        };
        let request_seq = r.u64()?;
        let count = r.u64()?;
        let next = r.u64()?;
        let left = r.u64()?;
        if left == 0 {
            return Err(bad("order id range (empty)"));
        }
        let end = next
            .checked_add(left)
            .ok_or_else(|| bad("order id range"))?;
        Ok(PendingMass {
            who: Principal { originator, firm },
            disconnect,
            cl_ord_id,
            symbol,
            side,
            request_seq,
            next,
            end,
            count,
        })
    }
}
