//! `http_listen`, `[http]` and `[[api_keys]]`: where the REST API is served, its limits, and the
//! API keys that may trade over it.
//!
//! Role: checks each key (a unique name, the SHA-256 of its token as 64 hex digits, an account
//! that belongs to a firm) and the HTTP limits, and hands the API edge its configuration
//! (`Config::api_config`): the keys are the exchange's originators after the FIX sessions.
//!
//! Never: accepts a token in plain text (only its SHA-256, made by `rialto apikey new`).

use super::{err, Config, ConfigError};
use serde::Deserialize;
use std::collections::HashSet;
use std::net::SocketAddr;

/// One `[[api_keys]]` entry.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApiKeyConfig {
    pub name: String,
    /// The SHA-256 of the token, 64 hex digits (`rialto apikey new` prints the entry).
    pub sha256: String,
    /// The account its orders go to; the key trades for that account's firm.
    pub account: types::AccountId,
    /// Requests a second over which it is answered 429 (default 1,000).
    #[serde(default)]
    pub requests_per_sec: Option<u32>,
}

/// `[[operators]]`: who may use the operator's endpoint (`rialto admin`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorConfig {
    /// Journaled with each of its actions.
    pub name: String,
    /// The SHA-256 of its token, 64 hex digits (`rialto admin token` prints the entry).
    pub sha256: String,
}

/// The operators, checked: unique, non-empty names of at most 64 printable characters, unique
/// tokens, none an API key's.
pub(super) fn operator_defs(
    ops: &[OperatorConfig],
    keys: &[ApiKeyDef],
) -> Result<Vec<http_gateway::OperatorDef>, ConfigError> {
    let mut names = HashSet::new();
    let mut hashes: HashSet<[u8; 32]> = keys.iter().map(|k| k.sha256).collect();
    ops.iter()
        .map(|o| {
            let ok_name = !o.name.is_empty()
                && o.name.len() <= 64
                && o.name.bytes().all(|c| c.is_ascii_graphic());
            if !ok_name || !names.insert(o.name.as_str()) {
                return err(format!(
                    "operator {:?}: a unique name of 1 to 64 printable characters",
                    o.name
                ));
            }
            let sha256 = http_gateway::keys::parse_sha256(&o.sha256).ok_or_else(|| {
                ConfigError(format!(
                    "operator {:?}: sha256 must be 64 hex digits (rialto admin token prints it)",
                    o.name
                ))
            })?;
            if !hashes.insert(sha256) {
                return err(format!(
                    "operator {:?}: the same token as another operator or API key",
                    o.name
                ));
            }
            Ok(http_gateway::OperatorDef {
                name: o.name.clone(),
                sha256,
            })
        })
        .collect()
}

/// `[http]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpFile {
    /// Request bodies larger than this are refused with 413 (default 16 KiB).
    pub body_max_bytes: Option<usize>,
    /// Requests waiting for the event loop at most; beyond, 503 (default 4,096).
    pub queue_max: Option<usize>,
    /// Answers kept per API key for Idempotency-Key retries (default 10,000).
    pub idempotency_keys_max: Option<usize>,
    /// How long they are kept, seconds (default 86,400: a day).
    pub idempotency_secs: Option<u64>,
    /// Connections open at once at most (default 1,024), and from one address (default 256).
    pub connections_max: Option<usize>,
    pub connections_per_address_max: Option<usize>,
    /// Longest wait for a request's head, and for the next request on an idle connection,
    /// seconds (default 10).
    pub header_timeout_secs: Option<u64>,
    /// WebSocket connections open at once at most (default 1,024; each also counts as an
    /// HTTP connection); beyond, the upgrade is answered 503.
    pub ws_connections_max: Option<usize>,
    /// Messages each WebSocket broadcast ring keeps (market updates; order events; default
    /// 4,096): a connection further behind gets fresh book snapshots, or is closed (1008) if
    /// it subscribed to trades or orders.
    pub ws_buffer: Option<usize>,
    /// A directory of `rialto bench sweep` CSV files for the dashboard's Benchmarks view
    /// (`GET /api/v1/bench/runs`; default none).
    pub bench_dir: Option<std::path::PathBuf>,
}

/// Where and how the REST API is served.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpSettings {
    /// `None`: the default, 8080 on the order-entry address (an ephemeral port when that
    /// one is, or when 8080 is taken).
    pub listen: Option<SocketAddr>,
    pub body_max: usize,
    pub queue_max: usize,
    pub idempotency_max: usize,
    pub idempotency_ttl_ns: u64,
    pub limits: http_gateway::config::Limits,
    pub ws_connections_max: usize,
    pub ws_buffer: usize,
    pub bench_dir: Option<std::path::PathBuf>,
}

/// The port of the default HTTP address.
pub const HTTP_PORT_DEFAULT: u16 = 8080;

/// A validated API key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiKeyDef {
    pub name: String,
    pub sha256: [u8; 32],
    pub account: types::AccountId,
    /// Index into `Config::firms`.
    pub firm: u16,
    pub requests_per_sec: u32,
}

