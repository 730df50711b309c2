//! `[market_data]`: the market-data publisher's address and the bounds of each subscriber.
//!
//! Role: checks the section (an address, nice 0 to 19, bounds >= 1, the logout bound above the
//! conflation bound) and says where market data is served (`Config::market_data_listen`).
//!
//! Never: takes the order-entry port's last port + 1 by default (it must then be given).
//!
//! Invariants: `logout_bytes > conflate_bytes`; `conflate_records >= 1`.

use super::{err, Config, ConfigError};
use serde::Deserialize;
use std::net::SocketAddr;

/// `[market_data]` of `rialto.toml` (every key optional).
#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct MarketDataFile {
    /// Default true.
    pub enabled: Option<bool>,
    /// Default: the order-entry address with the next port (an ephemeral port if that is 0).
    pub listen: Option<String>,
    pub subscriptions_max: Option<usize>,
    pub depth_max: Option<u32>,
    pub resend_store_max: Option<usize>,
    pub conflate_bytes: Option<usize>,
    pub logout_bytes: Option<usize>,
    pub behind_logout_ms: Option<u64>,
    pub nice: Option<i32>,
    pub conflate_records: Option<u64>,
}

/// The market-data publisher: where it listens and the bounds of each subscriber.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarketDataConfig {
    /// `None`: the order-entry address with the next port (`Config::market_data_listen`).
    pub listen: Option<SocketAddr>,
    /// Subscriptions with updates one session may hold (default 64).
    pub subscriptions_max: usize,
    /// The deepest MarketDepth served besides 0, the full book (default 100).
    pub depth_max: u32,
    /// Messages each market-data session keeps for a ResendRequest (default 4096).
    pub resend_store_max: usize,
    /// A connection with more unread output than this stops getting updates; when it has
    /// read what was queued it gets fresh snapshots (conflation). Default 256 KiB.
    pub conflate_bytes: usize,
    /// A connection with more unread output than this, or behind for longer than
    /// `behind_logout_ms`, is logged out ("slow consumer"). Default 4 MiB and 10 s.
    pub logout_bytes: usize,
    pub behind_logout_ms: u64,
    /// The feed conflates while its replica is this many records or more behind the journal
    /// (default 4096): it applies them without updates, then every subscription gets a fresh
    /// snapshot.
    pub conflate_records: u64,
    /// The market-data thread's nice value (default 10): when the cores are contended, the
    /// order path's threads run first and subscribers wait (the feed conflates).
    pub nice: i32,
}

/// `[market_data]`, checked (`listen` is the order-entry address): `None` if disabled.
pub(super) fn market_data_config(
    md: MarketDataFile,
    listen: SocketAddr,
) -> Result<Option<MarketDataConfig>, ConfigError> {
    Ok(if md.enabled.unwrap_or(true) {
        let listen =
            match &md.listen {
                Some(t) => Some(t.parse().map_err(|_| {
                    ConfigError(format!("market_data.listen {t:?} is not an ip:port"))
                })?),
                None if listen.port() == u16::MAX => {
                    return err("give market_data.listen: listen uses the last port")
                }
                None => None,
            };
        let d = MarketDataConfig {
            listen,
            subscriptions_max: md.subscriptions_max.unwrap_or(64),
            depth_max: md.depth_max.unwrap_or(100),
            resend_store_max: md.resend_store_max.unwrap_or(4096),
            conflate_bytes: md.conflate_bytes.unwrap_or(256 << 10),
            logout_bytes: md.logout_bytes.unwrap_or(4 << 20),
            behind_logout_ms: md.behind_logout_ms.unwrap_or(10_000),
            nice: md.nice.unwrap_or(10),
            conflate_records: md.conflate_records.unwrap_or(4096).max(1),
        };
        if !(0..=19).contains(&d.nice) {
            return err("market_data.nice must be 0 to 19");
        }
        if d.subscriptions_max == 0 || d.conflate_bytes == 0 {
            return err("market_data: subscriptions_max and conflate_bytes must be >= 1");
        }
        if d.logout_bytes <= d.conflate_bytes {
            return err("market_data: logout_bytes must be above conflate_bytes");
        }
        Some(d)
    } else {
        None
    })
}

impl Config {
    /// Where market data is served: `market_data.listen`, or the order-entry address with the
    /// next port (an ephemeral port when the order-entry one is).
    pub fn market_data_listen(&self) -> Option<SocketAddr> {
        let md = self.market_data.as_ref()?;
        Some(md.listen.unwrap_or_else(|| {
            let mut a = self.listen;
            if a.port() != 0 {
                a.set_port(a.port() + 1);
            }
            a
        }))
    }
}
