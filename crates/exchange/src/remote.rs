//! The exchange as a gateway sees it in cluster mode: the matching runs in engine processes,
//! one per shard of the instruments, behind a command log; this side routes each input to its
//! shard as a [`Command`] and turns the engines' [`Outcome`]s back into outputs.
//!
//! Role: the edges (FIX, HTTP) call `Exchange::apply` as in single-node mode; an exchange made
//! with [`Exchange::remote`] captures each input instead (`take_commands`), answers at once
//! what it can know locally (an unknown order of this gateway's, an unknown symbol), and gives
//! the edges the outputs of each outcome applied with [`Exchange::apply_outcome`]. Everything
//! here is a function of the records the gateway journals (its inputs and the outcomes it
//! received), so its replay rebuilds the routes, the unanswered commands and the dedup marks.
//!
//! Numbering: a gateway's originators are `originator_base + index` in the cluster; order ids
//! are the engine's times `ORDER_ID_STRIDE` plus the shard, unique across shards.
//!
//! Never: matches, or decides what an engine decides (ClOrdID uniqueness beyond this gateway's
//! live orders, limits, prices).

use crate::wire::{Cause, Command, Outcome, Sent};
use crate::{
    ClOrdId, Exchange, Input, OrderId, OrderRecord, Output, Outputs, OwnedOutput, Principal,
    Reject, TradingStatus,
};
use std::collections::{BTreeMap, HashMap};
use types::SymbolId;

/// Finished orders whose routes a gateway keeps (the engines remember more of them).
pub const FINISHED_ROUTES: usize = 65_536;

/// Global order (and trade) id = the engine's id * this + shard.
pub const ORDER_ID_STRIDE: u64 = 1000;

/// Where this gateway sits in the cluster.
#[derive(Clone, Debug)]
pub struct RemoteConfig {
    /// This gateway's number (1..): the `Cause::gateway` of its commands.
    pub gateway: u16,
    /// Its originators (sessions, then API keys) are `originator_base..+originators`.
    pub originator_base: u16,
    pub originators: u16,
    /// The shard of each symbol id.
    pub shard_of_symbol: Vec<u16>,
    pub shards: u16,
}

/// A command captured for a shard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Routed {
    pub shard: u16,
    pub cause: Cause,
    pub command: Command,
}

/// A mass cancel sent to several shards, waiting for each one's end.
#[derive(Clone, Copy, Debug)]
struct MassWait {
    left: u16,
    count: u64,
    request_seq: u64,
}

pub(crate) struct Remote {
    cfg: RemoteConfig,
    /// Captured since the last `take_commands`.
    new: Vec<Routed>,
    /// Sent and not answered yet, in cause order: what a restarted gateway sends again.
    unanswered: BTreeMap<(Cause, u16), Command>,
    /// By shard: the offset (and part) of the last outcome applied, and the highest epoch
    /// seen.
    applied: Vec<(Option<(u64, u32)>, u32)>,
    /// By shard: the event-log offset of the last outcome taken (where a reader resumes).
    positions: Vec<Option<u64>>,
    /// (local originator, ClOrdID) of a live order (or one sent, not answered, or one of the
    /// last `FINISHED_ROUTES` finished) -> its shard, and its id once reported.
    routes: HashMap<(u16, ClOrdId), (u16, Option<OrderId>)>,
    /// The routes of finished orders, oldest first: a status request or a reused ClOrdID still
    /// goes to the engine that remembers the order.
    finished: std::collections::VecDeque<(u16, ClOrdId, OrderId)>,
    /// The live orders of this gateway's originators, by global id (as last reported).
    orders: HashMap<OrderId, OrderRecord>,
    mass: HashMap<(u16, ClOrdId), MassWait>,
    status: TradingStatus,
    /// By shard: how many times it said the market closed, and opened.
    changes: Vec<[u64; 2]>,
    /// The record being applied and the commands it sent so far.
    record: u64,
    index: u16,
}

impl Remote {
    pub(crate) fn new(cfg: RemoteConfig) -> Remote {
        let shards = cfg.shards as usize;
        Remote {
            cfg,
            new: Vec::new(),
            unanswered: BTreeMap::new(),
            applied: vec![(None, 0); shards],
            positions: vec![None; shards],
            routes: HashMap::new(),
            finished: std::collections::VecDeque::new(),
            orders: HashMap::new(),
            mass: HashMap::new(),
            status: TradingStatus::Open,
            changes: vec![[0; 2]; shards],
            record: 0,
            index: 0,
        }
    }

    /// Whether `cl` names a live order of `originator` here, or one sent and not answered.
    fn is_live(&self, originator: u16, cl: &ClOrdId) -> bool {
        match self.routes.get(&(originator, *cl)) {
            Some((_, None)) => true,
            Some((_, Some(id))) => self.orders.contains_key(id),
            None => false,
        }
    }

