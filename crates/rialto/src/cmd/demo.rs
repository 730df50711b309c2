//! `rialto demo`: the exchange with embedded defaults in this process plus simulated market
//! makers and takers over loopback FIX and two traders over the REST API, with live statistics
//! once a second (orders in, reports out, trades, messages/s, ack latency P50/P99, top of book
//! and last trade per instrument). It prints the web dashboard's address first, then the REST
//! API's, with an API key made for this run (as are the REST traders' keys, on accounts 8 and
//! 9: the demo's FIX traders use neither CLIENT8 nor CLIENT9).
//! Runs until Ctrl-C, then prints a summary (rejects by reason included) and the journal's
//! state hash.
//!
//! Glue: this starts and stops the exchange (`server::Server`) and hands its address to
//! `loadgen::demo`, which is only a FIX client. Without `--data-dir` the journal goes to a
//! temporary directory that is removed at exit (Ctrl-C included); with it, the journal stays
//! and the summary says where.

use super::CmdResult;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Orders (requests) per second over all simulated traders.
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    rate: u64,
    /// Journal and snapshots go here and are kept (default: a temporary directory, removed at
    /// exit).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// Listen address (default 127.0.0.1:9878, or a free port if it is taken).
    #[arg(long)]
    listen: Option<SocketAddr>,
    /// `process` (default) or `fsync`.
    #[arg(long, default_value = "process")]
    durability: String,
    /// Stop after this many seconds instead of waiting for Ctrl-C.
    #[arg(long)]
    duration: Option<f64>,
    /// Seed of the simulated traders.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The web dashboard's and REST API's address (default 127.0.0.1:8080, or a free port if
    /// it is taken).
    #[arg(long)]
    http_listen: Option<SocketAddr>,
    /// The `rialto bench sweep` CSV files the dashboard's Benchmarks view lists (default
    /// docs/bench when it is there: the repository's published runs).
    #[arg(long)]
    bench_dir: Option<PathBuf>,
}

/// Default listen address, or a free port when 9878 is taken.
fn pick_listen(requested: Option<SocketAddr>) -> SocketAddr {
    if let Some(a) = requested {
        return a;
    }
    let default: SocketAddr = ([127, 0, 0, 1], 9878).into();
    match std::net::TcpListener::bind(default) {
        Ok(_) => default,
        Err(_) => ([127, 0, 0, 1], 0).into(),
    }
}

