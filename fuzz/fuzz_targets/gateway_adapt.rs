//! Arbitrary bytes into the gateway's network-thread parsing path (framing, fields,
//! FixAdapter) on a logged-on connection, then into the exchange: never panics, inputs
//! round-trip through their journal encoding, every message sent is well framed. The body is
//! `gateway::fuzz_adapt`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    gateway::fuzz_adapt(data);
});
