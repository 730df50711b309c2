//! Arbitrary bytes into the one-pass reader of inbound messages the load generator's bots use
//! (`fix::scan::scan`, which reads every report the exchange sends a bot): never panics, an
//! error's offset lies within the input, every value returned is a slice of the input. The
//! body is `fix::scan::fuzz_scan`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    fix::scan::fuzz_scan(data);
});
