//! Server configuration: what `rialto serve` reads from `rialto.toml`, and the embedded defaults
//! used when there is no file.
//!
//! Role: parse and validate once at start; everything downstream sees a `Config` whose
//! instruments, firms and sessions are consistent (unique names, known firms, valid ticks).
//!
//! Never: read the clock or the network; change after start (the journal's meaning depends on
//! the instrument table, so instruments are only ever appended to the end of the list).
//!
//! Defaults (no config file): FIX 4.4 on 127.0.0.1:9878 as TargetCompID `RIALTO`, data in
//! `./data`, `process` durability, instruments `ACME` `BOLT` `CRNK` (tick 0.01, lot 1), sessions
//! `CLIENT1`..`CLIENT9` (accounts 1..9) and `BOT1`..`BOT64` (accounts 101..164, for `rialto bench`
//! and `rialto demo`), each its own firm, no password, and market-data only sessions `MD1`..`MD64`
//! (with RptSeq and AggressorSide in FIX 4.4: `rialto book`, `rialto bench md`), drop-copy
//! sessions `DROPCOPY1`..`DROPCOPY9` (FIX 4.4) of the firms of `CLIENT1`..`CLIENT9`, and
//! `CLIENT1_42`, a FIX 4.2 order-entry session of `CLIENT1`'s firm; market data on the
//! order-entry port + 1; the trading day ends at 21:00:00 UTC (DAY orders expire) and the
//! next one starts at once.

use serde::Deserialize;
use std::collections::HashSet;
use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use types::{AccountId, Instrument, Symbol};

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

/// Default of [`Config::batch_budget`]: application messages one event-loop iteration applies
/// before the rest of what it read waits for the next iteration.
pub const BATCH_BUDGET_DEFAULT: usize = 1024;

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

/// One tradable instrument. `tick` is a decimal string (`"0.01"`); prices on the wire are
/// decimals that must be whole multiples of it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InstrumentConfig {
    pub symbol: String,
    pub tick: String,
    #[serde(default = "one")]
    pub lot: u64,
}

fn one() -> u64 {
    1
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FirmConfig {
    pub name: String,
    /// Accounts of the firm; the first is the default for orders without tag 1 (Account).
    pub accounts: Vec<AccountId>,
    /// Most open (resting) orders of all its accounts together (default: only its share of
    /// the capacity, `firm_capacity_percent`, which bounds this too).
    #[serde(default)]
    pub max_open_orders: Option<u64>,
    /// Most open orders of each of its accounts (default: no limit of its own).
    #[serde(default)]
    pub max_open_orders_per_account: Option<u64>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionConfig {
    /// The client's SenderCompID (our TargetCompID on outbound messages).
    pub sender_comp_id: String,
    /// Our CompID as the client addresses it; defaults to the server's `comp_id`.
    #[serde(default)]
    pub target_comp_id: Option<String>,
    /// `FIX.4.4` (default), `FIX.4.2` or `FIXT.1.1`.
    #[serde(default = "fix44")]
    pub fix_version: String,
    /// The salted hash (argon2 PHC string, `$argon2id$...`, made by `rialto passwd`) the
    /// Logon's Password (554) must match when set.
    #[serde(default)]
    pub password_hash: Option<String>,
    /// The Username (553) the Logon must carry when set.
    #[serde(default)]
    pub username: Option<String>,
    /// Refused: a password in plain text (the error says to use `password_hash`).
    #[serde(default)]
    pub password: Option<String>,
    pub firm: String,
    /// Cancel the session's live orders when it ends (Logout or lost connection).
    #[serde(default)]
    pub cancel_on_disconnect: bool,
    /// `on` (default): it may enter orders and log on at the market-data port too; `off`:
    /// orders only; `only`: market data only (its Logon at the order-entry port is refused).
    #[serde(default)]
    pub market_data: MarketDataAccess,
    /// Its market data carries RptSeq (83) in FIX 4.2 and 4.4 and AggressorSide (2446) on
    /// trades, fields those versions' standard dictionaries lack.
    #[serde(default)]
    pub market_data_extensions: bool,
    /// Whether a Logon with ResetSeqNumFlag (141=Y) may reset the sequence numbers (default
    /// true); if false such a Logon is refused with a Logout saying so.
    #[serde(default = "yes")]
    pub allow_reset_seq_num: bool,
    /// Check every inbound message against the version's dictionary (required tags, types,
    /// enum values, repeating groups) and answer a violation with a session Reject (default
    /// true). Off, only the fields Rialto reads are checked.
    #[serde(default = "yes")]
    pub validate: bool,
    /// Write every message of the session (in and out, order-entry port) to
    /// `<message_log_dir>/<SenderCompID>-<TargetCompID>.messages.log` (default false).
    #[serde(default)]
    pub message_log: bool,
    /// A drop-copy session of its firm: it may not enter orders and gets a copy of every
    /// ExecutionReport about the firm's orders, in its own FIX version.
    #[serde(default)]
    pub drop_copy: bool,
    /// Its own message rate limits (keys of `[throttle]`), over the global ones.
    #[serde(default)]
    pub throttle: Option<ThrottleFile>,
    /// With client certificates (`[tls] client_ca_file`): the name its certificate must carry
    /// (subject CommonName, or a DNS name of its SubjectAltName) for a Logon as this session.
    /// Default: the SenderCompID.
    #[serde(default)]
    pub client_cert_name: Option<String>,
}

fn yes() -> bool {
    true
}

/// Where a session may log on (`fix_gateway::MarketDataAccess`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum MarketDataAccess {
    #[default]
    On,
    Off,
    Only,
}

/// `[throttle]` of `rialto.toml`, or a session's own `throttle = { ... }` (every key optional;
/// a session's keys override the global ones, which override the defaults).
#[derive(Clone, Copy, Debug, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ThrottleFile {
    pub orders_per_sec: Option<u32>,
    pub cancels_per_sec: Option<u32>,
    pub messages_per_sec: Option<u32>,
    pub logout_messages_per_sec: Option<u32>,
}

