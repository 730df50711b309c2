//! Arbitrary bytes into a logged-on FIX 4.4 session (raw, split, and framed as one
//! message) and into one awaiting Logon: never panics, and everything the session sends decodes.
//! The body is `fix::fuzz_session`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    fix::fuzz_session(data);
});
