//! A throwaway PostgreSQL cluster for tests: its own data directory in a temporary directory,
//! a server on a free 127.0.0.1 port, a non-superuser role `rialto` owning a database
//! `rialto`; stopped (`-m immediate`) and removed on drop.
//!
//! Role: the tests' PostgreSQL, from Debian's packages (`.ci/run` installs them). The binaries
//! are `$RIALTO_PG_BIN`, else `pg_config --bindir`, else the highest
//! `/usr/lib/postgresql/*/bin`, else those on PATH; missing, [`TestPostgres::start`] panics
//! with what to install (a test never skips for want of them).
//!
//! initdb costs two seconds of CPU, so it runs once per PostgreSQL version and user: its
//! cluster, with the role and database made, is kept as a template
//! (`rialto-pg-template<format>-<version>-<uid>`, made under another name and renamed into
//! place, so concurrent test processes never see half of one) and each cluster is a copy of
//! it. Both go in /dev/shm when it has room (creating a thousand files costs a second of a disk
//! file system's CPU, a tenth of that in memory), else in the temporary directory. A start
//! costs the copy and `pg_ctl start`: about a quarter of a second.
//!
//! As root (this machine and CI), initdb and postgres refuse to run: they run as the
//! `postgres` system user (`runuser`), which owns the cluster's directory.
//!
//! Never: a server listening beyond 127.0.0.1; fsync (`fsync = off`: a test cluster's data
//! does not outlive it).

use std::fs;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

pub use postgres;

/// The password of role `rialto` (in [`TestPostgres::url`], so that tests see it is never
/// shown; the cluster trusts every local connection anyway).
pub const PASSWORD: &str = "rialto-test-secret";

/// What a template holds (its role and database): part of its name, so that a template made
/// by another version of this crate is never used.
const TEMPLATE_FORMAT: u32 = 1;

/// How long `pg_ctl` waits for the server to start or stop.
const PG_CTL_WAIT_S: &str = "60";

/// A running (or stopped) throwaway cluster.
pub struct TestPostgres {
    pg: &'static Binaries,
    /// Holds `data/` and the server's log and socket; removed on drop.
    dir: tempfile::TempDir,
    port: u16,
    running: bool,
}

/// The PostgreSQL programs, and whom they run as.
struct Binaries {
    bin: PathBuf,
    /// Set when this process is root: the user initdb and postgres run as.
    run_as: Option<SystemUser>,
    /// Where clusters and the template go.
    scratch: PathBuf,
    /// The template cluster copied into each new one.
    template: PathBuf,
}

struct SystemUser {
    name: &'static str,
    uid: u32,
    gid: u32,
}

impl TestPostgres {
    /// Makes and starts a cluster (panics with the reason if it cannot).
    pub fn start() -> TestPostgres {
        let pg = binaries();
        let dir = tempfile::Builder::new()
            .prefix("rialto-pg-")
            .tempdir_in(&pg.scratch)
            .unwrap_or_else(|e| panic!("test_postgres: a temporary directory: {e}"));
        pg.give(dir.path());
        let data = dir.path().join("data");
        pg.run(
            Command::new("cp").arg("-a").arg(&pg.template).arg(&data),
            "copying the template cluster",
        );
        let mut t = TestPostgres {
            pg,
            dir,
            port: 0,
            running: false,
        };
        // A free port is known free only until someone else binds it: a few tries.
        let mut last = String::new();
        for _ in 0..3 {
            t.port = free_port();
            t.write_settings();
            match t.pg_ctl_start() {
                Ok(()) => {
                    t.running = true;
                    return t;
                }
                Err(e) => last = e,
            }
        }
        panic!("test_postgres: the server does not start: {last}");
    }

    /// The server's port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The database `rialto` as role `rialto` (not a superuser; owns the database).
    pub fn url(&self) -> String {
        self.database_url("rialto")
    }

    /// Database `name` as role `rialto`.
    pub fn database_url(&self, name: &str) -> String {
        format!(
            "postgres://rialto:{PASSWORD}@127.0.0.1:{}/{name}",
            self.port
        )
    }

    /// The database `postgres` as the superuser `postgres`.
    pub fn superuser_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// A connection as the superuser to database `postgres`.
    pub fn superuser_client(&self) -> postgres::Client {
        self.client_to("postgres")
    }

