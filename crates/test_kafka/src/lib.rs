//! A throwaway Apache Kafka cluster for tests: 1 or 3 KRaft nodes (each a broker and a
//! controller) on free 127.0.0.1 ports, in a temporary directory; killed and removed on drop.
//!
//! Role: the tests' Kafka. `scripts/kafka.sh` is the one implementation of the nodes' settings,
//! start-up and readiness (docs/kafka.md): this crate picks the ports and the directory, runs
//! the script and holds the cluster. The jars come from Maven Central, resolved once per user
//! into `~/.cache/rialto/kafka-4.4.0/lib` (`RIALTO_KAFKA_LIB`; `.ci/run` resolves them before
//! the tests). Without Java 17+ (or Maven, while the jars are not resolved)
//! [`TestKafka::start`] panics with what to install: a test never skips for want of them.
//!
//! Nodes are named by their Kafka `node.id`, 1..=[`TestKafka::node_count`], as in the brokers'
//! own metadata (partition leaders, ISRs). A node costs about 350-420 MB of memory
//! (`-Xmx256m`) and 5-20 s to start, more on a busy machine.
//!
//! Never: a node listening beyond 127.0.0.1; a node outliving its test process (drop kills
//! them, and the script's `--owner` watchdog kills them within a second of the process's end
//! when it is itself killed); a Kafka client in this crate (tests bring their own).

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rustix::process::{kill_process, Pid, Signal};

/// How long a killed node may take to be gone.
const KILL_WAIT: Duration = Duration::from_secs(10);

/// How long nodes may take to start (the script's `--timeout`): a node is up in 5-20 s, but
/// a test machine running many test processes on 2 cores can make that a minute.
const START_TIMEOUT_S: &str = "180";

/// A running cluster.
pub struct TestKafka {
    script: PathBuf,
    /// Holds each node's properties, data, log and pid file; removed on drop.
    dir: tempfile::TempDir,
    nodes: usize,
    /// Node I's client port is `port_base + 2 (I - 1)`, its controller port the next one.
    port_base: u16,
}

impl TestKafka {
    /// Starts a cluster of `nodes` nodes, 1 or 3, and returns once every node serves (panics
    /// with the reason, and the end of the nodes' logs, if it cannot).
    ///
    /// Three nodes: topics are replicated on all three (`default.replication.factor=3`) and
    /// `min.insync.replicas=2`, so one node may be down. One node: nothing is replicated.
    pub fn start(nodes: usize) -> TestKafka {
        assert!(
            nodes == 1 || nodes == 3,
            "test_kafka: 1 or 3 nodes, not {nodes}"
        );
        resolve();
        let script = script();
        let dir = tempfile::Builder::new()
            .prefix("rialto-kafka-")
            .tempdir()
            .unwrap_or_else(|e| panic!("test_kafka: a temporary directory: {e}"));
        let dir_arg = dir.path().to_string_lossy().into_owned();
        let owner = std::process::id().to_string();
        let started = Instant::now();
        // Free ports are known free only until someone else binds them: a few tries (a node
        // that cannot bind its port exits, and the script says so at once).
        let mut last = String::new();
        for _ in 0..3 {
            let port_base = free_port_base(2 * nodes);
            let out = run(
                &script,
                &[
                    "start",
                    "--nodes",
                    &nodes.to_string(),
                    "--dir",
                    &dir_arg,
                    "--port-base",
                    &port_base.to_string(),
                    "--owner",
                    &owner,
                    "--timeout",
                    START_TIMEOUT_S,
                ],
            );
            match out {
                Ok(bootstrap) => {
                    let t = TestKafka {
                        script,
                        dir,
                        nodes,
                        port_base,
                    };
                    assert_eq!(
                        bootstrap.trim(),
                        t.bootstrap(),
                        "test_kafka: the script's bootstrap servers"
                    );
                    eprintln!(
                        "test_kafka: {nodes} node(s) serving at {} after {:.1} s",
                        t.bootstrap(),
                        started.elapsed().as_secs_f64()
                    );
                    return t;
                }
                Err(e) => {
                    eprintln!("test_kafka: a start failed (tried again on other ports): {e}");
                    last = e;
                }
            }
        }
        panic!("test_kafka: the cluster does not start: {last}");
    }

