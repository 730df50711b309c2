//! Arbitrary bytes into the order-stream and instruments CSV readers: they never panic, and
//! every error names a line that exists. The body is `offline::fuzzing::check_csv`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Err(e) = offline::fuzzing::check_csv(data) {
        panic!("{e}");
    }
});
