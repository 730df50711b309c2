//! Arbitrary bytes as the fields of each market-data message: the exchange's readers of
//! MarketDataRequest, SecurityListRequest and SecurityStatusRequest, and a subscriber's reader
//! of W and X (`fix::md::MdView`): never panic. The body is `fix::md::fuzz_md`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    fix::md::fuzz_md(data);
});
