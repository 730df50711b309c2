//! Arbitrary bytes into the event loop's parsing path (`fix::frame`, then
//! `fix_gateway::FixAdapter`) on a connection logged on as CLIENT1, raw and as the body of one
//! framed message, then into the server's state machine (`Node`: FIX sessions and exchange):
//! never panics, every record round-trips through its journal encoding, every message sent is
//! well framed. The body is `server::fuzz_adapt`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    server::fuzz_adapt(data);
});
