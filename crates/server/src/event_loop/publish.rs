//! Apply and publish: the last two steps of `EventLoop::process`, and the output served over
//! several iterations (resends in pieces, mass cancel chunks).
//!
//! Role: applies every record of the committed batch to the node, in journal order, into one
//! `Outbox`; copies each output to its connection's write buffer (and the message log) and
//! writes each touched connection once. A ResendRequest is served in pieces paced on its
//! connection's unsent output, with the output that came after it held behind it; a mass
//! cancel's next chunk waits until its requester has read its reports.
//!
//! Never: runs before the batch's commit returned; interleaves held output with a resend.
//!
//! Invariants: a connection's messages leave in the order they were numbered; no sequence
//! number is skipped when a newer resend replaces one in progress.

use super::{Conn, EventLoop, KEEP_BUF};
use crate::record::Record;
use fix::frame;
use fix_gateway::{ConnId, Outbox};
use journal::Log;
use std::collections::HashMap;

/// A resend's next piece is written once its connection has less than this unsent.
const RESEND_LOW: usize = 256 << 10;

/// A mass cancel's next chunk is applied once its requester has less than this unsent.
const CONTINUE_LOW: usize = 1 << 20;

/// Most sequence numbers of one resend piece.
const RESEND_PIECE: usize = 512;

impl<L: Log> EventLoop<L> {
    /// Apply: every record of the batch to the state machine, in journal order. Returns
    /// whether the batch held the Shutdown record, and how many records count towards a
    /// snapshot (timer ticks and checkpoints alone do not make one due).
    pub(super) fn apply(&mut self, ts: u64) -> (bool, u64) {
        let mut shutdown = false;
        let mut counted = 0u64;
        // The index slots are loaded by now: follow them to the ring entries a cancel or
        // replace will compare.
        for (r, h) in self.batch.iter().zip(&self.hashes) {
            self.node.prefetch_entries(r, h);
        }
        for ((r, &seq), &h) in self.batch.iter().zip(&self.seqs).zip(&self.hashes) {
            self.node.apply_prehashed(seq, ts, r, h, &mut self.out);
            shutdown |= matches!(r, Record::Shutdown);
            counted += u64::from(!matches!(r, Record::Tick | Record::Checkpoint(_)));
        }
        (shutdown, counted)
    }

    /// Publish: the batch's output copied to the connections' buffers, then one write per
    /// connection.
    pub(super) fn publish(&mut self) {
        self.touched.clear();
        let mut next_resend = 0;
        for (i, item) in self.out.items.iter().enumerate() {
            // ResendRequests applied before this message start being served first.
            while let Some(r) = self.out.resends.get(next_resend).filter(|r| r.at <= i) {
                next_resend += 1;
                Self::start_resend(&mut self.conns, &mut self.resending, r);
            }
            if let Some(c) = self.conns.get_mut(&item.conn) {
                let bytes = &self.out.buf[item.start..item.end];
                if let (Some(ix), Some(log), false) =
                    (c.msglog, self.msglog.as_mut(), bytes.is_empty())
                {
                    log.push(ix, false, self.last_ts, bytes);
                }
                if c.resend.is_some() {
                    c.held.extend_from_slice(bytes);
                } else {
                    c.wbuf.extend_from_slice(bytes);
                }
                if item.close {
                    // The session ended: what its resend had left is not sent.
                    c.closing = true;
                    if c.resend.take().is_some() {
                        c.wbuf.extend_from_slice(&c.held);
                        c.held.clear();
                    }
                }
                if self.touched.last() != Some(&item.conn) {
                    self.touched.push(item.conn);
                }
            }
        }
        for r in &self.out.resends[next_resend..] {
            Self::start_resend(&mut self.conns, &mut self.resending, r);
        }
        self.out.clear();
        if let Some(log) = self.msglog.as_mut() {
            log.flush();
        }
        self.touched.sort_unstable();
        self.touched.dedup();
        for i in 0..self.touched.len() {
            let id = self.touched[i];
            self.flush(id);
        }
    }

