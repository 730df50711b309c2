//! Open-order limits: how many live orders each firm and each account has, and the most each
//! may have, so that one firm cannot take the whole of the engine's capacity.
//!
//! Role: the counts behind `Reject::FirmOpenOrderLimit` and `Reject::AccountOpenOrderLimit`.
//! A firm may have at most the smaller of its own `FirmLimits::max_open_orders` and its share
//! of the capacity (`Config::firm_capacity_percent` of `orders_max`); each of its accounts at
//! most `FirmLimits::max_open_orders_per_account`. The exchange counts an order when it
//! becomes live and uncounts it when it leaves (filled, canceled, expired, refused by the
//! engine); a replace keeps the same order, so the count.
//!
//! Never: iterates its hash table (accounts are looked up, counts live in vectors by dense
//! index, so snapshots and hashes are in a fixed order); allocates after it is built.
//!
//! Also keeps, per account, `first_live`: the id of the order that last took its count from 0
//! to 1, or the end of the last mass cancel of all its orders if later, a lower bound of its
//! live order ids, where a mass cancel starts looking (`mass`).
//!
//! Invariants: after each input, `firm[f]` is the number of live orders of firm `f`'s accounts
//! and `account[a]` of account `a` (dense index); both are a function of the live orders, so a
//! restore recomputes them and checks them against the snapshot's. While `account[a] > 0`,
//! `first_live[a]` is at most the id of each live order of the account; it depends on the
//! history, not only the live orders, so the snapshot keeps it.

use crate::{Config, OrderId, Reject};
use std::collections::HashMap;
use types::AccountId;

/// A firm's own limits (`Config::firm_limits`); `None`: no limit of that kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FirmLimits {
    /// Open (live) orders of all its accounts together; the firm's share of the capacity
    /// bounds it too.
    pub max_open_orders: Option<u64>,
    /// Open orders of each of its accounts.
    pub max_open_orders_per_account: Option<u64>,
    /// Quantity of one order (the instrument's limit applies too: the smaller).
    pub max_order_qty: Option<u64>,
    /// Price × quantity of one order, in notional units (`Config::notional_decimals`).
    pub max_order_notional: Option<i128>,
    /// Notional of each account's resting orders.
    pub max_open_notional_per_account: Option<i128>,
    /// Each account's net position in each instrument, were its resting orders on one side
    /// and the new order to fill (on the absolute value).
    pub max_net_position_per_account: Option<u64>,
}

type AccountMap = HashMap<AccountId, (u16, u32), foldhash::fast::FixedState>;

/// Open orders per firm and per account, and their maxima.
#[derive(Clone)]
pub(crate) struct OpenOrders {
    /// Account -> (its firm, its dense index); an account listed by two firms belongs to the
    /// first.
    ix: AccountMap,
    firm: Vec<u64>,
    firm_max: Vec<u64>,
    account: Vec<u64>,
    account_max: Vec<u64>,
    /// The account ids by dense index.
    accounts: Vec<AccountId>,
    /// By dense index: a lower bound of the account's live order ids (while it has any).
    first_live: Vec<OrderId>,
}

impl OpenOrders {
    pub(crate) fn new(cfg: &Config) -> OpenOrders {
        let share = (cfg.orders_max as u64)
            .saturating_mul(u64::from(cfg.firm_capacity_percent.min(100)))
            / 100;
        let mut o = OpenOrders {
            ix: AccountMap::default(),
            firm: vec![0; cfg.firms.len()],
            firm_max: Vec::with_capacity(cfg.firms.len()),
            account: Vec::new(),
            account_max: Vec::new(),
            accounts: Vec::new(),
            first_live: Vec::new(),
        };
        for (f, accounts) in cfg.firms.iter().enumerate() {
            let limits = cfg.firm_limits.get(f).copied().unwrap_or_default();
            o.firm_max
                .push(limits.max_open_orders.unwrap_or(u64::MAX).min(share));
            for &a in accounts {
                if o.ix.contains_key(&a) {
                    continue;
                }
                o.ix.insert(a, (f as u16, o.accounts.len() as u32));
                o.accounts.push(a);
                o.account.push(0);
                o.first_live.push(0);
                o.account_max
                    .push(limits.max_open_orders_per_account.unwrap_or(u64::MAX));
            }
        }
        o
    }

