//! The API edge's state machine: an `ApiInput` (a journaled request of an API key) in, the
//! exchange's inputs and the answer out; rebuilt exactly by replay, like the FIX edge.
//!
//! Role: turn a request into `exchange::Input`s with the key's principal (the key is the
//! originator, its account's firm the firm), collect what the exchange answers the key, and
//! write the JSON answer for the waiting HTTP request (`ApiOutbox::answers`); keep each key's
//! answers by Idempotency-Key so that a retry gets the first answer byte for byte; turn every
//! report about a key's orders (its own requests', and fills and expiries other edges cause)
//! into an order event for its private stream (`ApiOutbox::events`, when asked for).
//!
//! Never: reads a clock or touches a socket (time is the record's); decides a business rule
//! (who owns an order, whether a client order id is fresh, how orders match: the exchange
//! does); answers another key's order other than as an unknown one.
//!
//! Invariants: the same records give the same answers and the same store (the store is part
//! of the snapshot and the state hash); an answer kept for an Idempotency-Key is the one the
//! first request got.

use crate::config::{ApiConfig, InstrumentDef};
use crate::json::{self, Answer, Canceled, FillJson, OrderJson, OrderList};
use crate::record::{ApiInput, ApiOp, Idem, OrderRef, ReqId};
use exchange::codec::{Dec, DecodeError, Enc};
use exchange::{
    ClOrdId, Exchange, Input, NewOrder, OrderRecord, Output, Outputs, OwnedOutput, Principal,
    Replace, Report, ReportKind,
};
use serde::Serialize;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use types::CancelReason;

/// What the edge produced for the process: answers to waiting requests, and order events.
#[derive(Debug, Default)]
pub struct ApiOutbox {
    pub answers: Vec<(ReqId, Answer)>,
    /// (key, JSON of the event) in record order.
    pub events: Vec<(u16, Vec<u8>)>,
}

impl ApiOutbox {
    pub fn clear(&mut self) {
        self.answers.clear();
        self.events.clear();
    }
}

/// One kept answer of a key.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Kept {
    fingerprint: u64,
    /// Record time of the request.
    ts: u64,
    /// `None` while the request is still being carried out (a cancel of many orders).
    answer: Option<Answer>,
    /// Requests waiting for it (the first one and retries that came before it ended).
    waiting: Vec<ReqId>,
}

/// A key's kept answers, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Store {
    order: VecDeque<String>,
    kept: HashMap<String, Kept>,
}

/// A cancel of a key's open orders not finished in its own record.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PendingCancelAll {
    key: u16,
    request_seq: u64,
    req: ReqId,
    idem: Option<String>,
}

/// Cluster mode: a new order, cancel or replace whose answer comes with a later record (the
/// engine's outcome), found by the key and the ClOrdID of the request.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Awaiting {
    key: u16,
    cl: ClOrdId,
    /// The status of a success: 201 for a new order, 200 otherwise.
    ok: u16,
    req: ReqId,
    idem: Option<String>,
}

pub struct ApiEdge {
    cfg: Arc<ApiConfig>,
    stores: Vec<Store>,
    pending: Vec<PendingCancelAll>,
    awaiting: Vec<Awaiting>,
    /// Set by `carry_out` when the request was sent to an engine (`Exchange::is_remote`).
    sent: Option<(ClOrdId, u16)>,
    /// Answers for waiting requests are written (the live server); a replay only keeps
    /// what the store needs.
    pub answers_on: bool,
    /// Order events are written (the market-data replica, which serves the private streams).
    pub events_on: bool,
    pub out: ApiOutbox,
    /// New orders handed to the exchange (not part of the replicated state: the server
    /// reports it, `/metrics`).
    pub orders: u64,
}

/// An order event of a key's private stream.
#[derive(Serialize)]
struct Event<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    channel: &'static str,
    event: &'static str,
    order: &'a OrderJson,
}

impl ApiEdge {
    pub fn new(cfg: Arc<ApiConfig>) -> ApiEdge {
        let stores = vec![Store::default(); cfg.keys.len()];
        ApiEdge {
            cfg,
            stores,
            pending: Vec::new(),
            awaiting: Vec::new(),
            sent: None,
            answers_on: false,
            events_on: false,
            out: ApiOutbox::default(),
            orders: 0,
        }
    }

