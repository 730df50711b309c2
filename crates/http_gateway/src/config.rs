//! What the API edge knows of the venue: its API keys (each an originator of the exchange,
//! trading for its account's firm) and its instruments (to read and write decimal prices).

use std::time::Duration;
use types::Symbol;

/// One API key: the SHA-256 of its token (the token itself is never stored), the account it
/// trades on and that account's firm.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyDef {
    pub name: String,
    pub sha256: [u8; 32],
    pub account: u32,
    pub firm: u16,
    /// Requests a second over which it is answered 429 (its throttle).
    pub requests_per_sec: u32,
}

/// An instrument as prices and quantities are written for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InstrumentDef {
    pub symbol: Symbol,
    /// Tick in price units.
    pub tick: i64,
    /// Lot: the quantity increment.
    pub lot: u64,
    /// Decimals of a price unit (a tick of 0.01 in price units of 0.01: 2).
    pub price_decimals: u32,
}

/// The API edge's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiConfig {
    /// Indexed by `ApiInput::key`.
    pub keys: Vec<KeyDef>,
    /// Indexed by `SymbolId`.
    pub instruments: Vec<InstrumentDef>,
    /// The exchange originator of key 0; key `k` is `originator_base + k` (the FIX sessions
    /// come first).
    pub originator_base: u16,
    /// Answers kept per key for Idempotency-Key retries, at most.
    pub idempotency_max: usize,
    /// How long an answer is kept for retries, ns of record time.
    pub idempotency_ttl_ns: u64,
    /// Who may use `/admin/v1/...`, by the SHA-256 of their tokens.
    pub operators: Vec<OperatorDef>,
    /// The firms (by index, as the exchange's) and their accounts: what an operator names.
    pub firms: Vec<FirmRef>,
}

/// An operator of the exchange (`[[operators]]`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperatorDef {
    pub name: String,
    pub sha256: [u8; 32],
}

/// A firm as an operator names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirmRef {
    pub name: String,
    pub accounts: Vec<u32>,
}

/// Default of `ApiConfig::idempotency_max`.
pub const IDEMPOTENCY_MAX_DEFAULT: usize = 10_000;
/// Default of `ApiConfig::idempotency_ttl_ns`: 24 hours.
pub const IDEMPOTENCY_TTL_DEFAULT_NS: u64 = 24 * 3600 * 1_000_000_000;

impl ApiConfig {
    /// The key of exchange originator `o`, if it is an API key's.
    pub fn key_of(&self, originator: u16) -> Option<u16> {
        let k = originator.checked_sub(self.originator_base)?;
        ((k as usize) < self.keys.len()).then_some(k)
    }

    /// The originator of key `k`.
    pub fn originator(&self, k: u16) -> u16 {
        self.originator_base + k
    }

    /// The index of `symbol`, if it is an instrument.
    pub fn symbol_id(&self, symbol: &str) -> Option<u32> {
        self.instruments
            .iter()
            .position(|i| i.symbol.as_str() == symbol)
            .map(|i| i as u32)
    }
}

/// The bounds of the accept loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    pub connections_max: usize,
    pub per_address_max: usize,
    /// Longest wait for a whole request head, and for the next request on an idle
    /// keep-alive connection.
    pub header_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            connections_max: 1024,
            per_address_max: 256,
            header_timeout: Duration::from_secs(10),
        }
    }
}
