//! Journal followers: a replica of the server's state that tails the journal on a thread of
//! its own.
//!
//! Role: the one mechanism for everything that only needs to know what happened (the snapshot
//! replica, market data, the trade store; standby replicas to come). A [`Follower`] holds a
//! replica `Node` (restored from a snapshot, or empty) and a position in the journal; it applies
//! the records the event loop has committed and applied, up to a watermark the loop publishes
//! (`Counters::last_seq`), and lets its owner look at the replica after each stretch. Replicas
//! format no messages (`Node::set_replaying`); what the exchange said is theirs to keep as typed
//! outputs: market data's trades and level changes (`follow_market_to`), and the trade store's
//! every report too (`set_collect_reports`, `follow_store_to`).
//!
//! Never: slows the order path (it reads the journal files, never the loop's memory, and only
//! what the loop has committed; it owns its replica alone), reads past the watermark (a record
//! half written), or skips or reorders a record (a gap is an error).

use crate::error::ServerError;
use crate::node::Node;
use crate::record::decode_record;
use fix_gateway::Outbox;
use journal::{JournalDir, LogReader, LogSource};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Records a follower applies between two calls of its slice hook (about 0.3 ms).
pub const FOLLOW_SLICE: u64 = 256;

/// A target that means "the journal's end, wherever it is": for tools reading a stopped
/// server's journal (`rialto store verify`), where no watermark says where it ends.
pub const TO_END: u64 = u64::MAX;

/// How a stretch of following ended.
#[derive(Debug, PartialEq, Eq)]
pub enum FollowEnd {
    /// The replica is at the target.
    Done,
    /// The slice hook asked to stop (the replica is consistent, just behind).
    Stopped,
}

/// A replica and where it is in the journal.
pub struct Follower<S: LogSource = JournalDir> {
    node: Box<Node>,
    out: Outbox,
    source: S,
    /// The reader of the last stretch and the number of the record it reads next. A stretch
    /// first has it forget what it read ahead (`LogReader::forget_unread`), so it never uses
    /// bytes read before they were written.
    reader: Option<(S::Reader, u64)>,
}

impl<S: LogSource> Follower<S> {
    /// Follows the log `source` reads from `node`'s state on.
    pub fn new(mut node: Node, source: S) -> Follower<S> {
        node.set_replaying(true);
        Follower {
            node: Box::new(node),
            out: Outbox::default(),
            source,
            reader: None,
        }
    }

    pub fn node(&self) -> &Node {
        &self.node
    }

    /// Turns the replica's API order events on or off (`ApiEdge::events_on`: output only,
    /// never state).
    pub fn set_api_events(&mut self, on: bool) {
        self.node.api.events_on = on;
    }

    /// The replica's API order events of the records applied since they were last taken
    /// (the caller empties it).
    pub fn api_events(&mut self) -> &mut Vec<(u16, Vec<u8>)> {
        &mut self.node.api.out.events
    }

    /// The last record the replica has applied.
    pub fn last_seq(&self) -> u64 {
        self.node.last_seq()
    }

    /// Applies journal records up to `upto` (committed already). Every [`FOLLOW_SLICE`]
    /// records it calls `slice` with the replica, which may stop the stretch (returning
    /// false).
    pub fn follow_to(
        &mut self,
        upto: u64,
        slice: impl FnMut(&Node) -> bool,
    ) -> Result<FollowEnd, ServerError> {
        self.follow::<false>(upto, slice, |_, _, _| {})
    }

    /// `follow_to` for a market-data replica: the engine builds its level events, and after
    /// each record `each` gets the replica, the record's timestamp and its trades and level
    /// changes, in the engine's order.
    pub fn follow_market_to(
        &mut self,
        upto: u64,
        slice: impl FnMut(&Node) -> bool,
        each: impl FnMut(&Node, u64, &[types::Event]),
    ) -> Result<FollowEnd, ServerError> {
        let mut each = each;
        self.follow::<true>(upto, slice, |n, ts, out| each(n, ts, &out.market))
    }

