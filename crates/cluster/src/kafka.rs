//! The Kafka clients of the cluster and its topics.
//!
//! Producers are idempotent with `acks=all` and never give up on a record
//! (`message.timeout.ms = 0`): a command or an outcome is in the log, in order, exactly once,
//! or the process is gone. Readers assign partitions at explicit offsets (no consumer group
//! offsets: a position is part of each reader's own state).

use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::producer::{BaseRecord, DefaultProducerContext, Producer, ThreadedProducer};
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::util::Timeout;
use rdkafka::{Offset, TopicPartitionList};
use server::config::ClusterConfig;
use std::time::Duration;

pub type KafkaProducer = ThreadedProducer<DefaultProducerContext>;

/// An idempotent producer, `acks=all`, sending at once (`linger.ms = 0`).
pub fn producer(cfg: &ClusterConfig, client_id: &str) -> Result<KafkaProducer, String> {
    ClientConfig::new()
        .set("bootstrap.servers", &cfg.brokers)
        .set("client.id", client_id)
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("linger.ms", "0")
        .set("socket.nagle.disable", "true")
        .set("message.timeout.ms", "0")
        .create()
        .map_err(|e| format!("Kafka producer: {e}"))
}

/// A reader of explicit partitions (`assign`): nothing is committed to the broker.
pub fn reader(cfg: &ClusterConfig, client_id: &str) -> Result<BaseConsumer, String> {
    ClientConfig::new()
        .set("bootstrap.servers", &cfg.brokers)
        .set("client.id", client_id)
        // Required by librdkafka even without subscribing; nothing is committed.
        .set("group.id", format!("{}-{client_id}", cfg.topic_prefix))
        .set("enable.auto.commit", "false")
        .set("enable.auto.offset.store", "false")
        .set("fetch.wait.max.ms", "100")
        .set("socket.nagle.disable", "true")
        .set("auto.offset.reset", "earliest")
        .create()
        .map_err(|e| format!("Kafka reader: {e}"))
}

/// Assigns `topic`'s partitions at the offsets given.
pub fn assign(c: &BaseConsumer, topic: &str, at: &[(i32, Offset)]) -> Result<(), String> {
    let mut tpl = TopicPartitionList::new();
    for (p, o) in at {
        tpl.add_partition_offset(topic, *p, *o)
            .map_err(|e| format!("assign {topic}/{p}: {e}"))?;
    }
    c.assign(&tpl).map_err(|e| format!("assign {topic}: {e}"))
}

/// Sends one record, waiting while the producer's queue is full.
pub fn send(p: &KafkaProducer, topic: &str, partition: i32, payload: &[u8]) -> Result<(), String> {
    let mut rec = BaseRecord::<(), [u8]>::to(topic)
        .partition(partition)
        .payload(payload);
    loop {
        match p.send(rec) {
            Ok(()) => return Ok(()),
            Err((
                rdkafka::error::KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull),
                r,
            )) => {
                rec = r;
                std::thread::sleep(Duration::from_millis(1));
            }
            Err((e, _)) => return Err(format!("send to {topic}/{partition}: {e}")),
        }
    }
}

/// Waits until every record sent is acknowledged (or `timeout`).
pub fn flush(p: &KafkaProducer, timeout: Duration) -> Result<(), String> {
    p.flush(Timeout::After(timeout))
        .map_err(|e| format!("flush: {e}"))
}

/// The low and high watermarks of a partition.
pub fn watermarks(
    c: &BaseConsumer,
    topic: &str,
    partition: i32,
    timeout: Duration,
) -> Result<(i64, i64), String> {
    c.fetch_watermarks(topic, partition, timeout)
        .map_err(|e| format!("watermarks of {topic}/{partition}: {e}"))
}

