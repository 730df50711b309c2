//! One originator's requests: new orders, cancels, replaces and status requests, checked and
//! turned into engine commands.
//!
//! Role: refuses what the exchange cannot take (unknown symbol or account, market closed,
//! duplicate client order id, unknown order, open-order limits, replace rules) with a
//! [`Reject`](crate::Reject) reason, assigns order ids, remembers client order ids, and runs
//! the rest through the engine (`events`).
//!
//! Never: lets an originator touch another's order (it finds only its own client order ids, and
//! an order it does not own is an unknown one); counts an order that cannot rest against the
//! open-order limits.
//!
//! Invariants: a client order id is remembered at most once per originator among live orders and
//! the last `CL_ORD_IDS_MAX`; order ids are assigned in input order.

use crate::events::{Ctx, CtxKind};
use crate::index::ROTATIONS_MAX;
use crate::{
    eq_short, ClOrdId, Exchange, NewOrder, OrderId, OrderState, OrderStatus, Output, Outputs,
    Principal, Reject, Replace, ReportKind,
};
use types::{AccountId, Command, OrdType, StpMode};

impl Exchange {
    fn firm_account(&self, who: Principal, requested: Option<AccountId>) -> Option<AccountId> {
        let accounts = self.cfg.firms.get(who.firm as usize)?;
        match requested {
            None => accounts.first().copied(),
            Some(a) if accounts.contains(&a) => Some(a),
            Some(_) => None,
        }
    }

    pub(crate) fn on_new<O: Outputs>(&mut self, who: Principal, n: &NewOrder, out: &mut O) {
        self.stats.orders += 1;
        let reject = |this: &mut Exchange, reason: Reject, out: &mut O| {
            let n_ = this.exec_n;
            this.exec_n += 1;
            out.output(&Output::NewRejected {
                to: who.originator,
                order: n,
                reason,
                n: n_,
            })
        };
        if n.symbol as usize >= self.cfg.instruments.len() {
            // Only a journal written with a longer instrument list can say this.
            return reject(self, Reject::UnknownSymbol, out);
        }
        if let Some(closed) = self.closed() {
            return reject(self, closed, out);
        }
        let ix = who.originator;
        let cl_hash = self.cl.hash_pre(ix, n.cl_ord_id.as_bytes(), self.pre.cl);
        if self
            .cl_find(false, cl_hash, ix, n.cl_ord_id.as_bytes())
            .is_some()
        {
            return reject(self, Reject::DuplicateClOrdId, out);
        }
        let Some(account) = self.firm_account(who, n.account) else {
            return reject(self, Reject::UnknownAccount, out);
        };
        let a = self.open.account_ix(account);
        if let Some(r) = self.risk.barred(n.symbol, who.firm, account, a) {
            return reject(self, r, out);
        }
        if n.tif == types::TimeInForce::Gtd && n.expire_ns != 0 && n.expire_ns <= self.risk.now() {
            return reject(self, Reject::ExpireTimePast, out);
        }
        // Pre-trade risk: the price band (a market order is collared at its edge), the order
        // limits, the account's open notional and net position.
        let collar = match self.risk.check_new(who.firm, a, n) {
            Ok(c) => c,
            Err(r) => return reject(self, r, out),
        };
        // Only an order that may rest counts against the open-order limits (IOC, FOK and
        // market orders never rest); a pending stop is live too.
        let may_rest = crate::risk::rests(n.ord_type, n.tif) || n.stop_price != 0;
        if may_rest {
            if let Some(limit) = self.open.check(account) {
                return reject(self, limit, out);
            }
        }
        let id = self.next_order_id;
        self.next_order_id += 1;
        let cl = &n.cl_ord_id;
        self.remember_cl_ord_id(cl_hash, ix, cl, id);
        let price = if n.ord_type == OrdType::Market {
            0
        } else {
            n.price
        };
        // A collared market order is, to the engine, an IOC (or FOK) limit at the band's edge.
        let (ord_type, tif, engine_price) = match collar {
            Some(edge) => (
                OrdType::Limit,
                match n.tif {
                    types::TimeInForce::Fok => types::TimeInForce::Fok,
                    _ => types::TimeInForce::Ioc,
                },
                edge,
            ),
            None => (n.ord_type, n.tif, price),
        };
        let cmd = Command::New(types::NewOrder {
            id,
            account,
            symbol: n.symbol,
            side: n.side,
            ord_type,
            tif,
            price: engine_price,
            qty: n.qty,
            post_only: n.post_only,
            stp: StpMode::CancelNewest,
            stop_price: n.stop_price,
            display_qty: n.display_qty,
            expire_ns: n.expire_ns,
        });
        // Remember the order's static fields before the engine runs: its events refer to it.
        self.orders.insert_new_live(id, |o| {
            o.owner = ix;
            o.account = account;
            o.symbol = n.symbol;
            o.side = n.side;
            o.ord_type = n.ord_type;
            o.tif = n.tif;
            o.price = price;
            o.cl_ord_id = *cl;
            o.order_qty = n.qty;
            o.cum_qty = 0;
            o.leaves_qty = n.qty;
            o.notional = 0;
            o.state = OrderState::Live;
        });
        let ext = crate::OrderExt::of(n);
        if !ext.is_plain() {
            self.orders.ext.insert(id, ext);
        }
        self.open.add(account, id);
        if let (true, Some(a)) = (crate::risk::rests(n.ord_type, n.tif), a) {
            self.risk.add_open(a, n.symbol, n.side, price, n.qty);
        }
        let mut ctx = Ctx {
            who,
            exec_n: self.exec_n,
            cl_ord_id: cl,
            orig_cl_ord_id: &ClOrdId::EMPTY,
            kind: CtxKind::New,
            order: Some(n),
            mass_count: 0,
        };
        self.run(&cmd, &mut ctx, out);
        self.exec_n = ctx.exec_n;
    }

