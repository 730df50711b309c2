//! Helpers shared by the server's integration tests.

use fix::client::FixClient;
use fix::{Encoder, FixVersion};

/// A complete FIX 4.4 message from `sender` to `RIALTO` with MsgSeqNum `seq`: `body[0]` is
/// the MsgType (tag 35), the rest are body fields in order.
pub fn message(sender: &str, seq: u64, body: &[(u32, &str)]) -> Vec<u8> {
    let mut enc = Encoder::default();
    enc.begin(body[0].1.as_bytes());
    enc.field(49, sender.as_bytes());
    enc.field(56, b"RIALTO");
    enc.field_u64(34, seq);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    enc.field_timestamp(52, now, fix::TimePrecision::Millis);
    for (t, v) in &body[1..] {
        enc.field(*t, v.as_bytes());
    }
    enc.finish(FixVersion::Fix44).to_vec()
}

/// Sends a GTC limit NewOrderSingle (54 `side`: 1 buy, 2 sell) on `c`.
pub fn new_order(c: &mut FixClient, cl: &str, sym: &str, side: &str, px: &str, qty: &str) {
    c.send(
        "D",
        &[
            (11, cl),
            (55, sym),
            (54, side),
            (38, qty),
            (40, "2"),
            (44, px),
            (59, "1"),
            (60, "20260101-00:00:00.000"),
        ],
    )
    .unwrap();
}
