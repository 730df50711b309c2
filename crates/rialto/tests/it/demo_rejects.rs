//! `rialto demo` shows no reject (it stages none): its simulated traders track their fills and
//! their orders' states and send only requests the exchange accepts, at the demo's default
//! rate and in two seeds; so do its REST traders, which place, move and cancel orders over the
//! REST API (whose address the demo prints first). Each run is bounded: the demo stops itself after 2 s, and a run that
//! has not printed its summary within 90 s is killed and fails.

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Runs `rialto demo` for `secs` seconds with `seed`; returns its stdout.
fn demo(secs: &str, seed: &str) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rialto"))
        .args([
            "demo",
            "--duration",
            secs,
            "--seed",
            seed,
            "--listen",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run rialto demo");
    let mut stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        let _ = tx.send(s);
    });
    let Ok(out) = rx.recv_timeout(Duration::from_secs(90)) else {
        let _ = child.kill();
        let _ = child.wait();
        panic!("rialto demo --duration {secs} still running after 90 s");
    };
    let status = child.wait().expect("wait for rialto demo");
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    assert!(status.success(), "rialto demo failed: {err}\n{out}");
    out
}

/// The value after `name ` in the summary line (`orders sent N (new N, cancel N, replace N),
/// ... trades N, rejects N, shed N, errors N`).
fn count(summary: &str, name: &str) -> u64 {
    let rest = summary
        .split(&format!("{name} "))
        .nth(1)
        .unwrap_or_else(|| panic!("no {name:?} in {summary:?}"));
    let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
    n.parse()
        .unwrap_or_else(|_| panic!("{name} {n:?} in {summary:?}"))
}

#[test]
fn the_demo_shows_no_unstaged_reject() {
    for seed in ["1", "7"] {
        let out = demo("2", seed);
        let summary = out
            .lines()
            .find(|l| l.starts_with("orders sent "))
            .unwrap_or_else(|| panic!("no summary line:\n{out}"));
        // The run traded and replaced quotes: the paths that could be rejected were taken.
        assert!(count(summary, "trades") > 0, "{summary}");
        assert!(count(summary, "replace") > 0, "{summary}");
        // The demo stages no reject: any would be a mistake of its traders (or the exchange's).
        // A cancel or replace that arrives after its order filled is a race with the market,
        // counted apart ("races with the market").
        assert_eq!(
            count(summary, "rejects"),
            0,
            "seed {seed}: rejects the demo did not stage:\n{out}"
        );
        assert_eq!(count(summary, "errors"), 0, "{out}");
        // The dashboard's address comes first, then the REST API's, with a key for the user,
        // on the same listener.
        let mut lines = out.lines();
        let (first, second) = (
            lines.next().unwrap_or_default(),
            lines.next().unwrap_or_default(),
        );
        let page = first
            .strip_prefix("Dashboard: open ")
            .and_then(|l| l.strip_suffix("/ in a browser"))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(page.starts_with("http://127.0.0.1:"), "{out}");
        assert!(
            second.starts_with(&format!("REST API on {page}/api/v1 (API key for you: rk_")),
            "{out}"
        );
        let rest = out
            .lines()
            .find(|l| l.starts_with("REST traders ("))
            .unwrap_or_else(|| panic!("no REST traders' line:\n{out}"));
        // They placed, moved and canceled orders, none refused.
        assert!(count(rest, "new") > 0, "{rest}");
        assert!(count(rest, "replace") > 0, "{rest}");
        assert!(count(rest, "cancel") > 0, "{rest}");
        assert_eq!(
            count(rest, "rejects"),
            0,
            "seed {seed}: REST rejects:\n{out}"
        );
        assert_eq!(count(rest, "shed"), 0, "{out}");
        assert_eq!(count(rest, "errors"), 0, "{out}");
    }
}
