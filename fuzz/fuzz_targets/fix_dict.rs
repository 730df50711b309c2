//! Arbitrary bytes as a FIX stream and as one message's body in each version, validated
//! against every dictionary (`fix::dict::fuzz_validate`). Never panics; a violation names a
//! field of the message unless one is missing.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    fix::dict::fuzz_validate(data);
});
