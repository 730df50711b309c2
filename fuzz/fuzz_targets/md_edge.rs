//! Arbitrary bytes on a market-data connection logged on as MD1, raw and as the fields of one
//! MarketDataRequest, through the market-data edge (`fix_gateway::md::MdEdge`: its FIX session,
//! subscriptions and answers): never panics, every message sent is well framed. The body is
//! `server::market_data::fuzz_md_edge`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    server::market_data::fuzz_md_edge(data);
});
