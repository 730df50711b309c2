//! `rialto admin ...`: the operator's controls of a running server, over its HTTP listener's
//! operator endpoint (`/admin/v1/...`, authenticated by an operator's token from
//! `[[operators]]`). Each action is journaled with the operator's name (`rialto journal dump`
//! shows it) and applied in sequence with the orders around it.
//!
//! The token comes from `--token-file` or the `RIALTO_ADMIN_TOKEN` environment variable,
//! never the command line (where `ps` would show it). `rialto admin token --name N` makes
//! one and prints its `[[operators]]` entry.

use super::CmdResult;
use std::net::SocketAddr;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The server's HTTP listener (`[http] listen`).
    #[arg(long, default_value = "127.0.0.1:8080")]
    http: SocketAddr,
    /// A file holding the operator's token (default: $RIALTO_ADMIN_TOKEN).
    #[arg(long)]
    token_file: Option<PathBuf>,
    #[command(subcommand)]
    action: Action,
}

#[derive(clap::Subcommand, Debug)]
enum Action {
    /// A new operator token and its `[[operators]]` entry for rialto.toml (no server needed).
    Token {
        /// The operator's name, journaled with each of its actions.
        #[arg(long)]
        name: String,
    },
    /// Every instrument's status, reference price, band and limits, and the kill switches on.
    State,
    /// The kill switch: block the firm's (or one account's) new orders and cancel every live
    /// order it has.
    Kill {
        #[arg(long)]
        firm: String,
        #[arg(long)]
        account: Option<u32>,
    },
    /// Lift a kill switch.
    Unblock {
        #[arg(long)]
        firm: String,
        #[arg(long)]
        account: Option<u32>,
    },
    /// Set an instrument's trading status: open, halted, closed, preopen or preclose (the two
    /// call auctions: orders collect without matching; open or closed uncrosses the book).
    Status { symbol: String, status: String },
    /// Set an instrument's price band and order limits (those left out: none).
    Limits {
        symbol: String,
        /// Half the band's width in basis points of the reference price (100 is 1%).
        #[arg(long)]
        band_bps: Option<u32>,
        /// The reference price from now on (until the next trade).
        #[arg(long)]
        reference_price: Option<String>,
        #[arg(long)]
        max_order_qty: Option<u64>,
        /// Price × quantity of one order, at most.
        #[arg(long)]
        max_order_notional: Option<String>,
        /// The circuit breaker: a move of more than this many basis points within
        /// --breaker-window-secs halts the instrument for --breaker-halt-secs.
        #[arg(long, requires_all = ["breaker_window_secs", "breaker_halt_secs"])]
        breaker_bps: Option<u32>,
        #[arg(long, requires = "breaker_bps")]
        breaker_window_secs: Option<u64>,
        #[arg(long, requires = "breaker_bps")]
        breaker_halt_secs: Option<u64>,
        /// After the halt, reopen through a call auction this long (0: at once).
        #[arg(long, requires = "breaker_bps")]
        breaker_auction_secs: Option<u64>,
    },
}

pub fn run(a: Args) -> CmdResult {
    let (method, path, body) = match a.action {
        Action::Token { name } => return token(&name),
        Action::State => (hyper::Method::GET, "/admin/v1/state".to_string(), None),
        Action::Kill { firm, account } => (
            hyper::Method::POST,
            "/admin/v1/kill".to_string(),
            Some(firm_body(&firm, account)),
        ),
        Action::Unblock { firm, account } => (
            hyper::Method::POST,
            "/admin/v1/unblock".to_string(),
            Some(firm_body(&firm, account)),
        ),
        Action::Status { symbol, status } => (
            hyper::Method::POST,
            format!("/admin/v1/instruments/{symbol}/status"),
            Some(serde_json::json!({ "status": status })),
        ),
        Action::Limits {
            symbol,
            band_bps,
            reference_price,
            max_order_qty,
            max_order_notional,
            breaker_bps,
            breaker_window_secs,
            breaker_halt_secs,
            breaker_auction_secs,
        } => {
            let mut m = serde_json::Map::new();
            if let Some(b) = band_bps {
                m.insert("band_bps".into(), b.to_string().into());
            }
            if let Some(p) = reference_price {
                m.insert("reference_price".into(), p.into());
            }
            if let Some(q) = max_order_qty {
                m.insert("max_order_qty".into(), q.to_string().into());
            }
            if let Some(n) = max_order_notional {
                m.insert("max_order_notional".into(), n.into());
            }
            for (k, v) in [
                ("breaker_bps", breaker_bps.map(u64::from)),
                ("breaker_window_secs", breaker_window_secs),
                ("breaker_halt_secs", breaker_halt_secs),
                ("breaker_auction_secs", breaker_auction_secs),
            ] {
                if let Some(v) = v {
                    m.insert(k.into(), v.to_string().into());
                }
            }
            (
                hyper::Method::PUT,
                format!("/admin/v1/instruments/{symbol}/limits"),
                Some(serde_json::Value::Object(m)),
            )
        }
    };
    let token = read_token(a.token_file.as_deref())?;
    let rt = loadgen::http::runtime()?;
    let answer = rt.block_on(async {
        let mut c = loadgen::http::HttpConn::connect(a.http, Some(&token)).await?;
        let body = body.map(|b| bytes::Bytes::from(b.to_string()));
        c.request(method, &path, body).await
    })?;
    let text = match serde_json::from_slice::<serde_json::Value>(&answer.body) {
        Ok(v) => serde_json::to_string_pretty(&v).unwrap_or_else(|_| answer.text()),
        Err(_) => answer.text(),
    };
    if (200..300).contains(&answer.status) {
        println!("{text}");
        Ok(())
    } else {
        Err(format!("the server answered {}: {text}", answer.status).into())
    }
}

fn firm_body(firm: &str, account: Option<u32>) -> serde_json::Value {
    match account {
        None => serde_json::json!({ "firm": firm }),
        Some(a) => serde_json::json!({ "firm": firm, "account": a.to_string() }),
    }
}

/// The operator's token: the file's first line, or $RIALTO_ADMIN_TOKEN.
fn read_token(file: Option<&std::path::Path>) -> Result<String, String> {
    let t = match file {
        Some(p) => std::fs::read_to_string(p)
            .map_err(|e| format!("--token-file {}: {e}", p.display()))?
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string(),
        None => std::env::var("RIALTO_ADMIN_TOKEN").map_err(|_| {
            "no operator token: give --token-file or set RIALTO_ADMIN_TOKEN (rialto admin \
             token --name NAME makes one)"
                .to_string()
        })?,
    };
    if t.is_empty() {
        return Err("the operator token is empty".into());
    }
    Ok(t)
}

fn token(name: &str) -> CmdResult {
    let ok = !name.is_empty() && name.len() <= 64 && name.bytes().all(|c| c.is_ascii_graphic());
    if !ok || name.contains(['"', '\\']) {
        return Err("--name: 1 to 64 printable characters, no quotes or backslashes".into());
    }
    let (token, sha) = http_gateway::keys::new_token()?;
    println!("{token}");
    println!();
    println!("# The token above is shown once: keep it in a file for --token-file (or in RIALTO_ADMIN_TOKEN).");
    println!("# Add this to rialto.toml; it holds only the token's SHA-256.");
    println!("[[operators]]");
    println!("name = \"{name}\"");
    println!("sha256 = \"{}\"", http_gateway::keys::hex(&sha));
    Ok(())
}
