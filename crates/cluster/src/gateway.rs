//! A gateway's link to the cluster (`rialto gateway`): the commands its event loop captured
//! go to their shards' partitions of the command log; the outcomes on the event log come back
//! to the loop, which journals and applies them (`server::Record::Outcome`).
//!
//! Two threads: `cluster-send` (one idempotent producer: a gateway's commands reach each
//! partition in the order the loop made them) and `cluster-read` (every partition of the
//! event log, from after the last outcome the gateway's journal holds, or from the end for a
//! new gateway). After a restart the link first sends the commands its journal says were not
//! answered; an engine applies each cause once.

use crate::kafka;
use crate::{now_ns, LogRecord};
use exchange::wire::Outcome;
use rdkafka::message::Message;
use rdkafka::Offset;
use server::config::ClusterConfig;
use server::{GatewayPorts, Incoming};
use std::time::Duration;

/// Starts the link's threads (they end with the process, or when the loop's ends close).
pub fn start(cfg: &ClusterConfig, ports: GatewayPorts, log: server::Logger) -> Result<(), String> {
    kafka::ensure_topics(cfg)?;
    let gateway = cfg.gateway.unwrap_or(0);
    let producer = kafka::producer(cfg, &format!("gateway-{gateway}"))?;
    let reader = kafka::reader(cfg, &format!("gateway-{gateway}-events"))?;
    let shards = cfg.shards.len();
    let at: Vec<(i32, Offset)> = (0..shards)
        .map(|s| {
            let o = match ports.resume.get(s).copied().flatten() {
                Some(last) => Offset::Offset(last as i64 + 1),
                None => Offset::End,
            };
            (s as i32, o)
        })
        .collect();
    kafka::assign(&reader, &cfg.events_topic(), &at)?;
    let GatewayPorts {
        outcomes,
        wake,
        commands,
        unanswered,
        ..
    } = ports;
    let topic = cfg.commands_topic();
    let slog = log.clone();
    let resent = unanswered.len();
    std::thread::Builder::new()
        .name("cluster-send".into())
        .spawn(move || {
            let mut buf = Vec::with_capacity(512);
            let mut send = |r: &exchange::Routed| -> Result<(), String> {
                buf.clear();
                LogRecord::Command {
                    ts_ns: now_ns(),
                    cause: r.cause,
                    command: r.command,
                }
                .encode(&mut buf);
                kafka::send(&producer, &topic, i32::from(r.shard), &buf)
            };
            if resent > 0 {
                slog(&format!(
                    "cluster: sending again {resent} commands not answered before the restart"
                ));
            }
            for r in &unanswered {
                if let Err(e) = send(r) {
                    slog(&format!("cluster: {e}"));
                    return;
                }
            }
            while let Ok(batch) = commands.recv() {
                for r in &batch {
                    if let Err(e) = send(r) {
                        slog(&format!("cluster: {e}"));
                        return;
                    }
                }
            }
            let _ = kafka::flush(&producer, Duration::from_secs(10));
        })
        .map_err(|e| e.to_string())?;
    std::thread::Builder::new()
        .name("cluster-read".into())
        .spawn(move || loop {
            let Some(m) = reader.poll(Duration::from_millis(100)) else {
                continue;
            };
            let m = match m {
                Ok(m) => m,
                Err(e) => {
                    log(&format!("cluster: reading the event log: {e}"));
                    continue;
                }
            };
            let payload = m.payload().unwrap_or(&[]);
            if let Err(e) = Outcome::decode(payload) {
                log(&format!(
                    "cluster: event log {}/{}: {e}: skipped",
                    m.partition(),
                    m.offset()
                ));
                continue;
            }
            if outcomes
                .send(Incoming {
                    shard: m.partition() as u16,
                    offset: m.offset() as u64,
                    payload: payload.to_vec(),
                })
                .is_err()
            {
                return;
            }
            wake();
        })
        .map_err(|e| e.to_string())?;
    Ok(())
}
