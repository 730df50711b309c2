//! The throwaway Kafka cluster itself: one node serves topics; three nodes keep serving with
//! one killed, which comes back on its port; no JVM is left after drop, nor after the end of
//! the process that owns a cluster.

use std::net::TcpStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use test_kafka::TestKafka;

fn accepts(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_ok()
}

/// Whether a process runs with an argument inside `dir` (a node of that cluster).
fn runs_in(pid: u32, dir: &Path) -> bool {
    std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
        c.split(|b| *b == 0)
            .any(|a| a.starts_with(dir.as_os_str().as_encoded_bytes()))
    })
}

/// Drops the cluster and checks that its nodes and directory are gone.
fn drop_and_check_gone(kafka: TestKafka) {
    let pids: Vec<u32> = (1..=kafka.node_count())
        .map(|n| kafka.pid(n).expect("every node runs"))
        .collect();
    let dir = kafka.dir().to_path_buf();
    drop(kafka);
    for pid in pids {
        assert!(!runs_in(pid, &dir), "node pid {pid} outlives the drop");
    }
    assert!(!dir.exists(), "{} left behind", dir.display());
}

#[test]
fn one_node_serves_topics_and_leaves_nothing_behind() {
    let kafka = TestKafka::start(1);
    assert_eq!(kafka.node_count(), 1);
    assert_eq!(kafka.bootstrap(), format!("127.0.0.1:{}", kafka.port(1)));
    assert!(accepts(kafka.port(1)));
    kafka.topics(&["--create", "--topic", "orders", "--partitions", "2"]);
    let described = kafka.topics(&["--describe", "--topic", "orders"]);
    assert!(
        described.contains("PartitionCount: 2") && described.contains("ReplicationFactor: 1"),
        "{described}"
    );
    // Topics are never made by a client's mistake.
    let props = std::fs::read_to_string(kafka.dir().join("node1.properties")).unwrap();
    assert!(
        props.contains("\nauto.create.topics.enable=false\n"),
        "{props}"
    );
    drop_and_check_gone(kafka);
}

#[test]
fn three_nodes_serve_with_one_killed_and_take_it_back() {
    let mut kafka = TestKafka::start(3);
    let ports: Vec<u16> = (1..=3).map(|n| kafka.port(n)).collect();
    assert_eq!(
        kafka.bootstrap(),
        ports
            .iter()
            .map(|p| format!("127.0.0.1:{p}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    assert!(ports.iter().all(|p| accepts(*p)));
    kafka.topics(&["--create", "--topic", "commands", "--partitions", "3"]);

    kafka.kill(1);
    assert_eq!(kafka.pid(1), None);
    assert!(!accepts(ports[0]));
    assert!(accepts(ports[1]) && accepts(ports[2]));
    // Two of three: the controllers' quorum and the brokers still answer, and every topic has
    // three replicas of which two must acknowledge a write.
    let described = kafka.topics(&["--describe", "--topic", "commands"]);
    assert!(
        described.contains("PartitionCount: 3")
            && described.contains("ReplicationFactor: 3")
            && described.contains("min.insync.replicas=2"),
        "{described}"
    );

    kafka.restart(1);
    assert!(kafka.pid(1).is_some());
    assert!(ports.iter().all(|p| accepts(*p)));
    drop_and_check_gone(kafka);
}

/// A cluster whose owner process ends (killed, say, so that no drop runs) is killed by the
/// script's watchdog.
#[test]
fn nodes_end_with_their_owner_process() {
    let dir = tempfile::tempdir().unwrap();
    let mut owner = Command::new("sleep")
        .arg("600")
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let out = test_kafka::script_command(&test_kafka::script())
        .args(["start", "--nodes", "1", "--dir"])
        .arg(dir.path())
        .args([
            "--port-base",
            &test_kafka::free_port_base(2).to_string(),
            "--owner",
        ])
        .arg(owner.id().to_string())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    if !out.status.success() {
        owner.kill().unwrap();
        panic!("start: {}", String::from_utf8_lossy(&out.stderr));
    }
    let pid: u32 = std::fs::read_to_string(dir.path().join("node1.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(runs_in(pid, dir.path()));
    owner.kill().unwrap();
    owner.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while runs_in(pid, dir.path()) {
        assert!(Instant::now() < deadline, "node {pid} outlives its owner");
        std::thread::sleep(Duration::from_millis(50));
    }
}
