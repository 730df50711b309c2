//! Engine commands run, and their events turned into outputs: reports to the orders' owners,
//! refusals, and book changes for market data.
//!
//! Role: `Exchange::run` applies one engine command for a request (`Ctx`: who asked, what for,
//! its client order ids) and turns each engine event into the order records' updates (fills,
//! cancels, replaces, retirement), the open-order counts, and the [`Output`](crate::Output)s.
//!
//! Never: allocates per command in steady state (the event buffer is reused); builds a report
//! the sink skips (`Outputs::skip_report`) or a level update a sink without market data would
//! drop.
//!
//! Invariants: execution numbers of one input increase by one per report or refusal made, also
//! for a skipped report, so they are the same in a live run and any replay.

use crate::orders::Orders;
use crate::{
    ClOrdId, Exchange, NewOrder, OrderId, OrderState, Output, Outputs, Principal, Reject, Report,
    ReportKind,
};
use types::{CancelReason, Command, Event, EventSink, Matcher};

/// Collects the engine events of one command. The engine builds a level update only for a
/// sink that keeps it (`O::MARKET_DATA`), so an order-entry exchange saves their work, not
/// only their copy. A trade also starts loading its maker's order record while the engine
/// goes on matching (a resting order's record is usually cold by the time it fills; its
/// report stalled on it).
struct OrderEvents<'a, O> {
    events: &'a mut Vec<Event>,
    orders: &'a Orders,
    _out: std::marker::PhantomData<O>,
}

impl<O: Outputs> EventSink for OrderEvents<'_, O> {
    const LEVELS: bool = O::MARKET_DATA;
    #[inline(always)]
    fn on_event(&mut self, event: &Event) {
        if let Event::Trade { maker_id, .. } = event {
            if let Some(s) = self.orders.live.get(*maker_id) {
                engine::hint::prefetch_all(&self.orders.slab[s as usize]);
            }
        }
        self.events.push(*event);
    }
}

/// The request whose events are being turned into outputs.
pub(crate) struct Ctx<'a> {
    pub(crate) who: Principal,
    pub(crate) exec_n: u32,
    /// The request's client order ids (borrowed from the input: not copied).
    pub(crate) cl_ord_id: &'a ClOrdId,
    pub(crate) orig_cl_ord_id: &'a ClOrdId,
    pub(crate) kind: CtxKind,
    pub(crate) order: Option<&'a NewOrder>,
    pub(crate) mass_count: u64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum CtxKind {
    New,
    Cancel,
    Replace,
    Mass,
    Status,
    /// Canceling a disconnected originator's orders.
    Disconnect,
    /// Canceling a firm's (or account's) orders for the operator's kill switch.
    Kill,
    /// Expiring DAY orders at the end of the trading day.
    DayEnd,
}

impl Exchange {
    /// Applies one engine command and turns its events into outputs.
    pub(crate) fn run<O: Outputs>(&mut self, cmd: &Command, ctx: &mut Ctx<'_>, out: &mut O) {
        let mut events = std::mem::take(&mut self.events);
        events.clear();
        if let Some(log) = &mut self.event_log {
            self.engine.apply(cmd, &mut events);
            log.extend_from_slice(&events);
        } else {
            let mut sink = OrderEvents::<O> {
                events: &mut events,
                orders: &self.orders,
                _out: std::marker::PhantomData,
            };
            self.engine.apply(cmd, &mut sink);
        }
        for ev in &events {
            self.on_event(ev, ctx, out);
        }
        self.events = events;
        if self.risk.any_tripped() {
            self.trip_breakers(out);
        }
    }

    /// Halts the instruments whose circuit breaker the command's trades tripped.
    #[cold]
    fn trip_breakers<O: Outputs>(&mut self, out: &mut O) {
        let tripped = self.risk.take_tripped();
        for &symbol in &tripped {
            self.risk.trip(symbol);
            out.output(&Output::InstrumentStatus {
                symbol,
                status: crate::InstrumentStatus::Halted,
            });
        }
        self.risk.put_tripped(tripped);
    }