    /// A ResendRequest to serve in pieces (`serve_resends`): a newer one of the same
    /// connection replaces the one in progress, with a range that also covers what that one
    /// had left. The output held behind the old one was numbered before the new request:
    /// the messages the new range covers leave `held` (sent after the resend they would
    /// arrive below the sequence number the client then expects) and are resent with it, the
    /// range starting no later than the first of them, so no number is skipped.
    fn start_resend(
        conns: &mut HashMap<ConnId, Conn, foldhash::fast::RandomState>,
        resending: &mut Vec<ConnId>,
        r: &fix_gateway::DeferredResend,
    ) {
        if let Some(c) = conns.get_mut(&r.conn) {
            if c.closing {
                return;
            }
            let (mut begin, mut end) = (r.begin, r.end);
            match c.resend {
                None => resending.push(r.conn),
                Some((from, old_end)) => {
                    begin = begin.min(from);
                    end = end.max(old_end);
                    if let Some(first) = drop_held_through(&mut c.held, end) {
                        begin = begin.min(first);
                    }
                }
            }
            c.resend = Some((begin, end));
        }
    }

    /// Serves a piece of each ResendRequest in progress whose connection has taken what it
    /// was sent: at most `budget` sequence numbers in all this iteration, shared; a resend
    /// done releases the output that waited behind it.
    pub(super) fn serve_resends(&mut self) {
        if self.resending.is_empty() {
            return;
        }
        let span = (self.budget / self.resending.len()).clamp(16, RESEND_PIECE) as u64;
        let mut i = 0;
        while i < self.resending.len() {
            let id = self.resending[i];
            let Some(c) = self.conns.get_mut(&id) else {
                self.resending.swap_remove(i);
                continue;
            };
            let Some((from, end)) = c.resend else {
                self.resending.swap_remove(i);
                continue;
            };
            if c.wbuf.len() >= RESEND_LOW {
                // It has not read the last piece yet.
                i += 1;
                continue;
            }
            self.piece.clear();
            let next =
                self.node
                    .fix
                    .resend_piece(id, from, end, span, self.last_ts, &mut self.piece);
            for item in &self.piece.items {
                c.wbuf
                    .extend_from_slice(&self.piece.buf[item.start..item.end]);
            }
            match next {
                Some(n) if n <= end => {
                    c.resend = Some((n, end));
                    i += 1;
                }
                _ => {
                    c.resend = None;
                    c.wbuf.extend_from_slice(&c.held);
                    c.held.clear();
                    if c.held.capacity() > KEEP_BUF {
                        c.held = Vec::new();
                    }
                    self.resending.swap_remove(i);
                }
            }
            self.flush(id);
        }
        if self.piece.buf.capacity() > KEEP_BUF {
            self.piece = Outbox::default();
        }
    }

    /// A mass cancel has chunks left and its requester has taken its last reports (or is
    /// gone).
    pub(super) fn continue_ready(&self) -> bool {
        self.node.has_pending_work()
            && self
                .node
                .pending_work_conn()
                .and_then(|id| self.conns.get(&id))
                .is_none_or(|c| c.wbuf.len() < CONTINUE_LOW)
    }

    /// A resend waits for the connection to take its next piece.
    pub(super) fn resend_ready(&self) -> bool {
        self.resending.iter().any(|id| {
            self.conns
                .get(id)
                .is_some_and(|c| c.wbuf.len() < RESEND_LOW)
        })
    }
}

/// Takes the messages numbered up to `end` off the front of `held` (whole FIX messages in
/// sequence order); returns the MsgSeqNum of the first one taken, if any. Stops at anything
/// it cannot read, keeping it.
fn drop_held_through(held: &mut Vec<u8>, end: u64) -> Option<u64> {
    let mut at = 0;
    let mut first = None;
    while let Ok(Some(len)) = frame(&held[at..], usize::MAX) {
        match fix::scan_msg_seq_num(&held[at..at + len]) {
            Some(seq) if seq <= end => {
                first.get_or_insert(seq);
                at += len;
            }
            _ => break,
        }
    }
    held.drain(..at);
    first
}

#[cfg(test)]
mod tests;
