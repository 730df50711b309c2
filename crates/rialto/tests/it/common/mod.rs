//! The real `rialto serve` in the integration tests: started, waited for until it listens, and
//! killed when the test lets go of it (a failing test leaves no server behind).
// Each test file compiles this module on its own and uses part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_rialto");

/// A running `rialto serve`.
pub struct Served {
    pub child: Child,
    /// What it printed up to its listening lines (the recovery line among them).
    pub lines: Vec<String>,
    pub addr: SocketAddr,
    /// The market-data address, when asked for.
    pub md: Option<SocketAddr>,
    /// The REST API's address, when asked for (`serve_http`).
    pub http: Option<SocketAddr>,
}

impl Served {
    /// Stops the server cleanly (SIGTERM: Logout to every session, drain, final snapshot) and
    /// waits up to 30 s for it to exit; panics unless it exits with success.
    pub fn stop(&mut self) {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .expect("run kill");
        assert!(sent.success(), "kill -TERM {pid} failed");
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for rialto serve") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "rialto serve did not stop within 30 s of SIGTERM"
            );
            std::thread::park_timeout(Duration::from_millis(10));
        };
        assert!(status.success(), "rialto serve stopped with {status}");
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The address printed after `what` on `line`, if there.
fn after(line: &str, what: &str) -> Option<SocketAddr> {
    line.split(what)
        .nth(1)?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Starts `rialto serve` with `args` and its stderr to `stderr`, and waits (up to 30 s) until
/// it listens for FIX, and for market data too with `want_md`. Its stdout is drained for as
/// long as it runs, so it never blocks on a full pipe.
pub fn serve(args: &[&std::ffi::OsStr], stderr: Stdio, want_md: bool) -> Served {
    serve_until(args, stderr, want_md, false)
}

/// `serve`, waiting for the REST API's address too.
pub fn serve_http(args: &[&std::ffi::OsStr], stderr: Stdio) -> Served {
    serve_until(args, stderr, false, true)
}

fn serve_until(args: &[&std::ffi::OsStr], stderr: Stdio, want_md: bool, want_http: bool) -> Served {
    let mut child = Command::new(BIN)
        .arg("serve")
        .args(args)
        // The log at its default level, whatever the environment says.
        .env_remove("RIALTO_LOG")
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("spawn rialto serve");
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            // Nobody listening any more is fine: keep draining.
            let _ = tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let (mut lines, mut addr, mut md, mut http) = (Vec::new(), None, None, None);
    while addr.is_none() || (want_md && md.is_none()) || (want_http && http.is_none()) {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(line) = rx.recv_timeout(left) else {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the server did not start; it printed {lines:?}");
        };
        addr = addr.or(after(&line, "listening for FIX on "));
        md = md.or(after(&line, "listening for market data on "));
        http = http.or(after(&line, "listening for HTTP on "));
        lines.push(line);
    }
    Served {
        child,
        lines,
        addr: addr.unwrap(),
        md,
        http,
    }
}