pub(super) fn http_settings(
    listen: Option<&str>,
    file: HttpFile,
) -> Result<Option<HttpSettings>, ConfigError> {
    let listen = match listen {
        Some("off") => return Ok(None),
        Some(t) => Some(
            t.parse::<SocketAddr>()
                .map_err(|_| ConfigError(format!("http_listen {t:?} is not an ip:port or off")))?,
        ),
        None => None,
    };
    let body_max = file.body_max_bytes.unwrap_or(16 << 10);
    if !(256..=(16 << 20)).contains(&body_max) {
        return err("http.body_max_bytes must be 256 to 16777216");
    }
    let queue_max = file.queue_max.unwrap_or(4096);
    if queue_max == 0 {
        return err("http.queue_max must be >= 1");
    }
    let idempotency_max = file
        .idempotency_keys_max
        .unwrap_or(http_gateway::config::IDEMPOTENCY_MAX_DEFAULT);
    if idempotency_max == 0 {
        return err("http.idempotency_keys_max must be >= 1");
    }
    let secs = file.idempotency_secs.unwrap_or(86_400);
    if secs == 0 || secs > 30 * 86_400 {
        return err("http.idempotency_secs must be 1 to 2592000 (30 days)");
    }
    let connections_max = file.connections_max.unwrap_or(1024);
    let per_address_max = file.connections_per_address_max.unwrap_or(256);
    if connections_max == 0 || per_address_max == 0 {
        return err("http.connections_max and http.connections_per_address_max must be >= 1");
    }
    let header_timeout_secs = file.header_timeout_secs.unwrap_or(10);
    if !(1..=600).contains(&header_timeout_secs) {
        return err("http.header_timeout_secs must be 1 to 600");
    }
    let ws_connections_max = file.ws_connections_max.unwrap_or(1024);
    if ws_connections_max == 0 {
        return err("http.ws_connections_max must be >= 1");
    }
    let ws_buffer = file
        .ws_buffer
        .unwrap_or(http_gateway::ws::WS_BUFFER_DEFAULT);
    if !(16..=(1 << 20)).contains(&ws_buffer) {
        return err("http.ws_buffer must be 16 to 1048576");
    }
    Ok(Some(HttpSettings {
        listen,
        body_max,
        queue_max,
        idempotency_max,
        idempotency_ttl_ns: secs * 1_000_000_000,
        limits: http_gateway::config::Limits {
            connections_max,
            per_address_max,
            header_timeout: std::time::Duration::from_secs(header_timeout_secs),
        },
        ws_connections_max,
        ws_buffer,
        bench_dir: file.bench_dir,
    }))
}

pub(super) fn api_key_defs(
    keys: &[ApiKeyConfig],
    firms: &[super::FirmDef],
) -> Result<Vec<ApiKeyDef>, ConfigError> {
    let mut names = HashSet::new();
    let mut hashes = HashSet::new();
    keys.iter()
        .map(|k| {
            if k.name.is_empty() || !names.insert(k.name.as_str()) {
                return err(format!("api key {:?}: a unique, non-empty name", k.name));
            }
            let sha256 = http_gateway::keys::parse_sha256(&k.sha256).ok_or_else(|| {
                ConfigError(format!(
                    "api key {:?}: sha256 must be 64 hex digits (rialto apikey new prints it)",
                    k.name
                ))
            })?;
            if !hashes.insert(sha256) {
                return err(format!(
                    "api key {:?}: the same token as another key",
                    k.name
                ));
            }
            let firm = firms
                .iter()
                .position(|f| f.accounts.contains(&k.account))
                .ok_or_else(|| {
                    ConfigError(format!(
                        "api key {:?}: account {} belongs to no firm",
                        k.name, k.account
                    ))
                })?;
            let requests_per_sec = k.requests_per_sec.unwrap_or(1000);
            if requests_per_sec == 0 {
                return err(format!(
                    "api key {:?}: requests_per_sec must be >= 1",
                    k.name
                ));
            }
            Ok(ApiKeyDef {
                name: k.name.clone(),
                sha256,
                account: k.account,
                firm: firm as u16,
                requests_per_sec,
            })
        })
        .collect()
}

impl Config {
    /// What the API edge is configured with: the keys are the originators after the FIX
    /// sessions.
    pub fn api_config(&self) -> http_gateway::ApiConfig {
        let (max, ttl) = self.http.as_ref().map_or(
            (
                http_gateway::config::IDEMPOTENCY_MAX_DEFAULT,
                http_gateway::config::IDEMPOTENCY_TTL_DEFAULT_NS,
            ),
            |h| (h.idempotency_max, h.idempotency_ttl_ns),
        );
        http_gateway::ApiConfig {
            keys: self
                .api_keys
                .iter()
                .map(|k| http_gateway::KeyDef {
                    name: k.name.clone(),
                    sha256: k.sha256,
                    account: k.account,
                    firm: k.firm,
                    requests_per_sec: k.requests_per_sec,
                })
                .collect(),
            instruments: self
                .instruments
                .iter()
                .map(|i| http_gateway::InstrumentDef {
                    symbol: i.instrument.symbol,
                    tick: i.instrument.tick,
                    lot: i.instrument.lot,
                    price_decimals: i.price_decimals,
                })
                .collect(),
            originator_base: self.sessions.len() as u16,
            idempotency_max: max,
            idempotency_ttl_ns: ttl,
            operators: self.operators.clone(),
            firms: self
                .firms
                .iter()
                .map(|f| http_gateway::FirmRef {
                    name: f.name.clone(),
                    accounts: f.accounts.clone(),
                })
                .collect(),
        }
    }

    /// Where the REST API is served: `http_listen`, or port 8080 on the order-entry address
    /// (an ephemeral port when the order-entry one is). `None`: off.
    pub fn http_listen(&self) -> Option<SocketAddr> {
        let h = self.http.as_ref()?;
        Some(h.listen.unwrap_or_else(|| {
            let mut a = self.listen;
            if a.port() != 0 {
                a.set_port(HTTP_PORT_DEFAULT);
            }
            a
        }))
    }
}
