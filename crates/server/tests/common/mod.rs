//! Helpers shared by the gateway's integration tests.

use server::wire::MsgWriter;

/// A complete FIX 4.4 message from `sender` to `RIALTO` with MsgSeqNum `seq`: `body[0]` is
/// the MsgType (tag 35), the rest are body fields in order.
pub fn message(sender: &str, seq: u64, body: &[(u32, &str)]) -> Vec<u8> {
    let mut w = MsgWriter::new();
    w.str(35, body[0].1)
        .str(49, sender)
        .str(56, "RIALTO")
        .u64(34, seq)
        .str(52, "20260101-00:00:00.000");
    for (t, v) in &body[1..] {
        w.str(*t, v);
    }
    let mut out = Vec::new();
    w.finish("FIX.4.4", &mut out);
    out
}
