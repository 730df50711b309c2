//! Cluster mode, on a gateway: the loop's end of the link to the engines. The commands the
//! exchange captured in a batch go to the command log after the batch's commit; the engines'
//! outcomes come in as `Record::Outcome`s, journaled and applied like any record, so that a
//! report leaves only once the engine reported it and the gateway's journal holds it.
//!
//! Never: blocks (outcomes are read with `try_recv`; commands go into an unbounded channel to
//! the link's producer thread).

use super::EventLoop;
use crate::record::Record;
use exchange::Routed;
use journal::Log;
use std::sync::mpsc::{Receiver, Sender, SyncSender, TryRecvError};
use std::sync::Arc;

/// An outcome read from the event log, for the loop.
#[derive(Debug)]
pub struct Incoming {
    pub shard: u16,
    /// Its offset in the event log's partition.
    pub offset: u64,
    pub payload: Vec<u8>,
}

/// What a gateway's link to Kafka gets from the server when it starts
/// (`Server::start_gateway`).
pub struct GatewayPorts {
    /// Outcomes for the loop, each checked (`exchange::wire::Outcome::decode`); call `wake`
    /// after sending.
    pub outcomes: SyncSender<Incoming>,
    /// Wakes the loop.
    pub wake: Arc<dyn Fn() + Send + Sync>,
    /// Commands to send, in order, batch by batch.
    pub commands: Receiver<Vec<Routed>>,
    /// By shard: the event-log offset of the last outcome the gateway took (its reader
    /// resumes after it).
    pub resume: Vec<Option<u64>>,
    /// Commands sent before a restart and not answered: the link sends them first.
    pub unanswered: Vec<Routed>,
}

/// Starts the link's threads with its ports.
pub type StartGateway = Box<dyn FnOnce(GatewayPorts) -> Result<(), String> + Send>;

/// The loop's end.
pub(crate) struct ClusterLink {
    pub(crate) outcomes: Receiver<Incoming>,
    pub(crate) commands: Sender<Vec<Routed>>,
    /// Outcomes may be waiting (the last take stopped at its budget).
    pub(crate) more: bool,
    pub(crate) gone: bool,
}

impl<L: Log> EventLoop<L> {
    /// Moves waiting outcomes into the batch, at most `budget`.
    pub(super) fn take_outcomes(&mut self, budget: usize) {
        let Some(link) = self.cluster.as_mut() else {
            return;
        };
        link.more = false;
        for _ in 0..budget.max(1) {
            match link.outcomes.try_recv() {
                Ok(i) => self.batch.push(Record::Outcome {
                    shard: i.shard,
                    offset: i.offset,
                    payload: i.payload,
                }),
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    if !link.gone {
                        link.gone = true;
                        (self.log)("cluster: the link's reader stopped");
                    }
                    return;
                }
            }
        }
        link.more = true;
    }

    /// After a batch's commit: its commands to the link.
    pub(super) fn send_commands(&mut self) {
        let Some(link) = self.cluster.as_mut() else {
            return;
        };
        let mut v = Vec::new();
        self.node.exchange.take_commands(&mut v);
        if !v.is_empty() && link.commands.send(v).is_err() && !link.gone {
            link.gone = true;
            (self.log)("cluster: the link's producer stopped");
        }
    }
}
