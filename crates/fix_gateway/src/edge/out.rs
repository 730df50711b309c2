//! The exchange's outputs as FIX messages: ExecutionReports, OrderCancelRejects,
//! OrderMassCancelReports and BusinessMessageRejects on the sessions of the orders' owners,
//! TradingSessionStatus to the sessions subscribed to the trading status, their drop copies,
//! and the explicit mappings from the exchange's reasons to FIX codes.
//!
//! Drop copy: every ExecutionReport about an order (new, fill, cancel, replace, expiry, and a
//! refused NewOrderSingle's ExecType 8) also goes to each drop-copy session of the owner's
//! firm, right after the original: numbered in that session's sequence, kept in its store
//! (a recipe, formatted in its version, marked as a copy: `fix::app::DropCopy`) and written
//! if it is logged on, exactly as the owner's own. Answers to a status request are not copied
//! (they change nothing), nor are OrderCancelRejects (not ExecutionReports).

use super::{EdgeStats, FixSession, Outbox, Wire};
use crate::config::FixConfig;
use crate::record::ConnId;
use crate::store::{Body, CancelRejectRecipe, ExecRecipe};
use exchange::{ClOrdId, OrderStatus, Output, Outputs, Reject, Report, ReportKind};
use fix::app::{
    self, AppMessage, BusinessMessageReject, DropCopy, ExecType, OrdStatus, OrderlessReport,
};
use fix::{BusinessRejectReason, Encoder, FixVersion, Text};
use types::CancelReason;

/// The exchange's outputs of one application message, as FIX messages on the sessions of
/// their owners.
pub(super) struct EdgeOut<'a, const MD: bool = false> {
    pub(super) sessions: &'a mut [FixSession],
    /// By session: the drop-copy sessions that get copies of its ExecutionReports.
    pub(super) copies: &'a [Vec<u16>],
    pub(super) conn_of: &'a [Option<ConnId>],
    pub(super) cfg: &'a FixConfig,
    pub(super) out: &'a mut Outbox,
    pub(super) seq: u64,
    pub(super) ts: u64,
    pub(super) muted: bool,
    pub(super) stats: &'a mut EdgeStats,
    /// A status request's echoed fields.
    pub(super) echo: &'a [u8],
    /// The request is a PossResend (97=Y): if the exchange refuses it as a duplicate ClOrdID,
    /// it was processed before and is ignored (no answer), as the FIX session layer asks.
    pub(super) ignore_duplicate: bool,
    /// The routing fields of the request being answered and the session that sent it: every
    /// answer to that session carries them reversed (and is stored as bytes, for resends).
    pub(super) route: Option<(&'a fix::Route, u16)>,
    /// By session: its trading-status subscription's TradSesReqID.
    pub(super) trading_subs: &'a [Option<Text>],
    /// The body of a message `send_body` writes (reused: no allocation per message).
    pub(super) body: &'a mut Encoder,
}