    /// The bootstrap servers, every node's: `127.0.0.1:P1,127.0.0.1:P2,...`.
    pub fn bootstrap(&self) -> String {
        (1..=self.nodes)
            .map(|n| format!("127.0.0.1:{}", self.port(n)))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// Node `node`'s client (PLAINTEXT) port on 127.0.0.1.
    pub fn port(&self, node: usize) -> u16 {
        self.check(node);
        self.port_base + 2 * (node as u16 - 1)
    }

    pub fn node_count(&self) -> usize {
        self.nodes
    }

    /// The cluster's directory: `nodeI.properties`, `nodeI.log`, `dataI/`.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The pid of node `node`'s JVM while it runs.
    pub fn pid(&self, node: usize) -> Option<u32> {
        self.check(node);
        let text = fs::read_to_string(self.dir.path().join(format!("node{node}.pid"))).ok()?;
        let pid = text.trim().parse().ok()?;
        self.is_node(pid, node).then_some(pid)
    }

    /// Kills node `node` (SIGKILL: no controlled shutdown) and returns once it is gone.
    pub fn kill(&mut self, node: usize) {
        self.check(node);
        let dir = self.dir.path().to_string_lossy().into_owned();
        run(
            &self.script,
            &["kill", "--dir", &dir, "--node", &node.to_string()],
        )
        .unwrap_or_else(|e| panic!("test_kafka: killing node {node}: {e}"));
    }

    /// Starts node `node` again on its ports and data (stopping it first if it runs) and
    /// returns once it serves.
    pub fn restart(&mut self, node: usize) {
        self.check(node);
        let dir = self.dir.path().to_string_lossy().into_owned();
        let started = Instant::now();
        run(
            &self.script,
            &[
                "restart",
                "--dir",
                &dir,
                "--node",
                &node.to_string(),
                "--timeout",
                START_TIMEOUT_S,
            ],
        )
        .unwrap_or_else(|e| panic!("test_kafka: restarting node {node}: {e}"));
        eprintln!(
            "test_kafka: node {node} serving again after {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }

    /// Runs Kafka's TopicCommand (`kafka-topics.sh`) against the cluster with `args` (for
    /// example `--create --topic t --partitions 2`) and returns what it printed; panics if it
    /// fails. Each call starts a JVM: a few seconds.
    pub fn topics(&self, args: &[&str]) -> String {
        let bootstrap = self.bootstrap();
        let mut all = vec!["topics", "--bootstrap", &bootstrap];
        all.extend_from_slice(args);
        run(&self.script, &all).unwrap_or_else(|e| panic!("test_kafka: kafka-topics {args:?}: {e}"))
    }

    fn check(&self, node: usize) {
        assert!(
            (1..=self.nodes).contains(&node),
            "test_kafka: no node {node} (nodes are 1..={})",
            self.nodes
        );
    }

    /// Whether `pid` is node `node`'s JVM (not a process that reused a dead node's pid).
    fn is_node(&self, pid: u32, node: usize) -> bool {
        let props = self.dir.path().join(format!("node{node}.properties"));
        fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
            let args: Vec<&[u8]> = c.split(|b| *b == 0).collect();
            args.windows(2)
                .any(|w| w[0] == b"kafka.Kafka" && w[1] == props.as_os_str().as_encoded_bytes())
        })
    }

    /// Whether node `node`'s JVM, pid `pid`, has ended: no such process, a zombie whose threads
    /// have all ended (its files, the listening sockets among them, are closed only then: its
    /// command line is empty from the moment its first thread exits), or another process that
    /// got the pid.
    fn ended(&self, pid: u32, node: usize) -> bool {
        let Ok(status) = fs::read_to_string(format!("/proc/{pid}/status")) else {
            return true;
        };
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(str::trim)
                .unwrap_or_default()
                .to_string()
        };
        if field("State:").starts_with('Z') && field("Threads:") == "1" {
            return true;
        }
        let cmdline = fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        !cmdline.is_empty() && !self.is_node(pid, node)
    }