    /// A connection as the superuser to database `db`.
    pub fn client_to(&self, db: &str) -> postgres::Client {
        let url = format!("postgres://postgres@127.0.0.1:{}/{db}", self.port);
        postgres::Client::connect(&url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("test_postgres: connecting to {url}: {}", chain(&e)))
    }

    /// Runs `sql` (one or more statements) as the superuser in database `rialto`.
    pub fn exec_superuser(&self, sql: &str) {
        self.exec_in("rialto", sql);
    }

    /// Runs `sql` as the superuser in database `db`.
    pub fn exec_in(&self, db: &str, sql: &str) {
        self.client_to(db)
            .batch_execute(sql)
            .unwrap_or_else(|e| panic!("test_postgres: {sql:?} in {db}: {}", chain(&e)));
    }

    /// Creates another database owned by `rialto` and returns its URL (as `rialto`): one
    /// cluster serves several independent cases.
    pub fn create_database(&self, name: &str) -> String {
        self.exec_in(
            "postgres",
            &format!("CREATE DATABASE \"{name}\" OWNER rialto"),
        );
        self.database_url(name)
    }

    /// Stops the server (`-m fast`: sessions are ended, as in an administrator's restart); the
    /// data stays for [`TestPostgres::start_again`].
    pub fn stop(&mut self) {
        if self.running {
            self.pg_ctl_stop("fast")
                .unwrap_or_else(|e| panic!("test_postgres: stopping: {e}"));
            self.running = false;
        }
    }

    /// Starts the stopped server again, on the same port and data.
    pub fn start_again(&mut self) {
        if !self.running {
            self.pg_ctl_start()
                .unwrap_or_else(|e| panic!("test_postgres: starting again: {e}"));
            self.running = true;
        }
    }

    pub fn is_running(&self) -> bool {
        self.running
    }

    /// The cluster's directory (its `data/`, `postgres.log`, the socket).
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The server's settings: the port, loopback only, the socket in the cluster's directory,
    /// no fsync. Appended to `postgresql.conf` (the last setting wins), so a restart keeps them.
    fn write_settings(&self) {
        let conf = self.dir.path().join("data/postgresql.conf");
        let mut text = fs::read_to_string(&conf)
            .unwrap_or_else(|e| panic!("test_postgres: reading {}: {e}", conf.display()));
        text.push_str(&format!(
            "\n# test_postgres\nport = {}\nlisten_addresses = '127.0.0.1'\n\
             unix_socket_directories = '{}'\nfsync = off\nfull_page_writes = off\n",
            self.port,
            self.dir.path().display()
        ));
        fs::write(&conf, text)
            .unwrap_or_else(|e| panic!("test_postgres: writing {}: {e}", conf.display()));
    }

    fn pg_ctl_start(&self) -> Result<(), String> {
        let log = self.dir.path().join("postgres.log");
        let out = self.pg.output(
            Command::new(self.pg.bin.join("pg_ctl"))
                .arg("start")
                .arg("-w")
                .args(["-t", PG_CTL_WAIT_S])
                .arg("-D")
                .arg(self.dir.path().join("data"))
                .arg("-l")
                .arg(&log),
        );
        if out.status.success() {
            return Ok(());
        }
        let tail = fs::read_to_string(&log).unwrap_or_default();
        let tail: Vec<&str> = tail.lines().rev().take(10).collect();
        Err(format!(
            "pg_ctl start: {}; {}; the log ends: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim(),
            tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
        ))
    }

    fn pg_ctl_stop(&self, mode: &str) -> Result<(), String> {
        let out = self.pg.output(
            Command::new(self.pg.bin.join("pg_ctl"))
                .arg("stop")
                .arg("-w")
                .args(["-t", PG_CTL_WAIT_S, "-m", mode])
                .arg("-D")
                .arg(self.dir.path().join("data")),
        );
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "pg_ctl stop: {}; {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }
}

impl Drop for TestPostgres {
    fn drop(&mut self) {
        if self.running {
            // Nothing to keep: no checkpoint, no wait for sessions.
            if let Err(e) = self.pg_ctl_stop("immediate") {
                eprintln!("test_postgres: {e}");
            }
        }
        // The TempDir removes the directory (root may remove the postgres user's files; a
        // non-root user owns them).
    }
}

/// An error and its causes on one line (tokio-postgres's Display leaves the cause out).
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("test_postgres: a free port on 127.0.0.1: {e}"))
}

