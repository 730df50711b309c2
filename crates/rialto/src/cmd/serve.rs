//! `rialto serve [--config rialto.toml] [--data-dir DIR] [--listen ADDR]
//! [--market-data-listen ADDR|off] [--http-listen ADDR|off] [--bench-dir DIR] [--durability MODE]
//! [--idle park|spin] [--cpu N] [--stall-log-us US] [--log-json]`:
//! the exchange server (crate `server`). Glue only: read the config, apply the overrides,
//! warn of the sessions without a password, run until SIGINT/SIGTERM.

use super::CmdResult;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// TOML configuration (instruments, firms, sessions, durability, listen address). Without
    /// it: FIX 4.4 on 127.0.0.1:9878 as RIALTO (market data on 9879), sessions CLIENT1..CLIENT9
    /// and BOT1..BOT64, MD1..MD64 for market data only, instruments ACME BOLT CRNK (tick
    /// 0.01), data in ./data; the trading day ends at 21:00:00 UTC (DAY orders expire;
    /// `trading_day_end`, `trading_day_start` in the config).
    #[arg(long)]
    config: Option<PathBuf>,
    /// Directory of the journal and snapshots (overrides the config's data_dir).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Listen address, e.g. 127.0.0.1:9878 (overrides the config's listen).
    #[arg(long)]
    listen: Option<String>,
    /// Market-data listen address (overrides `[market_data] listen`; default: the order-entry
    /// port + 1, or an ephemeral port when that one is), or `off`.
    #[arg(long)]
    market_data_listen: Option<String>,
    /// REST API listen address (overrides `http_listen`; default 127.0.0.1:8080, or an
    /// ephemeral port when the order-entry one is or 8080 is taken), or `off`.
    #[arg(long)]
    http_listen: Option<String>,
    /// A directory of `rialto bench sweep` CSV files that the web dashboard's Benchmarks view
    /// lists (overrides `[http] bench_dir`).
    #[arg(long)]
    bench_dir: Option<PathBuf>,
    /// The trade store (overrides `[store]`): `off`, a SQLite file's path, or a PostgreSQL
    /// URL (`postgres://user:password@host:port/database`). Default: SQLite at
    /// data_dir/rialto.db.
    #[arg(long)]
    store: Option<String>,
    /// `process` (release after write returned) or `fsync` (after fdatasync).
    #[arg(long)]
    durability: Option<String>,
    /// What the event loop does when idle (overrides the config's `idle`): `park` (sleep in
    /// epoll_wait) or `spin` (busy-poll: lower latency, burns one core).
    #[arg(long)]
    idle: Option<String>,
    /// Pin the event loop to this CPU and keep the server's other threads off it (overrides
    /// the config's `cpu`). With `--idle spin` the loop then owns that CPU.
    #[arg(long)]
    cpu: Option<usize>,
    /// Log the event loop's slowest iteration of a second when it exceeds this many µs (and a
    /// spinning loop's time off its CPU); 0: never (overrides the config's `stall_log_us`).
    #[arg(long)]
    stall_log_us: Option<u64>,
    /// The structured log (logons, logouts, rejects, garbled input, disconnects, on stderr)
    /// as JSON lines instead of text. `RIALTO_LOG` filters it (default `info`; e.g. `warn`).
    #[arg(long)]
    log_json: bool,
}

/// The structured log of the FIX edge and the event loop, on stderr.
fn init_log(json: bool) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_env("RIALTO_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let b = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false);
    // A second init (tests running `run` twice in one process) keeps the first.
    let _ = if json {
        b.json().try_init()
    } else {
        b.try_init()
    };
}

/// `--http-listen ADDR|off` over the config's `http_listen`.
pub(super) fn http_listen(cfg: &mut server::Config, h: &str) -> CmdResult {
    if h == "off" {
        cfg.http = None;
        return Ok(());
    }
    let addr = h
        .parse()
        .map_err(|_| format!("--http-listen {h:?} is not an ip:port (or off)"))?;
    match cfg.http.as_mut() {
        Some(s) => s.listen = Some(addr),
        None => return Err("--http-listen: http_listen is off in the config".into()),
    }
    Ok(())
}

pub fn run(args: Args) -> CmdResult {
    init_log(args.log_json);
    let text = match &args.config {
        Some(p) => Some(std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?),
        None => None,
    };
    let mut cfg = match &text {
        Some(t) => server::Config::from_toml(t)?,
        None => server::Config::defaults(),
    };
    if let Some(d) = args.data_dir {
        cfg.data_dir = d;
    }
    if let Some(l) = args.listen {
        cfg.listen = l
            .parse()
            .map_err(|_| format!("--listen {l:?} is not an ip:port"))?;
    }
    if let Some(m) = args.market_data_listen {
        if m == "off" {
            cfg.market_data = None;
        } else {
            let addr = m
                .parse()
                .map_err(|_| format!("--market-data-listen {m:?} is not an ip:port (or off)"))?;
            match cfg.market_data.as_mut() {
                Some(md) => md.listen = Some(addr),
                None => {
                    return Err(
                        "--market-data-listen: market data is disabled in the config".into(),
                    )
                }
            }
        }
    }
    if let Some(h) = args.http_listen {
        http_listen(&mut cfg, &h)?;
    }
    if let Some(d) = args.bench_dir {
        match cfg.http.as_mut() {
            Some(s) => s.bench_dir = Some(d),
            None => return Err("--bench-dir: http_listen is off in the config".into()),
        }
    }
    if let Some(st) = args.store {
        cfg.store = if st == "off" {
            None
        } else if st.starts_with("postgres://") || st.starts_with("postgresql://") {
            Some(server::config::StoreConfig::Postgres { url: st })
        } else if st.contains("://") {
            return Err(format!(
                "--store {:?}: give off, a SQLite file's path or a postgres:// URL",
                trade_store::redact_url(&st)
            )
            .into());
        } else {
            Some(server::config::StoreConfig::Sqlite {
                path: Some(PathBuf::from(st)),
            })
        };
    }
    if let Some(d) = args.durability {
        cfg.durability = match d.as_str() {
            "process" => server::Durability::Process,
            "fsync" => server::Durability::Fsync,
            _ => return Err(format!("--durability {d:?}: use process or fsync").into()),
        };
    }
    if let Some(i) = args.idle {
        cfg.idle = match i.as_str() {
            "park" => server::Idle::Park,
            "spin" => server::Idle::Spin,
            _ => return Err(format!("--idle {i:?}: use park or spin").into()),
        };
    }
    if let Some(c) = args.cpu {
        cfg.cpu = Some(c);
    }
    if let Some(us) = args.stall_log_us {
        cfg.stall_log_us = us;
    }
    let open: Vec<&str> = cfg
        .sessions
        .iter()
        .filter(|s| s.password_hash.is_none())
        .map(|s| s.sender_comp_id.as_str())
        .collect();
    if !open.is_empty() {
        tracing::warn!(
            sessions = open.len(),
            names = %open.join(" "),
            "sessions without a password: anyone who reaches the port can log on as them \
             (give each a password_hash, made by `rialto passwd`)"
        );
    }
    server::serve_until_signal(cfg, text.as_deref())?;
    Ok(())
}
