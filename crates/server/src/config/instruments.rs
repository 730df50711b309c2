//! `[[instruments]]`: the instruments, their ticks and lots, and their pre-trade limits.
//!
//! Role: checks each instrument (a valid, unique symbol; a positive decimal tick, whose decimals
//! give the price scale; a lot of at least 1; a price band of 1 to 10,000 basis points, a
//! reference price on its tick, order limits of at least 1) and gives the engine's definitions.
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
    /// Half the width of the price band, in basis points of the reference price (the last
    /// trade's, or `reference_price` before the first): limit orders outside it are refused,
    /// market orders fill only inside it. Default: no band.
    #[serde(default)]
    pub band_bps: Option<u32>,
    /// The reference price before the first trade (a decimal on the tick).
    #[serde(default)]
    pub reference_price: Option<String>,
    /// Most quantity of one order.
    #[serde(default)]
    pub max_order_qty: Option<u64>,
    /// Most price × quantity of one order (a decimal).
    #[serde(default)]
    pub max_order_notional: Option<String>,
    /// The circuit breaker: a trade more than `breaker_bps` basis points from the first trade
    /// of a `breaker_window_secs` window halts the instrument for `breaker_halt_secs` (all
    /// three, or none); after the halt it reopens through a call auction of
    /// `breaker_auction_secs` (pre-open, then the uncross; 0 or absent: at once).
    #[serde(default)]
    pub breaker_bps: Option<u32>,
    #[serde(default)]
    pub breaker_window_secs: Option<u64>,
    #[serde(default)]
    pub breaker_halt_secs: Option<u64>,
    #[serde(default)]
    pub breaker_auction_secs: Option<u64>,
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
    /// Its price band and order limits (`max_order_notional` still in its price units
    /// here; `Config::exchange_config` scales it to the notional decimals).
    pub risk: exchange::InstrumentRisk,
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
            band_bps: None,
            reference_price: None,
            max_order_qty: None,
            max_order_notional: None,
            breaker_bps: None,
            breaker_window_secs: None,
            breaker_halt_secs: None,
            breaker_auction_secs: None,
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
        let risk = instrument_risk(i, tick, price_decimals)?;
        instruments.push(InstrumentDef {
            instrument: Instrument {
                symbol,
                tick,
                lot: i.lot,
            },
            price_decimals,
            risk,
        });
    }
    if instruments.is_empty() {
        return err("no instruments");
    }
    Ok(instruments)
}

/// The price band and order limits of instrument `i` (tick `tick` of `decimals` decimals).
fn instrument_risk(
    i: &InstrumentConfig,
    tick: i64,
    decimals: u32,
) -> Result<exchange::InstrumentRisk, ConfigError> {
    let name = &i.symbol;
    if i.band_bps.is_some_and(|b| !(1..=10_000).contains(&b)) {
        return err(format!(
            "band_bps of {name} must be 1 to 10000 (basis points: 100 is 1%)"
        ));
    }
    if i.max_order_qty == Some(0) {
        return err(format!("max_order_qty of {name} must be >= 1"));
    }
    let reference_price = match &i.reference_price {
        None => None,
        Some(p) => Some(
            types::decimal::parse_price(p.as_bytes(), decimals, tick).map_err(|e| {
                ConfigError(format!("reference_price {p:?} of {name}: {}", e.as_str()))
            })?,
        ),
    };
    let max_order_notional = match &i.max_order_notional {
        None => None,
        Some(n) => Some(i128::from(parse_notional(n, decimals).map_err(|e| {
            ConfigError(format!("max_order_notional of {name}: {e}"))
        })?)),
    };
    if i.breaker_auction_secs.is_some_and(|a| a > 86_400)
        || (i.breaker_auction_secs.is_some() && i.breaker_bps.is_none())
    {
        return err(format!(
            "breaker_auction_secs of {name}: 0 to 86400, with a breaker (breaker_bps, \
             breaker_window_secs, breaker_halt_secs)"
        ));
    }
    let breaker = match (i.breaker_bps, i.breaker_window_secs, i.breaker_halt_secs) {
        (None, None, None) => None,
        (Some(bps), Some(window), Some(halt))
            if (1..=10_000).contains(&bps)
                && (1..=86_400).contains(&window)
                && (1..=86_400).contains(&halt) =>
        {
            Some(exchange::Breaker {
                bps,
                window_ns: window * 1_000_000_000,
                halt_ns: halt * 1_000_000_000,
                auction_ns: i.breaker_auction_secs.unwrap_or(0) * 1_000_000_000,
            })
        }
        _ => {
            return err(format!(
                "the breaker of {name}: give breaker_bps (1 to 10000), breaker_window_secs and \
                 breaker_halt_secs (1 to 86400 each), all three"
            ))
        }
    };
    Ok(exchange::InstrumentRisk {
        band_bps: i.band_bps,
        reference_price,
        max_order_qty: i.max_order_qty,
        max_order_notional,
        breaker,
    })
}

/// A positive notional (price × quantity) given as a decimal, in units of `10^-decimals`.
pub(super) fn parse_notional(text: &str, decimals: u32) -> Result<i64, String> {
    let units = types::decimal::Decimal::parse(text.trim().as_bytes())
        .and_then(|d| d.to_units(decimals))
        .map_err(|_| {
            format!("{text:?} is not a decimal of at most {decimals} decimals in range")
        })?;
    if units <= 0 {
        return Err(format!("{text:?} must be positive"));
    }
    Ok(units)
}

impl Config {
    pub fn engine_instruments(&self) -> Vec<Instrument> {
        self.instruments.iter().map(|i| i.instrument).collect()
    }
}
