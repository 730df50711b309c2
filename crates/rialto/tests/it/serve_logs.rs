//! What `rialto serve` tells a FIX team: the structured log on stderr (logons, session
//! Rejects, garbled input, logouts) and a session's message log file.

use fix::client::FixClient;
use std::ffi::OsStr;
use std::io::Write;
use std::net::TcpStream;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common;
use common::{serve, Served};

const T: Duration = Duration::from_secs(10);

const CONFIG: &str = r#"
listen = "127.0.0.1:0"
[market_data]
enabled = false
[[firms]]
name = "F1"
accounts = [1]
[[sessions]]
sender_comp_id = "LOGGED"
firm = "F1"
message_log = true
[[sessions]]
sender_comp_id = "QUIET"
firm = "F1"
"#;

/// Starts the server with `CONFIG` in `dir`, its stderr into `dir/stderr.log`.
fn start(dir: &Path) -> Served {
    let config = dir.join("rialto.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let data = dir.join("data");
    let args: [&OsStr; 4] = [
        "--config".as_ref(),
        config.as_os_str(),
        "--data-dir".as_ref(),
        data.as_os_str(),
    ];
    let err = std::fs::File::create(dir.join("stderr.log")).unwrap();
    serve(&args, Stdio::from(err), false)
}

/// Waits until `path` holds every one of `needles`; returns its text.
fn wait_for(path: &Path, needles: &[&str]) -> String {
    let deadline = Instant::now() + T;
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if needles.iter().all(|n| text.contains(n)) || Instant::now() > deadline {
            return text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_log_says_what_the_gateway_did_and_the_message_log_has_every_message() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(dir.path());
    let addr = server.addr;
    let mut c = FixClient::connect(addr, "LOGGED", "RIALTO", 1).unwrap();
    c.logon(30, true).unwrap();
    c.expect("A", T).unwrap();
    // A TestRequest without its TestReqID: a session Reject.
    c.send("1", &[]).unwrap();
    let (rej, _) = c.expect("3", T).unwrap();
    assert_eq!(rej.get(373), Some("1"));
    c.send("5", &[]).unwrap();
    c.expect("5", T).unwrap();
    // An unknown CompID, and garbage on another connection.
    let mut u = FixClient::connect(addr, "NOBODY", "RIALTO", 1).unwrap();
    u.logon(30, true).unwrap();
    u.expect("5", T).unwrap();
    let mut g = TcpStream::connect(addr).unwrap();
    g.write_all(b"8=FIX.4.4\x019=5\x0135=0\x0110=000\x01")
        .unwrap();

    let log = wait_for(
        &dir.path().join("stderr.log"),
        &[
            "logon",
            "session Reject sent",
            "logout",
            "logon refused",
            "garbled input dropped",
        ],
    );
    for (what, needle) in [
        ("the logon", "client=\"LOGGED\""),
        ("the reject's reason", "reason=1"),
        ("the reject's tag", "ref_tag=112"),
        ("the logout", "logout"),
        ("the refused logon", "sender_comp_id=NOBODY"),
        ("why it was refused", "unknown SenderCompID/TargetCompID"),
        ("the garbled input", "garbled input dropped"),
    ] {
        assert!(log.contains(needle), "{what}: {needle:?} not in\n{log}");
    }
    let messages = wait_for(
        &dir.path().join("data/messages/LOGGED-RIALTO.messages.log"),
        &["35=5"],
    );
    let lines: Vec<&str> = messages.lines().collect();
    let kinds: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| {
            let dir = l.split_whitespace().nth(1).unwrap();
            let t = l.split('\x01').find(|f| f.starts_with("35=")).unwrap_or(l);
            (dir, t)
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("in", "35=A"),
            ("out", "35=A"),
            ("in", "35=1"),
            ("out", "35=3"),
            ("in", "35=5"),
            ("out", "35=5"),
        ],
        "{messages}"
    );
    assert!(!dir
        .path()
        .join("data/messages/QUIET-RIALTO.messages.log")
        .exists());
    drop(server);
}
