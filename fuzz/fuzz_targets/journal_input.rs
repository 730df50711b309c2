//! Arbitrary bytes as the payload of a journal record (`gateway::record::Input`): decoding
//! never panics, round-trips, decodes in place like a fresh decode, and what decodes applies
//! to an exchange without a panic. The body is `gateway::fuzz_input`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    gateway::fuzz_input(data);
});
