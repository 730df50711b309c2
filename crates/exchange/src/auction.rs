//! Trading phases above the engine's books: an instrument's status moves its book into a call
//! auction (pre-open, pre-close) and out of one with an uncross (open, closed); while a book
//! is in a call, the indicative price and volume the uncross would trade is published when it
//! changes. GTD expiries come due here too, on the input clock.
//!
//! Never: matches or prices anything itself (the engine's `CallStart`, `Uncross` and
//! `indicative` do); reads a clock.

use crate::events::{Ctx, CtxKind};
use crate::{ClOrdId, Exchange, InstrumentStatus, Output, Outputs, Principal};
use types::{Command, SymbolId};

impl Exchange {
    /// Runs an engine command no requester asked for (its reports go to the orders' owners).
    fn run_system<O: Outputs>(&mut self, cmd: &Command, out: &mut O) {
        let mut ctx = Ctx {
            who: Principal::default(),
            exec_n: self.exec_n,
            cl_ord_id: &ClOrdId::EMPTY,
            orig_cl_ord_id: &ClOrdId::EMPTY,
            kind: CtxKind::DayEnd,
            order: None,
            mass_count: 0,
        };
        self.run(cmd, &mut ctx, out);
        self.exec_n = ctx.exec_n;
    }

    /// Moves `symbol` to `status`: into a call (pre-open, pre-close) its book stops matching;
    /// out of one to open or closed, the book uncrosses first (at the price nearest its
    /// reference on a tie); a halt keeps the book as it is.
    pub(crate) fn move_status<O: Outputs>(
        &mut self,
        symbol: SymbolId,
        status: InstrumentStatus,
        out: &mut O,
    ) {
        let before = self.risk.set_status(symbol, status);
        self.calls_seen |= status.is_call();
        let in_call = self.engine.in_call(symbol);
        if status.is_call() && !in_call {
            self.run_system(&Command::CallStart { symbol }, out);
        } else if matches!(status, InstrumentStatus::Open | InstrumentStatus::Closed) && in_call {
            let reference = self.risk.reference(symbol);
            self.run_system(&Command::Uncross { symbol, reference }, out);
        }
        if before != status {
            out.output(&Output::InstrumentStatus { symbol, status });
        }
        self.publish_indicative(symbol, out);
    }

    /// Publishes `symbol`'s indicative uncross if it changed since last published.
    pub(crate) fn publish_indicative<O: Outputs>(&mut self, symbol: SymbolId, out: &mut O) {
        let s = symbol as usize;
        let now = if self.engine.in_call(symbol) {
            self.engine
                .indicative(symbol, self.risk.reference(symbol))
                .unwrap_or((0, 0))
        } else {
            (0, 0)
        };
        if self.indicative[s] != now {
            self.indicative[s] = now;
            out.output(&Output::Indicative {
                symbol,
                price: now.0,
                qty: now.1,
            });
        }
    }

    /// After an input: the indicative uncross of every book in a call (or just out of one).
    pub(crate) fn publish_indicatives<O: Outputs>(&mut self, out: &mut O) {
        let mut any = false;
        for s in 0..self.indicative.len() {
            if self.indicative[s].1 != 0 || self.engine.in_call(s as SymbolId) {
                self.publish_indicative(s as SymbolId, out);
                any |= self.engine.in_call(s as SymbolId);
            }
        }
        self.calls_seen = any;
    }

    /// `symbol`'s indicative uncross: price and volume (`(0, 0)`: none, or not in a call).
    pub fn indicative(&self, symbol: SymbolId) -> (i64, u64) {
        self.indicative
            .get(symbol as usize)
            .copied()
            .unwrap_or((0, 0))
    }

    /// The input clock reached `ts_ns`: GTD orders due expire; breaker halts and reopening
    /// calls due end.
    pub(crate) fn on_clock<O: Outputs>(&mut self, ts_ns: u64, out: &mut O) {
        if self.engine.next_expiry().is_some_and(|t| t <= ts_ns) {
            self.run_system(&Command::Expire { now_ns: ts_ns }, out);
        }
        if ts_ns >= self.risk.next_reopen() {
            let mut due = Vec::new();
            self.risk.reopen_due(ts_ns, &mut due);
            for (symbol, status) in due {
                self.move_status(symbol, status, out);
            }
        }
    }
}
