//! End-to-end tests of the real `rialto` binary: golden JSON output of `rialto match`, its
//! errors on malformed input, the instruments file, and the determinism of `bench engine`.
//! Timing figures are never asserted.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn rialto(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rialto"))
        .args(args)
        .output()
        .expect("run rialto")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).expect("utf-8 stdout")
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).expect("utf-8 stderr")
}

/// Writes `text` to a fresh file under the target dir and returns its path.
fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("rialto-cli-tests");
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write temp file");
    path
}

fn run_match(orders: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["match", "--orders", orders.to_str().expect("utf-8 path")];
    args.extend_from_slice(extra);
    rialto(&args)
}

#[test]
fn match_rules_golden() {
    let out = run_match(&fixture("rules.csv"), &[]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let expected = std::fs::read_to_string(fixture("rules.expected.jsonl")).unwrap();
    assert_eq!(stdout(&out), expected);
}

#[test]
fn match_reference_model_agrees_with_engine() {
    let engine = run_match(&fixture("rules.csv"), &[]);
    let reference = run_match(&fixture("rules.csv"), &["--reference"]);
    assert!(reference.status.success(), "stderr: {}", stderr(&reference));
    assert_eq!(stdout(&engine), stdout(&reference));
    let engine = run_match(&fixture("rules.csv"), &["--levels"]);
    let reference = run_match(&fixture("rules.csv"), &["--levels", "--reference"]);
    assert_eq!(stdout(&engine), stdout(&reference));
}

#[test]
fn match_example_runs() {
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/orders.csv");
    let out = run_match(&example, &[]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(r#"{"type":"trade","symbol":"ACME","price":10001,"qty":5,"maker_id":2,"taker_id":4,"taker_side":"B"}"#));
    assert!(text.ends_with(
        "{\"type\":\"book\",\"symbol\":\"ACME\",\"bids\":[],\"asks\":[[1,10002,2]]}\n\
         {\"type\":\"book\",\"symbol\":\"ZED\",\"bids\":[],\"asks\":[]}\n"
    ));
}

#[test]
fn match_levels_adds_only_level_lines() {
    let plain = stdout(&run_match(&fixture("rules.csv"), &[]));
    let with_levels = stdout(&run_match(&fixture("rules.csv"), &["--levels"]));
    let (levels, rest): (Vec<&str>, Vec<&str>) = with_levels
        .lines()
        .partition(|l| l.starts_with("{\"type\":\"level\""));
    assert_eq!(rest, plain.lines().collect::<Vec<_>>());
    assert!(levels.contains(
        &r#"{"type":"level","symbol":"ACME","side":"S","price":100,"qty":10,"orders":1}"#
    ));
    // A fully consumed level is reported with qty 0.
    assert!(levels.contains(
        &r#"{"type":"level","symbol":"ACME","side":"S","price":101,"qty":0,"orders":0}"#
    ));
}

#[test]
fn match_instruments_grid() {
    let out = run_match(
        &fixture("grid_orders.csv"),
        &[
            "--instruments",
            fixture("grid_instruments.csv").to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let expected = std::fs::read_to_string(fixture("grid.expected.jsonl")).unwrap();
    assert_eq!(stdout(&out), expected);
}

#[test]
fn match_malformed_line_names_line_and_field() {
    let path = fixture("malformed_price.csv");
    let out = run_match(&path, &[]);
    assert_eq!(out.status.code(), Some(1));
    // The file is checked completely before the first command runs: no event is printed.
    assert_eq!(stdout(&out), "");
    assert_eq!(
        stderr(&out),
        format!(
            "rialto: {}: line 7: field 'price': expected an integer, got \"10.5\"\n",
            path.display()
        )
    );
}

#[test]
fn match_errors_for_each_kind_of_bad_input() {
    let cases: &[(&str, &str)] = &[
        ("op,id\n", "line 1: expected the header"),
        (
            "op,id,account,symbol,side,type,tif,price,qty\nN,1,1,ACME,Q,L,GTC,1,1\n",
            "line 2: field 'side': expected B or S, got \"Q\"",
        ),
        (
            "op,id,account,symbol,side,type,tif,price,qty\nC,1,1,ACME,,,,,\nN,1,x,A,B,L,GTC,1,1\n",
            "line 3: field 'account': expected an integer, got \"x\"",
        ),
        (
            "op,id,account,symbol,side,type,tif,price,qty,stp\nN,1,1,A,B,L,GTC,1,1,oldest\n",
            "line 2: field 'stp': expected none, cancel_newest, cancel_oldest, cancel_both",
        ),
        (
            "op,id,account,symbol,side,type,tif,price,qty\nN,1,1,A,B,L,GTC,1\n",
            "line 2: expected 9 fields (op,id,account,symbol,side,type,tif,price,qty), got 8",
        ),
        (
            "op,id,account,symbol,side,type,tif,price,qty\nR,1,1,A,B,,,1,1\n",
            "line 2: field 'side': must be empty for a replace, got \"B\"",
        ),
    ];
    for (n, (text, message)) in cases.iter().enumerate() {
        let path = temp_file(&format!("bad{n}.csv"), text);
        let out = run_match(&path, &[]);
        assert_eq!(out.status.code(), Some(1), "case {n}");
        assert_eq!(stdout(&out), "", "case {n}");
        assert!(
            stderr(&out).contains(message),
            "case {n}: {:?} lacks {message:?}",
            stderr(&out)
        );
    }
}

#[test]
fn match_bad_instruments_and_missing_files() {
    let bad = temp_file(
        "bad_instruments.csv",
        "symbol,tick,lot\nACME,1,1\nZED,-1,1\n",
    );
    let out = run_match(
        &fixture("grid_orders.csv"),
        &["--instruments", bad.to_str().unwrap()],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("line 3: field 'tick': expected an integer, got \"-1\""));

    let out = run_match(Path::new("/nonexistent/orders.csv"), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).starts_with("rialto: /nonexistent/orders.csv: "));

    // Usage errors are clap's: exit code 2.
    assert_eq!(rialto(&["match"]).status.code(), Some(2));
}

/// Parses the last line of `bench engine` into (key, value) pairs.
fn bench_summary(out: &Output) -> Vec<(String, String)> {
    assert!(out.status.success(), "stderr: {}", stderr(out));
    let text = stdout(out);
    let last = text.lines().last().expect("some output");
    let pairs: Vec<(String, String)> = last
        .split(' ')
        .map(|kv| {
            let (k, v) = kv.split_once('=').expect("key=value");
            (k.to_owned(), v.to_owned())
        })
        .collect();
    let keys: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        keys,
        ["ops", "ops_per_s", "p50_ns", "p99_ns", "p999_ns", "hash"]
    );
    for (k, v) in &pairs[..5] {
        v.parse::<u64>()
            .unwrap_or_else(|_| panic!("{k}={v} is not an integer"));
    }
    assert_eq!(pairs[5].1.len(), 16);
    assert!(u64::from_str_radix(&pairs[5].1, 16).is_ok());
    pairs
}

fn value<'a>(pairs: &'a [(String, String)], key: &str) -> &'a str {
    &pairs.iter().find(|(k, _)| k == key).expect("key present").1
}

#[test]
fn bench_engine_is_deterministic() {
    let args = ["bench", "engine", "--ops", "20000", "--seed", "7"];
    let a = bench_summary(&rialto(&args));
    let b = bench_summary(&rialto(&args));
    assert_eq!(value(&a, "ops"), "20000");
    assert_eq!(value(&a, "hash"), value(&b, "hash"));
    let other = bench_summary(&rialto(&[
        "bench", "engine", "--ops", "20000", "--seed", "8",
    ]));
    assert_ne!(value(&a, "hash"), value(&other, "hash"));
}

#[test]
fn bench_engine_check_against_reference() {
    let out = rialto(&[
        "bench",
        "engine",
        "--ops",
        "20000",
        "--symbols",
        "3",
        "--resting",
        "500",
        "--check",
    ]);
    bench_summary(&out);
    assert!(stdout(&out).contains("check: the reference model produced the same"));
}

#[test]
fn bench_engine_preloaded_orders() {
    let out = rialto(&[
        "bench",
        "engine",
        "--orders",
        fixture("rules.csv").to_str().unwrap(),
        "--check",
    ]);
    let pairs = bench_summary(&out);
    assert_eq!(value(&pairs, "ops"), "33");
    let again = bench_summary(&rialto(&[
        "bench",
        "engine",
        "--orders",
        fixture("rules.csv").to_str().unwrap(),
    ]));
    assert_eq!(value(&pairs, "hash"), value(&again, "hash"));

    let out = rialto(&[
        "bench",
        "engine",
        "--orders",
        fixture("malformed_price.csv").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("line 7: field 'price'"));
}

#[test]
fn bench_engine_saved_stream_replays_to_the_same_hash() {
    let saved = temp_file("saved_stream.csv", "");
    let generated = bench_summary(&rialto(&[
        "bench",
        "engine",
        "--ops",
        "20000",
        "--symbols",
        "3",
        "--seed",
        "11",
        "--save-orders",
        saved.to_str().unwrap(),
    ]));
    // Symbol ids follow the instruments file, so the ids (and the hash) match the generator's.
    let instruments = temp_file(
        "saved_instruments.csv",
        "symbol,tick,lot\nSYM0,1,1\nSYM1,1,1\nSYM2,1,1\n",
    );
    let replayed = bench_summary(&rialto(&[
        "bench",
        "engine",
        "--orders",
        saved.to_str().unwrap(),
        "--instruments",
        instruments.to_str().unwrap(),
    ]));
    assert_eq!(value(&replayed, "ops"), "20000");
    assert_eq!(value(&generated, "hash"), value(&replayed, "hash"));
    // And the offline matcher accepts the same file.
    let out = run_match(&saved, &[]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(
        stdout(&out)
            .lines()
            .filter(|l| l.contains("\"book\""))
            .count(),
        3
    );
}

#[test]
fn bench_noise_reports_every_cpu_and_refuses_a_bad_duration() {
    let out = rialto(&["bench", "noise", "--seconds", "0.05"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let text = stdout(&out);
    let summary = text.lines().last().expect("a summary line");
    for key in [
        "noise_cpus=",
        "gaps_over_1ms_per_s=",
        "max_gap_us=",
        "lost_pct_max=",
    ] {
        assert!(summary.contains(key), "{key} missing in {summary:?}");
    }
    let cpus: usize = summary
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("noise_cpus="))
        .and_then(|v| v.parse().ok())
        .expect("noise_cpus=N");
    assert!(cpus >= 1);
    // One table row per CPU after the header row.
    assert_eq!(
        text.lines().filter(|l| l.starts_with("| ")).count(),
        cpus + 1
    );

    let bad = rialto(&["bench", "noise", "--seconds", "0"]);
    assert!(!bad.status.success());
    assert!(stderr(&bad).contains("--seconds 0"), "{}", stderr(&bad));
}

#[test]
fn serve_refuses_an_unknown_idle_mode() {
    let out = rialto(&["serve", "--idle", "nap", "--data-dir", "/nonexistent/never"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("--idle \"nap\": use park or spin"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn cluster_commands_say_what_is_wrong_with_their_configuration() {
    let single = temp_file("single.toml", "listen = \"127.0.0.1:0\"\n");
    let cluster = temp_file(
        "cluster.toml",
        "[cluster]\nbrokers = \"127.0.0.1:1\"\nshards = [[\"ACME\", \"BOLT\"], [\"CRNK\"]]\n",
    );
    let bad = temp_file(
        "cluster-bad.toml",
        "[cluster]\nbrokers = \"127.0.0.1:1\"\nshards = [[\"ACME\", \"BOLT\"], [\"CRNKX\"]]\n",
    );
    let path = |p: &PathBuf| p.to_str().unwrap().to_string();
    for (args, why) in [
        (
            vec![
                "engine",
                "--config",
                &path(&single),
                "--shard",
                "0",
                "--id",
                "a",
            ],
            "no [cluster] section",
        ),
        (
            vec![
                "engine",
                "--config",
                &path(&cluster),
                "--shard",
                "2",
                "--id",
                "a",
            ],
            "shard 2 is not configured: [cluster] has 2 shards",
        ),
        (
            vec![
                "engine",
                "--config",
                &path(&bad),
                "--shard",
                "0",
                "--id",
                "a",
            ],
            "\"CRNKX\" is not a configured instrument",
        ),
        (
            vec!["gateway", "--config", &path(&cluster)],
            "a gateway needs [cluster] gateway = N",
        ),
        (
            vec!["cluster", "status", "--config", &path(&single)],
            "no [cluster] section",
        ),
    ] {
        let o = rialto(&args);
        assert!(!o.status.success(), "{args:?} succeeded");
        assert!(stderr(&o).contains(why), "{args:?}: {}", stderr(&o));
    }
}
