//! Malformed input never panics the parsing path (framing, fields, FixAdapter) nor the
//! server's state machine (`Node`): seeded random mutations of valid order-entry messages (bit
//! flips, truncations, duplicated and deleted bytes, random tags) are framed, read, journaled
//! (encoded and decoded) and applied, and everything sent back is well framed. A few damaged
//! messages are also checked for the exact answer they deserve.

use exchange::Backing;
use fix::{frame, resync, Decoder, Limits};
use fix_gateway::{ConnIds, FixAdapter, Outbox};
use server::{Config, Node, Record};

use crate::common;
use common::message;
use std::sync::Arc;

/// The workspace's xorshift, with the two calls these tests make.
struct Rng(types::XorShift64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0.next_u64()
    }
    fn below(&mut self, n: u64) -> u64 {
        self.0.below(n)
    }
}

/// One connection's parsing path and the node behind it, as the event loop drives them.
struct Conn {
    adapter: FixAdapter,
    x: Node,
    out: Outbox,
    decoder: Decoder,
    ids: Option<ConnIds>,
    conn: u64,
    /// Journal records applied.
    seq: u64,
    /// MsgSeqNum of the next message sent.
    next_msg_seq: u64,
    /// Connections replaced after the server closed one.
    reconnects: u64,
}

impl Conn {
    fn new() -> Conn {
        let cfg = Config::defaults().lenient();
        Conn {
            adapter: FixAdapter::new(Arc::new(cfg.fix_config())),
            x: Node::new(&cfg, Backing::Lazy),
            out: Outbox::default(),
            decoder: Decoder::default(),
            ids: None,
            conn: 1,
            seq: 0,
            next_msg_seq: 1,
            reconnects: 0,
        }
    }

    /// Applies `r` as the next journal record, after a round trip through its encoding.
    fn apply(&mut self, r: &Record) {
        self.out.clear();
        let mut enc = Vec::new();
        r.encode(&mut enc);
        let back = Record::decode(&enc).expect("a journal record decodes");
        assert_eq!(&back, r, "journal encoding round-trips");
        self.seq += 1;
        self.x.apply(self.seq, 1 + self.seq, &back, &mut self.out);
        for item in &self.out.items {
            let sent = &self.out.buf[item.start..item.end];
            match frame(sent, Limits::default().msg_len_max) {
                _ if sent.is_empty() && item.close => {}
                Ok(Some(len)) if len == sent.len() => {}
                other => panic!("a bad frame was sent ({other:?}): {sent:?}"),
            }
        }
    }

    /// Frames `buf` (resyncing after garbage) and applies what the adapter reads of each
    /// message; returns how many messages it read.
    fn feed(&mut self, buf: &[u8]) -> usize {
        let mut read = 0;
        let mut pos = 0;
        while pos < buf.len() {
            let rest = &buf[pos..];
            match frame(rest, Limits::default().msg_len_max) {
                Ok(None) => break,
                Err(_) => pos += resync(rest).max(1),
                Ok(Some(len)) => {
                    let msg = &rest[..len];
                    pos += len;
                    let conn = self.conn;
                    let Some(input) =
                        self.adapter
                            .to_input(conn, &mut self.ids, &mut self.decoder, msg)
                    else {
                        continue;
                    };
                    read += 1;
                    self.apply(&Record::Fix(input));
                }
            }
        }
        read
    }

    /// Logs on as CLIENT1 on the current connection, numbers reset.
    fn log_on(&mut self) {
        let logon = message(
            "CLIENT1",
            1,
            &[(35, "A"), (98, "0"), (108, "30"), (141, "Y")],
        );
        assert_eq!(self.feed(&logon), 1);
        assert!(self.sent().contains("|35=A|"), "logged on: {}", self.sent());
        self.next_msg_seq = 2;
    }

    /// As a client would after damage the session did not take: a connection that was closed
    /// is replaced by a new one that logs on again; a session that waits for a gap to be
    /// filled is moved on (SequenceReset-Reset); one that expects a higher MsgSeqNum (damage
    /// made a gap fill jump) gets it next.
    fn resync(&mut self) {
        if self.closed() {
            self.reconnects += 1;
            self.apply(&Record::Disconnected { conn: self.conn });
            self.conn += 1;
            self.ids = None;
            self.log_on();
            return;
        }
        let (next_in, _) = self.x.session_seqs("CLIENT1").expect("configured");
        if next_in > self.next_msg_seq {
            self.next_msg_seq = next_in;
        } else if next_in < self.next_msg_seq {
            // Its own MsgSeqNum is not checked; NewSeqNo is the number after it.
            let own = self.next_msg_seq;
            self.next_msg_seq += 1;
            let new_seq = self.next_msg_seq.to_string();
            let reset = message("CLIENT1", own, &[(35, "4"), (36, &new_seq)]);
            self.feed(&reset);
        }
    }

