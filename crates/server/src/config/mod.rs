//! Server configuration: what `rialto serve` reads from `rialto.toml`, and the embedded defaults
//! used when there is no file.
//!
//! Role: parse and validate once at start; everything downstream sees a `Config` whose
//! instruments, firms and sessions are consistent (unique names, known firms, valid ticks).
//!
//! Never: read the clock or the network; change after start (the journal's meaning depends on
//! the instrument table, so instruments are only ever appended to the end of the list).
//!
//! Layout: one module per section of the file, each with its own types and checks:
//! `instruments`, `sessions` (firms and sessions, and the default contract's), `limits`
//! (throttles and the capacity defaults), `market_data`, `http` (the REST API and its API
//! keys), `store` (the trade store), `tls`, `trading_day`. This module
//! holds the file format (`FileConfig`), the validated `Config` and `Config::from_file`, which
//! checks the sections in a fixed order (the first error is the one reported); a new section
//! gets a module of its own and a line there.
//!
//! Defaults (no config file): FIX 4.4 on 127.0.0.1:9878 as TargetCompID `RIALTO`, data in
//! `./data`, `process` durability, instruments `ACME` `BOLT` `CRNK` (tick 0.01, lot 1), sessions
//! `CLIENT1`..`CLIENT9` (accounts 1..9) and `BOT1`..`BOT64` (accounts 101..164, for `rialto bench`
//! and `rialto demo`), each its own firm, no password, and market-data only sessions `MD1`..`MD64`
//! (with RptSeq and AggressorSide in FIX 4.4: `rialto book`, `rialto bench md`), drop-copy
//! sessions `DROPCOPY1`..`DROPCOPY9` (FIX 4.4) of the firms of `CLIENT1`..`CLIENT9`, and
//! `CLIENT1_42`, a FIX 4.2 order-entry session of `CLIENT1`'s firm; market data on the
//! order-entry port + 1, the REST API on port 8080 (no API keys); the trading day ends at 21:00:00 UTC (DAY orders expire) and the
//! next one starts at once.

mod cluster;
mod http;
mod instruments;
mod limits;
mod market_data;
mod sessions;
mod store;
mod tls;
mod trading_day;

pub use cluster::{ClusterConfig, ClusterFile, GATEWAY_ORIGINATORS};
pub use http::{ApiKeyConfig, ApiKeyDef, HttpFile, HttpSettings, HTTP_PORT_DEFAULT};
pub use instruments::{parse_tick, InstrumentConfig, InstrumentDef};
pub use limits::{Throttle, ThrottleFile, BATCH_BUDGET_DEFAULT, FIRM_CAPACITY_PERCENT_DEFAULT};
pub use market_data::{MarketDataConfig, MarketDataFile};
pub use sessions::{FirmConfig, FirmDef, MarketDataAccess, SessionConfig, SessionDef};
pub use store::{StoreConfig, StoreFile, StoreTable, StoreTarget};
pub use tls::TlsConfig;
pub use trading_day::TRADING_DAY_END_DEFAULT;

use http::{api_key_defs, http_settings};
use instruments::{default_instruments, instrument_defs};
use market_data::market_data_config;
use sessions::{default_firms_and_sessions, firm_defs, session_defs};
use store::store_config;
use tls::check_client_cert_names;
use trading_day::trading_day;

use serde::Deserialize;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;

/// What the server's event loop does when it has nothing to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Idle {
    /// Park in `epoll_wait` until a socket, the timer or a stop request wakes it (default).
    #[default]
    Park,
    /// Busy-poll: `epoll_wait` with a zero timeout in a loop. Saves the thread wake-up on each
    /// message but burns a whole core; the only spinning thread of the process.
    Spin,
}

impl Idle {
    pub fn as_str(self) -> &'static str {
        match self {
            Idle::Park => "park",
            Idle::Spin => "spin",
        }
    }
}

/// When a command's effects may leave the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Durability {
    /// After the journal write returned (survives kill -9 of the exchange).
    #[default]
    Process,
    /// After fdatasync of the batch (survives power loss).
    Fsync,
}