/// A session's message rate limits, each over any one second (a burst of a second's worth is
/// allowed, then the rate); 0: no limit. Over `orders_per_sec` (NewOrderSingle and
/// OrderCancelReplaceRequest), `cancels_per_sec` (OrderCancelRequest and
/// OrderMassCancelRequest) or `messages_per_sec` (every inbound message, session-level ones
/// included), an application message is answered with a reject naming the limit and never
/// reaches the exchange; over `logout_messages_per_sec` the session is logged out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throttle {
    pub orders_per_sec: u32,
    pub cancels_per_sec: u32,
    pub messages_per_sec: u32,
    pub logout_messages_per_sec: u32,
}

impl Throttle {
    /// The defaults of a session: a fast algorithmic client's rates, far below what the
    /// exchange absorbs, so that one session cannot take the others' share.
    pub const DEFAULT: Throttle = Throttle {
        orders_per_sec: 5_000,
        cancels_per_sec: 5_000,
        messages_per_sec: 10_000,
        logout_messages_per_sec: 50_000,
    };

    /// `base` with the keys `f` gives.
    fn with(self, f: &ThrottleFile) -> Throttle {
        Throttle {
            orders_per_sec: f.orders_per_sec.unwrap_or(self.orders_per_sec),
            cancels_per_sec: f.cancels_per_sec.unwrap_or(self.cancels_per_sec),
            messages_per_sec: f.messages_per_sec.unwrap_or(self.messages_per_sec),
            logout_messages_per_sec: f
                .logout_messages_per_sec
                .unwrap_or(self.logout_messages_per_sec),
        }
    }
}

/// The throttle of the default contract's `BOT*` sessions (`rialto bench`, `rialto demo`):
/// high enough for the benchmarks' sweeps.
const BOT_THROTTLE: ThrottleFile = ThrottleFile {
    orders_per_sec: Some(200_000),
    cancels_per_sec: Some(200_000),
    messages_per_sec: Some(400_000),
    logout_messages_per_sec: Some(2_000_000),
};

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

/// `[tls]` of `rialto.toml`: the FIX order-entry listener speaks TLS (1.2 and 1.3) only.
/// Paths are as given (relative ones from the working directory); the files are read, and
/// checked, when the server starts.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlsConfig {
    /// The server's certificate chain, PEM (leaf first).
    pub cert_file: PathBuf,
    /// Its private key, PEM (PKCS#8, PKCS#1 or SEC1).
    pub key_file: PathBuf,
    /// CA certificates, PEM: when set, every client must present a certificate issued by one
    /// of them, and a Logon must name a SenderCompID its certificate carries
    /// (`SessionConfig::client_cert_name`).
    #[serde(default)]
    pub client_ca_file: Option<PathBuf>,
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

fn fix44() -> String {
    "FIX.4.4".to_string()
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
    pub tls: Option<TlsConfig>,
}

/// A validated instrument: its engine definition plus the decimal scale of its prices.
#[derive(Clone, Copy, Debug)]
pub struct InstrumentDef {
    pub instrument: Instrument,
    /// Price unit is 10^-price_decimals; `instrument.tick` is in that unit.
    pub price_decimals: u32,
}

#[derive(Clone, Debug)]
pub struct FirmDef {
    pub name: String,
    pub accounts: Vec<AccountId>,
    /// Its own open-order limits (`FirmConfig`).
    pub limits: exchange::FirmLimits,
}

#[derive(Clone, Debug)]
pub struct SessionDef {
    pub sender_comp_id: String,
    pub target_comp_id: String,
    pub begin_string: String,
    /// Argon2 PHC string its Logon's Password must match (validated when read).
    pub password_hash: Option<String>,
    pub username: Option<String>,
    pub firm: usize,
    pub cancel_on_disconnect: bool,
    pub market_data: MarketDataAccess,
    pub market_data_extensions: bool,
    pub allow_reset_seq_num: bool,
    pub validate: bool,
    pub message_log: bool,
    pub drop_copy: bool,
    pub throttle: Throttle,
    pub client_cert_name: Option<String>,
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
    /// `Some`: the order-entry listener is TLS only (`[tls]`).
    pub tls: Option<TlsConfig>,
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

/// Parses a decimal tick like `0.01` into (units, decimals): `0.05` -> (5, 2), `1` -> (1, 0).
pub fn parse_tick(s: &str) -> Result<(i64, u32), ConfigError> {
    let s = s.trim();
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i, f.trim_end_matches('0')),
        None => (s, ""),
    };
    if int.is_empty() && frac.is_empty()
        || !int.bytes().all(|b| b.is_ascii_digit())
        || !frac.bytes().all(|b| b.is_ascii_digit())
        || frac.len() > 9
    {
        return err(format!("tick {s:?} is not a positive decimal"));
    }
    let digits = format!("{int}{frac}");
    let units: i64 = digits
        .parse()
        .map_err(|_| ConfigError(format!("tick {s:?} is out of range")))?;
    if units <= 0 {
        return err(format!("tick {s:?} must be positive"));
    }
    Ok((units, frac.len() as u32))
}