    pub fn config(&self) -> &Arc<ApiConfig> {
        &self.cfg
    }

    /// Applies journaled request `seq` (stamped `ts`): its answer, kept answer or the
    /// exchange's inputs. `fix` takes the outputs for originators that are not API keys (a
    /// FIX session's order the request traded with) and the market data.
    pub fn on_api<F: Outputs>(
        &mut self,
        seq: u64,
        ts: u64,
        input: &ApiInput,
        x: &mut Exchange,
        fix: &mut F,
    ) {
        if let Some(a) = self.on_admin(seq, ts, input, x, fix) {
            self.answer(input.req, a);
            return;
        }
        let key = input.key;
        if key as usize >= self.cfg.keys.len() {
            // A journal of another configuration: nobody to answer.
            return;
        }
        if let Some(idem) = input.idem.as_ref().filter(|_| input.op.mutates()) {
            if self.retry(key, idem, input.req, ts) {
                return;
            }
        }
        let mut others = Vec::new();
        let answer = self.carry_out(seq, ts, input, x, fix, &mut others);
        self.on_others(seq, ts, &others);
        if let Some((cl, ok)) = self.sent.take() {
            // Cluster mode: the answer comes with the engine's outcome (`on_others`).
            let idem = input.idem.as_ref().filter(|_| input.op.mutates());
            if let Some(idem) = idem {
                self.keep(key, idem, ts, None, vec![input.req]);
            }
            self.awaiting.push(Awaiting {
                key,
                cl,
                ok,
                req: input.req,
                idem: idem.map(|i| i.key.clone()),
            });
            return;
        }
        match answer {
            Some(a) => {
                if let Some(idem) = input.idem.as_ref().filter(|_| input.op.mutates()) {
                    self.keep(key, idem, ts, Some(a.clone()), Vec::new());
                }
                self.answer(input.req, a);
            }
            None => {
                // A cancel of many orders goes on in later records.
                let idem = input.idem.as_ref().filter(|_| input.op.mutates());
                if let Some(idem) = idem {
                    self.keep(key, idem, ts, None, vec![input.req]);
                }
                self.pending.push(PendingCancelAll {
                    key,
                    request_seq: seq,
                    req: input.req,
                    idem: idem.map(|i| i.key.clone()),
                });
            }
        }
    }

    /// An operator's request (`ApiOp::Admin`, `ApiOp::AdminState`): carried out, its answer;
    /// `None` for any other request.
    fn on_admin<F: Outputs>(
        &mut self,
        seq: u64,
        ts: u64,
        input: &ApiInput,
        x: &mut Exchange,
        fix: &mut F,
    ) -> Option<Answer> {
        match &input.op {
            ApiOp::AdminState => Some(Answer::json(200, &crate::admin::state(&self.cfg, x))),
            ApiOp::Admin { operator, action } => {
                if x.is_remote() {
                    return Some(Answer::error(
                        501,
                        "not_in_cluster_mode",
                        "operator actions are not routed to a cluster's engines yet: act on \
                         a single-node server",
                    ));
                }
                let before = crate::admin::open_orders(&self.cfg, x, action);
                let mut others = Vec::new();
                let mut sink = ApiOut {
                    fix,
                    cfg: &self.cfg,
                    requester: u16::MAX,
                    mine: Vec::new(),
                    others: &mut others,
                };
                x.apply(seq, ts, &Input::Admin(action), &mut sink);
                self.on_others(seq, ts, &others);
                Some(Answer::json(
                    200,
                    &crate::admin::done(&self.cfg, x, operator, action, before),
                ))
            }
            _ => None,
        }
    }

