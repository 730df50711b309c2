//! Sequence, prefetch and journal: the first three steps of `EventLoop::process`, which make
//! the batch durable.
//!
//! Role: one timestamp per batch (never going backwards) and a checkpoint every
//! `checkpoint_every_records` records; cache hints for the ClOrdID lookups the apply step will
//! make; every record of the batch appended to the journal, then one commit (group commit).
//!
//! Never: lets anything of the batch leave before the commit returned; allocates per record
//! (one encoding buffer is reused).
//!
//! Invariants: records are journaled in batch order, which is the order they are applied in.

use super::EventLoop;
use crate::counters::now_ns;
use crate::error::ServerError;
use crate::node::record_hashes;
use crate::record::{Record, KIND_RECORD};
use journal::Log;

impl<L: Log> EventLoop<L> {
    /// Sequence: one timestamp for the batch, never going backwards (the records' numbers are
    /// the journal's, given as they are appended). Every `checkpoint_every_records` records the
    /// batch starts with a checkpoint of the state before it (rare: one `Vec` and one shift of
    /// the batch).
    pub(super) fn sequence(&mut self) -> u64 {
        let ts = now_ns().max(self.last_ts);
        self.last_ts = ts;
        let next_seq = self.journal.next_seq();
        if next_seq >= self.next_checkpoint && !self.batch.is_empty() {
            self.batch
                .insert(0, Record::Checkpoint(self.node.checkpoint()));
            self.next_checkpoint = next_checkpoint(self.cfg.checkpoint_every_records, next_seq);
        }
        ts
    }

    /// Cache hints for the apply step: each record's ClOrdID index slots start loading now and
    /// arrive while the batch is journaled (the index is 8 MB: a lookup is a cache and TLB
    /// miss). They change nothing.
    pub(super) fn prefetch(&mut self) {
        self.hashes.clear();
        let hasher = self.node.cl_hasher();
        for r in &self.batch {
            let h = record_hashes(&hasher, r);
            self.node.prefetch(r, &h);
            self.hashes.push(h);
        }
    }

    /// Journal: append the batch, then ONE commit (group commit). Nothing of this batch is
    /// released before it returns.
    pub(super) fn journal(&mut self, ts: u64) -> Result<(), ServerError> {
        self.seqs.clear();
        for r in &self.batch {
            self.enc.clear();
            r.encode(&mut self.enc);
            self.seqs
                .push(self.journal.append(KIND_RECORD, ts, &self.enc)?);
        }
        self.journal.commit(self.durability)?;
        Ok(())
    }
}

/// The first record number after `seq` at which a checkpoint is due, every `every` records
/// (0: never).
pub(crate) fn next_checkpoint(every: u64, seq: u64) -> u64 {
    seq.checked_div(every)
        .map_or(u64::MAX, |n| (n + 1).saturating_mul(every))
}