    fn shard_of(&self, symbol: SymbolId) -> Option<u16> {
        self.cfg.shard_of_symbol.get(symbol as usize).copied()
    }

    fn send(&mut self, seq: u64, shard: u16, command: Command) {
        if seq != self.record {
            self.record = seq;
            self.index = 0;
        }
        let who = command.who().map(|p| Principal {
            originator: p.originator + self.cfg.originator_base,
            firm: p.firm,
        });
        let command = match who {
            Some(p) => command.with_who(p),
            None => command,
        };
        let cause = Cause {
            gateway: self.cfg.gateway,
            record: seq,
            index: self.index,
        };
        self.index += 1;
        self.unanswered.insert((cause, shard), command);
        self.new.push(Routed {
            shard,
            cause,
            command,
        });
    }

    /// The local originator of a cluster originator, if it is this gateway's.
    fn local(&self, to: u16) -> Option<u16> {
        to.checked_sub(self.cfg.originator_base)
            .filter(|l| *l < self.cfg.originators)
    }
}

impl Exchange {
    /// A gateway's exchange: inputs go to the engines of `cfg.shards` shards.
    pub fn remote(cfg: std::sync::Arc<crate::Config>, remote: RemoteConfig) -> Exchange {
        let mut x = Exchange::new(cfg);
        x.remote = Some(Box::new(Remote::new(remote)));
        x
    }

    /// Whether inputs go to engines elsewhere (cluster mode).
    pub fn is_remote(&self) -> bool {
        self.remote.is_some()
    }

    /// The commands captured since the last call, in order.
    pub fn take_commands(&mut self, into: &mut Vec<Routed>) {
        if let Some(r) = self.remote.as_deref_mut() {
            into.append(&mut r.new);
        }
    }

    /// Every command sent and not answered yet (a restarted gateway sends them again; an
    /// engine applies each cause once).
    pub fn unanswered(&self) -> Vec<Routed> {
        self.remote.as_deref().map_or_else(Vec::new, |r| {
            r.unanswered
                .iter()
                .map(|(&(cause, shard), &command)| Routed {
                    shard,
                    cause,
                    command,
                })
                .collect()
        })
    }

    /// By shard: the event-log offset of the last outcome taken (the gateway's reader
    /// resumes after it).
    pub fn outcome_offsets(&self) -> Vec<Option<u64>> {
        self.remote
            .as_deref()
            .map_or_else(Vec::new, |r| r.positions.clone())
    }

    pub(crate) fn remote_order(&self, id: OrderId) -> Option<&OrderRecord> {
        self.remote.as_deref()?.orders.get(&id)
    }

    pub(crate) fn remote_order_of(&self, originator: u16, cl: &[u8]) -> Option<OrderId> {
        let cl = ClOrdId::from_bytes(cl)?;
        self.remote.as_deref()?.routes.get(&(originator, cl))?.1
    }

    pub(crate) fn remote_live_orders_of(&self, originator: u16) -> Vec<(OrderId, &OrderRecord)> {
        let Some(r) = self.remote.as_deref() else {
            return Vec::new();
        };
        let mut v: Vec<(OrderId, &OrderRecord)> = r
            .orders
            .iter()
            .filter(|(_, o)| o.owner == originator)
            .map(|(id, o)| (*id, o))
            .collect();
        v.sort_unstable_by_key(|&(id, _)| id);
        v
    }

    pub(crate) fn remote_status(&self) -> Option<TradingStatus> {
        self.remote.as_deref().map(|r| r.status)
    }

