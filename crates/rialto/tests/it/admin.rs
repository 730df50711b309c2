//! `rialto admin` against a running server: its token and `[[operators]]` entry, a halt, the
//! limits, the state, and clear errors for a missing token and an unknown firm.

use std::process::{Command, Output};
use std::sync::Arc;

fn admin(addr: &str, token_file: Option<&std::path::Path>, args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rialto"));
    c.env_remove("RIALTO_ADMIN_TOKEN")
        .args(["admin", "--http", addr]);
    if let Some(f) = token_file {
        c.arg("--token-file").arg(f);
    }
    c.args(args).output().expect("run rialto admin")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn an_operator_halts_sets_limits_and_reads_the_state_and_bad_requests_say_why() {
    let made = Command::new(env!("CARGO_BIN_EXE_rialto"))
        .args(["admin", "token", "--name", "ops-bob"])
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", text(&made.stderr));
    let out = text(&made.stdout);
    let token = out.lines().next().unwrap().to_string();
    let sha = out
        .lines()
        .find_map(|l| l.strip_prefix("sha256 = \""))
        .and_then(|l| l.strip_suffix('"'))
        .expect("an [[operators]] entry");
    assert!(out.contains("[[operators]]\nname = \"ops-bob\""), "{out}");

    let dir = tempfile::tempdir().unwrap();
    let toml = format!(
        "listen = \"127.0.0.1:0\"\nhttp_listen = \"127.0.0.1:0\"\norders_max = 4096\n\
         [[operators]]\nname = \"ops-bob\"\nsha256 = \"{sha}\"\n"
    );
    let mut cfg = server::Config::from_toml(&toml).unwrap();
    cfg.data_dir = dir.path().to_path_buf();
    let s = server::Server::start(cfg, Arc::new(|_: &str| {})).unwrap();
    let addr = s.http_addr().unwrap().to_string();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    let tf = Some(token_file.as_path());

    let o = admin(&addr, tf, &["status", "ACME", "halted"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["operator"], "ops-bob");
    assert_eq!(v["instrument"]["status"], "halted");

    let o = admin(
        &addr,
        tf,
        &[
            "limits",
            "ACME",
            "--band-bps",
            "500",
            "--reference-price",
            "100.00",
        ],
    );
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["instrument"]["band"], serde_json::json!(["95", "105"]));

    let o = admin(&addr, tf, &["state"]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["instruments"][0]["status"], "halted");
    assert_eq!(v["instruments"][1]["status"], "open");

    let o = admin(&addr, tf, &["kill", "--firm", "NOPE"]);
    assert!(!o.status.success());
    let e = text(&o.stderr);
    assert!(e.contains("404") && e.contains("unknown_firm"), "{e}");

    let o = admin(&addr, None, &["state"]);
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("RIALTO_ADMIN_TOKEN"),
        "{}",
        text(&o.stderr)
    );

    let wrong = dir.path().join("wrong");
    std::fs::write(&wrong, "rk_not_an_operator\n").unwrap();
    let o = admin(&addr, Some(&wrong), &["state"]);
    assert!(text(&o.stderr).contains("401"), "{}", text(&o.stderr));
    s.shutdown().unwrap();
}
