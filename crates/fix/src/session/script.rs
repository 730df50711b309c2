//! A fuzz entry for the session state machine: the input is read as a script of inbound
//! messages (every admin type and an application message, with MsgSeqNum, PossDupFlag,
//! OrigSendingTime and SendingTime chosen around what the session expects), timer ticks,
//! reconnects and our own application messages. After every step the session's invariants
//! are checked; any violation panics (a fuzz crash).
//!
//! Invariants: every message the session sends decodes; the MsgSeqNums of messages it sends
//! for the first time (no PossDupFlag) only go up, from 1 after a reset; application
//! messages are delivered in strictly increasing MsgSeqNum order, never twice, between
//! resets; `next_in` never goes down except on a reset.

use super::{MemoryStore, Session, SessionConfig, SessionEvent, SessionHandler};
use crate::decode::{Decoder, Limits};
use crate::encode::write_u64;
use crate::time::{write_utc_timestamp, TimePrecision};
use crate::FixVersion;

const T0: u64 = 1_700_000_000_000_000_000;
const SEC: u64 = 1_000_000_000;

/// What the session sent, checked as it goes.
struct Checker {
    /// The lowest MsgSeqNum the next new (not PossDup) message may carry (2 after a reset
    /// Logon).
    next_out: u64,
    reset_seen: bool,
}

impl SessionHandler for Checker {
    fn send(&mut self, bytes: &[u8]) {
        let mut d = Decoder::new(Limits::default());
        let m = d
            .decode(bytes)
            .expect("the session sent an undecodable message");
        let seq = m
            .get_u64(34)
            .ok()
            .flatten()
            .expect("a sent message has MsgSeqNum");
        let poss_dup = m.get(43) == Some(b"Y");
        if m.msg_type() == b"A" && m.get(141) == Some(b"Y") {
            assert_eq!(seq, 1, "a reset Logon is numbered 1");
            self.next_out = 2;
            return;
        }
        // Resent messages, and the unnumbered Logout that refuses a Logon.
        if poss_dup || (m.msg_type() == b"5" && seq == 1) {
            return;
        }
        // Strictly increasing: numbers taken while disconnected (stored for resend) leave
        // holes on the wire.
        assert!(
            seq >= self.next_out,
            "new outbound message {seq} after {}",
            self.next_out
        );
        self.next_out = seq + 1;
    }
    fn on_event(&mut self, e: SessionEvent) {
        if let SessionEvent::LoggedOn { reset: true } = e {
            self.reset_seen = true;
        }
    }
}