    /// `apply` of a gateway: routes the input to its shard(s), or answers it here.
    pub(crate) fn capture<O: Outputs>(&mut self, seq: u64, input: &Input<'_>, out: &mut O) {
        let Some(command) = Command::of(input) else {
            return;
        };
        let mut r = self.remote.take().expect("remote");
        match *input {
            Input::New { who, order } => match r.shard_of(order.symbol) {
                None => {
                    let n = self.next_exec_n(seq);
                    out.output(&Output::NewRejected {
                        to: who.originator,
                        order,
                        reason: Reject::UnknownSymbol,
                        n,
                    });
                }
                // Live here (or sent, not answered): a duplicate. A finished order's ClOrdID
                // goes to the engine, which decides from what it remembers.
                Some(_) if r.is_live(who.originator, &order.cl_ord_id) => {
                    let n = self.next_exec_n(seq);
                    out.output(&Output::NewRejected {
                        to: who.originator,
                        order,
                        reason: Reject::DuplicateClOrdId,
                        n,
                    });
                }
                Some(shard) => {
                    r.routes
                        .insert((who.originator, order.cl_ord_id), (shard, None));
                    r.send(seq, shard, command);
                }
            },
            Input::Cancel {
                who,
                cl_ord_id,
                orig_cl_ord_id,
            } => match r.routes.get(&(who.originator, *orig_cl_ord_id)) {
                Some(&(shard, _)) => r.send(seq, shard, command),
                None => out.output(&Output::CancelRejected {
                    to: who.originator,
                    cl_ord_id,
                    orig_cl_ord_id,
                    replace: false,
                    reason: Reject::UnknownOrder,
                    order: None,
                }),
            },
            Input::Replace { who, replace } => {
                match r.routes.get(&(who.originator, replace.orig_cl_ord_id)) {
                    Some(&(shard, id)) => {
                        r.routes
                            .entry((who.originator, replace.cl_ord_id))
                            .or_insert((shard, id));
                        r.send(seq, shard, command);
                    }
                    None => out.output(&Output::CancelRejected {
                        to: who.originator,
                        cl_ord_id: &replace.cl_ord_id,
                        orig_cl_ord_id: &replace.orig_cl_ord_id,
                        replace: true,
                        reason: Reject::UnknownOrder,
                        order: None,
                    }),
                }
            }
            Input::Status { who, cl_ord_id } => match r.routes.get(&(who.originator, *cl_ord_id)) {
                Some(&(shard, _)) => r.send(seq, shard, command),
                None => {
                    let n = self.next_exec_n(seq);
                    out.output(&Output::StatusUnknown {
                        to: who.originator,
                        cl_ord_id,
                        n,
                    });
                }
            },
            Input::MassCancel {
                who,
                cl_ord_id,
                symbol,
                ..
            }
            | Input::CancelOwn {
                who,
                cl_ord_id,
                symbol,
                ..
            } => {
                let shards: Vec<u16> = match symbol.map(|s| r.shard_of(s)) {
                    Some(Some(s)) => vec![s],
                    // An unknown symbol: every shard answers "none canceled".
                    Some(None) | None => (0..r.cfg.shards).collect(),
                };
                r.mass.insert(
                    (who.originator, *cl_ord_id),
                    MassWait {
                        left: shards.len() as u16,
                        count: 0,
                        request_seq: seq,
                    },
                );
                for s in shards {
                    r.send(seq, s, command);
                }
            }
            // Only for an originator that asked for its orders to be canceled then (engines
            // cancel for every originator that disconnects).
            Input::Disconnected { who }
                if self
                    .cfg
                    .cancel_on_disconnect
                    .get(who.originator as usize)
                    .copied()
                    .unwrap_or(false) =>
            {
                for s in 0..r.cfg.shards {
                    r.send(seq, s, command);
                }
            }
            Input::Disconnected { .. } => {}
            // Time and continuations are each engine's own.
            // An operator's action is not routed to the shards (`AdminAction`): the HTTP edge
            // refuses it on a gateway.
            Input::Tick | Input::Continue | Input::Checkpoint(_) | Input::Admin(_) => {}
        }
        self.remote = Some(r);
    }

    /// Applies what shard `shard`'s engine reported for one command (gateway record `seq`),
    /// read at `position` of the event log: this gateway's outputs go to `out`, in order. An
    /// outcome at or before the last one
    /// applied from that shard (a new active engine publishing again what the old one had),
    /// or of an older epoch than seen, is ignored.
    pub fn apply_outcome<O: Outputs>(
        &mut self,
        seq: u64,
        shard: u16,
        position: u64,
        outcome: &Outcome,
        out: &mut O,
    ) {
        self.enter(seq);
        let Some(mut r) = self.remote.take() else {
            return;
        };
        if let Some(p) = r.positions.get_mut(shard as usize) {
            *p = Some(p.map_or(position, |q| q.max(position)));
        }
        // Parts of one outcome come in order: (offset, part) only grows.
        let at = (outcome.offset, outcome.part);
        let fresh = r
            .applied
            .get(shard as usize)
            .is_some_and(|&(last, epoch)| outcome.epoch >= epoch && last.is_none_or(|l| at > l));
        if fresh {
            r.applied[shard as usize] = (Some(at), outcome.epoch);
            if outcome.cause.gateway == r.cfg.gateway && outcome.last {
                r.unanswered.remove(&(outcome.cause, shard));
            }
            for s in &outcome.outputs {
                r.deliver(shard, s, out);
            }
        }
        self.remote = Some(r);
    }
}