    fn on_event<O: Outputs>(&mut self, ev: &Event, ctx: &mut Ctx<'_>, out: &mut O) {
        match *ev {
            Event::Accepted { id, .. } => self.report(ctx, id, ReportKind::New, out),
            Event::Triggered { id, .. } => {
                if let Some(x) = self.orders.ext.get_mut(&id) {
                    x.triggered = true;
                }
                self.report(ctx, id, ReportKind::Triggered, out)
            }
            Event::Uncrossed { .. } => {
                if O::MARKET_DATA {
                    out.output(&Output::Market(ev));
                }
            }
            Event::Rejected { id, reason } => {
                let reason = Reject::from_engine(reason);
                match ctx.kind {
                    CtxKind::New => {
                        if let Some(o) = self.orders.remove_live(&id) {
                            self.open.remove(o.account);
                            let a = self.open.account_ix(o.account);
                            self.risk.unrest(a, &o, o.leaves_qty);
                        }
                        if let Some(order) = ctx.order {
                            let n = ctx.exec_n;
                            ctx.exec_n += 1;
                            out.output(&Output::NewRejected {
                                to: ctx.who.originator,
                                order,
                                reason,
                                n,
                            });
                        }
                    }
                    CtxKind::Cancel | CtxKind::Replace => {
                        let status = self.orders.get(&id).map(|o| (id, o.status()));
                        out.output(&Output::CancelRejected {
                            to: ctx.who.originator,
                            cl_ord_id: ctx.cl_ord_id,
                            orig_cl_ord_id: ctx.orig_cl_ord_id,
                            replace: ctx.kind == CtxKind::Replace,
                            reason,
                            order: status,
                        });
                    }
                    CtxKind::Mass
                    | CtxKind::Status
                    | CtxKind::Disconnect
                    | CtxKind::Kill
                    | CtxKind::DayEnd => {}
                }
            }
            Event::Trade {
                symbol,
                price,
                qty,
                maker_id,
                taker_id,
                maker_leaves,
                taker_leaves,
                ..
            } => {
                self.stats.trades += 1;
                if O::MARKET_DATA {
                    out.output(&Output::Market(ev));
                }
                for (id, leaves) in [(maker_id, maker_leaves), (taker_id, taker_leaves)] {
                    // Both sides are live orders: one lookup serves the update, the report
                    // and the retirement.
                    let Some(slot) = self.orders.slot(id) else {
                        continue;
                    };
                    let o = &mut self.orders.slab[slot as usize];
                    o.cum_qty += qty;
                    o.leaves_qty = leaves;
                    o.notional += price as i128 * qty as i128;
                    if leaves == 0 {
                        o.state = OrderState::Filled;
                        let account = o.account;
                        self.open.remove(account);
                    }
                    let o = &self.orders.slab[slot as usize];
                    if let Some(a) = self.open.account_ix(o.account) {
                        if crate::risk::counted(o) {
                            self.risk.sub_open(a, o.symbol, o.side, o.price, qty);
                        }
                        self.risk.fill(a, o.symbol, o.side, qty);
                    }
                    self.report_at(ctx, id, slot, ReportKind::Fill { price, qty }, out);
                    if leaves == 0 {
                        self.orders.retire(id);
                    }
                }
                self.risk.traded(symbol, price);
            }
            Event::Canceled { id, reason, .. } => {
                if matches!(
                    ctx.kind,
                    CtxKind::Mass | CtxKind::Disconnect | CtxKind::Kill
                ) {
                    ctx.mass_count += 1;
                }
                let Some(slot) = self.orders.slot(id) else {
                    return;
                };
                let o = &mut self.orders.slab[slot as usize];
                let leaves = o.leaves_qty;
                // To the engine, a collared market order was an IOC limit at the band's edge.
                let reason = if reason == CancelReason::Ioc && o.ord_type == types::OrdType::Market
                {
                    CancelReason::Collar
                } else {
                    reason
                };
                o.leaves_qty = 0;
                o.state = if reason == CancelReason::Expired {
                    OrderState::Expired
                } else {
                    OrderState::Canceled
                };
                let account = o.account;
                self.open.remove(account);
                let o = &self.orders.slab[slot as usize];
                self.risk.unrest(self.open.account_ix(account), o, leaves);
                let reason = match ctx.kind {
                    CtxKind::Disconnect => CancelReason::Disconnect,
                    CtxKind::Kill => CancelReason::Operator,
                    _ => reason,
                };
                self.report_at(ctx, id, slot, ReportKind::Canceled(reason), out);
                self.orders.retire(id);
            }
            Event::Replaced { id, price, qty, .. } => {
                let Some(slot) = self.orders.slot(id) else {
                    return;
                };
                let o = &mut self.orders.slab[slot as usize];
                let (old_price, old_leaves) = (o.price, o.leaves_qty);
                o.price = price;
                o.leaves_qty = qty;
                o.order_qty = o.cum_qty + qty;
                o.cl_ord_id = *ctx.cl_ord_id;
                let o = &self.orders.slab[slot as usize];
                if let (true, Some(a)) = (crate::risk::counted(o), self.open.account_ix(o.account))
                {
                    self.risk
                        .sub_open(a, o.symbol, o.side, old_price, old_leaves);
                    self.risk.add_open(a, o.symbol, o.side, price, qty);
                }
                self.report_at(ctx, id, slot, ReportKind::Replaced, out);
            }
            Event::Level { .. } => {
                if O::MARKET_DATA {
                    out.output(&Output::Market(ev));
                }
            }
            Event::MassCanceled { .. } => {}
        }
    }

