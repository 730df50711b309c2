//! Arbitrary bytes into the load generator's one-pass reader of inbound messages
//! (`loadgen::inbound::scan`, which reads every report the exchange sends a bot): never
//! panics, an error's offset lies within the input, every value returned is a slice of the
//! input. The body is `loadgen::inbound::fuzz_scan`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    loadgen::inbound::fuzz_scan(data);
});