impl Durability {
    /// The journal's name for it.
    pub fn journal(self) -> journal::Durability {
        match self {
            Durability::Process => journal::Durability::Process,
            Durability::Fsync => journal::Durability::Fsync,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Process => "process",
            Durability::Fsync => "fsync",
        }
    }
}

/// The file format of `rialto.toml` (every key optional).
#[derive(Clone, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct FileConfig {
    pub listen: Option<String>,
    pub data_dir: Option<PathBuf>,
    pub comp_id: Option<String>,
    pub durability: Option<Durability>,
    pub snapshot_every_commands: Option<u64>,
    pub snapshot_every_secs: Option<u64>,
    pub checkpoint_every_records: Option<u64>,
    pub resend_store_max: Option<usize>,
    pub orders_max: Option<usize>,
    pub firm_capacity_percent: Option<u32>,
    pub mass_cancel_chunk: Option<usize>,
    pub journal_segment_bytes: Option<u64>,
    pub batch_budget: Option<usize>,
    pub idle: Option<Idle>,
    pub cpu: Option<usize>,
    pub stall_log_us: Option<u64>,
    pub sending_time_window_secs: Option<u64>,
    pub failed_logon_delay_ms: Option<u64>,
    pub failed_logon_delay_max_ms: Option<u64>,
    pub message_log_dir: Option<PathBuf>,
    pub trading_day_end: Option<String>,
    pub trading_day_start: Option<String>,
    pub max_connections: Option<usize>,
    pub logon_timeout_secs: Option<u64>,
    pub outbound_queue_bytes: Option<usize>,
    pub session_queue_max: Option<usize>,
    pub firm_queue_max: Option<usize>,
    pub throttle: Option<ThrottleFile>,
    pub instruments: Option<Vec<InstrumentConfig>>,
    pub firms: Option<Vec<FirmConfig>>,
    pub sessions: Option<Vec<SessionConfig>>,
    pub market_data: Option<MarketDataFile>,
    /// Where the REST API is served (`ip:port`, or `off`).
    pub http_listen: Option<String>,
    pub http: Option<HttpFile>,
    pub api_keys: Option<Vec<ApiKeyConfig>>,
    /// `[[operators]]`: who may use `rialto admin`.
    pub operators: Option<Vec<http::OperatorConfig>>,
    pub tls: Option<TlsConfig>,
    /// The trade store: `"off"`, or `[store]` (SQLite at `data_dir/rialto.db` by default).
    pub store: Option<StoreFile>,
    /// Cluster mode (`rialto engine`, `rialto gateway`).
    pub cluster: Option<ClusterFile>,
}

