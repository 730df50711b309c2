//! End-to-end tests of the load generator and the demo through the real `rialto` binary:
//! `rialto serve` on an ephemeral loopback port with a temporary data dir, `bench fix` against
//! it (summary line parsed), `bench echo` (single session and FIX 4.2 -> 4.4 drop copy), a tiny
//! `bench sweep` and a bots x rate grid with repetitions, all with `--spawn-server`, short
//! `rialto demo` runs (with a data dir, and with a temporary one it must remove), `bench http`
//! with its own server (alone, and beside `bench fix`), `bench md` over FIX market data and over
//! the WebSocket, and `bench codec` (no sockets). Timing figures are never asserted; counts, formats and the order of
//! percentiles are.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn rialto(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rialto"))
        .args(args)
        .output()
        .expect("run rialto")
}

/// A fresh directory under the target dir, removed on drop.
struct TempDir(std::path::PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let p = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("rialto-loadgen-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The `key=value` pairs of the last line of stdout.
fn summary(out: &Output) -> Vec<(String, f64)> {
    let stdout = text(&out.stdout);
    let last = stdout.lines().last().unwrap_or_default().to_string();
    loadgen::stats::parse_summary_line(&last)
        .unwrap_or_else(|e| panic!("summary line {last:?}: {e}\nstdout:\n{stdout}"))
}

fn get(kv: &[(String, f64)], key: &str) -> f64 {
    kv.iter()
        .find(|(k, _)| k == key)
        .unwrap_or_else(|| panic!("{key} missing in {kv:?}"))
        .1
}

/// `rialto serve` on a free port (market data on another); killed on drop.
struct Serve {
    child: Child,
    port: u16,
    md_port: u16,
}

impl Serve {
    fn start(data_dir: &Path) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rialto"))
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--market-data-listen",
                "127.0.0.1:0",
                "--data-dir",
            ])
            .arg(data_dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start rialto serve");
        // The server prints "listening for FIX on 127.0.0.1:PORT ..." once it is ready.
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let deadline = Instant::now() + Duration::from_secs(30);
        let port_after = |line: &str, what: &str| -> Option<u16> {
            let rest = line.split(what).nth(1)?;
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        };
        let (mut port, mut md_port) = (None, None);
        while port.is_none() || md_port.is_none() {
            assert!(Instant::now() < deadline, "rialto serve did not start");
            let line = lines
                .next()
                .expect("rialto serve exited early")
                .expect("read");
            port = port.or(port_after(&line, "listening for FIX on 127.0.0.1:"));
            md_port = md_port.or(port_after(&line, "listening for market data on 127.0.0.1:"));
        }
        // Keep draining its output so it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines.by_ref() {});
        Serve {
            child,
            port: port.unwrap(),
            md_port: md_port.unwrap(),
        }
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn bench_fix_against_rialto_serve() {
    let dir = TempDir::new("fix");
    let server = Serve::start(&dir.path().join("data"));
    let port = server.port.to_string();
    let out = rialto(&[
        "bench",
        "fix",
        "--port",
        &port,
        "--bots",
        "4",
        "--rate",
        "250",
        "--duration",
        "2",
        "--warmup",
        "0.5",
        "--window",
        "20",
    ]);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "stderr:\n{stderr}");
    assert!(
        stdout.starts_with("Percentile : Microseconds : Event count\nMIN : "),
        "{stdout}"
    );
    for label in ["\n50.0% : ", "\n99.999999% : ", "\nMAX, TOTAL : "] {
        assert!(stdout.contains(label), "{label:?} missing:\n{stdout}");
    }
    // A progress line per second on stderr.
    assert!(stderr.contains("measuring"), "{stderr}");
    let kv = summary(&out);
    assert_eq!(get(&kv, "rate_offered"), 1000.0);
    // Sent at most at the offered rate; how close to it depends on how late a stalled host
    // makes the last sends (the report's arithmetic is checked against the schedule and the
    // send lag in `driver_against_gateway.rs`), so no wall-clock band here.
    let achieved = get(&kv, "rate_achieved");
    assert!(achieved > 0.0 && achieved <= 1050.0, "{kv:?}");
    assert!(get(&kv, "acks") > 0.0, "{kv:?}");
    assert!(get(&kv, "fills") > 0.0, "{kv:?}");
    assert_eq!(get(&kv, "errors"), 0.0, "{stdout}");
    assert_eq!(get(&kv, "shed"), 0.0);
    assert!(get(&kv, "p50_us") > 0.0 && get(&kv, "p99_us") >= get(&kv, "p50_us"));
    for key in ["p999_us", "rejects"] {
        get(&kv, key);
    }
}

/// `bench echo --scenario convert`: FIX 4.2 orders on `CLIENT1_42`, each answered by its FIX
/// 4.4 drop copy on `DROPCOPY1`; every order gets exactly one copy.
#[test]
fn bench_echo_convert_times_fix42_orders_to_their_fix44_drop_copies() {
    let out = rialto(&[
        "bench",
        "echo",
        "--scenario",
        "convert",
        "--spawn-server",
        "--rate",
        "500",
        "--count",
        "300",
    ]);
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    let kv = summary(&out);
    assert_eq!(
        get(&kv, "acks"),
        300.0,
        "each order acknowledged on its session"
    );
    assert_eq!(get(&kv, "errors"), 0.0, "no copy lost or doubled");
    assert!(get(&kv, "p50_us") > 0.0);
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("MAX, TOTAL") && stdout.contains(": 300\n"),
        "300 copies timed:\n{stdout}"
    );
    let out = rialto(&[
        "bench",
        "echo",
        "--scenario",
        "convert",
        "--spawn-server",
        "--count",
        "1",
        "--copy-sender-comp-id",
        "NOBODY",
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("NOBODY refused"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn bench_echo_and_sweep_spawn_their_server() {
    let out = rialto(&[
        "bench",
        "echo",
        "--spawn-server",
        "--rate",
        "1000",
        "--count",
        "1000",
    ]);
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    let kv = summary(&out);
    assert_eq!(get(&kv, "acks"), 1000.0);
    assert_eq!(get(&kv, "errors"), 0.0);
    assert_eq!(get(&kv, "fills"), 0.0);

    let dir = TempDir::new("sweep");
    let out_dir = dir.path().join("sweep");
    let out = rialto(&[
        "bench",
        "sweep",
        "--spawn-server",
        "--rates",
        "500,1k",
        "--bots",
        "2",
        "--duration",
        "1",
        "--warmup",
        "0.2",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    assert!(
        stdout
            .contains("| Load (K rps) | P50 (µs) | P90 (µs) | P99 (µs) | P999 (µs) | P9999 (µs) |"),
        "{stdout}"
    );
    assert!(stdout.contains("knee: "), "{stdout}");
    let csv = std::fs::read_to_string(out_dir.join("sweep.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.lines().nth(1).unwrap().starts_with("500,"), "{csv}");
    assert!(csv.lines().nth(2).unwrap().starts_with("1000,"), "{csv}");
    let svg = std::fs::read_to_string(out_dir.join("sweep.svg")).unwrap();
    assert!(svg.starts_with("<?xml") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("data-name=\"P99\""));
    // The CSV reads back into a comparison chart.
    let chart = out_dir.join("compare.svg");
    let csv_arg = format!("run A={}", out_dir.join("sweep.csv").display());
    let out = rialto(&[
        "bench",
        "chart",
        "--csv",
        &csv_arg,
        "--percentiles",
        "p50,p999",
        "--out",
        chart.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    let svg = std::fs::read_to_string(&chart).unwrap();
    assert!(svg.contains("data-name=\"run A P50\"") && svg.contains("data-name=\"run A P999\""));
    // A bots x rate grid with repetitions: a table per bots count, medians, a bots column.
    let grid_dir = dir.path().join("grid");
    let out = rialto(&[
        "bench",
        "sweep",
        "--spawn-server",
        "--rates",
        "1k",
        "--bots",
        "1,2",
        "--repeat",
        "2",
        "--duration",
        "0.3",
        "--warmup",
        "0.1",
        "--out",
        grid_dir.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    // Four runs, each with its own summary line.
    assert_eq!(stdout.matches("rate_offered=1000 ").count(), 4, "{stdout}");
    assert!(
        stdout.contains("### 1 bot\n") && stdout.contains("### 2 bots\n"),
        "{stdout}"
    );
    assert_eq!(
        stdout.matches("Each row: median over 2 runs").count(),
        2,
        "{stdout}"
    );
    let csv = std::fs::read_to_string(grid_dir.join("sweep.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].ends_with(",bots,runs,steal_ms"), "{csv}");
    // Bots, runs, then the host's steal time (empty only where the kernel does not report it).
    assert!(
        lines[1].contains(",1,2,") && lines[2].contains(",2,2,"),
        "{csv}"
    );
    let svg = std::fs::read_to_string(grid_dir.join("sweep.svg")).unwrap();
    assert!(svg.contains("data-name=\"1 bot P99\"") && svg.contains("data-name=\"2 bots P99\""));
    // bench fix takes one bots count.
    let out = rialto(&["bench", "fix", "--bots", "1,2", "--port", "1"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("takes one count"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn bench_http_spawns_its_server_and_its_orders_are_answered() {
    let out = rialto(&[
        "bench",
        "http",
        "--spawn-server",
        "--connections",
        "3",
        "--rate",
        "300",
        "--duration",
        "1.5",
        "--warmup",
        "0.3",
        "--window",
        "10",
    ]);
    let stdout = text(&out.stdout);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "stderr:\n{stderr}");
    assert!(
        stdout.starts_with("Percentile : Microseconds : Event count\nMIN : "),
        "{stdout}"
    );
    assert!(stdout.contains("\n99.999999% : "), "{stdout}");
    assert!(stderr.contains("measuring"), "{stderr}");
    let kv = summary(&out);
    assert_eq!(get(&kv, "rate_offered"), 300.0);
    assert_eq!(get(&kv, "connections"), 3.0);
    // New orders answered 201, and nothing answered 5xx or lost.
    assert!(get(&kv, "created") > 0.0, "{stdout}");
    assert!(get(&kv, "ok") >= get(&kv, "created"), "{stdout}");
    assert_eq!(get(&kv, "errors"), 0.0, "{stdout}");
    assert_eq!(get(&kv, "shed"), 0.0, "{stdout}");
    assert!(get(&kv, "p50_us") > 0.0 && get(&kv, "p99_us") >= get(&kv, "p50_us"));
    let achieved = get(&kv, "rate_achieved");
    assert!(achieved > 0.0 && achieved <= 315.0, "{kv:?}");

    // Beside bench fix at the same rate: both tables, then one line with both.
    let out = rialto(&[
        "bench",
        "http",
        "--spawn-server",
        "--with-fix",
        "--connections",
        "2",
        "--rate",
        "200",
        "--duration",
        "0.5",
        "--warmup",
        "0.2",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    assert!(
        stdout.contains("## round 1: REST\n") && stdout.contains("## round 1: FIX\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("\n| REST | ") && stdout.contains("\n| FIX | "),
        "{stdout}"
    );
    let kv = summary(&out);
    assert_eq!(get(&kv, "rate_offered"), 200.0);
    assert_eq!(get(&kv, "rest_errors"), 0.0, "{stdout}");
    assert_eq!(get(&kv, "fix_errors"), 0.0, "{stdout}");
    assert!(
        get(&kv, "rest_ok") > 0.0 && get(&kv, "fix_ok") > 0.0,
        "{stdout}"
    );
    assert!(get(&kv, "rest_p50_us") > 0.0 && get(&kv, "fix_p50_us") > 0.0);

    // Against a server of one's own it needs the keys.
    let out = rialto(&["bench", "http", "--port", "1"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--token-file"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn demo_shows_live_stats_and_a_summary() {
    let dir = TempDir::new("demo");
    let data = dir.path().join("demo");
    let out = rialto(&[
        "demo",
        "--duration",
        "2.5",
        "--rate",
        "400",
        "--listen",
        "127.0.0.1:0",
        "--data-dir",
        data.to_str().unwrap(),
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    assert!(stdout.contains("orders in"), "{stdout}");
    assert!(stdout.contains("ack latency P50"), "{stdout}");
    for sym in ["ACME", "BOLT", "CRNK"] {
        assert!(stdout.contains(sym), "{stdout}");
    }
    assert!(stdout.contains("Rialto demo stopped after"), "{stdout}");
    // Its top of book comes from the exchange's market-data feed, and it says how busy that is.
    assert!(stdout.contains("from the market-data feed"), "{stdout}");
    assert!(stdout.contains("market data: 1 subscribers"), "{stdout}");
    assert!(stdout.contains("Percentile : Microseconds : Event count"));
    assert!(stdout.contains(&format!("journal: {}", data.join("journal").display())));
    assert!(stdout.contains("errors 0"), "{stdout}");
    // Rejects, if any, are explained by reason, and the reasons add up to the count.
    let rejects = demo_rejects(&stdout);
    if rejects > 0 {
        let by_reason = stdout
            .split("rejects by reason (the exchange's Text, tag 58):\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{rejects} rejects without reasons:\n{stdout}"));
        let counted: u64 = by_reason
            .lines()
            .take_while(|l| l.starts_with("  "))
            .map(|l| {
                l.rsplit(": ")
                    .next()
                    .unwrap()
                    .replace(',', "")
                    .parse::<u64>()
                    .unwrap()
            })
            .sum();
        assert_eq!(counted, rejects, "{stdout}");
    }
    // The journal the demo left is intact and replays.
    let verify = rialto(&["journal", "verify", data.to_str().unwrap()]);
    assert!(
        verify.status.success(),
        "journal verify:\n{}{}",
        text(&verify.stdout),
        text(&verify.stderr)
    );
}

/// The reject count of the demo's final summary line.
fn demo_rejects(stdout: &str) -> u64 {
    let line = stdout
        .lines()
        .find(|l| l.starts_with("orders sent "))
        .unwrap_or_else(|| panic!("no summary line:\n{stdout}"));
    let n = line
        .split(", rejects ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .unwrap_or_else(|| panic!("no reject count in {line:?}"));
    n.parse()
        .unwrap_or_else(|_| panic!("reject count {n:?} in {line:?}"))
}

#[test]
fn demo_removes_its_temporary_journal() {
    // The demo's temporary directory goes where TMPDIR says: a directory of this test's own.
    let dir = TempDir::new("demo-tmp");
    let out = Command::new(env!("CARGO_BIN_EXE_rialto"))
        .args([
            "demo",
            "--duration",
            "1",
            "--rate",
            "200",
            "--listen",
            "127.0.0.1:0",
        ])
        .env("TMPDIR", dir.path())
        .output()
        .expect("run rialto demo");
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    assert!(stdout.contains("Rialto demo stopped after"), "{stdout}");
    let made = stdout
        .lines()
        .find_map(|l| l.split("journal in ").nth(1))
        .and_then(|rest| rest.split(", a temporary directory").next())
        .unwrap_or_else(|| panic!("no journal location:\n{stdout}"));
    assert!(
        Path::new(made).starts_with(dir.path()),
        "{made} is not under TMPDIR"
    );
    assert!(
        stdout.contains(&format!("the temporary {made} is removed")),
        "{stdout}"
    );
    assert!(!Path::new(made).exists(), "{made} is left behind");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

#[test]
fn book_draws_a_live_ladder_from_the_feed_and_refuses_an_unknown_symbol() {
    let dir = TempDir::new("book");
    let server = Serve::start(&dir.path().join("data"));
    let md = format!("127.0.0.1:{}", server.md_port);
    // Some resting orders and a trade, from bench fix's bots.
    let port = server.port.to_string();
    let out = rialto(&[
        "bench",
        "fix",
        "--port",
        &port,
        "--bots",
        "2",
        "--rate",
        "200",
        "--duration",
        "1",
        "--warmup",
        "0",
        "--window",
        "20",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = rialto(&["book", "ACME", "--connect", &md, "--once"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    assert!(stdout.contains("ACME  RptSeq "), "{stdout}");
    assert!(stdout.contains("bid size"), "{stdout}");
    let rpt: u64 = stdout
        .split("RptSeq ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no RptSeq in {stdout}"));
    assert!(rpt > 0, "{stdout}");
    let out = rialto(&[
        "book",
        "NOPE",
        "--connect",
        &md,
        "--once",
        "--sender",
        "MD2",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("unknown symbol NOPE"),
        "{}",
        text(&out.stderr)
    );
    let out = rialto(&[
        "book",
        "ACME",
        "--connect",
        &md,
        "--once",
        "--sender",
        "BOGUS",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("logon refused"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn bench_md_runs_with_and_without_subscribers() {
    let out = rialto(&[
        "bench",
        "md",
        "--spawn-server",
        "--bots",
        "2",
        "--rate",
        "300",
        "--duration",
        "1",
        "--warmup",
        "0.2",
        "--window",
        "20",
        "--subscribers",
        "0,2",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    assert!(
        stdout.starts_with("round subscribers order_p50"),
        "{stdout}"
    );
    let line = |n: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("subscribers={n} ")))
            .unwrap_or_else(|| panic!("no summary for {n}:\n{stdout}"))
            .to_string()
    };
    let two = loadgen::stats::parse_summary_line(&line("2")).unwrap();
    let trades = get(&two, "trades");
    assert!(trades > 0.0, "{stdout}");
    // Every trade reached both subscribers and was matched to its fills.
    assert_eq!(get(&two, "matched"), 2.0 * trades, "{stdout}");
    assert_eq!(get(&two, "dropped"), 0.0, "{stdout}");
    assert_eq!(get(&two, "synced"), 2.0, "{stdout}");
    assert_eq!(get(&two, "mismatched"), 0.0, "{stdout}");
    assert_eq!(get(&two, "undecodable"), 0.0, "{stdout}");
    assert!(line("0").contains("update_p50_us=-"), "{stdout}");
}

#[test]
fn bench_md_over_websocket_matches_every_trade_to_an_update() {
    let out = rialto(&[
        "bench",
        "md",
        "--transport",
        "ws",
        "--spawn-server",
        "--bots",
        "2",
        "--rate",
        "300",
        "--duration",
        "1",
        "--warmup",
        "0.2",
        "--window",
        "20",
        "--subscribers",
        "0,3",
    ]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("over ws at 127.0.0.1:"),
        "{}",
        text(&out.stderr)
    );
    let line = |n: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(&format!("subscribers={n} ")))
            .unwrap_or_else(|| panic!("no summary for {n}:\n{stdout}"))
            .to_string()
    };
    let three = loadgen::stats::parse_summary_line(&line("3")).unwrap();
    let trades = get(&three, "trades");
    assert!(trades > 0.0, "{stdout}");
    // Every subscriber had every book's snapshot, and every trade reached each of them, matched
    // to its fills and timed by a book message.
    assert_eq!(get(&three, "synced"), 3.0, "{stdout}");
    assert_eq!(get(&three, "matched"), 3.0 * trades, "{stdout}");
    assert_eq!(get(&three, "dropped"), 0.0, "{stdout}");
    assert_eq!(get(&three, "mismatched"), 0.0, "{stdout}");
    assert_eq!(get(&three, "undecodable"), 0.0, "{stdout}");
    // Timed both ways (read to read, and by the kernel's receive stamps).
    assert!(
        get(&three, "update_p50_us") <= get(&three, "update_p99_us"),
        "{stdout}"
    );
    assert!(
        get(&three, "arrival_p50_us") <= get(&three, "arrival_p99_us"),
        "{stdout}"
    );
    assert!(line("0").contains("update_p50_us=-"), "{stdout}");
}

/// The `key=value` numbers of a `codec ...` line after its four names.
fn codec_values(line: &str) -> Vec<(String, f64)> {
    let numbers: Vec<&str> = line.split_whitespace().skip(5).collect();
    loadgen::stats::parse_summary_line(&numbers.join(" "))
        .unwrap_or_else(|e| panic!("{line:?}: {e}"))
}

#[test]
fn bench_codec_prints_every_figure_per_round_and_the_medians() {
    let out = rialto(&[
        "bench",
        "codec",
        "--messages",
        "2000",
        "--warmup",
        "200",
        "--seconds",
        "0.05",
        "--rounds",
        "2",
    ]);
    assert!(out.status.success(), "stderr:\n{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let figures = [
        "figure=clock msg=none",
        "figure=send msg=NewOrderSingle",
        "figure=send msg=ExecutionReport",
        "figure=receive msg=ExecutionReport",
        "figure=receive msg=NewOrderSingle",
        "figure=receive_send msg=NewOrderSingle>ExecutionReport",
        "figure=throughput msg=NewOrderSingle>ExecutionReport",
    ];
    // Every figure with validation off, then every one but the clock with the FIX 4.4
    // dictionary's validation on.
    let per_round: Vec<(&str, &str)> = figures
        .iter()
        .map(|f| (*f, " validation=off "))
        .chain(figures[1..].iter().map(|f| (*f, " validation=on ")))
        .collect();
    let rows: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("codec impl=rialto "))
        .collect();
    assert_eq!(rows.len(), 2 * per_round.len(), "{stdout}");
    for (i, row) in rows.iter().enumerate() {
        let (figure, validation) = per_round[i % per_round.len()];
        assert!(row.contains(figure) && row.contains(validation), "{row}");
        let kv = codec_values(row);
        assert_eq!(get(&kv, "round"), (i / per_round.len() + 1) as f64, "{row}");
        if row.contains("figure=throughput") {
            // Whole batches of 256, for at least the time asked.
            assert_eq!(get(&kv, "count") % 256.0, 0.0, "{row}");
            assert!(
                get(&kv, "msgs_per_s") > 0.0 && get(&kv, "seconds") >= 0.05,
                "{row}"
            );
        } else {
            assert_eq!(get(&kv, "count"), 2000.0, "{row}");
            let (p50, p99, max) = (get(&kv, "p50_ns"), get(&kv, "p99_ns"), get(&kv, "max_ns"));
            assert!(1.0 <= p50 && p50 <= p99 && p99 <= max, "{row}");
        }
    }
    let medians: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("codec-median impl=rialto "))
        .collect();
    assert_eq!(medians.len(), per_round.len(), "{stdout}");
    assert!(!stdout.contains("codec-ratio"), "{stdout}");

    let out = rialto(&[
        "bench",
        "codec",
        "--messages",
        "10",
        "--with-quickfixj",
        "--quickfixj-jar",
        "/nonexistent/codecbench.jar",
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("mvn -q -B package"),
        "{}",
        text(&out.stderr)
    );
    let out = rialto(&["bench", "codec", "--seconds", "0"]);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("--seconds 0"),
        "{}",
        text(&out.stderr)
    );
}