impl<const MD: bool> Outputs for EdgeOut<'_, MD> {
    /// A market-data replica (`FixEdge`'s `MD` parameter) gets the trades and level
    /// changes in `Outbox::market`.
    const MARKET_DATA: bool = MD;

    /// A bounded replay that will have forgotten the report by its end numbers it and builds
    /// nothing of it.
    #[inline(always)]
    fn skip_report(&mut self, to: u16) -> bool {
        if MD && self.out.collect_reports {
            return false;
        }
        let Some(s) = self.sessions.get_mut(to as usize) else {
            return false;
        };
        // A copied report is built: whether it is copied depends on its kind.
        if s.next_out() >= s.store().skip_below || !self.copies[to as usize].is_empty() {
            return false;
        }
        s.next_app(self.ts);
        self.stats.execution_reports += 1;
        true
    }

    #[inline(always)]
    fn report(&mut self, r: &Report<'_>) {
        self.tee(&Output::Report(r));
        if r.order.owner as usize >= self.sessions.len() {
            return self.other(&Output::Report(r));
        }
        self.execution_report(r);
    }

    #[inline]
    fn output(&mut self, o: &Output<'_>) {
        self.tee(o);
        if let Some(to) = recipient(o) {
            if to as usize >= self.sessions.len() {
                return self.other(o);
            }
        }
        if self.ignore_duplicate {
            if let Output::NewRejected {
                reason: Reject::DuplicateClOrdId,
                ..
            }
            | Output::CancelRejected {
                reason: Reject::DuplicateClOrdId,
                ..
            } = o
            {
                self.stats.resends_ignored += 1;
                return;
            }
        }
        match *o {
            Output::Report(r) => self.execution_report(r),
            Output::NewRejected {
                to,
                order,
                reason,
                n,
            } => {
                let echo = crate::adapter::echo_of(self.cfg, order);
                let mut buf = [0u8; exchange::DESCRIBE_MAX];
                self.order_reject(
                    to,
                    &order.cl_ord_id,
                    n,
                    reason,
                    reason.describe(&mut buf),
                    echo.as_bytes(),
                );
            }
            // A closed market's reject says when it opens, a risk limit's the value and the
            // limit, a kill switch's whose (texts of their own, stored as bytes).
            Output::CancelRejected {
                to,
                cl_ord_id,
                orig_cl_ord_id,
                replace,
                reason:
                    reason @ (Reject::MarketClosed { .. }
                    | Reject::PriceBand { .. }
                    | Reject::RiskLimit { .. }
                    | Reject::Blocked { .. }
                    | Reject::InstrumentNotOpen { .. }),
                order,
            } => {
                let mut buf = [0u8; exchange::DESCRIBE_MAX];
                self.cancel_reject_text(
                    to,
                    CancelRejectText {
                        cl_ord_id,
                        orig_cl_ord_id,
                        order: order.map(|(id, s)| (id, ord_status(s))),
                        replace,
                        reason_code: cxl_rej_reason(reason),
                        text: reason.describe(&mut buf),
                    },
                )
            }
            Output::CancelRejected {
                to,
                cl_ord_id,
                orig_cl_ord_id,
                replace,
                reason,
                order,
            } => self.cancel_reject(
                to,
                cl_ord_id,
                orig_cl_ord_id,
                CancelRejectRecipe {
                    order: order.map(|(id, s)| (id, ord_status(s))),
                    replace,
                    reason_code: cxl_rej_reason(reason),
                    text: reason.text(),
                },
            ),
            Output::MassCanceled {
                to,
                cl_ord_id,
                symbol,
                side,
                request_seq,
                count,
            } => {
                // The exchange's request is the FIX one: all orders (7) or one symbol's (1).
                let request_type = if symbol.is_some() { 1 } else { 7 };
                self.mass_cancel_report(
                    to,
                    MassCancelOutcome {
                        cl_ord_id,
                        request_seq,
                        request_type,
                        rejected: None,
                        count,
                        symbol,
                        side,
                    },
                );
            }
            Output::StatusUnknown { to, cl_ord_id, n } => {
                let echo = self.echo;
                let seq = self.seq;
                self.send_body(to, b'8', |v, enc| {
                    OrderlessReport {
                        cl_ord_id: cl_ord_id.as_bytes(),
                        exec_id: (seq, n),
                        status: true,
                        echo,
                        ord_rej_reason: None,
                        text: Reject::UnknownOrder.text().as_bytes(),
                        transact_time_ns: None,
                    }
                    .encode_body(v, enc)
                });
            }
            Output::Market(e) => self.out.market.push(*e),
            Output::TradingStatus(s) => self.trading_status(s),
            // The market-data edge tells of an instrument's status (SecurityStatus) and of
            // its indicative uncross; the replica's exchange has both
            // (`Exchange::instrument_status`, `Exchange::indicative`).
            Output::InstrumentStatus { .. } | Output::Indicative { .. } => {}
        }
    }

    /// A trade-store replica's copy of every report (`Outbox::collect_reports`).
    #[inline(always)]
    fn tee(&mut self, o: &Output<'_>) {
        if MD && self.out.collect_reports {
            if let Output::Report(r) = o {
                self.out
                    .reports
                    .extend(exchange::OwnedOutput::of(&Output::Report(r)));
            }
        }
    }
}

