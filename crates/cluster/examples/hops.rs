//! Where an order's time goes in the cluster: for each outcome on the event log, the time
//! from its command's CreateTime (the gateway's send) to the outcome's (the engine's send).
//! `cargo run -p cluster --example hops -- BROKERS PREFIX SHARD`
use rdkafka::message::{Message, Timestamp};
use rdkafka::Offset;
use std::collections::HashMap;
use std::time::Duration;

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (brokers, prefix, shard): (&str, &str, i32) = (&a[1], &a[2], a[3].parse().unwrap());
    let text = format!(
        "[cluster]\nbrokers = \"{brokers}\"\ntopic_prefix = \"{prefix}\"\nreplication_factor = 1\nshards = [[\"ACME\", \"BOLT\"], [\"CRNK\"]]\n"
    );
    let c = server::Config::from_toml(&text).unwrap().cluster.unwrap();
    let read = |topic: String| {
        let r = cluster::kafka::reader(&c, &format!("hops-{topic}")).unwrap();
        cluster::kafka::assign(&r, &topic, &[(shard, Offset::Beginning)]).unwrap();
        let (_, high) =
            cluster::kafka::watermarks(&r, &topic, shard, Duration::from_secs(5)).unwrap();
        let mut v = Vec::new();
        while let Some(m) = r.poll(Duration::from_millis(1500)) {
            let m = m.unwrap();
            if m.offset() >= high {
                break;
            }
            let ts = match m.timestamp() {
                Timestamp::CreateTime(t) => t,
                _ => 0,
            };
            v.push((m.offset(), ts, m.payload().unwrap_or(&[]).to_vec()));
        }
        v
    };
    let cmds: HashMap<i64, i64> = read(c.commands_topic())
        .into_iter()
        .map(|(o, t, _)| (o, t))
        .collect();
    let mut d: Vec<i64> = read(c.events_topic())
        .into_iter()
        .filter_map(|(_, t, p)| {
            let off = exchange::wire::Outcome::position(&p)?.1 as i64;
            Some(t - cmds.get(&off)?)
        })
        .collect();
    d.sort();
    let n = d.len();
    println!(
        "{n} outcomes: command -> outcome ms p50 {} p90 {} p99 {} max {}",
        d[n / 2],
        d[n * 9 / 10],
        d[n * 99 / 100],
        d[n - 1]
    );
}