/// The validated configuration.
#[derive(Clone, Debug)]
pub struct Config {
    pub listen: SocketAddr,
    pub data_dir: PathBuf,
    pub durability: Durability,
    /// Take a snapshot after this many journaled commands (0 = never by count).
    pub snapshot_every_commands: u64,
    /// Take a snapshot after this many seconds with new commands (0 = never by time).
    pub snapshot_every_secs: u64,
    /// Journal a checkpoint (`Record::Checkpoint`: the exchange's next ids, the sessions'
    /// outbound sequence numbers) every this many records (0 = never). A replay checks each one; the newest lets it
    /// skip storing messages the resend store would forget anyway. Default 65,536.
    pub checkpoint_every_records: u64,
    /// Outbound messages kept per session for ResendRequest (older ones are gap-filled).
    pub resend_store_max: usize,
    /// Most resting orders across all books (the engine preallocates them).
    pub orders_max: usize,
    /// The most of `orders_max` one firm's open orders may take, in percent (1 to 100).
    /// Default [`FIRM_CAPACITY_PERCENT_DEFAULT`].
    pub firm_capacity_percent: u32,
    /// Orders one journal record of a mass cancel cancels at most; the rest follow in
    /// `Record::Continue`s, one per event-loop iteration, between other sessions' messages.
    /// Default `exchange::MASS_CANCEL_CHUNK_DEFAULT` (1,000).
    pub mass_cancel_chunk: usize,
    /// Size journal segments are preallocated to (default 64 MiB).
    pub journal_segment_bytes: u64,
    /// Most messages from connections one iteration of the event loop applies, shared
    /// round-robin between the connections with messages waiting; the rest waits in each
    /// connection's queue for the next iterations (and over `session_queue_max` waiting, is
    /// answered "exchange busy"). Bounds the work, hence the latency, of one iteration.
    /// Default [`BATCH_BUDGET_DEFAULT`].
    pub batch_budget: usize,
    /// What the event loop does when idle (default `park`).
    pub idle: Idle,
    /// Pin the event loop to this CPU and keep the server's other threads (snapshot, snapshot
    /// replica, journal background sync) off it (default: nothing pinned). With `idle =
    /// "spin"` the loop then owns that CPU; the load generator or other work belongs on the
    /// others.
    pub cpu: Option<usize>,
    /// The event loop logs, at most once a second, its slowest busy iteration of the last
    /// second (and where its time went) when it took longer than this, or when a spinning loop
    /// was off its CPU longer than this between iterations; 0 = never. Default 1000 (1 ms).
    pub stall_log_us: u64,
    /// An inbound SendingTime (52) further than this from the server's clock is refused
    /// (Reject 373=10, then Logout), as FIX requires; 0: not checked. Default 120.
    pub sending_time_window_secs: u64,
    /// A failed logon delays the next check of its CompID and its source address by this
    /// much, doubling with each further failure up to `failed_logon_delay_max` (defaults
    /// 100 ms and 3.2 s; `server::auth`).
    pub failed_logon_delay: std::time::Duration,
    pub failed_logon_delay_max: std::time::Duration,
    /// Where sessions with `message_log = true` write their messages (default
    /// `<data_dir>/messages`).
    pub message_log_dir: Option<PathBuf>,
    /// When the trading day ends, in ns after midnight UTC (`trading_day_end = "HH:MM:SS"`,
    /// default [`TRADING_DAY_END_DEFAULT`], 21:00:00): DAY orders expire and sessions that
    /// subscribed are sent TradingSessionStatus. `trading_day_end = "off"`: `None`, the day
    /// never ends and DAY orders rest until canceled.
    pub trading_day_end_ns: Option<u64>,
    /// When the next trading day starts, in ns after midnight UTC (`trading_day_start =
    /// "HH:MM:SS"`): from the end of the day until then the market is closed and new orders
    /// and replaces are rejected ("market closed until 08:00:00 UTC"). `None` (the default):
    /// the next day starts as the last one ends.
    pub trading_day_start_ns: Option<u64>,
    /// Most connections open at once at the order-entry port (default 1,024). Connections
    /// that have not logged on may take all but one per configured order-entry session (the
    /// headroom that keeps room for every session to log on); past either limit a new
    /// connection is accepted and closed at once, and the refusal logged.
    pub max_connections: usize,
    /// A connection that has not sent a valid Logon this long after it was accepted is
    /// closed (default 5 s).
    pub logon_timeout_secs: u64,
    /// A connection whose unsent output passes this many bytes is logged out as a slow
    /// consumer (default 16 MiB); its buffers are given back after.
    pub outbound_queue_bytes: usize,
    /// Most application messages of one session that may wait (read, not yet applied);
    /// beyond it the session's new ones are answered "exchange busy" (default 512). Others'
    /// waiting messages never count.
    pub session_queue_max: usize,
    /// The same bound over all the sessions of one firm (default 2,048).
    pub firm_queue_max: usize,
    pub instruments: Vec<InstrumentDef>,
    pub firms: Vec<FirmDef>,
    pub sessions: Vec<SessionDef>,
    /// `None`: no market data (`[market_data] enabled = false`).
    pub market_data: Option<MarketDataConfig>,
    /// `None`: no REST API (`http_listen = "off"`).
    pub http: Option<HttpSettings>,
    /// The API keys, the exchange's originators after the sessions (`[[api_keys]]`).
    pub api_keys: Vec<ApiKeyDef>,
    /// Who may use the operator's endpoint (`[[operators]]`).
    pub operators: Vec<http_gateway::OperatorDef>,
    /// `Some`: the order-entry listener is TLS only (`[tls]`).
    pub tls: Option<TlsConfig>,
    /// `None`: no trade store (`store = "off"`).
    pub store: Option<StoreConfig>,
    /// `[cluster]`, if given.
    pub cluster: Option<ClusterConfig>,
    /// Set on a gateway (`Config::as_gateway`): its exchange sends inputs to the engines.
    pub remote: Option<exchange::RemoteConfig>,
}

