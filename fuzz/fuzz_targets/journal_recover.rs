//! Arbitrary bytes as the only segment of a journal: recovery refuses or succeeds,
//! and a recovered journal reads back with consecutive sequence numbers, recovers again without
//! truncation and appends at the next number. The body is `journal::fuzz_recover`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    journal::fuzz_recover(data);
});
