//! The session state machine driven by a script (inbound messages of every admin type and an
//! application type, sequence numbers around the expected one, PossDupFlag, SendingTime skew,
//! timer ticks, reconnects, our own messages): its invariants hold after every step. The body
//! is `fix::session::fuzz_session_script`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    fix::session::fuzz_session_script(data);
});
