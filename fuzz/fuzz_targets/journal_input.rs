//! Arbitrary bytes as the payload of a journal record (`server::Record`): decoding never
//! panics, round-trips, decodes in place like a fresh decode, and what decodes applies to a
//! node with a logged-on session without a panic. The body is `server::fuzz_input`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    server::fuzz_input(data);
});