#[derive(Debug)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "config: {}", self.0)
    }
}
impl std::error::Error for ConfigError {}

fn err<T>(msg: impl Into<String>) -> Result<T, ConfigError> {
    Err(ConfigError(msg.into()))
}

impl Config {
    /// Snapshots are taken periodically (by count or by time), not only at a clean stop.
    pub fn periodic_snapshots(&self) -> bool {
        self.snapshot_every_commands > 0 || self.snapshot_every_secs > 0
    }

    /// The embedded defaults (see the module doc).
    pub fn defaults() -> Config {
        Config::from_file(FileConfig::default()).expect("embedded defaults are valid")
    }

    /// Parses TOML text; keys left out take the embedded defaults.
    pub fn from_toml(text: &str) -> Result<Config, ConfigError> {
        let file: FileConfig = toml::from_str(text).map_err(|e| ConfigError(e.to_string()))?;
        Config::from_file(file)
    }

    pub fn from_file(file: FileConfig) -> Result<Config, ConfigError> {
        let comp_id = file.comp_id.unwrap_or_else(|| "RIALTO".to_string());
        let listen_text = file.listen.unwrap_or_else(|| "127.0.0.1:9878".to_string());
        let listen: SocketAddr = listen_text
            .parse()
            .map_err(|_| ConfigError(format!("listen {listen_text:?} is not an ip:port")))?;
        let instruments_cfg = file.instruments.unwrap_or_else(default_instruments);
        let (firms_cfg, sessions_cfg) = match (file.firms, file.sessions) {
            (Some(f), Some(s)) => (f, s),
            (None, None) => default_firms_and_sessions(),
            _ => return err("give both [[firms]] and [[sessions]], or neither"),
        };
        let instruments = instrument_defs(&instruments_cfg)?;
        let notional_decimals = instruments
            .iter()
            .map(|i| i.price_decimals)
            .max()
            .unwrap_or(0);
        let firms = firm_defs(&firms_cfg, notional_decimals)?;
        let throttle = Throttle::DEFAULT.with(&file.throttle.unwrap_or_default());
        let sessions = session_defs(&sessions_cfg, &firms, &comp_id, throttle)?;
        if firms.len() > u16::MAX as usize {
            return err("too many firms");
        }
        let api_keys = api_key_defs(&file.api_keys.unwrap_or_default(), &firms)?;
        let operators = http::operator_defs(&file.operators.unwrap_or_default(), &api_keys)?;
        if sessions.len() + api_keys.len() > u16::MAX as usize {
            return err("too many sessions and API keys");
        }
        let http = http_settings(file.http_listen.as_deref(), file.http.unwrap_or_default())?;
        let orders_max = file.orders_max.unwrap_or(1 << 20);
        // At most 2^24 (16.7 M resting orders, 2 GiB of order records): the ClOrdID index
        // names ring positions in 25 bits, and its ring holds the window plus about 8/7 of
        // the live orders (the `exchange` crate's ClOrdID index).
        if !(16..=(1 << 24)).contains(&orders_max) {
            return err("orders_max must be in 16..=16777216");
        }
        let firm_capacity_percent = file
            .firm_capacity_percent
            .unwrap_or(FIRM_CAPACITY_PERCENT_DEFAULT);
        if !(1..=100).contains(&firm_capacity_percent) {
            return err("firm_capacity_percent must be in 1..=100");
        }
        let mass_cancel_chunk = file
            .mass_cancel_chunk
            .unwrap_or(exchange::MASS_CANCEL_CHUNK_DEFAULT);
        if mass_cancel_chunk == 0 {
            return err("mass_cancel_chunk must be >= 1");
        }
        let batch_budget = match file.batch_budget {
            Some(0) => return err("batch_budget must be >= 1"),
            Some(b) => b,
            None => BATCH_BUDGET_DEFAULT,
        };
        let market_data = market_data_config(file.market_data.unwrap_or_default(), listen)?;
        let failed_logon_delay_ms = file.failed_logon_delay_ms.unwrap_or(100);
        let failed_logon_delay_max_ms = file.failed_logon_delay_max_ms.unwrap_or(3200);
        if !(1..=60_000).contains(&failed_logon_delay_ms)
            || !(failed_logon_delay_ms..=600_000).contains(&failed_logon_delay_max_ms)
        {
            return err(
                "failed_logon_delay_ms must be 1 to 60000 and failed_logon_delay_max_ms from it \
                 to 600000",
            );
        }
        let (trading_day_end_ns, trading_day_start_ns) = trading_day(
            file.trading_day_end.as_deref(),
            file.trading_day_start.as_deref(),
        )?;
        check_client_cert_names(file.tls.as_ref(), &sessions)?;
        let store = store_config(file.store)?;
        let cluster = cluster::cluster_config(file.cluster, &instruments)?;
        Ok(Config {
            store,
            cluster,
            remote: None,
            http,
            api_keys,
            operators,
            tls: file.tls,
            market_data,
            listen,
            data_dir: file.data_dir.unwrap_or_else(|| PathBuf::from("./data")),
            durability: file.durability.unwrap_or_default(),
            snapshot_every_commands: file.snapshot_every_commands.unwrap_or(1_000_000),
            snapshot_every_secs: file.snapshot_every_secs.unwrap_or(60),
            checkpoint_every_records: file.checkpoint_every_records.unwrap_or(1 << 16),
            resend_store_max: file.resend_store_max.unwrap_or(5_000).max(1),
            orders_max,
            firm_capacity_percent,
            mass_cancel_chunk,
            journal_segment_bytes: file.journal_segment_bytes.unwrap_or(64 << 20).max(1 << 20),
            batch_budget,
            idle: file.idle.unwrap_or_default(),
            cpu: match file.cpu {
                Some(c) if c >= 1024 => {
                    return err(format!("cpu = {c}: give a CPU number below 1024"))
                }
                c => c,
            },
            stall_log_us: file.stall_log_us.unwrap_or(1_000),
            sending_time_window_secs: file.sending_time_window_secs.unwrap_or(120),
            failed_logon_delay: std::time::Duration::from_millis(failed_logon_delay_ms),
            failed_logon_delay_max: std::time::Duration::from_millis(failed_logon_delay_max_ms),
            message_log_dir: file.message_log_dir.clone(),
            trading_day_end_ns,
            trading_day_start_ns,
            max_connections: match file.max_connections.unwrap_or(1024) {
                0 => return err("max_connections must be >= 1"),
                n => n,
            },
            logon_timeout_secs: match file.logon_timeout_secs.unwrap_or(5) {
                0 => return err("logon_timeout_secs must be >= 1"),
                n => n,
            },
            outbound_queue_bytes: match file.outbound_queue_bytes.unwrap_or(16 << 20) {
                n if n < 64 << 10 => return err("outbound_queue_bytes must be >= 65536"),
                n => n,
            },
            session_queue_max: match file.session_queue_max.unwrap_or(512) {
                0 => return err("session_queue_max must be >= 1"),
                n => n,
            },
            firm_queue_max: match file.firm_queue_max.unwrap_or(2048) {
                0 => return err("firm_queue_max must be >= 1"),
                n => n,
            },
            instruments,
            firms,
            sessions,
        })
    }

