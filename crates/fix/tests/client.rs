//! `fix::client::FixClient` against a scripted peer on 127.0.0.1: what it cannot read is
//! counted, never skipped silently, and a client dropped after skipping any panics.

use fix::client::FixClient;
use fix::FixVersion;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

const T: Duration = Duration::from_secs(10);

/// A Heartbeat from RIALTO to CLIENT1 with MsgSeqNum `seq`.
fn heartbeat(seq: u64) -> Vec<u8> {
    let body =
        format!("35=0\x0149=RIALTO\x0156=CLIENT1\x0134={seq}\x0152=20260101-00:00:00.000\x01");
    let mut out = Vec::new();
    fix::wrap_body(FixVersion::Fix44, body.as_bytes(), &mut out);
    out
}

/// A client connected to a peer that has already written `bytes` (and keeps the connection
/// open as long as the returned stream lives).
fn client_reading(bytes: &[u8]) -> (FixClient, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let c = FixClient::connect(listener.local_addr().unwrap(), "CLIENT1", "RIALTO", 1).unwrap();
    let (mut peer, _) = listener.accept().unwrap();
    peer.write_all(bytes).unwrap();
    (c, peer)
}

#[test]
fn well_formed_messages_count_nothing() {
    let mut bytes = heartbeat(1);
    bytes.extend(heartbeat(2));
    let (mut c, _peer) = client_reading(&bytes);
    for seq in [1, 2] {
        let m = c.recv(T).unwrap().expect("a Heartbeat");
        assert_eq!(m.seq(), seq);
    }
    assert_eq!(c.garbled(), 0);
}

#[test]
fn a_garbled_frame_and_an_undecodable_message_are_counted() {
    // A wrong CheckSum, then a framed message with a field that has no '=', between good ones.
    let mut bad_sum = heartbeat(2);
    let n = bad_sum.len();
    bad_sum[n - 4..n - 1].copy_from_slice(b"000");
    let mut no_equals = Vec::new();
    fix::wrap_body(
        FixVersion::Fix44,
        b"35=0\x0149=RIALTO\x0156=CLIENT1\x0134=3\x01garbage\x01",
        &mut no_equals,
    );
    let mut bytes = heartbeat(1);
    bytes.extend(bad_sum);
    bytes.extend(no_equals);
    bytes.extend(heartbeat(4));
    let (mut c, _peer) = client_reading(&bytes);
    assert_eq!(c.recv(T).unwrap().expect("the first").seq(), 1);
    assert_eq!(c.recv(T).unwrap().expect("the last").seq(), 4);
    assert_eq!(c.garbled(), 2);
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(c)));
    let why = dropped.expect_err("dropping a client that skipped input panics");
    let text = why.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(text.contains("2 garbled"), "{text}");
    assert!(text.contains("10=000"), "the first one is shown: {text}");
}
