//! `[[instruments]]`: the instruments, their ticks and lots.
//!
//! Role: checks each instrument (a valid, unique symbol; a positive decimal tick, whose decimals
//! give the price scale; a lot of at least 1) and gives the engine's definitions.
//!
//! Never: reorders or drops an instrument (an instrument's index is its id in the journal; the
//! list is only ever appended to).
//!
//! Invariants: at least one instrument; a tick is exact in integers (`parse_tick`: at most 9
//! decimals).

use super::{err, Config, ConfigError};
use serde::Deserialize;
use std::collections::HashSet;
use types::{Instrument, Symbol};

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

/// A validated instrument: its engine definition plus the decimal scale of its prices.
#[derive(Clone, Copy, Debug)]
pub struct InstrumentDef {
    pub instrument: Instrument,
    /// Price unit is 10^-price_decimals; `instrument.tick` is in that unit.
    pub price_decimals: u32,
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

/// The default contract's instruments: `ACME`, `BOLT` and `CRNK`, tick 0.01, lot 1.
pub(super) fn default_instruments() -> Vec<InstrumentConfig> {
    ["ACME", "BOLT", "CRNK"]
        .iter()
        .map(|s| InstrumentConfig {
            symbol: s.to_string(),
            tick: "0.01".to_string(),
            lot: 1,
        })
        .collect()
}

/// The instruments, checked: valid and unique symbols, positive decimal ticks, lots >= 1, at
/// least one.
pub(super) fn instrument_defs(cfg: &[InstrumentConfig]) -> Result<Vec<InstrumentDef>, ConfigError> {
    let mut instruments = Vec::new();
    let mut seen = HashSet::new();
    for i in cfg {
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
    Ok(instruments)
}

impl Config {
    pub fn engine_instruments(&self) -> Vec<Instrument> {
        self.instruments.iter().map(|i| i.instrument).collect()
    }
}
