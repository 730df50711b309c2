//! Malformed input never panics the parsing path (framing, fields, FixAdapter) nor the
//! exchange: seeded random mutations of valid order-entry messages (bit flips, truncations,
//! duplicated and deleted bytes, random tags) are framed, parsed, converted and applied.

use server::adapter::FixAdapter;
use server::exchange::{Exchange, Outbox};
use server::record::Input;
use server::wire::{next_frame, Fields, Frame};
use server::Config;

mod common;
use common::message;
use std::sync::Arc;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

#[test]
fn random_damage_is_rejected_or_ignored_never_a_panic() {
    let cfg = Arc::new(Config::defaults());
    let adapter = FixAdapter::new(cfg.clone());
    let mut x = Exchange::new(cfg);
    let mut out = Outbox::default();
    let mut seq = 0u64;
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
    // Log on first, so application messages reach the engine.
    let logon = message(
        "CLIENT1",
        1,
        &[(35, "A"), (98, "0"), (108, "30"), (141, "Y")],
    );
    let mut fields = Fields::new();
    let mut ids = None;
    fields.parse(&logon).unwrap();
    let input = adapter.to_input(1, &mut ids, &logon, &fields);
    seq += 1;
    x.apply(seq, 1, &input, &mut out);
    let mut r = Rng(0x1234_5678_9abc_def1);
    let mut converted = 0;
    for i in 0..20_000u64 {
        let t = &templates[r.below(templates.len() as u64) as usize];
        let mut m = message("CLIENT1", 2 + i, t);
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
            let mut pos = 0;
            while let Some(frame) = next_frame(&buf[pos..]) {
                match frame {
                    Frame::Garbled { len, .. } => pos += len.max(1),
                    Frame::Message { len } => {
                        let msg = &buf[pos..pos + len];
                        pos += len;
                        if fields.parse(msg).is_err() {
                            continue;
                        }
                        let input = adapter.to_input(1, &mut ids, msg, &fields);
                        let mut enc = Vec::new();
                        input.encode(&mut enc);
                        let input = Input::decode(&enc).unwrap();
                        seq += 1;
                        out.clear();
                        x.apply(seq, 1 + seq, &input, &mut out);
                        converted += 1;
                    }
                }
                if pos >= buf.len() {
                    break;
                }
            }
        }
    }
    assert!(
        converted > 5_000,
        "enough damaged messages got through framing: {converted}"
    );
}
