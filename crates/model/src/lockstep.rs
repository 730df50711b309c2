//! Drives the reference and another matcher side by side, one command at a time.
//!
//! Role: the comparison loop shared by the property test and the engine fuzz target. Each
//! command goes to both; their events must be equal, and then the [`Auditor`] (fed the command
//! and those events) checks both books, and each matcher checks its own invariants.
//!
//! Never: hides a difference. The only tolerated one is the other matcher refusing a command
//! for capacity (`CapacityExceeded`), which the limitless reference never does; that ends the
//! comparison with [`LockstepError::Capacity`], because the states have diverged on purpose.

use types::{Command, Event, Instrument, Matcher, RejectReason, SymbolId};

use crate::audit::Auditor;
use crate::reference::Reference;
use crate::scenario::Inspect;

/// Why a lockstep run stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LockstepError {
    /// Events differed or an invariant broke; the text shows the command and both streams.
    Diverged(String),
    /// The other matcher hit a capacity limit; compare no further.
    Capacity,
}

impl std::fmt::Display for LockstepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LockstepError::Diverged(s) => f.write_str(s),
            LockstepError::Capacity => f.write_str("the matcher under test ran out of capacity"),
        }
    }
}

impl std::error::Error for LockstepError {}

/// The reference and a matcher under test, fed the same commands.
pub struct Lockstep<M> {
    pub reference: Reference,
    pub other: M,
    audit: Auditor,
    symbols: SymbolId,
    commands: u64,
}

fn show(events: &[Event]) -> String {
    events.iter().map(|e| format!("\n      {e:?}")).collect()
}

impl<M: Inspect> Lockstep<M> {
    /// `other` must start empty over the same `instruments`.
    pub fn new(instruments: &[Instrument], other: M) -> Lockstep<M> {
        Lockstep {
            reference: Reference::new(instruments),
            other,
            audit: Auditor::new(),
            symbols: instruments.len() as SymbolId,
            commands: 0,
        }
    }

    /// Commands applied so far.
    pub fn commands(&self) -> u64 {
        self.commands
    }

    /// Applies `cmd` to both; returns the (identical) events.
    pub fn apply(&mut self, cmd: &Command) -> Result<Vec<Event>, LockstepError> {
        let n = self.commands;
        self.commands += 1;
        let mut want = Vec::new();
        let mut got = Vec::new();
        self.reference.apply(cmd, &mut want);
        self.other.apply(cmd, &mut got);
        if want != got {
            let capacity = got.iter().any(|e| {
                matches!(
                    e,
                    Event::Rejected {
                        reason: RejectReason::CapacityExceeded,
                        ..
                    }
                )
            });
            if capacity {
                return Err(LockstepError::Capacity);
            }
            return Err(LockstepError::Diverged(format!(
                "command #{n}: {cmd:?}\n  reference:{}\n  other:{}",
                show(&want),
                show(&got)
            )));
        }
        let symbols = self.symbols;
        let (audit, reference, other) = (&mut self.audit, &self.reference, &self.other);
        audit
            .on_command(cmd, &want)
            .and_then(|()| audit.check_book(symbols, |s, d| reference.resting_view(s, d)))
            .map_err(|e| format!("reference: {e}"))
            .and_then(|()| reference.check().map_err(|e| format!("reference: {e}")))
            .and_then(|()| {
                audit
                    .check_book(symbols, |s, d| other.resting_view(s, d))
                    .and_then(|()| other.check())
                    .map_err(|e| format!("other: {e}"))
            })
            .map_err(|e| {
                LockstepError::Diverged(format!(
                    "command #{n}: {cmd:?}\n  events:{}\n  {e}",
                    show(&want)
                ))
            })?;
        Ok(want)
    }
}

#[cfg(test)]
mod tests;
