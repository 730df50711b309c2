//! `rialto store verify --data-dir D`: compares the trade store with the journal (crate
//! `server::store`). Read-only; run it on a stopped server's data directory.

use super::CmdResult;
use std::path::PathBuf;
use trade_store::{Sqlite, Store};

#[derive(clap::Subcommand, Debug)]
pub enum StoreCommand {
    /// Replay the journal and compare what the store should hold with what it holds: the
    /// journal position, the counts of orders, order events, executions and trades, the
    /// traded volume and notional, a hash of the trades in id order and one of the orders'
    /// final states. Names the first difference; exit 1 on one.
    Verify {
        /// The server's data directory (holds journal/ and rialto.toml).
        #[arg(long)]
        data_dir: PathBuf,
        /// The store's file (default: the configured one, data_dir/rialto.db).
        #[arg(long)]
        path: Option<PathBuf>,
    },
}

pub fn run(cmd: StoreCommand) -> CmdResult {
    match cmd {
        StoreCommand::Verify { data_dir, path } => {
            let cfg = server::tools::config_for(&data_dir)?;
            let path = match path.or_else(|| server::store::store_path(&cfg)) {
                Some(p) => p,
                None => data_dir.join(trade_store::SQLITE_FILE),
            };
            let mut store = Sqlite::open_read_only(&path)?;
            let stored = store.summary()?;
            let journal = server::store::journal_summary(&cfg, &data_dir)?;
            println!(
                "journal: records up to {}, {} orders, {} order events, {} executions, {} \
                 trades, volume {}, trades hash {:016x}",
                journal.position,
                journal.orders,
                journal.order_events,
                journal.executions,
                journal.trades,
                journal.volume,
                journal.trades_hash
            );
            println!(
                "store:   records up to {}, {} orders, {} order events, {} executions, {} \
                 trades, volume {}, trades hash {:016x}",
                stored.position,
                stored.orders,
                stored.order_events,
                stored.executions,
                stored.trades,
                stored.volume,
                stored.trades_hash
            );
            if let Some(d) = stored.compare(&journal) {
                return Err(format!("the store differs from the journal: {d}").into());
            }
            println!("ok");
            Ok(())
        }
    }
}