    /// Outputs for API keys that another edge's input caused (a FIX order trading with a
    /// key's, the end of the day, the next step of a cancel of many orders): order events,
    /// and the answer of a finished cancel of all orders.
    pub fn on_others(&mut self, seq: u64, ts: u64, others: &[OwnedOutput]) {
        let mut answered: Vec<(usize, Vec<OwnedOutput>)> = Vec::new();
        // Stops triggered in this record: their fills here take liquidity (a stop-limit's
        // that rested and was then hit by another triggered stop is the exception).
        let mut triggered: Vec<u64> = Vec::new();
        for o in others {
            if let Some(i) = self.awaited(o) {
                match answered.iter_mut().find(|(j, _)| *j == i) {
                    Some((_, mine)) => mine.push(o.clone()),
                    None => answered.push((i, vec![o.clone()])),
                }
                continue;
            }
            if let OwnedOutput::MassCanceled {
                to,
                request_seq,
                count,
                ..
            } = *o
            {
                self.cancel_all_ended(to, request_seq, count);
                continue;
            }
            if self.events_on {
                let liquidity = match o {
                    OwnedOutput::Report {
                        id,
                        kind: ReportKind::Triggered,
                        ..
                    } => {
                        triggered.push(*id);
                        "taker"
                    }
                    OwnedOutput::Report { id, .. } if triggered.contains(id) => "taker",
                    _ => "maker",
                };
                o.with(|o| self.event(seq, ts, o, liquidity));
            }
        }
        // Highest index first: removing one leaves the others' indexes valid.
        answered.sort_unstable_by_key(|(i, _)| std::cmp::Reverse(*i));
        for (i, mine) in answered {
            let w = self.awaiting.remove(i);
            let a = self.answer_of(seq, ts, &mine, w.ok);
            let mut waiting = vec![w.req];
            if let Some(k) = &w.idem {
                if let Some(kept) = self.stores[w.key as usize].kept.get_mut(k) {
                    kept.answer = Some(a.clone());
                    waiting = std::mem::take(&mut kept.waiting);
                }
            }
            for req in waiting {
                self.answer(req, a.clone());
            }
        }
    }

    /// The awaiting request output `o` answers, if any.
    fn awaited(&self, o: &OwnedOutput) -> Option<usize> {
        if self.awaiting.is_empty() {
            return None;
        }
        let (to, cl) = match o {
            OwnedOutput::Report {
                order, cl_ord_id, ..
            } => (order.owner, cl_ord_id),
            OwnedOutput::NewRejected { to, order, .. } => (*to, &order.cl_ord_id),
            OwnedOutput::CancelRejected { to, cl_ord_id, .. } => (*to, cl_ord_id),
            _ => return None,
        };
        let key = self.cfg.key_of(to)?;
        self.awaiting
            .iter()
            .position(|a| a.key == key && a.cl == *cl)
    }

    /// Whether `idem` was seen: the kept answer goes to `req` (or `req` waits for it), or a
    /// different request under the same key is refused.
    fn retry(&mut self, key: u16, idem: &Idem, req: ReqId, ts: u64) -> bool {
        self.expire(key, ts);
        let store = &mut self.stores[key as usize];
        let Some(kept) = store.kept.get_mut(&idem.key) else {
            return false;
        };
        if kept.fingerprint != idem.fingerprint {
            let a = Answer::error(
                422,
                "idempotency_key_reused",
                format!(
                    "Idempotency-Key {:?} was used with another request",
                    idem.key
                ),
            );
            self.answer(req, a);
            return true;
        }
        match &kept.answer {
            Some(a) => {
                let a = a.clone();
                self.answer(req, a);
            }
            None => kept.waiting.push(req),
        }
        true
    }

    /// Forgets answers past their time, and the oldest past the count.
    fn expire(&mut self, key: u16, ts: u64) {
        let (max, ttl) = (self.cfg.idempotency_max, self.cfg.idempotency_ttl_ns);
        let store = &mut self.stores[key as usize];
        while let Some(oldest) = store.order.front() {
            let kept = &store.kept[oldest];
            let stale = ts.saturating_sub(kept.ts) > ttl || store.order.len() > max;
            if !stale || kept.answer.is_none() {
                break;
            }
            let k = store.order.pop_front().expect("front");
            store.kept.remove(&k);
        }
    }

    fn keep(
        &mut self,
        key: u16,
        idem: &Idem,
        ts: u64,
        answer: Option<Answer>,
        waiting: Vec<ReqId>,
    ) {
        let store = &mut self.stores[key as usize];
        if store
            .kept
            .insert(
                idem.key.clone(),
                Kept {
                    fingerprint: idem.fingerprint,
                    ts,
                    answer,
                    waiting,
                },
            )
            .is_none()
        {
            store.order.push_back(idem.key.clone());
        }
        self.expire(key, ts);
    }

