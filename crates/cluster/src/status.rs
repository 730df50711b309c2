//! `rialto cluster status`: each shard's engines (active, standby), their positions and lags,
//! from the engines' reports on the status topic and the partitions' watermarks.

use crate::kafka;
use rdkafka::message::Message;
use rdkafka::Offset;
use server::config::ClusterConfig;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::{Duration, Instant};

/// One engine's latest report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineReport {
    pub shard: u16,
    pub engine: String,
    pub role: String,
    pub epoch: u32,
    /// Last command offset applied (-1: none).
    pub applied: i64,
    pub published: i64,
    pub pending: u64,
    pub hash_at: u64,
    pub hash: String,
    /// Over the report's interval: the mean and most delay from a gateway's send of a
    /// command to this engine's read of it, ms.
    pub read_delay_mean_ms: u64,
    pub read_delay_max_ms: u64,
    pub ts_ns: u64,
}

impl EngineReport {
    /// Parses a status record (`key=value` pairs).
    pub fn parse(line: &str) -> Option<EngineReport> {
        let mut r = EngineReport::default();
        for kv in line.split_whitespace() {
            let (k, v) = kv.split_once('=')?;
            match k {
                "shard" => r.shard = v.parse().ok()?,
                "engine" => r.engine = v.to_string(),
                "role" => r.role = v.to_string(),
                "epoch" => r.epoch = v.parse().ok()?,
                "applied" => r.applied = v.parse().ok()?,
                "published" => r.published = v.parse().ok()?,
                "pending" => r.pending = v.parse().ok()?,
                "hash_at" => r.hash_at = v.parse().ok()?,
                "hash" => r.hash = v.to_string(),
                "ts_ns" => r.ts_ns = v.parse().ok()?,
                "read_delay_mean_ms" => r.read_delay_mean_ms = v.parse().ok()?,
                "read_delay_max_ms" => r.read_delay_max_ms = v.parse().ok()?,
                _ => {}
            }
        }
        (!r.engine.is_empty()).then_some(r)
    }
}

/// A shard as the status command sees it.
#[derive(Clone, Debug)]
pub struct ShardStatus {
    pub shard: u16,
    /// The command and event partitions' high watermarks.
    pub commands_end: i64,
    pub events_end: i64,
    pub engines: Vec<EngineReport>,
}

/// Reads the status: the latest report of every engine (within the last `window` records of
/// the status topic) and each shard's watermarks.
pub fn read(cfg: &ClusterConfig, window: i64) -> Result<Vec<ShardStatus>, String> {
    let c = kafka::reader(cfg, "status")?;
    let t = Duration::from_secs(10);
    let status = cfg.status_topic();
    let (low, high) = kafka::watermarks(&c, &status, 0, t)?;
    let mut latest: BTreeMap<(u16, String), EngineReport> = BTreeMap::new();
    if high > low {
        kafka::assign(
            &c,
            &status,
            &[(0, Offset::Offset((high - window).max(low)))],
        )?;
        let deadline = Instant::now() + t;
        let mut next = (high - window).max(low);
        while next < high && Instant::now() < deadline {
            let Some(m) = c.poll(Duration::from_millis(200)) else {
                continue;
            };
            let Ok(m) = m else {
                continue;
            };
            next = m.offset() + 1;
            if let Some(r) = m
                .payload()
                .and_then(|p| std::str::from_utf8(p).ok())
                .and_then(EngineReport::parse)
            {
                latest.insert((r.shard, r.engine.clone()), r);
            }
        }
    }
    let mut out = Vec::new();
    for s in 0..cfg.shards.len() as u16 {
        let (_, commands_end) = kafka::watermarks(&c, &cfg.commands_topic(), i32::from(s), t)?;
        let (_, events_end) = kafka::watermarks(&c, &cfg.events_topic(), i32::from(s), t)?;
        out.push(ShardStatus {
            shard: s,
            commands_end,
            events_end,
            engines: latest
                .iter()
                .filter(|((sh, _), _)| *sh == s)
                .map(|(_, r)| r.clone())
                .collect(),
        });
    }
    Ok(out)
}

/// The status as a table.
pub fn render(shards: &[ShardStatus], symbols: &[Vec<String>], now_ns: u64) -> String {
    let mut s = String::new();
    for sh in shards {
        let names = symbols
            .get(sh.shard as usize)
            .map_or(String::new(), |v| v.join(","));
        let _ = writeln!(
            s,
            "shard {} ({names}): command log end {}, event log end {}",
            sh.shard, sh.commands_end, sh.events_end
        );
        if sh.engines.is_empty() {
            let _ = writeln!(s, "  no engine has reported");
        }
        for e in &sh.engines {
            let age_ms = now_ns.saturating_sub(e.ts_ns) / 1_000_000;
            let lag = (sh.commands_end - 1 - e.applied).max(0);
            let role = if age_ms > 5_000 { "silent" } else { &e.role };
            let _ = writeln!(
                s,
                "  {:<8} {:<15} epoch {:<4} applied {:<10} lag {:<8} read delay mean {} ms max {} ms, hash {} at {}, reported {} ms ago",
                e.engine,
                role,
                e.epoch,
                e.applied,
                lag,
                e.read_delay_mean_ms,
                e.read_delay_max_ms,
                e.hash,
                e.hash_at,
                age_ms
            );
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_parses_and_renders() {
        let r = EngineReport::parse(
            "shard=1 engine=b role=standby epoch=3 applied=41 published=40 pending=1 hash_at=40 hash=00ff ts_ns=1000000",
        )
        .unwrap();
        assert_eq!(
            (r.shard, r.engine.as_str(), r.epoch, r.applied),
            (1, "b", 3, 41)
        );
        assert!(EngineReport::parse("garbage").is_none());
        let t = render(
            &[ShardStatus {
                shard: 1,
                commands_end: 50,
                events_end: 40,
                engines: vec![r],
            }],
            &[vec![], vec!["ACME".into()]],
            3_000_000,
        );
        assert!(t.contains("shard 1 (ACME): command log end 50"), "{t}");
        assert!(t.contains("standby") && t.contains("lag 8"), "{t}");
    }
}
