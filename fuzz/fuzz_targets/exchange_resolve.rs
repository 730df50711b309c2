//! Arbitrary bytes as a flow of journal records (logons, disconnects, restarts, orders,
//! cancels, replaces, status requests), replayed into a node that keeps its ClOrdID index and
//! into one that takes its lookups from a full replay's resolver (`exchange::resolve`, small
//! windows and generations): every record's output and the final state must be the same. The
//! body is `server::fuzz_resolve`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    server::fuzz_resolve(data);
});
