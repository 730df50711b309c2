//! Helpers of the "abuse" tests (`abuse_*.rs`): a server on an ephemeral port and a FIX
//! client that sends orders in pipelined bursts, as a misbehaving firm would.

#![allow(dead_code)]

use fix::client::{FixClient, Msg};
use server::{Config, Server};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How long any one expected message may take.
pub const T: Duration = Duration::from_secs(60);

/// The default configuration on an ephemeral port in `dir`, with small journal segments.
pub fn config(dir: &Path) -> Config {
    let mut c = Config::defaults();
    c.listen = "127.0.0.1:0".parse().unwrap();
    c.data_dir = dir.to_path_buf();
    c.journal_segment_bytes = 16 << 20;
    c.market_data = None;
    c
}

/// No session throttles (for a test about something else that sends in bursts).
pub fn unthrottled(cfg: &mut Config) {
    for s in &mut cfg.sessions {
        s.throttle = server::config::Throttle {
            orders_per_sec: 0,
            cancels_per_sec: 0,
            messages_per_sec: 0,
            logout_messages_per_sec: 0,
        };
    }
    cfg.session_queue_max = 1 << 16;
    cfg.firm_queue_max = 1 << 16;
}

pub fn start(cfg: Config) -> Server {
    Server::start(cfg, Arc::new(|_: &str| {})).expect("server starts")
}

pub fn logon(server: &Server, who: &str) -> FixClient {
    let mut c = FixClient::connect(server.addr, who, "RIALTO", 1).unwrap();
    c.logon(30, true).unwrap();
    let (m, _) = c.expect("A", T).unwrap();
    assert_eq!(m.get(56), Some(who));
    c
}

pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// Sends GTC limit orders `{prefix}{i}` for `i` in `from..to` in one write: buys of 1 of
/// `symbol`, at prices that never cross (1.00 to 9.99, by `i`).
pub fn send_orders(c: &mut FixClient, prefix: &str, symbol: &str, from: u64, to: u64) {
    let mut bytes = Vec::new();
    let mut enc = fix::Encoder::default();
    let sender = c.sender.clone();
    for (k, i) in (from..to).enumerate() {
        enc.begin(b"D");
        enc.header(&fix::Header {
            sender_comp_id: sender.as_bytes(),
            target_comp_id: b"RIALTO",
            msg_seq_num: c.out_seq + k as u64,
            sending_time_ns: now_ns(),
            poss_dup: false,
            orig_sending_time: None,
            time_precision: fix::TimePrecision::Millis,
        });
        let cl = format!("{prefix}{i}");
        let px = format!("{}.{:02}", 1 + i % 9, i % 100);
        for (t, v) in [
            (11, cl.as_str()),
            (55, symbol),
            (54, "1"),
            (38, "1"),
            (40, "2"),
            (44, px.as_str()),
            (59, "1"),
        ] {
            enc.field(t, v.as_bytes());
        }
        enc.field_timestamp(60, now_ns(), fix::TimePrecision::Millis);
        bytes.extend_from_slice(enc.finish(fix::FixVersion::Fix44));
    }
    c.out_seq += to - from;
    c.send_raw(&bytes).unwrap();
}

/// The next `n` ExecutionReports.
pub fn reports(c: &mut FixClient, n: usize) -> Vec<Msg> {
    (0..n).map(|_| c.expect("8", T).unwrap().0).collect()
}

/// The journal record an ExecutionReport came from: its ExecID is `record.n`.
pub fn record_of(m: &Msg) -> u64 {
    let id = m.get(17).expect("ExecID");
    id.split('.')
        .next()
        .unwrap()
        .parse()
        .expect("ExecID record.n")
}
