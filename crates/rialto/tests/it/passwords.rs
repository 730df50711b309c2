//! Passwords end to end with the real binary: `rialto passwd` makes the hash, `rialto serve`
//! warns of the sessions without one and checks Logons against it, and `rialto journal dump`
//! of the journal shows neither the right password nor a wrong guess, only the verdicts; no
//! file of the data directory after a clean stop (journal, snapshot) holds either.

use fix::client::{FixClient, Msg};
use std::ffi::OsStr;
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common;
use common::{serve, BIN};

const T: Duration = Duration::from_secs(20);
const PASSWORD: &str = "Tr0ub4dor&3-right";
const GUESS: &str = "guess-wrong-9431";

/// `rialto passwd` with `input` on stdin: its exit status, stdout and stderr.
fn passwd(input: &str) -> (bool, String, String) {
    let mut child = Command::new(BIN)
        .arg("passwd")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn logon(addr: std::net::SocketAddr, who: &str, password: &str) -> Msg {
    let mut c = FixClient::connect(addr, who, "RIALTO", 1).unwrap();
    c.send("A", &[(98, "0"), (108, "30"), (141, "Y"), (554, password)])
        .unwrap();
    loop {
        let m = c.recv(T).unwrap().expect("an answer to the Logon");
        if matches!(m.msg_type(), "A" | "5") {
            return m;
        }
    }
}

#[test]
fn passwords_never_reach_the_journal() {
    let (ok, hash, err) = passwd(&format!("{PASSWORD}\n"));
    assert!(ok, "{err}");
    let hash = hash.trim();
    assert!(hash.starts_with("$argon2id$v=19$"), "{hash}");
    assert!(!hash.contains(PASSWORD) && !err.contains(PASSWORD));
    let (ok, _, err) = passwd("");
    assert!(!ok && err.contains("empty password"), "{err}");

    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("rialto.toml");
    std::fs::write(
        &config,
        format!(
            r#"
listen = "127.0.0.1:0"
failed_logon_delay_ms = 1
failed_logon_delay_max_ms = 2
[market_data]
enabled = false
[[firms]]
name = "F"
accounts = [1]
[[sessions]]
sender_comp_id = "LOCKED"
firm = "F"
password_hash = "{hash}"
[[sessions]]
sender_comp_id = "OPEN1"
firm = "F"
[[sessions]]
sender_comp_id = "OPEN2"
firm = "F"
"#
        ),
    )
    .unwrap();
    let data = dir.path().join("data");
    let stderr_path = dir.path().join("stderr.log");
    let args: [&OsStr; 4] = [
        "--config".as_ref(),
        config.as_os_str(),
        "--data-dir".as_ref(),
        data.as_os_str(),
    ];
    let mut served = serve(
        &args,
        Stdio::from(std::fs::File::create(&stderr_path).unwrap()),
        false,
    );
    let wrong = logon(served.addr, "LOCKED", GUESS);
    assert_eq!(wrong.msg_type(), "5");
    assert_eq!(wrong.get(58), Some("logon refused"));
    let right = logon(served.addr, "LOCKED", PASSWORD);
    assert_eq!(right.msg_type(), "A", "{}", right.text());
    // A clean stop: its final snapshot is among the files searched below.
    served.stop();
    drop(served);

    let log = std::fs::read_to_string(&stderr_path).unwrap();
    let warning = log
        .lines()
        .find(|l| l.contains("sessions without a password"))
        .unwrap_or_else(|| panic!("no warning in {log}"));
    assert!(
        warning.contains("OPEN1 OPEN2") && !warning.contains("LOCKED"),
        "{warning}"
    );
    assert!(log.contains("wrong or missing Password"), "{log}");
    assert!(!log.contains(PASSWORD) && !log.contains(GUESS), "{log}");

    let out = Command::new(BIN)
        .args(["journal", "dump"])
        .arg(&data)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dump = String::from_utf8(out.stdout).unwrap();
    assert!(!dump.contains(PASSWORD), "the password is in the dump");
    assert!(!dump.contains(GUESS), "a wrong guess is in the dump");
    // Both Logons are there, each with its verdict.
    assert!(dump.contains("credentials: Refused"), "{dump}");
    assert!(dump.contains("credentials: Accepted"), "{dump}");
    // Nothing the data directory holds has either (the config copy has the hash only): the
    // journal, the snapshot and every other file.
    let files = walk(&data);
    assert!(
        files
            .iter()
            .any(|p| p.parent().is_some_and(|d| d.ends_with("snapshots"))
                && p.extension().is_some_and(|e| e == "snap")),
        "no snapshot to search: {files:?}"
    );
    for entry in files {
        let bytes = std::fs::read(&entry).unwrap();
        for secret in [PASSWORD, GUESS] {
            assert!(
                !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
                "{secret} in {}",
                entry.display()
            );
        }
    }
}

/// Every file under `dir`.
fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files.extend(walk(&p));
        } else {
            files.push(p);
        }
    }
    files
}
