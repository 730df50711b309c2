//! Arbitrary bytes as a cluster engine's outcome, as a gateway's command and as one output
//! (`exchange::wire`): decoding never panics, and what decodes re-encodes to bytes that decode
//! to the same value. The body is `exchange::wire::fuzz_decode`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    exchange::wire::fuzz_decode(data);
});
