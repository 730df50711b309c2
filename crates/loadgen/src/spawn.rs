//! A server child process for one benchmark run: `rialto serve` (or any command, e.g. the
//! QuickFIX/J reference exchange) on a free loopback port with a fresh temporary data
//! directory, stopped with SIGTERM (then SIGKILL) and cleaned up afterwards.
//!
//! Role: make a sweep one command, and give every run the same fresh start.
//!
//! Never: listens anywhere but 127.0.0.1; sleeps as synchronisation beyond polling for the
//! port with a deadline; leaves the child running (Drop kills it).

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What to start. `{port}`, `{md_port}`, `{http_port}`, `{dir}` and `{config}` in `args` are
/// replaced by the chosen port, a second and a third free port (market data, the REST API),
/// the temporary data directory and the path of `config` written into the temporary
/// directory.
#[derive(Clone, Debug)]
pub struct SpawnSpec {
    pub program: PathBuf,
    pub args: Vec<String>,
    pub ready_timeout: Duration,
    /// Append the child's output to this file when it stops (it is deleted with the
    /// temporary directory otherwise): the server's own account of the run, e.g. its event
    /// loop summary.
    pub keep_log: Option<PathBuf>,
    /// A configuration file's text (e.g. `rialto.toml` with API keys), written to
    /// `<temporary dir>/rialto.toml`, whose path replaces `{config}`.
    pub config: Option<String>,
}

impl SpawnSpec {
    /// `rialto serve` from the executable `rialto` with the given durability and idle mode
    /// (`park` or `spin`), its event loop pinned to `cpu` if given.
    pub fn rialto(exe: PathBuf, durability: &str, idle: &str, cpu: Option<usize>) -> SpawnSpec {
        let mut s = SpawnSpec::rialto_unpinned(exe, durability, idle);
        if let Some(c) = cpu {
            s.args.push("--cpu".into());
            s.args.push(c.to_string());
        }
        s
    }

    fn rialto_unpinned(exe: PathBuf, durability: &str, idle: &str) -> SpawnSpec {
        SpawnSpec {
            program: exe,
            args: vec![
                "serve".into(),
                "--listen".into(),
                "127.0.0.1:{port}".into(),
                "--market-data-listen".into(),
                "127.0.0.1:{md_port}".into(),
                "--data-dir".into(),
                "{dir}".into(),
                "--durability".into(),
                durability.into(),
                "--idle".into(),
                idle.into(),
            ],
            ready_timeout: Duration::from_secs(20),
            keep_log: None,
            config: None,
        }
    }

    /// This spec with the REST API served on `{http_port}` and `config` (API keys) given to
    /// `rialto serve --config`.
    pub fn with_http(mut self, config: String) -> SpawnSpec {
        self.args.extend(["--config".into(), "{config}".into()]);
        self.config = Some(config);
        self.with_http_listen()
    }

    /// This spec with the REST API (and its WebSocket) served on `{http_port}`.
    pub fn with_http_listen(mut self) -> SpawnSpec {
        self.args
            .extend(["--http-listen".into(), "127.0.0.1:{http_port}".into()]);
        self
    }

    /// A command line split on whitespace (`java -jar x.jar --port {port}`).
    pub fn from_command_line(line: &str) -> Result<SpawnSpec, String> {
        let mut parts = line.split_whitespace();
        let program = parts
            .next()
            .ok_or("the spawn command is empty")?
            .to_string();
        Ok(SpawnSpec {
            program: PathBuf::from(program),
            args: parts.map(str::to_string).collect(),
            ready_timeout: Duration::from_secs(60),
            keep_log: None,
            config: None,
        })
    }
}

/// A running child server.
pub struct SpawnedServer {
    child: Option<Child>,
    pub addr: SocketAddr,
    /// Where it serves market data, if its arguments named `{md_port}`.
    pub md_addr: Option<SocketAddr>,
    /// Where it serves the REST API, if its arguments named `{http_port}`.
    pub http_addr: Option<SocketAddr>,
    pub data_dir: tempfile::TempDir,
    log_path: PathBuf,
    keep_log: Option<PathBuf>,
}

/// A free port on 127.0.0.1 (bound and released; the child binds it right after).
pub fn free_port() -> Result<u16, String> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

