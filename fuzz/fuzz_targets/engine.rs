//! Arbitrary command sequences (decoded from bytes) applied to the engine and to the naive
//! reference model: identical events and both models' invariants after every command. The body
//! is `offline::fuzzing::check_engine`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = offline::fuzzing::check_engine(data) {
        panic!("{e}");
    }
});
