//! Where sent application messages are kept for resend: the [`MessageStore`] a session owner
//! provides, and [`MemoryStore`], a bounded in-memory one.

use super::{Session, SessionHandler};
use crate::encode::Header;
use crate::FixVersion;
use std::collections::VecDeque;

/// One stored application message, as a resend writes it again.
#[derive(Clone, Copy, Debug)]
pub struct Stored<'a> {
    pub seq: u64,
    pub msg_type: &'a [u8],
    /// Its original SendingTime (the resend's OrigSendingTime).
    pub sending_time_ns: u64,
    /// The fields after the standard header, as sent.
    pub body: &'a [u8],
}

/// Outbound application messages kept for resends. `MemoryStore` keeps bytes; the exchange
/// server keeps what its reports were made of and formats them again on demand.
pub trait MessageStore {
    /// Calls `each` for every stored message with `begin <= seq <= end`, oldest first.
    fn resend(
        &mut self,
        begin: u64,
        end: u64,
        version: FixVersion,
        each: &mut dyn FnMut(Stored<'_>),
    );
    /// Forgets every message (sequence numbers reset to 1).
    fn reset(&mut self);
}

/// In-memory `MessageStore` keeping the last `capacity` messages' bodies.
#[derive(Debug, Default)]
pub struct MemoryStore {
    messages: VecDeque<(u64, Vec<u8>, u64, Vec<u8>)>,
    capacity: usize,
}

impl MemoryStore {
    pub fn new(capacity: usize) -> MemoryStore {
        MemoryStore {
            messages: VecDeque::new(),
            capacity,
        }
    }
    pub fn len(&self) -> usize {
        self.messages.len()
    }
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }
    /// Keeps application message `seq` (its type, SendingTime and body).
    pub fn put(&mut self, seq: u64, msg_type: &[u8], sending_time_ns: u64, body: &[u8]) {
        if self.capacity == 0 {
            return;
        }
        let (mut t, mut b) = if self.messages.len() == self.capacity {
            self.messages
                .pop_front()
                .map(|(_, t, _, b)| (t, b))
                .unwrap_or_default()
        } else {
            Default::default()
        };
        t.clear();
        t.extend_from_slice(msg_type);
        b.clear();
        b.extend_from_slice(body);
        while self.messages.back().is_some_and(|(s, ..)| *s >= seq) {
            self.messages.pop_back();
        }
        self.messages.push_back((seq, t, sending_time_ns, b));
    }
}

impl MessageStore for MemoryStore {
    fn resend(
        &mut self,
        begin: u64,
        end: u64,
        _version: FixVersion,
        each: &mut dyn FnMut(Stored<'_>),
    ) {
        for (seq, t, ts, body) in &self.messages {
            if (begin..=end).contains(seq) {
                each(Stored {
                    seq: *seq,
                    msg_type: t,
                    sending_time_ns: *ts,
                    body,
                });
            }
        }
    }
    fn reset(&mut self) {
        self.messages.clear();
    }
}

impl<A: super::InboundApp> Session<MemoryStore, A> {
    /// Numbers, stores and (when logged on) sends an application message: `next_app`,
    /// `MemoryStore::put` and `write_app` in one. Returns its MsgSeqNum.
    pub fn send_app<M: crate::app::AppMessage, H: SessionHandler>(
        &mut self,
        msg: &M,
        now_ns: u64,
        h: &mut H,
    ) -> u64 {
        let seq = self.next_app(now_ns);
        let active = self.is_active();
        // Fields borrowed apart: taking `body_enc` out would allocate a new encoder.
        let Session {
            cfg,
            store,
            enc,
            body_enc: body,
            ..
        } = self;
        body.begin_body();
        msg.encode_body(cfg.version, body);
        store.put(seq, msg.msg_type(), now_ns, body.body());
        if active && !h.muted() {
            enc.begin(msg.msg_type());
            enc.header(&Header {
                sender_comp_id: cfg.sender_comp_id.as_bytes(),
                target_comp_id: cfg.target_comp_id.as_bytes(),
                msg_seq_num: seq,
                sending_time_ns: now_ns,
                poss_dup: false,
                orig_sending_time: None,
                time_precision: cfg.time_precision,
            });
            enc.raw(body.body());
            h.send(enc.finish(cfg.version));
        }
        seq
    }
}