    /// A report about order `id` to its owner (nothing if it is not remembered).
    #[inline]
    pub(crate) fn report<O: Outputs>(
        &mut self,
        ctx: &mut Ctx<'_>,
        id: OrderId,
        kind: ReportKind,
        out: &mut O,
    ) {
        if let Some(slot) = self.orders.slot(id) {
            self.report_at(ctx, id, slot, kind, out);
        }
    }

    /// `report` for order `id`, whose record is at `slot`. Whether the sink wants it is asked
    /// inline (a bounded replay wants few: no call at all for the rest); the report itself is
    /// built out of line.
    #[inline(always)]
    fn report_at<O: Outputs>(
        &mut self,
        ctx: &mut Ctx<'_>,
        id: OrderId,
        slot: u32,
        kind: ReportKind,
        out: &mut O,
    ) {
        let owner = self.orders.slab[slot as usize].owner;
        self.stats.reports += 1;
        if out.skip_report(owner) {
            ctx.exec_n += 1;
            return;
        }
        self.report_built(ctx, id, slot, kind, out);
    }

    #[inline(never)]
    fn report_built<O: Outputs>(
        &mut self,
        ctx: &mut Ctx<'_>,
        id: OrderId,
        slot: u32,
        kind: ReportKind,
        out: &mut O,
    ) {
        let o = &self.orders.slab[slot as usize];
        // The requester's ClOrdID on its own cancel/replace/status; the order's own otherwise.
        let own_request = o.owner == ctx.who.originator
            && matches!(
                ctx.kind,
                CtxKind::Cancel | CtxKind::Replace | CtxKind::Status
            )
            && matches!(
                kind,
                ReportKind::Canceled(_) | ReportKind::Replaced | ReportKind::Status
            );
        let (cl, orig): (&[u8], Option<&[u8]>) = if own_request {
            let orig = (!ctx.orig_cl_ord_id.is_empty()).then(|| ctx.orig_cl_ord_id.as_bytes());
            (ctx.cl_ord_id.as_bytes(), orig)
        } else {
            (o.cl_ord_id.as_bytes(), None)
        };
        let r = Report {
            id,
            order: o,
            n: ctx.exec_n,
            kind,
            cl_ord_id: cl,
            orig_cl_ord_id: orig,
            ext: self.orders.ext_of(id),
        };
        ctx.exec_n += 1;
        out.report(&r);
    }
}