/// Default of [`Config::firm_capacity_percent`]: one firm may rest at most a quarter of
/// `orders_max` (262,144 orders of the default 1,048,576: far more than one participant rests
/// in normal trading), so a runaway firm leaves three quarters of the book to the others, and
/// filling it takes four firms at their caps at once. A firm's own `max_open_orders` may only
/// lower it; a venue with few firms that need more raises the percentage.
pub const FIRM_CAPACITY_PERCENT_DEFAULT: u32 = 25;

/// The default end of the trading day: 21:00:00 UTC, in ns after midnight.
pub const TRADING_DAY_END_DEFAULT: u64 = 21 * 3600 * 1_000_000_000;

/// `HH:MM:SS` (UTC) as ns after midnight (`key` names the setting in the error).
fn parse_time_of_day(key: &str, s: &str) -> Result<u64, ConfigError> {
    let bad = || ConfigError(format!("{key} {s:?} is not a time of day HH:MM:SS (UTC)"));
    let parts: Vec<&str> = s.split(':').collect();
    let [h, m, sec] = parts[..] else {
        return Err(bad());
    };
    let num = |p: &str, max: u64| -> Result<u64, ConfigError> {
        match p.parse::<u64>() {
            Ok(v) if p.len() == 2 && v <= max => Ok(v),
            _ => Err(bad()),
        }
    };
    let secs = num(h, 23)? * 3600 + num(m, 59)? * 60 + num(sec, 59)?;
    Ok(secs * 1_000_000_000)
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
        let instruments_cfg = file.instruments.unwrap_or_else(|| {
            ["ACME", "BOLT", "CRNK"]
                .iter()
                .map(|s| InstrumentConfig {
                    symbol: s.to_string(),
                    tick: "0.01".to_string(),
                    lot: 1,
                })
                .collect()
        });
        let (firms_cfg, sessions_cfg) = match (file.firms, file.sessions) {
            (Some(f), Some(s)) => (f, s),
            (None, None) => default_firms_and_sessions(),
            _ => return err("give both [[firms]] and [[sessions]], or neither"),
        };
        let mut instruments = Vec::new();
        let mut seen = HashSet::new();
        for i in &instruments_cfg {
            let symbol = Symbol::new(&i.symbol)
                .ok_or_else(|| ConfigError(format!("symbol {:?} is not valid", i.symbol)))?;
            if !seen.insert(i.symbol.clone()) {
                return err(format!("symbol {} is listed twice", i.symbol));
            }
            let (tick, price_decimals) = parse_tick(&i.tick)?;
            if i.lot == 0 {
                return err(format!("lot of {} must be >= 1", i.symbol));
            }
            instruments.push(InstrumentDef {
                instrument: Instrument {
                    symbol,
                    tick,
                    lot: i.lot,
                },
                price_decimals,
            });
        }
        if instruments.is_empty() {
            return err("no instruments");
        }
        let mut firms = Vec::new();
        let mut accounts_seen = HashSet::new();
        for f in &firms_cfg {
            if f.accounts.is_empty() {
                return err(format!("firm {} has no accounts", f.name));
            }
            if firms.iter().any(|x: &FirmDef| x.name == f.name) {
                return err(format!("firm {} is listed twice", f.name));
            }
            for a in &f.accounts {
                if !accounts_seen.insert(*a) {
                    return err(format!("account {a} belongs to two firms"));
                }
            }
            if f.max_open_orders == Some(0) || f.max_open_orders_per_account == Some(0) {
                return err(format!(
                    "firm {}: max_open_orders and max_open_orders_per_account must be >= 1",
                    f.name
                ));
            }
            firms.push(FirmDef {
                name: f.name.clone(),
                accounts: f.accounts.clone(),
                limits: exchange::FirmLimits {
                    max_open_orders: f.max_open_orders,
                    max_open_orders_per_account: f.max_open_orders_per_account,
                },
            });
        }
        let throttle = Throttle::DEFAULT.with(&file.throttle.unwrap_or_default());
        let mut sessions = Vec::new();
        for s in &sessions_cfg {
            let firm = firms.iter().position(|f| f.name == s.firm).ok_or_else(|| {
                ConfigError(format!(
                    "session {}: unknown firm {}",
                    s.sender_comp_id, s.firm
                ))
            })?;
            if !matches!(s.fix_version.as_str(), "FIX.4.4" | "FIX.4.2" | "FIXT.1.1") {
                return err(format!(
                    "session {}: fix_version {} (use FIX.4.4, FIX.4.2 or FIXT.1.1)",
                    s.sender_comp_id, s.fix_version
                ));
            }
            if s.drop_copy && s.market_data == MarketDataAccess::Only {
                return err(format!(
                    "session {}: a drop-copy session logs on at the order-entry port (market_data = \"only\" forbids it)",
                    s.sender_comp_id
                ));
            }
            if s.drop_copy && s.cancel_on_disconnect {
                return err(format!(
                    "session {}: a drop-copy session has no orders to cancel on disconnect",
                    s.sender_comp_id
                ));
            }
            if s.password.is_some() {
                return err(format!(
                    "session {}: `password` in plain text is not accepted: give its salted hash \
                     as `password_hash` (make one with `rialto passwd`)",
                    s.sender_comp_id
                ));
            }
            if let Some(h) = &s.password_hash {
                crate::auth::check_hash(h).map_err(|e| {
                    ConfigError(format!("session {}: password_hash: {e}", s.sender_comp_id))
                })?;
            }
            if s.username.as_deref().is_some_and(|u| {
                u.is_empty() || u.len() > fix::session::TEXT_LEN_MAX || u.bytes().any(|b| b == 1)
            }) {
                return err(format!(
                    "session {}: username must be 1 to {} bytes without SOH",
                    s.sender_comp_id,
                    fix::session::TEXT_LEN_MAX
                ));
            }
            let target = s.target_comp_id.clone().unwrap_or_else(|| comp_id.clone());
            if sessions.iter().any(|x: &SessionDef| {
                x.sender_comp_id == s.sender_comp_id && x.target_comp_id == target
            }) {
                return err(format!("session {} is listed twice", s.sender_comp_id));
            }
            sessions.push(SessionDef {
                sender_comp_id: s.sender_comp_id.clone(),
                target_comp_id: target,
                begin_string: s.fix_version.clone(),
                password_hash: s.password_hash.clone(),
                username: s.username.clone(),
                firm,
                cancel_on_disconnect: s.cancel_on_disconnect,
                market_data: s.market_data,
                market_data_extensions: s.market_data_extensions,
                allow_reset_seq_num: s.allow_reset_seq_num,
                validate: s.validate,
                message_log: s.message_log,
                drop_copy: s.drop_copy,
                throttle: throttle.with(&s.throttle.unwrap_or_default()),
                client_cert_name: s.client_cert_name.clone(),
            });
        }
        if firms.len() > u16::MAX as usize {
            return err("too many firms");
        }
        if sessions.len() > u16::MAX as usize {
            return err("too many sessions");
        }
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
        let md = file.market_data.unwrap_or_default();
        let market_data = if md.enabled.unwrap_or(true) {
            let listen = match &md.listen {
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
        };
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
        let trading_day_end_ns = match file.trading_day_end.as_deref() {
            None => Some(TRADING_DAY_END_DEFAULT),
            Some("off") => None,
            Some(s) => Some(parse_time_of_day("trading_day_end", s)?),
        };
        let trading_day_start_ns =
            match file.trading_day_start.as_deref() {
                None => None,
                Some(s) => {
                    let start = parse_time_of_day("trading_day_start", s)?;
                    match trading_day_end_ns {
                        None => return err(
                            "trading_day_start needs an end of the day (trading_day_end is off)",
                        ),
                        Some(end) if end == start => {
                            return err(format!(
                                "trading_day_start {s:?} equals trading_day_end: the market would \
                             never open; leave trading_day_start out to start the next day at once"
                            ))
                        }
                        Some(_) => Some(start),
                    }
                }
            };
        if file.tls.as_ref().is_none_or(|t| t.client_ca_file.is_none()) {
            if let Some(s) = sessions.iter().find(|s| s.client_cert_name.is_some()) {
                return err(format!(
                    "session {}: client_cert_name needs client certificates ([tls] client_ca_file)",
                    s.sender_comp_id
                ));
            }
        }
        Ok(Config {
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

    pub fn engine_instruments(&self) -> Vec<Instrument> {
        self.instruments.iter().map(|i| i.instrument).collect()
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
        }
    }

    /// What the FIX edge is configured with.
    pub fn fix_config(&self) -> fix_gateway::FixConfig {
        fix_gateway::FixConfig {
            sessions: self
                .sessions
                .iter()
                .map(|s| fix_gateway::SessionDef {
                    sender_comp_id: s.sender_comp_id.clone(),
                    target_comp_id: s.target_comp_id.clone(),
                    version: fix::FixVersion::from_begin_string(s.begin_string.as_bytes())
                        .expect("validated when the config was read"),
                    password_hash: s.password_hash.clone(),
                    username: s.username.clone(),
                    firm: s.firm as u16,
                    market_data: match s.market_data {
                        MarketDataAccess::On => fix_gateway::MarketDataAccess::On,
                        MarketDataAccess::Off => fix_gateway::MarketDataAccess::Off,
                        MarketDataAccess::Only => fix_gateway::MarketDataAccess::Only,
                    },
                    market_data_extensions: s.market_data_extensions,
                    allow_reset_seq_num: s.allow_reset_seq_num,
                    validate: s.validate,
                    drop_copy: s.drop_copy,
                })
                .collect(),
            instruments: self
                .instruments
                .iter()
                .map(|i| fix_gateway::InstrumentDef {
                    symbol: i.instrument.symbol,
                    tick: i.instrument.tick,
                    lot: i.instrument.lot,
                    price_decimals: i.price_decimals,
                })
                .collect(),
            resend_store_max: self.resend_store_max,
            heartbeat_min_s: 1,
            heartbeat_max_s: 3600,
            sending_time_window_ns: (self.sending_time_window_secs != 0)
                .then(|| self.sending_time_window_secs * 1_000_000_000),
        }
    }
}

/// A default-contract session: FIX 4.4, no password, orders and market data, the defaults of
/// every other key.
fn default_session(sender_comp_id: String, firm: String) -> SessionConfig {
    SessionConfig {
        sender_comp_id,
        target_comp_id: None,
        fix_version: fix44(),
        password_hash: None,
        username: None,
        password: None,
        firm,
        cancel_on_disconnect: false,
        market_data: MarketDataAccess::On,
        market_data_extensions: false,
        allow_reset_seq_num: true,
        validate: true,
        message_log: false,
        drop_copy: false,
        throttle: None,
        client_cert_name: None,
    }
}

fn default_firms_and_sessions() -> (Vec<FirmConfig>, Vec<SessionConfig>) {
    let mut firms = Vec::new();
    let mut sessions = Vec::new();
    let mut add = |name: String, account: AccountId| {
        let bot = name.starts_with("BOT");
        firms.push(FirmConfig {
            name: name.clone(),
            accounts: vec![account],
            max_open_orders: None,
            max_open_orders_per_account: None,
        });
        sessions.push(SessionConfig {
            throttle: bot.then_some(BOT_THROTTLE),
            ..default_session(name.clone(), name)
        });
    };
    for i in 1..=9u32 {
        add(format!("CLIENT{i}"), i);
    }
    for i in 1..=64u32 {
        add(format!("BOT{i}"), 100 + i);
    }
    // Market-data viewers (`rialto book`, `rialto bench md`): one firm, no orders.
    firms.push(FirmConfig {
        name: "VIEWERS".into(),
        accounts: vec![900],
        max_open_orders: None,
        max_open_orders_per_account: None,
    });
    for i in 1..=64u32 {
        sessions.push(SessionConfig {
            market_data: MarketDataAccess::Only,
            market_data_extensions: true,
            ..default_session(format!("MD{i}"), "VIEWERS".into())
        });
    }
    // Drop copy of each CLIENT firm, and a second, FIX 4.2 session of CLIENT1's firm (`rialto
    // bench echo --scenario convert`: FIX 4.2 orders in, their FIX 4.4 copies out).
    for i in 1..=9u32 {
        sessions.push(SessionConfig {
            market_data: MarketDataAccess::Off,
            drop_copy: true,
            ..default_session(format!("DROPCOPY{i}"), format!("CLIENT{i}"))
        });
    }
    sessions.push(SessionConfig {
        fix_version: "FIX.4.2".into(),
        ..default_session("CLIENT1_42".into(), "CLIENT1".into())
    });
    (firms, sessions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn defaults_match_the_issue() {
        let c = Config::defaults();
        assert_eq!(c.listen.to_string(), "127.0.0.1:9878");
        assert_eq!(c.instruments.len(), 3);
        assert_eq!(c.instruments[0].instrument.tick, 1);
        assert_eq!(c.instruments[0].price_decimals, 2);
        assert_eq!(c.sessions.len(), 73 + 64 + 10);
        assert_eq!(c.sessions[0].sender_comp_id, "CLIENT1");
        assert_eq!(c.sessions[0].target_comp_id, "RIALTO");
        assert_eq!(c.durability, Durability::Process);
        let md1 = &c.sessions[73];
        assert_eq!(md1.sender_comp_id, "MD1");
        assert_eq!(md1.market_data, MarketDataAccess::Only);
        let dc1 = &c.sessions[137];
        assert_eq!(
            (dc1.sender_comp_id.as_str(), dc1.drop_copy),
            ("DROPCOPY1", true)
        );
        assert_eq!(c.firms[dc1.firm].name, "CLIENT1");
        let c42 = &c.sessions[146];
        assert_eq!(
            (c42.sender_comp_id.as_str(), c42.begin_string.as_str()),
            ("CLIENT1_42", "FIX.4.2")
        );
        assert_eq!(c42.firm, dc1.firm);
        assert!(c.fix_config().sessions[137].drop_copy);
        assert_eq!(
            c.market_data_listen().unwrap().to_string(),
            "127.0.0.1:9879"
        );
    }

    #[test]
    fn market_data_keys() {
        let c = Config::from_toml(
            "listen = \"127.0.0.1:0\"\n[market_data]\nsubscriptions_max = 3\nnice = 0\n",
        )
        .unwrap();
        let md = c.market_data.unwrap();
        assert_eq!((md.subscriptions_max, md.nice), (3, 0));
        assert_eq!(
            c.market_data_listen().unwrap().port(),
            0,
            "ephemeral like listen"
        );
        let off = Config::from_toml("[market_data]\nenabled = false\n").unwrap();
        assert!(off.market_data.is_none() && off.market_data_listen().is_none());
        for bad in [
            "[market_data]\nnice = 20\n",
            "[market_data]\nlogout_bytes = 10\nconflate_bytes = 10\n",
            "[market_data]\nlisten = \"nowhere\"\n",
            "[market_data]\nbogus = 1\n",
        ] {
            assert!(Config::from_toml(bad).is_err(), "{bad}");
        }
        let s = Config::from_toml(
            "[[firms]]\nname = \"F\"\naccounts = [1]\n[[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\nmarket_data = \"only\"\nmarket_data_extensions = true\n",
        )
        .unwrap();
        assert_eq!(s.sessions[0].market_data, MarketDataAccess::Only);
        assert!(s.fix_config().sessions[0].market_data_extensions);
        assert!(Config::from_toml(
            "[[firms]]\nname = \"F\"\naccounts = [1]\n[[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\nmarket_data = \"maybe\"\n"
        )
        .is_err());
    }

    #[test]
    fn tls_section_and_client_cert_names() {
        let c = Config::from_toml(
            "[tls]\ncert_file = \"s.pem\"\nkey_file = \"k.pem\"\nclient_ca_file = \"ca.pem\"\n\
             [[firms]]\nname = \"F\"\naccounts = [1]\n\
             [[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\nclient_cert_name = \"a.example\"\n\
             [[sessions]]\nsender_comp_id = \"B\"\nfirm = \"F\"\n",
        )
        .unwrap();
        let tls = c.tls.as_ref().unwrap();
        assert_eq!(
            (tls.cert_file.to_str(), tls.key_file.to_str()),
            (Some("s.pem"), Some("k.pem"))
        );
        assert_eq!(
            tls.client_ca_file.as_deref(),
            Some(std::path::Path::new("ca.pem"))
        );
        assert_eq!(
            (
                c.sessions[0].client_cert_name.as_deref(),
                c.sessions[1].client_cert_name.as_deref()
            ),
            (Some("a.example"), None)
        );
        assert!(Config::defaults().tls.is_none());
        // A certificate name without client certificates could never be checked.
        let e = Config::from_toml(
            "[tls]\ncert_file = \"s.pem\"\nkey_file = \"k.pem\"\n[[firms]]\nname = \"F\"\n\
             accounts = [1]\n[[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\n\
             client_cert_name = \"a\"\n",
        )
        .unwrap_err();
        assert!(
            e.0.contains("session A") && e.0.contains("client_ca_file"),
            "{e}"
        );
        let e = Config::from_toml("[tls]\ncert_file = \"s.pem\"\n").unwrap_err();
        assert!(e.0.contains("key_file"), "{e}");
        let e = Config::from_toml("[tls]\ncert_file = \"s\"\nkey_file = \"k\"\nca = \"x\"\n")
            .unwrap_err();
        assert!(e.0.contains("unknown field"), "{e}");
    }

    #[test]
    fn drop_copy_sessions() {
        let base = "[[firms]]\nname = \"F\"\naccounts = [1]\n[[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\n[[sessions]]\nsender_comp_id = \"DC\"\nfirm = \"F\"\nfix_version = \"FIXT.1.1\"\ndrop_copy = true\n";
        let c = Config::from_toml(base).unwrap();
        let f = c.fix_config();
        assert_eq!(
            (f.sessions[0].drop_copy, f.sessions[1].drop_copy),
            (false, true)
        );
        for (extra, why) in [
            ("market_data = \"only\"\n", "order-entry port"),
            ("cancel_on_disconnect = true\n", "no orders"),
        ] {
            let e = Config::from_toml(&format!("{base}{extra}")).unwrap_err();
            assert!(e.to_string().contains(why), "{e}");
        }
    }

    #[test]
    fn the_example_file_is_valid() {
        let c = Config::from_toml(include_str!("../rialto.example.toml")).unwrap();
        assert_eq!(c.instruments[1].instrument.tick, 5);
        assert_eq!(c.instruments[1].instrument.lot, 10);
        assert_eq!(c.firms[0].accounts, vec![1, 2]);
        let h = c.sessions[0]
            .password_hash
            .as_deref()
            .expect("ALPHA1 has a password");
        assert!(crate::auth::verify(h, b"change-me"));
        assert_eq!(c.sessions[0].username.as_deref(), Some("alpha-trader"));
        assert_eq!(c.sessions[1].target_comp_id, "RIALTO");
        assert_eq!(c.firms[0].limits.max_open_orders, Some(100_000));
        assert_eq!(c.firms[0].limits.max_open_orders_per_account, Some(60_000));
        assert_eq!(c.firms[1].limits, exchange::FirmLimits::default());
        assert_eq!((c.firm_capacity_percent, c.mass_cancel_chunk), (25, 1000));
    }

    /// By default one firm takes at most a quarter of the capacity and mass cancels go in
    /// chunks of 1,000; the limits reach the exchange; out-of-range values are refused.
    #[test]
    fn open_order_limits_and_mass_cancel_chunks() {
        let d = Config::defaults();
        assert_eq!(d.firm_capacity_percent, FIRM_CAPACITY_PERCENT_DEFAULT);
        assert_eq!(d.mass_cancel_chunk, exchange::MASS_CANCEL_CHUNK_DEFAULT);
        let x = d.exchange_config();
        assert_eq!(x.firm_capacity_percent, 25);
        assert_eq!(x.firm_limits.len(), x.firms.len());
        let base = "[[firms]]\nname = \"F\"\naccounts = [1]\nmax_open_orders = 7\n[[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\n";
        let c = Config::from_toml(&format!(
            "firm_capacity_percent = 100\nmass_cancel_chunk = 5\n{base}"
        ))
        .unwrap();
        let x = c.exchange_config();
        assert_eq!(x.firm_limits[0].max_open_orders, Some(7));
        assert_eq!((x.firm_capacity_percent, x.mass_cancel_chunk), (100, 5));
        for (bad, why) in [
            ("firm_capacity_percent = 0\n", "firm_capacity_percent"),
            ("firm_capacity_percent = 101\n", "firm_capacity_percent"),
            ("mass_cancel_chunk = 0\n", "mass_cancel_chunk"),
        ] {
            let e = Config::from_toml(&format!("{bad}{base}")).unwrap_err();
            assert!(e.to_string().contains(why), "{e}");
        }
        let zero = base.replace("max_open_orders = 7", "max_open_orders_per_account = 0");
        let e = Config::from_toml(&zero).unwrap_err();
        assert!(e.to_string().contains("must be >= 1"), "{e}");
    }

    /// A password in plain text is refused, naming `rialto passwd`; a hash that is not an
    /// argon2 PHC string is refused with what is wrong; so are bad throttle delays.
    #[test]
    fn passwords_are_salted_hashes() {
        let session = |line: &str| {
            format!(
                "[[firms]]\nname = \"F\"\naccounts = [1]\n[[sessions]]\nsender_comp_id = \"A\"\nfirm = \"F\"\n{line}\n"
            )
        };
        let e = Config::from_toml(&session("password = \"pw\"")).unwrap_err();
        assert!(e.to_string().contains("rialto passwd"), "{e}");
        assert!(e.to_string().contains("password_hash"), "{e}");
        for (hash, why) in [
            ("pw", "not a PHC string"),
            (
                "$scrypt$ln=4,r=8,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo",
                "not argon2",
            ),
            ("$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ", "no hash"),
        ] {
            let e =
                Config::from_toml(&session(&format!("password_hash = \"{hash}\""))).unwrap_err();
            assert!(e.to_string().contains(why), "{hash}: {e}");
        }
        let e = Config::from_toml(&session("username = \"\"")).unwrap_err();
        assert!(e.to_string().contains("username"), "{e}");
        for bad in [
            "failed_logon_delay_ms = 0",
            "failed_logon_delay_ms = 500\nfailed_logon_delay_max_ms = 100",
        ] {
            assert!(Config::from_toml(bad).is_err(), "{bad}");
        }
        let c = Config::from_toml("failed_logon_delay_ms = 50\nfailed_logon_delay_max_ms = 60")
            .unwrap();
        assert_eq!(c.failed_logon_delay_max, Duration::from_millis(60));
        // The defaults: no session needs a password.
        assert!(Config::defaults()
            .sessions
            .iter()
            .all(|s| s.password_hash.is_none()));
    }

    #[test]
    fn ticks_parse_exactly() {
        assert_eq!(parse_tick("0.01").unwrap(), (1, 2));
        assert_eq!(parse_tick("0.05").unwrap(), (5, 2));
        assert_eq!(parse_tick("0.50").unwrap(), (5, 1));
        assert_eq!(parse_tick("1").unwrap(), (1, 0));
        assert!(parse_tick("0").is_err());
        assert!(parse_tick("-1").is_err());
        assert!(parse_tick("abc").is_err());
    }

    #[test]
    fn toml_file_overrides() {
        let c = Config::from_toml(
            r#"
listen = "127.0.0.1:0"
durability = "fsync"
[[instruments]]
symbol = "XYZ"
tick = "0.5"
lot = 10
[[firms]]
name = "F"
accounts = [7, 8]
[[sessions]]
sender_comp_id = "A"
password_hash = "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$9PL7aoCNdPwgjbvvsWsnkVN2NN8d9g5gSqaSRWlsBjE"
username = "u"
firm = "F"
"#,
        )
        .unwrap();
        assert_eq!(c.durability, Durability::Fsync);
        assert_eq!(c.instruments[0].instrument.tick, 5);
        assert!(c.sessions[0].password_hash.is_some());
        assert_eq!(c.fix_config().sessions[0].username.as_deref(), Some("u"));
        assert!(c.fix_config().sessions[0].authenticates());
        assert_eq!(
            (c.failed_logon_delay, c.failed_logon_delay_max),
            (Duration::from_millis(100), Duration::from_millis(3200))
        );
        assert!(Config::from_toml("[[sessions]]\nsender_comp_id='A'\nfirm='nope'\n").is_err());
        assert!(Config::from_toml("bogus = 1").is_err());
        assert_eq!(c.batch_budget, BATCH_BUDGET_DEFAULT);
        assert_eq!(c.idle, Idle::Park);
        let t = Config::from_toml("batch_budget = 64\nidle = \"spin\"\nsession_queue_max = 16\n")
            .unwrap();
        assert_eq!((t.batch_budget, t.idle), (64, Idle::Spin));
        assert!(Config::from_toml("batch_budget = 0").is_err());
        assert!(Config::from_toml("idle = \"yield\"").is_err());
        assert_eq!(c.cpu, None);
        assert_eq!(c.stall_log_us, 1_000);
        assert_eq!(
            Config::from_toml("stall_log_us = 0").unwrap().stall_log_us,
            0
        );
        assert_eq!(
            Config::from_toml("orders_max = 16777216")
                .unwrap()
                .orders_max,
            1 << 24
        );
        let e = Config::from_toml("orders_max = 16777217").unwrap_err();
        assert!(e.to_string().contains("16..=16777216"), "{e}");
        assert!(Config::from_toml("orders_max = 15").is_err());
        assert_eq!(Config::from_toml("cpu = 1").unwrap().cpu, Some(1));
        assert!(Config::from_toml("cpu = 5000").is_err());
        assert!(Config::from_toml("cpu = -1").is_err());
    }

    #[test]
    fn session_layer_settings_and_their_defaults() {
        let c = Config::defaults();
        assert_eq!(c.sending_time_window_secs, 120);
        assert!(c
            .sessions
            .iter()
            .all(|s| s.validate && s.allow_reset_seq_num && !s.message_log));
        assert_eq!(c.fix_config().sending_time_window_ns, Some(120_000_000_000));
        let c = Config::from_toml(
            r#"
sending_time_window_secs = 0
message_log_dir = "/tmp/fixlog"
[[firms]]
name = "F"
accounts = [1]
[[sessions]]
sender_comp_id = "S"
firm = "F"
allow_reset_seq_num = false
validate = false
message_log = true
"#,
        )
        .unwrap();
        assert_eq!(c.fix_config().sending_time_window_ns, None);
        assert_eq!(
            c.message_log_dir.as_deref(),
            Some(std::path::Path::new("/tmp/fixlog"))
        );
        let s = &c.sessions[0];
        assert!(!s.allow_reset_seq_num && !s.validate && s.message_log);
        let f = &c.fix_config().sessions[0];
        assert!(!f.allow_reset_seq_num && !f.validate);
        let lenient = Config::defaults().lenient();
        assert_eq!(lenient.sending_time_window_secs, 0);
        assert!(lenient.sessions.iter().all(|s| !s.validate));
    }

    #[test]
    fn trading_day_end_and_cancel_on_disconnect() {
        let c = Config::from_toml("").unwrap();
        assert_eq!(c.trading_day_end_ns, Some(21 * 3600 * 1_000_000_000));
        assert_eq!(c.trading_day_start_ns, None);
        assert_eq!(
            Config::from_toml("trading_day_end = \"off\"")
                .unwrap()
                .trading_day_end_ns,
            None
        );
        let c = Config::from_toml("trading_day_start = \"08:00:00\"").unwrap();
        assert_eq!(c.trading_day_start_ns, Some(8 * 3600 * 1_000_000_000));
        assert_eq!(
            c.exchange_config().trading_day_start_ns,
            c.trading_day_start_ns
        );
        for (toml, want) in [
            (
                "trading_day_start = \"8:00\"",
                "trading_day_start \"8:00\" is not a time of day HH:MM:SS (UTC)",
            ),
            (
                "trading_day_end = \"off\"\ntrading_day_start = \"08:00:00\"",
                "trading_day_start needs an end of the day",
            ),
            (
                "trading_day_end = \"08:00:00\"\ntrading_day_start = \"08:00:00\"",
                "equals trading_day_end",
            ),
        ] {
            let e = Config::from_toml(toml).unwrap_err().to_string();
            assert!(e.contains(want), "{toml}: {e}");
        }
        assert!(c.exchange_config().cancel_on_disconnect.iter().all(|&x| !x));
        let c = Config::from_toml("trading_day_end = \"21:30:05\"").unwrap();
        assert_eq!(
            c.trading_day_end_ns,
            Some((21 * 3600 + 30 * 60 + 5) * 1_000_000_000)
        );
        for bad in [
            "24:00:00",
            "9:00:00",
            "21:00",
            "21:60:00",
            "noon",
            "21:00:00Z",
        ] {
            let e = Config::from_toml(&format!("trading_day_end = {bad:?}")).unwrap_err();
            assert!(e.to_string().contains("HH:MM:SS"), "{bad}: {e}");
        }
        let c = Config::from_toml(
            r#"
            [[firms]]
            name = "A"
            accounts = [1]
            [[sessions]]
            sender_comp_id = "S1"
            firm = "A"
            [[sessions]]
            sender_comp_id = "S2"
            firm = "A"
            cancel_on_disconnect = true
            "#,
        )
        .unwrap();
        assert_eq!(c.exchange_config().cancel_on_disconnect, vec![false, true]);
    }
}
