//! Rialto's load generator: the programs behind `rialto bench fix`, `bench echo`,
//! `bench sweep`, `bench http` and `rialto demo`.
//!
//! Role: drive an exchange over FIX exactly as clients would (real TCP sessions, one per bot),
//! open loop at fixed offered rates, and report request -> first answer latency as the seeds do
//! (HdrHistogram percentile tables, a one-line summary), plus sweeps across rates (table, CSV,
//! SVG chart) and a live demo with simulated market makers and takers.
//!
//! Modules: `bench` (the programs as library calls: fix, echo, progress), `codec` (`bench
//! codec`: the FIX codec timed per message, no sockets, beside QuickFIX/J's), `convert` (echo's
//! two-session FIX 4.2 -> FIX 4.4 drop-copy scenario), `mix` (what bots send:
//! the order mix, echo, instruments), `orders` (each bot's active-orders window), `clordid`
//! (ClOrdIDs that carry the request index), `driver` (the one-threaded open-loop FIX engine's
//! loop), `schedule` (when requests are due, how early to wake), `session` (one bot's FIX session:
//! what it writes, what it does with what it reads), `tally` (a run's accounting while it runs),
//! `rx` (reads stamped with the kernel's receive time),
//! `clock` (clock reads that also work under valgrind); those two hold the crate's only unsafe
//! code, `deny(unsafe_code)` elsewhere; `stats` (counters, histograms, the printed formats),
//! `sweep` (runs per rate and bots count, repetitions, knee detection, CSV), `svg` (the
//! latency-vs-load chart), `spawn` (a `rialto serve` child for one run), `noise` (the machine's
//! scheduling gaps: the floor under every latency figure), `demo` (the in-process exchange with
//! simulated traders, and `demo::rest`: its traders on the REST API), `http` (an HTTP/1.1
//! client on hyper: keep-alive connections with an API key, a precise timer), `http_bench`
//! (`bench http`: the order mix over REST, open loop over N connections), `md` and `md_bench`
//! (`bench md`: market-data subscribers over FIX, or over the REST API's WebSocket with
//! `ws_md`, beside the bots).
//! `examples/ack_exchange.rs` is a stand-in exchange that only acknowledges, to measure the
//! generator's own ceiling.
//!
//! Never: measures from the actual send time (always from the intended one: no coordinated
//! omission); hides load shedding (exchange-busy rejects are counted apart from business
//! rejects, and excluded from the latency of accepted requests); talks to anything but the
//! address it is given (the demo and tests bind 127.0.0.1).
#![deny(unsafe_code)]

pub mod bench;
pub mod clock;
pub mod clordid;
pub mod codec;
pub mod convert;
pub mod demo;
pub mod driver;
pub mod http;
pub mod http_bench;
pub mod md;
pub mod md_bench;
pub mod mix;
pub mod noise;
pub mod orders;
pub mod rx;
pub mod schedule;
mod session;
pub mod spawn;
pub mod stats;
pub mod svg;
pub mod sweep;
mod tally;
pub mod ws_md;

pub use driver::{Driver, DriverConfig, Observer, Phase, Quiet, View};
pub use fix::scan::Report;
pub use mix::{Action, EchoGenerator, Market, MixConfig, MixGenerator, Strategy, SymbolSpec};
pub use schedule::Schedule;
pub use stats::{Counters, RunResult};
