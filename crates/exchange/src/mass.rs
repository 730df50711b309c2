//! Mass cancels (and cancels on disconnect) applied in steps: the exchange's steps, and what is
//! left of each one still pending.
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

use crate::events::{Ctx, CtxKind};
use crate::snap::{SnapReader, SnapWriter};
use crate::{ClOrdId, Exchange, OrderId, Output, Outputs, Principal};
use types::{AccountId, Command, Side, SymbolId};

/// One mass cancel with order ids left to look at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PendingMass {
    pub(crate) who: Principal,
    /// A cancel on disconnect of `who`'s session: its orders (any account, symbol, side),
    /// canceled with `CancelReason::Disconnect` and no `MassCanceled` at the end.
    pub(crate) disconnect: bool,
    /// A cancel of `who`'s own orders (`Input::CancelOwn`): the originator's live orders on
    /// its symbol and side, ending with `MassCanceled`, where a mass cancel covers its firm's.
    pub(crate) own: bool,
    /// The operator's kill switch (`AdminAction::Kill`): the firm's orders (or only
    /// `kill_account`'s), canceled with `CancelReason::Operator` and no `MassCanceled`.
    pub(crate) kill: bool,
    pub(crate) kill_account: Option<AccountId>,
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
    /// A mass cancel `who` requested at input `request_seq`, with nothing looked at yet
    /// (`start_mass` sets its range); its kind and filter are set over it.
    pub(crate) fn new(who: Principal, request_seq: u64) -> PendingMass {
        PendingMass {
            who,
            disconnect: false,
            own: false,
            kill: false,
            kill_account: None,
            cl_ord_id: ClOrdId::EMPTY,
            symbol: None,
            side: None,
            request_seq,
            next: 0,
            end: 0,
            count: 0,
        }
    }

    /// The snapshot of what is left: the request, its range and the count so far.
    pub(crate) fn snapshot(&self, e: &mut SnapWriter<'_>) {
        e.u64(u64::from(self.who.originator));
        e.u64(u64::from(self.who.firm));
        // The kind: 0 a mass cancel, 1 a cancel on disconnect, 2 a cancel of one's own, 3 a
        // kill switch (then its account + 1, or 0 for the whole firm).
        e.u64(if self.disconnect {
            1
        } else if self.own {
            2
        } else if self.kill {
            3
        } else {
            0
        });
        if self.kill {
            e.u64(self.kill_account.map_or(0, |a| u64::from(a) + 1));
        }
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
        let (disconnect, own, kill) = match r.u64()? {
            0 => (false, false, false),
            1 => (true, false, false),
            2 => (false, true, false),
            3 => (false, false, true),
            _ => return Err(bad("kind")),
        };
        let kill_account = match kill {
            false => None,
            true => match r.u64()? {
                0 => None,
                a => Some(AccountId::try_from(a - 1).map_err(|_| bad("account"))?),
            },
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
            own,
            kill,
            kill_account,
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

impl Exchange {
    /// The originator's session ended: if it asked for it, each of its live orders is
    /// canceled, in order id order (the reports wait in its session for a resend), in steps
    /// as a mass cancel's (`mass`; its range starts at the firm's accounts' first live order:
    /// an originator's orders are on its firm's accounts), with no report at the end.
    pub(crate) fn on_disconnected<O: Outputs>(&mut self, seq: u64, who: Principal, out: &mut O) {
        let ix = who.originator;
        if !self
            .cfg
            .cancel_on_disconnect
            .get(ix as usize)
            .copied()
            .unwrap_or(false)
        {
            return;
        }
        let p = PendingMass {
            disconnect: true,
            ..PendingMass::new(who, seq)
        };
        self.start_mass(p, out);
    }

    /// A mass cancel: records what it covers (`mass` module), takes its first step and
    /// leaves the rest pending (or ends at once if it fits in a step).
    pub(crate) fn on_mass_cancel<O: Outputs>(
        &mut self,
        seq: u64,
        who: Principal,
        cl_ord_id: &ClOrdId,
        (symbol, side): (Option<u32>, Option<Side>),
        own: bool,
        out: &mut O,
    ) {
        let p = PendingMass {
            own,
            cl_ord_id: *cl_ord_id,
            symbol,
            side,
            ..PendingMass::new(who, seq)
        };
        self.start_mass(p, out);
    }

    /// Sets `p`'s range (from the lowest id a live order of its firm's accounts may have to
    /// the next order id), takes its first step and keeps it pending if it did not end.
    pub(crate) fn start_mass<O: Outputs>(&mut self, mut p: PendingMass, out: &mut O) {
        p.end = self.next_order_id;
        p.next = self
            .cfg
            .firms
            .get(p.who.firm as usize)
            .and_then(|accounts| self.open.first_live_of(accounts))
            .map_or(p.end, |first| first.min(p.end));
        if !self.mass_step(&mut p, out) {
            self.pending.push_back(p);
        }
    }

    /// One step of every pending mass cancel, oldest request first.
    pub(crate) fn on_continue<O: Outputs>(&mut self, out: &mut O) {
        let mut pending = std::mem::take(&mut self.pending);
        pending.retain_mut(|p| !self.mass_step(p, out));
        self.pending = pending;
    }

    /// Looks at the next `mass_cancel_scan` order ids of `p`, in order, and cancels the live
    /// orders among them that it covers, stopping before the one past `mass_cancel_chunk`;
    /// at the end of its range says the mass cancel finished. True if it did.
    fn mass_step<O: Outputs>(&mut self, p: &mut PendingMass, out: &mut O) -> bool {
        /// How many ids ahead the live table's buckets are prefetched (a lookup of an id
        /// that is not live would otherwise wait for memory every time).
        const AHEAD: u64 = 16;
        let chunk = self.cfg.mass_cancel_chunk.max(1) as u64;
        let scan_end = p
            .next
            .saturating_add(self.cfg.mass_cancel_scan.max(1) as u64)
            .min(p.end);
        // The config is shared: a reference count, not a copy of the account list.
        let cfg = self.cfg.clone();
        let accounts: &[AccountId] = cfg.firms.get(p.who.firm as usize).map_or(&[], |a| a);
        let mut ctx = Ctx {
            who: p.who,
            exec_n: self.exec_n,
            cl_ord_id: &ClOrdId::EMPTY,
            orig_cl_ord_id: &ClOrdId::EMPTY,
            kind: if p.disconnect {
                CtxKind::Disconnect
            } else if p.kill {
                CtxKind::Kill
            } else {
                CtxKind::Mass
            },
            order: None,
            mass_count: 0,
        };
        let mut id = p.next;
        for ahead in id..(id + AHEAD).min(scan_end) {
            self.orders.live.prefetch(ahead);
        }
        while id < scan_end {
            if id + AHEAD < scan_end {
                self.orders.live.prefetch(id + AHEAD);
            }
            if let Some(slot) = self.orders.live.get(id) {
                let o = &self.orders.slab[slot as usize];
                let covered = o.is_live()
                    && if p.disconnect {
                        o.owner == p.who.originator
                    } else if p.kill {
                        accounts.contains(&o.account)
                            && p.kill_account.is_none_or(|a| a == o.account)
                    } else {
                        p.symbol.is_none_or(|s| s == o.symbol)
                            && p.side.is_none_or(|s| s == o.side)
                            && if p.own {
                                o.owner == p.who.originator
                            } else {
                                accounts.contains(&o.account)
                            }
                    };
                if covered {
                    if ctx.mass_count == chunk {
                        break;
                    }
                    let cmd = Command::Cancel {
                        id,
                        account: o.account,
                        symbol: o.symbol,
                    };
                    self.run(&cmd, &mut ctx, out);
                }
            }
            id += 1;
        }
        self.exec_n = ctx.exec_n;
        p.next = id;
        p.count += ctx.mass_count;
        if p.next < p.end {
            return false;
        }
        if !p.disconnect && p.symbol.is_none() && p.side.is_none() {
            // All its accounts' orders before `end` are gone: later requests start there.
            match p.kill_account {
                Some(a) => self.open.raise_first_live(&[a], p.end),
                None => self.open.raise_first_live(accounts, p.end),
            }
        }
        if !p.disconnect && !p.kill {
            out.output(&Output::MassCanceled {
                to: p.who.originator,
                cl_ord_id: &p.cl_ord_id,
                symbol: p.symbol,
                side: p.side,
                request_seq: p.request_seq,
                count: p.count,
            });
        }
        true
    }
}