    fn answer(&mut self, req: ReqId, a: Answer) {
        if self.answers_on {
            self.out.answers.push((req, a));
        }
    }

    /// A cancel of all orders ended: its answer to its request, its retries and its store.
    fn cancel_all_ended(&mut self, to: u16, request_seq: u64, count: u64) {
        let Some(key) = self.cfg.key_of(to) else {
            return;
        };
        let Some(i) = self
            .pending
            .iter()
            .position(|p| p.key == key && p.request_seq == request_seq)
        else {
            return;
        };
        let p = self.pending.remove(i);
        let a = Answer::json(200, &Canceled { canceled: count });
        let mut waiting = vec![p.req];
        if let Some(k) = &p.idem {
            if let Some(kept) = self.stores[key as usize].kept.get_mut(k) {
                kept.answer = Some(a.clone());
                waiting = std::mem::take(&mut kept.waiting);
            }
        }
        for req in waiting {
            self.answer(req, a.clone());
        }
    }

    fn principal(&self, key: u16) -> Principal {
        Principal {
            originator: self.cfg.originator(key),
            firm: self.cfg.keys[key as usize].firm,
        }
    }

    fn instrument(&self, symbol: u32) -> Option<&InstrumentDef> {
        self.cfg.instruments.get(symbol as usize)
    }

