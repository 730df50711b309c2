//! `rialto journal verify DIR` and `rialto journal dump DIR [--from SEQ]`: check and show a
//! server data directory (crate `server::tools`). Read-only.

use super::CmdResult;
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Subcommand, Debug)]
pub enum JournalCommand {
    /// Check checksums and sequence continuity of every record, replay the whole journal and
    /// print its state hash next to the hash of snapshot + tail replay. Exit 1 on any fault.
    Verify {
        /// The server's data directory (holds journal/ and snapshots/).
        dir: PathBuf,
    },
    /// Print each journaled input and the engine events it caused.
    Dump {
        dir: PathBuf,
        /// First sequence number to print.
        #[arg(long, default_value_t = 1)]
        from: u64,
    },
}

pub fn run(cmd: JournalCommand) -> CmdResult {
    match cmd {
        JournalCommand::Verify { dir } => {
            let cfg = server::tools::config_for(&dir)?;
            let v = server::tools::verify(&dir, cfg)?;
            println!(
                "records {} (seq {}..={}) in {} segment(s)",
                v.records,
                v.first_seq.unwrap_or(0),
                v.last_seq.unwrap_or(0),
                v.segments
            );
            match v.last_commit_seq {
                Some(s) => println!("last commit marker: seq {s}"),
                None => println!("last commit marker: none"),
            }
            if let Some(older) = &v.older_format {
                println!("older journal format: {older}");
            }
            if let Some(t) = &v.torn_tail {
                println!("torn tail (recovery truncates it): {t}");
            }
            println!("full replay state hash {:016x}", v.full_replay_hash);
            match v.snapshot_seq {
                Some(s) => println!(
                    "snapshot {s} + tail state hash {:016x}",
                    v.snapshot_replay_hash
                ),
                None => println!("no snapshot"),
            }
            if !v.hashes_agree() {
                return Err("state hash of snapshot + tail differs from full replay".into());
            }
            println!("ok");
            Ok(())
        }
        JournalCommand::Dump { dir, from } => {
            let cfg = server::tools::config_for(&dir)?;
            let stdout = std::io::stdout();
            let mut w = std::io::BufWriter::new(stdout.lock());
            server::tools::dump(&dir, cfg, from, &mut w)?;
            w.flush()?;
            Ok(())
        }
    }
}
