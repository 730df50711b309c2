//! `[cluster]`: cluster mode on Apache Kafka (`rialto engine`, `rialto gateway`, `rialto
//! cluster status`); absent, `rialto serve` runs everything in one process.
//!
//! Role: the brokers, the topics' names and replication, which instruments each shard owns
//! (every instrument in exactly one), and, in a gateway's file, which gateway it is.

use super::{err, ConfigError, InstrumentDef};
use serde::Deserialize;

/// Most originators (sessions and API keys) of one gateway: gateway N's are numbered from
/// `(N - 1) * GATEWAY_ORIGINATORS` in the cluster.
pub const GATEWAY_ORIGINATORS: u16 = 1024;

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterFile {
    /// `host:port[,host:port...]`.
    pub brokers: Option<String>,
    /// Topics `<prefix>.commands`, `<prefix>.events`, `<prefix>.status` (default `rialto`).
    pub topic_prefix: Option<String>,
    /// Of the topics, when an engine creates them (default 3).
    pub replication_factor: Option<i32>,
    /// `min.insync.replicas` of the topics it creates (default 2; 1 with one replica).
    pub min_insync_replicas: Option<i32>,
    /// The symbols of each shard.
    pub shards: Option<Vec<Vec<String>>>,
    /// In a gateway's file: which gateway (1..=63).
    pub gateway: Option<u16>,
    /// An engine writes a snapshot after this many commands (default 100,000; 0: never).
    pub snapshot_every_commands: Option<u64>,
    /// The active engine's heartbeat interval (default 100 ms).
    pub heartbeat_ms: Option<u64>,
    /// A standby takes over after this long without the active's heartbeat (default 1,500
    /// ms).
    pub takeover_ms: Option<u64>,
}

/// The validated `[cluster]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterConfig {
    pub brokers: String,
    pub topic_prefix: String,
    pub replication_factor: i32,
    pub min_insync_replicas: i32,
    /// The symbol ids of each shard.
    pub shards: Vec<Vec<u32>>,
    /// The shard of each symbol id.
    pub shard_of_symbol: Vec<u16>,
    pub gateway: Option<u16>,
    pub snapshot_every_commands: u64,
    pub heartbeat_ms: u64,
    pub takeover_ms: u64,
}

impl ClusterConfig {
    pub fn commands_topic(&self) -> String {
        format!("{}.commands", self.topic_prefix)
    }
    pub fn events_topic(&self) -> String {
        format!("{}.events", self.topic_prefix)
    }
    pub fn status_topic(&self) -> String {
        format!("{}.status", self.topic_prefix)
    }
}

pub(super) fn cluster_config(
    file: Option<ClusterFile>,
    instruments: &[InstrumentDef],
) -> Result<Option<ClusterConfig>, ConfigError> {
    let Some(f) = file else {
        return Ok(None);
    };
    let Some(brokers) = f.brokers.filter(|b| !b.trim().is_empty()) else {
        return err("[cluster] needs brokers = \"host:port[,host:port...]\"");
    };
    let topic_prefix = f.topic_prefix.unwrap_or_else(|| "rialto".into());
    if topic_prefix.is_empty()
        || !topic_prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    {
        return err(format!(
            "[cluster] topic_prefix {topic_prefix:?}: use letters, digits, '.', '_' or '-'"
        ));
    }
    let replication_factor = f.replication_factor.unwrap_or(3);
    if !(1..=16).contains(&replication_factor) {
        return err("[cluster] replication_factor must be 1 to 16");
    }
    let min_insync_replicas =
        f.min_insync_replicas
            .unwrap_or(if replication_factor >= 3 { 2 } else { 1 });
    if !(1..=replication_factor).contains(&min_insync_replicas) {
        return err("[cluster] min_insync_replicas must be 1 to replication_factor");
    }
    let Some(shard_symbols) = f.shards.filter(|s| !s.is_empty()) else {
        return err("[cluster] needs shards = [[\"SYMBOL\", ...], ...]: the symbols of each shard");
    };
    if shard_symbols.len() > 256 {
        return err("[cluster] at most 256 shards");
    }
    let mut shard_of_symbol = vec![u16::MAX; instruments.len()];
    let mut shards = Vec::with_capacity(shard_symbols.len());
    for (n, symbols) in shard_symbols.iter().enumerate() {
        if symbols.is_empty() {
            return err(format!("[cluster] shard {n} has no symbol"));
        }
        let mut ids = Vec::with_capacity(symbols.len());
        for s in symbols {
            let Some(id) = instruments
                .iter()
                .position(|i| i.instrument.symbol.as_str() == s)
            else {
                return err(format!(
                    "[cluster] shard {n}: {s:?} is not a configured instrument"
                ));
            };
            if shard_of_symbol[id] != u16::MAX {
                return err(format!(
                    "[cluster] {s:?} is in shard {} and shard {n}",
                    shard_of_symbol[id]
                ));
            }
            shard_of_symbol[id] = n as u16;
            ids.push(id as u32);
        }
        shards.push(ids);
    }
    if let Some(id) = shard_of_symbol.iter().position(|s| *s == u16::MAX) {
        return err(format!(
            "[cluster] {:?} is in no shard: every instrument belongs to one",
            instruments[id].instrument.symbol.as_str()
        ));
    }
    if let Some(g) = f.gateway {
        if !(1..=63).contains(&g) {
            return err("[cluster] gateway must be 1 to 63");
        }
    }
    let heartbeat_ms = f.heartbeat_ms.unwrap_or(100);
    let takeover_ms = f.takeover_ms.unwrap_or(1500);
    if !(10..=10_000).contains(&heartbeat_ms) || takeover_ms < 3 * heartbeat_ms {
        return err(
            "[cluster] heartbeat_ms must be 10 to 10000, and takeover_ms at least three of them",
        );
    }
    Ok(Some(ClusterConfig {
        brokers,
        topic_prefix,
        replication_factor,
        min_insync_replicas,
        shards,
        shard_of_symbol,
        gateway: f.gateway,
        snapshot_every_commands: f.snapshot_every_commands.unwrap_or(100_000),
        heartbeat_ms,
        takeover_ms,
    }))
}