    /// The order `r` names, if the key entered it (another key's is not found).
    fn resolve<'x>(
        &self,
        key: u16,
        r: &OrderRef,
        x: &'x Exchange,
    ) -> Option<(u64, &'x OrderRecord)> {
        let originator = self.cfg.originator(key);
        let id = match r {
            OrderRef::Id(id) => *id,
            OrderRef::Client(c) => x.order_of(originator, c.as_bytes())?,
        };
        x.order(id)
            .filter(|o| o.owner == originator)
            .map(|o| (id, o))
    }

    fn not_found(r: &OrderRef) -> Answer {
        let what = match r {
            OrderRef::Id(id) => format!("no order {id}"),
            OrderRef::Client(c) => format!("no order with client_order_id {:?}", c.as_str()),
        };
        Answer::error(404, "unknown_order", what)
    }

    /// Carries out `input`; its answer, or `None` if it goes on in later records.
    fn carry_out<F: Outputs>(
        &mut self,
        seq: u64,
        ts: u64,
        input: &ApiInput,
        x: &mut Exchange,
        fix: &mut F,
        others: &mut Vec<OwnedOutput>,
    ) -> Option<Answer> {
        let key = input.key;
        let who = self.principal(key);
        let mut sink = ApiOut {
            fix,
            cfg: &self.cfg,
            requester: who.originator,
            mine: Vec::new(),
            others,
        };
        Some(match &input.op {
            ApiOp::New(o) => {
                let order = NewOrder {
                    cl_ord_id: if o.cl_ord_id.is_empty() {
                        made_id("", 'n', seq)
                    } else {
                        o.cl_ord_id
                    },
                    account: Some(self.cfg.keys[key as usize].account),
                    ..*o
                };
                self.orders += 1;
                x.apply(seq, ts, &Input::New { who, order: &order }, &mut sink);
                let mine = std::mem::take(&mut sink.mine);
                if mine.is_empty() && x.is_remote() {
                    self.sent = Some((order.cl_ord_id, 201));
                    return None;
                }
                self.answer_of(seq, ts, &mine, 201)
            }
            ApiOp::Cancel(r) | ApiOp::Replace { order: r, .. } => {
                let Some((id, o)) = self.resolve(key, r, x) else {
                    return Some(Self::not_found(r));
                };
                if !o.is_live() {
                    return Some(Answer::error(
                        409,
                        "order_not_open",
                        format!("order {id} is {}", json::status(o.status())),
                    ));
                }
                let orig = o.cl_ord_id;
                let base = base_of(orig.as_str()).to_owned();
                if let ApiOp::Replace {
                    stop_price: Some(stop),
                    ..
                } = &input.op
                {
                    let had = x.order_ext(id).stop_price;
                    if had != *stop {
                        let def = self.instrument(o.symbol);
                        let what = match def.filter(|_| had != 0) {
                            Some(def) => format!("order {id}'s is {}", json::price(had, def)),
                            None => format!("order {id} has none"),
                        };
                        return Some(Answer::error(
                            422,
                            "stop_price_not_replaceable",
                            format!("stop_price cannot be changed: {what}"),
                        ));
                    }
                }
                let req_cl = match &input.op {
                    ApiOp::Replace {
                        price,
                        qty,
                        cl_ord_id,
                        stop_price,
                        ..
                    } => {
                        let replace = Replace {
                            cl_ord_id: cl_ord_id.unwrap_or_else(|| made_id(&base, 'r', seq)),
                            orig_cl_ord_id: orig,
                            symbol: o.symbol,
                            price: price.unwrap_or(o.price),
                            qty: qty.unwrap_or(o.order_qty),
                            stop_price: stop_price.unwrap_or(0),
                        };
                        x.apply(
                            seq,
                            ts,
                            &Input::Replace {
                                who,
                                replace: &replace,
                            },
                            &mut sink,
                        );
                        replace.cl_ord_id
                    }
                    _ => {
                        let cl = made_id(&base, 'c', seq);
                        x.apply(
                            seq,
                            ts,
                            &Input::Cancel {
                                who,
                                cl_ord_id: &cl,
                                orig_cl_ord_id: &orig,
                            },
                            &mut sink,
                        );
                        cl
                    }
                };
                let mine = std::mem::take(&mut sink.mine);
                if mine.is_empty() && x.is_remote() {
                    self.sent = Some((req_cl, 200));
                    return None;
                }
                self.answer_of(seq, ts, &mine, 200)
            }
            ApiOp::CancelAll { symbol, side } => {
                let cl = made_id("", 'm', seq);
                x.apply(
                    seq,
                    ts,
                    &Input::CancelOwn {
                        who,
                        cl_ord_id: &cl,
                        symbol: *symbol,
                        side: *side,
                    },
                    &mut sink,
                );
                let mine = std::mem::take(&mut sink.mine);
                let mut done = None;
                for o in &mine {
                    match o {
                        OwnedOutput::MassCanceled { count, .. } => done = Some(*count),
                        o if self.events_on => o.with(|o| self.event(seq, ts, o, "taker")),
                        _ => {}
                    }
                }
                return done.map(|count| Answer::json(200, &Canceled { canceled: count }));
            }
            ApiOp::Get(r) => match self.resolve(key, r, x) {
                Some((id, o)) => match self.instrument(o.symbol) {
                    Some(def) => {
                        let ext = x.order_ext(id);
                        Answer::json(200, &OrderJson::of(id, o, &ext, def, None, ts))
                    }
                    None => Self::not_found(r),
                },
                None => Self::not_found(r),
            },
            ApiOp::ListOpen { symbol } => {
                let orders = x
                    .live_orders_of(who.originator)
                    .into_iter()
                    .filter(|(_, o)| symbol.is_none_or(|s| s == o.symbol))
                    .filter_map(|(id, o)| {
                        let def = self.instrument(o.symbol)?;
                        Some(OrderJson::of(id, o, &x.order_ext(id), def, None, ts))
                    })
                    .collect();
                Answer::json(200, &OrderList { orders })
            }
            // Carried out before any key's request (`on_admin`).
            ApiOp::Admin { .. } | ApiOp::AdminState => return None,
        })
    }

    /// The answer to a new order, cancel or replace from what the exchange told the key: a
    /// refusal's error, or the order after the request with the fills it made at once. The
    /// first report is about the request's order; later ones may be about the key's other
    /// orders (stops its trades triggered), which only get events.
    fn answer_of(&mut self, seq: u64, ts: u64, mine: &[OwnedOutput], ok: u16) -> Answer {
        let mut last: Option<OrderJson> = None;
        let mut fills = Vec::new();
        let mut refused = None;
        let mut ours = None;
        for o in mine {
            if self.events_on {
                o.with(|o| self.event(seq, ts, o, "taker"));
            }
            match o {
                OwnedOutput::Report {
                    id,
                    order,
                    n,
                    kind,
                    ext,
                    ..
                } => {
                    let Some(def) = self.instrument(order.symbol) else {
                        continue;
                    };
                    if *ours.get_or_insert(*id) != *id {
                        continue;
                    }
                    let cancel = match kind {
                        ReportKind::Canceled(c) => Some(*c),
                        _ => None,
                    };
                    if let ReportKind::Fill { price, qty } = kind {
                        fills.push(FillJson {
                            fill_id: format!("{seq}-{n}"),
                            price: json::price(*price, def),
                            quantity: qty.to_string(),
                            liquidity: "taker",
                        });
                    }
                    last = Some(OrderJson::of(*id, order, ext, def, cancel, ts));
                }
                OwnedOutput::NewRejected { reason, .. }
                | OwnedOutput::CancelRejected { reason, .. } => refused = Some(*reason),
                _ => {}
            }
        }
        if let Some(r) = refused {
            return json::reject_answer(r);
        }
        match last {
            Some(mut o) => {
                o.fills = fills;
                Answer::json(ok, &o)
            }
            None => Answer::error(503, "exchange_busy", "the exchange did not answer"),
        }
    }

    /// An order event for the owner's private stream.
    fn event(&mut self, seq: u64, ts: u64, o: &Output<'_>, liquidity: &'static str) {
        let (key, order, what) = match *o {
            Output::Report(r) => {
                let Some(key) = self.cfg.key_of(r.order.owner) else {
                    return;
                };
                let Some(def) = self.instrument(r.order.symbol) else {
                    return;
                };
                (
                    key,
                    report_json(seq, ts, r, def, liquidity),
                    event_name(r.kind),
                )
            }
            _ => return,
        };
        let body = serde_json::to_vec(&Event {
            kind: "order",
            channel: "orders",
            event: what,
            order: &order,
        })
        .expect("plain data serializes");
        self.out.events.push((key, body));
    }

    /// The store and pending cancels, for the snapshot (deterministic order).
    pub fn snapshot(&self, out: &mut Vec<u8>) {
        let mut e = Enc(out);
        e.u32(self.stores.len() as u32);
        for s in &self.stores {
            e.u32(s.order.len() as u32);
            for k in &s.order {
                let kept = &s.kept[k];
                e.bytes(k.as_bytes());
                e.u64(kept.fingerprint);
                e.u64(kept.ts);
                match &kept.answer {
                    None => e.u8(0),
                    Some(a) => {
                        e.u8(1);
                        e.u32(u32::from(a.status));
                        e.bytes(&a.body);
                    }
                }
            }
        }
        e.u32(self.pending.len() as u32);
        for p in &self.pending {
            e.u32(u32::from(p.key));
            e.u64(p.request_seq);
            match &p.idem {
                None => e.u8(0),
                Some(k) => {
                    e.u8(1);
                    e.bytes(k.as_bytes());
                }
            }
        }
    }

    /// Restores `snapshot`'s bytes from the start of `b`; returns the rest.
    pub fn restore<'b>(&mut self, b: &'b [u8]) -> Result<&'b [u8], String> {
        let mut d = Dec(b);
        self.restore_from(&mut d)
            .map_err(|e| format!("snapshot: API edge: {}", e.0))?;
        Ok(d.0)
    }

    fn restore_from(&mut self, d: &mut Dec<'_>) -> Result<(), DecodeError> {
        let n = d.u32()? as usize;
        if n != self.cfg.keys.len() {
            return Err(DecodeError("another number of API keys"));
        }
        for s in &mut self.stores {
            *s = Store::default();
            let m = d.u32()? as usize;
            for _ in 0..m {
                let k = d.str()?.to_owned();
                let fingerprint = d.u64()?;
                let ts = d.u64()?;
                let answer = match d.u8()? {
                    0 => None,
                    1 => Some(Answer {
                        status: u16::try_from(d.u32()?).map_err(|_| DecodeError("status"))?,
                        body: d.bytes()?.to_vec(),
                    }),
                    _ => return Err(DecodeError("answer flag")),
                };
                s.order.push_back(k.clone());
                s.kept.insert(
                    k,
                    Kept {
                        fingerprint,
                        ts,
                        answer,
                        waiting: Vec::new(),
                    },
                );
            }
        }
        self.pending.clear();
        let p = d.u32()? as usize;
        for _ in 0..p {
            let key = u16::try_from(d.u32()?).map_err(|_| DecodeError("key"))?;
            let request_seq = d.u64()?;
            let idem = match d.u8()? {
                0 => None,
                1 => Some(d.str()?.to_owned()),
                _ => return Err(DecodeError("idempotency flag")),
            };
            self.pending.push(PendingCancelAll {
                key,
                request_seq,
                req: 0,
                idem,
            });
        }
        Ok(())
    }
}