    /// Turns the copying of every report on or off (`Outbox::collect_reports`: output only,
    /// never state); they reach `follow_store_to`'s `each`.
    pub fn set_collect_reports(&mut self, on: bool) {
        self.out.collect_reports = on;
    }

    /// `follow_to` for the trade store: after each record `each` gets the replica, the
    /// record's timestamp and its outputs: the trades and level changes in `market` and, with
    /// `set_collect_reports`, every report in `reports`, in the exchange's order.
    pub fn follow_store_to(
        &mut self,
        upto: u64,
        slice: impl FnMut(&Node) -> bool,
        each: impl FnMut(&Node, u64, &Outbox),
    ) -> Result<FollowEnd, ServerError> {
        self.follow::<true>(upto, slice, each)
    }

    fn follow<const MD: bool>(
        &mut self,
        upto: u64,
        mut slice: impl FnMut(&Node) -> bool,
        mut each: impl FnMut(&Node, u64, &Outbox),
    ) -> Result<FollowEnd, ServerError> {
        let next = self.node.last_seq() + 1;
        if next > upto {
            return Ok(FollowEnd::Done);
        }
        let mut reader = match self.reader.take() {
            Some((mut r, at)) if at == next => {
                r.forget_unread();
                r
            }
            _ => self.source.open(next)?,
        };
        let mut n = 0u64;
        let mut end = FollowEnd::Done;
        // The reader's list of segments ends before a segment added since it was opened:
        // it is opened again there, once.
        let mut reopened = false;
        while self.node.last_seq() < upto {
            n += 1;
            if n.is_multiple_of(FOLLOW_SLICE) && !slice(&self.node) {
                end = FollowEnd::Stopped;
                break;
            }
            let next = self.node.last_seq() + 1;
            let applied = match reader.next_record()? {
                None => false,
                Some(rec) => {
                    if rec.seq != next {
                        return Err(ServerError(format!(
                            "journal record {} where {next} was expected",
                            rec.seq
                        )));
                    }
                    let r = decode_record(&rec)?;
                    if MD {
                        self.node
                            .apply_market(rec.seq, rec.timestamp_ns, &r, &mut self.out);
                        each(&self.node, rec.timestamp_ns, &self.out);
                    } else {
                        self.node
                            .apply(rec.seq, rec.timestamp_ns, &r, &mut self.out);
                    }
                    self.out.clear();
                    true
                }
            };
            if !applied {
                if reopened && upto == TO_END {
                    break;
                }
                if reopened {
                    return Err(ServerError(format!(
                        "the journal ends before record {upto} (at {next})"
                    )));
                }
                reader = self.source.open(next)?;
                reopened = true;
                continue;
            }
            reopened = false;
        }
        self.reader = Some((reader, self.node.last_seq() + 1));
        slice(&self.node);
        Ok(end)
    }

    /// Runs this follower on a thread of its own, named `name`: every `every` it applies what
    /// the loop has committed and applied (`watermark`), then calls `after` with the replica;
    /// until `stop`. Returns the thread, which ends with the follower (or the error that
    /// stopped it).
    pub fn spawn(
        mut self,
        name: &str,
        watermark: Arc<AtomicU64>,
        stop: Arc<AtomicBool>,
        every: Duration,
        mut after: impl FnMut(&Node) + Send + 'static,
    ) -> std::io::Result<JoinHandle<Result<Follower<S>, ServerError>>>
    where
        S::Reader: Send,
    {
        std::thread::Builder::new()
            .name(name.to_string())
            .spawn(move || {
                while !stop.load(Ordering::Acquire) {
                    let upto = watermark.load(Ordering::Acquire);
                    let stopping = &stop;
                    self.follow_to(upto, |_| !stopping.load(Ordering::Relaxed))?;
                    after(&self.node);
                    std::thread::park_timeout(every);
                }
                Ok(self)
            })
    }
}

#[cfg(test)]
mod tests;
