//! Arbitrary bytes into the FIX codec: framing with resync, decoding, every typed
//! getter and application-message parser. Never panics. The body is `fix::fuzz_decode`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    fix::fuzz_decode(data);
});
