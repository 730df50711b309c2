//! The `rialto` binary's tests: its commands, crash tests of the real process, fuzz regressions.
//!
//! One test binary for the crate's integration tests (each file a module; `nextest` runs
//! each test in a process of its own): one link instead of one per file.

mod admin;
mod cli;
mod cluster;
mod common;
mod crash_loop;
mod demo_rejects;
mod driver_against_server;
mod fuzz_regressions;
mod http_crash;
mod loadgen;
mod market_data_crash;
mod passwords;
mod serve_logs;
mod store_crash;