/// The part of a client order id the key gave (before the first `~`).
fn base_of(cl: &str) -> &str {
    cl.split('~').next().unwrap_or("")
}

/// A client order id the edge makes for record `seq`: the key's own id, `~`, what it is for
/// and the record's number (keys' ids never hold `~`, so these never collide with theirs).
fn made_id(base: &str, what: char, seq: u64) -> ClOrdId {
    ClOrdId::truncated(&format!("{base}~{what}{seq}"))
}

fn event_name(k: ReportKind) -> &'static str {
    match k {
        ReportKind::New => "new",
        ReportKind::Fill { .. } => "fill",
        ReportKind::Canceled(CancelReason::Expired) => "expired",
        ReportKind::Canceled(_) => "canceled",
        ReportKind::Replaced => "replaced",
        ReportKind::Status => "status",
        ReportKind::Triggered => "triggered",
    }
}

/// The order of report `r`, with its fill if it is one.
fn report_json(
    seq: u64,
    ts: u64,
    r: &Report<'_>,
    def: &InstrumentDef,
    liquidity: &'static str,
) -> OrderJson {
    let cancel = match r.kind {
        ReportKind::Canceled(c) => Some(c),
        _ => None,
    };
    let mut o = OrderJson::of(r.id, r.order, &r.ext, def, cancel, ts);
    if let ReportKind::Fill { price, qty } = r.kind {
        o.fills.push(FillJson {
            fill_id: format!("{seq}-{}", r.n),
            price: json::price(price, def),
            quantity: qty.to_string(),
            liquidity,
        });
    }
    o
}

