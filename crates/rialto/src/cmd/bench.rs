//! `rialto bench ...`: the benchmark programs. Each is a variant here with its own module.

use super::CmdResult;
use clap::Subcommand;

#[derive(Subcommand, Debug)]
pub enum BenchCommand {
    /// Drive the matching engine in process with a generated (or preloaded) command stream and
    /// report throughput and per-command latency.
    Engine(super::bench_engine::Args),
    /// N FIX bot sessions against an exchange, open loop with a realistic order mix; latency
    /// from intended send time to first ExecutionReport, the seeds' percentile table.
    Fix(super::bench_fix::Args),
    /// The same order mix over the REST API: open loop over N keep-alive connections (an API
    /// key each), latency from intended send time to the answer; `--with-fix` runs `bench fix`
    /// at the same rate beside it.
    Http(super::bench_http::Args),
    /// One `bench fix` run per offered rate (and bots count, `--bots 1,10,50`; `--repeat N`
    /// for medians): latency-vs-load table with the knee, CSV and SVG.
    Sweep(super::bench_sweep::Args),
    /// One session, NewOrderSingle -> ExecutionReport round trip at a fixed rate (FIXEdge's
    /// single-session echo scenario).
    Echo(super::bench_echo::Args),
    /// The order mix with 0, 10 and 50 market-data subscribers in one run: ExecutionReport ->
    /// market-data entry latency, and order entry with N subscribers over with 0.
    Md(super::bench_md::Args),
    /// The FIX codec per message, no sockets (FIX Antenna's figures: send, receive,
    /// receive-and-send, throughput), optionally beside QuickFIX/J's (`--with-quickfixj`).
    Codec(super::bench_codec::Args),
    /// Draw several sweeps' CSV files on one latency-vs-load SVG chart.
    Chart(super::bench_chart::Args),
    /// The machine's scheduling gaps (one pinned clock-reading thread per CPU): the latency
    /// floor under every other benchmark here.
    Noise(super::bench_noise::Args),
}

pub fn run(cmd: BenchCommand) -> CmdResult {
    match cmd {
        BenchCommand::Engine(args) => super::bench_engine::run(args),
        BenchCommand::Fix(args) => super::bench_fix::run(args),
        BenchCommand::Http(args) => super::bench_http::run(args),
        BenchCommand::Sweep(args) => super::bench_sweep::run(args),
        BenchCommand::Echo(args) => super::bench_echo::run(args),
        BenchCommand::Md(args) => super::bench_md::run(args),
        BenchCommand::Codec(args) => super::bench_codec::run(args),
        BenchCommand::Chart(args) => super::bench_chart::run(args),
        BenchCommand::Noise(args) => super::bench_noise::run(args),
    }
}