impl SpawnedServer {
    pub fn start(spec: &SpawnSpec) -> Result<SpawnedServer, String> {
        let data_dir = tempfile::Builder::new()
            .prefix("rialto-bench-")
            .tempdir()
            .map_err(|e| format!("cannot create a temporary data dir: {e}"))?;
        let port = free_port()?;
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let mut taken = vec![port];
        let mut another = |placeholder: &str| -> Result<Option<u16>, String> {
            if !spec.args.iter().any(|a| a.contains(placeholder)) {
                return Ok(None);
            }
            let mut p = free_port()?;
            while taken.contains(&p) {
                p = free_port()?;
            }
            taken.push(p);
            Ok(Some(p))
        };
        let md_port = another("{md_port}")?;
        let http_port = another("{http_port}")?;
        let dir = data_dir.path().join("data");
        let config_path = data_dir.path().join("rialto.toml");
        if let Some(text) = &spec.config {
            std::fs::write(&config_path, text)
                .map_err(|e| format!("{}: {e}", config_path.display()))?;
        }
        let args: Vec<String> = spec
            .args
            .iter()
            .map(|a| {
                let mut a = a
                    .replace("{port}", &port.to_string())
                    .replace("{dir}", &dir.display().to_string());
                if let Some(p) = md_port {
                    a = a.replace("{md_port}", &p.to_string());
                }
                if let Some(p) = http_port {
                    a = a.replace("{http_port}", &p.to_string());
                }
                a.replace("{config}", &config_path.display().to_string())
            })
            .collect();
        let log_path = data_dir.path().join("server.log");
        let log =
            std::fs::File::create(&log_path).map_err(|e| format!("{}: {e}", log_path.display()))?;
        let log2 = log.try_clone().map_err(|e| e.to_string())?;
        // Its own process group: Ctrl-C in the terminal stops the bench (which then drains and
        // reports), not the server under it; the bench stops the server afterwards.
        let child = Command::new(&spec.program)
            .process_group(0)
            .args(&args)
            .current_dir(data_dir.path())
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(log2)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", spec.program.display()))?;
        let mut server = SpawnedServer {
            child: Some(child),
            addr,
            md_addr: md_port.map(|p| ([127, 0, 0, 1], p).into()),
            http_addr: http_port.map(|p| ([127, 0, 0, 1], p).into()),
            data_dir,
            log_path,
            keep_log: spec.keep_log.clone(),
        };
        let deadline = Instant::now() + spec.ready_timeout;
        // Ready when it accepts on its port and, if it serves market data or the REST API, on
        // those too (they bind after the order-entry listener).
        let accepts =
            |a: &SocketAddr| TcpStream::connect_timeout(a, Duration::from_millis(200)).is_ok();
        loop {
            if accepts(&addr)
                && server.md_addr.as_ref().is_none_or(accepts)
                && server.http_addr.as_ref().is_none_or(accepts)
            {
                return Ok(server);
            }
            if let Some(c) = server.child.as_mut() {
                if let Ok(Some(status)) = c.try_wait() {
                    return Err(format!(
                        "{} exited ({status}) before listening on {addr}: {}",
                        spec.program.display(),
                        server.log_tail()
                    ));
                }
            }
            if Instant::now() > deadline {
                return Err(format!(
                    "{} did not listen on {addr} within {:?}: {}",
                    spec.program.display(),
                    spec.ready_timeout,
                    server.log_tail()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The last lines of the child's output.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(&self.log_path).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(5)..].join(" | ")
    }

    /// SIGTERM, wait up to 20 s for a clean stop, then SIGKILL. Returns the child's output tail
    /// if it did not stop cleanly. The output goes to `keep_log` if the spec named one.
    pub fn stop(mut self) -> Result<(), String> {
        let r = self.stop_child();
        if let Some(keep) = &self.keep_log {
            let text = std::fs::read(&self.log_path).unwrap_or_default();
            let appended = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(keep)
                .and_then(|mut f| std::io::Write::write_all(&mut f, &text));
            if let Err(e) = appended {
                return Err(format!(
                    "cannot keep the server log in {}: {e}",
                    keep.display()
                ));
            }
        }
        r
    }

    fn stop_child(&mut self) -> Result<(), String> {
        let Some(mut child) = self.child.take() else {
            return Ok(());
        };
        let pid = rustix::process::Pid::from_child(&child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            match child.try_wait() {
                Ok(Some(status)) if status.success() => return Ok(()),
                Ok(Some(status)) => {
                    return Err(format!("server exited with {status}: {}", self.log_tail()))
                }
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                _ => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(format!(
                        "server did not stop within 20 s, killed: {}",
                        self.log_tail()
                    ));
                }
            }
        }
    }
}

impl Drop for SpawnedServer {
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[cfg(test)]
mod tests;