    /// The refusal of one more open order on `account`, if it is at a limit.
    #[inline]
    pub(crate) fn check(&self, account: AccountId) -> Option<Reject> {
        let &(f, a) = self.ix.get(&account)?;
        let limit = self.firm_max[f as usize];
        if self.firm[f as usize] >= limit {
            return Some(Reject::FirmOpenOrderLimit { limit });
        }
        let limit = self.account_max[a as usize];
        if self.account[a as usize] >= limit {
            return Some(Reject::AccountOpenOrderLimit { account, limit });
        }
        None
    }

    /// Order `id` of `account` became live (ids become live in increasing order).
    #[inline]
    pub(crate) fn add(&mut self, account: AccountId, id: OrderId) {
        if let Some(&(f, a)) = self.ix.get(&account) {
            self.firm[f as usize] += 1;
            let n = &mut self.account[a as usize];
            if *n == 0 {
                self.first_live[a as usize] = id;
            }
            *n += 1;
        }
    }

    /// The lowest order id a live order of any of `accounts` may have; `None` if none has a
    /// live order.
    pub(crate) fn first_live_of(&self, accounts: &[AccountId]) -> Option<OrderId> {
        accounts
            .iter()
            .filter_map(|acc| self.ix.get(acc))
            .filter(|&&(_, a)| self.account[a as usize] > 0)
            .map(|&(_, a)| self.first_live[a as usize])
            .min()
    }

    /// Every order of `accounts` below `id` is no longer live: their live orders start at
    /// `id` or later.
    pub(crate) fn raise_first_live(&mut self, accounts: &[AccountId], id: OrderId) {
        for acc in accounts {
            if let Some(&(_, a)) = self.ix.get(acc) {
                let f = &mut self.first_live[a as usize];
                *f = (*f).max(id);
            }
        }
    }

    /// The `first_live` hints by dense index, 0 for an account with no live order (the
    /// snapshot's).
    pub(crate) fn first_live_hints(&self) -> impl Iterator<Item = OrderId> + '_ {
        self.account
            .iter()
            .zip(&self.first_live)
            .map(|(&n, &f)| if n > 0 { f } else { 0 })
    }

    /// Sets the `first_live` hints from a snapshot, given each account's lowest live order id
    /// (as the live orders say); an error if a hint is above it.
    pub(crate) fn restore_first_live(
        &mut self,
        hints: &[OrderId],
        lowest: &[OrderId],
    ) -> Result<(), String> {
        if hints.len() != self.first_live.len() || lowest.len() != self.first_live.len() {
            return Err("snapshot: first live order ids of another set of accounts".into());
        }
        for (a, (&h, &low)) in hints.iter().zip(lowest).enumerate() {
            if self.account[a] > 0 && h > low {
                return Err("snapshot: first live order id above a live order's".into());
            }
            self.first_live[a] = if self.account[a] > 0 { h } else { 0 };
        }
        Ok(())
    }

    /// The firm of each account, in dense index order (with the account).
    pub(crate) fn account_firms(&self) -> Vec<(u16, AccountId)> {
        self.accounts.iter().map(|a| (self.ix[a].0, *a)).collect()
    }

    /// The dense index of `account`, if a firm lists it.
    pub(crate) fn account_ix(&self, account: AccountId) -> Option<usize> {
        self.ix.get(&account).map(|&(_, a)| a as usize)
    }

    /// How many accounts the firms list (the length of `first_live_hints`).
    pub(crate) fn accounts_len(&self) -> usize {
        self.accounts.len()
    }

    /// An order of `account` is no longer live.
    #[inline]
    pub(crate) fn remove(&mut self, account: AccountId) {
        if let Some(&(f, a)) = self.ix.get(&account) {
            self.firm[f as usize] -= 1;
            self.account[a as usize] -= 1;
        }
    }

    /// Open orders of firm `f`.
    pub(crate) fn firm(&self, f: u16) -> u64 {
        self.firm.get(f as usize).copied().unwrap_or(0)
    }

    /// Open orders of `account`.
    pub(crate) fn account(&self, account: AccountId) -> u64 {
        self.ix
            .get(&account)
            .map_or(0, |&(_, a)| self.account[a as usize])
    }

    /// The counts, firms then accounts, in index order (the snapshot's).
    pub(crate) fn counts(&self) -> impl Iterator<Item = u64> + '_ {
        self.firm.iter().chain(&self.account).copied()
    }

    /// How many counts `counts` gives.
    pub(crate) fn len(&self) -> usize {
        self.firm.len() + self.account.len()
    }
}

#[cfg(test)]
mod tests;
