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
//! Invariants: after each input, `firm[f]` is the number of live orders of firm `f`'s accounts
//! and `account[a]` of account `a` (dense index); both are a function of the live orders, so a
//! restore recomputes them and checks them against the snapshot's.

use crate::{Config, Reject};
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

    /// An order of `account` became live.
    #[inline]
    pub(crate) fn add(&mut self, account: AccountId) {
        if let Some(&(f, a)) = self.ix.get(&account) {
            self.firm[f as usize] += 1;
            self.account[a as usize] += 1;
        }
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
mod tests {
    use super::*;

    fn cfg(percent: u32, limits: Vec<FirmLimits>) -> Config {
        let mut c = Config::new(Vec::new(), vec![vec![1, 2], vec![3]], 1000);
        c.firm_capacity_percent = percent;
        c.firm_limits = limits;
        c
    }

    #[test]
    fn the_smaller_of_a_firms_own_limit_and_its_share_applies() {
        let own = FirmLimits {
            max_open_orders: Some(300),
            max_open_orders_per_account: Some(2),
        };
        let mut o = OpenOrders::new(&cfg(25, vec![own]));
        assert_eq!(o.firm_max, vec![250, 250]);
        assert_eq!(o.account_max, vec![2, 2, u64::MAX]);
        o.add(1);
        o.add(1);
        assert_eq!(
            o.check(1),
            Some(Reject::AccountOpenOrderLimit {
                account: 1,
                limit: 2
            })
        );
        assert_eq!(o.check(2), None, "the other account has room");
        for _ in 0..248 {
            o.add(3);
        }
        assert_eq!(o.firm(1), 248);
        let o2 = OpenOrders::new(&cfg(100, vec![own]));
        assert_eq!(o2.firm_max, vec![300, 1000]);
        o.remove(1);
        assert_eq!((o.firm(0), o.account(1), o.account(2)), (1, 1, 0));
        assert_eq!(o.check(99), None, "an unknown account is refused elsewhere");
    }
}