    /// True if the last record closed the connection.
    fn closed(&self) -> bool {
        self.out
            .items
            .iter()
            .any(|i| i.close && i.conn == self.conn)
    }

    /// The FIX text of what the last record sent, `|` for SOH.
    fn sent(&self) -> String {
        String::from_utf8_lossy(&self.out.buf).replace('\x01', "|")
    }
}

#[test]
fn random_damage_is_rejected_or_ignored_never_a_panic() {
    let mut c = Conn::new();
    let templates: Vec<Vec<(u32, &str)>> = vec![
        vec![
            (35, "D"),
            (11, "a"),
            (55, "ACME"),
            (54, "1"),
            (38, "10"),
            (40, "2"),
            (44, "10.01"),
        ],
        vec![(35, "F"), (11, "b"), (41, "a"), (55, "ACME"), (54, "1")],
        vec![
            (35, "G"),
            (11, "c"),
            (41, "a"),
            (55, "ACME"),
            (54, "1"),
            (38, "5"),
            (40, "2"),
            (44, "10.02"),
        ],
        vec![(35, "q"), (11, "m"), (530, "7")],
        vec![(35, "H"), (11, "a"), (55, "ACME"), (54, "1")],
        vec![(35, "2"), (7, "1"), (16, "0")],
        vec![(35, "4"), (36, "5"), (123, "Y")],
        vec![(35, "1"), (112, "x")],
    ];
    // Log on first, so application messages reach the exchange.
    c.log_on();
    let mut r = Rng(types::XorShift64::new(0x1234_5678_9abc_def1));
    let mut converted = 0;
    for _ in 0..20_000u64 {
        let t = &templates[r.below(templates.len() as u64) as usize];
        let mut m = message("CLIENT1", c.next_msg_seq, t);
        c.next_msg_seq += 1;
        for _ in 0..1 + r.below(4) {
            if m.is_empty() {
                break;
            }
            let n = m.len() as u64;
            match r.below(5) {
                0 => {
                    let p = r.below(n) as usize;
                    m[p] ^= 1 << r.below(8);
                }
                1 => m.truncate(r.below(n) as usize),
                2 => {
                    let p = r.below(n) as usize;
                    let b = m[p];
                    m.insert(p, b);
                }
                3 if n > 0 => {
                    m.remove(r.below(n) as usize);
                }
                _ => {
                    let p = r.below(n + 1) as usize;
                    let junk = format!("{}={}\x01", r.below(100_000), r.next() % 1000);
                    m.splice(p..p, junk.bytes());
                }
            }
        }
        // Also feed the message with its checksum repaired, so damage gets past framing.
        // Rebuild BeginString, BodyLength and CheckSum around the damaged body, so the damage
        // reaches the field parser and the adapter.
        let mut repaired = Vec::new();
        let start = m.windows(4).position(|w| w == b"\x0135=");
        let end = m.windows(4).rposition(|w| w == b"\x0110=");
        if let (Some(a), Some(b)) = (start, end) {
            if a < b {
                let body = &m[a + 1..b + 1];
                repaired.extend_from_slice(format!("8=FIX.4.4\x019={}\x01", body.len()).as_bytes());
                repaired.extend_from_slice(body);
                let sum = repaired.iter().fold(0u8, |a, &b| a.wrapping_add(b));
                repaired.extend_from_slice(format!("10={sum:03}\x01").as_bytes());
            }
        }
        for buf in [m, repaired] {
            converted += c.feed(&buf);
        }
        c.resync();
    }
    assert!(
        converted > 5_000,
        "enough damaged messages got through framing: {converted}"
    );
    // Damage that leaves an order valid reaches the engine: the client kept the session going
    // (a CompID damaged closes the connection; a MsgSeqNum damaged leaves a gap).
    let stats = c.x.exchange.stats;
    assert!(
        stats.orders > 50,
        "orders reached the exchange: {stats:?} ({} reconnects)",
        c.reconnects
    );
}