/// Runs the script in `data` against a FIX 4.4 acceptor session. Never panics unless an
/// invariant is broken.
pub fn fuzz_session_script(data: &[u8]) {
    let mut cfg = SessionConfig::new(FixVersion::Fix44, "RIALTO", "CLIENT1");
    cfg.queue_max = 16;
    let mut s: Session<MemoryStore, Vec<u8>> = Session::new(cfg, MemoryStore::new(32));
    let mut h = Checker {
        next_out: 0,
        reset_seen: false,
    };
    let mut now = T0;
    let mut peer_seq = 1u64;
    let mut last_delivered = 0u64;
    let mut body = Vec::with_capacity(256);
    let mut msg = Vec::with_capacity(512);
    s.on_connected(now);
    let mut bytes = data.iter().copied();
    let mut next = || bytes.next();
    while let Some(op) = next() {
        let arg = next().unwrap_or(0);
        let flags = next().unwrap_or(0);
        // MsgSeqNum around the expected one: -2..=+5, or what the peer counts.
        let seq = match flags & 7 {
            0 | 1 => s.next_in(),
            2 => s.next_in().saturating_sub(1).max(1),
            3 => s.next_in() + 1 + (arg as u64 % 5),
            4 => peer_seq,
            _ => s.next_in().saturating_sub(2).max(1),
        };
        let poss_dup = flags & 8 != 0;
        let orig_later = flags & 16 != 0;
        let skew = flags & 32 != 0;
        let mut fields = |msg_type: &str, extra: &[(u32, Vec<u8>)]| {
            body.clear();
            push(&mut body, 35, msg_type.as_bytes());
            push(&mut body, 49, b"CLIENT1");
            push(&mut body, 56, b"RIALTO");
            let mut n = Vec::new();
            write_u64(&mut n, seq);
            push(&mut body, 34, &n);
            let sending = if skew { now + 300 * SEC } else { now };
            let mut t = Vec::new();
            write_utc_timestamp(&mut t, sending, TimePrecision::Millis);
            push(&mut body, 52, &t);
            if poss_dup {
                push(&mut body, 43, b"Y");
                let mut o = Vec::new();
                let orig = if orig_later {
                    sending + SEC
                } else {
                    sending - SEC
                };
                write_utc_timestamp(&mut o, orig, TimePrecision::Millis);
                push(&mut body, 122, &o);
            }
            for (tag, v) in extra {
                push(&mut body, *tag, v);
            }
            crate::wrap_body(FixVersion::Fix44, &body, &mut msg);
        };
        let num = |v: u64| {
            let mut b = Vec::new();
            write_u64(&mut b, v);
            b
        };
        let in_before = s.next_in();
        let resets_before = h.reset_seen;
        match op % 13 {
            0 => {
                now += arg as u64 * SEC / 8;
                s.on_tick(now, &mut h);
                continue;
            }
            1 => fields("0", &[]),
            2 => fields("1", &[(112, b"t".to_vec())]),
            3 => fields(
                "2",
                &[
                    (7, num(arg as u64 % 8)),
                    (16, num((flags >> 4) as u64 % 12)),
                ],
            ),
            4 => fields(
                "4",
                &[
                    (123, b"Y".to_vec()),
                    (36, num(s.next_in() + arg as u64 % 6)),
                ],
            ),
            5 => fields(
                "4",
                &[(
                    36,
                    num((s.next_in() + arg as u64 % 6).saturating_sub(2).max(1)),
                )],
            ),
            6 | 7 => fields("D", &[(11, b"o".to_vec()), (55, b"ACME".to_vec())]),
            8 => fields("5", &[]),
            9 => fields("A", &[(98, b"0".to_vec()), (108, num(1 + arg as u64 % 40))]),
            10 => fields("3", &[(45, num(arg as u64))]),
            11 => {
                // Reconnect and log on, with or without a reset.
                s.on_disconnected();
                now += SEC;
                s.on_connected(now);
                let reset = flags & 64 != 0;
                let logon_seq = if reset { 1 } else { seq };
                body.clear();
                push(&mut body, 35, b"A");
                push(&mut body, 49, b"CLIENT1");
                push(&mut body, 56, b"RIALTO");
                push(&mut body, 34, &num(logon_seq));
                let mut t = Vec::new();
                write_utc_timestamp(&mut t, now, TimePrecision::Millis);
                push(&mut body, 52, &t);
                push(&mut body, 98, b"0");
                push(&mut body, 108, b"30");
                if reset {
                    push(&mut body, 141, b"Y");
                }
                crate::wrap_body(FixVersion::Fix44, &body, &mut msg);
                if reset {
                    last_delivered = 0;
                    peer_seq = 1;
                }
            }
            _ => {
                let er = crate::app::NewOrder {
                    cl_ord_id: b"C1",
                    symbol: b"ACME",
                    side: types::Side::Buy,
                    order_qty: 1,
                    ord_type: types::OrdType::Limit,
                    price: Some(crate::Decimal::new(100, 2)),
                    time_in_force: types::TimeInForce::Day,
                    post_only: false,
                    transact_time_ns: now,
                };
                s.send_app(&er, now, &mut h);
                continue;
            }
        }
        peer_seq = peer_seq.max(seq + 1);
        let mut got: Vec<u64> = Vec::new();
        let mut app = |m: &[u8]| {
            let mut d = Decoder::new(Limits::default());
            let m = d.decode(m).expect("a delivered message decodes");
            got.push(m.get_u64(34).ok().flatten().unwrap_or(0));
        };
        s.on_bytes(&msg, now, &mut h, &mut app);
        if h.reset_seen && !resets_before {
            last_delivered = 0;
        } else if s.next_in() < in_before && s.is_active() {
            panic!(
                "next_in went down from {in_before} to {} without a reset",
                s.next_in()
            );
        }
        h.reset_seen = false;
        for g in got {
            assert!(g > last_delivered, "delivered {g} after {last_delivered}");
            last_delivered = g;
        }
    }
}

fn push(body: &mut Vec<u8>, tag: u32, v: &[u8]) {
    write_u64(body, tag as u64);
    body.push(b'=');
    body.extend_from_slice(v);
    body.push(crate::SOH);
}

#[cfg(test)]
mod tests;
