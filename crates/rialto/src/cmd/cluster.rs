//! Cluster mode on Apache Kafka (crate `cluster`): `rialto engine --shard N --id NAME`,
//! `rialto gateway`, `rialto cluster status`. Glue only: read the config, start, wait for
//! SIGINT/SIGTERM.

use super::CmdResult;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

fn read_config(path: &PathBuf) -> Result<(server::Config, String), Box<dyn std::error::Error>> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let cfg = server::Config::from_toml(&text)?;
    if cfg.cluster.is_none() {
        return Err(format!("{}: no [cluster] section", path.display()).into());
    }
    Ok((cfg, text))
}

fn stdout_log(who: String) -> server::Logger {
    Arc::new(move |m: &str| {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{who}: {m}");
        let _ = out.flush();
    })
}

#[derive(clap::Args, Debug)]
pub struct EngineArgs {
    /// The cluster's TOML configuration (`[cluster]`, the instruments and firms).
    #[arg(long)]
    config: PathBuf,
    /// Which shard (0-based: the position in `[cluster] shards`).
    #[arg(long)]
    shard: u16,
    /// This engine's name among the shard's engines, e.g. `a` or `b` (a restart keeps it).
    #[arg(long)]
    id: String,
    /// Where its snapshots go (default: the config's data_dir).
    #[arg(long)]
    data_dir: Option<PathBuf>,
}

pub fn engine(args: EngineArgs) -> CmdResult {
    let (cfg, _) = read_config(&args.config)?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())?;
    }
    let log = stdout_log(format!("engine {}/{}", args.shard, args.id));
    let data_dir = args.data_dir.unwrap_or_else(|| cfg.data_dir.clone());
    cluster::engine::run(
        &cfg,
        cluster::engine::EngineOptions {
            shard: args.shard,
            id: args.id,
            data_dir,
            log,
            stop,
        },
    )?;
    Ok(())
}

#[derive(clap::Args, Debug)]
pub struct GatewayArgs {
    /// The gateway's TOML configuration: `[cluster]` with `gateway = N`, the instruments and
    /// firms (as every process of the cluster has them), and its own sessions and API keys.
    #[arg(long)]
    config: PathBuf,
    /// Its journal (the sessions and the engines' answers; overrides data_dir).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// FIX listen address (overrides the config's listen).
    #[arg(long)]
    listen: Option<String>,
    /// REST API listen address, or `off` (overrides http_listen).
    #[arg(long)]
    http_listen: Option<String>,
}

pub fn gateway(args: GatewayArgs) -> CmdResult {
    let (mut cfg, text) = read_config(&args.config)?;
    if let Some(d) = args.data_dir {
        cfg.data_dir = d;
    }
    if let Some(l) = args.listen {
        cfg.listen = l
            .parse()
            .map_err(|_| format!("--listen {l:?} is not an ip:port"))?;
    }
    if let Some(h) = args.http_listen {
        super::serve::http_listen(&mut cfg, &h)?;
    }
    let cfg = cfg.as_gateway()?;
    let cc = cfg.cluster.clone().expect("checked");
    let log = stdout_log(format!("gateway {}", cc.gateway.unwrap_or(0)));
    server::serve_gateway_until_signal(
        cfg,
        Some(&text),
        Box::new(move |ports| cluster::gateway::start(&cc, ports, log)),
    )?;
    Ok(())
}

#[derive(clap::Subcommand, Debug)]
pub enum ClusterCommand {
    /// Each shard's engines (active, standby), their positions, lags and state hashes.
    Status {
        /// The cluster's TOML configuration.
        #[arg(long)]
        config: PathBuf,
    },
}

pub fn run(c: ClusterCommand) -> CmdResult {
    match c {
        ClusterCommand::Status { config } => {
            let (cfg, _) = read_config(&config)?;
            let cc = cfg.cluster.as_ref().expect("checked");
            let shards = cluster::status::read(cc, 2000)?;
            let symbols: Vec<Vec<String>> = cc
                .shards
                .iter()
                .map(|ids| {
                    ids.iter()
                        .map(|&i| {
                            cfg.instruments[i as usize]
                                .instrument
                                .symbol
                                .as_str()
                                .to_string()
                        })
                        .collect()
                })
                .collect();
            print!(
                "{}",
                cluster::status::render(&shards, &symbols, cluster::now_ns())
            );
            Ok(())
        }
    }
}
