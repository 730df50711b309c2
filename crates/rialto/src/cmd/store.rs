//! `rialto store verify --data-dir D`: compares the trade store with the journal (crate
//! `server::store`); read-only, on a stopped server's data directory. `rialto store rebuild
//! --data-dir D`: empties the store and refills it from the journal.

use super::CmdResult;
use server::store::StoreTarget;
use std::path::{Path, PathBuf};
use trade_store::{Sqlite, Store};

/// Which store a command works on (default: the configured one, in the data directory's
/// rialto.toml, else data_dir/rialto.db).
#[derive(clap::Args, Debug)]
pub struct Which {
    /// A SQLite file.
    #[arg(long, conflicts_with = "url")]
    path: Option<PathBuf>,
    /// A PostgreSQL database (postgres://user:password@host:port/database).
    #[arg(long)]
    url: Option<String>,
}

fn target(cfg: &server::config::Config, data_dir: &Path, which: Which) -> StoreTarget {
    match (which.path, which.url) {
        (Some(p), _) => StoreTarget::Sqlite(p),
        (None, Some(u)) => StoreTarget::Postgres(u),
        (None, None) => server::store::store_target(cfg)
            .unwrap_or_else(|| StoreTarget::Sqlite(data_dir.join(trade_store::SQLITE_FILE))),
    }
}

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
        #[command(flatten)]
        which: Which,
    },
    /// Empty the store and refill it from the journal: every order, execution and trade,
    /// in batches of 4,096 records. On a stopped server's data directory (it takes the
    /// journal's lock).
    Rebuild {
        /// The server's data directory (holds journal/ and rialto.toml).
        #[arg(long)]
        data_dir: PathBuf,
        #[command(flatten)]
        which: Which,
    },
}

pub fn run(cmd: StoreCommand) -> CmdResult {
    match cmd {
        StoreCommand::Verify { data_dir, which } => {
            let cfg = server::tools::config_for(&data_dir)?;
            let stored = match target(&cfg, &data_dir, which) {
                StoreTarget::Sqlite(path) => Sqlite::open_read_only(&path)?.summary()?,
                StoreTarget::Postgres(url) => {
                    trade_store::Postgres::connect_read_only(&url)?.summary()?
                }
            };
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
        StoreCommand::Rebuild { data_dir, which } => {
            let cfg = server::tools::config_for(&data_dir)?;
            let t = target(&cfg, &data_dir, which);
            let r = server::store::rebuild(&cfg, &data_dir, &t)?;
            println!(
                "rebuilt {}: {} journal records, {} rows in {:.1} s ({:.0} rows/s)",
                t.describe(),
                r.records,
                r.rows,
                r.seconds,
                r.rows as f64 / r.seconds.max(1e-9)
            );
            Ok(())
        }
    }
}