/// Asserts that `text` (as `Conn::sent` shows it) holds every field of `want`.
fn assert_fields(text: &str, want: &[&str], what: &str) {
    for f in want {
        assert!(text.contains(&format!("|{f}|")), "{what}: no {f} in {text}");
    }
}

/// Damaged messages on a logged-on session, each with the answer it deserves: a session
/// Reject with the right SessionRejectReason (373) and RefTagID (371) when the message cannot
/// be taken per order (no ClOrdID, a field without a value), the order-level reject when it
/// can, nothing at all for a garbled frame (its number is not used up), and a Reject 373=9,
/// Logout and close for another CompID.
#[test]
fn damaged_messages_get_the_answer_they_deserve() {
    let mut c = Conn::new();
    c.log_on();
    let order = |seq: u64, fields: &[(u32, &str)]| {
        let mut body = vec![(35, "D")];
        body.extend_from_slice(fields);
        message("CLIENT1", seq, &body)
    };

    // No ClOrdID: nothing to answer per order.
    let m = order(
        2,
        &[
            (55, "ACME"),
            (54, "1"),
            (38, "10"),
            (40, "2"),
            (44, "10.01"),
        ],
    );
    assert_eq!(c.feed(&m), 1);
    assert_fields(
        &c.sent(),
        &[
            "35=3",
            "45=2",
            "371=11",
            "372=D",
            "373=1",
            "58=missing tag 11",
        ],
        "missing ClOrdID",
    );

    // A tag without a value: the message does not decode.
    let m = order(
        3,
        &[
            (11, "a"),
            (55, "ACME"),
            (54, "1"),
            (38, "10"),
            (40, "2"),
            (44, ""),
        ],
    );
    assert_eq!(c.feed(&m), 1);
    assert_fields(
        &c.sent(),
        &["35=3", "45=3", "371=44", "373=4"],
        "44= without a value",
    );

    // An unknown symbol is the order's problem: an ExecutionReport rejects it.
    let m = order(
        4,
        &[
            (11, "b"),
            (55, "NOPE"),
            (54, "1"),
            (38, "10"),
            (40, "2"),
            (44, "10.01"),
        ],
    );
    assert_eq!(c.feed(&m), 1);
    assert_fields(
        &c.sent(),
        &["35=8", "11=b", "150=8", "39=8", "103=1"],
        "unknown symbol",
    );

    // A MsgType the exchange does not take: BusinessMessageReject, unsupported.
    let m = message("CLIENT1", 5, &[(35, "AE"), (11, "c")]);
    assert_eq!(c.feed(&m), 1);
    assert_fields(
        &c.sent(),
        &["35=j", "45=5", "372=AE", "380=3"],
        "unsupported type",
    );

    // A wrong CheckSum: garbled, ignored, and its number is still expected.
    let mut m = order(
        6,
        &[
            (11, "d"),
            (55, "ACME"),
            (54, "1"),
            (38, "10"),
            (40, "2"),
            (44, "10.01"),
        ],
    );
    let at = m.len() - 2;
    m[at] = if m[at] == b'0' { b'1' } else { b'0' };
    assert_eq!(c.feed(&m), 0);
    assert_eq!(c.x.session_seqs("CLIENT1").map(|s| s.0), Some(6));
    let m = order(
        6,
        &[
            (11, "d"),
            (55, "ACME"),
            (54, "1"),
            (38, "10"),
            (40, "2"),
            (44, "10.01"),
        ],
    );
    assert_eq!(c.feed(&m), 1);
    assert_fields(
        &c.sent(),
        &["35=8", "11=d", "150=0"],
        "the order sent again",
    );

    // Another SenderCompID on this connection: Reject 373=9, Logout, close.
    let m = message(
        "CLIENT2",
        7,
        &[
            (35, "D"),
            (11, "e"),
            (55, "ACME"),
            (54, "1"),
            (38, "10"),
            (40, "2"),
            (44, "10.01"),
        ],
    );
    assert_eq!(c.feed(&m), 1);
    let sent = c.sent();
    assert_fields(&sent, &["35=3", "45=7", "372=D", "373=9"], "CompID");
    assert!(!sent.contains("|371="), "CompID: no RefTagID in {sent}");
    let (reject, logout) = (sent.find("|35=3|"), sent.find("|35=5|"));
    assert!(
        reject.is_some() && logout.is_some() && reject < logout,
        "Reject, then Logout: {sent}"
    );
    assert!(c.closed(), "and the connection closed");
}
