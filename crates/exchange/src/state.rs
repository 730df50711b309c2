//! The exchange's state as bytes: its snapshot (the ClOrdIDs in order, every remembered order
//! record, the open-order counts, the pending mass cancels, the engine's own snapshot), its
//! restore, and the state hash replay checks.

use crate::clordid::ClOrdId;
use crate::orders::{OrderRecord, OrderState, DONE_ORDERS_MAX};
use crate::snap::{hash_bytes, SnapReader, SnapWriter};
use crate::{Backing, Config, Exchange};
use engine::Engine;
use std::sync::Arc;
use types::{OrdType, Side, TimeInForce};

/// Magic of the exchange's part of a snapshot.
const SNAP_MAGIC: &[u8; 8] = b"RIALTOX5";

impl Exchange {
    /// Engine hash and the exchange's own, combined: equal exactly when the engine state and
    /// every ClOrdID and order record are equal.
    pub fn state_hash(&self) -> u64 {
        let mut buf = Vec::new();
        self.snapshot_own(&mut buf);
        self.combine_hash(&buf)
    }

    fn combine_hash(&self, own: &[u8]) -> u64 {
        let g = hash_bytes(own);
        self.engine.state_hash() ^ g.rotate_left(17).wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// Appends the full state (the exchange's records, then the engine) to `out`; returns
    /// the state hash (one pass over the state: the snapshot stall matters).
    pub fn snapshot_and_hash(&self, out: &mut Vec<u8>) -> u64 {
        out.extend_from_slice(SNAP_MAGIC);
        let len_at = out.len();
        out.extend_from_slice(&0u64.to_le_bytes());
        let start = out.len();
        self.snapshot_own(out);
        let len = (out.len() - start) as u64;
        out[len_at..len_at + 8].copy_from_slice(&len.to_le_bytes());
        let hash = self.combine_hash(&out[start..]);
        let elen_at = out.len();
        out.extend_from_slice(&0u64.to_le_bytes());
        let estart = out.len();
        self.engine.snapshot(out);
        let elen = (out.len() - estart) as u64;
        out[elen_at..elen_at + 8].copy_from_slice(&elen.to_le_bytes());
        hash
    }

    fn snapshot_own(&self, out: &mut Vec<u8>) {
        // Reserve about what it takes, so a large state is not copied by doubling.
        let orders = self.orders.live.len + self.orders.done.len();
        out.reserve(64 + self.cl.len() * 24 + orders * 64);
        let mut e = SnapWriter(out);
        e.u64(self.last_seq);
        e.u64(self.next_order_id);
        e.u64(self.next_day_end_ns);
        e.u64(self.closed_until_ns);
        e.u64(self.cfg.instruments.len() as u64);
        e.u64(self.cl.len() as u64);
        for (originator, cl, order) in self.cl.iter() {
            e.u64(originator as u64);
            e.u64(order);
            e.bytes(cl);
        }
        let orders = self.orders.sorted();
        e.u64(orders.len() as u64);
        for (id, o) in orders {
            e.u64(id);
            e.u64(o.owner as u64);
            e.u64(o.account as u64);
            e.u64(o.symbol as u64);
            e.u64(side_code(o.side));
            e.u64(ord_type_code(o.ord_type));
            e.u64(tif_code(o.tif));
            e.u64(o.price as u64);
            e.bytes(o.cl_ord_id.as_bytes());
            e.u64(o.order_qty);
            e.u64(o.cum_qty);
            e.u64(o.leaves_qty);
            e.bytes(&o.notional.to_le_bytes());
            e.u64(o.state as u64);
        }
        e.u64(self.orders.done.len() as u64);
        for (id, _) in &self.orders.done {
            e.u64(*id);
        }
        // Derived from the live orders, but kept: a restore checks it recomputes the same.
        e.u64(self.open.len() as u64);
        for n in self.open.counts() {
            e.u64(n);
        }
        // Not derived: where mass cancels start looking.
        for f in self.open.first_live_hints() {
            e.u64(f);
        }
        e.u64(self.pending.len() as u64);
        for p in &self.pending {
            p.snapshot(&mut e);
        }
        // Reference prices and positions (open notionals are the live orders', recounted).
        self.risk.snapshot(&mut e);
        // Stop, iceberg and GTD attributes, only if any order has them (a plain state's bytes
        // are those it had before they existed).
        if !self.orders.ext.is_empty() {
            e.u64(self.orders.ext.len() as u64);
            for (id, x) in &self.orders.ext {
                e.u64(*id);
                e.u64(x.stop_price as u64);
                e.u64(x.display_qty);
                e.u64(x.expire_ns);
                e.u64(u64::from(x.triggered));
            }
        }
    }

    /// Rebuilds an exchange from what `snapshot_and_hash` wrote (with the same
    /// configuration); returns it and the bytes after its part.
    pub fn restore(
        cfg: Arc<Config>,
        bytes: &[u8],
        backing: Backing,
    ) -> Result<(Exchange, &[u8]), String> {
        let mut x = Exchange::with_backing(cfg, backing);
        let mut r = SnapReader(bytes);
        if r.take(SNAP_MAGIC.len())? != SNAP_MAGIC {
            return Err("snapshot: not an exchange state of this version".into());
        }
        let len = r.fixed_u64()?;
        if len > r.0.len() as u64 {
            return Err("snapshot: truncated".into());
        }
        let own = r.take(len as usize)?;
        let elen = r.fixed_u64()?;
        if elen > r.0.len() as u64 {
            return Err("snapshot: truncated".into());
        }
        let engine_bytes = r.take(elen as usize)?;
        let rest = r.0;
        x.engine = Engine::restore(engine_bytes).map_err(|e| format!("snapshot: engine: {e:?}"))?;
        x.restore_own(own)?;
        // The indicative uncross as last published: what the book gives now.
        for s in 0..x.cfg.instruments.len() {
            let symbol = s as u32;
            if x.engine.in_call(symbol) {
                x.calls_seen = true;
                x.indicative[s] = x
                    .engine
                    .indicative(symbol, x.risk.reference(symbol))
                    .unwrap_or((0, 0));
            }
        }
        Ok((x, rest))
    }

    fn restore_own(&mut self, own: &[u8]) -> Result<(), String> {
        let mut r = SnapReader(own);
        self.last_seq = r.u64()?;
        self.next_order_id = r.u64()?;
        self.next_day_end_ns = r.u64()?;
        self.closed_until_ns = r.u64()?;
        if r.u64()? != self.cfg.instruments.len() as u64 {
            return Err("snapshot: instrument count differs from the config".into());
        }
        for _ in 0..r.count()? {
            let originator = u16::try_from(r.u64()?).map_err(|_| "snapshot: bad originator")?;
            let id = r.u64()?;
            let cl = ClOrdId::from_bytes(r.bytes()?)
                .ok_or_else(|| "snapshot: ClOrdID not UTF-8 or too long".to_string())?;
            if self.cl.get(originator, cl.as_bytes()).is_some() {
                return Err("snapshot: ClOrdID remembered twice".into());
            }
            self.cl.push(originator, cl.as_bytes(), id);
        }
        for _ in 0..r.count()? {
            let id = r.u64()?;
            let owner = u16::try_from(r.u64()?).map_err(|_| "snapshot: bad owner")?;
            let account = u32::try_from(r.u64()?).map_err(|_| "snapshot: bad account")?;
            let symbol = u32::try_from(r.u64()?).map_err(|_| "snapshot: bad symbol")?;
            let side = match r.u64()? {
                1 => Side::Buy,
                2 => Side::Sell,
                _ => return Err("snapshot: bad side".into()),
            };
            let ord_type = match r.u64()? {
                1 => OrdType::Limit,
                2 => OrdType::Market,
                _ => return Err("snapshot: bad order type".into()),
            };
            let tif = match r.u64()? {
                0 => TimeInForce::Day,
                1 => TimeInForce::Gtc,
                3 => TimeInForce::Ioc,
                4 => TimeInForce::Fok,
                5 => TimeInForce::Gtd,
                _ => return Err("snapshot: bad time in force".into()),
            };
            let price = r.u64()? as i64;
            let cl_ord_id = ClOrdId::from_bytes(r.bytes()?)
                .ok_or_else(|| "snapshot: ClOrdID not UTF-8 or too long".to_string())?;
            let order_qty = r.u64()?;
            let cum_qty = r.u64()?;
            let leaves_qty = r.u64()?;
            let notional = i128::from_le_bytes(
                r.bytes()?
                    .try_into()
                    .map_err(|_| "snapshot: bad notional".to_string())?,
            );
            let state = match r.u64()? {
                0 => OrderState::Live,
                1 => OrderState::Filled,
                2 => OrderState::Canceled,
                3 => OrderState::Expired,
                _ => return Err("snapshot: bad order state".into()),
            };
            self.orders.insert_live(
                id,
                OrderRecord {
                    owner,
                    account,
                    symbol,
                    side,
                    ord_type,
                    tif,
                    price,
                    cl_ord_id,
                    order_qty,
                    cum_qty,
                    leaves_qty,
                    notional,
                    state,
                },
            );
        }
        for _ in 0..r.count()? {
            let id = r.u64()?;
            if self.orders.done.len() == DONE_ORDERS_MAX {
                return Err("snapshot: more finished orders than remembered".into());
            }
            if !self.orders.push_done(id) {
                return Err(format!(
                    "snapshot: finished order {id} is not among the orders"
                ));
            }
        }
        let live: Vec<_> = self
            .orders
            .live
            .iter()
            .map(|(id, slot)| (id, &self.orders.slab[slot as usize]))
            .filter(|(_, o)| o.is_live())
            .map(|(id, o)| (id, o.account))
            .collect();
        let mut lowest = vec![u64::MAX; self.open.accounts_len()];
        for (id, a) in live {
            self.open.add(a, id);
            if let Some(ix) = self.open.account_ix(a) {
                lowest[ix] = lowest[ix].min(id);
            }
        }
        if r.count()? != self.open.len() as u64 {
            return Err("snapshot: open-order counts of another set of firms".into());
        }
        for want in self.open.counts().collect::<Vec<_>>() {
            if r.u64()? != want {
                return Err("snapshot: open-order counts disagree with the live orders".into());
            }
        }
        let hints = (0..lowest.len())
            .map(|_| r.u64())
            .collect::<Result<Vec<_>, _>>()?;
        self.open.restore_first_live(&hints, &lowest)?;
        for _ in 0..r.count()? {
            let p = crate::mass::PendingMass::restore(&mut r)?;
            if p.end > self.next_order_id {
                return Err("snapshot: pending mass cancel past the next order id".into());
            }
            self.pending.push_back(p);
        }
        self.risk.restore(&mut r)?;
        let open = &self.open;
        self.risk.recount(
            self.orders
                .live
                .iter()
                .map(|(_, slot)| &self.orders.slab[slot as usize])
                .filter(|o| o.is_live())
                .filter_map(|o| open.account_ix(o.account).map(|a| (a, o))),
        );
        if !r.0.is_empty() {
            for _ in 0..r.count()? {
                let id = r.u64()?;
                let x = crate::OrderExt {
                    stop_price: r.u64()? as i64,
                    display_qty: r.u64()?,
                    expire_ns: r.u64()?,
                    triggered: match r.u64()? {
                        0 => false,
                        1 => true,
                        _ => return Err("snapshot: bad triggered flag".into()),
                    },
                };
                if self.orders.slot(id).is_none() {
                    return Err(format!("snapshot: attributes of unknown order {id}"));
                }
                self.orders.ext.insert(id, x);
            }
        }
        if !r.0.is_empty() {
            return Err("snapshot: trailing bytes in the exchange state".into());
        }
        Ok(())
    }
}

fn side_code(s: Side) -> u64 {
    match s {
        Side::Buy => 1,
        Side::Sell => 2,
    }
}

fn ord_type_code(t: OrdType) -> u64 {
    match t {
        OrdType::Limit => 1,
        OrdType::Market => 2,
    }
}

fn tif_code(t: TimeInForce) -> u64 {
    match t {
        TimeInForce::Day => 0,
        TimeInForce::Gtc => 1,
        TimeInForce::Ioc => 3,
        TimeInForce::Fok => 4,
        TimeInForce::Gtd => 5,
    }
}
