//! The REST API's requests in the event loop: taken from the HTTP side's bounded queue into
//! the batch (after the connections' share, within the iteration's budget), and the API
//! edge's answers sent back to the waiting requests after the batch's commit.
//!
//! Never: blocks (the queue is read with `try_recv`, answers go into one-shot channels that
//! never block); loses a request it took (it is journaled with the batch; a request whose
//! client is gone still happens, its answer goes nowhere).

use super::EventLoop;
use crate::record::Record;
use http_gateway::link::{ApiQueue, Reply};
use http_gateway::ReqId;
use journal::Log;
use std::collections::HashMap;

/// The loop's end of the HTTP side.
pub(crate) struct ApiLink {
    pub(crate) queue: ApiQueue,
    /// Requests sequenced and not yet answered, by request id.
    pub(crate) waiting: HashMap<ReqId, Reply>,
}

/// Requests an iteration takes at least, however many the connections took (so that FIX
/// traffic at the budget cannot starve the API).
const API_SHARE_MIN: usize = 16;

impl<L: Log> EventLoop<L> {
    /// Moves waiting API requests into the batch: what is left of `budget` after the
    /// connections' messages, at least `API_SHARE_MIN`.
    pub(super) fn take_api(&mut self, budget: usize) {
        let Some(api) = self.api.as_mut() else {
            return;
        };
        let room = budget.saturating_sub(self.apps).max(API_SHARE_MIN);
        for _ in 0..room {
            let Ok(req) = api.queue.try_recv() else {
                break;
            };
            api.waiting.insert(req.input.req, req.reply);
            self.batch.push(Record::Api(req.input));
            self.apps += 1;
        }
    }

    /// Sends the API edge's answers of the batch just published (its commit returned).
    pub(super) fn answer_api(&mut self) {
        let out = &mut self.node.api.out;
        if let Some(api) = self.api.as_mut() {
            for (req, a) in out.answers.drain(..) {
                if let Some(tx) = api.waiting.remove(&req) {
                    let _ = tx.send(a);
                }
            }
        }
        out.clear();
    }
}