pub fn run(args: Args) -> CmdResult {
    let durability = match args.durability.as_str() {
        "process" => server::Durability::Process,
        "fsync" => server::Durability::Fsync,
        d => return Err(format!("--durability {d:?}: use process or fsync").into()),
    };
    let duration = match args.duration {
        Some(s) if (0.0..=31_536_000.0).contains(&s) => Some(Duration::from_secs_f64(s)),
        Some(s) => return Err(format!("--duration {s}: give seconds (0 or more)").into()),
        None => None,
    };
    // Ctrl-C ends the run instead of the process, from here on, so the temporary directory
    // made next is always removed.
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| format!("cannot install the Ctrl-C handler: {e}"))?;
    }
    let (data_dir, temp) = match args.data_dir {
        Some(d) => (d, None),
        None => {
            let t = tempfile::Builder::new()
                .prefix("rialto-demo-")
                .tempdir()
                .map_err(|e| format!("cannot create a temporary data dir: {e}"))?;
            (t.path().to_path_buf(), Some(t))
        }
    };
    let mut cfg = server::Config::defaults();
    cfg.data_dir = data_dir.clone();
    cfg.listen = pick_listen(args.listen);
    // Market data on the next port if it is free, else on any.
    if let Some(md) = cfg.market_data.as_mut() {
        let mut next = cfg.listen;
        if next.port() != 0 && next.port() < u16::MAX {
            next.set_port(next.port() + 1);
            if std::net::TcpListener::bind(next).is_err() {
                next.set_port(0);
            }
        }
        md.listen = Some(next);
    }
    cfg.durability = durability;
    if let Some(h) = cfg.http.as_mut() {
        if args.http_listen.is_some() {
            h.listen = args.http_listen;
        }
        let published = PathBuf::from("docs/bench");
        h.bench_dir = args
            .bench_dir
            .or_else(|| published.is_dir().then_some(published));
    }
    // API keys made for this run: the REST traders' (accounts 8 and 9) and the user's
    // (account 1, CLIENT1's firm).
    let mut tokens = Vec::new();
    // The same keys as a config file next to the journal (hashes only), for `rialto journal
    // verify` and `dump`, whose replay needs the API keys the journal was written with.
    let mut copy =
        String::from("# Written by `rialto demo`: its API keys (the tokens were shown once).\n");
    for (name, account) in [("rest-trader-1", 8), ("rest-trader-2", 9), ("you", 1)] {
        let (token, sha256) = http_gateway::keys::new_token()?;
        let firm = cfg
            .firms
            .iter()
            .position(|f| f.accounts.contains(&account))
            .ok_or_else(|| format!("the demo's contract has no account {account}"))?;
        cfg.api_keys.push(server::config::ApiKeyDef {
            name: name.into(),
            sha256,
            account,
            firm: firm as u16,
            requests_per_sec: 10_000,
        });
        copy.push_str(&format!(
            "[[api_keys]]\nname = \"{name}\"\naccount = {account}\nsha256 = \"{}\"\nrequests_per_sec = 10000\n",
            http_gateway::keys::hex(&sha256)
        ));
        tokens.push(token);
    }
    std::fs::create_dir_all(&data_dir)
        .and_then(|_| std::fs::write(server::config_copy_path(&data_dir), copy))
        .map_err(|e| format!("{}: {e}", data_dir.display()))?;
    let user_token = tokens.pop().expect("three keys made");
    // The exchange's log lines would break the live display.
    let server = server::Server::start(cfg, Arc::new(|_m: &str| {}))
        .map_err(|e| format!("exchange: {e}"))?;
    let addr = server.addr;
    let http = server.http_addr();
    if let Some(h) = http {
        println!("Dashboard: open http://{h}/ in a browser");
        println!("REST API on http://{h}/api/v1 (API key for you: {user_token})");
    }
    let journal_note = if temp.is_some() {
        ", a temporary directory removed at exit (--data-dir DIR keeps it)"
    } else {
        ""
    };
    println!(
        "Rialto demo: exchange on {addr} (FIX 4.4, TargetCompID RIALTO; CLIENT1..7 are free for\n\
         your own FIX client), durability {}, journal in {}{journal_note}",
        durability.as_str(),
        data_dir.display(),
    );
    if let Some(md) = server.market_data_addr() {
        println!(
            "market data on {md}: watch a book live with `rialto book ACME --connect {md}` (MD1..MD63)"
        );
    }
    let mut demo = loadgen::demo::DemoConfig::new(addr);
    demo.rate = args.rate;
    demo.duration = duration;
    demo.stop = stop;
    demo.seed = args.seed;
    demo.label = format!("{addr} · {}", durability.as_str());
    demo.market_data = server.market_data_addr();
    demo.rest = http.map(|h| (h, tokens));
    if let Some(c) = server.market_data_counters() {
        demo.md_figures = Some(loadgen::demo::MdFiguresFn(Arc::new(move || {
            use std::sync::atomic::Ordering::Relaxed;
            loadgen::demo::MdFigures {
                sessions: c.sessions.load(Relaxed),
                subscriptions: c.subscriptions.load(Relaxed),
                messages: c.messages.load(Relaxed),
                conflations: c.conflations.load(Relaxed),
            }
        })));
    }
    let outcome = loadgen::demo::run(&demo, &mut std::io::stdout());
    // The exchange stops whatever became of the traders.
    let hash = server.shutdown().map_err(|e| format!("exchange: {e}"));
    outcome?;
    let hash = hash?;
    match temp {
        None => println!(
            "journal: {} (state hash {hash:016x}); check it with: rialto journal verify {}",
            data_dir.join("journal").display(),
            data_dir.display()
        ),
        Some(t) => {
            t.close()
                .map_err(|e| format!("cannot remove {}: {e}", data_dir.display()))?;
            println!(
                "journal: state hash {hash:016x}; the temporary {} is removed (--data-dir DIR \
                 keeps the journal)",
                data_dir.display()
            );
        }
    }
    Ok(())
}