    /// This configuration without the checks that need a real clock and real clients: no
    /// SendingTime window and no dictionary validation. For journals stamped without a clock
    /// (tests, fuzzing, benchmarks' synthetic streams) and hand-made messages.
    pub fn lenient(mut self) -> Config {
        self.sending_time_window_secs = 0;
        for s in &mut self.sessions {
            s.validate = false;
        }
        self
    }

    /// This configuration for a gateway of the cluster (`rialto gateway`): its exchange sends
    /// each input to its shard's engine. Its journal holds the sessions and what the engines
    /// answered, trades and level changes included: its market-data replica follows them,
    /// and its trade store holds every shard's trades and reports (other gateways' orders
    /// under an owner none of its originators has). It takes no snapshot (its state is not in
    /// an exchange snapshot).
    pub fn as_gateway(mut self) -> Result<Config, ConfigError> {
        let Some(c) = &self.cluster else {
            return err("a gateway needs [cluster]");
        };
        let Some(gateway) = c.gateway else {
            return err("a gateway needs [cluster] gateway = N (1 to 63)");
        };
        let originators = self.sessions.len() + self.api_keys.len();
        if originators > GATEWAY_ORIGINATORS as usize {
            return err(format!(
                "a gateway serves at most {GATEWAY_ORIGINATORS} sessions and API keys, not \
                 {originators}"
            ));
        }
        self.remote = Some(exchange::RemoteConfig {
            gateway,
            originator_base: (gateway - 1) * GATEWAY_ORIGINATORS,
            originators: originators as u16,
            shard_of_symbol: c.shard_of_symbol.clone(),
            shards: c.shards.len() as u16,
        });
        self.snapshot_every_commands = 0;
        self.snapshot_every_secs = 0;
        Ok(self)
    }

