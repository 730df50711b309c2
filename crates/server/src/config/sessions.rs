//! `[[firms]]` and `[[sessions]]`: who may trade, for which accounts, over which FIX sessions,
//! and the default contract's firms and sessions.
//!
//! Role: checks firms (unique names, accounts in one firm only, open-order limits >= 1) and
//! sessions (a known firm and FIX version, drop-copy rules, a salted password hash, a valid
//! username, a unique pair of CompIDs), gives each session its throttle, and hands the FIX
//! edge its configuration (`Config::fix_config`).
//!
//! Never: accepts a password in plain text; lets a drop-copy session enter orders or log on at
//! the market-data port only.
//!
//! Invariants: a session's firm is an index into `Config::firms`; at most `u16::MAX` firms and
//! sessions (checked by `Config::from_file`).

use super::limits::BOT_THROTTLE;
use super::{err, Config, ConfigError, Throttle, ThrottleFile};
use serde::Deserialize;
use std::collections::HashSet;
use types::AccountId;

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
    /// Most quantity of one order (the instrument's limit applies too).
    #[serde(default)]
    pub max_order_qty: Option<u64>,
    /// Most price × quantity of one order (a decimal).
    #[serde(default)]
    pub max_order_notional: Option<String>,
    /// Most price × quantity of each account's resting orders together (a decimal).
    #[serde(default)]
    pub max_open_notional_per_account: Option<String>,
    /// Most net position of each account in each instrument, counting its resting orders on
    /// the new order's side as filled.
    #[serde(default)]
    pub max_net_position_per_account: Option<u64>,
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

fn fix44() -> String {
    "FIX.4.4".to_string()
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

/// The firms, checked: unique names, at least one account each, no account in two firms,
/// limits >= 1; notionals in units of `10^-notional_decimals`.
pub(super) fn firm_defs(
    cfg: &[FirmConfig],
    notional_decimals: u32,
) -> Result<Vec<FirmDef>, ConfigError> {
    let mut firms = Vec::new();
    let mut accounts_seen = HashSet::new();
    for f in cfg {
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
        if f.max_order_qty == Some(0) || f.max_net_position_per_account == Some(0) {
            return err(format!(
                "firm {}: max_order_qty and max_net_position_per_account must be >= 1",
                f.name
            ));
        }
        let notional = |what: &str, v: &Option<String>| -> Result<Option<i128>, ConfigError> {
            v.as_deref()
                .map(|t| {
                    super::instruments::parse_notional(t, notional_decimals)
                        .map(i128::from)
                        .map_err(|e| ConfigError(format!("firm {}: {what}: {e}", f.name)))
                })
                .transpose()
        };
        firms.push(FirmDef {
            name: f.name.clone(),
            accounts: f.accounts.clone(),
            limits: exchange::FirmLimits {
                max_open_orders: f.max_open_orders,
                max_open_orders_per_account: f.max_open_orders_per_account,
                max_order_qty: f.max_order_qty,
                max_order_notional: notional("max_order_notional", &f.max_order_notional)?,
                max_open_notional_per_account: notional(
                    "max_open_notional_per_account",
                    &f.max_open_notional_per_account,
                )?,
                max_net_position_per_account: f.max_net_position_per_account,
            },
        });
    }
    Ok(firms)
}

/// The sessions, checked against `firms`: known firm and FIX version, drop-copy rules, a salted
/// password hash (never a plain password), a valid username, unique (SenderCompID,
/// TargetCompID); `comp_id` is the default TargetCompID, `throttle` the rates a session's own
/// keys override.
pub(super) fn session_defs(
    cfg: &[SessionConfig],
    firms: &[FirmDef],
    comp_id: &str,
    throttle: Throttle,
) -> Result<Vec<SessionDef>, ConfigError> {
    let mut sessions = Vec::new();
    for s in cfg {
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
        let target = s
            .target_comp_id
            .clone()
            .unwrap_or_else(|| comp_id.to_string());
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
    Ok(sessions)
}

impl Config {
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

pub(super) fn default_firms_and_sessions() -> (Vec<FirmConfig>, Vec<SessionConfig>) {
    let mut firms = Vec::new();
    let mut sessions = Vec::new();
    let mut add = |name: String, account: AccountId| {
        let bot = name.starts_with("BOT");
        firms.push(FirmConfig {
            name: name.clone(),
            accounts: vec![account],
            max_open_orders: None,
            max_open_orders_per_account: None,
            max_order_qty: None,
            max_order_notional: None,
            max_open_notional_per_account: None,
            max_net_position_per_account: None,
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
        max_order_qty: None,
        max_order_notional: None,
        max_open_notional_per_account: None,
        max_net_position_per_account: None,
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
