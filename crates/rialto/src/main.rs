//! `rialto`: the one binary. Only glue: parses the command line (clap) and hands each
//! subcommand to its module under `cmd/`, which uses the file adapters of the `offline` crate.
//!
//! Never: business logic here. Exit codes: 0 success, 1 a run failed (the error is printed to
//! stderr as `rialto: <error>`), 2 bad command-line usage (clap).
#![forbid(unsafe_code)]

mod cmd;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = cmd::Cli::parse();
    match cmd::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if cmd::is_broken_pipe(e.as_ref()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("rialto: {e}");
            ExitCode::FAILURE
        }
    }
}