impl Remote {
    fn deliver<O: Outputs>(&mut self, shard: u16, s: &Sent, out: &mut O) {
        let o = match s {
            // Every shard says each change of the market's status (the trading day is the
            // same everywhere): the n-th close (or open) of the market is the first shard's
            // n-th, the others' are the same change. Not the status alone: a day whose next
            // one starts at once is a close and an open in one outcome of each shard.
            Sent::TradingStatus(st) => {
                let k = usize::from(*st == TradingStatus::Open);
                let Some(c) = self.changes.get_mut(shard as usize) else {
                    return;
                };
                c[k] += 1;
                let n = c[k];
                let first = self
                    .changes
                    .iter()
                    .enumerate()
                    .all(|(s, c)| s == shard as usize || c[k] < n);
                if first {
                    self.status = *st;
                    out.output(&Output::TradingStatus(*st));
                }
                return;
            }
            Sent::Market(e) => {
                if O::MARKET_DATA {
                    let mut e = *e;
                    if let types::Event::Trade {
                        trade_id,
                        maker_id,
                        taker_id,
                        ..
                    } = &mut e
                    {
                        for id in [trade_id, maker_id, taker_id] {
                            *id = *id * ORDER_ID_STRIDE + shard as u64;
                        }
                    }
                    out.output(&Output::Market(&e));
                }
                return;
            }
            Sent::Owned(o) => o,
        };
        let global = |id: OrderId| id * ORDER_ID_STRIDE + shard as u64;
        let mut o = o.clone();
        match &mut o {
            OwnedOutput::Report {
                id,
                order,
                kind,
                orig_cl_ord_id,
                ..
            } => {
                let Some(owner) = self.local(order.owner) else {
                    // Another gateway's: only a trade-store replica keeps a copy (`tee`), with
                    // an owner no originator of this gateway has.
                    order.owner = u16::MAX;
                    *id = global(*id);
                    o.with(|o| out.tee(o));
                    return;
                };
                order.owner = owner;
                *id = global(*id);
                if order.is_live() {
                    self.orders.insert(*id, order.clone());
                    self.routes
                        .insert((owner, order.cl_ord_id), (shard, Some(*id)));
                } else {
                    self.orders.remove(id);
                    if let Some(orig) = orig_cl_ord_id.filter(|o| *o != order.cl_ord_id) {
                        self.routes.remove(&(owner, orig));
                    }
                    self.routes
                        .insert((owner, order.cl_ord_id), (shard, Some(*id)));
                    self.finished.push_back((owner, order.cl_ord_id, *id));
                    if self.finished.len() > FINISHED_ROUTES {
                        let (o, cl, old) = self.finished.pop_front().expect("not empty");
                        if self.routes.get(&(o, cl)).is_some_and(|r| r.1 == Some(old)) {
                            self.routes.remove(&(o, cl));
                        }
                    }
                }
                if matches!(kind, crate::ReportKind::Replaced) {
                    if let Some(orig) = orig_cl_ord_id {
                        self.routes.remove(&(owner, *orig));
                    }
                }
            }
            OwnedOutput::NewRejected {
                to, order, reason, ..
            } => {
                let Some(l) = self.local(*to) else { return };
                *to = l;
                if *reason != Reject::DuplicateClOrdId {
                    self.routes.remove(&(l, order.cl_ord_id));
                }
            }
            OwnedOutput::CancelRejected {
                to,
                cl_ord_id,
                replace,
                reason,
                order,
                ..
            } => {
                let Some(l) = self.local(*to) else { return };
                *to = l;
                if *replace && *reason != Reject::DuplicateClOrdId {
                    // The route the replace made names the order it was for: kept only if
                    // the ClOrdID is that order's own (the engine took it).
                    let keep = self.routes.get(&(l, *cl_ord_id)).is_some_and(|(_, id)| {
                        id.and_then(|i| self.orders.get(&i))
                            .is_some_and(|o| o.cl_ord_id == *cl_ord_id)
                    });
                    if !keep {
                        self.routes.remove(&(l, *cl_ord_id));
                    }
                }
                if let Some((id, _)) = order {
                    *id = global(*id);
                }
            }
            OwnedOutput::MassCanceled {
                to,
                cl_ord_id,
                request_seq,
                count,
                ..
            } => {
                let Some(l) = self.local(*to) else { return };
                *to = l;
                let Some(w) = self.mass.get_mut(&(l, *cl_ord_id)) else {
                    return;
                };
                w.left -= 1;
                w.count += *count;
                if w.left > 0 {
                    return;
                }
                *count = w.count;
                *request_seq = w.request_seq;
                self.mass.remove(&(l, *cl_ord_id));
            }
            OwnedOutput::StatusUnknown { to, .. } => {
                let Some(l) = self.local(*to) else { return };
                *to = l;
            }
        }
        o.with(|o| out.output(o));
    }
}

#[cfg(test)]
mod tests;