/// The originator an output is for (`None`: market data and the trading status, for all).
fn recipient(o: &Output<'_>) -> Option<u16> {
    match *o {
        Output::Report(r) => Some(r.order.owner),
        Output::NewRejected { to, .. }
        | Output::CancelRejected { to, .. }
        | Output::MassCanceled { to, .. }
        | Output::StatusUnknown { to, .. } => Some(to),
        Output::Market(_)
        | Output::TradingStatus(_)
        | Output::InstrumentStatus { .. }
        | Output::Indicative { .. } => None,
    }
}

/// What an OrderMassCancelReport says (`EdgeOut::mass_cancel_report`): the request it
/// answers and its outcome.
pub(super) struct MassCancelOutcome<'a> {
    pub(super) cl_ord_id: &'a ClOrdId,
    /// The record that journaled the request (the report's MassActionReportID).
    pub(super) request_seq: u64,
    /// MassCancelRequestType (530) of the request.
    pub(super) request_type: u8,
    /// Refused, with this text; `None`: carried out.
    pub(super) rejected: Option<&'a str>,
    /// Orders it canceled.
    pub(super) count: u64,
    pub(super) symbol: Option<types::SymbolId>,
    pub(super) side: Option<types::Side>,
}

impl<const MD: bool> EdgeOut<'_, MD> {
    /// An output for an originator that is not a FIX session (an API key): kept in
    /// `Outbox::others` for the edge that serves it.
    #[cold]
    fn other(&mut self, o: &Output<'_>) {
        if let Some(owned) = exchange::OwnedOutput::of(o) {
            self.out.others.push(owned);
        }
    }

    /// Writes session `to`'s newest stored message if it is logged on (and this is not a
    /// replay): recipes are formatted only here and on resend.
    #[inline(always)]
    fn write_last(&mut self, to: u16, seq: u64, msg_type: u8) {
        let s = &mut self.sessions[to as usize];
        let Some(conn) = self.conn_of[to as usize] else {
            return;
        };
        if self.muted || !s.is_active() {
            return;
        }
        let version = s.config().version;
        let mut w = Wire::new(Some(conn), &mut *self.out, false);
        s.write_app(seq, &[msg_type], self.ts, &mut w, |enc, store| {
            store.body_into(store.last(), version, enc)
        });
    }

    /// An application message given as its body: numbered, stored as bytes, written.
    pub(super) fn send_body(
        &mut self,
        to: u16,
        msg_type: u8,
        body: impl FnOnce(FixVersion, &mut Encoder),
    ) {
        let ts = self.ts;
        let s = &mut self.sessions[to as usize];
        let version = s.config().version;
        let seq = s.next_app(ts);
        let enc = &mut *self.body;
        enc.begin_body();
        if let Some((route, _)) = self.route.filter(|&(_, requester)| requester == to) {
            route.write_reversed(enc);
        }
        body(version, enc);
        s.store_mut().push_body(seq, msg_type, ts, enc.body());
        if msg_type == b'8' {
            self.stats.execution_reports += 1;
        }
        self.write_last(to, seq, msg_type);
    }

    /// TradingSessionStatus (UnsolicitedIndicator Y) to every subscribed session, in session
    /// order.
    #[cold]
    fn trading_status(&mut self, s: exchange::TradingStatus) {
        let subs = self.trading_subs;
        let status = super::trad_ses_status(s);
        for (ix, sub) in subs.iter().enumerate() {
            let Some(req_id) = sub else {
                continue;
            };
            self.send_body(ix as u16, b'h', |v, enc| {
                app::TradingSessionStatus {
                    req_id: Some(req_id.as_bytes()),
                    status,
                    unsolicited: true,
                }
                .encode_body(v, enc)
            });
        }
    }

    #[inline(never)]
    fn execution_report(&mut self, r: &Report<'_>) {
        let to = r.order.owner;
        let ts = self.ts;
        let s = &mut self.sessions[to as usize];
        let seq = s.next_app(ts);
        if self.route.is_some_and(|(_, requester)| requester == to) {
            return self.routed_report(r, seq);
        }
        let m = s
            .store_mut()
            .slot(seq, b'8', ts, r.cl_ord_id, r.orig_cl_ord_id);
        let recipe = &mut m.body;
        *recipe = Body::Exec(exec_recipe(self.seq, r));
        let copied = (!self.copies[to as usize].is_empty() && r.kind != ReportKind::Status)
            .then_some(*recipe);
        self.stats.execution_reports += 1;
        self.write_last(to, seq, b'8');
        if let Some(recipe) = copied {
            self.copy_report(to, recipe, r);
        }
    }

    /// `execution_report` of a report answering a request with routing fields: stored as
    /// bytes with the fields reversed (so a resend carries them too); its drop copies as usual.
    #[cold]
    fn routed_report(&mut self, r: &Report<'_>, seq: u64) {
        let to = r.order.owner;
        let recipe = Body::Exec(exec_recipe(self.seq, r));
        self.store_routed(to, seq, b'8', &recipe, (r.cl_ord_id, r.orig_cl_ord_id));
        self.stats.execution_reports += 1;
        if !self.copies[to as usize].is_empty() && r.kind != ReportKind::Status {
            self.copy_report(to, recipe, r);
        }
    }

    /// Stores message `seq` of session `to` as the body `recipe` stands for, after the
    /// reversed routing fields of the request it answers, and writes it.
    #[cold]
    fn store_routed(
        &mut self,
        to: u16,
        seq: u64,
        msg_type: u8,
        recipe: &Body,
        ids: (&[u8], Option<&[u8]>),
    ) {
        let ts = self.ts;
        let s = &mut self.sessions[to as usize];
        let version = s.config().version;
        let enc = &mut *self.body;
        enc.begin_body();
        if let Some((route, _)) = self.route {
            route.write_reversed(enc);
        }
        s.store().recipe_into(recipe, ids, ts, version, enc);
        s.store_mut().push_body(seq, msg_type, ts, enc.body());
        self.write_last(to, seq, msg_type);
    }
}

