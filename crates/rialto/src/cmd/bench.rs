//! `rialto bench ...`: the benchmark programs. Each is a variant here with its own module.

use super::CmdResult;
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Drive the matching engine in process with a generated (or preloaded) command stream and
    /// report throughput and per-command latency.
    Engine(super::bench_engine::Args),
}

pub fn run(cmd: BenchCommand) -> CmdResult {
    match cmd {
        BenchCommand::Engine(args) => super::bench_engine::run(args),
    }
}