impl Binaries {
    /// Runs `cmd` (as the postgres user when root) and returns what it printed.
    fn output(&self, cmd: &mut Command) -> Output {
        let mut cmd = match &self.run_as {
            Some(u) => {
                let mut c = Command::new("runuser");
                c.args(["-u", u.name, "--"]).arg(cmd.get_program());
                c.args(cmd.get_args());
                c
            }
            None => {
                let mut c = Command::new(cmd.get_program());
                c.args(cmd.get_args());
                c
            }
        };
        // Somewhere the postgres user may enter (root's home is not).
        cmd.current_dir("/")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("test_postgres: running {:?}: {e}", cmd.get_program()))
    }

    /// Runs `cmd`; panics with its stderr if it fails.
    fn run(&self, cmd: &mut Command, what: &str) {
        let out = self.output(cmd);
        if !out.status.success() {
            panic!(
                "test_postgres: {what}: {:?} {:?}: {}; {}",
                cmd.get_program(),
                cmd.get_args().collect::<Vec<_>>(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
    }

    /// Gives directory `dir` to the user the server runs as.
    fn give(&self, dir: &Path) {
        if let Some(u) = &self.run_as {
            std::os::unix::fs::chown(dir, Some(u.uid), Some(u.gid)).unwrap_or_else(|e| {
                panic!("test_postgres: chown {} to {}: {e}", dir.display(), u.name)
            });
        }
    }
}

/// The binaries and the template, found and made once per process.
fn binaries() -> &'static Binaries {
    static BINARIES: OnceLock<Binaries> = OnceLock::new();
    BINARIES.get_or_init(|| {
        let bin = find_bin();
        let run_as = rustix::process::geteuid()
            .is_root()
            .then(|| system_user("postgres"));
        let mut pg = Binaries {
            bin,
            run_as,
            scratch: scratch(),
            template: PathBuf::new(),
        };
        pg.template = template(&pg);
        pg
    })
}

const NOT_FOUND: &str = "PostgreSQL's initdb not found: install Debian's postgresql package \
                         (.ci/run does) or set RIALTO_PG_BIN";

/// Where initdb, pg_ctl and postgres are.
fn find_bin() -> PathBuf {
    let has_initdb = |d: &Path| d.join("initdb").is_file();
    if let Some(d) = std::env::var_os("RIALTO_PG_BIN") {
        let d = PathBuf::from(d);
        if has_initdb(&d) {
            return d;
        }
        panic!("{NOT_FOUND} (RIALTO_PG_BIN={} has no initdb)", d.display());
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let d = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if out.status.success() && has_initdb(&d) {
            return d;
        }
    }
    // Debian installs each major version beside the others: the newest.
    let mut versions: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            let d = e.path().join("bin");
            has_initdb(&d).then_some((v, d))
        })
        .collect();
    versions.sort();
    if let Some((_, d)) = versions.pop() {
        return d;
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for d in std::env::split_paths(&path) {
        if has_initdb(&d) {
            return d;
        }
    }
    panic!("{NOT_FOUND}");
}

/// A system user's ids, from /etc/passwd.
fn system_user(name: &'static str) -> SystemUser {
    let passwd = fs::read_to_string("/etc/passwd").unwrap_or_default();
    for line in passwd.lines() {
        let f: Vec<&str> = line.split(':').collect();
        if f.len() > 3 && f[0] == name {
            if let (Ok(uid), Ok(gid)) = (f[2].parse(), f[3].parse()) {
                return SystemUser { name, uid, gid };
            }
        }
    }
    panic!(
        "test_postgres: running as root, where initdb and postgres refuse to run, and there is \
         no `{name}` user to run them as (Debian's postgresql package creates it)"
    );
}