/// What an ExecutionReport about report `r` (of journal record `record_seq`) says.
#[inline(always)]
fn exec_recipe(record_seq: u64, r: &Report<'_>) -> ExecRecipe {
    let o = r.order;
    let (exec_type, last, text) = match r.kind {
        ReportKind::New => (ExecType::New, None, None),
        ReportKind::Fill { price, qty } => (ExecType::Trade, Some((price, qty)), None),
        ReportKind::Canceled(CancelReason::Expired) => (ExecType::Expired, None, None),
        ReportKind::Canceled(reason) => (
            ExecType::Canceled,
            None,
            (reason != CancelReason::User).then_some(reason),
        ),
        ReportKind::Replaced => (ExecType::Replaced, None, None),
        ReportKind::Status => (ExecType::OrderStatus, None, None),
        ReportKind::Triggered => (ExecType::Triggered, None, None),
    };
    ExecRecipe {
        order_id: r.id,
        exec_seq: record_seq,
        exec_n: r.n,
        exec_type,
        ord_status: match exec_type {
            ExecType::Expired => OrdStatus::Expired,
            _ => ord_status(o.status()),
        },
        side: o.side,
        ord_type: o.ord_type,
        tif: o.tif,
        account: o.account,
        symbol: o.symbol,
        price: o.price,
        order_qty: o.order_qty,
        last,
        leaves_qty: o.leaves_qty,
        cum_qty: o.cum_qty,
        notional: o.notional,
        text,
        ext: app::OrderExt {
            stop_px: r.ext.stop_price,
            max_floor: r.ext.display_qty,
            expire_time_ns: r.ext.expire_ns,
        },
        copy_of: None,
    }
}

