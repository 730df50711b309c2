//! The core thread's business cost without sockets or the journal: apply N NewOrderSingle
//! inputs (two sessions, alternating buy/sell at one price, so every pair trades) to an
//! `Exchange` and report ns per input, plus the time and size of a snapshot at the end.
//!
//! `cargo run --release -p gateway --example exchange_apply -- [N]` (default 1,000,000).

use gateway::exchange::{Exchange, Outbox};
use gateway::record::{FixMsg, Input, NewOrderMsg};
use gateway::Config;
use std::sync::Arc;
use std::time::Instant;
use types::{OrdType, Side, TimeInForce};

fn main() {
    let n: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let cfg = Arc::new(Config::defaults());
    let mut x = Exchange::new(cfg);
    let mut out = Outbox::default();
    let mut seq = 0u64;
    let ts = 1_800_000_000_000_000_000u64;
    for (conn, name) in [(1u64, "CLIENT1"), (2, "CLIENT2")] {
        seq += 1;
        let logon = Input::Fix {
            conn,
            seq: 1,
            poss_dup: false,
            msg: FixMsg::Logon {
                sender: name.into(),
                target: "RIALTO".into(),
                begin_string: "FIX.4.4".into(),
                heartbeat_secs: 30,
                reset: true,
                password: String::new(),
            },
        };
        x.apply(seq, ts, &logon, &mut out);
    }
    let inputs: Vec<Input> = (0..n)
        .map(|i| Input::Fix {
            conn: 1 + i % 2,
            seq: 2 + i / 2,
            poss_dup: false,
            msg: FixMsg::New(NewOrderMsg {
                cl_ord_id: format!("o{i}").as_str().into(),
                symbol: 0,
                side: if i % 2 == 0 { Side::Buy } else { Side::Sell },
                ord_type: OrdType::Limit,
                tif: TimeInForce::Gtc,
                price: 1000,
                qty: 1,
                account: None,
                post_only: false,
            }),
        })
        .collect();
    let t0 = Instant::now();
    let mut bytes = 0usize;
    for input in &inputs {
        seq += 1;
        x.apply(seq, ts, input, &mut out);
        if out.buf.len() > 1 << 20 {
            bytes += out.buf.len();
            out.clear();
        }
    }
    bytes += out.buf.len();
    let dt = t0.elapsed();
    println!(
        "{n} NewOrderSingle inputs in {:.3}s: {:.0} ns/input, {:.2} M inputs/s, {} MB of FIX out, {} trades",
        dt.as_secs_f64(),
        dt.as_nanos() as f64 / n as f64,
        n as f64 / dt.as_secs_f64() / 1e6,
        bytes >> 20,
        x.stats.trades
    );
    let t1 = Instant::now();
    let mut snap = Vec::new();
    x.snapshot(&mut snap);
    let hash = x.state_hash();
    println!(
        "snapshot {} MB in {:.1} ms (+ hash {:016x})",
        snap.len() >> 20,
        t1.elapsed().as_secs_f64() * 1e3,
        hash
    );
}