/// Creates the cluster's topics if they are missing: commands and events with a partition per
/// shard, status with one; the configured replication and `min.insync.replicas`.
pub fn ensure_topics(cfg: &ClusterConfig) -> Result<(), String> {
    let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
        .set("bootstrap.servers", &cfg.brokers)
        .create()
        .map_err(|e| format!("Kafka admin client: {e}"))?;
    let shards = cfg.shards.len() as i32;
    let isr = cfg.min_insync_replicas.to_string();
    let names = [
        (cfg.commands_topic(), shards),
        (cfg.events_topic(), shards),
        (cfg.status_topic(), 1),
    ];
    let topics: Vec<NewTopic<'_>> = names
        .iter()
        .map(|(n, p)| {
            NewTopic::new(n, *p, TopicReplication::Fixed(cfg.replication_factor))
                .set("min.insync.replicas", &isr)
        })
        .collect();
    // Topics that exist with their partitions need nothing (a restart while a broker is
    // down must not wait for the admin API).
    let c = reader(cfg, "topics")?;
    let exists = |name: &str, parts: i32| {
        c.fetch_metadata(Some(name), Duration::from_secs(5))
            .ok()
            .and_then(|m| {
                m.topics()
                    .first()
                    .map(|t| t.error().is_none() && t.partitions().len() == parts as usize)
            })
            .unwrap_or(false)
    };
    if names.iter().all(|(n, p)| exists(n, *p)) {
        return Ok(());
    }
    let opts = AdminOptions::new()
        .operation_timeout(Some(Duration::from_secs(10)))
        .request_timeout(Some(Duration::from_secs(10)));
    // A broker may be down, or the controller moving: ask again, for a while.
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    loop {
        let attempt = futures_executor::block_on(admin.create_topics(&topics, &opts))
            .map_err(|e| format!("create topics: {e}"))
            .and_then(|results| {
                results.into_iter().try_for_each(|r| match r {
                    Ok(_) | Err((_, RDKafkaErrorCode::TopicAlreadyExists)) => Ok(()),
                    Err((t, e)) => Err(format!("create topic {t}: {e}")),
                })
            });
        match attempt {
            Ok(()) => break,
            Err(e) if std::time::Instant::now() > deadline => return Err(e),
            Err(_) => std::thread::sleep(Duration::from_millis(500)),
        }
    }
    // Wait until every partition has a leader (a new topic's take a moment).
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    for (n, p) in &names {
        for part in 0..*p {
            loop {
                match c.fetch_watermarks(n, part, Duration::from_secs(2)) {
                    Ok(_) => break,
                    Err(e) if std::time::Instant::now() > deadline => {
                        return Err(format!("{n}/{part} has no leader: {e}"))
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(100)),
                }
            }
        }
    }
    Ok(())
}

/// Every record of a partition from its start up to its high watermark now: (offset,
/// payload). For checks and tools, not the order path.
pub fn read_partition(
    cfg: &ClusterConfig,
    topic: &str,
    partition: i32,
) -> Result<Vec<(u64, Vec<u8>)>, String> {
    use rdkafka::message::Message;
    let c = reader(cfg, &format!("read-{topic}-{partition}"))?;
    let t = Duration::from_secs(10);
    let (low, high) = watermarks(&c, topic, partition, t)?;
    let mut out = Vec::with_capacity((high - low).max(0) as usize);
    if high <= low {
        return Ok(out);
    }
    assign(&c, topic, &[(partition, Offset::Offset(low))])?;
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    let mut next = low;
    while next < high {
        if std::time::Instant::now() > deadline {
            return Err(format!(
                "{topic}/{partition}: read up to {next} of {high} in 120 s"
            ));
        }
        let Some(m) = c.poll(Duration::from_millis(200)) else {
            continue;
        };
        // An error is the client's news (a broker gone): it reads on from the replicas.
        let Ok(m) = m else {
            continue;
        };
        next = m.offset() + 1;
        if m.offset() < high {
            out.push((m.offset() as u64, m.payload().unwrap_or(&[]).to_vec()));
        }
    }
    Ok(out)
}