impl<const MD: bool> EdgeOut<'_, MD> {
    /// Copies of the report `r` to `owner` (its `recipe`) for the drop-copy sessions.
    #[cold]
    fn copy_report(&mut self, owner: u16, recipe: Body, r: &Report<'_>) {
        let Body::Exec(mut recipe) = recipe else {
            return;
        };
        recipe.copy_of = Some(owner);
        let ts = self.ts;
        for &c in &self.copies[owner as usize] {
            let s = &mut self.sessions[c as usize];
            let seq = s.next_app(ts);
            let m = s
                .store_mut()
                .slot(seq, b'8', ts, r.cl_ord_id, r.orig_cl_ord_id);
            m.body = Body::Exec(recipe);
            self.stats.execution_reports += 1;
            self.write_last(c, seq, b'8');
        }
    }

    /// OrderMassCancelReport of the mass cancel session `to` requested in record
    /// `m.request_seq`: carried out (`rejected` none, with the orders it canceled) or refused.
    pub(super) fn mass_cancel_report(&mut self, to: u16, m: MassCancelOutcome<'_>) {
        let MassCancelOutcome {
            cl_ord_id,
            request_seq,
            request_type,
            rejected,
            count,
            symbol,
            side,
        } = m;
        // A journaled symbol index beyond the instruments (a journal of another
        // configuration) is named by none.
        let sym = symbol.and_then(|s| self.cfg.instruments.get(s as usize).map(|i| i.symbol));
        let report = app::OrderMassCancelReport {
            cl_ord_id: cl_ord_id.as_bytes(),
            report_id: request_seq,
            request_type,
            rejected: rejected.map(str::as_bytes),
            total_affected_orders: count,
            symbol: sym.as_ref().map(|s| s.as_str().as_bytes()),
            side,
        };
        self.send_body(to, b'r', |v, enc| report.encode_body(v, enc));
    }

    /// ExecutionReport ExecType=8 for a NewOrderSingle refused.
    pub(super) fn order_reject(
        &mut self,
        to: u16,
        cl_ord_id: &ClOrdId,
        n: u32,
        reason: Reject,
        text: &str,
        echo: &[u8],
    ) {
        let seq = self.seq;
        let ts = self.ts;
        let report = OrderlessReport {
            cl_ord_id: cl_ord_id.as_bytes(),
            exec_id: (seq, n),
            status: false,
            echo,
            ord_rej_reason: Some(ord_rej_reason(reason)),
            text: text.as_bytes(),
            transact_time_ns: Some(ts),
        };
        self.send_body(to, b'8', |v, enc| report.encode_body(v, enc));
        let copies = self.copies;
        if copies[to as usize].is_empty() {
            return;
        }
        let cfg = self.cfg;
        let deliver_to = cfg.sessions[to as usize].sender_comp_id.as_bytes();
        for &c in &copies[to as usize] {
            self.send_body(c, b'8', |v, enc| {
                DropCopy {
                    deliver_to_comp_id: deliver_to,
                    report: &report,
                }
                .encode_body(v, enc)
            });
        }
    }

    /// OrderCancelReject `r` with a fixed text: stored as a recipe, formatted only when
    /// written to a live connection or resent (never in replay).
    pub(super) fn cancel_reject(
        &mut self,
        to: u16,
        cl_ord_id: &ClOrdId,
        orig_cl_ord_id: &ClOrdId,
        r: CancelRejectRecipe,
    ) {
        let ts = self.ts;
        let s = &mut self.sessions[to as usize];
        let seq = s.next_app(ts);
        let ids = (cl_ord_id.as_bytes(), Some(orig_cl_ord_id.as_bytes()));
        if self.route.is_some_and(|(_, requester)| requester == to) {
            return self.store_routed(to, seq, b'9', &Body::CancelReject(r), ids);
        }
        let m = s.store_mut().slot(seq, b'9', ts, ids.0, ids.1);
        m.body = Body::CancelReject(r);
        self.write_last(to, seq, b'9');
    }

    /// OrderCancelReject with a text of its own (stored as bytes).
    pub(super) fn cancel_reject_text(&mut self, to: u16, r: CancelRejectText<'_>) {
        let CancelRejectText {
            cl_ord_id,
            orig_cl_ord_id,
            order,
            replace,
            reason_code,
            text,
        } = r;
        self.send_body(to, b'9', |v, enc| {
            app::OrderCancelReject {
                order_id: order.map(|(id, _)| id),
                cl_ord_id: cl_ord_id.as_bytes(),
                orig_cl_ord_id: orig_cl_ord_id.as_bytes(),
                ord_status: order.map(|(_, s)| s),
                response_to: if replace {
                    app::CxlRejResponseTo::CancelReplaceRequest
                } else {
                    app::CxlRejResponseTo::CancelRequest
                },
                reason: reason_code,
                text: text.as_bytes(),
            }
            .encode_body(v, enc)
        });
    }

    pub(super) fn business_reject(
        &mut self,
        to: u16,
        ref_seq: u64,
        msg_type: &[u8],
        cl_ord_id: &ClOrdId,
        unsupported: bool,
        text: &str,
    ) {
        self.send_body(to, b'j', |v, enc| {
            BusinessMessageReject {
                ref_seq_num: ref_seq,
                ref_msg_type: msg_type,
                business_reject_ref_id: (!cl_ord_id.is_empty()).then(|| cl_ord_id.as_bytes()),
                reason: if unsupported {
                    BusinessRejectReason::UnsupportedMessageType
                } else {
                    BusinessRejectReason::Other
                },
                text: text.as_bytes(),
            }
            .encode_body(v, enc)
        });
    }
}