/// The outputs of one request: the requester's kept for its answer, other keys' for their
/// events, everyone else's (FIX sessions) and market data to the FIX edge's sink.
struct ApiOut<'a, F: Outputs> {
    fix: &'a mut F,
    cfg: &'a ApiConfig,
    requester: u16,
    mine: Vec<OwnedOutput>,
    others: &'a mut Vec<OwnedOutput>,
}

impl<F: Outputs> ApiOut<'_, F> {
    fn keep(&mut self, to: u16, o: &Output<'_>) -> bool {
        if to == self.requester || self.cfg.key_of(to).is_some() {
            self.fix.tee(o);
        }
        if to == self.requester {
            self.mine.extend(OwnedOutput::of(o));
        } else if self.cfg.key_of(to).is_some() {
            self.others.extend(OwnedOutput::of(o));
        } else {
            return false;
        }
        true
    }
}

impl<F: Outputs> Outputs for ApiOut<'_, F> {
    const MARKET_DATA: bool = F::MARKET_DATA;

    fn skip_report(&mut self, to: u16) -> bool {
        if to == self.requester || self.cfg.key_of(to).is_some() {
            return false;
        }
        self.fix.skip_report(to)
    }

    fn output(&mut self, o: &Output<'_>) {
        let to = match *o {
            Output::Report(r) => Some(r.order.owner),
            Output::NewRejected { to, .. }
            | Output::CancelRejected { to, .. }
            | Output::MassCanceled { to, .. }
            | Output::StatusUnknown { to, .. } => Some(to),
            Output::Market(_)
            | Output::TradingStatus(_)
            | Output::InstrumentStatus { .. }
            | Output::Indicative { .. } => None,
        };
        if let Some(to) = to {
            if self.keep(to, o) {
                return;
            }
        }
        self.fix.output(o);
    }

    fn report(&mut self, r: &Report<'_>) {
        if !self.keep(r.order.owner, &Output::Report(r)) {
            self.fix.report(r);
        }
    }
}

#[cfg(test)]
mod tests;
