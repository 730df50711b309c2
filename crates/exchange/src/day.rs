//! The trading day, in the exchange's input time: DAY orders expire at its end, and the market
//! stays closed until the next day starts.
//!
//! Role: the first input stamped at or after the end of the day (`Config::trading_day_end_ns`)
//! expires DAY orders and closes the market until the next day's start
//! (`Config::trading_day_start_ns`; at once without one); while closed, new orders and replaces
//! are refused with `Reject::MarketClosed`.
//!
//! Never: reads a clock (time is the input's timestamp); expires or closes anything on an input
//! stamped before the end of the day.
//!
//! Invariants: `next_day_end_ns` is 0 only before the first input and `u64::MAX` without an end
//! of day; `closed_until_ns` is 0 exactly while the market is open.

use crate::events::{Ctx, CtxKind};
use crate::{ClOrdId, Exchange, Output, Outputs, Principal, Reject, TradingStatus};
use types::Command;

pub(crate) const NS_PER_DAY: u64 = 86_400 * 1_000_000_000;

/// The first instant strictly after `t` (ns since the epoch) at time of day `tod` (ns after
/// midnight UTC).
fn next_at(t: u64, tod: u64) -> u64 {
    let tod = tod % NS_PER_DAY;
    let today = t - t % NS_PER_DAY + tod;
    if today > t {
        today
    } else {
        today + NS_PER_DAY
    }
}

/// Counters the server reports (not part of the replicated state).
impl Exchange {
    /// The first input at or after `next_day_end_ns`: DAY orders expire and the market
    /// closes (it opens again at the next day's start, at once without one: `apply`). The
    /// first input of all only finds out when the day ends, and whether the market is closed.
    #[cold]
    pub(crate) fn end_trading_day<O: Outputs>(&mut self, ts_ns: u64, out: &mut O) {
        let first = self.next_day_end_ns == 0;
        let Some(end) = self.cfg.trading_day_end_ns else {
            self.next_day_end_ns = u64::MAX;
            return;
        };
        // The end of day that passed: the scheduled one, or for the first input the last one
        // at or before it.
        let ended = if first {
            next_at(ts_ns, end).saturating_sub(NS_PER_DAY)
        } else {
            self.next_day_end_ns
        };
        self.next_day_end_ns = next_at(ts_ns, end);
        self.closed_until_ns = match self.cfg.trading_day_start_ns {
            Some(start) => next_at(ended, start),
            None => ended,
        };
        if first {
            if self.closed_until_ns <= ts_ns {
                self.closed_until_ns = 0;
            }
            return;
        }
        let mut ctx = Ctx {
            who: Principal::default(),
            exec_n: self.exec_n,
            cl_ord_id: &ClOrdId::EMPTY,
            orig_cl_ord_id: &ClOrdId::EMPTY,
            kind: CtxKind::DayEnd,
            order: None,
            mass_count: 0,
        };
        self.run(&Command::ExpireDay { symbol: None }, &mut ctx, out);
        self.exec_n = ctx.exec_n;
        out.output(&Output::TradingStatus(TradingStatus::Closed));
    }

    /// Refused while the market is closed: the time it opens again.
    #[inline]
    pub(crate) fn closed(&self) -> Option<Reject> {
        if self.closed_until_ns == 0 {
            return None;
        }
        let opens_at_s = (self.closed_until_ns % NS_PER_DAY / 1_000_000_000) as u32;
        Some(Reject::MarketClosed { opens_at_s })
    }
}
