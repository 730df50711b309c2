//! Round trip through one partition: produce, read back; prints the latency percentiles.
//! `cargo run -p cluster --example ping -- BROKERS TOPIC N`
use rdkafka::message::Message;
use rdkafka::Offset;
use std::time::{Duration, Instant};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let (brokers, topic, n): (&str, &str, usize) = (&a[1], &a[2], a[3].parse().unwrap());
    let text = format!(
        "[cluster]\nbrokers = \"{brokers}\"\ntopic_prefix = \"{topic}\"\nreplication_factor = 1\nshards = [[\"ACME\", \"BOLT\", \"CRNK\"]]\n"
    );
    let cfg = server::Config::from_toml(&text).unwrap();
    let c = cfg.cluster.unwrap();
    cluster::kafka::ensure_topics(&c).unwrap();
    let p = cluster::kafka::producer(&c, "ping").unwrap();
    let r = cluster::kafka::reader(&c, "ping-r").unwrap();
    cluster::kafka::assign(&r, &c.commands_topic(), &[(0, Offset::End)]).unwrap();
    let _ = r.poll(Duration::from_millis(500));
    let mut lat = Vec::new();
    for _ in 0..n {
        let t = Instant::now();
        cluster::kafka::send(&p, &c.commands_topic(), 0, b"x").unwrap();
        loop {
            if let Some(m) = r.poll(Duration::from_millis(100)) {
                let _ = m.unwrap().offset();
                break;
            }
        }
        lat.push(t.elapsed());
        std::thread::sleep(Duration::from_millis(2));
    }
    lat.sort();
    println!(
        "p50 {:?} p90 {:?} p99 {:?}",
        lat[n / 2],
        lat[n * 9 / 10],
        lat[n * 99 / 100]
    );
}
