//! Operator controls: the kill switch of a firm or account, an instrument's trading status and
//! its run-time limits (`Input::Admin`), applied in sequence like any input, so a replay
//! repeats them.
//!
//! Never: acts on a firm, account or instrument the configuration does not have (the edge
//! refuses those first; here they change nothing).

use crate::mass::PendingMass;
use crate::{AdminAction, Exchange, InstrumentStatus, Outputs, Principal};

/// The originator a kill switch's mass cancel is recorded for: no edge serves it.
const OPERATOR: u16 = u16::MAX;

impl Exchange {
    pub(crate) fn on_admin<O: Outputs>(&mut self, seq: u64, a: &AdminAction, out: &mut O) {
        match *a {
            AdminAction::Kill { firm, account } => {
                let Some(ix) = self.admin_account(firm, account) else {
                    return;
                };
                self.risk.block(firm, ix, true);
                let who = Principal {
                    originator: OPERATOR,
                    firm,
                };
                let p = PendingMass {
                    kill: true,
                    kill_account: account,
                    ..PendingMass::new(who, seq)
                };
                self.start_mass(p, out);
            }
            AdminAction::Unblock { firm, account } => {
                if let Some(ix) = self.admin_account(firm, account) {
                    self.risk.block(firm, ix, false);
                }
            }
            AdminAction::SetStatus { symbol, status } => {
                if (symbol as usize) < self.cfg.instruments.len() {
                    // The operator's word ends a breaker's halt too.
                    self.risk.clear_breaker_halt(symbol);
                    self.move_status(symbol, status, out);
                }
            }
            AdminAction::SetRisk { symbol, risk } => {
                if (symbol as usize) < self.cfg.instruments.len() {
                    self.risk.set_limits(symbol, risk);
                }
            }
        }
    }

    /// `Some(None)` for a known firm, `Some(Some(dense index))` for one of its accounts,
    /// `None` for anything else.
    fn admin_account(&self, firm: u16, account: Option<u32>) -> Option<Option<usize>> {
        let accounts = self.cfg.firms.get(firm as usize)?;
        match account {
            None => Some(None),
            Some(a) if accounts.contains(&a) => self.open.account_ix(a).map(Some),
            Some(_) => None,
        }
    }

    /// Whether the kill switch of `firm` (or of its `account`) is on.
    pub fn blocked(&self, firm: u16, account: Option<u32>) -> bool {
        match self.admin_account(firm, account) {
            Some(ix) => self.risk.blocked(firm, ix),
            None => false,
        }
    }

    /// `symbol`'s trading status (open for a symbol out of range).
    pub fn instrument_status(&self, symbol: types::SymbolId) -> InstrumentStatus {
        if (symbol as usize) < self.cfg.instruments.len() {
            self.risk.status(symbol)
        } else {
            InstrumentStatus::Open
        }
    }

    /// A count that changes whenever an instrument's status may have (a follower compares it
    /// with the last it saw before looking at every status; not part of the state).
    pub fn status_changes(&self) -> u64 {
        self.risk.status_changes()
    }

    /// `symbol`'s limits in force (the configuration's or the operator's).
    pub fn instrument_risk(&self, symbol: types::SymbolId) -> Option<crate::InstrumentRisk> {
        ((symbol as usize) < self.cfg.instruments.len()).then(|| self.risk.limits(symbol))
    }
}