/// The initdb'd template cluster of this PostgreSQL version and user, made if missing.
fn template(pg: &Binaries) -> PathBuf {
    let out = pg.output(Command::new(pg.bin.join("postgres")).arg("--version"));
    // "postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)": the version number (short: the
    // server's socket path, in the template's directory, must fit in 107 bytes).
    let text = String::from_utf8_lossy(&out.stdout);
    let version: String = text
        .split_whitespace()
        .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .unwrap_or_default()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '.')
        .collect();
    if !out.status.success() || version.is_empty() {
        panic!(
            "test_postgres: {}/postgres --version fails",
            pg.bin.display()
        );
    }
    let uid = rustix::process::geteuid().as_raw();
    let tmp = &pg.scratch;
    let home = tmp.join(format!(
        "rialto-pg-template{TEMPLATE_FORMAT}-{version}-{uid}"
    ));
    let data = home.join("data");
    // A complete template (renamed into place whole); a system's cleaner of old temporary
    // files may have removed some of it since, so the files that matter are checked.
    let complete = |d: &Path| {
        ["PG_VERSION", "global/pg_control", "postgresql.conf", "base"]
            .iter()
            .all(|f| d.join(f).exists())
    };
    if complete(&data) {
        return data;
    }
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let work = tmp.join(format!(
        "rialto-pg-template{TEMPLATE_FORMAT}-{version}-{uid}.{}.{nanos}",
        std::process::id()
    ));
    fs::create_dir(&work)
        .unwrap_or_else(|e| panic!("test_postgres: creating {}: {e}", work.display()));
    pg.give(&work);
    pg.run(
        Command::new(pg.bin.join("initdb"))
            .args(["-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C"])
            .args(["-U", "postgres", "-D"])
            .arg(work.join("data")),
        "initdb",
    );
    create_role_and_database(pg, &work);
    if home.exists() && !complete(&data) {
        // An incomplete one: moved aside whole, then removed.
        let stale = work.with_extension("stale");
        if fs::rename(&home, &stale).is_ok() {
            let _ = fs::remove_dir_all(&stale);
        }
    }
    // Another process may have put its template in place meanwhile: then that one is used.
    if fs::rename(&work, &home).is_err() {
        let _ = fs::remove_dir_all(&work);
        if !complete(&data) {
            panic!(
                "test_postgres: cannot put the template cluster at {}",
                home.display()
            );
        }
    }
    data
}

/// Makes role `rialto` and its database in the fresh cluster at `work/data`: started on a
/// socket in `work` only (no TCP port), then stopped cleanly.
fn create_role_and_database(pg: &Binaries, work: &Path) {
    let data = work.join("data");
    pg.run(
        Command::new(pg.bin.join("pg_ctl"))
            .args(["start", "-w", "-t", PG_CTL_WAIT_S, "-D"])
            .arg(&data)
            .arg("-l")
            .arg(work.join("postgres.log"))
            .arg("-o")
            .arg(format!(
                "-c listen_addresses='' -c unix_socket_directories='{}'",
                work.display()
            )),
        "starting the template cluster",
    );
    let mut config = postgres::Config::new();
    config.host_path(work).user("postgres").dbname("postgres");
    let made = config.connect(postgres::NoTls).and_then(|mut c| {
        // Two statements: CREATE DATABASE cannot share a (multi-statement) transaction.
        c.batch_execute(&format!("CREATE ROLE rialto LOGIN PASSWORD '{PASSWORD}'"))?;
        c.batch_execute("CREATE DATABASE rialto OWNER rialto")
    });
    pg.run(
        Command::new(pg.bin.join("pg_ctl"))
            .args(["stop", "-w", "-t", PG_CTL_WAIT_S, "-m", "fast", "-D"])
            .arg(&data),
        "stopping the template cluster",
    );
    if let Err(e) = made {
        panic!(
            "test_postgres: the template's role and database: {}",
            chain(&e)
        );
    }
    let _ = fs::remove_file(work.join("postgres.log"));
}

/// Where clusters go: /dev/shm when it has room for a few, else the temporary directory.
fn scratch() -> PathBuf {
    const ROOM: u64 = 1 << 30;
    let shm = Path::new("/dev/shm");
    let room = rustix::fs::statvfs(shm)
        .map(|v| v.f_bavail.saturating_mul(v.f_frsize))
        .unwrap_or(0);
    let writable = tempfile::Builder::new()
        .prefix("rialto-pg-probe-")
        .tempdir_in(shm)
        .is_ok();
    if room >= ROOM && writable {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}
