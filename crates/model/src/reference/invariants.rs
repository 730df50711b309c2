//! [`Reference::check_invariants`]: what must hold between any two commands.

use std::collections::BTreeMap;

use types::{OrdType, Side, TimeInForce};

use super::{priority_key, Reference};

impl Reference {
    /// Checks every invariant named in the module docs; the error names the first broken one.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut live = BTreeMap::new();
        for (symbol, book) in self.books.iter().enumerate() {
            let inst = &self.instruments[symbol];
            for side in [Side::Buy, Side::Sell] {
                let orders = book.side(side);
                for w in orders.windows(2) {
                    if priority_key(side, &w[0]) >= priority_key(side, &w[1]) {
                        return Err(format!(
                            "symbol {symbol} {side:?}: order {} is queued before {} against priority",
                            w[0].id, w[1].id
                        ));
                    }
                }
                for o in orders {
                    if o.side != side {
                        return Err(format!("order {} rests on the wrong side", o.id));
                    }
                    if o.qty == 0 || !o.qty.is_multiple_of(inst.lot) {
                        return Err(format!("order {} rests with qty {}", o.id, o.qty));
                    }
                    let shown_ok = if o.display_qty == 0 {
                        o.shown == o.qty
                    } else {
                        o.display_qty.is_multiple_of(inst.lot)
                            && o.shown > 0
                            && o.shown <= o.qty.min(o.display_qty)
                            && o.shown.is_multiple_of(inst.lot)
                    };
                    if !shown_ok {
                        return Err(format!(
                            "order {} rests showing {} of {} (peak {})",
                            o.id, o.shown, o.qty, o.display_qty
                        ));
                    }
                    if o.price <= 0 || o.price % inst.tick != 0 {
                        return Err(format!("order {} rests at price {}", o.id, o.price));
                    }
                    if (o.tif == TimeInForce::Gtd) != (o.expire_ns > 0)
                        || matches!(o.tif, TimeInForce::Ioc | TimeInForce::Fok)
                    {
                        return Err(format!(
                            "order {} rests with tif {:?} expiring at {}",
                            o.id, o.tif, o.expire_ns
                        ));
                    }
                    if live.insert(o.id, o.qty).is_some() {
                        return Err(format!("order {} rests twice", o.id));
                    }
                }
            }
            if let (Some(bid), Some(ask)) = (book.bids.first(), book.asks.first()) {
                if bid.price >= ask.price && !book.in_call {
                    return Err(format!(
                        "symbol {symbol} crossed at rest: bid {} ({}) >= ask {} ({})",
                        bid.price, bid.id, ask.price, ask.id
                    ));
                }
            }
            if book.traded.is_some() {
                return Err(format!("symbol {symbol}: a trigger round was left undone"));
            }
            for o in &book.stops {
                let limit_ok = match o.ord_type {
                    OrdType::Limit => o.price > 0 && o.price % inst.tick == 0,
                    OrdType::Market => o.price == 0,
                };
                if o.symbol as usize != symbol
                    || o.stop_price <= 0
                    || o.stop_price % inst.tick != 0
                    || o.qty == 0
                    || !o.qty.is_multiple_of(inst.lot)
                    || !limit_ok
                    || o.post_only
                {
                    return Err(format!("pending stop {} is malformed: {o:?}", o.id));
                }
                if live.insert(o.id, o.qty).is_some() {
                    return Err(format!("order {} is both pending and live elsewhere", o.id));
                }
            }
        }
        for (id, l) in &self.ledgers {
            if !self.used_ids.contains(id) {
                return Err(format!("order {id} has a ledger but its id is not used"));
            }
            if l.entered != l.filled + l.canceled + l.replaced_away + u128::from(l.remaining) {
                return Err(format!("order {id} does not conserve quantity: {l:?}"));
            }
            if l.remaining != live.get(id).copied().unwrap_or(0) {
                return Err(format!(
                    "order {id}: ledger remaining {} but book has {:?}",
                    l.remaining,
                    live.get(id)
                ));
            }
        }
        if let Some(id) = live.keys().find(|id| !self.ledgers.contains_key(id)) {
            return Err(format!("order {id} is live without a ledger"));
        }
        Ok(())
    }
}