    pub(crate) fn on_cancel<O: Outputs>(
        &mut self,
        who: Principal,
        cl_ord_id: &ClOrdId,
        orig_cl_ord_id: &ClOrdId,
        replace: Option<&Replace>,
        out: &mut O,
    ) {
        let ix = who.originator;
        let is_replace = replace.is_some();
        let reject = |reason: Reject, order: Option<(OrderId, OrderStatus)>, out: &mut O| {
            out.output(&Output::CancelRejected {
                to: ix,
                cl_ord_id,
                orig_cl_ord_id,
                replace: is_replace,
                reason,
                order,
            })
        };
        let orig_hash = self
            .cl
            .hash_pre(ix, orig_cl_ord_id.as_bytes(), self.pre.orig);
        let found = self.cl_find(true, orig_hash, ix, orig_cl_ord_id.as_bytes());
        let live = found
            .and_then(|id| self.orders.live(&id).map(|o| (id, o)))
            .filter(|(_, o)| o.is_live() && o.owner == ix)
            .map(|(id, o)| (id, o.status(), o.account, o.symbol, o.cum_qty, o.ord_type));
        let Some((id, status, account, symbol, cum, ord_type)) = live else {
            return reject(Reject::UnknownOrder, None, out);
        };
        let cl_hash = self.cl.hash_pre(ix, cl_ord_id.as_bytes(), self.pre.cl);
        if self
            .cl_find(false, cl_hash, ix, cl_ord_id.as_bytes())
            .is_some()
        {
            return reject(Reject::DuplicateClOrdId, Some((id, status)), out);
        }
        let cmd = match replace {
            None => Command::Cancel {
                id,
                account,
                symbol,
            },
            Some(r) => {
                let reason = if let Some(closed) = self.closed() {
                    Some(closed)
                } else if r.symbol != symbol {
                    Some(Reject::ReplaceSymbolDiffers)
                } else if r.qty <= cum {
                    Some(Reject::ReplaceQtyAtOrBelowFilled)
                } else if ord_type == OrdType::Market {
                    Some(Reject::ReplaceMarketOrder)
                } else if r.stop_price != 0 && r.stop_price != self.orders.ext_of(id).stop_price {
                    Some(Reject::StopPriceChange)
                } else {
                    None
                };
                let reason = reason.or_else(|| {
                    let o = self.orders.live(&id)?;
                    let a = self.open.account_ix(account);
                    self.risk.barred(symbol, who.firm, account, a).or_else(|| {
                        self.risk
                            .check_replace(who.firm, a, o, r.price, r.qty)
                            .err()
                    })
                });
                if let Some(reason) = reason {
                    return reject(reason, Some((id, status)), out);
                }
                Command::Replace {
                    id,
                    account,
                    symbol,
                    price: r.price,
                    qty: r.qty - cum,
                }
            }
        };
        self.remember_cl_ord_id(cl_hash, ix, cl_ord_id, id);
        let mut ctx = Ctx {
            who,
            exec_n: self.exec_n,
            cl_ord_id,
            orig_cl_ord_id,
            kind: if is_replace {
                CtxKind::Replace
            } else {
                CtxKind::Cancel
            },
            order: None,
            mass_count: 0,
        };
        self.run(&cmd, &mut ctx, out);
        self.exec_n = ctx.exec_n;
    }

    pub(crate) fn on_status<O: Outputs>(
        &mut self,
        who: Principal,
        cl_ord_id: &ClOrdId,
        out: &mut O,
    ) {
        let ix = who.originator;
        let h = self.cl.hash(ix, cl_ord_id.as_bytes());
        let id = self.cl_find(false, h, ix, cl_ord_id.as_bytes());
        let Some(id) = id.filter(|id| self.orders.get(id).is_some()) else {
            let n = self.exec_n;
            self.exec_n += 1;
            return out.output(&Output::StatusUnknown {
                to: ix,
                cl_ord_id,
                n,
            });
        };
        let mut ctx = Ctx {
            who,
            exec_n: self.exec_n,
            cl_ord_id,
            orig_cl_ord_id: &ClOrdId::EMPTY,
            kind: CtxKind::Status,
            order: None,
            mass_count: 0,
        };
        self.report(&mut ctx, id, ReportKind::Status, out);
        self.exec_n = ctx.exec_n;
    }

    /// Remembers that `ix` used `cl_ord_id` (whose `ClIndex::hash` is `hash`) for order `id`,
    /// forgetting finished orders' ClOrdIDs beyond `CL_ORD_IDS_MAX`.
    fn remember_cl_ord_id(&mut self, hash: u64, ix: u16, cl_ord_id: &ClOrdId, id: OrderId) {
        self.cl.push_hashed(hash, ix, cl_ord_id.as_bytes(), id);
        if self.cl.len() > self.cl_max {
            self.cl.prefetch_rotation();
        }
        // Forget the oldest ClOrdIDs but live orders' current ones, which go to the back (at
        // most `ROTATIONS_MAX` of them per call).
        let mut rotations = ROTATIONS_MAX;
        while self.cl.len() > self.cl_max && rotations > 0 {
            rotations -= 1;
            let orders = &self.orders;
            self.cl.rotate_or_forget(|oid, cl| {
                orders
                    .live(&oid)
                    .is_some_and(|o| o.is_live() && eq_short(o.cl_ord_id.as_bytes(), cl))
            });
        }
    }
}