/// OrdStatus (39) of an order's status.
pub fn ord_status(s: OrderStatus) -> OrdStatus {
    match s {
        OrderStatus::New => OrdStatus::New,
        OrderStatus::PartiallyFilled => OrdStatus::PartiallyFilled,
        OrderStatus::Filled => OrdStatus::Filled,
        OrderStatus::Canceled => OrdStatus::Canceled,
        OrderStatus::Expired => OrdStatus::Expired,
    }
}

/// An OrderCancelReject whose text is not a reason's fixed words (`cancel_reject_text`).
pub(super) struct CancelRejectText<'a> {
    pub cl_ord_id: &'a ClOrdId,
    pub orig_cl_ord_id: &'a ClOrdId,
    /// OrderID and OrdStatus of the order, if the requester has it.
    pub order: Option<(u64, app::OrdStatus)>,
    pub replace: bool,
    pub reason_code: u32,
    pub text: &'a str,
}

/// OrdRejReason (103) of a refused new order (the builder sends a version's nearest code
/// where it lacks one: `fix::app::OrderlessReport`).
pub fn ord_rej_reason(r: Reject) -> u32 {
    use app::ord_rej_reason as c;
    match r {
        Reject::UnknownSymbol => c::UNKNOWN_SYMBOL,
        Reject::DuplicateClOrdId | Reject::DuplicateOrderId => c::DUPLICATE_ORDER,
        // "Order exceeds limit", in every version.
        Reject::FirmOpenOrderLimit { .. }
        | Reject::AccountOpenOrderLimit { .. }
        | Reject::PriceBand { .. }
        | Reject::RiskLimit { .. } => c::ORDER_EXCEEDS_LIMIT,
        Reject::InstrumentNotOpen { .. } => c::EXCHANGE_CLOSED,
        _ => c::OTHER,
    }
}

/// CxlRejReason (102) of a refused cancel or replace.
pub fn cxl_rej_reason(r: Reject) -> u32 {
    use app::cxl_rej_reason as c;
    match r {
        Reject::UnknownOrder => c::UNKNOWN_ORDER,
        Reject::DuplicateClOrdId => c::DUPLICATE_CL_ORD_ID,
        Reject::ExchangeBusy => c::ALREADY_PENDING,
        _ => c::OTHER,
    }
}
