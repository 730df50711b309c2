//! Records waiting to be sequenced, one queue per connection, and the round-robin fill of the
//! batch from them: the loop's fairness.
//!
//! Role: each connection's records wait in its `InQueue`, in order; `fill` takes at most
//! `batch_budget` of them an iteration, each connection with records waiting getting an equal
//! share of what is left, in turn. It keeps the counts the admission bounds check (application
//! messages waiting per connection and per firm). Another source of records would be drained
//! here, in the same budget.
//!
//! Never: reorders one connection's records; drops a queued record (a closed connection's queue
//! stays until its `Disconnected` record is taken).
//!
//! Invariants: `rr` holds exactly the connections with records waiting; `firm_waiting[f]` is
//! the number of application messages of firm `f` in the queues.

use super::EventLoop;
use crate::record::Record;
use crate::throttle::Guard;
use fix_gateway::ConnId;
use journal::Log;
use std::collections::{HashMap, VecDeque};

/// Records read from one connection and not yet in a batch, in order.
#[derive(Default)]
pub(crate) struct InQueue {
    pub(crate) recs: VecDeque<Record>,
    /// Application messages among them.
    pub(crate) apps: usize,
    /// The firm they count against.
    pub(crate) firm: Option<u32>,
    /// Its connection is gone: the queue ends with its `Disconnected` record.
    pub(crate) closed: bool,
}

/// Every configured session's throttle.
pub(crate) fn guards_of(sessions: &[crate::config::SessionDef]) -> Vec<Guard> {
    sessions.iter().map(|s| Guard::new(&s.throttle)).collect()
}

impl<L: Log> EventLoop<L> {
    /// Moves every waiting record into the batch (a clean stop applies what was read).
    pub(super) fn drain_all(&mut self) {
        while let Some(id) = self.rr.pop_front() {
            if let Some(q) = self.inq.get_mut(&id) {
                self.batch.extend(q.recs.drain(..));
                if let Some(f) = q.firm {
                    self.firm_waiting[f as usize] -= q.apps;
                }
                q.apps = 0;
            }
        }
        self.inq.retain(|_, q| !q.closed);
    }

    /// Fills this iteration's batch from the connections' queues, round-robin, up to the
    /// budget: each connection with records waiting gets an equal share of what is left, in
    /// turn; one that had its share moves to the back of the ring, so the next iteration
    /// starts with the others.
    pub(super) fn fill(&mut self) {
        while self.apps < self.budget && !self.rr.is_empty() {
            let share = ((self.budget - self.apps) / self.rr.len()).max(1);
            for _ in 0..self.rr.len() {
                if self.apps >= self.budget {
                    return;
                }
                let Some(id) = self.rr.pop_front() else {
                    return;
                };
                let Some(q) = self.inq.get_mut(&id) else {
                    continue;
                };
                let mut took = 0;
                while took < share && self.apps < self.budget {
                    let Some(r) = q.recs.pop_front() else {
                        break;
                    };
                    if r.is_application() {
                        q.apps -= 1;
                        if let Some(f) = q.firm {
                            self.firm_waiting[f as usize] -= 1;
                        }
                    }
                    self.batch.push(r);
                    took += 1;
                    self.apps += 1;
                }
                if !q.recs.is_empty() {
                    self.rr.push_back(id);
                } else if q.closed {
                    self.inq.remove(&id);
                } else if q.recs.capacity() > 4096 {
                    q.recs.shrink_to(64);
                }
            }
        }
    }

    /// Queues record `r` of connection `id`, behind its earlier ones.
    #[inline]
    pub(super) fn enqueue(
        inq: &mut HashMap<ConnId, InQueue, foldhash::fast::RandomState>,
        rr: &mut VecDeque<ConnId>,
        id: ConnId,
        r: Record,
    ) {
        let q = inq.entry(id).or_default();
        if q.recs.is_empty() {
            rr.push_back(id);
        }
        q.recs.push_back(r);
    }
}
