//! The subcommands of `rialto`. Each lives in its own module with a clap `Args` struct and a
//! `run(args) -> CmdResult`; adding one means a new module, a variant of `Command` and a line
//! in `run`.

mod admin;
mod apikey;
mod bench;
mod bench_chart;
mod bench_codec;
mod bench_echo;
mod bench_engine;
mod bench_fix;
mod bench_http;
mod bench_md;
mod bench_noise;
mod bench_sweep;
mod book;
mod cluster;
mod demo;
mod journal;
mod match_;
mod passwd;
mod serve;
mod store;

use clap::{Parser, Subcommand};

/// What a subcommand returns; the error is printed by `main` and the exit code is 1.
pub type CmdResult = Result<(), Box<dyn std::error::Error>>;

/// Rialto: a deterministic price-time matching engine and the exchange around it.
#[derive(Parser, Debug)]
#[command(name = "rialto", version)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Replay an order stream (CSV) through the engine and print its events as JSON lines.
    Match(match_::Args),
    /// Benchmarks (see `rialto bench --help`).
    #[command(subcommand)]
    Bench(Box<bench::BenchCommand>),
    /// Run the exchange server (FIX order entry, journal, recovery).
    Serve(serve::Args),
    /// Check or print a server's journal.
    #[command(subcommand)]
    Journal(journal::JournalCommand),
    /// The exchange with simulated traders and live statistics (start here).
    Demo(demo::Args),
    /// Subscribe to one instrument's market data and draw its live book in the terminal.
    Book(book::Args),
    /// Read a password (stdin, or a prompt without echo) and print its salted hash for a
    /// session's `password_hash`.
    Passwd(passwd::Args),
    /// The operator's controls of a running server: kill switches, instrument statuses and
    /// limits (see `rialto admin --help`).
    Admin(admin::Args),
    /// Make API keys for the REST API.
    #[command(subcommand)]
    Apikey(apikey::ApikeyCommand),
    /// Check the trade store (`rialto store verify`).
    #[command(subcommand)]
    Store(store::StoreCommand),
    /// Cluster mode: one engine of a shard (its command log on Kafka).
    Engine(cluster::EngineArgs),
    /// Cluster mode: a gateway (FIX and REST) in front of the shards' engines.
    Gateway(cluster::GatewayArgs),
    /// Cluster mode: `rialto cluster status`.
    #[command(subcommand)]
    Cluster(cluster::ClusterCommand),
}

pub fn run(cli: Cli) -> CmdResult {
    match cli.command {
        Command::Match(args) => match_::run(args),
        Command::Bench(b) => bench::run(*b),
        Command::Serve(a) => serve::run(a),
        Command::Journal(j) => journal::run(j),
        Command::Demo(a) => demo::run(a),
        Command::Book(a) => book::run(a),
        Command::Passwd(a) => passwd::run(a),
        Command::Admin(a) => admin::run(a),
        Command::Apikey(a) => apikey::run(a),
        Command::Store(s) => store::run(s),
        Command::Engine(a) => cluster::engine(a),
        Command::Gateway(a) => cluster::gateway(a),
        Command::Cluster(c) => cluster::run(c),
    }
}

/// True if `e` is (or wraps) an I/O error from writing into a closed pipe, e.g.
/// `rialto match ... | head`; that ends the run quietly.
pub fn is_broken_pipe(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut cur: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = cur {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if io.kind() == std::io::ErrorKind::BrokenPipe {
                return true;
            }
        }
        cur = err.source();
    }
    false
}

/// Opens `path` for buffered reading, naming it in the error.
pub fn open(path: &std::path::Path) -> Result<std::io::BufReader<std::fs::File>, String> {
    std::fs::File::open(path)
        .map(|f| std::io::BufReader::with_capacity(1 << 16, f))
        .map_err(|e| format!("{}: {e}", path.display()))
}

/// Reads `--instruments FILE` (if given) into a fresh symbol table.
pub fn read_instruments(
    path: Option<&std::path::Path>,
) -> Result<offline::symbols::SymbolTable, String> {
    let mut symbols = offline::symbols::SymbolTable::new();
    if let Some(path) = path {
        offline::instruments_csv::read_instruments(open(path)?, &mut symbols)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(symbols)
}