    /// The end of each node's log (shown when a test fails with the cluster up).
    fn log_tails(&self) -> String {
        let mut s = String::new();
        for node in 1..=self.nodes {
            let path = self.dir.path().join(format!("node{node}.log"));
            let text = fs::read_to_string(&path).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            s.push_str(&format!("--- the end of {}:\n", path.display()));
            for line in &lines[lines.len().saturating_sub(15)..] {
                s.push_str(line);
                s.push('\n');
            }
        }
        s
    }
}

impl Drop for TestKafka {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprint!("{}", self.log_tails());
        }
        // Nothing to keep: SIGKILL every node, then wait until they are gone, so that no JVM
        // outlives the cluster and the directory can go.
        let pids: Vec<(usize, u32)> = (1..=self.nodes)
            .filter_map(|n| self.pid(n).map(|p| (n, p)))
            .collect();
        for &(_, pid) in &pids {
            if let Some(p) = Pid::from_raw(pid as i32) {
                let _ = kill_process(p, Signal::KILL);
            }
        }
        let deadline = Instant::now() + KILL_WAIT;
        while pids.iter().any(|&(n, p)| !self.ended(p, n)) {
            if Instant::now() > deadline {
                eprintln!("test_kafka: nodes still running {KILL_WAIT:?} after SIGKILL");
                break;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        // The TempDir removes the directory.
    }
}

/// `scripts/kafka.sh` of this checkout.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/kafka.sh")
}

/// Resolves the jars (`scripts/kafka.sh resolve`: nothing to do once they are cached), once
/// per process, and returns their folder.
pub fn resolve() -> &'static Path {
    static LIB: OnceLock<PathBuf> = OnceLock::new();
    LIB.get_or_init(|| {
        let out = run(&script(), &["resolve"]).unwrap_or_else(|e| {
            panic!(
                "test_kafka: resolving Kafka's jars (Java 17+ and Maven, e.g. Debian's \
                 openjdk-17-jdk-headless and maven, as .ci/run installs): {e}"
            )
        });
        PathBuf::from(out.trim())
    })
}

/// The nodes' JIT and GC (`RIALTO_KAFKA_JVM`, unless set): the client compiler only and the
/// serial collector. A test's node lives for seconds, mostly starting: about half the CPU of
/// the G1 and C2 defaults (a three-node failover test: 70 CPU-s against 137).
const TEST_JVM: &str = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";

/// A command running `script`, whose nodes get the tests' JVM options unless
/// `RIALTO_KAFKA_JVM` is set.
pub fn script_command(script: &Path) -> Command {
    let mut cmd = Command::new(script);
    if std::env::var_os("RIALTO_KAFKA_JVM").is_none() {
        cmd.env("RIALTO_KAFKA_JVM", TEST_JVM);
    }
    cmd
}

/// Runs the script with `args`: its standard output, or what went wrong with its standard
/// error.
fn run(script: &Path, args: &[&str]) -> Result<String, String> {
    let out = script_command(script)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("running {}: {e}", script.display()))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "{} {}: {}\n{}",
            script.display(),
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// The first of `count` consecutive ports that are free on 127.0.0.1, below the ephemeral range
/// (where the system picks outgoing connections' ports, which could take a killed node's port
/// before it restarts), picked at random so that concurrent tests rarely try the same.
pub fn free_port_base(count: usize) -> u16 {
    const LOW: u32 = 20_000;
    static CALLS: AtomicU32 = AtomicU32::new(0);
    let ephemeral_low = fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<u32>().ok())
        .unwrap_or(32_768);
    let high = if ephemeral_low > LOW + 1_000 {
        ephemeral_low
    } else {
        30_000
    };
    let span = high - LOW - count as u32;
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    // Never zero (xorshift would stay there).
    let mut x = (nanos ^ (std::process::id() << 12))
        ^ CALLS
            .fetch_add(1, Ordering::Relaxed)
            .wrapping_mul(0x9e37_79b9)
        | 1;
    for _ in 0..200 {
        // xorshift: a new candidate each try.
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        let base = (LOW + x % span) as u16;
        let free = (0..count as u16).all(|i| TcpListener::bind(("127.0.0.1", base + i)).is_ok());
        if free {
            return base;
        }
    }
    panic!("test_kafka: no {count} consecutive free ports on 127.0.0.1 in {LOW}..{high}");
}
