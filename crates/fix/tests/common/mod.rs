//! Helpers the FIX crate's test binaries share: the test clock, readable bytes, an inbound
//! CLIENT1 -> RIALTO message and Rialto's encoding of an answer. Each binary uses a part.
#![allow(dead_code)]

use fix::app::AppMessage;
use fix::{Decoder, Encoder, FixVersion, Header, Limits, Message, TimePrecision};

/// The tests' clock at start: 2023-11-14 22:13:20 UTC, in nanoseconds.
pub const T0: u64 = 1_700_000_000_000_000_000;
pub const SEC: u64 = 1_000_000_000;

/// `b` with SOH shown as `|`.
pub fn pipes(b: &[u8]) -> String {
    String::from_utf8_lossy(b).replace('\x01', "|")
}

/// A framed FIX 4.4 CLIENT1 -> RIALTO message of `msg_type` with `body` (`|` for SOH; any
/// other bytes as they are).
pub fn framed(msg_type: &str, body: &[u8]) -> Vec<u8> {
    let mut text =
        format!("35={msg_type}|34=2|49=CLIENT1|56=RIALTO|52=20231114-22:13:20.000|").into_bytes();
    text.extend_from_slice(body);
    let text: Vec<u8> = text
        .into_iter()
        .map(|b| if b == b'|' { 1 } else { b })
        .collect();
    let mut out = Vec::new();
    fix::wrap_body(FixVersion::Fix44, &text, &mut out);
    out
}

/// Runs `f` on the decoded `framed(msg_type, body)`.
pub fn with_bytes<R>(msg_type: &str, body: &[u8], f: impl FnOnce(&Message<'_>) -> R) -> R {
    let bytes = framed(msg_type, body);
    let mut d = Decoder::new(Limits::default());
    let m = d.decode(&bytes).unwrap();
    f(&m)
}

/// `with_bytes` of a text body.
pub fn with<R>(msg_type: &str, body: &str, f: impl FnOnce(&Message<'_>) -> R) -> R {
    with_bytes(msg_type, body.as_bytes(), f)
}

/// `msg` as Rialto sends it in `version`: RIALTO -> CLIENT1, MsgSeqNum 9 at `T0`, shown with
/// `pipes`. Everything it writes must decode.
pub fn encode(msg: &dyn AppMessage, version: FixVersion) -> String {
    let mut e = Encoder::default();
    e.begin(msg.msg_type());
    e.header(&Header {
        sender_comp_id: b"RIALTO",
        target_comp_id: b"CLIENT1",
        msg_seq_num: 9,
        sending_time_ns: T0,
        poss_dup: false,
        orig_sending_time: None,
        time_precision: TimePrecision::Millis,
    });
    msg.encode_body(version, &mut e);
    let bytes = e.finish(version).to_vec();
    Decoder::new(Limits::default()).decode(&bytes).unwrap();
    pipes(&bytes)
}
