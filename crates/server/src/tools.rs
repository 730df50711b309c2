//! `rialto journal verify` and `rialto journal dump`: read-only walks of a data directory that
//! check and show what the server journaled.
//!
//! Role: verify = every checksum and sequence number (the `journal` crate), every payload
//! decodes, and the state hash of a full replay from record 1, compared with the hash of the
//! newest snapshot + tail replay (the way the server starts). dump = each record as text with
//! the engine events it caused.
//!
//! Never: writes to the data directory.

use crate::config::Config;
use crate::error::ServerError;
use crate::node::Node;
use crate::record::decode_record;
use crate::recovery::recover;
use exchange::Backing;
use fix_gateway::Outbox;
use std::io::Write;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

/// Result of `verify`.
#[derive(Clone, Debug)]
pub struct Verified {
    pub records: u64,
    pub segments: usize,
    pub first_seq: Option<u64>,
    pub last_seq: Option<u64>,
    pub torn_tail: Option<String>,
    /// The last sequence number a commit marker commits (`None`: none in the journal).
    pub last_commit_seq: Option<u64>,
    /// Segments of an older journal format (before commit markers), if any: how many, their
    /// format versions and the last of them.
    pub older_format: Option<String>,
    /// Hash after replaying every record from the first.
    pub full_replay_hash: u64,
    /// Hash after loading the newest snapshot and replaying the rest (`None`: no snapshot).
    pub snapshot_seq: Option<u64>,
    pub snapshot_replay_hash: u64,
}

impl Verified {
    pub fn hashes_agree(&self) -> bool {
        self.full_replay_hash == self.snapshot_replay_hash
    }
}

/// Loads the configuration a data directory was served with (its `rialto.toml` copy), or the
/// embedded defaults when there is none.
pub fn config_for(data_dir: &Path) -> Result<Config, ServerError> {
    let path = crate::server::config_copy_path(data_dir);
    let mut cfg = match std::fs::read_to_string(&path) {
        Ok(text) => {
            Config::from_toml(&text).map_err(|e| ServerError(format!("{}: {e}", path.display())))?
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Config::defaults(),
        Err(e) => return Err(ServerError(format!("{}: {e}", path.display()))),
    };
    cfg.data_dir = data_dir.to_path_buf();
    Ok(cfg)
}

pub fn verify(data_dir: &Path, cfg: Config) -> Result<Verified, ServerError> {
    if !data_dir.join("journal").is_dir() {
        return Err(ServerError(format!(
            "{} has no journal/ directory",
            data_dir.display()
        )));
    }
    let cfg = Arc::new(cfg);
    let mut x = Node::new(&cfg, Backing::Lazy);
    x.set_replaying(true);
    let mut out = Outbox::default();
    let report = journal::verify::<ServerError>(data_dir, |rec| {
        let r = decode_record(rec)?;
        x.apply(rec.seq, rec.timestamp_ns, &r, &mut out);
        out.clear();
        Ok(())
    })?;
    let full_replay_hash = x.state_hash();
    let (_, rec) = recover(&cfg, data_dir, true, |_| {})?;
    let older: Vec<_> = report.older_format_segments().collect();
    let older_format = older.last().map(|last| {
        let mut versions: Vec<u32> = older.iter().map(|s| s.format_version).collect();
        versions.sort_unstable();
        versions.dedup();
        let versions: Vec<String> = versions.iter().map(u32::to_string).collect();
        format!(
            "{} segment(s) of format {} (current {}), the last {}: written before commit \
             markers, so a damaged last record there reads as a torn tail",
            older.len(),
            versions.join(", "),
            journal::format::FORMAT_VERSION,
            last.path.display()
        )
    });
    let last_commit_seq = report.last_commit_seq();
    Ok(Verified {
        records: report.records,
        segments: report.segments.len(),
        first_seq: report.first_seq,
        last_seq: report.last_seq,
        torn_tail: report.torn_tail.map(|t| {
            format!(
                "{} at offset {} ({} bytes, {})",
                t.segment.display(),
                t.offset,
                t.bytes_dropped,
                t.fault.as_str()
            )
        }),
        last_commit_seq,
        older_format,
        full_replay_hash,
        snapshot_seq: rec.snapshot_seq,
        snapshot_replay_hash: rec.state_hash,
    })
}

/// Writes records with `seq >= from_seq` as text: one line per record, then one indented line
/// per engine event it caused. Returns the number of records written.
pub fn dump(
    data_dir: &Path,
    cfg: Config,
    from_seq: u64,
    w: &mut dyn Write,
) -> Result<u64, ServerError> {
    let mut x = Node::new(&cfg, Backing::Lazy);
    x.exchange.event_log = Some(Vec::new());
    let mut out = Outbox::default();
    let mut written = 0u64;
    let mut failure: Option<ServerError> = None;
    let summary = journal::dump(data_dir, 1, |rec| {
        let input = match decode_record(rec) {
            Ok(r) => r,
            Err(e) => {
                failure = Some(e);
                return ControlFlow::Break(());
            }
        };
        x.apply(rec.seq, rec.timestamp_ns, &input, &mut out);
        out.clear();
        let events = x
            .exchange
            .event_log
            .as_mut()
            .map(std::mem::take)
            .unwrap_or_default();
        if rec.seq < from_seq {
            return ControlFlow::Continue(());
        }
        let r = (|| -> std::io::Result<()> {
            writeln!(w, "{} ts={} {:?}", rec.seq, rec.timestamp_ns, input)?;
            for e in &events {
                writeln!(w, "    {e:?}")?;
            }
            Ok(())
        })();
        if let Err(e) = r {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                failure = Some(ServerError(format!("write: {e}")));
            }
            return ControlFlow::Break(());
        }
        written += 1;
        ControlFlow::Continue(())
    })?;
    if let Some(f) = failure {
        return Err(f);
    }
    if let Some(t) = summary.torn_tail {
        let _ = writeln!(w, "# {t}: recovery truncates it");
    }
    Ok(written)
}
