//! `rialto book SYMBOL`: a FIX market-data client that subscribes to one instrument at an
//! exchange's market-data port and draws the live ladder in the terminal (bids, asks, the last
//! trades, RptSeq), redrawn in place until Ctrl-C. Works against `rialto demo`, `rialto serve`
//! and any FIX venue with the same market-data messages.
//!
//! Glue only: the subscriber is `loadgen::md::MdClient`, the book it rebuilds
//! `fix::md::MdView`. `--once` prints the book as soon as its snapshot arrived and exits
//! (scripts, tests); `--updates N` exits after N incremental refreshes.

use super::CmdResult;
use loadgen::md::{ladder, MdClient};
use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The instrument, e.g. ACME.
    symbol: String,
    /// The exchange's market-data port (`rialto serve` and `rialto demo`: the FIX port + 1).
    #[arg(long, default_value = "127.0.0.1:9879")]
    connect: SocketAddr,
    /// SenderCompID of the market-data session (the default contract has MD1..MD64).
    #[arg(long, default_value = "MD1")]
    sender: String,
    /// TargetCompID of the exchange.
    #[arg(long, default_value = "RIALTO")]
    target: String,
    /// Price levels shown per side.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=100))]
    levels: u32,
    /// Print the book once its snapshot arrived, then exit.
    #[arg(long)]
    once: bool,
    /// Exit after this many incremental refreshes (after printing the book).
    #[arg(long)]
    updates: Option<u64>,
}

pub fn run(args: Args) -> CmdResult {
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())
            .map_err(|e| format!("cannot install the Ctrl-C handler: {e}"))?;
    }
    let mut c = MdClient::connect(args.connect, &args.sender, &args.target, 20)
        .map_err(|e| format!("market data at {}: {e}", args.connect))?;
    let redraw = std::io::stdout().is_terminal() && !args.once;
    let deadline = Instant::now() + Duration::from_secs(10);
    while !c.logged_on {
        if let Some(t) = &c.ended {
            return Err(format!("logon refused: {t}").into());
        }
        if Instant::now() > deadline || stop.load(Ordering::Relaxed) {
            return Err("no Logon answer within 10 s".into());
        }
        if let Err(e) = c.wait(Duration::from_millis(100)) {
            return Err(match &c.ended {
                Some(t) => format!("logon refused: {t}"),
                None => format!("market data at {}: {e}", args.connect),
            }
            .into());
        }
    }
    c.subscribe("book", &[args.symbol.as_str()], 0)?;
    let mut out = std::io::stdout().lock();
    let mut drawn = 0usize;
    let mut last_draw = Instant::now() - Duration::from_secs(1);
    let (mut last_msgs, mut rate_at, mut rate) = (0u64, Instant::now(), 0u64);
    let first_incrementals = |c: &MdClient| c.view.incrementals;
    let mut start_incrementals = None;
    while !stop.load(Ordering::Relaxed) {
        if let Err(e) = c.wait(Duration::from_millis(50)) {
            return Err(format!("market data: {e}").into());
        }
        if let Some(r) = c.rejects.first() {
            return Err(format!("subscription refused: {r}").into());
        }
        if !c.synced() {
            if Instant::now() > deadline {
                return Err("no snapshot within 10 s".into());
            }
            continue;
        }
        let base = *start_incrementals.get_or_insert(first_incrementals(&c));
        if rate_at.elapsed() >= Duration::from_secs(1) {
            rate = c.messages - last_msgs;
            last_msgs = c.messages;
            rate_at = Instant::now();
        }
        let done = args.once
            || args
                .updates
                .is_some_and(|n| c.view.incrementals - base >= n);
        // In place on a terminal; otherwise a new block each second.
        let every = Duration::from_millis(if redraw { 100 } else { 1000 });
        if done || last_draw.elapsed() >= every {
            last_draw = Instant::now();
            let view = c
                .view
                .symbols
                .get(args.symbol.as_bytes())
                .cloned()
                .unwrap_or_default();
            let header = format!(
                "rialto book · {} as {} · {} msg/s · Ctrl-C to stop",
                args.connect, args.sender, rate
            );
            let lines = ladder(&args.symbol, &view, args.levels as usize, &header);
            let mut text = String::new();
            if redraw && drawn > 0 {
                text.push_str(&format!("\x1b[{drawn}A\x1b[J"));
            }
            for l in &lines {
                text.push_str(l);
                text.push('\n');
            }
            out.write_all(text.as_bytes())?;
            out.flush()?;
            drawn = lines.len();
        }
        if done {
            break;
        }
    }
    let _ = c.send("5", &[]);
    Ok(())
}