    /// What an engine of the cluster configures its exchange with: every originator of every
    /// gateway may disconnect with cancel on disconnect (a gateway sends the input only for
    /// sessions that asked for it).
    pub fn engine_exchange_config(&self) -> exchange::Config {
        exchange::Config {
            cancel_on_disconnect: vec![true; u16::MAX as usize + 1],
            ..self.exchange_config()
        }
    }

    /// Each instrument's limits, its order notional scaled from its price units to the
    /// notional decimals (the most any instrument's prices have).
    fn instrument_risk(&self) -> Vec<exchange::InstrumentRisk> {
        let nd = self.instruments.iter().map(|i| i.price_decimals).max();
        self.instruments
            .iter()
            .map(|i| {
                let scale = 10i128.pow(nd.unwrap_or(0) - i.price_decimals);
                exchange::InstrumentRisk {
                    max_order_notional: i.risk.max_order_notional.map(|n| n * scale),
                    ..i.risk
                }
            })
            .collect()
    }

    /// What the exchange is configured with.
    pub fn exchange_config(&self) -> exchange::Config {
        exchange::Config {
            instruments: self.engine_instruments(),
            firms: self.firms.iter().map(|f| f.accounts.clone()).collect(),
            orders_max: self.orders_max,
            cancel_on_disconnect: self
                .sessions
                .iter()
                .map(|s| s.cancel_on_disconnect)
                .collect(),
            trading_day_end_ns: self.trading_day_end_ns,
            trading_day_start_ns: self.trading_day_start_ns,
            firm_limits: self.firms.iter().map(|f| f.limits).collect(),
            firm_capacity_percent: self.firm_capacity_percent,
            mass_cancel_chunk: self.mass_cancel_chunk,
            mass_cancel_scan: exchange::MASS_CANCEL_SCAN_DEFAULT,
            price_decimals: self
                .instruments
                .iter()
                .map(|i| i.price_decimals as u8)
                .collect(),
            instrument_risk: self.instrument_risk(),
        }
    }
}

#[cfg(test)]
mod tests;
